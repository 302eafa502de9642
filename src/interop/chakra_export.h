// Preflight's generated workload as Chakra execution traces (`preflight export chakra`): one
// trace per rank of the job (Megatron's rank order: tp fastest, then cp, dp, pp), whose
// dependency graph encodes what the executor (engine/executor.h) does, so that replaying it
// (interop/chakra_replay.h) on the same cluster gives the simulated iteration time:
//  * every kernel the host launches is a CPU node (`launch`, the scenario's launch_overhead)
//    chained in program order, and the GPU node it launches depends on it (no launch nodes when
//    launch_overhead is 0);
//  * the compute stream (stream 0), the TP communication stream (1, asynchronous collectives
//    and ring-attention steps) and the DP gradient stream (2) are dependency chains; a kernel
//    that waits for a stream depends on its last node;
//  * pipeline sends are eager; a blocking send makes the next launch wait for it; a receive
//    makes the next compute-stream node wait for it (and the host, unless overlap_p2p);
//  * collectives name their communicator by pg_name; the groups are written to
//    PREFIX.comm_group.json (ASTRA-sim's --comm-group-configuration format);
//  * a ring-attention step is a send to the next CP rank, a receive from the previous one and a
//    zero-length node on its stream that joins them.
// A rank the compute model times apart (ComputeModel::distinct_ranks: a straggler) gets its own
// kernel durations, asked at the iteration's start; export_chakra applies simulation.slow_ranks
// and refuses a slowdown window, which a trace's one duration per kernel cannot hold.
// Compute nodes carry the roofline duration (duration_micros, and exact picoseconds in
// `preflight.duration_ps`), num_ops and tensor_size (for ASTRA-sim's roofline mode); every node
// carries `preflight.category` for the breakdown. docs/interop.md gives the limits.
#pragma once

#include <cstdint>

#include "base/status.h"
#include "compute/compute_model.h"
#include "config/scenario.h"
#include "interop/chakra_trace.h"
#include "workload/workload.h"

namespace preflight {

// Exports larger than this many nodes in all are refused unless the caller raises it.
constexpr int64_t kChakraDefaultMaxNodes = 20'000'000;

// The traces of every rank of `w` (generated for `s`), with `compute` timing the kernels and
// `launch_overhead` per kernel launch (on the cluster's host: scaled by its
// host_overhead_factor already); the ops' other host work scales by that factor here. Errors:
// more than `max_nodes` nodes in all.
StatusOr<ChakraWorkload> workload_to_chakra(const Scenario& s, const Workload& w,
                                            const ComputeModel& compute, SimTime launch_overhead,
                                            int64_t max_nodes = kChakraDefaultMaxNodes);

// validate_scenario(s), generate_workload(s), the roofline model and the scenario's
// launch_overhead at its cluster's host_overhead_factor through workload_to_chakra.
StatusOr<ChakraWorkload> export_chakra(const Scenario& s,
                                       int64_t max_nodes = kChakraDefaultMaxNodes);

}  // namespace preflight
