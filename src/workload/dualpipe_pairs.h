// DualPipe's overlapped pairs (DeepSeek-V3 §3.2.1, Figure 4): the forward of one micro-batch
// and the backward of another run back to back on the compute stream, so that each one's expert
// all-to-alls run behind the other's compute. Inside a pair, blocks run as copies whose EP
// all-to-alls are asynchronous on the communication stream, and the pair ends by waiting for
// that stream: it costs about max(compute, all-to-all) instead of their sum, the ideal overlap,
// without the SMs DeepSeek reserves for communication (20 of 132) slowing the compute.
// Internal to the workload generator; one object serves all stages of a workload.
#pragma once

#include <cstddef>
#include <map>

#include "config/scenario.h"
#include "workload/schedule.h"
#include "workload/workload.h"

namespace preflight {

class DualPipePairs {
 public:
  // Pairs overlap when the schedule is DualPipe and the model is MoE with ep > 1; then this adds
  // the pair's closing wait ("dualpipe.pair.wait") to `w`. `w` must outlive this object.
  DualPipePairs(const Scenario& s, Workload& w);

  // Makes the steps [pair_start, end) of `prog`, a pair's two passes, overlap: their blocks
  // become the copies with asynchronous EP all-to-alls (added to the workload once per block),
  // followed by the wait, labelled as `second`, the pair's second task. No-op when pairs do
  // not overlap.
  void overlap(Program& prog, size_t pair_start, const PipelineTask& second);

 private:
  // `block`'s copy with asynchronous EP all-to-alls; `block` itself when it has none.
  int overlapped_block(int block);

  Workload& w_;
  std::map<int, int> overlapped_;  // block -> its copy
  int pair_sync_ = -1;             // a no-op kernel that waits for the communication stream
};

}  // namespace preflight
