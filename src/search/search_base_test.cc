#include "search/search_base.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "config/loader.h"

namespace preflight {
namespace {

using ::testing::HasSubstr;

// The default scenario: GPT-3 175B (96 layers) on 128 DGX A100 nodes, TP 8 / PP 16 / DP 8,
// global batch 1,536.
StatusOr<Scenario> load_default(const std::vector<std::string>& overrides) {
  return load_scenario("", overrides);
}

TEST(LoadSearchBase, WithoutGpusIsTheScenario) {
  StatusOr<Scenario> base = load_search_base(load_default, {}, -1, 0);
  ASSERT_TRUE(base.ok()) << base.status().message();
  EXPECT_EQ(base->cluster.total_gpus(), 1024);
  EXPECT_EQ(base->parallelism.tp, 8);
  EXPECT_EQ(base->parallelism.pp, 16);
}

TEST(LoadSearchBase, PriceAndOverridesApply) {
  StatusOr<Scenario> base = load_search_base(load_default, {"training.global_batch=512"}, 2.5, 0);
  ASSERT_TRUE(base.ok()) << base.status().message();
  EXPECT_DOUBLE_EQ(base->cluster.gpu_hour_price, 2.5);
  EXPECT_EQ(base->training.global_batch, 512);
}

TEST(LoadSearchBase, ResizesTheClusterAndKeepsTheStrategy) {
  // 64 GPUs: the stand-in strategy is DP gcd(64, 1536) = 64, PP 1; only the cluster is kept.
  StatusOr<Scenario> base = load_search_base(load_default, {}, -1, 64);
  ASSERT_TRUE(base.ok()) << base.status().message();
  EXPECT_EQ(base->cluster.total_gpus(), 64);
  EXPECT_EQ(base->cluster.nodes, 8);
  EXPECT_EQ(base->parallelism.tp, 8);
  EXPECT_EQ(base->parallelism.pp, 16);
}

TEST(LoadSearchBase, RejectsAGpuCountThatIsNotWholeNodes) {
  StatusOr<Scenario> base = load_search_base(load_default, {}, -1, 12);
  ASSERT_FALSE(base.ok());
  EXPECT_THAT(base.status().message(),
              HasSubstr("--gpus 12: expected a positive multiple of cluster.gpus_per_node (8)"));
}

TEST(LoadSearchBase, RejectsMoreStagesThanLayers) {
  // Global batch 1: DP gcd(1024, 1) = 1 leaves PP 1,024 for 96 layers.
  StatusOr<Scenario> base =
      load_search_base(load_default,
                       {"training.global_batch=1", "parallelism.dp=1", "parallelism.pp=16",
                        "parallelism.tp=8", "cluster.nodes=16"},
                       -1, 1024);
  ASSERT_FALSE(base.ok());
  EXPECT_THAT(base.status().message(), HasSubstr("leaves too few data-parallel replicas"));
}

}  // namespace
}  // namespace preflight
