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
  // Attention core. Each rank computes `q_len` queries per sequence (s, or s/cp with ring
  // context parallelism) against on average `keys2`/2 keys (causal: keys2 = s; a sliding
  // window w: keys2 = 2·w·(1 − (w−1)/(2s))). Head widths: `qk_dim` for queries and keys,
  // `v_dim` for values and outputs (both head_dim unless MLA).
  int64_t q_len = 0;
  double keys2 = 0;
  int64_t qk_dim = 0, v_dim = 0;
  // Context parallelism: cp ranks, ring (K/V blocks passed around, overlapped with the
  // attention of the block at hand) or all-to-all (Ulysses: heads scattered, sequence gathered).
  int64_t cp = 1;
  bool cp_a2a = false;
  // Multi-head latent attention (DeepSeek-V2/V3); 0 = off.
  int64_t q_lora = 0, kv_lora = 0, rope_dim = 0;
  // MoE: the MLP of MoE layers (moe_ops.h).
  int64_t experts = 0, top_k = 0, ep = 1, etp = 1;
  int64_t local_experts = 0;        // E / ep
  int64_t expert_fc1_out = 0;       // expert F / etp, ×2 for SwiGLU
  int64_t expert_ffn_per_rank = 0;  // expert F / etp
  int64_t shared_ffn_per_rank = 0;  // shared_experts · shared F / tp (0: none)
  // Width of the routed experts' tokens: h, or moe.latent_size (latent MoE), in which the
  // tokens are also dispatched; `moe_latent` > 0 adds the h → latent → h projections.
  int64_t expert_h = 0;
  int64_t moe_latent = 0;
  bool allgather_dispatcher = false;
  bool flex_dispatcher = false;  // DeepEP/HybridEP: sorts fused, no host sync
  // Host cost of one expert GEMM (a per_expert grouped GEMM, not under CUDA graphs): a launch
  // per local expert, or with the stack's expert_launch_overhead one launch and that much host
  // work per local expert.
  int expert_gemm_launches = 1;
  SimTime expert_gemm_host;
  // A per_expert grouped GEMM runs one kernel per local expert (Op::gemm_streams), a fused one
  // a single kernel over all of them.
  bool expert_gemm_separate = false;
  bool dispatch_host_sync = false;  // the alltoall dispatcher's token counts to the host
  // Cross-node volume of the all-to-all dispatch and combine relative to one copy per routed
  // expert (node-limited routing, moe_ops.h), and of the FP8 dispatch relative to 16 bits.
  double dispatch_copy_scale = 1;
  double dispatch_fp8_scale = 1;
  // Mamba-2 mixer of a hybrid's M layers (mamba_ops.h), per TP rank: Megatron-Core splits the
  // heads and groups over TP (d = d_inner/t, G = groups/t, H = heads/t).
  int64_t mamba_heads = 0;        // H
  int64_t mamba_groups = 0;       // G
  int64_t mamba_head_dim = 0;     // P
  int64_t mamba_state = 0;        // N
  int64_t mamba_chunk = 0;        // Q = min(chunk, s)
  int64_t mamba_conv_kernel = 0;  // K
  int64_t mamba_inner = 0;        // d = H·P
  int64_t mamba_conv_dim = 0;     // c = d + 2·G·N: the channels of x, B, C
  int64_t mamba_in_proj = 0;      // in_proj N: 2·d + 2·G·N + H ([z | x | B | C | dt])
};

// The expected number of `groups` equal groups of `experts` that a token's `k` distinct,
// uniformly routed experts fall in: groups·(1 − C(E − E/groups, k)/C(E, k)); k with one expert
// per group, 1 with a single group.
double expected_groups_reached(int64_t experts, int64_t groups, int64_t k);

// The shape of `s`'s layers with full attention (make_layer_shape) and of layer `layer`, whose
// attention may be windowed (model.sliding_window / sliding_window_pattern).
LayerShape make_layer_shape(const Scenario& s);
LayerShape make_layer_shape(const Scenario& s, int layer);

// Forward of one dense layer (also used for recompute): attention_forward_ops then
// mlp_forward_ops.
std::vector<Op> layer_forward_ops(const LayerShape& x);
// The attention half of a layer's forward: norm, QKV (or MLA projections), the attention core
// (with its context-parallel communication), output projection, TP collective, residual.
std::vector<Op> attention_forward_ops(const LayerShape& x);
// The dense MLP half: norm, FC1, activation, FC2, TP collective, residual.
std::vector<Op> mlp_forward_ops(const LayerShape& x);
// Selective recompute: the attention core forward replayed before the backward.
std::vector<Op> attention_recompute_ops(const LayerShape& x);
// Backward of one dense layer: mlp_backward_ops then attention_backward_ops. Weight-gradient
// GEMMs are named "*.wgrad", everything else is the input-gradient pass.
std::vector<Op> layer_backward_ops(const LayerShape& x);
std::vector<Op> mlp_backward_ops(const LayerShape& x);
std::vector<Op> attention_backward_ops(const LayerShape& x);
// Embedding lookup (first stage) forward and backward.
std::vector<Op> embedding_forward_ops(const LayerShape& x);
std::vector<Op> embedding_backward_ops(const LayerShape& x);
// Final norm, logits GEMM and vocab-parallel cross-entropy (last stage).
std::vector<Op> head_forward_ops(const LayerShape& x);
std::vector<Op> head_backward_ops(const LayerShape& x);

// Building blocks of the layer halves, shared with moe_ops.h and mamba_ops.h.
// The TP reduction after a row-parallel GEMM (forward: its partial outputs) or a column-parallel
// one (backward, `grad`: the partial gradients of its input): a reduce-scatter into the
// sequence-parallel region, else an all-reduce, of the whole activation T·h. REQUIRES: x.tp > 1.
Op tp_reduction(const LayerShape& x, bool grad);
// A norm in front of a TP region reads and writes the hidden state, 2·e·T·h (T/t tokens with
// sequence parallelism); with SP its output is then all-gathered.
void norm_forward(const LayerShape& x, const char* name, std::vector<Op>& ops);
// Norm backward reads grad, input and the residual gradient, writes the gradient: 4e·T·h. With
// TP it first waits for the asynchronous reduction of the input gradient.
void norm_backward(const LayerShape& x, const char* name, std::vector<Op>& ops);
// The backward of a half's residual branch (dropout with its mask, the bias gradient); with
// sequence parallelism the gradient is then all-gathered into the TP region.
void residual_backward(const LayerShape& x, const char* name, std::vector<Op>& ops);
// The input-gradient `dgrad` and weight-gradient `wgrad` GEMMs of a column-parallel layer with
// its TP communication: with SP the input is re-gathered for wgrad (overlapping dgrad) and the
// input gradient reduce-scattered (overlapping wgrad); without, the input gradient's
// all-reduce overlaps wgrad.
void column_parallel_backward(const LayerShape& x, Op dgrad, Op wgrad, std::vector<Op>& ops);

// A GEMM op: flops 2·m·n·k·batch, bytes (m·k + k·n + m·n)·batch·e (+ m·n·e when `accumulate`,
// as weight gradients add into the existing gradient buffer).
Op gemm_op(const char* name, int64_t m, int64_t n, int64_t k, int64_t batch, int e,
           bool accumulate = false);
// A memory-bound op moving `bytes` through HBM.
Op memory_op(const char* name, double bytes, Category category = Category::kCompute);
// A collective op on `group` of `bytes` (nccl-tests size convention).
Op collective_op(const char* name, CollectiveKind kind, GroupKind group, Bytes bytes);
// Rounds a byte count to Bytes.
Bytes round_bytes(double bytes);

}  // namespace preflight
