// What the files of the workload generator share (generator.cc, model_blocks.cc,
// sharded_dp.cc, dualpipe_pairs.cc, stage_program.cc): appending a block, a step that runs one,
// and the parameters of one layer on one GPU. Internal to src/workload; the public face is
// generator.h.
#pragma once

#include <cstdint>
#include <vector>

#include "config/scenario.h"
#include "workload/schedule.h"
#include "workload/workload.h"

namespace preflight {

// Appends block `name` with `ops` to `w`; returns its id (its index in w.blocks).
int add_block(Workload& w, const char* name, std::vector<Op> ops);

// A kRun step of `block`, `repeat` times in a row, for task `t` (its micro-batch, chunk and
// direction label the trace).
Step block_step(int block, int repeat, const PipelineTask& t);

// Non-expert parameters of model layer `layer` on one GPU: attention, norms, the dense MLP or
// the shared experts and the router, all split over TP. Their gradients go to the DP buckets.
int64_t layer_dense_params_per_gpu(const Scenario& s, int layer);

// Routed-expert parameters of model layer `layer` on one GPU (split over ep·etp), reduced and
// gathered over the expert-DP group.
int64_t layer_expert_params_per_gpu(const Scenario& s, int layer);
// (With LoRA both count the trainable parameters only: the layer's adapters, and no experts.)

}  // namespace preflight
