// simulate(): one pass through the data flow for a scenario — generate the workload, build the
// compute, network and collective models, execute, and derive the user-facing figures
// (iteration time, tokens/s, MFU, TFLOP/s per GPU, breakdown). Pure function of its inputs.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "compute/measured_model.h"
#include "config/scenario.h"
#include "exec/executor.h"
#include "memory/memory_model.h"
#include "workload/workload.h"

namespace preflight {

struct SimulateOptions {
  TraceLevel trace = TraceLevel::kNone;
};

struct SimulationReport {
  Scenario scenario;
  std::string network;  // the backend that ran, as it names itself ("analytical", "flow", "packet")
  ExecutionResult execution;
  MemoryReport memory;  // per-stage memory; a strategy that does not fit still gets a time
  double iteration_time_s = 0;
  double tokens_per_s = 0;
  // Model FLOPs per iteration: 3 × forward of the GEMMs, the attention core and the logits,
  // with causal attention counted as the kernels run it (each query against the keys before
  // it), Preflight's convention (docs/model.md §2). The *_2021 fields count the attention core
  // non-causally, as Megatron-LM's 2021 convention and its logs do; at long sequences that count
  // can pass what the GPU can do.
  double model_flops = 0;
  double mfu = 0;             // model FLOPs / (time · GPUs · dense peak of the precision)
  double tflops_per_gpu = 0;  // model FLOPs per second per GPU, in TFLOP/s
  double model_flops_2021 = 0;
  double mfu_2021 = 0;
  double tflops_per_gpu_2021 = 0;
  double peak_tflops = 0;  // the dense peak MFU divides by
  // What makes this result look better than a real job would (the scenario's warnings, then
  // the run's: memory headroom under 5 %, an MFU above the GPU's sustained GEMM efficiency).
  std::vector<std::string> warnings;
  int64_t parameters = 0;
  int64_t active_parameters = 0;  // per token (MoE: top-k routed + shared experts)
  // MoE models: the expert routing of each MoE layer (workload/expert_routing.h).
  std::vector<MoeLayerStats> moe_layers;
  int microbatches = 0;
  // compute.model: measured: the iteration's compute time by where it came from (the table's
  // measured kernels, interpolated between them, the roofline); all roofline otherwise.
  ComputeCoverage compute_coverage;
  double wall_seconds = 0;  // how long the simulation itself took (not in outputs that
                            // must be deterministic)
};

// REQUIRES: validate_scenario(s).ok() (load_scenario guarantees it).
StatusOr<SimulationReport> simulate(const Scenario& s, const SimulateOptions& options = {});

// Runs a workload built elsewhere (an imported SimAI file, interop/simai_workload.h) on `s`'s
// cluster, network and collectives; `s.parallelism` must describe the workload's groups. No
// memory estimate and no model FLOPs: memory, MFU, TFLOP/s and parameters stay 0.
StatusOr<SimulationReport> simulate_workload(const Scenario& s, const Workload& workload,
                                             const SimulateOptions& options = {});

}  // namespace preflight
