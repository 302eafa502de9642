#include "interop/chakra_export.h"

#include <gtest/gtest.h>

#include "config/loader.h"
#include "interop/chakra_replay.h"
#include "parallel/rank_layout.h"
#include "simulate/simulate.h"

namespace preflight {
namespace {

// The replay does not slow compute under overlapped collectives (the SMs their channels take),
// so the round trips turn that off to compare the rest exactly.
Scenario scenario(std::vector<std::string> sets) {
  sets.insert(sets.begin(),
              {"model.preset=gpt3-1.7b", "model.layers=8", "cluster.nodes=2",
               "training.global_batch=32", "cluster.gpu.calibration.comm_sm_interference=0"});
  StatusOr<Scenario> s = load_scenario("", sets);
  EXPECT_TRUE(s.ok()) << s.status().message();
  return *s;
}

// Where a straggler's slowdown goes in a round trip: into its trace (the export), or into the
// replay (simulation.slow_ranks applied to the trace of a job that ran alike).
enum class Slowed { kInTrace, kInReplay };

// Export → bytes → import: the same nodes and dependencies; the replay's iteration time is the
// simulated one to the picosecond, and the compute of `rank` (on its stage of the DP replica
// that holds it) the simulated stage's.
void expect_round_trip(const Scenario& s, int rank = 0, Slowed slowed = Slowed::kInTrace) {
  Scenario exported = s;
  if (slowed == Slowed::kInReplay) exported.simulation.slow_ranks.clear();
  StatusOr<ChakraWorkload> w = export_chakra(exported);
  ASSERT_TRUE(w.ok()) << w.status().message();
  ASSERT_EQ(static_cast<int64_t>(w->ranks.size()), s.cluster.total_gpus());
  ChakraWorkload back;
  back.prefix = "round-trip";
  back.groups = w->groups;
  for (size_t r = 0; r < w->ranks.size(); ++r) {
    StatusOr<ChakraTrace> t =
        parse_chakra_trace(write_chakra_trace(w->ranks[r]), "rank" + std::to_string(r));
    ASSERT_TRUE(t.ok()) << t.status().message();
    ASSERT_EQ(t->nodes.size(), w->ranks[r].nodes.size());
    for (size_t i = 0; i < t->nodes.size(); ++i) {
      EXPECT_EQ(t->nodes[i].id, w->ranks[r].nodes[i].id);
      EXPECT_EQ(t->nodes[i].data_deps, w->ranks[r].nodes[i].data_deps);
    }
    back.ranks.push_back(std::move(*t));
  }
  StatusOr<SimulationReport> simulated = simulate(s);
  ASSERT_TRUE(simulated.ok()) << simulated.status().message();
  StatusOr<Scenario> c = chakra_scenario(static_cast<int>(back.ranks.size()), s);
  ASSERT_TRUE(c.ok());
  if (slowed == Slowed::kInTrace) c->simulation.slow_ranks.clear();
  StatusOr<ChakraReplayResult> replayed = replay_chakra(back, *c);
  ASSERT_TRUE(replayed.ok()) << replayed.status().message();
  EXPECT_EQ(replayed->iteration_time.ps(), simulated->execution.iteration_time.ps());
  // The breakdowns agree on what is not a matter of attribution: the critical rank's compute.
  const Breakdown& b = replayed->ranks[rank].breakdown;
  EXPECT_EQ(b.total(), replayed->ranks[rank].end);
  // `rank`'s stage in the DP replica (class) that holds it.
  const RankLayout layout = RankLayout::of(s);
  const int stage = rank / layout.stage_ranks();
  const int replica = rank % layout.stage_ranks() / (layout.tp() * layout.cp());
  const std::vector<StageResult>* stages = &simulated->execution.stages;
  for (const ReplicaResult& r : simulated->execution.replicas) {
    if (r.first == replica && !r.stages.empty()) stages = &r.stages;
  }
  const Breakdown& want = (*stages)[static_cast<size_t>(stage)].breakdown;
  EXPECT_EQ((b.compute + b.optimizer).ps(), (want.compute + want.optimizer).ps());
}

TEST(ChakraExport, RoundTrip1F1BWithTensorAndDataParallelism) {
  expect_round_trip(scenario({"parallelism.tp=2", "parallelism.pp=2", "parallelism.dp=4"}));
}

TEST(ChakraExport, RoundTripInterleavedWithOverlappedP2p) {
  expect_round_trip(
      scenario({"parallelism.tp=2", "parallelism.pp=2", "parallelism.dp=4", "parallelism.vpp=2",
                "parallelism.schedule=interleaved", "parallelism.overlap_p2p=true"}));
}

TEST(ChakraExport, RoundTripZeroBubbleAndTpCommOverlap) {
  expect_round_trip(scenario({"parallelism.tp=2", "parallelism.pp=2", "parallelism.dp=4",
                              "parallelism.schedule=zb_h1", "parallelism.sequence_parallel=true",
                              "parallelism.tp_comm_overlap=true"}));
}

TEST(ChakraExport, RoundTripRingAttentionAndZero3) {
  expect_round_trip(scenario({"parallelism.tp=2", "parallelism.pp=2", "parallelism.dp=2",
                              "parallelism.cp=2", "training.seq_len=8192"}));
  expect_round_trip(scenario(
      {"parallelism.tp=2", "parallelism.pp=1", "parallelism.dp=8", "parallelism.zero_stage=3"}));
}

TEST(ChakraExport, RoundTripActivationOffloading) {
  // The host copies on their own stream (a slow host link exposes them), with and without
  // ZeRO-3's per-layer gathers around them.
  expect_round_trip(scenario({"parallelism.tp=2", "parallelism.pp=1", "parallelism.dp=8",
                              "parallelism.offload_layers=4", "cluster.host_bandwidth=2GB/s"}));
  expect_round_trip(scenario({"parallelism.tp=2", "parallelism.pp=1", "parallelism.dp=8",
                              "parallelism.zero_stage=3", "parallelism.offload_layers=4"}));
}

TEST(ChakraExport, RoundTripMoeWithExpertParallelismAndSkewedRouting) {
  expect_round_trip(scenario({"model.preset=mixtral-8x7b", "cluster.preset=dgx-h100",
                              "parallelism.tp=2", "parallelism.pp=2", "parallelism.dp=4",
                              "parallelism.ep=4", "parallelism.etp=1", "model.moe.routing=zipf"}));
}

TEST(ChakraExport, RoundTripOnTheFlowNetwork) {
  // Every cross-node collective and send goes through the fabric in both runs, started at the
  // same instants: the max-min shares, and so the times, are the same.
  expect_round_trip(scenario(
      {"parallelism.tp=2", "parallelism.pp=2", "parallelism.dp=4", "simulation.network=flow"}));
  expect_round_trip(scenario(
      {"parallelism.tp=8", "parallelism.pp=2", "parallelism.dp=1", "simulation.network=flow"}));
}

// A straggler: its trace carries its slowed kernels, and the replay runs every rank apart,
// where the simulation moves a replica's TP (and CP) ranks as one runner at the slowest one's
// pace. The two agree to the picosecond: every rank of the slowed GPU's TP group waits for it at
// each of their collectives, so the group's timeline is the slow GPU's, and the fast members'
// gradient reductions, which could start early, meet the slow replica's members of other TP
// ranks only through the same collectives. Slowed TP rank 1 of DP replica 2 on stage 0, on a
// fast rank's DP group as well as on its own.
TEST(ChakraExport, RoundTripWithAStragglerInsideItsTensorParallelGroup) {
  expect_round_trip(scenario({"parallelism.tp=2", "parallelism.pp=2", "parallelism.dp=4",
                              "simulation.slow_ranks=[{rank: 5, factor: 1.5}]"}),
                    5);
  expect_round_trip(scenario({"parallelism.tp=4", "parallelism.pp=1", "parallelism.dp=4",
                              "parallelism.sequence_parallel=true",
                              "simulation.slow_ranks=[{rank: 6, factor: 1.3}]"}),
                    6);
  expect_round_trip(
      scenario({"parallelism.tp=2", "parallelism.pp=1", "parallelism.dp=4", "parallelism.cp=2",
                "training.seq_len=8192", "simulation.slow_ranks=[{rank: 3, factor: 2}]"}),
      3);
}

// The same with the TP collectives overlapped on their own stream (zero-bubble schedule), with
// expert all-to-alls across replicas under a skewed router, on the flow network, with two
// stragglers on two stages of an interleaved pipeline with overlapped sends, and under ZeRO-3's
// per-layer gathers.
TEST(ChakraExport, RoundTripWithStragglersAcrossSchedulesNetworksAndExperts) {
  expect_round_trip(scenario({"parallelism.tp=2", "parallelism.pp=2", "parallelism.dp=4",
                              "parallelism.schedule=zb_h1", "parallelism.sequence_parallel=true",
                              "parallelism.tp_comm_overlap=true",
                              "simulation.slow_ranks=[{rank: 5, factor: 1.5}]"}),
                    5);
  expect_round_trip(
      scenario({"model.preset=mixtral-8x7b", "cluster.preset=dgx-h100", "parallelism.tp=2",
                "parallelism.pp=2", "parallelism.dp=4", "parallelism.ep=4", "parallelism.etp=1",
                "model.moe.routing=zipf", "simulation.slow_ranks=[{rank: 3, factor: 1.5}]"}),
      3);
  expect_round_trip(
      scenario({"parallelism.tp=2", "parallelism.pp=2", "parallelism.dp=4",
                "simulation.network=flow", "simulation.slow_ranks=[{rank: 5, factor: 1.5}]"}),
      5);
  expect_round_trip(
      scenario({"parallelism.tp=2", "parallelism.pp=2", "parallelism.dp=4", "parallelism.vpp=2",
                "parallelism.schedule=interleaved", "parallelism.overlap_p2p=true",
                "simulation.slow_ranks=[{rank: 9, factor: 1.5}, {rank: 2, factor: 1.2}]"}),
      9);
  expect_round_trip(
      scenario({"parallelism.tp=2", "parallelism.pp=1", "parallelism.dp=8",
                "parallelism.zero_stage=3", "simulation.slow_ranks=[{rank: 1, factor: 1.5}]"}),
      1);
}

// The other way round: the traces of a job whose GPUs ran alike, replayed with the straggler
// (simulation.slow_ranks slows its GPU nodes at their start), meet the simulation of the job with
// it to the picosecond.
TEST(ChakraExport, ReplayWithAStragglerMeetsTheSimulationWithIt) {
  expect_round_trip(scenario({"parallelism.tp=2", "parallelism.pp=2", "parallelism.dp=4",
                              "simulation.slow_ranks=[{rank: 5, factor: 1.5}]"}),
                    5, Slowed::kInReplay);
  expect_round_trip(
      scenario({"model.preset=mixtral-8x7b", "cluster.preset=dgx-h100", "parallelism.tp=2",
                "parallelism.pp=2", "parallelism.dp=4", "parallelism.ep=4", "parallelism.etp=1",
                "model.moe.routing=zipf", "simulation.slow_ranks=[{rank: 3, factor: 1.5}]"}),
      3, Slowed::kInReplay);
}

// With windows, the replay judges each GPU's kernel at its own start, where the simulation runs a
// replica's TP group as one runner whose kernels take the slowest member's time at their common
// start. With one slowed member the two agree to the picosecond; with both members of a TP group
// slowed in windows that alternate, the fold pays each kernel's worse member where the members,
// apart, each pay their own window: 0.06 % slower here with overlapping windows, 0.2 % with
// windows that alternate (the same job measured, GPT-3 1.7B cut to 8 layers, TP 2, PP 2, DP 4).
TEST(ChakraExport, ReplayWithStragglerWindowsIsCloseToTheFoldedSimulation) {
  const std::vector<std::string> job = {"parallelism.tp=2", "parallelism.pp=2", "parallelism.dp=4"};
  auto with = [&](const std::string& slow) {
    std::vector<std::string> sets = job;
    if (!slow.empty()) sets.push_back("simulation.slow_ranks=[" + slow + "]");
    return scenario(sets);
  };
  const Scenario plain = with("");
  StatusOr<ChakraWorkload> w = export_chakra(plain);
  ASSERT_TRUE(w.ok()) << w.status().message();
  auto simulated = [](const Scenario& s) {
    StatusOr<SimulationReport> r = simulate(s);
    EXPECT_TRUE(r.ok()) << r.status().message();
    return r.ok() ? r->execution.iteration_time : SimTime();
  };
  auto replayed = [&](const Scenario& s) {
    StatusOr<Scenario> c = chakra_scenario(static_cast<int>(w->ranks.size()), s);
    EXPECT_TRUE(c.ok());
    StatusOr<ChakraReplayResult> r = replay_chakra(*w, *c);
    EXPECT_TRUE(r.ok()) << r.status().message();
    return r.ok() ? r->iteration_time : SimTime();
  };
  const SimTime base = simulated(plain);
  EXPECT_EQ(replayed(plain), base);
  // One member slowed within a window: the same to the picosecond.
  const Scenario one = with("{rank: 5, factor: 1.5, from: 50ms, until: 150ms}");
  EXPECT_GT(simulated(one), base);
  EXPECT_EQ(replayed(one), simulated(one));
  // Both members of GPU 5's TP group, in alternating windows: close, the fold the slower.
  const Scenario both = with(
      "{rank: 4, factor: 3, from: 0ms, until: 30ms}, {rank: 5, factor: 3, from: 30ms, until: "
      "60ms}");
  const SimTime folded = simulated(both);
  const SimTime apart = replayed(both);
  EXPECT_GT(apart, base);
  EXPECT_GT(folded, apart);
  EXPECT_NEAR(folded.to_seconds() / apart.to_seconds(), 1.0, 0.005);
}

TEST(ChakraExport, RefusesAStragglerWindowATraceCannotHold) {
  StatusOr<ChakraWorkload> w = export_chakra(scenario(
      {"parallelism.tp=2", "parallelism.pp=2", "parallelism.dp=4",
       "simulation.slow_ranks=[{rank: 5, factor: 1.5}, {rank: 6, factor: 2, from: 1ms}]"}));
  ASSERT_FALSE(w.ok());
  EXPECT_NE(w.status().message().find("simulation.slow_ranks[1]: a trace holds one duration"),
            std::string::npos)
      << w.status().message();
}

TEST(ChakraExport, GroupsFollowMegatronRankOrder) {
  const Scenario s = scenario({"parallelism.tp=2", "parallelism.pp=2", "parallelism.dp=4"});
  StatusOr<ChakraWorkload> w = export_chakra(s);
  ASSERT_TRUE(w.ok());
  // Rank 5 = tp 1, dp 2, stage 0: its TP group is {4, 5}, its DP group {1, 3, 5, 7}; it sends
  // activations to rank 13 (stage 1).
  bool tp = false, dp = false, send = false;
  for (const ChakraNode& n : w->ranks[5].nodes) {
    if (n.type == ChakraNodeType::kColl) {
      const std::vector<int>& m = w->groups.at(n.pg_name);
      tp = tp || m == std::vector<int>{4, 5};
      dp = dp || m == std::vector<int>{1, 3, 5, 7};
    }
    send = send || (n.type == ChakraNodeType::kSend && n.comm_dst == 13);
  }
  EXPECT_TRUE(tp);
  EXPECT_TRUE(dp);
  EXPECT_TRUE(send);
}

TEST(ChakraExport, RefusesExportsOverTheNodeLimit) {
  StatusOr<ChakraWorkload> w =
      export_chakra(scenario({"parallelism.tp=2", "parallelism.pp=2", "parallelism.dp=4"}), 1000);
  ASSERT_FALSE(w.ok());
  EXPECT_NE(w.status().message().find("over the limit of 1000 (--max-nodes)"), std::string::npos)
      << w.status().message();
}

}  // namespace
}  // namespace preflight
