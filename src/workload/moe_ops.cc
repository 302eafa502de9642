#include "workload/moe_ops.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

namespace preflight {
namespace {

struct MoeTraffic {
  double tokens_in = 0;    // T_r: tokens entering the block on this rank
  double copies = 0;       // T_r·k: the token copies this rank routes
  double rank_tokens = 0;  // tokens the busiest rank's experts compute
  int64_t per_expert = 0;  // mean tokens per local expert on that rank (grouped-GEMM M)
  Bytes dispatch;          // all-to-all buffer (or all-gather size), towards the experts
  Bytes combine;           // the same, back from the experts (16-bit even with FP8 dispatch)
  Bytes etp_gather;        // expert-TP all-gather size
};

MoeTraffic traffic(const LayerShape& x, const ExpertLoad& load) {
  MoeTraffic t;
  const double e = x.act_bytes;
  const double w = static_cast<double>(x.expert_h);  // routed tokens' width (h or latent)
  t.tokens_in = static_cast<double>(x.tp > 1 ? x.tokens / x.tp : x.tokens);
  t.copies = t.tokens_in * static_cast<double>(x.top_k);
  const double received = t.copies * static_cast<double>(x.ep) * load.max_rank_share;
  t.rank_tokens = received * static_cast<double>(x.etp);
  t.per_expert =
      static_cast<int64_t>(std::ceil(t.rank_tokens / static_cast<double>(x.local_experts)));
  if (x.allgather_dispatcher) {
    t.dispatch = round_bytes(e * w * t.tokens_in * static_cast<double>(x.ep));
    t.combine = t.dispatch;
  } else {
    // Node-limited routing shrinks the cross-node copies; the buffer stands for them, since the
    // all-to-all's time is that of its cross-node share once the group spans nodes.
    const double copies = std::max(t.copies * (1 - load.dropped), received);
    t.combine = round_bytes(e * w * copies * x.dispatch_copy_scale);
    t.dispatch = round_bytes(e * w * copies * x.dispatch_copy_scale * x.dispatch_fp8_scale);
  }
  t.etp_gather = round_bytes(e * w * t.rank_tokens);
  return t;
}

// "moe.experts.fc1.fwd[1.83x]": the busiest rank's load over the mean, shown in the trace.
std::string tag(const char* name, const ExpertLoad& load) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "[%.2fx]", load.imbalance());
  return std::string(name) + buf;
}

// Transformer Engine's per-expert grouped GEMM (GroupedLinear without a fused kernel) runs its
// cuBLAS GEMMs on 4 compute streams (nvte_multi_stream_cublas_gemm): four experts' GEMMs share
// the GPU at a time, each group filling its own waves.
constexpr int kTeGroupedGemmStreams = 4;

// A grouped GEMM over the rank's E/ep local experts, its name tagged with the load's imbalance.
Op expert_gemm(const char* name, int64_t m, int64_t n, int64_t k, const LayerShape& x,
               const ExpertLoad& load, bool accumulate = false) {
  Op op = gemm_op(name, m, n, k, x.local_experts, x.gemm_bytes, accumulate);
  op.name = tag(name, load);
  op.launches = x.expert_gemm_launches;
  op.host_time = x.expert_gemm_host;
  if (x.expert_gemm_separate) op.gemm_streams = kTeGroupedGemmStreams;
  return op;
}

// An EP collective of the token dispatcher: an all-to-all, or with the all-gather dispatcher
// `allgather_kind` (the dispatch's all-gather or the combine's reduce-scatter). The flex
// dispatcher's all-to-all holds its kernels' SMs, which an overlapped kernel does not get.
Op ep_collective(const LayerShape& x, const char* alltoall_name, const char* allgather_name,
                 CollectiveKind allgather_kind, Bytes bytes) {
  Op op = x.allgather_dispatcher
              ? collective_op(allgather_name, allgather_kind, GroupKind::kExpert, bytes)
              : collective_op(alltoall_name, CollectiveKind::kAllToAll, GroupKind::kExpert, bytes);
  if (x.flex_dispatcher) op.comm_sms = x.flex_sms;
  return op;
}

// Shared experts: a dense TP MLP over every token (with its SP gather and reduce-scatter),
// forward or `backward`, named "shared.*"; its first and last kernels (the norm and the
// residual) are the layer's own and are left out.
std::vector<Op> shared_expert_ops(const LayerShape& x, bool backward) {
  LayerShape s = x;
  s.ffn_per_rank = x.shared_ffn_per_rank;
  s.fc1_out = x.swiglu ? 2 * s.ffn_per_rank : s.ffn_per_rank;
  const std::vector<Op> mlp = backward ? mlp_backward_ops(s) : mlp_forward_ops(s);
  std::vector<Op> ops;
  for (size_t i = 1; i + 1 < mlp.size(); ++i) {
    ops.push_back(mlp[i]);
    ops.back().name = "shared." + mlp[i].name;
  }
  return ops;
}

}  // namespace

double moe_rank_tokens(const LayerShape& x, const ExpertLoad& load) {
  return traffic(x, load).rank_tokens;
}

std::vector<Op> moe_forward_ops(const LayerShape& x, const ExpertLoad& load) {
  std::vector<Op> ops;
  const MoeTraffic t = traffic(x, load);
  const double e = x.act_bytes;
  const double h = static_cast<double>(x.h);
  const double w = static_cast<double>(x.expert_h);  // routed tokens' width
  const double te = static_cast<double>(x.elementwise_tokens);
  const int64_t tin = static_cast<int64_t>(t.tokens_in);
  ops.push_back(memory_op("ln2.fwd", 2 * e * te * h));
  // Router: logits GEMM, then softmax/sigmoid + top-k over E scores in fp32 (read, write, index).
  ops.push_back(gemm_op("moe.router.fwd", tin, x.experts, x.h, 1, x.act_bytes));
  ops.push_back(memory_op("moe.router.topk", 12.0 * t.tokens_in * static_cast<double>(x.experts)));
  // The dispatcher's token counts go to the host, which waits for them: the alltoall
  // dispatcher's split sizes (Megatron-Core MoEAlltoAllTokenDispatcher.preprocess), the flex
  // dispatcher's permuted-token count (layer_shape.cc).
  ops.back().host_sync = x.dispatch_host_sync;
  // The router's and the dispatcher's framework ops run on the host before the sync.
  ops.back().launches += x.moe_ops_before_sync;
  // Latent MoE: the tokens go down to the latent width before the dispatch.
  if (x.moe_latent > 0) {
    ops.push_back(gemm_op("moe.latent_down.fwd", tin, x.moe_latent, x.h, 1, x.gemm_bytes));
  }
  // Permute: gather each token copy into its expert's contiguous block (read + write).
  ops.push_back(memory_op("moe.permute.fwd", 2 * e * t.copies * w));
  ops.back().launches += x.moe_ops_permute;
  if (x.ep > 1) {
    ops.push_back(ep_collective(x, "ep.alltoall.dispatch", "ep.allgather.dispatch",
                                CollectiveKind::kAllGather, t.dispatch));
  }
  const double rt = t.rank_tokens;
  // Megatron-Core's all-to-all dispatcher receives its tokens ordered by source rank, then
  // expert; with several local experts it sorts them into expert order after the dispatch
  // (sort_chunks_by_idxs) and back before the combine: a read and a write of every received
  // copy each way (token_dispatcher.py, MoEAlltoAllTokenDispatcher).
  const bool sorts =
      x.ep > 1 && x.local_experts > 1 && !x.allgather_dispatcher && !x.flex_dispatcher;
  if (sorts) {
    ops.push_back(memory_op("moe.sort_chunks.fwd", 2 * e * rt * w));
    ops.back().launches += x.moe_ops_sort;
  }
  if (x.etp > 1) {
    ops.push_back(collective_op("etp.allgather", CollectiveKind::kAllGather,
                                GroupKind::kExpertTensor, t.etp_gather));
  }
  const double f = static_cast<double>(x.expert_ffn_per_rank);
  ops.push_back(
      expert_gemm("moe.experts.fc1.fwd", t.per_expert, x.expert_fc1_out, x.expert_h, x, load));
  // The fused grouped MLP activates (and casts) in fc1's epilogue: no kernel of its own.
  // A clamped activation clamps and re-concatenates FC1's output first (clamped_glu_ops); the
  // fused MLP clamps in the epilogue.
  if (!x.fused_expert_mlp) {
    if (x.clamped_glu) clamped_glu_ops("moe.experts.act", rt, f, e, /*backward=*/false, ops);
    ops.push_back(memory_op("moe.experts.act.fwd", (x.swiglu ? 3 : 2) * e * rt * f));
  }
  ops.push_back(
      expert_gemm("moe.experts.fc2.fwd", t.per_expert, x.expert_h, x.expert_ffn_per_rank, x, load));
  ops.back().quantized_input = x.fused_expert_mlp;
  // Expert biases (model.linear_bias): FC1's is added in its GEMM's epilogue; FC2's is scaled by
  // each copy's routing probability, as the activation scaled the rest, outside the GEMM
  // (Megatron-Core TEGroupedMLP._apply_bias: per local expert `t + b * p` on its split of the
  // output, then torch.cat): b·p written, t and b·p read and the sum written, the sum read and
  // written by the cat, 6·e per element of the rt × w output. The loop is Python's, over the
  // local experts: two kernels each (b·p, t + b·p) and the cat, each launched by the host and
  // each with its gap on the device. The fused MLP takes it in its epilogue.
  const bool fc2_bias = x.bias && !x.fused_expert_mlp;
  if (fc2_bias) {
    ops.push_back(memory_op("moe.experts.fc2.bias.fwd", 6 * e * rt * w));
    ops.back().launches = static_cast<int>(2 * x.local_experts + 1);
    ops.back().device_kernels = ops.back().launches;
  }
  if (x.etp > 1) {
    ops.push_back(collective_op("etp.reducescatter", CollectiveKind::kReduceScatter,
                                GroupKind::kExpertTensor, t.etp_gather));
  }
  if (sorts) {
    ops.push_back(memory_op("moe.unsort_chunks.fwd", 2 * e * rt * w));
    ops.back().launches += x.moe_ops_unsort;
  }
  if (x.ep > 1) {
    ops.push_back(ep_collective(x, "ep.alltoall.combine", "ep.reducescatter.combine",
                                CollectiveKind::kReduceScatter, t.combine));
  }
  // Unpermute and the gate-weighted sum of the k copies of each token.
  ops.push_back(memory_op("moe.unpermute.fwd", 2 * e * t.copies * w + e * t.tokens_in * w));
  if (x.moe_latent > 0) {
    ops.push_back(gemm_op("moe.latent_up.fwd", tin, x.h, x.moe_latent, 1, x.gemm_bytes));
  }
  if (x.shared_ffn_per_rank > 0) {
    const std::vector<Op> shared = shared_expert_ops(x, /*backward=*/false);
    ops.insert(ops.end(), shared.begin(), shared.end());
  }
  ops.push_back(memory_op("mlp.residual", (x.dropout ? 3 * e + 1 : 3 * e) * te * h));
  return ops;
}

std::vector<Op> moe_backward_ops(const LayerShape& x, const ExpertLoad& load) {
  std::vector<Op> ops;
  const MoeTraffic t = traffic(x, load);
  const double e = x.act_bytes;
  const double h = static_cast<double>(x.h);
  const double w = static_cast<double>(x.expert_h);  // routed tokens' width
  const double te = static_cast<double>(x.elementwise_tokens);
  const int64_t tin = static_cast<int64_t>(t.tokens_in);
  const double rt = t.rank_tokens;
  const double f = static_cast<double>(x.expert_ffn_per_rank);
  ops.push_back(memory_op("mlp.residual.bwd", (x.dropout ? 3 * e + 1 : 2 * e) * te * h));
  if (x.shared_ffn_per_rank > 0) {
    const std::vector<Op> shared = shared_expert_ops(x, /*backward=*/true);
    ops.insert(ops.end(), shared.begin(), shared.end());
  }
  if (x.moe_latent > 0) {
    ops.push_back(gemm_op("moe.latent_up.dgrad", tin, x.moe_latent, x.h, 1, x.gemm_bytes));
    ops.push_back(gemm_op("moe.latent_up.wgrad", x.h, x.moe_latent, tin, 1, x.gemm_bytes, true));
  }
  ops.push_back(memory_op("moe.unpermute.bwd", 2 * e * t.copies * w + e * t.tokens_in * w));
  if (x.ep > 1) {
    ops.push_back(ep_collective(x, "ep.alltoall.combine.grad", "ep.allgather.combine.grad",
                                CollectiveKind::kAllGather, t.dispatch));
  }
  // The sorts' backward: the combine's gradient into expert order, the dispatch's back.
  const bool sorts =
      x.ep > 1 && x.local_experts > 1 && !x.allgather_dispatcher && !x.flex_dispatcher;
  if (sorts) ops.push_back(memory_op("moe.unsort_chunks.bwd", 2 * e * rt * w));
  if (x.etp > 1) {
    ops.push_back(collective_op("etp.allgather.grad", CollectiveKind::kAllGather,
                                GroupKind::kExpertTensor, t.etp_gather));
  }
  // FC2's bias (forward above) backward: the gradients of b (Σ over rows of grad · p: a product
  // written and read) and of p (Σ over the width of grad · b), each reading the output gradient:
  // 7·e per element. Autograd runs them per local expert (a product and a reduction for each
  // gradient: four kernels), then the splits' backward concatenates the gradients (two).
  if (x.bias && !x.fused_expert_mlp) {
    ops.push_back(memory_op("moe.experts.fc2.bias.bwd", 7 * e * rt * w));
    ops.back().launches = static_cast<int>(4 * x.local_experts + 2);
    ops.back().device_kernels = ops.back().launches;
  }
  ops.push_back(expert_gemm("moe.experts.fc2.dgrad", t.per_expert, x.expert_ffn_per_rank,
                            x.expert_h, x, load));
  ops.push_back(expert_gemm("moe.experts.fc2.wgrad", x.expert_h, x.expert_ffn_per_rank,
                            t.per_expert, x, load, true));
  // Fused: the activation's backward (and the cast of fc1's output gradient) in fc2 dgrad's
  // epilogue.
  if (!x.fused_expert_mlp) {
    ops.push_back(memory_op("moe.experts.act.bwd", (x.swiglu ? 5 : 3) * e * rt * f));
    if (x.clamped_glu) clamped_glu_ops("moe.experts.act", rt, f, e, /*backward=*/true, ops);
  }
  ops.push_back(
      expert_gemm("moe.experts.fc1.dgrad", t.per_expert, x.expert_h, x.expert_fc1_out, x, load));
  ops.back().quantized_input = x.fused_expert_mlp;
  ops.push_back(expert_gemm("moe.experts.fc1.wgrad", x.expert_h, x.expert_fc1_out, t.per_expert, x,
                            load, true));
  if (x.etp > 1) {
    ops.push_back(collective_op("etp.reducescatter.grad", CollectiveKind::kReduceScatter,
                                GroupKind::kExpertTensor, t.etp_gather));
  }
  if (sorts) ops.push_back(memory_op("moe.sort_chunks.bwd", 2 * e * rt * w));
  if (x.ep > 1) {
    ops.push_back(ep_collective(x, "ep.alltoall.dispatch.grad", "ep.reducescatter.dispatch.grad",
                                CollectiveKind::kReduceScatter, t.combine));
  }
  ops.push_back(memory_op("moe.permute.bwd", 2 * e * t.copies * w));
  if (x.moe_latent > 0) {
    ops.push_back(gemm_op("moe.latent_down.dgrad", tin, x.h, x.moe_latent, 1, x.gemm_bytes));
    ops.push_back(gemm_op("moe.latent_down.wgrad", x.h, x.moe_latent, tin, 1, x.gemm_bytes, true));
  }
  ops.push_back(
      memory_op("moe.router.topk.bwd", 12.0 * t.tokens_in * static_cast<double>(x.experts)));
  ops.back().launches += x.moe_ops_backward;
  ops.push_back(gemm_op("moe.router.dgrad", tin, x.h, x.experts, 1, x.act_bytes));
  ops.push_back(gemm_op("moe.router.wgrad", x.h, x.experts, tin, 1, x.act_bytes, true));
  // Norm backward reads grad, input and the residual gradient, writes the gradient: 4e·T·h.
  Op ln2 = memory_op("ln2.bwd", 4 * e * te * h);
  ln2.wait_comm = x.tp > 1;  // the shared experts' async TP reduction of the input gradient
  ops.push_back(ln2);
  return ops;
}

}  // namespace preflight
