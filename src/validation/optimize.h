// A small, deterministic, derivative-free minimizer for calibrating Preflight's model
// parameters: Nelder-Mead over a box, clamping every trial point into the bounds so the
// objective is never evaluated outside them.
#pragma once

#include <functional>
#include <vector>

namespace preflight {

// Tuning knobs for minimize_nelder_mead.
struct OptimizeOptions {
  int max_evaluations = 300;  // Hard cap on calls to the objective; never exceeded.
  double tolerance = 1e-4;    // Convergence threshold; see minimize_nelder_mead.
  double initial_step = 0.1;  // Initial simplex edge per coordinate, as a fraction of (hi - lo).
};

// Outcome of minimize_nelder_mead.
struct OptimizeResult {
  std::vector<double> x;  // Best point evaluated; lo[i] <= x[i] <= hi[i].
  double value = 0.0;     // f(x), exactly as returned by f (NaN only if every value was NaN).
  int evaluations = 0;    // Number of calls made to f; 1 <= evaluations <= max_evaluations.
};

// Minimizes f over the box [lo, hi] starting from x0 (clamped into the box first) with the
// Nelder-Mead simplex method, coefficients reflection 1, expansion 2, contraction 0.5, shrink 0.5.
// Every trial point is clamped coordinate-wise into [lo, hi] before f sees it, so f is never
// called outside the box. The initial simplex is x0 plus, per coordinate i, x0 moved by
// initial_step * (hi[i] - lo[i]) along axis i (towards lo[i] if moving up would leave the box).
// A simplex run converges when the spread of its values (worst - best) is below
// tolerance * (|best| + 1e-12) and, so that vertices straddling the minimum with equal values do
// not stop it early, every vertex is within tolerance * (hi[i] - lo[i]) of the best in each
// coordinate i. After convergence it restarts from a fresh initial simplex around the best point
// (this escapes simplices flattened against a bound by clamping), and stops once a restart fails
// to lower the best value by more than tolerance * (|best| + 1e-12). It always stops when
// max_evaluations calls have been made. A NaN from f is ranked as +infinity. Fully
// deterministic: the same inputs give bit-identical results.
// Returns the best point evaluated, its value and the number of evaluations used.
// REQUIRES: 1 <= x0.size() <= 8; lo.size() == hi.size() == x0.size(); lo[i] <= hi[i] and both
// finite; options.max_evaluations >= 1; options.tolerance >= 0; options.initial_step > 0;
// f is deterministic.
OptimizeResult minimize_nelder_mead(const std::function<double(const std::vector<double>&)>& f,
                                    std::vector<double> x0, const std::vector<double>& lo,
                                    const std::vector<double>& hi,
                                    const OptimizeOptions& options = {});

}  // namespace preflight
