#include "exec/executor.h"

#include <algorithm>
#include <string>

#include "base/check.h"
#include "exec/execution_internal.h"

namespace preflight {

namespace {

// The DP replicas the group of kind `g` that holds rank 0 of stage 0 reaches (groups of a kind
// are alike, so one tells for all).
int replicas_reached(const RankLayout& l, GroupKind g) {
  if (g == GroupKind::kPipeline || g == GroupKind::kEmbedding) return 1;  // one replica's stages
  std::vector<int> replicas;
  for (int rank : l.members(g, 0, 0)) replicas.push_back(rank / (l.tp() * l.cp()));
  std::sort(replicas.begin(), replicas.end());
  return static_cast<int>(std::unique(replicas.begin(), replicas.end()) - replicas.begin());
}

}  // namespace

bool group_crosses_replicas(const RankLayout& layout, GroupKind g) {
  return replicas_reached(layout, g) > 1;
}

bool group_spans_part_of_replicas(const RankLayout& layout, GroupKind g) {
  const int reached = replicas_reached(layout, g);
  return reached > 1 && reached < layout.dp();
}

ExecutionResult execute(const Workload& w, const ComputeModel& compute,
                        const CollectiveModel& collectives, const JobGroups& groups,
                        const ExecutorOptions& options) {
  PREFLIGHT_CHECK(!w.stages.empty());
  exec_internal::Execution exec(w, compute, collectives, groups, options);
  return exec.run();
}

}  // namespace preflight
