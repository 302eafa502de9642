// Pipeline schedules: the order in which one pipeline stage runs the forward and backward passes
// of its micro-batches (and model chunks, for the interleaved schedule).
//   GPipe: all forwards, then all backwards (Huang et al. 2019).
//   1F1B: p−i−1 warm-up forwards on stage i, then alternate one forward and one backward, then
//         drain (PipeDream-Flush, Narayanan et al. 2021). Bubble (p−1)/(m+p−1) with equal stages.
//   Interleaved 1F1B: v model chunks per stage, (p−i−1)·2 + (v−1)·p warm-up forwards, chunk of
//         the k-th forward = (k mod p·v) / p, as in Megatron-LM (Narayanan et al. 2021, §2.2).
#pragma once

#include <vector>

#include "config/scenario.h"

namespace preflight {

struct PipelineTask {
  bool backward = false;
  int microbatch = 0;
  int chunk = 0;  // model chunk on this stage, 0 .. v−1
};

// REQUIRES: 0 <= stage < p, m >= 1, v >= 1; interleaved requires m % p == 0.
std::vector<PipelineTask> pipeline_order(Schedule schedule, int stage, int p, int m, int v);

}  // namespace preflight
