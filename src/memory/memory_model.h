// Memory per GPU of every pipeline stage of one training iteration: model states (weights,
// gradients, Adam states; sharded by the distributed optimizer or ZeRO 1/2/3), activations held
// for backward by the micro-batches in flight under the schedule, and the buffers around them.
// Pure functions of a validated Scenario; "does not fit" is a field, never an error.
//
// Sources (docs/memory.md has every formula): activations per layer from Korthikanti et al.
// 2022, "Reducing Activation Recomputation in Large Transformer Models", §4 (GPT blocks), with
// the same accounting carried to FlashAttention, SwiGLU, GQA, MLA (DeepSeek-V2 §2.1), MoE layers
// (Megatron-Core's MoE guide: router, token dispatch, grouped experts, combine; DeepSeek-V3
// report §3), hybrid layers (a Mamba-2 mixer from what mamba_ssm's fused scan saves for
// backward; attention-only and MLP-only layers as the halves of a transformer layer) and
// context parallelism (s/cp tokens per rank); 18 bytes per parameter for
// mixed-precision Adam and its sharded forms from Megatron-LM's distributed-optimizer table and
// Rajbhandari et al. 2020 (ZeRO), routed experts sharded over ep·etp and their optimizer states
// over the expert-DP group; in-flight micro-batches by walking pipeline_order().
#pragma once

#include <vector>

#include "base/units.h"
#include "config/scenario.h"

namespace preflight {

// One GPU of pipeline stage `stage` (every TP/DP rank of a stage holds the same amount).
// Invariants: steady = weights + gradients + optimizer + activations + comm_buffers + framework;
// peak = steady + transient; headroom = capacity − peak (negative when it does not fit).
struct StageMemory {
  int stage = 0;
  // Sharded by ZeRO over dp·cp, and, for routed experts, over the expert-DP group.
  Bytes weights;    // half-precision parameters (2 B each; ÷dp under ZeRO-3)
  Bytes gradients;  // main gradients: fp32 (bf16/fp8 training) or fp16 (÷dp under ZeRO ≥ 2)
  Bytes optimizer;  // fp32 master weights + Adam m and v, 12 B/param (÷dp under ZeRO ≥ 1)
  // Peak of the activations held for backward: transformer layers, plus the embedding on the
  // first stage and the final norm / output-layer input on the last.
  Bytes activations;
  Bytes layer_activations;           // the transformer-layer part of `activations`
  Bytes activations_per_microbatch;  // one micro-batch through all of this stage's chunks
  int microbatches_in_flight = 0;    // most micro-batches holding activations at once
  // Peak held activations in units of "all layers of this stage for one micro-batch":
  // = microbatches_in_flight without interleaving; p·(1 + (p−1)/(p·v)) on the first stage of
  // interleaved 1F1B.
  double layer_sets_in_flight = 0;
  // Activation offloading (parallelism.offload_layers): the saved activations of the offloaded
  // layers for one micro-batch, held in the host's pinned memory by the end of the forward
  // (not part of `peak`, which counts HBM only). 0 without offloading.
  Bytes offloaded;
  Bytes logits_and_loss;  // last stage: fp32 logits kept by the loss + the half-precision logits
  Bytes comm_buffers;     // DP gradient bucket, SP all-gather buffer, ZeRO-3 parameter gathers
  Bytes framework;        // training.framework_overhead + fragmentation of short-lived tensors
  // Largest short-lived allocation on top of `steady`: the loss buffers, the backward working set
  // of one layer (recomputed activations and gradient buffers), or the fp32 gradient copy of
  // the fp16 optimizer step (less the activations freed by then).
  Bytes transient;
  Bytes steady;
  Bytes peak;
  Bytes capacity;  // cluster.gpu.hbm_capacity
  bool fits = false;
  Bytes headroom;
};

struct MemoryReport {
  std::vector<StageMemory> stages;  // one per pipeline stage, in order
  int limiting_stage = 0;           // the stage with the least headroom (lowest index on ties)
  bool fits = false;                // every stage fits
};

// REQUIRES: validate_scenario(s).ok(). Cost O(p²·v²) for interleaved schedules, O(p) otherwise.
MemoryReport estimate_memory(const Scenario& s);

// Activations one transformer layer keeps for backward, per GPU, for one micro-batch, under the
// scenario's TP, SP, CP, recompute, attention kernel and model (Korthikanti et al. 2022 terms):
// the mean over the model's layers (dense and MoE layers differ). Oracle (GPT, unfused
// attention, dropout, TP t, no SP, no recompute): s·b·h·(10 + 24/t + 5·a·s/(h·t)).
// REQUIRES: validate_scenario(s).ok().
Bytes layer_activation_bytes(const Scenario& s);

// The same for layer `layer` (0-based): a dense layer, or an MoE layer with its router,
// dispatched tokens, expert intermediates and combine input (balanced router); a hybrid's
// Mamba-2, attention-only, MLP-only or MoE-only layer (docs/memory.md §2.6).
// REQUIRES: validate_scenario(s).ok(), 0 <= layer < s.model.layers.
Bytes layer_activation_bytes(const Scenario& s, int layer);

// The saved activations of each offloaded layer (layers 0 .. parallelism.offload_layers − 1),
// per GPU and micro-batch: what each moves to the host and back (layer_activation_bytes(s, l)).
// Empty without offloading. REQUIRES: validate_scenario(s).ok().
std::vector<Bytes> offloaded_layer_bytes(const Scenario& s);

// Bytes of weights + gradients + optimizer states per GPU for `params` dense (non-expert)
// parameters on one GPU under the scenario's precision and sharding over dp·cp (18·params for
// bf16 Adam without sharding).
Bytes model_state_bytes(const Scenario& s, int64_t params);

// The ZeRO stage in effect: parallelism.zero_stage, at least 1 with distributed_optimizer.
int effective_zero_stage(const Scenario& s);

// The HBM a strategy should leave free on a GPU of `hbm`: 2.5 % of it, at least 2 GiB. The peak
// is an estimate, and a real job's moves by about that much with the caching allocator's
// fragmentation and NCCL's buffers (docs/memory.md §5). `search` rejects strategies that leave
// less (its default --headroom) and `simulate` warns of them.
Bytes recommended_headroom(Bytes hbm);

}  // namespace preflight
