// NCCL's graph search (shared/reference/nccl.md §3, §4.1): the channels and per-channel speeds
// NCCL's ncclTopoCompute finds for rings, trees and NVLS on a node's simplified topology.
#include "collective/nccl_graph.h"

#include <algorithm>
#include <span>

#include "network/nvlink.h"

namespace preflight::nccl {
namespace {

constexpr double kEps = 1e-9;

// Whether `c` channels at (bi, be) GB/s fit the fabric. On one node every ring/tree channel has
// the same GPU order (sameChannels), so the busiest GPU port carries all c. Across nodes a
// channel enters and leaves through NICs, crossing G−1 ports, and channels rotate their entry
// GPU: the busiest port carries c − ⌊c/G⌋. An NVLS channel loads every GPU's port once and its
// head's twice (NVS→GPU and GPU→NVS traffic).
bool fits(const SearchFabric& f, Pattern pat, int c, double bi, double be) {
  const int g = f.gpus;
  if (f.multi_node) {
    if (be > f.nic_cap * (1 + kEps)) return false;
    if (pat == Pattern::kNvls) {
      if (c > f.nics) return false;  // one head per NIC (§9)
    } else {
      if (c > f.nics * static_cast<int>(f.nic_cap / be + kEps)) return false;
      if (f.nics > g && c > g * static_cast<int>(f.pcie_bw / be + kEps)) return false;
    }
  }
  if (g <= 1) return true;
  if (bi > f.path_bw * (1 + kEps)) return false;
  int uses = f.multi_node ? c - c / g : c;
  if (pat == Pattern::kNvls) uses = c + (c + g - 1) / g;
  return uses * bi <= f.gpu_bw * (1 + kEps);
}

}  // namespace

std::span<const double> speed_array(int minor, int cc, bool inter) {
  static constexpr double kPreIntra[] = {40, 30, 20, 18, 15, 12, 10, 9, 7, 6, 5, 4, 3};
  static constexpr double kPreInter[] = {48, 30, 28, 24, 20, 18,  15,  12,   10,  9,
                                         7,  6,  5,  4,  3,  2.4, 1.2, 0.24, 0.12};
  static constexpr double kSm90Intra18[] = {60, 40, 30, 24, 20, 15, 12, 6, 3};
  static constexpr double kSm90Intra19[] = {60, 50, 40, 30, 24, 20, 15, 12, 6, 3};
  static constexpr double kSm90Intra21[] = {60, 50, 40, 30, 24, 20, 15, 12, 11, 6, 3};
  static constexpr double kSm90Inter18[] = {48, 45, 42, 40, 30,  24,  20,   17.5,
                                            15, 12, 6,  3,  2.4, 1.2, 0.24, 0.12};
  static constexpr double kSm90Inter19[] = {48, 45, 42, 40, 30,  24,  22,   20,  17.5,
                                            15, 12, 6,  3,  2.4, 1.2, 0.24, 0.12};
  static constexpr double kSm100Inter27[] = {47.9, 45, 42, 40, 30,  24,  22,   20,  17.5,
                                             15,   12, 6,  3,  2.4, 1.2, 0.24, 0.12};
  static constexpr double kSm100Inter28[] = {96,   48, 45.1, 42, 40, 30,  24,  22,   20,
                                             17.5, 15, 12,   6,  3,  2.4, 1.2, 0.24, 0.12};
  static constexpr double kSm100Intra[] = {90, 80, 70, 60, 50, 40, 30, 24, 20, 19, 18};
  if (cc < 90) return inter ? std::span<const double>(kPreInter) : kPreIntra;
  if (cc < 100) {
    if (inter) return minor == 18 ? std::span<const double>(kSm90Inter18) : kSm90Inter19;
    return minor == 18   ? std::span<const double>(kSm90Intra18)
           : minor <= 20 ? std::span<const double>(kSm90Intra19)
                         : kSm90Intra21;
  }
  if (!inter) return std::span<const double>(kSm100Intra).first(minor >= 27 ? 11 : 10);
  return minor <= 26   ? std::span<const double>(kSm90Inter19)
         : minor == 27 ? std::span<const double>(kSm100Inter27)
                       : kSm100Inter28;
}

SearchFabric make_fabric(const Platform& p, int minor) {
  SearchFabric f;
  f.gpus = p.ranks_per_node;
  f.multi_node = p.nodes > 1;
  f.pcie_bw = 16 * (60 << (p.pcie_gen - 3)) / 80.0;  // width × code / 80 (§3)
  // NVLink bandwidth per link (§3, ncclTopoNVLinkBw), the one in-node figure (network/nvlink.h).
  const double link = nccl_nvlink_gbs(p.compute_capability, minor) * p.nvlink_scale;
  const double nvl_sum = p.nvlinks_per_gpu * link;
  f.nvlink = p.nvlinks_per_gpu > 0 || f.gpus == 1;  // one GPU: typeIntra LOC, NVLink-class
  f.gpu_bw = p.nvlinks_per_gpu > 0 ? nvl_sum : f.pcie_bw;
  f.path_bw = f.gpu_bw;
  if (p.nvlinks_per_gpu > 0 && !p.nvswitch && p.gpus_per_node > 1)
    f.path_bw = std::max(1, p.nvlinks_per_gpu / (p.gpus_per_node - 1)) * link;
  f.total_bw = std::max(nvl_sum, f.pcie_bw);
  if (f.multi_node) {
    const int share = (p.nics_per_node * p.ranks_per_node + p.gpus_per_node - 1) / p.gpus_per_node;
    f.nics = std::clamp(share, 1, p.nics_per_node);
    f.nic_cap = std::min(f.pcie_bw, p.nic_gbps / 8.0);  // Mb/s / 8000 = GB/s (§3)
  }
  return f;
}

// ncclTopoCompute, simplified (§4.1): pass 1 walks the speed array from the start speed keeping
// the best graph, duplication (2.19+: before pass 2; 2.18: at the end), pass 2 raises bw.
Graph search(const SearchFabric& f, Pattern pat, int min_ch, int max_ch, int minor, int cc) {
  const std::span<const double> speeds = speed_array(minor, cc, f.multi_node);
  const bool nvls = pat == Pattern::kNvls;
  const int g = f.gpus;
  double total = f.total_bw;
  if (pat != Pattern::kRing && g > 1) total *= g / (g - 1.0);
  const double max_bw = f.multi_node ? f.nic_cap : f.path_bw;
  const auto score = [](const Graph& x) { return x.channels * x.bw_intra; };
  const auto better = [&](const Graph& a, const Graph& b) {
    if (b.channels == 0) return a.channels > 0;
    if (nvls)
      return a.channels > b.channels ||
             (a.channels == b.channels && a.bw_inter > b.bw_inter * (1 + kEps));
    return score(a) > score(b) * (1 + kEps);  // ties keep the earlier (faster) graph
  };
  Graph best;
  best.nvlink = f.nvlink;
  best.same_channels = !f.multi_node || g == 1;
  size_t i = 0;
  while (i < speeds.size() &&
         (speeds[i] > max_bw * (1 + kEps) || speeds[i] * min_ch > total * (1 + kEps)))
    ++i;
  for (; i < speeds.size(); ++i) {
    Graph cand = best;
    cand.bw_intra = cand.bw_inter = speeds[i];
    cand.channels = 0;
    for (int c = max_ch; c >= min_ch && cand.channels == 0; --c)
      if (fits(f, pat, c, speeds[i], speeds[i])) cand.channels = c;
    if (better(cand, best)) best = cand;
    if (best.channels == 0) continue;
    if (best.channels == max_ch || best.channels * best.bw_inter >= total * (1 - kEps)) break;
    if (i + 1 < speeds.size() && speeds[i + 1] / best.bw_intra <= 0.49) break;
  }
  if (best.channels == 0) return Graph{1, 0.1, 0.1, false, false};  // §4.1 fallback (SYS)

  // ncclTopoDupChannels; the bw is divided by the doubling factor 2.
  const auto dup = [&] {
    if (nvls || best.bw_intra < 25 || (cc > 80 && best.bw_intra < 50 && best.channels > 4)) return;
    const int doubled = std::min(2 * best.channels, max_ch);
    if (doubled == best.channels) return;
    best.channels = doubled;
    best.bw_intra /= 2;
    best.bw_inter /= 2;
  };
  // The next array speed above `v`, or 0.
  const auto above = [&](double v) {
    for (size_t j = speeds.size(); j-- > 0;)
      if (speeds[j] > v * (1 + kEps)) return speeds[j];
    return 0.0;
  };
  if (minor >= 19) dup();
  const int c = best.channels;
  if (pat == Pattern::kRing) {
    for (double s; minor >= 19 && (s = above(best.bw_inter)) > 0 && fits(f, pat, c, s, s);)
      best.bw_intra = best.bw_inter = s;
  } else if (nvls && minor >= 19) {
    for (double s; best.bw_inter < 2 * best.bw_intra && (s = above(best.bw_inter)) > 0 &&
                   fits(f, pat, c, best.bw_intra, s);)
      best.bw_inter = s;
  } else {  // trees (and 2.18 NVLS): raise bwIntra up to 2 × bwInter
    for (double s; best.bw_intra < 2 * best.bw_inter && (s = above(best.bw_intra)) > 0 &&
                   fits(f, pat, c, s, best.bw_inter);)
      best.bw_intra = s;
  }
  if (minor == 18) dup();
  return best;
}

}  // namespace preflight::nccl
