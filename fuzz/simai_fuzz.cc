// Fuzz target for the SimAI/AICB workload parser (interop/simai_format.h). The input is parsed
// as a workload file; when it parses, it is written back, parsed again (the writer's output
// must parse) and converted to a Workload. None of it may crash; errors are fine.
#include <cstddef>
#include <cstdint>
#include <string>

#include "interop/simai_workload.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const preflight::StatusOr<preflight::SimaiWorkload> w =
      preflight::parse_simai_workload(text, "fuzz.txt");
  if (!w.ok()) return 0;
  const preflight::StatusOr<preflight::SimaiWorkload> again =
      preflight::parse_simai_workload(preflight::write_simai_workload(*w), "again.txt");
  if (!again.ok()) __builtin_trap();
  if (w->layers.size() <= 10000) {
    const preflight::StatusOr<preflight::Workload> workload = preflight::simai_to_workload(*w);
    (void)workload;
  }
  return 0;
}
