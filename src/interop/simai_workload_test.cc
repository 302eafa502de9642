#include "interop/simai_workload.h"

#include <gtest/gtest.h>

#include <cmath>

#include "config/loader.h"

namespace preflight {
namespace {

std::string fixture(const std::string& name) {
  return std::string(PREFLIGHT_SOURCE_DIR) + "/tests/simai/" + name;
}

// A modern stack's host cost of 10 us per launch: the round trips compare the format, and SimAI
// files merge each stretch of kernels into one line, so a host-bound native run would not match.
Scenario base(const std::vector<std::string>& extra = {}) {
  std::vector<std::string> sets = {"training.stack.launch_overhead=10us"};
  sets.insert(sets.end(), extra.begin(), extra.end());
  StatusOr<Scenario> s = load_scenario("", sets);
  EXPECT_TRUE(s.ok()) << s.status().message();
  return *s;
}

TEST(SimaiWorkload, RepeatedLayersBecomeGaMicrobatchesOnEveryStage) {
  StatusOr<SimaiWorkload> w = load_simai_workload(fixture("analytical_9216.txt"));
  ASSERT_TRUE(w.ok());
  StatusOr<Workload> wl = simai_to_workload(*w);
  ASSERT_TRUE(wl.ok()) << wl.status().message();
  EXPECT_EQ(wl->microbatches, 24);
  EXPECT_EQ(wl->stages.size(), 12u);
  // fwd: attention compute + TP all-gather, MoE compute (1 ns) + EP all-to-all.
  EXPECT_EQ(wl->blocks[0].ops.size(), 4u);
  EXPECT_EQ(wl->blocks[0].ops[0].fixed_time.ps(), 1750840000);
  EXPECT_EQ(wl->blocks[0].ops[3].group, GroupKind::kExpert);
}

// An AICB file in miniature with the quirks of SimAI's 9,216-GPU MoE example: leading lines
// where grad_param_compute keeps its time in the input-gradient column and embedding_grads has
// an input-gradient all-reduce, ga = 3 copies of the micro-batch lines whose first copy times
// the embedding's weight gradient differently (9 ms against 0.4 ms), and two per-iteration
// lines after the last copy.
constexpr const char* kAicbQuirks =
    "HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 2 ep: 2 pp: 2 vpp: 4 ga: 3 "
    "all_gpus: 16 checkpoints: 0 checkpoint_initiates: 0 pp_comm 1048576\n"
    "15\n"
    "grad_gather -1 1 NONE 0 1 NONE 0 1 ALLGATHER 1000000 100\n"
    "grad_param_comm -1 1 NONE 0 1 NONE 0 1 REDUCESCATTER 2000000 100\n"
    "grad_param_compute -1 1 NONE 0 3000000 NONE 0 1 NONE 0 100\n"
    "embedding_grads -1 1 NONE 0 1 ALLREDUCE 1048576 1 NONE 0 100\n"
    "embedding_layer -1 500000 ALLREDUCE 1048576 1 NONE 0 9000000 NONE 0 100\n"
    "attention -1 1000000 ALLGATHER 1048576 500000 REDUCESCATTER 1048576 500000 NONE 0 100\n"
    "mlp -1 1 ALLTOALL_EP 2097152 1 ALLTOALL_EP 2097152 1 NONE 0 100\n"
    "embedding_layer -1 500000 ALLREDUCE 1048576 1 NONE 0 400000 NONE 0 100\n"
    "attention -1 1000000 ALLGATHER 1048576 500000 REDUCESCATTER 1048576 500000 NONE 0 100\n"
    "mlp -1 1 ALLTOALL_EP 2097152 1 ALLTOALL_EP 2097152 1 NONE 0 100\n"
    "embedding_layer -1 500000 ALLREDUCE 1048576 1 NONE 0 400000 NONE 0 100\n"
    "attention -1 1000000 ALLGATHER 1048576 500000 REDUCESCATTER 1048576 500000 NONE 0 100\n"
    "mlp -1 1 ALLTOALL_EP 2097152 1 ALLTOALL_EP 2097152 1 NONE 0 100\n"
    "cross_entropy1 -1 0 ALLREDUCE 16384 0 NONE 0 0 NONE 0 100\n"
    "optimizer1 -1 0 ALLREDUCE 4 0 NONE 0 0 NONE 0 100\n";

const Block* find_block(const Workload& w, const std::string& name) {
  for (const Block& b : w.blocks) {
    if (b.name == name) return &b;
  }
  return nullptr;
}

TEST(SimaiWorkload, AicbCopiesWithTheirQuirksBecomeGaMicrobatches) {
  StatusOr<SimaiWorkload> w = parse_simai_workload(kAicbQuirks, "quirks.txt");
  ASSERT_TRUE(w.ok()) << w.status().message();
  StatusOr<Workload> wl = simai_to_workload(*w);
  ASSERT_TRUE(wl.ok()) << wl.status().message();
  // Oracle: lines 5-13 are 3 copies of 3 lines (same names and collectives), so 3 micro-batches
  // of one copy, not one micro-batch of 11 lines.
  EXPECT_EQ(wl->microbatches, 3);
  // Forward: embedding 0.5 ms + TP all-reduce, attention 1 ms + all-gather, mlp 1 ns + EP a2a.
  ASSERT_EQ(wl->blocks[0].ops.size(), 6u);
  EXPECT_EQ(wl->blocks[0].ops[0].fixed_time.ps(), 500'000'000);
  EXPECT_EQ(wl->blocks[0].ops[5].group, GroupKind::kExpert);
  // Backward, in reverse: the embedding's weight gradient last, at the later copies' 0.4 ms.
  ASSERT_FALSE(wl->blocks[1].ops.empty());
  EXPECT_EQ(wl->blocks[1].ops.back().name, "embedding_layer.wg");
  EXPECT_EQ(wl->blocks[1].ops.back().fixed_time.ps(), 400'000'000);
  // The trailing lines run once: their two TP all-reduces, after the last micro-batch's forward.
  const Block* tail = find_block(*wl, "simai.tail.fwd");
  ASSERT_NE(tail, nullptr);
  EXPECT_EQ(tail->ops.size(), 2u);
  // Leading lines: grad_param_compute's 3 ms (input-gradient column) is an iteration-level
  // compute that waits for the gradients; embedding_grads a blocking TP all-reduce.
  const Block* gpc = find_block(*wl, "grad_param_compute");
  ASSERT_NE(gpc, nullptr);
  ASSERT_EQ(gpc->ops.size(), 2u);  // and the weight-gradient column's 1 ns
  EXPECT_EQ(gpc->ops[0].fixed_time.ps(), 3'000'000'000);
  EXPECT_TRUE(gpc->ops[0].wait_comm);
  const Block* eg = find_block(*wl, "embedding_grads");
  ASSERT_NE(eg, nullptr);
  ASSERT_EQ(eg->ops.size(), 2u);
  EXPECT_EQ(eg->ops[0].group, GroupKind::kTensor);
  EXPECT_EQ(eg->ops[0].type, OpType::kCollective);
  ASSERT_EQ(wl->stages.size(), 2u);
  for (const Program& prog : wl->stages) {
    int tail_runs = 0, fwd_runs = 0;
    for (const Step& st : prog.steps) {
      if (st.kind != StepKind::kRun) continue;
      if (st.block == 0) ++fwd_runs;
      if (wl->blocks[st.block].name == "simai.tail.fwd") {
        ++tail_runs;
        EXPECT_EQ(st.microbatch, 2);
      }
    }
    EXPECT_EQ(fwd_runs, 3);
    EXPECT_EQ(tail_runs, 1);
  }
  StatusOr<Scenario> s = simai_scenario(*w, base({"cluster.preset=dgx-h100"}));
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->training.global_batch, 3 * 4);  // ga · dp, dp = 16 / (tp 2 · pp 2)
}

// SimAI's README example (tests/simai/workload_9216_moe.txt, unchanged): 24 copies of 74 lines
// between 6 leading and 7 trailing lines. As 24 micro-batches in 1F1B over 12 stages the
// bubble is about (pp − 1) micro-batch times, 11 × (7.4 s of stage work / 24) ≈ 3 s; read as
// one long micro-batch it was 67 s of a 74.5 s iteration. SimAI's analytical model: 7.55 s
// (all communication exposed, a bubble of (pp − 1)/(ga·vpp) of the stage's work).
TEST(SimaiWorkload, AicbMoeExampleRunsGaMicrobatchesInOneFOneB) {
  StatusOr<SimaiWorkload> w = load_simai_workload(fixture("workload_9216_moe.txt"));
  ASSERT_TRUE(w.ok()) << w.status().message();
  StatusOr<SimulationReport> r = simulate_simai(*w, base({"cluster.preset=dgx-h100"}));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->microbatches, 24);
  const SimaiColumns c = simai_columns(r->execution);
  EXPECT_GT(c.bubble_us, 2.0e6);
  EXPECT_LT(c.bubble_us, 3.5e6);
  EXPECT_GT(r->iteration_time_s, 9.5);
  EXPECT_LT(r->iteration_time_s, 11.0);
}

TEST(SimaiWorkload, AnalyticalExampleRunsEndToEnd) {
  StatusOr<SimaiWorkload> w = load_simai_workload(fixture("analytical_9216.txt"));
  ASSERT_TRUE(w.ok());
  StatusOr<SimulationReport> r = simulate_simai(*w, base({"cluster.preset=dgx-h100"}));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->scenario.cluster.total_gpus(), 9216);
  EXPECT_EQ(r->scenario.parallelism.dp, 384);
  // At least the compute of 24 micro-batches of stage 0: 24 · (1.75 + 0.875 + 0.875) ms.
  EXPECT_GT(r->iteration_time_s, 24 * 3.5e-3);
  const SimaiColumns c = simai_columns(r->execution);
  EXPECT_GT(c.exposed_ep_us, 0);
  EXPECT_GT(c.exposed_dp_us, 0);
  EXPECT_GT(c.bubble_us, 0);
  EXPECT_NEAR(c.total_us, r->iteration_time_s * 1e6, 1);
}

TEST(SimaiWorkload, MicroAllReduceRunsEndToEnd) {
  StatusOr<SimaiWorkload> w = load_simai_workload(fixture("micro_allreduce.txt"));
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(w->policy, "MICRO");
  StatusOr<SimulationReport> r =
      simulate_simai(*w, base({"cluster.preset=dgx-h100", "cluster.nodes=2", "parallelism.tp=8",
                               "parallelism.pp=2", "parallelism.dp=1"}));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->scenario.parallelism.dp, 16);  // tp 1: the DP group is all 16 GPUs
  const SimaiColumns c = simai_columns(r->execution);
  // Three blocking all-reduces: 64 MiB over 2 nodes takes well over 100 us.
  EXPECT_GT(c.exposed_dp_us, 100);
  EXPECT_LT(c.compute_us, 50);  // 1 ns kernels, and the host launching them
}

TEST(SimaiWorkload, DenseTp8ExampleWithoutGaOrGpusRuns) {
  StatusOr<SimaiWorkload> w = load_simai_workload(fixture("dense_tp8.txt"));
  ASSERT_TRUE(w.ok()) << w.status().message();
  EXPECT_EQ(w->all_gpus, 0);  // from the scenario's cluster
  StatusOr<SimulationReport> r = simulate_simai(
      *w, base({"cluster.nodes=2", "parallelism.tp=8", "parallelism.pp=2", "parallelism.dp=1"}));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->scenario.parallelism.tp, 8);
  EXPECT_EQ(r->scenario.parallelism.dp, 2);
  EXPECT_GT(simai_columns(r->execution).exposed_tp_us, 0);
}

// AICB's GPT-13B sample (TP 8): grad_norm's weight-gradient column reduce-scatters 6.5 GB
// (4 B × 13B/8 parameters) over DP 2 after the last backward, and nothing waits for it. The
// iteration ends when it does: that wait is exposed DP communication, not host time (with no
// launch overhead the host adds nothing).
TEST(SimaiWorkload, WaitForTheGradientReduceScatterIsExposedDpComm) {
  StatusOr<SimaiWorkload> w = load_simai_workload(fixture("dense_tp8.txt"));
  ASSERT_TRUE(w.ok()) << w.status().message();
  StatusOr<SimulationReport> r = simulate_simai(
      *w,
      base({"cluster.preset=dgx-h100", "cluster.nodes=2", "parallelism.tp=8", "parallelism.pp=2",
            "parallelism.dp=1", "cluster.gpu.calibration.launch_overhead=0us"}));
  ASSERT_TRUE(r.ok()) << r.status().message();
  const Breakdown& b = r->execution.stages[r->execution.critical_stage].breakdown;
  EXPECT_EQ(b.host_overhead, SimTime::zero());
  // At least the reduce-scatter's bandwidth term, (n−1)/n · S / busBw with busBw ≤ the node's
  // 8 × 50 GB/s of NICs: 0.5 × 6.5 GB / 400 GB/s = 8.1 ms.
  EXPECT_GT(b.dp_comm.to_seconds(), 8.1e-3);
  EXPECT_GT(simai_columns(r->execution).exposed_dp_us, 8.1e3);
}

// Export → import of a generated workload: (imported − native) / native iteration time.
double round_trip(const std::vector<std::string>& sets, int stage = 0) {
  std::vector<std::string> all = {"model.preset=llama3-8b", "cluster.preset=dgx-h100",
                                  "cluster.nodes=2", "training.global_batch=32"};
  all.insert(all.end(), sets.begin(), sets.end());
  const Scenario s = base(all);
  StatusOr<SimulationReport> native = simulate(s);
  EXPECT_TRUE(native.ok()) << native.status().message();
  StatusOr<SimaiExport> e = export_simai(s, stage);
  EXPECT_TRUE(e.ok()) << e.status().message();
  if (!native.ok() || !e.ok()) return 1e9;
  EXPECT_TRUE(e->dropped.empty()) << e->dropped.front();
  StatusOr<SimaiWorkload> w = parse_simai_workload(write_simai_workload(e->workload), "export.txt");
  EXPECT_TRUE(w.ok()) << w.status().message();
  if (!w.ok()) return 1e9;
  StatusOr<SimulationReport> imported = simulate_simai(*w, s);
  EXPECT_TRUE(imported.ok()) << imported.status().message();
  if (!imported.ok()) return 1e9;
  EXPECT_EQ(imported->microbatches, native->microbatches);
  return (imported->iteration_time_s - native->iteration_time_s) / native->iteration_time_s;
}

// Without overlap the format cannot express, the round trip is exact but for rounding each
// stretch of compute between two collectives to 1 ns (< 1e-6 of an iteration here).
TEST(SimaiWorkload, RoundTripWithoutOverlapIsExact) {
  const double rel =
      round_trip({"parallelism.tp=1", "parallelism.pp=1", "parallelism.dp=16",
                  "parallelism.sequence_parallel=false", "parallelism.overlap_grad_reduce=false"});
  EXPECT_LT(std::abs(rel), 1e-6);
}

// A straggler (simulation.slow_ranks) slows the file's compute times on its GPU as it slows the
// generated kernels: the round trip stays exact, and the import does slow (GPU 3 at 1.5x).
TEST(SimaiWorkload, RoundTripWithAStragglerIsExact) {
  const std::vector<std::string> job = {"parallelism.tp=1", "parallelism.pp=1", "parallelism.dp=16",
                                        "parallelism.sequence_parallel=false",
                                        "parallelism.overlap_grad_reduce=false"};
  std::vector<std::string> slowed = job;
  slowed.push_back("simulation.slow_ranks=[{rank: 3, factor: 1.5}]");
  EXPECT_LT(std::abs(round_trip(slowed)), 1e-6);
  StatusOr<SimaiExport> e =
      export_simai(base({"model.preset=llama3-8b", "cluster.preset=dgx-h100", "cluster.nodes=2",
                         "training.global_batch=32", job[0], job[1], job[2], job[3], job[4]}),
                   0);
  ASSERT_TRUE(e.ok()) << e.status().message();
  auto imported = [&](const std::vector<std::string>& extra) {
    std::vector<std::string> all = {"model.preset=llama3-8b", "cluster.preset=dgx-h100",
                                    "cluster.nodes=2", "training.global_batch=32"};
    all.insert(all.end(), job.begin(), job.end());
    all.insert(all.end(), extra.begin(), extra.end());
    StatusOr<SimulationReport> r = simulate_simai(e->workload, base(all));
    EXPECT_TRUE(r.ok()) << r.status().message();
    return r.ok() ? r->iteration_time_s : 0.0;
  };
  const double plain = imported({});
  const double slow = imported({"simulation.slow_ranks=[{rank: 3, factor: 1.5}]"});
  // Compute is most of this iteration: at least a third of the 50 % shows.
  EXPECT_GT(slow, plain * 1.15);
  EXPECT_LT(slow, plain * 1.5 + 1e-9);
}

// SimAI blocks on forward and input-gradient comm and reduces gradients after the backward:
// Megatron's TP comm overlapped with the weight-gradient GEMM and the gradient buckets
// overlapped with the last backward become exposed (about +10 % here).
TEST(SimaiWorkload, RoundTripOfMegatronOverlapIsSlower) {
  const double rel = round_trip({"parallelism.tp=4", "parallelism.pp=1", "parallelism.dp=4"});
  EXPECT_GT(rel, 0);
  EXPECT_LT(rel, 0.15);
}

// One file stands for every stage: the last stage (with the output layer and the loss) bounds
// the pipeline from above, stage 0 from below.
TEST(SimaiWorkload, RoundTripOfAPipelineIsBoundedByItsStages) {
  const std::vector<std::string> sets = {"parallelism.tp=1", "parallelism.pp=2", "parallelism.dp=8",
                                         "parallelism.sequence_parallel=false",
                                         "parallelism.overlap_grad_reduce=false"};
  const double first = round_trip(sets, 0);
  const double last = round_trip(sets, 1);
  EXPECT_LT(first, 0);
  EXPECT_GT(last, 0);
  EXPECT_LT(last, 0.05);
}

TEST(SimaiWorkload, HeaderThatDoesNotFitTheClusterIsAnError) {
  StatusOr<SimaiWorkload> w = parse_simai_workload(
      "HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 8 pp: 3 all_gpus: 16\n0\n",
      "h.txt");
  ASSERT_TRUE(w.ok());
  StatusOr<Scenario> s = simai_scenario(*w, base());
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("tp·pp"), std::string::npos);
}

}  // namespace
}  // namespace preflight
