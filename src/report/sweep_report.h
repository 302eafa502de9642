// Writers for a SweepResult: the terminal table, the CSV file, the JSON rows and the bar chart
// of one metric. Pure functions of the result (deterministic text).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "base/status.h"
#include "report/svg_chart.h"
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

// The CSV's rows as a JSON array of objects with the CSV's fields: a varied key's values are
// numbers when all of that key's values are, strings otherwise; tp ... micro_batch,
// peak_memory_bytes and hbm_bytes integers, the figures numbers, fits a boolean, recompute and
// schedule strings, error null. A failed point has null figures and its error; speedup is null
// when the point or the first one failed. Every object has every field, in the CSV's order.
nlohmann::ordered_json sweep_to_json(const SweepResult& r);

// What a sweep chart plots.
enum class SweepMetric { kIterationTime, kTokensPerSecond, kMfu };
StatusOr<SweepMetric> parse_sweep_metric(
    const std::string& name);  // iteration_time, tokens_per_s, mfu

// A bar per point: the last varied key's values are the series (and the legend), the other
// keys' combinations the categories along the x axis. Failed points have no bar.
BarChart sweep_chart(const SweepResult& r, SweepMetric metric, const std::string& title);

}  // namespace preflight
