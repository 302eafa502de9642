#include "workload/moe_ops.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "compute/compute_model.h"
#include "config/loader.h"
#include "workload/precision_ops.h"

namespace preflight {
namespace {

// A small MoE: 16 layers, 64 experts top-8 of 1408, one shared expert, on 8 nodes of 8 H100s.
Scenario moe_scenario(const std::vector<std::string>& extra = {}) {
  std::vector<std::string> set = {
      "model.name=moe-test",      "model.layers=16",       "model.hidden=2048",
      "model.heads=16",           "model.ffn_hidden=8192", "model.vocab=32000",
      "model.activation=swiglu",  "model.norm=rmsnorm",    "model.position_embedding=rope",
      "model.linear_bias=false",  "model.dropout=false",   "model.tied_embeddings=false",
      "model.moe.experts=64",     "model.moe.top_k=8",     "model.moe.expert_ffn_hidden=1408",
      "cluster.preset=dgx-h100",  "cluster.nodes=8",       "training.seq_len=4096",
      "training.global_batch=64", "parallelism.pp=1",      "parallelism.ep=8",
  };
  set.insert(set.end(), extra.begin(), extra.end());
  StatusOr<Scenario> s = load_scenario_text("model: {}\ncluster: {}\ntraining: {}\n", "t", set);
  EXPECT_TRUE(s.ok()) << s.status().message();
  return *s;
}

const Op* find(const std::vector<Op>& ops, const std::string& prefix) {
  for (const Op& op : ops) {
    if (op.name.rfind(prefix, 0) == 0) return &op;
  }
  return nullptr;
}

// Op `name` of the first MoE layer's forward (or `backward`) under the scenario's `extra` keys;
// a default Op, and a failure, when it has none.
Op layer_op(const std::vector<std::string>& extra, const char* name, bool backward) {
  const Scenario s = moe_scenario(extra);
  const LayerShape x = make_layer_shape(s, 0);
  const ExpertLoad load = draw_expert_load(s.model.moe, 8, 0, 0);
  const std::vector<Op> ops = backward ? moe_backward_ops(x, load) : moe_forward_ops(x, load);
  const Op* op = find(ops, name);
  EXPECT_NE(op, nullptr) << name;
  return op == nullptr ? Op() : *op;
}

TEST(MoeOps, BalancedRoutingMatchesAnalyticFlopsAndBytes) {
  const Scenario s = moe_scenario();
  const LayerShape x = make_layer_shape(s, 0);
  const ExpertLoad load = draw_expert_load(s.model.moe, 8, 0, 0);
  const std::vector<Op> ops = moe_forward_ops(x, load);
  const double T = 4096, k = 8, h = 2048, F = 1408;
  // Expert GEMMs: each token copy goes through FC1 (2F wide, SwiGLU) and FC2 (F).
  const Op* fc1 = find(ops, "moe.experts.fc1.fwd");
  const Op* fc2 = find(ops, "moe.experts.fc2.fwd");
  ASSERT_NE(fc1, nullptr);
  ASSERT_NE(fc2, nullptr);
  EXPECT_DOUBLE_EQ(fc1->flops.count(), 2 * T * k * h * 2 * F);
  EXPECT_DOUBLE_EQ(fc2->flops.count(), 2 * T * k * F * h);
  EXPECT_EQ(fc1->batch, 8);  // 64 experts / ep 8, one grouped GEMM
  EXPECT_EQ(fc1->name, "moe.experts.fc1.fwd[1.00x]");
  // Dispatch and combine all-to-alls move each token copy once: T·k·h·2 bytes per rank.
  const Op* dispatch = find(ops, "ep.alltoall.dispatch");
  const Op* combine = find(ops, "ep.alltoall.combine");
  ASSERT_NE(dispatch, nullptr);
  ASSERT_NE(combine, nullptr);
  EXPECT_EQ(dispatch->comm_bytes.count(), static_cast<int64_t>(T * k * h * 2));
  EXPECT_EQ(dispatch->category, Category::kEpComm);
  EXPECT_EQ(combine->comm_bytes, dispatch->comm_bytes);
  // The router scores every token against every expert.
  const Op* router = find(ops, "moe.router.fwd");
  ASSERT_NE(router, nullptr);
  EXPECT_DOUBLE_EQ(router->flops.count(), 2 * T * h * 64);
}

TEST(MoeOps, AllToAllDispatcherSortsTheReceivedTokensIntoExpertOrder) {
  // 8 local experts: after the dispatch each rank sorts its T·k received copies into expert
  // order and back before the combine, 2·2 B per element each way; the backward mirrors them.
  const Scenario s = moe_scenario();
  const LayerShape x = make_layer_shape(s, 0);
  const ExpertLoad load = draw_expert_load(s.model.moe, 8, 0, 0);
  const double T = 4096, k = 8, h = 2048;
  const std::vector<Op> fwd = moe_forward_ops(x, load);
  const Op* sort = find(fwd, "moe.sort_chunks.fwd");
  const Op* unsort = find(fwd, "moe.unsort_chunks.fwd");
  ASSERT_NE(sort, nullptr);
  ASSERT_NE(unsort, nullptr);
  EXPECT_EQ(sort->bytes.count(), static_cast<int64_t>(2 * 2 * T * k * h));
  EXPECT_EQ(unsort->bytes, sort->bytes);
  // In order: dispatch, sort, experts, unsort, combine.
  auto at = [&](const std::string& name) {
    return std::find_if(fwd.begin(), fwd.end(),
                        [&](const Op& op) { return op.name.rfind(name, 0) == 0; }) -
           fwd.begin();
  };
  EXPECT_LT(at("ep.alltoall.dispatch"), at("moe.sort_chunks.fwd"));
  EXPECT_LT(at("moe.sort_chunks.fwd"), at("moe.experts.fc1.fwd"));
  EXPECT_LT(at("moe.experts.fc2.fwd"), at("moe.unsort_chunks.fwd"));
  EXPECT_LT(at("moe.unsort_chunks.fwd"), at("ep.alltoall.combine"));
  const std::vector<Op> bwd = moe_backward_ops(x, load);
  EXPECT_NE(find(bwd, "moe.unsort_chunks.bwd"), nullptr);
  EXPECT_NE(find(bwd, "moe.sort_chunks.bwd"), nullptr);
  // One local expert (ep = experts) needs no sort.
  const Scenario one = moe_scenario({"model.moe.experts=8"});
  EXPECT_EQ(
      find(moe_forward_ops(make_layer_shape(one, 0), draw_expert_load(one.model.moe, 8, 0, 0)),
           "moe.sort_chunks"),
      nullptr);
}

TEST(MoeOps, PerExpertGroupedGemmCostsTheHostPerLocalExpert) {
  // 8 local experts. per_expert (the default): a whole launch per expert; with the stack's
  // expert_launch_overhead one launch and that much host work per expert; fused or under CUDA
  // graphs neither.
  auto fc1 = [](const std::vector<std::string>& extra) {
    const Scenario s = moe_scenario(extra);
    const std::vector<Op> ops =
        moe_forward_ops(make_layer_shape(s, 0), draw_expert_load(s.model.moe, 8, 0, 0));
    const Op* op = find(ops, "moe.experts.fc1.fwd");
    EXPECT_NE(op, nullptr);
    return op == nullptr ? Op() : *op;
  };
  const Op per_expert = fc1({});
  EXPECT_EQ(per_expert.launches, 8);
  EXPECT_EQ(per_expert.host_time, SimTime());
  const Op loop = fc1({"training.stack.expert_launch_overhead=9us"});
  EXPECT_EQ(loop.launches, 1);
  EXPECT_EQ(loop.host_time, SimTime::microseconds(72));
  for (const char* off : {"training.stack.grouped_gemm=fused", "training.cuda_graphs=full"}) {
    const Op op = fc1({off, "training.stack.expert_launch_overhead=9us"});
    EXPECT_EQ(op.launches, 1) << off;
    EXPECT_EQ(op.host_time, SimTime()) << off;
  }
  // Dense ops keep one launch.
  const Scenario s = moe_scenario();
  EXPECT_EQ(find(moe_forward_ops(make_layer_shape(s, 0), draw_expert_load(s.model.moe, 8, 0, 0)),
                 "moe.router.fwd")
                ->launches,
            1);
}

TEST(MoeOps, MegatronCoresRouterAndDispatcherCostTheHostTheirFrameworkOps) {
  // The framework ops Megatron-Core runs around the modelled kernels (layer_shape.cc), each a
  // launch of host time: on the top-k kernel before the dispatcher's sync, on the permute, sort
  // and unsort kernels after it, and on the top-k's backward.
  auto launches = [](const std::vector<std::string>& extra, const char* name, bool backward) {
    return layer_op(extra, name, backward).launches;
  };
  // The megatron-core stack's fused router, no auxiliary loss, the all-to-all dispatcher over
  // EP 8: the preprocess (sums, the counts' all-gather, four copies to the host) before the
  // sync, TE's permutation passes and chunk sorts after it, the fused router's autograd.
  EXPECT_EQ(launches({}, "moe.router.topk", false), 1 + 11);
  EXPECT_EQ(launches({}, "moe.permute.fwd", false), 1 + 3);
  EXPECT_EQ(launches({}, "moe.sort_chunks.fwd", false), 1 + 1);
  EXPECT_EQ(launches({}, "moe.unsort_chunks.fwd", false), 1 + 2);
  EXPECT_EQ(launches({}, "moe.router.topk.bwd", true), 1 + 10);
  // An auxiliary loss: 5 more fused, 14 unfused (with the unfused score function's 9).
  const std::string aux = "model.moe.router_aux_loss=0.001";
  EXPECT_EQ(launches({aux}, "moe.router.topk", false), 1 + 5 + 11);
  EXPECT_EQ(launches({aux, "training.stack.moe_router=unfused"}, "moe.router.topk", false),
            1 + 9 + 14 + 11);
  EXPECT_EQ(launches({"training.stack.moe_router=unfused"}, "moe.router.topk.bwd", true), 1 + 15);
  // The flex dispatcher: its metadata kernels before the sync, the multi-hot map after; no sort.
  EXPECT_EQ(launches({"model.moe.dispatcher=flex"}, "moe.router.topk", false), 1 + 3);
  EXPECT_EQ(launches({"model.moe.dispatcher=flex"}, "moe.permute.fwd", false), 1 + 4);
  // EP 1: the counts stay on the GPU (no all-gather, no copies).
  EXPECT_EQ(launches({"parallelism.ep=1"}, "moe.router.topk", false), 1 + 6);
  // A stack whose MoE layer is not Megatron-Core's: only the modelled kernels.
  for (const char* name : {"moe.router.topk", "moe.permute.fwd", "moe.sort_chunks.fwd"}) {
    EXPECT_EQ(launches({"training.stack.moe_router=none"}, name, false), 1) << name;
  }
  EXPECT_EQ(launches({"training.stack.moe_router=none"}, "moe.router.topk.bwd", true), 1);
}

TEST(MoeOps, FlexDispatcherSendsATokenOnceToEachRankOfItsExperts) {
  // 64 experts top-8 over EP 8 in one node: a token reaches 8·(1 − C(56, 8)/C(64, 8)) of the
  // 8 ranks on average, and the flex dispatcher sends it once to each; alltoall sends 8 copies.
  double missed = 1;
  for (int i = 0; i < 8; ++i) missed *= (56.0 - i) / (64.0 - i);
  const double reached = 8 * (1 - missed);
  EXPECT_NEAR(expected_groups_reached(64, 8, 8), reached, 1e-12);
  EXPECT_NEAR(reached, 5.43, 0.01);
  EXPECT_DOUBLE_EQ(expected_groups_reached(64, 64, 8), 8.0);  // one expert per rank
  EXPECT_DOUBLE_EQ(expected_groups_reached(64, 1, 8), 1.0);
  auto bytes = [](const std::vector<std::string>& extra, const char* name) {
    const Scenario s = moe_scenario(extra);
    const std::vector<Op> ops =
        moe_forward_ops(make_layer_shape(s, 0), draw_expert_load(s.model.moe, 8, 0, 0));
    const Op* op = find(ops, name);
    EXPECT_NE(op, nullptr) << name;
    return op == nullptr ? 0.0 : static_cast<double>(op->comm_bytes.count());
  };
  for (const char* name : {"ep.alltoall.dispatch", "ep.alltoall.combine"}) {
    EXPECT_NEAR(bytes({"model.moe.dispatcher=flex"}, name) / bytes({}, name), reached / 8, 1e-6)
        << name;
  }
  // Over two nodes (EP 16 on 8-GPU nodes) a token crosses to the other node once at most, on
  // the flex dispatcher's RDMA kernels: 0.88 of the NIC's line rate (DeepEP's internode table)
  // where NCCL's traffic gets the DGX H100's 0.96, so its wire bytes are 0.96/0.88 of the copies.
  const double two_nodes = expected_groups_reached(64, 2, 8);
  EXPECT_NEAR(bytes({"model.moe.dispatcher=flex", "parallelism.ep=16"}, "ep.alltoall.dispatch") /
                  bytes({"parallelism.ep=16"}, "ep.alltoall.dispatch"),
              two_nodes / 8 * 0.96 / 0.88, 1e-6);
  // HybridEP carries less at two nodes: its own H100 table (DeepEP docs/README_Hybrid-EP.md,
  // kernel time, 16 SMs) gives 16 ranks 71.71 GB/s dispatch and 62.95 GB/s combine in
  // algorithm bandwidth, half of it on the NICs: 35.9 and 31.5 of 50 GB/s, 0.671 over the pair
  // (harmonic mean). From four nodes on (EP 32: 57.69 and 57.46 GB/s, three quarters on the
  // NICs: 0.865 and 0.862) it takes DeepEP's 0.88.
  const std::string hybrid = "model.moe.flex_backend=hybridep";
  EXPECT_NEAR(
      bytes({"model.moe.dispatcher=flex", hybrid, "parallelism.ep=16"}, "ep.alltoall.dispatch") /
          bytes({"parallelism.ep=16"}, "ep.alltoall.dispatch"),
      two_nodes / 8 * 0.96 / 0.671, 1e-6);
  const double four_nodes = expected_groups_reached(64, 4, 8);
  EXPECT_NEAR(
      bytes({"model.moe.dispatcher=flex", hybrid, "parallelism.ep=32", "training.global_batch=128"},
            "ep.alltoall.combine") /
          bytes({"parallelism.ep=32", "training.global_batch=128"}, "ep.alltoall.combine"),
      four_nodes / 8 * 0.96 / 0.88, 1e-6);
}

TEST(MoeOps, FlexDispatcherAllToAllsHoldTheirKernelsSms) {
  // DeepEP's and HybridEP's kernels run on SMs they reserve: Megatron-Core's
  // moe_deepep_num_sms 20 and moe_hybridep_num_sms 16 (Megatron-Bridge's resolved performance
  // configs, e.g. dryrun_configs/gpt_oss/*). NCCL's all-to-all leaves it to the channel plan (0).
  for (bool backward : {false, true}) {
    const char* name = backward ? "ep.alltoall.combine.grad" : "ep.alltoall.dispatch";
    EXPECT_EQ(layer_op({}, name, backward).comm_sms, 0) << name;
    EXPECT_EQ(layer_op({"model.moe.dispatcher=flex"}, name, backward).comm_sms, 20) << name;
    EXPECT_EQ(
        layer_op({"model.moe.dispatcher=flex", "model.moe.flex_backend=hybridep"}, name, backward)
            .comm_sms,
        16)
        << name;
    EXPECT_EQ(layer_op({"model.moe.dispatcher=flex", "model.moe.flex_backend=hybridep",
                        "model.moe.flex_sms=24"},
                       name, backward)
                  .comm_sms,
              24)
        << name;
  }
  // Compute ops hold none.
  EXPECT_EQ(layer_op({"model.moe.dispatcher=flex"}, "moe.experts.fc", false).comm_sms, 0);
}

TEST(MoeOps, FlexBackendKeysNeedTheFlexDispatcher) {
  auto load = [](const std::vector<std::string>& extra) {
    std::vector<std::string> set = {"model.preset=mixtral-8x7b", "cluster.preset=dgx-h100",
                                    "parallelism.ep=8",          "parallelism.tp=1",
                                    "parallelism.pp=1",          "cluster.nodes=1",
                                    "training.global_batch=64"};
    set.insert(set.end(), extra.begin(), extra.end());
    return load_scenario_text("model: {}\ncluster: {}\n", "t.yaml", set);
  };
  for (const char* key : {"model.moe.flex_backend=hybridep", "model.moe.flex_sms=16"}) {
    const StatusOr<Scenario> s = load({key});
    ASSERT_FALSE(s.ok()) << key;
    EXPECT_NE(s.status().message().find("expected dispatcher: flex"), std::string::npos)
        << s.status().message();
  }
  const StatusOr<Scenario> bad = load({"model.moe.dispatcher=flex", "model.moe.flex_backend=nccl"});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("flex_backend"), std::string::npos);
  for (const char* sms : {"model.moe.flex_sms=0", "model.moe.flex_sms=2000"}) {
    const StatusOr<Scenario> s = load({"model.moe.dispatcher=flex", sms});
    ASSERT_FALSE(s.ok()) << sms;
    EXPECT_NE(s.status().message().find("flex_sms"), std::string::npos) << s.status().message();
  }
  ASSERT_TRUE(load({"model.moe.dispatcher=flex", "model.moe.flex_backend=deepep"}).ok());
}

TEST(MoeOps, DroplessDispatchersWaitOnTheHostForTheTokenCounts) {
  // Megatron-Core's alltoall dispatcher copies tokens_per_expert to the host for the all-to-all
  // splits; the flex dispatcher's HybridEP path, given no bound on the permuted tokens, reads
  // their count on the host to allocate its output ("None means no up-bound, will cause a CPU
  // sync", token_dispatcher.py _HybridEPManager), as DeepEP's normal kernels and TE's grouped
  // GEMM splits do. Under full-iteration CUDA graphs the dispatch runs sync-free; the
  // all-gather dispatcher gathers fixed-size tensors.
  auto syncs = [](const std::vector<std::string>& extra) {
    const Scenario s = moe_scenario(extra);
    const std::vector<Op> ops =
        moe_forward_ops(make_layer_shape(s, 0), draw_expert_load(s.model.moe, 8, 0, 0));
    int n = 0;
    for (const Op& op : ops) n += op.host_sync ? 1 : 0;
    const Op* topk = find(ops, "moe.router.topk");
    EXPECT_NE(topk, nullptr);
    return topk != nullptr && topk->host_sync && n == 1;
  };
  EXPECT_TRUE(syncs({}));
  EXPECT_TRUE(syncs({"model.moe.dispatcher=flex"}));
  EXPECT_FALSE(syncs({"model.moe.dispatcher=flex", "training.cuda_graphs=full"}));
  EXPECT_FALSE(syncs({"training.cuda_graphs=full"}));
  EXPECT_FALSE(syncs({"model.moe.dispatcher=allgather"}));
  EXPECT_FALSE(syncs({"parallelism.ep=1"}));
}

TEST(MoeOps, TheFusedGroupedMlpActivatesInItsGemmEpilogues) {
  // Transformer Engine's CuTe DSL grouped MLP (grouped_gemm: fused) runs the activation, its
  // gate weighting and the cast of fc2's input in fc1's epilogue, and the activation's backward
  // with the cast of fc1's output gradient in fc2 dgrad's: no activation kernels, and the casts
  // before fc2 and fc1 dgrad keep only what is not an epilogue's output (fc2's weight).
  auto ops = [](bool fused, bool backward) {
    std::vector<std::string> extra = {"training.precision=fp8_blockwise"};
    if (fused) extra.push_back("training.stack.grouped_gemm=fused");
    const Scenario s = moe_scenario(extra);
    const LayerShape x = make_layer_shape(s, 0);
    const ExpertLoad load = draw_expert_load(s.model.moe, 8, 0, 0);
    std::vector<Op> out = backward ? moe_backward_ops(x, load) : moe_forward_ops(x, load);
    apply_precision(s, &out);
    return out;
  };
  auto bytes = [](const std::vector<Op>& ops, const std::string& name) {
    for (const Op& op : ops) {
      if (op.name.rfind(name, 0) == 0 && op.name.find(".quantize") != std::string::npos) {
        return static_cast<double>(op.bytes.count());
      }
    }
    return 0.0;
  };
  for (bool backward : {false, true}) {
    const std::vector<Op> plain = ops(false, backward), fused = ops(true, backward);
    const char* act = backward ? "moe.experts.act.bwd" : "moe.experts.act.fwd";
    EXPECT_NE(find(plain, act), nullptr);
    EXPECT_EQ(find(fused, act), nullptr);
  }
  // fc2 forward: the plain cast moves the input (T_r·F elements) and the weight (F·h per expert,
  // once per iteration: 1/micro-batches of it here); fused, the weight alone.
  const Scenario s = moe_scenario({"training.precision=fp8_blockwise"});
  const LayerShape x = make_layer_shape(s, 0);
  const std::vector<Op> forward = ops(false, false);
  const Op* fc2 = nullptr;
  for (const Op& op : forward) {
    if (op.type == OpType::kGemm && op.name.rfind("moe.experts.fc2.fwd", 0) == 0) fc2 = &op;
  }
  ASSERT_NE(fc2, nullptr);
  const double input = static_cast<double>(fc2->m * fc2->k) * fc2->batch;
  const double weight =
      static_cast<double>(fc2->k * fc2->n) * fc2->batch / std::max(1, s.num_microbatches());
  EXPECT_NEAR(bytes(ops(true, false), "moe.experts.fc2.fwd") /
                  bytes(ops(false, false), "moe.experts.fc2.fwd"),
              weight / (input + weight), 1e-9);
  EXPECT_EQ(x.fused_expert_mlp, false);
  // fc1 dgrad: its operand is fc2 dgrad's epilogue output, so no cast at all.
  EXPECT_GT(bytes(ops(false, true), "moe.experts.fc1.dgrad"), 0);
  EXPECT_EQ(bytes(ops(true, true), "moe.experts.fc1.dgrad"), 0);
  // fc1 forward still casts the dispatched tokens.
  EXPECT_EQ(bytes(ops(true, false), "moe.experts.fc1.fwd"),
            bytes(ops(false, false), "moe.experts.fc1.fwd"));
}

TEST(MoeOps, ClampedActivationAndExpertBiasCostTheirMemoryPasses) {
  // Megatron-Core's clamped gated activation (weighted_bias_*_impl with clamp_value) clamps the
  // two halves of FC1's [rows x 2F] output by a kernel each and concatenates them before its
  // fused kernel: 8·e·rows·F forward, 10·e·rows·F backward. TEGroupedMLP._apply_bias adds FC2's
  // bias scaled by the routing probability outside the GEMM: 6·e per element of the rows x h
  // output forward, 7·e backward. The fused grouped MLP does both in its epilogues.
  const double e = 2, F = 1408, h = 2048;
  const double rows = 4096.0 * 8;  // T·k copies, balanced over the EP group
  auto sum = [](const std::vector<Op>& ops, const std::string& prefix) {
    double b = 0;
    for (const Op& op : ops) {
      if (op.name.rfind(prefix, 0) == 0) b += static_cast<double>(op.bytes.count());
    }
    return b;
  };
  const Scenario plain = moe_scenario();
  const Scenario clamped = moe_scenario({"model.activation_clamp=7", "model.linear_bias=true"});
  const ExpertLoad load = draw_expert_load(plain.model.moe, 8, 0, 0);
  const LayerShape xp = make_layer_shape(plain, 0), xc = make_layer_shape(clamped, 0);
  ASSERT_TRUE(xc.clamped_glu);
  const std::vector<Op> fwd = moe_forward_ops(xc, load), bwd = moe_backward_ops(xc, load);
  EXPECT_EQ(sum(moe_forward_ops(xp, load), "moe.experts.act.clamp"), 0);
  EXPECT_NEAR(sum(fwd, "moe.experts.act.clamp") + sum(fwd, "moe.experts.act.cat"), 8 * e * rows * F,
              1e-6 * rows * F);
  EXPECT_NEAR(sum(bwd, "moe.experts.act.clamp") + sum(bwd, "moe.experts.act.cat"),
              10 * e * rows * F, 1e-6 * rows * F);
  EXPECT_NEAR(sum(fwd, "moe.experts.fc2.bias"), 6 * e * rows * h, 1e-6 * rows * h);
  EXPECT_NEAR(sum(bwd, "moe.experts.fc2.bias"), 7 * e * rows * h, 1e-6 * rows * h);
  // Three kernels each way for the clamp (two clamps, one concatenation).
  int kernels = 0;
  for (const Op& op : fwd) kernels += op.name.rfind("moe.experts.act.c", 0) == 0;
  EXPECT_EQ(kernels, 3);
  // Fused grouped MLP: none of it.
  const Scenario fused = moe_scenario({"model.activation_clamp=7", "model.linear_bias=true",
                                       "training.precision=mxfp8", "cluster.preset=dgx-b200",
                                       "training.stack.grouped_gemm=fused"});
  const std::vector<Op> ff = moe_forward_ops(make_layer_shape(fused, 0), load);
  EXPECT_EQ(sum(ff, "moe.experts.act.c") + sum(ff, "moe.experts.fc2.bias"), 0);
}

TEST(MoeOps, ExpertBiasLoopsOverTheLocalExperts) {
  // TEGroupedMLP._apply_bias is a Python list comprehension over the local experts' splits
  // (`t + b * p` each, then torch.cat): 2·L + 1 kernels forward; autograd runs a product and a
  // reduction for each of b's and p's gradients per expert and concatenates the splits'
  // gradients, 4·L + 2 backward. Each is a host launch and a device-side kernel gap.
  const Scenario s = moe_scenario({"model.activation_clamp=7", "model.linear_bias=true"});
  const LayerShape x = make_layer_shape(s, 0);
  ASSERT_EQ(x.local_experts, 8);  // 64 experts over EP 8
  const ExpertLoad load = draw_expert_load(s.model.moe, 8, 0, 0);
  const std::vector<Op> fwd = moe_forward_ops(x, load), bwd = moe_backward_ops(x, load);
  const Op* f = find(fwd, "moe.experts.fc2.bias.fwd");
  const Op* b = find(bwd, "moe.experts.fc2.bias.bwd");
  ASSERT_NE(f, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(f->launches, 17);
  EXPECT_EQ(f->device_kernels, 17);
  EXPECT_EQ(b->launches, 34);
  EXPECT_EQ(b->device_kernels, 34);
  // On the device: the bytes at the HBM rate plus one gap per kernel.
  const std::unique_ptr<ComputeModel> roof =
      make_roofline_model(s.cluster.gpu, s.training.precision);
  Op one = *f;
  one.device_kernels = 1;
  EXPECT_EQ(roof->duration(*f) - roof->duration(one), s.cluster.gpu.calibration.kernel_gap * 16);
}

TEST(MoeOps, ActivationClampNeedsAGatedActivation) {
  StatusOr<Scenario> s = load_scenario_text(
      "model: {}\ncluster: {}\ntraining: {}\n", "t",
      {"model.name=m", "model.layers=2", "model.hidden=512", "model.heads=8", "model.vocab=1000",
       "model.activation=gelu", "model.activation_clamp=7", "cluster.preset=dgx-h100",
       "cluster.nodes=1", "training.seq_len=1024", "training.global_batch=8"});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("model.activation_clamp"), std::string::npos)
      << s.status().message();
}

TEST(MoeOps, NodeLimitedRoutingAndFp8DispatchShrinkTheAllToAll) {
  // EP 8 on one-GPU nodes spans 8 nodes. Top-8 over at most 4 nodes, one copy per node: the
  // cross-node copies halve (M/k = 4/8), for dispatch and combine alike. FP8 dispatch then
  // carries 1 byte + 4/128 per element on the dispatch and the combine's gradient only.
  const auto bytes = [](std::vector<std::string> extra, bool backward, const char* name) {
    if (std::find(extra.begin(), extra.end(), "in_node") == extra.end()) {
      extra.insert(extra.begin(), {"cluster.gpus_per_node=1", "cluster.nodes=64"});
    } else {
      extra.erase(std::find(extra.begin(), extra.end(), "in_node"));
    }
    return layer_op(extra, name, backward).comm_bytes.count();
  };
  const int64_t full = bytes({}, false, "ep.alltoall.dispatch");
  ASSERT_GT(full, 0);
  const std::vector<std::string> limited = {"model.moe.group_topk=4"};
  EXPECT_EQ(bytes(limited, false, "ep.alltoall.dispatch"), full / 2);
  EXPECT_EQ(bytes(limited, false, "ep.alltoall.combine"), full / 2);
  EXPECT_EQ(bytes(limited, true, "ep.alltoall.dispatch.grad"), full / 2);
  const std::vector<std::string> fp8 = {"model.moe.group_topk=4",
                                        "model.moe.dispatch_precision=fp8"};
  const double fp8_bytes = static_cast<double>(full) / 2 * (1 + 4.0 / 128) / 2;
  EXPECT_NEAR(static_cast<double>(bytes(fp8, false, "ep.alltoall.dispatch")), fp8_bytes, 1);
  EXPECT_NEAR(static_cast<double>(bytes(fp8, true, "ep.alltoall.combine.grad")), fp8_bytes, 1);
  EXPECT_EQ(bytes(fp8, false, "ep.alltoall.combine"), full / 2);
  EXPECT_EQ(bytes(fp8, true, "ep.alltoall.dispatch.grad"), full / 2);
  // A limit at or above top-k, or an EP group inside one 8-GPU node, changes nothing.
  EXPECT_EQ(bytes({"model.moe.group_topk=8"}, false, "ep.alltoall.dispatch"), full);
  EXPECT_EQ(bytes({"in_node", "model.moe.group_topk=4"}, false, "ep.alltoall.dispatch"), full);
  // The all-gather dispatcher sends every token everywhere: no node limit for it.
  StatusOr<Scenario> bad =
      load_scenario("", {"model.preset=deepseek-v3", "model.moe.dispatcher=allgather"});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("node-limited routing needs dispatcher: alltoall"),
            std::string::npos)
      << bad.status().message();
}

TEST(MoeOps, SkewedRoutingIsSetByTheBusiestRank) {
  const Scenario s = moe_scenario({"model.moe.routing=zipf", "model.moe.zipf_exponent=1.2"});
  const LayerShape x = make_layer_shape(s, 2);
  const ExpertLoad load = draw_expert_load(s.model.moe, 8, 2, 0);
  ASSERT_GT(load.max_rank_factor(), 1.1);
  const std::vector<Op> ops = moe_forward_ops(x, load);
  const Op* fc1 = find(ops, "moe.experts.fc1.fwd");
  ASSERT_NE(fc1, nullptr);
  // The busiest rank computes ep·T·k·ρ_max tokens, split evenly over its 8 experts (rounded up).
  const double tokens = 4096.0 * 8 * 8 * load.max_rank_share;
  EXPECT_EQ(fc1->m, static_cast<int64_t>(std::ceil(tokens / 8)));
  EXPECT_EQ(moe_rank_tokens(x, load), tokens);
  // Its all-to-all receives that many token copies, more than it sends.
  const Op* dispatch = find(ops, "ep.alltoall.dispatch");
  ASSERT_NE(dispatch, nullptr);
  EXPECT_EQ(dispatch->comm_bytes.count(), std::llround(tokens * 2048 * 2));
}

TEST(MoeOps, BackwardHasTwiceTheExpertFlopsAndNamesWeightGradients) {
  const Scenario s = moe_scenario({"model.moe.shared_experts=1"});
  const LayerShape x = make_layer_shape(s, 0);
  const ExpertLoad load = draw_expert_load(s.model.moe, 8, 0, 0);
  double fwd = 0, bwd = 0;
  for (const Op& op : moe_forward_ops(x, load)) {
    if (op.name.rfind("moe.experts", 0) == 0 && op.type == OpType::kGemm) fwd += op.flops.count();
  }
  int wgrads = 0;
  for (const Op& op : moe_backward_ops(x, load)) {
    if (op.name.rfind("moe.experts", 0) == 0 && op.type == OpType::kGemm) bwd += op.flops.count();
    if (op.name.find(".wgrad") != std::string::npos) ++wgrads;
  }
  EXPECT_DOUBLE_EQ(bwd, 2 * fwd);
  EXPECT_GE(wgrads, 5);  // two expert GEMMs, the router, the shared expert's FC1 and FC2
}

TEST(MoeOps, ExpertTensorParallelGathersTokens) {
  const Scenario s = moe_scenario({"parallelism.tp=2", "parallelism.sequence_parallel=true",
                                   "parallelism.etp=2", "parallelism.ep=4"});
  const LayerShape x = make_layer_shape(s, 0);
  EXPECT_EQ(x.etp, 2);
  EXPECT_EQ(x.expert_ffn_per_rank, 704);
  const ExpertLoad load = draw_expert_load(s.model.moe, 4, 0, 0);
  const std::vector<Op> ops = moe_forward_ops(x, load);
  ASSERT_NE(find(ops, "etp.allgather"), nullptr);
  ASSERT_NE(find(ops, "etp.reducescatter"), nullptr);
  // Per rank the expert FLOPs equal the TP-1 case's share: T/tp tokens in, ×ep×etp/ep·...
  const Op* fc2 = find(ops, "moe.experts.fc2.fwd");
  ASSERT_NE(fc2, nullptr);
  // tokens in = T/tp = 2048; EP rank computes 2048·8 copies, ×etp after the gather, F/etp wide.
  EXPECT_DOUBLE_EQ(fc2->flops.count(), 2.0 * 2048 * 8 * 2 * 704 * 2048);
}

}  // namespace
}  // namespace preflight
