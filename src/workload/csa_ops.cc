// DeepSeek-V4's layer parts (csa_ops.h): the compressed attention's projections, compressors
// and lightning indexer around the fused core, and the hyper-connections around each sublayer.
#include "workload/csa_ops.h"

#include <algorithm>
#include <string>

#include "workload/layer_ops.h"

namespace preflight {
namespace {

// DeepSeek-V4's lightning indexer scores (LayerShape::csa_indexed): each query's index_heads
// dot products of index_dim with every earlier compressed entry, weighted per head (ReLU) and
// summed, one fused kernel written out in fp32 for the top-k: 2·T·i_h·candidates·i_d FLOPs,
// no exponentials; reads the index queries and the compressed index keys, writes the scores.
// `backward`: the gradients of the index queries and keys, twice the FLOPs (two GEMM-shaped
// products), reading the scores' gradient.
Op index_scores(const LayerShape& x, bool backward) {
  const double e = x.act_bytes;
  const double t = static_cast<double>(x.tokens);
  const double iq = static_cast<double>(x.index_heads * x.index_dim);
  const double keys =
      t / static_cast<double>(std::max<int64_t>(1, x.csa_ratio)) * static_cast<double>(x.index_dim);
  Op op;
  op.name = backward ? "csa.index.scores.bwd" : "csa.index.scores";
  op.type = OpType::kAttention;
  op.backward = backward;
  op.flops = Flops((backward ? 4.0 : 2.0) * t * iq * x.index_candidates);
  op.bytes = round_bytes((backward ? 2 : 1) * e * (t * iq + keys) + 4.0 * t * x.index_candidates);
  return op;
}

// The indexer's training signal (Megatron-Core's DSA indexer loss, dsa_indexer_loss_coeff):
// the main attention's distribution over each query's kept entries, summed over its heads, as
// the KL target of the indexer's: QKᵀ over the kept keys again, 2·T·a·k·d_qk FLOPs and one
// exponential per score.
Op index_loss(const LayerShape& x) {
  const double e = x.act_bytes;
  const double t = static_cast<double>(x.tokens);
  const double kept = x.compressed_keys;
  Op op;
  op.name = "csa.index.loss";
  op.type = OpType::kAttention;
  op.flops =
      Flops(2.0 * t * static_cast<double>(x.heads_per_rank) * kept * static_cast<double>(x.qk_dim));
  op.exponentials = t * static_cast<double>(x.heads_per_rank) * kept;
  op.bytes = round_bytes(e * t * static_cast<double>(x.heads_per_rank * x.qk_dim) + 8.0 * t * kept);
  return op;
}

}  // namespace

// model.csa's projections forward: the query latent (down, norm, up), the K/V, RoPE on rope_dim
// of each head; on a compressing layer the compressor (K/V and gate projections of
// csa_overlap widths, then the gated pooling of each ratio tokens into one entry and its norm);
// on an indexed layer the lightning indexer (queries from the latent, head weights, a
// compressor of its own at index_dim, the scores and the top-k of each query).
void csa_projections_forward(const LayerShape& x, std::vector<Op>& ops) {
  const double e = x.act_bytes;
  const double t = static_cast<double>(x.tokens);
  const int64_t q_out = x.heads_per_rank * x.qk_dim;
  const int64_t kv = x.kv_heads_per_rank * x.qk_dim;
  ops.push_back(gemm_op("mla.q_down.fwd", x.tokens, x.q_lora, x.h, 1, x.gemm_bytes));
  ops.push_back(memory_op("mla.q_norm.fwd", 2 * e * t * x.q_lora));
  ops.push_back(gemm_op("mla.q_up.fwd", x.tokens, q_out, x.q_lora, 1, x.gemm_bytes));
  ops.push_back(gemm_op("csa.kv.fwd", x.tokens, kv, x.h, 1, x.gemm_bytes));
  ops.push_back(memory_op("csa.kv_norm.fwd", 2 * e * t * kv));
  ops.push_back(memory_op(
      "rope.fwd",
      2 * e * t * static_cast<double>((x.heads_per_rank + x.kv_heads_per_rank) * x.rope_dim)));
  if (x.csa_ratio > 0) {
    const int64_t width = x.csa_overlap * kv;
    const double entries = t / static_cast<double>(x.csa_ratio);
    ops.push_back(gemm_op("csa.compress.fwd", x.tokens, 2 * width, x.h, 1, x.gemm_bytes));
    ops.push_back(memory_op(
        "csa.compress.pool.fwd",
        e * (2.0 * t * static_cast<double>(width) + 2.0 * entries * static_cast<double>(kv))));
  }
  if (x.csa_indexed) {
    const int64_t iwidth = x.csa_overlap * x.index_dim;
    const double entries = t / static_cast<double>(x.csa_ratio);
    ops.push_back(gemm_op("csa.index.q.fwd", x.tokens, x.index_heads * x.index_dim, x.q_lora, 1,
                          x.gemm_bytes));
    ops.push_back(gemm_op("csa.index.weights.fwd", x.tokens, x.index_heads, x.h, 1, x.act_bytes));
    ops.push_back(gemm_op("csa.index.compress.fwd", x.tokens, 2 * iwidth, x.h, 1, x.gemm_bytes));
    ops.push_back(memory_op("csa.index.compress.pool.fwd",
                            e * (2.0 * t * static_cast<double>(iwidth) +
                                 2.0 * entries * static_cast<double>(x.index_dim))));
    ops.push_back(index_scores(x, /*backward=*/false));
    // Top-k of each query's scores: read them, write the kept entries' indices (4 B each).
    ops.push_back(memory_op("csa.index.topk", 4.0 * t * (x.index_candidates + x.compressed_keys)));
  }
}

// Their backward, in reverse: the indexer's loss and gradients, the compressors', RoPE, the K/V
// and query projections' data gradients, the TP reduction of the input gradient overlapped with
// the weight gradients, the first norm and the residual gradient.
void csa_projections_backward(const LayerShape& x, std::vector<Op>& ops) {
  const double e = x.act_bytes;
  const double t = static_cast<double>(x.tokens);
  const double te = static_cast<double>(x.elementwise_tokens);
  const double h = static_cast<double>(x.h);
  const int64_t q_out = x.heads_per_rank * x.qk_dim;
  const int64_t kv = x.kv_heads_per_rank * x.qk_dim;
  const int64_t width = x.csa_overlap * kv;
  const int64_t iwidth = x.csa_overlap * x.index_dim;
  const int64_t iq = x.index_heads * x.index_dim;
  if (x.csa_indexed) {
    ops.push_back(index_loss(x));
    ops.push_back(index_scores(x, /*backward=*/true));
    ops.push_back(memory_op("csa.index.compress.pool.bwd", 2 * e * 2.0 * t * iwidth));
    ops.push_back(gemm_op("csa.index.compress.dgrad", x.tokens, x.h, 2 * iwidth, 1, x.gemm_bytes));
    ops.push_back(gemm_op("csa.index.weights.dgrad", x.tokens, x.h, x.index_heads, 1, x.act_bytes));
    ops.push_back(gemm_op("csa.index.q.dgrad", x.tokens, x.q_lora, iq, 1, x.gemm_bytes));
  }
  if (x.csa_ratio > 0) {
    ops.push_back(memory_op("csa.compress.pool.bwd", 2 * e * 2.0 * t * width));
    ops.push_back(gemm_op("csa.compress.dgrad", x.tokens, x.h, 2 * width, 1, x.gemm_bytes));
  }
  ops.push_back(memory_op(
      "rope.bwd",
      2 * e * t * static_cast<double>((x.heads_per_rank + x.kv_heads_per_rank) * x.rope_dim)));
  ops.push_back(memory_op("csa.kv_norm.bwd", 4 * e * t * kv));
  ops.push_back(gemm_op("csa.kv.dgrad", x.tokens, x.h, kv, 1, x.gemm_bytes));
  ops.push_back(gemm_op("mla.q_up.dgrad", x.tokens, x.q_lora, q_out, 1, x.gemm_bytes));
  ops.push_back(memory_op("mla.q_norm.bwd", 4 * e * t * x.q_lora));
  ops.push_back(gemm_op("mla.q_down.dgrad", x.tokens, x.h, x.q_lora, 1, x.gemm_bytes));
  if (x.tp > 1) {
    ops.push_back(tp_reduction(x, /*grad=*/true));
    ops.back().async = true;
  }
  if (x.csa_indexed) {
    ops.push_back(
        gemm_op("csa.index.compress.wgrad", x.h, 2 * iwidth, x.tokens, 1, x.gemm_bytes, true));
    ops.push_back(
        gemm_op("csa.index.weights.wgrad", x.h, x.index_heads, x.tokens, 1, x.act_bytes, true));
    ops.push_back(gemm_op("csa.index.q.wgrad", x.q_lora, iq, x.tokens, 1, x.gemm_bytes, true));
  }
  if (x.csa_ratio > 0) {
    ops.push_back(gemm_op("csa.compress.wgrad", x.h, 2 * width, x.tokens, 1, x.gemm_bytes, true));
  }
  ops.push_back(gemm_op("csa.kv.wgrad", x.h, kv, x.tokens, 1, x.gemm_bytes, true));
  ops.push_back(gemm_op("mla.q_up.wgrad", x.q_lora, q_out, x.tokens, 1, x.gemm_bytes, true));
  ops.push_back(gemm_op("mla.q_down.wgrad", x.h, x.q_lora, x.tokens, 1, x.gemm_bytes, true));
  norm_backward(x, "ln1.bwd", ops);
  ops.push_back(memory_op("residual.grad_add", 3 * e * te * h));
}

// Hyper-connections (LayerShape::hc_streams n > 1; DeepSeek-V4's mHC as Megatron-Core runs it
// with its fused kernels, use_fused_mhc): around each sublayer, on the T tokens of the residual
// stream (T/t with sequence parallelism), e the activation width:
//   before: the mixing weights' GEMM, T × (n² + 2n) from the n·h streams, and one fused pass that
//           makes the n × n mixing matrix doubly stochastic (Sinkhorn's steps, per token in
//           registers) and mixes the streams into the sublayer's input: reads n·h, writes h;
//   after:  one pass writing the n new streams from the mixed old ones and the sublayer's
//           output: reads (n + 1)·h, writes n·h.
// Backward: the after-pass's gradient (reads n·h and h, writes n·h and h), the before-pass's
// (reads h, n·h, writes n·h) and the GEMM's data and weight gradients.
void hyper_connection_ops(const LayerShape& x, const std::string& sublayer, bool backward,
                          bool before, std::vector<Op>& ops) {
  if (x.hc_streams <= 1) return;
  const double e = x.act_bytes;
  const double te = static_cast<double>(x.elementwise_tokens);
  const double h = static_cast<double>(x.h);
  const double n = static_cast<double>(x.hc_streams);
  const int64_t mix = x.hc_streams * x.hc_streams + 2 * x.hc_streams;
  const int64_t tokens = x.elementwise_tokens;
  const std::string base = "hc." + sublayer + (before ? ".pre" : ".post");
  if (!backward) {
    if (before) {
      ops.push_back(gemm_op((base + ".weights.fwd").c_str(), tokens, mix, x.hc_streams * x.h, 1,
                            x.act_bytes));
      ops.push_back(memory_op((base + ".mix.fwd").c_str(), e * te * (n + 1) * h));
    } else {
      ops.push_back(memory_op((base + ".fwd").c_str(), e * te * (2 * n + 1) * h));
    }
    return;
  }
  if (before) {
    ops.push_back(memory_op((base + ".mix.bwd").c_str(), e * te * (2 * n + 1) * h));
    ops.push_back(gemm_op((base + ".weights.dgrad").c_str(), tokens, x.hc_streams * x.h, mix, 1,
                          x.act_bytes));
    ops.push_back(gemm_op((base + ".weights.wgrad").c_str(), x.hc_streams * x.h, mix, tokens, 1,
                          x.act_bytes, true));
  } else {
    ops.push_back(memory_op((base + ".bwd").c_str(), e * te * (2 * n + 2) * h));
  }
}

}  // namespace preflight
