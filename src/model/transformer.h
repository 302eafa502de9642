// Transformer arithmetic for a dense decoder: padded vocabulary, parameter counts and the model
// FLOPs used for MFU. Formulas follow Narayanan et al. 2021 (Megatron-LM, "Efficient Large-Scale
// Language Model Training on GPU Clusters", eq. 3) generalised to GQA and SwiGLU as in
// Megatron's `num_floating_point_operations`, with the attention core counted non-causally
// (the 2021 convention; docs/model.md says why).
#pragma once

#include <cstdint>

#include "config/scenario.h"

namespace preflight {

// Megatron pads the vocabulary to a multiple of 128·tp (`make-vocab-size-divisible-by` 128).
int64_t padded_vocab(const ModelConfig& m, int tp);

// Parameters of one transformer layer (all TP shards together): QKV, projection, MLP, norms and
// biases.
int64_t layer_parameters(const ModelConfig& m);

// Word (+ learned position) embedding parameters, with the padded vocabulary.
int64_t embedding_parameters(const ModelConfig& m, int tp, int seq_len);

// Total trainable parameters: layers, embeddings, final norm, and the output layer when untied.
int64_t total_parameters(const ModelConfig& m, int tp, int seq_len);

// Forward FLOPs of one layer for `tokens` tokens in sequences of `seq_len`: GEMMs
// 2·T·h·(q + 2·kv + o) + MLP, plus attention core 4·T·s·h (non-causal).
// Oracle for GPT (MHA, 4h GELU MLP): 24·b·s·h² + 4·b·s²·h.
double layer_forward_flops(const ModelConfig& m, int64_t tokens, int seq_len);

// Model FLOPs of one training iteration (forward + backward = 3 × forward, no recompute), with
// the logits layer (2·T·h·V per forward) and the unpadded vocabulary, as Megatron reports MFU.
double model_flops_per_iteration(const Scenario& s);

}  // namespace preflight
