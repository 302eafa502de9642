#include "network/topology_builders.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <deque>

namespace preflight {
namespace {

// Effective PCIe x16 bandwidth per direction: ~75% of the raw 16/32/64 GB/s of Gen3/4/5 after
// encoding and TLP overhead (SimAI takes Gen5 as 64 x 0.8 = 51.2 GB/s, network_models.md §5.6).
Bandwidth pcie_bandwidth(int gen) {
  double gbs = 12;
  for (int g = 3; g < std::min(gen, 7); ++g) gbs *= 2;
  return Bandwidth::gigabytes_per_second(gbs);
}

// assumption: one PCIe hop (GPU -> PCIe switch -> NIC or host bridge), ~100 ns.
constexpr SimTime kPcieLatency = SimTime::picoseconds(100'000);
// Largest cluster the builders accept (keeps memory and time bounded).
constexpr int64_t kMaxGpus = 1 << 20;
constexpr int64_t kMaxNics = 1 << 22;
constexpr int kMaxK = 256;  // a 256-ary fat tree: 4.2M host ports, 80k switches

std::string key(const std::string& k) { return "cluster.topology." + k; }
std::string str(int64_t v) { return std::to_string(v); }

int ceil_div(int64_t a, int64_t b) { return static_cast<int>((a + b - 1) / b); }

struct Builder {
  const ClusterConfig& c;
  TopologyConfig t;
  Topology topo;
  std::vector<std::vector<int>> host_nics;  // host -> NIC node ids
};

// Fills in the defaults that depend on the kind (TopologyConfig's comments).
Status resolve(const ClusterConfig& c, TopologyConfig* t) {
  if (t->kind.empty()) t->kind = c.nodes == 1 ? "nvswitch" : "rail_optimized";
  static const char* kKinds[] = {"nvswitch", "rail_optimized", "spine_leaf", "fat_tree",
                                 "hpn",      "nvl72"};
  if (std::none_of(std::begin(kKinds), std::end(kKinds),
                   [&](const char* k) { return t->kind == k; })) {
    return invalid_argument(key("kind") + ": '" + t->kind +
                            "': expected nvswitch, rail_optimized, spine_leaf, fat_tree, hpn or "
                            "nvl72");
  }
  const bool hpn = t->kind == "hpn";
  if (t->leaf_radix == 0) t->leaf_radix = hpn ? 256 : 64;
  if (t->spine_radix == 0) t->spine_radix = t->leaf_radix;
  if (t->leaf_radix < 2)
    return invalid_argument(key("leaf_radix") + ": " + str(t->leaf_radix) +
                            ": expected at least 2 ports");
  if (t->spine_radix < 2)
    return invalid_argument(key("spine_radix") + ": " + str(t->spine_radix) +
                            ": expected at least 2 ports");
  if (!(t->oversubscription >= 1)) {
    return invalid_argument(key("oversubscription") + ": expected a ratio down:up >= 1");
  }
  if (t->tiers == 0) t->tiers = (t->kind == "spine_leaf" || hpn) ? 2 : 3;
  if (t->tiers < 2 || t->tiers > 3)
    return invalid_argument(key("tiers") + ": " + str(t->tiers) + ": expected 2 or 3");
  if (hpn && t->tiers != 2) {
    return invalid_argument(key("tiers") + ": 3: hpn builds one 2-tier pod (no core tier)");
  }
  if (t->planes < 1 || t->planes > 8)
    return invalid_argument(key("planes") + ": " + str(t->planes) + ": expected 1 to 8");
  if (t->nvl_domain < 1) return invalid_argument(key("nvl_domain") + ": expected at least 1 GPU");
  if (t->su_nodes == 0) {
    if (hpn) {
      t->su_nodes = 128;  // HPN segment: 1024 GPUs = 128 hosts (network_models.md §5.4)
    } else if (t->kind == "nvl72" && t->nvl_domain % c.gpus_per_node == 0) {
      // Whole NVLink racks per leaf: as many as fit in the leaf's down ports, at least one.
      const int per_rack = t->nvl_domain / c.gpus_per_node;
      t->su_nodes = std::max(1, t->leaf_radix / 2 / per_rack) * per_rack;
    } else {
      t->su_nodes = 32;  // DGX SuperPOD H100/B200 RA scalable unit (network_models.md §5.2)
    }
  }
  if (t->su_nodes < 1) return invalid_argument(key("su_nodes") + ": expected at least 1 host");
  return Status();
}

// The hosts: GPUs, their scale-up switch (per host, or per NVLink domain for nvl72), NICs.
void add_hosts(Builder& b, bool with_nics) {
  const ClusterConfig& c = b.c;
  Topology& topo = b.topo;
  const int G = c.gpus_per_node, M = with_nics ? c.nics_per_node : 0;
  const bool nvl = b.t.kind == "nvl72";
  const bool pcie_only = c.gpu.nvlinks == 0 && !nvl;
  const Bandwidth up_bw = pcie_only ? pcie_bandwidth(c.pcie_gen) : c.nvlink_bandwidth;
  const SimTime up_lat = pcie_only ? kPcieLatency : b.t.nvlink_latency;
  const Bandwidth pcie = pcie_bandwidth(c.pcie_gen);
  topo.gpus_per_host = G;
  topo.hosts = c.nodes;
  topo.nic_of_gpu.assign(c.total_gpus(), {});
  b.host_nics.assign(c.nodes, {});
  int domain_switch = -1;
  for (int h = 0; h < c.nodes; ++h) {
    int scale_up = -1;
    if (nvl) {
      const int domain = static_cast<int>(int64_t{h} * G / b.t.nvl_domain);
      if (int64_t{h} * G % b.t.nvl_domain == 0) {
        domain_switch =
            topo.add_node(TopoNode{NodeKind::kNvSwitch, domain, domain, 0, 0, "nvl" + str(domain)});
      }
      scale_up = domain_switch;
    } else {
      scale_up = topo.add_node(
          TopoNode{NodeKind::kNvSwitch, h, 0, 0, 0, (pcie_only ? "pcie" : "nvs") + str(h)});
    }
    std::vector<int> gpu_nodes(G);
    for (int g = 0; g < G; ++g) {
      gpu_nodes[g] =
          topo.add_node(TopoNode{NodeKind::kGpu, h, g, 0, 0, "gpu" + str(h) + "." + str(g)});
      topo.gpus.push_back(gpu_nodes[g]);
      topo.add_link(gpu_nodes[g], scale_up, up_bw, up_lat, LinkTier::kScaleUp);
    }
    for (int k = 0; k < M; ++k) {
      const int nic =
          topo.add_node(TopoNode{NodeKind::kNic, h, k, 0, 0, "nic" + str(h) + "." + str(k)});
      b.host_nics[h].push_back(nic);
      // GPU g uses NIC ⌊g·M/G⌋; NIC k hangs off GPU ⌊k·G/M⌋. Both pairings together give NIC k
      // the GPUs ⌊k·G/M⌋ ... ⌈(k+1)·G/M⌉ - 1 (at least one).
      const int first = static_cast<int>(int64_t{k} * G / M);
      const int last = std::max(first, ceil_div(int64_t{k + 1} * G, M) - 1);
      for (int g = first; g <= last; ++g) {
        topo.add_link(gpu_nodes[g], nic, pcie, kPcieLatency, LinkTier::kHostNic);
        topo.nic_of_gpu[int64_t{h} * G + g].push_back(nic);
      }
    }
  }
}

// A leaf (ToR) and what hangs below it.
struct Leaf {
  std::vector<int> nics;  // NIC nodes, one down link each
  int group = 0;          // leaves of one group share spines when 3 tiers are needed (a rail)
  int plane = 0;          // leaves of a plane only reach that plane's spines
  std::string name;
};

int add_switch(Topology& topo, int tier, int local, int plane, std::string name) {
  return topo.add_node(TopoNode{NodeKind::kSwitch, -1, local, tier, plane, std::move(name)});
}

// The smallest spine count S in [lo, u] with n leaves · ⌈u/S⌉ links <= ports; 0 if none.
int spines_for(int n, int u, int ports) {
  for (int s = std::max(1, ceil_div(int64_t{n} * u, ports)); s <= u; ++s) {
    if (int64_t{n} * ceil_div(u, s) <= ports) return s;
  }
  return 0;
}

// Leaves, spines and (when 2 tiers cannot hold the leaves) cores over `leaves`. `designed_down`
// is the leaves' down-port count (uplinks = ⌈designed_down / r⌉, full-speed, spread round-robin
// over the spines); `port_bw` is every network link's bandwidth.
Status add_clos(Builder& b, std::vector<Leaf> leaves, int designed_down, Bandwidth port_bw) {
  Topology& topo = b.topo;
  const TopologyConfig& t = b.t;
  const SimTime lat = t.link_latency;
  // Oversubscription r: fewer full-speed uplinks, rounded up (capacity down/up <= r).
  const int u = std::max(
      1, ceil_div(designed_down * 1000000LL, static_cast<int64_t>(t.oversubscription * 1000000)));
  if (designed_down + u > t.leaf_radix) {
    return invalid_argument(key("leaf_radix") + ": " + str(t.leaf_radix) + ": a leaf needs " +
                            str(designed_down) + " ports down and " + str(u) +
                            " up (oversubscription " + std::to_string(t.oversubscription) +
                            "); expected more ports or fewer cluster.topology.su_nodes");
  }
  std::vector<int> leaf_node(leaves.size());
  for (size_t i = 0; i < leaves.size(); ++i) {
    leaf_node[i] = add_switch(topo, 1, static_cast<int>(i), leaves[i].plane, leaves[i].name);
    for (int nic : leaves[i].nics)
      topo.add_link(nic, leaf_node[i], port_bw, lat, LinkTier::kNicLeaf);
  }
  int planes = 0;
  for (const Leaf& l : leaves) planes = std::max(planes, l.plane + 1);
  std::vector<int> per_plane(planes, 0);
  for (const Leaf& l : leaves) ++per_plane[l.plane];
  const int most = *std::max_element(per_plane.begin(), per_plane.end());
  int spine_count = 0;
  if (most <= t.spine_radix) {  // 2 tiers: every leaf of a plane reaches every spine of it
    for (int p = 0; p < planes; ++p) {
      const int s = spines_for(per_plane[p], u, t.spine_radix);
      std::vector<int> spines(s);
      for (int j = 0; j < s; ++j) {
        spines[j] = add_switch(topo, 2, spine_count, p,
                               planes > 1 ? "agg" + str(p) + "." + str(j) : "spine" + str(j));
        ++spine_count;
      }
      for (size_t i = 0; i < leaves.size(); ++i) {
        if (leaves[i].plane != p) continue;
        for (int l = 0; l < u; ++l) {
          topo.add_link(leaf_node[i], spines[l % s], port_bw, lat, LinkTier::kLeafSpine);
        }
      }
    }
    return Status();
  }
  int64_t nics = 0;
  for (const Leaf& l : leaves) nics += l.plane == 0 ? static_cast<int64_t>(l.nics.size()) : 0;
  if (t.tiers < 3 || planes > 1) {
    return invalid_argument(key("tiers") + ": " + str(t.tiers) + ": 2 tiers of " +
                            str(t.spine_radix) + "-port spines hold at most " + str(t.spine_radix) +
                            " leaves per plane (" + str(int64_t{t.spine_radix} * designed_down) +
                            " NICs); this cluster needs " + str(most) + " (" + str(nics) +
                            " NICs): expected fewer nodes" +
                            (planes > 1 ? "" : " or cluster.topology.tiers=3"));
  }
  // 3 tiers: the leaves of each group (a rail), in chunks of at most d = radix/2, share a set of
  // S spines; spine j of every chunk reaches core group j.
  const int d = t.spine_radix / 2;
  int groups = 0;
  for (const Leaf& l : leaves) groups = std::max(groups, l.group + 1);
  std::vector<std::vector<int>> by_group(groups);
  for (size_t i = 0; i < leaves.size(); ++i)
    by_group[leaves[i].group].push_back(static_cast<int>(i));
  std::vector<std::vector<int>> chunks;
  for (const std::vector<int>& g : by_group) {
    const int n = ceil_div(static_cast<int64_t>(g.size()), d);
    for (int k = 0; k < n; ++k) {
      const size_t lo = g.size() * k / n, hi = g.size() * (k + 1) / n;
      chunks.emplace_back(g.begin() + lo, g.begin() + hi);
    }
  }
  size_t biggest = 0;
  for (const auto& ch : chunks) biggest = std::max(biggest, ch.size());
  const int s = spines_for(static_cast<int>(biggest), u, d);
  if (s == 0) {
    return invalid_argument(key("spine_radix") + ": " + str(t.spine_radix) +
                            ": too few ports for a 3-tier fabric of these leaves");
  }
  const int up = static_cast<int>(biggest) * ceil_div(u, s);  // per spine, = its down links
  const int num_chunks = static_cast<int>(chunks.size());
  int per_core_group = 0;
  for (int cpg = std::max(1, ceil_div(int64_t{num_chunks} * up, t.spine_radix)); cpg <= up; ++cpg) {
    if (int64_t{num_chunks} * ceil_div(up, cpg) <= t.spine_radix) {
      per_core_group = cpg;
      break;
    }
  }
  if (per_core_group == 0) {
    return invalid_argument("cluster.nodes: " + str(b.c.nodes) + ": more than 3 tiers of " +
                            str(t.spine_radix) + "-port switches hold (" + str(num_chunks) +
                            " spine groups, at most " + str(t.spine_radix) +
                            "): expected fewer nodes or larger cluster.topology.spine_radix");
  }
  std::vector<int> cores(int64_t{s} * per_core_group);
  for (size_t i = 0; i < cores.size(); ++i) {
    cores[i] = add_switch(topo, 3, static_cast<int>(i), 0, "core" + str(i));
  }
  for (const auto& chunk : chunks) {
    std::vector<int> spines(s);
    for (int j = 0; j < s; ++j) {
      spines[j] = add_switch(topo, 2, spine_count, 0, "spine" + str(spine_count));
      ++spine_count;
    }
    std::vector<int> down(s, 0);
    for (int i : chunk) {
      for (int l = 0; l < u; ++l) {
        topo.add_link(leaf_node[i], spines[l % s], port_bw, lat, LinkTier::kLeafSpine);
        ++down[l % s];
      }
    }
    for (int j = 0; j < s; ++j) {  // non-blocking at the spine: as many links up as down
      for (int l = 0; l < down[j]; ++l) {
        topo.add_link(spines[j], cores[j * per_core_group + l % per_core_group], port_bw, lat,
                      LinkTier::kSpineCore);
      }
    }
  }
  return Status();
}

// Rails across scalable units: NIC k of every host of SU s goes to leaf (s, k).
Status add_rails(Builder& b) {
  const int H = b.c.nodes, M = b.c.nics_per_node, su = b.t.su_nodes;
  std::vector<Leaf> leaves;
  const int sus = ceil_div(H, su);
  for (int s = 0; s < sus; ++s) {
    for (int k = 0; k < M; ++k) {
      Leaf l;
      l.group = k;
      l.name = "leaf" + str(s) + "." + str(k);
      for (int h = s * su; h < std::min(H, (s + 1) * su); ++h) l.nics.push_back(b.host_nics[h][k]);
      leaves.push_back(std::move(l));
    }
  }
  return add_clos(b, std::move(leaves), std::min(su, H), b.c.nic_bandwidth);
}

Status build_spine_leaf(Builder& b) {
  const double r = b.t.oversubscription;
  const int down = std::max(1, static_cast<int>(b.t.leaf_radix * r / (r + 1)));
  std::vector<int> all;
  for (const auto& nics : b.host_nics) all.insert(all.end(), nics.begin(), nics.end());
  std::vector<Leaf> leaves;
  for (size_t i = 0; i < all.size(); i += down) {
    Leaf l;
    l.name = "leaf" + str(static_cast<int64_t>(leaves.size()));
    l.nics.assign(all.begin() + i, all.begin() + std::min(all.size(), i + down));
    leaves.push_back(std::move(l));
  }
  return add_clos(b, std::move(leaves), std::min<int>(down, static_cast<int>(all.size())),
                  b.c.nic_bandwidth);
}

// Dual-ToR, dual-plane: port p of NIC k of every host of segment s goes to ToR (s, k, p) of plane
// p; each plane's aggregation switches connect only that plane's ToRs. Each port carries
// nic_bandwidth / planes (HPN: 2 x 200G per 400G NIC).
Status build_hpn(Builder& b) {
  const int H = b.c.nodes, M = b.c.nics_per_node, seg = b.t.su_nodes, P = b.t.planes;
  const Bandwidth port = b.c.nic_bandwidth / P;
  std::vector<Leaf> leaves;
  for (int s = 0; s < ceil_div(H, seg); ++s) {
    for (int k = 0; k < M; ++k) {
      for (int p = 0; p < P; ++p) {
        Leaf l;
        l.group = k;
        l.plane = p;
        l.name = "tor" + str(s) + "." + str(k) + "." + str(p);
        for (int h = s * seg; h < std::min(H, (s + 1) * seg); ++h)
          l.nics.push_back(b.host_nics[h][k]);
        leaves.push_back(std::move(l));
      }
    }
  }
  return add_clos(b, std::move(leaves), std::min(seg, H), port);
}

Status build_fat_tree(Builder& b) {
  const TopologyConfig& t = b.t;
  if (t.oversubscription != 1) {
    return invalid_argument(key("oversubscription") +
                            ": fat_tree is non-blocking by construction: expected 1:1 (use "
                            "spine_leaf or rail_optimized for an oversubscribed fabric)");
  }
  const int64_t nics = int64_t{b.c.nodes} * b.c.nics_per_node;
  int k = t.k;
  if (k == 0) {
    for (k = 2; int64_t{k} * k * k / 4 < nics; k += 2) {
    }
  }
  if (k < 2 || k % 2 != 0 || k > kMaxK) {
    return invalid_argument(key("k") + ": " + str(k) + ": expected an even arity from 2 to " +
                            str(kMaxK));
  }
  if (int64_t{k} * k * k / 4 < nics) {
    return invalid_argument(key("k") + ": " + str(k) +
                            ": a k-ary fat tree has k³/4 = " + str(int64_t{k} * k * k / 4) +
                            " host ports; expected room for " + str(nics) + " NICs");
  }
  Topology& topo = b.topo;
  const int half = k / 2;
  const SimTime lat = t.link_latency;
  const Bandwidth bw = b.c.nic_bandwidth;
  std::vector<int> edge(int64_t{k} * half), agg(int64_t{k} * half), core(int64_t{half} * half);
  for (int p = 0; p < k; ++p) {
    for (int i = 0; i < half; ++i) {
      edge[p * half + i] = add_switch(topo, 1, p * half + i, 0, "edge" + str(p) + "." + str(i));
    }
  }
  for (int p = 0; p < k; ++p) {
    for (int j = 0; j < half; ++j) {
      agg[p * half + j] = add_switch(topo, 2, p * half + j, 0, "agg" + str(p) + "." + str(j));
    }
  }
  for (int i = 0; i < half * half; ++i) core[i] = add_switch(topo, 3, i, 0, "core" + str(i));
  int64_t n = 0;
  for (const auto& host : b.host_nics) {
    for (int nic : host) topo.add_link(nic, edge[n++ / half], bw, lat, LinkTier::kNicLeaf);
  }
  for (int p = 0; p < k; ++p) {
    for (int i = 0; i < half; ++i) {
      for (int j = 0; j < half; ++j) {
        topo.add_link(edge[p * half + i], agg[p * half + j], bw, lat, LinkTier::kLeafSpine);
      }
    }
    for (int j = 0; j < half; ++j) {
      for (int m = 0; m < half; ++m) {
        topo.add_link(agg[p * half + j], core[j * half + m], bw, lat, LinkTier::kSpineCore);
      }
    }
  }
  return Status();
}

}  // namespace

StatusOr<Topology> build_topology(const ClusterConfig& c) {
  Builder b{c, c.topology, Topology{}, {}};
  PREFLIGHT_RETURN_IF_ERROR(resolve(c, &b.t));
  const TopologyConfig& t = b.t;
  if (c.nodes < 1 || c.gpus_per_node < 1) {
    return invalid_argument("cluster.nodes: expected at least one node of at least one GPU");
  }
  if (int64_t{c.nodes} * c.gpus_per_node > kMaxGpus) {
    return invalid_argument("cluster.nodes: " + str(c.nodes) + " nodes of " + str(c.gpus_per_node) +
                            " GPUs: topologies hold at most " + str(kMaxGpus) + " GPUs");
  }
  if (int64_t{c.nodes} * c.nics_per_node > kMaxNics) {
    return invalid_argument("cluster.nics_per_node: " + str(c.nics_per_node) + " NICs on " +
                            str(c.nodes) + " nodes: topologies hold at most " + str(kMaxNics) +
                            " NICs");
  }
  if (t.kind == "nvswitch" && c.nodes > 1) {
    return invalid_argument(key("kind") + ": nvswitch is one host's NVLink fabric; " +
                            str(c.nodes) + " nodes need a network (e.g. rail_optimized)");
  }
  const bool network = t.kind != "nvswitch";
  if (network && (c.nics_per_node < 1 || c.nic_bandwidth.bytes_per_second() <= 0)) {
    return invalid_argument("cluster.nics_per_node: " + str(c.nics_per_node) + ": the " + t.kind +
                            " fabric needs at least one NIC per node");
  }
  if (t.kind == "nvl72") {
    const int64_t gpus = int64_t{c.nodes} * c.gpus_per_node;
    if (gpus % t.nvl_domain != 0 || t.nvl_domain % c.gpus_per_node != 0) {
      return invalid_argument(key("nvl_domain") + ": " + str(t.nvl_domain) +
                              ": expected a multiple of cluster.gpus_per_node (" +
                              str(c.gpus_per_node) + ") dividing the " + str(gpus) + " GPUs");
    }
  }
  b.topo.kind = t.kind;
  add_hosts(b, network);
  if (t.kind == "rail_optimized" || t.kind == "nvl72") {
    PREFLIGHT_RETURN_IF_ERROR(add_rails(b));
  } else if (t.kind == "spine_leaf") {
    PREFLIGHT_RETURN_IF_ERROR(build_spine_leaf(b));
  } else if (t.kind == "fat_tree") {
    PREFLIGHT_RETURN_IF_ERROR(build_fat_tree(b));
  } else if (t.kind == "hpn") {
    PREFLIGHT_RETURN_IF_ERROR(build_hpn(b));
  }
  b.topo.finalize();
  PREFLIGHT_RETURN_IF_ERROR(b.topo.validate());
  return std::move(b.topo);
}

// ---- Metrics ----

TopologySummary summarize(const Topology& t) {
  TopologySummary s;
  s.kind = t.kind;
  s.gpus = static_cast<int>(t.gpus.size());
  s.hosts = t.hosts;
  s.nics = t.count(NodeKind::kNic);
  s.nvswitches = t.count(NodeKind::kNvSwitch);
  s.switches = t.count(NodeKind::kSwitch);
  s.links = static_cast<int>(t.links.size());
  // Layers bottom to top; the link tier below each.
  struct Layer {
    const char* name;
    LinkTier below;
  };
  const Layer layers[] = {{"nvswitch", LinkTier::kScaleUp},
                          {"nic", LinkTier::kHostNic},
                          {"leaf", LinkTier::kNicLeaf},
                          {"spine", LinkTier::kLeafSpine},
                          {"core", LinkTier::kSpineCore}};
  int layer_nodes[5] = {s.nvswitches, s.nics, 0, 0, 0};
  for (const TopoNode& v : t.nodes) {
    if (v.kind == NodeKind::kSwitch && v.tier >= 1 && v.tier <= 3) ++layer_nodes[v.tier + 1];
  }
  int links[5] = {};
  double bw[5] = {};
  for (const TopoLink& l : t.links) {
    const int i = static_cast<int>(l.tier);
    ++links[i];
    bw[i] += l.bandwidth.bytes_per_second();
  }
  for (int i = 0; i < 5; ++i) {
    if (layer_nodes[i] == 0 && links[i] == 0) continue;
    TierSummary row;
    row.name = layers[i].name;
    row.switches = layer_nodes[i];
    row.links = links[i];
    row.down_bps = bw[i];
    // Above the NVSwitch layer there is nothing (NICs hang off the GPUs); above the others,
    // the next link tier.
    row.up_bps = i == 0 || i == 4 ? 0 : bw[i + 1];
    row.oversubscription = row.up_bps > 0 ? row.down_bps / row.up_bps : 0;
    s.tiers.push_back(row);
  }
  if (t.hosts < 2) return s;

  // Bisection: mark each node with the halves of the hosts it serves (bit 0: first half, bit 1:
  // second), GPUs and NICs by their host, then NVSwitches and switches upward by tier.
  const int n = static_cast<int>(t.nodes.size());
  const int half_hosts = t.hosts / 2;
  std::vector<uint8_t> side(n, 0);
  for (int v = 0; v < n; ++v) {
    const TopoNode& node = t.nodes[v];
    if (node.kind == NodeKind::kGpu || node.kind == NodeKind::kNic) {
      side[v] = node.host < half_hosts ? 1 : 2;
    }
  }
  auto lift = [&](auto is_layer) {
    for (int v = 0; v < n; ++v) {
      if (!is_layer(t.nodes[v])) continue;
      for (const auto& [w, link] : t.adjacency[v]) {
        const TopoNode& below = t.nodes[w];
        if (below.kind == NodeKind::kGpu || below.kind == NodeKind::kNic ||
            (below.kind == NodeKind::kSwitch && below.tier < t.nodes[v].tier)) {
          side[v] |= side[w];
        }
      }
    }
  };
  lift([](const TopoNode& v) { return v.kind == NodeKind::kNvSwitch; });
  for (int tier = 1; tier <= 3; ++tier) {
    lift([tier](const TopoNode& v) { return v.kind == NodeKind::kSwitch && v.tier == tier; });
  }
  double cut[3] = {};
  for (const TopoLink& l : t.links) {
    const uint8_t a = side[l.a], b = side[l.b];
    if (a == 0 || b == 0 || a == b) continue;  // unused switch, or inside one side
    if (a != 3) cut[a] += l.bandwidth.bytes_per_second();
    if (b != 3) cut[b] += l.bandwidth.bytes_per_second();
  }
  s.bisection_bandwidth_bps = std::min(cut[1], cut[2]);

  // Path lengths: BFS from up to 64 evenly spaced GPUs; GPUs are endpoints, never transit.
  const int gpus = s.gpus;
  const int sources = std::min(gpus, 64);
  int64_t total = 0, pairs = 0;
  std::vector<int> dist(n);
  for (int i = 0; i < sources; ++i) {
    const int src = t.gpus[static_cast<int64_t>(i) * gpus / sources];
    std::fill(dist.begin(), dist.end(), -1);
    std::deque<int> queue{src};
    dist[src] = 0;
    while (!queue.empty()) {
      const int v = queue.front();
      queue.pop_front();
      if (v != src && t.nodes[v].kind == NodeKind::kGpu) continue;
      for (const auto& [w, link] : t.adjacency[v]) {
        if (dist[w] < 0) {
          dist[w] = dist[v] + 1;
          queue.push_back(w);
        }
      }
    }
    for (int g : t.gpus) {
      if (t.nodes[g].host == t.nodes[src].host || dist[g] < 0) continue;
      s.max_path_hops = std::max(s.max_path_hops, dist[g]);
      total += dist[g];
      ++pairs;
    }
  }
  s.mean_path_hops = pairs > 0 ? static_cast<double>(total) / pairs : 0;
  return s;
}

// ---- SimAI export ----

namespace {

// "0.00065" for 650 ns: fixed notation, no trailing zeros (SimAI writes 0.0005ms, 0.000025ms).
std::string milliseconds(SimTime t) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9f", t.to_milliseconds());
  std::string s = buf;
  while (s.size() > 1 && s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s;
}

std::string gbps(double bytes_per_second) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", bytes_per_second * 8 / 1e9);
  return buf;
}

}  // namespace

// Format: simai_formats.md §3.2 (SimAI `SetupNetwork` in ns3/common.h): GPUs are ids 0..G-1,
// NVSwitches next, then the other switches; line 2 lists the NVSwitch and switch ids.
Status write_simai_topology(const Topology& t, std::ostream& out, const std::string& gpu_type) {
  PREFLIGHT_RETURN_IF_ERROR(t.validate());
  const int n = static_cast<int>(t.nodes.size());
  std::vector<int> id(n, -1);
  int next = 0;
  for (int g : t.gpus) id[g] = next++;
  std::vector<int> nvswitches, switches;
  for (int v = 0; v < n; ++v) {
    if (t.nodes[v].kind == NodeKind::kNvSwitch) nvswitches.push_back(v);
  }
  for (int v = 0; v < n; ++v) {
    if (t.nodes[v].kind == NodeKind::kSwitch) switches.push_back(v);
  }
  for (int v : nvswitches) id[v] = next++;
  for (int v : switches) id[v] = next++;
  // GPUs using each NIC (the NIC's links to the fabric are split among them).
  std::vector<std::vector<int>> users(n);
  for (size_t g = 0; g < t.nic_of_gpu.size(); ++g) {
    for (int nic : t.nic_of_gpu[g]) users[nic].push_back(static_cast<int>(g));
  }
  std::vector<std::string> lines;
  for (const TopoLink& l : t.links) {
    if (l.tier == LinkTier::kHostNic) continue;
    const std::string rate_delay = " " + milliseconds(l.latency) + "ms 0";
    const bool a_nic = t.nodes[l.a].kind == NodeKind::kNic;
    const bool b_nic = t.nodes[l.b].kind == NodeKind::kNic;
    if (a_nic || b_nic) {
      const int nic = a_nic ? l.a : l.b, other = a_nic ? l.b : l.a;
      if (users[nic].empty() || id[other] < 0) continue;
      const double share = l.bandwidth.bytes_per_second() / users[nic].size();
      for (int g : users[nic]) {
        lines.push_back(std::to_string(g) + " " + std::to_string(id[other]) + " " + gbps(share) +
                        "Gbps" + rate_delay);
      }
      continue;
    }
    if (id[l.a] < 0 || id[l.b] < 0) continue;
    lines.push_back(std::to_string(id[l.a]) + " " + std::to_string(id[l.b]) + " " +
                    gbps(l.bandwidth.bytes_per_second()) + "Gbps" + rate_delay);
  }
  out << next << " " << t.gpus_per_host << " " << nvswitches.size() << " " << switches.size() << " "
      << lines.size() << " " << gpu_type << "\n";
  for (int i = static_cast<int>(t.gpus.size()); i < next; ++i) {
    out << i << (i + 1 < next ? " " : "");
  }
  out << "\n";
  for (const std::string& line : lines) out << line << "\n";
  if (!out) return internal_error("simai export: write failed");
  return Status();
}

}  // namespace preflight
