// The measured compute model (`compute.model: measured`): kernel times from a kernel table
// (config/kernel_table.h), measured on the GPU by tools/kernel-profiler or read from a PyTorch
// profiler trace, with the roofline (compute_model.h) for what the table does not cover.
//
// Per op (docs/compute.md "Measured kernels"):
//  * Its key: GEMMs by operand format and (m, n, k, batch); fused attention by format, heads,
//    KV heads, head width, causality and pass, over (batch, sequence); memory-bound kernels by
//    name over bytes (a row named `*` stands for every memory-bound kernel without rows of its
//    own). Mamba-2 scans and attention without a whole-sequence shape (ring steps, windows,
//    packed documents) have no key: roofline.
//  * A row of the same shape: its time, exactly (plus the GPU's kernel_gap, as for every
//    kernel: the table holds kernel durations, the gap is between dependent kernels).
//  * Else, when the shape lies inside a box of measured shapes of its key (every corner
//    measured, on each axis a shape at or below and one at or above): the time interpolated
//    multilinearly in log time over the logarithms of the axes (log-log interpolation; along one
//    axis, a power law through the two measured shapes). Monotone between measured shapes whose
//    times are ordered, and exact at them. (Carrying the roofline's shape through would not be:
//    its tile-wave staircase is flat where a measured efficiency rises.)
//  * Else the roofline's time ("not covered").
//  * A GEMM that runs as separate per-expert kernels (Op::gemm_streams) looks up its one-expert
//    kernel and carries that kernel's efficiency to the roofline's schedule of the whole group.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "compute/compute_model.h"
#include "config/kernel_table.h"

namespace preflight {

// Where an op's time comes from.
enum class KernelSource : uint8_t { kMeasured, kInterpolated, kRoofline };

// Compute time of one iteration's compute ops by where it came from (the ops of every pipeline
// stage's program, each counted as often as it runs).
struct ComputeCoverage {
  SimTime measured, interpolated, roofline;
  SimTime total() const { return measured + interpolated + roofline; }
  // Of the total; 0 without compute.
  double share(SimTime part) const {
    return total().ps() > 0 ? static_cast<double>(part.ps()) / static_cast<double>(total().ps())
                            : 0;
  }
};

// The table key of `op` under training precision `p`; nullopt for ops without one (collectives,
// Mamba scans, attention without a whole-sequence shape). A separate-kernel grouped GEMM's key
// is its one-expert kernel (batch 1).
std::optional<KernelShape> kernel_shape(const Op& op, Precision p);

class MeasuredModel final : public ComputeModel {
 public:
  // REQUIRES: table != nullptr, every row with time_us > 0.
  MeasuredModel(std::shared_ptr<const KernelTable> table, const GpuConfig& gpu, Precision p,
                AttentionKernel kernel);
  ~MeasuredModel() override;

  SimTime duration(const Op& op) const override;
  KernelSource source(const Op& op) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// How far the roofline is from a table's measurements, per kernel class (gemm by operand
// format, attention forward and backward, memory): the mean over its rows of roofline time /
// measured time (below 1: the roofline is faster than measured), and its range.
struct RooflineComparison {
  std::string kernel_class;
  int rows = 0;
  double mean_ratio = 0, min_ratio = 0, max_ratio = 0;
  double measured_us = 0, roofline_us = 0;  // sums over the rows
};
std::vector<RooflineComparison> compare_with_roofline(const KernelTable& t, const GpuConfig& gpu,
                                                      Precision p, AttentionKernel kernel);

// The distinct kernels `w`'s compute ops run (their table shapes under precision `p`, in the
// order they first appear), for the profiler to measure.
std::vector<KernelShape> workload_kernel_shapes(const Workload& w, Precision p);

// The compute model `s.compute` names: the roofline, or the measured model over its table.
std::unique_ptr<ComputeModel> make_compute_model(const Scenario& s);

// Where `w`'s compute time comes from under `model` (every op counted as roofline when `model`
// is not a MeasuredModel).
ComputeCoverage compute_coverage(const Workload& w, const ComputeModel& model);

}  // namespace preflight
