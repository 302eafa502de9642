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
  j.tp = place_group(p.tp, 1, gpn);
  j.dp = place_group(p.dp, p.tp, gpn);
  j.pp = place_group(2, p.tp * p.dp, gpn);
  // The pair is rank r < tp·dp of the first stage and r + tp·dp·(pp−1) of the last: on one node
  // exactly when the whole job is, even where that stride does not divide the node.
  const int embedding_stride = p.tp * p.dp * std::max(1, p.pp - 1);
  j.embedding =
      p.tp * p.dp * p.pp <= gpn ? place_group(2, 1, gpn) : place_group(2, embedding_stride, gpn);
  return j;
}

}  // namespace preflight
