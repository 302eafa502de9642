#include "report/compare.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "config/loader.h"
#include "report/report.h"

namespace preflight {
namespace {

// GPT-3 1.7B on one DGX A100 node (8 GPUs), TP `tp`, DP 8 / tp.
SimulationReport one_node(int tp) {
  StatusOr<Scenario> s = load_scenario_text(
      "", "",
      {"model.preset=gpt3-1.7b", "cluster.preset=dgx-a100", "cluster.nodes=1",
       "parallelism.tp=" + std::to_string(tp), "parallelism.pp=1", "parallelism.dp=auto",
       "parallelism.vpp=1", "parallelism.schedule=1f1b", "training.global_batch=16",
       "training.seq_len=2048", "training.micro_batch=1"});
  EXPECT_TRUE(s.ok()) << s.status().message();
  StatusOr<SimulationReport> r = simulate(*s);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return *r;
}

const ComparisonRow& row(const std::vector<ComparisonRow>& rows, const std::string& key) {
  for (const ComparisonRow& r : rows) {
    if (r.key == key) return r;
  }
  ADD_FAILURE() << "no row " << key;
  return rows.front();
}

class CompareTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    tp1_ = new SimulationReport(one_node(1));
    tp2_ = new SimulationReport(one_node(2));
  }
  static void TearDownTestSuite() {
    delete tp1_;
    delete tp2_;
  }
  static SimulationReport* tp1_;
  static SimulationReport* tp2_;
};
SimulationReport* CompareTest::tp1_ = nullptr;
SimulationReport* CompareTest::tp2_ = nullptr;

TEST_F(CompareTest, RowsHoldBothSidesTheirDifferenceAndRatio) {
  const SimulationReport& a = *tp1_;
  const SimulationReport& b = *tp2_;
  const std::vector<ComparisonRow> rows = compare_reports(a, b);
  ASSERT_EQ(rows.size(), 16u);  // gpus, 4 headline figures, 10 breakdown categories, memory
  const ComparisonRow& t = row(rows, "iteration_time_s");
  EXPECT_EQ(t.a, a.iteration_time_s);
  EXPECT_EQ(t.b, b.iteration_time_s);
  EXPECT_DOUBLE_EQ(t.delta(), b.iteration_time_s - a.iteration_time_s);
  EXPECT_DOUBLE_EQ(t.ratio(), b.iteration_time_s / a.iteration_time_s);
  EXPECT_DOUBLE_EQ(row(rows, "tokens_per_s").delta(), b.tokens_per_s - a.tokens_per_s);
  EXPECT_DOUBLE_EQ(row(rows, "mfu").ratio(), b.mfu / a.mfu);
  EXPECT_DOUBLE_EQ(row(rows, "tflops_per_gpu").delta(), b.tflops_per_gpu - a.tflops_per_gpu);
  // Both on the same 8 GPUs.
  EXPECT_EQ(row(rows, "gpus").a, 8);
  EXPECT_EQ(row(rows, "gpus").delta(), 0);
  EXPECT_EQ(row(rows, "gpus").ratio(), 1);
  // TP 1 has no TP communication, TP 2 has: B / A is undefined.
  const ComparisonRow& tp = row(rows, "breakdown.tp_comm_s");
  EXPECT_EQ(tp.a, 0);
  EXPECT_GT(tp.b, 0);
  EXPECT_DOUBLE_EQ(tp.delta(), tp.b);
  EXPECT_TRUE(std::isnan(tp.ratio()));
  // The compute of each side's critical stage.
  const Breakdown& ba = a.execution.stages[a.execution.critical_stage].breakdown;
  const Breakdown& bb = b.execution.stages[b.execution.critical_stage].breakdown;
  EXPECT_DOUBLE_EQ(row(rows, "breakdown.compute_s").delta(),
                   bb.compute.to_seconds() - ba.compute.to_seconds());
  // TP 2 halves the weights and optimizer states per GPU: less peak memory.
  const ComparisonRow& mem = row(rows, "peak_memory_bytes");
  EXPECT_EQ(mem.a, a.memory.stages[a.memory.limiting_stage].peak.count());
  EXPECT_LT(mem.delta(), 0);
}

TEST_F(CompareTest, JsonHoldsBothReportsAndTheDeltas) {
  const SimulationReport& a = *tp1_;
  const SimulationReport& b = *tp2_;
  const nlohmann::json j = comparison_to_json(a, b);
  EXPECT_EQ(j["a"], report_to_json(a));
  EXPECT_EQ(j["b"], report_to_json(b));
  const nlohmann::json& d = j["delta"];
  EXPECT_DOUBLE_EQ(
      d["iteration_time_s"].get<double>(),
      j["b"]["iteration_time_s"].get<double>() - j["a"]["iteration_time_s"].get<double>());
  for (const char* k : {"compute_s", "tp_comm_s", "dp_comm_s", "bubble_s"}) {
    EXPECT_DOUBLE_EQ(d["breakdown"][k].get<double>(),
                     j["b"]["breakdown"][k].get<double>() - j["a"]["breakdown"][k].get<double>())
        << k;
  }
  EXPECT_TRUE(d["gpus"].is_number_integer());
  EXPECT_EQ(d["gpus"], 0);
  EXPECT_TRUE(d["peak_memory_bytes"].is_number_integer());
  EXPECT_DOUBLE_EQ(j["ratio"]["tokens_per_s"].get<double>(), b.tokens_per_s / a.tokens_per_s);
  EXPECT_TRUE(j["ratio"]["breakdown"]["tp_comm_s"].is_null());  // A has none
}

TEST_F(CompareTest, TableShowsBothStrategiesAndSignedDeltas) {
  const std::string t = format_comparison(*tp1_, *tp2_, "default + tp=1", "default + tp=2");
  EXPECT_NE(t.find("A  default + tp=1\n"), std::string::npos) << t;
  EXPECT_NE(t.find("TP1 PP1 DP8 mb1"), std::string::npos) << t;
  EXPECT_NE(t.find("TP2 PP1 DP4 mb1"), std::string::npos) << t;
  char delta[32];
  std::snprintf(delta, sizeof delta, "%+.3f s", tp2_->iteration_time_s - tp1_->iteration_time_s);
  EXPECT_NE(t.find(delta), std::string::npos) << t;
  for (const char* label : {"iteration time", "tokens/s", "MFU", "TFLOP/s per GPU",
                            "exposed TP comm", "pipeline bubble", "peak memory per GPU"}) {
    EXPECT_NE(t.find(label), std::string::npos) << label;
  }
  // No EP or CP on either side: no rows for them.
  EXPECT_EQ(t.find("exposed EP comm"), std::string::npos) << t;
  EXPECT_EQ(t.find("DOES NOT FIT"), std::string::npos) << t;
  EXPECT_EQ(t, format_comparison(*tp1_, *tp2_, "default + tp=1", "default + tp=2"));
}

TEST_F(CompareTest, ASideThatDoesNotFitSaysSo) {
  SimulationReport b = *tp2_;
  b.memory.fits = false;
  const std::string t = format_comparison(*tp1_, b, "a", "b");
  EXPECT_NE(t.find("DOES NOT FIT"), std::string::npos) << t;
}

TEST_F(CompareTest, AReportAgainstItselfChangesNothing) {
  for (const ComparisonRow& r : compare_reports(*tp2_, *tp2_)) {
    EXPECT_EQ(r.delta(), 0) << r.key;
    EXPECT_EQ(r.ratio(), 1) << r.key;  // 0 / 0 counts as unchanged
  }
}

}  // namespace
}  // namespace preflight
