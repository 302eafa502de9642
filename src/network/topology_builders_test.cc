#include "network/topology_builders.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "config/loader.h"

namespace preflight {
namespace {

// A cluster preset with --set style overrides; fails the test on a load error.
ClusterConfig cluster(const std::string& preset, std::vector<std::string> overrides) {
  StatusOr<ClusterConfig> c = load_cluster_preset(preset, overrides);
  EXPECT_TRUE(c.ok()) << c.status().message();
  return c.ok() ? *c : ClusterConfig{};
}

ClusterConfig h100(int nodes, const std::string& kind, std::vector<std::string> more = {}) {
  more.push_back("cluster.nodes=" + std::to_string(nodes));
  more.push_back("cluster.topology.kind=" + kind);
  return cluster("dgx-h100", more);
}

Topology build(const ClusterConfig& c) {
  StatusOr<Topology> t = build_topology(c);
  EXPECT_TRUE(t.ok()) << t.status().message();
  if (!t.ok()) return Topology{};
  EXPECT_TRUE(t->validate().ok()) << t->validate().message();  // every GPU pair connected
  return *t;
}

int switches_in_tier(const Topology& t, int tier) {
  int n = 0;
  for (const TopoNode& v : t.nodes) n += v.kind == NodeKind::kSwitch && v.tier == tier;
  return n;
}

int links_in(const Topology& t, LinkTier tier) {
  int n = 0;
  for (const TopoLink& l : t.links) n += l.tier == tier;
  return n;
}

const TierSummary& row(const TopologySummary& s, const std::string& name) {
  for (const TierSummary& r : s.tiers) {
    if (r.name == name) return r;
  }
  static const TierSummary kNone;
  ADD_FAILURE() << "no tier " << name;
  return kNone;
}

std::string build_error(const ClusterConfig& c) {
  StatusOr<Topology> t = build_topology(c);
  EXPECT_FALSE(t.ok());
  return t.ok() ? "" : t.status().message();
}

std::string load_error(const std::string& preset, const std::vector<std::string>& overrides) {
  StatusOr<ClusterConfig> c = load_cluster_preset(preset, overrides);
  EXPECT_FALSE(c.ok());
  return c.ok() ? "" : c.status().message();
}

constexpr double kNdr = 50e9;  // 400 Gb/s NIC, bytes/s

TEST(BuildTopology, NvSwitchIsOneHostOnOneSwitch) {
  const Topology t = build(cluster("dgx-h100", {"cluster.topology.kind=nvswitch"}));
  EXPECT_EQ(t.count(NodeKind::kGpu), 8);
  EXPECT_EQ(t.count(NodeKind::kNvSwitch), 1);
  EXPECT_EQ(t.count(NodeKind::kNic), 0);
  ASSERT_EQ(t.links.size(), 8u);
  EXPECT_DOUBLE_EQ(t.links[0].bandwidth.bytes_per_second(), 450e9);  // H100 NVLink per direction
  EXPECT_EQ(t.links[0].latency, SimTime::picoseconds(25'000));
  EXPECT_NE(build_error(h100(2, "nvswitch")).find("cluster.topology.kind"), std::string::npos);
}

TEST(BuildTopology, DefaultKindIsNvSwitchForOneNodeAndRailsBeyond) {
  ClusterConfig c = cluster("dgx-h100", {});
  EXPECT_EQ(c.topology.kind, "rail_optimized");  // the preset's
  c.topology.kind = "";
  EXPECT_EQ(build(c).kind, "nvswitch");
  c.nodes = 2;
  EXPECT_EQ(build(c).kind, "rail_optimized");
}

TEST(BuildTopology, PcieOnlyGpusHangOffAHostBridge) {
  const Topology t =
      build(cluster("dgx-h100", {"cluster.topology.kind=nvswitch", "cluster.gpu.nvlinks=0"}));
  EXPECT_EQ(t.nodes[0].name, "pcie0");
  EXPECT_DOUBLE_EQ(t.links[0].bandwidth.bytes_per_second(), 48e9);  // Gen5 x16, effective
}

TEST(BuildTopology, RailOptimizedTwoNodes) {
  const Topology t = build(h100(2, "rail_optimized"));
  // 1 SU: one leaf per rail (8); leaves have min(32, 2) = 2 hosts down and 2 up; 8·2 = 16
  // uplinks fit one 64-port spine.
  EXPECT_EQ(switches_in_tier(t, 1), 8);
  EXPECT_EQ(switches_in_tier(t, 2), 1);
  EXPECT_EQ(links_in(t, LinkTier::kScaleUp), 16);
  EXPECT_EQ(links_in(t, LinkTier::kHostNic), 16);
  EXPECT_EQ(links_in(t, LinkTier::kNicLeaf), 16);
  EXPECT_EQ(links_in(t, LinkTier::kLeafSpine), 16);
  // Rail k: NIC k of every host on leaf k.
  EXPECT_EQ(t.nodes[t.adjacency[t.nic_of_gpu[3][0]].back().first].name, "leaf0.3");
  EXPECT_EQ(t.nodes[t.adjacency[t.nic_of_gpu[11][0]].back().first].name, "leaf0.3");
  const TopologySummary s = summarize(t);
  EXPECT_EQ(s.gpus, 16);
  EXPECT_EQ(s.nics, 16);
  EXPECT_EQ(s.switches, 9);
  EXPECT_EQ(s.links, 64);
  // Half the hosts' NICs: 1 host · 8 · 50 GB/s.
  EXPECT_DOUBLE_EQ(s.bisection_bandwidth_bps, 8 * kNdr);
  // Same rail: gpu-nic-leaf-nic-gpu = 4; other rail via the spine = 6: mean (4 + 7·6)/8.
  EXPECT_EQ(s.max_path_hops, 6);
  EXPECT_DOUBLE_EQ(s.mean_path_hops, 5.75);
}

TEST(BuildTopology, RailOptimizedMatchesSuperPodTable) {
  // network_models.md §5.2 (DGX SuperPOD H100 RA, Table 4): SU 1 = 31 nodes, 8 leaves, 4
  // spines; SU 3 = 95 nodes, 24 leaves, 16 spines; SU 4 = 127 nodes, 32 leaves, 16 spines,
  // 1024 leaf-spine cables.
  const struct {
    int nodes, leaves, spines;
  } rows[] = {{31, 8, 4}, {63, 16, 8}, {95, 24, 16}, {127, 32, 16}};
  for (const auto& r : rows) {
    const Topology t = build(h100(r.nodes, "rail_optimized"));
    EXPECT_EQ(switches_in_tier(t, 1), r.leaves) << r.nodes;
    EXPECT_EQ(switches_in_tier(t, 2), r.spines) << r.nodes;
    EXPECT_EQ(switches_in_tier(t, 3), 0) << r.nodes;
  }
  EXPECT_EQ(links_in(build(h100(127, "rail_optimized")), LinkTier::kLeafSpine), 1024);
}

TEST(BuildTopology, RailOptimized128NodesIsNonBlocking) {
  const Topology t = build(h100(128, "rail_optimized"));  // 1024 GPUs, 4 SU
  const TopologySummary s = summarize(t);
  EXPECT_EQ(s.gpus, 1024);
  EXPECT_EQ(s.switches, 32 + 16);
  EXPECT_DOUBLE_EQ(row(s, "leaf").oversubscription, 1.0);
  // Non-blocking 2 tiers: bisection = half the hosts' NICs = 64 · 8 · 50 GB/s.
  EXPECT_DOUBLE_EQ(s.bisection_bandwidth_bps, 64 * 8 * kNdr);
  EXPECT_EQ(s.max_path_hops, 6);
}

TEST(BuildTopology, OversubscriptionTwoToOneHalvesLeafUplinks) {
  const TopologySummary full = summarize(build(h100(128, "rail_optimized")));
  const TopologySummary half =
      summarize(build(h100(128, "rail_optimized", {"cluster.topology.oversubscription=2:1"})));
  // 32 leaves · 16 uplinks instead of 32; spines: 512 uplinks / 64 ports = 8.
  EXPECT_DOUBLE_EQ(row(half, "leaf").up_bps, row(full, "leaf").up_bps / 2);
  EXPECT_DOUBLE_EQ(row(half, "leaf").oversubscription, 2.0);
  EXPECT_EQ(row(half, "spine").switches, 8);
  EXPECT_DOUBLE_EQ(half.bisection_bandwidth_bps, full.bisection_bandwidth_bps / 2);
}

TEST(BuildTopology, RailOptimizedAddsCoreTierLikeB200Table) {
  // §5.2, B200 RA: 16 SU = 512 nodes: 128 leaves, 128 spines, 64 cores.
  Topology t = build(cluster("dgx-b200", {"cluster.nodes=512"}));
  EXPECT_EQ(switches_in_tier(t, 1), 128);
  EXPECT_EQ(switches_in_tier(t, 2), 128);
  EXPECT_EQ(switches_in_tier(t, 3), 64);
  // 64 SU = 2048 nodes (16,384 GPUs): 512 leaves, 512 spines, 256 cores.
  t = build(h100(2048, "rail_optimized"));
  EXPECT_EQ(t.gpus.size(), 16384u);
  EXPECT_EQ(switches_in_tier(t, 1), 512);
  EXPECT_EQ(switches_in_tier(t, 2), 512);
  EXPECT_EQ(switches_in_tier(t, 3), 256);
  EXPECT_EQ(links_in(t, LinkTier::kLeafSpine), 512 * 32);
  EXPECT_EQ(links_in(t, LinkTier::kSpineCore), 512 * 32);
  const TopologySummary s = summarize(t);
  EXPECT_DOUBLE_EQ(row(s, "spine").oversubscription, 1.0);
  EXPECT_DOUBLE_EQ(s.bisection_bandwidth_bps, 1024 * 8 * kNdr);
  EXPECT_EQ(s.max_path_hops, 8);  // gpu-nic-leaf-spine-core-spine-leaf-nic-gpu
}

TEST(BuildTopology, RailOptimizedBeyondTwoTiersWithoutCoreIsAnError) {
  // 2 tiers of 64-port spines hold 64 leaves = 8 SU = 256 nodes.
  build(h100(256, "rail_optimized", {"cluster.topology.tiers=2"}));
  const std::string e = build_error(h100(257, "rail_optimized", {"cluster.topology.tiers=2"}));
  EXPECT_NE(e.find("cluster.topology.tiers"), std::string::npos) << e;
}

TEST(BuildTopology, VtrainGpuPairsShareANic) {
  const Topology t = build(cluster("vtrain-a100", {"cluster.nodes=2"}));
  EXPECT_EQ(t.count(NodeKind::kNic), 8);
  EXPECT_EQ(t.nic_of_gpu[0], t.nic_of_gpu[1]);
  EXPECT_NE(t.nic_of_gpu[1], t.nic_of_gpu[2]);
  EXPECT_EQ(links_in(t, LinkTier::kHostNic), 16);  // each GPU to its NIC's PCIe switch
  EXPECT_EQ(switches_in_tier(t, 1), 4);            // one leaf per rail, 4 rails
}

TEST(BuildTopology, SpineLeafSmallAndLarge) {
  Topology t = build(h100(4, "spine_leaf"));
  // 32 NICs fill one 32-down leaf; its 32 uplinks go to one spine.
  EXPECT_EQ(switches_in_tier(t, 1), 1);
  EXPECT_EQ(switches_in_tier(t, 2), 1);
  EXPECT_DOUBLE_EQ(summarize(t).bisection_bandwidth_bps, 2 * 8 * kNdr);
  t = build(h100(256, "spine_leaf"));
  // 2048 NICs / 32 = 64 leaves; 64·32 uplinks / 64 ports = 32 spines (radix²/2 NICs: full).
  EXPECT_EQ(switches_in_tier(t, 1), 64);
  EXPECT_EQ(switches_in_tier(t, 2), 32);
  EXPECT_EQ(links_in(t, LinkTier::kLeafSpine), 2048);
  EXPECT_DOUBLE_EQ(summarize(t).bisection_bandwidth_bps, 128 * 8 * kNdr);
  const std::string e = build_error(h100(257, "spine_leaf"));
  EXPECT_NE(e.find("cluster.topology.tiers: 2"), std::string::npos) << e;
}

TEST(BuildTopology, SpineLeafOversubscribedLeavesTakeMoreHosts) {
  // 2:1 on 64 ports: 42 down, 21 up; 21 nodes = 168 NICs = 4 full leaves.
  const Topology t = build(h100(21, "spine_leaf", {"cluster.topology.oversubscription=2:1"}));
  EXPECT_EQ(switches_in_tier(t, 1), 4);
  EXPECT_EQ(links_in(t, LinkTier::kLeafSpine), 4 * 21);
  EXPECT_DOUBLE_EQ(row(summarize(t), "leaf").oversubscription, 2.0);
}

TEST(BuildTopology, FatTreeCountsFollowK) {
  // k = 4 (the smallest even k with k³/4 >= 16 NICs): 8 edge, 8 aggregation, 4 core.
  Topology t = build(h100(2, "fat_tree"));
  EXPECT_EQ(switches_in_tier(t, 1), 8);
  EXPECT_EQ(switches_in_tier(t, 2), 8);
  EXPECT_EQ(switches_in_tier(t, 3), 4);
  EXPECT_EQ(links_in(t, LinkTier::kLeafSpine), 16);
  EXPECT_EQ(links_in(t, LinkTier::kSpineCore), 16);
  // k = 16: 128 edge, 128 aggregation, 64 core, k³/4 = 1024 NICs = 128 nodes.
  t = build(h100(128, "fat_tree", {"cluster.topology.k=16"}));
  EXPECT_EQ(switches_in_tier(t, 1), 128);
  EXPECT_EQ(switches_in_tier(t, 2), 128);
  EXPECT_EQ(switches_in_tier(t, 3), 64);
  const TopologySummary s = summarize(t);
  EXPECT_DOUBLE_EQ(s.bisection_bandwidth_bps, 64 * 8 * kNdr);
  EXPECT_EQ(s.max_path_hops, 8);
  const std::string e = build_error(h100(129, "fat_tree", {"cluster.topology.k=16"}));
  EXPECT_NE(e.find("cluster.topology.k: 16"), std::string::npos) << e;
  EXPECT_FALSE(build_topology(h100(2, "fat_tree", {"cluster.topology.oversubscription=2:1"})).ok());
}

TEST(BuildTopology, HpnIsDualToRDualPlane) {
  Topology t = build(h100(2, "hpn"));
  // 1 segment · 8 rails · 2 planes = 16 ToRs; each plane's 8 ToRs · 2 uplinks fit 1 aggregation.
  EXPECT_EQ(switches_in_tier(t, 1), 16);
  EXPECT_EQ(switches_in_tier(t, 2), 2);
  EXPECT_EQ(links_in(t, LinkTier::kNicLeaf), 32);  // two ports per NIC
  EXPECT_DOUBLE_EQ(
      t.links[t.adjacency[t.nic_of_gpu[0][0]].back().second].bandwidth.bytes_per_second(),
      25e9);  // 200G per port
  // A plane's ToRs reach only that plane's aggregation switches.
  for (const TopoLink& l : t.links) {
    if (l.tier == LinkTier::kLeafSpine) {
      EXPECT_EQ(t.nodes[l.a].plane, t.nodes[l.b].plane);
    }
  }
  // 128 hosts = one 1024-GPU segment: 256-port ToRs with 128 down and 128 up; each plane's
  // 8 ToRs · 128 uplinks / 256 ports = 4 aggregation switches.
  t = build(h100(128, "hpn"));
  EXPECT_EQ(switches_in_tier(t, 1), 16);
  EXPECT_EQ(switches_in_tier(t, 2), 8);
  const TopologySummary s = summarize(t);
  EXPECT_DOUBLE_EQ(s.bisection_bandwidth_bps, 64 * 8 * kNdr);
  // A 15-segment pod (15,360 GPUs, §5.4): 240 ToRs, 64 aggregation switches per plane.
  t = build(h100(1920, "hpn"));
  EXPECT_EQ(switches_in_tier(t, 1), 240);
  EXPECT_EQ(switches_in_tier(t, 2), 128);
}

TEST(BuildTopology, Nvl72DomainsUnderRails) {
  const std::vector<std::string> gb200 = {"cluster.gpu=B200", "cluster.gpus_per_node=4",
                                          "cluster.nics_per_node=4", "cluster.topology.kind=nvl72"};
  auto with_nodes = [&](int n) {
    std::vector<std::string> o = gb200;
    o.push_back("cluster.nodes=" + std::to_string(n));
    return o;
  };
  // 18 trays = 1 rack: one NVLink node for 72 GPUs; SU = 18 trays; 4 rails -> 4 leaves of 18
  // down, 18 up; 72 uplinks fit 2 spines.
  Topology t = build(cluster("dgx-b200", with_nodes(18)));
  EXPECT_EQ(t.count(NodeKind::kNvSwitch), 1);
  EXPECT_EQ(links_in(t, LinkTier::kScaleUp), 72);
  EXPECT_EQ(switches_in_tier(t, 1), 4);
  EXPECT_EQ(switches_in_tier(t, 2), 2);
  // 144 trays = 8 racks (576 GPUs, the GB200 SU): 8 NVLink nodes, 32 leaves, 32·18/64 = 9 spines.
  t = build(cluster("dgx-b200", with_nodes(144)));
  EXPECT_EQ(t.count(NodeKind::kNvSwitch), 8);
  EXPECT_EQ(switches_in_tier(t, 1), 32);
  EXPECT_EQ(switches_in_tier(t, 2), 9);
  // 17 trays = 68 GPUs: not whole domains.
  const std::string e = load_error("dgx-b200", with_nodes(17));
  EXPECT_NE(e.find("cluster.topology.nvl_domain"), std::string::npos) << e;
  std::vector<std::string> odd = with_nodes(18);
  odd.push_back("cluster.topology.nvl_domain=6");  // 6 GPUs: not whole 4-GPU trays
  EXPECT_FALSE(build_topology(cluster("dgx-b200", odd)).ok());
}

TEST(TopologyConfig, BadValuesAreOneLineErrors) {
  std::string e = load_error("dgx-h100", {"cluster.topology.oversubscription=0:1"});
  EXPECT_NE(e.find("cluster.topology.oversubscription: '0:1'"), std::string::npos) << e;
  e = load_error("dgx-h100", {"cluster.topology.oversubscription=abc"});
  EXPECT_NE(e.find("cluster.topology.oversubscription"), std::string::npos) << e;
  e = load_error("dgx-h100", {"cluster.topology.oversubscription=1:2"});
  EXPECT_NE(e.find("cluster.topology.oversubscription"), std::string::npos) << e;
  e = load_error("dgx-h100", {"cluster.topology.leaf_radix=0"});
  EXPECT_NE(e.find("cluster.topology.leaf_radix"), std::string::npos) << e;
  e = load_error("dgx-h100", {"cluster.topology.spine_radix=0"});
  EXPECT_NE(e.find("cluster.topology.spine_radix"), std::string::npos) << e;
  e = load_error("dgx-h100", {"cluster.topology.kind=torus"});
  EXPECT_NE(e.find("cluster.topology.kind"), std::string::npos) << e;
  e = load_error("dgx-h100", {"cluster.topology.k=5"});
  EXPECT_NE(e.find("cluster.topology.k"), std::string::npos) << e;
  e = load_error("dgx-h100", {"cluster.topology.color=red"});
  EXPECT_NE(e.find("color"), std::string::npos) << e;
  EXPECT_EQ(e.find('\n'), std::string::npos);
  EXPECT_DOUBLE_EQ(
      cluster("dgx-h100", {"cluster.topology.oversubscription=3:2"}).topology.oversubscription,
      1.5);
  EXPECT_EQ(cluster("dgx-h100", {"cluster.topology=fat_tree"}).topology.kind, "fat_tree");
}

TEST(TopologyConfig, LeafTooSmallForItsScalableUnitIsAnError) {
  // 32 hosts down and 32 up need 64 ports; 40-port leaves cannot.
  const std::string e = build_error(h100(64, "rail_optimized", {"cluster.topology.leaf_radix=40"}));
  EXPECT_NE(e.find("cluster.topology.leaf_radix: 40"), std::string::npos) << e;
}

TEST(BuildTopology, UnevenNicCountsPairEveryGpuAndNic) {
  // 3 NICs for 8 GPUs: NIC k serves GPUs ⌊8k/3⌋ ... ⌈8(k+1)/3⌉ - 1 = {0,1,2}, {2,3,4,5}, {5,6,7}.
  const Topology t = build(h100(2, "rail_optimized", {"cluster.nics_per_node=3"}));
  EXPECT_EQ(t.nic_of_gpu[2].size(), 2u);
  EXPECT_EQ(t.nic_of_gpu[4].size(), 1u);
  EXPECT_EQ(links_in(t, LinkTier::kHostNic), 2 * 10);
}

TEST(BuildTopology, HugeRequestsFailFast) {
  EXPECT_FALSE(build_topology(h100(2, "fat_tree", {"cluster.topology.k=100000"})).ok());
  EXPECT_FALSE(build_topology(h100(2, "spine_leaf", {"cluster.nics_per_node=100000000"})).ok());
  EXPECT_FALSE(build_topology(h100(1 << 20, "rail_optimized")).ok());
  // Radix far beyond any switch: still quick (loops are bounded by the port counts in use).
  EXPECT_TRUE(
      build_topology(h100(64, "spine_leaf", {"cluster.topology.leaf_radix=1000000000"})).ok());
}

TEST(WriteSimaiTopology, HeaderSwitchIdsAndLinks) {
  const Topology t = build(h100(2, "rail_optimized"));
  std::ostringstream out;
  ASSERT_TRUE(write_simai_topology(t, out, "H100").ok());
  std::istringstream in(out.str());
  std::string line;
  std::getline(in, line);
  // 16 GPUs + 2 NVSwitches + 9 switches = 27 nodes; links: 16 GPU-NVSwitch, 16 GPU-leaf (NICs
  // folded in), 16 leaf-spine = 48.
  EXPECT_EQ(line, "27 8 2 9 48 H100");
  std::getline(in, line);
  EXPECT_EQ(line, "16 17 18 19 20 21 22 23 24 25 26");
  std::getline(in, line);
  EXPECT_EQ(line, "0 16 3600Gbps 0.000025ms 0");  // 450 GB/s NVLink, 25 ns
  int links = 1;
  bool nic_link = false;
  while (std::getline(in, line)) {
    ++links;
    nic_link |= line == "0 18 400Gbps 0.00065ms 0";  // GPU 0 -> leaf0.0 (node 18)
  }
  EXPECT_EQ(links, 48);
  EXPECT_TRUE(nic_link);
}

TEST(WriteSimaiTopology, SharedNicSplitsItsBandwidth) {
  const Topology t = build(cluster("vtrain-a100", {"cluster.nodes=2"}));
  std::ostringstream out;
  ASSERT_TRUE(write_simai_topology(t, out, "A100").ok());
  // GPUs 0 and 1 share NIC 0 (200G): two GPU-leaf links of 100G.
  EXPECT_NE(out.str().find("\n0 18 100Gbps"), std::string::npos) << out.str().substr(0, 200);
  EXPECT_NE(out.str().find("\n1 18 100Gbps"), std::string::npos);
}

}  // namespace
}  // namespace preflight
