// Oracles are shared/reference/nccl.md: §4.3 (channel counts), §5.10 (tables, choices, busBw),
// Appendix A (two worked decisions). The reference prints one decimal, so derived values are
// compared within 0.06 unless a comment says otherwise.
#include "collective/nccl_model.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace preflight::nccl {
namespace {

constexpr int64_t kKiB = 1024, kMiB = 1024 * kKiB, kGiB = 1024 * kMiB;

Platform dgx_a100(int nodes = 1) {
  Platform p;  // 12 NVLinks × 20 to NVSwitch, 8 × HDR 200G on PCIe Gen4, AMD EPYC
  p.compute_capability = 80;
  p.nodes = nodes;
  p.amd_cpu = true;
  return p;
}

Platform dgx_h100(int nodes = 1) {
  Platform p;  // 18 NVLinks × 20.6, 8 × NDR 400G on PCIe Gen5, Intel Xeon, NVLS
  p.compute_capability = 90;
  p.nodes = nodes;
  p.nvlinks_per_gpu = 18;
  p.nic_gbps = 400;
  p.pcie_gen = 5;
  p.nvls_capable = true;
  return p;
}

TuningModel make(const Platform& p, const Options& o = {}) {
  StatusOr<TuningModel> m = TuningModel::create(p, o);
  EXPECT_TRUE(m.ok()) << m.status().message();
  return std::move(m).value();
}

Options version(const std::string& v) {
  Options o;
  o.version = v;
  return o;
}

// nccl-tests busBw (§1) from the model time of an AllReduce.
double allreduce_busbw(const TuningModel& m, int64_t bytes) {
  const Choice c = m.choose(Coll::kAllReduce, bytes).value();
  const double n = m.ranks();
  return bytes / (c.time_us * 1000.0) * 2 * (n - 1) / n;
}

std::string choice_name(const TuningModel& m, Coll coll, int64_t bytes) {
  const Choice c = m.choose(coll, bytes).value();
  return std::string(to_string(c.algo)) + "/" + to_string(c.proto);
}

void expect_graph(const Graph& g, int channels, double intra, double inter) {
  EXPECT_EQ(g.channels, channels);
  EXPECT_DOUBLE_EQ(g.bw_intra, intra);
  EXPECT_DOUBLE_EQ(g.bw_inter, inter);
}

TEST(NcclNames, RoundTripCaseInsensitive) {
  EXPECT_EQ(parse_algo("nvlstree").value(), Algo::kNvlsTree);
  EXPECT_EQ(parse_algo("CollnetDirect").value(), Algo::kCollNetDirect);
  EXPECT_EQ(parse_algo("pat").value(), Algo::kPat);
  EXPECT_EQ(parse_proto("simple").value(), Proto::kSimple);
  EXPECT_EQ(parse_proto("ll128").value(), Proto::kLL128);
  EXPECT_EQ(parse_coll("allreduce").value(), Coll::kAllReduce);
  for (int a = 0; a < kNumAlgos; ++a)
    EXPECT_EQ(parse_algo(to_string(static_cast<Algo>(a))).value(), static_cast<Algo>(a));
  EXPECT_STREQ(to_string(Proto::kLL128), "LL128");
  EXPECT_FALSE(parse_algo("butterfly").ok());
  EXPECT_FALSE(parse_proto("LL64").ok());
}

// §4.3 rows. Single node: ring 6×40 (A100) / 6×60 (H100) duplicated, tree at the ring count.
TEST(NcclGraphSearch, SingleNodeDgx) {
  const TuningModel a = make(dgx_a100());
  expect_graph(a.ring_graph(), 12, 20, 20);  // 6×40 → dup 12×20
  expect_graph(a.tree_graph(), 12, 20, 20);
  EXPECT_EQ(a.comm_channels(), 24);
  EXPECT_EQ(a.nvls_graph().channels, 0);
  EXPECT_EQ(a.nvls_channels(), 0);

  const TuningModel h = make(dgx_h100());
  expect_graph(h.ring_graph(), 12, 30, 30);  // 6×60 → dup 12×30
  expect_graph(h.tree_graph(), 12, 30, 30);
  EXPECT_EQ(h.comm_channels(), 24);
  expect_graph(h.nvls_graph(), 8, 40, 60);  // one head per GPU; 2.19+ pass 2 raises bwInter
  EXPECT_EQ(h.nvls_channels(), 16);
  expect_graph(make(dgx_h100(), version("2.18")).nvls_graph(), 8, 40, 40);  // no raise in 2.18
}

TEST(NcclGraphSearch, MultiNodeDgxA100) {
  for (int nodes : {2, 4}) {
    const TuningModel a = make(dgx_a100(nodes));
    expect_graph(a.ring_graph(), 8, 24, 24);  // per-channel cap min(PCIe 24, NIC 25); no dup
    EXPECT_EQ(a.comm_channels(), 16);
  }
  Platform four_nics = dgx_a100(2);
  four_nics.nics_per_node = 4;
  const TuningModel a4 = make(four_nics);
  expect_graph(a4.ring_graph(), 4, 24, 24);
  EXPECT_EQ(a4.comm_channels(), 8);
}

// Not a reference row: a guard on the simplified search. On one node every channel follows the
// same GPU order, so a partial node (4 of 8 H100s) gets the same ring and tree as a full one.
TEST(NcclGraphSearch, PartialNodeTreeMatchesRing) {
  Platform half = dgx_h100();
  half.ranks_per_node = 4;
  const TuningModel h = make(half);
  expect_graph(h.ring_graph(), 12, 30, 30);
  expect_graph(h.tree_graph(), 12, 30, 30);
  expect_graph(h.nvls_graph(), 4, 60, 60);  // 4 heads: (4 + 1) × 60 ≤ 370.8
}

TEST(NcclGraphSearch, MultiNodeDgxH100) {
  const TuningModel h = make(dgx_h100(2));
  expect_graph(h.ring_graph(), 8, 48, 48);  // no dup: SM90, 48 < 50, 8 > 4
  expect_graph(h.tree_graph(), 8, 48, 48);  // Appendix A2
  EXPECT_EQ(h.comm_channels(), 16);         // 2.20+: no Hopper boost at 16
  expect_graph(h.nvls_graph(), 8, 40, 48);
  EXPECT_EQ(h.nvls_channels(), 16);
  EXPECT_EQ(make(dgx_h100(4)).comm_channels(), 16);
  EXPECT_EQ(make(dgx_h100(2), version("2.18")).comm_channels(), 32);  // extra Hopper doubling
  EXPECT_EQ(make(dgx_h100(2), version("2.19")).comm_channels(), 32);
  EXPECT_EQ(make(dgx_h100(2), version("2.20")).comm_channels(), 16);

  Platform four_nics = dgx_h100(2);
  four_nics.nics_per_node = 4;
  const TuningModel h4 = make(four_nics);
  expect_graph(h4.ring_graph(), 8, 24, 24);  // 4×48 → dup 8×24 (4 channels are not > 4)
  EXPECT_EQ(h4.comm_channels(), 16);         // bwIntra 24 < 45: no Hopper boost
}

struct Row {
  Algo algo;
  Proto proto;
  double latency, bandwidth;
};

// §5.10 single-node AllReduce table (latency µs / stored algBw GB/s).
TEST(NcclTuningTable, SingleNodeDgxA100AndH100) {
  const TuningModel a = make(dgx_a100());
  const TuningModel h = make(dgx_h100());
  const std::vector<Row> a100 = {
      {Algo::kRing, Proto::kLL, 15.0, 50.1},      {Algo::kRing, Proto::kLL128, 40.6, 126.2},
      {Algo::kRing, Proto::kSimple, 56.0, 137.1}, {Algo::kTree, Proto::kLL, 15.2, 29.1},
      {Algo::kTree, Proto::kLL128, 31.5, 85.9},   {Algo::kTree, Proto::kSimple, 64.4, 110.4}};
  const std::vector<Row> h100 = {
      {Algo::kRing, Proto::kLL, 15.0, 80.6},      {Algo::kRing, Proto::kLL128, 40.6, 189.3},
      {Algo::kRing, Proto::kSimple, 56.0, 205.7}, {Algo::kTree, Proto::kLL, 15.2, 43.6},
      {Algo::kTree, Proto::kLL128, 31.5, 128.8},  {Algo::kTree, Proto::kSimple, 64.4, 165.6},
      {Algo::kNvls, Proto::kSimple, 25.0, 272.0}};
  for (const Row& r : a100) {
    SCOPED_TRACE(std::string("A100 ") + to_string(r.algo) + "/" + to_string(r.proto));
    EXPECT_NEAR(a.latency_us(Coll::kAllReduce, r.algo, r.proto), r.latency, 0.06);
    EXPECT_NEAR(a.bandwidth_gbs(Coll::kAllReduce, r.algo, r.proto), r.bandwidth, 0.06);
  }
  for (const Row& r : h100) {
    SCOPED_TRACE(std::string("H100 ") + to_string(r.algo) + "/" + to_string(r.proto));
    EXPECT_NEAR(h.latency_us(Coll::kAllReduce, r.algo, r.proto), r.latency, 0.06);
    EXPECT_NEAR(h.bandwidth_gbs(Coll::kAllReduce, r.algo, r.proto), r.bandwidth, 0.06);
  }
  // NVLS busBw-equivalent 476 = 8 × 40 × 0.85 × 7/8 × 2; no NVLS on A100, LL128 only Ring/Tree.
  EXPECT_NEAR(h.bandwidth_gbs(Coll::kAllReduce, Algo::kNvls, Proto::kSimple) * 14 / 8, 476, 0.01);
  EXPECT_EQ(a.bandwidth_gbs(Coll::kAllReduce, Algo::kNvls, Proto::kSimple), 0);
  EXPECT_EQ(h.bandwidth_gbs(Coll::kAllReduce, Algo::kNvls, Proto::kLL), 0);
  EXPECT_EQ(h.bandwidth_gbs(Coll::kAllReduce, Algo::kNvlsTree, Proto::kSimple), 0);  // 1 node
}

struct SizeRow {
  int64_t bytes;
  const char* choice;
  double busbw;
};

// §5.10 "Predicted choice and busBw" columns for the 2.28 model.
TEST(NcclChoice, SingleNodeDgxA100PerSize) {
  const TuningModel a = make(dgx_a100());
  const std::vector<SizeRow> rows = {
      {64 * kKiB, "Ring/LL", 7.0},       {256 * kKiB, "Ring/LL", 22.7},
      {1 * kMiB, "Ring/LL", 51.1},       {2 * kMiB, "Ring/LL", 64.6},
      {4 * kMiB, "Ring/LL128", 99.4},    {16 * kMiB, "Ring/LL128", 169.2},
      {64 * kMiB, "Ring/Simple", 215.4}, {256 * kMiB, "Ring/Simple", 233.3},
      {1 * kGiB, "Ring/Simple", 238.3},  {8 * kGiB, "Ring/Simple", 239.8}};
  for (const SizeRow& r : rows) {
    SCOPED_TRACE(r.bytes);
    EXPECT_EQ(choice_name(a, Coll::kAllReduce, r.bytes), r.choice);
    EXPECT_NEAR(allreduce_busbw(a, r.bytes), r.busbw, 0.06);
  }
  EXPECT_EQ(choice_name(a, Coll::kAllReduce, 8 * kMiB), "Ring/LL128");  // LL128 at 4–16 MiB
}

TEST(NcclChoice, SingleNodeDgxH100PerSize) {
  const TuningModel h = make(dgx_h100());
  const std::vector<SizeRow> rows = {
      {64 * kKiB, "Ring/LL", 7.3},       {256 * kKiB, "Ring/LL", 25.1},
      {1 * kMiB, "Ring/LL", 65.5},       {2 * kMiB, "NVLS/Simple", 112.2},
      {4 * kMiB, "NVLS/Simple", 181.6},  {16 * kMiB, "NVLS/Simple", 338.7},
      {64 * kMiB, "NVLS/Simple", 432.2}, {256 * kMiB, "NVLS/Simple", 464.2},
      {1 * kGiB, "NVLS/Simple", 473.0},  {8 * kGiB, "NVLS/Simple", 475.6}};
  for (const SizeRow& r : rows) {
    SCOPED_TRACE(r.bytes);
    EXPECT_EQ(choice_name(h, Coll::kAllReduce, r.bytes), r.choice);
    EXPECT_NEAR(allreduce_busbw(h, r.bytes), r.busbw, 0.06);
  }
  EXPECT_EQ(h.choose(Coll::kAllReduce, 64 * kMiB)->channels, 16);  // nvlsChannels
}

TEST(NcclChoice, H100WithoutNvlsFallsBackToRing) {
  Options off;
  off.nvls = 0;
  Options excluded;
  excluded.algo = "^nvls";
  for (const Options& o : {off, excluded}) {
    const TuningModel h = make(dgx_h100(), o);
    EXPECT_EQ(h.bandwidth_gbs(Coll::kAllReduce, Algo::kNvls, Proto::kSimple), 0);
    EXPECT_EQ(choice_name(h, Coll::kAllReduce, 1 * kMiB), "Ring/LL");
    EXPECT_EQ(choice_name(h, Coll::kAllReduce, 4 * kMiB), "Ring/LL128");
    EXPECT_EQ(choice_name(h, Coll::kAllReduce, 1 * kGiB), "Ring/Simple");
  }
  EXPECT_EQ(make(dgx_h100(), off).nvls_channels(), 0);
}

// Appendix A1: 64 MiB on one DGX A100. The reference divides by the rounded 137.1 GB/s and
// prints 545.5 µs; the exact 137.14 (= 240 × 8/14) gives 545.33, hence the 0.25 tolerance.
TEST(NcclChoice, AppendixA1DgxA100SixtyFourMiB) {
  const TuningModel a = make(dgx_a100());
  const Choice c = a.choose(Coll::kAllReduce, 64 * kMiB).value();
  EXPECT_EQ(c.algo, Algo::kRing);
  EXPECT_EQ(c.proto, Proto::kSimple);
  EXPECT_NEAR(c.time_us, 545.5, 0.25);
  EXPECT_EQ(c.channels, 24);  // 32 KiB per channel threshold: all 24 qualify
  double ll128 = 0, tree_simple = 0;
  for (const Choice& x : a.candidates(Coll::kAllReduce, 64 * kMiB)) {
    if (x.algo == Algo::kRing && x.proto == Proto::kLL128) ll128 = x.time_us;
    if (x.algo == Algo::kTree && x.proto == Proto::kSimple) tree_simple = x.time_us;
  }
  EXPECT_NEAR(ll128, 572.4, 0.1);        // 40.6 + 531.8
  EXPECT_NEAR(tree_simple, 824.2, 0.1);  // 64.4 + 64 MiB / (110.4 × 0.8 tree correction)
}

// Appendix A2: 64 MiB on two DGX H100: NVLSTree 66.8 + 64 MiB / 246.2 = 339.4 µs.
TEST(NcclChoice, AppendixA2TwoDgxH100SixtyFourMiB) {
  const TuningModel h = make(dgx_h100(2));
  const Choice c = h.choose(Coll::kAllReduce, 64 * kMiB).value();
  EXPECT_EQ(c.algo, Algo::kNvlsTree);
  EXPECT_NEAR(c.time_us, 339.4, 0.06);
  EXPECT_EQ(c.channels, 16);
  for (const Choice& x : h.candidates(Coll::kAllReduce, 64 * kMiB)) {
    if (x.algo == Algo::kRing && x.proto == Proto::kSimple) {
      EXPECT_NEAR(x.time_us, 511.9, 0.06);  // 131.6 × 1.4 plateau + 64 MiB / 204.8
    }
    if (x.algo == Algo::kTree && x.proto == Proto::kLL128) {
      EXPECT_NEAR(x.time_us, 556.5, 0.1);  // 48.5 + 64 MiB / (146.8 × 0.9)
    }
  }
  EXPECT_NEAR(allreduce_busbw(h, 64 * kMiB), 370.7, 0.06);
}

// §5.10 multi-node: "Model latencies used there" and "Stored bandwidths".
TEST(NcclTuningTable, MultiNodeDgxH100) {
  const TuningModel h2 = make(dgx_h100(2));
  const Coll ar = Coll::kAllReduce;
  EXPECT_NEAR(h2.latency_us(ar, Algo::kTree, Proto::kLL), 25.2, 0.06);
  EXPECT_NEAR(h2.latency_us(ar, Algo::kTree, Proto::kLL128), 48.5, 0.06);
  EXPECT_NEAR(h2.latency_us(ar, Algo::kRing, Proto::kLL), 40.0, 0.06);
  EXPECT_NEAR(h2.latency_us(ar, Algo::kRing, Proto::kSimple), 131.6, 0.06);
  EXPECT_NEAR(h2.latency_us(ar, Algo::kNvlsTree, Proto::kSimple), 66.8, 0.06);
  EXPECT_NEAR(h2.bandwidth_gbs(ar, Algo::kNvlsTree, Proto::kSimple), 246.2, 0.06);
  EXPECT_NEAR(h2.bandwidth_gbs(ar, Algo::kRing, Proto::kSimple), 204.8, 0.06);
  EXPECT_NEAR(h2.bandwidth_gbs(ar, Algo::kTree, Proto::kSimple), 165.6, 0.06);
  EXPECT_EQ(h2.bandwidth_gbs(ar, Algo::kNvls, Proto::kSimple), 0);  // multi-node needs CollNet
  const TuningModel h4 = make(dgx_h100(4));
  EXPECT_NEAR(h4.latency_us(ar, Algo::kNvlsTree, Proto::kSimple), 108.6, 0.06);
  EXPECT_NEAR(h4.latency_us(ar, Algo::kRing, Proto::kSimple), 282.8, 0.06);
  EXPECT_NEAR(h4.bandwidth_gbs(ar, Algo::kNvlsTree, Proto::kSimple), 187.9, 0.06);
  EXPECT_NEAR(h4.bandwidth_gbs(ar, Algo::kRing, Proto::kSimple), 198.2, 0.06);
}

// The bandwidth with unbounded links: the protocol's per-channel caps alone. Ring Simple has
// none; the tree's LL128 and Simple keep their per-channel maxima, LL its llMaxBw; with the
// links taken away no cap is below the table bandwidth.
TEST(NcclChoice, ProtocolBandwidthIsWhatThePerChannelCapsAllow) {
  const TuningModel h = make(dgx_h100(4));
  for (const Choice& x : h.candidates(Coll::kAllReduce, 64 * kMiB)) {
    if (x.algo == Algo::kRing && x.proto == Proto::kSimple) {
      EXPECT_EQ(x.protocol_bandwidth_gbs, 0);
    }
    if (x.algo == Algo::kTree) EXPECT_GT(x.protocol_bandwidth_gbs, 0) << to_string(x.proto);
    if (x.protocol_bandwidth_gbs > 0) {
      EXPECT_GE(x.protocol_bandwidth_gbs, x.bandwidth_gbs * (1 - 1e-12))
          << to_string(x.algo) << "/" << to_string(x.proto);
    }
  }
}

// §5.10 multi-node rows: choice per size band and predicted busBw at 8 GiB.
TEST(NcclChoice, MultiNodeRows) {
  struct Case {
    Platform p;
    std::vector<std::pair<int64_t, const char*>> choices;
    double busbw_8g;
  };
  const std::vector<Case> cases = {
      {dgx_a100(2),
       {{64 * kKiB, "Tree/LL"},
        {256 * kKiB, "Tree/LL128"},
        {4 * kMiB, "Tree/LL128"},
        {16 * kMiB, "Ring/LL128"},
        {64 * kMiB, "Ring/LL128"},
        {256 * kMiB, "Ring/Simple"},
        {8 * kGiB, "Ring/Simple"}},
       191.3},
      {dgx_a100(8),
       {{64 * kKiB, "Tree/LL"},
        {16 * kMiB, "Tree/LL128"},
        {64 * kMiB, "Ring/LL128"},
        {256 * kMiB, "Ring/LL128"},
        {1 * kGiB, "Ring/Simple"}},
       189.4},
      {dgx_h100(2),
       {{64 * kKiB, "Tree/LL"},
        {256 * kKiB, "Tree/LL128"},
        {2 * kMiB, "Tree/LL128"},
        {4 * kMiB, "NVLSTree/Simple"},
        {8 * kGiB, "NVLSTree/Simple"}},
       460.7},
      {dgx_h100(4),
       {{64 * kKiB, "Tree/LL"},
        {4 * kMiB, "Tree/LL128"},
        {16 * kMiB, "NVLSTree/Simple"},
        {256 * kMiB, "NVLSTree/Simple"},
        {1 * kGiB, "Ring/Simple"}},
       380.5},
      {dgx_h100(16),
       {{64 * kKiB, "Tree/LL"},
        {16 * kMiB, "Tree/LL128"},
        {64 * kMiB, "NVLSTree/Simple"},
        {4 * kGiB, "NVLSTree/Simple"},
        {8 * kGiB, "Ring/Simple"}},
       370.1},
  };
  for (const Case& c : cases) {
    const TuningModel m = make(c.p);
    for (const auto& [bytes, name] : c.choices) {
      SCOPED_TRACE(std::to_string(c.p.nodes) + " nodes, cc " +
                   std::to_string(c.p.compute_capability) + ", " + std::to_string(bytes));
      EXPECT_EQ(choice_name(m, Coll::kAllReduce, bytes), name);
    }
    EXPECT_NEAR(allreduce_busbw(m, 8 * kGiB), c.busbw_8g, 0.06);
  }
}

// §5.10: with 2.18 constants (Ring LL ×1/4, Hopper llMax 87.7, NVLS base 23) H100 switches to
// NVLS around 512 KiB; 2.21+ switches between 1 and 2 MiB.
TEST(NcclVersions, H100NvlsSwitchPoint) {
  const TuningModel v18 = make(dgx_h100(), version("2.18"));
  EXPECT_EQ(choice_name(v18, Coll::kAllReduce, 256 * kKiB), "Ring/LL");
  EXPECT_EQ(choice_name(v18, Coll::kAllReduce, 512 * kKiB), "NVLS/Simple");
  EXPECT_NEAR(v18.bandwidth_gbs(Coll::kAllReduce, Algo::kRing, Proto::kLL), 87.7 * 8 / 14, 1e-9);
  EXPECT_NEAR(v18.latency_us(Coll::kAllReduce, Algo::kNvls, Proto::kSimple), 23, 1e-9);
  EXPECT_NEAR(v18.bandwidth_gbs(Coll::kAllReduce, Algo::kNvls, Proto::kSimple), 320 * 5 / 6.0,
              1e-9);  // 8 × 40 × 5/6
  for (const char* v : {"2.21", "2.24", "2.27", "2.28"}) {
    const TuningModel m = make(dgx_h100(), version(v));
    EXPECT_EQ(choice_name(m, Coll::kAllReduce, 1 * kMiB), "Ring/LL") << v;
    EXPECT_EQ(choice_name(m, Coll::kAllReduce, 2 * kMiB), "NVLS/Simple") << v;
  }
}

TEST(NcclVersions, LatencyConstantsByRelease) {
  const auto tree_simple = [](const char* v) {
    return make(dgx_a100(), version(v)).latency_us(Coll::kAllReduce, Algo::kTree, Proto::kSimple);
  };
  EXPECT_NEAR(tree_simple("2.18"), 56.0, 1e-9);   // base 0 + 2 × 7 × 4
  EXPECT_NEAR(tree_simple("2.19"), 392.0, 1e-9);  // base 0 + 2 × 7 × 28
  EXPECT_NEAR(tree_simple("2.22"), 392.0, 1e-9);
  EXPECT_NEAR(tree_simple("2.23"), 64.4, 1e-9);  // base 8.4 + 2 × 7 × 4
  const auto nvls = [](const char* v) {
    return make(dgx_h100(), version(v)).latency_us(Coll::kAllReduce, Algo::kNvls, Proto::kSimple);
  };
  EXPECT_NEAR(nvls("2.19"), 23, 1e-9);
  EXPECT_NEAR(nvls("2.21"), 25, 1e-9);
  const auto nvls_tree = [](const char* v) {
    return make(dgx_h100(2), version(v))
        .latency_us(Coll::kAllReduce, Algo::kNvlsTree, Proto::kSimple);
  };
  EXPECT_NEAR(nvls_tree("2.18"), 23 + 2 * 19, 1e-9);
  EXPECT_NEAR(nvls_tree("2.27"), 25 + 2 * 14, 1e-9);
  EXPECT_NEAR(nvls_tree("2.28.3"), 25 + 2 * 14, 1e-9);
  EXPECT_NEAR(nvls_tree("2.28"), 25 + 2 * 20.9, 1e-9);  // 2.28 = 2.28.9
  // 2.18–2.22 count 2·nNodes inter steps for Ring AllReduce, 2.23+ 2(nNodes−1):
  // 2 nodes of H100: 8.4 + 26 × 3.4 + 4 × 14 = 152.8 vs 8.4 + 28 × 3.4 + 2 × 14 = 131.6.
  EXPECT_NEAR(
      make(dgx_h100(2), version("2.22")).latency_us(Coll::kAllReduce, Algo::kRing, Proto::kSimple),
      152.8, 1e-9);
  // 2.18–2.20 Ring LL factor 1/3 for a single-node AllGather, 1/4 for AllReduce; 2.21+ 1/2.
  const TuningModel a20 = make(dgx_a100(), version("2.20"));
  EXPECT_NEAR(a20.bandwidth_gbs(Coll::kAllGather, Algo::kRing, Proto::kLL), 80.0 * 8 / 7, 1e-9);
  EXPECT_NEAR(a20.bandwidth_gbs(Coll::kAllReduce, Algo::kRing, Proto::kLL), 60.0 * 8 / 14, 1e-9);
}

TEST(NcclVersions, RejectsUnknownVersions) {
  for (const char* v : {"2.17", "2.29", "3.0", "2.", "abc", "2.28.x", ""})
    EXPECT_FALSE(TuningModel::create(dgx_a100(), version(v)).ok()) << v;
  EXPECT_TRUE(TuningModel::create(dgx_a100(), version("2.28.3")).ok());
  Platform b200 = dgx_h100();
  b200.compute_capability = 100;
  EXPECT_FALSE(TuningModel::create(b200, version("2.24")).ok());
  EXPECT_TRUE(TuningModel::create(b200, version("2.25")).ok());
}

TEST(NcclOverrides, AlgoAndProtoLists) {
  Options ring;
  ring.algo = "ring";
  const TuningModel h = make(dgx_h100(), ring);
  EXPECT_EQ(h.choose(Coll::kAllReduce, 1 * kGiB)->algo, Algo::kRing);
  EXPECT_EQ(make(dgx_h100(2), ring).choose(Coll::kAllReduce, 4 * kKiB)->algo, Algo::kRing);

  Options simple;
  simple.proto = "simple";
  const TuningModel a = make(dgx_a100(), simple);
  EXPECT_EQ(choice_name(a, Coll::kAllReduce, 64 * kKiB), "Ring/Simple");
  EXPECT_EQ(a.bandwidth_gbs(Coll::kAllReduce, Algo::kRing, Proto::kLL), 0);

  Options tree_ll;
  tree_ll.algo = "Tree";
  tree_ll.proto = "^LL128,Simple";
  EXPECT_EQ(choice_name(make(dgx_a100(), tree_ll), Coll::kAllReduce, 64 * kMiB), "Tree/LL");

  Options unknown;
  unknown.algo = "ring,butterfly";
  EXPECT_FALSE(TuningModel::create(dgx_a100(), unknown).ok());
  unknown.algo = "";
  unknown.proto = "LL256";
  EXPECT_FALSE(TuningModel::create(dgx_a100(), unknown).ok());
  Options pat = version("2.22");
  pat.algo = "PAT";  // PAT exists from 2.23
  EXPECT_FALSE(TuningModel::create(dgx_a100(), pat).ok());
}

TEST(NcclOverrides, PerFunctionSyntaxNeeds224) {
  Options o;
  o.algo = "ring;allreduce:tree";
  const TuningModel m = make(dgx_a100(), o);
  EXPECT_EQ(m.choose(Coll::kAllReduce, 64 * kMiB)->algo, Algo::kTree);
  EXPECT_EQ(m.choose(Coll::kAllGather, 64 * kMiB)->algo, Algo::kRing);
  o.version = "2.23";
  EXPECT_FALSE(TuningModel::create(dgx_a100(), o).ok());
  o.version = "2.28";
  o.algo = "sendrecv:ring";
  EXPECT_FALSE(TuningModel::create(dgx_a100(), o).ok());
}

// NCCL_ALGO=tree leaves AllGather nothing (Tree is costed for AllReduce only): 2.24+ is an
// error, 2.19–2.23 fall back to Ring's saved bandwidth, 2.18 never disables Ring there.
TEST(NcclOverrides, NothingAvailable) {
  Options o;
  o.algo = "tree";
  EXPECT_FALSE(make(dgx_a100(), o).choose(Coll::kAllGather, kMiB).ok());
  for (const char* v : {"2.18", "2.19", "2.23"}) {
    o.version = v;
    EXPECT_EQ(make(dgx_a100(), o).choose(Coll::kAllGather, kMiB)->algo, Algo::kRing) << v;
  }
}

TEST(NcclOverrides, ChannelLimits) {
  Options o;
  o.max_channels = 4;
  const TuningModel m = make(dgx_a100(), o);
  EXPECT_EQ(m.comm_channels(), 4);
  EXPECT_EQ(m.choose(Coll::kAllReduce, 1 * kGiB)->channels, 4);
  // Tuning bandwidths use the search graph, not comm channels (§2 step 6).
  EXPECT_NEAR(m.bandwidth_gbs(Coll::kAllReduce, Algo::kRing, Proto::kSimple), 137.14, 0.01);
  o.max_channels = 0;
  o.min_channels = 32;
  EXPECT_EQ(make(dgx_a100(), o).comm_channels(), 32);
  o.max_channels = 16;
  EXPECT_FALSE(TuningModel::create(dgx_a100(), o).ok());  // min > max
}

TEST(NcclOverrides, NvlsEnable) {
  Options on;
  on.nvls = 1;
  const StatusOr<TuningModel> a = TuningModel::create(dgx_a100(), on);
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.status().message().find("NVLS"), std::string::npos);
  EXPECT_TRUE(TuningModel::create(dgx_h100(), on).ok());
  Options eight;
  eight.nvls_channels = 8;  // NCCL_NVLS_NCHANNELS
  EXPECT_EQ(make(dgx_h100(), eight).choose(Coll::kAllReduce, kGiB)->channels, 8);
  Platform bad = dgx_a100();
  bad.nvls_capable = true;  // Ampere has no NVLS
  EXPECT_FALSE(TuningModel::create(bad, {}).ok());
}

TEST(NcclOverrides, Ll128NeedsNvlinkUnlessForced) {
  Platform pcie = dgx_a100();
  pcie.nvlinks_per_gpu = 0;
  pcie.nvswitch = false;
  const TuningModel m = make(pcie);
  EXPECT_EQ(m.bandwidth_gbs(Coll::kAllReduce, Algo::kRing, Proto::kLL128), 0);
  EXPECT_GT(m.bandwidth_gbs(Coll::kAllReduce, Algo::kRing, Proto::kSimple), 0);
  EXPECT_NEAR(m.latency_us(Coll::kAllReduce, Algo::kRing, Proto::kSimple), 8.4 + 14 * 5.7, 1e-9);
  Options forced;
  forced.proto = "LL128";
  EXPECT_GT(make(pcie, forced).bandwidth_gbs(Coll::kAllReduce, Algo::kRing, Proto::kLL128), 0);
}

// §4.4: ring LL on 8 ranks keeps one channel per 32 KiB (64 B/thread × 512 threads).
TEST(NcclChannels, SmallMessagesUseFewerChannels) {
  const TuningModel a = make(dgx_a100());
  Options ll;
  ll.proto = "LL";
  const TuningModel m = make(dgx_a100(), ll);
  EXPECT_EQ(m.choose(Coll::kAllReduce, 64 * kKiB)->channels, 2);
  EXPECT_EQ(m.choose(Coll::kAllReduce, 256 * kKiB)->channels, 8);
  EXPECT_EQ(m.choose(Coll::kAllReduce, 768 * kKiB)->channels, 24);
  EXPECT_EQ(a.choose(Coll::kAllReduce, 1 * kKiB)->channels, 1);
}

TEST(NcclChoice, GroupOfOneAndEmptyMessagesCostNothing) {
  Platform one = dgx_a100();
  one.ranks_per_node = 1;
  const TuningModel m = make(one);
  const Choice c = m.choose(Coll::kAllReduce, 1 * kGiB).value();
  EXPECT_EQ(c.time_us, 0);
  EXPECT_EQ(c.channels, 0);
  EXPECT_EQ(m.comm_channels(), 0);
  const Choice z = make(dgx_a100()).choose(Coll::kAllGather, 0).value();
  EXPECT_EQ(z.time_us, 0);
  EXPECT_FALSE(make(dgx_a100()).choose(Coll::kAllReduce, -1).ok());
}

TEST(NcclChoice, CandidatesInIndexOrderAndChooseTakesStrictMinimum) {
  const TuningModel h = make(dgx_h100());
  const std::vector<Choice> all = h.candidates(Coll::kAllReduce, 4 * kMiB);
  ASSERT_EQ(all.size(), 7u);  // Tree ×3, Ring ×3, NVLS Simple
  for (size_t i = 1; i < all.size(); ++i)
    EXPECT_LT(static_cast<int>(all[i - 1].algo) * 3 + static_cast<int>(all[i - 1].proto),
              static_cast<int>(all[i].algo) * 3 + static_cast<int>(all[i].proto));
  for (const Choice& c : all)
    EXPECT_NEAR(c.time_us, c.latency_us + 4.0 * kMiB / (1000 * c.bandwidth_gbs), 1e-9);
  const Choice best = h.choose(Coll::kAllReduce, 4 * kMiB).value();
  for (const Choice& c : all) EXPECT_LE(best.time_us, c.time_us);
}

TEST(NcclOtherCollectives, AllGatherAndBroadcast) {
  const TuningModel h = make(dgx_h100());
  // Ring AllGather: busBw 360 × n/(n−1); NVLS AG 2.28: 8 × 40 × .85 × 7/8 × 7/8, no ratio.
  EXPECT_NEAR(h.bandwidth_gbs(Coll::kAllGather, Algo::kRing, Proto::kSimple), 360 * 8 / 7.0, 1e-9);
  EXPECT_NEAR(h.bandwidth_gbs(Coll::kAllGather, Algo::kNvls, Proto::kSimple),
              8 * 40 * 0.85 * 7 / 8 * 7 / 8, 1e-9);
  EXPECT_EQ(h.bandwidth_gbs(Coll::kAllGather, Algo::kTree, Proto::kSimple), 0);
  // Broadcast: Ring only; same-channel rings on one node cost base + one step.
  EXPECT_NEAR(h.latency_us(Coll::kBroadcast, Algo::kRing, Proto::kLL), 6.6 + 0.6, 1e-9);
  EXPECT_NEAR(h.bandwidth_gbs(Coll::kBroadcast, Algo::kRing, Proto::kSimple), 360, 1e-9);
  EXPECT_EQ(h.choose(Coll::kBroadcast, 1 * kGiB)->algo, Algo::kRing);
}

// PAT: AllGather/ReduceScatter with one GPU per node, 2.23+ (§5.7, §9).
TEST(NcclOtherCollectives, PatWithOneRankPerNode) {
  Platform p = dgx_h100(4);
  p.ranks_per_node = 1;
  const TuningModel m = make(p);
  // 8 + log2(4) × 14/3.5 + 2.8 × 4 ranks = 27.2 µs.
  EXPECT_NEAR(m.latency_us(Coll::kAllGather, Algo::kPat, Proto::kSimple), 27.2, 1e-9);
  EXPECT_GT(m.bandwidth_gbs(Coll::kReduceScatter, Algo::kPat, Proto::kSimple), 0);
  EXPECT_EQ(m.bandwidth_gbs(Coll::kAllReduce, Algo::kPat, Proto::kSimple), 0);
  EXPECT_EQ(make(p, version("2.22")).bandwidth_gbs(Coll::kAllGather, Algo::kPat, Proto::kSimple),
            0);
  EXPECT_EQ(make(dgx_h100(4)).bandwidth_gbs(Coll::kAllGather, Algo::kPat, Proto::kSimple), 0);
}

TEST(NcclOtherCollectives, CollNetOnlyWhenEnabledAcrossNodes) {
  Options o;
  o.collnet = true;
  const TuningModel on = make(dgx_h100(2), o);
  EXPECT_GT(on.bandwidth_gbs(Coll::kAllReduce, Algo::kCollNetDirect, Proto::kSimple), 0);
  EXPECT_GT(on.bandwidth_gbs(Coll::kAllReduce, Algo::kCollNetChain, Proto::kSimple), 0);
  EXPECT_GT(on.bandwidth_gbs(Coll::kAllReduce, Algo::kNvls, Proto::kSimple), 0);  // with SHARP
  // CollNetDirect latency: 2 × (3.7 + 7 × 0.4) + 31 = 44 µs.
  EXPECT_NEAR(on.latency_us(Coll::kAllReduce, Algo::kCollNetDirect, Proto::kSimple), 44, 1e-9);
  const TuningModel off = make(dgx_h100(2));
  EXPECT_EQ(off.bandwidth_gbs(Coll::kAllReduce, Algo::kCollNetDirect, Proto::kSimple), 0);
  EXPECT_EQ(
      make(dgx_h100(), o).bandwidth_gbs(Coll::kAllReduce, Algo::kCollNetChain, Proto::kSimple), 0);
}

TEST(NcclPlatform, RejectsInconsistentPlatforms) {
  Platform p = dgx_a100();
  p.ranks_per_node = 9;
  EXPECT_FALSE(TuningModel::create(p, {}).ok());
  p = dgx_a100(2);
  p.nics_per_node = 0;
  EXPECT_FALSE(TuningModel::create(p, {}).ok());
  p = dgx_a100();
  p.nvlinks_per_gpu = 0;  // NVSwitch without NVLinks
  EXPECT_FALSE(TuningModel::create(p, {}).ok());
  p = dgx_a100();
  p.pcie_gen = 2;
  EXPECT_FALSE(TuningModel::create(p, {}).ok());
  Options o;
  o.nvls = 3;
  EXPECT_FALSE(TuningModel::create(dgx_a100(), o).ok());
}

}  // namespace
}  // namespace preflight::nccl
