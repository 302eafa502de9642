// The accuracy dev set: measured Megatron-DeepSpeed iteration times on A100s from vTrain
// (shared/data/vtrain/ground_truth_{single,multi}.csv, MIT licence). Each row becomes a
// Scenario on the `vtrain-a100` cluster with the setup the vTrain README states: GPT decoder
// (GPT-2 vocabulary, FFN 4h), fp16 mixed precision, full activation recompute, 1F1B, no
// overlap of the gradient all-reduce, Megatron's unfused attention core (no FlashAttention).
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "config/scenario.h"

namespace preflight {

struct DatasetRow {
  std::string set;  // "single" or "multi" (or the file name for a custom file)
  int line = 0;     // 1-based line in the CSV
  int gpus = 0, global_batch = 0, micro_batch = 0, hidden = 0, heads = 0, layers = 0;
  int seq_len = 0, tp = 0, dp = 0, pp = 0;
  double measured_ms = 0;
};

// Parses a vTrain ground-truth CSV (either column layout; the optional leading
// "Parameters (billion)" column is ignored). Errors name the file, line and column.
StatusOr<std::vector<DatasetRow>> load_dataset_csv(const std::string& path, const std::string& set);

// The directory holding vtrain/ and microbenchmarks.csv: $PREFLIGHT_DATA_DIR, else the first of
// ../shared/data, shared/data, ../../shared/data (relative to the working directory) that
// exists, else the one next to the source tree this binary was built from.
std::string find_data_dir();

// The scenario that reproduces `row` with the preset's GPU calibration, `overrides`
// ("section.key=value") applied after the row's own keys.
StatusOr<Scenario> scenario_for_row(const DatasetRow& row,
                                    const std::vector<std::string>& overrides = {});

}  // namespace preflight
