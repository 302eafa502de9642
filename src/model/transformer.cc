#include "model/transformer.h"

#include <algorithm>

namespace preflight {
namespace {

int64_t norm_parameters(const ModelConfig& m, int64_t width) {
  return m.norm == Norm::kLayerNorm ? 2 * width : width;
}

// GEMM weights of an MLP of intermediate size `f` between activations of `width` (the hidden
// size, or a latent MoE's latent), no biases: w·f·(3 SwiGLU | 2 GELU, squared ReLU).
int64_t mlp_gemm_parameters(const ModelConfig& m, int64_t f, int64_t width) {
  const int64_t mlp_in = m.activation == Activation::kSwiglu ? 2 * f : f;
  return width * mlp_in + f * width;
}
int64_t mlp_gemm_parameters(const ModelConfig& m, int64_t f) {
  return mlp_gemm_parameters(m, f, m.hidden);
}

// An MLP of intermediate size `f` with its biases.
int64_t mlp_parameters(const ModelConfig& m, int64_t f, int64_t width) {
  const int64_t mlp_in = m.activation == Activation::kSwiglu ? 2 * f : f;
  return mlp_gemm_parameters(m, f, width) + (m.linear_bias ? mlp_in + width : 0);
}
int64_t mlp_parameters(const ModelConfig& m, int64_t f) { return mlp_parameters(m, f, m.hidden); }

// The MoE block of layer `layer` without its norm: router, shared experts, routed experts and
// the latent projections.
int64_t moe_block_parameters(const ModelConfig& m, int layer) {
  return router_parameters(m, layer) + shared_expert_parameters(m, layer) +
         expert_parameters(m, layer) + latent_projection_parameters(m, layer);
}

int64_t shared_expert_ffn(const ModelConfig& m) {
  return m.moe.shared_expert_ffn_hidden > 0 ? m.moe.shared_expert_ffn_hidden
                                            : m.moe.expert_ffn_hidden;
}

// Weight matrices of MLA's projections (no biases, no norms).
int64_t mla_gemm_parameters(const ModelConfig& m) {
  const MlaConfig& a = m.mla;
  const int64_t h = m.hidden;
  const int64_t heads = m.heads;
  const int64_t qk = a.qk_nope_head_dim + a.qk_rope_head_dim;
  const int64_t q =
      a.q_lora_rank > 0 ? h * a.q_lora_rank + int64_t{a.q_lora_rank} * heads * qk : h * heads * qk;
  const int64_t kv = h * (a.kv_lora_rank + a.qk_rope_head_dim) +
                     int64_t{a.kv_lora_rank} * heads * (a.qk_nope_head_dim + a.v_head_dim);
  const int64_t o = heads * a.v_head_dim * h;
  return q + kv + o;
}

// Forward FLOPs of the attention's projection GEMMs for `t` tokens.
double attention_gemm_flops(const ModelConfig& m, double t) {
  if (m.mla.enabled()) return 2.0 * t * static_cast<double>(mla_gemm_parameters(m));
  const double h = m.hidden;
  const double dh = m.head_dim();
  const double q = m.heads * dh;
  const double kv = m.kv_heads * dh;
  return 2.0 * t * h * (q + 2 * kv) + 2.0 * t * q * h;
}

// Forward FLOPs of the attention core (QK^T and the weighted sum of V), non-causal.
double attention_core_flops(const ModelConfig& m, double t, int seq_len, int window) {
  const int keys = window > 0 ? std::min(window, seq_len) : seq_len;
  if (m.mla.enabled()) {
    const double qk = m.mla.qk_nope_head_dim + m.mla.qk_rope_head_dim;
    return 2.0 * t * keys * m.heads * (qk + m.mla.v_head_dim);
  }
  const double q = m.heads * static_cast<double>(m.head_dim());
  return 4.0 * t * keys * q;
}

// Σ_{p=1..n} ⌊p/r⌋: ⌊p/r⌋ = j for r values of p each (j ≥ 1), the last block partly:
// r·Q(Q−1)/2 + Q·(n − Q·r + 1), Q = ⌊n/r⌋.
double floor_sum(int64_t n, int64_t r) {
  if (n <= 0 || r <= 0) return 0;
  const double q = static_cast<double>(n / r);
  return static_cast<double>(r) * q * (q - 1) / 2 + q * static_cast<double>(n - (n / r) * r + 1);
}

// Σ_{p=1..n} min(⌊p/r⌋, k): from p = k·r on every term is k.
double capped_floor_sum(int64_t n, int64_t r, int64_t k) {
  if (k <= 0 || n / r <= k) return floor_sum(n, r);
  return floor_sum(k * r - 1, r) + static_cast<double>(k) * static_cast<double>(n - k * r + 1);
}

// The weights of model.csa's shared projections (no norms): W_DQ h·r_q, W_UQ r_q·a·d_h, W_KV
// h·g·d_h, the grouped W_O1 a·d_h·r_o (o_groups blocks of (a/o_groups)·d_h × r_o) and W_O2
// (o_groups·r_o)·h.
int64_t csa_gemm_parameters(const ModelConfig& m) {
  const CsaConfig& a = m.csa;
  const int64_t h = m.hidden;
  const int64_t q = int64_t{m.heads} * m.head_dim();
  const int64_t kv = int64_t{m.kv_heads} * m.head_dim();
  return h * a.q_lora_rank + int64_t{a.q_lora_rank} * q + h * kv + q * a.o_lora_rank +
         int64_t{a.o_groups} * a.o_lora_rank * h;
}

// The GEMM weights of layer `layer`'s compressors and indexer (csa_layer_parameters without the
// position biases and norms).
int64_t csa_layer_gemm_parameters(const ModelConfig& m, int layer) {
  const CsaConfig& a = m.csa;
  const int r = a.ratio(layer);
  if (!a.enabled() || r <= 0) return 0;
  const int64_t h = m.hidden;
  const int64_t o = a.overlap(layer);
  const int64_t kv = int64_t{m.kv_heads} * m.head_dim();
  int64_t p = 2 * h * o * kv;
  if (a.indexed(layer)) {
    p += int64_t{a.q_lora_rank} * a.index_heads * a.index_head_dim + h * a.index_heads +
         2 * h * o * a.index_head_dim;
  }
  return p;
}

}  // namespace

int64_t lora_parameters(const ModelConfig& m, const LoraConfig& lora, int layer) {
  if (!lora.enabled()) return 0;
  const int64_t r = lora.rank;
  const int64_t h = m.hidden;
  int64_t p = 0;
  if (m.has_attention(layer) && !m.mla.enabled() && !m.csa.enabled()) {
    const int64_t q = int64_t{m.heads} * m.head_dim();
    const int64_t kv = int64_t{m.kv_heads} * m.head_dim();
    if (lora.targets_layer("qkv")) p += r * (h + q + 2 * kv);
    if (lora.targets_layer("proj")) p += r * (q + h);
  }
  if (m.has_mlp(layer) && !m.is_moe_layer(layer)) {
    const int64_t f = m.ffn_hidden;
    const int64_t fc1_out = m.activation == Activation::kSwiglu ? 2 * f : f;
    if (lora.targets_layer("fc1")) p += r * (h + fc1_out);
    if (lora.targets_layer("fc2")) p += r * (f + h);
  }
  return p;
}

int64_t padded_vocab(const ModelConfig& m, int tp) {
  const int64_t multiple = 128LL * tp;
  return (m.vocab + multiple - 1) / multiple * multiple;
}

int attention_window(const ModelConfig& m, int layer) {
  if (m.sliding_window <= 0) return 0;
  const int n = m.sliding_window_pattern;
  if (n > 0 && (layer + 1) % n == 0) return 0;
  return m.sliding_window;
}

int64_t attention_parameters(const ModelConfig& m) {
  const int64_t h = m.hidden;
  const int64_t sinks = m.attention_sinks ? m.heads : 0;
  if (m.csa.enabled()) {
    // The shared projections and the norms of the query latent and of the K/V.
    return csa_gemm_parameters(m) + norm_parameters(m, m.csa.q_lora_rank) +
           norm_parameters(m, int64_t{m.kv_heads} * m.head_dim()) + sinks;
  }
  if (m.mla.enabled()) {
    const MlaConfig& a = m.mla;
    const int64_t heads = m.heads;
    const int64_t qk = a.qk_nope_head_dim + a.qk_rope_head_dim;
    int64_t p = mla_gemm_parameters(m) + norm_parameters(m, a.kv_lora_rank);
    if (a.q_lora_rank > 0) p += norm_parameters(m, a.q_lora_rank);
    if (m.linear_bias) {
      p += (a.q_lora_rank > 0 ? a.q_lora_rank : 0) + heads * qk;
      p += a.kv_lora_rank + a.qk_rope_head_dim + heads * (a.qk_nope_head_dim + a.v_head_dim) + h;
    }
    return p + sinks;
  }
  const int64_t dh = m.head_dim();
  const int64_t q = static_cast<int64_t>(m.heads) * dh;
  const int64_t kv = static_cast<int64_t>(m.kv_heads) * dh;
  int64_t p = h * (q + 2 * kv) + q * h;
  if (m.linear_bias) p += (q + 2 * kv) + h;
  // QK-norm: one head_dim-wide norm for the queries, one for the keys.
  if (m.qk_layernorm) p += 2 * norm_parameters(m, dh);
  return p + sinks;
}

double csa_window_keys(const ModelConfig& m, int seq_len, bool causal) {
  const double s = seq_len;
  const double w = std::min<double>(m.sliding_window, s);
  if (!causal || s <= 0) return w;
  return (w * (w + 1) / 2 + (s - w) * w) / s;
}

double csa_compressed_keys(const ModelConfig& m, int layer, int seq_len, bool causal) {
  const CsaConfig& a = m.csa;
  const int64_t r = a.ratio(layer);
  if (!a.enabled() || r <= 0 || seq_len <= 0) return 0;
  const int64_t k = a.indexed(layer) ? a.index_topk : 0;
  if (!causal) {
    const int64_t all = seq_len / r;
    return static_cast<double>(k > 0 ? std::min(all, k) : all);
  }
  return capped_floor_sum(seq_len, r, k) / seq_len;
}

double csa_index_candidates(const ModelConfig& m, int layer, int seq_len, bool causal) {
  const CsaConfig& a = m.csa;
  if (!a.enabled() || !a.indexed(layer) || seq_len <= 0) return 0;
  const int64_t r = a.ratio(layer);
  if (!causal) return static_cast<double>(seq_len / r);
  return floor_sum(seq_len, r) / seq_len;
}

int64_t csa_layer_parameters(const ModelConfig& m, int layer) {
  const CsaConfig& a = m.csa;
  const int r = a.ratio(layer);
  if (!a.enabled() || r <= 0) return 0;
  const int64_t o = a.overlap(layer);
  const int64_t kv = int64_t{m.kv_heads} * m.head_dim();
  int64_t p = csa_layer_gemm_parameters(m, layer) + r * o * kv + norm_parameters(m, kv);
  if (a.indexed(layer)) p += r * o * a.index_head_dim + norm_parameters(m, a.index_head_dim);
  return p;
}

int64_t hyper_connection_parameters(const ModelConfig& m) {
  const int64_t n = m.hyper_connections;
  if (n <= 1) return 0;
  const int64_t mix = n * n + 2 * n;
  return 2 * (n * m.hidden * mix + mix + 3);
}

double csa_attention_forward_flops(const ModelConfig& m, int64_t tokens, int seq_len, int layer,
                                   bool causal) {
  const CsaConfig& a = m.csa;
  const double t = static_cast<double>(tokens);
  const double weights =
      static_cast<double>(csa_gemm_parameters(m) + csa_layer_gemm_parameters(m, layer));
  const double keys =
      csa_window_keys(m, seq_len, causal) + csa_compressed_keys(m, layer, seq_len, causal);
  const double core = 4.0 * t * m.heads * keys * m.head_dim();
  const double index =
      2.0 * t * a.index_heads * csa_index_candidates(m, layer, seq_len, causal) * a.index_head_dim;
  return 2.0 * t * weights + core + index;
}

double hyper_connection_forward_flops(const ModelConfig& m, int64_t tokens) {
  const double n = m.hyper_connections;
  if (n <= 1) return 0;
  return 2 * 2.0 * static_cast<double>(tokens) * n * m.hidden * (n * n + 2 * n);
}

int64_t mamba_parameters(const ModelConfig& m) {
  const MambaConfig& a = m.mamba;
  if (!a.enabled()) return 0;
  const int64_t h = m.hidden;
  const int64_t d = a.d_inner();
  const int64_t c = a.conv_dim();
  const int64_t in = a.in_proj_width();
  int64_t p = h * in                            // in_proj [z | x | B | C | dt]
              + int64_t{a.conv_kernel} * c + c  // depthwise conv1d, with bias (conv_bias)
              + 3 * int64_t{a.heads}            // A_log, D, dt_bias per head
              + d                               // gated RMSNorm
              + d * h;                          // out_proj
  if (m.linear_bias) p += in + h;
  return p;
}

int64_t dense_mlp_parameters(const ModelConfig& m) { return mlp_parameters(m, m.ffn_hidden); }

int64_t routed_expert_parameters(const ModelConfig& m) {
  return m.moe.enabled() ? mlp_parameters(m, m.moe.expert_ffn_hidden, m.moe.expert_width(m.hidden))
                         : 0;
}

int64_t latent_projection_parameters(const ModelConfig& m, int layer) {
  if (!m.is_moe_layer(layer) || m.moe.latent_size <= 0) return 0;
  const int64_t h = m.hidden;
  const int64_t w = m.moe.latent_size;
  return 2 * h * w + (m.linear_bias ? w + h : 0);
}

int64_t expert_parameters(const ModelConfig& m, int layer) {
  return m.is_moe_layer(layer) ? m.moe.experts * routed_expert_parameters(m) : 0;
}

int64_t shared_expert_parameters(const ModelConfig& m, int layer) {
  if (!m.is_moe_layer(layer)) return 0;
  return m.moe.shared_experts * mlp_parameters(m, shared_expert_ffn(m));
}

int64_t router_parameters(const ModelConfig& m, int layer) {
  if (!m.is_moe_layer(layer)) return 0;
  return int64_t{m.hidden} * m.moe.experts + (m.linear_bias ? m.moe.experts : 0);
}

int64_t layer_parameters(const ModelConfig& m) {
  return attention_parameters(m) + dense_mlp_parameters(m) + 2 * norm_parameters(m, m.hidden);
}

int64_t layer_parameters(const ModelConfig& m, int layer) {
  if (m.is_hybrid()) {
    const int64_t norm = norm_parameters(m, m.hidden);
    if (m.is_mamba_layer(layer)) return norm + mamba_parameters(m);
    if (m.has_attention(layer)) return norm + attention_parameters(m);
    if (m.is_moe_layer(layer)) return norm + moe_block_parameters(m, layer);
    return norm + dense_mlp_parameters(m);
  }
  const int64_t common = attention_parameters(m) + csa_layer_parameters(m, layer) +
                         hyper_connection_parameters(m) + 2 * norm_parameters(m, m.hidden);
  if (!m.is_moe_layer(layer)) return common + dense_mlp_parameters(m);
  return common + moe_block_parameters(m, layer);
}

int64_t layer_active_parameters(const ModelConfig& m, int layer) {
  if (!m.is_moe_layer(layer)) return layer_parameters(m, layer);
  return layer_parameters(m, layer) -
         int64_t{m.moe.experts - m.moe.top_k} * routed_expert_parameters(m);
}

int mtp_mlp_layer(const ModelConfig& m) {
  if (!m.is_hybrid()) return m.layers - 1;
  for (int i = m.layers - 1; i >= 0; --i) {
    if (m.has_mlp(i)) return i;
  }
  return -1;
}

int64_t mtp_module_parameters(const ModelConfig& m) {
  if (m.mtp_layers <= 0) return 0;
  const int64_t h = m.hidden;
  // A hybrid's block: an attention layer (its norm and attention) and a copy of the MLP layer.
  const int64_t block = m.is_hybrid() ? norm_parameters(m, h) + attention_parameters(m) +
                                            layer_parameters(m, mtp_mlp_layer(m))
                                      : layer_parameters(m, m.layers - 1);
  return block + 2 * h * h + 3 * norm_parameters(m, h);
}

int mtp_weight_modules(const ModelConfig& m) {
  return m.mtp_repeated_layer ? std::min(m.mtp_layers, 1) : m.mtp_layers;
}

int64_t embedding_parameters(const ModelConfig& m, int tp, int seq_len) {
  int64_t p = padded_vocab(m, tp) * m.hidden;
  if (m.position_embedding == PositionEmbedding::kLearned) {
    p += static_cast<int64_t>(seq_len) * m.hidden;
  }
  return p;
}

int64_t total_parameters(const ModelConfig& m, int tp, int seq_len) {
  int64_t p = 0;
  for (int i = 0; i < m.layers; ++i) p += layer_parameters(m, i);
  p += embedding_parameters(m, tp, seq_len);
  p += norm_parameters(m, m.hidden);  // final norm
  if (!m.tied_embeddings) p += padded_vocab(m, tp) * m.hidden;
  return p;
}

int64_t active_parameters(const ModelConfig& m, int tp, int seq_len) {
  int64_t p = total_parameters(m, tp, seq_len);
  for (int i = 0; i < m.layers; ++i) p -= layer_parameters(m, i) - layer_active_parameters(m, i);
  return p;
}

double attention_forward_flops(const ModelConfig& m, int64_t tokens, int seq_len, int window) {
  const double t = static_cast<double>(tokens);
  return attention_gemm_flops(m, t) + attention_core_flops(m, t, seq_len, window);
}

double attention_core_forward_flops(const ModelConfig& m, int64_t tokens, int seq_len, int window) {
  return attention_core_flops(m, static_cast<double>(tokens), seq_len, window);
}

double mamba_scan_forward_flops(const ModelConfig& m, int64_t tokens, int seq_len) {
  const MambaConfig& a = m.mamba;
  if (!a.enabled()) return 0;
  const double t = static_cast<double>(tokens);
  const double q = std::min(a.chunk, seq_len);
  const double n = a.state;
  const double d = static_cast<double>(a.d_inner());
  return t * (2.0 * q * n * a.groups + 2.0 * d * (q + 2.0 * n));
}

double mamba_forward_flops(const ModelConfig& m, int64_t tokens, int seq_len) {
  const MambaConfig& a = m.mamba;
  if (!a.enabled()) return 0;
  const double t = static_cast<double>(tokens);
  const double h = m.hidden;
  const double d = static_cast<double>(a.d_inner());
  const double in_proj = 2.0 * t * h * static_cast<double>(a.in_proj_width());
  const double conv = 2.0 * t * a.conv_kernel * static_cast<double>(a.conv_dim());
  const double out_proj = 2.0 * t * d * h;
  return in_proj + conv + mamba_scan_forward_flops(m, tokens, seq_len) + out_proj;
}

double mlp_forward_flops(const ModelConfig& m, int64_t tokens, int layer) {
  const double t = static_cast<double>(tokens);
  if (!m.has_mlp(layer)) return 0;
  if (!m.is_moe_layer(layer)) {
    const double h = m.hidden;
    const double f = m.ffn_hidden;
    const double mlp_gemms = m.activation == Activation::kSwiglu ? 3.0 : 2.0;
    return 2.0 * t * h * f * mlp_gemms;
  }
  const MoeConfig& e = m.moe;
  const int64_t latent = e.latent_size > 0 ? 2 * int64_t{m.hidden} * e.latent_size : 0;
  const double weights = static_cast<double>(
      e.top_k * mlp_gemm_parameters(m, e.expert_ffn_hidden, e.expert_width(m.hidden)) +
      e.shared_experts * mlp_gemm_parameters(m, shared_expert_ffn(m)) +
      int64_t{m.hidden} * e.experts + latent);
  return 2.0 * t * weights;
}

double layer_forward_flops(const ModelConfig& m, int64_t tokens, int seq_len) {
  const double t = static_cast<double>(tokens);
  const double h = m.hidden;
  const double f = m.ffn_hidden;
  const double mlp_gemms = m.activation == Activation::kSwiglu ? 3.0 : 2.0;
  // Summed as (attention GEMMs + MLP) + core, the order of the formula's terms.
  return (attention_gemm_flops(m, t) + 2.0 * t * h * f * mlp_gemms) +
         attention_core_flops(m, t, seq_len, 0);
}

double layer_forward_flops(const ModelConfig& m, int64_t tokens, int seq_len, int layer) {
  const double t = static_cast<double>(tokens);
  if (m.is_hybrid()) {
    if (m.is_mamba_layer(layer)) return mamba_forward_flops(m, tokens, seq_len);
    if (m.has_attention(layer)) {
      return attention_forward_flops(m, tokens, seq_len, attention_window(m, layer));
    }
    return mlp_forward_flops(m, tokens, layer);
  }
  if (m.csa.enabled()) {
    return (csa_attention_forward_flops(m, tokens, seq_len, layer, /*causal=*/false) +
            mlp_forward_flops(m, tokens, layer)) +
           hyper_connection_forward_flops(m, tokens);
  }
  return (attention_gemm_flops(m, t) + mlp_forward_flops(m, tokens, layer)) +
         attention_core_flops(m, t, seq_len, attention_window(m, layer));
}

double model_flops_per_iteration(const Scenario& s) {
  const ModelConfig& m = s.model;
  const int seq = s.training.seq_len;
  const int64_t tokens = static_cast<int64_t>(s.training.global_batch) * seq;
  // Layers come in a few kinds (dense or MoE MLP, full or windowed attention; a hybrid's pattern
  // character); each kind is counted once and multiplied, so a dense model sums exactly L × one
  // layer.
  struct Kind {
    char symbol;  // a hybrid's pattern character, else 'T'
    bool moe;
    int window;
    int ratio;  // model.csa's compression ratio
    int first;
    int count;
  };
  std::vector<Kind> kinds;
  for (int i = 0; i < m.layers; ++i) {
    const char symbol = m.is_hybrid() ? m.hybrid_pattern[i] : 'T';
    const bool moe = m.is_moe_layer(i);
    const int window = attention_window(m, i);
    const int ratio = m.csa.ratio(i);
    auto it = std::find_if(kinds.begin(), kinds.end(), [&](const Kind& k) {
      return k.symbol == symbol && k.moe == moe && k.window == window && k.ratio == ratio;
    });
    if (it == kinds.end()) {
      kinds.push_back(Kind{symbol, moe, window, ratio, i, 1});
    } else {
      ++it->count;
    }
  }
  double layers = 0;
  for (const Kind& k : kinds) layers += layer_forward_flops(m, tokens, seq, k.first) * k.count;
  const double logits = 2.0 * static_cast<double>(tokens) * m.hidden * m.vocab;
  double forward = layers + logits;
  if (m.mtp_layers > 0) {
    // Each module: the projection of [norm(h); norm(embedding)] (2h → h), a block like the
    // last layer with full attention, and the shared output head.
    const double t = static_cast<double>(tokens);
    if (m.csa.enabled()) {
      // Module d attends as "layer" layers + d (its model.csa.compress_ratios entry).
      for (int d = 0; d < m.mtp_layers; ++d) {
        forward += 2.0 * t * 2.0 * m.hidden * m.hidden +
                   (csa_attention_forward_flops(m, tokens, seq, m.layers + d, false) +
                    hyper_connection_forward_flops(m, tokens) +
                    mlp_forward_flops(m, tokens, mtp_mlp_layer(m))) +
                   logits;
      }
    } else {
      const double module = 2.0 * t * 2.0 * m.hidden * m.hidden +
                            (attention_forward_flops(m, tokens, seq, 0) +
                             mlp_forward_flops(m, tokens, mtp_mlp_layer(m))) +
                            logits;
      forward += module * m.mtp_layers;
    }
  }
  return 3.0 * forward;
}

double causal_model_flops_per_iteration(const Scenario& s) {
  const ModelConfig& m = s.model;
  const int seq = s.training.seq_len;
  const int64_t tokens = static_cast<int64_t>(s.training.global_batch) * seq;
  // A causal query i attends to min(i, w) keys (w = the window, or the sequence): on average
  // (w(w+1)/2 + (s − w)·w)/s of the w that the non-causal count charges.
  auto causal_share = [&](int window) {
    const double sl = seq;
    const double w = window > 0 ? std::min<double>(window, sl) : sl;
    return (w * (w + 1) / 2 + (sl - w) * w) / sl / w;
  };
  double saved = 0;  // forward attention-core FLOPs the non-causal count adds
  if (m.csa.enabled()) {
    for (int i = 0; i < m.layers + m.mtp_layers; ++i) {
      saved += csa_attention_forward_flops(m, tokens, seq, i, false) -
               csa_attention_forward_flops(m, tokens, seq, i, true);
    }
    return model_flops_per_iteration(s) - 3.0 * saved;
  }
  for (int i = 0; i < m.layers; ++i) {
    if (!m.has_attention(i)) continue;
    const int window = attention_window(m, i);
    saved += attention_core_forward_flops(m, tokens, seq, window) * (1 - causal_share(window));
  }
  if (m.mtp_layers > 0) {
    saved += attention_core_forward_flops(m, tokens, seq, 0) * (1 - causal_share(0)) * m.mtp_layers;
  }
  return model_flops_per_iteration(s) - 3.0 * saved;
}

std::vector<int> stage_layer_ids(const Scenario& s, int stage) {
  const ParallelismConfig& p = s.parallelism;
  std::vector<int> ids;
  if (p.vpp <= 1) {
    const std::vector<int> sizes = stage_layers(s);
    int first = 0;
    for (int k = 0; k < stage; ++k) first += sizes[k];
    for (int i = 0; i < sizes[stage]; ++i) ids.push_back(first + i);
    return ids;
  }
  const std::vector<int> chunks = chunk_layers(s);
  int first = 0;
  for (int k = 0; k < static_cast<int>(chunks.size()); ++k) {
    if (k % p.pp == stage) {
      for (int i = 0; i < chunks[k]; ++i) ids.push_back(first + i);
    }
    first += chunks[k];
  }
  return ids;
}

}  // namespace preflight
