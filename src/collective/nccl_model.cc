// NCCL decision model. Every rule cites shared/reference/nccl.md (§n); "literal" marks a
// reference rule kept even where it looks odd, so that the model stays comparable with NCCL.
#include "collective/nccl_model.h"

#include <algorithm>
#include <bit>
#include <cctype>
#include <charconv>
#include <cmath>
#include <span>

#include "base/text.h"
#include "collective/nccl_graph.h"
#include "collective/ofi_tuner.h"

namespace preflight::nccl {
namespace {

constexpr int kTree = 0, kRing = 1, kCnd = 2, kCnc = 3, kNvls = 4, kNvlsTree = 5, kPat = 6;
constexpr int kLL = 0, kLL128 = 1, kSimple = 2;
constexpr int kAR = static_cast<int>(Coll::kAllReduce);
constexpr int kNvlinkHw = 0, kPciHw = 1, kNetHw = 2;
constexpr double kEps = 1e-9;

constexpr const char* kAlgoNames[kNumAlgos] = {
    "Tree", "Ring", "CollnetDirect", "CollnetChain", "NVLS", "NVLSTree", "PAT"};
constexpr const char* kProtoNames[kNumProtos] = {"LL", "LL128", "Simple"};
constexpr const char* kCollNames[kNumColls] = {"Broadcast", "Reduce", "AllGather", "ReduceScatter",
                                               "AllReduce"};

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Index of `name` among the first `n` of `names`, case-insensitive; -1 if absent.
int find_name(std::string_view name, const char* const* names, int n) {
  for (int i = 0; i < n; ++i) {
    const std::string_view cand = names[i];
    if (cand.size() == name.size() &&
        std::equal(cand.begin(), cand.end(), name.begin(), [](char a, char b) {
          return std::tolower(static_cast<unsigned char>(a)) ==
                 std::tolower(static_cast<unsigned char>(b));
        }))
      return i;
  }
  return -1;
}

int log2i(int64_t x) { return x < 1 ? -1 : std::bit_width(static_cast<uint64_t>(x)) - 1; }

struct Version {
  int minor = 28;  // NCCL 2.<minor>
  int patch = 9;
};

// "2.M" or "2.M.P", M in 18..28 (§0). Without P: the release tag of §0.
StatusOr<Version> parse_version(std::string_view s) {
  constexpr int kTagPatch[] = {3, 3, 5, 5, 3, 4, 3, 1, 2, 3, 9};  // v2.18.3 .. v2.28.9
  const auto bad = [&] {
    return invalid_argument("nccl version '" + std::string(s) + "': expected 2.18 .. 2.28");
  };
  if (s.substr(0, 2) != "2.") return bad();
  Version v;
  const char* p = s.data() + 2;
  const char* end = s.data() + s.size();
  auto r = std::from_chars(p, end, v.minor);
  if (r.ec != std::errc() || v.minor < 18 || v.minor > 28) return bad();
  v.patch = kTagPatch[v.minor - 18];
  if (r.ptr != end) {
    if (*r.ptr != '.') return bad();
    r = std::from_chars(r.ptr + 1, end, v.patch);
    if (r.ec != std::errc() || r.ptr != end || v.patch < 0) return bad();
  }
  return v;
}

// ---- Constants (§3, §5.2–5.4), by version ------------------------------------------------

using Row = std::array<double, kNumProtos>;
using Caps = std::array<std::array<double, 3>, 4>;  // [Volta, Ampere, Hopper, Blackwell][N1,N2,N4]

struct Constants {
  std::array<Row, kNumAlgos> base{};                               // §5.2
  std::array<std::array<Row, kNumAlgos>, 3> hw{};                  // §5.3 [NVLink, PCI, NET]
  Caps ll_max{}, ring_ll128{}, tree_ll128{}, tree{}, nvls_tree{};  // §5.4
  std::array<double, 4> nvls_eff{};
};

Constants constants_for(const Version& v) {
  const int m = v.minor;
  const bool late228 = m == 28 && v.patch >= 7;
  const bool tree28 = m >= 19 && m <= 22;  // 2.19–2.22: Tree Simple hwLat 28 everywhere
  Constants k;
  k.base[kTree] = {6.8, 14.0, m >= 23 ? 8.4 : 0};
  k.base[kRing] = {6.6, 14.0, 8.4};
  if (m == 18) {
    k.base[kCnd] = k.base[kCnc] = {6.8, 14.0, 0};
    k.base[kNvls] = k.base[kNvlsTree] = {0, 0, 23.0};
  }
  k.base[kPat] = {8, 8, 8};  // 2.23–2.27 hard-code 8 in the PAT formula; 2.28 table

  auto& nvl = k.hw[kNvlinkHw];
  nvl[kTree] = {0.6, 1.25, tree28 ? 28.0 : 4.0};
  nvl[kRing] = {0.6, 1.9, 3.4};
  nvl[kCnd] = {0, 0, m == 18 ? 8.0 : 3.7};
  nvl[kCnc] = {0, 0, m == 18 ? 4.75 : 2.8};
  nvl[kNvls] = nvl[kNvlsTree] = {0, 0, m == 18 ? 0.0 : m <= 20 ? 23.0 : 25.0};
  nvl[kPat] = {0, 0, m >= 28 ? 4.0 : 0};
  auto& pci = k.hw[kPciHw];
  pci[kTree] = {1.0, 1.9, m == 18 ? 6.0 : tree28 ? 28.0 : 4.0};
  pci[kRing] = {1.0, 2.5, 5.7};
  pci[kCnd] = {0, 0, m == 18 ? 8.0 : 3.7};
  pci[kCnc] = {0, 0, m == 18 ? 8.0 : 2.8};
  pci[kPat] = nvl[kPat];
  auto& net = k.hw[kNetHw];
  net[kTree] = {5.0, 8.5, tree28 ? 28.0 : 14.0};
  net[kRing] = {2.7, 4.0, 14.0};
  net[kCnd] = {0, 0, m == 18 ? 10.7 : 31.0};
  net[kCnc] = {0, 0, m == 18 ? 14.0 : 30.0};
  net[kNvls] = {0, 0, 18.0};
  net[kNvlsTree] = {0, 0, m == 18 ? 19.0 : late228 ? 20.9 : 14.0};
  net[kPat] = {0, 0, m >= 28 ? 14.0 : 0};

  const std::array<double, 3> volta = {26.5, 18.5, 10.0}, ampere = {24.0, 23.6, 17.8};
  k.ll_max = {
      {{39.0, 39.0, 20.4},
       {87.7, 22.5, 19.0},
       m <= 20 ? std::array<double, 3>{87.7, 22.5, 19.0} : std::array<double, 3>{141.0, 45.0, 35.0},
       {282.0, 90.0, 70.0}}};
  k.ring_ll128 = {
      {{20, 20, 20}, {20, 20, 20}, {36.7, 36.7, 36.7}, {73.4, late228 ? 34.6 : 73.4, 73.4}}};
  k.tree_ll128 = {{{20, 20, 20},
                   {20, 20, 20},
                   {36.7, 36.7, 29.0},
                   m >= 28 ? std::array<double, 3>{55.6, 31.67, 20.0}
                           : std::array<double, 3>{73.4, 73.4, 58.0}}};
  k.tree = {{volta,
             ampere,
             {38.7, 41.4, 36.0},
             m >= 28 ? std::array<double, 3>{70.0, 42.8, 24.0}
                     : std::array<double, 3>{77.4, 82.8, 72.0}}};
  k.nvls_tree = {{volta, ampere, {0.0, 57.7, 45.5}, {0.0, 96.0, late228 ? 43.8 : 43.1}}};
  k.nvls_eff = {0, 0, 0.85, 0.74};
  return k;
}

// Tree correction factor [proto][log2⌊bytes/64⌋], from 64 B to 256 MiB (§5.8).
// clang-format off
constexpr double kTreeCorrection[kNumProtos][23] = {
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9}};
// clang-format on

// ---- NCCL_ALGO / NCCL_PROTO (§5.9) -----------------------------------------------------------

// state[coll][i]: 0 off, 1 on, 2 auto (LL128's default).
using States = std::array<std::array<int, kNumAlgos>, kNumColls>;

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  for (size_t pos = 0;;) {
    const size_t next = s.find(sep, pos);
    out.push_back(s.substr(pos, next == std::string_view::npos ? next : next - pos));
    if (next == std::string_view::npos) return out;
    pos = next + 1;
  }
}

// "list" or (2.24+) "list;func:list;...", list = [^]name,name,...; later parts win.
StatusOr<States> parse_override(std::string_view spec, const char* env, const char* what,
                                const char* const* names, int n_names,
                                const std::array<int, kNumAlgos>& defaults, int minor) {
  States st;
  st.fill(defaults);
  if (trim(spec).empty()) return st;
  // The names come from the scenario: shown escaped and shortened (one line, no terminal codes).
  const std::string quoted = std::string(env) + "='" + escape_for_message(spec, 200) + "'";
  if (minor < 24 && spec.find_first_of(";:") != std::string_view::npos)
    return invalid_argument(quoted + ": per-function syntax needs NCCL 2.24+");
  for (std::string_view part : split(spec, ';')) {
    part = trim(part);
    if (part.empty()) continue;
    int only = -1;
    if (const size_t colon = part.find(':'); colon != std::string_view::npos) {
      only = find_name(trim(part.substr(0, colon)), kCollNames, kNumColls);
      if (only < 0)
        return invalid_argument(quoted + ": unknown collective '" +
                                escape_for_message(trim(part.substr(0, colon)), 100) + "'");
      part = trim(part.substr(colon + 1));
    }
    const bool exclude = !part.empty() && part.front() == '^';
    if (exclude) part.remove_prefix(1);
    std::array<int, kNumAlgos> s{};
    if (exclude) s = defaults;
    for (std::string_view tok : split(part, ',')) {
      tok = trim(tok);
      if (tok.empty()) continue;
      const int i = find_name(tok, names, n_names);
      if (i < 0)
        return invalid_argument(quoted + ": unknown " + what + " '" + escape_for_message(tok, 100) +
                                "'" + " for NCCL 2." + std::to_string(minor));
      s[i] = exclude ? 0 : 1;
    }
    for (int c = 0; c < kNumColls; ++c)
      if (only < 0 || only == c) st[c] = s;
  }
  return st;
}

// ---- Tuning tables (§5.5–5.7) ---------------------------------------------------------------

// A search graph's bandwidth when its links are taken as unbounded (GB/s per channel).
constexpr double kUnbounded = 1e12;

struct Ctx {
  int minor, cc, cc_idx, nodes, ppn, n;
  bool amd;
  Constants k;
  std::array<const Graph*, kNumAlgos> graph;
};

int nsteps(Coll c, int n) {
  if (c == Coll::kAllReduce) return 2 * (n - 1);
  if (c == Coll::kAllGather || c == Coll::kReduceScatter) return n - 1;
  return n;
}

// latency[coll][algo][proto] (§5.7). latencyInter = 0 (IB).
double table_latency(const Ctx& x, Coll c, int a, int p) {
  const Graph& g = *x.graph[a];
  const int intra_hw = g.nvlink ? kNvlinkHw : kPciHw;
  const double intra = x.k.hw[intra_hw][a][p];
  const double inter = x.k.hw[kNetHw][x.minor >= 23 && x.ppn == 1 ? kTree : a][p];
  const double base = x.k.base[a][p];
  const int nn = x.nodes, steps = nsteps(c, x.n), lg = log2i(nn);
  switch (a) {
    case kRing: {
      if (c == Coll::kBroadcast || c == Coll::kReduce) {
        const auto& row = x.k.hw[nn > 1 ? kNetHw : intra_hw];
        if (g.same_channels) return base + row[kRing][p];
        return base + steps * (p == kSimple ? row[kTree][kSimple] : row[kRing][p]);
      }
      const bool ar = c == Coll::kAllReduce;
      // 2.18–2.22: 2·nNodes inter steps for AllReduce (literal, even when it exceeds nsteps).
      const int n_inter = nn == 1 ? 0 : ar ? (x.minor >= 23 ? 2 * (nn - 1) : 2 * nn) : nn - 1;
      const double ovh = nn == 1 ? 0.0 : (x.amd ? 2.0 : 1.0) * (p == kSimple ? 3 : 1);
      return base + (steps - n_inter) * std::max(intra, ovh) + n_inter * inter;
    }
    case kTree:
      return base + 2 * ((x.ppn - 1) * intra + lg * inter);
    case kCnd:
      return base +
             2 * (std::min(1, x.ppn - 1) * intra + (x.ppn - 1) * (x.minor == 18 ? 0.5 : 0.4)) +
             inter;
    case kCnc:
      return base + 2 * (x.ppn - 1) * intra + inter;
    case kNvls:
      return base + intra + (nn > 1 ? inter : 0);
    case kNvlsTree:
      if (x.minor == 18) return base + 2 * (nn - 1) * inter;
      return base + intra + 2 * lg * inter;
    default:  // kPat
      return 8 + lg * inter / 3.5 + 2.8 * x.n;
  }
}

// bandwidths[coll][algo][proto] (§5.5 busBw, then the §5.6 ratio).
double table_bandwidth(const Ctx& x, Coll c, int a, int p) {
  const Graph& g = *x.graph[a];
  if (g.channels == 0) return 0;
  const int m = x.minor, nn = x.nodes, ppn = x.ppn, nch = g.channels, ci = x.cc_idx;
  const int i2 = nn == 1 ? 0 : nn == 2 ? 1 : 2;
  const bool ag_rs = c == Coll::kAllGather || c == Coll::kReduceScatter;
  const double bw = (nn <= 2 || a == kCnd || a == kCnc) ? g.bw_intra : g.bw_inter;
  const double ll_max = nn == 1 ? x.k.ll_max[ci][0] : x.k.ll_max[x.amd ? 1 : 0][i2];
  double bus = nch * bw;
  switch (a) {
    case kRing:
      if (p == kLL) {
        const bool quarter = nn > 1 || c == Coll::kAllReduce || c == Coll::kReduce;
        bus = std::min(ll_max, bus * (m >= 21 ? 0.5 : quarter ? 0.25 : 1.0 / 3));
      } else if (p == kLL128) {
        bus = std::min(bus * (m >= 23 || ppn >= 2 ? 0.92 : 0.7), nch * x.k.ring_ll128[ci][i2]);
      }
      break;
    case kTree:  // BALANCED_TREE pattern only, so never the ×0.85 of pattern TREE
      bus = std::min(0.92 * bus, nch * x.k.tree[ci][i2]);
      if (p == kLL) bus = std::min(bus / 3.8, ll_max);
      if (p == kLL128)
        bus = std::min(bus * (nn == 1 ? 7.0 / 9 : 120.0 / 128), nch * x.k.tree_ll128[ci][i2]);
      break;
    case kPat:
      bus *= m == 23 ? 0.85 : 0.75;
      break;
    case kCnd:
      if (c == Coll::kAllReduce) {
        double f = static_cast<double>(ppn) / nch;
        f -= (f - 1) / 2;
        bus /= f;
        if (x.cc >= 90) bus *= 0.85;
      } else if (m >= 27) {
        bus = ppn * std::min(g.bw_intra, 0.9 * g.bw_inter);
      } else {
        const double w = (ppn - 1) / 7.0;
        bus = ppn * bw * (w * 0.85 + (1 - w) * 0.95);
      }
      break;
    case kNvls:
    case kNvlsTree: {
      const bool tree = a == kNvlsTree;
      double per = bw;  // 2.18: nCh × bw_graph
      if (m >= 28) {
        if (nch < 2) return 0;
        const double intra = g.bw_intra * x.k.nvls_eff[ci] * (nch - 1) / nch *
                             (c == Coll::kAllReduce ? 2.0 : (ppn - 1.0) / ppn);
        per = std::min(intra, g.bw_inter * (tree && nn <= 2 ? 2 : 1));
        if (tree) per = std::min(per, x.k.nvls_tree[ci][i2]);
      } else if (m >= 19) {
        if (tree)
          per = std::min(g.bw_intra, nn <= 2 ? g.bw_inter : g.bw_inter / 2);
        else if (ag_rs && m == 27)
          per = std::min(g.bw_intra * (ppn - 1.0) / ppn, 0.9 * g.bw_inter);
        else
          per = std::min(g.bw_intra, g.bw_inter);
      }
      bus = nch * per;
      break;
    }
    default:  // kCnc: unchanged
      break;
  }
  double ratio = 1;
  if (a == kRing) {
    ratio = static_cast<double>(x.n) / nsteps(c, x.n);
  } else if (ag_rs) {
    if (m <= 22 && (a == kNvls)) ratio = 5.0 / 6;  // 2.19–2.22; 2.23+ no ratio
  } else if (a == kTree || a == kCnd || a == kCnc) {
    ratio = 0.5;
  } else if (m >= 28) {
    ratio = static_cast<double>(x.n) / nsteps(c, x.n);
  } else if (a == kNvlsTree && m == 18) {
    ratio = 0.70 * nn / (2.0 * (nn - 1));
  } else {
    ratio = 5.0 / 6;
  }
  return bus * ratio;
}

}  // namespace

// ---- Names ----------------------------------------------------------------------------------

const char* to_string(Algo a) { return kAlgoNames[static_cast<int>(a)]; }
const char* to_string(Proto p) { return kProtoNames[static_cast<int>(p)]; }
const char* to_string(Coll c) { return kCollNames[static_cast<int>(c)]; }

StatusOr<Algo> parse_algo(std::string_view name) {
  const int i = find_name(trim(name), kAlgoNames, kNumAlgos);
  if (i < 0) return invalid_argument("unknown NCCL algorithm '" + std::string(name) + "'");
  return static_cast<Algo>(i);
}
StatusOr<Proto> parse_proto(std::string_view name) {
  const int i = find_name(trim(name), kProtoNames, kNumProtos);
  if (i < 0) return invalid_argument("unknown NCCL protocol '" + std::string(name) + "'");
  return static_cast<Proto>(i);
}
StatusOr<Coll> parse_coll(std::string_view name) {
  const int i = find_name(trim(name), kCollNames, kNumColls);
  if (i < 0) return invalid_argument("unknown NCCL collective '" + std::string(name) + "'");
  return static_cast<Coll>(i);
}

// ---- TuningModel ----------------------------------------------------------------------------

StatusOr<TuningModel> TuningModel::create(const Platform& p, const Options& o) {
  PREFLIGHT_ASSIGN_OR_RETURN(const Version v, parse_version(o.version));
  const int m = v.minor, cc = p.compute_capability;
  const auto bad = [](const std::string& what) { return invalid_argument("nccl: " + what); };
  if (cc < 60 || cc >= 130) return bad("compute_capability must be 60..129");
  if (cc >= 100 && m < 25) return bad("compute capability >= 100 needs NCCL 2.25+");
  if (p.nodes < 1 || p.ranks_per_node < 1) return bad("nodes and ranks_per_node must be >= 1");
  if (p.gpus_per_node < p.ranks_per_node) return bad("gpus_per_node must be >= ranks_per_node");
  if (p.nvlinks_per_gpu < 0 || p.nics_per_node < 0) return bad("negative nvlinks or NICs");
  if (p.nvswitch && p.nvlinks_per_gpu == 0) return bad("an NVSwitch needs nvlinks_per_gpu > 0");
  if (p.nodes > 1 && p.nics_per_node == 0) return bad("multi-node needs nics_per_node >= 1");
  if (!(p.nic_gbps > 0) || !std::isfinite(p.nic_gbps)) return bad("nic_gbps must be > 0");
  if (!(p.nvlink_scale > 0) || !std::isfinite(p.nvlink_scale)) {
    return bad("nvlink_scale must be > 0");
  }
  if (p.pcie_gen < 3 || p.pcie_gen > 6) return bad("pcie_gen must be 3..6");
  if (p.nvls_capable && (cc < 90 || !p.nvswitch))
    return bad("nvls_capable needs compute capability >= 90 and an NVSwitch");
  if (o.nvls < 0 || o.nvls > 2) return bad("nvls (NCCL_NVLS_ENABLE) must be 0, 1 or 2");
  if (o.min_channels < 0 || o.max_channels < 0 || o.nvls_channels < 0)
    return bad("channel counts must be >= 0");
  if (o.min_channels > 0 && o.max_channels > 0 && o.min_channels > o.max_channels)
    return bad("min_channels > max_channels");
  if (!is_known_tuner(o.tuner)) return bad("unknown tuner plugin '" + o.tuner + "'");
  // §9: multicast driver, SM90+, NVSwitch, > 2 local GPUs (>= 2 in 2.28).
  const bool nvls_platform =
      p.nvls_capable && (m >= 28 ? p.ranks_per_node >= 2 : p.ranks_per_node > 2);
  if (o.nvls == 1 && !nvls_platform)
    return bad("NCCL_NVLS_ENABLE=1 but the platform cannot run NVLS (needs nvls_capable and " +
               std::string(m >= 28 ? ">= 2" : "> 2") + " ranks per node)");
  const bool nvls_on = nvls_platform && o.nvls != 0;
  PREFLIGHT_ASSIGN_OR_RETURN(const States algo_on,
                             parse_override(o.algo, "NCCL_ALGO", "algorithm", kAlgoNames,
                                            m >= 23 ? kNumAlgos : kPat, {1, 1, 1, 1, 1, 1, 1}, m));
  PREFLIGHT_ASSIGN_OR_RETURN(const States proto_on,
                             parse_override(o.proto, "NCCL_PROTO", "protocol", kProtoNames,
                                            kNumProtos, {1, 2, 1, 0, 0, 0, 0}, m));

  TuningModel t;
  t.minor_ = m;
  t.tuner_ = o.tuner;
  t.cc_ = cc;
  t.nodes_ = p.nodes;
  t.n_ranks_ = p.nodes * p.ranks_per_node;
  if (t.n_ranks_ == 1) return t;  // a group of one: no search, nothing costed

  // Search graphs (§4.1).
  const SearchFabric f = make_fabric(p, m);
  const int g = p.ranks_per_node;
  t.ring_ = search(f, Pattern::kRing, 1, m >= 25 ? 32 : 16, m, cc);
  t.tree_ = search(f, Pattern::kTree, t.ring_.channels, t.ring_.channels, m, cc);
  if (nvls_on) {
    constexpr int kMaxNvlsArity = 32;  // NCCL_MAX_NVLS_ARITY (assumed default)
    const int max_ch = std::min(kMaxNvlsArity, f.multi_node ? std::min(g, f.nics) : g);
    t.nvls_ = search(f, Pattern::kNvls, f.multi_node ? 1 : max_ch, max_ch, m, cc);
  }
  const bool collnet = o.collnet && p.nodes > 1;
  const Graph& chain = t.tree_;  // simplified CollNet graphs (header)
  if (collnet) {
    const std::span<const double> speeds = speed_array(m, cc, true);
    const auto s = std::find_if(speeds.begin(), speeds.end(),
                                [&](double x) { return x <= f.nic_cap * (1 + kEps); });
    if (s != speeds.end())
      t.collnet_direct_ = Graph{std::min({8, g, f.nics}), *s, *s, f.nvlink, false};
  }

  // Comm channels (§4.2).
  const int max_channels = m >= 25 ? 64 : 32;
  int ch = std::min(max_channels, 2 * std::min(t.ring_.channels, t.tree_.channels));
  if (collnet && chain.bw_intra > chain.bw_inter && g > 1) ch = std::min(max_channels, ch * 3 / 2);
  if ((m >= 25 ? cc >= 90 : cc == 90) && p.nodes > 1 && t.ring_.bw_intra > 45 &&
      (m <= 19 ? 2 * ch <= 32 : ch < 16))
    ch = std::min(max_channels, 2 * ch);
  if (o.max_channels > 0) ch = std::min(ch, o.max_channels);
  if (o.min_channels > 0) ch = std::max(ch, std::min(o.min_channels, max_channels));
  t.comm_channels_ = ch;
  if (nvls_on) {  // §9 NCCL_NVLS_NCHANNELS defaults
    const int def = cc < 100 ? 16 : (m >= 27 && p.nodes == 1) ? 24 : 32;
    t.nvls_channels_ = std::min(max_channels, o.nvls_channels > 0 ? o.nvls_channels : def);
  }

  // Which (coll, algo) NCCL costs and enables (§5.8 "Which pairs", §5.9 disables).
  const auto costed = [&](Coll c, int a) {
    const bool ar = c == Coll::kAllReduce;
    const bool ag_rs = c == Coll::kAllGather || c == Coll::kReduceScatter;
    switch (a) {
      case kTree:
        return ar;
      case kRing:
        return true;
      case kCnd:  // AG/RS 2.20+, gated on heads (2.27+) or NICs (2.20–2.26)
        return collnet && p.nvswitch && (m < 28 || g <= 8) &&
               (ar || (ag_rs && m >= 20 &&
                       g <= (m >= 27 ? t.collnet_direct_.channels : p.nics_per_node)));
      case kCnc:
        return collnet && ar;
      case kNvls:  // multi-node only with CollNet; AG/RS 2.19+
        return nvls_on && (p.nodes == 1 || collnet) &&
               (ar ||
                (ag_rs && m >= 19 && g <= 32 && (p.nodes == 1 || m < 27 || g <= t.nvls_.channels)));
      case kNvlsTree:
        return nvls_on && p.nodes > 1 && ar;
      default:  // kPat: AG/RS, one GPU per node, 2.23+, cc >= 60 (2.26+)
        return m >= 23 && ag_rs && g == 1 && (m < 26 || cc >= 60);
    }
  };
  // Auto-LL128 (§5.9): NVLink intra, supported arch; typeInter is PXB here, always allowed.
  const bool ll128_arch = m <= 24   ? (cc == 70 || cc == 80 || cc == 90)
                          : m <= 26 ? (cc == 70 || cc == 80 || cc == 90 || cc == 100 || cc == 120)
                                    : cc >= 70;
  const int cc_idx = cc < 80 ? 0 : cc < 90 ? 1 : cc < 100 ? 2 : 3;  // §5.1 compCapIndex
  Ctx x{m, cc, cc_idx, p.nodes, g, t.n_ranks_, p.amd_cpu, constants_for(v), {}};
  x.graph = {&t.tree_, &t.ring_, &t.collnet_direct_, &chain, &t.nvls_, &t.nvls_, &t.tree_};
  // The same graphs with unbounded links: their channels and types, every bandwidth infinite.
  std::array<Graph, kNumAlgos> open_graph;
  Ctx open = x;
  for (int a = 0; a < kNumAlgos; ++a) {
    open_graph[a] = *x.graph[a];
    if (open_graph[a].channels > 0) open_graph[a].bw_intra = open_graph[a].bw_inter = kUnbounded;
    open.graph[a] = &open_graph[a];
  }
  for (int ci = 0; ci < kNumColls; ++ci) {
    const Coll c = static_cast<Coll>(ci);
    for (int a = 0; a < kNumAlgos; ++a) {
      if (!costed(c, a)) continue;
      for (int pr = 0; pr < kNumProtos; ++pr) {
        if (a != kTree && a != kRing && pr != kSimple) continue;  // Simple-only algorithms
        t.lat_[ci][a][pr] = table_latency(x, c, a, pr);
        double bw = table_bandwidth(x, c, a, pr);
        const double cap = table_bandwidth(open, c, a, pr);
        t.protocol_bw_[ci][a][pr] = cap < kUnbounded / 1e3 ? cap : 0;
        const int ps = proto_on[ci][pr];
        if (!(ps == 1 || (ps == 2 && ll128_arch && x.graph[a]->nvlink))) bw = 0;
        if (a == kRing) t.ring_backup_[ci][pr] = bw;
        // 2.18: NCCL_ALGO never disables Ring for non-AllReduce collectives.
        const bool forced_ring = m == 18 && a == kRing && ci != kAR;
        if (!algo_on[ci][a] && !forced_ring) bw = 0;
        t.bw_[ci][a][pr] = bw;
      }
    }
  }
  return t;
}

double TuningModel::latency_us(Coll c, Algo a, Proto p) const {
  return lat_[static_cast<int>(c)][static_cast<int>(a)][static_cast<int>(p)];
}

double TuningModel::bandwidth_gbs(Coll c, Algo a, Proto p) const {
  return bw_[static_cast<int>(c)][static_cast<int>(a)][static_cast<int>(p)];
}

// Channels for one call (§4.4): the thread-threshold reduction, then (2.22+) the traffic split
// for a lone collective, channels ≈ min(nMax, ⌈traffic / MinTrafficPerChannel⌉).
int TuningModel::channels_for(Coll c, Algo algo, Proto proto, int64_t bytes) const {
  const int a = static_cast<int>(algo), p = static_cast<int>(proto);
  int nc = comm_channels_;
  if (a == kNvls || a == kNvlsTree) {
    nc = nvls_channels_;
    if (minor_ >= 28 && nodes_ > 1 && a == kNvls) nc = std::min(nc, comm_channels_);
  } else if (a == kCnd) {  // steps 16, 8, 4, 2, 1 while bytes < nc × 640 × nHeads × 512
    const int64_t per = int64_t{640} * collnet_direct_.channels * 512;
    while (nc > 1 && bytes < nc * per) nc = nc > 16 ? 16 : nc / 2;
    return nc;
  } else {
    int64_t threshold = p == kSimple ? 64 : 8;
    if (a == kRing && p == kLL) threshold *= n_ranks_;
    if (a == kCnc) threshold = 512;
    int64_t threads = p == kLL128 ? 640 : 512;
    if (a == kRing && p == kSimple && ring_.bw_intra * ring_.channels <= 12) threads = 256;
    if (a == kPat || a == kCnc) threads = 640;
    while (nc >= 2 && bytes < nc * threads * threshold) --nc;
    if (a == kCnc) return nc;  // CollNet tasks keep all their channels
  }
  if (minor_ >= 22) {
    const double traffic =
        static_cast<double>(bytes) * (c == Coll::kAllReduce ? 2 : 1) * (p == kLL ? 4 : 1);
    const double min_traffic = minor_ == 22 ? 512 : 16 * 1024;
    const double used = std::ceil(traffic / min_traffic);
    if (used < nc) nc = std::max(1, static_cast<int>(used));
  }
  return nc;
}

// time = lat + bytes / (1000 × bw), with the tree correction and the Ring plateau (§5.8).
Choice TuningModel::cost(Coll c, Algo algo, Proto proto, double bw, int64_t bytes) const {
  const int a = static_cast<int>(algo), p = static_cast<int>(proto);
  double lat = lat_[static_cast<int>(c)][a][p];
  if (a == kTree) {
    const int k = log2i(bytes / 64);
    if (k >= 0 && k <= 22) bw *= kTreeCorrection[p][k];
  }
  if (a == kRing && p == kSimple && c == Coll::kAllReduce && nodes_ > 1 &&
      bytes / (int64_t{comm_channels_} * n_ranks_) >= 64)
    lat *= cc_ >= 80 ? 1.4 : 1.9;
  Choice ch{algo, proto, channels_for(c, algo, proto, bytes), lat, bw, 0, 0};
  ch.time_us = lat + static_cast<double>(bytes) / (1000.0 * bw);
  double cap = protocol_bw_[static_cast<int>(c)][a][p];
  if (cap > 0 && a == kTree) {
    const int k = log2i(bytes / 64);
    if (k >= 0 && k <= 22) cap *= kTreeCorrection[p][k];
  }
  ch.protocol_bandwidth_gbs = cap;
  return ch;
}

std::vector<Choice> TuningModel::candidates(Coll c, int64_t bytes) const {
  PREFLIGHT_CHECK(bytes >= 0);
  if (n_ranks_ == 1 || bytes == 0) return {Choice{}};
  std::vector<Choice> out;
  const int ci = static_cast<int>(c);
  for (int a = 0; a < kNumAlgos; ++a)
    for (int p = 0; p < kNumProtos; ++p)
      if (bw_[ci][a][p] > 0)
        out.push_back(cost(c, static_cast<Algo>(a), static_cast<Proto>(p), bw_[ci][a][p], bytes));
  if (out.empty() && minor_ >= 19 && minor_ <= 23)  // the saved Ring "backup" bandwidth
    for (int p = 0; p < kNumProtos; ++p)
      if (ring_backup_[ci][p] > 0)
        out.push_back(cost(c, Algo::kRing, static_cast<Proto>(p), ring_backup_[ci][p], bytes));
  return out;
}

StatusOr<Choice> TuningModel::choose(Coll c, int64_t bytes) const {
  if (bytes < 0) return invalid_argument("nccl: negative message size");
  const std::vector<Choice> all = candidates(c, bytes);
  if (all.empty())
    return invalid_argument(std::string("nccl: no algorithm/protocol available for ") +
                            to_string(c) + " (NCCL_ALGO/NCCL_PROTO leave none)");
  if (!tuner_.empty()) {
    // The plugin zeroes the cost of its pick; NCCL then takes it if it offers it.
    OfferedPairs offered{};
    for (const Choice& x : all) offered[static_cast<int>(x.algo)][static_cast<int>(x.proto)] = true;
    const std::optional<TunerPick> pick = tuner_choice(tuner_, c, bytes, n_ranks_, nodes_, offered);
    if (pick) {
      for (const Choice& x : all) {
        if (x.algo == pick->algo && x.proto == pick->proto) return x;
      }
    }
  }
  const Choice* best = &all.front();
  for (const Choice& x : all)
    if (x.time_us < best->time_us) best = &x;
  return *best;
}

}  // namespace preflight::nccl
