#include "workload/mamba_ops.h"

#include "base/check.h"

namespace preflight {
namespace {

// Per-token widths of the scan's tensors on this rank.
struct ScanWidths {
  double d, gn, heads, groups, q, n;
};

ScanWidths scan_widths(const LayerShape& x) {
  return ScanWidths{
      static_cast<double>(x.mamba_inner), static_cast<double>(x.mamba_groups * x.mamba_state),
      static_cast<double>(x.mamba_heads), static_cast<double>(x.mamba_groups),
      static_cast<double>(x.mamba_chunk), static_cast<double>(x.mamba_state)};
}

// Forward FLOPs per token: C·Bᵀ 2·Q·N·G, its masked product with x 2·Q·d, the chunk states
// 2·N·d and their output 2·N·d.
double scan_flops_per_token(const ScanWidths& w) {
  return 2.0 * w.q * w.n * w.groups + 2.0 * w.d * (w.q + 2.0 * w.n);
}

// fp32 traffic per token of one pass over the intermediates: C·Bᵀ (G·Q), chunk states (d·N/Q),
// dA's cumulative sum (H); see mamba_ops.h for the passes.
double fp32_intermediates(const ScanWidths& w) {
  return 4.0 * (2.0 * w.groups * w.q + 4.0 * w.d * w.n / w.q + 2.0 * w.heads);
}

// The Triton kernels the scan runs, each launched from Python by mamba_ssm (ssd_combined.py),
// so each a framework op on the host and a kernel with its gap on the GPU. Forward
// (_mamba_chunk_scan_combined_fwd): _chunk_cumsum_fwd, _chunk_state_fwd, _state_passing_fwd,
// _bmm_chunk_fwd, _chunk_scan_fwd. Backward (_mamba_chunk_scan_combined_bwd): the first four
// again (the recomputed cumulative sums, C·Bᵀ and chunk states), _chunk_scan_bwd_dz,
// _chunk_scan_bwd_dstates, _state_passing_bwd, _chunk_scan_chunk_state_bwd_dx,
// _chunk_state_bwd_db, _chunk_scan_bwd_dC, _chunk_scan_bwd_dcb, _bmm_chunk_bwd twice (dB, dC),
// _chunk_scan_bwd_ddAcs_stable, _chunk_cumsum_bwd. The few PyTorch ops between them on per-chunk
// tensors (the reverse cumulative sum of ddA, its sums, casts) are left out.
constexpr int kScanForwardKernels = 5;
constexpr int kScanBackwardKernels = 15;

Op scan_op(const char* name, double flops, double bytes) {
  Op op;
  op.name = name;
  op.type = OpType::kAttention;
  op.ssd_scan = true;
  op.flops = Flops(flops);
  op.bytes = round_bytes(bytes);
  return op;
}

// Backward bytes per token: the tensors each kernel of mamba_ssm's
// _mamba_chunk_scan_combined_bwd reads and writes, in its order (mamba_ops.h has the list): x
// and dout (e·d each) 11 times in all, B, C and their gradients (e·G·N) 15 times, the chunk
// states and their gradients 6 times in fp32 and 5 times in the activation type (d·N per chunk
// of Q tokens), C·Bᵀ and its gradient (G·Q per token, fp32) 6 times, dt and dA's cumulative sums
// (per head) about 30 times in fp32 and 3 times in the activation type; and first the z gate's
// _chunk_scan_bwd_dz, which reads x, z, the saved pre-gate output and dout and writes dz and the
// gated-back dout (6·e·d) where the scan applies the gate (Megatron-Core's mixer).
double backward_bytes_per_token(const ScanWidths& w, double e, bool gate) {
  const double states = w.d * w.n / w.q;
  return e * ((gate ? 17.0 : 11.0) * w.d + 15.0 * w.gn + 3.0 * w.heads + 5.0 * states) +
         4.0 * (6.0 * w.groups * w.q + 6.0 * states + 30.0 * w.heads);
}

}  // namespace

Op mamba_scan_forward_op(const LayerShape& x) {
  const ScanWidths w = scan_widths(x);
  const double t = static_cast<double>(x.tokens);
  const double e = x.act_bytes;
  // x, B and C read twice and y written; where the scan applies the gate (Megatron-Core's
  // mixer) z read too, and two outputs written: y·silu(z) and the pre-gate y the backward keeps.
  const double d_terms = x.mamba_megatron ? 5.0 : 3.0;
  Op op = scan_op("mamba.ssd.fwd", t * scan_flops_per_token(w),
                  t * (e * (d_terms * w.d + 4.0 * w.gn + w.heads) + fp32_intermediates(w)));
  op.launches = op.device_kernels = kScanForwardKernels;
  return op;
}

Op mamba_scan_backward_op(const LayerShape& x) {
  const ScanWidths w = scan_widths(x);
  const double t = static_cast<double>(x.tokens);
  const double recompute = 2.0 * w.q * w.n * w.groups + 2.0 * w.n * w.d;  // C·Bᵀ, chunk states
  Op op = scan_op("mamba.ssd.bwd", t * (2.0 * scan_flops_per_token(w) + recompute),
                  t * backward_bytes_per_token(w, x.act_bytes, x.mamba_megatron));
  op.launches = op.device_kernels = kScanBackwardKernels;
  return op;
}

std::vector<Op> mamba_forward_ops(const LayerShape& x) {
  PREFLIGHT_CHECK(x.mamba_heads > 0);
  std::vector<Op> ops;
  const double e = x.act_bytes;
  const double t = static_cast<double>(x.tokens);
  const double te = static_cast<double>(x.elementwise_tokens);
  const double h = static_cast<double>(x.h);
  const double d = static_cast<double>(x.mamba_inner);
  const double c = static_cast<double>(x.mamba_conv_dim);
  const double i = static_cast<double>(x.mamba_in_proj);
  norm_forward(x, "mamba.norm.fwd", ops);
  ops.push_back(gemm_op("mamba.in_proj.fwd", x.tokens, x.mamba_in_proj, x.h, 1, x.gemm_bytes));
  if (x.bias) ops.push_back(memory_op("mamba.in_proj.bias", 2 * e * t * x.mamba_in_proj));
  // Megatron-Core's layout is [s, b, ·]; the scan's is [b, s, ·]: MambaMixer._ssm_training
  // copies in_proj's output across (rearrange "l b d -> b l d" then .contiguous()), and the
  // scan's output back. With one sequence per micro-batch both are views and copy nothing.
  const bool transposes = x.mamba_megatron && x.b > 1;
  if (transposes) ops.push_back(memory_op("mamba.in_proj.transpose", 2 * e * t * i));
  ops.push_back(memory_op("mamba.conv1d.fwd", 2 * e * t * c));
  ops.push_back(mamba_scan_forward_op(x));
  if (transposes) ops.push_back(memory_op("mamba.ssd.transpose", 2 * e * t * d));
  if (x.mamba_megatron) {
    // The group RMSNorm of the gated output (ExtendedRMSNorm, no gate of its own: the scan
    // applied it): reads y, writes its output.
    ops.push_back(memory_op("mamba.group_norm.fwd", 2 * e * t * d));
  } else {
    // mamba_ssm's gated RMSNorm: reads y and z, writes its output.
    ops.push_back(memory_op("mamba.gated_norm.fwd", 3 * e * t * d));
  }
  ops.push_back(gemm_op("mamba.out_proj.fwd", x.tokens, x.h, x.mamba_inner, 1, x.gemm_bytes));
  if (x.tp > 1) ops.push_back(tp_reduction(x, /*grad=*/false));
  // (bias +) dropout + residual add, as after attention: (3e+1)·T·h with a dropout mask.
  ops.push_back(memory_op("mamba.residual", (x.dropout ? 3 * e + 1 : 3 * e) * te * h));
  return ops;
}

std::vector<Op> mamba_backward_ops(const LayerShape& x) {
  PREFLIGHT_CHECK(x.mamba_heads > 0);
  std::vector<Op> ops;
  const double e = x.act_bytes;
  const double t = static_cast<double>(x.tokens);
  const double te = static_cast<double>(x.elementwise_tokens);
  const double h = static_cast<double>(x.h);
  const double d = static_cast<double>(x.mamba_inner);
  const double c = static_cast<double>(x.mamba_conv_dim);
  const double i = static_cast<double>(x.mamba_in_proj);
  residual_backward(x, "mamba.residual.bwd", ops);
  ops.push_back(gemm_op("mamba.out_proj.dgrad", x.tokens, x.mamba_inner, x.h, 1, x.gemm_bytes));
  ops.push_back(
      gemm_op("mamba.out_proj.wgrad", x.h, x.mamba_inner, x.tokens, 1, x.gemm_bytes, true));
  if (x.mamba_megatron) {
    // The group norm's backward: reads dy and its saved input, writes dx.
    ops.push_back(memory_op("mamba.group_norm.bwd", 3 * e * t * d));
  } else {
    // The gated norm's backward: reads dy, y and z, writes dy and dz.
    ops.push_back(memory_op("mamba.gated_norm.bwd", 5 * e * t * d));
  }
  ops.push_back(memory_op("mamba.conv1d.recompute", 2 * e * t * c));
  ops.push_back(mamba_scan_backward_op(x));
  ops.push_back(memory_op("mamba.conv1d.bwd", 3 * e * t * c));
  if (x.bias) ops.push_back(memory_op("mamba.in_proj.bias.bwd", e * t * x.mamba_in_proj));
  // The gradient of the forward's first copy comes back as a transposed view, which
  // Transformer Engine's linear makes contiguous before in_proj's GEMMs.
  if (x.mamba_megatron && x.b > 1) {
    ops.push_back(memory_op("mamba.in_proj.grad_transpose", 2 * e * t * i));
  }
  column_parallel_backward(
      x, gemm_op("mamba.in_proj.dgrad", x.tokens, x.h, x.mamba_in_proj, 1, x.gemm_bytes),
      gemm_op("mamba.in_proj.wgrad", x.h, x.mamba_in_proj, x.tokens, 1, x.gemm_bytes, true), ops);
  norm_backward(x, "mamba.norm.bwd", ops);
  // The residual stream's gradient is summed with the branch gradient: read 2, write 1.
  ops.push_back(memory_op("residual.grad_add", 3 * e * te * h));
  return ops;
}

}  // namespace preflight
