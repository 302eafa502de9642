// Ranks that differ: DP replicas simulated apart (executor.h), the slowed-rank compute model
// (compute_model.h) and simulation.slow_ranks.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "compute/compute_model.h"
#include "config/loader.h"
#include "exec/executor.h"
#include "exec/transport.h"
#include "network/backends.h"
#include "tests/load_scenario.h"
#include "workload/generator.h"
#include "workload/layer_ops.h"

namespace preflight {
namespace {

// Runs `s` on its network (simulation.network) with the roofline, slowed on `slow` when given.
ExecutionResult run(const Scenario& s, bool fold = true, std::vector<SlowRank> slow = {}) {
  const Workload w = generate_workload(s);
  const std::unique_ptr<ComputeModel> roofline =
      make_roofline_model(s.cluster.gpu, s.training.precision);
  const std::unique_ptr<ComputeModel> slowed = make_slow_ranks_model(*roofline, std::move(slow));
  StatusOr<std::unique_ptr<NetworkBackend>> net = make_network_backend(s.simulation.network, s);
  EXPECT_TRUE(net.ok());
  const CollectiveModel collectives(s.cluster, **net);
  ExecutorOptions options;
  options.transport = make_transport_factory((*net)->fabric_factory(), s);
  options.launch_overhead = s.cluster.gpu.calibration.launch_overhead;
  options.sm_count = s.cluster.gpu.sm_count;
  options.comm_sm_interference = s.cluster.gpu.calibration.comm_sm_interference;
  options.layout = RankLayout::of(s);
  options.fold_replicas = fold;
  return execute(w, *slowed, collectives, place_job_groups(s), options);
}

void expect_same_stage(const StageResult& a, const StageResult& b, const std::string& what) {
  EXPECT_EQ(a.end.ps(), b.end.ps()) << what;
  EXPECT_EQ(a.busy_compute.ps(), b.busy_compute.ps()) << what;
  const Breakdown& x = a.breakdown;
  const Breakdown& y = b.breakdown;
  EXPECT_EQ(x.compute.ps(), y.compute.ps()) << what;
  EXPECT_EQ(x.host_overhead.ps(), y.host_overhead.ps()) << what;
  EXPECT_EQ(x.tp_comm.ps(), y.tp_comm.ps()) << what;
  EXPECT_EQ(x.pp_comm.ps(), y.pp_comm.ps()) << what;
  EXPECT_EQ(x.dp_comm.ps(), y.dp_comm.ps()) << what;
  EXPECT_EQ(x.cp_comm.ps(), y.cp_comm.ps()) << what;
  EXPECT_EQ(x.optimizer.ps(), y.optimizer.ps()) << what;
  EXPECT_EQ(x.bubble.ps(), y.bubble.ps()) << what;
  ASSERT_EQ(a.collectives.size(), b.collectives.size()) << what;
  for (size_t i = 0; i < a.collectives.size(); ++i) {
    EXPECT_EQ(a.collectives[i].count, b.collectives[i].count) << what;
    EXPECT_EQ(a.collectives[i].time.ps(), b.collectives[i].time.ps()) << what;
  }
}

// `s` with every replica apart (`replicas` of them) equals the folded run, every stage of every
// replica, to the picosecond.
void expect_apart_as_folded(const Scenario& s, size_t replicas) {
  const ExecutionResult folded = run(s, true);
  const ExecutionResult apart = run(s, false);
  ASSERT_EQ(apart.replicas.size(), replicas);
  EXPECT_EQ(folded.iteration_time.ps(), apart.iteration_time.ps());
  for (const ReplicaResult& r : apart.replicas) {
    for (size_t st = 0; st < r.stages.size(); ++st) {
      expect_same_stage(folded.stages[st], r.stages[st],
                        "replica " + std::to_string(r.first) + " stage " + std::to_string(st));
    }
  }
}

// `s` with GPU `rank` of DP replica `replica` at 1.5×, on `replicas` classes: the job slows and
// each class's stage 0 adds up; the slowed replica computes longer, the others as before (within
// 1 %), and each of those waits longer by `waited` (a part of the breakdown), when given.
void expect_slowed_peers(const Scenario& s, int rank, int replica, size_t replicas,
                         SimTime (*waited)(const Breakdown&) = nullptr) {
  const ExecutionResult base = run(s);
  const ExecutionResult slow = run(s, true, {SlowRank{rank, 1.5, SimTime(), SimTime::max()}});
  ASSERT_EQ(slow.replicas.size(), replicas);
  EXPECT_GT(slow.iteration_time, base.iteration_time);
  const StageResult& b0 = base.stages[0];
  for (const ReplicaResult& r : slow.replicas) {
    const StageResult& st0 = r.stages[0];
    EXPECT_EQ(st0.breakdown.total(), st0.end);
    if (r.first == replica) {
      EXPECT_GT(st0.busy_compute, b0.busy_compute);
      continue;
    }
    EXPECT_NEAR(static_cast<double>(st0.busy_compute.ps()),
                static_cast<double>(b0.busy_compute.ps()),
                0.01 * static_cast<double>(b0.busy_compute.ps()))
        << r.first;
    if (waited) {
      EXPECT_GT(waited(st0.breakdown), waited(b0.breakdown)) << r.first;
    }
  }
}

// GPT-3 13B on 4 DGX A100 nodes: TP 4, PP 4, DP 2, 16 micro-batches.
const char* kGpt13b = R"(
model: {preset: gpt3-13b}
cluster: {preset: dgx-a100, nodes: 4}
training: {seq_len: 2048, global_batch: 32, micro_batch: 1}
parallelism: {tp: 4, pp: 4, sequence_parallel: true, recompute: selective,
              distributed_optimizer: true, overlap_grad_reduce: true}
)";

// `s` run with every replica apart equals the folded run, stage by stage, to the picosecond.
void expect_folding_exact(const std::vector<std::string>& overrides) {
  std::string name;
  for (const std::string& o : overrides) name += o + " ";
  SCOPED_TRACE(name);
  const Scenario s = load(kGpt13b, overrides);
  const ExecutionResult folded = run(s, true);
  const ExecutionResult apart = run(s, false);
  EXPECT_EQ(folded.has_network_stats, s.simulation.network == "flow");
  ASSERT_EQ(folded.replicas.size(), 1u);
  EXPECT_EQ(folded.replicas[0].count, s.parallelism.dp);
  ASSERT_EQ(apart.replicas.size(), static_cast<size_t>(s.parallelism.dp));
  EXPECT_EQ(folded.iteration_time.ps(), apart.iteration_time.ps());
  EXPECT_EQ(folded.critical_stage, apart.critical_stage);
  EXPECT_EQ(apart.ops_executed, folded.ops_executed * s.parallelism.dp);
  ASSERT_EQ(folded.stages.size(), apart.stages.size());
  for (const ReplicaResult& r : apart.replicas) {
    EXPECT_EQ(r.count, 1);
    ASSERT_EQ(r.stages.size(), folded.stages.size());
    for (size_t st = 0; st < r.stages.size(); ++st) {
      expect_same_stage(folded.stages[st], r.stages[st],
                        "replica " + std::to_string(r.first) + " stage " + std::to_string(st));
    }
  }
}

TEST(RankClasses, EveryReplicaSimulatedApartEqualsTheFoldedRunToThePicosecond) {
  const std::vector<std::vector<std::string>> variants = {
      {},
      {"parallelism.schedule=interleaved", "parallelism.vpp=2"},
      {"parallelism.overlap_grad_reduce=false"},
      {"parallelism.distributed_optimizer=false", "parallelism.overlap_grad_reduce=false"},
      {"parallelism.schedule=zb_h1"},
      {"parallelism.overlap_param_gather=true"},
      {"model.tied_embeddings=false"},
      {"cluster.nodes=8", "parallelism.tp=2", "parallelism.cp=2"},          // DP 4 of CP pairs
      {"cluster.nodes=8", "parallelism.pp=2", "training.global_batch=64"},  // DP 8
  };
  for (const std::vector<std::string>& overrides : variants) expect_folding_exact(overrides);
}

TEST(RankClasses, OnTheFlowNetworkToo) {
  // Each class puts its own replicas' flows into the one fabric at the instants the folded run
  // puts them all: where the replicas' paths are alike, the same max-min shares and so the same
  // times. One stage a node (TP 4 × DP 2), the pipeline sends across nodes.
  expect_folding_exact({"simulation.network=flow"});
  expect_folding_exact({"simulation.network=flow", "parallelism.overlap_grad_reduce=false"});
  // DP 8 over 4 nodes a stage: ECMP gives some replicas' pipeline sends a spine link to
  // themselves and others a shared one. Folded, a send lands for every replica when the slowest
  // does; apart, the faster replicas go on and wait at the DP reduction instead. The ends are
  // the same (the reduction joins them), the split between PP and DP time is each replica's own.
  {
    const Scenario s = load(kGpt13b, {"cluster.nodes=8", "parallelism.pp=2",
                                      "training.global_batch=64", "simulation.network=flow"});
    const ExecutionResult folded = run(s, true);
    const ExecutionResult apart = run(s, false);
    ASSERT_EQ(apart.replicas.size(), 8u);
    EXPECT_EQ(folded.iteration_time.ps(), apart.iteration_time.ps());
    bool differs = false;
    for (const ReplicaResult& r : apart.replicas) {
      for (size_t st = 0; st < r.stages.size(); ++st) {
        const StageResult& a = folded.stages[st];
        const StageResult& b = r.stages[st];
        EXPECT_EQ(a.end.ps(), b.end.ps()) << "replica " << r.first << " stage " << st;
        EXPECT_EQ(a.busy_compute.ps(), b.busy_compute.ps());
        EXPECT_EQ(b.breakdown.total(), b.end);
        EXPECT_LE(b.breakdown.pp_comm, a.breakdown.pp_comm);
        differs = differs || b.breakdown.pp_comm < a.breakdown.pp_comm;
      }
    }
    EXPECT_TRUE(differs) << "no replica's sends were faster apart: the case tests nothing";
  }
  // And a slow GPU there slows the iteration as on the analytical network.
  const Scenario flow = load(kGpt13b, {"simulation.network=flow"});
  const ExecutionResult base = run(flow);
  const ExecutionResult slow = run(flow, true, {SlowRank{14, 1.5, SimTime(), SimTime::max()}});
  ASSERT_EQ(slow.replicas.size(), 2u);
  EXPECT_GT(slow.iteration_time, base.iteration_time);
  for (const ReplicaResult& r : slow.replicas) {
    for (const StageResult& st : r.stages) EXPECT_EQ(st.breakdown.total(), st.end);
  }
}

TEST(RankClasses, OneSlowRankSlowsItsTpGroupItsPipelineAndTheDpReduction) {
  const Scenario s = load(kGpt13b);
  const RankLayout l = RankLayout::of(s);
  ASSERT_EQ(l.dp(), 2);
  // TP rank 2 of DP replica 1 in stage 1: rank = 2 + 4·(1 + 2·1) = 14.
  const int slow_rank = l.rank(1, 2 + 4 * 1);
  ASSERT_EQ(slow_rank, 14);
  const ExecutionResult base = run(s);
  const ExecutionResult slow = run(s, true, {SlowRank{slow_rank, 1.5, SimTime(), SimTime::max()}});
  ASSERT_EQ(slow.replicas.size(), 2u);
  EXPECT_EQ(slow.replicas[0].first, 0);  // the replica that runs like the rest
  EXPECT_EQ(slow.replicas[1].first, 1);  // the one holding the slow GPU
  const std::vector<StageResult>& fast = slow.replicas[0].stages;
  const std::vector<StageResult>& slowed = slow.replicas[1].stages;
  auto ratio = [](SimTime a, SimTime b) {
    return static_cast<double>(a.ps()) / static_cast<double>(b.ps());
  };
  // Its TP group (the runner of its four TP ranks) computes at its pace: 1.5 times as long,
  // give or take the SMs the gradient buckets take from the kernels that now run under them.
  EXPECT_NEAR(ratio(slowed[1].busy_compute, base.stages[1].busy_compute), 1.5, 0.02);
  // Its pipeline neighbours compute as before but wait longer for it.
  for (int st : {0, 2, 3}) {
    EXPECT_NEAR(ratio(slowed[st].busy_compute, base.stages[st].busy_compute), 1.0, 0.01) << st;
    EXPECT_GT(slowed[st].breakdown.bubble, base.stages[st].breakdown.bubble) << st;
  }
  // Its DP peers in the other replica compute as before; their gradient reduction waits for
  // the slow replica: exposed DP time grows, by at least half the slowed stage's extra compute
  // for the stage-1 peer.
  for (int st = 0; st < 4; ++st) {
    EXPECT_NEAR(ratio(fast[st].busy_compute, base.stages[st].busy_compute), 1.0, 0.01) << st;
    EXPECT_GT(fast[st].breakdown.dp_comm, base.stages[st].breakdown.dp_comm) << st;
  }
  const SimTime extra = slowed[1].busy_compute - base.stages[1].busy_compute;
  EXPECT_GT(fast[1].breakdown.dp_comm - base.stages[1].breakdown.dp_comm,
            SimTime::picoseconds(extra.ps() / 2));
  // The iteration waits for it, and every stage's breakdown still adds up to its end.
  EXPECT_GT(slow.iteration_time, base.iteration_time + SimTime::picoseconds(extra.ps() / 2));
  for (const ReplicaResult& r : slow.replicas) {
    for (const StageResult& st : r.stages) EXPECT_EQ(st.breakdown.total(), st.end);
    EXPECT_LE(r.end, slow.iteration_time);
  }
}

TEST(RankClasses, TheSlowWindowDecidesByTheKernelsStart) {
  const Scenario s = load(kGpt13b);
  const ExecutionResult base = run(s);
  const SimTime end = base.iteration_time;
  // Slow only after the iteration: nothing changes, to the picosecond.
  const ExecutionResult after = run(s, true, {SlowRank{14, 2.0, end, SimTime::max()}});
  EXPECT_EQ(after.iteration_time.ps(), base.iteration_time.ps());
  ASSERT_EQ(after.replicas.size(), 2u);
  for (const ReplicaResult& r : after.replicas) {
    for (size_t st = 0; st < r.stages.size(); ++st) {
      expect_same_stage(base.stages[st], r.stages[st], "stage " + std::to_string(st));
    }
  }
  // Slow for the first half: between the base and the whole iteration slowed.
  const SimTime half = SimTime::picoseconds(end.ps() / 2);
  const ExecutionResult first = run(s, true, {SlowRank{14, 2.0, SimTime(), half}});
  const ExecutionResult all = run(s, true, {SlowRank{14, 2.0, SimTime(), SimTime::max()}});
  EXPECT_GT(first.iteration_time, base.iteration_time);
  EXPECT_LT(first.iteration_time, all.iteration_time);
}

TEST(RankClasses, SlowRanksModelScalesOnlyItsRanksInsideTheirWindows) {
  const Scenario s = load("");
  const std::unique_ptr<ComputeModel> roofline =
      make_roofline_model(s.cluster.gpu, s.training.precision);
  const SimTime t1 = SimTime::microseconds(100), t2 = SimTime::microseconds(200);
  const std::unique_ptr<ComputeModel> m =
      make_slow_ranks_model(*roofline, {SlowRank{7, 2.0, SimTime(), SimTime::max()},
                                        SlowRank{3, 1.5, t1, t2}, SlowRank{7, 1.25, t1, t2}});
  EXPECT_EQ(m->distinct_ranks(), (std::vector<int>{3, 7}));
  const Op op = memory_op("norm", 64'000'000);
  const SimTime d = roofline->duration(op);
  ASSERT_GT(d, SimTime());
  EXPECT_EQ(m->duration(op), d);
  EXPECT_EQ(m->duration(op, RankContext{0, 0, t1}), d);
  EXPECT_EQ(m->duration(op, RankContext{3, 0, SimTime()}), d);
  EXPECT_EQ(m->duration(op, RankContext{3, 0, t1}), d.scaled(1.5));
  EXPECT_EQ(m->duration(op, RankContext{3, 0, t2}), d);  // `until` is outside the window
  EXPECT_EQ(m->duration(op, RankContext{7, 0, SimTime()}), d.scaled(2.0));
  EXPECT_EQ(m->duration(op, RankContext{7, 0, t1}), d.scaled(2.5));  // overlapping: the product
}

// Mixtral 8x7B with TP 2, DP 4, EP 8 and expert TP 1 on two DGX H100s: each EP group takes the
// stage's eight ranks, so every MoE layer's token dispatch runs across the four DP replicas.
const char* kMixtral = R"(
model: {preset: mixtral-8x7b, layers: 8}
cluster: {preset: dgx-h100, nodes: 2}
training: {seq_len: 4096, global_batch: 32, micro_batch: 1}
parallelism: {tp: 2, pp: 2, ep: 8, etp: 1, sequence_parallel: true}
)";

TEST(RankClasses, ExpertAllToAllsAcrossReplicas) {
  // Every replica apart: each all-to-all waits for the four classes and runs for them at once,
  // which is the folded run to the picosecond, on either network.
  for (const char* network : {"analytical", "flow"}) {
    SCOPED_TRACE(network);
    const Scenario s = load(kMixtral, {std::string("simulation.network=") + network});
    expect_apart_as_folded(s, 4);
  }
  // A slow GPU in replica 1 (stage 0): the replicas it shares EP groups with run apart too, and
  // wait for it inside every all-to-all, so their exposed EP time grows while their compute
  // does not.
  const Scenario s = load(kMixtral);
  const RankLayout l = RankLayout::of(s);
  expect_slowed_peers(s, l.rank(0, 1 * l.tp()), 1, 4,  // TP rank 0 of DP replica 1
                      [](const Breakdown& b) { return b.ep_comm; });
}

TEST(RankClasses, OverlappedExpertAllToAllsAcrossReplicas) {
  // With overlap_moe_comm the all-to-alls run on the communication stream, hidden behind the
  // other micro-batch's compute. Every replica apart: each one's stream waits for the four
  // classes' streams and runs it for them at once, which is the folded run to the picosecond.
  // DualPipe's overlapped chunks put them there too.
  for (const char* schedule : {"1f1b", "dualpipe"}) {
    for (const char* network : {"analytical", "flow"}) {
      SCOPED_TRACE(std::string(schedule) + " " + network);
      const bool dualpipe = std::string(schedule) == "dualpipe";
      const Scenario s = load(kMixtral, {std::string("simulation.network=") + network,
                                         std::string("parallelism.schedule=") + schedule,
                                         dualpipe ? "parallelism.overlap_moe_comm=false"
                                                  : "parallelism.overlap_moe_comm=true"});
      expect_apart_as_folded(s, 4);
    }
  }
  // A slow GPU in replica 1: its EP peers' all-to-alls wait for its stream, so the whole job
  // slows, their compute does not, and what they wait for shows as exposed EP time or pipeline
  // bubble, not as compute.
  const Scenario s = load(kMixtral, {"parallelism.overlap_moe_comm=true"});
  const RankLayout l = RankLayout::of(s);
  expect_slowed_peers(s, l.rank(0, 1 * l.tp()), 1, 4,
                      [](const Breakdown& b) { return b.ep_comm + b.bubble; });
}

// Mixtral with EP 4 over DP 16 on two DGX H100s: each EP group spans four replicas and each
// expert-DP group (EDP 4) four others, so the expert gradients' reduce-scatter and the expert
// parameters' all-gather run over part of the replicas.
const char* kMixtralEdp = R"(
model: {preset: mixtral-8x7b, layers: 4}
cluster: {preset: dgx-h100, nodes: 2}
training: {seq_len: 2048, global_batch: 32, micro_batch: 1}
parallelism: {tp: 1, pp: 1, ep: 4, etp: 1, distributed_optimizer: true,
              overlap_grad_reduce: true, overlap_param_gather: true}
)";

TEST(RankClasses, ReductionsOverPartOfTheReplicas) {
  const Scenario base_scenario = load(kMixtralEdp);
  const RankLayout layout = RankLayout::of(base_scenario);
  ASSERT_EQ(layout.dp(), 16);
  const Workload w = generate_workload(base_scenario);
  bool partial = false;
  for (const Step& st : w.stages[0].steps) {
    const bool collective = st.kind == StepKind::kCollective || st.kind == StepKind::kCommAsync;
    partial = partial || (collective && group_spans_part_of_replicas(layout, st.op.group));
  }
  ASSERT_TRUE(partial) << "no stage-level collective over part of the replicas";
  // Every replica apart: each such collective meets the four classes of its group only, which
  // is the folded run to the picosecond, on either network.
  for (const char* network : {"analytical", "flow"}) {
    SCOPED_TRACE(network);
    const Scenario s = load(kMixtralEdp, {std::string("simulation.network=") + network});
    expect_apart_as_folded(s, 16);
  }
  // A slow GPU: its EP groups and their expert-DP groups reach every replica, which all wait
  // for it; the job slows and the other replicas' compute does not.
  expect_slowed_peers(base_scenario, 5, 5, 16);
}

TEST(RankClasses, SlowRanksAreReadAndCheckedByTheLoader) {
  const Scenario s = load(kGpt13b, {"simulation.slow_ranks=[{rank: 14, factor: 1.3, from: 1ms, "
                                    "until: 2ms}, {rank: 0, factor: 2}]"});
  ASSERT_EQ(s.simulation.slow_ranks.size(), 2u);
  EXPECT_EQ(s.simulation.slow_ranks[0].rank, 14);
  EXPECT_DOUBLE_EQ(s.simulation.slow_ranks[0].factor, 1.3);
  EXPECT_EQ(s.simulation.slow_ranks[0].from, SimTime::microseconds(1000));
  EXPECT_EQ(s.simulation.slow_ranks[0].until, SimTime::microseconds(2000));
  EXPECT_EQ(s.simulation.slow_ranks[1].until, SimTime::max());
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"[{rank: 14}]", "simulation.slow_ranks[0].factor: missing key"},
      {"[{factor: 2}]", "simulation.slow_ranks[0].rank"},
      {"[{rank: 32, factor: 2}]", "expected a rank below the job's 32 GPUs"},
      {"[{rank: -1, factor: 2}]", "simulation.slow_ranks[0].rank"},
      {"[{rank: 1, factor: 0}]", "simulation.slow_ranks[0].factor"},
      {"[{rank: 1, factor: 1000}]", "simulation.slow_ranks[0].factor"},
      {"[{rank: 1, factor: 2, from: 2ms, until: 1ms}]", "expected a time after `from`"},
      {"[{rank: 1, factor: 2, colour: red}]", "colour"},
      {"[3]", "expected a map"},
      {"3", "expected a list"},
  };
  for (const auto& [value, error] : bad) {
    StatusOr<Scenario> r =
        load_scenario_text(kGpt13b, "test.yaml", {"simulation.slow_ranks=" + value});
    ASSERT_FALSE(r.ok()) << value;
    EXPECT_NE(r.status().message().find(error), std::string::npos)
        << value << ": " << r.status().message();
    EXPECT_NE(r.status().message().find("test.yaml"), std::string::npos) << r.status().message();
  }
}

}  // namespace
}  // namespace preflight
