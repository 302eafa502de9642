// The execution core's graph runner: per-rank dependency graphs of nodes on queues (a CPU
// thread or a GPU stream each), run on the event Simulator with the rendezvous of collectives
// and point-to-point messages, timed through the collective model and the transport, and
// summed into one Breakdown per rank. Imported traces run on it (interop/chakra_replay.h turns
// a Chakra workload into a GraphProgram); the generated Megatron workload runs on the stage
// runner (exec/executor.h), and its Chakra export replays here to the picosecond.
//
// The semantics:
//  * A node is ready when all of its dependencies have finished. A queue runs one node at a
//    time, the ready node with the lowest `order` first; a node without a queue starts when
//    ready.
//  * kWork takes its `duration`; kNone takes no time and leaves no interval.
//  * kCollective: the k-th collective a rank issues on a group meets the k-th of every other
//    member (kind and bytes must match); it starts when the last member arrives and lasts what
//    the collective model plans for the group's placement, or, on the flow network, until the
//    transport has carried the planned transfers of a group that spans nodes.
//  * kSend to `peer` / kRecv from `peer`, matched first-in first-out per (source, destination,
//    tag): the send is eager and completes when the data lands; the receive completes when it is
//    issued and the data has landed.
//  * Breakdown: at each instant of a rank, the highest-priority class running (compute before
//    the optimizer before communication, tp > cp > ep > pp > dp > other; then offload copies,
//    then CPU work as host overhead; nothing running is bubble).
// Pure function of its inputs; deterministic.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "base/status.h"
#include "base/units.h"
#include "collective/collective_model.h"
#include "compute/compute_model.h"
#include "config/scenario.h"
#include "exec/breakdown.h"
#include "exec/executor.h"
#include "network/network_backend.h"

namespace preflight {

enum class GraphNodeKind : uint8_t { kWork, kCollective, kSend, kRecv, kNone };

// What a node's interval counts as, in the order the breakdown reports them.
enum class GraphClass : uint8_t {
  kCompute,
  kOptimizer,
  kTp,
  kPp,
  kDp,
  kEp,
  kCp,
  kOtherComm,
  kOffload,  // activation copies to or from host memory
  kCpu,
};
constexpr int kGraphClasses = 10;

// The trace category a class is drawn as (other communication as DP).
Category category_of(GraphClass c);

struct GraphNode {
  uint64_t order = 0;  // among ready nodes of one queue, the lowest starts first
  GraphNodeKind kind = GraphNodeKind::kNone;
  GraphClass cls = GraphClass::kCompute;
  int queue = -1;         // index into the rank's queues; −1: none
  int trace_stream = -2;  // the trace's stream: a GPU stream, −1 the CPU thread, −2 messages
  SimTime duration;       // kWork
  int group = -1;         // kCollective: index into GraphProgram::groups
  CollectiveKind collective = CollectiveKind::kAllReduce;
  Bytes bytes;      // kCollective: the collective's buffer; kSend: the message
  int peer = -1;    // kSend: the destination rank; kRecv: the source rank
  int64_t tag = 0;  // kSend / kRecv
  int deps = 0;     // dependencies not yet finished
  std::vector<int> dependents;
  const std::string* name = nullptr;  // for the trace (outlives the run)
};

struct GraphGroup {
  std::string name;
  std::vector<int> members;  // ascending ranks
  GroupPlacement placement;
};

// The placement of ranks `members` when ranks fill nodes of `gpus_per_node` in order.
GroupPlacement graph_placement(const std::vector<int>& members, int gpus_per_node);

struct GraphRankProgram {
  std::vector<GraphNode> nodes;
  int queues = 0;
};

struct GraphProgram {
  std::vector<GraphGroup> groups;
  std::vector<GraphRankProgram> ranks;
};

// The collective model's plans, cached per (group, kind, bytes).
class GraphPlans {
 public:
  GraphPlans(const CollectiveModel& model, const std::vector<GraphGroup>& groups)
      : model_(model), groups_(groups) {}
  const CollectivePlan& get(int group, CollectiveKind kind, Bytes bytes);
  const CollectiveModel& model() const { return model_; }

 private:
  const CollectiveModel& model_;
  const std::vector<GraphGroup>& groups_;
  std::map<std::tuple<int, int, int64_t>, CollectivePlan> cache_;
};

struct GraphRankResult {
  SimTime end;        // when its last node finished
  SimTime gpu_busy;   // union of its compute and optimizer intervals
  SimTime comm_busy;  // union of its communication intervals
  Breakdown breakdown;
  int64_t nodes = 0;
};

struct GraphRunResult {
  SimTime iteration_time;  // the latest end over all ranks
  int critical_rank = 0;
  std::vector<GraphRankResult> ranks;
  int64_t nodes = 0;
  int64_t events = 0;
  int64_t collectives = 0;         // collective instances (each counted once for its group)
  int64_t messages = 0;            // point-to-point transfers
  bool has_network_stats = false;  // the flow-level network's statistics
  NetworkStats network;
  // With GraphRunOptions::trace: every node's interval but kNone's (stage = rank).
  std::vector<TraceInterval> trace;
};

struct GraphRunOptions {
  bool trace = false;
  // Slows the GPU kernels (kWork nodes of the compute or optimizer class) of the ranks it times
  // apart by ComputeModel::slowdown at each node's start (stage 0: a graph has no stages);
  // null: every rank as its nodes say.
  const ComputeModel* compute = nullptr;
  std::string prefix;  // starts every error: the workload's name
  // Names node `node` of `rank` in errors ("rank 3 node 17 ('...')").
  std::function<std::string(int rank, int node)> describe;
};

// Runs `p` (consumed: its dependency counts run down) on `s`'s cluster with `network`'s
// transport, timing collectives and sends by `plans`. Errors: a collective whose kind or size
// differs across its members, and, when the run stops with nodes left, the first stuck node
// with why (the members that never issued its collective, the send that never came).
StatusOr<GraphRunResult> run_graph(GraphProgram& p, const Scenario& s,
                                   const NetworkBackend& network, GraphPlans& plans,
                                   const GraphRunOptions& options);

}  // namespace preflight
