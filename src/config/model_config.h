// The model section of a scenario: the architecture of a decoder-only transformer, dense or
// mixture-of-experts, or of a hybrid of Mamba-2, attention, MLP and MoE blocks, with DeepSeek's
// latent and compressed attention. Plain copyable values, filled by the loader from YAML, model
// presets and --set overrides (config/model_section.cc); the rules between them are checked in
// validate_scenario() (config/scenario.h).
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace preflight {

// MLP activations: GELU and squared ReLU (Nemotron's relu2) are non-gated, two matrices (fc1
// h → f, fc2 f → h); SwiGLU is gated, three (gate and up h → f, down f → h).
enum class Activation { kGelu, kSwiglu, kSquaredRelu };
enum class Norm { kLayerNorm, kRmsNorm };
// kNone: no position information in the model (NoPE; Nemotron-H and Nemotron 3).
enum class PositionEmbedding { kLearned, kRope, kAlibi, kNone };
// How per-expert token loads are drawn (model.moe.routing).
enum class MoeRouting { kUniform, kZipf, kDirichlet, kLoads, kBalanced };

// Mixture of experts in the MLP of (some) layers: `experts` routed experts of which each token
// picks `top_k`, plus `shared_experts` every token passes through (DeepSeek, Qwen, Llama 4).
struct MoeConfig {
  int experts = 0;                   // routed experts; 0 = a dense model
  int top_k = 0;                     // experts per token
  int expert_ffn_hidden = 0;         // intermediate size of one routed expert
  int shared_experts = 0;            // always-active experts
  int shared_expert_ffn_hidden = 0;  // intermediate size of one shared expert (0 = expert's)
  int dense_layers = 0;              // first layers with a dense MLP (DeepSeek first_k_dense)
  int layer_interval = 1;            // MoE in every n-th layer after those (Llama 4 Maverick: 2)
  double capacity_factor = 0;        // tokens per expert cap = cf·T·k/E; 0 = dropless
  // Per-expert loads: balanced (the default: a router balanced in expectation, whose busiest EP
  // rank still carries the expected maximum of a micro-batch's multinomial token counts),
  // uniform (the exact ideal, as SimAI assumes), zipf (load of the i-th most popular expert ∝
  // i^−s), dirichlet (shares ~ Dir(α)), or loads (the user's list, any scale). Random draws are
  // seeded by simulation.seed, one per MoE layer.
  MoeRouting routing = MoeRouting::kBalanced;
  double zipf_exponent = 1.2;
  double dirichlet_alpha = 1.0;
  std::vector<double> loads;
  // Token dispatch/combine: all-to-all in the EP group, or all-gather + reduce-scatter
  // (Megatron's "allgather" dispatcher).
  bool allgather_dispatcher = false;
  // Megatron-Core's "flex" dispatcher (DeepEP / HybridEP kernels): the all-to-all's permute and
  // sorts are fused into the dispatch and combine kernels, and it needs no token counts on the
  // host; the "alltoall" dispatcher copies them to the host every MoE layer (a device sync).
  bool flex_dispatcher = false;
  // The flex dispatcher's kernels (DeepEP or HybridEP) run on SMs they hold for themselves:
  // Megatron-Core's moe_deepep_num_sms (20) and moe_hybridep_num_sms (16), as Megatron-Bridge's
  // performance configs leave them. While an all-to-all overlaps compute (overlap_moe_comm),
  // the kernels beside it run on the other SMs (docs/moe.md). `flex_sms` 0: the backend's count.
  enum class FlexBackend : uint8_t { kDeepEp, kHybridEp };
  FlexBackend flex_backend = FlexBackend::kDeepEp;
  int flex_sms = 0;
  int flex_dispatcher_sms() const {
    if (flex_sms > 0) return flex_sms;
    return flex_backend == FlexBackend::kHybridEp ? 16 : 20;
  }
  // Node-limited routing (DeepSeek-V3's topk_group, Megatron's --moe-router-group-topk with the
  // EP group's nodes as groups): each token's experts lie on at most this many nodes, and the
  // dispatcher sends one copy per destination node, fanned out over NVLink there (DeepEP).
  // 0 = unlimited, one copy per routed expert (Megatron's alltoall dispatcher).
  int group_topk = 0;
  // Dispatch in FP8 (DeepSeek-V3 §3.3.2): the forward dispatch and the backward combine-gradient
  // carry 1-byte activations plus one fp32 scale per 128; the other two stay 16-bit.
  bool fp8_dispatch = false;
  double router_aux_loss = 0;  // informational; the router's load-balancing loss coefficient
  // Latent MoE (Nemotron 3 Super and Ultra, Megatron-Core's moe_latent_size): each MoE layer
  // projects its tokens h → latent_size before the routed experts, which then work (and are
  // dispatched) in the latent width, and projects their combined output back latent → h. The
  // router and the shared experts stay at h. 0 = experts at h.
  int latent_size = 0;

  bool enabled() const { return experts > 0; }
  // Width of the routed experts' input and output: latent_size, or `hidden`.
  int expert_width(int hidden) const { return latent_size > 0 ? latent_size : hidden; }
};

// The Mamba-2 mixer of a hybrid model's `M` layers (Dao & Gu 2024, "Transformers are SSMs",
// arXiv 2405.21060; Megatron-Core's MambaMixer): `heads` SSM heads of `head_dim` channels
// (d_inner = heads·head_dim), B and C of `state` per group shared by the heads of each of
// `groups` groups, a causal depthwise convolution of `conv_kernel` taps, and the SSD scan in
// chunks of `chunk` tokens. Unused (all 0) without an `M` in model.hybrid_pattern.
struct MambaConfig {
  int heads = 0;
  int head_dim = 0;
  int state = 0;
  int groups = 0;
  int conv_kernel = 0;
  int chunk = 0;

  bool enabled() const { return heads > 0; }
  // SSM channels: heads·head_dim.
  int64_t d_inner() const { return int64_t{heads} * head_dim; }
  // Channels the convolution runs over: x, B and C, d_inner + 2·groups·state.
  int64_t conv_dim() const { return d_inner() + 2 * int64_t{groups} * state; }
  // Output width of in_proj, packed [z | x | B | C | dt]: 2·d_inner + 2·groups·state + heads.
  int64_t in_proj_width() const { return 2 * d_inner() + 2 * int64_t{groups} * state + heads; }
};

// Multi-head latent attention (DeepSeek-V2/V3): K and V come from a compressed latent of
// `kv_lora_rank` (plus a decoupled RoPE key of `qk_rope_head_dim` shared by all heads); queries
// from a latent of `q_lora_rank` (0 = projected directly from the hidden state).
struct MlaConfig {
  int q_lora_rank = 0;
  int kv_lora_rank = 0;  // > 0 turns MLA on
  int qk_nope_head_dim = 0;
  int qk_rope_head_dim = 0;
  int v_head_dim = 0;

  bool enabled() const { return kv_lora_rank > 0; }
};

// DeepSeek-V4's hybrid compressed attention (Megatron-Core's dsv4_hybrid attention variant;
// deepseek-ai/DeepSeek-V4-Flash config.json), on model.heads query heads of model.head_dim over
// model.kv_heads shared K/V heads (V4: one, K = V) of the same width:
//   * queries from a latent of `q_lora_rank` (down, norm, up), K/V projected directly, RoPE on
//     `rope_dim` of each head;
//   * every layer attends to the last model.sliding_window raw tokens; a layer whose entry in
//     `compress_ratios` is r > 0 also attends to its compressed K/V, one entry per r tokens
//     (a learned gated pooling, "the compressor"); layers with r = `csa_ratio` (V4: 4, compressed
//     sparse attention) keep the `index_topk` entries a lightning indexer of `index_heads` ×
//     `index_head_dim` scores, the others (heavily compressed attention) all of them;
//   * the output projection in `o_groups` groups, each of heads/o_groups heads down to
//     `o_lora_rank`, then one GEMM of o_groups·o_lora_rank → hidden.
// Unused (q_lora_rank 0) without model.csa.
struct CsaConfig {
  int q_lora_rank = 0;
  int o_lora_rank = 0;
  int o_groups = 1;
  int rope_dim = 0;
  std::vector<int> compress_ratios;  // per layer, then per MTP module; missing entries are 0
  int csa_ratio = 0;
  int index_heads = 0;
  int index_head_dim = 0;
  int index_topk = 0;

  bool enabled() const { return q_lora_rank > 0; }
  // The compression ratio of layer `i` (0: the window only); MTP module j is layer layers + j.
  int ratio(int i) const {
    return i >= 0 && i < static_cast<int>(compress_ratios.size()) ? compress_ratios[i] : 0;
  }
  // Whether layer `i` selects its compressed entries with the lightning indexer.
  bool indexed(int i) const { return ratio(i) > 0 && ratio(i) == csa_ratio; }
  // The compressor's output width per entry, in K/V widths: 2 for the indexed layers, whose
  // compressor pools overlapping windows (two sets of projections), 1 for the others.
  int overlap(int i) const { return indexed(i) ? 2 : 1; }
};

// A decoder-only transformer (GPT/LLaMA family), dense or mixture-of-experts; or a hybrid
// (`hybrid_pattern`) whose layers are each one Mamba-2 mixer, attention, MLP or MoE block.
struct ModelConfig {
  std::string name = "custom";
  std::string description;
  int layers = 0;
  int hidden = 0;
  int heads = 0;
  int kv_heads = 0;    // = heads for multi-head attention; < heads for GQA/MQA
  int ffn_hidden = 0;  // intermediate size of the MLP (4·hidden for GPT)
  int vocab = 0;       // unpadded; Megatron pads it to a multiple of 128·tp
  Activation activation = Activation::kGelu;
  Norm norm = Norm::kLayerNorm;
  PositionEmbedding position_embedding = PositionEmbedding::kLearned;
  bool tied_embeddings = true;
  bool linear_bias = true;
  bool dropout = true;
  int max_seq_len = 2048;
  // Attention head width; 0 = hidden / heads (Qwen3 and GPT-OSS set it explicitly).
  int head_dim_override = 0;
  // Sliding-window attention: each token attends to the previous `sliding_window` tokens
  // (0 = full causal attention); with `sliding_window_pattern` n > 0 every n-th layer keeps full
  // attention (GPT-OSS alternates: 2; Llama 4 chunks 3 of 4: 4).
  int sliding_window = 0;
  int sliding_window_pattern = 0;
  bool attention_sinks = false;  // learned per-head sink logits (GPT-OSS); a softmax term
  // QK-norm (Qwen3; Megatron-Core's qk_layernorm): a norm of model.norm's kind over each query
  // and each key head (head_dim wide, one weight vector each for Q and K per layer) after the
  // QKV projection, before RoPE. Two norm kernels each way; no FLOPs (docs/workload.md).
  bool qk_layernorm = false;
  // YaRN's attention scaling of RoPE's cos and sin (Hugging Face's rope_scaling
  // attention_factor, Megatron-Core's mscale): 0.1·ln(factor) + 1 when the config gives none
  // (GPT-OSS: factor 32, 1.3466); 1 = none. No FLOPs; a stack whose fused RoPE kernel takes no
  // scale applies such a RoPE with unfused PyTorch ops (StackConfig::fused_scaled_rope).
  double rope_mscale = 1.0;
  // Clamped gated activation (GPT-OSS's swiglu_limit 7.0; Megatron-Core's
  // activation_func_clamp_value): the gate half clamped from above and the linear half to
  // [-c, c] before the activation; 0 = none. Costs memory passes, not FLOPs (docs/workload.md).
  double activation_clamp = 0;
  int mtp_layers = 0;  // multi-token prediction modules (DeepSeek-V3: 1)
  // The MTP depths share one module's weights (Megatron's mtp_use_repeated_layer; Nemotron 3
  // Super and Ultra): mtp_layers depths of compute, one module of parameters.
  bool mtp_repeated_layer = false;
  // Hybrid models (Megatron-Core's hybrid_override_pattern; Nemotron-H, Nemotron 3): one
  // character per layer, `layers` in all: M = Mamba-2 mixer, * = self-attention, - = dense MLP,
  // E = MoE, each with its own pre-norm and residual. Empty: every layer is attention + MLP
  // (dense or MoE by is_moe_layer).
  std::string hybrid_pattern;
  MoeConfig moe;
  MlaConfig mla;
  MambaConfig mamba;
  CsaConfig csa;
  // Manifold-constrained hyper-connections (DeepSeek-V4's mHC; config.json hc_mult): the
  // residual stream widened to `hyper_connections` streams of model.hidden, mixed before and
  // after each sublayer by per-token weights from one small GEMM over all streams, the mixing
  // matrix made doubly stochastic by `hc_sinkhorn_iterations` Sinkhorn steps. 0 or 1 = the
  // ordinary residual.
  int hyper_connections = 0;
  int hc_sinkhorn_iterations = 20;

  int head_dim() const { return head_dim_override > 0 ? head_dim_override : hidden / heads; }
  bool is_hybrid() const { return !hybrid_pattern.empty(); }
  // Whether layer `i` (0-based) has a routed-expert MLP: an `E` of a hybrid; otherwise from
  // moe.dense_layers and moe.layer_interval.
  bool is_moe_layer(int i) const {
    if (is_hybrid()) return moe.enabled() && hybrid_pattern[i] == 'E';
    return moe.enabled() && i >= moe.dense_layers &&
           (i - moe.dense_layers) % std::max(moe.layer_interval, 1) == moe.layer_interval - 1;
  }
  // Whether layer `i` has self-attention: every layer but a hybrid's M, - and E.
  bool has_attention(int i) const { return !is_hybrid() || hybrid_pattern[i] == '*'; }
  // Whether layer `i` is a hybrid's Mamba-2 mixer layer.
  bool is_mamba_layer(int i) const { return is_hybrid() && hybrid_pattern[i] == 'M'; }
  // Whether layer `i` has an MLP, dense or MoE: every layer but a hybrid's M and *.
  bool has_mlp(int i) const {
    return !is_hybrid() || hybrid_pattern[i] == '-' || hybrid_pattern[i] == 'E';
  }
};

}  // namespace preflight
