#include "collective/ofi_tuner.h"

#include <cmath>
#include <vector>

namespace preflight::nccl {
namespace {

// The plugin's bounds of its plane: 100 GiB and 2^20 ranks (nccl_ofi_tuner.h TUNER_MAX_SIZE,
// TUNER_MAX_RANKS); beyond them it leaves the choice to NCCL.
constexpr double kMaxSize = 100.0 * 1024 * 1024 * 1024;
constexpr double kMaxRanks = 1024.0 * 1024;

struct Region {
  Algo algo;
  Proto proto;
  std::vector<TunerPoint> v;
};

// The point where the line through a and b leaves the box [0, z.x] × [0, z.y] upward or to the
// right (the plugin's extend_region): the regions' open sides run on to the plane's bounds.
TunerPoint extend(TunerPoint a, TunerPoint b, TunerPoint z) {
  if (a.x == b.x) return {a.x, z.y};
  if (a.y == b.y) return {z.x, a.y};
  const double m = (a.y - b.y) / (a.x - b.x);
  const double c = b.y - m * b.x;
  const double y_at_right = m * z.x + c;
  if (y_at_right < z.y) return {z.x, y_at_right};
  return {(z.y - c) / m, z.y};
}

constexpr TunerPoint kMax{kMaxSize, kMaxRanks};

// P6-B200, one rank per GPU (region_init_internal_p6, nRanks == 8 · nNodes). x in bytes, y in
// ranks; each list in the plugin's vertex order.
std::vector<Region> p6_all_reduce() {
  const TunerPoint tree_ll = extend({393216, 16}, {393216, 1024}, kMax);
  const TunerPoint tree_ll128 = extend({96993280, 1024}, {106430464, 2048}, kMax);
  const TunerPoint nvls_tree = extend({10737418240.0, 512}, {34359738368.0, 1500}, kMax);
  return {
      {Algo::kTree, Proto::kLL, {{0, 16}, {393216, 16}, tree_ll, {0, kMaxRanks}}},
      {Algo::kTree,
       Proto::kLL128,
       {tree_ll,
        {393216, 16},
        {4718592, 16},
        {18350080, 32},
        {40370176, 64},
        {57147392, 128},
        {72876032, 256},
        {96993280, 1024},
        {106430464, 2048},
        tree_ll128}},
      {Algo::kRing,
       Proto::kLL128,
       {{90701824, 128}, {50855936, 64}, {18350080, 32}, {133693440, 32}, {120061952, 64}}},
      {Algo::kNvlsTree,
       Proto::kSimple,
       {tree_ll128,
        {106430464, 2048},
        {96993280, 1024},
        {72876032, 256},
        {57147392, 128},
        {40370176, 64},
        {18350080, 32},
        {50855936, 64},
        {90701824, 128},
        {120061952, 64},
        {133693440, 32},
        {18350080, 32},
        {4718592, 16},
        {kMaxSize, 16},
        {435159040, 32},
        {1072693248, 64},
        {10737418240.0, 512},
        {34359738368.0, 1500},
        nvls_tree}},
      {Algo::kRing,
       Proto::kSimple,
       {nvls_tree, {10737418240.0, 512}, {1072693248, 64}, {435159040, 32}, {kMaxSize, 16}}},
  };
}

std::vector<Region> p6_all_gather() {
  const TunerPoint ring_ll = extend({74973184, 1024}, {213385216, 2048}, kMax);
  const TunerPoint ring_ll128 = extend({8321499136.0, 512}, {32212254720.0, 2048}, kMax);
  return {
      {Algo::kRing,
       Proto::kLL,
       {{0, 16},
        {786432, 16},
        {1572864, 32},
        {2621440, 64},
        {4718592, 128},
        {17301504, 256},
        {74973184, 1024},
        {213385216, 2048},
        ring_ll,
        {0, kMaxRanks}}},
      {Algo::kRing,
       Proto::kLL128,
       {ring_ll,
        {213385216, 2048},
        {74973184, 1024},
        {17301504, 256},
        {4718592, 128},
        {2621440, 64},
        {1572864, 32},
        {786432, 16},
        {198705152, 16},
        {456130560, 32},
        {871366656, 64},
        {8321499136.0, 512},
        {32212254720.0, 2048},
        ring_ll128}},
      {Algo::kRing,
       Proto::kSimple,
       {ring_ll128,
        {32212254720.0, 2048},
        {8321499136.0, 512},
        {871366656, 64},
        {456130560, 32},
        {198705152, 16},
        {kMaxSize, 16}}},
  };
}

std::vector<Region> p6_reduce_scatter() {
  const TunerPoint ring_ll = extend({73924608, 1024}, {209190912, 2048}, kMax);
  const TunerPoint ring_ll128 = extend({4294967296.0, 256}, {8589934592.0, 512}, kMax);
  return {
      {Algo::kRing,
       Proto::kLL,
       {{0, 16},
        {786432, 16},
        {1572864, 32},
        {2621440, 64},
        {4718592, 128},
        {17301504, 256},
        {35127296, 512},
        {73924608, 1024},
        {209190912, 2048},
        ring_ll,
        {0, kMaxRanks}}},
      {Algo::kRing,
       Proto::kLL128,
       {ring_ll,
        {209190912, 2048},
        {73924608, 1024},
        {35127296, 512},
        {17301504, 256},
        {4718592, 128},
        {2621440, 64},
        {1572864, 32},
        {786432, 16},
        {219676672, 16},
        {508559360, 32},
        {592445440, 64},
        {4294967296.0, 256},
        {8589934592.0, 512},
        ring_ll128}},
      {Algo::kRing,
       Proto::kSimple,
       {ring_ll128,
        {4294967296.0, 256},
        {592445440, 64},
        {508559360, 32},
        {219676672, 16},
        {kMaxSize, 16}}},
  };
}

const std::vector<Region>& p6_regions(Coll c) {
  static const std::vector<Region> ar = p6_all_reduce();
  static const std::vector<Region> ag = p6_all_gather();
  static const std::vector<Region> rs = p6_reduce_scatter();
  static const std::vector<Region> none;
  switch (c) {
    case Coll::kAllReduce:
      return ar;
    case Coll::kAllGather:
      return ag;
    case Coll::kReduceScatter:
      return rs;
    default:
      return none;
  }
}

using Real = long double;

Real cross(Real ax, Real ay, Real bx, Real by) { return ax * by - ay * bx; }

// Whether p lies on the segment a-b: within 1e-9 of its line in the plane's own units (the
// plugin's test is a distance under 1e-10), and between the ends. An angle tolerance would not
// do: bytes run to 1e11 and ranks to 1e6, so a point 0.01 ranks off a long edge subtends a
// smaller angle than rounding.
bool on_segment(TunerPoint a, TunerPoint b, TunerPoint p) {
  const Real abx = Real(b.x) - a.x, aby = Real(b.y) - a.y;
  const Real apx = Real(p.x) - a.x, apy = Real(p.y) - a.y;
  const Real c = cross(abx, aby, apx, apy);
  if (std::fabs(c) > 1e-9L * std::sqrt(abx * abx + aby * aby)) return false;
  const Real dot = abx * apx + aby * apy;
  return dot >= 0 && dot <= abx * abx + aby * aby;
}

}  // namespace

bool is_known_tuner(std::string_view name) { return name.empty() || name == "aws-ofi-p6"; }

int region_contains(const TunerPoint* v, int n, TunerPoint p) {
  for (int i = 0; i < n; ++i) {
    if (on_segment(v[i], v[(i + 1) % n], p)) return 0;
  }
  // Even-odd count of the edges a ray from p crosses, cast toward a point beyond every region
  // (the plugin's (2·max size, 2·max ranks)): slanted, so it never runs along the regions'
  // horizontal and vertical edges. Half-open rule: an edge counts when its ends lie on strictly
  // opposite sides of the ray's line, one end allowed on it, so a vertex the ray passes
  // through counts once.
  const Real dx = Real(2 * kMaxSize) - p.x, dy = Real(2 * kMaxRanks) - p.y;
  bool inside = false;
  for (int i = 0; i < n; ++i) {
    const TunerPoint a = v[i], b = v[(i + 1) % n];
    const Real sa = cross(dx, dy, Real(a.x) - p.x, Real(a.y) - p.y);
    const Real sb = cross(dx, dy, Real(b.x) - p.x, Real(b.y) - p.y);
    if ((sa > 0) == (sb > 0)) continue;
    // Where along the ray the edge's line meets it: t > 0 ahead of p.
    const Real ex = Real(b.x) - a.x, ey = Real(b.y) - a.y;
    const Real denom = cross(dx, dy, ex, ey);
    if (denom == 0) continue;
    const Real t = cross(Real(a.x) - p.x, Real(a.y) - p.y, ex, ey) / denom;
    if (t > 0) inside = !inside;
  }
  return inside ? 1 : -1;
}

std::optional<TunerPick> tuner_choice(std::string_view name, Coll c, int64_t bytes, int ranks,
                                      int nodes, const OfferedPairs& offered) {
  if (name != "aws-ofi-p6") return std::nullopt;
  // Two nodes or fewer: NCCL's own tunings; only the one-rank-per-GPU tables are modelled.
  if (nodes <= 2 || ranks != 8 * nodes) return std::nullopt;
  const TunerPoint p{static_cast<double>(bytes), static_cast<double>(ranks)};
  if (p.x > kMaxSize || p.y > kMaxRanks) return std::nullopt;
  for (const Region& r : p6_regions(c)) {
    if (!offered[static_cast<int>(r.algo)][static_cast<int>(r.proto)]) continue;
    if (region_contains(r.v.data(), static_cast<int>(r.v.size()), p) >= 0) {
      return TunerPick{r.algo, r.proto};
    }
  }
  return std::nullopt;
}

}  // namespace preflight::nccl
