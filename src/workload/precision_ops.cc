#include "workload/precision_ops.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>

#include "base/check.h"
#include "workload/layer_ops.h"

namespace preflight {
namespace {

// Bytes of a bf16 activation, gradient or weight element before the cast, and of a GEMM output.
constexpr double kHalfBytes = 2;
// Each cast writes two low-precision copies: row-wise and column-wise (transposed) scaled.
constexpr double kCopies = 2;
// One FP32 amax per tensor (per-tensor fp8; nvfp4's second-level scale).
constexpr double kAmaxBytes = 4;

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }
bool contains(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }

// GEMMs that TE and Megatron-Core leave in bf16 (precision_ops.h).
bool stays_high_precision(const std::string& name) {
  // Hyper-connections' mixing weights (DeepSeek-V4's mHC) are computed outside TE's linears.
  return starts_with(name, "attn.") || starts_with(name, "logits.") ||
         starts_with(name, "moe.router.") || starts_with(name, "lora.") ||
         starts_with(name, "hc.") || contains(name, ".hc.");
}

bool is_tp_allgather(const Op& op) {
  return op.type == OpType::kCollective && op.collective == CollectiveKind::kAllGather &&
         op.group == GroupKind::kTensor;
}

// Whether the first GEMM after ops[i] runs in low precision (what a TP all-gather feeds).
bool feeds_low_precision_gemm(const std::vector<Op>& ops, size_t i) {
  for (size_t j = i + 1; j < ops.size(); ++j) {
    if (ops[j].type == OpType::kGemm) return !stays_high_precision(ops[j].name);
  }
  return false;
}

// Whether a cast first reads its input for the amax of the tensor at hand: nvfp4 (its
// per-tensor second-level scale) and fp8 under current scaling (Fp8Recipe); delayed scaling
// takes the scale from the amax history and folds the new amax into the cast kernel.
bool amax_pass(Precision p, Fp8Recipe r) {
  return p == Precision::kNvfp4 || (p == Precision::kFp8 && r == Fp8Recipe::kCurrent);
}
bool per_tensor_amax(Precision p) { return p == Precision::kFp8 || p == Precision::kNvfp4; }

// Whether the input of `gemm` comes out of Transformer Engine's own norm kernel: QKV and a
// dense MLP's FC1 are LayerNormLinear modules in Megatron-Core's TE layer spec, whose norm
// computes the amax of what it writes, so under fp8 current scaling that input needs no read
// of its own for the amax (nvfp4's second-level amax is read apart either way).
bool norm_fed(const std::string& gemm) {
  return starts_with(gemm, "qkv.fwd") || starts_with(gemm, "fc1.fwd");
}

// True for the formats whose GEMM operands carry per-block scales in a GEMM-specific layout.
bool block_scaled(Precision p) { return p == Precision::kMxfp8 || p == Precision::kNvfp4; }

// Bytes per element of a low-precision operand's values alone (gemm_operand_bytes less scales).
double element_bytes(Precision p) { return p == Precision::kNvfp4 ? 0.5 : 1.0; }

// The quantize op for `tensors` bf16 tensors of `elements` elements in all, of which
// `amax_elements` are first read for their amax (amax_pass).
Op quantize_op(const std::string& gemm, double elements, double amax_elements, int tensors,
               Precision p) {
  const double bytes = elements * (kHalfBytes + kCopies * gemm_operand_bytes(p)) +
                       amax_elements * kHalfBytes + (per_tensor_amax(p) ? kAmaxBytes * tensors : 0);
  return memory_op((gemm + ".quantize").c_str(), bytes);
}

// Rewrites a GEMM's traffic for operands of `operand_bytes` per element; its output (and an
// accumulated gradient, whatever its old width) stays 2 B per element.
void set_operand_width(Op& op, double operand_bytes, int bytes_per_element) {
  const double operands = static_cast<double>(op.m * op.k + op.k * op.n) * op.batch;
  const double outputs = static_cast<double>(op.bytes.count()) / op.bytes_per_element - operands;
  op.bytes = Bytes(std::llround(operands * operand_bytes + outputs * kHalfBytes));
  op.bytes_per_element = bytes_per_element;
}

}  // namespace

bool is_low_precision(Precision p) {
  return p == Precision::kFp8 || p == Precision::kFp8Blockwise || p == Precision::kMxfp8 ||
         p == Precision::kNvfp4;
}

double gemm_operand_bytes(Precision p) {
  switch (p) {
    case Precision::kFp16:
    case Precision::kBf16:
      return 2;
    case Precision::kFp8:
      return 1;
    case Precision::kFp8Blockwise:
      return 1 + 4.0 / 128;
    case Precision::kMxfp8:
      return 1 + 1.0 / 32;
    case Precision::kNvfp4:
      return 0.5 + 1.0 / 16;
  }
  return 2;
}

void apply_precision(const Scenario& s, std::vector<Op>* ops) {
  PREFLIGHT_CHECK(ops != nullptr);
  const Precision p = s.training.precision;
  if (!is_low_precision(p)) return;
  for (const Op& op : *ops) {
    if (op.name.size() >= 9 && op.name.compare(op.name.size() - 9, 9, ".quantize") == 0) return;
  }
  const double tp = s.parallelism.tp;
  const double microbatches = std::max(1, s.num_microbatches());
  std::vector<Op> out;
  out.reserve(ops->size() * 2);
  for (size_t i = 0; i < ops->size(); ++i) {
    Op& op = (*ops)[i];
    if (is_tp_allgather(op) && feeds_low_precision_gemm(*ops, i)) {
      op.comm_bytes = Bytes(std::llround(static_cast<double>(op.comm_bytes.count()) *
                                         gemm_operand_bytes(p) / kHalfBytes));
    }
    if (op.type != OpType::kGemm) {
      out.push_back(std::move(op));
      continue;
    }
    if (stays_high_precision(op.name)) {
      set_operand_width(op, kHalfBytes, 2);
      out.push_back(std::move(op));
      continue;
    }
    // The A operand came through a blocking TP all-gather: the shard was cast before it.
    const bool gathered = !out.empty() && is_tp_allgather(out.back()) && !out.back().async;
    const double input = op.quantized_input
                             ? 0.0
                             : static_cast<double>(op.m * op.k) * op.batch / (gathered ? tp : 1);
    const double weight = static_cast<double>(op.k * op.n) * op.batch / microbatches;
    const Fp8Recipe recipe = s.training.fp8_recipe;
    const bool amax = amax_pass(p, recipe);
    const bool current = p == Precision::kFp8 && recipe == Fp8Recipe::kCurrent;
    std::optional<Op> quantize;
    if (contains(op.name, ".dgrad")) {
      if (input > 0) {  // the output gradient
        quantize = quantize_op(op.name, input, amax ? input : 0, 1, p);
      }
    } else if (!contains(op.name, ".wgrad")) {
      // Input activation (unless quantized_input) and weight.
      const double input_amax = amax && !(current && norm_fed(op.name)) ? input : 0;
      quantize = quantize_op(op.name, input + weight, input_amax + (amax ? weight : 0),
                             input > 0 ? 2 : 1, p);
    }
    // Transformer Engine's GroupedLinear (the per-expert grouped GEMM: separate kernels on its
    // streams) quantizes the expert splits one by one (tex.split_quantize ->
    // multi_tensor_quantize_impl, "only have fused kernel for FP8 delayed scaling"): MXFP8,
    // blockwise and current-scaling FP8 launch a quantize kernel per local expert, each with its
    // gap on the GPU. Delayed scaling runs one multi-tensor cast-transpose; NVFP4 one grouped
    // kernel (split_quantize_nvfp4_impl, TransformerEngine PR #2411, 2025-11).
    const bool per_split = op.gemm_streams > 0 && op.batch > 1 &&
                           (p == Precision::kMxfp8 || p == Precision::kFp8Blockwise || current);
    if (quantize && per_split) {
      quantize->device_kernels = static_cast<int>(op.batch) * (current ? 3 : 1);
    }
    if (quantize && current && !per_split) {
      // Float8CurrentScalingQuantizer::quantize_impl runs three kernels per cast: the amax
      // (nvte_compute_amax), the scale from it (nvte_compute_scale_from_amax), the cast
      // (nvte_quantize_v2), each with its kernel gap on the GPU; they are launched from that one
      // C++ call, so the host pays one framework op for them, as for delayed scaling's cast.
      quantize->device_kernels = 3;
    }
    if (quantize) {
      const auto at = gathered ? out.end() - 1 : out.end();
      const size_t pos = static_cast<size_t>(at - out.begin());
      out.insert(at, std::move(*quantize));
      // Current scaling of a sequence-parallel shard: Transformer Engine gives the quantizer of a
      // column-parallel input and of a row-parallel output gradient an amax reduction over the
      // TP group (with_amax_reduction, so every rank casts its shard at one scale before the
      // all-gather), a blocking all-reduce of one float between the amax and the cast.
      if (gathered && current && input > 0) {
        Op reduce = collective_op("tp.allreduce.amax", CollectiveKind::kAllReduce,
                                  GroupKind::kTensor, Bytes(static_cast<int64_t>(kAmaxBytes)));
        out.insert(out.begin() + static_cast<std::ptrdiff_t>(pos), std::move(reduce));
      }
    }
    set_operand_width(op, gemm_operand_bytes(p), 1);
    // Block-scaled operands (MXFP8, NVFP4): cuBLAS reads the block scales in its interleaved
    // ("swizzled") layout, which Transformer Engine's GEMM call produces from the quantizers'
    // compact one with a kernel per operand before the GEMM (te_general_gemm and
    // te_general_grouped_gemm: swizzle_scaling_factors of A and of B; the grouped GEMM's
    // multi-tensor swizzle takes all of its experts in one kernel). Each reads and writes its
    // operand's scales, launched from the GEMM's C++ call (no framework op of its own).
    if (block_scaled(p)) {
      const double scales = static_cast<double>(op.m * op.k + op.k * op.n) * op.batch *
                            (gemm_operand_bytes(p) - element_bytes(p));
      Op swizzle = memory_op((op.name + ".swizzle").c_str(), 2 * scales);
      swizzle.launches = 0;
      swizzle.device_kernels = 2;
      out.push_back(std::move(swizzle));
    }
    out.push_back(std::move(op));
  }
  *ops = std::move(out);
}

}  // namespace preflight
