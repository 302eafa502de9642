// Activation bytes of one layer per GPU and micro-batch, the part of the memory model
// (memory_model.h) that knows the layers' tensors: docs/memory.md §2.
#pragma once

#include "config/scenario.h"

namespace preflight::memory_internal {

// One layer's activation bytes per GPU for one micro-batch, split the way recompute uses them
// (docs/memory.md §2). Activations are 2-byte (fp16/bf16) tensors, dropout masks 1 byte.
// With context parallelism every rank holds s/cp of each sequence (Megatron/Transformer Engine
// split it into 2·cp load-balanced chunks), so every per-token term is per s/cp tokens.
struct LayerBytes {
  double kept = 0;        // saved for backward without recompute, attention core excluded
  double core = 0;        // attention core: softmax (+ dropout) of the unfused core, or the fp32
                          // log-sum-exp FlashAttention keeps
  double checkpoint = 0;  // the layer input, all that full recompute keeps
  double gradients = 0;   // activation gradients alive while one layer runs backward
  // Of `kept`: what the chosen selective-recompute modules drop and rebuild before the
  // backward (parallelism.recompute_modules; the attention core is `core`).
  double selective = 0;
};

// A transformer layer's (`moe_layer`: its MLP is the MoE block).
LayerBytes layer_bytes(const Scenario& sc, bool moe_layer);

// A hybrid's attention-only (`*`) layer, or its MLP-only (`-`, or `E` with `moe_layer`) layer:
// the half of a transformer layer's pieces it holds.
LayerBytes half_layer_bytes(const Scenario& sc, bool attention, bool moe_layer);

// A Mamba-2 mixer layer (Megatron-Core's MambaLayer on mamba_ssm's memory-efficient fused path).
LayerBytes mamba_layer_bytes(const Scenario& sc);

// What one layer keeps for its backward under the scenario's recompute mode.
double saved_per_layer(const Scenario& sc, const LayerBytes& l);

// Backward of one layer on top of what is held: what recompute rebuilds, plus gradients.
double backward_working_set(const Scenario& sc, const LayerBytes& l);

}  // namespace preflight::memory_internal
