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
//
// A flow carries the bytes the protocol puts on the wire: NCCL's network transport sends its
// LL and LL128 buffers as they are, flags included (src/device/prims_ll.h, prims_ll128.h: an LL
// line is 8 data bytes and two 4-byte flags, 16 bytes; an LL128 line is 16 eight-byte words,
// one of them the flag), so LL doubles the payload and LL128 adds 128/120; Simple sends the
// payload alone.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "base/units.h"
#include "collective/collective_model.h"
#include "network/fabric.h"
#include "workload/workload.h"

namespace preflight {

// The wire bytes per payload byte of an NCCL protocol ("LL", "LL128", "Simple"; 1 for "" and
// any other name).
double protocol_wire_factor(const std::string& protocol);

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
