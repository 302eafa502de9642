#include <gtest/gtest.h>

#include <string>

#include "config/loader.h"
#include "config/scenario.h"

namespace preflight {
namespace {

TEST(ArchitectureTraits, TheTableIsInEnumOrderAndEveryNameLoads) {
  const std::vector<ArchitectureTraits>& table = architecture_table();
  ASSERT_EQ(table.size(), 4u);
  int last_cc = 0;
  for (size_t i = 0; i < table.size(); ++i) {
    EXPECT_EQ(static_cast<size_t>(table[i].architecture), i);
    EXPECT_EQ(std::string(to_string(table[i].architecture)), table[i].name);
    EXPECT_GT(table[i].compute_capability, last_cc);  // generations in order
    last_cc = table[i].compute_capability;
    StatusOr<Scenario> s =
        load_scenario_text("", "", {std::string("cluster.gpu.architecture=") + table[i].name});
    ASSERT_TRUE(s.ok()) << s.status().message();
    EXPECT_EQ(s->cluster.gpu.architecture, table[i].architecture);
    // The defaults a generation sets: NVLS and MXFP8 (the A100 preset names neither).
    EXPECT_EQ(s->cluster.gpu.nvls, table[i].nvls);
    EXPECT_EQ(s->cluster.gpu.mxfp8, table[i].mxfp8);
  }
  // CUDA's SM versions; NVLink 5 doubles the per-link speed.
  EXPECT_EQ(architecture_traits(GpuArchitecture::kHopper).compute_capability, 90);
  EXPECT_EQ(architecture_traits(GpuArchitecture::kBlackwell).nvlink_per_link_bytes_per_s, 50e9);
}

TEST(ArchitectureTraits, AnUnknownOrMissingNameIsAnErrorThatListsTheKnownOnes) {
  StatusOr<Scenario> s = load_scenario_text("", "", {"cluster.gpu.architecture=Hopper"});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("volta|ampere|hopper|blackwell"), std::string::npos)
      << s.status().message();
  EXPECT_NE(s.status().message().find("did you mean 'hopper'"), std::string::npos);
  StatusOr<Scenario> missing = load_scenario_text(R"(
model: {preset: gpt3-1.7b}
cluster:
  nodes: 1
  gpus_per_node: 8
  gpu: {name: x, sm_count: 100, hbm_capacity: 80GiB, hbm_bandwidth: 2TB/s,
        peak: {bf16: 300TFLOPS}}
training: {seq_len: 2048, global_batch: 8}
)",
                                                  "x.yaml", {});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("expected volta, ampere, hopper or blackwell"),
            std::string::npos)
      << missing.status().message();
}

}  // namespace
}  // namespace preflight
