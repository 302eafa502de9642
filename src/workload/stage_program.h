// One pipeline stage's program in a generated workload: the stage's passes in schedule order
// (schedule.h) with their pipeline sends and receives and the blocks each pass runs, DualPipe's
// overlapped pairs, the DP gradient reduction (bucketed and overlapped with the last backward
// when overlap_grad_reduce; per layer under ZeRO-3), the gradient sync of DualPipe's two copies
// of a stage or of tied embeddings, the optimizer step and the parameter all-gather.
// Internal to the workload generator (generator.h).
#pragma once

#include <vector>

#include "config/scenario.h"
#include "workload/dualpipe_pairs.h"
#include "workload/layer_ops.h"
#include "workload/model_blocks.h"
#include "workload/workload.h"

namespace preflight {

// The program of stage `stage` (DualPipe: of rank `stage`, which holds model stages `stage` and
// p−1−stage). Adds the stage's optimizer block to `w`, and through `pairs` the overlapped copies
// of blocks its DualPipe pairs run. `x` = make_layer_shape(s); `blocks` were added to `w`;
// `offload_bytes` as generate_workload's.
// REQUIRES: validate_scenario(s).ok(), 0 <= stage < s.parallelism.pp.
Program stage_program(const Scenario& s, const LayerShape& x, const ModelBlocks& blocks, int stage,
                      const std::vector<Bytes>& offload_bytes, DualPipePairs& pairs, Workload& w);

}  // namespace preflight
