#include "validation/stats.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

namespace preflight {
namespace {

// Returns 100 * |predicted[i] - measured[i]| / |measured[i]| for every i.
// REQUIRES: same non-zero size; every measured[i] != 0.
std::vector<double> absolute_percentage_errors(const std::vector<double>& predicted,
                                               const std::vector<double>& measured) {
  assert(predicted.size() == measured.size());
  assert(!measured.empty());
  std::vector<double> errors(measured.size());
  for (std::size_t i = 0; i < measured.size(); ++i) {
    assert(measured[i] != 0.0);
    errors[i] = 100.0 * std::abs(predicted[i] - measured[i]) / std::abs(measured[i]);
  }
  return errors;
}

// Returns the q-quantile of `values` with linear interpolation between order statistics.
// REQUIRES: values non-empty; 0 <= q <= 1.
double quantile_linear(std::vector<double> values, double q) {
  assert(!values.empty());
  assert(q >= 0.0 && q <= 1.0);
  std::sort(values.begin(), values.end());
  const double h = q * static_cast<double>(values.size() - 1);
  const std::size_t lower = static_cast<std::size_t>(std::floor(h));
  if (lower + 1 >= values.size()) return values.back();
  const double fraction = h - static_cast<double>(lower);
  return values[lower] + fraction * (values[lower + 1] - values[lower]);
}

// Returns an integer uniformly distributed in [0, bound) drawn from rng. Rejects raw draws below
// 2^64 mod bound so the remaining range is an exact multiple of bound (no modulo bias). Unlike
// std::uniform_int_distribution, the mapping is fixed, so results match across standard libraries.
// REQUIRES: bound > 0.
uint64_t uniform_below(std::mt19937_64& rng, uint64_t bound) {
  assert(bound > 0);
  const uint64_t threshold = (0 - bound) % bound;  // == 2^64 mod bound.
  while (true) {
    const uint64_t r = rng();
    if (r >= threshold) return r % bound;
  }
}

}  // namespace

double mean_absolute_percentage_error(const std::vector<double>& predicted,
                                      const std::vector<double>& measured) {
  const std::vector<double> errors = absolute_percentage_errors(predicted, measured);
  return std::accumulate(errors.begin(), errors.end(), 0.0) / static_cast<double>(errors.size());
}

double median_absolute_percentage_error(const std::vector<double>& predicted,
                                        const std::vector<double>& measured) {
  return quantile_linear(absolute_percentage_errors(predicted, measured), 0.5);
}

double percentile_absolute_percentage_error(const std::vector<double>& predicted,
                                            const std::vector<double>& measured, double q) {
  return quantile_linear(absolute_percentage_errors(predicted, measured), q);
}

double mean_signed_percentage_error(const std::vector<double>& predicted,
                                    const std::vector<double>& measured) {
  assert(predicted.size() == measured.size());
  assert(!measured.empty());
  double sum = 0.0;
  for (std::size_t i = 0; i < measured.size(); ++i) {
    assert(measured[i] != 0.0);
    sum += 100.0 * (predicted[i] - measured[i]) / std::abs(measured[i]);
  }
  return sum / static_cast<double>(measured.size());
}

std::vector<double> ranks_with_ties(const std::vector<double>& x) {
  const std::size_t n = x.size();
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&x](std::size_t a, std::size_t b) { return x[a] < x[b]; });
  std::vector<double> ranks(n);
  std::size_t start = 0;
  while (start < n) {
    std::size_t end = start + 1;  // One past the last element tied with order[start].
    while (end < n && x[order[end]] == x[order[start]]) ++end;
    // Positions start..end-1 (0-based) hold 1-based ranks start+1..end; their mean:
    const double average_rank = 0.5 * static_cast<double>(start + 1 + end);
    for (std::size_t i = start; i < end; ++i) ranks[order[i]] = average_rank;
    start = end;
  }
  return ranks;
}

double spearman(const std::vector<double>& x, const std::vector<double>& y) {
  assert(x.size() == y.size());
  const std::size_t n = x.size();
  if (n < 2) return std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> rx = ranks_with_ties(x);
  const std::vector<double> ry = ranks_with_ties(y);
  // Every rank vector of length n has mean (n + 1) / 2, whatever the ties.
  const double mean_rank = 0.5 * static_cast<double>(n + 1);
  double covariance = 0.0;
  double variance_x = 0.0;
  double variance_y = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    const double dx = rx[i] - mean_rank;
    const double dy = ry[i] - mean_rank;
    covariance += dx * dy;
    variance_x += dx * dx;
    variance_y += dy * dy;
  }
  if (variance_x == 0.0 || variance_y == 0.0) return std::numeric_limits<double>::quiet_NaN();
  const double r = covariance / std::sqrt(variance_x * variance_y);
  return std::clamp(r, -1.0, 1.0);
}

double ranking_regret_pct(const std::vector<double>& predicted,
                          const std::vector<double>& measured) {
  assert(predicted.size() == measured.size());
  std::size_t pick = predicted.size();
  for (std::size_t i = 0; i < predicted.size(); ++i) {
    if (std::isnan(predicted[i])) continue;
    if (pick == predicted.size() || predicted[i] < predicted[pick]) pick = i;
  }
  if (pick == predicted.size()) return std::numeric_limits<double>::quiet_NaN();
  const double best = *std::min_element(measured.begin(), measured.end());
  assert(best > 0.0);
  return 100.0 * (measured[pick] - best) / best;
}

std::vector<int> kfold_assignment(int n, int k, uint64_t seed) {
  assert(k >= 2 && k <= n);
  std::vector<int> folds(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) folds[static_cast<std::size_t>(i)] = i % k;
  std::mt19937_64 rng(seed);
  for (std::size_t i = folds.size() - 1; i > 0; --i) {
    const std::size_t j = static_cast<std::size_t>(uniform_below(rng, i + 1));
    std::swap(folds[i], folds[j]);
  }
  return folds;
}

}  // namespace preflight
