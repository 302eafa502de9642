#include "exec/transport.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "collective/collective_model.h"
#include "collective/decomposition.h"
#include "config/loader.h"
#include "engine/simulator.h"
#include "network/backends.h"
#include "parallel/rank_layout.h"

namespace preflight {
namespace {

Scenario load(const std::vector<std::string>& overrides) {
  std::vector<std::string> all = {"model.preset=gpt3-13b", "cluster.preset=dgx-h100",
                                  "training.global_batch=16", "parallelism.dp=1"};
  all.insert(all.end(), overrides.begin(), overrides.end());
  StatusOr<Scenario> s = load_scenario_text("", "", all);
  EXPECT_TRUE(s.ok()) << s.status().message();
  return s.ok() ? *s : Scenario{};
}

// A flow transport for `s` on `sim`.
std::unique_ptr<Transport> transport_for(const Scenario& s, Simulator* sim) {
  StatusOr<std::unique_ptr<NetworkBackend>> backend = make_network_backend("flow", s);
  EXPECT_TRUE(backend.ok()) << backend.status().message();
  TransportFactory factory = make_transport_factory((*backend)->fabric_factory(), s);
  EXPECT_TRUE(static_cast<bool>(factory));
  return factory(sim);
}

// Runs one collective of every `group` of stage 0 alone; returns its finish and the stats.
struct Outcome {
  SimTime finish;
  NetworkStats stats;
};
Outcome run_collective(const Scenario& s, GroupKind group, CollectiveKind kind, Bytes bytes,
                       const CollectivePlan& plan) {
  Simulator sim;
  std::unique_ptr<Transport> t = transport_for(s, &sim);
  Outcome out;
  int calls = 0;
  t->collective(group, 0, kind, bytes, plan,
                [&](SimTime finish) {
                  out.finish = finish;
                  ++calls;
                },
                {});
  sim.run();
  EXPECT_EQ(calls, 1);
  out.stats = t->stats(out.finish);
  return out;
}

// Bytes that left NICs for the network (NIC -> leaf/ToR channels).
double bytes_into_network(const NetworkStats& stats) {
  double total = 0;
  for (const LinkLoad& l : stats.links) {
    if (l.tier == "nic_leaf" && l.name.rfind("nic", 0) == 0) total += l.bytes;
  }
  return total;
}

std::vector<double> nic_uplink_bytes(const NetworkStats& stats) {
  std::vector<double> out;
  for (const LinkLoad& l : stats.links) {
    if (l.tier == "nic_leaf" && l.name.rfind("nic", 0) == 0) out.push_back(l.bytes);
  }
  return out;
}

TEST(FlowBackend, PlansWithTheAnalyticalFiguresAndProvidesATransport) {
  const Scenario s = load({"cluster.nodes=2", "parallelism.tp=8", "parallelism.pp=2"});
  StatusOr<std::unique_ptr<NetworkBackend>> flow = make_network_backend("flow", s);
  StatusOr<std::unique_ptr<NetworkBackend>> analytical = make_network_backend("analytical", s);
  ASSERT_TRUE(flow.ok() && analytical.ok());
  const GroupPlacement g = place_group(16, 1, 8);
  EXPECT_EQ((*flow)->bus_bandwidth(g).bytes_per_second(),
            (*analytical)->bus_bandwidth(g).bytes_per_second());
  EXPECT_EQ((*flow)->p2p_bandwidth(true).bytes_per_second(),
            (*analytical)->p2p_bandwidth(true).bytes_per_second());
  EXPECT_TRUE(static_cast<bool>((*flow)->fabric_factory()));
  EXPECT_FALSE(static_cast<bool>((*analytical)->fabric_factory()));
  EXPECT_EQ((*flow)->kind(), NetworkKind::kFlow);
  EXPECT_EQ((*analytical)->kind(), NetworkKind::kAnalytical);
  EXPECT_FALSE(static_cast<bool>(make_transport_factory((*analytical)->fabric_factory(), s)));
  StatusOr<std::unique_ptr<NetworkBackend>> ns3 = make_network_backend("ns3", s);
  ASSERT_FALSE(ns3.ok());
  EXPECT_EQ(ns3.status().message(),
            "simulation.network: 'ns3': expected analytical, flow or packet");
  StatusOr<std::unique_ptr<NetworkBackend>> packet = make_network_backend("packet", s);
  ASSERT_TRUE(packet.ok());
  EXPECT_EQ((*packet)->kind(), NetworkKind::kPacket);
  EXPECT_TRUE(static_cast<bool>((*packet)->fabric_factory()));
}

TEST(FlowTransport, ARouteThroughASpinePaysTwoMoreLinkLatencies) {
  // A zero-byte pipeline send between two DGX H100 nodes. On one leaf per rail (one scalable
  // unit) the route is GPU, NIC, leaf, NIC, GPU: the shortest network path, whose hops the
  // given latency already counts. With one node per scalable unit it climbs to a spine and
  // back: two more network links, 2 × 650 ns, exactly.
  auto finish = [](int su_nodes) {
    const Scenario s = load({"cluster.nodes=2", "parallelism.tp=8", "parallelism.pp=2",
                             "cluster.topology.kind=rail_optimized",
                             "cluster.topology.su_nodes=" + std::to_string(su_nodes)});
    Simulator sim;
    std::unique_ptr<Transport> t = transport_for(s, &sim);
    SimTime at;
    t->send(0, 1, Bytes(0), SimTime::microseconds(10), [&](SimTime f) { at = f; }, {});
    sim.run();
    return at;
  };
  const SimTime same_leaf = finish(2);
  const SimTime via_spine = finish(1);
  EXPECT_EQ(same_leaf, SimTime::microseconds(10));
  EXPECT_EQ(via_spine - same_leaf, SimTime::picoseconds(2 * 650'000));
}

TEST(FlowTransport, CarriesExactlyTheDecompositionsInterNodeBytes) {
  // DP 8 with TP 4 on 4 DGX H100 nodes: each DP group has two members per node. The bytes that
  // leave NICs equal the inter-node bytes of the NCCL decomposition of every group.
  const Scenario s = load({"cluster.nodes=4", "parallelism.tp=4", "parallelism.pp=1",
                           "parallelism.dp=8", "training.global_batch=32"});
  const Bytes bytes(10'000'003);  // not a multiple of ranks × channels
  for (Algorithm algo : {Algorithm::kRing, Algorithm::kTree}) {
    CollectivePlan plan;
    plan.algorithm = algo;
    plan.channels = 4;
    plan.latency = SimTime::microseconds(20);
    const Outcome out =
        run_collective(s, GroupKind::kData, CollectiveKind::kAllReduce, bytes, plan);
    int64_t expected = 0;
    for (int t = 0; t < 4; ++t) {
      GroupLayout g;
      for (int d = 0; d < 8; ++d) {
        g.node.push_back((t + 4 * d) / 8);
        g.local.push_back((t + 4 * d) % 8);
      }
      DecompositionRequest r;
      r.algo = algo == Algorithm::kRing ? DecompAlgo::kRing : DecompAlgo::kTree;
      r.bytes = bytes;
      r.channels = 4;
      StatusOr<std::vector<Transfer>> transfers = decompose(g, r);
      ASSERT_TRUE(transfers.ok()) << transfers.status().message();
      for (const Transfer& x : *transfers) {
        if (x.route != Route::kNvlink) expected += x.bytes.count();
      }
    }
    EXPECT_GT(expected, 0);
    EXPECT_NEAR(bytes_into_network(out.stats), static_cast<double>(expected), 1e-6 * expected)
        << to_string(algo);
    // The tier series integrates to the same bytes.
    const auto tier = std::find_if(out.stats.tiers.begin(), out.stats.tiers.end(),
                                   [](const TierSeries& t) { return t.tier == "nic_leaf"; });
    ASSERT_NE(tier, out.stats.tiers.end());
    EXPECT_LE(tier->points.size(), 501u);
    EXPECT_GT(tier->peak, 0);
    double nic_leaf_bytes = 0;
    for (const LinkLoad& l : out.stats.links) {
      if (l.tier == "nic_leaf") nic_leaf_bytes += l.bytes;
    }
    EXPECT_NEAR(tier->mean * tier->capacity * out.finish.to_seconds(), nic_leaf_bytes,
                1e-6 * nic_leaf_bytes);
  }
}

TEST(FlowTransport, TreeAndRingLoadTheNicsDifferently) {
  // DP 4 over 4 nodes, one member per node, 2 channels. Ring all-reduce: every member sends
  // 2(n−1)/n·S = 1.5 S to its successor. Double binary tree (§8): each tree carries S/2 up
  // and down its edges; nodes 1 and 2 are inner nodes of one tree each (3 edges) and send 2 S,
  // nodes 0 and 3 send S. Same total, different links loaded.
  const Scenario s = load({"cluster.nodes=4", "parallelism.tp=8", "parallelism.pp=1",
                           "parallelism.dp=4", "training.global_batch=32"});
  const Bytes bytes(8'000'000);
  CollectivePlan plan;
  plan.channels = 2;
  plan.algorithm = Algorithm::kRing;
  const Outcome ring = run_collective(s, GroupKind::kData, CollectiveKind::kAllReduce, bytes, plan);
  plan.algorithm = Algorithm::kTree;
  const Outcome tree = run_collective(s, GroupKind::kData, CollectiveKind::kAllReduce, bytes, plan);
  const std::vector<double> r = nic_uplink_bytes(ring.stats);
  const std::vector<double> t = nic_uplink_bytes(tree.stats);
  ASSERT_EQ(r.size(), 32u);  // 8 DP groups (one per TP rank) × 4 nodes
  ASSERT_EQ(t.size(), 32u);
  EXPECT_NEAR(*std::min_element(r.begin(), r.end()), 12e6, 1);
  EXPECT_NEAR(*std::max_element(r.begin(), r.end()), 12e6, 1);
  EXPECT_NEAR(*std::min_element(t.begin(), t.end()), 8e6, 1);
  EXPECT_NEAR(*std::max_element(t.begin(), t.end()), 16e6, 1);
  EXPECT_NEAR(bytes_into_network(ring.stats), bytes_into_network(tree.stats), 32);
  // The busiest tree NIC moves 2 S where every ring NIC moves 1.5 S.
  EXPECT_GT(tree.finish, ring.finish);
}

TEST(FlowTransport, AllToAllAcrossTwoNodesTakesTheAnalyticalTime) {
  // EP 16 over two DGX H100 nodes. Each GPU sends S/16 to each of the 8 GPUs of the other node,
  // PXN-style: through the GPU of its node on the destination's rail and that GPU's NIC. NIC j
  // then carries 8 × S/16 = (n−k)/n·S, at the analytical model's per-GPU share of the node's
  // NICs; nothing else shares it. The relayed flows start two NVLink hops (50 ns) after GPU j's
  // own, which uses the NIC alone meanwhile, so the NIC stays busy and finishes on time.
  Scenario s = load({"cluster.nodes=2", "parallelism.tp=1", "parallelism.pp=1", "parallelism.dp=16",
                     "parallelism.sequence_parallel=false"});
  s.parallelism.ep = 16;
  StatusOr<std::unique_ptr<NetworkBackend>> net = make_network_backend("analytical", s);
  ASSERT_TRUE(net.ok());
  const CollectiveModel model(s.cluster, **net);
  const GroupPlacement g = place_group(16, 1, 8);
  const Bytes bytes(64 << 20);
  const CollectivePlan plan = model.plan(CollectiveKind::kAllToAll, g, bytes);
  ASSERT_GT(plan.latency, SimTime());
  const Outcome out = run_collective(s, GroupKind::kExpert, CollectiveKind::kAllToAll, bytes, plan);
  EXPECT_LE(std::abs((out.finish - plan.time).ps()), 8) << out.finish.to_seconds();
  // Only the rail-matched NICs carry it: each node's 8 NICs, S/2 each.
  const std::vector<double> up = nic_uplink_bytes(out.stats);
  ASSERT_EQ(up.size(), 16u);
  for (double b : up) EXPECT_NEAR(b, bytes.count() / 2.0, 16);
}

TEST(FlowTransport, SendRecvRingStepTakesThePointToPointTime) {
  // CP 2 with TP 8 on two nodes: each CP pair is a GPU and its rail peer on the other node;
  // one ring step sends S each way on idle rails, the analytical point-to-point time.
  Scenario s =
      load({"cluster.nodes=2", "parallelism.tp=8", "parallelism.pp=1", "parallelism.dp=2"});
  s.parallelism.cp = 2;
  s.parallelism.dp = 1;
  StatusOr<std::unique_ptr<NetworkBackend>> net = make_network_backend("analytical", s);
  ASSERT_TRUE(net.ok());
  const CollectiveModel model(s.cluster, **net);
  const Bytes bytes(32 << 20);
  const CollectivePlan plan = model.plan(CollectiveKind::kSendRecv, place_group(2, 8, 8), bytes);
  const Outcome out =
      run_collective(s, GroupKind::kContext, CollectiveKind::kSendRecv, bytes, plan);
  EXPECT_LE(std::abs((out.finish - plan.time).ps()), 2) << out.finish.to_seconds();
  EXPECT_NEAR(bytes_into_network(out.stats), 16.0 * bytes.count(), 16);
}

}  // namespace
}  // namespace preflight
