#include "workload/mamba_ops.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "config/loader.h"
#include "model/transformer.h"
#include "tests/op_index.h"
#include "workload/overlap_ops.h"

namespace preflight {
namespace {

// Nemotron 3 Nano (h 2688, 64 Mamba heads × 64, 8 groups, state 128) on one DGX H100, one
// sequence of 8192 tokens per micro-batch.
Scenario nano(const std::vector<std::string>& extra = {}) {
  std::vector<std::string> set = {"model.preset=nemotron3-nano",
                                  "cluster.preset=dgx-h100",
                                  "cluster.nodes=1",
                                  "training.seq_len=8192",
                                  "training.global_batch=8",
                                  "parallelism.tp=1",
                                  "parallelism.pp=1",
                                  "parallelism.dp=auto",
                                  "parallelism.sequence_parallel=false"};
  set.insert(set.end(), extra.begin(), extra.end());
  StatusOr<Scenario> s = load_scenario_text("", "t", set);
  EXPECT_TRUE(s.ok()) << s.status().message();
  return *s;
}

const Op* find(const std::vector<Op>& ops, const std::string& name) {
  for (const Op& op : ops) {
    if (op.name == name) return &op;
  }
  return nullptr;
}

double flops_of(const std::vector<Op>& ops) {
  double f = 0;
  for (const Op& op : ops) f += op.flops.count();
  return f;
}

std::vector<const Op*> collectives(const std::vector<Op>& ops) {
  std::vector<const Op*> out;
  for (const Op& op : ops) {
    if (op.type == OpType::kCollective) out.push_back(&op);
  }
  return out;
}

TEST(MambaOps, ForwardKernelsCarryTheLayersFlops) {
  // in_proj T × 10304 × 2688, out_proj T × 2688 × 4096, the scan T·3,407,872: the model's
  // Mamba FLOPs less the conv1d's 2·T·4·6144, which runs as a memory-bound kernel.
  const Scenario s = nano();
  const LayerShape x = make_layer_shape(s, 0);
  const std::vector<Op> ops = mamba_forward_ops(x);
  const double t = 8192;
  const Op* in_proj = find(ops, "mamba.in_proj.fwd");
  ASSERT_NE(in_proj, nullptr);
  EXPECT_EQ(in_proj->m, 8192);
  EXPECT_EQ(in_proj->n, 10304);
  EXPECT_EQ(in_proj->k, 2688);
  const Op* out_proj = find(ops, "mamba.out_proj.fwd");
  ASSERT_NE(out_proj, nullptr);
  EXPECT_EQ(out_proj->n, 2688);
  EXPECT_EQ(out_proj->k, 4096);
  EXPECT_DOUBLE_EQ(flops_of(ops), mamba_forward_flops(s.model, 8192, 8192) - 2.0 * t * 4 * 6144);
  // conv1d reads and writes x, B, C: 2·2·T·6144 bytes.
  const Op* conv = find(ops, "mamba.conv1d.fwd");
  ASSERT_NE(conv, nullptr);
  EXPECT_EQ(conv->type, OpType::kMemory);
  EXPECT_EQ(conv->bytes.count(), static_cast<int64_t>(4 * t * 6144));
  EXPECT_EQ(collectives(ops).size(), 0u);  // TP 1
}

TEST(MambaOps, ScanIsOneFusedKernelOfFlopsAndBytes) {
  // Per token: FLOPs 2·Q·N·G + 2·d·(Q + 2N) = 3,407,872; bytes e·(5d + 4GN + H) = 2·24,640
  // for x, B, C (twice), z, and the gated and pre-gate y, fp32 C·Bᵀ 8·G·Q = 8192, chunk states
  // 16·d·N/Q = 65,536 and dA 8·H = 512: 123,520. Backward: 2 × 3,407,872 + the recomputed C·Bᵀ
  // 262,144 and chunk states 1,048,576 = 8,126,464 FLOPs (2.4× forward).
  const LayerShape x = make_layer_shape(nano(), 0);
  const Op fwd = mamba_scan_forward_op(x);
  EXPECT_EQ(fwd.type, OpType::kAttention);
  EXPECT_DOUBLE_EQ(fwd.flops.count(), 8192.0 * 3'407'872);
  EXPECT_EQ(fwd.bytes.count(), int64_t{8192} * 123'520);
  const Op bwd = mamba_scan_backward_op(x);
  EXPECT_DOUBLE_EQ(bwd.flops.count(), 8192.0 * 8'126'464);
  // Backward bytes, kernel by kernel of _mamba_chunk_scan_combined_bwd, the gate's
  // _chunk_scan_bwd_dz first: e·(17d + 15GN + 3H + 5·d·N/Q) = 2·105,664 in the activation type;
  // fp32 C·Bᵀ and its gradient 24·G·Q = 24,576, fp32 chunk states and their gradients
  // 24·d·N/Q = 98,304, per-head sums 120·H = 7,680: 211,328 + 130,560 = 341,888, 2.8× the
  // forward's.
  EXPECT_EQ(bwd.bytes.count(), int64_t{8192} * 341'888);
}

TEST(MambaOps, SeveralSequencesPerMicroBatchCopyAcrossTheSequenceFirstLayout) {
  // Megatron-Core's [s, b, ·] against the scan's [b, s, ·] (MambaMixer._ssm_training): with one
  // sequence the rearranges are views; with b = 2 in_proj's output is copied over (2e·T·i =
  // 2·2·16384·10304 bytes), the scan's output back (2e·T·d), and in backward the in_proj
  // output's gradient (2e·T·i).
  const std::vector<Op> one = mamba_forward_ops(make_layer_shape(nano(), 0));
  EXPECT_EQ(find(one, "mamba.in_proj.transpose"), nullptr);
  EXPECT_EQ(find(one, "mamba.ssd.transpose"), nullptr);
  EXPECT_EQ(find(mamba_backward_ops(make_layer_shape(nano(), 0)), "mamba.in_proj.grad_transpose"),
            nullptr);
  const LayerShape two =
      make_layer_shape(nano({"training.micro_batch=2", "training.global_batch=16"}), 0);
  ASSERT_EQ(two.b, 2);
  const std::vector<Op> fwd = mamba_forward_ops(two);
  const std::vector<Op> bwd = mamba_backward_ops(two);
  const double t = 2 * 8192;
  ASSERT_NE(find(fwd, "mamba.in_proj.transpose"), nullptr);
  EXPECT_EQ(find(fwd, "mamba.in_proj.transpose")->bytes.count(),
            static_cast<int64_t>(4 * t * 10304));
  ASSERT_NE(find(fwd, "mamba.ssd.transpose"), nullptr);
  EXPECT_EQ(find(fwd, "mamba.ssd.transpose")->bytes.count(), static_cast<int64_t>(4 * t * 4096));
  ASSERT_NE(find(bwd, "mamba.in_proj.grad_transpose"), nullptr);
  EXPECT_EQ(find(bwd, "mamba.in_proj.grad_transpose")->bytes.count(),
            static_cast<int64_t>(4 * t * 10304));
  // The copies sit where the layouts change: after in_proj, after the scan, before in_proj's
  // backward GEMMs.
  EXPECT_LT(op_index(fwd, "mamba.in_proj.fwd"), op_index(fwd, "mamba.in_proj.transpose"));
  EXPECT_LT(op_index(fwd, "mamba.ssd.fwd"), op_index(fwd, "mamba.ssd.transpose"));
  EXPECT_LT(op_index(fwd, "mamba.ssd.transpose"), op_index(fwd, "mamba.group_norm.fwd"));
  EXPECT_LT(op_index(bwd, "mamba.in_proj.grad_transpose"), op_index(bwd, "mamba.in_proj.dgrad"));
}

TEST(MambaOps, MambaSsmsOwnMixerGatesInTheNormAndKeepsBatchFirstTensors) {
  // mamba_ssm's Mamba2 module passes its norm's weight to the fused function: the chunk scan
  // writes one output (e·(3d + 4GN + H) = 2·16,448 per token with x, B, C read twice; 107,136
  // in all), the gated norm reads y and z (3e·T·d; backward 5e·T·d), the backward has no
  // _chunk_scan_bwd_dz (e·(11d + ...): 292,736), and batch-first tensors need no copies.
  const LayerShape x =
      make_layer_shape(nano({"training.stack.mamba_mixer=mamba_ssm", "training.micro_batch=2",
                             "training.global_batch=16"}),
                       0);
  EXPECT_FALSE(x.mamba_megatron);
  const double t = 2 * 8192;
  EXPECT_EQ(mamba_scan_forward_op(x).bytes.count(), static_cast<int64_t>(t * 107'136));
  EXPECT_EQ(mamba_scan_backward_op(x).bytes.count(), static_cast<int64_t>(t * 292'736));
  const std::vector<Op> fwd = mamba_forward_ops(x);
  const std::vector<Op> bwd = mamba_backward_ops(x);
  EXPECT_EQ(find(fwd, "mamba.in_proj.transpose"), nullptr);
  EXPECT_EQ(find(fwd, "mamba.ssd.transpose"), nullptr);
  EXPECT_EQ(find(bwd, "mamba.in_proj.grad_transpose"), nullptr);
  ASSERT_NE(find(fwd, "mamba.gated_norm.fwd"), nullptr);
  EXPECT_EQ(find(fwd, "mamba.gated_norm.fwd")->bytes.count(), static_cast<int64_t>(6 * t * 4096));
  ASSERT_NE(find(bwd, "mamba.gated_norm.bwd"), nullptr);
  EXPECT_EQ(find(bwd, "mamba.gated_norm.bwd")->bytes.count(), static_cast<int64_t>(10 * t * 4096));
  // Megatron-Core's mixer on the same shape: the norm without a gate, 2e·T·d and 3e·T·d.
  const LayerShape m =
      make_layer_shape(nano({"training.micro_batch=2", "training.global_batch=16"}), 0);
  EXPECT_TRUE(m.mamba_megatron);
  EXPECT_EQ(find(mamba_forward_ops(m), "mamba.group_norm.fwd")->bytes.count(),
            static_cast<int64_t>(4 * t * 4096));
  EXPECT_EQ(find(mamba_backward_ops(m), "mamba.group_norm.bwd")->bytes.count(),
            static_cast<int64_t>(6 * t * 4096));
}

TEST(MambaOps, BackwardDoublesTheGemmsAndNamesWeightGradients) {
  const LayerShape x = make_layer_shape(nano(), 0);
  const std::vector<Op> fwd = mamba_forward_ops(x);
  const std::vector<Op> bwd = mamba_backward_ops(x);
  double fwd_gemm = 0, bwd_gemm = 0;
  for (const Op& op : fwd) fwd_gemm += op.type == OpType::kGemm ? op.flops.count() : 0;
  for (const Op& op : bwd) bwd_gemm += op.type == OpType::kGemm ? op.flops.count() : 0;
  EXPECT_DOUBLE_EQ(bwd_gemm, 2 * fwd_gemm);  // dgrad + wgrad of in_proj and out_proj
  EXPECT_NE(find(bwd, "mamba.in_proj.wgrad"), nullptr);
  EXPECT_NE(find(bwd, "mamba.out_proj.wgrad"), nullptr);
  EXPECT_NE(find(bwd, "mamba.ssd.bwd"), nullptr);
  EXPECT_NE(find(bwd, "mamba.conv1d.recompute"), nullptr);  // the fused path keeps no conv out
}

TEST(MambaOps, TheScanLaunchesMambaSsmsTritonKernels) {
  // mamba_ssm's ssd_combined.py: five Triton kernels forward (cumsum, chunk state, state
  // passing, C·Bᵀ, chunk scan), fifteen backward (four of those recomputed, eleven gradient
  // kernels), each launched from Python: a host launch and a device kernel apiece.
  const LayerShape x = make_layer_shape(nano(), 0);
  const std::vector<Op> forward = mamba_forward_ops(x);
  const std::vector<Op> backward = mamba_backward_ops(x);
  const Op* fwd = find(forward, "mamba.ssd.fwd");
  const Op* bwd = find(backward, "mamba.ssd.bwd");
  ASSERT_NE(fwd, nullptr);
  ASSERT_NE(bwd, nullptr);
  EXPECT_EQ(fwd->launches, 5);
  EXPECT_EQ(fwd->device_kernels, 5);
  EXPECT_EQ(bwd->launches, 15);
  EXPECT_EQ(bwd->device_kernels, 15);
}

TEST(MambaOps, TensorParallelismSplitsHeadsAndGroups) {
  // TP 4: 16 heads and 2 groups per rank: in_proj N = 2·1024 + 2·2·128 + 16 = 2576, out_proj
  // K = 1024; every FLOP a quarter of TP 1's.
  const Scenario one = nano();
  const Scenario four = nano({"parallelism.tp=4", "parallelism.sequence_parallel=true"});
  const LayerShape x = make_layer_shape(four, 0);
  EXPECT_EQ(x.mamba_in_proj, 2576);
  EXPECT_EQ(x.mamba_inner, 1024);
  EXPECT_EQ(x.mamba_groups, 2);
  const std::vector<Op> ops = mamba_forward_ops(x);
  EXPECT_DOUBLE_EQ(4 * flops_of(ops), flops_of(mamba_forward_ops(make_layer_shape(one, 0))));
  EXPECT_EQ(find(ops, "mamba.out_proj.fwd")->k, 1024);
}

TEST(MambaOps, TensorParallelCollectivesAreThoseOfAnMlpBlock) {
  // Column-parallel in_proj, row-parallel out_proj (Megatron-Core MambaMixer): the same TP
  // collectives, in order and size, as the MLP's FC1 / FC2, with and without SP (on the dense
  // Nemotron-H 8B: MoE layers need SP with TP).
  for (const char* sp : {"false", "true"}) {
    SCOPED_TRACE(sp);
    const Scenario s = nano({"model.preset=nemotron-h-8b", "parallelism.tp=2",
                             std::string("parallelism.sequence_parallel=") + sp});
    const LayerShape x = make_layer_shape(s, 0);
    for (bool backward : {false, true}) {
      const std::vector<Op> mamba = backward ? mamba_backward_ops(x) : mamba_forward_ops(x);
      const std::vector<Op> mlp = backward ? mlp_backward_ops(x) : mlp_forward_ops(x);
      const std::vector<const Op*> a = collectives(mamba), b = collectives(mlp);
      ASSERT_EQ(a.size(), b.size());
      ASSERT_FALSE(a.empty());
      for (size_t i = 0; i < a.size(); ++i) {
        EXPECT_EQ(a[i]->name, b[i]->name);
        EXPECT_EQ(a[i]->collective, b[i]->collective);
        EXPECT_EQ(a[i]->comm_bytes, b[i]->comm_bytes);  // T·h·2 bytes
        EXPECT_EQ(a[i]->async, b[i]->async);
      }
    }
  }
}

TEST(MambaOps, TpCommOverlapPipelinesInProjAndOutProjLikeFc1AndFc2) {
  // Megatron-Core builds in_proj and out_proj with TE's "fc1"/"fc2" userbuffers: under
  // tp_comm_overlap the SP all-gather ring-exchanges into t in_proj chunks, and out_proj's
  // reduce-scatter pipelines with its 4 chunks (overlap_ops.h).
  const Scenario s =
      nano({"model.preset=nemotron-h-8b", "parallelism.tp=2", "parallelism.sequence_parallel=true",
            "parallelism.tp_comm_overlap=true"});
  std::vector<Op> ops = mamba_forward_ops(make_layer_shape(s, 0));
  apply_tp_comm_overlap(s, &ops);
  int in_proj = 0, out_proj = 0, ring = 0, pipelined = 0;
  for (const Op& op : ops) {
    in_proj += op.name == "mamba.in_proj.fwd";
    out_proj += op.name == "mamba.out_proj.fwd";
    ring += op.name == "tp.allgather.overlap";
    pipelined += op.name == "tp.reducescatter.overlap";
  }
  EXPECT_EQ(in_proj, 2);
  EXPECT_EQ(ring, 1);  // t − 1 transfers
  EXPECT_EQ(out_proj, kTpOverlapPipelineSplits);
  EXPECT_EQ(pipelined, kTpOverlapPipelineSplits);
}

}  // namespace
}  // namespace preflight
