// The kernels of one Mamba-2 mixer layer (a hybrid's `M`) on one tensor-parallel rank, per
// micro-batch, as Megatron-Core's MambaLayer runs it in training (megatron/core/ssm/
// mamba_mixer.py with the memory-efficient mamba_split_conv1d_scan_combined path of mamba_ssm;
// StackConfig::mamba_mixer kMegatron) or as mamba_ssm's own Mamba2 module does (kMambaSsm: the
// gate in a fused gated RMSNorm that reads y and z, 3e·T·d, backward 5e·T·d; batch-first
// tensors, no transposes; the scan without the gate's terms below):
// pre-norm, in_proj, causal depthwise conv1d, the SSD chunked scan gated by silu(z), a group
// RMSNorm, out_proj, residual. TP splits the heads and groups (d = d_inner/t, G = groups/t, H = heads/t) with the
// collectives of an MLP block: in_proj is column-parallel, out_proj row-parallel, so one
// all-reduce forward and one backward, or with sequence parallelism an all-gather before
// in_proj and a reduce-scatter after out_proj (and their mirror images backward). The scan is
// local to a rank's heads; the norm normalises within a group, never across ranks.
//
// Notation: T = b·s tokens, e bytes per activation element, N state, P head width, Q chunk,
// K conv taps, c = d + 2·G·N conv channels, i = 2·d + 2·G·N + H in_proj width.
//   in_proj         GEMM T × i × h
//   transpose       micro-batches of b > 1 sequences only: MambaMixer._ssm_training turns
//                   in_proj's [s, b, i] output into the scan's [b, s, i] with .contiguous()
//                   (2e·T·i), and the scan's output back (2e·T·d); for b = 1 both are views
//   conv1d          memory-bound, reads and writes x, B, C (SiLU fused): 2e·T·c
//   SSD scan        one op (OpType::kAttention: FLOPs and bytes, timed by the roofline's
//                   max of the two) standing for the five Triton kernels of mamba_ssm's
//                   ssd_combined.py (Dao & Gu 2024, arXiv 2405.21060 §6: chunk cumsum, chunk
//                   state, state passing, C·Bᵀ, chunk scan), each launched from Python: five
//                   host launches and five kernel gaps (fifteen backward, mamba_ops.cc):
//                   FLOPs 2·T·(Q·N·G + d·(Q + 2N)) (transformer.h, mamba_scan_forward_flops;
//                   the kernels skip only whole masked tiles of each chunk's upper triangle,
//                   so the intra-chunk terms are kept whole, an upper bound);
//                   bytes T·(e·(5d + 4GN + H) + 8·G·Q + 16·d·N/Q + 8·H): x, B and C read twice,
//                   z read, and y·silu(z) and the pre-gate y written (e each: Megatron-Core
//                   passes no rmsnorm_weight to mamba_split_conv1d_scan_combined, so the chunk
//                   scan applies the gate and keeps out_x for the backward), C·Bᵀ written and
//                   read in fp32 (G·Q per token), the
//                   chunk states (d·N per chunk of Q tokens) written, passed (read and written)
//                   and read in fp32, dA's cumulative sum written and read in fp32. On an H100
//                   the bytes dominate (Nemotron 3 Nano, s = 8192: 0.88 GB against 28 GFLOP), so
//                   the kernel is memory-bound and the efficiency used for its FLOPs matters
//                   little.
//   group RMSNorm   Megatron-Core's ExtendedRMSNorm on the gated output, no gate of its own:
//                   reads y, writes its output: 2e·T·d
//   out_proj        GEMM T × h × d
// Backward (the fused function saves the in_proj output and the scan's pre-gate output, and
// recomputes the conv output, C·Bᵀ and the chunk states): out_proj dgrad/wgrad, the group norm's
// backward (reads dy and its input, writes dx: 3e·T·d), the conv1d forward again (2e·T·c), the
// SSD backward (FLOPs 2× forward for the two gradient products of each forward product plus the recomputed
// C·Bᵀ and chunk states 2·T·(Q·N·G + N·d), ≈ 2.4× forward for Nemotron 3 Nano; bytes as the
// kernels of mamba_ssm's _mamba_chunk_scan_combined_bwd read and write them, one by one: the
// recomputed chunk cumsum, C·Bᵀ, chunk states and state passing (fp32), then the gate's
// _chunk_scan_bwd_dz (reads x, z, the pre-gate y and dout; writes dz and the gated-back dout:
// 6e·T·d), _chunk_scan_bwd_dstates (fp32 dstates), _state_passing_bwd (reads states and dstates in fp32,
// writes both in the activation type), _chunk_scan_chunk_state_bwd_dx (x, C·Bᵀ, dout, B,
// dstates → dx, ddt), _chunk_state_bwd_db, _chunk_scan_bwd_dC, _chunk_scan_bwd_dcb (fp32 dC·Bᵀ),
// two _bmm_chunk_bwd (dB, dC), _chunk_scan_bwd_ddAcs_stable and _chunk_cumsum_bwd with the
// small per-head torch ops between them: T·(e·(17d + 15GN + 3H + 5·d·N/Q) + 24·G·Q +
// 24·d·N/Q + 120·H), 2.8× the forward's bytes for Nemotron 3 Nano, the conv1d backward (reads x
// and dout, writes dx: 3e·T·c), for b > 1 the copy of in_proj's output gradient back to
// [s, b, i] (2e·T·i), in_proj dgrad/wgrad with the column-parallel TP communication.
#pragma once

#include <vector>

#include "workload/layer_ops.h"
#include "workload/workload.h"

namespace preflight {

// REQUIRES: x.mamba_heads > 0 (make_layer_shape of a model with model.mamba).
std::vector<Op> mamba_forward_ops(const LayerShape& x);
// Weight-gradient GEMMs are named "*.wgrad", as in layer_backward_ops.
std::vector<Op> mamba_backward_ops(const LayerShape& x);

// The SSD scan's forward and backward kernels alone (FLOPs and bytes as above).
Op mamba_scan_forward_op(const LayerShape& x);
Op mamba_scan_backward_op(const LayerShape& x);

}  // namespace preflight
