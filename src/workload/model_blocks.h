// The blocks of a generated workload that hold the model itself: one forward and one backward
// block per distinct layer (identical layers share them), the embedding, and the loss head with
// any multi-token-prediction modules; for the split schedules (zb_h1, zb_h2, dualpipe) each
// backward block is split into its B and W halves. Stage programs refer to them by id.
// Internal to the workload generator (generator.h).
#pragma once

#include <map>
#include <vector>

#include "config/scenario.h"
#include "workload/layer_ops.h"
#include "workload/workload.h"

namespace preflight {

struct ModelBlocks {
  // Per model layer: the ids of its forward and backward blocks.
  std::vector<int> layer_fwd, layer_bwd;
  int embedding_fwd = -1, embedding_bwd = -1;
  int head_fwd = -1, head_bwd = -1;
  // Split schedules: backward block -> its B block ("<name>.input"); the backward block keeps
  // the weight-gradient GEMMs ("*.wgrad"), the W pass. Empty for the other schedules.
  std::map<int, int> input_block;
};

// Appends the model's blocks to `w`, in a fixed order (layers, embedding, head, B halves), and
// for a MoE model one MoeLayerStats per MoE layer to w.moe_layers. `x` = make_layer_shape(s).
ModelBlocks add_model_blocks(const Scenario& s, const LayerShape& x, Workload& w);

// A run of consecutive layers that share one forward and one backward block.
struct LayerRun {
  int fwd = -1, bwd = -1;
  int count = 0;
  int first_layer = 0;  // model layer index of the run's first layer
};

// The runs of consecutive layers [first, first + count) with equal blocks, first to last; last
// to first when `backward`.
std::vector<LayerRun> layer_runs(const ModelBlocks& mb, int first, int count, bool backward);

}  // namespace preflight
