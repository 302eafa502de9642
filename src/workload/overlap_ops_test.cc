#include "workload/overlap_ops.h"

#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#include "config/loader.h"
#include "workload/layer_ops.h"

namespace preflight {
namespace {

Scenario load(const std::vector<std::string>& overrides) {
  StatusOr<Scenario> s = load_scenario_text(
      "model: {preset: gpt3-1.7b}\ncluster: {preset: dgx-a100, nodes: 1}\n"
      "training: {seq_len: 2048, global_batch: 8, micro_batch: 1}\n"
      "parallelism: {tp: 8, sequence_parallel: true}\n",
      "test.yaml", overrides);
  EXPECT_TRUE(s.ok()) << s.status().message();
  return s.ok() ? *s : Scenario{};
}

int count(const std::vector<Op>& ops, const std::string& name) {
  int n = 0;
  for (const Op& op : ops) n += op.name == name ? 1 : 0;
  return n;
}

double flops(const std::vector<Op>& ops, const std::string& name) {
  double f = 0;
  for (const Op& op : ops) f += op.name == name ? op.flops.count() : 0;
  return f;
}

int64_t comm_bytes(const std::vector<Op>& ops, const std::string& name) {
  int64_t b = 0;
  for (const Op& op : ops) b += op.name == name ? op.comm_bytes.count() : 0;
  return b;
}

TEST(TpCommOverlap, OffOrTpOneLeavesTheOps) {
  const Scenario off = load({});
  std::vector<Op> ops = layer_forward_ops(make_layer_shape(off));
  const std::vector<Op> before = ops;
  apply_tp_comm_overlap(off, &ops);
  ASSERT_EQ(ops.size(), before.size());
  const Scenario tp1 = load({"parallelism.tp=1", "parallelism.sequence_parallel=false",
                             "parallelism.tp_comm_overlap=true"});
  std::vector<Op> ops1 = layer_forward_ops(make_layer_shape(tp1));
  const size_t n1 = ops1.size();
  apply_tp_comm_overlap(tp1, &ops1);
  EXPECT_EQ(ops1.size(), n1);
}

TEST(TpCommOverlap, ForwardRingExchangesGathersAndPipelinesReduceScatters) {
  const Scenario s = load({"parallelism.tp_comm_overlap=true"});
  const LayerShape x = make_layer_shape(s);
  const std::vector<Op> plain = layer_forward_ops(x);
  std::vector<Op> ops = plain;
  apply_tp_comm_overlap(s, &ops);
  // No blocking TP collective is left in the layer.
  for (const Op& op : ops) {
    if (op.type == OpType::kCollective) {
      EXPECT_TRUE(op.async) << op.name;
    }
  }
  // Ring exchange: tp GEMM chunks and tp − 1 send/recv blocks of S/tp per gathered GEMM (QKV,
  // FC1); pipeline: 4 GEMM chunks and 4 reduce-scatters of S/4 per row-parallel GEMM.
  const int64_t s_bytes = 2LL * 2048 * 2304;  // e·T·h
  EXPECT_EQ(count(ops, "qkv.fwd"), 8);
  EXPECT_EQ(count(ops, "fc1.fwd"), 8);
  EXPECT_EQ(count(ops, "proj.fwd"), 4);
  EXPECT_EQ(count(ops, "fc2.fwd"), 4);
  EXPECT_EQ(count(ops, "tp.allgather.overlap"), 2 * 7);
  EXPECT_EQ(count(ops, "tp.reducescatter.overlap"), 2 * 4);
  EXPECT_EQ(count(ops, "tp.allgather"), 0);
  EXPECT_EQ(comm_bytes(ops, "tp.allgather.overlap"), 2 * (s_bytes - s_bytes / 8));
  EXPECT_EQ(comm_bytes(ops, "tp.reducescatter.overlap"), 2 * s_bytes);
  for (const Op& op : ops) {
    if (op.name == "tp.allgather.overlap") {
      EXPECT_EQ(op.collective, CollectiveKind::kSendRecv);
      EXPECT_EQ(op.comm_bytes.count(), s_bytes / 8);
    }
  }
  // The chunks add up to the GEMM's FLOPs.
  for (const char* g : {"qkv.fwd", "fc1.fwd", "proj.fwd", "fc2.fwd"}) {
    EXPECT_DOUBLE_EQ(flops(ops, g), flops(plain, g)) << g;
  }
  // Order and flags of the QKV ring: block 1 (after the norm), chunk 0 on the local shard, then
  // chunk i waiting for block i and block i+1 chained behind it.
  size_t i = 0;
  while (ops[i].name != "tp.allgather.overlap") ++i;
  EXPECT_EQ(ops[i - 1].name, "ln1.fwd");
  EXPECT_FALSE(ops[i].comm_chain);
  EXPECT_EQ(ops[i + 1].name, "qkv.fwd");
  EXPECT_FALSE(ops[i + 1].wait_comm);
  EXPECT_EQ(ops[i + 2].name, "qkv.fwd");
  EXPECT_TRUE(ops[i + 2].wait_comm);
  EXPECT_EQ(ops[i + 3].name, "tp.allgather.overlap");
  EXPECT_TRUE(ops[i + 3].comm_chain);
  // The op after a pipelined reduce-scatter waits for its last chunk.
  for (size_t j = 1; j < ops.size(); ++j) {
    if (ops[j - 1].name == "tp.reducescatter.overlap" && ops[j].type != OpType::kCollective &&
        ops[j].type != OpType::kGemm) {
      EXPECT_TRUE(ops[j].wait_comm) << ops[j].name;
    }
  }
}

// The host pays the framework op's launches once per overlapped GEMM and collective, as
// without overlap; the other chunks and transfers come from TE's C++ loop at 9 us each, and
// from nothing under CUDA graphs.
TEST(TpCommOverlap, OnlyTheFirstChunkAndTransferCostAFrameworkLaunch) {
  auto host = [](const Scenario& s) {
    std::vector<Op> ops = layer_forward_ops(make_layer_shape(s));
    apply_tp_comm_overlap(s, &ops);
    int launches = 0;
    int64_t extra_ps = 0, te_ops = 0;
    for (const Op& op : ops) {
      launches += op.launches;
      extra_ps += op.host_time.ps();
      te_ops += op.launches == 0 ? 1 : 0;
    }
    return std::tuple<int, int64_t, int64_t>{launches, extra_ps, te_ops};
  };
  const Scenario plain = load({});
  const Scenario overlap = load({"parallelism.tp_comm_overlap=true"});
  const int plain_launches = static_cast<int>(layer_forward_ops(make_layer_shape(plain)).size());
  const auto [launches, extra_ps, te_ops] = host(overlap);
  EXPECT_EQ(launches, plain_launches);  // one per op of the unsplit layer
  EXPECT_GT(te_ops, 0);
  EXPECT_EQ(extra_ps, te_ops * SimTime::microseconds(9).ps());
  const auto [g_launches, g_extra_ps, g_te_ops] =
      host(load({"parallelism.tp_comm_overlap=true", "training.cuda_graphs=full"}));
  EXPECT_EQ(g_te_ops, te_ops);
  EXPECT_EQ(g_extra_ps, 0);
}

TEST(TpCommOverlap, ChunksReadTheWholeWeight) {
  const Scenario s = load({"parallelism.tp_comm_overlap=true"});
  const LayerShape x = make_layer_shape(s);
  const std::vector<Op> plain = layer_forward_ops(x);
  std::vector<Op> ops = plain;
  apply_tp_comm_overlap(s, &ops);
  // FC1: T × F/t × h. A chunk of T/8 rows reads its rows of the input, the whole weight, and
  // writes its rows of the output: e·(T/8·h + h·F/t + T/8·F/t).
  const int64_t t = 2048, h = 2304, f = 4 * 2304 / 8;
  for (const Op& op : ops) {
    if (op.name != "fc1.fwd") continue;
    EXPECT_EQ(op.m, t / 8);
    EXPECT_EQ(op.bytes.count(), 2 * (t / 8 * h + h * f + t / 8 * f));
  }
}

TEST(TpCommOverlap, BackwardRingExchangesTheGradientGathers) {
  const Scenario s = load({"parallelism.tp_comm_overlap=true"});
  std::vector<Op> ops = layer_backward_ops(make_layer_shape(s));
  apply_tp_comm_overlap(s, &ops);
  EXPECT_EQ(count(ops, "fc2.dgrad"), 8);
  EXPECT_EQ(count(ops, "proj.dgrad"), 8);
  EXPECT_EQ(count(ops, "tp.allgather.grad.overlap"), 2 * 7);
  EXPECT_EQ(count(ops, "tp.allgather.grad"), 0);
  // The bulk overlaps of the column-parallel layers stay as they were.
  EXPECT_EQ(count(ops, "qkv.dgrad"), 1);
  EXPECT_EQ(count(ops, "tp.allgather.input"), 2);
  EXPECT_EQ(count(ops, "tp.reducescatter.grad"), 2);
}

TEST(TpCommOverlap, RecomputeAndMtpNamesAreRecognised) {
  const Scenario s = load({"parallelism.tp_comm_overlap=true"});
  std::vector<Op> ops = layer_forward_ops(make_layer_shape(s));
  for (Op& op : ops) op.name = "mtp0." + op.name + ".recompute";
  apply_tp_comm_overlap(s, &ops);
  EXPECT_EQ(count(ops, "mtp0.qkv.fwd.recompute"), 8);
  EXPECT_EQ(count(ops, "mtp0.tp.reducescatter.recompute.overlap"), 2 * 4);
}

TEST(TpCommOverlap, OutputLayerIsLeftAlone) {
  const Scenario s = load({"parallelism.tp_comm_overlap=true"});
  std::vector<Op> ops = head_forward_ops(make_layer_shape(s));
  const size_t n = ops.size();
  apply_tp_comm_overlap(s, &ops);
  EXPECT_EQ(ops.size(), n);
  EXPECT_EQ(count(ops, "tp.allgather"), 1);
}

TEST(TpCommOverlap, SecondApplicationChangesNothing) {
  const Scenario s = load({"parallelism.tp_comm_overlap=true"});
  std::vector<Op> ops = layer_forward_ops(make_layer_shape(s));
  apply_tp_comm_overlap(s, &ops);
  const size_t n = ops.size();
  apply_tp_comm_overlap(s, &ops);
  EXPECT_EQ(ops.size(), n);
}

}  // namespace
}  // namespace preflight
