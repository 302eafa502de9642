// Kernel tables: measured device times of the kernels a training step runs, per GPU, for
// `compute.model: measured` (compute/measured_model.h). One CSV format for every writer: the
// kernel profiler (tools/kernel-profiler/, which times the shapes `preflight kernels --shapes`
// lists), the PyTorch-profiler converter (`preflight kernels --from-trace`) and hand-made tables.
//
// The format (docs/kernel_tables.md): lines starting with '#' are comments; "# gpu: NAME" names
// the GPU measured. The first other line is the header, exactly kKernelTableColumns in order;
// each further line is one kernel:
//   kind          gemm | attention | memory
//   name          the kernel's name: a memory-bound kernel is looked up by it ("ln.fwd", the op
//                 names of docs/workload.md); informational for GEMMs and attention
//   dtype         operand format: bf16 fp16 fp8 fp8_blockwise mxfp8 nvfp4 (attention and memory
//                 kernels: bf16 or fp16)
//   m n k batch   gemm: C[m×n] = A[m×k]·B[k×n], `batch` independent products; attention: batch
//                 is the micro-batch; memory: unused (0)
//   heads kv_heads head_dim seq_q seq_kv causal pass
//                 attention: query heads, key/value heads, head width, query and key lengths,
//                 causal 0|1, pass fwd|bwd (FlashAttention-style fused kernels); else 0 / empty
//   bytes         memory: HBM bytes read + written; else 0
//   time_us       the kernel's device time in microseconds (mean over `reps` timed runs); empty
//                 in a shapes list
//   reps sm_clock_mhz power_w
//                 how it was measured (0 when unknown)
// Parsing is strict: every error names file:line, the column and what was expected.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace preflight {

enum class KernelKind : uint8_t { kGemm, kAttention, kMemory };

const char* to_string(KernelKind k);

// What identifies a kernel's work: the lookup key and the interpolation axes.
struct KernelShape {
  KernelKind kind = KernelKind::kMemory;
  std::string name;
  std::string dtype = "bf16";
  int64_t m = 0, n = 0, k = 0, batch = 0;
  int64_t heads = 0, kv_heads = 0, head_dim = 0, seq_q = 0, seq_kv = 0;
  bool causal = false;
  bool backward = false;  // attention pass: bwd
  int64_t bytes = 0;

  // Same kernel at the same shape (the name matters for memory kernels only).
  bool same_as(const KernelShape& o) const;
};

struct KernelMeasurement {
  KernelShape shape;
  double time_us = 0;  // > 0 in a kernel table; 0 in a shapes list
  int64_t reps = 0;
  double sm_clock_mhz = 0;
  double power_w = 0;
};

struct KernelTable {
  std::string gpu;   // from "# gpu: NAME"; may be empty
  std::string file;  // where it was read from (for messages and reports)
  std::vector<KernelMeasurement> rows;
};

// The longest kernel a table accepts, in microseconds: a kernel of an hour is not a kernel.
inline constexpr double kMaxKernelTimeUs = 3.6e9;
// The largest kernel dimension or byte count a table accepts: 2^40 (a terabyte, a trillion
// rows).
inline constexpr int64_t kMaxKernelValue = int64_t{1} << 40;

// The header line's columns, in order.
extern const char* const kKernelTableColumns[19];

// Parses `text` (the contents of `file`). With `require_times`, every row needs time_us > 0 (a
// kernel table); without, time_us may be empty (a shapes list). Rejects unknown kinds and
// dtypes, shapes that are not positive where the kind needs them, numbers past 2^40, names with
// commas, quotes or control bytes, and a shape listed twice.
StatusOr<KernelTable> parse_kernel_table(std::string_view text, const std::string& file,
                                         bool require_times);

// Reads and parses the file at `path`.
StatusOr<KernelTable> read_kernel_table(const std::string& path, bool require_times);

// Writes `t` in the format above (time columns empty when `with_times` is false), with a comment
// block documenting each column. parse_kernel_table(write_kernel_table(t)) == t.
std::string write_kernel_table(const KernelTable& t, bool with_times);

}  // namespace preflight
