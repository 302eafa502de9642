// `preflight validate`: predicts every measured row of the dev set and reports the error (MAPE,
// median, p90, bias) per set and Spearman's rank correlation within each group of rows that share
// a model and a GPU count. Calibration fits the handful of global GPU constants with a physical
// meaning (GEMM efficiency ceiling, memory-bound efficiency, host launch overhead, collective
// latency) by bounded Nelder–Mead on the mean of the per-set MAPEs; `folds` > 1 makes it k-fold
// cross-validated: each row is predicted by constants fitted without its fold.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "config/scenario.h"
#include "validation/dataset.h"

namespace preflight {

// The calibrated constants, in this order, with their search bounds.
struct CalibrationConstant {
  const char* name;
  double lo, hi;
};
const std::vector<CalibrationConstant>& calibration_constants();
std::vector<double> get_calibration(const GpuCalibration& c);
void set_calibration(const std::vector<double>& values, GpuCalibration* c);

struct RowPrediction {
  DatasetRow row;
  double predicted_ms = 0;
  int fold = -1;
};

struct SetMetrics {
  std::string set;
  int rows = 0;
  double mape_pct = 0, mdape_pct = 0, p90_pct = 0, bias_pct = 0, within10_pct = 0;
  int groups = 0;       // groups (same model and GPU count) with >= 3 rows
  double spearman = 0;  // mean over groups
  double spearman_min = 0;
};

struct ValidationOptions {
  int folds = 0;           // 0/1: no cross-validation
  bool calibrate = false;  // fit the constants on all rows (reported in-sample)
  int jobs = 1;            // threads; results do not depend on it
  uint64_t seed = 1;       // fold assignment
  int max_evaluations = 120;
};

struct ValidationResult {
  std::vector<RowPrediction> rows;
  std::vector<SetMetrics> sets;
  std::vector<double> constants;                    // the preset's, or the fit on all rows
  std::vector<std::vector<double>> fold_constants;  // per fold when cross-validated
  int folds = 0;
};

// Predicted iteration time (ms) of each scenario with the GPU constants `constants`.
std::vector<double> predict_ms(const std::vector<Scenario>& scenarios,
                               const std::vector<double>& constants, int jobs);

StatusOr<ValidationResult> run_validation(const std::vector<DatasetRow>& rows,
                                          const ValidationOptions& options);

// Per-set metrics of predictions (groups for Spearman: same hidden, layers, heads and GPUs).
std::vector<SetMetrics> compute_metrics(const std::vector<RowPrediction>& rows);

}  // namespace preflight
