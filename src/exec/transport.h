// Transport: how the executor and the trace replay hand cross-node traffic to a fabric that
// models contention (the flow-level network, network/fabric.h). The transport speaks the
// workload's terms (stages, communicator kinds, collective plans) and turns them into GPU flows:
// Megatron's rank layout (parallel/rank_layout.h) names the GPUs, collective/collective_flows.h
// decomposes the collectives. Without a transport, every transfer takes the time the collective
// model computes alone (the analytical network). A transport is created per run on the run's
// Simulator and calls each completion callback exactly once, from an event.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "base/units.h"
#include "collective/collective_model.h"
#include "config/scenario.h"
#include "engine/simulator.h"
#include "network/fabric.h"
#include "workload/workload.h"

namespace preflight {

class Transport {
 public:
  using Done = std::function<void(SimTime finish)>;
  // The DP replicas (0 .. dp−1) a call stands for, ascending: the executor's class of replicas
  // run apart (exec/executor.h); empty: every replica.
  using Replicas = std::vector<int>;
  virtual ~Transport() = default;

  // Starts, now, the pipeline transfer of `bytes` from every GPU of stage `from` to its peer in
  // stage `to` (all TP, CP ranks and DP replicas at once, or those of `replicas`); `done` fires
  // when the last one lands. `latency`: the model's size-independent time of one transfer,
  // which counts the inter-node latency of a shortest network path (see collective()).
  virtual void send(int from, int to, Bytes bytes, SimTime latency, Done done,
                    const Replicas& replicas) = 0;

  // Starts, now, collective `kind` of `bytes` (nccl-tests size) on every group of kind `group`
  // of stage `stage` at once (kEmbedding: the first and last stage's pairs, `stage` unused), or
  // on those whose members all lie in `replicas`, as `plan`
  // chose it (algorithm, channels, size-independent latency). The transport carries the
  // inter-node transfers of the collective's decomposition; `done` fires when the slowest lands,
  // and no earlier than plan.latency + plan.protocol_time after now (what the protocol's
  // per-channel caps allow whatever the links). A transfer pays plan.latency with the shortest
  // network path's hop latencies replaced by those of its own route, then moves at its max-min
  // fair rate.
  virtual void collective(GroupKind group, int stage, CollectiveKind kind, Bytes bytes,
                          const CollectivePlan& plan, Done done, const Replicas& replicas) = 0;

  // GPU-level operations, for workloads that name GPUs rather than the groups of a Megatron job
  // (an imported Chakra trace, interop/chakra_replay.h); GPU g sits on node g / gpus_per_node.
  // Starts, now, a transfer of `bytes` from GPU `src` to GPU `dst` (as send()).
  virtual void send_gpus(int src, int dst, Bytes bytes, SimTime latency, Done done) = 0;
  // Starts, now, collective `kind` on the one group of GPUs `members` (in group-rank order), as
  // collective() does for each group of a kind.
  virtual void collective_gpus(const std::vector<int>& members, CollectiveKind kind, Bytes bytes,
                               const CollectivePlan& plan, Done done) = 0;
  // Statistics at the end of a run that lasted `end`.
  virtual NetworkStats stats(SimTime end) const = 0;
};

// Creates a run's Transport on the run's simulator.
using TransportFactory = std::function<std::unique_ptr<Transport>(Simulator*)>;

// The transport of scenario `s` (its rank layout, node shape and PXN) over the fabric `fabric`
// makes; empty when `fabric` is (the backend has no fabric).
TransportFactory make_transport_factory(FabricFactory fabric, const Scenario& s);

}  // namespace preflight
