// Transport: the seam through which the executor hands cross-node traffic to a network backend
// that models contention (the flow-level network). Without a transport, every transfer takes the
// time the collective model computes alone (the analytical network). A transport is created per
// run on the run's Simulator (NetworkBackend::transport_factory) and calls each completion
// callback exactly once, from an event.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/units.h"
#include "collective/collective_model.h"
#include "engine/simulator.h"
#include "network/network_backend.h"
#include "workload/workload.h"

namespace preflight {

// Load of one directed link channel over the run.
struct LinkLoad {
  std::string name;  // "nic3.5>leaf0.5"
  std::string tier;  // LinkTier name: scale_up, host_nic, nic_leaf, leaf_spine, spine_core
  double bytes = 0;
  double utilization = 0;  // bytes / (capacity · run time)
};

// Load of one link tier over time: Σ rates of the flows on the tier's channels / Σ capacities.
struct TierSeries {
  std::string tier;     // LinkTier name
  double capacity = 0;  // bytes/s, both directions of every link of the tier (line rate)
  double mean = 0;      // bytes carried / (capacity · run time)
  double peak = 0;      // highest instantaneous value
  // (from, utilization): a step function, each value holding until the next point's time: the
  // time-weighted mean over each of 500 equal slices of the run (a value equal to the previous
  // one is left out), and a last point at the run's end.
  std::vector<std::pair<SimTime, double>> points;
};

struct TransportStats {
  int64_t flows = 0;
  int64_t solves = 0;             // max-min rate recomputations
  std::vector<LinkLoad> links;    // every channel that carried bytes
  std::vector<TierSeries> tiers;  // every tier that carried bytes, bottom (scale_up) first
};

class Transport {
 public:
  using Done = std::function<void(SimTime finish)>;
  virtual ~Transport() = default;

  // Starts, now, the pipeline transfer of `bytes` from every GPU of stage `from` to its peer in
  // stage `to` (all TP, CP ranks and DP replicas at once); `done` fires when the last one lands.
  // `latency`: the model's size-independent time of one transfer, which counts the inter-node
  // latency of a shortest network path (see collective()).
  virtual void send(int from, int to, Bytes bytes, SimTime latency, Done done) = 0;

  // Starts, now, collective `kind` of `bytes` (nccl-tests size) on every group of kind `group`
  // of stage `stage` at once (kEmbedding: the first and last stage's pairs, `stage` unused), as
  // `plan` chose it (algorithm, channels, size-independent latency). The transport carries the
  // inter-node transfers of the collective's decomposition; `done` fires when the slowest lands.
  // A transfer pays plan.latency with the shortest network path's hop latencies replaced by
  // those of its own route, then moves at its max-min fair rate.
  virtual void collective(GroupKind group, int stage, CollectiveKind kind, Bytes bytes,
                          const CollectivePlan& plan, Done done) = 0;

  // GPU-level operations, for workloads that name GPUs rather than the groups of a Megatron job
  // (an imported Chakra trace, interop/chakra_replay.h); GPU g sits on node g / gpus_per_node.
  // Starts, now, a transfer of `bytes` from GPU `src` to GPU `dst` (as send()).
  virtual void send_gpus(int src, int dst, Bytes bytes, SimTime latency, Done done) = 0;
  // Starts, now, collective `kind` on the one group of GPUs `members` (in group-rank order), as
  // collective() does for each group of a kind.
  virtual void collective_gpus(const std::vector<int>& members, CollectiveKind kind, Bytes bytes,
                               const CollectivePlan& plan, Done done) = 0;
  // Statistics at the end of a run that lasted `end`.
  virtual TransportStats stats(SimTime end) const = 0;
};

}  // namespace preflight
