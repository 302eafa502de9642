#include <algorithm>
#include <cmath>

#include "compute/compute_model.h"
#include "workload/precision_ops.h"

namespace preflight {
namespace {

struct Tile {
  int64_t m, n;
  double efficiency;  // relative to the largest tiles: data reuse falls with tile area
};

// Tile shapes of CUTLASS/cuBLAS Ampere/Hopper half-precision kernels and their relative
// efficiencies (smaller tiles re-read operands more often); docs/compute.md.
constexpr Tile kTiles[] = {{256, 128, 1.0}, {128, 256, 1.0}, {128, 128, 0.92},
                           {128, 64, 0.80}, {64, 128, 0.80}, {64, 64, 0.62}};
// Split-K is not used below this many K elements per split.
constexpr int64_t kMinSplitK = 256;

// FP8 GEMM efficiency relative to BF16 on the same GPU: best-shape cuBLAS through torch
// (microbenchmarks.csv mlengineering_mamf, FP8 / BF16 fraction of each dense peak). Hopper:
// H100 0.709 / 0.803 = 0.883, H200 0.734 / 0.803 = 0.914; Blackwell: B200 0.763 / 0.776 = 0.983,
// B300 0.745 / 0.786 = 0.948, GB200 0.723 / 0.729 = 0.992. Other architectures: no measurement, 1.
constexpr double kFp8VsBf16Hopper = 0.90;
constexpr double kFp8VsBf16Blackwell = 0.97;
// Scaling overhead of each format against per-tensor fp8, whose one scale per tensor is applied
// in the GEMM epilogue (factor 1).
// fp8_blockwise: each 1×128 / 128×128 tile has its own FP32 scale, applied in the main loop when
// the partial sums are promoted to FP32 on the CUDA cores every 128 K elements (DeepSeek-V3
// §3.3.2; DeepGEMM overlaps it with the next WGMMA). Assumption: 10% of the throughput.
constexpr double kBlockwiseFactor = 0.90;
// mxfp8: Blackwell's block-scaled MMA applies the E8M0 scale of every 32 elements in the tensor
// core; what is left is staging the scale factors into tensor memory. Assumption: 5%.
constexpr double kMxfp8Factor = 0.95;
// nvfp4: the same block-scaled MMA with twice the scale density; its factor is the GPU's
// calibration.nvfp4_efficiency (config/scenario.h).

double fp8_vs_bf16(const GpuConfig& gpu) {
  if (gpu.architecture == GpuArchitecture::kHopper) return kFp8VsBf16Hopper;
  if (gpu.architecture == GpuArchitecture::kBlackwell) return kFp8VsBf16Blackwell;
  return 1.0;
}

class RooflineModel final : public ComputeModel {
 public:
  RooflineModel(const GpuConfig& gpu, Precision precision, AttentionKernel kernel) : gpu_(gpu) {
    const GpuCalibration& c = gpu.calibration;
    const Precision half = precision == Precision::kFp16 ? Precision::kFp16 : Precision::kBf16;
    half_rate_ = gemm_rate(gpu, half);
    low_rate_ = gemm_rate(gpu, is_low_precision(precision) ? precision : Precision::kFp8);
    // Attention stays in bf16/fp16 in every mode (docs/precision.md).
    attention_rate_ = gpu.peak_for(half).flops_per_second() * c.attention_efficiency;
    attention_backward_rate_ = attention_rate_ * c.attention_backward_ratio;
    ssd_rate_ = gpu.peak_for(half).flops_per_second() * c.ssd_efficiency;
    const bool flash = kernel == AttentionKernel::kFlash2 || kernel == AttentionKernel::kFlash1;
    if (flash && architecture_traits(gpu.architecture).compute_capability >= 90) {
      attention_rate_ *= kFlash2Forward;
      attention_backward_rate_ *= kFlash2Backward;
    }
    if (kernel == AttentionKernel::kFlash1) {
      attention_rate_ *= kFlash1;
      attention_backward_rate_ *= kFlash1;
    }
    // A work unit's fixed cost was measured on cuDNN's kernels; FlashAttention's own kernels
    // carry none here (no measurement).
    unit_overhead_ = kernel == AttentionKernel::kCudnn ? c.attention_unit_overhead : 0;
    exp_rate_ = gpu.exp_per_second();
    memory_rate_ = gpu.hbm_bandwidth.bytes_per_second() * c.memory_efficiency;
    ssd_memory_rate_ = c.ssd_memory_efficiency > 0
                           ? gpu.hbm_bandwidth.bytes_per_second() * c.ssd_memory_efficiency
                           : memory_rate_;
    gap_ = c.kernel_gap;
    k_overhead_ = c.gemm_k_overhead;
  }

  SimTime duration(const Op& op) const override {
    double seconds = 0;
    switch (op.type) {
      case OpType::kGemm:
        seconds = gemm_seconds(op);
        break;
      case OpType::kAttention: {
        // The Mamba-2 SSD scan's Triton kernels run at their own fraction of the peak, forward
        // and backward alike; FlashAttention at the attention efficiency, its backward below.
        const double rate = op.ssd_scan   ? ssd_rate_
                            : op.backward ? attention_backward_rate_
                                          : attention_rate_;
        const double bandwidth = op.ssd_scan ? ssd_memory_rate_ : memory_rate_;
        // The softmax's exponentials run on the special-function units, between the two GEMMs
        // of each tile (BMM1, softmax, BMM2): the tensor cores wait for them (NVIDIA, "Making
        // Softmax More Efficient with Blackwell Ultra", 2026), so their time adds to the GEMMs'.
        // At the peak a score element's 4·d forward FLOPs take as long as its exponential at
        // d = 64 on Hopper, d = 128 on Blackwell, d = 64 on Blackwell Ultra (twice the units).
        const double softmax = exp_rate_ > 0 ? op.exponentials / exp_rate_ : 0;
        // Each work unit (a tile of queries of one head) computes its key tiles and pays the
        // unit's fixed cost, attention_unit_overhead tiles of its work (the Q load, the
        // pipeline's fill and drain, the output's normalisation and store): the tiles' time
        // grows by the ratio. A 128-key window (2 tiles a unit) costs 3.4 times its tiles on
        // Blackwell, a full causal 8K sequence (32.5 a unit) 1.13 times.
        double compute = op.flops.count() / rate + softmax;
        if (unit_overhead_ > 0 && op.attention_tiles_per_unit > 0) {
          compute *= 1 + unit_overhead_ / op.attention_tiles_per_unit;
        }
        seconds = std::max(compute, static_cast<double>(op.bytes.count()) / bandwidth);
        break;
      }
      case OpType::kMemory:
        seconds = static_cast<double>(op.bytes.count()) / memory_rate_;
        break;
      case OpType::kCollective:
        PREFLIGHT_CHECK_MSG(false, "collectives are timed by the collective model");
    }
    // One dependent-kernel gap per kernel: per group of a GEMM's separately launched matrices,
    // per kernel of an element-wise loop.
    return SimTime::seconds(seconds) + gap_ * device_kernel_count(op);
  }

 private:
  // A GEMM whose `batch` matrices run as separate kernels, `gemm_streams` at a time: the number
  // of such groups; 0 for one batched kernel.
  static int64_t separate_groups(const Op& op) {
    if (op.type != OpType::kGemm || op.gemm_streams <= 0 || op.batch <= 1) return 0;
    return device_kernel_count(op);
  }

  double gemm_seconds(const Op& op) const {
    const double rate = op.bytes_per_element < 2 ? low_rate_ : half_rate_;
    const int64_t sms = gpu_.sm_count;
    // Separate kernels: each group of streams fills its own waves (the GPU cannot start the
    // next group's tiles in the last wave of this one's).
    const int64_t groups = separate_groups(op);
    const int64_t per_wave_set =
        groups > 0 ? std::min<int64_t>(op.gemm_streams, op.batch) : op.batch;
    const int64_t sets = groups > 0 ? groups : 1;
    double best = INFINITY;
    for (const Tile& tile : kTiles) {
      const int64_t tiles =
          ((op.m + tile.m - 1) / tile.m) * ((op.n + tile.n - 1) / tile.n) * per_wave_set;
      int64_t split = 1;
      if (tiles < sms) {
        split = std::max<int64_t>(1, std::min<int64_t>(sms / tiles, op.k / kMinSplitK));
      }
      const int64_t waves = sets * ((tiles * split + sms - 1) / sms);
      const double k_per_split = std::ceil(static_cast<double>(op.k) / static_cast<double>(split));
      const double work = static_cast<double>(waves * sms) * 2.0 *
                          static_cast<double>(tile.m * tile.n) * (k_per_split + k_overhead_) /
                          tile.efficiency;
      best = std::min(best, work / rate);
    }
    const double memory = static_cast<double>(op.bytes.count()) / memory_rate_;
    return std::max(best, memory);
  }

  GpuConfig gpu_;
  double half_rate_ = 0;  // bf16/fp16 operands
  double low_rate_ = 0;   // operands below 16 bits, in the scenario's format
  double attention_rate_ = 0;
  double attention_backward_rate_ = 0;
  double ssd_rate_ = 0;       // Mamba-2 SSD scans
  double exp_rate_ = 0;       // softmax exponentials per second (GpuConfig::exp_per_second)
  double unit_overhead_ = 0;  // a fused-attention work unit's fixed cost, in its tiles
  double memory_rate_ = 0;
  double ssd_memory_rate_ = 0;  // the SSD scans' bytes
  SimTime gap_;
  double k_overhead_ = 0;  // pipeline fill/drain of one tile, in K elements
};

}  // namespace

int64_t device_kernel_count(const Op& op) {
  if (op.type == OpType::kGemm && op.gemm_streams > 0 && op.batch > 1) {
    return (op.batch + op.gemm_streams - 1) / op.gemm_streams;
  }
  return std::max(1, op.device_kernels);
}

double gemm_rate(const GpuConfig& gpu, Precision p) {
  const double base = gpu.peak_for(p).flops_per_second() * gpu.calibration.gemm_efficiency;
  switch (p) {
    case Precision::kFp16:
    case Precision::kBf16:
      return base;
    case Precision::kFp8:
      return base * fp8_vs_bf16(gpu);
    case Precision::kFp8Blockwise:
      return base * fp8_vs_bf16(gpu) * kBlockwiseFactor;
    case Precision::kMxfp8:
      return base * fp8_vs_bf16(gpu) * kMxfp8Factor;
    case Precision::kNvfp4:
      return base * fp8_vs_bf16(gpu) * gpu.calibration.nvfp4_efficiency;
  }
  return base;
}

std::unique_ptr<ComputeModel> make_roofline_model(const GpuConfig& gpu, Precision precision,
                                                  AttentionKernel kernel) {
  return std::make_unique<RooflineModel>(gpu, precision, kernel);
}

}  // namespace preflight
