// The scenario a strategy search starts from (`preflight search` and the Python module's
// search()): the scenario with its overrides, a GPU-hour price, and optionally resized to another
// GPU count. Pure functions of their inputs; thread-safe.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "base/status.h"
#include "config/scenario.h"

namespace preflight {

// Loads the scenario (a file, a text or the default) with `overrides` applied ("key=value").
using ScenarioLoader = std::function<StatusOr<Scenario>(const std::vector<std::string>& overrides)>;

// The base scenario: `load(overrides)`, with cluster.gpu_hour_price set when `gpu_hour_price` is
// not negative. With `gpus` > 0 and unlike the scenario's count, the cluster is re-read for that
// many GPUs under a stand-in strategy valid for any count (TP 1, DP = gcd(gpus, global batch),
// PP = the rest, uneven first stage when PP does not divide the layers); only its cluster is
// kept. Errors (one line, naming --gpus): a count that is not a positive multiple of
// cluster.gpus_per_node, or a global batch that leaves more stages than layers.
StatusOr<Scenario> load_search_base(const ScenarioLoader& load, std::vector<std::string> overrides,
                                    double gpu_hour_price, int gpus);

}  // namespace preflight
