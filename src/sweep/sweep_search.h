// A StrategyFinder (sweep/sweep.h) that gives each sweep point its best strategy by `preflight
// search` (search/search.h): `preflight sweep --search` and the Python module's sweep(search=True).
#pragma once

#include <string>
#include <vector>

#include "search/search.h"
#include "search/search_space.h"
#include "sweep/sweep.h"

namespace preflight {

// Searches `space` on each point, ranked by `objective`, its candidates simulated on `jobs`
// threads and the best `top` again on the scenario's network when that is the flow network; the
// point runs with the best strategy ("search: no strategy fits" when none does). Keys of
// `varied` that are search axes (parallelism.tp, pp, cp, ep, vpp, zero_stage, recompute,
// schedule, sequence_parallel, distributed_optimizer, training.micro_batch) keep the point's
// value. Thread-safe (it copies its arguments). REQUIRES: jobs >= 1, top >= 1.
StrategyFinder search_strategy_finder(const SearchSpace& space,
                                      const std::vector<std::string>& varied, Objective objective,
                                      int jobs, int top);

}  // namespace preflight
