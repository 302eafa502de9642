// ComputeModel: the seam that turns one compute op (GEMM, fused attention, memory-bound kernel)
// into a device duration. Implementations: the calibrated roofline (make_roofline_model) and,
// in tests, fakes. Implementations are immutable after construction and thread-safe.
#pragma once

#include <memory>

#include "base/units.h"
#include "config/scenario.h"
#include "workload/workload.h"

namespace preflight {

class ComputeModel {
 public:
  virtual ~ComputeModel() = default;
  // Device time of `op` (REQUIRES: op.type != kCollective), including the per-kernel gap.
  virtual SimTime duration(const Op& op) const = 0;
};

// The roofline model with tile/wave quantisation (docs/compute.md):
//   GEMM: for each CUTLASS-like tile (tm×tn, efficiency η_tile) —
//     tiles = ⌈m/tm⌉·⌈n/tn⌉·batch; split-K s = max(1, ⌊SMs/tiles⌋) capped so K/s >= 256;
//     waves = ⌈tiles·s/SMs⌉; work = waves·SMs·2·tm·tn·(⌈K/s⌉ + 64)/η_tile;
//     t = max(work/(peak·η_gemm), bytes/(HBM·η_mem)); the best tile wins.
//   Fused attention: max(flops/(peak·η_attn), bytes/(HBM·η_mem)).
//   Memory-bound: bytes/(HBM·η_mem).
//   Every kernel adds kernel_gap (the device-side gap between dependent kernels).
// `precision` selects the peak for 2-byte GEMMs; 1-byte GEMM operands use the FP8 peak.
std::unique_ptr<ComputeModel> make_roofline_model(const GpuConfig& gpu, Precision precision);

}  // namespace preflight
