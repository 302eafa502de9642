// SimAI/AICB workload files (the `HYBRID_TRANSFORMER_FWD_IN_BCKWD` and `MICRO` text formats
// that AICB writes and SimAI reads): a parser, a writer, and converters to and from Preflight's
// Workload IR. The file describes one pipeline stage of one DP replica: a header of `key: value`
// tokens (tp, ep, pp, ga, all_gpus, pp_comm), a layer count, then one line of 12 fields per
// layer (forward, input-gradient and weight-gradient compute in ns, each followed by a
// communication type and size in bytes). docs/interop.md gives the mapping and its limits.
// Plain values and pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "base/units.h"
#include "config/scenario.h"
#include "engine/executor.h"
#include "simulate/simulate.h"
#include "workload/workload.h"

namespace preflight {

// The communicator a SimAI comm type names: a bare type means TP in the forward and
// input-gradient columns and DP in the weight-gradient column; `_EP` the EP group; `_DP_EP` the
// DP group within an EP group.
enum class SimaiGroup : uint8_t { kDefault, kExpert, kDataExpert };

struct SimaiComm {
  bool none = true;  // NONE: no communication
  CollectiveKind kind = CollectiveKind::kAllReduce;
  SimaiGroup group = SimaiGroup::kDefault;
  int64_t bytes = 0;
};

struct SimaiLayer {
  std::string name;
  int64_t dependency = -1;  // field 2, always -1 in AICB files
  int64_t fwd_ns = 0;
  SimaiComm fwd;
  int64_t ig_ns = 0;
  SimaiComm ig;
  int64_t wg_ns = 0;
  SimaiComm wg;
  int64_t update_ns = 0;  // field 12: read and written back, not simulated
};

struct SimaiWorkload {
  std::string policy = "HYBRID_TRANSFORMER_FWD_IN_BCKWD";  // or "MICRO"
  int tp = 1;  // model_parallel_NPU_group
  int ep = 1;
  int pp = 1;
  int vpp = 1;       // AICB writes the number of layers here; not used by the import
  int ga = 1;        // gradient-accumulation steps = micro-batches per iteration
  int all_gpus = 0;  // 0 (MICRO files): the scenario's cluster decides
  int64_t pp_comm = 0;  // bytes of one pipeline activation send
  std::vector<SimaiLayer> layers;
};

// Parses the text of a SimAI workload file. `file` names it in errors, which read
// "FILE:LINE: field N 'x': expected ..." (or "FILE:LINE: ..." for line-level problems).
// Never crashes on any input.
StatusOr<SimaiWorkload> parse_simai_workload(const std::string& text, const std::string& file);

// Reads and parses `path`.
StatusOr<SimaiWorkload> load_simai_workload(const std::string& path);

// The file text: the header line, the layer count, one tab-separated line per layer.
std::string write_simai_workload(const SimaiWorkload& w);

// `s` with its parallelism and GPU count taken from the header: tp, pp, dp = all_gpus/(tp·pp),
// ep (expert-TP = tp, as SimAI's EP groups stride over TP groups), ga micro-batches of one
// sample (global_batch = ga·dp), cluster.nodes = all_gpus / gpus_per_node. The cluster,
// collectives and network stay `s`'s. Errors name the header field that does not fit.
StatusOr<Scenario> simai_scenario(const SimaiWorkload& w, const Scenario& s);

// The Workload that runs `w` on every pipeline stage (docs/interop.md): the leading lines whose
// forward and input-gradient columns are empty are iteration-level (DP gradient reduction,
// optimizer), issued after the last backward in reverse file order; the other lines are one
// micro-batch (a period of them when the file repeats them ga times, as AICB and the export
// do). Micro-batches run in 1F1B order across pp stages, exchanging pp_comm bytes.
// Compute ops carry Op::fixed_time. REQUIRES: simai_scenario(w, ...) succeeded.
StatusOr<Workload> simai_to_workload(const SimaiWorkload& w);

struct SimaiExport {
  SimaiWorkload workload;
  std::vector<std::string> dropped;  // collectives with no SimAI equivalent, by name
};

// Pipeline stage `stage` of `w` (generated for `s`; AICB writes stage 0) in SimAI's format: micro-batch 0's forward and backward
// passes become layer lines (compute between two collectives summed, in ns, from `compute`),
// repeated ga times; the iteration-level collectives and the optimizer become the leading
// lines. REQUIRES: validate_scenario(s).ok(), w = generate_workload(s).
// Every stage of the import runs this one stage's lines. REQUIRES: 0 <= stage < pp.
StatusOr<SimaiExport> workload_to_simai(const Scenario& s, const Workload& w,
                                        const ComputeModel& compute, int stage = 0);

// simai_scenario, simai_to_workload and simulate_workload in one call: `w` on `base`'s cluster.
StatusOr<SimulationReport> simulate_simai(const SimaiWorkload& w, const Scenario& base,
                                          const SimulateOptions& options = {});

// generate_workload(s) timed by the roofline model, then workload_to_simai.
// REQUIRES: validate_scenario(s).ok().
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
