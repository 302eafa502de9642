// Transport: the seam through which the executor hands cross-node traffic to a network backend
// that models contention (the flow-level network). Without a transport, every transfer takes the
// time the collective model computes alone (the analytical network). A transport is created per
// run on the run's Simulator and calls each completion callback exactly once, from an event.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/units.h"
#include "engine/simulator.h"
#include "workload/workload.h"

namespace preflight {

// Load of one directed link channel over the run.
struct LinkLoad {
  std::string name;  // "nic3.5>leaf0.5"
  std::string tier;  // LinkTier name: scale_up, host_nic, nic_leaf, leaf_spine, spine_core
  double bytes = 0;
  double utilization = 0;  // bytes / (capacity · run time)
};

struct TransportStats {
  int64_t flows = 0;
  int64_t solves = 0;           // max-min rate recomputations
  std::vector<LinkLoad> links;  // every channel that carried bytes
};

class Transport {
 public:
  using Done = std::function<void(SimTime finish)>;
  virtual ~Transport() = default;

  // Starts, now, the pipeline transfer of `bytes` from every GPU of stage `from` to its peer in
  // stage `to` (all TP ranks and DP replicas at once); `done` fires when the last one lands.
  virtual void send(int from, int to, Bytes bytes, SimTime latency, Done done) = 0;

  // Starts, now, collective `kind` of `bytes` (nccl-tests size) on every DP group of `stage` at
  // once, as rings: each rank streams its ring share to its successor; `done` fires when the
  // slowest group finishes.
  virtual void dp_collective(int stage, CollectiveKind kind, Bytes bytes, SimTime latency,
                             Done done) = 0;

  // Statistics at the end of a run that lasted `end`.
  virtual TransportStats stats(SimTime end) const = 0;
};

using TransportFactory = std::function<std::unique_ptr<Transport>(Simulator*)>;

}  // namespace preflight
