#include "workload/layer_ops.h"

#include <algorithm>
#include <cmath>

#include "model/transformer.h"

namespace preflight {
namespace {

Bytes to_bytes(double b) { return Bytes(static_cast<int64_t>(std::llround(b))); }

// Appends `op` with stream flags.
void push(std::vector<Op>& ops, Op op, bool async = false, bool wait_comm = false) {
  op.async = async;
  op.wait_comm = wait_comm;
  ops.push_back(std::move(op));
}

// Attention-core forward kernels (fused or Megatron's unfused bmm/softmax/dropout chain).
void attention_core_forward(const LayerShape& x, std::vector<Op>& ops) {
  const double e = x.act_bytes;
  const double t = static_cast<double>(x.tokens);
  const int64_t bh = x.b * x.heads_per_rank;
  const double q_width = static_cast<double>(x.heads_per_rank * x.head_dim);
  const double kv_width = static_cast<double>(x.kv_heads_per_rank * x.head_dim);
  if (x.flash) {
    // FlashAttention-2 forward: causal, so half of the 4·b·s²·(a/t)·dh score/context FLOPs are
    // skipped; HBM traffic is Q, K, V, O and the softmax statistics only.
    Op op;
    op.name = "attn.core.fwd";
    op.type = OpType::kAttention;
    op.flops = Flops(2.0 * static_cast<double>(bh) * x.s * x.s * x.head_dim);
    op.bytes = to_bytes(e * t * (2 * q_width + 2 * kv_width) + 4.0 * bh * x.s);
    ops.push_back(op);
    return;
  }
  const double A = static_cast<double>(bh) * x.s * x.s;
  ops.push_back(memory_op("attn.qkv_permute", 2 * e * t * q_width));
  ops.push_back(gemm_op("attn.scores", x.s, x.s, x.head_dim, bh, x.act_bytes));
  ops.push_back(memory_op("attn.softmax", 2 * e * A));  // fused scale + mask + softmax
  if (x.dropout) ops.push_back(memory_op("attn.dropout", (2 * e + 1) * A));
  ops.push_back(gemm_op("attn.context", x.s, x.head_dim, x.s, bh, x.act_bytes));
  ops.push_back(memory_op("attn.context_permute", 2 * e * t * q_width));
}

}  // namespace

LayerShape make_layer_shape(const Scenario& sc) {
  const ModelConfig& m = sc.model;
  LayerShape x;
  x.b = sc.training.micro_batch;
  x.s = sc.training.seq_len;
  x.h = m.hidden;
  x.tokens = x.b * x.s;
  x.tp = sc.parallelism.tp;
  x.heads_per_rank = m.heads / x.tp;
  x.kv_heads_per_rank = std::max<int64_t>(1, m.kv_heads / x.tp);
  x.head_dim = m.head_dim();
  x.qkv_out = (x.heads_per_rank + 2 * x.kv_heads_per_rank) * x.head_dim;
  x.ffn_per_rank = m.ffn_hidden / x.tp;
  x.swiglu = m.activation == Activation::kSwiglu;
  x.fc1_out = x.swiglu ? 2 * x.ffn_per_rank : x.ffn_per_rank;
  x.vocab_per_rank = padded_vocab(m, sc.parallelism.tp) / x.tp;
  x.sequence_parallel = sc.parallelism.sequence_parallel;
  x.elementwise_tokens = x.sequence_parallel ? x.tokens / x.tp : x.tokens;
  x.act_bytes = 2;
  x.gemm_bytes = sc.training.precision == Precision::kFp8 ? 1 : 2;
  x.flash = sc.training.flash_attention;
  x.dropout = m.dropout;
  x.bias = m.linear_bias;
  x.rope = m.position_embedding == PositionEmbedding::kRope;
  x.learned_positions = m.position_embedding == PositionEmbedding::kLearned;
  x.layernorm = m.norm == Norm::kLayerNorm;
  return x;
}

Op gemm_op(const char* name, int64_t m, int64_t n, int64_t k, int64_t batch, int e,
           bool accumulate) {
  Op op;
  op.name = name;
  op.type = OpType::kGemm;
  op.m = m;
  op.n = n;
  op.k = k;
  op.batch = batch;
  op.bytes_per_element = e;
  op.flops = Flops(2.0 * static_cast<double>(m) * n * k * batch);
  double elements = static_cast<double>(m * k + k * n + m * n) * batch;
  if (accumulate) elements += static_cast<double>(m * n) * batch;
  op.bytes = to_bytes(elements * e);
  return op;
}

Op memory_op(const char* name, double bytes, Category category) {
  Op op;
  op.name = name;
  op.type = OpType::kMemory;
  op.category = category;
  op.bytes = to_bytes(bytes);
  return op;
}

Op collective_op(const char* name, CollectiveKind kind, GroupKind group, Bytes bytes) {
  Op op;
  op.name = name;
  op.type = OpType::kCollective;
  op.collective = kind;
  op.group = group;
  op.comm_bytes = bytes;
  switch (group) {
    case GroupKind::kTensor:
      op.category = Category::kTpComm;
      break;
    case GroupKind::kPipeline:
      op.category = Category::kPpComm;
      break;
    case GroupKind::kData:
    case GroupKind::kEmbedding:
    case GroupKind::kExpertData:
      op.category = Category::kDpComm;
      break;
    case GroupKind::kContext:
      op.category = Category::kCpComm;
      break;
    case GroupKind::kExpert:
      op.category = Category::kEpComm;
      break;
    case GroupKind::kExpertTensor:
      op.category = Category::kTpComm;
      break;
  }
  return op;
}

std::vector<Op> layer_forward_ops(const LayerShape& x) {
  std::vector<Op> ops;
  const double e = x.act_bytes;
  const double t = static_cast<double>(x.tokens);
  const double te = static_cast<double>(x.elementwise_tokens);
  const double h = static_cast<double>(x.h);
  const Bytes full_activation = to_bytes(e * t * h);
  const bool tp = x.tp > 1;
  // Norm reads and writes the hidden state: 2·e·T·h.
  ops.push_back(memory_op("ln1.fwd", 2 * e * te * h));
  if (tp && x.sequence_parallel) {
    ops.push_back(collective_op("tp.allgather", CollectiveKind::kAllGather, GroupKind::kTensor,
                                full_activation));
  }
  ops.push_back(gemm_op("qkv.fwd", x.tokens, x.qkv_out, x.h, 1, x.gemm_bytes));
  if (x.bias) ops.push_back(memory_op("qkv.bias", 2 * e * t * x.qkv_out));
  if (x.rope) {
    ops.push_back(
        memory_op("rope.fwd", 2 * e * t * (x.heads_per_rank + x.kv_heads_per_rank) * x.head_dim));
  }
  attention_core_forward(x, ops);
  ops.push_back(gemm_op("proj.fwd", x.tokens, x.h, x.heads_per_rank * x.head_dim, 1, x.gemm_bytes));
  if (tp) {
    ops.push_back(x.sequence_parallel
                      ? collective_op("tp.reducescatter", CollectiveKind::kReduceScatter,
                                      GroupKind::kTensor, full_activation)
                      : collective_op("tp.allreduce", CollectiveKind::kAllReduce,
                                      GroupKind::kTensor, full_activation));
  }
  // bias + dropout + residual add: read x, residual (and bias), mask; write out: (3e+1)·T·h.
  ops.push_back(memory_op("attn.residual", (x.dropout ? 3 * e + 1 : 3 * e) * te * h));
  ops.push_back(memory_op("ln2.fwd", 2 * e * te * h));
  if (tp && x.sequence_parallel) {
    ops.push_back(collective_op("tp.allgather", CollectiveKind::kAllGather, GroupKind::kTensor,
                                full_activation));
  }
  ops.push_back(gemm_op("fc1.fwd", x.tokens, x.fc1_out, x.h, 1, x.gemm_bytes));
  // GELU(+bias): read and write T·F/t; SwiGLU: read 2·T·F/t, write T·F/t.
  const double f = static_cast<double>(x.ffn_per_rank);
  ops.push_back(memory_op("mlp.act.fwd", (x.swiglu ? 3 : 2) * e * t * f));
  ops.push_back(gemm_op("fc2.fwd", x.tokens, x.h, x.ffn_per_rank, 1, x.gemm_bytes));
  if (tp) {
    ops.push_back(x.sequence_parallel
                      ? collective_op("tp.reducescatter", CollectiveKind::kReduceScatter,
                                      GroupKind::kTensor, full_activation)
                      : collective_op("tp.allreduce", CollectiveKind::kAllReduce,
                                      GroupKind::kTensor, full_activation));
  }
  ops.push_back(memory_op("mlp.residual", (x.dropout ? 3 * e + 1 : 3 * e) * te * h));
  return ops;
}

std::vector<Op> attention_recompute_ops(const LayerShape& x) {
  std::vector<Op> ops;
  attention_core_forward(x, ops);
  for (Op& op : ops) op.name += ".recompute";
  return ops;
}

std::vector<Op> layer_backward_ops(const LayerShape& x) {
  std::vector<Op> ops;
  const double e = x.act_bytes;
  const double t = static_cast<double>(x.tokens);
  const double te = static_cast<double>(x.elementwise_tokens);
  const double h = static_cast<double>(x.h);
  const double f = static_cast<double>(x.ffn_per_rank);
  const Bytes full_activation = to_bytes(e * t * h);
  const bool tp = x.tp > 1;
  const bool sp = tp && x.sequence_parallel;
  const int64_t attn_width = x.heads_per_rank * x.head_dim;

  // --- MLP ---
  // Dropout backward with the saved mask and the bias gradient (a reduction over tokens).
  ops.push_back(memory_op("mlp.residual.bwd", (x.dropout ? 3 * e + 1 : 2 * e) * te * h));
  if (sp) {
    ops.push_back(collective_op("tp.allgather.grad", CollectiveKind::kAllGather, GroupKind::kTensor,
                                full_activation));
  }
  ops.push_back(gemm_op("fc2.dgrad", x.tokens, x.ffn_per_rank, x.h, 1, x.gemm_bytes));
  ops.push_back(gemm_op("fc2.wgrad", x.h, x.ffn_per_rank, x.tokens, 1, x.gemm_bytes, true));
  // GELU backward reads grad and input, writes grad (3e·T·F/t), plus the fc1 bias gradient
  // (reads T·F/t); SwiGLU backward reads grad and both halves, writes two halves (5e·T·F/t).
  ops.push_back(memory_op("mlp.act.bwd", (x.swiglu ? 5 : (x.bias ? 4 : 3)) * e * t * f));
  if (sp) {
    // Megatron re-gathers the sequence-parallel input for the weight gradient, overlapped with
    // the data-gradient GEMM, then reduce-scatters the input gradient overlapped with wgrad.
    push(ops,
         collective_op("tp.allgather.input", CollectiveKind::kAllGather, GroupKind::kTensor,
                       full_activation),
         /*async=*/true);
    ops.push_back(gemm_op("fc1.dgrad", x.tokens, x.h, x.fc1_out, 1, x.gemm_bytes));
    Op wgrad = gemm_op("fc1.wgrad", x.h, x.fc1_out, x.tokens, 1, x.gemm_bytes, true);
    wgrad.wait_comm = true;
    push(ops,
         collective_op("tp.reducescatter.grad", CollectiveKind::kReduceScatter, GroupKind::kTensor,
                       full_activation),
         /*async=*/true);
    ops.push_back(wgrad);
  } else {
    ops.push_back(gemm_op("fc1.dgrad", x.tokens, x.h, x.fc1_out, 1, x.gemm_bytes));
    if (tp) {
      push(ops,
           collective_op("tp.allreduce.grad", CollectiveKind::kAllReduce, GroupKind::kTensor,
                         full_activation),
           /*async=*/true);
    }
    ops.push_back(gemm_op("fc1.wgrad", x.h, x.fc1_out, x.tokens, 1, x.gemm_bytes, true));
  }
  // Norm backward reads grad, input and the residual gradient, writes the gradient: 4e·T·h.
  push(ops, memory_op("ln2.bwd", 4 * e * te * h), false, /*wait_comm=*/tp);

  // --- attention ---
  ops.push_back(memory_op("attn.residual.bwd", (x.dropout ? 3 * e + 1 : 2 * e) * te * h));
  if (sp) {
    ops.push_back(collective_op("tp.allgather.grad", CollectiveKind::kAllGather, GroupKind::kTensor,
                                full_activation));
  }
  ops.push_back(gemm_op("proj.dgrad", x.tokens, attn_width, x.h, 1, x.gemm_bytes));
  ops.push_back(gemm_op("proj.wgrad", x.h, attn_width, x.tokens, 1, x.gemm_bytes, true));
  const int64_t bh = x.b * x.heads_per_rank;
  const double q_width = static_cast<double>(attn_width);
  const double kv_width = static_cast<double>(x.kv_heads_per_rank * x.head_dim);
  if (x.flash) {
    // FlashAttention-2 backward recomputes the scores: 2.5× the forward FLOPs (5 GEMMs vs 2),
    // reads Q, K, V, O, dO and writes dQ, dK, dV.
    Op op;
    op.name = "attn.core.bwd";
    op.type = OpType::kAttention;
    op.flops = Flops(2.5 * 2.0 * static_cast<double>(bh) * x.s * x.s * x.head_dim);
    op.bytes = to_bytes(e * t * (4 * q_width + 4 * kv_width) + 8.0 * bh * x.s);
    ops.push_back(op);
  } else {
    const double A = static_cast<double>(bh) * x.s * x.s;
    ops.push_back(memory_op("attn.context_permute.bwd", 2 * e * t * q_width));
    ops.push_back(gemm_op("attn.context.dgrad_probs", x.s, x.s, x.head_dim, bh, x.act_bytes));
    ops.push_back(gemm_op("attn.context.dgrad_v", x.s, x.head_dim, x.s, bh, x.act_bytes));
    if (x.dropout) ops.push_back(memory_op("attn.dropout.bwd", (2 * e + 1) * A));
    ops.push_back(memory_op("attn.softmax.bwd", 3 * e * A));
    ops.push_back(gemm_op("attn.scores.dgrad_q", x.s, x.head_dim, x.s, bh, x.act_bytes));
    ops.push_back(gemm_op("attn.scores.dgrad_k", x.s, x.head_dim, x.s, bh, x.act_bytes));
    ops.push_back(memory_op("attn.qkv_permute.bwd", 2 * e * t * (q_width + 2 * kv_width)));
  }
  if (x.rope) {
    ops.push_back(
        memory_op("rope.bwd", 2 * e * t * (x.heads_per_rank + x.kv_heads_per_rank) * x.head_dim));
  }
  if (x.bias) ops.push_back(memory_op("qkv.bias.bwd", e * t * x.qkv_out));
  if (sp) {
    push(ops,
         collective_op("tp.allgather.input", CollectiveKind::kAllGather, GroupKind::kTensor,
                       full_activation),
         /*async=*/true);
    ops.push_back(gemm_op("qkv.dgrad", x.tokens, x.h, x.qkv_out, 1, x.gemm_bytes));
    Op wgrad = gemm_op("qkv.wgrad", x.h, x.qkv_out, x.tokens, 1, x.gemm_bytes, true);
    wgrad.wait_comm = true;
    push(ops,
         collective_op("tp.reducescatter.grad", CollectiveKind::kReduceScatter, GroupKind::kTensor,
                       full_activation),
         /*async=*/true);
    ops.push_back(wgrad);
  } else {
    ops.push_back(gemm_op("qkv.dgrad", x.tokens, x.h, x.qkv_out, 1, x.gemm_bytes));
    if (tp) {
      push(ops,
           collective_op("tp.allreduce.grad", CollectiveKind::kAllReduce, GroupKind::kTensor,
                         full_activation),
           /*async=*/true);
    }
    ops.push_back(gemm_op("qkv.wgrad", x.h, x.qkv_out, x.tokens, 1, x.gemm_bytes, true));
  }
  push(ops, memory_op("ln1.bwd", 4 * e * te * h), false, /*wait_comm=*/tp);
  // The residual stream's gradient is summed with the branch gradient: read 2, write 1.
  ops.push_back(memory_op("residual.grad_add", 3 * e * te * h));
  return ops;
}

std::vector<Op> embedding_forward_ops(const LayerShape& x) {
  std::vector<Op> ops;
  const double e = x.act_bytes;
  const double t = static_cast<double>(x.tokens);
  const double h = static_cast<double>(x.h);
  ops.push_back(memory_op("embedding.lookup", 2 * e * t * h));
  if (x.tp > 1) {
    // Vocab-parallel embedding: each rank holds V/t rows, partial sums are all-reduced (or
    // reduce-scattered into the sequence-parallel region).
    ops.push_back(x.sequence_parallel
                      ? collective_op("tp.reducescatter", CollectiveKind::kReduceScatter,
                                      GroupKind::kTensor, Bytes(static_cast<int64_t>(e * t * h)))
                      : collective_op("tp.allreduce", CollectiveKind::kAllReduce,
                                      GroupKind::kTensor, Bytes(static_cast<int64_t>(e * t * h))));
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
  const double te = static_cast<double>(x.elementwise_tokens);
  const double h = static_cast<double>(x.h);
  const double logits = t * static_cast<double>(x.vocab_per_rank);
  ops.push_back(memory_op("final_norm.fwd", 2 * e * te * h));
  if (x.tp > 1 && x.sequence_parallel) {
    ops.push_back(collective_op("tp.allgather", CollectiveKind::kAllGather, GroupKind::kTensor,
                                Bytes(static_cast<int64_t>(e * t * h))));
  }
  ops.push_back(gemm_op("logits.fwd", x.tokens, x.vocab_per_rank, x.h, 1, x.gemm_bytes));
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
  const double te = static_cast<double>(x.elementwise_tokens);
  const double h = static_cast<double>(x.h);
  const double logits = t * static_cast<double>(x.vocab_per_rank);
  // Softmax gradient in fp32 (read p, write dlogits) and the cast back to half: ≈ 26 B/element.
  ops.push_back(memory_op("loss.bwd", 12 * logits));
  ops.push_back(memory_op("loss.bwd_cast", (4 + e) * logits + 4 * logits));
  ops.push_back(gemm_op("logits.dgrad", x.tokens, x.h, x.vocab_per_rank, 1, x.gemm_bytes));
  if (x.tp > 1) {
    push(ops,
         x.sequence_parallel
             ? collective_op("tp.reducescatter.grad", CollectiveKind::kReduceScatter,
                             GroupKind::kTensor, Bytes(static_cast<int64_t>(e * t * h)))
             : collective_op("tp.allreduce.grad", CollectiveKind::kAllReduce, GroupKind::kTensor,
                             Bytes(static_cast<int64_t>(e * t * h))),
         /*async=*/true);
  }
  ops.push_back(gemm_op("logits.wgrad", x.vocab_per_rank, x.h, x.tokens, 1, x.gemm_bytes, true));
  push(ops, memory_op("final_norm.bwd", 4 * e * te * h), false, /*wait_comm=*/x.tp > 1);
  return ops;
}

}  // namespace preflight
