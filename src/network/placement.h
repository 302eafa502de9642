// Where a communicator's ranks sit in the cluster. Megatron orders ranks TP fastest, then CP,
// then DP, then PP (rank = tp_rank + tp·(cp_rank + cp·(dp_rank + dp·pp_rank))), so a group is a
// set of `size` ranks `stride` apart; with `gpus_per_node` GPUs per node that fixes how many
// members share a node. Expert layers refold a stage's tp·cp·dp ranks as etp × ep × edp
// (expert-TP fastest), as Megatron-Core does.
#pragma once

#include "config/scenario.h"

namespace preflight {

struct GroupPlacement {
  int size = 1;      // ranks in the group
  int nodes = 1;     // nodes it spans
  int per_node = 1;  // members on each node
  // Groups of the same kind whose members share one node's NICs, all communicating at once
  // (every GPU of a node belongs to one such group): gpus_per_node / per_node.
  int sharing_nic = 1;

  bool crosses_nodes() const { return nodes > 1; }
};

// REQUIRES: size >= 1, stride >= 1, gpus_per_node >= 1.
GroupPlacement place_group(int size, int stride, int gpus_per_node);

// The placements of the communicators of a Megatron job.
struct JobGroups {
  GroupPlacement tp;
  GroupPlacement dp;  // the gradient-reduction group: dp·cp ranks, stride tp
  GroupPlacement pp;         // two neighbouring stages
  GroupPlacement embedding;  // first and last stage
  GroupPlacement cp;         // context-parallel ranks (stride tp)
  GroupPlacement ep;         // expert-parallel ranks (stride etp, in the expert folding)
  GroupPlacement etp;        // expert tensor-parallel ranks (contiguous)
  GroupPlacement edp;        // expert data-parallel ranks (stride etp·ep)
};

JobGroups place_job_groups(const Scenario& s);

}  // namespace preflight
