// Hybrid Mamba-2/attention models in the loader: model.hybrid_pattern, model.mamba, latent MoE,
// relu2 and NoPE, and the one-line errors that name the offending key and value.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "config/loader.h"

namespace preflight {
namespace {

using ::testing::HasSubstr;

// A small dense hybrid: Mamba-2, attention, MLP and again, on one DGX H100 with TP 2.
const char* const kHybrid = R"(
model:
  layers: 4
  hybrid_pattern: "M*-M"
  hidden: 1024
  heads: 16
  kv_heads: 4
  ffn_hidden: 4096
  vocab: 32000
  activation: relu2
  norm: rmsnorm
  position_embedding: none
  mamba: {heads: 32, head_dim: 64, state: 128, groups: 8}
cluster: {preset: dgx-h100, nodes: 1}
training: {seq_len: 4096, global_batch: 8}
parallelism: {tp: 2, pp: 1, dp: 4}
)";

// Nemotron 3 Nano on one DGX H100, EP 8.
const std::vector<std::string> kNano = {"model.preset=nemotron3-nano",
                                        "cluster.preset=dgx-h100",
                                        "cluster.nodes=1",
                                        "parallelism.tp=1",
                                        "parallelism.pp=1",
                                        "parallelism.dp=auto",
                                        "parallelism.sequence_parallel=false",
                                        "parallelism.ep=8",
                                        "training.seq_len=8192",
                                        "training.global_batch=64"};

// kHybrid without its model.mamba section.
std::string without_mamba() {
  std::string text = kHybrid;
  const size_t at = text.find("  mamba:");
  return text.erase(at, text.find('\n', at) + 1 - at);
}

Status load_error(const std::string& text, const std::vector<std::string>& overrides = {}) {
  StatusOr<Scenario> s = load_scenario_text(text, "test.yaml", overrides);
  return s.ok() ? Status() : s.status();
}

// An InvalidArgument error of one line holding each of `parts`.
void expect_user_error(const Status& s, const std::vector<std::string>& parts) {
  ASSERT_FALSE(s.ok()) << "loaded without error; expected: " << ::testing::PrintToString(parts);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.message();
  EXPECT_EQ(s.message().find('\n'), std::string::npos) << "not one line: " << s.message();
  for (const std::string& p : parts) EXPECT_THAT(s.message(), HasSubstr(p));
}

std::vector<std::string> with(std::vector<std::string> set, const std::string& extra) {
  set.push_back(extra);
  return set;
}

TEST(LoadHybrid, ReadsPatternMambaAndTheNemotronConventions) {
  StatusOr<Scenario> s = load_scenario_text(kHybrid, "test.yaml", {});
  ASSERT_TRUE(s.ok()) << s.status().message();
  const ModelConfig& m = s->model;
  EXPECT_TRUE(m.is_hybrid());
  EXPECT_TRUE(m.is_mamba_layer(0));
  EXPECT_TRUE(m.has_attention(1) && !m.has_mlp(1));
  EXPECT_TRUE(m.has_mlp(2) && !m.has_attention(2) && !m.is_moe_layer(2));
  EXPECT_EQ(m.mamba.heads, 32);
  EXPECT_EQ(m.mamba.d_inner(), 2048);
  EXPECT_EQ(m.mamba.conv_dim(), 2048 + 2 * 8 * 128);
  EXPECT_EQ(m.mamba.in_proj_width(), 2 * 2048 + 2 * 8 * 128 + 32);
  EXPECT_EQ(m.mamba.conv_kernel, 4);  // Megatron-Core's defaults
  EXPECT_EQ(m.mamba.chunk, 128);
  EXPECT_EQ(m.activation, Activation::kSquaredRelu);
  EXPECT_STREQ(to_string(m.activation), "relu2");
  EXPECT_EQ(m.position_embedding, PositionEmbedding::kNone);
}

TEST(LoadHybrid, SquaredReluHasTwoNames) {
  StatusOr<Scenario> s =
      load_scenario_text(kHybrid, "test.yaml", {"model.activation=squared_relu"});
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->model.activation, Activation::kSquaredRelu);
}

TEST(LoadHybrid, TransformerModelsHaveNoPattern) {
  StatusOr<Scenario> s = load_scenario_text("", "test.yaml", {});
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_FALSE(s->model.is_hybrid());
  EXPECT_TRUE(s->model.has_attention(0) && s->model.has_mlp(0));
  EXPECT_FALSE(s->model.is_mamba_layer(0));
}

TEST(LoadHybrid, Nemotron3NanoLoadsWithExpertParallelism) {
  StatusOr<Scenario> s = load_scenario_text("", "test.yaml", kNano);
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->model.layers, 52);
  EXPECT_TRUE(s->model.is_moe_layer(1));
  EXPECT_TRUE(s->model.has_attention(5));
  EXPECT_EQ(s->parallelism.dp, 8);
}

TEST(LoadHybrid, PatternErrorNamesTheCharacterAndItsPosition) {
  expect_user_error(load_error(kHybrid, {"model.hybrid_pattern=M*xM"}),
                    {"test.yaml: model.hybrid_pattern: 'x' at position 2 (0-based)",
                     "expected M (Mamba-2), * (attention), - (MLP) or E (MoE)"});
  // Megatron's MTP separator has a key of its own here.
  expect_user_error(load_error(kHybrid, {"model.hybrid_pattern=M*-M/*-"}),
                    {"'/' at position 4", "model.mtp_layers"});
}

TEST(LoadHybrid, PatternNeedsOneCharacterPerLayer) {
  expect_user_error(
      load_error(kHybrid, {"model.layers=6"}),
      {"model.hybrid_pattern: 4 characters: expected one per layer, model.layers (6)"});
  expect_user_error(load_error(kHybrid, {"model.hybrid_pattern="}),
                    {"model.hybrid_pattern: '': expected one of M * - E per layer"});
}

TEST(LoadHybrid, MambaSectionExactlyWithMambaLayers) {
  expect_user_error(load_error(without_mamba()),
                    {"model.mamba: missing: model.hybrid_pattern has M layers", "head_dim"});
  expect_user_error(load_error(kHybrid, {"model.hybrid_pattern=-*-*"}),
                    {"model.mamba: given, but model.hybrid_pattern has no M layer"});
  expect_user_error(load_error("", {"model.mamba.heads=8", "model.mamba.head_dim=64",
                                    "model.mamba.state=16", "model.mamba.groups=1"}),
                    {"model.mamba: given, but the model has no model.hybrid_pattern"});
}

TEST(LoadHybrid, MambaFieldsAreBoundedPositiveIntegers) {
  expect_user_error(load_error(kHybrid, {"model.mamba.heads=0"}),
                    {"test.yaml: model.mamba.heads: '0': expected an integer >= 1"});
  expect_user_error(load_error(kHybrid, {"model.mamba.chunk=2000000000"}),
                    {"model.mamba.chunk: '2000000000': expected an integer"});
  expect_user_error(load_error(kHybrid, {"model.mamba.stat=16"}), {"model.mamba", "stat"});
  expect_user_error(load_error(kHybrid, {"model.mamba={heads: 8, head_dim: 64, state: 16}"}),
                    {"model.mamba.groups: missing key"});
  expect_user_error(load_error(kHybrid, {"model.mamba.groups=5"}),
                    {"model.mamba.groups: 5: expected a divisor of model.mamba.heads (32)"});
}

TEST(LoadHybrid, MoeExactlyWithMoeLayers) {
  expect_user_error(load_error(kHybrid, {"model.hybrid_pattern=M*EM"}),
                    {"model.hybrid_pattern: E layers need model.moe"});
  expect_user_error(
      load_error(kHybrid, {"model.moe={experts: 8, top_k: 2, expert_ffn_hidden: 512}"}),
      {"model.moe.experts: 8: model.hybrid_pattern has no E layer"});
  expect_user_error(load_error("", with(kNano, "model.moe.layer_interval=2")),
                    {"model.moe.dense_layers/layer_interval: the hybrid pattern places the MoE "
                     "layers"});
}

TEST(LoadHybrid, HybridMtpNeedsAnMlpLayer) {
  expect_user_error(load_error(kHybrid, {"model.hybrid_pattern=M*MM", "model.mtp_layers=1"}),
                    {"model.mtp_layers: 1", "expected an E or - layer"});
  StatusOr<Scenario> s = load_scenario_text(kHybrid, "test.yaml", {"model.mtp_layers=1"});
  EXPECT_TRUE(s.ok()) << s.status().message();
}

TEST(LoadHybrid, TensorParallelismMustDivideMambaHeadsAndGroups) {
  // Nano: 64 Mamba heads in 8 groups; 32 attention heads, 2 KV heads. TP 16 divides the heads
  // but not the groups (Megatron-Core's MambaMixer asserts both).
  expect_user_error(load_error("", with(with(kNano, "parallelism.tp=16"), "cluster.nodes=2")),
                    {"parallelism.tp: 16: expected a divisor of model.mamba.groups (8)"});
  expect_user_error(load_error(kHybrid, {"model.mamba.heads=24", "model.mamba.groups=3"}),
                    {"parallelism.tp: 2: expected a divisor of model.mamba.groups (3)"});
  expect_user_error(load_error(kHybrid, {"model.mamba.heads=33", "model.mamba.groups=1"}),
                    {"parallelism.tp: 2: expected a divisor of model.mamba.heads (33)"});
}

TEST(LoadHybrid, ContextParallelismIsRejected) {
  expect_user_error(load_error(kHybrid, {"parallelism.cp=2", "parallelism.dp=2"}),
                    {"parallelism.cp: 2: context parallelism of hybrid (Mamba-2) models is not "
                     "modelled; expected cp 1"});
}

TEST(LoadHybrid, LatentSizeIsReadWithTheExperts) {
  StatusOr<Scenario> s =
      load_scenario_text("", "test.yaml", with(kNano, "model.moe.latent_size=1024"));
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->model.moe.latent_size, 1024);
  EXPECT_EQ(s->model.moe.expert_width(2688), 1024);
  expect_user_error(load_error("", with(kNano, "model.moe.latent_size=-1")),
                    {"model.moe.latent_size: '-1': expected an integer >= 0"});
}

}  // namespace
}  // namespace preflight
