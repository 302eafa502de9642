#include "model/transformer.h"

namespace preflight {

int64_t padded_vocab(const ModelConfig& m, int tp) {
  const int64_t multiple = 128LL * tp;
  return (m.vocab + multiple - 1) / multiple * multiple;
}

int64_t layer_parameters(const ModelConfig& m) {
  const int64_t h = m.hidden;
  const int64_t dh = m.head_dim();
  const int64_t q = static_cast<int64_t>(m.heads) * dh;
  const int64_t kv = static_cast<int64_t>(m.kv_heads) * dh;
  const int64_t f = m.ffn_hidden;
  const int64_t mlp_in = m.activation == Activation::kSwiglu ? 2 * f : f;
  int64_t p = h * (q + 2 * kv) + q * h + h * mlp_in + f * h;
  if (m.linear_bias) p += (q + 2 * kv) + h + mlp_in + h;
  const int64_t norm = m.norm == Norm::kLayerNorm ? 2 * h : h;
  return p + 2 * norm;
}

int64_t embedding_parameters(const ModelConfig& m, int tp, int seq_len) {
  int64_t p = padded_vocab(m, tp) * m.hidden;
  if (m.position_embedding == PositionEmbedding::kLearned) {
    p += static_cast<int64_t>(seq_len) * m.hidden;
  }
  return p;
}

int64_t total_parameters(const ModelConfig& m, int tp, int seq_len) {
  int64_t p = layer_parameters(m) * m.layers + embedding_parameters(m, tp, seq_len);
  p += m.norm == Norm::kLayerNorm ? 2 * m.hidden : m.hidden;  // final norm
  if (!m.tied_embeddings) p += padded_vocab(m, tp) * m.hidden;
  return p;
}

double layer_forward_flops(const ModelConfig& m, int64_t tokens, int seq_len) {
  const double t = static_cast<double>(tokens);
  const double h = m.hidden;
  const double dh = m.head_dim();
  const double q = m.heads * dh;
  const double kv = m.kv_heads * dh;
  const double f = m.ffn_hidden;
  const double mlp_gemms = m.activation == Activation::kSwiglu ? 3.0 : 2.0;
  const double gemms = 2.0 * t * h * (q + 2 * kv) + 2.0 * t * q * h + 2.0 * t * h * f * mlp_gemms;
  const double attention = 4.0 * t * seq_len * q;  // QK^T and (softmax)V, non-causal
  return gemms + attention;
}

double model_flops_per_iteration(const Scenario& s) {
  const int64_t tokens = static_cast<int64_t>(s.training.global_batch) * s.training.seq_len;
  const double forward = layer_forward_flops(s.model, tokens, s.training.seq_len) * s.model.layers +
                         2.0 * static_cast<double>(tokens) * s.model.hidden * s.model.vocab;
  return 3.0 * forward;
}

}  // namespace preflight
