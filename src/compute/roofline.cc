#include <algorithm>
#include <cmath>

#include "compute/compute_model.h"

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

class RooflineModel final : public ComputeModel {
 public:
  RooflineModel(const GpuConfig& gpu, Precision precision) : gpu_(gpu) {
    const GpuCalibration& c = gpu.calibration;
    half_rate_ = gpu.peak_for(precision == Precision::kFp8 ? Precision::kBf16 : precision)
                     .flops_per_second() *
                 c.gemm_efficiency;
    fp8_rate_ = gpu.peak_for(Precision::kFp8).flops_per_second() * c.gemm_efficiency;
    attention_rate_ = gpu.peak_for(precision == Precision::kFp8 ? Precision::kBf16 : precision)
                          .flops_per_second() *
                      c.attention_efficiency;
    memory_rate_ = gpu.hbm_bandwidth.bytes_per_second() * c.memory_efficiency;
    gap_ = c.kernel_gap;
    k_overhead_ = c.gemm_k_overhead;
  }

  SimTime duration(const Op& op) const override {
    double seconds = 0;
    switch (op.type) {
      case OpType::kGemm:
        seconds = gemm_seconds(op);
        break;
      case OpType::kAttention:
        seconds = std::max(op.flops.count() / attention_rate_,
                           static_cast<double>(op.bytes.count()) / memory_rate_);
        break;
      case OpType::kMemory:
        seconds = static_cast<double>(op.bytes.count()) / memory_rate_;
        break;
      case OpType::kCollective:
        PREFLIGHT_CHECK_MSG(false, "collectives are timed by the collective model");
    }
    return SimTime::seconds(seconds) + gap_;
  }

 private:
  double gemm_seconds(const Op& op) const {
    const double rate = op.bytes_per_element == 1 ? fp8_rate_ : half_rate_;
    const int64_t sms = gpu_.sm_count;
    double best = INFINITY;
    for (const Tile& tile : kTiles) {
      const int64_t tiles =
          ((op.m + tile.m - 1) / tile.m) * ((op.n + tile.n - 1) / tile.n) * op.batch;
      int64_t split = 1;
      if (tiles < sms) {
        split = std::max<int64_t>(1, std::min<int64_t>(sms / tiles, op.k / kMinSplitK));
      }
      const int64_t waves = (tiles * split + sms - 1) / sms;
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
  double half_rate_ = 0;
  double fp8_rate_ = 0;
  double attention_rate_ = 0;
  double memory_rate_ = 0;
  SimTime gap_;
  double k_overhead_ = 0;  // pipeline fill/drain of one tile, in K elements
};

}  // namespace

std::unique_ptr<ComputeModel> make_roofline_model(const GpuConfig& gpu, Precision precision) {
  return std::make_unique<RooflineModel>(gpu, precision);
}

}  // namespace preflight
