#include "validation/validate.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "validation/dataset.h"

namespace preflight {
namespace {

// A row of a synthetic multi-node set: a GPT with hidden `h` and `layers` layers (32 heads,
// sequence 2048) on `gpus` GPUs with global batch `batch`, measured and predicted in ms.
RowPrediction row(int line, int gpus, int h, int layers, int batch, double measured,
                  double predicted) {
  RowPrediction p;
  p.row.set = "multi";
  p.row.line = line;
  p.row.gpus = gpus;
  p.row.hidden = h;
  p.row.layers = layers;
  p.row.heads = 32;
  p.row.seq_len = 2048;
  p.row.global_batch = batch;
  p.row.micro_batch = 1;
  p.row.tp = p.row.pp = 1;
  p.row.dp = gpus;
  p.row.measured_ms = measured;
  p.predicted_ms = predicted;
  return p;
}

std::vector<RowPrediction> synthetic_set() {
  return {
      // Job A: 3.6B on 64 GPUs, batch 512. Preflight ranks line 2 first (95 ms); it measured
      // 100 ms against the fastest 90 ms (line 3): regret (100 - 90) / 90 = 11.1%. Ranks
      // predicted {1, 2, 3} vs measured {2, 1, 3}: rho = 1 - 6·2 / (3·8) = 0.5.
      row(2, 64, 3072, 30, 512, 100, 95),
      row(3, 64, 3072, 30, 512, 90, 99),
      row(4, 64, 3072, 30, 512, 120, 130),
      // Job B: the same model and GPUs with batch 1024 is another job. Two rows: regret
      // (50 - 40) / 40 = 25%, no Spearman.
      row(5, 64, 3072, 30, 1024, 50, 45),
      row(6, 64, 3072, 30, 1024, 40, 47),
      // A job of one row has nothing to rank: left out.
      row(7, 128, 3072, 30, 512, 70, 60),
      // Job C: 175B on 512 GPUs, order kept: regret 0, rho 1.
      row(8, 512, 12288, 96, 1536, 200, 180),
      row(9, 512, 12288, 96, 1536, 210, 190),
      row(10, 512, 12288, 96, 1536, 250, 260),
      row(11, 512, 12288, 96, 1536, 300, 320),
  };
}

TEST(ComputeMetrics, RanksEachJobByRegretAndSpearman) {
  const std::vector<SetMetrics> sets = compute_metrics(synthetic_set());
  ASSERT_EQ(sets.size(), 1u);
  const std::vector<GroupMetrics>& jobs = sets[0].jobs;
  ASSERT_EQ(jobs.size(), 3u);  // ordered by GPUs, then model, then batch

  EXPECT_EQ(jobs[0].model, "GPT 3.6B");
  EXPECT_EQ(jobs[0].gpus, 64);
  EXPECT_EQ(jobs[0].global_batch, 512);
  EXPECT_EQ(jobs[0].rows, 3);
  EXPECT_NEAR(jobs[0].regret_pct, 100.0 * 10 / 90, 1e-9);
  EXPECT_NEAR(jobs[0].spearman, 0.5, 1e-12);
  EXPECT_EQ(jobs[0].predicted_best_line, 2);
  EXPECT_EQ(jobs[0].measured_best_line, 3);

  EXPECT_EQ(jobs[1].global_batch, 1024);
  EXPECT_EQ(jobs[1].rows, 2);
  EXPECT_NEAR(jobs[1].regret_pct, 25.0, 1e-9);
  EXPECT_TRUE(std::isnan(jobs[1].spearman));

  EXPECT_EQ(jobs[2].model, "GPT 175B");
  EXPECT_EQ(jobs[2].gpus, 512);
  EXPECT_EQ(jobs[2].rows, 4);
  EXPECT_EQ(jobs[2].regret_pct, 0.0);
  EXPECT_NEAR(jobs[2].spearman, 1.0, 1e-12);
  EXPECT_EQ(jobs[2].predicted_best_line, jobs[2].measured_best_line);
}

TEST(ComputeMetrics, KeepsSpearmanGroupsByModelAndGpuCount) {
  // The aggregate Spearman still groups by model × GPU count (jobs A and B together: 5 rows),
  // so splitting jobs by batch does not change the published figures.
  const std::vector<SetMetrics> sets = compute_metrics(synthetic_set());
  EXPECT_EQ(sets[0].groups, 2);  // the 64-GPU 3.6B rows and the 175B rows; 128 GPUs has 1 row
}

TEST(ComputeMetrics, AFailedPredictionIsNeverThePickButItsMeasurementCounts) {
  std::vector<RowPrediction> rows = {
      row(2, 64, 3072, 30, 512, 80, NAN),  // fastest measured, prediction failed
      row(3, 64, 3072, 30, 512, 100, 95),
      row(4, 64, 3072, 30, 512, 120, 99),
  };
  const std::vector<SetMetrics> sets = compute_metrics(rows);
  ASSERT_EQ(sets[0].jobs.size(), 1u);
  EXPECT_NEAR(sets[0].jobs[0].regret_pct, 25.0, 1e-9);  // (100 - 80) / 80
  EXPECT_EQ(sets[0].jobs[0].predicted_best_line, 3);
  EXPECT_TRUE(std::isnan(sets[0].jobs[0].spearman));
}

TEST(ScenarioForRow, OverridesApplyAfterTheRowsOwnKeys) {
  DatasetRow r;
  r.set = "multi";
  r.line = 2;
  r.gpus = 64;
  r.global_batch = 512;
  r.micro_batch = 1;
  r.hidden = 3072;
  r.heads = 32;
  r.layers = 30;
  r.seq_len = 2048;
  r.tp = 8;
  r.dp = 4;
  r.pp = 2;
  StatusOr<Scenario> plain = scenario_for_row(r);
  StatusOr<Scenario> with =
      scenario_for_row(r, {"cluster.gpu.calibration.kernel_gap=7us", "parallelism.recompute=none"});
  ASSERT_TRUE(plain.ok() && with.ok()) << with.status().message();
  EXPECT_NE(plain->cluster.gpu.calibration.kernel_gap, SimTime::microseconds(7));
  EXPECT_EQ(with->cluster.gpu.calibration.kernel_gap, SimTime::microseconds(7));
  EXPECT_EQ(plain->parallelism.recompute, Recompute::kFull);  // the row's own key
  EXPECT_EQ(with->parallelism.recompute, Recompute::kNone);
  EXPECT_FALSE(scenario_for_row(r, {"parallelism.nonsense=1"}).ok());
}

}  // namespace
}  // namespace preflight
