#include "simulate/simulate.h"

#include <chrono>
#include <cstdio>

#include "collective/collective_model.h"
#include "compute/compute_model.h"
#include "compute/measured_model.h"
#include "memory/memory_model.h"
#include "model/transformer.h"
#include "network/backends.h"
#include "network/network_backend.h"
#include "parallel/rank_layout.h"
#include "workload/generator.h"

namespace preflight {

namespace {

// SimulationReport::warnings that come from the run, not the scenario.
void add_run_warnings(SimulationReport* r) {
  const Scenario& s = r->scenario;
  char buf[320];
  if (!r->memory.stages.empty()) {
    const StageMemory& lim = r->memory.stages[r->memory.limiting_stage];
    const Bytes least = recommended_headroom(lim.capacity);
    if (!r->memory.fits) {
      std::snprintf(
          buf, sizeof buf,
          "does not fit: stage %d needs %.1f GiB of %.0f GiB HBM; the time assumes it ran",
          lim.stage, lim.peak.to_gib(), lim.capacity.to_gib());
      r->warnings.emplace_back(buf);
    } else if (lim.headroom.count() < least.count()) {
      // Less free than a real job's peak varies by (memory/memory_model.h).
      std::snprintf(buf, sizeof buf,
                    "memory headroom %.1f GiB is under %.1f GiB (2.5 %% of the %.0f GiB HBM, at "
                    "least 2 GiB; stage %d): allocator fragmentation and NCCL buffers may still "
                    "make it run out of memory",
                    lim.headroom.to_gib(), least.to_gib(), lim.capacity.to_gib(), lim.stage);
      r->warnings.emplace_back(buf);
    }
  }
  // No MFU can pass the fraction of peak the GPU's GEMMs sustain; the 2021 count (non-causal
  // attention) can at long sequences, which says the count, not the GPU, is generous.
  const double ceiling = s.cluster.gpu.calibration.gemm_efficiency;
  if (r->mfu_2021 > ceiling) {
    std::snprintf(buf, sizeof buf,
                  "MFU by Megatron's 2021 count (%.1f %%) is above the %.1f %% of peak the GPU's "
                  "GEMMs sustain: that count includes the attention work causal kernels skip; the "
                  "MFU as run is %.1f %%",
                  r->mfu_2021 * 100, ceiling * 100, r->mfu * 100);
    r->warnings.emplace_back(buf);
  }
}

// Builds the compute, network and collective models for `s`, executes `workload` and derives
// the figures. An imported workload has no model of ours behind it: no memory estimate and no
// model FLOPs (MFU, TFLOP/s, parameters stay 0).
StatusOr<SimulationReport> run_workload(const Scenario& s, const Workload& workload,
                                        const SimulateOptions& options, bool imported,
                                        std::chrono::steady_clock::time_point wall_start) {
  SimulationReport r;
  r.scenario = s;
  r.warnings = s.warnings;
  std::unique_ptr<ComputeModel> compute = make_compute_model(s);
  // The network: its figures plan collectives; the flow backend also carries the traffic.
  PREFLIGHT_ASSIGN_OR_RETURN(std::unique_ptr<NetworkBackend> network,
                             make_network_backend(s.simulation.network, s));
  r.network = to_string(network->kind());
  const JobGroups groups = place_job_groups(s);
  PREFLIGHT_ASSIGN_OR_RETURN(
      const CollectiveModel collectives,
      CollectiveModel::nccl(s.cluster, s.collectives, *network,
                            {groups.tp, groups.dp, groups.pp, groups.embedding, groups.cp,
                             groups.ep, groups.etp, groups.edp}));
  // Every collective the workload issues must be plannable under the NCCL overrides.
  auto check = [&](const Op& op) -> Status {
    if (op.type != OpType::kCollective) return Status();
    return collectives.check(op.collective, groups.of(op.group));
  };
  for (const Block& b : workload.blocks) {
    for (const Op& op : b.ops) PREFLIGHT_RETURN_IF_ERROR(check(op));
  }
  for (const Program& p : workload.stages) {
    for (const Step& st : p.steps) {
      if (st.kind == StepKind::kCollective || st.kind == StepKind::kCommAsync) {
        PREFLIGHT_RETURN_IF_ERROR(check(st.op));
      }
    }
  }
  if (!imported) r.memory = estimate_memory(s);
  ExecutorOptions exec_options;
  // CUDA graphs: the host replays one graph per iteration; its kernels cost no launch each.
  // Every host cost runs at the cluster's host CPU speed (cluster.host_overhead_factor).
  const double host = s.cluster.host_overhead_factor;
  exec_options.launch_overhead =
      s.training.cuda_graphs ? SimTime() : s.cluster.gpu.calibration.launch_overhead.scaled(host);
  exec_options.host_time_factor = host;
  exec_options.sm_count = s.cluster.gpu.sm_count;
  exec_options.comm_sm_interference = s.cluster.gpu.calibration.comm_sm_interference;
  exec_options.trace = options.trace;
  if (options.trace != TraceLevel::kNone && !imported) {
    // The memory counter track: model states and buffers are resident all iteration; each
    // layer's forward adds its saved activations, its backward frees them.
    exec_options.layer_activation_bytes = layer_activation_bytes(s);
    for (const StageMemory& m : r.memory.stages) {
      exec_options.resident_bytes.push_back(m.weights + m.gradients + m.optimizer + m.comm_buffers +
                                            m.framework);
    }
  }
  exec_options.host_bandwidth = s.cluster.host_bandwidth;
  exec_options.transport = make_transport_factory(network->fabric_factory(), s);
  exec_options.layout = RankLayout::of(s);
  // Stragglers (simulation.slow_ranks): their replicas run apart from the rest.
  std::unique_ptr<ComputeModel> slowed;
  if (!s.simulation.slow_ranks.empty()) {
    slowed = make_slow_ranks_model(*compute, s.simulation.slow_ranks);
  }
  r.execution = execute(workload, slowed ? *slowed : *compute, collectives, groups, exec_options);
  r.compute_coverage = compute_coverage(workload, *compute);

  const int gpus = s.cluster.total_gpus();
  r.microbatches = s.num_microbatches();
  r.iteration_time_s = r.execution.iteration_time.to_seconds();
  const double tokens = static_cast<double>(s.training.global_batch) * s.training.seq_len;
  r.tokens_per_s = tokens / r.iteration_time_s;
  if (imported) {
    r.microbatches = workload.microbatches;
    r.wall_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
    return r;
  }
  r.model_flops = causal_model_flops_per_iteration(s);
  r.model_flops_2021 = model_flops_per_iteration(s);
  r.peak_tflops = s.cluster.gpu.peak_for(s.training.precision).teraflops();
  r.tflops_per_gpu = r.model_flops / r.iteration_time_s / gpus * 1e-12;
  r.tflops_per_gpu_2021 = r.model_flops_2021 / r.iteration_time_s / gpus * 1e-12;
  r.mfu = r.tflops_per_gpu / r.peak_tflops;
  r.mfu_2021 = r.tflops_per_gpu_2021 / r.peak_tflops;
  add_run_warnings(&r);
  r.parameters = total_parameters(s.model, s.parallelism.tp, s.training.seq_len);
  r.active_parameters = active_parameters(s.model, s.parallelism.tp, s.training.seq_len);
  r.moe_layers = workload.moe_layers;
  r.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return r;
}

}  // namespace

StatusOr<SimulationReport> simulate(const Scenario& s, const SimulateOptions& options) {
  PREFLIGHT_RETURN_IF_ERROR(validate_scenario(s));
  const auto wall_start = std::chrono::steady_clock::now();
  // Simulated time is int64 picoseconds (106 days). Refuse scenarios whose pure compute time
  // alone, at peak, would exceed 10 days per iteration: their inputs are almost surely wrong.
  {
    const double ideal_s =
        model_flops_per_iteration(s) /
        (s.cluster.gpu.peak_for(s.training.precision).flops_per_second() * s.cluster.total_gpus());
    if (!(ideal_s < 864000)) {
      char seconds[32];
      std::snprintf(seconds, sizeof seconds, "%.3g", ideal_s);  // std::to_string: 300 digits
      return invalid_argument(
          "scenario: one iteration would take more than 10 days even at peak "
          "FLOP/s (" +
          std::string(seconds) +
          " s); expected a smaller global_batch/seq_len or a faster cluster");
    }
  }
  return run_workload(s, generate_workload(s, offloaded_layer_bytes(s)), options,
                      /*imported=*/false, wall_start);
}

StatusOr<SimulationReport> simulate_workload(const Scenario& s, const Workload& workload,
                                             const SimulateOptions& options) {
  return run_workload(s, workload, options, /*imported=*/true, std::chrono::steady_clock::now());
}

}  // namespace preflight
