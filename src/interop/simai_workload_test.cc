#include "interop/simai_workload.h"

#include <gtest/gtest.h>

#include <cmath>

#include "config/loader.h"

namespace preflight {
namespace {

std::string fixture(const std::string& name) {
  return std::string(PREFLIGHT_SOURCE_DIR) + "/tests/simai/" + name;
}

Scenario base(const std::vector<std::string>& sets = {}) {
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
  StatusOr<SimulationReport> r = simulate_simai(*w, base({"cluster.nodes=2", "parallelism.tp=8", "parallelism.pp=2", "parallelism.dp=1"}));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->scenario.parallelism.tp, 8);
  EXPECT_EQ(r->scenario.parallelism.dp, 2);
  EXPECT_GT(simai_columns(r->execution).exposed_tp_us, 0);
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
  StatusOr<SimaiWorkload> w =
      parse_simai_workload(write_simai_workload(e->workload), "export.txt");
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
  const double rel = round_trip({"parallelism.tp=1", "parallelism.pp=1", "parallelism.dp=16",
                                 "parallelism.sequence_parallel=false",
                                 "parallelism.overlap_grad_reduce=false"});
  EXPECT_LT(std::abs(rel), 1e-6);
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
  const std::vector<std::string> sets = {"parallelism.tp=1", "parallelism.pp=2",
                                         "parallelism.dp=8", "parallelism.sequence_parallel=false",
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
