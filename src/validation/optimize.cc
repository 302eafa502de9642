#include "validation/optimize.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstddef>
#include <functional>
#include <limits>
#include <utility>
#include <vector>

namespace preflight {
namespace {

constexpr double kReflection = 1.0;
constexpr double kExpansion = 2.0;
constexpr double kContraction = 0.5;
constexpr double kShrink = 0.5;

// A simplex vertex and its objective value (NaN already mapped to +infinity).
struct Vertex {
  std::vector<double> x;
  double value = 0.0;
};

// Counts evaluations, enforces the budget and the box, and remembers the best point seen.
class BoundedObjective {
 public:
  BoundedObjective(const std::function<double(const std::vector<double>&)>& f,
                   const std::vector<double>& lo, const std::vector<double>& hi,
                   int max_evaluations)
      : f_(f), lo_(lo), hi_(hi), max_evaluations_(max_evaluations) {}

  // Returns true if at least one more evaluation is allowed.
  bool has_budget() const { return evaluations_ < max_evaluations_; }

  // Returns x clamped coordinate-wise into [lo, hi].
  std::vector<double> clamp(std::vector<double> x) const {
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = std::clamp(x[i], lo_[i], hi_[i]);
    return x;
  }

  // Returns the vertex for clamp(x), with NaN values ranked as +infinity.
  // REQUIRES: has_budget().
  Vertex evaluate(std::vector<double> x) {
    assert(has_budget());
    x = clamp(std::move(x));
    const double raw = f_(x);
    ++evaluations_;
    if (!has_best_ || raw < best_.value || (std::isnan(best_.value) && !std::isnan(raw))) {
      best_ = Vertex{x, raw};
      has_best_ = true;
    }
    const double ranked = std::isnan(raw) ? std::numeric_limits<double>::infinity() : raw;
    return Vertex{std::move(x), ranked};
  }

  // Returns the best point seen, its raw value and the evaluation count.
  // REQUIRES: at least one evaluation was made.
  OptimizeResult result() const {
    assert(has_best_);
    return OptimizeResult{best_.x, best_.value, evaluations_};
  }

 private:
  const std::function<double(const std::vector<double>&)>& f_;
  const std::vector<double>& lo_;
  const std::vector<double>& hi_;
  const int max_evaluations_;
  int evaluations_ = 0;
  bool has_best_ = false;
  Vertex best_;
};

// Returns a + t * (b - a), coordinate-wise.
std::vector<double> along(const std::vector<double>& a, const std::vector<double>& b, double t) {
  std::vector<double> out(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) out[i] = a[i] + t * (b[i] - a[i]);
  return out;
}

// Returns true if the simplex (sorted, best first) has converged: the spread of its values is
// below tolerance * (|best| + 1e-12) AND every vertex lies within tolerance * (hi[i] - lo[i]) of
// the best vertex in each coordinate i. The second test keeps a simplex whose vertices straddle
// the minimum with (nearly) equal values from stopping early.
bool has_converged(const std::vector<Vertex>& simplex, const std::vector<double>& lo,
                   const std::vector<double>& hi, double tolerance) {
  const Vertex& best = simplex.front();
  if (!(simplex.back().value - best.value < tolerance * (std::abs(best.value) + 1e-12))) {
    return false;
  }
  for (std::size_t v = 1; v < simplex.size(); ++v) {
    for (std::size_t i = 0; i < best.x.size(); ++i) {
      if (std::abs(simplex[v].x[i] - best.x[i]) > tolerance * (hi[i] - lo[i])) return false;
    }
  }
  return true;
}

// Runs Nelder-Mead from a fresh axis-aligned simplex around x0 until the simplex values
// converge or the budget runs out. Returns true if it stopped because the values converged.
// REQUIRES: x0 inside the box; objective.has_budget().
bool run_simplex(BoundedObjective& objective, const std::vector<double>& x0,
                 const std::vector<double>& lo, const std::vector<double>& hi,
                 const OptimizeOptions& options) {
  const std::size_t n = x0.size();

  // Initial simplex: x0 and one axis-aligned step per coordinate, kept inside the box.
  std::vector<Vertex> simplex;
  simplex.reserve(n + 1);
  simplex.push_back(objective.evaluate(x0));
  for (std::size_t i = 0; i < n && objective.has_budget(); ++i) {
    const double step = options.initial_step * (hi[i] - lo[i]);
    std::vector<double> x = x0;
    x[i] = (x0[i] + step <= hi[i]) ? x0[i] + step : x0[i] - step;
    simplex.push_back(objective.evaluate(std::move(x)));
  }
  if (simplex.size() < n + 1) return false;

  // Ties keep their previous order (stable sort), so the iteration is fully deterministic.
  const auto by_value = [](const Vertex& a, const Vertex& b) { return a.value < b.value; };
  while (objective.has_budget()) {
    std::stable_sort(simplex.begin(), simplex.end(), by_value);
    if (has_converged(simplex, lo, hi, options.tolerance)) return true;
    const double best = simplex.front().value;

    // Centroid of all vertices but the worst.
    std::vector<double> centroid(n, 0.0);
    for (std::size_t v = 0; v < n; ++v) {
      for (std::size_t i = 0; i < n; ++i) centroid[i] += simplex[v].x[i];
    }
    for (double& c : centroid) c /= static_cast<double>(n);

    const double second_worst = simplex[n - 1].value;
    Vertex reflected = objective.evaluate(along(centroid, simplex[n].x, -kReflection));
    if (reflected.value < best) {
      if (!objective.has_budget()) return false;
      Vertex expanded = objective.evaluate(along(centroid, reflected.x, kExpansion));
      simplex[n] = expanded.value < reflected.value ? std::move(expanded) : std::move(reflected);
      continue;
    }
    if (reflected.value < second_worst) {
      simplex[n] = std::move(reflected);
      continue;
    }
    if (!objective.has_budget()) return false;
    if (reflected.value < simplex[n].value) {
      // Outside contraction, between the centroid and the reflected point.
      Vertex contracted = objective.evaluate(along(centroid, reflected.x, kContraction));
      if (contracted.value <= reflected.value) {
        simplex[n] = std::move(contracted);
        continue;
      }
    } else {
      // Inside contraction, between the centroid and the worst vertex.
      Vertex contracted = objective.evaluate(along(centroid, simplex[n].x, kContraction));
      if (contracted.value < simplex[n].value) {
        simplex[n] = std::move(contracted);
        continue;
      }
    }
    // Shrink every vertex towards the best one. If the budget runs out midway, the best point
    // seen so far is already recorded, so stopping with a half-shrunk simplex is safe.
    for (std::size_t v = 1; v <= n && objective.has_budget(); ++v) {
      simplex[v] = objective.evaluate(along(simplex[0].x, simplex[v].x, kShrink));
    }
  }
  return false;
}

}  // namespace

OptimizeResult minimize_nelder_mead(const std::function<double(const std::vector<double>&)>& f,
                                    std::vector<double> x0, const std::vector<double>& lo,
                                    const std::vector<double>& hi, const OptimizeOptions& options) {
  const std::size_t n = x0.size();
  assert(n >= 1 && n <= 8);
  assert(lo.size() == n && hi.size() == n);
  assert(options.max_evaluations >= 1);
  for (std::size_t i = 0; i < n; ++i) assert(lo[i] <= hi[i]);

  BoundedObjective objective(f, lo, hi, options.max_evaluations);
  if (!run_simplex(objective, objective.clamp(std::move(x0)), lo, hi, options)) {
    return objective.result();
  }
  // The values converged, but a simplex can also "converge" spuriously: vertices straddling the
  // minimum with equal values, or a simplex flattened against a bound by clamping. Restart from
  // a fresh simplex around the best point until a restart no longer improves the best value by
  // the convergence tolerance (or the budget runs out).
  while (objective.has_budget()) {
    const OptimizeResult before = objective.result();
    const bool converged = run_simplex(objective, before.x, lo, hi, options);
    const double after = objective.result().value;
    if (!converged) break;
    if (!(after < before.value - options.tolerance * (std::abs(before.value) + 1e-12))) break;
  }
  return objective.result();
}

}  // namespace preflight
