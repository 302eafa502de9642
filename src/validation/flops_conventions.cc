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

double megatron_model_flops(const Scenario& s, double causal_factor) {
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
