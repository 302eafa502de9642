#include "workload/expert_routing.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

namespace preflight {
namespace {

MoeConfig moe(int experts, int top_k, MoeRouting routing) {
  MoeConfig m;
  m.experts = experts;
  m.top_k = top_k;
  m.expert_ffn_hidden = 1024;
  m.routing = routing;
  return m;
}

double sum(const std::vector<double>& v) { return std::accumulate(v.begin(), v.end(), 0.0); }

TEST(ExpertRouting, UniformIsBalanced) {
  const ExpertLoad l = draw_expert_load(moe(64, 8, MoeRouting::kUniform), 8, 3, 42);
  ASSERT_EQ(l.expert_share.size(), 64u);
  ASSERT_EQ(l.rank_share.size(), 8u);
  for (double s : l.expert_share) EXPECT_DOUBLE_EQ(s, 1.0 / 64);
  for (double s : l.rank_share) EXPECT_NEAR(s, 1.0 / 8, 1e-15);
  EXPECT_NEAR(l.imbalance(), 1.0, 1e-12);
  EXPECT_NEAR(l.max_rank_factor(), 1.0, 1e-12);
  EXPECT_EQ(l.dropped, 0);
}

TEST(ExpertRouting, BalancedCarriesTheExpectedMaximumOfAMultinomialDraw) {
  // Mixtral on EP 8: N = 16,384 token copies per micro-batch; the busiest rank's share is
  // 1/8 + z·sqrt((1/8)(7/8)/N) with z = Φ⁻¹(7.625/8.25) = 1.4317 (Blom): 1.0296x the mean.
  const MoeConfig m = moe(8, 2, MoeRouting::kBalanced);
  const ExpertLoad l = draw_expert_load(m, 8, 0, 1, 16384);
  const double z = 1.4317;
  EXPECT_NEAR(l.max_rank_factor(), 1 + 8 * z * std::sqrt(0.125 * 0.875 / 16384), 1e-4);
  EXPECT_NEAR(sum(l.rank_share), 1.0, 1e-12);
  // The excess shrinks as 1/sqrt(N), and is the same in every layer and for every seed.
  const ExpertLoad more = draw_expert_load(m, 8, 5, 9, 4 * 16384);
  EXPECT_NEAR(more.max_rank_factor() - 1, (l.max_rank_factor() - 1) / 2, 1e-12);
  EXPECT_DOUBLE_EQ(draw_expert_load(m, 8, 7, 3, 16384).max_rank_factor(), l.max_rank_factor());
  // One EP rank, or no token count: balanced is the uniform ideal.
  EXPECT_NEAR(draw_expert_load(m, 1, 0, 1, 16384).max_rank_factor(), 1.0, 1e-12);
  EXPECT_NEAR(draw_expert_load(m, 8, 0, 1, 0).max_rank_factor(), 1.0, 1e-12);
}

TEST(ExpertRouting, EpGroupTokenCopiesFollowTheSplit) {
  Scenario s;
  s.training.micro_batch = 2;
  s.training.seq_len = 4096;
  s.model.moe = moe(64, 8, MoeRouting::kBalanced);
  s.parallelism.tp = 4;
  s.parallelism.cp = 2;
  s.parallelism.ep = 16;
  s.parallelism.etp = 1;
  // Each rank routes its SP shard, 2·4096/(4·2) = 1,024 tokens, 8 copies each, on 16 ranks.
  EXPECT_DOUBLE_EQ(ep_group_token_copies(s), 16.0 * 1024 * 8);
  s.parallelism.etp = 4;  // gathered over expert TP
  EXPECT_DOUBLE_EQ(ep_group_token_copies(s), 16.0 * 4096 * 8);
}

TEST(ExpertRouting, ZipfMatchesClosedFormAndIsSeeded) {
  // Zipf(1.2) over 64 experts: shares are i^-1.2 / H, a permutation of them per layer.
  MoeConfig m = moe(64, 1, MoeRouting::kZipf);
  m.zipf_exponent = 1.2;
  const ExpertLoad a = draw_expert_load(m, 8, 0, 7);
  double h = 0;
  for (int i = 1; i <= 64; ++i) h += std::pow(i, -1.2);
  EXPECT_NEAR(a.max_expert_share, 1 / h, 1e-12);
  EXPECT_NEAR(sum(a.expert_share), 1, 1e-12);
  EXPECT_GT(a.imbalance(), 1.2);
  // Same seed and layer: identical; another layer: another permutation.
  const ExpertLoad again = draw_expert_load(m, 8, 0, 7);
  EXPECT_EQ(a.expert_share, again.expert_share);
  const ExpertLoad other = draw_expert_load(m, 8, 1, 7);
  EXPECT_NE(a.expert_share, other.expert_share);
}

TEST(ExpertRouting, TopKCapsAnExpertAtOneKth) {
  // A token picks k distinct experts, so one expert holds at most 1/k of the copies.
  MoeConfig m = moe(16, 4, MoeRouting::kLoads);
  m.loads = std::vector<double>(16, 1.0);
  m.loads[0] = 100;
  const ExpertLoad l = draw_expert_load(m, 4, 0, 0);
  EXPECT_NEAR(l.expert_share[0], 0.25, 1e-12);
  for (int e = 1; e < 16; ++e) EXPECT_NEAR(l.expert_share[e], 0.75 / 15, 1e-12);
  EXPECT_NEAR(sum(l.expert_share), 1, 1e-12);
  // EP rank 0 holds experts 0..3: 0.25 + 3·0.05 = 0.4 of the copies.
  EXPECT_NEAR(l.rank_share[0], 0.4, 1e-12);
  EXPECT_NEAR(l.max_rank_factor(), 1.6, 1e-12);
}

TEST(ExpertRouting, CapacityFactorDropsTheExcess) {
  MoeConfig m = moe(4, 1, MoeRouting::kLoads);
  m.loads = {5, 1, 1, 1};
  m.capacity_factor = 1.25;  // each expert keeps at most 1.25/4 of the tokens
  const ExpertLoad l = draw_expert_load(m, 2, 0, 0);
  EXPECT_NEAR(l.expert_share[0], 1.25 / 4, 1e-12);
  EXPECT_NEAR(l.dropped, 5.0 / 8 - 1.25 / 4, 1e-12);
}

TEST(ExpertRouting, DirichletSharesArePositiveAndSumToOne) {
  MoeConfig m = moe(32, 2, MoeRouting::kDirichlet);
  for (double alpha : {0.1, 1.0, 100.0}) {
    m.dirichlet_alpha = alpha;
    const ExpertLoad l = draw_expert_load(m, 4, 5, 123);
    EXPECT_NEAR(sum(l.expert_share), 1, 1e-9);
    for (double s : l.expert_share) {
      EXPECT_GE(s, 0);
      EXPECT_LE(s, 0.5 + 1e-12);
    }
  }
  // A large concentration approaches the balanced gate.
  m.dirichlet_alpha = 1e6;
  EXPECT_LT(draw_expert_load(m, 4, 0, 1).imbalance(), 1.01);
}

TEST(ExpertRouting, CapSharesWaterFills) {
  const std::vector<double> s = cap_shares({0.7, 0.2, 0.1}, 0.5);
  EXPECT_NEAR(s[0], 0.5, 1e-12);
  EXPECT_NEAR(s[1], 0.5 * 2 / 3, 1e-12);
  EXPECT_NEAR(s[2], 0.5 / 3, 1e-12);
}

}  // namespace
}  // namespace preflight
