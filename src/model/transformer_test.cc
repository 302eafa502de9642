#include "model/transformer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

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

TEST(ModelFlops, CausalCountChargesEachQueryItsEarlierKeys) {
  // GPT-3 175B at s 2048: the non-causal core is 3·L·4·T·s·h; causal queries see (s+1)/2 keys
  // on average, so the causal count is smaller by 3·L·4·T·h·(s − (s+1)/2).
  StatusOr<Scenario> s = load_scenario_text("", "", {});
  ASSERT_TRUE(s.ok()) << s.status().message();
  const double T = static_cast<double>(s->training.global_batch) * s->training.seq_len;
  const double seq = s->training.seq_len, L = s->model.layers, h = s->model.hidden;
  const double saved = 3 * L * 4 * T * h * (seq - (seq + 1) / 2);
  EXPECT_NEAR(causal_model_flops_per_iteration(*s), model_flops_per_iteration(*s) - saved,
              1e-9 * model_flops_per_iteration(*s));
  // A window of 256 at s 2048: (256·257/2 + 1792·256)/2048 keys of the 256 charged.
  StatusOr<Scenario> w = load_scenario_text("", "", {"model.sliding_window=256"});
  ASSERT_TRUE(w.ok()) << w.status().message();
  const double keys = (256.0 * 257 / 2 + 1792.0 * 256) / 2048;
  const double saved_w = 3 * L * 4 * T * h * (256 - keys);
  EXPECT_NEAR(causal_model_flops_per_iteration(*w), model_flops_per_iteration(*w) - saved_w,
              1e-9 * model_flops_per_iteration(*w));
}

// ---------------------------------------------------------------------------------------------
// Mixture of experts and MLA. Published totals and active counts against the presets; each
// publisher counts "active" its own way: Mistral and Qwen include the input embedding table,
// DeepSeek and OpenAI leave it out (active_parameters includes it; the tests subtract V·h where
// the publisher does).

double billions(int64_t p) { return static_cast<double>(p) / 1e9; }

TEST(AttentionParameters, DeepSeekV3MlaProjectionsAndLatentNorms) {
  // h 7168, a 128, r_q 1536, r_kv 512, d_nope 128, d_rope 64, d_v 128:
  // W_DQ 7168·1536 + norm 1536 + W_UQ 1536·128·192 + W_DKV/W_KR 7168·576 + norm 512
  // + W_UK/W_UV 512·128·256 + W_O 128·128·7168
  // = 11,010,048 + 1,536 + 37,748,736 + 4,128,768 + 512 + 16,777,216 + 117,440,512.
  const ModelConfig m = preset("deepseek-v3");
  EXPECT_EQ(attention_parameters(m), 187'107'328);
}

TEST(AttentionParameters, MlaWithoutQueryLatentProjectsQueriesDirectly) {
  // DeepSeek-V2-Lite (r_q 0): W_Q 2048·16·192 + 2048·576 + 512 + 512·16·256 + 16·128·2048.
  const ModelConfig m = preset("deepseek-v2-lite");
  EXPECT_EQ(attention_parameters(m), 6'291'456 + 1'179'648 + 512 + 2'097'152 + 4'194'304);
}

TEST(AttentionParameters, SinksAndBiasesOfGptOss) {
  // h 2880, 64 heads of 64 (q 4096), 8 KV heads (kv 512): h·(q + 2kv) + q·h, biases
  // q + 2kv + h, one sink logit per head.
  const ModelConfig m = preset("gpt-oss-120b");
  const int64_t h = 2880, q = 4096, kv = 512;
  EXPECT_EQ(attention_parameters(m), h * (q + 2 * kv) + q * h + (q + 2 * kv + h) + 64);
}

TEST(AttentionWindow, GptOssWindowsEvenLayersLlama4ThreeOfFour) {
  const ModelConfig oss = preset("gpt-oss-120b");
  EXPECT_EQ(attention_window(oss, 0), 128);  // config.json layer_types[0] = sliding_attention
  EXPECT_EQ(attention_window(oss, 1), 0);
  EXPECT_EQ(attention_window(oss, 34), 128);
  EXPECT_EQ(attention_window(oss, 35), 0);
  const ModelConfig scout = preset("llama4-scout");
  EXPECT_EQ(attention_window(scout, 0), 8192);
  EXPECT_EQ(attention_window(scout, 2), 8192);
  EXPECT_EQ(attention_window(scout, 3), 0);  // every 4th layer: global NoPE attention
  EXPECT_EQ(attention_window(preset("llama3-8b"), 5), 0);
}

TEST(LayerParameters, DenseAndMoeLayersOfDeepSeekV3) {
  const ModelConfig m = preset("deepseek-v3");
  const int64_t h = 7168, attention = 187'107'328, expert = 3 * h * 2048;
  // Layers 0-2 dense: attention + two RMSNorms + SwiGLU MLP of 18432.
  EXPECT_FALSE(m.is_moe_layer(2));
  EXPECT_EQ(layer_parameters(m, 0), attention + 2 * h + 3 * h * 18432);
  EXPECT_EQ(layer_parameters(m, 0), layer_parameters(m));
  // Layer 3 on: router 256·h, one shared and 256 routed experts of 3·h·2048.
  ASSERT_TRUE(m.is_moe_layer(3));
  EXPECT_EQ(routed_expert_parameters(m), expert);
  EXPECT_EQ(expert_parameters(m, 3), 256 * expert);
  EXPECT_EQ(expert_parameters(m, 0), 0);
  EXPECT_EQ(shared_expert_parameters(m, 3), expert);
  EXPECT_EQ(router_parameters(m, 3), 256 * h);
  EXPECT_EQ(layer_parameters(m, 60), attention + 2 * h + 257 * expert + 256 * h);
  EXPECT_EQ(layer_active_parameters(m, 60), attention + 2 * h + 9 * expert + 256 * h);
}

TEST(TotalParameters, DeepSeekV3Is671BillionWith37BillionActive) {
  // DeepSeek-V3 report: 671B total, 37B activated per token; the MTP module (14B on Hugging
  // Face) comes on top. Here: 3 dense layers × 583,483,392 + 58 MoE layers × 11,507,286,016
  // + untied embedding and output layer 2 × 129280·7168 + final norm 7168 = 671,026,404,352.
  // Not counted: the 256 aux-loss-free routing biases per MoE layer (14,848 in all).
  const ModelConfig m = preset("deepseek-v3");
  const int64_t total = total_parameters(m, 1, 4096);
  EXPECT_EQ(total, 671'026'404'352);
  EXPECT_NEAR(billions(total) / 671.0, 1.0, 0.001);
  // Active: 8 of 256 routed experts; DeepSeek counts the output layer but not the input
  // embedding (as V2-Lite's 2.4B shows): 36.63B against the published 37B (−1.0 %).
  const int64_t embedding = 129280LL * 7168;
  const int64_t active = active_parameters(m, 1, 4096);
  EXPECT_EQ(active, total - 58LL * 248 * 3 * 7168 * 2048);
  EXPECT_NEAR(billions(active - embedding) / 37.0, 1.0, 0.015);
  // One MTP module: an MoE block 11,507,286,016 + projection 2h² + three norms = 11.61B; the
  // Hugging Face checkpoint adds its own copies of the embedding and head (2 × 0.93B): 13.46B,
  // the "14B" of the report.
  EXPECT_EQ(mtp_module_parameters(m), 11'507'286'016 + 2 * 7168LL * 7168 + 3 * 7168);
  EXPECT_NEAR(billions(mtp_module_parameters(m) + 2 * embedding) / 14.0, 1.0, 0.04);
}

TEST(TotalParameters, DeepSeekV2LiteIs15_7BillionWith2_4BillionActive) {
  // DeepSeek-V2 paper, Appendix B: 15.7B total, 2.4B activated. 1 dense + 26 MoE layers of
  // 64 routed (top-6) + 2 shared experts of 3·2048·1408: 15,706,484,224 in all; active without
  // the input embedding 2,451,435,008.
  const ModelConfig m = preset("deepseek-v2-lite");
  const int64_t total = total_parameters(m, 1, 4096);
  EXPECT_EQ(total, 15'706'484'224);
  EXPECT_NEAR(billions(total) / 15.7, 1.0, 0.005);
  const int64_t active = active_parameters(m, 1, 4096) - 102400LL * 2048;
  EXPECT_EQ(active, 2'451'435'008);
  EXPECT_NEAR(billions(active) / 2.4, 1.0, 0.025);
}

TEST(TotalParameters, Mixtral8x7bIs46_7BillionWith12_9BillionActive) {
  // Mistral AI: 46.7B total, 12.9B used per token (embeddings included). 32 layers of
  // attention 41,943,040 + 8 experts × 176,160,768 + router 8·4096 + norms 8192, untied
  // embeddings 2 × 32000·4096, final norm.
  const ModelConfig m = preset("mixtral-8x7b");
  const int64_t total = total_parameters(m, 1, 32768);
  EXPECT_EQ(total, 46'702'792'704);
  EXPECT_NEAR(billions(total) / 46.7, 1.0, 0.001);
  const int64_t active = active_parameters(m, 1, 32768);
  EXPECT_EQ(active, total - 32LL * 6 * 176'160'768);
  EXPECT_NEAR(billions(active) / 12.9, 1.0, 0.005);
}

TEST(TotalParameters, Qwen3MoeModelsMatchTheirNames) {
  // Qwen3 report Table 2 and model cards: 30.5B/3.3B and 235B/22B activated (embeddings
  // included), QK-norm's 2·128 per layer among them (12,288 and 24,064 in all).
  const ModelConfig small = preset("qwen3-30b-a3b");
  EXPECT_TRUE(small.qk_layernorm);
  EXPECT_EQ(total_parameters(small, 1, 4096), 30'532'122'624);
  EXPECT_NEAR(billions(total_parameters(small, 1, 4096)) / 30.5, 1.0, 0.002);
  EXPECT_NEAR(billions(active_parameters(small, 1, 4096)) / 3.3, 1.0, 0.02);
  const ModelConfig large = preset("qwen3-235b-a22b");
  EXPECT_EQ(total_parameters(large, 1, 4096), 235'093'634'560);
  EXPECT_NEAR(billions(total_parameters(large, 1, 4096)) / 235.0, 1.0, 0.001);
  EXPECT_NEAR(billions(active_parameters(large, 1, 4096)) / 22.0, 1.0, 0.01);
}

TEST(TotalParameters, GptOss120bIs116_8BillionWith5_1BillionActive) {
  // gpt-oss model card Table 1: 116.83B total, 5.13B active (unembedding counted, embedding
  // not). Experts, router and attention have biases; 64 sink logits per layer.
  const ModelConfig m = preset("gpt-oss-120b");
  const int64_t total = total_parameters(m, 1, 4096);
  EXPECT_EQ(total, 116'829'156'672);
  EXPECT_NEAR(billions(total) / 116.83, 1.0, 0.0005);
  const int64_t active = active_parameters(m, 1, 4096) - 201088LL * 2880;
  EXPECT_EQ(active, 5'132'849'472);
  EXPECT_NEAR(billions(active) / 5.13, 1.0, 0.001);
}

TEST(TotalParameters, Llama4MaverickHasMoeInEveryOtherLayer) {
  // interleave_moe_layer_step 2: layers 1, 3, ..., 47 are MoE (128 experts + 1 shared), the
  // others dense with a 16384 MLP. Meta: 400B total, 17B active (text decoder here, 400.7B).
  const ModelConfig m = preset("llama4-maverick");
  EXPECT_FALSE(m.is_moe_layer(0));
  EXPECT_TRUE(m.is_moe_layer(1));
  EXPECT_FALSE(m.is_moe_layer(46));
  EXPECT_TRUE(m.is_moe_layer(47));
  const int64_t h = 5120;
  EXPECT_EQ(layer_parameters(m, 0) - layer_parameters(m, 1) + expert_parameters(m, 1) +
                shared_expert_parameters(m, 1) + router_parameters(m, 1),
            3 * h * 16384);
  EXPECT_NEAR(billions(total_parameters(m, 1, 8192)) / 400.0, 1.0, 0.005);
  EXPECT_NEAR(billions(active_parameters(m, 1, 8192)) / 17.0, 1.0, 0.015);
}

TEST(MlpForwardFlops, BalancedMoeIsTwiceTokensTimesActiveGemmWeights) {
  // Mixtral layer, T tokens: 2·T·(2 experts × 3·h·F + router h·8); with attention GEMMs and
  // the core the layer is 2·T·(active parameters − 2 norms) + 4·T·s·q.
  const ModelConfig m = preset("mixtral-8x7b");
  const int64_t t = 8192;
  const double h = 4096, f = 14336;
  EXPECT_EQ(mlp_forward_flops(m, t, 0), 2.0 * t * (2 * 3 * h * f + h * 8));
  const double gemm_weights = static_cast<double>(layer_active_parameters(m, 0)) - 2 * h;
  EXPECT_EQ(layer_forward_flops(m, t, 4096, 0), 2.0 * t * gemm_weights + 4.0 * t * 4096 * h);
}

TEST(LayerForwardFlops, MlaMoeLayerOfDeepSeekV3) {
  // 2·T·(MLA GEMM weights + 9 experts (8 routed + 1 shared) × 3·h·2048 + router 256·h) +
  // core 2·T·s·a·(d_qk + d_v) = 2·T·s·128·(192 + 128). GEMM weights of MLA: its parameters
  // less the two latent norms (1536 + 512).
  const ModelConfig m = preset("deepseek-v3");
  const int64_t t = 4096;
  const double s = 4096, h = 7168;
  const double mla = 187'107'328.0 - 1536 - 512;
  const double want =
      2.0 * t * (mla + 9 * 3 * h * 2048 + 256 * h) + 2.0 * t * s * 128 * (192 + 128);
  EXPECT_EQ(layer_forward_flops(m, t, 4096, 3), want);
  // A dense layer swaps the experts and router for the 18432 MLP.
  EXPECT_EQ(layer_forward_flops(m, t, 4096, 0),
            2.0 * t * (mla + 3 * h * 18432) + 2.0 * t * s * 128 * (192 + 128));
}

TEST(LayerForwardFlops, SlidingWindowCountsMinOfWindowAndSequenceKeys) {
  // gpt-oss: layer 0 attends 128 keys, layer 1 all s; q = 64·64 = 4096.
  const ModelConfig m = preset("gpt-oss-120b");
  const int64_t t = 4096;
  const double s = 4096, q = 4096;
  const double full = layer_forward_flops(m, t, 4096, 1);
  const double windowed = layer_forward_flops(m, t, 4096, 0);
  EXPECT_EQ(full - windowed, 4.0 * t * (s - 128) * q);
  EXPECT_EQ(attention_forward_flops(m, t, 64, 128), attention_forward_flops(m, t, 64, 0));
}

TEST(ModelFlops, SumsEveryLayerKindLogitsAndMtp) {
  // DeepSeek-V3: 3 dense + 58 MoE layers, logits 2·T·h·V, one MTP module (2·T·2h·h, an MoE
  // block with full attention, its logits); × 3 for forward and backward.
  Scenario s;
  s.model = preset("deepseek-v3");
  s.training.seq_len = 4096;
  s.training.global_batch = 16;
  const int64_t t = 16 * 4096;
  const double h = 7168, v = 129280;
  const double logits = 2.0 * t * h * v;
  const double dense = layer_forward_flops(s.model, t, 4096, 0);
  const double moe = layer_forward_flops(s.model, t, 4096, 3);
  const double mtp = 2.0 * t * 2 * h * h + moe + logits;
  EXPECT_NEAR(model_flops_per_iteration(s) / (3 * (3 * dense + 58 * moe + logits + mtp)), 1.0,
              1e-12);
  // gpt-oss: 18 windowed + 18 full layers.
  s.model = preset("gpt-oss-120b");
  const double oss = 3 * (18 * layer_forward_flops(s.model, t, 4096, 0) +
                          18 * layer_forward_flops(s.model, t, 4096, 1) + 2.0 * t * 2880 * 201088);
  EXPECT_NEAR(model_flops_per_iteration(s) / oss, 1.0, 1e-12);
}

TEST(StageLayerIds, ConsecutiveRangesOrInterleavedChunks) {
  Scenario s;
  s.model.layers = 61;
  s.parallelism.pp = 4;
  s.parallelism.first_stage_layers = 4;
  s.parallelism.last_stage_layers = 3;  // 54 = 2 × 27 in the middle
  EXPECT_EQ(stage_layer_ids(s, 0), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(stage_layer_ids(s, 1).front(), 4);
  EXPECT_EQ(stage_layer_ids(s, 1).size(), 27u);
  EXPECT_EQ(stage_layer_ids(s, 3), (std::vector<int>{58, 59, 60}));
  // Interleaved, L 8, p 2, v 2: chunk c of stage k holds [(c·p + k)·2, +2).
  s.model.layers = 8;
  s.parallelism = ParallelismConfig{};
  s.parallelism.pp = 2;
  s.parallelism.vpp = 2;
  EXPECT_EQ(stage_layer_ids(s, 0), (std::vector<int>{0, 1, 4, 5}));
  EXPECT_EQ(stage_layer_ids(s, 1), (std::vector<int>{2, 3, 6, 7}));
}

TEST(TotalParameters, DeepSeekV4FlashIs284BillionWith13BillionActive) {
  // DeepSeek-V4-Flash (config.json): 43 MoE layers of h 4096, 256 experts of 2048 top-6 and one
  // shared, compressed attention (64 heads of 512, one K/V head, query latent 1024, 8 output
  // groups down to 1024), mHC with 4 streams. Per layer, in closed form:
  //   attention  h·r_q + r_q·a·d + h·d + a·d·r_o + g·r_o·h + norms r_q + d = 106,956,288
  //   mHC        2·(4h·24 + 24 + 3) = 786,486; two norms 2h = 8,192
  //   MoE        router h·256 + shared 3·h·2048 + 256 experts × 3·h·2048 = 6,468,665,344
  //   ratio 4    compressor 2·h·2·d + bias 4·2·d + norm d; indexer r_q·64·128 + h·64
  //              + its compressor 2·h·2·128 + 4·2·128 + 128: 19,142,272 (21 layers)
  //   ratio 128  compressor 2·h·d + 128·d + d: 4,260,352 (20 layers); ratio 0 (2 layers): none
  // + untied embedding and output layer 2 × 129280·4096 + final norm: 284,332,161,938, the
  // "284B" of the release. Active: 6 of 256 experts, 13.80B with the embedding and the
  // output layer, 13.27B without the embedding (the release's "13B").
  const ModelConfig m = preset("deepseek-v4-flash");
  EXPECT_EQ(attention_parameters(m), 106'956'288);
  EXPECT_EQ(hyper_connection_parameters(m), 786'486);
  EXPECT_EQ(csa_layer_parameters(m, 0), 0);
  EXPECT_EQ(csa_layer_parameters(m, 2), 19'142'272);
  EXPECT_EQ(csa_layer_parameters(m, 3), 4'260'352);
  const int64_t total = total_parameters(m, 1, 4096);
  EXPECT_EQ(total, 43LL * (106'956'288 + 786'486 + 8'192 + 6'468'665'344) + 21LL * 19'142'272 +
                       20LL * 4'260'352 + 2LL * 129280 * 4096 + 4096);
  EXPECT_NEAR(billions(total) / 284.0, 1.0, 0.002);
  const int64_t active = active_parameters(m, 1, 4096);
  EXPECT_EQ(active, total - 43LL * 250 * 3 * 4096 * 2048);
  EXPECT_NEAR(billions(active - 129280LL * 4096) / 13.0, 1.0, 0.025);
}

TEST(CompressedAttention, KeysPerQueryMatchTheirDirectSums) {
  // A query at position p (1..s) attends to min(p, 128) window tokens and min(⌊p/r⌋, k)
  // compressed entries (k = 512 on the indexed ratio-4 layers, no cap at ratio 128); the
  // indexer scores all ⌊p/4⌋. The closed forms against the sums themselves.
  const ModelConfig m = preset("deepseek-v4-flash");
  for (const int s : {100, 4096, 4099, 65536}) {
    double window = 0, csa = 0, hca = 0, candidates = 0;
    for (int p = 1; p <= s; ++p) {
      window += std::min(p, 128);
      csa += std::min(p / 4, 512);
      hca += p / 128;
      candidates += p / 4;
    }
    EXPECT_NEAR(csa_window_keys(m, s, true), window / s, 1e-9) << s;
    EXPECT_NEAR(csa_compressed_keys(m, 2, s, true), csa / s, 1e-9) << s;
    EXPECT_NEAR(csa_compressed_keys(m, 3, s, true), hca / s, 1e-9) << s;
    EXPECT_NEAR(csa_index_candidates(m, 2, s, true), candidates / s, 1e-9) << s;
    EXPECT_EQ(csa_compressed_keys(m, 0, s, true), 0);   // window-only layer
    EXPECT_EQ(csa_index_candidates(m, 3, s, true), 0);  // no indexer at ratio 128
    // Non-causal: every query as the last.
    EXPECT_EQ(csa_window_keys(m, s, false), std::min(s, 128));
    EXPECT_EQ(csa_compressed_keys(m, 2, s, false), std::min(s / 4, 512));
    EXPECT_EQ(csa_compressed_keys(m, 3, s, false), s / 128);
  }
}

TEST(ModelFlops, DeepSeekV4FlashMatchesNvidiasModelFlopsPerToken) {
  // Megatron-Bridge's table for DeepSeek-V4 Flash on 128 GB200s (container 26.08): 7,776
  // tokens/s and 706 model TFLOP/s per GPU, 90.8 GFLOP per token (forward and backward). The
  // causal count as run (the routed and shared experts, the compressed attention over its mean
  // kept keys, the indexer, mHC, the logits and the MTP module) comes within 1 % of it.
  Scenario s;
  s.model = preset("deepseek-v4-flash");
  s.training.seq_len = 4096;
  s.training.global_batch = 2048;
  const double tokens = 2048.0 * 4096;
  EXPECT_NEAR(causal_model_flops_per_iteration(s) / tokens / (706e12 / 7776), 1.0, 0.01);
  // The 2021 count charges every query the last query's keys: more, never less.
  EXPECT_GT(model_flops_per_iteration(s), causal_model_flops_per_iteration(s));
}

}  // namespace
}  // namespace preflight
