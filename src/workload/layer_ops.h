// The kernels of one Megatron-style dense decoder layer, its embedding and its loss head, per
// tensor-parallel rank and per micro-batch: GEMMs with exact M, N, K of the TP shard, the
// attention core (fused FlashAttention or Megatron's bmm + softmax + dropout), the memory-bound
// kernels with their HBM traffic, and the TP collectives (all-reduce, or all-gather and
// reduce-scatter with sequence parallelism). Traffic follows docs/workload.md; notation:
// T = b·s tokens, t = tp, e = bytes per activation element, A = b·(a/t)·s² score elements.
#pragma once

#include <string>
#include <vector>

#include "config/scenario.h"
#include "workload/layer_shape.h"
#include "workload/workload.h"

namespace preflight {

// Forward of one dense layer (also used for recompute): attention_forward_ops then
// mlp_forward_ops.
std::vector<Op> layer_forward_ops(const LayerShape& x);
// The attention half of a layer's forward: norm, QKV (or MLA projections), the attention core
// (with its context-parallel communication), output projection, TP collective, residual.
std::vector<Op> attention_forward_ops(const LayerShape& x);
// The dense MLP half: norm, FC1, activation, FC2, TP collective, residual.
std::vector<Op> mlp_forward_ops(const LayerShape& x);
// Selective recompute: the attention core forward replayed before the backward.
std::vector<Op> attention_recompute_ops(const LayerShape& x);
// Backward of one dense layer: mlp_backward_ops then attention_backward_ops. Weight-gradient
// GEMMs are named "*.wgrad", everything else is the input-gradient pass.
std::vector<Op> layer_backward_ops(const LayerShape& x);
std::vector<Op> mlp_backward_ops(const LayerShape& x);
std::vector<Op> attention_backward_ops(const LayerShape& x);
// Embedding lookup (first stage) forward and backward.
std::vector<Op> embedding_forward_ops(const LayerShape& x);
std::vector<Op> embedding_backward_ops(const LayerShape& x);
// Final norm, logits GEMM and vocab-parallel cross-entropy (last stage).
std::vector<Op> head_forward_ops(const LayerShape& x);
std::vector<Op> head_backward_ops(const LayerShape& x);

// Building blocks of the layer halves, shared with moe_ops.h and mamba_ops.h.
// The TP reduction after a row-parallel GEMM (forward: its partial outputs) or a column-parallel
// one (backward, `grad`: the partial gradients of its input): a reduce-scatter into the
// sequence-parallel region, else an all-reduce, of the whole activation T·h. REQUIRES: x.tp > 1.
Op tp_reduction(const LayerShape& x, bool grad);
// A norm in front of a TP region reads and writes the hidden state, 2·e·T·h (T/t tokens with
// sequence parallelism); with SP its output is then all-gathered.
void norm_forward(const LayerShape& x, const char* name, std::vector<Op>& ops);
// Norm backward reads grad, input and the residual gradient, writes the gradient: 4e·T·h. With
// TP it first waits for the asynchronous reduction of the input gradient.
void norm_backward(const LayerShape& x, const char* name, std::vector<Op>& ops);
// The backward of a half's residual branch (dropout with its mask, the bias gradient); with
// sequence parallelism the gradient is then all-gathered into the TP region.
void residual_backward(const LayerShape& x, const char* name, std::vector<Op>& ops);
// The input-gradient `dgrad` and weight-gradient `wgrad` GEMMs of a column-parallel layer with
// its TP communication: with SP the input is re-gathered for wgrad (overlapping dgrad) and the
// input gradient reduce-scattered (overlapping wgrad); without, the input gradient's
// all-reduce overlaps wgrad.
void column_parallel_backward(const LayerShape& x, Op dgrad, Op wgrad, std::vector<Op>& ops);

// The clamp of a gated activation's input (model.activation_clamp), as Megatron-Core runs it
// before its fused kernel (fused_bias_geglu.py / fused_bias_swiglu.py, weighted_bias_*_impl with
// clamp_value): the [rows × 2f] FC1 output split in its gate and linear halves, each clamped by
// its own kernel (read and write rows·f each), then concatenated again (torch.cat: read and
// write rows·2f): 8·e·rows·f in three kernels. Backward (autograd): each clamp's backward
// masks its half of the gradient with its saved input (read gradient and input, write: 3·e·rows·f
// each) and the split's backward concatenates the halves (4·e·rows·f). Ops named
// "<prefix>.clamp_gate|clamp_linear|cat.fwd|bwd", appended to `ops`.
void clamped_glu_ops(const std::string& prefix, double rows, double f, double e, bool backward,
                     std::vector<Op>& ops);

// A GEMM op: flops 2·m·n·k·batch, bytes (m·k + k·n + m·n)·batch·e (+ m·n·e when `accumulate`,
// as weight gradients add into the existing gradient buffer).
Op gemm_op(const char* name, int64_t m, int64_t n, int64_t k, int64_t batch, int e,
           bool accumulate = false);
// A memory-bound op moving `bytes` through HBM.
Op memory_op(const char* name, double bytes, Category category = Category::kCompute);
// A collective op on `group` of `bytes` (nccl-tests size convention).
Op collective_op(const char* name, CollectiveKind kind, GroupKind group, Bytes bytes);
// Rounds a byte count to Bytes.
Bytes round_bytes(double bytes);

}  // namespace preflight
