// Fuzz target for the vTrain dataset reader (validation/dataset.h). The input is written to a
// per-process temporary file and parsed; when it parses, the first five rows are turned into
// scenarios. Neither step may crash; errors are fine.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "validation/dataset.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path =
      "/tmp/preflight_dataset_fuzz_" + std::to_string(static_cast<long>(getpid())) + ".csv";
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) __builtin_trap();  // the harness itself is broken, not the parser
  if (size > 0 && std::fwrite(data, 1, size, f) != size) __builtin_trap();
  std::fclose(f);

  const preflight::StatusOr<std::vector<preflight::DatasetRow>> rows =
      preflight::load_dataset_csv(path, "fuzz");
  std::remove(path.c_str());
  if (!rows.ok()) return 0;
  for (size_t i = 0; i < rows->size() && i < 5; ++i) {
    const preflight::StatusOr<preflight::Scenario> s = preflight::scenario_for_row((*rows)[i]);
    (void)s;
  }
  return 0;
}
