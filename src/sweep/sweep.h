// Hardware and strategy sweeps (`preflight sweep`): the cross product of axes such as
// cluster.nic_bandwidth=100Gbps,200Gbps,400Gbps over a base scenario. Each point is the
// scenario + the --set overrides + the point's assignments (the --set semantics of `simulate`),
// optionally given its best strategy by a StrategyFinder, then simulated. Points run on J
// threads and each writes its own slot, so the result is identical for any J. No global state.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "base/status.h"
#include "config/scenario.h"

namespace preflight {

// One varied key and its values, in the order given.
struct SweepAxis {
  std::string key;                  // a scenario key path, e.g. "cluster.gpu"
  std::vector<std::string> values;  // e.g. {"H100-SXM5-80GB", "H20"}
};

// Parses "KEY=V1,V2,..." (commas only separate values). Errors name the spec: no '=', an empty
// key or an empty value ("a=1,,2"), a repeated value.
StatusOr<SweepAxis> parse_sweep_axis(const std::string& spec);

// The points of the cross product in row-major order (the last axis varies fastest): each is
// the index of its value on every axis. An empty list of axes gives one point (the scenario).
std::vector<std::vector<int>> sweep_points(const std::vector<SweepAxis>& axes);

// Returns the scenario with its best strategy (e.g. from `preflight search`). Called from the
// sweep's worker threads, possibly concurrently: it must be thread-safe.
using StrategyFinder = std::function<StatusOr<Scenario>(const Scenario&)>;

struct SweepOptions {
  int jobs = 1;                  // threads over the points; an error below 1
  StrategyFinder find_strategy;  // empty: each point runs with the scenario's strategy
};

struct SweepPoint {
  std::vector<std::string> values;  // the point's value on every axis
  Status status;                    // not OK: why the point has no figures (load, search,
                                    // simulate), one line
  Scenario scenario;                // as simulated (after find_strategy)
  double iteration_time_s = 0;
  double tokens_per_s = 0;
  double mfu = 0;
  double tflops_per_gpu = 0;
  int64_t peak_bytes = 0;  // per GPU, the limiting pipeline stage
  int64_t hbm_bytes = 0;   // the GPU's memory
  bool fits = false;
  double speedup = 0;  // the first point's iteration time / this one's; NaN when either failed
};

struct SweepResult {
  std::vector<SweepAxis> axes;
  std::vector<SweepPoint> points;  // in sweep_points order
  bool searched = false;           // points carry the strategy find_strategy chose
};

// Loads the scenario at `scenario_path` (empty: the built-in default) with `overrides` and each
// point's assignments, finds its strategy when options.find_strategy is set, and simulates it.
// A point that fails to load, search or simulate keeps its error in `status`; but a value that
// fails to load in every point that holds it (an unknown key, a malformed value) is an error
// naming "--vary KEY=VALUE" and the loader's message.
StatusOr<SweepResult> run_sweep(const std::string& scenario_path,
                                const std::vector<std::string>& overrides,
                                const std::vector<SweepAxis>& axes, const SweepOptions& options);

// "TP8 PP16 DP8 mb1 recompute=selective SP DistOpt": the point's parallelism; CP, EP, VPP,
// recompute, sequence parallelism, the distributed optimizer, ZeRO and the schedule appear when
// they are not neutral (1F1B, or interleaved with VPP > 1).
std::string strategy_summary(const Scenario& s);

}  // namespace preflight
