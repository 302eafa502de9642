// The outputs of a Chakra trace replay (interop/chakra_replay.h): the text summary
// (`simulate --workload chakra:PREFIX`), the JSON document (`--json`) and the Chrome trace
// (`--trace`). Pure functions of the result: the same replay gives the same bytes.
#pragma once

#include <string>

#include "config/scenario.h"
#include "interop/chakra_replay.h"
#include "interop/chakra_trace.h"

namespace preflight {

std::string format_chakra_summary(const ChakraReplayResult& r, const ChakraWorkload& w,
                                  const Scenario& s);
std::string chakra_result_json(const ChakraReplayResult& r, const ChakraWorkload& w,
                               const Scenario& s);
// Chrome trace-event JSON of a replay run with `trace`: a process per rank, a thread per stream.
std::string chakra_trace_events(const ChakraReplayResult& r);

}  // namespace preflight
