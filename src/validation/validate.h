// `preflight validate`: predicts every measured row of the dev set and reports the error (MAPE,
// median, p90, bias) per set and Spearman's rank correlation within each group of rows that share
// a model and a GPU count, and per job (GroupMetrics) the regret of choosing the strategy Preflight
// ranks fastest. Calibration fits the handful of global GPU constants with a physical
// meaning (GEMM efficiency ceiling, memory-bound efficiency, host launch overhead, collective
// latency) by bounded Nelder–Mead on the mean of the per-set MAPEs; `folds` > 1 makes it k-fold
// cross-validated: each row is predicted by constants fitted without its fold.
#pragma once

#include <functional>
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

// Ranking accuracy within one job: rows that train the same model on the same number of GPUs
// with the same global batch and sequence length, and differ only in strategy (TP, PP, DP,
// micro-batch). On the multi-node dev set each model × GPU-count group is one job.
struct GroupMetrics {
  std::string model;  // "GPT 3.6B": parameters from the row's shape (12·L·h² + ...), rounded
  int hidden = 0, layers = 0, heads = 0, gpus = 0, global_batch = 0, seq_len = 0;
  int rows = 0;
  double spearman = 0;    // of predicted vs measured times; NaN below 3 rows or when constant
  double regret_pct = 0;  // (measured time of the row predicted fastest − the fastest measured
                          // time) / the fastest measured × 100 (stats.h ranking_regret_pct)
  int predicted_best_line = 0;  // CSV line of the row Preflight ranks fastest
  int measured_best_line = 0;   // CSV line of the fastest measured row
};

struct SetMetrics {
  std::string set;
  int rows = 0;
  double mape_pct = 0, mdape_pct = 0, p90_pct = 0, bias_pct = 0, within10_pct = 0;
  int groups = 0;       // groups (same model and GPU count) with >= 3 rows
  double spearman = 0;  // mean over groups
  double spearman_min = 0;
  std::vector<GroupMetrics> jobs;  // every job with >= 2 rows, ordered by (gpus, hidden, layers,
                                   // heads, global batch, sequence length)
};

// The largest acceptable regret of a job: Preflight's first-ranked strategy within 5% of the
// best measured one.
constexpr double kRegretTargetPct = 5.0;

struct ValidationOptions {
  int folds = 0;           // 0/1: no cross-validation
  bool calibrate = false;  // fit the constants on all rows (reported in-sample)
  int jobs = 1;            // threads; results do not depend on it
  uint64_t seed = 1;       // fold assignment
  int max_evaluations = 120;
  // Scenario overrides ("section.key=value", as `simulate --set`) applied to every row's scenario
  // after the row's own keys: a sensitivity study against the measurements. A row the overrides
  // make invalid is not simulated (published sets: listed with the loader's message; vTrain
  // sets: the run fails). check_validation_overrides() rejects those that a fit would overwrite.
  std::vector<std::string> overrides;
  // Called before each cross-validation fold's fit with a line saying which (the CLI prints it
  // on a terminal: a --cv run takes minutes); null: silent. Never changes a result.
  std::function<void(const std::string&)> progress;
};

// OK, or why `options.overrides` cannot go with its fit: --calibrate and --cv set the GPU
// constants they fit (cluster.gpu.calibration: the GEMM, attention, HBM and NVFP4 fractions, the
// launch cost and the collective latencies), the stack's launch cost that feeds the GPU's, and
// the Grace hosts' factor (cluster.host_overhead_factor) on every row, so an override of one of
// them would be overwritten unseen.
Status check_validation_overrides(const ValidationOptions& options);

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

// Per-set metrics of predictions (groups for Spearman: same hidden, layers, heads and GPUs;
// `jobs` additionally split them by global batch and sequence length).
std::vector<SetMetrics> compute_metrics(const std::vector<RowPrediction>& rows);

}  // namespace preflight
