// Strategy search: every valid candidate of a SearchSpace on a scenario is checked against the
// memory model, the ones that fit are simulated on the analytical network (the cheap fidelity)
// on J threads and R processes, ranked, and the best K simulated again at the scenario's
// configured network when that is another one (flow). Deterministic: each candidate's outcome
// is written to its own slot and ranking is by (objective, strategy key), so any J and any R give
// the same results, bit for bit. Thread-safe to call concurrently; it holds no global state.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "base/status.h"
#include "config/scenario.h"
#include "search/cost.h"
#include "search/process_group.h"
#include "search/search_space.h"

namespace preflight {

// What ranks first: the shortest iteration, the fewest dollars per million tokens, or the
// highest MFU.
enum class Objective { kTime, kCost, kMfu };
const char* to_string(Objective o);
StatusOr<Objective> parse_objective(const std::string& name);

struct SearchOptions {
  Objective objective = Objective::kTime;
  int jobs = 1;    // worker threads per process; an error below 1
  int top_k = 10;  // the best K are re-evaluated at the configured network; an error below 1
  // HBM each strategy must leave free on every GPU (`--headroom`): the memory model's peak is an
  // estimate, and a real job's varies with the allocator's fragmentation and NCCL's buffers by a
  // few GiB, so a strategy at 79.8 of 80 GiB is a gamble. Negative (the default): the
  // recommended_headroom() of the GPU (memory/memory_model.h), 2 GiB on an 80 GB GPU.
  Bytes headroom = Bytes(-1);
  // Called after each candidate of this process's share with (done, share size), from the worker
  // thread that finished it; calls never overlap.
  std::function<void(int64_t, int64_t)> on_progress;
  ProcessGroup* group = nullptr;  // the processes to split over; nullptr = this one alone
};

// One evaluated strategy.
struct StrategyResult {
  Strategy strategy;
  std::string network;  // the fidelity of these figures: "analytical" or "flow"
  double iteration_time_s = 0;
  double tokens_per_s = 0;
  double mfu = 0;
  int64_t peak_bytes = 0;  // memory per GPU of the limiting pipeline stage
  IterationCost cost;      // zero dollars when the cluster has no gpu_hour_price
};

struct SearchResult {
  int gpus = 0;
  int64_t tokens_per_iteration = 0;
  int64_t combinations = 0;  // every combination of the space
  int64_t candidates = 0;    // combinations that passed the divisibility and validation rules
  int64_t evaluated = 0;     // candidates that fit in memory and simulated: results.size()
  // Rejected combinations by reason, with "memory: does not fit" and "simulation: ..." among
  // them: combinations = candidates + the rules' rejections; candidates = evaluated + the rest.
  std::map<std::string, int64_t> rejected;
  // Ranked by the objective, then the strategy key. The first `reevaluated` were simulated again
  // at `final_network` and are ranked among themselves by those figures.
  std::vector<StrategyResult> results;
  int reevaluated = 0;
  std::string final_network = "analytical";
  bool root = true;  // false on MPI ranks other than 0: their results are empty
  // Wall-clock seconds (not part of any output that must be deterministic).
  double enumerate_seconds = 0;
  double evaluate_seconds = 0;  // the cheap pass, this process's share plus the gather
  double reevaluate_seconds = 0;
};

// Errors (InvalidArgument, one line each): jobs or top_k below 1; the cost objective without a
// price; an empty space; no valid combination; nothing that fits in memory; no candidate that
// simulates. REQUIRES: base's model, cluster and training as the loader gives them; its
// parallelism only adds its values to the default axes and need not fit the cluster.
StatusOr<SearchResult> search(const Scenario& base, const SearchSpace& space,
                              const SearchOptions& options);

// The cheap pass over one process's share, and the merge of every share, exposed to test the
// split without MPI: search() is enumerate, evaluate_share on each rank, merge_shares on rank 0.
// evaluate_share returns the serialized outcomes of candidates i ≡ rank (mod size).
std::string evaluate_share(const Scenario& base, const std::vector<Strategy>& candidates, int rank,
                           int size, const SearchOptions& options);
// REQUIRES: one share per rank, in rank order, from the same candidates.
StatusOr<SearchResult> merge_shares(const Scenario& base, const Enumeration& enumeration,
                                    const std::vector<std::string>& shares,
                                    const SearchOptions& options);

}  // namespace preflight
