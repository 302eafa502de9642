// Uneven pipeline splits: how many transformer layers each virtual pipeline stage (model chunk)
// holds, in model order (chunk k = c·pp + stage is stage `stage`'s c-th chunk).
//
// * Megatron-Core's layout string (--pipeline-model-parallel-layout): 'E' the embedding, 't' a
//   decoder layer, 'm' a multi-token-prediction layer, 'L' the loss, '|' the boundary between
//   virtual stages, "x*n" n copies of x, "(...)*n" n copies of a group. DeepSeek-V3 on 8 × 4
//   virtual stages in Megatron-Bridge's H100 recipe: "Et|(tt|)*30mL" = 1, 2 × 30, 0 layers.
// * Megatron's account_for_embedding_in_pipeline_split / account_for_loss_in_pipeline_split:
//   the embedding and the loss each take a layer's place, and the L + e + l units split evenly
//   over the pp·vpp virtual stages (LLaMA-3.1 405B on 8 × 8: 126 + 2 = 128, two per chunk, so
//   the first chunk holds one layer after the embedding and the last one before the loss).
// * When pp·vpp does not divide the layers and the user names no split, default_pipeline_split()
//   picks the one Megatron-Bridge's recipes use.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"

namespace preflight {

// Layers per virtual stage of a Megatron layout string, which must have `chunks` stages.
// Errors name the offending character or count.
StatusOr<std::vector<int>> parse_megatron_layout(const std::string& text, int chunks);

// The even split of `layers` + (embedding) + (loss) units over `chunks` virtual stages, the
// first losing a layer to the embedding and the last to the loss. Error when it does not divide.
StatusOr<std::vector<int>> account_for_split(int layers, int chunks, bool embedding, bool loss);

// The split used when `chunks` does not divide `layers` and nothing is named, with a sentence
// for the summary saying which it is:
//   1. the embedding and the loss counted as layers, when (L + 2) % chunks == 0 (Megatron-
//      Bridge's LLaMA-3.1 405B and Qwen3 recipes set both account_for_* flags);
//   2. else ⌈L/chunks⌉ layers in every chunk but the last, which holds the rest (Megatron-
//      Bridge's DeepSeek-V3 and Kimi-K2 layout maps, whose last stage carries MTP and the loss);
//   3. else ⌊L/chunks⌋ everywhere, the L mod chunks extra layers on the chunks after the first.
struct PipelineSplit {
  std::vector<int> layers;
  std::string description;
};
PipelineSplit default_pipeline_split(int layers, int chunks);

}  // namespace preflight
