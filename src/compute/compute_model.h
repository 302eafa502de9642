// ComputeModel: the seam that turns one compute op (GEMM, fused attention, memory-bound kernel)
// into a device duration, on a given GPU at a given time. Implementations: the calibrated
// roofline (make_roofline_model), slowed ranks on top of another model (make_slow_ranks_model)
// and, in tests, fakes. Implementations are immutable after construction and thread-safe.
#pragma once

#include <memory>
#include <vector>

#include "base/units.h"
#include "config/scenario.h"
#include "workload/workload.h"

namespace preflight {

// Where and when an op runs: the GPU (its global rank, parallel/rank_layout.h), its pipeline
// stage, and the kernel's start within the iteration.
struct RankContext {
  int rank = 0;
  int stage = 0;
  SimTime time;
};

class ComputeModel {
 public:
  virtual ~ComputeModel() = default;
  // Device time of `op` (REQUIRES: op.type != kCollective), including the per-kernel gap, on a
  // GPU that runs like every other.
  virtual SimTime duration(const Op& op) const = 0;
  // Device time of `op` on the GPU and at the time `at` names. It equals duration(op) for every
  // rank outside distinct_ranks().
  virtual SimTime duration(const Op& op, const RankContext& at) const {
    (void)at;
    return duration(op);
  }
  // The ranks whose kernels may run differently from duration(op), ascending; empty when every
  // GPU runs alike. The executor simulates the ranks listed apart and folds the rest.
  virtual std::vector<int> distinct_ranks() const { return {}; }
  // How many times as long a kernel that starts at `at` takes on that GPU than on its peers (a
  // straggler's factor; 1 for every rank outside distinct_ranks()). Kernels whose time the input
  // gives rather than this model (Op::fixed_time from a SimAI file, a Chakra trace's durations)
  // scale by it; duration(op, at) already holds it.
  virtual double slowdown(const RankContext& at) const {
    (void)at;
    return 1;
  }
};

// Kernels `op` runs as on the device, each paying the GPU's kernel_gap: a GEMM of `batch`
// matrices launched `gemm_streams` at a time runs ⌈batch / gemm_streams⌉ groups, other ops
// Op::device_kernels; at least 1.
int64_t device_kernel_count(const Op& op);

// The roofline model with tile/wave quantisation (docs/compute.md):
//   GEMM: for each CUTLASS-like tile (tm×tn, efficiency η_tile) —
//     tiles = ⌈m/tm⌉·⌈n/tn⌉·batch; split-K s = max(1, ⌊SMs/tiles⌋) capped so K/s >= 256;
//     waves = ⌈tiles·s/SMs⌉; work = waves·SMs·2·tm·tn·(⌈K/s⌉ + 64)/η_tile;
//     t = max(work/(peak·η_gemm), bytes/(HBM·η_mem)); the best tile wins.
//   Fused attention: max(flops/(peak·η_attn), bytes/(HBM·η_mem)); backward kernels at
//   η_attn · attention_backward_ratio; Mamba-2 SSD scans (Op::ssd_scan) at peak·η_ssd.
//   Memory-bound: bytes/(HBM·η_mem).
//   Every kernel adds kernel_gap (the device-side gap between dependent kernels).
// GEMMs with 2-byte operands run at gemm_rate(gpu, bf16), or fp16 when `precision` is fp16;
// GEMMs with narrower operands (bytes_per_element 1: the low-precision linear layers of
// workload/precision_ops.h) at gemm_rate(gpu, precision), or the fp8 rate when `precision` is
// bf16/fp16. Fused attention runs at the bf16/fp16 peak in every mode.
// `kernel` is the stack's fused-attention family: FlashAttention-2 on Hopper and Blackwell runs
// at kFlash2Forward / kFlash2Backward of the cuDNN-class efficiency the GPU preset holds; on
// Ampere and before FlashAttention-2 is the reference kernel (factor 1). The first
// FlashAttention runs at kFlash1 of FlashAttention-2, forward and backward, on every part.
std::unique_ptr<ComputeModel> make_roofline_model(const GpuConfig& gpu, Precision precision,
                                                  AttentionKernel kernel = AttentionKernel::kCudnn);

// `base` slowed on `ranks` (simulation.slow_ranks, config/scenario.h; a rank listed twice takes the
// product of its factors where the windows overlap). REQUIRES: `base` outlives the model; every
// factor > 0.
std::unique_ptr<ComputeModel> make_slow_ranks_model(const ComputeModel& base,
                                                    std::vector<SlowRank> ranks);

// FlashAttention-2 against cuDNN on H100, head dim 128, sequence 8K (FlashAttention-3 paper,
// Shah et al. 2024, Figs. 5-6): forward 335 vs ~605 TFLOP/s, backward 318 vs 518.
constexpr double kFlash2Forward = 335.0 / 605.0;
constexpr double kFlash2Backward = 318.0 / 518.0;

// The first FlashAttention against FlashAttention-2 on A100 (Dao 2023, the FlashAttention-2
// paper's abstract: FlashAttention reaches 25-40 % of the A100's peak FLOP/s, FlashAttention-2
// 50-73 %; the midpoints, 32.5 / 61.5). Its Triton port (flash_attn_triton.py) is "overall
// slightly slower than CUDA forward + backward" (its header), so the same factor stands for both.
// Measured on A100 only; on Hopper and Blackwell the factor is assumed to hold against
// FlashAttention-2's own rate there.
constexpr double kFlash1 = 32.5 / 61.5;

// Best achievable GEMM rate in FLOP/s for operands in `p` (docs/precision.md):
//   peak_for(p) · η_gemm · f_fp8 · f_format
// where f_fp8 is the measured FP8/BF16 efficiency ratio of the architecture (Hopper 0.90,
// Blackwell 0.97, else 1; microbenchmarks.csv mlengineering_mamf) for every format below 16
// bits, and f_format the scaling overhead against per-tensor fp8: fp8 1, fp8_blockwise 0.90,
// mxfp8 0.95 (assumptions, roofline.cc), nvfp4 calibration.nvfp4_efficiency (fitted per
// generation). bf16/fp16: peak · η_gemm.
double gemm_rate(const GpuConfig& gpu, Precision p);

}  // namespace preflight
