// A collective as GPU-to-GPU flows: the translation between the collective planner's choice and
// a fabric (network/fabric.h), which knows nothing of collectives.
//
// The planner's algorithm (ring, tree, direct all-to-all, ring send/recv steps) is decomposed
// (decomposition.h) into per-step transfers; the inter-node ones are summed per (source GPU,
// destination GPU, sending NIC) over all steps and channels: one flow per pair. That is the fluid
// limit of NCCL's pipelined chunks: each pair streams its whole share at once rather than step
// after step, so link loads (which links, how many bytes) are exact, while the start-up of the
// pipeline and the dependency of one step on the previous are left to the planner's
// size-independent latency. In-node (NVLink) hops are not carried. NVLS and CollNet have no
// inter-node decomposition of their own: NVLS Tree and CollNet (in-network reduction) cross
// nodes as a tree, NVLS and PAT as a ring.
#pragma once

#include <cstdint>
#include <map>
#include <tuple>
#include <vector>

#include "base/units.h"
#include "collective/collective_model.h"
#include "network/fabric.h"
#include "workload/workload.h"

namespace preflight {

class CollectiveFlows {
 public:
  // Nodes of `gpus_per_node` GPUs and `nics_per_node` NICs; `pxn`: NCCL's PXN (a send may leave
  // through the NIC of another GPU of its node).
  CollectiveFlows(int gpus_per_node, int nics_per_node, bool pxn);

  // Appends to `flows` the inter-node flows of collective `kind` of `bytes` (nccl-tests size) on
  // the group `members` (GPUs, in group-rank order), as `plan` chose it. A group of one GPU adds
  // nothing. Groups of the same shape (node pattern and GPU indices) decompose alike, once.
  void add(const std::vector<int>& members, CollectiveKind kind, Bytes bytes,
           const CollectivePlan& plan, std::vector<GpuFlow>* flows);

 private:
  // One flow of a group: group ranks, the sending NIC (index on its node), the bytes.
  struct PairFlow {
    int src = 0, dst = 0, nic = -1;
    int64_t bytes = 0;
  };
  const std::vector<PairFlow>& pair_flows(const std::vector<int>& members, CollectiveKind kind,
                                          Bytes bytes, const CollectivePlan& plan);

  int gpus_per_node_, nics_per_node_;
  bool pxn_;
  std::map<std::tuple<std::vector<int>, std::vector<int>, int, int, int64_t, int>,
           std::vector<PairFlow>>
      cache_;
};

}  // namespace preflight
