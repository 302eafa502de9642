#include "collective/collective_model.h"

#include <gtest/gtest.h>

#include <memory>

#include "config/loader.h"
#include "network/backends.h"
#include "tests/fakes.h"

namespace preflight {
namespace {

SimTime us(double v) { return SimTime::microseconds(v); }

// α = 20 us, β_s = 2 us, L = 5 us, busBw = 100 GB/s, p2p 50 GB/s.
class CollectiveModelTest : public ::testing::Test {
 protected:
  CollectiveModelTest()
      : network_(Bandwidth::gigabytes_per_second(100), Bandwidth::gigabytes_per_second(50), us(5)),
        model_(cluster(), network_) {}

  static ClusterConfig cluster() {
    ClusterConfig c;
    c.gpu.calibration.collective_latency = us(20);
    c.gpu.calibration.collective_step_latency = us(2);
    return c;
  }

  FakeNetwork network_;
  CollectiveModel model_;
};

TEST_F(CollectiveModelTest, RingAllReduceInOneNode) {
  // n = 8 on one node, S = 800 MB: α + 2(n−1)·β_s + 2(n−1)/n·S/B
  // = 20 us + 14·2 us + 1.75·800e6 B / 100 GB/s = 48 us + 14 ms = 14.048 ms.
  const CollectivePlan p =
      model_.plan(CollectiveKind::kAllReduce, place_group(8, 1, 8), Bytes(800'000'000));
  EXPECT_EQ(p.algorithm, Algorithm::kRing);
  EXPECT_EQ(p.time, us(14'048));
}

TEST_F(CollectiveModelTest, RingAllReduceAcrossNodesAddsInterNodeHops) {
  // n = 16 on N = 2 nodes (8 per node), S = 1.6 GB: ring α + 30·β_s + 2(N−1)·L + 2·15/16·S/B
  // = 20 + 60 + 10 us + 30 ms = 30.09 ms; tree α + 2(7·β_s + 1·(β_s + L)) + 3e9/(0.92·B)
  // = 20 + 2·(14 + 7) us + 32.6 ms: ring wins for large messages.
  const CollectivePlan p =
      model_.plan(CollectiveKind::kAllReduce, place_group(16, 1, 8), Bytes(1'600'000'000));
  EXPECT_EQ(p.algorithm, Algorithm::kRing);
  EXPECT_EQ(p.time, us(30'090));
}

TEST_F(CollectiveModelTest, TreeWinsForSmallMessagesAcrossManyNodes) {
  // n = 64, one per node (N = 64, k = 1), S = 1 MB: wire 2·63/64·1e6 = 1,968,750 B.
  // ring: α + 126·β_s + 126·L + 19.6875 us = 20 + 252 + 630 + 19.6875 = 921.6875 us;
  // tree: α + 2·(0·β_s + ⌊log2 64⌋·(β_s + L)) + 1,968,750 B / (0.92·100 GB/s)
  //     = 20 + 84 + 21.3995 us = 125.3995 us.
  const GroupPlacement g = place_group(64, 8, 8);
  ASSERT_EQ(g.nodes, 64);
  const CollectivePlan p = model_.plan(CollectiveKind::kAllReduce, g, Bytes(1'000'000));
  EXPECT_EQ(p.algorithm, Algorithm::kTree);
  const SimTime tree = us(104) + Bytes(1'968'750) / (Bandwidth::gigabytes_per_second(100) * 0.92);
  EXPECT_EQ(p.time, tree);
  EXPECT_NEAR(p.time.to_microseconds(), 125.3995, 1e-3);
}

TEST_F(CollectiveModelTest, TreeIsNeverUsedInsideOneNode) {
  const CollectivePlan p =
      model_.plan(CollectiveKind::kAllReduce, place_group(8, 1, 8), Bytes(1000));
  EXPECT_EQ(p.algorithm, Algorithm::kRing);
}

TEST_F(CollectiveModelTest, AllGatherAndReduceScatterMove_NMinus1_OverN) {
  // n = 8, S = 800 MB: α + (n−1)·β_s + (n−1)/n·S/B = 20 + 14 us + 7 ms = 7.034 ms.
  for (CollectiveKind kind : {CollectiveKind::kAllGather, CollectiveKind::kReduceScatter}) {
    const CollectivePlan p = model_.plan(kind, place_group(8, 1, 8), Bytes(800'000'000));
    EXPECT_EQ(p.algorithm, Algorithm::kRing) << to_string(kind);
    EXPECT_EQ(p.time, us(7'034)) << to_string(kind);
    // Bus bandwidth: 7/8 · S / t = 700e6 / 7.034 ms = 99.52 GB/s.
    EXPECT_NEAR(p.busbw_gbps, 0.7 / 7.034e-3, 1e-9) << to_string(kind);
  }
}

TEST_F(CollectiveModelTest, AllGatherAcrossNodesAddsOneHopPerNode) {
  // n = 32 on N = 4 nodes, S = 3.2 GB: α + 31·β_s + 3·L + 31/32·S/B = 20 + 62 + 15 us + 31 ms.
  const CollectivePlan p =
      model_.plan(CollectiveKind::kAllGather, place_group(32, 1, 8), Bytes(3'200'000'000));
  EXPECT_EQ(p.time, us(31'097));
}

TEST_F(CollectiveModelTest, BroadcastMovesTheWholeBuffer) {
  // n = 4, S = 100 MB: α + 3·β_s + S/B = 26 us + 1 ms.
  const CollectivePlan p =
      model_.plan(CollectiveKind::kBroadcast, place_group(4, 1, 8), Bytes(100'000'000));
  EXPECT_EQ(p.time, us(1'026));
}

TEST_F(CollectiveModelTest, GroupOfOneRankCostsNothing) {
  for (CollectiveKind kind : {CollectiveKind::kAllReduce, CollectiveKind::kAllGather,
                              CollectiveKind::kReduceScatter, CollectiveKind::kBroadcast}) {
    const CollectivePlan p = model_.plan(kind, place_group(1, 1, 8), Bytes(1'000'000'000));
    EXPECT_EQ(p.time, SimTime::zero()) << to_string(kind);
    EXPECT_EQ(p.busbw_gbps, 0) << to_string(kind);
  }
  // So does an empty buffer.
  EXPECT_EQ(model_.plan(CollectiveKind::kAllReduce, place_group(8, 1, 8), Bytes(0)).time,
            SimTime::zero());
}

TEST_F(CollectiveModelTest, BusBandwidthApproachesTheLinkForLargeMessages) {
  // busBw = 2(n−1)/n·S / t. At S = 800 MB: 1.4e9 B / 14.048 ms = 99.658 GB/s (latency costs
  // 0.34%); at 8 KB the latency dominates.
  const CollectivePlan big =
      model_.plan(CollectiveKind::kAllReduce, place_group(8, 1, 8), Bytes(800'000'000));
  EXPECT_NEAR(big.busbw_gbps, 1.4 / 14.048e-3, 1e-9);
  EXPECT_NEAR(big.busbw_gbps, 100, 0.5);
  const CollectivePlan small =
      model_.plan(CollectiveKind::kAllReduce, place_group(8, 1, 8), Bytes(8192));
  EXPECT_LT(small.busbw_gbps, 1);
}

TEST_F(CollectiveModelTest, PointToPointInAndAcrossNodes) {
  // α + β_s + S/B_p2p = 22 us + 100 MB / 50 GB/s = 2.022 ms; across nodes + L = 2.027 ms.
  const CollectivePlan in = model_.p2p(Bytes(100'000'000), false);
  EXPECT_EQ(in.algorithm, Algorithm::kP2p);
  EXPECT_EQ(in.time, us(2'022));
  EXPECT_NEAR(in.busbw_gbps, 0.1 / 2.022e-3, 1e-9);
  EXPECT_EQ(model_.p2p(Bytes(100'000'000), true).time, us(2'027));
  EXPECT_EQ(model_.p2p(Bytes(0), true).time, SimTime::zero());
}

TEST(CollectiveModel, AnalyticalDgxA100UsesNvlinkInsideAndNicsAcrossNodes) {
  // DGX A100: in-node at one GPU's NVLinks as NCCL sees them, 12 × 20 GB/s = 240 GB/s
  // (network/nvlink.h; nccl-tests measure 232 GB/s all-reduce busBw); across nodes 8 NICs ·
  // 200 Gb/s · 0.96 = 192 GB/s per node, shared by the 8 one-per-node DP groups: 24 GB/s each.
  StatusOr<Scenario> s = load_scenario_text("", "", {});
  ASSERT_TRUE(s.ok()) << s.status().message();
  const GpuCalibration& cal = s->cluster.gpu.calibration;
  StatusOr<std::unique_ptr<NetworkBackend>> net = make_network_backend("analytical", s->cluster);
  ASSERT_TRUE(net.ok()) << net.status().message();
  const Bandwidth nvlink = (*net)->bus_bandwidth(place_group(8, 1, 8));
  EXPECT_NEAR(nvlink.gigabytes_per_second(), 240, 1e-9);
  EXPECT_EQ((*net)->p2p_bandwidth(false), nvlink);
  EXPECT_NEAR((*net)->bus_bandwidth(place_group(8, 8, 8)).gigabytes_per_second(), 24, 1e-9);
  const CollectiveModel model(s->cluster, **net);
  // TP all-reduce of 64 MiB on 8 GPUs: α + 14·β_s + 1.75·64 MiB / 232 GB/s.
  const Bytes size = Bytes::mib(64);
  const SimTime want = cal.collective_latency + cal.collective_step_latency * 14 +
                       Bytes(static_cast<int64_t>(size.count() * 1.75)) / nvlink;
  EXPECT_EQ(model.plan(CollectiveKind::kAllReduce, place_group(8, 1, 8), size).time, want);
  EXPECT_FALSE(make_network_backend("ns3", s->cluster).ok());
}

TEST(CollectiveNames, AreNcclTestsNames) {
  EXPECT_STREQ(to_string(CollectiveKind::kAllReduce), "all_reduce");
  EXPECT_STREQ(to_string(CollectiveKind::kReduceScatter), "reduce_scatter");
  EXPECT_STREQ(to_string(Algorithm::kTree), "tree");
}

}  // namespace
}  // namespace preflight
