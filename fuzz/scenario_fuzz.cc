// Fuzz target for the scenario loader (config/loader.h). The input is split on NUL bytes: the
// first piece is the YAML text, the next up to three are `--set` overrides ("a.b=c"). Loading
// must never crash, abort or throw; any result is fine, but an error message must be one line.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "config/loader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  constexpr size_t kMaxOverrides = 3;
  const std::string input(reinterpret_cast<const char*>(data), size);
  const size_t end_of_text = input.find('\0');
  const std::string text = input.substr(0, end_of_text);
  std::vector<std::string> overrides;
  for (size_t pos = end_of_text; pos != std::string::npos && overrides.size() < kMaxOverrides;) {
    const size_t next = input.find('\0', pos + 1);
    overrides.push_back(input.substr(pos + 1, next == std::string::npos ? next : next - pos - 1));
    pos = next;
  }

  const preflight::StatusOr<preflight::Scenario> s =
      preflight::load_scenario_text(text, "fuzz.yaml", overrides);
  if (!s.ok() && s.status().message().find('\n') != std::string::npos) __builtin_trap();
  return 0;
}
