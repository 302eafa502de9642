#include "exec/graph_runner.h"

#include <gtest/gtest.h>

#include <memory>

#include "config/loader.h"
#include "network/backends.h"

namespace preflight {
namespace {

SimTime us(int64_t n) { return SimTime::microseconds(n); }

// A graph program on one DGX H100 (ranks 0..7 on one node) with the models a run needs.
struct Fixture {
  explicit Fixture(int ranks, std::vector<std::vector<int>> groups = {}) {
    StatusOr<Scenario> loaded = load_scenario("", {"cluster.preset=dgx-h100"});
    EXPECT_TRUE(loaded.ok()) << loaded.status().message();
    s = *loaded;
    StatusOr<std::unique_ptr<NetworkBackend>> n = make_network_backend("analytical", s);
    EXPECT_TRUE(n.ok());
    network = std::move(*n);
    for (size_t g = 0; g < groups.size(); ++g) {
      GraphGroup group;
      group.name = "g" + std::to_string(g);
      group.members = groups[g];
      group.placement = graph_placement(groups[g], s.cluster.gpus_per_node);
      program.groups.push_back(group);
    }
    std::vector<GroupPlacement> placements;
    for (const GraphGroup& g : program.groups) placements.push_back(g.placement);
    model = std::make_unique<CollectiveModel>(
        *CollectiveModel::nccl(s.cluster, s.collectives, *network, placements));
    plans = std::make_unique<GraphPlans>(*model, program.groups);
    program.ranks.resize(static_cast<size_t>(ranks));
  }

  // Appends a node to `rank`'s program after `deps` (indices of that rank); returns its index.
  int add(int rank, GraphNode node, std::vector<int> deps = {}) {
    GraphRankProgram& p = program.ranks[static_cast<size_t>(rank)];
    const int i = static_cast<int>(p.nodes.size());
    node.deps = static_cast<int>(deps.size());
    p.nodes.push_back(node);
    for (int d : deps) p.nodes[static_cast<size_t>(d)].dependents.push_back(i);
    p.queues = std::max(p.queues, node.queue + 1);
    return i;
  }

  StatusOr<GraphRunResult> run(bool trace = false) {
    GraphRunOptions o;
    o.trace = trace;
    o.prefix = "test";
    o.describe = [](int r, int i) {
      return "rank " + std::to_string(r) + " #" + std::to_string(i);
    };
    return run_graph(program, s, *network, *plans, o);
  }

  Scenario s;
  std::unique_ptr<NetworkBackend> network;
  std::unique_ptr<CollectiveModel> model;
  std::unique_ptr<GraphPlans> plans;
  GraphProgram program;
};

GraphNode work(SimTime d, int queue, uint64_t order = 0, GraphClass cls = GraphClass::kCompute) {
  GraphNode n;
  n.kind = GraphNodeKind::kWork;
  n.duration = d;
  n.queue = queue;
  n.order = order;
  n.cls = cls;
  return n;
}

GraphNode collective(int group, Bytes bytes, int queue, GraphClass cls = GraphClass::kDp,
                     CollectiveKind kind = CollectiveKind::kAllReduce) {
  GraphNode n;
  n.kind = GraphNodeKind::kCollective;
  n.group = group;
  n.collective = kind;
  n.bytes = bytes;
  n.queue = queue;
  n.cls = cls;
  return n;
}

GraphNode message(GraphNodeKind kind, int peer, Bytes bytes = Bytes(), int64_t tag = 0) {
  GraphNode n;
  n.kind = kind;
  n.peer = peer;
  n.bytes = bytes;
  n.tag = tag;
  n.cls = GraphClass::kPp;
  return n;
}

TEST(GraphRunner, AQueueRunsItsReadyNodesOneAtATimeLowestOrderFirst) {
  Fixture f(1);
  f.add(0, work(us(5), 0, /*order=*/9));  // ready first, so it starts first
  // Both wait for the queue; order 3 goes before order 5.
  const int a = f.add(0, work(us(10), 0, /*order=*/5));
  f.add(0, work(us(20), 0, /*order=*/3));
  GraphNode after;  // kNone: no time, no interval
  f.add(0, after, {a});
  StatusOr<GraphRunResult> r = f.run(/*trace=*/true);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->iteration_time, us(35));
  EXPECT_EQ(r->ranks[0].breakdown.compute, us(35));
  EXPECT_EQ(r->ranks[0].breakdown.total(), us(35));
  ASSERT_EQ(r->trace.size(), 3u);  // the kNone node is not drawn
  EXPECT_EQ(r->trace[0].end, us(5));
  EXPECT_EQ(r->trace[1].start, us(5));
  EXPECT_EQ(r->trace[1].end, us(25));  // order 3
  EXPECT_EQ(r->trace[2].end, us(35));  // order 5
}

TEST(GraphRunner, NodesOnDifferentQueuesOverlapAndComputeWinsTheInstant) {
  Fixture f(1);
  f.add(0, work(us(10), 0));
  f.add(0, work(us(25), 1, 0, GraphClass::kTp));
  f.add(0, work(us(40), 2, 0, GraphClass::kDp));
  StatusOr<GraphRunResult> r = f.run();
  ASSERT_TRUE(r.ok()) << r.status().message();
  const Breakdown& b = r->ranks[0].breakdown;
  EXPECT_EQ(r->iteration_time, us(40));
  EXPECT_EQ(b.compute, us(10));
  EXPECT_EQ(b.tp_comm, us(15));  // TP before DP where both run
  EXPECT_EQ(b.dp_comm, us(15));
  EXPECT_EQ(r->ranks[0].comm_busy, us(40));
  EXPECT_EQ(r->ranks[0].gpu_busy, us(10));
}

TEST(GraphRunner, ACollectiveStartsWhenItsLastMemberArrives) {
  Fixture f(2, {{0, 1}});
  const Bytes size = Bytes::mib(64);
  const SimTime t = f.plans->get(0, CollectiveKind::kAllReduce, size).time;
  ASSERT_GT(t, SimTime());
  f.add(0, collective(0, size, 1), {f.add(0, work(us(10), 0))});
  f.add(1, collective(0, size, 1), {f.add(1, work(us(40), 0))});
  StatusOr<GraphRunResult> r = f.run();
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->collectives, 1);
  EXPECT_EQ(r->ranks[0].end, us(40) + t);
  EXPECT_EQ(r->ranks[1].end, us(40) + t);
  EXPECT_EQ(r->ranks[0].breakdown.bubble, us(30));  // waiting for rank 1
  EXPECT_EQ(r->ranks[0].breakdown.dp_comm, t);
  EXPECT_EQ(r->ranks[1].breakdown.bubble, SimTime());
}

TEST(GraphRunner, AReceiveCompletesWhenIssuedAndLanded) {
  Fixture f(2);
  const Bytes size = Bytes::mib(1);
  const SimTime t = f.model->p2p(size, /*cross_node=*/false).time;
  ASSERT_LT(t, us(50));
  f.add(0, message(GraphNodeKind::kSend, 1, size, 7));
  // Rank 1 posts its receive after 50 us of compute: the data has landed by then.
  f.add(1, message(GraphNodeKind::kRecv, 0, Bytes(), 7), {f.add(1, work(us(50), 0))});
  StatusOr<GraphRunResult> r = f.run();
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->messages, 1);
  EXPECT_EQ(r->ranks[0].end, t);
  EXPECT_EQ(r->ranks[1].end, us(50));
  EXPECT_EQ(r->ranks[1].breakdown.pp_comm, SimTime());  // hidden behind the compute
}

TEST(GraphRunner, MismatchedCollectivesAndStuckNodesAreNamed) {
  {
    Fixture f(2, {{0, 1}});
    f.add(0, collective(0, Bytes::mib(1), 1));
    f.add(1, collective(0, Bytes::mib(2), 1));
    StatusOr<GraphRunResult> r = f.run();
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().message(),
              "test: collective #1 on group 'g0' does not match across ranks: rank 0 #0 issues "
              "all_reduce of 1048576 bytes, rank 1 #0 all_reduce of 2097152 bytes");
  }
  {
    Fixture f(2);
    f.add(1, message(GraphNodeKind::kRecv, 0, Bytes(), 3));
    StatusOr<GraphRunResult> r = f.run();
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().message(),
              "test: replay stopped: rank 1 #0: the receive from rank 0 with tag 3 never got a "
              "matching send");
  }
  {
    Fixture f(3, {{0, 1, 2}});
    f.add(0, collective(0, Bytes::mib(1), 1));
    StatusOr<GraphRunResult> r = f.run();
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().message(),
              "test: replay stopped: rank 0 #0: collective #1 on group 'g0' never started: "
              "rank(s) 1, 2 never issued it");
  }
}

}  // namespace
}  // namespace preflight
