// PyTorch profiler (Kineto) Chrome traces to kernel tables (config/kernel_table.h), so a user can
// calibrate Preflight's measured compute model from one profiled step of their own job
// (`preflight kernels --from-trace TRACE.json`; docs/kernel_tables.md).
//
// What is read (torch.profiler with record_shapes=True; the trace's "traceEvents"):
//  * CPU ops: complete events ("ph": "X") of category cpu_op, with args "External id",
//    "Input Dims" and "Input type" (and "Concrete Inputs" for attention's is_causal).
//  * GPU kernels: complete events of category kernel; each is matched to the CPU op that
//    launched it by its "External id" (Kineto's link from a kernel to the op on top of the
//    launching thread's op stack) or, without one, through its "correlation" to the
//    cuda_runtime launch event and the innermost CPU op whose interval holds that launch.
//  * The device name: "deviceProperties"[0].name, else empty.
// Each launching op instance's kernels add up to one kernel time (a GEMM and its split-K
// reduction are one row); instances of the same shape average (reps = their count).
// Ops as rows:
//  * gemm: aten::mm [m,k]·[k,n], aten::addmm (bias, [m,k], [k,n]), aten::bmm and aten::baddbmm
//    [b,m,k]·[b,k,n], aten::_scaled_mm (fp8 operands); dtype from "Input type" (BFloat16 bf16,
//    Half fp16, Float8_* fp8).
//  * attention: aten::_scaled_dot_product_{flash,cudnn,efficient}_attention and their
//    _backward ops, query [b,h,s,d] and key [b,h_kv,s_kv,d]; is_causal from Concrete Inputs.
//  * memory: every other op that launched kernels, named by the op ("aten::add_"), with bytes
//    = its inputs' bytes + its largest input's bytes (an output of that size written): an
//    estimate of the HBM traffic of an element-wise or reduction kernel.
// Ops without shapes (record_shapes off) and kernels matched to no op are skipped and counted.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"
#include "config/kernel_table.h"

namespace preflight {

struct KinetoConversion {
  KernelTable table;
  int64_t kernels = 0;            // GPU kernel events read
  int64_t unmatched_kernels = 0;  // launched by no CPU op found
  int64_t shapeless_ops = 0;      // op instances skipped for want of input shapes
  double kernel_time_us = 0;      // of all kernels read
  double table_time_us = 0;       // of the kernels in the table's rows (× their reps)
};

// Parses `text` (the contents of `file`, for messages). Errors (not JSON, no traceEvents, no
// kernel events) name the file.
StatusOr<KinetoConversion> kineto_to_kernel_table(std::string_view text, const std::string& file);

}  // namespace preflight
