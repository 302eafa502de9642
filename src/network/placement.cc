#include "network/placement.h"

#include <algorithm>

#include "base/check.h"

namespace preflight {

GroupPlacement place_group(int size, int stride, int gpus_per_node) {
  PREFLIGHT_CHECK(size >= 1 && stride >= 1 && gpus_per_node >= 1);
  GroupPlacement g;
  g.size = size;
  if (stride >= gpus_per_node || gpus_per_node % stride != 0) {
    g.per_node = 1;
  } else {
    g.per_node = std::min(size, gpus_per_node / stride);
  }
  g.nodes = (size + g.per_node - 1) / g.per_node;
  g.sharing_nic = std::max(1, gpus_per_node / g.per_node);
  return g;
}

JobGroups place_job_groups(const Scenario& s) {
  const ParallelismConfig& p = s.parallelism;
  const int gpn = s.cluster.gpus_per_node;
  JobGroups j;
  const int stage_ranks = p.tp * p.cp * p.dp;
  j.tp = place_group(p.tp, 1, gpn);
  j.cp = place_group(p.cp, p.tp, gpn);
  // Gradients reduce over the data-parallel ranks of all CP ranks together (Megatron-Core's
  // DP×CP group): cp·dp consecutive groups of tp.
  j.dp = place_group(p.dp * p.cp, p.tp, gpn);
  j.pp = place_group(2, stage_ranks, gpn);
  // The pair is rank r < tp·cp·dp of the first stage and r + tp·cp·dp·(pp−1) of the last: on one
  // node exactly when the whole job is, even where that stride does not divide the node.
  const int embedding_stride = stage_ranks * std::max(1, p.pp - 1);
  j.embedding = stage_ranks * p.pp <= gpn ? place_group(2, 1, gpn)
                                          : place_group(2, embedding_stride, gpn);
  const int etp = s.expert_tp();
  const int ep = std::max(1, p.ep);
  j.etp = place_group(etp, 1, gpn);
  j.ep = place_group(ep, etp, gpn);
  j.edp = place_group(std::max(1, stage_ranks / (etp * ep)), etp * ep, gpn);
  return j;
}

}  // namespace preflight
