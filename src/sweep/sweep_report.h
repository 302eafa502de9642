// Writers for a SweepResult: the terminal table, the CSV file and the bar chart of one metric.
// Pure functions of the result (deterministic text).
#pragma once

#include <string>

#include "base/status.h"
#include "sweep/svg_chart.h"
#include "sweep/sweep.h"

namespace preflight {

// A column per varied key, the strategy (when searched, or when it differs between points),
// iteration time, tokens/s, MFU, peak memory per GPU of HBM, whether it fits, and the speedup
// over the first point; a failed point shows its error instead of figures.
std::string format_sweep_table(const SweepResult& r);

// One header line, then a line per point: the keys, tp, pp, dp, cp, ep, vpp, micro_batch,
// recompute, schedule, iteration_time_s, tokens_per_s, mfu, tflops_per_gpu, peak_memory_bytes,
// hbm_bytes, fits, speedup, error. Fields with a comma or quote are quoted (RFC 4180).
std::string sweep_to_csv(const SweepResult& r);

// What a sweep chart plots.
enum class SweepMetric { kIterationTime, kTokensPerSecond, kMfu };
StatusOr<SweepMetric> parse_sweep_metric(
    const std::string& name);  // iteration_time, tokens_per_s, mfu

// A bar per point: the last varied key's values are the series (and the legend), the other
// keys' combinations the categories along the x axis. Failed points have no bar.
BarChart sweep_chart(const SweepResult& r, SweepMetric metric, const std::string& title);

}  // namespace preflight
