#include "exec/executor.h"

#include "base/check.h"
#include "exec/execution_internal.h"

namespace preflight {

ExecutionResult execute(const Workload& w, const ComputeModel& compute,
                        const CollectiveModel& collectives, const JobGroups& groups,
                        const ExecutorOptions& options) {
  PREFLIGHT_CHECK(!w.stages.empty());
  exec_internal::Execution exec(w, compute, collectives, groups, options);
  return exec.run();
}

}  // namespace preflight
