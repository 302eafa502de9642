// `preflight simulate --csv FILE`: one row per run, the headline figures and the strategy, so a
// shell loop over --set values builds a table (each run appends a row under the same header).
#include <cstdio>
#include <string>

#include "report/report.h"

namespace preflight {
namespace {

std::string exact(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

// A CSV field: quoted when it holds a comma, a quote or a line break (RFC 4180).
std::string field(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

}  // namespace

std::string report_csv_header() {
  return "scenario,model,gpu,gpus,nodes,tp,pp,dp,cp,ep,vpp,schedule,micro_batch,global_batch,"
         "seq_len,precision,recompute,iteration_time_s,tokens_per_s,mfu,mfu_2021,tflops_per_gpu,"
         "compute_s,host_overhead_s,tp_comm_s,pp_comm_s,dp_comm_s,ep_comm_s,cp_comm_s,"
         "optimizer_s,bubble_s,peak_memory_bytes,hbm_bytes,fits,warnings,offload_s\n";
}

std::string report_to_csv_row(const SimulationReport& r) {
  const Scenario& s = r.scenario;
  const ParallelismConfig& p = s.parallelism;
  const Breakdown& b = r.execution.stages[r.execution.critical_stage].breakdown;
  std::string peak = "0", hbm = "0", fits = "";
  if (!r.memory.stages.empty()) {
    const StageMemory& lim = r.memory.stages[r.memory.limiting_stage];
    peak = std::to_string(lim.peak.count());
    hbm = std::to_string(lim.capacity.count());
    fits = r.memory.fits ? "true" : "false";
  }
  std::string warnings;
  for (size_t k = 0; k < r.warnings.size(); ++k) warnings += (k ? "; " : "") + r.warnings[k];
  std::string row;
  for (const std::string& f :
       {field(s.source), field(s.model.name), field(s.cluster.gpu.name),
        std::to_string(s.cluster.total_gpus()), std::to_string(s.cluster.nodes),
        std::to_string(p.tp), std::to_string(p.pp), std::to_string(p.dp), std::to_string(p.cp),
        std::to_string(p.ep), std::to_string(p.vpp), std::string(to_string(p.schedule)),
        std::to_string(s.training.micro_batch), std::to_string(s.training.global_batch),
        std::to_string(s.training.seq_len), std::string(to_string(s.training.precision)),
        std::string(to_string(p.recompute)), exact(r.iteration_time_s), exact(r.tokens_per_s),
        exact(r.mfu), exact(r.mfu_2021), exact(r.tflops_per_gpu), exact(b.compute.to_seconds()),
        exact(b.host_overhead.to_seconds()), exact(b.tp_comm.to_seconds()),
        exact(b.pp_comm.to_seconds()), exact(b.dp_comm.to_seconds()), exact(b.ep_comm.to_seconds()),
        exact(b.cp_comm.to_seconds()), exact(b.optimizer.to_seconds()),
        exact(b.bubble.to_seconds()), peak, hbm, fits, field(warnings),
        // Appended last, so that columns read by position keep theirs.
        exact(b.offload.to_seconds())}) {
    row += (row.empty() ? "" : ",") + f;
  }
  return row + "\n";
}

}  // namespace preflight
