// Report writers for a SimulationReport: the human summary, the JSON document (stable keys,
// documented in README.md) and the Chrome trace-event file (opens in Perfetto).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "base/status.h"
#include "config/scenario.h"
#include "simulate/simulate.h"

namespace preflight {

// Multi-line text for a terminal.
std::string format_summary(const SimulationReport& r);

// " from 0.200 s until 0.800 s" for a window of the iteration (a straggler's, a degraded link's);
// "" for all of it.
std::string window_text(SimTime from, SimTime until);

// The resolved scenario as JSON (every input the run used).
nlohmann::json scenario_to_json(const Scenario& s);

// The whole report: iteration_time_s, tokens_per_s, mfu, tflops_per_gpu, breakdown, scenario, ...
nlohmann::json report_to_json(const SimulationReport& r);

// Chrome trace-event JSON: a process per pipeline stage (rank class), a thread per stream.
nlohmann::json trace_to_json(const SimulationReport& r);

// Memory per pipeline stage (`preflight memory --json`, and `memory` in the simulate JSON), with
// "advice": the changes that would make a strategy that does not fit fit (memory_advice.h).
nlohmann::json memory_to_json(const Scenario& s, const MemoryReport& m);

// A table of memory per stage in GiB (weights, gradients, optimizer, activations, micro-batches
// in flight, buffers, framework, transient, peak, HBM, headroom, fits).
std::string format_memory_table(const MemoryReport& m);

// `simulate --csv`: the header line and one run's row (scenario, strategy, iteration time,
// tokens/s, MFU, the critical stage's breakdown, peak memory, fits, warnings), newline-ended.
std::string report_csv_header();
std::string report_to_csv_row(const SimulationReport& r);

// Writes `text` to `path`, or stdout when `path` is "-". Errors name the path.
Status write_output(const std::string& path, const std::string& text);

}  // namespace preflight
