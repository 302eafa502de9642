// Where a communicator's GPUs sit in the cluster: a group of `size` GPUs `stride` apart (the
// shape every Megatron communicator has, parallel/rank_layout.h) on nodes of `gpus_per_node`
// GPUs. The collective and network models plan from this footprint alone.
#pragma once

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

}  // namespace preflight
