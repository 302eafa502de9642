// Fuzz target for the kernel table parser (config/kernel_table.h) and the measured compute
// model over what it accepts (compute/measured_model.h). A table that parses must write back to
// a table that parses; the model built on it must time a few ops without crashing.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "compute/measured_model.h"
#include "config/kernel_table.h"
#include "workload/layer_ops.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  for (bool times : {true, false}) {
    const preflight::StatusOr<preflight::KernelTable> t =
        preflight::parse_kernel_table(text, "fuzz.csv", times);
    if (!t.ok()) continue;
    const preflight::StatusOr<preflight::KernelTable> again =
        preflight::parse_kernel_table(preflight::write_kernel_table(*t, times), "again.csv", times);
    if (!again.ok() || again->rows.size() != t->rows.size()) __builtin_trap();
    if (!times || t->rows.size() > 2000) continue;
    preflight::GpuConfig gpu;
    gpu.name = "fuzz";
    gpu.sm_count = 132;
    gpu.hbm_bandwidth = preflight::Bandwidth::gigabytes_per_second(3350);
    gpu.peak_bf16 = preflight::FlopRate::teraflops(989);
    gpu.peak_fp16 = gpu.peak_bf16;
    gpu.peak_fp8 = preflight::FlopRate::teraflops(1979);
    const preflight::MeasuredModel model(std::make_shared<const preflight::KernelTable>(*t), gpu,
                                         preflight::Precision::kBf16,
                                         preflight::AttentionKernel::kCudnn);
    for (const preflight::KernelMeasurement& km : t->rows) {
      const preflight::KernelShape& s = km.shape;
      if (s.kind == preflight::KernelKind::kGemm && s.m < (1 << 20) && s.n < (1 << 20) &&
          s.k < (1 << 20) && s.batch < 1024) {
        (void)model.duration(preflight::gemm_op("g", s.m + 1, s.n, s.k, s.batch, 2));
      }
      if (s.kind == preflight::KernelKind::kMemory) {
        (void)model.duration(preflight::memory_op(s.name.c_str(), static_cast<double>(s.bytes)));
      }
    }
  }
  return 0;
}
