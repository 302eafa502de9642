#include "config/pipeline_layout.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace preflight {
namespace {

using ::testing::HasSubstr;

std::vector<int> repeat(int n, int v) { return std::vector<int>(static_cast<size_t>(n), v); }

std::vector<int> cat(std::vector<int> a, const std::vector<int>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

TEST(ParseMegatronLayout, DeepSeekV3OnH100) {
  // Megatron-Bridge's H100 DeepSeek-V3 layout: embedding + 1 layer, 30 stages of 2, MTP + loss.
  StatusOr<std::vector<int>> l = parse_megatron_layout("Et|(tt|)*30mL", 32);
  ASSERT_TRUE(l.ok()) << l.status().message();
  EXPECT_EQ(*l, cat(cat({1}, repeat(30, 2)), {0}));
}

TEST(ParseMegatronLayout, SymbolRepeats) {
  // "Et*4|(t*4|)*14tmL": 16 virtual stages, 4 layers each but the last with 1 (61 in all).
  StatusOr<std::vector<int>> l = parse_megatron_layout("Et*4|(t*4|)*14tmL", 16);
  ASSERT_TRUE(l.ok()) << l.status().message();
  EXPECT_EQ(*l, cat(repeat(15, 4), {1}));
}

TEST(ParseMegatronLayout, Errors) {
  EXPECT_THAT(parse_megatron_layout("Et|tL", 4).status().message(),
              HasSubstr("2 virtual stages: expected pp × vpp = 4"));
  EXPECT_THAT(parse_megatron_layout("Et|tx|tL", 3).status().message(), HasSubstr("unexpected 'x'"));
  EXPECT_THAT(parse_megatron_layout("Et|(tt|tL", 3).status().message(),
              HasSubstr("unterminated '('"));
  EXPECT_THAT(parse_megatron_layout("Et|tt)|tL", 3).status().message(), HasSubstr("unmatched ')'"));
  EXPECT_THAT(parse_megatron_layout("t|Et|tL", 3).status().message(), HasSubstr("'E'"));
  EXPECT_THAT(parse_megatron_layout("Et|tL|t", 3).status().message(), HasSubstr("'L'"));
  EXPECT_THAT(parse_megatron_layout("Et|m|tL", 3).status().message(), HasSubstr("'m'"));
  EXPECT_THAT(parse_megatron_layout("Et|t*|tL", 3).status().message(),
              HasSubstr("expected a count after '*'"));
  EXPECT_THAT(parse_megatron_layout("E(t*9999999)*9999999L", 1).status().message(),
              HasSubstr("more than 1,000,000"));
}

TEST(AccountForSplit, EmbeddingAndLossTakeALayersPlace) {
  // 126 + 2 = 128 units over 8 × 8 chunks: 2 each, the first and last chunk 1 layer.
  StatusOr<std::vector<int>> l = account_for_split(126, 64, true, true);
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(*l, cat(cat({1}, repeat(62, 2)), {1}));
  // Qwen3-235B: 94 + 2 = 96 over 8 stages: 12 units, first and last 11 layers.
  EXPECT_EQ(*account_for_split(94, 8, true, true), cat(cat({11}, repeat(6, 12)), {11}));
  // Loss only: 95 + 1 = 96 over 8.
  EXPECT_EQ(*account_for_split(95, 8, false, true), cat(repeat(7, 12), {11}));
  EXPECT_THAT(account_for_split(61, 16, true, true).status().message(),
              HasSubstr("63 units: expected a multiple of pp × vpp = 16"));
}

TEST(DefaultPipelineSplit, PicksMegatronBridgesChoice) {
  // LLaMA-3.1 405B, 16 × 8 chunks: 126 + 2 = 128, one each, none in the first and last.
  PipelineSplit a = default_pipeline_split(126, 128);
  EXPECT_EQ(a.layers, cat(cat({0}, repeat(126, 1)), {0}));
  EXPECT_THAT(a.description, HasSubstr("account_for_embedding"));
  // DeepSeek-V3 on 16 stages: ⌈61/16⌉ = 4, the last 61 − 60 = 1 (Megatron-Bridge's map).
  PipelineSplit b = default_pipeline_split(61, 16);
  EXPECT_EQ(b.layers, cat(repeat(15, 4), {1}));
  EXPECT_THAT(b.description, HasSubstr("DeepSeek-V3"));
  // (4, 1): 16, 16, 16, 13.
  EXPECT_EQ(default_pipeline_split(61, 4).layers, (std::vector<int>{16, 16, 16, 13}));
  // 61 over 32: ⌈61/32⌉ = 2 leaves nothing: 1 each, 29 more after the first.
  PipelineSplit c = default_pipeline_split(61, 32);
  EXPECT_EQ(c.layers, cat(cat({1}, repeat(29, 2)), repeat(2, 1)));
  int sum = 0;
  for (int v : c.layers) sum += v;
  EXPECT_EQ(sum, 61);
}

}  // namespace
}  // namespace preflight
