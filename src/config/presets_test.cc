#include "config/presets.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "config/loader.h"

namespace preflight {
namespace {

using ::testing::HasSubstr;

std::vector<std::string> names_of(const std::string& kind) {
  std::vector<std::string> out;
  for (const PresetInfo& p : list_presets()) {
    if (p.kind == kind) out.push_back(p.name);
  }
  return out;
}

TEST(ListPresets, ContainsTheDocumentedPresets) {
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"gpus", "V100-SXM2-32GB"}, {"gpus", "A100-SXM4-40GB"},  {"gpus", "A100-SXM4-80GB"},
      {"gpus", "H100-SXM5-80GB"}, {"gpus", "H200-SXM-141GB"},  {"gpus", "H20"},
      {"gpus", "B200"},           {"clusters", "dgx-a100"},    {"clusters", "dgx-h100"},
      {"clusters", "dgx-h200"},   {"clusters", "vtrain-a100"}, {"models", "gpt3-175b"},
      {"models", "llama3-70b"},   {"models", "mt-nlg-530b"},   {"models", "bloom-176b"},
      {"scenarios", "default"},
  };
  std::set<std::pair<std::string, std::string>> have;
  for (const PresetInfo& p : list_presets()) have.insert({p.kind, p.name});
  for (const auto& e : expected) {
    EXPECT_TRUE(have.count(e)) << e.first << "/" << e.second << " missing";
  }
}

TEST(ListPresets, EveryPresetHasADescription) {
  for (const PresetInfo& p : list_presets()) {
    EXPECT_FALSE(p.description.empty()) << p.kind << "/" << p.name;
    EXPECT_NE(p.description, "(malformed)") << p.kind << "/" << p.name;
  }
}

TEST(ListPresets, IsSortedByKindThenNameWithoutDuplicates) {
  const std::vector<PresetInfo> all = list_presets();
  ASSERT_FALSE(all.empty());
  for (size_t i = 1; i < all.size(); ++i) {
    const auto prev = std::make_pair(all[i - 1].kind, all[i - 1].name);
    const auto cur = std::make_pair(all[i].kind, all[i].name);
    EXPECT_LT(prev, cur) << "at " << i;
  }
}

TEST(ListPresets, MatchesThePresetFilesInTheSourceTree) {
  // Every presets/<kind>/<name>.yaml is embedded, and nothing else is.
  std::set<std::pair<std::string, std::string>> files;
  const std::filesystem::path root = std::filesystem::path(PREFLIGHT_SOURCE_DIR) / "presets";
  for (const auto& e : std::filesystem::recursive_directory_iterator(root)) {
    if (e.is_regular_file() && e.path().extension() == ".yaml") {
      files.insert({e.path().parent_path().filename().string(), e.path().stem().string()});
    }
  }
  std::set<std::pair<std::string, std::string>> embedded;
  for (const PresetInfo& p : list_presets()) embedded.insert({p.kind, p.name});
  EXPECT_EQ(files, embedded);
}

TEST(PresetText, IsTheFileContent) {
  StatusOr<std::string> text = preset_text("models", "gpt3-175b");
  ASSERT_TRUE(text.ok()) << text.status().message();
  std::ifstream in(std::string(PREFLIGHT_SOURCE_DIR) + "/presets/models/gpt3-175b.yaml");
  ASSERT_TRUE(in);
  std::stringstream file;
  file << in.rdbuf();
  EXPECT_EQ(*text, file.str());
}

TEST(FindPreset, EveryEmbeddedPresetParsesAndNamesItself) {
  for (const PresetInfo& p : list_presets()) {
    StatusOr<YAML::Node> node = find_preset(p.kind, p.name);
    ASSERT_TRUE(node.ok()) << p.kind << "/" << p.name << ": " << node.status().message();
    ASSERT_TRUE(node->IsMap()) << p.kind << "/" << p.name;
    ASSERT_TRUE((*node)["name"]) << p.kind << "/" << p.name;
    EXPECT_EQ((*node)["name"].Scalar(), p.name) << p.kind << "/" << p.name;
    EXPECT_EQ((*node)["description"].Scalar(), p.description);
  }
}

TEST(FindPreset, UnknownNameIsNotFoundAndListsKnownOnes) {
  StatusOr<YAML::Node> node = find_preset("models", "gpt9");
  ASSERT_FALSE(node.ok());
  EXPECT_EQ(node.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(node.status().message(), HasSubstr("unknown model preset 'gpt9'"));
  EXPECT_THAT(node.status().message(), HasSubstr("gpt3-175b"));
  EXPECT_THAT(node.status().message(), HasSubstr("llama3-70b"));
  // Only presets of the asked kind are suggested.
  EXPECT_THAT(node.status().message(), ::testing::Not(HasSubstr("dgx-a100")));
  EXPECT_EQ(node.status().message().find('\n'), std::string::npos);
}

TEST(FindPreset, KindsAreSeparate) {
  EXPECT_TRUE(find_preset("clusters", "dgx-a100").ok());
  EXPECT_EQ(find_preset("models", "dgx-a100").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(preset_text("gpus", "gpt3-175b").status().code(), StatusCode::kNotFound);
}

TEST(LoadModelPreset, EveryModelPresetLoads) {
  const std::vector<std::string> models = names_of("models");
  ASSERT_GE(models.size(), 4u);
  for (const std::string& name : models) {
    StatusOr<ModelConfig> m = load_model_preset(name);
    ASSERT_TRUE(m.ok()) << name << ": " << m.status().message();
    EXPECT_EQ(m->name, name);
    EXPECT_GT(m->layers, 0) << name;
    EXPECT_EQ(m->hidden % m->heads, 0) << name;
    EXPECT_EQ(m->heads % m->kv_heads, 0) << name;
    EXPECT_GT(m->ffn_hidden, 0) << name;
    EXPECT_GT(m->vocab, 0) << name;
  }
}

TEST(LoadModelPreset, Gpt3175bMatchesBrownEtAl) {
  // Brown et al. 2020, Table 2.1: 96 layers, d_model 12288, 96 heads; d_ff = 4 · d_model.
  StatusOr<ModelConfig> m = load_model_preset("gpt3-175b");
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->layers, 96);
  EXPECT_EQ(m->hidden, 12288);
  EXPECT_EQ(m->heads, 96);
  EXPECT_EQ(m->kv_heads, 96);
  EXPECT_EQ(m->ffn_hidden, 49152);
  EXPECT_EQ(m->vocab, 50257);
  EXPECT_EQ(m->head_dim(), 128);
  EXPECT_EQ(m->activation, Activation::kGelu);
  EXPECT_EQ(m->norm, Norm::kLayerNorm);
  EXPECT_EQ(m->max_seq_len, 2048);
}

TEST(LoadModelPreset, Llama370bUsesGqaSwigluRmsnormRope) {
  StatusOr<ModelConfig> m = load_model_preset("llama3-70b");
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->layers, 80);
  EXPECT_EQ(m->hidden, 8192);
  EXPECT_EQ(m->heads, 64);
  EXPECT_EQ(m->kv_heads, 8);
  EXPECT_EQ(m->activation, Activation::kSwiglu);
  EXPECT_EQ(m->norm, Norm::kRmsNorm);
  EXPECT_EQ(m->position_embedding, PositionEmbedding::kRope);
  EXPECT_FALSE(m->tied_embeddings);
}

TEST(LoadModelPreset, UnknownNameIsNotFound) {
  StatusOr<ModelConfig> m = load_model_preset("gpt9");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(m.status().message(), HasSubstr("gpt9"));
}

TEST(LoadClusterPreset, EveryClusterPresetLoads) {
  const std::vector<std::string> clusters = names_of("clusters");
  ASSERT_GE(clusters.size(), 4u);
  for (const std::string& name : clusters) {
    StatusOr<ClusterConfig> c = load_cluster_preset(name, {});
    ASSERT_TRUE(c.ok()) << name << ": " << c.status().message();
    EXPECT_EQ(c->name, name);
    EXPECT_GT(c->gpus_per_node, 0) << name;
    EXPECT_GT(c->gpu.sm_count, 0) << name;
    EXPECT_GT(c->gpu.hbm_capacity.count(), 0) << name;
    EXPECT_GT(c->gpu.hbm_bandwidth.bytes_per_second(), 0) << name;
    EXPECT_GT(c->nvlink_bandwidth.bytes_per_second(), 0) << name;
    EXPECT_GT(c->nic_bandwidth.bytes_per_second(), 0) << name;
    EXPECT_GT(c->gpu.peak_for(Precision::kBf16).flops_per_second(), 0) << name;
  }
}

TEST(LoadClusterPreset, EveryGpuPresetLoadsInACluster) {
  const std::vector<std::string> gpus = names_of("gpus");
  ASSERT_GE(gpus.size(), 7u);
  for (const std::string& name : gpus) {
    StatusOr<ClusterConfig> c = load_cluster_preset("dgx-a100", {"cluster.gpu=" + name});
    ASSERT_TRUE(c.ok()) << name << ": " << c.status().message();
    EXPECT_EQ(c->gpu.name, name);
    EXPECT_FALSE(c->gpu.description.empty()) << name;
    EXPECT_GT(c->gpu.sm_count, 0) << name;
    EXPECT_GT(c->gpu.hbm_capacity.count(), 0) << name;
    EXPECT_GT(c->gpu.hbm_bandwidth.bytes_per_second(), 0) << name;
    EXPECT_GT(c->gpu.nvlink_bandwidth.bytes_per_second(), 0) << name;
    EXPECT_GT(c->gpu.peak_for(Precision::kBf16).flops_per_second(), 0) << name;
    const GpuCalibration& cal = c->gpu.calibration;
    EXPECT_GT(cal.gemm_efficiency, 0) << name;
    EXPECT_LE(cal.gemm_efficiency, 1) << name;
    EXPECT_GT(cal.nvlink_busbw.bytes_per_second(), 0) << name;
  }
}

TEST(LoadClusterPreset, DgxA100IsEightA100sWithEightHdrNics) {
  // DGX A100 datasheet: 8 x A100-SXM4-80GB, 8 x 200 Gb/s HDR (= 25 GB/s each).
  StatusOr<ClusterConfig> c = load_cluster_preset("dgx-a100", {});
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->gpu.name, "A100-SXM4-80GB");
  EXPECT_EQ(c->gpus_per_node, 8);
  EXPECT_EQ(c->nics_per_node, 8);
  EXPECT_DOUBLE_EQ(c->nic_bandwidth.bytes_per_second(), 25e9);
  EXPECT_EQ(c->gpu.hbm_capacity, Bytes::gib(80));
  EXPECT_DOUBLE_EQ(c->gpu.peak_bf16.teraflops(), 312.0);
  EXPECT_DOUBLE_EQ(c->gpu.peak_fp8.flops_per_second(), 0.0);  // Ampere has no FP8
  // No FP8 tensor cores: fp8 falls back to the bf16 peak.
  EXPECT_DOUBLE_EQ(c->gpu.peak_for(Precision::kFp8).teraflops(), 312.0);
  // The cluster's NVLink bandwidth defaults to its GPU's.
  EXPECT_EQ(c->nvlink_bandwidth, c->gpu.nvlink_bandwidth);
}

TEST(LoadClusterPreset, AppliesOverrides) {
  StatusOr<ClusterConfig> c =
      load_cluster_preset("dgx-h100", {"cluster.nodes=4", "cluster.nic_bandwidth=100Gbps"});
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->nodes, 4);
  EXPECT_EQ(c->total_gpus(), 32);
  EXPECT_DOUBLE_EQ(c->nic_bandwidth.bytes_per_second(), 12.5e9);
  EXPECT_EQ(c->gpu.name, "H100-SXM5-80GB");
}

TEST(LoadClusterPreset, UnknownNameIsAnError) {
  StatusOr<ClusterConfig> c = load_cluster_preset("dgx-z900", {});
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.status().message(), HasSubstr("cluster.preset"));
  EXPECT_THAT(c.status().message(), HasSubstr("unknown cluster preset 'dgx-z900'"));
  EXPECT_THAT(c.status().message(), HasSubstr("dgx-a100"));
}

}  // namespace
}  // namespace preflight
