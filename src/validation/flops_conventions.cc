#include "validation/flops_conventions.h"

#include "model/transformer.h"

namespace preflight {

double narayanan_eq3_flops(double b, double s, double l, double h, double v) {
  return 96.0 * b * s * l * h * h * (1.0 + s / (6.0 * h) + v / (16.0 * l * h));
}

double korthikanti_model_flops(double b, double s, double l, double h, double v) {
  return 72.0 * b * s * l * h * h * (1.0 + s / (6.0 * h) + v / (12.0 * l * h));
}

double korthikanti_selective_hfu_flops(double b, double s, double l, double h, double v) {
  return 72.0 * b * s * l * h * h * (1.0 + s / (3.0 * h) + v / (12.0 * l * h));
}

namespace {

// Megatron-Core's hybrid branch of num_floating_point_operations (mamba_layer_flops,
// attn_layer_flops, mlp_layer_flops, moe_layer_flops; Megatron-Bridge flop_utils.py the same):
// per token, forward, × 3. Its Mamba term takes d_in = 2h whatever the model's heads·head_dim.
double megatron_hybrid_flops(const Scenario& s, double causal_factor) {
  const ModelConfig& m = s.model;
  const double t = static_cast<double>(int64_t{s.training.global_batch} * s.training.seq_len);
  const double seq = s.training.seq_len;
  const double h = m.hidden;
  const double gated = m.activation == Activation::kSwiglu ? 1.5 : 1.0;
  const MambaConfig& a = m.mamba;
  const double d_in = 2 * h;
  const double mamba = 2 * t * h * (2 * d_in + 2.0 * a.groups * a.state + a.heads) +
                       7 * t * d_in * a.state + 2 * t * d_in * h;
  const double p = static_cast<double>(m.head_dim()) * m.heads / h;
  const double attention = 4 * t * h * p * (h + h * m.kv_heads / m.heads + seq * causal_factor);
  const double mlp = 4 * t * h * m.ffn_hidden * gated;
  const MoeConfig& e = m.moe;
  const double shared_ffn =
      static_cast<double>(e.shared_experts) *
      (e.shared_expert_ffn_hidden > 0 ? e.shared_expert_ffn_hidden : e.expert_ffn_hidden);
  const double w = e.expert_width(m.hidden);
  const double moe = 4 * t * w * e.expert_ffn_hidden * e.top_k * gated +
                     (e.latent_size > 0 ? 4 * t * h * w : 0.0) + 4 * t * h * shared_ffn * gated;
  double forward = 0;
  for (char c : m.hybrid_pattern) {
    forward += c == 'M' ? mamba : c == '*' ? attention : c == '-' ? mlp : moe;
  }
  // Each MTP depth: its "*E" (or "*-") block as ordinary layers, and its logits.
  forward += m.mtp_layers * (attention + (e.enabled() ? moe : mlp));
  forward += 2 * t * h * m.vocab * (1.0 + m.mtp_layers);
  return 3 * forward;
}

}  // namespace

double megatron_model_flops(const Scenario& s, double causal_factor) {
  if (s.model.is_hybrid()) return megatron_hybrid_flops(s, causal_factor);
  const ModelConfig& m = s.model;
  const int seq = s.training.seq_len;
  const int64_t tokens = int64_t{s.training.global_batch} * seq;
  const double t = static_cast<double>(tokens);
  double forward = 0;
  for (int i = 0; i < m.layers; ++i) {
    // Megatron counts every layer with full attention and leaves the router out.
    const double core = attention_core_forward_flops(m, tokens, seq, 0);
    double mlp = mlp_forward_flops(m, tokens, i);
    if (m.is_moe_layer(i)) mlp -= 2.0 * t * m.hidden * m.moe.experts;
    forward += attention_forward_flops(m, tokens, seq, 0) - (1.0 - causal_factor) * core + mlp;
  }
  const double logits = 2.0 * t * m.hidden * m.vocab;
  forward += logits;
  if (m.mtp_layers > 0) {
    const double core = attention_core_forward_flops(m, tokens, seq, 0);
    double mlp = mlp_forward_flops(m, tokens, m.layers - 1);
    if (m.is_moe_layer(m.layers - 1)) mlp -= 2.0 * t * m.hidden * m.moe.experts;
    const double module = 2.0 * t * 2.0 * m.hidden * m.hidden +
                          attention_forward_flops(m, tokens, seq, 0) -
                          (1.0 - causal_factor) * core + mlp + logits;
    forward += module * m.mtp_layers;
  }
  return 3.0 * forward;
}

}  // namespace preflight
