// Fuzz target for the Chakra execution-trace reader (interop/chakra_trace.h). The input is parsed
// as one rank's trace; when it parses, it is written back and parsed again (the writer's output
// must parse, with the same nodes) and replayed as a one-rank workload on the default cluster.
// None of it may crash; errors are fine.
#include <cstddef>
#include <cstdint>
#include <string>

#include "config/loader.h"
#include "interop/chakra_replay.h"
#include "interop/chakra_trace.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  preflight::StatusOr<preflight::ChakraTrace> t = preflight::parse_chakra_trace(bytes, "fuzz.et");
  if (!t.ok()) return 0;
  const preflight::StatusOr<preflight::ChakraTrace> again =
      preflight::parse_chakra_trace(preflight::write_chakra_trace(*t), "again.et");
  if (!again.ok() || again->nodes.size() != t->nodes.size()) __builtin_trap();
  if (t->nodes.size() <= 10000) {
    static const preflight::StatusOr<preflight::Scenario> base = preflight::load_scenario("", {});
    if (!base.ok()) __builtin_trap();
    const preflight::StatusOr<preflight::Scenario> s = preflight::chakra_scenario(1, *base);
    if (!s.ok()) __builtin_trap();
    preflight::ChakraWorkload w;
    w.prefix = "fuzz";
    w.ranks.push_back(std::move(*t));
    const preflight::StatusOr<preflight::ChakraReplayResult> r = preflight::replay_chakra(w, *s);
    (void)r;
  }
  return 0;
}
