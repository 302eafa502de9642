// DeepSeek-V4's layer parts (model.csa, model.hyper_connections; docs/attention.md), the ops a
// transformer layer's builders (layer_ops.h, model_blocks.cc) add around and inside it.
#pragma once

#include <string>
#include <vector>

#include "workload/layer_shape.h"
#include "workload/workload.h"

namespace preflight {

// Compressed attention's projections forward (LayerShape::csa), before the fused core: the query
// latent (down, norm, up), the K/V and its norm, RoPE; on a compressing layer the compressor; on
// an indexed layer the lightning indexer (its projections, compressor, scores and top-k).
void csa_projections_forward(const LayerShape& x, std::vector<Op>& ops);

// Their backward, after the core's: the indexer's training signal and gradients, the
// compressors', RoPE, the data gradients, the TP reduction of the input gradient overlapped with
// the weight gradients, the first norm and the residual gradient.
void csa_projections_backward(const LayerShape& x, std::vector<Op>& ops);

// Hyper-connections around sublayer `sublayer` ("attn", "mlp") of a layer with
// LayerShape::hc_streams > 1: the ops `before` it or after it, forward or `backward`.
// Appends nothing without hyper-connections.
void hyper_connection_ops(const LayerShape& x, const std::string& sublayer, bool backward,
                          bool before, std::vector<Op>& ops);

}  // namespace preflight
