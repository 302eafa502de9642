// The kernels of one Megatron-style dense decoder layer, its embedding and its loss head, per
// tensor-parallel rank and per micro-batch: GEMMs with exact M, N, K of the TP shard, the
// attention core (fused FlashAttention or Megatron's bmm + softmax + dropout), the memory-bound
// kernels with their HBM traffic, and the TP collectives (all-reduce, or all-gather and
// reduce-scatter with sequence parallelism). Traffic follows docs/workload.md; notation:
// T = b·s tokens, t = tp, e = bytes per activation element, A = b·(a/t)·s² score elements.
#pragma once

#include <vector>

#include "config/scenario.h"
#include "workload/workload.h"

namespace preflight {

// Shape facts shared by the op builders, derived once from a scenario.
struct LayerShape {
  int64_t b = 0, s = 0, h = 0, tokens = 0;  // micro-batch, sequence, hidden, T = b·s
  int64_t tp = 1;
  int64_t heads_per_rank = 0;     // a / t
  int64_t kv_heads_per_rank = 0;  // max(g / t, 1): KV heads are replicated when t > g
  int64_t head_dim = 0;
  int64_t qkv_out = 0;             // QKV GEMM N per rank: (a/t + 2·kv/t)·dh
  int64_t ffn_per_rank = 0;        // F / t
  int64_t fc1_out = 0;             // F/t, ×2 for SwiGLU (gate and up)
  int64_t vocab_per_rank = 0;      // padded V / t
  int64_t elementwise_tokens = 0;  // T, or T/t with sequence parallelism
  int act_bytes = 2;               // e: fp16/bf16 activations
  int gemm_bytes = 2;              // GEMM operand width (1 for fp8)
  bool sequence_parallel = false;
  bool flash = true;
  bool dropout = true;
  bool bias = true;
  bool swiglu = false;
  bool rope = false;
  bool learned_positions = true;
  bool layernorm = true;
};

LayerShape make_layer_shape(const Scenario& s);

// Forward of one layer (also used for recompute).
std::vector<Op> layer_forward_ops(const LayerShape& x);
// Selective recompute: the attention core forward replayed before the backward.
std::vector<Op> attention_recompute_ops(const LayerShape& x);
// Backward of one layer: data and weight gradients.
std::vector<Op> layer_backward_ops(const LayerShape& x);
// Embedding lookup (first stage) forward and backward.
std::vector<Op> embedding_forward_ops(const LayerShape& x);
std::vector<Op> embedding_backward_ops(const LayerShape& x);
// Final norm, logits GEMM and vocab-parallel cross-entropy (last stage).
std::vector<Op> head_forward_ops(const LayerShape& x);
std::vector<Op> head_backward_ops(const LayerShape& x);

// A GEMM op: flops 2·m·n·k·batch, bytes (m·k + k·n + m·n)·batch·e (+ m·n·e when `accumulate`,
// as weight gradients add into the existing gradient buffer).
Op gemm_op(const char* name, int64_t m, int64_t n, int64_t k, int64_t batch, int e,
           bool accumulate = false);
// A memory-bound op moving `bytes` through HBM.
Op memory_op(const char* name, double bytes, Category category = Category::kCompute);
// A collective op on `group` of `bytes` (nccl-tests size convention).
Op collective_op(const char* name, CollectiveKind kind, GroupKind group, Bytes bytes);

}  // namespace preflight
