// Hybrid Mamba-2/attention models in the model arithmetic (transformer.h): Mamba-2 layer
// parameters and FLOPs in closed form, the Nemotron presets against their published counts, and
// a pattern of attention-only and MLP-only layers against the transformer it spells.
#include <gtest/gtest.h>

#include <cstdint>

#include "config/loader.h"
#include "model/transformer.h"

namespace preflight {
namespace {

ModelConfig preset(const char* name) {
  StatusOr<ModelConfig> m = load_model_preset(name);
  EXPECT_TRUE(m.ok()) << m.status().message();
  return *m;
}

TEST(MambaParameters, NemotronNanoMixerIs38_74Million) {
  // h 2688, H 64 × P 64 = d 4096, G 8, N 128, K 4 (research notes §1.1, Megatron-Core
  // MambaMixer): in_proj 2688·(2·4096 + 2·8·128 + 64) = 2688·10304 = 27,697,152; conv1d over
  // c = 4096 + 2048 = 6144 channels, 4 taps + bias = 30,720; A_log, D, dt_bias 3·64 = 192;
  // gated norm 4096; out_proj 4096·2688 = 11,010,048. Sum 38,742,208; the layer adds its
  // RMSNorm, 2688.
  const ModelConfig m = preset("nemotron3-nano");
  EXPECT_EQ(mamba_parameters(m), 38'742'208);
  EXPECT_TRUE(m.is_mamba_layer(0));
  EXPECT_EQ(layer_parameters(m, 0), 38'742'208 + 2688);
  // Layer 5 is attention only: q 2688·4096, k and v 2688·256 each, o 4096·2688, its norm.
  EXPECT_TRUE(m.has_attention(5));
  EXPECT_EQ(layer_parameters(m, 5), 2688 * 4096 + 2 * 2688 * 256 + 4096 * 2688 + 2688);
  // Layer 1 is MoE only: 128 experts 2·2688·1856 each, a shared expert 2·2688·3712, the router
  // 2688·128, its norm.
  EXPECT_TRUE(m.is_moe_layer(1));
  EXPECT_FALSE(m.has_attention(1));
  EXPECT_EQ(layer_parameters(m, 1),
            int64_t{128} * 2 * 2688 * 1856 + 2 * 2688 * 3712 + 2688 * 128 + 2688);
}

TEST(MambaParameters, BiasesFollowLinearBias) {
  ModelConfig m = preset("nemotron3-nano");
  const int64_t without = mamba_parameters(m);
  m.linear_bias = true;  // in_proj (10304) and out_proj (2688) biases
  EXPECT_EQ(mamba_parameters(m) - without, 10304 + 2688);
}

TEST(TotalParameters, Nemotron3NanoIs31_6BillionWith3_6BillionActive) {
  // 23 Mamba 38,744,896 + 6 attention 23,399,040 + 23 MoE 1,297,468,032 + embedding and
  // untied output 2·131072·2688 + final norm 2688 = 31,577,937,344 (published "31.6B").
  // Active: each MoE layer keeps 6 of 128 experts (9,977,856 each): 3,580,073,408, ~3.6B with
  // the embeddings (research notes §1.1).
  const ModelConfig m = preset("nemotron3-nano");
  EXPECT_EQ(total_parameters(m, 1, 8192), 31'577'937'344);
  EXPECT_NEAR(static_cast<double>(total_parameters(m, 1, 8192)) / 31.6e9, 1.0, 0.01);
  EXPECT_EQ(active_parameters(m, 1, 8192), 3'580'073'408);
  EXPECT_NEAR(static_cast<double>(active_parameters(m, 1, 8192)) / 3.6e9, 1.0, 0.01);
}

TEST(TotalParameters, Nemotron3SuperMatchesItsCheckpoint) {
  // Latent MoE: 512 experts of 2·1024·2688 = 5,505,024, the projections 2·4096·1024, the
  // shared expert 2·4096·5376, the router 4096·512. The checkpoint's safetensors hold
  // 123,611,033,088 with one MTP module of 2,942,324,736 (research notes §1.2), of which
  // 20,992 are the routers' expert biases (512 on each of 40 + 1 MoE layers), buffers not
  // counted here: 123,611,012,096 = main model + one module. Active 12,770,216,960 (22 of 512).
  const ModelConfig m = preset("nemotron3-super");
  EXPECT_EQ(routed_expert_parameters(m), 2 * 1024 * 2688);
  EXPECT_EQ(latent_projection_parameters(m, 1), 2 * 4096 * 1024);
  EXPECT_EQ(latent_projection_parameters(m, 0), 0);  // a Mamba layer
  EXPECT_EQ(mtp_module_parameters(m), 2'942'324'736);
  EXPECT_EQ(mtp_weight_modules(m), 1);  // two depths share one module's weights
  EXPECT_EQ(total_parameters(m, 1, 8192) + mtp_module_parameters(m), 123'611'033'088 - 41 * 512);
  EXPECT_EQ(active_parameters(m, 1, 8192), 12'770'216'960);
}

TEST(TotalParameters, NemotronHAndUltraNearTheirNames) {
  // Nemotron-H 8B / 47B / 56B and Nemotron 3 Ultra 550B-A55B against the totals their names
  // give: 8.10B, 46.79B, 56.32B and 549.31B here (the 8B's embedding and untied head alone are
  // 1.07B); Ultra's active 56.06B against "A55B" (names round).
  struct Case {
    const char* name;
    double total;
  };
  for (const Case& c : {Case{"nemotron-h-8b", 8e9}, Case{"nemotron-h-47b", 47e9},
                        Case{"nemotron-h-56b", 56e9}, Case{"nemotron3-ultra", 550e9}}) {
    SCOPED_TRACE(c.name);
    const ModelConfig m = preset(c.name);
    EXPECT_NEAR(static_cast<double>(total_parameters(m, 1, 8192)) / c.total, 1.0, 0.02);
  }
  const ModelConfig ultra = preset("nemotron3-ultra");
  EXPECT_NEAR(static_cast<double>(active_parameters(ultra, 1, 8192)) / 55e9, 1.0, 0.03);
}

TEST(MambaForwardFlops, NemotronNanoLayerPerToken) {
  // Per token (research notes §6.2, Q 128): in_proj 2·2688·10304 = 55,394,304; conv1d
  // 2·4·6144 = 49,152; SSD 2·Q·N·G + 2·d·(Q + 2N) = 262,144 + 3,145,728 = 3,407,872; out_proj
  // 2·4096·2688 = 22,020,096. Total 80,871,424 (the notes' 80.9M).
  const ModelConfig m = preset("nemotron3-nano");
  EXPECT_EQ(mamba_scan_forward_flops(m, 1, 8192), 3'407'872);
  EXPECT_EQ(mamba_forward_flops(m, 1, 8192), 80'871'424);
  EXPECT_EQ(layer_forward_flops(m, 1000, 8192, 0), 1000 * 80'871'424.0);
  // A sequence shorter than a chunk scans in chunks of s: Q = 64.
  EXPECT_EQ(mamba_scan_forward_flops(m, 1, 64), 2.0 * 64 * 128 * 8 + 2.0 * 4096 * (64 + 256));
  // An MoE-only layer: 6 experts and the shared expert (2 GEMMs each) and the router.
  EXPECT_EQ(layer_forward_flops(m, 1, 8192, 1),
            2.0 * (6 * 2 * 2688 * 1856 + 2 * 2688 * 3712 + 2688 * 128));
}

TEST(MlpForwardFlops, LatentMoeCountsExpertsInTheLatentAndBothProjections) {
  // Super: 22 experts of 2·1024·2688, the shared expert 2·4096·5376, the router 4096·512, the
  // projections 2·4096·1024 (Megatron-Bridge flop_utils moe_layer_flops, latent branch).
  const ModelConfig m = preset("nemotron3-super");
  EXPECT_EQ(mlp_forward_flops(m, 1, 1),
            2.0 * (22.0 * 2 * 1024 * 2688 + 2 * 4096 * 5376 + 4096 * 512 + 2 * 4096 * 1024));
  EXPECT_EQ(mlp_forward_flops(m, 1, 0), 0);  // a Mamba layer has no MLP
}

TEST(ModelFlops, Nemotron3NanoPerTokenInClosedForm) {
  // Per token, forward: 23 Mamba 80,871,424; 6 attention 2·2688·(4096 + 512) + 2·4096·2688
  // + core 4·s·4096 (non-causal, s = 8192) = 181,010,432; 23 MoE 160,333,824; logits
  // 2·2688·131072 = 704,643,072. × 3: 22,015,279,104 per token (Megatron's hybrid formula,
  // which takes d_inner = 2h and a causal core, gives ~22.3G; research notes §6.3).
  Scenario s;
  s.model = preset("nemotron3-nano");
  s.training.seq_len = 8192;
  s.training.global_batch = 4;
  const double tokens = 4 * 8192.0;
  EXPECT_NEAR(model_flops_per_iteration(s) / tokens / 22'015'279'104.0, 1.0, 1e-12);
}

TEST(ModelFlops, HybridMtpBlockIsAttentionAndTheLastMoeLayer) {
  // Super's two MTP depths ("*E"): each the projection 2·T·2h·h, attention with full keys, the
  // MoE block and the logits; weights of one module, compute of two.
  Scenario s;
  s.model = preset("nemotron3-super");
  s.training.seq_len = 8192;
  s.training.global_batch = 1;
  const int64_t t = 8192;
  Scenario no_mtp = s;
  no_mtp.model.mtp_layers = 0;
  const double h = 4096;
  const double module = 2.0 * t * 2 * h * h + attention_forward_flops(s.model, t, 8192, 0) +
                        mlp_forward_flops(s.model, t, 87) + 2.0 * t * h * 131072;
  EXPECT_EQ(mtp_mlp_layer(s.model), 87);
  EXPECT_NEAR((model_flops_per_iteration(s) - model_flops_per_iteration(no_mtp)) / (3 * 2 * module),
              1.0, 1e-12);
}

TEST(HybridPattern, AttentionAndMlpLayersSpellTheTransformer) {
  // "*-*-" is two transformer layers cut in halves: the same parameters and model FLOPs as a
  // 2-layer GPT (each half brings one of the layer's two norms).
  ModelConfig gpt;
  gpt.layers = 2;
  gpt.hidden = 1024;
  gpt.heads = 16;
  gpt.kv_heads = 16;
  gpt.ffn_hidden = 4096;
  gpt.vocab = 50257;
  ModelConfig hybrid = gpt;
  hybrid.layers = 4;
  hybrid.hybrid_pattern = "*-*-";
  EXPECT_EQ(layer_parameters(hybrid, 0) + layer_parameters(hybrid, 1), layer_parameters(gpt, 0));
  EXPECT_EQ(total_parameters(hybrid, 1, 2048), total_parameters(gpt, 1, 2048));
  Scenario a, b;
  a.model = gpt;
  b.model = hybrid;
  a.training.seq_len = b.training.seq_len = 2048;
  a.training.global_batch = b.training.global_batch = 8;
  EXPECT_NEAR(model_flops_per_iteration(b) / model_flops_per_iteration(a), 1.0, 1e-12);
}

}  // namespace
}  // namespace preflight
