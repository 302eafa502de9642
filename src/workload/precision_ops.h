// Low-precision linear layers (docs/precision.md): what Transformer Engine adds to and changes in
// a block of kernels when training.precision is fp8, fp8_blockwise, mxfp8 or nvfp4. Pure
// functions of the scenario and the ops; bf16 and fp16 leave the ops as they are.
//
// Quantize kernels. Each linear-layer GEMM of `layer_ops.h` (A[m×k] · B[k×n], `batch` products)
// gets a memory-bound "<gemm>.quantize" op just before it:
//   * forward ("*.fwd", also "*.fwd.recompute"): TE's cast-transpose of the bf16 input
//     activation, m·k·batch elements, writing the row-wise copy this GEMM reads and the
//     column-wise (transposed) copy the weight gradient reuses; and the cast of the weight,
//     k·n·batch elements, to W and Wᵀ (the input gradient's operand). The weight cast happens once
//     per iteration: Megatron-Core marks the first micro-batch (`set_is_first_microbatch`) and TE
//     keeps the cast weights for the others, so each micro-batch carries 1/microbatches of it.
//   * input gradient ("*.dgrad"): the same cast-transpose of the bf16 output gradient,
//     m·k·batch elements (E5M2 for per-tensor fp8); its transposed copy feeds the wgrad.
//   * weight gradient ("*.wgrad"): nothing; both operands were quantized above.
//   With sequence parallelism TE casts the local shard before the TP all-gather and gathers the
//   low-precision copy: a GEMM right after a (blocking) TP all-gather casts m·k·batch/tp
//   elements, its quantize op goes before the all-gather, and every TP all-gather that feeds a
//   low-precision GEMM moves gemm_operand_bytes/2 of its bf16 bytes.
//   Traffic per element cast: reads of 2 B (two reads for nvfp4: the per-tensor amax that sets
//   the second-level scale, then the cast), writes of 2·(w + s) B (w: 1 B fp8, 0.5 B nvfp4; s:
//   scale bytes per element); per-tensor fp8 and nvfp4 also write a 4 B amax per tensor (delayed
//   scaling fuses the amax into the cast: TE "FP8 primer"). TE also fuses the casts of the QKV
//   and FC1 inputs into the LayerNorm and of the FC2 input into the activation; Preflight keeps
//   them separate kernels, an upper bound of one bf16 read per element.
// GEMMs. A low-precision GEMM reads A and B at w + s bytes per element and writes its bf16
// output (an accumulated weight gradient is read and written) at 2 B; its `bytes_per_element`
// becomes 1, which marks it for the compute model as running at the low-precision peak
// (compute_model.h); the exact width is in `bytes`.
// What stays in bf16 (bytes_per_element 2): the attention core ("attn.*", as TE's fused
// attention does by default), the output layer ("logits.*": Megatron-Core builds it outside
// TE), the MoE router ("moe.router.*") and hyper-connections' mixing weights ("hc.*", DeepSeek-V4's
// mHC, computed outside TE's linears); DeepSeek-V3 §3.3.1 keeps the same in high precision,
// with the embedding, norms and the optimizer.
// Sources: Transformer Engine user guide, "Using FP8 with Transformer Engine" (FP8 primer) and
// its Float8BlockScaling, MXFP8BlockScaling and NVFP4BlockScaling recipes; DeepSeek-V3 technical
// report §3.3 (1×128 activation and 128×128 weight tiles, FP32 scales); OCP Microscaling
// Formats (MX) v1.0 (32-element blocks, E8M0 scales); NVIDIA, "Pretraining LLMs with NVFP4"
// (2025; 16-element blocks, E4M3 scales, a per-tensor FP32 scale).
#pragma once

#include <vector>

#include "config/scenario.h"
#include "workload/workload.h"

namespace preflight {

// True for the modes whose linear-layer GEMMs run below 16 bits (fp8 family, nvfp4).
bool is_low_precision(Precision p);

// Bytes per element of a linear-layer GEMM operand in `p`, block scales included:
// bf16/fp16 2; fp8 1 (one FP32 scale per tensor, not counted); fp8_blockwise 1 + 4/128 (an
// FP32 scale per 1×128 tile; 128×128 weight tiles carry 4/16384, taken as the activations');
// mxfp8 1 + 1/32 (an E8M0 byte per 32 elements); nvfp4 0.5 + 1/16 (an E4M3 byte per 16).
double gemm_operand_bytes(Precision p);

// Applies `s.training.precision` to `ops` (one block, in order) as described above: inserts the
// quantize ops and rewrites the GEMMs' `bytes` and `bytes_per_element` and the TP all-gathers'
// `comm_bytes`. A no-op for bf16/fp16 and for ops that already hold a "*.quantize" op; apply it
// once per block (generate_workload does, once the blocks are built).
// REQUIRES: ops != nullptr, validate_scenario(s).ok().
void apply_precision(const Scenario& s, std::vector<Op>* ops);

}  // namespace preflight
