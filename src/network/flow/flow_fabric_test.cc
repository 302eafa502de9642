#include "network/flow/flow_fabric.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "config/loader.h"
#include "engine/simulator.h"
#include "network/backends.h"

namespace preflight {
namespace {

Scenario load(const std::vector<std::string>& overrides) {
  std::vector<std::string> all = {"model.preset=gpt3-13b",    "cluster.preset=dgx-h100",
                                  "training.global_batch=64", "parallelism.tp=8",
                                  "parallelism.pp=1",         "parallelism.dp=auto",
                                  "simulation.network=flow"};
  all.insert(all.end(), overrides.begin(), overrides.end());
  StatusOr<Scenario> s = load_scenario_text("", "", all);
  EXPECT_TRUE(s.ok()) << s.status().message();
  return s.ok() ? *s : Scenario{};
}

struct Carried {
  SimTime finish;
  NetworkStats stats;
};

// Starts `flows` together on the scenario's flow fabric and runs them to the last finish.
Carried carry(const Scenario& s, const std::vector<GpuFlow>& flows) {
  StatusOr<std::unique_ptr<NetworkBackend>> backend = make_network_backend("flow", s);
  EXPECT_TRUE(backend.ok()) << backend.status().message();
  Simulator sim;
  std::unique_ptr<Fabric> fabric = (*backend)->fabric_factory()(&sim);
  Carried run;
  fabric->transfer(flows, SimTime(), [&run](SimTime at) { run.finish = at; });
  sim.run();
  run.stats = fabric->stats(run.finish);
  return run;
}

// Four DGX H100 nodes on a non-blocking spine-leaf fabric of 32-port leaves: nodes 0-1 under
// leaf 0, nodes 2-3 under leaf 1, 16 uplinks per leaf. GPU i of nodes 0-1 sends 1 GB to GPU
// i + 16, each through its own NIC: 16 flows cross the spines at once.
std::vector<std::string> two_leaves(const std::string& routing) {
  return {"cluster.nodes=4", "cluster.topology.kind=spine_leaf", "cluster.topology.leaf_radix=32",
          "simulation.flow.routing=" + routing};
}

std::vector<GpuFlow> across_the_spines(int count) {
  std::vector<GpuFlow> flows;
  for (int i = 0; i < count; ++i) flows.push_back(GpuFlow{i, i + 16, -1, 1'000'000'000});
  return flows;
}

TEST(FlowFabric, AdaptiveRoutingCarriesAPermutationAcrossTheSpinesAtLineRate) {
  // Spread over all 16 uplinks, the 16 flows need exactly the leaf's uplink capacity, so each
  // runs at its NIC's rate and all finish exactly when one flow alone does. Each uplink carries
  // a sixteenth of the bytes.
  const Scenario s = load(two_leaves("adaptive"));
  const Carried alone = carry(s, across_the_spines(1));
  const Carried all = carry(s, across_the_spines(16));
  EXPECT_EQ(all.finish, alone.finish);
  EXPECT_EQ(all.stats.spread_conflicts, 0);
  int uplinks = 0;
  for (const LinkLoad& l : all.stats.links) {
    if (l.tier != "leaf_spine" || l.name.rfind("leaf0>", 0) != 0) continue;
    ++uplinks;
    EXPECT_NEAR(l.bytes, 16e9 / 16, 1e-3) << l.name;
  }
  EXPECT_EQ(uplinks, 16);
}

TEST(FlowFabric, AnOversubscribedLeafHoldsTheSpreadPermutationToItsUplinks) {
  // 2:1 leaves of 24 ports: 16 NICs down, 8 uplinks. The spread hop (and the spines' 8 links
  // down to leaf 1) has half of what the 16 flows would send, so they take twice as long as one
  // flow alone: the hop is in the solve, not a tally, though each side of it is fed by the
  // other (each bounded by the other, both would pass for never binding).
  std::vector<std::string> o = {
      "cluster.nodes=4", "cluster.topology.kind=spine_leaf", "cluster.topology.leaf_radix=24",
      "cluster.topology.oversubscription=2:1", "simulation.flow.routing=adaptive"};
  const Scenario s = load(o);
  const Carried alone = carry(s, across_the_spines(1));
  const Carried all = carry(s, across_the_spines(16));
  EXPECT_NEAR(all.finish.to_seconds() / alone.finish.to_seconds(), 2.0, 0.01);
}

TEST(FlowFabric, EcmpHashCollisionsSlowTheSamePermutation) {
  // One path per flow by hash: with 16 flows on 16 uplinks some share one (all distinct has
  // probability 16!/16^16 ≈ 1e-6 for any seed), and the last finishes at half rate or less.
  const Scenario s = load(two_leaves("ecmp"));
  const Carried alone = carry(s, across_the_spines(1));
  const Carried all = carry(s, across_the_spines(16));
  EXPECT_GE(all.finish.to_seconds(), 1.9 * alone.finish.to_seconds());
}

TEST(FlowFabric, InfinibandFabricsRouteAdaptivelyByDefaultRoceByHash) {
  const Scenario ib = load(
      {"cluster.nodes=4", "cluster.topology.kind=spine_leaf", "cluster.topology.leaf_radix=32"});
  EXPECT_EQ(ib.simulation.flow_routing, FlowRouting::kAdaptive);
  EXPECT_EQ(carry(ib, across_the_spines(16)).finish, carry(ib, across_the_spines(1)).finish);
  const Scenario roce = load({"cluster.nodes=4", "cluster.topology.kind=spine_leaf",
                              "cluster.topology.leaf_radix=32", "cluster.fabric=roce"});
  EXPECT_EQ(roce.simulation.flow_routing, FlowRouting::kEcmp);
}

TEST(FlowFabric, RoutingKeysAreCheckedWhereTheyAreRead) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> bad = {
      {{"simulation.network=flow", "simulation.flow.routing=valiant"},
       "simulation.flow.routing: 'valiant'"},
      {{"simulation.network=analytical", "simulation.flow.routing=ecmp"},
       "simulation.flow: expected simulation.network: flow"},
      {{"simulation.network=flow", "simulation.flow.spray=true"}, "simulation.flow.spray"},
  };
  for (const auto& [overrides, error] : bad) {
    std::vector<std::string> all = {"model.preset=gpt3-13b", "cluster.preset=dgx-h100"};
    all.insert(all.end(), overrides.begin(), overrides.end());
    StatusOr<Scenario> r = load_scenario_text("", "test.yaml", all);
    ASSERT_FALSE(r.ok()) << error;
    EXPECT_NE(r.status().message().find(error), std::string::npos) << r.status().message();
  }
}

TEST(FlowFabric, DegradedUplinksLowerTheirSpreadHopsCapacity) {
  // Leaf 0's 16 uplinks (all to the one spine) at half their rate: the spread hop keeps half
  // its capacity, which the 16 flows need whole, so they take twice as long as one flow alone.
  std::vector<std::string> o = two_leaves("adaptive");
  o.push_back("simulation.degraded_links=[{link: leaf0-spine0, capacity: 0.5}]");
  const Carried alone = carry(load(two_leaves("adaptive")), across_the_spines(1));
  const Carried all = carry(load(o), across_the_spines(16));
  EXPECT_NEAR(all.finish.to_seconds() / alone.finish.to_seconds(), 2.0, 0.01);
}

TEST(FlowFabric, EveryBuiltFabricSpreadsWithoutOverlappingHops) {
  // Adaptive routing's hops are resources of disjoint channel sets on every fabric Preflight
  // builds: an all-pairs exchange between the first GPU of every node finds no overlap.
  const std::vector<std::vector<std::string>> fabrics = {
      {"cluster.nodes=8", "cluster.topology.kind=spine_leaf", "cluster.topology.leaf_radix=16"},
      {"cluster.nodes=8", "cluster.topology.kind=spine_leaf", "cluster.topology.leaf_radix=16",
       "cluster.topology.oversubscription=3:1"},
      {"cluster.nodes=8", "cluster.topology.kind=rail_optimized", "cluster.topology.su_nodes=2"},
      {"cluster.nodes=8", "cluster.topology.kind=fat_tree"},
      {"cluster.nodes=8", "cluster.topology.kind=hpn", "cluster.topology.su_nodes=2"},
      {"cluster.nodes=16", "cluster.topology.kind=spine_leaf", "cluster.topology.leaf_radix=16",
       "cluster.topology.tiers=3", "cluster.topology.spine_radix=16"},
  };
  for (const std::vector<std::string>& f : fabrics) {
    std::vector<std::string> o = f;
    o.push_back("simulation.flow.routing=adaptive");
    const Scenario s = load(o);
    const int nodes = s.cluster.nodes, gpn = s.cluster.gpus_per_node;
    std::vector<GpuFlow> flows;
    for (int a = 0; a < nodes; ++a) {
      for (int b = 0; b < nodes; ++b) {
        for (int g = 0; g < gpn; g += 3) {
          if (a != b) flows.push_back(GpuFlow{a * gpn + g, b * gpn + (g + a) % gpn, -1, 1'000'000});
        }
      }
    }
    const Carried run = carry(s, flows);
    EXPECT_EQ(run.stats.spread_conflicts, 0) << f[1];
    EXPECT_GT(run.finish, SimTime()) << f[1];
  }
}

}  // namespace
}  // namespace preflight
