// Error and rank statistics for validating Preflight's predictions against measurements:
// absolute/signed percentage errors, tie-aware ranks, Spearman correlation, and a seeded,
// deterministic k-fold assignment for cross-validation. All functions are pure and
// reproducible across platforms and standard libraries.
#pragma once

#include <cstdint>
#include <vector>

namespace preflight {

// Returns the mean over i of 100 * |predicted[i] - measured[i]| / |measured[i]|, in percent
// (e.g. 7.5 means 7.5%).
// REQUIRES: predicted.size() == measured.size() > 0; every measured[i] != 0; no NaN inputs.
double mean_absolute_percentage_error(const std::vector<double>& predicted,
                                      const std::vector<double>& measured);

// Returns the median of the absolute percentage errors (see above), in percent. For an even
// count this is the mean of the two middle values.
// REQUIRES: predicted.size() == measured.size() > 0; every measured[i] != 0; no NaN inputs.
double median_absolute_percentage_error(const std::vector<double>& predicted,
                                        const std::vector<double>& measured);

// Returns the q-quantile of the absolute percentage errors, in percent, interpolating linearly
// between order statistics: with the errors sorted ascending as e[0..n-1] and h = q * (n - 1),
// the result is e[floor(h)] + (h - floor(h)) * (e[floor(h) + 1] - e[floor(h)]). q = 0 gives the
// minimum, q = 0.5 the median, q = 1 the maximum (numpy's default "linear" method).
// REQUIRES: predicted.size() == measured.size() > 0; every measured[i] != 0; 0 <= q <= 1;
// no NaN inputs.
double percentile_absolute_percentage_error(const std::vector<double>& predicted,
                                            const std::vector<double>& measured, double q);

// Returns the mean over i of 100 * (predicted[i] - measured[i]) / |measured[i]|, in percent:
// the bias. Positive means predictions are too high on average, negative too low.
// REQUIRES: predicted.size() == measured.size() > 0; every measured[i] != 0; no NaN inputs.
double mean_signed_percentage_error(const std::vector<double>& predicted,
                                    const std::vector<double>& measured);

// Returns the 1-based rank of each element of x (smallest = 1), giving tied elements the average
// of the ranks they span, e.g. {1, 2, 2, 3} -> {1, 2.5, 2.5, 4}. Empty input gives empty output.
// REQUIRES: no NaN in x.
std::vector<double> ranks_with_ties(const std::vector<double>& x);

// Returns Spearman's rank correlation of x and y in [-1, 1]: the Pearson correlation of their
// tie-averaged ranks (ranks_with_ties). Returns NaN (quiet) when size < 2 or when x or y is
// constant, since the correlation is undefined there; callers must check with std::isnan.
// REQUIRES: x.size() == y.size(); no NaN in x or y.
double spearman(const std::vector<double>& x, const std::vector<double>& y);

// Returns the regret of choosing by `predicted`, in percent: with i the index of the smallest
// predicted value (the first on ties; NaN predictions are never chosen) and m the smallest
// measured value, 100 * (measured[i] - m) / m. 0 means the prediction picks the truly fastest
// configuration; 7 means its pick is 7% slower than the best measured one. Returns NaN (quiet)
// when the input is empty or every prediction is NaN.
// REQUIRES: predicted.size() == measured.size(); every measured[i] > 0; no NaN in measured.
double ranking_regret_pct(const std::vector<double>& predicted,
                          const std::vector<double>& measured);

// Returns a vector of n fold indices in [0, k): element i is the fold of item i. Every fold gets
// either floor(n / k) or ceil(n / k) items (the first n % k folds get the extra one), and the
// assignment is a Fisher-Yates shuffle driven by std::mt19937_64 seeded with `seed`, with an
// unbiased rejection-based integer mapping. The result depends only on (n, k, seed), identically
// on every platform and standard library.
// REQUIRES: 2 <= k <= n.
std::vector<int> kfold_assignment(int n, int k, uint64_t seed);

}  // namespace preflight
