// SimAI/AICB workloads and Preflight's Workload IR: the import (a SimaiWorkload, parsed by
// interop/simai_format.h, becomes the scenario's parallelism and one program per pipeline stage
// with measured compute durations), the export (a generated stage as layer lines), and SimAI's
// EndToEnd report columns. docs/interop.md gives the mapping and its limits. Pure functions;
// thread-safe.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "base/units.h"
#include "config/scenario.h"
#include "exec/executor.h"
#include "interop/simai_format.h"
#include "simulate/simulate.h"
#include "workload/workload.h"

namespace preflight {

// `s` with its parallelism and GPU count taken from the header: tp, pp, dp = all_gpus/(tp·pp),
// ep (expert-TP = tp, as SimAI's EP groups stride over TP groups), ga micro-batches of one
// sample (global_batch = ga·dp), cluster.nodes = all_gpus / gpus_per_node. The cluster,
// collectives and network stay `s`'s. Errors name the header field that does not fit.
StatusOr<Scenario> simai_scenario(const SimaiWorkload& w, const Scenario& s);

// The Workload that runs `w` on every pipeline stage (docs/interop.md). The lines divide into
// leading iteration-level lines (DP gradient reduction, optimizer), issued after the last
// backward in reverse file order; ga copies of one micro-batch's lines, when the file repeats
// them as AICB does (copies match by name and collectives; each copy keeps its own compute
// times); and trailing lines, run once with the last micro-batch. A file without ga copies is
// one micro-batch. Micro-batches run in 1F1B order across pp stages, exchanging pp_comm bytes.
// Compute ops carry Op::fixed_time. REQUIRES: simai_scenario(w, ...) succeeded.
StatusOr<Workload> simai_to_workload(const SimaiWorkload& w);

struct SimaiExport {
  SimaiWorkload workload;
  std::vector<std::string> dropped;  // collectives with no SimAI equivalent, by name
};

// Pipeline stage `stage` of `w` (generated for `s`; AICB writes stage 0) in SimAI's format,
// which the import runs on every stage: micro-batch 0's forward and backward passes become layer
// lines (the compute between two collectives summed from `compute` and rounded to 1 ns),
// repeated ga times; the iteration-level collectives, the last micro-batch's extra ones
// (overlapped gradient buckets) and the optimizer become the leading lines. Collectives the
// format cannot express are left out and named in `dropped`; cp > 1, or etp != tp with ep > 1,
// is an error. REQUIRES: w = generate_workload(s), 0 <= stage < pp.
StatusOr<SimaiExport> workload_to_simai(const Scenario& s, const Workload& w,
                                        const ComputeModel& compute, int stage = 0);

// simai_scenario, simai_to_workload and simulate_workload in one call: `w` on `base`'s cluster.
StatusOr<SimulationReport> simulate_simai(const SimaiWorkload& w, const Scenario& base,
                                          const SimulateOptions& options = {});

// validate_scenario(s), then generate_workload(s) timed by the roofline model through
// workload_to_simai.
StatusOr<SimaiExport> export_simai(const Scenario& s, int stage = 0);

// SimAI's EndToEnd.csv summary columns, in µs like SimAI, from the critical stage's breakdown.
// DP_EP communication is counted in dp (Preflight's breakdown does not separate it).
struct SimaiColumns {
  double exposed_dp_us = 0, exposed_tp_us = 0, exposed_ep_us = 0, exposed_pp_us = 0;
  double bubble_us = 0, compute_us = 0, exposed_comm_us = 0, total_us = 0;
};
SimaiColumns simai_columns(const ExecutionResult& r);

// "File name, Expose DP comm, ..." header and value rows in SimAI's CSV style.
std::string format_simai_columns(const SimaiColumns& c);

// The text summary of an imported workload's run (simulate --workload simai:FILE): the
// parallelism from the header, the iteration time and SimAI's columns.
std::string format_simai_summary(const SimulationReport& r, const std::string& file);

}  // namespace preflight
