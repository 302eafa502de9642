#include "sweep/sweep_search.h"

namespace preflight {
namespace {

// "parallelism.tp=4" when `key` is a search axis (a strategy knob): the point's own value, which
// the search must keep; "" for the other keys (hardware, model, training).
std::string pin(const std::string& key, const Scenario& s) {
  const ParallelismConfig& p = s.parallelism;
  auto flag = [](bool b) { return std::string(b ? "true" : "false"); };
  std::string v;
  if (key == "parallelism.tp") v = std::to_string(p.tp);
  if (key == "parallelism.pp") v = std::to_string(p.pp);
  if (key == "parallelism.cp") v = std::to_string(p.cp);
  if (key == "parallelism.ep") v = std::to_string(p.ep);
  if (key == "parallelism.vpp") v = std::to_string(p.vpp);
  if (key == "parallelism.zero_stage") v = std::to_string(p.zero_stage);
  if (key == "parallelism.recompute") v = to_string(p.recompute);
  if (key == "parallelism.schedule") v = to_string(p.schedule);
  if (key == "parallelism.sequence_parallel") v = flag(p.sequence_parallel);
  if (key == "parallelism.distributed_optimizer") v = flag(p.distributed_optimizer);
  if (key == "training.micro_batch") v = std::to_string(s.training.micro_batch);
  return v.empty() ? "" : key + "=" + v;
}

}  // namespace

StrategyFinder search_strategy_finder(const SearchSpace& space,
                                      const std::vector<std::string>& varied, Objective objective,
                                      int jobs, int top) {
  return [space, varied, objective, jobs, top](const Scenario& s) -> StatusOr<Scenario> {
    SearchSpace point_space = space;
    for (const std::string& key : varied) {
      const std::string assignment = pin(key, s);
      if (!assignment.empty()) PREFLIGHT_RETURN_IF_ERROR(set_space_axis(&point_space, assignment));
    }
    SearchOptions o;
    o.objective = objective;
    o.jobs = jobs;
    o.top_k = top;
    PREFLIGHT_ASSIGN_OR_RETURN(SearchResult r, search(s, point_space, o));
    if (r.results.empty()) return invalid_argument("search: no strategy fits");
    return apply_strategy(s, r.results.front().strategy);
  };
}

}  // namespace preflight
