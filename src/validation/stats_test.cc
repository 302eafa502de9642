#include "validation/stats.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace preflight {
namespace {

// Shared fixture data. Absolute percentage errors, 100 * |p - m| / |m|:
//   110 vs 100 -> 10,  45 vs 50 -> 10,  300 vs 200 -> 50,  1 vs 4 -> 75.
const std::vector<double> kPredicted3 = {110.0, 45.0, 300.0};
const std::vector<double> kMeasured3 = {100.0, 50.0, 200.0};
const std::vector<double> kPredicted4 = {110.0, 45.0, 300.0, 1.0};
const std::vector<double> kMeasured4 = {100.0, 50.0, 200.0, 4.0};

TEST(MeanAbsolutePercentageError, MatchesHandComputedValue) {
  // (10 + 10 + 50) / 3 = 23.333...
  EXPECT_NEAR(mean_absolute_percentage_error(kPredicted3, kMeasured3), 70.0 / 3.0, 1e-12);
  // (10 + 10 + 50 + 75) / 4 = 36.25
  EXPECT_NEAR(mean_absolute_percentage_error(kPredicted4, kMeasured4), 36.25, 1e-12);
}

TEST(MeanAbsolutePercentageError, IsZeroForPerfectPredictions) {
  EXPECT_EQ(mean_absolute_percentage_error({1.0, 2.0, 3.0}, {1.0, 2.0, 3.0}), 0.0);
}

TEST(MeanAbsolutePercentageError, UsesMagnitudeOfNegativeMeasurement) {
  // |-90 - (-100)| / |-100| = 10%.
  EXPECT_NEAR(mean_absolute_percentage_error({-90.0}, {-100.0}), 10.0, 1e-12);
}

TEST(MedianAbsolutePercentageError, OddSizeIsMiddleValue) {
  // Sorted errors {10, 10, 50}: the middle is 10.
  EXPECT_NEAR(median_absolute_percentage_error(kPredicted3, kMeasured3), 10.0, 1e-12);
  // Sorted errors {10, 50, 75}: the middle is 50, whatever the input order.
  EXPECT_NEAR(median_absolute_percentage_error({1.0, 300.0, 45.0}, {4.0, 200.0, 50.0}), 50.0,
              1e-12);
  EXPECT_NEAR(median_absolute_percentage_error({1.0, 300.0, 110.0}, {4.0, 200.0, 100.0}), 50.0,
              1e-12);
}

TEST(MedianAbsolutePercentageError, EvenSizeAveragesTwoMiddleValues) {
  // Sorted errors {10, 10, 50, 75}: (10 + 50) / 2 = 30.
  EXPECT_NEAR(median_absolute_percentage_error(kPredicted4, kMeasured4), 30.0, 1e-12);
}

TEST(PercentileAbsolutePercentageError, InterpolatesLinearlyBetweenOrderStatistics) {
  // Sorted errors e = {10, 10, 50, 75}, h = q * 3.
  // q = 0 -> e[0] = 10; q = 1 -> e[3] = 75; q = 0.5 -> h = 1.5 -> 10 + 0.5 * 40 = 30;
  // q = 0.9 -> h = 2.7 -> 50 + 0.7 * 25 = 67.5.
  EXPECT_NEAR(percentile_absolute_percentage_error(kPredicted4, kMeasured4, 0.0), 10.0, 1e-12);
  EXPECT_NEAR(percentile_absolute_percentage_error(kPredicted4, kMeasured4, 1.0), 75.0, 1e-12);
  EXPECT_NEAR(percentile_absolute_percentage_error(kPredicted4, kMeasured4, 0.5), 30.0, 1e-12);
  EXPECT_NEAR(percentile_absolute_percentage_error(kPredicted4, kMeasured4, 0.9), 67.5, 1e-12);
}

TEST(PercentileAbsolutePercentageError, SingleElementIsThatElementForAnyQ) {
  // One error, 100 * |3 - 2| / 2 = 50, is every quantile.
  for (double q : {0.0, 0.3, 1.0}) {
    EXPECT_NEAR(percentile_absolute_percentage_error({3.0}, {2.0}, q), 50.0, 1e-12);
  }
}

TEST(MeanSignedPercentageError, ReportsBiasWithSign) {
  // Signed errors +10, -10, +50 -> mean 50 / 3.
  EXPECT_NEAR(mean_signed_percentage_error(kPredicted3, kMeasured3), 50.0 / 3.0, 1e-12);
  // Symmetric over/under-prediction cancels: +10, -10 -> 0.
  EXPECT_NEAR(mean_signed_percentage_error({110.0, 90.0}, {100.0, 100.0}), 0.0, 1e-12);
  // Under-prediction is negative: (80 - 100) / 100 = -20%.
  EXPECT_NEAR(mean_signed_percentage_error({80.0}, {100.0}), -20.0, 1e-12);
}

TEST(RanksWithTies, AveragesTiedRanks) {
  // The 2s occupy ranks 2 and 3 -> both get 2.5.
  EXPECT_EQ(ranks_with_ties({1.0, 2.0, 2.0, 3.0}), (std::vector<double>{1.0, 2.5, 2.5, 4.0}));
}

TEST(RanksWithTies, RanksUnsortedInputInPlace) {
  // 30 is largest (3), 10 smallest (1), the two 20s share ranks 2..3 -> 2.5.
  EXPECT_EQ(ranks_with_ties({30.0, 20.0, 10.0, 20.0}), (std::vector<double>{4.0, 2.5, 1.0, 2.5}));
  // All equal: every element shares ranks 1..3 -> 2.
  EXPECT_EQ(ranks_with_ties({5.0, 5.0, 5.0}), (std::vector<double>{2.0, 2.0, 2.0}));
  EXPECT_TRUE(ranks_with_ties({}).empty());
}

TEST(Spearman, OfMonotoneIsOne) {
  // Any strictly increasing transform preserves ranks exactly -> rho = 1.
  EXPECT_NEAR(spearman({1.0, 2.0, 3.0, 4.0, 5.0}, {1.0, 8.0, 27.0, 64.0, 125.0}), 1.0, 1e-12);
}

TEST(Spearman, OfReversedIsMinusOne) {
  // Ranks {1..5} vs {5..1} -> rho = -1.
  EXPECT_NEAR(spearman({1.0, 2.0, 3.0, 4.0, 5.0}, {50.0, 40.0, 30.0, 20.0, 10.0}), -1.0, 1e-12);
}

TEST(Spearman, MatchesClosedFormWithoutTies) {
  // No ties: rho = 1 - 6 * sum(d^2) / (n (n^2 - 1)). Ranks x = {1,2,3,4}, y = {2,1,4,3},
  // d = {-1, 1, -1, 1}, sum d^2 = 4, rho = 1 - 24 / 60 = 0.6.
  EXPECT_NEAR(spearman({1.0, 2.0, 3.0, 4.0}, {20.0, 10.0, 40.0, 30.0}), 0.6, 1e-12);
}

TEST(Spearman, WithTiesIsPearsonOfAveragedRanks) {
  // x ranks {1, 2.5, 2.5, 4}, y ranks {1, 2, 3, 4}; centred by 2.5: dx = {-1.5, 0, 0, 1.5},
  // dy = {-1.5, -0.5, 0.5, 1.5}. cov = 4.5, var_x = 4.5, var_y = 5 -> rho = 4.5 / sqrt(22.5).
  EXPECT_NEAR(spearman({1.0, 2.0, 2.0, 3.0}, {1.0, 2.0, 3.0, 4.0}), 4.5 / std::sqrt(22.5), 1e-12);
}

TEST(Spearman, OfConstantIsNaN) {
  // A constant vector has zero rank variance, so the correlation is undefined.
  EXPECT_TRUE(std::isnan(spearman({1.0, 2.0, 3.0}, {7.0, 7.0, 7.0})));
  EXPECT_TRUE(std::isnan(spearman({7.0, 7.0, 7.0}, {1.0, 2.0, 3.0})));
}

TEST(Spearman, OfFewerThanTwoPointsIsNaN) {
  EXPECT_TRUE(std::isnan(spearman({}, {})));
  EXPECT_TRUE(std::isnan(spearman({1.0}, {2.0})));
}

TEST(RankingRegret, IsZeroWhenThePredictedFastestIsTheMeasuredFastest) {
  // The predictions are all 20% high but keep the order: the pick (index 1) is the fastest.
  EXPECT_EQ(ranking_regret_pct({120.0, 96.0, 144.0}, {100.0, 80.0, 120.0}), 0.0);
}

TEST(RankingRegret, IsTheExcessOfThePickOverTheFastest) {
  // Predicted fastest: index 2 (70), measured 90; fastest measured 80: (90 - 80) / 80 = 12.5%.
  EXPECT_NEAR(ranking_regret_pct({100.0, 85.0, 70.0}, {100.0, 80.0, 90.0}), 12.5, 1e-12);
}

TEST(RankingRegret, BreaksPredictionTiesByFirstIndexAndSkipsNaN) {
  // Index 0's prediction is NaN; indices 1 and 2 tie at 50 and index 1 (measured 110) is picked.
  // The fastest measured is still index 0 (90): (110 - 90) / 90 = 22.2%.
  EXPECT_NEAR(ranking_regret_pct({NAN, 50.0, 50.0}, {90.0, 110.0, 100.0}), 100.0 * 20 / 90, 1e-12);
  EXPECT_TRUE(std::isnan(ranking_regret_pct({NAN, NAN}, {1.0, 2.0})));
  EXPECT_TRUE(std::isnan(ranking_regret_pct({}, {})));
}

// Returns how many items kfold_assignment put in each of the k folds.
std::vector<int> fold_sizes(const std::vector<int>& folds, int k) {
  std::vector<int> sizes(static_cast<std::size_t>(k), 0);
  for (int f : folds) ++sizes[static_cast<std::size_t>(f)];
  return sizes;
}

TEST(KfoldAssignment, AssignsEveryIndexToAValidFold) {
  const std::vector<int> folds = kfold_assignment(23, 5, 7);
  ASSERT_EQ(folds.size(), 23u);
  for (int f : folds) {
    EXPECT_GE(f, 0);
    EXPECT_LT(f, 5);
  }
}

TEST(KfoldAssignment, FoldSizesDifferByAtMostOne) {
  // n = 23, k = 5: 23 = 4 * 5 + 3 -> three folds of 5 and two of 4.
  for (int n = 2; n <= 40; ++n) {
    for (int k = 2; k <= n && k <= 10; ++k) {
      const std::vector<int> sizes = fold_sizes(kfold_assignment(n, k, 12345), k);
      const auto [smallest, largest] = std::minmax_element(sizes.begin(), sizes.end());
      EXPECT_LE(*largest - *smallest, 1) << "n=" << n << " k=" << k;
      EXPECT_EQ(*smallest, n / k) << "n=" << n << " k=" << k;
    }
  }
  EXPECT_EQ(fold_sizes(kfold_assignment(23, 5, 1), 5), (std::vector<int>{5, 5, 5, 4, 4}));
}

TEST(KfoldAssignment, KEqualToNGivesAPermutation) {
  // Leave-one-out: each fold holds exactly one item.
  std::vector<int> folds = kfold_assignment(9, 9, 3);
  std::sort(folds.begin(), folds.end());
  EXPECT_EQ(folds, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7, 8}));
}

TEST(KfoldAssignment, IsDeterministicAcrossCalls) {
  EXPECT_EQ(kfold_assignment(100, 5, 42), kfold_assignment(100, 5, 42));
}

TEST(KfoldAssignment, DiffersWithADifferentSeed) {
  EXPECT_NE(kfold_assignment(100, 5, 42), kfold_assignment(100, 5, 43));
}

TEST(KfoldAssignment, MatchesGoldenOutput) {
  // Pinned output. std::mt19937_64 is fully specified by the C++ standard and the integer
  // mapping and shuffle are our own code, so this must hold with every standard library; a
  // change here means cross-validation splits (and thus reported errors) have changed.
  EXPECT_EQ(kfold_assignment(10, 3, 2024), (std::vector<int>{1, 0, 0, 0, 2, 2, 1, 2, 0, 1}));
}

}  // namespace
}  // namespace preflight
