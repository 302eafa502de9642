// LayerShape: the per-rank widths and flags of one decoder layer (dense, MoE, MLA, Mamba-2) that
// every op builder reads (layer_ops.h, moe_ops.h, mamba_ops.h), derived once from a scenario.
#pragma once

#include <cstdint>

#include "config/scenario.h"

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
  // The stack unpads around the fused kernel (StackConfig::flash_attention_unpad).
  bool flash_unpad = false;
  bool dropout = true;
  bool bias = true;
  bool swiglu = false;
  bool clamped_glu = false;  // model.activation_clamp > 0: clamp and concatenate before the GLU
  bool rope = false;
  bool qk_norm = false;  // model.qk_layernorm: a norm over each query and key head
  // RoPE with scaled cos/sin (model.rope_mscale != 1) on a stack that applies it unfused
  // (StackConfig::fused_scaled_rope false): Megatron-Core's PyTorch fallback.
  bool rope_unfused = false;
  int64_t rope_positions = 0;
  // Megatron-Core's MambaMixer around the fused scan (StackConfig::mamba_mixer kMegatron):
  // sequence-first layout copies for b > 1, the gate applied in the chunk scan.
  bool mamba_megatron = false;
  bool te_cross_entropy = false;  // StackConfig::te_cross_entropy: TE's fused loss kernels  //
                                  // s/cp: the positions whose cos and sin each call recomputes
  bool learned_positions = true;
  bool layernorm = true;
  // Attention core. Each rank computes `q_len` queries per sequence (s, or s/cp with ring
  // context parallelism) against on average `keys2`/2 keys (causal: keys2 = s; a sliding
  // window w: keys2 = 2·w·(1 − (w−1)/(2s))). `tile_keys2` is the same as the fused kernels
  // compute it: whole tiles of kAttentionTile keys (tiled_keys2). Head widths: `qk_dim` for
  // queries and keys, `v_dim` for values and outputs (both head_dim unless MLA).
  int64_t q_len = 0;
  double keys2 = 0;
  double tile_keys2 = 0;
  int64_t qk_dim = 0, v_dim = 0;
  // Context parallelism: cp ranks, ring (K/V blocks passed around, overlapped with the
  // attention of the block at hand) or all-to-all (Ulysses: heads scattered, sequence gathered).
  int64_t cp = 1;
  bool cp_a2a = false;
  // Multi-head latent attention (DeepSeek-V2/V3); 0 = off.
  int64_t q_lora = 0, kv_lora = 0, rope_dim = 0;
  // DeepSeek-V4's compressed attention (model.csa): queries from the q_lora latent, K/V of
  // kv_heads_per_rank heads projected directly, the output down to `o_lora` in `o_groups`
  // groups per rank, then to h. On a layer of ratio `csa_ratio` > 0 a compressor of
  // `csa_overlap` K/V widths per token; on an indexed one the lightning indexer of
  // `index_heads` × `index_dim` scoring `index_candidates` entries per query (mean over the
  // causal positions), the core's keys (keys2/2) the window's and the kept entries.
  bool csa = false;
  int64_t o_lora = 0, o_groups = 0;
  int64_t csa_ratio = 0, csa_overlap = 1;
  bool csa_indexed = false;
  int64_t index_heads = 0, index_dim = 0;
  double index_candidates = 0;
  double compressed_keys = 0;
  // Hyper-connections (model.hyper_connections): `hc_streams` residual streams of h; 0 = none.
  int64_t hc_streams = 0;
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
  bool flex_dispatcher = false;  // DeepEP/HybridEP: sorts fused, one copy per rank
  int flex_sms = 0;              // SMs its kernels hold (MoeConfig::flex_dispatcher_sms)
  // Host cost of one expert GEMM (a per_expert grouped GEMM, not under CUDA graphs): a launch
  // per local expert, or with the stack's expert_launch_overhead one launch and that much host
  // work per local expert.
  int expert_gemm_launches = 1;
  // Framework ops of Megatron-Core's MoE layer beyond the kernels modelled, per micro-batch
  // (StackConfig::moe_router): those the host runs before the dispatcher's sync (the router's
  // score function and auxiliary loss, the dispatcher's token counts and their copies to the
  // host), with the permutation, the sort and the unsort (Transformer Engine's passes beyond
  // the one kernel modelled each), and in the backward (the router's autograd beyond its two
  // GEMMs and one top-k kernel).
  int moe_ops_before_sync = 0;
  // Of those: the router's (score function, auxiliary loss) and the dispatcher's preprocessing
  // (token counts, their copies; the flex dispatcher's metadata), which scoped CUDA graphs
  // capture apart (training.cuda_graph_scope moe_router, moe_preprocess).
  int moe_ops_router = 0;
  int moe_ops_preprocess = 0;
  int moe_ops_permute = 0;
  int moe_ops_sort = 0;
  int moe_ops_unsort = 0;
  int moe_ops_backward = 0;
  SimTime expert_gemm_host;
  // A per_expert grouped GEMM runs one kernel per local expert (Op::gemm_streams), a fused one
  // a single kernel over all of them.
  bool expert_gemm_separate = false;
  // The fused grouped MLP (stack grouped_gemm: fused, Transformer Engine's CuTe DSL chain): the
  // activation, its gate weighting and the cast of fc2's input run in fc1's epilogue, the
  // activation's backward and the cast of fc1's output gradient in fc2 dgrad's epilogue.
  bool fused_expert_mlp = false;
  bool dispatch_host_sync = false;  // the dispatcher's token counts to the host
  // TrainingConfig::cuda_graph_scope: the modules Transformer Engine's graphs capture.
  uint32_t graph_scope = 0;
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

// The square tiles FlashAttention's kernels work in: 128 queries by 128 keys (FlashAttention-2's
// and -3's causal tiles at head width 128, Dao 2023 and Shah et al. 2024; cuDNN's fused
// attention likewise).
inline constexpr int64_t kAttentionTile = 128;

// Twice the mean keys per query that a fused kernel computes for a causal sequence of `len`
// tokens with a window of `window` keys (0: none). It skips the tiles the mask leaves empty and
// computes the partly masked ones whole, masking inside: query tile i of n = ⌈len/T⌉ computes
// min(i + 1, m) key tiles of T, m = 1 + ⌈(window − 1)/T⌉ (n without a window), so
// tiled_keys2 = 2·T·Σᵢ min(i + 1, m)/n: len + T for a whole causal sequence (a multiple of T),
// 4·T for a window of T (against 2·T of keys attended).
double tiled_keys2(int64_t len, int64_t window);

// The shape of `s`'s layers with full attention (make_layer_shape) and of layer `layer`, whose
// attention may be windowed (model.sliding_window / sliding_window_pattern).
LayerShape make_layer_shape(const Scenario& s);
LayerShape make_layer_shape(const Scenario& s, int layer);

}  // namespace preflight
