#include "workload/expert_routing.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "base/check.h"

namespace preflight {
namespace {

// SplitMix64 (Steele et al. 2014): a tiny, fully specified generator, so draws are identical on
// every platform and standard library (std::gamma_distribution is not).
class SplitMix {
 public:
  explicit SplitMix(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // Uniform in (0, 1).
  double uniform() { return (static_cast<double>(next() >> 11) + 0.5) * 0x1.0p-53; }
  // Standard normal (Box–Muller).
  double normal() {
    const double u = uniform(), v = uniform();
    return std::sqrt(-2.0 * std::log(u)) * std::cos(2.0 * M_PI * v);
  }
  // Gamma(alpha, 1) by Marsaglia and Tsang (2000); alpha < 1 via the boost u^(1/alpha).
  double gamma(double alpha) {
    if (alpha < 1) return gamma(alpha + 1) * std::pow(uniform(), 1.0 / alpha);
    const double d = alpha - 1.0 / 3.0;
    const double c = 1.0 / std::sqrt(9.0 * d);
    for (;;) {
      double x, v;
      do {
        x = normal();
        v = 1 + c * x;
      } while (v <= 0);
      v = v * v * v;
      const double u = uniform();
      if (std::log(u) < 0.5 * x * x + d - d * v + d * std::log(v)) return d * v;
    }
  }

 private:
  uint64_t state_;
};

// Φ⁻¹(q) for 0 < q < 1: Acklam's rational approximation (relative error below 1.2e-9).
double inverse_normal_cdf(double q) {
  static const double a[] = {-3.969683028665376e+01, 2.209460984245205e+02,  -2.759285104469687e+02,
                             1.383577518672690e+02,  -3.066479806614716e+01, 2.506628277459239e+00};
  static const double b[] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                             6.680131188771972e+01, -1.328068155288572e+01};
  static const double c[] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                             -2.549732539343734e+00, 4.374664141464968e+00,  2.938163982698783e+00};
  static const double d[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                             3.754408661907416e+00};
  const double lo = 0.02425;
  if (q < lo) {
    const double t = std::sqrt(-2 * std::log(q));
    return (((((c[0] * t + c[1]) * t + c[2]) * t + c[3]) * t + c[4]) * t + c[5]) /
           ((((d[0] * t + d[1]) * t + d[2]) * t + d[3]) * t + 1);
  }
  if (q > 1 - lo) return -inverse_normal_cdf(1 - q);
  const double u = q - 0.5, r = u * u;
  return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * u /
         (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
}

void normalise(std::vector<double>& s) {
  const double total = std::accumulate(s.begin(), s.end(), 0.0);
  if (total > 0) {
    for (double& v : s) v /= total;
  } else {
    std::fill(s.begin(), s.end(), 1.0 / static_cast<double>(s.size()));
  }
}

}  // namespace

double ExpertLoad::imbalance() const {
  double kept = 0;
  for (double v : rank_share) kept += v;
  if (kept <= 0 || rank_share.empty()) return 1;
  return max_rank_share / (kept / static_cast<double>(rank_share.size()));
}

std::vector<double> cap_shares(std::vector<double> s, double cap) {
  PREFLIGHT_CHECK(cap * static_cast<double>(s.size()) >= 1 - 1e-12);
  // Water-filling: freeze capped entries, rescale the rest to the remaining mass; at most
  // s.size() rounds since each round freezes at least one entry or stops.
  std::vector<bool> frozen(s.size(), false);
  for (size_t round = 0; round < s.size(); ++round) {
    double frozen_mass = 0, free_mass = 0;
    for (size_t i = 0; i < s.size(); ++i) (frozen[i] ? frozen_mass : free_mass) += s[i];
    if (free_mass <= 0) break;
    const double scale = (1 - frozen_mass) / free_mass;
    bool changed = false;
    for (size_t i = 0; i < s.size(); ++i) {
      if (frozen[i]) continue;
      s[i] *= scale;
      if (s[i] > cap * (1 + 1e-12)) {
        s[i] = cap;
        frozen[i] = true;
        changed = true;
      }
    }
    if (!changed) break;
  }
  return s;
}

double ep_group_token_copies(const Scenario& s) {
  const ParallelismConfig& p = s.parallelism;
  const double tokens_per_rank = static_cast<double>(s.training.micro_batch) * s.training.seq_len *
                                 s.expert_tp() / (static_cast<double>(p.tp) * std::max(1, p.cp));
  return std::max(1, p.ep) * tokens_per_rank * std::max(1, s.model.moe.top_k);
}

ExpertLoad draw_expert_load(const MoeConfig& m, int ep, int layer, uint64_t seed,
                            double token_copies) {
  PREFLIGHT_CHECK(m.enabled() && ep >= 1 && m.experts % ep == 0);
  const int E = m.experts;
  std::vector<double> s(E, 1.0 / E);
  SplitMix rng(seed ^
               (0x6d6f652d6c6f6164ULL + static_cast<uint64_t>(layer) * 0x9e3779b97f4a7c15ULL));
  switch (m.routing) {
    case MoeRouting::kUniform:
      break;
    case MoeRouting::kBalanced:
      if (ep > 1 && token_copies > 0) {
        // The busiest rank's share: 1/ep + z·sqrt((1/ep)(1 − 1/ep)/N), z by Blom's formula.
        const double p = 1.0 / ep;
        const double z = inverse_normal_cdf((ep - 0.375) / (ep + 0.25));
        const double busiest = std::min(1.0, p + z * std::sqrt(p * (1 - p) / token_copies));
        const int per_rank = E / ep;
        for (int e = 0; e < E; ++e) {
          s[e] = e < per_rank ? busiest / per_rank : (1 - busiest) / (E - per_rank);
        }
      }
      break;
    case MoeRouting::kZipf: {
      std::vector<int> rank(E);
      std::iota(rank.begin(), rank.end(), 1);
      for (int i = E - 1; i > 0; --i) {  // Fisher–Yates
        const int j = static_cast<int>(rng.next() % static_cast<uint64_t>(i + 1));
        std::swap(rank[i], rank[j]);
      }
      for (int e = 0; e < E; ++e) s[e] = std::pow(static_cast<double>(rank[e]), -m.zipf_exponent);
      normalise(s);
      break;
    }
    case MoeRouting::kDirichlet:
      for (int e = 0; e < E; ++e) s[e] = rng.gamma(m.dirichlet_alpha);
      normalise(s);
      break;
    case MoeRouting::kLoads:
      for (int e = 0; e < E && e < static_cast<int>(m.loads.size()); ++e) s[e] = m.loads[e];
      normalise(s);
      break;
  }
  const int k = std::max(1, m.top_k);
  s = cap_shares(std::move(s), 1.0 / k);
  ExpertLoad out;
  out.layer = layer;
  if (m.capacity_factor > 0) {
    const double capacity = m.capacity_factor / E;
    for (double& v : s) {
      if (v > capacity) {
        out.dropped += v - capacity;
        v = capacity;
      }
    }
  }
  out.expert_share = s;
  out.rank_share.assign(ep, 0.0);
  const int per_rank = E / ep;
  for (int e = 0; e < E; ++e) out.rank_share[e / per_rank] += s[e];
  out.max_rank_share = *std::max_element(out.rank_share.begin(), out.rank_share.end());
  out.max_expert_share = *std::max_element(s.begin(), s.end());
  return out;
}

}  // namespace preflight
