// CollectiveModel (first version): the time of one collective from an alpha-beta model of NCCL's
// ring and tree algorithms on the group's bottleneck bandwidth, with nccl-tests' bus-bandwidth
// factors. The NCCL-faithful planner (algorithm × protocol × channels) will replace the
// internals behind the same `plan()` seam. Formulas, with n ranks on N nodes, k per node,
// α = collective_latency, β_s = collective_step_latency, L = inter-node latency, B = busBw:
//   ring all-reduce       α + 2(n−1)·β_s + 2(N−1)·L + 2(n−1)/n · S/B
//   tree all-reduce (N>1) α + 2((k−1)·β_s + ⌊log2 N⌋·(β_s + L)) + 2(n−1)/n · S/(0.92·B)
//   all-gather, reduce-scatter (ring)  α + (n−1)·β_s + (N−1)·L + (n−1)/n · S/B
//   broadcast (ring pipeline)          α + (n−1)·β_s + (N−1)·L + S/B
//   send/recv                          α + β_s (+ L across nodes) + S/B_p2p
// The cheaper of ring and tree is chosen, as NCCL's tuner does (0.92: NCCL's tree bandwidth
// correction, shared/reference nccl.md §5.5).
#pragma once

#include "base/units.h"
#include "config/scenario.h"
#include "network/network_backend.h"
#include "network/placement.h"
#include "workload/workload.h"

namespace preflight {

enum class Algorithm { kRing, kTree, kP2p };
const char* to_string(Algorithm a);
const char* to_string(CollectiveKind k);

struct CollectivePlan {
  Algorithm algorithm = Algorithm::kRing;
  SimTime time;
  double busbw_gbps = 0;  // achieved bus bandwidth (nccl-tests convention, 1e9 B/s)
};

class CollectiveModel {
 public:
  // `network` must outlive this object.
  CollectiveModel(const ClusterConfig& cluster, const NetworkBackend& network);

  // REQUIRES: g.size >= 1. A group of one rank costs nothing.
  CollectivePlan plan(CollectiveKind kind, const GroupPlacement& g, Bytes bytes) const;
  // One point-to-point transfer between two GPUs.
  CollectivePlan p2p(Bytes bytes, bool cross_node) const;

 private:
  const NetworkBackend& network_;
  SimTime alpha_;
  SimTime step_;
};

}  // namespace preflight
