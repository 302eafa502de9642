// `preflight validate --dataset published|fsdp|FILE`: predicts every row of a published-runs
// file (validation/published.h) and reports coverage and the error per GPU, per dense/MoE/hybrid,
// per precision and per source; rows that cannot be simulated are listed with the reason.
// Cross-validation is grouped by model family: every row of a family lands in the same fold, so
// no calibrated constant has seen the model it predicts.
#pragma once

#include <cmath>
#include <string>
#include <vector>

#include "base/status.h"
#include "validation/published.h"
#include "validation/validate.h"

namespace preflight {

struct PublishedPrediction {
  PublishedRow row;
  bool simulated = false;
  std::string reason;  // why not, when !simulated
  PublishedCase run;   // when simulated
  double predicted_ms = 0;
  int fold = -1;
  // The memory model on the run's configuration (memory/memory_model.h): its busiest stage's
  // peak per GPU against the GPU's HBM. Every published run ran, so a run that does not fit is
  // the memory model's overestimate.
  bool fits = true;
  double peak_gib = 0, hbm_gib = 0;
  double error_pct() const { return (predicted_ms - run.measured_ms) / run.measured_ms * 100; }
};

// The error over the simulated rows of one group ("all", a GPU, a kind, ...).
struct GroupError {
  std::string by;     // "all", "gpu", "kind", "precision", "source", "stack"
  std::string group;  // the group's value
  int rows = 0;
  double mape_pct = 0, mdape_pct = 0, p90_pct = 0;
  double bias_pct = 0;         // mean signed error (predicted − measured)/measured; < 0: too fast
  double median_bias_pct = 0;  // median signed error
  double within10_pct = 0;
};

// The GPU constants calibrated on the published set, per GPU generation, with their search
// bounds: the sustained GEMM fraction of the dense peak and the fused-attention fraction (fitted
// on dense rows), and the HBM fraction of memory-bound kernels (fitted on every row). Blackwell
// Ultra takes Blackwell's attention fraction (the same kernels on the same tensor cores) and fits
// its GEMM fraction alone; both Blackwell generations take the HBM fraction a public RMSNorm
// measurement gives (0.45 of a B200's 8 TB/s) rather than a fit. Rows of GPUs with a calibration of
// their own elsewhere (the A100: the vTrain set) are predicted with the preset and not fitted.
struct PublishedConstant {
  const char* name;
  double lo, hi, start;  // start: a public figure, never an earlier fit
};
const std::vector<PublishedConstant>& published_constants();
std::vector<double> get_published_calibration(const GpuCalibration& c);
void set_published_calibration(const std::vector<double>& v, GpuCalibration* c);

// Where a GPU generation's attention fraction comes from: the name of the generation whose fit
// it takes, its own where it is fitted on its own dense rows ("blackwell-ultra" takes
// "blackwell"'s: the same kernels on the same tensor cores).
std::string attention_source(const std::string& generation);
// A generation's HBM fraction where a public measurement gives it (Blackwell and Blackwell
// Ultra: PyTorch's eager RMSNorm on a B200, 0.45); NaN where it is fitted.
double measured_memory_fraction(const std::string& generation);

struct GpuFit {
  std::string gpu;
  int rows = 0;  // training rows of the generation (the dense ones fit GEMM and attention)
  std::vector<double> constants;
};

// How far the source's own measurements of one configuration move between software releases:
// the configurations (source, model, GPU and GPU count, parallelism, batch, precision and shape)
// measured in two or more containers, one run per configuration and container, each run's
// measured time against its configuration's median. What the release alone moves, which no
// model of the configuration can predict; beside it, Preflight's error on the same runs.
struct RepeatSpread {
  int configurations = 0;                   // measured in two or more containers
  int runs = 0;                             // their (configuration, container) runs
  double mean_pct = NAN, median_pct = NAN;  // |measured / configuration median − 1|
  double model_mape_pct = NAN;              // Preflight's absolute error on those runs
};
RepeatSpread repeat_spread(const std::vector<PublishedPrediction>& rows);

struct PublishedValidationResult {
  std::vector<PublishedPrediction> rows;
  std::vector<GroupError> groups;  // "all" first, then by gpu, kind, precision, source, stack
  int total = 0, simulated = 0;
  // Distinct configurations among the simulated rows, and those the memory model says do not
  // fit in HBM (each ran, so each is an overestimate).
  int configurations = 0, configurations_not_fitting = 0;
  RepeatSpread repeats;
  int folds = 0;
  std::vector<std::string> fold_families;      // per fold: the families held out, joined by ","
  std::vector<GpuFit> fitted;                  // --calibrate: per generation, on all rows
  std::vector<std::vector<GpuFit>> fold_fits;  // --cv: per fold, per generation
  // The megatron-core stack's host launch cost (µs per kernel), fitted on every row of that
  // stack once the GPU constants are: --calibrate's, and each fold's (NaN: not fitted).
  double launch_us = NAN;
  std::vector<double> fold_launch_us;
  // The Grace hosts' (cluster.cpu_vendor arm: GB200, GB300) host_overhead_factor against the
  // x86 hosts the launch cost is fitted on, fitted on that stack's Grace rows once the launch
  // cost is: --calibrate's, and each fold's (NaN: not fitted).
  double grace_factor = NAN;
  std::vector<double> fold_grace_factor;
};

StatusOr<PublishedValidationResult> run_published_validation(const std::vector<PublishedRow>& rows,
                                                             const ValidationOptions& options);

// Errors per group of `rows` (only simulated rows count).
std::vector<GroupError> published_group_errors(const std::vector<PublishedPrediction>& rows);

}  // namespace preflight
