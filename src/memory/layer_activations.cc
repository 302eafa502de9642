// Activation bytes of one layer per GPU and micro-batch (docs/memory.md §2): the pieces of a
// transformer, MoE or Mamba-2 layer, what each recompute mode keeps and rebuilds.
#include "memory/layer_activations.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "model/transformer.h"
#include "workload/expert_routing.h"
#include "workload/generator.h"
#include "workload/precision_ops.h"

namespace preflight::memory_internal {
namespace {

// The busiest EP rank's routed tokens over a balanced router's, averaged over the MoE layers
// (each drawn as the workload draws it, workload/expert_routing.h): 1 for uniform routing.
// Sizing every MoE layer for its own busiest rank sums per-layer maxima, an upper bound for any
// one GPU (a different rank may be the busiest in each layer).
double routed_token_factor(const Scenario& sc) {
  const ModelConfig& m = sc.model;
  if (!m.moe.enabled() || m.moe.routing == MoeRouting::kUniform) return 1.0;
  const int ep = std::max(1, sc.parallelism.ep);
  double sum = 0;
  int n = 0;
  for (int layer = 0; layer < m.layers; ++layer) {
    if (!m.is_moe_layer(layer)) continue;
    sum += draw_expert_load(m.moe, ep, layer, sc.simulation.seed, ep_group_token_copies(sc))
               .max_rank_factor();
    ++n;
  }
  return n > 0 ? std::max(1.0, sum / n) : 1.0;
}

// The pieces of a transformer layer's activations before they are combined: a transformer
// layer holds them all; a hybrid's attention-only or MLP-only layer (`*`, `-`, `E`) the half it
// has (docs/memory.md §2).
struct LayerPieces {
  double replicated = 0;  // whole under TP: the inputs of both norms and first GEMMs, masks
  double attention = 0;   // split by TP: Q, K, V and the projection input (MLA: its widths)
  double latents = 0;     // MLA's latents, whole under TP
  double mlp = 0;         // the MLP's (or MoE block's) saved tensors
  double core = 0;        // LayerBytes::core
  double core_grad = 0;   // largest intermediate gradients of the attention core
  double mlp_grad = 0;    // ... and of the MLP
  double checkpoint = 0;  // the layer input
  double io_grad = 0;     // gradients of the layer's output and input
  // What each selective-recompute module drops (parts of the fields above): one norm's output,
  // the input of QKV or of FC1 / the router (2 B per element, whole under TP unless SP); the
  // experts' activation output (FC2's input); the shared experts' saved tensors; MLA's
  // up-projected Q, K and V.
  double norm_output = 0;      // the attention half's (QKV's input)
  double norm_output_mlp = 0;  // the MLP half's (FC1's input, or a MoE layer's router input)
  double moe_act = 0;
  double shared = 0;
  double mla_up = 0;
};

LayerPieces layer_pieces(const Scenario& sc, bool moe_layer) {
  const ModelConfig& m = sc.model;
  const ParallelismConfig& par = sc.parallelism;
  const double s = sc.training.seq_len;
  const double s_local = s / par.cp;  // queries (and their activations) on one CP rank
  const double b = sc.training.micro_batch;
  const double tokens = s_local * b;
  const double h = m.hidden;
  const double t = par.tp;
  const double d_h = m.head_dim();
  const double heads = static_cast<double>(m.heads / par.tp);
  const double q = heads * d_h;
  const double kv = static_cast<double>(std::max(m.kv_heads / par.tp, 1)) * d_h;
  const double f = static_cast<double>(m.ffn_hidden / par.tp);
  const bool swiglu = m.activation == Activation::kSwiglu;
  // Tensors TP leaves whole are split along the sequence with SP.
  const double whole = par.sequence_parallel ? t : 1.0;

  LayerPieces l;
  // The input a linear layer keeps for its weight gradient is the operand its GEMM ran on:
  // with fp8, mxfp8 and nvfp4 Transformer Engine saves the quantized copy (1 B, 1 B + a scale
  // per 32, ½ B + a scale per 16; precision_ops.h), not the bf16 one. The norms' inputs, the
  // attention core's Q, K and V, SwiGLU's and GELU's inputs and the router stay 16-bit.
  const double g = gemm_operand_bytes(sc.training.precision);  // 2 for bf16 and fp16
  // Whole under TP: inputs of norm 1 (2 B), QKV (g), norm 2 (2 B) and FC1 (g); two dropout
  // masks (1 B). On an MoE layer "FC1's input" is the router's (2 B: it stays in bf16) and the
  // shared experts' input.
  const double fc1_in = moe_layer ? 2.0 : g;
  l.replicated = tokens * h * (4.0 + g + fc1_in + (m.dropout ? 2.0 : 0.0)) / whole;
  // Split by TP: Q, K, V (inputs of the core) and the projection input. MLA (DeepSeek-V2 §2.1)
  // keeps the up-projected Q and K of d_qk = d_nope + d_rope per head (the decoupled RoPE key
  // broadcast to every head), V and the projection input of d_v, and, whole under TP, its
  // latents: c_Q before and after its norm (2·r_q), c_KV with the RoPE key before its norm
  // (r_kv + d_rope) and c_KV after it (r_kv).
  double attention = 2.0 * tokens * q + 4.0 * tokens * kv + g * tokens * q;
  // QK-norm (model.qk_layernorm) keeps its inputs, the QKV output's Q and K (2 B), and an fp32
  // rstd per head and token.
  if (m.qk_layernorm) attention += (2.0 * (q + kv) + 4.0 * (q + kv) / d_h) * tokens;
  double latents = 0;
  double flash_grad = 4.0 * tokens * q + 2.0 * tokens * (q + 2.0 * kv);
  if (m.mla.enabled()) {
    const MlaConfig& a = m.mla;
    const double qk = a.qk_nope_head_dim + a.qk_rope_head_dim;
    const double v = a.v_head_dim;
    attention = 4.0 * tokens * heads * qk + (2.0 + g) * tokens * heads * v;
    l.mla_up = 4.0 * tokens * heads * qk + 2.0 * tokens * heads * v;
    latents = 2.0 * tokens *
              (2.0 * a.q_lora_rank + (a.kv_lora_rank + a.qk_rope_head_dim) + a.kv_lora_rank) /
              whole;
    flash_grad = 4.0 * tokens * heads * qk + 2.0 * tokens * heads * (2.0 * qk + v);
  }
  if (m.csa.enabled()) {
    // Compressed attention (model.csa): the GQA tensors above (Q, K/V, the core's output as the
    // grouped projection's input) plus the second projection's input (o_groups/t · r_o, g B);
    // whole under TP the query latent before and after its norm (2·r_q) and the K/V before its
    // norm; where a layer is indexed, the indexer's queries (i_h/t · i_d) and each query's kept
    // entries (4 B indices), counted on every layer (an upper bound for the others).
    const CsaConfig& a = m.csa;
    attention += g * tokens * static_cast<double>(a.o_groups) / t * a.o_lora_rank;
    l.mla_up = 2.0 * tokens * q;
    latents = 2.0 * tokens * (2.0 * a.q_lora_rank + kv) / whole;
    bool indexed = false;
    for (int i = 0; i < m.layers; ++i) indexed = indexed || a.indexed(i);
    if (indexed) {
      attention += 2.0 * tokens * static_cast<double>(a.index_heads) / t * a.index_head_dim +
                   4.0 * tokens * a.index_topk;
    }
  }
  // The MLP's saved tensors (GELU: its input and FC2's input; SwiGLU: gate and up, and FC2's
  // input), and the largest gradient pair of its backward.
  // A clamped gated activation (model.activation_clamp) keeps one more copy of FC1's output: the
  // clamps save their inputs (halves of FC1's output) and the activation its concatenated input.
  const double clamp = swiglu && m.activation_clamp > 0 ? 4.0 : 0.0;
  double mlp = ((swiglu ? 4.0 : 2.0) + clamp + g) * tokens * f;
  double mlp_grad = (swiglu ? 4.0 : 2.0) * tokens * f;
  if (moe_layer) {
    // Megatron-Core MoE (docs/user-guide/features/moe.md; DeepSeek-V3 report §3.3): each GPU
    // routes its T/t tokens (MoE with TP runs sequence parallel) and its local experts receive,
    // with a balanced router, k·T/t token copies from every rank of its ETP group: k·T·etp/t.
    // A skewed router loads the busiest EP rank more: × routed_token_factor.
    // Latent MoE routes tokens of the latent width w (h otherwise) and keeps the input of the
    // up-projection, w for each of its T/t tokens.
    const MoeConfig& e = m.moe;
    const double etp = sc.expert_tp();
    const double dispatched = e.top_k * tokens * etp / t * routed_token_factor(sc);
    const double f_e = static_cast<double>(e.expert_ffn_hidden) / etp;
    const double w = e.expert_width(m.hidden);
    const double shared_ffn =
        e.shared_expert_ffn_hidden > 0 ? e.shared_expert_ffn_hidden : e.expert_ffn_hidden;
    const double f_s = static_cast<double>(e.shared_experts) * shared_ffn / t;
    const double act_in = swiglu ? 4.0 : 2.0;  // the activation's input, 16-bit
    const double moe_clamp = swiglu && m.activation_clamp > 0 ? act_in : 0.0;
    l.shared = (act_in + moe_clamp + g) * tokens * f_s;
    l.moe_act = (g + moe_clamp) * dispatched * f_e;
    mlp = l.shared                            // shared experts, split by TP
          + 4.0 * tokens * e.experts / whole  // fp32 router logits / scores
          + g * dispatched * w                // dispatched tokens: the experts' FC1 input
          + (act_in + moe_clamp + g) * dispatched * f_e;  // FC1 outputs (clamped copy), FC2 input
    // Probabilities applied at the combine: the expert outputs it weights, kept for the
    // probabilities' gradient (StackConfig::moe_probs_in_activation; in the activation they
    // need only its saved input, counted above).
    if (!sc.training.stack.moe_probs_in_activation) mlp += 2.0 * dispatched * w;
    if (e.latent_size > 0) mlp += g * tokens / t * w;
    mlp_grad = std::max((swiglu ? 4.0 : 2.0) * tokens * f_s,
                        (swiglu ? 4.0 : 2.0) * dispatched * f_e + 4.0 * dispatched * w);
  }
  l.norm_output = g * tokens * h / whole;
  l.norm_output_mlp = fc1_in * tokens * h / whole;
  l.attention = attention;
  l.latents = latents;
  l.mlp = mlp;
  l.mlp_grad = mlp_grad;
  if (sc.training.flash_attention) {
    l.core = 4.0 * heads * s_local * b;  // fp32 log-sum-exp per head and token
  } else {
    // Softmax output (2 B), dropout mask (1 B) and dropout output (2 B) per score: each of the
    // s/cp queries against all s keys (a sliding window is masked, not skipped, here).
    l.core = (m.dropout ? 5.0 : 2.0) * heads * s_local * s * b;
  }
  l.checkpoint = 2.0 * tokens * h / whole;
  // Backward: the gradients of the layer's output and input, plus the largest intermediate
  // gradient pair (scores of the unfused core, FlashAttention's fp32 dQ accumulator and
  // dQ/dK/dV, or the MLP's FC1 output; on an MoE layer the experts' FC1 output and the
  // dispatched tokens' in and out).
  l.core_grad =
      sc.training.flash_attention ? flash_grad : (m.dropout ? 4.0 : 2.0) * heads * s_local * s * b;
  l.io_grad = 4.0 * tokens * h / whole;
  // Hyper-connections (model.hyper_connections n > 1): the residual stream is n·h wide, the
  // layer's input (its checkpoint) and each sublayer's mixing input kept whole (n·h, 2 B), the
  // gradients of the layer's output and input likewise.
  if (m.hyper_connections > 1) {
    const double n = m.hyper_connections;
    l.checkpoint *= n;
    l.io_grad *= n;
    l.replicated += 2 * 2.0 * tokens * n * h / whole;
  }
  return l;
}

// What the chosen selective-recompute modules drop from a layer's attention half and/or its
// MLP half (docs/memory.md §2.8): layernorm the norm outputs (the inputs of QKV and FC1 /
// the router); mla_up_proj the up-projected Q, K, V; mlp a dense MLP's tensors and its norm's
// output (the checkpoint keeps the MLP's input); moe a MoE block's tensors (it keeps its
// input, the norm's output); moe_act and shared_experts their parts of a MoE block.
double selective_dropped(const Scenario& sc, const LayerPieces& p, bool attention, bool mlp,
                         bool moe_layer) {
  const ParallelismConfig& par = sc.parallelism;
  if (par.recompute != Recompute::kSelective) return 0;
  const bool norms = par.recomputes(RecomputeModule::kLayerNorm);
  double d = 0;
  if (attention) {
    if (norms) d += p.norm_output;
    if (par.recomputes(RecomputeModule::kMlaUpProj)) d += p.mla_up;
  }
  if (mlp) {
    const bool block =
        moe_layer ? par.recomputes(RecomputeModule::kMoe) : par.recomputes(RecomputeModule::kMlp);
    if (block) {
      d += p.mlp;
      if (norms || !moe_layer) d += p.norm_output_mlp;
    } else {
      if (norms) d += p.norm_output_mlp;
      if (moe_layer && par.recomputes(RecomputeModule::kMoeAct)) d += p.moe_act;
      if (moe_layer && par.recomputes(RecomputeModule::kSharedExperts)) d += p.shared;
    }
  }
  return d;
}

}  // namespace

LayerBytes layer_bytes(const Scenario& sc, bool moe_layer) {
  const LayerPieces p = layer_pieces(sc, moe_layer);
  LayerBytes l;
  l.kept = p.replicated + (p.attention + p.mlp) + p.latents;
  l.core = p.core;
  l.checkpoint = p.checkpoint;
  l.gradients = p.io_grad + std::max(p.core_grad, p.mlp_grad);
  l.selective = std::min(l.kept, selective_dropped(sc, p, true, true, moe_layer));
  return l;
}

// A hybrid's attention-only (`*`) layer, or its MLP-only (`-`, or `E` with `moe_layer`) layer:
// the half of a transformer layer's pieces it holds (one norm and GEMM input, one mask).
LayerBytes half_layer_bytes(const Scenario& sc, bool attention, bool moe_layer) {
  const LayerPieces p = layer_pieces(sc, moe_layer);
  LayerBytes l;
  l.checkpoint = p.checkpoint;
  if (attention) {
    l.kept = p.replicated / 2 + p.attention + p.latents;
    l.core = p.core;
    l.gradients = p.io_grad + p.core_grad;
  } else {
    l.kept = p.replicated / 2 + p.mlp;
    l.gradients = p.io_grad + p.mlp_grad;
  }
  l.selective = std::min(l.kept, selective_dropped(sc, p, attention, !attention, moe_layer));
  return l;
}

// A Mamba-2 mixer layer (Megatron-Core's MambaLayer with mamba_ssm's memory-efficient fused
// path, which saves the in_proj output and the scan's pre-gate output and recomputes the conv
// output, C·Bᵀ and the chunk states in backward), per token on one TP rank, with d = d_inner/t,
// G = groups/t, H = heads/t, i = 2d + 2GN + H:
//   kept  (4 + mask)·h/whole  the norm's and in_proj's inputs (2 B each; the dropout mask, 1 B)
//         + 2·i               in_proj's output [z | x | B | C | dt], saved by the fused scan
//         + 2·d               Megatron-Core's mixer only (StackConfig::mamba_mixer): the scan's
//                             pre-gate output (out_x, for the gate's backward)
//         + 2·d + 2·d         the norm's saved input (the scan's output) and its output
//                             (out_proj's input)
//         + 4·G               the norm's fp32 rstd, one per group
//   (Nemotron 3 Nano on Megatron-Core, TP 1, no dropout: 2·2·2688 + 2·10304 + 6·4096 + 32 =
//   56.0 kB per token.)
// No attention core: selective recompute keeps it all. The backward adds the output and input
// gradients (4·h/whole) and, alive together in the fused backward, the in_proj output's
// gradient (2·i), the recomputed conv output (2·c, c = d + 2GN) and the recomputed chunk
// states with their gradients in fp32 (2 × 4·d·N/Q). No term grows with s²: the chunk states
// are d·N per Q tokens.
LayerBytes mamba_layer_bytes(const Scenario& sc) {
  const ModelConfig& m = sc.model;
  const MambaConfig& a = m.mamba;
  const ParallelismConfig& par = sc.parallelism;
  const double tokens = static_cast<double>(sc.training.seq_len) / par.cp * sc.training.micro_batch;
  const double h = m.hidden;
  const double t = par.tp;
  const double whole = par.sequence_parallel ? t : 1.0;
  const double d = static_cast<double>(a.d_inner()) / t;
  const double gn = static_cast<double>(a.groups) * a.state / t;
  const double in_proj = 2 * d + 2 * gn + a.heads / t;
  const double q = std::min(a.chunk, sc.training.seq_len);
  LayerBytes l;
  // in_proj's and out_proj's saved inputs, as a linear layer's (layer_pieces).
  const double g = gemm_operand_bytes(sc.training.precision);
  const double pre_gate = sc.training.stack.mamba_mixer == MambaMixer::kMegatron ? 2.0 : 0.0;
  l.kept = tokens * h * (2.0 + g + (m.dropout ? 1.0 : 0.0)) / whole + 2.0 * tokens * in_proj +
           (pre_gate + 2.0 + g) * tokens * d + 4.0 * tokens * a.groups / t;
  l.checkpoint = 2.0 * tokens * h / whole;
  l.gradients = 4.0 * tokens * h / whole + 2.0 * tokens * in_proj + 2.0 * tokens * (d + 2 * gn) +
                8.0 * tokens * d * a.state / q;
  return l;
}

double saved_per_layer(const Scenario& sc, const LayerBytes& l) {
  switch (sc.parallelism.recompute) {
    case Recompute::kNone:
      return l.kept + l.core;
    case Recompute::kSelective:
      return l.kept - l.selective +
             (sc.parallelism.recomputes(RecomputeModule::kCoreAttn) ? 0.0 : l.core);
    case Recompute::kFull:
      return l.checkpoint;
  }
  return l.kept + l.core;
}

// Backward of one layer on top of what is held: what recompute rebuilds, plus gradients.
double backward_working_set(const Scenario& sc, const LayerBytes& l) {
  switch (sc.parallelism.recompute) {
    case Recompute::kNone:
      return l.gradients;
    case Recompute::kSelective:
      return l.selective + l.gradients +
             (sc.parallelism.recomputes(RecomputeModule::kCoreAttn) ? l.core : 0.0);
    case Recompute::kFull:
      return l.kept + l.core - l.checkpoint + l.gradients;
  }
  return l.gradients;
}

}  // namespace preflight::memory_internal
