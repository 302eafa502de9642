#include "report/collective_table.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace preflight {
namespace {

CollectiveTable predict(const std::string& network, const std::string& sizes,
                        const std::vector<std::string>& more = {}) {
  CollectiveRequest r;
  r.cluster = "dgx-a100";
  r.nodes = 2;
  r.sizes = sizes;
  r.network = network;
  r.overrides = {"collectives.algo=ring"};
  r.overrides.insert(r.overrides.end(), more.begin(), more.end());
  StatusOr<CollectiveTable> t = predict_collective_table(r);
  EXPECT_TRUE(t.ok()) << t.status().message();
  return t.ok() ? *t : CollectiveTable{};
}

TEST(CollectiveTable, TheFabricCarriesTheRingAsTheFlowNetworkDoes) {
  // A ring all-reduce over two DGX A100s: each rail's ring crosses the network on its own NIC,
  // so no link is shared: the packet fabric gives the flow fabric's time (headers and store and
  // forward under 1 %; measured 2913.8 against 2913.7 us), and both stay near the calibrated
  // model's (measured 6 % faster: the fabric carries the ring's transfers, not the calibrated
  // per-step overheads).
  const CollectiveTable analytical = predict("analytical", "256MiB");
  const CollectiveTable flow = predict("flow", "256MiB");
  const CollectiveTable packet = predict("packet", "256MiB");
  ASSERT_EQ(analytical.rows.size(), 1u);
  ASSERT_EQ(flow.rows.size(), 1u);
  ASSERT_EQ(packet.rows.size(), 1u);
  EXPECT_EQ(flow.network, "flow");
  EXPECT_EQ(analytical.rows[0].algorithm, "ring");
  const double t = flow.rows[0].time_us;
  EXPECT_NEAR(packet.rows[0].time_us, t, 0.01 * t);
  EXPECT_NEAR(analytical.rows[0].time_us, t, 0.10 * t);
}

TEST(CollectiveTable, TheFabricKeepsTheProtocolsPerChannelCaps) {
  // The tree's LL128 on 4 x 8 B200s over EFA (the OFI tuner's choice at 4-16 MiB) is held by
  // NCCL's per-channel LL128 cap of the tree, not by the links: the flow and packet fabrics,
  // which carry the links, keep that cap and give the analytical time; before they did not
  // (16 MiB in 203 us against 429). The ring's Simple has no cap: the fabric's links decide.
  const auto table = [](const std::string& network, const std::string& sizes) {
    CollectiveRequest r;
    r.cluster = "aws-p6-b200";
    r.nodes = 4;
    r.sizes = sizes;
    r.network = network;
    StatusOr<CollectiveTable> t = predict_collective_table(r);
    EXPECT_TRUE(t.ok()) << t.status().message();
    return t.ok() ? *t : CollectiveTable{};
  };
  const CollectiveTable analytical = table("analytical", "4MiB,16MiB,1GiB");
  const CollectiveTable flow = table("flow", "4MiB,16MiB,1GiB");
  const CollectiveTable packet = table("packet", "16MiB");
  ASSERT_EQ(flow.rows.size(), 3u);
  ASSERT_EQ(analytical.rows.size(), 3u);
  ASSERT_EQ(packet.rows.size(), 1u);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(flow.rows[i].algorithm, "tree");
    EXPECT_EQ(flow.rows[i].protocol, "LL128");
    EXPECT_NEAR(flow.rows[i].time_us, analytical.rows[i].time_us,
                1e-6 * analytical.rows[i].time_us);
  }
  EXPECT_NEAR(packet.rows[0].time_us, analytical.rows[1].time_us,
              1e-6 * analytical.rows[1].time_us);
  EXPECT_EQ(flow.rows[2].protocol, "Simple");
  EXPECT_LT(flow.rows[2].time_us, analytical.rows[2].time_us);  // 5,820 against 5,920 us
}

TEST(CollectiveTable, ThePacketNetworkTakesItsKeys) {
  // With HPCC the ring's links run at its target utilization η = 0.95: about 1/0.95 of the time
  // without congestion control, which fills them.
  const double none = predict("packet", "256MiB", {"simulation.packet.cc=none"}).rows.at(0).time_us;
  const double hpcc = predict("packet", "256MiB", {"simulation.packet.cc=hpcc"}).rows.at(0).time_us;
  EXPECT_GT(hpcc, 1.02 * none);
  EXPECT_LT(hpcc, 1.08 * none);
  CollectiveRequest r;
  r.cluster = "dgx-a100";
  r.sizes = "1MiB";
  r.network = "flow";
  r.overrides = {"simulation.packet.cc=hpcc"};
  StatusOr<CollectiveTable> t = predict_collective_table(r);
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("expected --network packet"), std::string::npos);
  r.network = "packet";
  r.overrides = {"simulation.packet.cc=reno"};
  t = predict_collective_table(r);
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("simulation.packet.cc"), std::string::npos);
  r.overrides = {"simulation.seed=3"};
  t = predict_collective_table(r);
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("simulation.packet"), std::string::npos);
}

TEST(CollectiveTable, TheFlowNetworkTakesItsRouting) {
  // A 256 MiB all-reduce over 16 DGX H100s on 32-port spine-leaf (two nodes per leaf): NCCL's
  // NVLS tree crosses the spines. Spread over every uplink (InfiniBand's adaptive routing, the
  // preset fabric's default) it is measured at 232 GB/s busBw, hashed onto one path per flow at
  // 178 GB/s.
  auto busbw = [](const std::vector<std::string>& routing) {
    CollectiveRequest r;
    r.cluster = "dgx-h100";
    r.nodes = 16;
    r.sizes = "256MiB";
    r.network = "flow";
    r.overrides = {"cluster.topology.kind=spine_leaf", "cluster.topology.leaf_radix=32"};
    r.overrides.insert(r.overrides.end(), routing.begin(), routing.end());
    StatusOr<CollectiveTable> t = predict_collective_table(r);
    EXPECT_TRUE(t.ok()) << t.status().message();
    return t.ok() ? t->rows.at(0).busbw_gbps : 0.0;
  };
  const double spread = busbw({"simulation.flow.routing=adaptive"});
  EXPECT_EQ(busbw({}), spread);
  EXPECT_GT(spread, 1.2 * busbw({"simulation.flow.routing=ecmp"}));
  CollectiveRequest r;
  r.sizes = "1MiB";
  r.overrides = {"simulation.flow.routing=ecmp"};
  StatusOr<CollectiveTable> t = predict_collective_table(r);
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("expected --network flow"), std::string::npos);
  r.network = "flow";
  r.overrides = {"simulation.flow.routing=valiant"};
  t = predict_collective_table(r);
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("simulation.flow.routing"), std::string::npos);
}

TEST(CollectiveTable, TheFabricsSizesRunOnThreadsWithTheSameTable) {
  // Each size is a simulation of its own: one thread or three, the same rows in the same order.
  for (const char* network : {"flow", "packet"}) {
    CollectiveRequest r;
    r.cluster = "dgx-a100";
    r.nodes = 2;
    r.sizes = "1MiB:32MiB";
    r.network = network;
    r.jobs = 1;
    StatusOr<CollectiveTable> one = predict_collective_table(r);
    r.jobs = 3;
    StatusOr<CollectiveTable> three = predict_collective_table(r);
    ASSERT_TRUE(one.ok() && three.ok());
    ASSERT_EQ(one->rows.size(), 6u);
    ASSERT_EQ(three->rows.size(), one->rows.size());
    for (size_t i = 0; i < one->rows.size(); ++i) {
      EXPECT_EQ(three->rows[i].bytes, one->rows[i].bytes) << network;
      EXPECT_EQ(three->rows[i].time_us, one->rows[i].time_us) << network << " " << i;
    }
    r.jobs = -1;
    StatusOr<CollectiveTable> bad = predict_collective_table(r);
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.status().message().find("--jobs"), std::string::npos);
  }
}

TEST(CollectiveTable, TheFabricRefusesWhatItDoesNotCarry) {
  CollectiveRequest r;
  r.cluster = "dgx-a100";
  r.nodes = 2;
  r.sizes = "1MiB";
  r.network = "packet";
  r.op = "all_to_all";
  StatusOr<CollectiveTable> t = predict_collective_table(r);
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("use --network analytical"), std::string::npos);
  r.op = "all_reduce";
  r.network = "ns3";
  t = predict_collective_table(r);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().message(), "--network ns3: expected analytical, flow or packet");
}

}  // namespace
}  // namespace preflight
