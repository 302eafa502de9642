// LoRA fine-tuning in a block of kernels (training.lora; Hu et al. 2021, "LoRA: Low-Rank
// Adaptation of Large Language Models"). Pure function of the scenario and the ops; a no-op
// without LoRA.
//   * Frozen weights have no weight gradient: every "*.wgrad" GEMM is dropped, and so is the
//     embedding's backward scatter (the embedding is frozen too). Input gradients still flow
//     through every layer ("*.dgrad" stays).
//   * Each target linear (qkv, proj, fc1, fc2; its GEMM "<t>.fwd" is T×d_out×d_in on this TP
//     rank) gains its adapter after the base GEMM: "lora.<t>.a.fwd" (T×r×d_in) and
//     "lora.<t>.b.fwd" (T×d_out×r) accumulating into the base output; in the backward, after
//     "<t>.dgrad": B's input gradient (T×r×d_out) and weight gradient (d_out×r×T), then A's
//     input gradient (T×d_in×r, accumulated into the base input gradient) and weight gradient
//     (r×d_in×T). The adapters run in bf16 (precision_ops.h keeps "lora.*" in 16 bits).
// What the adapters' gradients cost in the DP reduction and the optimizer follows from
// stage_trainable_parameters_per_gpu (generator.h).
#pragma once

#include <vector>

#include "config/scenario.h"
#include "workload/workload.h"

namespace preflight {

// Rewrites one block's `ops` for LoRA as described above. REQUIRES: ops != nullptr.
void apply_lora(const Scenario& s, std::vector<Op>* ops);

}  // namespace preflight
