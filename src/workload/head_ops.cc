// The ends of the model outside its layers (layer_ops.h): the input embedding (vocab-parallel
// lookup, learned positions, dropout) and the output head (final norm, logits GEMM, the loss:
// Transformer Engine's fused cross-entropy or Megatron's fp32 vocab-parallel one), forward and
// backward.
#include <utility>
#include <vector>

#include "workload/layer_ops.h"

namespace preflight {

std::vector<Op> embedding_forward_ops(const LayerShape& x) {
  std::vector<Op> ops;
  const double e = x.act_bytes;
  const double t = static_cast<double>(x.tokens);
  const double h = static_cast<double>(x.h);
  ops.push_back(memory_op("embedding.lookup", 2 * e * t * h));
  if (x.tp > 1) {
    // Vocab-parallel embedding: each rank holds V/t rows, partial sums are all-reduced (or
    // reduce-scattered into the sequence-parallel region).
    ops.push_back(tp_reduction(x, /*grad=*/false));
  }
  const double te = static_cast<double>(x.elementwise_tokens);
  if (x.learned_positions) ops.push_back(memory_op("embedding.position_add", 3 * e * te * h));
  if (x.dropout) ops.push_back(memory_op("embedding.dropout", (2 * e + 1) * te * h));
  return ops;
}

std::vector<Op> embedding_backward_ops(const LayerShape& x) {
  std::vector<Op> ops;
  const double e = x.act_bytes;
  const double t = static_cast<double>(x.tokens);
  const double te = static_cast<double>(x.elementwise_tokens);
  const double h = static_cast<double>(x.h);
  if (x.dropout) ops.push_back(memory_op("embedding.dropout.bwd", (2 * e + 1) * te * h));
  if (x.learned_positions) ops.push_back(memory_op("embedding.position.bwd", 2 * e * te * h));
  // Dense embedding backward: scatter-add T rows into the V/t × h gradient.
  ops.push_back(memory_op("embedding.bwd", 3 * e * t * h));
  return ops;
}

std::vector<Op> head_forward_ops(const LayerShape& x) {
  std::vector<Op> ops;
  const double e = x.act_bytes;
  const double t = static_cast<double>(x.tokens);
  const double logits = t * static_cast<double>(x.vocab_per_rank);
  norm_forward(x, "final_norm.fwd", ops);
  ops.push_back(gemm_op("logits.fwd", x.tokens, x.vocab_per_rank, x.h, 1, x.gemm_bytes));
  if (x.te_cross_entropy) {
    // Transformer Engine's fused cross-entropy (StackConfig::te_cross_entropy), as the releases
    // of 2025-2026 run it: an online-softmax pass reads the logits (e B each) and writes each
    // row's max, sum of exponentials and target logit (12 B per token); across TP those are
    // all-gathered (12·T per rank); a second kernel combines them into the loss and writes the
    // softmax gradient over the logits (read e, write e).
    ops.push_back(memory_op("loss.online_softmax", e * logits + 12 * t));
    if (x.tp > 1) {
      ops.push_back(collective_op("tp.allgather.loss", CollectiveKind::kAllGather,
                                  GroupKind::kTensor, Bytes(static_cast<int64_t>(12 * t * x.tp))));
    }
    ops.push_back(memory_op("loss.fwd", 2 * e * logits + 12 * t * x.tp + 4 * t));
    return ops;
  }
  // Vocab-parallel cross-entropy in fp32 (Megatron): cast to fp32 (e+4), max (4), exp/sum
  // (8), normalise and pick the target (8): ≈ 26 B per logit element; three all-reduces of T
  // floats (max, sum of exps, target logit) across the TP group.
  ops.push_back(memory_op("loss.cast", (e + 4) * logits));
  ops.push_back(memory_op("loss.max", 4 * logits));
  if (x.tp > 1) {
    ops.push_back(collective_op("tp.allreduce.loss", CollectiveKind::kAllReduce, GroupKind::kTensor,
                                Bytes(static_cast<int64_t>(4 * t))));
  }
  ops.push_back(memory_op("loss.exp_sum", 8 * logits));
  if (x.tp > 1) {
    ops.push_back(collective_op("tp.allreduce.loss", CollectiveKind::kAllReduce, GroupKind::kTensor,
                                Bytes(static_cast<int64_t>(8 * t))));
  }
  ops.push_back(memory_op("loss.softmax", 8 * logits));
  return ops;
}

std::vector<Op> head_backward_ops(const LayerShape& x) {
  std::vector<Op> ops;
  const double e = x.act_bytes;
  const double t = static_cast<double>(x.tokens);
  const double logits = t * static_cast<double>(x.vocab_per_rank);
  if (x.te_cross_entropy) {
    // TE's backward: the gradient the forward left in the logits' place times the incoming
    // per-token gradient, in place (read e, write e). 5e B per logit in all. TransformerEngine
    // PR #3273 (2026) moved the gradient's computation into this pass (3e in all); PR #3193
    // before it kept an fp32 gradient from forward to backward.
    ops.push_back(memory_op("loss.bwd", 2 * e * logits + 4 * t));
  } else {
    // Softmax gradient in fp32 (read p, write dlogits) and the cast back to half: ≈ 26 B/element.
    ops.push_back(memory_op("loss.bwd", 12 * logits));
    ops.push_back(memory_op("loss.bwd_cast", (4 + e) * logits + 4 * logits));
  }
  ops.push_back(gemm_op("logits.dgrad", x.tokens, x.h, x.vocab_per_rank, 1, x.gemm_bytes));
  if (x.tp > 1) {
    Op reduction = tp_reduction(x, /*grad=*/true);
    reduction.async = true;  // overlaps the weight gradient below
    ops.push_back(std::move(reduction));
  }
  ops.push_back(gemm_op("logits.wgrad", x.vocab_per_rank, x.h, x.tokens, 1, x.gemm_bytes, true));
  norm_backward(x, "final_norm.bwd", ops);
  return ops;
}

}  // namespace preflight
