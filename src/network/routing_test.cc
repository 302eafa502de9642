#include "network/routing.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <vector>

namespace preflight {
namespace {

// Two SUs of two hosts; each host has 2 GPUs on an NVSwitch and 2 NICs (one per GPU, rails 0
// and 1); each SU has one leaf per rail; two spines connect all four leaves.
//   host h, GPU g: node ids recorded below.
struct Fixture {
  Topology t;
  std::vector<int> leaves;  // [su*2 + rail]
  std::vector<int> spines;
};

Fixture build() {
  Fixture f;
  Topology& t = f.t;
  t.kind = "test";
  t.hosts = 4;
  t.gpus_per_host = 2;
  const Bandwidth nvl = Bandwidth::gigabytes_per_second(300);
  const Bandwidth pcie = Bandwidth::gigabytes_per_second(24);
  const Bandwidth net = Bandwidth::gigabits_per_second(200);
  const SimTime lat = SimTime::microseconds(1);
  for (int su = 0; su < 2; ++su) {
    for (int rail = 0; rail < 2; ++rail) {
      f.leaves.push_back(t.add_node({NodeKind::kSwitch, -1, su * 2 + rail, 1, 0, "leaf"}));
    }
  }
  for (int s = 0; s < 2; ++s)
    f.spines.push_back(t.add_node({NodeKind::kSwitch, -1, s, 2, 0, "spine"}));
  for (int leaf : f.leaves) {
    for (int spine : f.spines) t.add_link(leaf, spine, net, lat, LinkTier::kLeafSpine);
  }
  for (int h = 0; h < 4; ++h) {
    const int nvs = t.add_node({NodeKind::kNvSwitch, h, 0, 0, 0, "nvs"});
    for (int g = 0; g < 2; ++g) {
      const int gpu = t.add_node({NodeKind::kGpu, h, g, 0, 0, "gpu"});
      t.gpus.push_back(gpu);
      t.add_link(gpu, nvs, nvl, lat, LinkTier::kScaleUp);
      const int nic = t.add_node({NodeKind::kNic, h, g, 0, 0, "nic"});
      t.add_link(gpu, nic, pcie, lat, LinkTier::kHostNic);
      t.add_link(nic, f.leaves[(h / 2) * 2 + g], net, lat, LinkTier::kNicLeaf);
      t.nic_of_gpu.push_back({nic});
    }
  }
  t.finalize();
  EXPECT_TRUE(t.validate().ok()) << t.validate().message();
  return f;
}

// Node ids along a path of directed channels, starting at `from`.
std::vector<int> nodes_of(const Topology& t, int from, const std::vector<int>& path) {
  std::vector<int> out{from};
  for (int c : path) {
    const TopoLink& l = t.links[c / 2];
    out.push_back(c % 2 == 0 ? l.b : l.a);
  }
  return out;
}

TEST(Router, SameHostGoesThroughTheNvSwitch) {
  Fixture f = build();
  Router r(f.t, 1);
  const std::vector<int> p = r.route(0, 1, 7);
  ASSERT_EQ(p.size(), 2u);  // GPU -> NVSwitch -> GPU
  const std::vector<int> n = nodes_of(f.t, f.t.gpus[0], p);
  EXPECT_EQ(f.t.nodes[n[1]].kind, NodeKind::kNvSwitch);
  EXPECT_EQ(n.back(), f.t.gpus[1]);
}

TEST(Router, SameRailInOneSuStaysUnderItsLeaf) {
  // Host 0 GPU 0 -> host 1 GPU 0: GPU, NIC, leaf (rail 0 of SU 0), NIC, GPU: 4 hops.
  Fixture f = build();
  Router r(f.t, 1);
  const std::vector<int> p = r.route(0, 2, 3);
  const std::vector<int> n = nodes_of(f.t, f.t.gpus[0], p);
  ASSERT_EQ(p.size(), 4u);
  EXPECT_EQ(n[2], f.leaves[0]);
  EXPECT_EQ(n.back(), f.t.gpus[2]);
}

TEST(Router, RailAlignmentLandsOnTheDestinationsSameRailNic) {
  // Host 0 GPU 0 (rail 0) -> host 1 GPU 1 (rail 1): NCCL keeps the rail; the data arrives on
  // host 1's rail-0 NIC and crosses the NVSwitch to GPU 1: GPU, NIC, leaf, NIC, GPU, NVS, GPU.
  Fixture f = build();
  Router r(f.t, 1);
  const std::vector<int> p = r.route(0, 3, 3);
  const std::vector<int> n = nodes_of(f.t, f.t.gpus[0], p);
  ASSERT_EQ(p.size(), 6u);
  EXPECT_EQ(f.t.nodes[n[3]].local, 0);  // rail-0 NIC on host 1
  EXPECT_EQ(f.t.nodes[n[5]].kind, NodeKind::kNvSwitch);
  EXPECT_EQ(n.back(), f.t.gpus[3]);
}

TEST(Router, PxnRelaysThroughTheGpuThatOwnsTheChosenNic) {
  // GPU 0 sends through host 0's rail-1 NIC (owned by GPU 1): GPU0, NVS, GPU1, NIC1, ...
  Fixture f = build();
  Router r(f.t, 1);
  const int rail1_nic = f.t.nic_of_gpu[1][0];
  const std::vector<int> p = r.route(0, 3, 3, rail1_nic);
  const std::vector<int> n = nodes_of(f.t, f.t.gpus[0], p);
  ASSERT_GE(n.size(), 5u);
  EXPECT_EQ(f.t.nodes[n[1]].kind, NodeKind::kNvSwitch);
  EXPECT_EQ(n[2], f.t.gpus[1]);
  EXPECT_EQ(n[3], rail1_nic);
  EXPECT_EQ(n.back(), f.t.gpus[3]);
}

TEST(Router, EcmpSpreadsAcrossSpinesAndIsDeterministic) {
  // Across SUs on rail 0: GPU, NIC, leaf, spine (either), leaf, NIC, GPU = 6 hops. Different
  // flow keys use both spines; the same key always takes the same path.
  Fixture f = build();
  Router r(f.t, 42);
  std::set<int> spines_used;
  for (uint64_t key = 0; key < 64; ++key) {
    const std::vector<int> p = r.route(0, 4, key);
    ASSERT_EQ(p.size(), 6u);
    spines_used.insert(nodes_of(f.t, f.t.gpus[0], p)[3]);
    EXPECT_EQ(r.route(0, 4, key), p);
  }
  EXPECT_EQ(spines_used.size(), 2u);
}

TEST(Router, DifferentSeedsPickDifferentPaths) {
  Fixture f = build();
  Router a(f.t, 1), b(f.t, 2);
  int differ = 0;
  for (uint64_t key = 0; key < 64; ++key) differ += a.route(0, 4, key) != b.route(0, 4, key);
  EXPECT_GT(differ, 0);
}

TEST(Router, RouteSetsSpreadTheSpineHopsOverEveryEqualCostChannel) {
  // Across SUs on rail 0: GPU>NIC, NIC>leaf and the leaf's two uplinks (one to each spine),
  // then both spines' links down to the far leaf, leaf>NIC, NIC>GPU. Every ECMP path takes one
  // channel of each hop.
  Fixture f = build();
  Router r(f.t, 42);
  const std::vector<std::vector<int>> sets = r.route_sets(0, 4, 5);
  ASSERT_EQ(sets.size(), 6u);
  const std::vector<size_t> widths = {1, 1, 2, 2, 1, 1};
  for (size_t i = 0; i < sets.size(); ++i) {
    EXPECT_EQ(sets[i].size(), widths[i]) << "hop " << i;
    EXPECT_TRUE(std::is_sorted(sets[i].begin(), sets[i].end()));
  }
  for (uint64_t key = 0; key < 16; ++key) {
    const std::vector<int> p = r.route(0, 4, key);
    ASSERT_EQ(p.size(), sets.size());
    for (size_t i = 0; i < p.size(); ++i) {
      EXPECT_TRUE(std::binary_search(sets[i].begin(), sets[i].end(), p[i])) << "hop " << i;
    }
  }
  // The uplinks lead to the two spines; the downlinks come from them into the far leaf.
  std::set<int> spines;
  for (int c : sets[2]) spines.insert(nodes_of(f.t, f.leaves[0], {c})[1]);
  EXPECT_EQ(spines, std::set<int>(f.spines.begin(), f.spines.end()));
  for (int c : sets[3]) {
    const TopoLink& l = f.t.links[c / 2];
    EXPECT_EQ(c % 2 == 0 ? l.b : l.a, f.leaves[2]);
  }
}

TEST(Router, RouteSetsUnderOneLeafAndInsideAHostAreSingleChannels) {
  Fixture f = build();
  Router r(f.t, 1);
  std::vector<std::vector<int>> expected;
  for (int c : r.route(0, 2, 3)) expected.push_back({c});
  EXPECT_EQ(r.route_sets(0, 2, 3), expected);  // one leaf: no choice anywhere
  expected.clear();
  for (int c : r.route(0, 1, 3)) expected.push_back({c});
  EXPECT_EQ(r.route_sets(0, 1, 3), expected);  // NVSwitch
  EXPECT_TRUE(r.route_sets(5, 5, 0).empty());
}

TEST(Router, SelfRouteIsEmpty) {
  Fixture f = build();
  Router r(f.t, 1);
  EXPECT_TRUE(r.route(5, 5, 0).empty());
}

}  // namespace
}  // namespace preflight
