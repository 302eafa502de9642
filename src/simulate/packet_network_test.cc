// simulation.network: packet end to end: the scenario keys, and the packet rung against the
// flow rung on jobs whose network links are not shared.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "config/loader.h"
#include "simulate/simulate.h"

namespace preflight {
namespace {

// GPT-3 13B on 4 DGX A100 nodes: TP 4 inside the node, PP 4 over the nodes, DP 2: every
// inter-node transfer is a pipeline send on its own rail, or a DP collective of one rail. The
// fabric is RoCEv2 (PFC, ECN, DCQCN by default); the preset's InfiniBand is tested apart.
const char* kGpt13b = R"(
model: {preset: gpt3-13b}
cluster: {preset: dgx-a100, nodes: 4, fabric: roce}
training: {seq_len: 2048, global_batch: 32, micro_batch: 1}
parallelism: {tp: 4, pp: 4, sequence_parallel: true, recompute: selective,
              distributed_optimizer: true, overlap_grad_reduce: true}
)";

SimulationReport run(const std::vector<std::string>& overrides) {
  StatusOr<Scenario> s = load_scenario_text(kGpt13b, "test.yaml", overrides);
  EXPECT_TRUE(s.ok()) << s.status().message();
  StatusOr<SimulationReport> r = simulate(*s);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return *r;
}

TEST(PacketBackend, AgreesWithTheFlowNetworkWhereNoLinkIsShared) {
  const SimulationReport flow = run({"simulation.network=flow"});
  const SimulationReport packet = run({"simulation.network=packet"});
  EXPECT_EQ(packet.network, "packet");
  ASSERT_TRUE(packet.execution.has_network_stats);
  const NetworkStats& n = packet.execution.network;
  EXPECT_TRUE(n.packet_level);
  EXPECT_EQ(n.flows, flow.execution.network.flows);
  EXPECT_GT(n.packet.packets, 0);
  EXPECT_EQ(n.packet.drops, 0);
  // Every flow of bytes completes; with no link shared none waits much beyond its idle path.
  EXPECT_GT(n.packet.completed, 0);
  EXPECT_LE(n.packet.completed, n.flows);
  EXPECT_GE(n.packet.slowdown_p50, 0.999);
  EXPECT_LT(n.packet.slowdown_p50, 1.1);
  EXPECT_LE(n.packet.fct_p50_s, n.packet.fct_p99_s);
  EXPECT_LE(n.packet.fct_p99_s, n.packet.fct_max_s);
  // Within 2 % (issue 16): the NIC paces payload at nic_efficiency of line rate, as the flow
  // network's links carry it.
  EXPECT_NEAR(packet.iteration_time_s, flow.iteration_time_s, 0.02 * flow.iteration_time_s);
  const Breakdown& a = packet.execution.stages[0].breakdown;
  const Breakdown& b = flow.execution.stages[0].breakdown;
  EXPECT_NEAR(a.exposed_comm().to_seconds(), b.exposed_comm().to_seconds(),
              0.02 * flow.iteration_time_s);
}

// Where the spine is the bottleneck the two rungs' adaptive routing meet: TP 16 over two DGX H100
// nodes (LLaMA-2 7B cut to 4 layers, one sequence) on InfiniBand leaves at 2:1 (8 NICs down, 4
// uplinks), so every layer's TP collectives cross the spine. The packet network sends each
// packet to the least-queued uplink; the flow network spreads each flow over all of them at
// once (docs/flow_network.md, "Routing"). Measured: 14.62 ms and 14.87 ms (+1.7 %); with one
// hashed path per flow 24.60 and 23.52 ms, so spreading is worth more than a third here.
TEST(PacketBackend, AdaptiveRoutingMeetsTheFlowNetworksSpreadAcrossAnOversubscribedSpine) {
  auto iteration = [](const std::string& network, const std::string& routing) {
    StatusOr<Scenario> s = load_scenario_text(
        "", "",
        {"model.preset=llama2-7b", "model.layers=4", "cluster.preset=dgx-h100", "cluster.nodes=2",
         "parallelism.tp=16", "parallelism.pp=1", "parallelism.dp=1", "training.global_batch=1",
         "cluster.topology.kind=spine_leaf", "cluster.topology.oversubscription=2:1",
         "cluster.topology.leaf_radix=12", "training.stack.launch_overhead=0us",
         "simulation.network=" + network, "simulation." + network + ".routing=" + routing});
    EXPECT_TRUE(s.ok()) << s.status().message();
    StatusOr<SimulationReport> r = simulate(*s);
    EXPECT_TRUE(r.ok()) << r.status().message();
    return r.ok() ? r->iteration_time_s : 0.0;
  };
  const double flow = iteration("flow", "adaptive");
  const double packet = iteration("packet", "adaptive");
  EXPECT_NEAR(packet, flow, 0.03 * flow);
  EXPECT_GT(iteration("flow", "ecmp"), 1.3 * flow);
  EXPECT_GT(iteration("packet", "ecmp"), 1.3 * packet);
}

// HPCC in place of DCQCN: where no link is shared its one cost is the target utilization η
// (and the telemetry's bytes) on the transfers that fill a link: the iteration is no faster than
// on the flow network and within a few percent of it.
TEST(PacketBackend, HpccRunsAnIterationAtItsTargetUtilization) {
  const SimulationReport flow = run({"simulation.network=flow"});
  const SimulationReport hpcc = run({"simulation.network=packet", "simulation.packet.cc=hpcc"});
  const NetworkStats& n = hpcc.execution.network;
  EXPECT_EQ(n.packet.cnps, 0);
  EXPECT_EQ(n.packet.drops, 0);
  EXPECT_GE(hpcc.iteration_time_s, flow.iteration_time_s * 0.999);
  EXPECT_LT(hpcc.iteration_time_s, flow.iteration_time_s * 1.05);
}

// InfiniBand's credits in place of RoCE's PFC and DCQCN: where no link is shared the iteration
// is the flow network's within 2 %, with no pause, drop or mark, and the summary names it.
TEST(PacketBackend, InfinibandRunsAnIterationWithoutPausesOrDrops) {
  const SimulationReport flow = run({"simulation.network=flow"});
  const SimulationReport ib =
      run({"simulation.network=packet", "simulation.packet.link_layer=infiniband"});
  const PacketCounters& p = ib.execution.network.packet;
  EXPECT_TRUE(p.infiniband);
  EXPECT_EQ(p.pauses, 0);
  EXPECT_EQ(p.drops, 0);
  EXPECT_EQ(p.ecn_marks, 0);
  EXPECT_EQ(p.cnps, 0);
  EXPECT_NEAR(ib.iteration_time_s, flow.iteration_time_s, 0.02 * flow.iteration_time_s);
}

// Per-packet routing on the same job: its transfers have no equal-cost choice to make on a
// rail each, so spraying and adaptive routing change nothing beyond the receiver's bookkeeping.
TEST(PacketBackend, PerPacketRoutingRunsAnIteration) {
  const SimulationReport flow = run({"simulation.network=flow"});
  for (const char* routing : {"spray", "adaptive"}) {
    const SimulationReport r = run({"simulation.network=packet", "simulation.packet.cc=none",
                                    std::string("simulation.packet.routing=") + routing});
    EXPECT_EQ(r.execution.network.packet.drops, 0) << routing;
    EXPECT_NEAR(r.iteration_time_s, flow.iteration_time_s, 0.02 * flow.iteration_time_s) << routing;
  }
  StatusOr<Scenario> s =
      load_scenario_text(kGpt13b, "test.yaml",
                         {"simulation.network=packet", "simulation.packet.link_layer=infiniband",
                          "simulation.packet.routing=adaptive"});
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->simulation.packet.routing, PacketRouting::kAdaptive);
  const std::vector<std::pair<std::vector<std::string>, std::string>> bad = {
      {{"simulation.network=packet", "simulation.packet.routing=valiant"},
       "simulation.packet.routing"},
      {{"simulation.network=packet", "simulation.packet.routing=spray",
        "simulation.packet.cc=hpcc"},
       "expected ecmp with cc: hpcc"},
      {{"simulation.network=packet", "simulation.packet.routing=adaptive",
        "simulation.packet.pfc=false"},
       "expected a lossless fabric"},
  };
  for (const auto& [overrides, error] : bad) {
    StatusOr<Scenario> r = load_scenario_text(kGpt13b, "test.yaml", overrides);
    ASSERT_FALSE(r.ok()) << error;
    EXPECT_NE(r.status().message().find(error), std::string::npos) << r.status().message();
  }
}

// Fast-forward of steady states (issue 16: within 1 % of the exact run on a test set, and the
// speedup): the GPT-3 13B job under DCQCN, without congestion control and on InfiniBand, and an
// MoE job whose all-to-alls cross the nodes (Mixtral 8x7B cut to 4 layers on 2 DGX H100s, TP 2,
// EP 8). Each fast-forwarded run jumps, and takes fewer events than the exact one.
TEST(PacketBackend, FastForwardIsWithinAPercentOfTheExactRun) {
  const std::vector<std::vector<std::string>> cases = {
      {"simulation.network=packet"},
      {"simulation.network=packet", "simulation.packet.cc=none"},
      {"simulation.network=packet", "simulation.packet.link_layer=infiniband"},
  };
  for (const std::vector<std::string>& exact_keys : cases) {
    std::vector<std::string> ff_keys = exact_keys;
    ff_keys.push_back("simulation.packet.fast_forward=true");
    const SimulationReport exact = run(exact_keys);
    const SimulationReport ff = run(ff_keys);
    const PacketCounters& e = exact.execution.network.packet;
    const PacketCounters& f = ff.execution.network.packet;
    EXPECT_NEAR(ff.iteration_time_s, exact.iteration_time_s, 0.01 * exact.iteration_time_s)
        << exact_keys.back();
    EXPECT_GT(f.fast_forwards, 0) << exact_keys.back();
    EXPECT_GT(f.skipped_packets, 0) << exact_keys.back();
    EXPECT_LT(f.events, e.events) << exact_keys.back();
    EXPECT_EQ(f.packets, e.packets) << exact_keys.back();
  }
  const char* kMoe = R"(
model: {preset: mixtral-8x7b, layers: 4, moe: {routing: balanced}}
cluster: {preset: dgx-h100, nodes: 2}
training: {seq_len: 4096, global_batch: 16, micro_batch: 1}
parallelism: {tp: 2, pp: 1, ep: 8, dp: 8, sequence_parallel: true}
simulation: {network: packet}
)";
  StatusOr<Scenario> a = load_scenario_text(kMoe, "moe.yaml", {});
  StatusOr<Scenario> b =
      load_scenario_text(kMoe, "moe.yaml", {"simulation.packet.fast_forward=true"});
  ASSERT_TRUE(a.ok() && b.ok());
  StatusOr<SimulationReport> exact = simulate(*a);
  StatusOr<SimulationReport> ff = simulate(*b);
  ASSERT_TRUE(exact.ok() && ff.ok());
  EXPECT_NEAR(ff->iteration_time_s, exact->iteration_time_s, 0.01 * exact->iteration_time_s);
  EXPECT_GT(ff->execution.network.packet.fast_forwards, 0);
  EXPECT_LT(ff->execution.network.packet.events, exact->execution.network.packet.events);
}

TEST(PacketBackend, FastForwardKeys) {
  StatusOr<Scenario> s =
      load_scenario_text(kGpt13b, "test.yaml",
                         {"simulation.network=packet", "simulation.packet.fast_forward=true",
                          "simulation.packet.fast_forward_window=20us",
                          "simulation.packet.fast_forward_tolerance=0.02"});
  ASSERT_TRUE(s.ok()) << s.status().message();
  const PacketNetworkConfig& p = s->simulation.packet;
  EXPECT_TRUE(p.fast_forward);
  EXPECT_EQ(p.fast_forward_window, SimTime::microseconds(20));
  EXPECT_EQ(p.fast_forward_tolerance, 0.02);
  const std::vector<std::pair<std::vector<std::string>, std::string>> bad = {
      {{"simulation.network=packet", "simulation.packet.fast_forward_window=20us"},
       "expected fast_forward: true"},
      {{"simulation.network=packet", "simulation.packet.fast_forward=true",
        "simulation.packet.fast_forward_window=100ns"},
       "expected at least 1us"},
      {{"simulation.network=packet", "simulation.packet.fast_forward=true",
        "simulation.packet.fast_forward_window=1s"},
       "at most 10ms"},
      {{"simulation.network=packet", "simulation.packet.fast_forward=true",
        "simulation.packet.fast_forward_tolerance=0.5"},
       "simulation.packet.fast_forward_tolerance"},
      {{"simulation.network=packet", "simulation.packet.fast_forward=true",
        "simulation.packet.routing=spray"},
       "expected routing: ecmp"},
      {{"simulation.network=packet", "simulation.packet.fast_forward=true",
        "simulation.packet.cc=hpcc"},
       "expected cc: dcqcn or none"},
  };
  for (const auto& [overrides, error] : bad) {
    StatusOr<Scenario> r = load_scenario_text(kGpt13b, "test.yaml", overrides);
    ASSERT_FALSE(r.ok()) << error;
    EXPECT_NE(r.status().message().find(error), std::string::npos) << r.status().message();
  }
}

// The link layer follows the cluster's fabric (cluster.fabric; every DGX preset's is InfiniBand)
// unless simulation.packet.link_layer names another.
TEST(PacketBackend, TheLinkLayerFollowsTheClustersFabric) {
  const char* kPreset = R"(
model: {preset: gpt3-13b}
cluster: {preset: dgx-h100, nodes: 2}
training: {seq_len: 2048, global_batch: 16}
parallelism: {tp: 8}
simulation: {network: packet}
)";
  StatusOr<Scenario> ib = load_scenario_text(kPreset, "test.yaml", {});
  ASSERT_TRUE(ib.ok()) << ib.status().message();
  EXPECT_EQ(ib->cluster.fabric, LinkLayer::kInfiniband);
  EXPECT_EQ(ib->simulation.packet.link_layer, LinkLayer::kInfiniband);
  EXPECT_EQ(ib->simulation.packet.cc, CongestionControl::kNone);
  EXPECT_EQ(ib->simulation.packet.header, PacketNetworkConfig::kIbHeader);
  StatusOr<Scenario> roce = load_scenario_text(kPreset, "test.yaml", {"cluster.fabric=roce"});
  ASSERT_TRUE(roce.ok()) << roce.status().message();
  EXPECT_EQ(roce->simulation.packet.link_layer, LinkLayer::kRoce);
  EXPECT_EQ(roce->simulation.packet.cc, CongestionControl::kDcqcn);
  EXPECT_TRUE(roce->simulation.packet.pfc);
  StatusOr<Scenario> named =
      load_scenario_text(kPreset, "test.yaml", {"simulation.packet.link_layer=roce"});
  ASSERT_TRUE(named.ok()) << named.status().message();
  EXPECT_EQ(named->simulation.packet.link_layer, LinkLayer::kRoce);
  // RoCE's keys on an InfiniBand fabric name the fabric; a fabric that is neither is an error.
  StatusOr<Scenario> pfc =
      load_scenario_text(kPreset, "test.yaml", {"simulation.packet.pfc=false"});
  ASSERT_FALSE(pfc.ok());
  EXPECT_NE(pfc.status().message().find("cluster.fabric is infiniband"), std::string::npos)
      << pfc.status().message();
  StatusOr<Scenario> bad = load_scenario_text(kPreset, "test.yaml", {"cluster.fabric=ethernet"});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("cluster.fabric"), std::string::npos);
  // The collective table's packet network takes the fabric too.
  StatusOr<CollectiveSetup> setup = load_collective_setup("dgx-h100", {});
  ASSERT_TRUE(setup.ok()) << setup.status().message();
  EXPECT_EQ(setup->packet.link_layer, LinkLayer::kInfiniband);
  EXPECT_FALSE(setup->has_packet);
}

TEST(PacketBackend, InfinibandKeysAndTheirDefaults) {
  StatusOr<Scenario> s =
      load_scenario_text(kGpt13b, "test.yaml",
                         {"simulation.network=packet", "simulation.packet.link_layer=infiniband"});
  ASSERT_TRUE(s.ok()) << s.status().message();
  const PacketNetworkConfig& p = s->simulation.packet;
  EXPECT_EQ(p.link_layer, LinkLayer::kInfiniband);
  EXPECT_EQ(p.header, PacketNetworkConfig::kIbHeader);
  EXPECT_EQ(p.cc, CongestionControl::kNone);
  EXPECT_FALSE(p.pfc);
  EXPECT_FALSE(p.ecn);
  EXPECT_EQ(p.credit_buffer, 0);  // auto
  // A congestion control named under InfiniBand brings its marking (FECN) with it.
  StatusOr<Scenario> cc =
      load_scenario_text(kGpt13b, "test.yaml",
                         {"simulation.network=packet", "simulation.packet.link_layer=infiniband",
                          "simulation.packet.cc=dcqcn", "simulation.packet.credit_buffer=128KiB",
                          "simulation.packet.header=66"});
  ASSERT_TRUE(cc.ok()) << cc.status().message();
  EXPECT_EQ(cc->simulation.packet.cc, CongestionControl::kDcqcn);
  EXPECT_TRUE(cc->simulation.packet.ecn);
  EXPECT_EQ(cc->simulation.packet.credit_buffer, int64_t{128} << 10);
  EXPECT_EQ(cc->simulation.packet.header, 66);
  const std::vector<std::pair<std::vector<std::string>, std::string>> bad = {
      {{"simulation.network=packet", "simulation.packet.link_layer=ethernet"},
       "simulation.packet.link_layer"},
      {{"simulation.network=packet", "simulation.packet.link_layer=infiniband",
        "simulation.packet.pfc=true"},
       "expected link_layer: roce"},
      {{"simulation.network=packet", "simulation.packet.link_layer=infiniband",
        "simulation.packet.switch_buffer=16MiB"},
       "expected link_layer: roce"},
      {{"simulation.network=packet", "simulation.packet.credit_buffer=64KiB"},
       "expected link_layer: infiniband"},
      {{"simulation.network=packet", "simulation.packet.link_layer=infiniband",
        "simulation.packet.credit_buffer=4KiB"},
       "expected at least one packet"},
      {{"simulation.network=packet", "simulation.packet.header=1000"}, "at most 256"},
  };
  for (const auto& [overrides, error] : bad) {
    StatusOr<Scenario> r = load_scenario_text(kGpt13b, "test.yaml", overrides);
    ASSERT_FALSE(r.ok()) << error;
    EXPECT_NE(r.status().message().find(error), std::string::npos) << r.status().message();
  }
}

TEST(PacketBackend, TheKeysAreReadAndChecked) {
  StatusOr<Scenario> s = load_scenario_text(
      kGpt13b, "test.yaml",
      {"simulation.network=packet", "simulation.packet.mtu=1024", "simulation.packet.cc=none",
       "simulation.packet.pfc=false", "simulation.packet.kmin=10KB", "simulation.packet.kmax=1MB",
       "simulation.packet.switch_buffer=16MiB"});
  ASSERT_TRUE(s.ok()) << s.status().message();
  const PacketNetworkConfig& p = s->simulation.packet;
  EXPECT_EQ(p.mtu, 1024);
  EXPECT_EQ(p.cc, CongestionControl::kNone);
  EXPECT_FALSE(p.pfc);
  EXPECT_EQ(p.kmin, 10'000);
  EXPECT_EQ(p.kmax, 1'000'000);
  EXPECT_EQ(p.switch_buffer, int64_t{16} << 20);
  StatusOr<Scenario> h =
      load_scenario_text(kGpt13b, "test.yaml",
                         {"simulation.network=packet", "simulation.packet.cc=hpcc",
                          "simulation.packet.hpcc_eta=0.9", "simulation.packet.hpcc_max_stage=0"});
  ASSERT_TRUE(h.ok()) << h.status().message();
  EXPECT_EQ(h->simulation.packet.cc, CongestionControl::kHpcc);
  EXPECT_EQ(h->simulation.packet.hpcc.eta, 0.9);
  EXPECT_EQ(h->simulation.packet.hpcc.max_stage, 0);
  const std::vector<std::pair<std::vector<std::string>, std::string>> bad = {
      {{"simulation.packet.mtu=1024"}, "simulation.packet: expected simulation.network: packet"},
      {{"simulation.network=packet", "simulation.packet.mtu=100"}, "simulation.packet.mtu"},
      {{"simulation.network=packet", "simulation.packet.mtu=10000"}, "at most 9000"},
      {{"simulation.network=packet", "simulation.packet.cc=timely"}, "simulation.packet.cc"},
      {{"simulation.network=packet", "simulation.packet.hpcc_eta=0.9"}, "expected cc: hpcc"},
      {{"simulation.network=packet", "simulation.packet.cc=hpcc", "simulation.packet.hpcc_eta=1.5"},
       "simulation.packet.hpcc_eta"},
      {{"simulation.network=packet", "simulation.packet.cc=hpcc",
        "simulation.packet.hpcc_max_stage=1000"},
       "at most 100"},
      {{"simulation.network=packet", "simulation.packet.kmin=1MB", "simulation.packet.kmax=1KB"},
       "expected more than kmin"},
      {{"simulation.network=packet", "simulation.packet.pmax=2"}, "simulation.packet.pmax"},
      {{"simulation.network=packet", "simulation.packet.switch_buffer=1KiB"}, "at least 64KiB"},
      {{"simulation.network=packet", "simulation.packet.colour=red"}, "unknown key"},
  };
  for (const auto& [overrides, error] : bad) {
    StatusOr<Scenario> r = load_scenario_text(kGpt13b, "test.yaml", overrides);
    ASSERT_FALSE(r.ok()) << error;
    EXPECT_NE(r.status().message().find(error), std::string::npos) << r.status().message();
    EXPECT_NE(r.status().message().find("test.yaml"), std::string::npos) << r.status().message();
  }
}

}  // namespace
}  // namespace preflight

namespace preflight {
namespace {

// Partitions (simulation.packet.partitions): on the preset's InfiniBand each leaf (each rail of
// the DGX A100 nodes) a partition; the job's pipeline sends and DP collectives stay on their
// rails, so the run is the one of one partition, and the same on any thread count.
TEST(PacketBackend, PartitionsRunTheJobAsOneQueueOnAnyThreadCount) {
  const char* ib = R"(
model: {preset: gpt3-13b}
cluster: {preset: dgx-a100, nodes: 4}
training: {seq_len: 2048, global_batch: 32, micro_batch: 1}
parallelism: {tp: 4, pp: 4, sequence_parallel: true, recompute: selective,
              distributed_optimizer: true, overlap_grad_reduce: true}
simulation: {network: packet}
)";
  auto run_ib = [&](const std::vector<std::string>& keys) {
    StatusOr<Scenario> s = load_scenario_text(ib, "ib.yaml", keys);
    EXPECT_TRUE(s.ok()) << s.status().message();
    StatusOr<SimulationReport> r = simulate(*s);
    EXPECT_TRUE(r.ok()) << r.status().message();
    return *r;
  };
  const SimulationReport one = run_ib({});
  EXPECT_EQ(one.execution.network.packet.partitions, 1);
  const SimulationReport a =
      run_ib({"simulation.packet.partitions=auto", "simulation.packet.threads=1"});
  const SimulationReport b =
      run_ib({"simulation.packet.partitions=auto", "simulation.packet.threads=2"});
  const PacketCounters& pa = a.execution.network.packet;
  const PacketCounters& pb = b.execution.network.packet;
  EXPECT_EQ(pa.partitions, 8);  // the 8 rails' leaves
  EXPECT_GT(pa.windows, 0);
  EXPECT_EQ(a.iteration_time_s, one.iteration_time_s);
  EXPECT_EQ(pa.packets, one.execution.network.packet.packets);
  EXPECT_EQ(pa.fct_max_s, one.execution.network.packet.fct_max_s);
  // Any thread count: the same to the last bit.
  EXPECT_EQ(b.iteration_time_s, a.iteration_time_s);
  EXPECT_EQ(pb.events, pa.events);
  EXPECT_EQ(pb.windows, pa.windows);
  EXPECT_EQ(pb.fct_p50_s, pa.fct_p50_s);
  EXPECT_EQ(pb.partitions, pa.partitions);
}

TEST(PacketBackend, PartitionKeys) {
  StatusOr<Scenario> s =
      load_scenario_text(kGpt13b, "test.yaml",
                         {"simulation.network=packet", "simulation.packet.link_layer=infiniband",
                          "simulation.packet.partitions=4", "simulation.packet.threads=2"});
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->simulation.packet.partitions, 4);
  EXPECT_EQ(s->simulation.packet.threads, 2);
  StatusOr<Scenario> d = load_scenario_text(kGpt13b, "test.yaml", {"simulation.network=packet"});
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->simulation.packet.partitions, 1);  // not the default: they cost on cross traffic
  EXPECT_EQ(d->simulation.packet.threads, 0);     // auto
  const std::vector<std::pair<std::vector<std::string>, std::string>> bad = {
      {{"simulation.network=packet", "simulation.packet.link_layer=infiniband",
        "simulation.packet.partitions=4", "simulation.packet.fast_forward=true"},
       "expected 1, or fast_forward: false"},
      {{"simulation.network=packet", "simulation.packet.partitions=0"},
       "simulation.packet.partitions"},
      {{"simulation.network=packet", "simulation.packet.partitions=1000"}, "at most 256"},
      {{"simulation.network=packet", "simulation.packet.threads=0"}, "simulation.packet.threads"},
  };
  for (const auto& [keys, want] : bad) {
    StatusOr<Scenario> b = load_scenario_text(kGpt13b, "test.yaml", keys);
    ASSERT_FALSE(b.ok()) << keys.back();
    EXPECT_NE(b.status().message().find(want), std::string::npos) << b.status().message();
  }
}

}  // namespace
}  // namespace preflight
