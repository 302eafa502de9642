#include "search/cost.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace preflight {
namespace {

using ::testing::HasSubstr;

TEST(IterationCost, GpuHoursDollarsAndDollarsPerMillionTokens) {
  // 1,024 GPUs · 18 s / 3600 = 5.12 GPU-hours; · $2 = $10.24; 1,536 · 2,048 = 3,145,728 tokens
  // → $10.24 / 3.145728 = $3.2552 per million tokens.
  const IterationCost c = iteration_cost(1024, 2.0, 18.0, 1536 * 2048);
  EXPECT_DOUBLE_EQ(c.gpu_hours, 5.12);
  EXPECT_DOUBLE_EQ(c.usd, 10.24);
  EXPECT_NEAR(c.usd_per_million_tokens, 10.24 / 3.145728, 1e-12);
}

TEST(IterationCost, NoPriceIsZeroDollars) {
  const IterationCost c = iteration_cost(8, 0, 3600, 1000);
  EXPECT_DOUBLE_EQ(c.gpu_hours, 8);
  EXPECT_EQ(c.usd, 0);
  EXPECT_EQ(c.usd_per_million_tokens, 0);
}

TEST(TrainingCost, WholeIterationsCoverTheBudget) {
  // 1e6 tokens at 300,000 per iteration: ceil(3.33) = 4 iterations of 10 s on 16 GPUs at $3:
  // 40 s, 16 · 40 / 3600 = 0.1778 GPU-hours, $0.5333.
  const TrainingCost t = training_cost(16, 3.0, 10.0, 300000, 1e6);
  EXPECT_EQ(t.iterations, 4);
  EXPECT_DOUBLE_EQ(t.time_s, 40);
  EXPECT_NEAR(t.gpu_hours, 16 * 40 / 3600.0, 1e-12);
  EXPECT_NEAR(t.usd, 3 * 16 * 40 / 3600.0, 1e-12);
  EXPECT_DOUBLE_EQ(t.tokens, 1e6);
}

TEST(ParseTokenCount, SuffixesArePowersOfAThousand) {
  EXPECT_DOUBLE_EQ(*parse_token_count("1T"), 1e12);
  EXPECT_DOUBLE_EQ(*parse_token_count("300B"), 3e11);
  EXPECT_DOUBLE_EQ(*parse_token_count("15G"), 1.5e10);
  EXPECT_DOUBLE_EQ(*parse_token_count("2.5M"), 2.5e6);
  EXPECT_DOUBLE_EQ(*parse_token_count("4k"), 4e3);
  EXPECT_DOUBLE_EQ(*parse_token_count("2.5e12"), 2.5e12);
}

TEST(ParseTokenCount, RejectsWhatIsNotAPositiveCount) {
  for (const char* bad : {"", "T", "-1T", "0", "1X", "abc", "1e30"}) {
    StatusOr<double> t = parse_token_count(bad);
    ASSERT_FALSE(t.ok()) << bad;
    EXPECT_THAT(t.status().message(), HasSubstr("expected a positive token count")) << bad;
  }
}

}  // namespace
}  // namespace preflight
