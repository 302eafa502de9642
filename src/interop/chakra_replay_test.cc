#include "interop/chakra_replay.h"

#include <gtest/gtest.h>

#include "collective/collective_model.h"
#include "compute/compute_model.h"
#include "config/loader.h"
#include "network/backends.h"
#include "report/chakra_report.h"

namespace preflight {
namespace {

Scenario cluster(int ranks) {
  StatusOr<Scenario> s = load_scenario("", {"cluster.preset=dgx-h100"});
  EXPECT_TRUE(s.ok()) << s.status().message();
  StatusOr<Scenario> c = chakra_scenario(ranks, *s);
  EXPECT_TRUE(c.ok());
  return *c;
}

ChakraNode comp(uint64_t id, int64_t us, std::vector<uint64_t> deps = {}, int64_t stream = -1) {
  ChakraNode n;
  n.id = id;
  n.name = "k" + std::to_string(id);
  n.type = ChakraNodeType::kComp;
  n.duration_micros = static_cast<uint64_t>(us);
  n.data_deps = std::move(deps);
  n.stream = stream;
  return n;
}

ChakraNode coll(uint64_t id, ChakraCommType type, int64_t bytes, std::vector<uint64_t> deps,
                std::string pg = "") {
  ChakraNode n;
  n.id = id;
  n.name = "c" + std::to_string(id);
  n.type = ChakraNodeType::kColl;
  n.comm_type = static_cast<int>(type);
  n.comm_size = bytes;
  n.data_deps = std::move(deps);
  n.pg_name = std::move(pg);
  return n;
}

// The collective model a replay on `s` uses, for closed-form expectations.
struct Models {
  explicit Models(const Scenario& s) {
    StatusOr<std::unique_ptr<NetworkBackend>> n = make_network_backend("analytical", s.cluster);
    EXPECT_TRUE(n.ok());
    network = std::move(*n);
    placement.size = 8;
    placement.per_node = 8;
    placement.nodes = 1;
    placement.sharing_nic = 1;
    model = std::make_unique<CollectiveModel>(
        *CollectiveModel::nccl(s.cluster, s.collectives, *network, {placement}));
  }
  std::unique_ptr<NetworkBackend> network;
  GroupPlacement placement;
  std::unique_ptr<CollectiveModel> model;
};

SimTime us(int64_t v) { return SimTime::picoseconds(v * 1000000); }

TEST(ChakraReplay, HandWrittenGraphGivesItsCriticalPath) {
  // a(10) → c(5) on stream 0; b(20) on stream 1; d(1) after c and b: max(10+5, 20) + 1 = 21 µs.
  ChakraWorkload w;
  w.prefix = "graph";
  ChakraTrace t;
  t.nodes = {comp(0, 10), comp(1, 20, {}, 1), comp(2, 5, {0}), comp(3, 1, {2, 1})};
  w.ranks.push_back(t);
  StatusOr<ChakraReplayResult> r = replay_chakra(w, cluster(1));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->iteration_time, us(21));
  EXPECT_EQ(r->ranks[0].gpu_busy, us(21));
  EXPECT_EQ(r->ranks[0].breakdown.total(), us(21));
}

TEST(ChakraReplay, OneStreamRunsOneNodeAtATimeLowestIdFirst) {
  // Independent nodes on one stream serialise (10 + 20 + 5); on three streams they overlap.
  ChakraWorkload w;
  w.prefix = "streams";
  ChakraTrace t;
  t.nodes = {comp(0, 10), comp(1, 20), comp(2, 5)};
  w.ranks.push_back(t);
  StatusOr<ChakraReplayResult> one = replay_chakra(w, cluster(1));
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->iteration_time, us(35));
  w.ranks[0].nodes[1].stream = 1;
  w.ranks[0].nodes[2].stream = 2;
  StatusOr<ChakraReplayResult> three = replay_chakra(w, cluster(1));
  ASSERT_TRUE(three.ok());
  EXPECT_EQ(three->iteration_time, us(20));
  // A CPU op takes the CPU thread, not the stream: it overlaps the kernels.
  w.ranks[0].nodes[1].stream = -1;
  w.ranks[0].nodes[1].is_cpu_op = true;
  w.ranks[0].nodes[2].stream = -1;
  StatusOr<ChakraReplayResult> cpu = replay_chakra(w, cluster(1));
  ASSERT_TRUE(cpu.ok());
  EXPECT_EQ(cpu->iteration_time, us(20));
  EXPECT_EQ(cpu->ranks[0].breakdown.host_overhead, us(5));
}

TEST(ChakraReplay, CollectiveStartsWhenTheLastMemberArrives) {
  // Rank r computes 10·(r+1) µs, then all 8 ranks all-reduce 64 MiB: every rank ends at
  // 80 µs + the model's all-reduce time on one 8-GPU node.
  const Scenario s = cluster(8);
  ChakraWorkload w;
  w.prefix = "ar";
  for (int r = 0; r < 8; ++r) {
    ChakraTrace t;
    t.nodes = {comp(0, 10 * (r + 1)), coll(1, ChakraCommType::kAllReduce, 64 << 20, {0})};
    w.ranks.push_back(t);
  }
  StatusOr<ChakraReplayResult> r = replay_chakra(w, s);
  ASSERT_TRUE(r.ok()) << r.status().message();
  Models m(s);
  const SimTime ar = m.model->plan(CollectiveKind::kAllReduce, m.placement, Bytes(64 << 20)).time;
  EXPECT_GT(ar, us(100));
  for (const ChakraRankResult& k : r->ranks) EXPECT_EQ(k.end, us(80) + ar);
  EXPECT_EQ(r->collectives, 1);
  // Rank 0 waited 70 µs for rank 7: idle, not communication.
  EXPECT_EQ(r->ranks[0].breakdown.bubble, us(70));
  EXPECT_EQ(r->ranks[0].breakdown.other_comm, ar);
  // All-gather's comm_size is the per-rank input: 8 MiB per rank gathers 64 MiB.
  for (ChakraTrace& t : w.ranks) {
    t.nodes[1].comm_type = static_cast<int>(ChakraCommType::kAllGather);
    t.nodes[1].comm_size = 8 << 20;
  }
  StatusOr<ChakraReplayResult> ag = replay_chakra(w, s);
  ASSERT_TRUE(ag.ok());
  EXPECT_EQ(ag->iteration_time,
            us(80) + m.model->plan(CollectiveKind::kAllGather, m.placement, Bytes(64 << 20)).time);
}

TEST(ChakraReplay, SendRecvAcrossNodesAddsTheP2pTime) {
  // Rank 0 (node 0) computes 10 µs and sends 16 MiB to rank 8 (node 1), which then computes
  // 5 µs: 10 + p2p(16 MiB, across nodes) + 5.
  const Scenario s = cluster(9);
  ChakraWorkload w;
  w.prefix = "p2p";
  w.ranks.resize(9);
  ChakraNode send;
  send.id = 1;
  send.type = ChakraNodeType::kSend;
  send.comm_dst = 8;
  send.comm_tag = 3;
  send.comm_size = 16 << 20;
  send.data_deps = {0};
  w.ranks[0].nodes = {comp(0, 10), send};
  ChakraNode recv;
  recv.id = 0;
  recv.type = ChakraNodeType::kRecv;
  recv.comm_src = 0;
  recv.comm_tag = 3;
  recv.comm_size = 16 << 20;
  w.ranks[8].nodes = {recv, comp(1, 5, {0})};
  StatusOr<ChakraReplayResult> r = replay_chakra(w, s);
  ASSERT_TRUE(r.ok()) << r.status().message();
  Models m(s);
  const SimTime p2p = m.model->p2p(Bytes(16 << 20), true).time;
  EXPECT_EQ(r->iteration_time, us(15) + p2p);
  EXPECT_EQ(r->critical_rank, 8);
  EXPECT_EQ(r->messages, 1);
  // A receive whose tag no send carries never finishes: an error, not a hang.
  w.ranks[8].nodes[0].comm_tag = 4;
  StatusOr<ChakraReplayResult> lost = replay_chakra(w, s);
  ASSERT_FALSE(lost.ok());
  EXPECT_NE(lost.status().message().find("rank 8 node 0 (''): the receive from rank 0 with tag 4 "
                                         "never got a matching send"),
            std::string::npos)
      << lost.status().message();
}

TEST(ChakraReplay, FlowNetworkSharesTheSendersNic) {
  // Rank 0 sends 256 MiB to each of ranks 8..15 (the other node) at once. On the analytical
  // network each takes the p2p time alone; on the flow network the eight flows share rank 0's
  // NIC, so the last lands about 8x later. One send alone takes the same time on both.
  auto workload = [](int sends) {
    ChakraWorkload w;
    w.prefix = "fanout";
    w.ranks.resize(16);
    for (int k = 0; k < sends; ++k) {
      ChakraNode send;
      send.id = static_cast<uint64_t>(k);
      send.type = ChakraNodeType::kSend;
      send.comm_dst = 8 + k;
      send.comm_size = 256 << 20;
      w.ranks[0].nodes.push_back(send);
      ChakraNode recv;
      recv.type = ChakraNodeType::kRecv;
      recv.comm_src = 0;
      recv.comm_size = 256 << 20;
      w.ranks[8 + k].nodes.push_back(recv);
    }
    return w;
  };
  StatusOr<Scenario> base =
      load_scenario("", {"cluster.preset=dgx-h100", "simulation.network=flow"});
  ASSERT_TRUE(base.ok()) << base.status().message();
  const Scenario flow = *chakra_scenario(16, *base);
  Scenario analytical = flow;
  analytical.simulation.network = "analytical";
  StatusOr<ChakraReplayResult> one_a = replay_chakra(workload(1), analytical);
  StatusOr<ChakraReplayResult> one_f = replay_chakra(workload(1), flow);
  StatusOr<ChakraReplayResult> eight_a = replay_chakra(workload(8), analytical);
  StatusOr<ChakraReplayResult> eight_f = replay_chakra(workload(8), flow);
  ASSERT_TRUE(one_a.ok() && one_f.ok() && eight_a.ok() && eight_f.ok())
      << one_f.status().message() << eight_f.status().message();
  EXPECT_FALSE(one_a->has_network_stats);
  EXPECT_TRUE(one_f->has_network_stats);
  EXPECT_EQ(eight_a->iteration_time, one_a->iteration_time);
  const double single = one_f->iteration_time.to_seconds();
  EXPECT_NEAR(single, one_a->iteration_time.to_seconds(), 0.05 * single);
  const double ratio = eight_f->iteration_time.to_seconds() / single;
  EXPECT_GT(ratio, 7.0);
  EXPECT_LT(ratio, 8.5);
  EXPECT_EQ(eight_f->network.flows, 8);
}

TEST(ChakraReplay, RooflineTimesNodesWithoutDuration) {
  const Scenario s = cluster(1);
  ChakraWorkload w;
  w.prefix = "roofline";
  ChakraTrace t;
  ChakraNode n = comp(0, 0);
  n.num_ops = int64_t{1} << 40;
  n.tensor_size = int64_t{1} << 28;
  t.nodes = {n};
  w.ranks.push_back(t);
  StatusOr<ChakraReplayResult> r = replay_chakra(w, s);
  ASSERT_TRUE(r.ok());
  Op op;
  op.type = OpType::kAttention;
  op.flops = Flops(static_cast<double>(int64_t{1} << 40));
  op.bytes = Bytes(int64_t{1} << 28);
  EXPECT_EQ(r->iteration_time,
            make_roofline_model(s.cluster.gpu, s.training.precision)->duration(op));
  // 1.1 TFLOP at H100's bf16 peak and the GEMM ceiling: more than a millisecond.
  EXPECT_GT(r->iteration_time, us(1000));
}

void expect_error(const ChakraWorkload& w, const Scenario& s, const std::string& want) {
  StatusOr<ChakraReplayResult> r = replay_chakra(w, s);
  ASSERT_FALSE(r.ok()) << "expected: " << want;
  EXPECT_NE(r.status().message().find(want), std::string::npos) << r.status().message();
}

TEST(ChakraReplay, BadWorkloadsGiveErrorsNamingRankAndNode) {
  const Scenario s = cluster(2);
  ChakraWorkload w;
  w.prefix = "bad";
  w.ranks.resize(2);
  w.ranks[0].nodes = {coll(0, ChakraCommType::kAllReduce, 1024, {}, "7")};
  w.ranks[1].nodes = {coll(0, ChakraCommType::kAllReduce, 1024, {}, "7")};
  expect_error(w, s, "bad.0.et: rank 0 node 0 ('c0'): pg_name '7' is not a known communicator");
  w.groups = {{"7", {1}}};
  expect_error(w, s, "rank 0 is not a member of communicator group '7'");
  w.groups = {{"7", {0, 1}}};
  w.ranks[1].nodes[0].comm_size = 2048;
  expect_error(w, s, "collective #1 on group '7' does not match across ranks");
  w.ranks[1].nodes[0].comm_type = static_cast<int>(ChakraCommType::kGather);
  expect_error(w, s, "collective GATHER is not supported");
  w.ranks[1].nodes = {comp(0, 1)};
  expect_error(w, s, "collective #1 on group '7' never started: rank(s) 1 never issued it");
  ChakraNode send;
  send.type = ChakraNodeType::kSend;
  w.ranks[1].nodes = {send};
  expect_error(w, s, "COMM_SEND_NODE without comm_dst");
  w.ranks[1].nodes[0].comm_dst = 5;
  expect_error(w, s, "comm_dst 5 is not another rank of the 2-rank workload");
  w.groups = {{"7", {0, 9}}};
  expect_error(w, s, "communicator group '7' names rank 9, but the workload has 2 ranks");
  // Node times that could overflow the clock are refused up front.
  w.groups = {};
  w.ranks[0].nodes = {comp(0, int64_t{1} << 40), comp(1, int64_t{1} << 40)};
  w.ranks[1].nodes = {};
  expect_error(w, s, "add up to over 10^6 s");
}

TEST(ChakraReplay, TraceHasAnIntervalPerTimedNode) {
  ChakraWorkload w;
  w.prefix = "trace";
  ChakraTrace t;
  t.nodes = {comp(0, 10), comp(1, 20, {0}, 1)};
  w.ranks.push_back(t);
  ChakraReplayOptions o;
  o.trace = true;
  StatusOr<ChakraReplayResult> r = replay_chakra(w, cluster(1), o);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->trace.size(), 2u);
  EXPECT_EQ(r->trace[1].start, us(10));
  EXPECT_EQ(r->trace[1].stream, 1);
  EXPECT_NE(chakra_trace_events(*r).find("\"stream 1\""), std::string::npos);
}

}  // namespace
}  // namespace preflight
