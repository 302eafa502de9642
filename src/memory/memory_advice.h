// What to change when a strategy does not fit: advice computed from the limiting stage's
// memory, naming only the switches that apply to the scenario and what each saves.
#pragma once

#include <string>
#include <vector>

#include "config/scenario.h"
#include "memory/memory_model.h"

namespace preflight {

// One line per applicable change for the limiting stage of `m` (empty when it fits), most
// effective first: sharding the optimizer states or the whole model states over DP (with the
// GiB each saves), more model parallelism when the model states alone exceed HBM (the factor
// they need), and, when activations are a large share, recompute, sequence parallelism, a
// smaller micro-batch or a schedule that holds fewer micro-batches.
std::vector<std::string> memory_advice(const Scenario& s, const MemoryReport& m);

}  // namespace preflight
