#include "workload/layer_ops.h"

#include <algorithm>
#include <cmath>

#include "workload/csa_ops.h"

namespace preflight {
namespace {

Bytes to_bytes(double b) { return round_bytes(b); }

// Appends `op` with stream flags.
void push(std::vector<Op>& ops, Op op, bool async = false, bool wait_comm = false) {
  op.async = async;
  op.wait_comm = wait_comm;
  ops.push_back(std::move(op));
}

// `a` followed by `b`.
std::vector<Op> concat(std::vector<Op> a, const std::vector<Op>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// A whole activation, T·h elements: what the TP collectives around a layer's halves move.
Bytes full_activation(const LayerShape& x) {
  return to_bytes(x.act_bytes * static_cast<double>(x.tokens) * static_cast<double>(x.h));
}

// Widths (elements per token on this TP rank) of the attention tensors.
struct AttentionWidths {
  double q, k, v, o;
};

AttentionWidths widths(const LayerShape& x) {
  return AttentionWidths{static_cast<double>(x.heads_per_rank * x.qk_dim),
                         static_cast<double>(x.kv_heads_per_rank * x.qk_dim),
                         static_cast<double>(x.kv_heads_per_rank * x.v_dim),
                         static_cast<double>(x.heads_per_rank * x.v_dim)};
}

// Heads per rank in the attention core: Ulysses scatters them over the CP group.
int64_t core_heads(const LayerShape& x) {
  return x.cp_a2a ? x.heads_per_rank / x.cp : x.heads_per_rank;
}

// The fused kernel's shape for a measured kernel table: causal attention over the whole
// sequence (Ulysses: all of it, on heads/cp), query and value heads of one width.
Op::AttentionShape attention_shape(const LayerShape& x) {
  Op::AttentionShape a;
  const bool whole = x.q_len == x.s && x.keys2 == static_cast<double>(x.s);
  if (!whole || x.qk_dim != x.v_dim) return a;
  a.batch = x.b;
  a.heads = core_heads(x);
  a.kv_heads = std::max<int64_t>(1, x.cp_a2a ? x.kv_heads_per_rank / x.cp : x.kv_heads_per_rank);
  a.head_dim = x.qk_dim;
  a.seq_q = x.s;
  a.seq_kv = x.s;
  a.causal = true;
  return a;
}

// FlashAttention work on this rank: 2·b·heads·q_len·tile_keys2·(d_qk + d_v)/2 FLOPs forward
// (QKᵀ and PV over the causal or windowed key range, in whole tiles: the diagonal's and the
// window edge's partly masked tiles are computed in full, layer_shape.h tiled_keys2), and HBM
// traffic of Q, K, V, O and the softmax statistics (4 bytes per query and head).
Op flash_forward(const LayerShape& x) {
  const AttentionWidths w = widths(x);
  const int64_t bh = x.b * core_heads(x);
  const double dim = static_cast<double>(x.qk_dim + x.v_dim) / 2;
  Op op;
  op.name = "attn.core.fwd";
  op.type = OpType::kAttention;
  op.attention = attention_shape(x);
  op.flops = Flops(2.0 * static_cast<double>(bh) * x.q_len * x.tile_keys2 * dim);
  op.exponentials = static_cast<double>(bh) * x.q_len * x.tile_keys2 / 2;  // one per element
  op.attention_tiles_per_unit = x.tile_keys2 / (2.0 * static_cast<double>(kAttentionTile));
  op.bytes = round_bytes(x.act_bytes * static_cast<double>(x.tokens) * (w.q + w.o + w.k + w.v) +
                         4.0 * bh * x.q_len);
  return op;
}

// FlashAttention-2 backward recomputes the scores: 2.5× the forward FLOPs (5 GEMMs vs 2), reads
// Q, K, V, O, dO and writes dQ, dK, dV.
Op flash_backward(const LayerShape& x) {
  const AttentionWidths w = widths(x);
  const int64_t bh = x.b * core_heads(x);
  const double dim = static_cast<double>(x.qk_dim + x.v_dim) / 2;
  Op op;
  op.name = "attn.core.bwd";
  op.type = OpType::kAttention;
  op.attention = attention_shape(x);
  op.backward = true;
  op.flops = Flops(2.5 * 2.0 * static_cast<double>(bh) * x.q_len * x.tile_keys2 * dim);
  op.exponentials = static_cast<double>(bh) * x.q_len * x.tile_keys2 / 2;  // P recomputed
  op.attention_tiles_per_unit = x.tile_keys2 / (2.0 * static_cast<double>(kAttentionTile));
  op.bytes = round_bytes(x.act_bytes * static_cast<double>(x.tokens) *
                             (2 * w.q + 2 * w.o + 2 * w.k + 2 * w.v) +
                         8.0 * bh * x.q_len);
  return op;
}

// Ring attention (Liu et al. 2023; Megatron/Transformer Engine context parallelism with causal
// load balancing): the cp ranks pass K/V blocks around the ring; step i computes against the
// block received in step i−1 while the next block travels. Ops: send block 1 (async, after the
// K/V are computed), core step 0, then for each next step: wait for the block, start
// forwarding it (chained on the communication stream, independent of compute), compute. So a
// step costs max(compute, transfer) and the transfer hides exactly when compute ≥ transfer.
// Backward passes the K/V blocks and their gradient accumulators: twice the bytes.
void ring_attention(const LayerShape& x, Op core, bool backward, std::vector<Op>& ops) {
  const AttentionWidths w = widths(x);
  const double block = x.act_bytes * static_cast<double>(x.tokens) * (w.k + w.v);
  const Bytes transfer = round_bytes(backward ? 2 * block : block);
  const double steps = static_cast<double>(x.cp);
  core.attention = Op::AttentionShape();  // a step is a block pair, not the whole sequence
  core.flops = Flops(core.flops.count() / steps);
  core.exponentials /= steps;
  core.attention_tiles_per_unit /= steps;  // every step's units see one block of the keys
  core.bytes = round_bytes(static_cast<double>(core.bytes.count()) / steps + block);
  const std::string base = core.name;
  for (int64_t i = 0; i < x.cp; ++i) {
    if (i + 1 < x.cp) {
      Op sr = collective_op(backward ? "cp.ring.kv_dkv" : "cp.ring.kv", CollectiveKind::kSendRecv,
                            GroupKind::kContext, transfer);
      sr.async = true;
      sr.comm_chain = i > 0;
      if (i == 0) ops.push_back(sr);  // the first block leaves before step 0
      Op step = core;
      step.name = base + ".step" + std::to_string(i);
      step.wait_comm = i > 0;
      ops.push_back(step);
      if (i > 0) ops.push_back(sr);
    } else {
      Op step = core;
      step.name = base + ".step" + std::to_string(i);
      step.wait_comm = i > 0;
      ops.push_back(step);
    }
  }
}

// RoPE with scaled cos and sin where the stack's fused kernel takes no scale
// (LayerShape::rope_unfused): Megatron-Core's _apply_rotary_pos_emb_bshd on Q, then on K,
// each a tensor of N = T·heads·d elements:
//   cos_ = (cos(freqs) · mscale).to(dtype), sin_ likewise   six small kernels over s·d fp32
//   t · cos_                                                 read N, write N
//   _rotate_half: -x2, then cat((-x2, x1))                  N/2 + N/2, then N + N
//   · sin_, then the sum                                     N + N, then 2N + N
//   cat((t, t_pass)) with t_pass empty (head_dim rotated)    N + N
// 12·e·N bytes in six passes where the fused kernel reads and writes N once (2·e·N). Backward,
// autograd's kernels: grad · sin_ and grad · cos_ (2N each), the negation (N), the chunk's
// backward (a cat, 2N), the sum of t's two gradients (3N) and the slice's backward (zeros, then
// a copy: 3N), 13·e·N bytes in seven kernels. Source: megatron/core/models/common/embeddings/
// rope_utils.py (apply_rotary_pos_emb falls back to it when mscale != 1, Megatron-LM PR #2038).
void unfused_rope(const LayerShape& x, bool backward, std::vector<Op>& ops) {
  const double e = x.act_bytes;
  const double t = static_cast<double>(x.tokens);
  const double d = static_cast<double>(x.head_dim);
  for (const int64_t heads : {x.heads_per_rank, x.kv_heads_per_rank}) {
    const double n = t * static_cast<double>(heads) * d;
    if (!backward) {
      // cos and sin of the [s, 1, 1, d] fp32 angles, times mscale, cast: 8 + 8 + 6 B each.
      Op angles = memory_op("rope.cos_sin", 2 * 22 * static_cast<double>(x.rope_positions) * d);
      angles.launches = 6;
      ops.push_back(angles);
      ops.push_back(memory_op("rope.mul_cos", 2 * e * n));
      ops.push_back(memory_op("rope.neg", e * n));
      ops.push_back(memory_op("rope.cat_rotate", 2 * e * n));
      ops.push_back(memory_op("rope.mul_sin", 2 * e * n));
      ops.push_back(memory_op("rope.add", 3 * e * n));
      ops.push_back(memory_op("rope.cat", 2 * e * n));
    } else {
      ops.push_back(memory_op("rope.mul_sin.bwd", 2 * e * n));
      ops.push_back(memory_op("rope.neg.bwd", e * n));
      ops.push_back(memory_op("rope.chunk.bwd", 2 * e * n));
      ops.push_back(memory_op("rope.mul_cos.bwd", 2 * e * n));
      ops.push_back(memory_op("rope.add.bwd", 3 * e * n));
      Op slice = memory_op("rope.slice.bwd", 3 * e * n);
      slice.launches = 2;
      ops.push_back(slice);
    }
  }
}

// A memory-bound pass of `kernels` kernels around an unpadded fused-attention kernel
// (StackConfig::flash_attention_unpad).
Op unpad_op(const char* name, double bytes, int kernels) {
  Op op = memory_op(name, bytes);
  op.launches = kernels;
  return op;
}

// Attention-core forward kernels (fused or Megatron's unfused bmm/softmax/dropout chain).
void attention_core_forward(const LayerShape& x, std::vector<Op>& ops) {
  const double e = x.act_bytes;
  const double t = static_cast<double>(x.tokens);
  const int64_t bh = x.b * x.heads_per_rank;
  const double q_width = static_cast<double>(x.heads_per_rank * x.head_dim);
  if (x.flash) {
    const AttentionWidths w = widths(x);
    // Unpadding (StackConfig::flash_attention_unpad): gather Q, K, V rows (read and write each),
    // then zero a padded output and scatter the kernel's rows into it.
    if (x.flash_unpad) ops.push_back(unpad_op("attn.unpad", 2 * e * t * (w.q + w.k + w.v), 3));
    if (x.cp > 1 && !x.cp_a2a) {
      ring_attention(x, flash_forward(x), false, ops);
    } else {
      ops.push_back(flash_forward(x));
    }
    if (x.flash_unpad) ops.push_back(unpad_op("attn.pad", 3 * e * t * w.o, 2));
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

Bytes round_bytes(double b) { return Bytes(static_cast<int64_t>(std::llround(b))); }

// The TP reduction after a row-parallel GEMM (forward: its partial outputs) or a column-parallel
// one (backward, `grad`: the partial gradients of its input): a reduce-scatter into the
// sequence-parallel region, else an all-reduce. REQUIRES: x.tp > 1.
Op tp_reduction(const LayerShape& x, bool grad) {
  if (x.sequence_parallel) {
    return collective_op(grad ? "tp.reducescatter.grad" : "tp.reducescatter",
                         CollectiveKind::kReduceScatter, GroupKind::kTensor, full_activation(x));
  }
  return collective_op(grad ? "tp.allreduce.grad" : "tp.allreduce", CollectiveKind::kAllReduce,
                       GroupKind::kTensor, full_activation(x));
}

namespace {

// With sequence parallelism (and TP), the all-gather of a sequence-sharded hidden state or
// gradient entering a TP region.
void sp_gather(const LayerShape& x, const char* name, std::vector<Op>& ops) {
  if (x.tp > 1 && x.sequence_parallel) {
    ops.push_back(
        collective_op(name, CollectiveKind::kAllGather, GroupKind::kTensor, full_activation(x)));
  }
}

}  // namespace

// A norm in front of a TP region (ln1, ln2, the final norm) reads and writes the hidden state,
// 2·e·T·h (T/t tokens with sequence parallelism); with SP its output is then all-gathered.
void norm_forward(const LayerShape& x, const char* name, std::vector<Op>& ops) {
  const double e = x.act_bytes;
  const double te = static_cast<double>(x.elementwise_tokens);
  ops.push_back(memory_op(name, 2 * e * te * static_cast<double>(x.h)));
  sp_gather(x, "tp.allgather", ops);
}

// The backward of a half's residual branch: dropout with the saved mask and the bias gradient (a
// reduction over tokens); with sequence parallelism the gradient is then all-gathered into the
// TP region.
void residual_backward(const LayerShape& x, const char* name, std::vector<Op>& ops) {
  const double e = x.act_bytes;
  const double te = static_cast<double>(x.elementwise_tokens);
  ops.push_back(memory_op(name, (x.dropout ? 3 * e + 1 : 2 * e) * te * static_cast<double>(x.h)));
  sp_gather(x, "tp.allgather.grad", ops);
}

// Norm backward reads grad, input and the residual gradient, writes the gradient: 4e·T·h. With
// TP it first waits for the asynchronous reduction of the input gradient.
void norm_backward(const LayerShape& x, const char* name, std::vector<Op>& ops) {
  const double e = x.act_bytes;
  const double te = static_cast<double>(x.elementwise_tokens);
  push(ops, memory_op(name, 4 * e * te * static_cast<double>(x.h)), false, /*wait_comm=*/x.tp > 1);
}

// The input-gradient (`dgrad`) and weight-gradient (`wgrad`) GEMMs of a column-parallel layer
// (QKV, FC1) with its TP communication. With sequence parallelism Megatron re-gathers the input
// for the weight gradient, overlapped with the data-gradient GEMM, then reduce-scatters the input
// gradient overlapped with wgrad; without, the input gradient's all-reduce overlaps wgrad.
void column_parallel_backward(const LayerShape& x, Op dgrad, Op wgrad, std::vector<Op>& ops) {
  const bool tp = x.tp > 1;
  if (tp && x.sequence_parallel) {
    push(ops,
         collective_op("tp.allgather.input", CollectiveKind::kAllGather, GroupKind::kTensor,
                       full_activation(x)),
         /*async=*/true);
    ops.push_back(std::move(dgrad));
    wgrad.wait_comm = true;
    push(ops, tp_reduction(x, /*grad=*/true), /*async=*/true);
    ops.push_back(std::move(wgrad));
  } else {
    ops.push_back(std::move(dgrad));
    if (tp) push(ops, tp_reduction(x, /*grad=*/true), /*async=*/true);
    ops.push_back(std::move(wgrad));
  }
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

void clamped_glu_ops(const std::string& prefix, double rows, double f, double e, bool backward,
                     std::vector<Op>& ops) {
  const char* dir = backward ? ".bwd" : ".fwd";
  const double half = (backward ? 3 : 2) * e * rows * f;
  for (const char* part : {".clamp_gate", ".clamp_linear"}) {
    ops.push_back(memory_op((prefix + part + dir).c_str(), half));
  }
  ops.push_back(memory_op((prefix + ".cat" + dir).c_str(), 4 * e * rows * f));
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

std::vector<Op> attention_forward_ops(const LayerShape& x) {
  std::vector<Op> ops;
  const double e = x.act_bytes;
  const double t = static_cast<double>(x.tokens);
  const double te = static_cast<double>(x.elementwise_tokens);
  const double h = static_cast<double>(x.h);
  norm_forward(x, "ln1.fwd", ops);
  if (x.csa) {
    csa_projections_forward(x, ops);
    attention_core_forward(x, ops);
    // The grouped output projection: o_groups GEMMs of (a/o_groups)·d_v → r_o, then r_o·o_groups
    // → h (TP's row-parallel reduction after it).
    ops.push_back(gemm_op("csa.o_down.fwd", x.tokens, x.o_lora,
                          x.heads_per_rank / std::max<int64_t>(1, x.o_groups) * x.v_dim, x.o_groups,
                          x.gemm_bytes));
    ops.push_back(gemm_op("proj.fwd", x.tokens, x.h, x.o_groups * x.o_lora, 1, x.gemm_bytes));
    if (x.tp > 1) ops.push_back(tp_reduction(x, /*grad=*/false));
    ops.push_back(memory_op("attn.residual", (x.dropout ? 3 * e + 1 : 3 * e) * te * h));
    return ops;
  }
  if (x.kv_lora > 0) {
    // MLA (DeepSeek-V2 §2.1): queries from a latent of q_lora (or directly), K/V up-projected
    // from a shared latent of kv_lora plus one decoupled RoPE key. The down-projections are
    // duplicated on every TP rank (Megatron-Core), the up-projections split by heads.
    const int64_t q_out = x.heads_per_rank * x.qk_dim;
    if (x.q_lora > 0) {
      ops.push_back(gemm_op("mla.q_down.fwd", x.tokens, x.q_lora, x.h, 1, x.gemm_bytes));
      ops.push_back(memory_op("mla.q_norm.fwd", 2 * e * t * x.q_lora));
      ops.push_back(gemm_op("mla.q_up.fwd", x.tokens, q_out, x.q_lora, 1, x.gemm_bytes));
    } else {
      ops.push_back(gemm_op("mla.q.fwd", x.tokens, q_out, x.h, 1, x.gemm_bytes));
    }
    ops.push_back(
        gemm_op("mla.kv_down.fwd", x.tokens, x.kv_lora + x.rope_dim, x.h, 1, x.gemm_bytes));
    ops.push_back(memory_op("mla.kv_norm.fwd", 2 * e * t * x.kv_lora));
    ops.push_back(gemm_op("mla.kv_up.fwd", x.tokens,
                          x.heads_per_rank * (x.qk_dim - x.rope_dim + x.v_dim), x.kv_lora, 1,
                          x.gemm_bytes));
    ops.push_back(memory_op("rope.fwd", 2 * e * t * (x.heads_per_rank + 1) * x.rope_dim));
  } else {
    ops.push_back(gemm_op("qkv.fwd", x.tokens, x.qkv_out, x.h, 1, x.gemm_bytes));
    if (x.bias) ops.push_back(memory_op("qkv.bias", 2 * e * t * x.qkv_out));
    // QK-norm (Megatron-Core's q_layernorm and k_layernorm, two norm modules): each reads its
    // heads and writes them normalised.
    const double qk = static_cast<double>((x.heads_per_rank + x.kv_heads_per_rank) * x.head_dim);
    if (x.qk_norm) {
      ops.push_back(memory_op("attn.qk_norm.fwd", 2 * e * t * qk));
      ops.back().launches = 2;
    }
    if (x.rope_unfused) {
      unfused_rope(x, /*backward=*/false, ops);
    } else if (x.rope) {
      ops.push_back(
          memory_op("rope.fwd", 2 * e * t * (x.heads_per_rank + x.kv_heads_per_rank) * x.head_dim));
    }
  }
  const AttentionWidths w = widths(x);
  if (x.cp_a2a) {
    // Ulysses (Jacobs et al. 2023): scatter heads, gather the sequence; then back.
    ops.push_back(collective_op("cp.a2a.qkv", CollectiveKind::kAllToAll, GroupKind::kContext,
                                to_bytes(e * t * (w.q + w.k + w.v))));
  }
  attention_core_forward(x, ops);
  if (x.cp_a2a) {
    ops.push_back(collective_op("cp.a2a.out", CollectiveKind::kAllToAll, GroupKind::kContext,
                                to_bytes(e * t * w.o)));
  }
  ops.push_back(gemm_op("proj.fwd", x.tokens, x.h, x.heads_per_rank * x.v_dim, 1, x.gemm_bytes));
  if (x.tp > 1) ops.push_back(tp_reduction(x, /*grad=*/false));
  // bias + dropout + residual add: read x, residual (and bias), mask; write out: (3e+1)·T·h.
  ops.push_back(memory_op("attn.residual", (x.dropout ? 3 * e + 1 : 3 * e) * te * h));
  return ops;
}

std::vector<Op> mlp_forward_ops(const LayerShape& x) {
  std::vector<Op> ops;
  const double e = x.act_bytes;
  const double t = static_cast<double>(x.tokens);
  const double te = static_cast<double>(x.elementwise_tokens);
  const double h = static_cast<double>(x.h);
  norm_forward(x, "ln2.fwd", ops);
  ops.push_back(gemm_op("fc1.fwd", x.tokens, x.fc1_out, x.h, 1, x.gemm_bytes));
  // GELU(+bias): read and write T·F/t; SwiGLU: read 2·T·F/t, write T·F/t.
  const double f = static_cast<double>(x.ffn_per_rank);
  if (x.clamped_glu) clamped_glu_ops("mlp.act", t, f, e, /*backward=*/false, ops);
  ops.push_back(memory_op("mlp.act.fwd", (x.swiglu ? 3 : 2) * e * t * f));
  ops.push_back(gemm_op("fc2.fwd", x.tokens, x.h, x.ffn_per_rank, 1, x.gemm_bytes));
  if (x.tp > 1) ops.push_back(tp_reduction(x, /*grad=*/false));
  ops.push_back(memory_op("mlp.residual", (x.dropout ? 3 * e + 1 : 3 * e) * te * h));
  return ops;
}

std::vector<Op> layer_forward_ops(const LayerShape& x) {
  return concat(attention_forward_ops(x), mlp_forward_ops(x));
}

std::vector<Op> attention_recompute_ops(const LayerShape& x) {
  std::vector<Op> ops;
  attention_core_forward(x, ops);
  for (Op& op : ops) op.name += ".recompute";
  return ops;
}

std::vector<Op> mlp_backward_ops(const LayerShape& x) {
  std::vector<Op> ops;
  const double e = x.act_bytes;
  const double t = static_cast<double>(x.tokens);
  const double f = static_cast<double>(x.ffn_per_rank);
  residual_backward(x, "mlp.residual.bwd", ops);
  ops.push_back(gemm_op("fc2.dgrad", x.tokens, x.ffn_per_rank, x.h, 1, x.gemm_bytes));
  ops.push_back(gemm_op("fc2.wgrad", x.h, x.ffn_per_rank, x.tokens, 1, x.gemm_bytes, true));
  // GELU backward reads grad and input, writes grad (3e·T·F/t), plus the fc1 bias gradient
  // (reads T·F/t); SwiGLU backward reads grad and both halves, writes two halves (5e·T·F/t).
  ops.push_back(memory_op("mlp.act.bwd", (x.swiglu ? 5 : (x.bias ? 4 : 3)) * e * t * f));
  if (x.clamped_glu) clamped_glu_ops("mlp.act", t, f, e, /*backward=*/true, ops);
  column_parallel_backward(x, gemm_op("fc1.dgrad", x.tokens, x.h, x.fc1_out, 1, x.gemm_bytes),
                           gemm_op("fc1.wgrad", x.h, x.fc1_out, x.tokens, 1, x.gemm_bytes, true),
                           ops);
  norm_backward(x, "ln2.bwd", ops);
  return ops;
}

namespace {

// MLA projections' backward: RoPE, the K/V and Q up- and down-projections (data gradients, then
// the TP reduction of the input gradient overlapped with the weight gradients), the first norm
// and the residual gradient.
void mla_projection_backward(const LayerShape& x, std::vector<Op>& ops) {
  const double e = x.act_bytes;
  const double t = static_cast<double>(x.tokens);
  const double te = static_cast<double>(x.elementwise_tokens);
  const double h = static_cast<double>(x.h);
  const int64_t q_out = x.heads_per_rank * x.qk_dim;
  const int64_t kv_up = x.heads_per_rank * (x.qk_dim - x.rope_dim + x.v_dim);
  const int64_t kv_down = x.kv_lora + x.rope_dim;
  ops.push_back(memory_op("rope.bwd", 2 * e * t * (x.heads_per_rank + 1) * x.rope_dim));
  ops.push_back(gemm_op("mla.kv_up.dgrad", x.tokens, x.kv_lora, kv_up, 1, x.gemm_bytes));
  ops.push_back(memory_op("mla.kv_norm.bwd", 4 * e * t * x.kv_lora));
  ops.push_back(gemm_op("mla.kv_down.dgrad", x.tokens, x.h, kv_down, 1, x.gemm_bytes));
  if (x.q_lora > 0) {
    ops.push_back(gemm_op("mla.q_up.dgrad", x.tokens, x.q_lora, q_out, 1, x.gemm_bytes));
    ops.push_back(memory_op("mla.q_norm.bwd", 4 * e * t * x.q_lora));
    ops.push_back(gemm_op("mla.q_down.dgrad", x.tokens, x.h, x.q_lora, 1, x.gemm_bytes));
  } else {
    ops.push_back(gemm_op("mla.q.dgrad", x.tokens, x.h, q_out, 1, x.gemm_bytes));
  }
  if (x.tp > 1) push(ops, tp_reduction(x, /*grad=*/true), /*async=*/true);
  ops.push_back(gemm_op("mla.kv_up.wgrad", x.kv_lora, kv_up, x.tokens, 1, x.gemm_bytes, true));
  ops.push_back(gemm_op("mla.kv_down.wgrad", x.h, kv_down, x.tokens, 1, x.gemm_bytes, true));
  if (x.q_lora > 0) {
    ops.push_back(gemm_op("mla.q_up.wgrad", x.q_lora, q_out, x.tokens, 1, x.gemm_bytes, true));
    ops.push_back(gemm_op("mla.q_down.wgrad", x.h, x.q_lora, x.tokens, 1, x.gemm_bytes, true));
  } else {
    ops.push_back(gemm_op("mla.q.wgrad", x.h, q_out, x.tokens, 1, x.gemm_bytes, true));
  }
  norm_backward(x, "ln1.bwd", ops);
  ops.push_back(memory_op("residual.grad_add", 3 * e * te * h));
}

}  // namespace

std::vector<Op> attention_backward_ops(const LayerShape& x) {
  std::vector<Op> ops;
  const double e = x.act_bytes;
  const double t = static_cast<double>(x.tokens);
  const double te = static_cast<double>(x.elementwise_tokens);
  const double h = static_cast<double>(x.h);
  const int64_t attn_width = x.heads_per_rank * x.v_dim;
  residual_backward(x, "attn.residual.bwd", ops);
  if (x.csa) {
    const int64_t groups = std::max<int64_t>(1, x.o_groups);
    const int64_t per_group = x.heads_per_rank / groups * x.v_dim;
    const int64_t o_width = x.o_groups * x.o_lora;
    ops.push_back(gemm_op("proj.dgrad", x.tokens, o_width, x.h, 1, x.gemm_bytes));
    ops.push_back(gemm_op("proj.wgrad", x.h, o_width, x.tokens, 1, x.gemm_bytes, true));
    ops.push_back(
        gemm_op("csa.o_down.dgrad", x.tokens, per_group, x.o_lora, x.o_groups, x.gemm_bytes));
    ops.push_back(
        gemm_op("csa.o_down.wgrad", per_group, x.o_lora, x.tokens, x.o_groups, x.gemm_bytes, true));
    ops.push_back(flash_backward(x));
    csa_projections_backward(x, ops);
    return ops;
  }
  ops.push_back(gemm_op("proj.dgrad", x.tokens, attn_width, x.h, 1, x.gemm_bytes));
  ops.push_back(gemm_op("proj.wgrad", x.h, attn_width, x.tokens, 1, x.gemm_bytes, true));
  const int64_t bh = x.b * x.heads_per_rank;
  const double q_width = static_cast<double>(x.heads_per_rank * x.head_dim);
  const double kv_width = static_cast<double>(x.kv_heads_per_rank * x.head_dim);
  const AttentionWidths w = widths(x);
  if (x.cp_a2a) {
    ops.push_back(collective_op("cp.a2a.dout", CollectiveKind::kAllToAll, GroupKind::kContext,
                                to_bytes(e * t * w.o)));
  }
  if (x.flash) {
    // Unpadding's backward: gather dO's rows; zero dQ, dK, dV and scatter the kernel's into them.
    if (x.flash_unpad) ops.push_back(unpad_op("attn.pad.bwd", 2 * e * t * w.o, 1));
    if (x.cp > 1 && !x.cp_a2a) {
      ring_attention(x, flash_backward(x), true, ops);
    } else {
      ops.push_back(flash_backward(x));
    }
    if (x.flash_unpad) ops.push_back(unpad_op("attn.unpad.bwd", 3 * e * t * (w.q + w.k + w.v), 3));
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
  if (x.cp_a2a) {
    ops.push_back(collective_op("cp.a2a.dqkv", CollectiveKind::kAllToAll, GroupKind::kContext,
                                to_bytes(e * t * (w.q + w.k + w.v))));
  }
  if (x.kv_lora > 0) {
    mla_projection_backward(x, ops);
    return ops;
  }
  if (x.rope_unfused) {
    unfused_rope(x, /*backward=*/true, ops);
  } else if (x.rope) {
    ops.push_back(
        memory_op("rope.bwd", 2 * e * t * (x.heads_per_rank + x.kv_heads_per_rank) * x.head_dim));
  }
  // QK-norm's backward: reads the gradient and the saved input, writes the input gradient.
  if (x.qk_norm) {
    ops.push_back(memory_op("attn.qk_norm.bwd", 3 * e * t * (q_width + kv_width)));
    ops.back().launches = 2;
  }
  if (x.bias) ops.push_back(memory_op("qkv.bias.bwd", e * t * x.qkv_out));
  column_parallel_backward(x, gemm_op("qkv.dgrad", x.tokens, x.h, x.qkv_out, 1, x.gemm_bytes),
                           gemm_op("qkv.wgrad", x.h, x.qkv_out, x.tokens, 1, x.gemm_bytes, true),
                           ops);
  norm_backward(x, "ln1.bwd", ops);
  // The residual stream's gradient is summed with the branch gradient: read 2, write 1.
  ops.push_back(memory_op("residual.grad_add", 3 * e * te * h));
  return ops;
}

std::vector<Op> layer_backward_ops(const LayerShape& x) {
  return concat(mlp_backward_ops(x), attention_backward_ops(x));
}

}  // namespace preflight
