// Fuzz target for the PyTorch profiler trace converter (interop/kineto_trace.h). Whatever it
// converts must write a kernel table that parses again. No input may crash it.
#include <cstddef>
#include <cstdint>
#include <string>

#include "interop/kineto_trace.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const preflight::StatusOr<preflight::KinetoConversion> c =
      preflight::kineto_to_kernel_table(text, "fuzz.json");
  if (!c.ok()) return 0;
  const preflight::StatusOr<preflight::KernelTable> again = preflight::parse_kernel_table(
      preflight::write_kernel_table(c->table, true), "again.csv", true);
  if (!again.ok()) __builtin_trap();
  return 0;
}
