// DualPipe's overlapped pairs (dualpipe_pairs.h): the copies of blocks whose EP all-to-alls run
// on the communication stream, and the wait that closes each pair.
#include "workload/dualpipe_pairs.h"

#include <utility>

#include "workload/generator_internal.h"
#include "workload/layer_ops.h"

namespace preflight {

DualPipePairs::DualPipePairs(const Scenario& s, Workload& w) : w_(w) {
  const ParallelismConfig& par = s.parallelism;
  const bool pairs = par.schedule == Schedule::kDualPipe || par.overlap_moe_comm;
  if (pairs && s.model.moe.enabled() && par.ep > 1) {
    Op wait = memory_op("dualpipe.pair.wait", 0, Category::kEpComm);
    wait.wait_comm = true;
    pair_sync_ = add_block(w_, "dualpipe.pair.wait", {wait});
  }
}

void DualPipePairs::overlap(Program& prog, size_t pair_start, const PipelineTask& second) {
  if (pair_sync_ < 0) return;
  for (size_t k = pair_start; k < prog.steps.size(); ++k) {
    Step& st = prog.steps[k];
    if (st.kind == StepKind::kRun) st.block = overlapped_block(st.block);
  }
  prog.steps.push_back(block_step(pair_sync_, 1, second));
}

int DualPipePairs::overlapped_block(int block) {
  auto it = overlapped_.find(block);
  if (it != overlapped_.end()) return it->second;
  Block copy = w_.blocks[block];
  bool any = false;
  for (Op& op : copy.ops) {
    if (op.type == OpType::kCollective && op.group == GroupKind::kExpert) {
      op.async = true;
      any = true;
    }
  }
  int id = block;
  if (any) {
    w_.blocks.push_back(std::move(copy));
    id = static_cast<int>(w_.blocks.size()) - 1;
  }
  overlapped_.emplace(block, id);
  return id;
}

}  // namespace preflight
