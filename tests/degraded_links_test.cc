// simulation.degraded_links: naming links (find_channels), the flow fabric's capacity windows,
// the packet network's, the loader's checks, and a whole iteration on a fabric with a slow link.

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "config/loader.h"
#include "engine/simulator.h"
#include "network/backends.h"
#include "network/topology.h"
#include "network/topology_builders.h"
#include "simulate/simulate.h"

namespace preflight {
namespace {

// Two DGX H100 nodes on a rail-optimized fabric (400 Gb/s per NIC).
Scenario load(const std::vector<std::string>& overrides) {
  std::vector<std::string> all = {"model.preset=gpt3-13b",    "cluster.preset=dgx-h100",
                                  "cluster.nodes=2",          "parallelism.tp=8",
                                  "parallelism.pp=1",         "parallelism.dp=auto",
                                  "training.global_batch=64", "simulation.network=flow"};
  all.insert(all.end(), overrides.begin(), overrides.end());
  StatusOr<Scenario> s = load_scenario_text("", "", all);
  EXPECT_TRUE(s.ok()) << s.status().message();
  return s.ok() ? *s : Scenario{};
}

Status load_error(const std::string& degraded) {
  StatusOr<Scenario> s = load_scenario_text(
      "", "",
      {"model.preset=gpt3-13b", "cluster.preset=dgx-h100", "cluster.nodes=2", "parallelism.tp=8",
       "parallelism.pp=1", "parallelism.dp=auto", "training.global_batch=64",
       "simulation.network=flow", "simulation.degraded_links=" + degraded});
  return s.status();
}

int node_named(const Topology& t, const std::string& name) {
  for (size_t v = 0; v < t.nodes.size(); ++v) {
    if (t.nodes[v].name == name) return static_cast<int>(v);
  }
  ADD_FAILURE() << "no node " << name;
  return 0;
}

TEST(FindChannels, NodesLinksAndDirections) {
  StatusOr<Topology> t = build_topology(load({}).cluster);
  ASSERT_TRUE(t.ok()) << t.status().message();
  const int nic = node_named(*t, "nic1.3");
  // A node: both directions of each of its links.
  StatusOr<std::vector<int>> all = find_channels(*t, "nic1.3");
  ASSERT_TRUE(all.ok()) << all.status().message();
  EXPECT_EQ(all->size(), 2 * t->adjacency[nic].size());
  // The link to its leaf: both directions, then one.
  std::string leaf;
  int link = -1;
  for (const auto& [w, l] : t->adjacency[nic]) {
    if (t->nodes[w].kind == NodeKind::kSwitch) leaf = t->nodes[w].name, link = l;
  }
  ASSERT_FALSE(leaf.empty());
  StatusOr<std::vector<int>> both = find_channels(*t, "nic1.3-" + leaf);
  ASSERT_TRUE(both.ok()) << both.status().message();
  EXPECT_EQ(*both, (std::vector<int>{2 * link, 2 * link + 1}));
  const int up = t->links[link].a == nic ? 2 * link : 2 * link + 1;  // the NIC -> leaf channel
  StatusOr<std::vector<int>> out = find_channels(*t, "nic1.3>" + leaf);
  StatusOr<std::vector<int>> in = find_channels(*t, leaf + ">nic1.3");
  ASSERT_TRUE(out.ok()) << out.status().message();
  ASSERT_TRUE(in.ok()) << in.status().message();
  EXPECT_EQ(*out, std::vector<int>{up});
  EXPECT_EQ(*in, std::vector<int>{up ^ 1});

  const Status unknown = find_channels(*t, "nic9.0").status();
  EXPECT_NE(unknown.message().find("'nic9.0': no such node"), std::string::npos)
      << unknown.message();
  const Status apart = find_channels(*t, "nic1.3-nic0.3").status();
  EXPECT_NE(apart.message().find("no link between nic1.3 and nic0.3; nic1.3 links to gpu1.3"),
            std::string::npos)
      << apart.message();
  EXPECT_FALSE(find_channels(*t, "").ok());
  EXPECT_FALSE(find_channels(*t, "nic1.3>").ok());
}

// One transfer of `bytes` (1 GB) from GPU 0 (node 0) to GPU 8 (node 1, same rail) on a fabric
// (`network`: flow or packet) whose links `degraded` names; returns when it lands.
SimTime transfer_time(const std::string& degraded, const std::string& network = "flow",
                      int64_t bytes = 1'000'000'000) {
  const Scenario s =
      load(degraded.empty() ? std::vector<std::string>{}
                            : std::vector<std::string>{"simulation.degraded_links=" + degraded});
  StatusOr<std::unique_ptr<NetworkBackend>> backend = make_network_backend(network, s);
  EXPECT_TRUE(backend.ok()) << backend.status().message();
  if (!backend.ok()) return SimTime();
  Simulator sim;
  std::unique_ptr<Fabric> fabric = (*backend)->fabric_factory()(&sim);
  SimTime finish;
  int calls = 0;
  fabric->transfer({GpuFlow{0, 8, -1, bytes}}, SimTime(), [&](SimTime f) {
    finish = f;
    ++calls;
  });
  sim.run();
  EXPECT_EQ(calls, 1);
  return finish;
}

// "[{link: L, capacity: C, from: Fps, until: Ups}]", without `until` for SimTime::max().
std::string window(const char* link, double capacity, SimTime from, SimTime until) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "[{link: %s, capacity: %g, from: %lldps", link, capacity,
                static_cast<long long>(from.ps()));
  std::string w = buf;
  if (until != SimTime::max()) w += ", until: " + std::to_string(until.ps()) + "ps";
  return w + "}]";
}

TEST(DegradedLinks, CapacityWindowsStretchATransfer) {
  const SimTime base = transfer_time("");
  ASSERT_GT(base, SimTime::microseconds(10'000));  // 1 GB at ~48 GB/s: ~21 ms
  const double t0 = base.to_seconds();
  auto ratio = [&](const std::string& degraded) {
    return transfer_time(degraded).to_seconds() / t0;
  };
  // Half the NIC's rate all along: twice the time (the hop latencies are microseconds).
  EXPECT_NEAR(ratio("[{link: nic0.0, capacity: 0.5}]"), 2.0, 0.002);
  // Two windows on one link multiply.
  EXPECT_NEAR(ratio("[{link: nic0.0, capacity: 0.5}, {link: nic0.0, capacity: 0.5}]"), 4.0, 0.004);
  // Half rate from mid-transfer on: the second half of the bytes takes twice as long.
  EXPECT_NEAR(ratio(window("nic0.0", 0.5, SimTime::picoseconds(base.ps() / 2), SimTime::max())),
              1.5, 0.002);
  // Half rate over the second quarter only: an eighth of the bytes late by as long again.
  EXPECT_NEAR(ratio(window("nic0.0", 0.5, SimTime::picoseconds(base.ps() / 4),
                           SimTime::picoseconds(base.ps() / 2))),
              1.125, 0.002);
  // The receiving NIC's leaf link in the direction of the flow counts; the other does not.
  const SimTime slow_rx = transfer_time("[{link: nic1.0, capacity: 0.25}]");
  EXPECT_NEAR(slow_rx.to_seconds() / t0, 4.0, 0.004);
  // Links the flow does not cross, and a window after it lands, change nothing at all.
  EXPECT_EQ(transfer_time("[{link: nic0.1, capacity: 0.1}]"), base);
  EXPECT_EQ(transfer_time(window("nic0.0", 0.1, base * 2, base * 3)), base);
}

// The packet network under the same windows: the degraded port serializes at its new rate from
// its next packet on, and the NIC paces at that fraction of its pacing; 256 MB (61,036 packets).
TEST(DegradedLinks, PacketNetworkStretchesATransferAlike) {
  const int64_t bytes = 256'000'000;
  const SimTime base = transfer_time("", "packet", bytes);
  ASSERT_GT(base, SimTime::microseconds(4000));
  const double t0 = base.to_seconds();
  auto ratio = [&](const std::string& degraded) {
    return transfer_time(degraded, "packet", bytes).to_seconds() / t0;
  };
  EXPECT_NEAR(ratio("[{link: nic0.0, capacity: 0.5}]"), 2.0, 0.01);
  EXPECT_NEAR(ratio(window("nic0.0", 0.5, SimTime::picoseconds(base.ps() / 2), SimTime::max())),
              1.5, 0.01);
  EXPECT_NEAR(ratio(window("nic0.0", 0.5, SimTime::picoseconds(base.ps() / 4),
                           SimTime::picoseconds(base.ps() / 2))),
              1.125, 0.01);
  // The receiving NIC's leaf port at a quarter of its line rate: the sender, paced at
  // nic_efficiency (0.96) of its own, meets a port slower than its pace. At the port's rate the
  // transfer would take 0.96 / 0.245 = 3.92 x as long; DCQCN's cuts and slow recovery leave the
  // port short of packets at times (4.11 x).
  const double quarter = ratio("[{link: nic1.0, capacity: 0.25}]");
  EXPECT_GT(quarter, 3.9);
  EXPECT_LT(quarter, 4.4);
  EXPECT_EQ(transfer_time("[{link: nic0.1, capacity: 0.1}]", "packet", bytes), base);
  EXPECT_EQ(transfer_time(window("nic0.0", 0.1, base * 2, base * 3), "packet", bytes), base);
}

TEST(DegradedLinks, LoaderReadsAndChecks) {
  const Scenario s =
      load({"simulation.degraded_links=[{link: nic0.0-leaf0.0, capacity: 0.25, from: 1ms, until: "
            "2ms}, {link: nic1.1, capacity: 1}]"});
  ASSERT_EQ(s.simulation.degraded_links.size(), 2u);
  EXPECT_EQ(s.simulation.degraded_links[0].link, "nic0.0-leaf0.0");
  EXPECT_DOUBLE_EQ(s.simulation.degraded_links[0].capacity, 0.25);
  EXPECT_EQ(s.simulation.degraded_links[0].from, SimTime::microseconds(1000));
  EXPECT_EQ(s.simulation.degraded_links[0].until, SimTime::microseconds(2000));
  EXPECT_EQ(s.simulation.degraded_links[1].from, SimTime());
  EXPECT_EQ(s.simulation.degraded_links[1].until, SimTime::max());

  struct Case {
    const char* value;
    const char* error;
  };
  const Case cases[] = {
      {"[{capacity: 0.5}]", "simulation.degraded_links[0].link: missing key"},
      {"[{link: nic0.0}]", "simulation.degraded_links[0].capacity: missing key"},
      {"[{link: nic0.0, capacity: 0}]", "simulation.degraded_links[0].capacity"},
      {"[{link: nic0.0, capacity: 1.5}]", "simulation.degraded_links[0].capacity"},
      {"[{link: nic0.0, capacity: 0.5, from: 2ms, until: 1ms}]",
       "simulation.degraded_links[0].until: expected a time after `from`"},
      {"[{link: nic0.0, capacity: 0.5, speed: 3}]", "simulation.degraded_links[0].speed"},
      {"nic0.0", "simulation.degraded_links: expected a list"},
      {"[nic0.0]", "simulation.degraded_links[0]: expected a map {link, capacity, from, until}"},
  };
  for (const Case& c : cases) {
    const Status st = load_error(c.value);
    EXPECT_FALSE(st.ok()) << c.value;
    EXPECT_NE(st.message().find(c.error), std::string::npos) << c.value << ": " << st.message();
  }
  // The link's name is checked against the fabric, and only the flow network has links.
  Scenario bad = load({"simulation.degraded_links=[{link: nic7.0, capacity: 0.5}]"});
  const Status unknown = make_network_backend("flow", bad).status();
  EXPECT_NE(unknown.message().find("simulation.degraded_links[0].link: 'nic7.0': no such node"),
            std::string::npos)
      << unknown.message();
  bad.simulation.degraded_links[0].link = "nic1.0";
  const Status analytical = make_network_backend("analytical", bad).status();
  EXPECT_NE(analytical.message().find("expected simulation.network: flow or packet"),
            std::string::npos)
      << analytical.message();
  EXPECT_TRUE(make_network_backend("packet", bad).ok());
}

TEST(DegradedLinks, SlowNicSlowsTheIteration) {
  // GPT-3 13B on 16 H100s, TP 8 inside each node, DP 2 across the two: the DP reduce-scatter
  // and parameter all-gather cross the NICs.
  const std::vector<std::string> job = {"parallelism.overlap_grad_reduce=false"};
  auto run = [&](const std::string& degraded) {
    std::vector<std::string> o = job;
    if (!degraded.empty()) o.push_back("simulation.degraded_links=" + degraded);
    StatusOr<SimulationReport> r = simulate(load(o));
    EXPECT_TRUE(r.ok()) << r.status().message();
    return r.ok() ? r->execution.iteration_time : SimTime();
  };
  const SimTime base = run("");
  const SimTime slow = run("[{link: nic0.0, capacity: 0.05}]");
  EXPECT_GT(slow, base);
  // After the iteration: identical to the picosecond.
  EXPECT_EQ(run("[{link: nic0.0, capacity: 0.05, from: 900s}]"), base);
}

}  // namespace
}  // namespace preflight
