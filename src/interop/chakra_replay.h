// Replays a Chakra workload (one execution trace per rank, interop/chakra_trace.h) on the
// execution core's graph runner (exec/graph_runner.h): a discrete-event run over every rank's
// dependency graph, with our compute model, NCCL-faithful collective model and the scenario's
// cluster. This file lowers the trace into the runner's program. The semantics
// (docs/interop.md):
//  * A node is ready when all of its data_deps and ctrl_deps have finished (as ASTRA-sim's
//    feeder does).
//  * Each rank has one CPU thread and one queue per GPU stream (the node's `stream` attribute;
//    without it compute kernels use stream 0 and collectives stream 1, ASTRA-sim's one compute
//    and one communication op in flight). A queue runs one node at a time, the ready node with
//    the lowest id first. Sends, receives, memory and metadata nodes take no queue.
//  * COMP_NODE time: Preflight's exact `preflight.duration_ps`, else duration_micros, else the
//    roofline time of its num_ops FLOPs and tensor_size bytes on the cluster's GPU.
//    MEM_LOAD/MEM_STORE: tensor_size at the GPU's achievable HBM bandwidth.
//  * COMM_COLL_NODE: the k-th collective a rank issues on a communicator meets the k-th of every
//    other member; it starts when the last member arrives and lasts what the collective model
//    plans for the group's placement (ranks fill nodes in order, gpus_per_node per node). Sizes:
//    comm_size is the buffer (all-reduce, reduce-scatter, all-to-all per-rank, broadcast) or the
//    per-rank input (all-gather, as ASTRA-sim reads it). BARRIER is a 4-byte all-reduce, REDUCE
//    is timed as a broadcast; GATHER and SCATTER are refused.
//  * COMM_SEND_NODE to comm_dst / COMM_RECV_NODE from comm_src, matched first-in first-out per
//    (source, destination, comm_tag): the send is eager and completes when the data lands
//    (the p2p model's time); the receive completes when it is issued and the data has landed.
// Pure function of its inputs; deterministic.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "base/units.h"
#include "config/scenario.h"
#include "exec/graph_runner.h"
#include "interop/chakra_trace.h"

namespace preflight {

// A replay's results are the graph runner's (exec/graph_runner.h): per rank its end, GPU and
// communication busy time and breakdown (compute wins over communication, communication over
// CPU work: host_overhead is time with only CPU ops running, bubble time with nothing running;
// no host dispatch is modelled beyond the trace's own CPU nodes); the trace's intervals have
// stage = rank and stream 0.. = GPU stream, −1 = CPU thread, −2 = sends, receives and memory
// nodes.
using ChakraRankResult = GraphRankResult;
using ChakraReplayResult = GraphRunResult;

struct ChakraReplayOptions {
  bool trace = false;
};

// `s` on a cluster that holds `ranks` ranks: cluster.nodes = ⌈ranks / gpus_per_node⌉. Only the
// cluster, collectives and simulation sections matter to a replay.
StatusOr<Scenario> chakra_scenario(int ranks, const Scenario& s);

// Replays `w` on `s`'s cluster (REQUIRES: s.cluster.total_gpus() >= ranks, e.g. from
// chakra_scenario). Errors name the rank, node and what does not fit: an unknown communicator,
// a rank outside its group, mismatched collectives, unsupported collective types, a send whose
// receive never comes, a collective a member never reaches. With simulation.network: flow,
// every collective whose group spans nodes and every cross-node send is carried through the
// fabric by the transport (exec/transport.h) on the flow-level fabric, sharing links with
// whatever else is in flight; otherwise each takes the collective model's time alone.
StatusOr<ChakraReplayResult> replay_chakra(const ChakraWorkload& w, const Scenario& s,
                                           const ChakraReplayOptions& options = {});

}  // namespace preflight
