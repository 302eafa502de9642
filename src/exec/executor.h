// Executor: runs a Workload on a Simulator. Each pipeline stage is one rank class (its TP and DP
// peers are symmetric, so one representative is exact under the analytical network) with four
// clocks: the host thread that dispatches kernels in program order (launch_overhead each), the
// compute stream, the TP communication stream and the DP communication stream. A kernel starts when
// the host has launched it and the stream is free; sends are eager and the host waits for them
// (Megatron synchronises after p2p); a receive waits for the matching send's arrival and
// synchronises the host; a collective spanning stages starts when all of them have arrived. Events
// on the Simulator carry the cross-stage dependencies, ordered by (time, sequence): deterministic.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "base/units.h"
#include "collective/collective_model.h"
#include "compute/compute_model.h"
#include "exec/breakdown.h"
#include "exec/transport.h"
#include "parallel/rank_layout.h"
#include "workload/workload.h"

namespace preflight {

enum class TraceLevel { kNone, kBlocks, kKernels };

struct TraceInterval {
  int stage = 0;
  int stream = 0;  // 0 compute, 1 TP communication, 2 DP communication (and p2p on 1)
  SimTime start, end;
  std::string name;
  int microbatch = -1;
  Category category = Category::kCompute;
};

// One sample of a stage's allocated memory (for the trace's counter track).
struct MemorySample {
  int stage = 0;
  SimTime time;
  Bytes bytes;
};

// Per collective name ("tp.allreduce", "dp.allreduce", "pp.send"): what one GPU of the critical
// stage ran in the iteration.
struct CollectiveStats {
  std::string name;
  std::string kind;
  std::string algorithm;
  std::string protocol;
  int channels = 0;
  int64_t count = 0;
  double bytes = 0;
  SimTime time;           // as executed (under contention with the flow network)
  SimTime planned_time;   // as the collective model times it alone
  double busbw_gbps = 0;  // of one instance, alone
  // Achieved bus bandwidth: busbw_gbps scaled by planned_time / time.
  double achieved_busbw_gbps() const {
    return time.ps() > 0 ? busbw_gbps * static_cast<double>(planned_time.ps()) /
                               static_cast<double>(time.ps())
                         : busbw_gbps;
  }
};

struct StageResult {
  SimTime end;
  Breakdown breakdown;
  SimTime busy_compute;  // all compute kernel time (including hidden by nothing)
  std::vector<CollectiveStats> collectives;
};

struct ExecutionResult {
  SimTime iteration_time;
  int critical_stage = 0;
  std::vector<StageResult> stages;
  std::vector<TraceInterval> trace;
  std::vector<MemorySample> memory_trace;  // when tracing and layer_activation_bytes > 0
  int64_t events = 0;
  int64_t ops_executed = 0;
  bool has_network_stats = false;
  NetworkStats network;  // when a transport carried the cross-node traffic
};

struct ExecutorOptions {
  SimTime launch_overhead;
  // Compute kernels that run while a collective does lose the SMs its channels hold: SMs of the
  // GPU, and the calibrated factor on the channel share (0 turns the interference off).
  int sm_count = 0;
  double comm_sm_interference = 0;
  TraceLevel trace = TraceLevel::kNone;
  // For the memory counter track (only when tracing): activations one layer keeps per
  // micro-batch, and each stage's resident bytes (weights, gradients, optimizer, buffers).
  Bytes layer_activation_bytes;
  std::vector<Bytes> resident_bytes;
  // When set (NetworkBackend::transport_factory), cross-node pipeline transfers and every
  // collective whose group spans nodes go through the transport it creates on the run's
  // simulator (the flow-level network); otherwise they take the collective model's time (the
  // analytical network).
  TransportFactory transport;
};

// REQUIRES: the models outlive the call.
ExecutionResult execute(const Workload& w, const ComputeModel& compute,
                        const CollectiveModel& collectives, const JobGroups& groups,
                        const ExecutorOptions& options);

}  // namespace preflight
