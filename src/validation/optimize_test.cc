#include "validation/optimize.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <functional>
#include <limits>
#include <vector>

namespace preflight {
namespace {

// Returns f(x) = sum_i w_i * (x_i - c_i)^2 + offset; closed-form minimum x* = c, f(x*) = offset.
std::function<double(const std::vector<double>&)> shifted_quadratic(std::vector<double> center,
                                                                    std::vector<double> weights,
                                                                    double offset = 0.0) {
  return [center, weights, offset](const std::vector<double>& x) {
    double sum = offset;
    for (std::size_t i = 0; i < x.size(); ++i) {
      sum += weights[i] * (x[i] - center[i]) * (x[i] - center[i]);
    }
    return sum;
  };
}

TEST(NelderMead, FindsMinimumOfShiftedQuadraticIn2D) {
  // Oracle: argmin of (x - 0.3)^2 + 2 (y + 0.7)^2 is (0.3, -0.7), value 0.
  const auto f = shifted_quadratic({0.3, -0.7}, {1.0, 2.0});
  const OptimizeResult r = minimize_nelder_mead(f, {1.5, 1.5}, {-2.0, -2.0}, {2.0, 2.0});
  ASSERT_EQ(r.x.size(), 2u);
  EXPECT_NEAR(r.x[0], 0.3, 1e-3);
  EXPECT_NEAR(r.x[1], -0.7, 1e-3);
  EXPECT_NEAR(r.value, 0.0, 1e-6);
  EXPECT_EQ(r.value, f(r.x));
  EXPECT_LE(r.evaluations, OptimizeOptions{}.max_evaluations);
}

TEST(NelderMead, FindsMinimumOfShiftedQuadraticIn4D) {
  // Oracle: argmin is the center (0.1, -0.2, 0.3, 0.4), value 0.
  const std::vector<double> center = {0.1, -0.2, 0.3, 0.4};
  const auto f = shifted_quadratic(center, {1.0, 3.0, 0.5, 2.0});
  const OptimizeResult r = minimize_nelder_mead(
      f, {0.9, 0.9, -0.9, -0.9}, std::vector<double>(4, -1.0), std::vector<double>(4, 1.0));
  ASSERT_EQ(r.x.size(), 4u);
  for (std::size_t i = 0; i < 4; ++i) EXPECT_NEAR(r.x[i], center[i], 1e-3) << "i=" << i;
}

TEST(NelderMead, FindsMinimumIn1DAnd8D) {
  // Oracle: argmin of (x - 0.25)^2 is 0.25.
  const OptimizeResult r1 =
      minimize_nelder_mead(shifted_quadratic({0.25}, {1.0}), {0.0}, {-1.0}, {1.0});
  EXPECT_NEAR(r1.x[0], 0.25, 1e-3);

  // Oracle: argmin is the center, value 0.
  const std::vector<double> center = {0.1, -0.2, 0.3, 0.4, -0.5, 0.6, -0.7, 0.05};
  const OptimizeResult r8 = minimize_nelder_mead(
      shifted_quadratic(center, std::vector<double>(8, 1.0)), std::vector<double>(8, 0.0),
      std::vector<double>(8, -1.0), std::vector<double>(8, 1.0),
      OptimizeOptions{.max_evaluations = 20000, .tolerance = 1e-12});
  for (std::size_t i = 0; i < 8; ++i) EXPECT_NEAR(r8.x[i], center[i], 1e-3) << "i=" << i;
}

TEST(NelderMead, LandsOnBoundWhenUnconstrainedMinimumIsOutsideBox) {
  // Oracle: (x - 5)^2 + (y - 0.3)^2 on [0, 1]^2 is separable; x's minimizer 5 is above the box so
  // the constrained minimum is x = 1 (the upper bound), y = 0.3; value 16.
  int outside_calls = 0;
  const auto base = shifted_quadratic({5.0, 0.3}, {1.0, 1.0});
  const auto f = [&](const std::vector<double>& x) {
    for (double xi : x) {
      if (xi < 0.0 || xi > 1.0) ++outside_calls;
    }
    return base(x);
  };
  const OptimizeResult r = minimize_nelder_mead(f, {0.5, 0.5}, {0.0, 0.0}, {1.0, 1.0},
                                                OptimizeOptions{.tolerance = 1e-12});
  EXPECT_EQ(r.x[0], 1.0);
  EXPECT_NEAR(r.x[1], 0.3, 1e-3);
  EXPECT_NEAR(r.value, 16.0, 1e-6);
  EXPECT_EQ(outside_calls, 0);
}

TEST(NelderMead, LandsOnLowerBoundAndClampsStartPoint) {
  // Oracle: (x + 3)^2 + (y - 2)^2 on [-1, 1]^2 -> (-1, 1), value 4 + 1 = 5. x0 starts outside.
  int outside_calls = 0;
  const auto base = shifted_quadratic({-3.0, 2.0}, {1.0, 1.0});
  const auto f = [&](const std::vector<double>& x) {
    for (double xi : x) {
      if (xi < -1.0 || xi > 1.0) ++outside_calls;
    }
    return base(x);
  };
  const OptimizeResult r = minimize_nelder_mead(f, {7.0, -9.0}, {-1.0, -1.0}, {1.0, 1.0});
  EXPECT_EQ(r.x[0], -1.0);
  EXPECT_EQ(r.x[1], 1.0);
  EXPECT_EQ(r.value, 5.0);
  EXPECT_EQ(outside_calls, 0);
}

TEST(NelderMead, IsDeterministic) {
  const auto f = shifted_quadratic({0.1, -0.2, 0.3}, {1.0, 10.0, 0.1}, 2.0);
  const std::vector<double> lo(3, -1.0);
  const std::vector<double> hi(3, 1.0);
  const OptimizeResult a = minimize_nelder_mead(f, {0.5, 0.5, 0.5}, lo, hi);
  const OptimizeResult b = minimize_nelder_mead(f, {0.5, 0.5, 0.5}, lo, hi);
  EXPECT_EQ(a.x, b.x);  // Bitwise-identical doubles.
  EXPECT_EQ(a.value, b.value);
  EXPECT_EQ(a.evaluations, b.evaluations);
}

TEST(NelderMead, NeverExceedsEvaluationBudget) {
  int calls = 0;
  const auto base = shifted_quadratic({0.3, -0.7, 0.2}, {1.0, 2.0, 3.0});
  const auto f = [&](const std::vector<double>& x) {
    ++calls;
    return base(x);
  };
  for (int budget : {1, 2, 3, 4, 5, 17, 50}) {
    calls = 0;
    const OptimizeResult r = minimize_nelder_mead(f, {1.0, 1.0, 1.0}, std::vector<double>(3, -2.0),
                                                  std::vector<double>(3, 2.0),
                                                  OptimizeOptions{.max_evaluations = budget});
    EXPECT_EQ(r.evaluations, calls) << "budget=" << budget;
    EXPECT_LE(r.evaluations, budget) << "budget=" << budget;
    EXPECT_EQ(r.value, base(r.x)) << "budget=" << budget;
  }
}

TEST(NelderMead, StopsEarlyWhenSimplexValuesConverge) {
  // With a minimum value of 1, the relative tolerance 1e-4 stops well before the budget.
  const auto f = shifted_quadratic({0.3, -0.7}, {1.0, 2.0}, 1.0);
  const OptimizeResult r = minimize_nelder_mead(f, {1.5, 1.5}, {-2.0, -2.0}, {2.0, 2.0},
                                                OptimizeOptions{.max_evaluations = 10000});
  EXPECT_LT(r.evaluations, 10000);
  EXPECT_NEAR(r.value, 1.0, 1e-3);
}

TEST(NelderMead, TreatsNaNAsWorseThanAnyValue) {
  // f is NaN for x > 0.5; the finite part has its minimum at 0.2 (value 0).
  const auto f = [](const std::vector<double>& x) {
    if (x[0] > 0.5) return std::numeric_limits<double>::quiet_NaN();
    return (x[0] - 0.2) * (x[0] - 0.2);
  };
  const OptimizeResult r = minimize_nelder_mead(f, {0.45}, {-1.0}, {1.0});
  EXPECT_NEAR(r.x[0], 0.2, 1e-3);
  EXPECT_FALSE(std::isnan(r.value));
}

}  // namespace
}  // namespace preflight
