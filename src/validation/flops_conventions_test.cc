#include "validation/flops_conventions.h"

#include <gtest/gtest.h>

#include "config/loader.h"
#include "model/transformer.h"

namespace preflight {
namespace {

Scenario with_model(const char* preset, int seq) {
  Scenario s;
  StatusOr<ModelConfig> m = load_model_preset(preset);
  EXPECT_TRUE(m.ok()) << m.status().message();
  s.model = *m;
  s.training.seq_len = seq;
  s.training.global_batch = 2;
  return s;
}

TEST(MegatronModelFlops, HybridBranchForNemotron3Nano) {
  // Megatron-Core's hybrid formula per token, s = 8192, causal core (research notes §6.3):
  // Mamba with d_in = 2h = 5376: 2·2688·(2·5376 + 2·8·128 + 64) + 7·5376·128 + 2·5376·2688
  // = 102,875,136; attention 4·2688·(4096/2688)·(2688 + 2688·2/32 + 8192/2) = 113,901,568;
  // MoE 4·2688·1856·6 + 4·2688·3712 = 159,645,696; logits 2·2688·131072 = 704,643,072.
  // 3·(23·102,875,136 + 6·113,901,568 + 23·159,645,696 + 704,643,072) = 22,278,094,848 per
  // token (the notes' 22.3 GFLOP), against 22,015,279,104 by Preflight's true shapes.
  const Scenario s = with_model("nemotron3-nano", 8192);
  const double tokens = 2 * 8192.0;
  EXPECT_NEAR(megatron_model_flops(s, 0.5) / tokens / 22'278'094'848.0, 1.0, 1e-12);
  EXPECT_NEAR(model_flops_per_iteration(s) / tokens / 22'015'279'104.0, 1.0, 1e-12);
}

TEST(MegatronModelFlops, HybridBranchCountsLatentMoeAndMtpDepths) {
  // Super: latent MoE 4·1024·2688·22 + 4·4096·1024 + 4·4096·5376 per token, Mamba with
  // d_in = 8192 (= heads·head_dim here), and two MTP depths of "*E" with their logits: 84.7
  // GFLOP per token, the research notes' figure (§6.3).
  const Scenario s = with_model("nemotron3-super", 8192);
  const double t = 2 * 8192.0, h = 4096;
  const double mamba = 2 * h * (2 * 8192 + 2 * 8 * 128 + 128) + 7 * 8192.0 * 128 + 2 * 8192 * h;
  const double attention = 4 * h * (4096 / h) * (h + h * 2 / 32 + 8192 / 2.0);
  const double moe = 4.0 * 1024 * 2688 * 22 + 4 * h * 1024 + 4 * h * 5376;
  const double want =
      3 * t * (40 * mamba + 8 * attention + 40 * moe + 2 * (attention + moe) + 2 * h * 131072 * 3);
  EXPECT_NEAR(megatron_model_flops(s, 0.5) / want, 1.0, 1e-12);
  EXPECT_NEAR(want / t / 84.7e9, 1.0, 0.001);
}

}  // namespace
}  // namespace preflight
