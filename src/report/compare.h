// Two simulated scenarios side by side (`preflight compare A B`): the headline figures, the time
// breakdown of each one's critical pipeline stage, memory and the strategy, with B − A and B / A.
// Pure functions of the two reports (deterministic text and JSON; no wall-clock times).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "simulate/simulate.h"

namespace preflight {

// One compared figure. `key` is its JSON name (the report's, "breakdown.tp_comm_s" for a
// breakdown category); `label` its name in the table.
struct ComparisonRow {
  std::string key;
  std::string label;
  double a = 0;
  double b = 0;

  double delta() const { return b - a; }  // B − A
  // B / A; NaN when A is 0 (and B is not: 0 / 0 is 1, nothing changed).
  double ratio() const;
};

// In table order: gpus, iteration_time_s, tokens_per_s, mfu, tflops_per_gpu, the ten breakdown
// categories of each report's critical stage (compute_s, host_overhead_s, tp_comm_s, pp_comm_s,
// dp_comm_s, ep_comm_s, cp_comm_s, optimizer_s, offload_s, bubble_s; seconds),
// peak_memory_bytes (per GPU, the limiting stage).
std::vector<ComparisonRow> compare_reports(const SimulationReport& a, const SimulationReport& b);

// The table: a line naming each side (`name_a`, `name_b`: e.g. the scenario file, or "default
// + parallelism.pp=8"), then columns A, B, B−A and B/A for the strategy, every row of
// compare_reports (EP and CP comm only when either side uses them) and whether each fits in
// memory ("DOES NOT FIT" for one that does not).
std::string format_comparison(const SimulationReport& a, const SimulationReport& b,
                              const std::string& name_a, const std::string& name_b);

// {"a": report_to_json(a), "b": report_to_json(b), "delta": {...}, "ratio": {...}}: delta and
// ratio hold every row of compare_reports under its key (breakdown categories in a "breakdown"
// object, as in the report), B − A and B / A (null where A is 0 and B is not).
nlohmann::json comparison_to_json(const SimulationReport& a, const SimulationReport& b);

}  // namespace preflight
