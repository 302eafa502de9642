#include "model/transformer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

#include "config/loader.h"

namespace preflight {
namespace {

ModelConfig preset(const char* name) {
  StatusOr<ModelConfig> m = load_model_preset(name);
  EXPECT_TRUE(m.ok()) << m.status().message();
  return *m;
}

// A GPT layer (MHA, 4h GELU MLP) of hidden size h with a head count that divides it.
ModelConfig gpt(int h, int heads) {
  ModelConfig m;
  m.layers = 2;
  m.hidden = h;
  m.heads = heads;
  m.kv_heads = heads;
  m.ffn_hidden = 4 * h;
  m.vocab = 50257;
  return m;
}

TEST(PaddedVocab, PadsToMultipleOf128TimesTp) {
  ModelConfig m = gpt(1024, 16);
  // 50257 → ⌈50257/128⌉·128 = 393·128 = 50304; tp 8 → ⌈50257/1024⌉·1024 = 50·1024 = 51200.
  EXPECT_EQ(padded_vocab(m, 1), 50304);
  EXPECT_EQ(padded_vocab(m, 2), 50432);  // ⌈50257/256⌉·256 = 197·256
  EXPECT_EQ(padded_vocab(m, 8), 51200);
  m.vocab = 32000;  // already a multiple of 128 (250·128): unchanged at tp 1
  EXPECT_EQ(padded_vocab(m, 1), 32000);
  EXPECT_EQ(padded_vocab(m, 8), 32768);  // 32·1024
}

TEST(LayerParameters, GptLayerIs12hSquaredPlus13h) {
  // QKV 3h² + 3h, proj h² + h, fc1 4h² + 4h, fc2 4h² + h, two LayerNorms 4h: 12h² + 13h.
  const ModelConfig m = gpt(1024, 16);
  const int64_t h = 1024;
  EXPECT_EQ(layer_parameters(m), 12 * h * h + 13 * h);
}

TEST(LayerParameters, SwigluGqaWithoutBias) {
  // LLaMA-style: q and o h² each, k and v h·(g·dh) each, three MLP matrices h·F, two RMSNorms.
  ModelConfig m = gpt(4096, 32);
  m.kv_heads = 8;
  m.ffn_hidden = 14336;
  m.activation = Activation::kSwiglu;
  m.norm = Norm::kRmsNorm;
  m.linear_bias = false;
  const int64_t h = 4096, kv = 8 * 128, f = 14336;
  EXPECT_EQ(layer_parameters(m), 2 * h * h + 2 * h * kv + 3 * h * f + 2 * h);
}

TEST(TotalParameters, Gpt3_175bIsAbout174_6Billion) {
  const ModelConfig m = preset("gpt3-175b");
  // 96·(12h² + 13h) + 50304·h + 2048·h + 2h with h = 12288:
  // 173,961,510,912 + 618,135,552 + 25,165,824 + 24,576 = 174,604,836,864.
  const int64_t p = total_parameters(m, 1, 2048);
  EXPECT_EQ(p, 174'604'836'864);
  EXPECT_NEAR(static_cast<double>(p) / 175e9, 1.0, 0.005);
}

TEST(TotalParameters, Llama2_7bIs6_74Billion) {
  const ModelConfig m = preset("llama2-7b");
  ASSERT_FALSE(m.tied_embeddings);
  ASSERT_EQ(m.activation, Activation::kSwiglu);
  ASSERT_FALSE(m.linear_bias);
  // 32·(4h² + 3·h·11008 + 2h) + 2·32000·h (untied input and output) + h (final RMSNorm),
  // h = 4096: 6,738,415,616, the count of the released checkpoint. RoPE adds no parameters.
  EXPECT_EQ(total_parameters(m, 1, 4096), 6'738'415'616);
}

TEST(TotalParameters, TiedEmbeddingIsCountedOnce) {
  ModelConfig m = gpt(1024, 16);
  const int64_t tied = total_parameters(m, 1, 2048);
  m.tied_embeddings = false;
  EXPECT_EQ(total_parameters(m, 1, 2048) - tied, 50304 * 1024);
}

TEST(EmbeddingParameters, LearnedPositionsAddSeqTimesHidden) {
  ModelConfig m = gpt(1024, 16);
  EXPECT_EQ(embedding_parameters(m, 1, 2048), (50304 + 2048) * 1024);
  m.position_embedding = PositionEmbedding::kRope;
  EXPECT_EQ(embedding_parameters(m, 1, 2048), 50304 * 1024);
  EXPECT_EQ(embedding_parameters(m, 8, 2048), 51200 * 1024);  // padded for tp 8
}

TEST(LayerForwardFlops, GptLayerIs24bsh2Plus4bs2h) {
  // Narayanan et al. 2021: 24·b·s·h² + 4·b·s²·h. b = 2, s = 2048, h = 4096:
  // 24·2·2048·4096² + 4·2·2048²·4096 = 1,649,267,441,664 + 137,438,953,472 = 1,786,706,395,136.
  const ModelConfig m = gpt(4096, 32);
  const double b = 2, s = 2048, h = 4096;
  const double flops = layer_forward_flops(m, 2 * 2048, 2048);
  EXPECT_EQ(flops, 24 * b * s * h * h + 4 * b * s * s * h);
  EXPECT_EQ(flops, 1'786'706'395'136.0);
}

TEST(LayerForwardFlops, GqaAndSwigluShrinkAndGrowTheGemms) {
  // T tokens: QKV 2·T·h·(h + 2·kv), proj 2·T·h², SwiGLU MLP 3·2·T·h·F, attention 4·T·s·h.
  ModelConfig m = gpt(4096, 32);
  m.kv_heads = 8;
  m.ffn_hidden = 14336;
  m.activation = Activation::kSwiglu;
  const double t = 4096, s = 4096, h = 4096, kv = 1024, f = 14336;
  const double want = 2 * t * h * (h + 2 * kv) + 2 * t * h * h + 6 * t * h * f + 4 * t * s * h;
  EXPECT_EQ(layer_forward_flops(m, 4096, 4096), want);
}

TEST(ModelFlops, MatchesNarayananEquation3) {
  // 72·B·s·l·h²·(1 + s/(6h) + V/(12·l·h)) with the unpadded vocabulary (Narayanan et al. 2021).
  StatusOr<Scenario> s = load_scenario_text("", "", {});
  ASSERT_TRUE(s.ok()) << s.status().message();
  const double B = s->training.global_batch, seq = s->training.seq_len;
  const double l = s->model.layers, h = s->model.hidden, V = s->model.vocab;
  const double want = 72 * B * seq * l * h * h * (1 + seq / (6 * h) + V / (12 * l * h));
  EXPECT_NEAR(model_flops_per_iteration(*s) / want, 1.0, 1e-12);
}

}  // namespace
}  // namespace preflight
