// Transformer arithmetic for a decoder, dense, mixture-of-experts or hybrid Mamba-2/attention:
// padded vocabulary, parameter counts (per layer, per expert, total and active per token) and
// the model FLOPs used for MFU. Formulas follow Narayanan et al. 2021 (Megatron-LM, "Efficient
// Large-Scale Language Model Training on GPU Clusters", eq. 3) generalised to GQA and SwiGLU as
// in Megatron's `num_floating_point_operations`, with the attention core counted non-causally
// (the 2021 convention; docs/model.md says why); MoE layers as in Megatron-Core (routed experts,
// shared experts, router, latent projections), MLA as in DeepSeek-V2 §2.1, and Mamba-2 layers
// as Megatron-Core's MambaMixer with the SSD scan of Dao & Gu 2024 (arXiv 2405.21060, §6).
// A hybrid's layer (ModelConfig::hybrid_pattern) holds one part with its pre-norm: a Mamba-2
// mixer, attention, a dense MLP or an MoE block. Pure functions of their arguments.
#pragma once

#include <cstdint>
#include <vector>

#include "config/scenario.h"

namespace preflight {

// Megatron pads the vocabulary to a multiple of 128·tp (`make-vocab-size-divisible-by` 128).
int64_t padded_vocab(const ModelConfig& m, int tp);

// Attention window of layer `layer` (0-based) in tokens; 0 = full causal attention. With
// model.sliding_window w > 0 every layer is windowed, except, with sliding_window_pattern n > 0,
// every n-th one ((layer + 1) % n == 0): GPT-OSS (n = 2) windows the even layers, as its
// config.json `layer_types` lists them.
int attention_window(const ModelConfig& m, int layer);

// Parameters of one layer's attention (all TP shards), without the norm before it:
//   GQA/MHA: h·(q + 2·kv) + q·h (+ q + 2·kv + h biases), q = a·d_h, kv = g·d_h;
//   MLA (DeepSeek-V2 §2.1, d_qk = d_nope + d_rope): W_DQ h·r_q, its norm r_q, W_UQ r_q·a·d_qk
//   (or W_Q h·a·d_qk when r_q = 0); W_DKV and W_KR h·(r_kv + d_rope), its norm r_kv, W_UK and
//   W_UV r_kv·a·(d_nope + d_v); W_O a·d_v·h.
// Plus one sink logit per head with model.attention_sinks.
int64_t attention_parameters(const ModelConfig& m);

// DeepSeek-V4's compressed attention (model.csa; CsaConfig), for layer `layer` (MTP module j:
// layer layers + j) in sequences of `seq_len` tokens. A query at position p (1-based) attends to
// min(p, w) raw tokens of the window w and to min(⌊p/r⌋, k) compressed entries, r its layer's
// ratio (none at r = 0) and k model.csa.index_topk on the indexed layers (no cap elsewhere);
// the lightning indexer scores all ⌊p/r⌋ of them. `causal` false counts every query as the last
// (p = seq_len: the non-causal count of the 2021 convention), true averages over p:
//   window:     (w(w+1)/2 + (s − w)·w)/s
//   compressed: (1/s)·Σ_{p=1..s} min(⌊p/r⌋, k), in closed form (transformer.cc).
double csa_window_keys(const ModelConfig& m, int seq_len, bool causal);
double csa_compressed_keys(const ModelConfig& m, int layer, int seq_len, bool causal);
double csa_index_candidates(const ModelConfig& m, int layer, int seq_len, bool causal);

// Parameters of model.csa's per-layer parts: on a layer of ratio r > 0 the compressor, K/V and
// gate projections h·(o·kv) each (o = 2 on the indexed layers, whose windows overlap; kv = kv
// heads · head_dim), a position bias r·o·kv and a norm of kv; on an indexed layer also the
// indexer, its query up-projection r_q·(i_h·i_d), head weights h·i_h and a compressor of its own
// at width i_d. 0 without model.csa or at r = 0.
int64_t csa_layer_parameters(const ModelConfig& m, int layer);

// Parameters of one layer's hyper-connections (model.hyper_connections n > 1): per sublayer
// (attention, MLP) the mixing weights' projection (n·h)·(n² + 2n), their biases n² + 2n and
// three gates; 0 without.
int64_t hyper_connection_parameters(const ModelConfig& m);

// Forward FLOPs of layer `layer`'s compressed attention for `tokens` tokens: the projections
// (2·T·weights, the compressors' and the indexer's included), the core 4·T·a·keys·d_h (QKᵀ and
// the weighted sum over the window and compressed keys) and the indexer's scores
// 2·T·i_h·candidates·i_d; `causal` as above.
double csa_attention_forward_flops(const ModelConfig& m, int64_t tokens, int seq_len, int layer,
                                   bool causal);

// Forward FLOPs of one layer's hyper-connections for `tokens` tokens: per sublayer the mixing
// weights' projection 2·T·(n·h)·(n² + 2n); 0 without.
double hyper_connection_forward_flops(const ModelConfig& m, int64_t tokens);

// Parameters of one Mamba-2 mixer (all TP shards), without the norm before it; Megatron-Core's
// MambaMixer with d = d_inner = H·P, c = conv_dim = d + 2·G·N (docs/model.md §3):
//   in_proj h·(2d + 2GN + H), conv1d K·c weights + c biases, A_log, D and dt_bias H each, the
//   gated RMSNorm d, out_proj d·h (+ 2d + 2GN + H and h biases with linear_bias).
// 0 without model.mamba.
int64_t mamba_parameters(const ModelConfig& m);

// Parameters of the dense MLP (model.ffn_hidden = f): h·f·(3 SwiGLU | 2 GELU, squared ReLU)
// (+ biases).
int64_t dense_mlp_parameters(const ModelConfig& m);

// Parameters of one routed expert (model.moe.expert_ffn_hidden), shaped like the dense MLP, at
// the latent width w = moe.latent_size (or h): w·f_e·(3 | 2) (+ biases).
int64_t routed_expert_parameters(const ModelConfig& m);

// Latent MoE's projections of layer `layer`: h → latent and latent → h, 2·h·latent (+ latent
// + h biases); 0 on a dense layer or without moe.latent_size.
int64_t latent_projection_parameters(const ModelConfig& m, int layer);

// Routed-expert parameters of layer `layer`: E × routed_expert_parameters; 0 on a dense layer.
int64_t expert_parameters(const ModelConfig& m, int layer);

// Shared-expert parameters of layer `layer`: shared_experts × one MLP of
// shared_expert_ffn_hidden; 0 on a dense layer.
int64_t shared_expert_parameters(const ModelConfig& m, int layer);

// Router (gate) of layer `layer`: h·E (+ E biases with linear_bias); 0 on a dense layer.
int64_t router_parameters(const ModelConfig& m, int layer);

// Parameters of one dense layer (all TP shards together): attention, dense MLP, two norms.
// Oracle for GPT: 12h² + 13h.
int64_t layer_parameters(const ModelConfig& m);

// Parameters of layer `layer`: attention and two norms, plus the dense MLP or, on an MoE layer
// (ModelConfig::is_moe_layer), router + shared experts + all routed experts (+ the latent
// projections). A hybrid's layer holds one norm and its one part: the Mamba-2 mixer, the
// attention, the dense MLP or the MoE block.
int64_t layer_parameters(const ModelConfig& m, int layer);

// Parameters of layer `layer` one token uses: top_k routed experts in place of all E.
int64_t layer_active_parameters(const ModelConfig& m, int layer);

// The layer whose MLP each multi-token-prediction module's block copies: the last layer; for a
// hybrid its last - or E layer, so the block is attention + that MLP (Nemotron 3's
// mtp_hybrid_override_pattern "*E"). REQUIRES: a hybrid pattern with an - or E layer.
int mtp_mlp_layer(const ModelConfig& m);

// One multi-token-prediction module (DeepSeek-V3 §2.2): the projection M (2h → h), the two
// norms of its inputs, a transformer block shaped like the model's last layer (a hybrid's:
// attention and the MLP of mtp_mlp_layer, each with its norm), and the norm before the output
// head. The embedding and the output head are shared with the main model and not counted again.
// 0 when model.mtp_layers is 0; the model holds mtp_weight_modules of them.
int64_t mtp_module_parameters(const ModelConfig& m);

// MTP modules whose weights the model holds: mtp_layers, or 1 when they share one module's
// weights (model.mtp_repeated_layer).
int mtp_weight_modules(const ModelConfig& m);

// Trainable LoRA parameters of layer `layer` (all TP shards together): rank·(d_in + d_out) for
// each target linear the layer has: qkv (h → q + 2·kv) and proj (heads·d_v → h) on a layer with
// attention, fc1 (h → f, 2f gated) and fc2 (f → h) on a dense MLP. 0 without LoRA.
int64_t lora_parameters(const ModelConfig& m, const LoraConfig& lora, int layer);

// Word (+ learned position) embedding parameters, with the padded vocabulary.
int64_t embedding_parameters(const ModelConfig& m, int tp, int seq_len);

// Total trainable parameters of the main model: all layers (every expert), embeddings, final
// norm, and the output layer when untied. Multi-token-prediction modules are not included
// (mtp_layers × mtp_module_parameters); DeepSeek-V3 reports them apart too (671B + 14B).
int64_t total_parameters(const ModelConfig& m, int tp, int seq_len);

// Parameters one token activates: total_parameters less, on every MoE layer, the E − top_k
// routed experts it does not use. Counts the input embedding table in full, as Mistral and Qwen
// do for their published figures; DeepSeek and OpenAI leave it out (subtract
// padded_vocab·h to compare with theirs).
int64_t active_parameters(const ModelConfig& m, int tp, int seq_len);

// Forward FLOPs of one layer's attention for `tokens` tokens in sequences of `seq_len` with
// attention window `window` (0 = full): projection GEMMs 2·T·(the attention's weight matrices)
// plus the core 2·T·keys·a·(d_qk + d_v), keys = min(window, s) or s (non-causal, as for MFU).
double attention_forward_flops(const ModelConfig& m, int64_t tokens, int seq_len, int window);

// The attention core's share of attention_forward_flops: 2·T·keys·a·(d_qk + d_v), keys =
// min(window, s) or s (non-causal).
double attention_core_forward_flops(const ModelConfig& m, int64_t tokens, int seq_len, int window);

// Forward FLOPs of the SSD chunked scan of one Mamba-2 mixer for `tokens` tokens in sequences
// of `seq_len` (Dao & Gu 2024 §6, the kernels of mamba_ssm's ssd_combined.py), 2 FLOPs per
// multiply-add, per token with chunks of Q = min(chunk, s):
//   C·Bᵀ within a chunk (per group) 2·Q·N·G, its decay-masked product with x 2·Q·d, the chunk
//   states Bᵀ·x 2·N·d and their contribution C·state 2·N·d:  2·Q·N·G + 2·d·(Q + 2N).
// The intra-chunk (Q) terms are counted whole, non-causally, as the attention core is.
double mamba_scan_forward_flops(const ModelConfig& m, int64_t tokens, int seq_len);

// Forward FLOPs of one Mamba-2 mixer: in_proj 2·T·h·(2d + 2GN + H), conv1d 2·T·K·c, the scan,
// out_proj 2·T·d·h. Element-wise work (softplus, the SiLU gate, norms) is not counted, as the
// transformer's is not. 0 without model.mamba.
double mamba_forward_flops(const ModelConfig& m, int64_t tokens, int seq_len);

// Forward FLOPs of layer `layer`'s MLP for `tokens` tokens: dense 2·T·h·f·(3 | 2); MoE with a
// balanced router 2·T·(top_k·(one expert's GEMM weights) + shared experts' GEMM weights + h·E
// + latent projections 2·h·latent); 0 on a hybrid's layer without MLP (M, *).
double mlp_forward_flops(const ModelConfig& m, int64_t tokens, int layer);

// Forward FLOPs of one dense layer with full attention for `tokens` tokens in sequences of
// `seq_len`: GEMMs 2·T·h·(q + 2·kv + o) + MLP, plus attention core 4·T·s·h (non-causal).
// Oracle for GPT (MHA, 4h GELU MLP): 24·b·s·h² + 4·b·s²·h.
double layer_forward_flops(const ModelConfig& m, int64_t tokens, int seq_len);

// Forward FLOPs of layer `layer` (its MLP kind and attention window): attention_forward_flops
// + mlp_forward_flops. For a balanced MoE layer: 2·T·(active GEMM parameters) + core. A
// hybrid's layer: mamba_forward_flops, attention_forward_flops or mlp_forward_flops, by kind.
double layer_forward_flops(const ModelConfig& m, int64_t tokens, int seq_len, int layer);

// Model FLOPs of one training iteration (forward + backward = 3 × forward, no recompute): every
// layer, the logits layer (2·T·h·V per forward) with the unpadded vocabulary, and each
// multi-token-prediction module (projection 2·T·2h·h, its block, its logits), as Megatron
// reports MFU. Hybrids count their true Mamba-2 shapes (d_inner = H·P), where Megatron's
// hybrid formula takes d_inner = 2h (docs/model.md §3).
double model_flops_per_iteration(const Scenario& s);

// The same with causal attention counted as run: each query's scores and values over the keys
// before it (about half the non-causal count at long sequences; windows counted the same way).
// What the kernels execute, so an MFU from it cannot exceed what the GEMMs reach.
double causal_model_flops_per_iteration(const Scenario& s);

// Model layers (0-based) on pipeline stage `stage`, chunk by chunk. With vpp 1 the stage holds
// a consecutive range (stage_layers() gives the sizes); with vpp v, chunk c holds
// [(c·p + stage)·L/(p·v), (c·p + stage + 1)·L/(p·v)) (Megatron's interleaved layout).
// REQUIRES: validate_scenario(s).ok(), 0 <= stage < pp.
std::vector<int> stage_layer_ids(const Scenario& s, int stage);

}  // namespace preflight
