// Executor: runs a Workload on a Simulator. Ranks that run alike are simulated once: each
// pipeline stage of each class of DP replicas is one runner for its tp·cp ranks. When every GPU
// runs alike there is one class (its TP and DP peers are symmetric, so one representative is
// exact under the analytical network); a replica that holds a rank the compute model times apart
// (ComputeModel::distinct_ranks, e.g. a slowed GPU) is a class of its own, and the collectives
// that span the DP replicas wait for every class (docs/engine.md "Ranks that differ"). A runner
// has four clocks: the host thread that dispatches kernels in program order (launch_overhead each),
// the compute stream, the TP communication stream and the DP communication stream. A kernel starts
// when the host has launched it and the stream is free; sends are eager and the host waits for them
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
  int replica = 0;  // the DP replica (that of the critical stage once the run ends)
};

// One sample of a stage's allocated memory (for the trace's counter track).
struct MemorySample {
  int stage = 0;
  SimTime time;
  Bytes bytes;
  int replica = 0;
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

// A class of DP replicas that ran alike: `first` (the replica simulated) and `count` replicas.
struct ReplicaResult {
  int first = 0;
  int count = 1;
  SimTime end;                      // its last stage's end
  std::vector<StageResult> stages;  // each stage's result, when more than one class ran
};

struct ExecutionResult {
  SimTime iteration_time;
  int critical_stage = 0;
  int critical_replica = 0;             // the DP replica whose stage ends last
  std::vector<ReplicaResult> replicas;  // the classes simulated (one when every GPU runs alike)
  std::vector<StageResult> stages;      // of the critical replica
  std::vector<TraceInterval> trace;
  std::vector<MemorySample> memory_trace;  // when tracing and layer_activation_bytes > 0
  int64_t events = 0;
  int64_t ops_executed = 0;
  bool has_network_stats = false;
  NetworkStats network;  // when a transport carried the cross-node traffic
};

struct ExecutorOptions {
  // Host cost per kernel launch, on the cluster's host (cluster.host_overhead_factor applied).
  SimTime launch_overhead;
  // The host's speed against the reference x86 host: each op's other host work (Op::host_time)
  // scales by it.
  double host_time_factor = 1.0;
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
  // The job's rank layout, which tells the DP replica of each rank the compute model times
  // apart. Off, `fold_replicas` simulates every DP replica on its own (for tests: folding must
  // change nothing).
  RankLayout layout;
  bool fold_replicas = true;
  // Activation offloading's copies (StepKind::kHostCopy) run at this rate: cluster.host_bandwidth.
  Bandwidth host_bandwidth = Bandwidth::gigabytes_per_second(25.6);
};

// Whether a group of kind `g` holds ranks of more than one DP replica.
bool group_crosses_replicas(const RankLayout& layout, GroupKind g);
// Whether it holds ranks of more than one DP replica but not of all (the expert-DP group when
// EP spans replicas).
bool group_spans_part_of_replicas(const RankLayout& layout, GroupKind g);

// REQUIRES: the models outlive the call.
ExecutionResult execute(const Workload& w, const ComputeModel& compute,
                        const CollectiveModel& collectives, const JobGroups& groups,
                        const ExecutorOptions& options);

}  // namespace preflight
