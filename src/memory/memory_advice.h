// What to change when a strategy does not fit: advice computed from the limiting stage's
// memory, naming only the switches that apply to the scenario and what each saves.
#pragma once

#include <string>
#include <vector>

#include "config/scenario.h"
#include "memory/memory_model.h"

namespace preflight {

// What makes a strategy that does not fit fit, computed: each change is applied to the scenario
// and the memory model run again. One line per change that fits, least disruptive first (at
// most four), each with the resulting peak and the --set overrides that make it: the distributed
// optimizer, ZeRO-3, full recompute, micro-batch 1, CP / TP / PP ×2, ×4, ×8 taken from DP, then
// more GPUs holding the same DP with a deeper pipeline. When no single change fits, pairs of a
// saving and a split; when nothing fits, the closest change. Empty when `m` fits.
std::vector<std::string> memory_advice(const Scenario& s, const MemoryReport& m);

}  // namespace preflight
