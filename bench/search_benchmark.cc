// Strategy search, whole run: GPT-3 175B on 1,024 A100s (the default scenario), every candidate
// of the default space at the cheap fidelity (analytical network) on 2 threads. Targets (issue
// 7): >= 2,000 candidates evaluated in <= 60 s on a 2-core machine; goal >= 100 candidates/s.
// Counters: candidates (valid strategies, each memory-checked), evaluated (simulated), and
// candidates_per_s over the cheap pass.
#include <benchmark/benchmark.h>

#include "config/loader.h"
#include "search/search.h"

namespace preflight {
namespace {

void BM_SearchGpt3_175B_1024xA100(benchmark::State& state) {
  StatusOr<Scenario> s = load_scenario("", {});
  if (!s.ok()) {
    state.SkipWithError(s.status().message().c_str());
    return;
  }
  SearchOptions options;
  options.jobs = static_cast<int>(state.range(0));
  for (auto _ : state) {
    StatusOr<SearchResult> r = search(*s, SearchSpace{}, options);
    if (!r.ok()) {
      state.SkipWithError(r.status().message().c_str());
      return;
    }
    state.counters["candidates"] = static_cast<double>(r->candidates);
    state.counters["evaluated"] = static_cast<double>(r->evaluated);
    state.counters["candidates_per_s"] = r->candidates / r->evaluate_seconds;
    state.counters["evaluated_per_s"] = r->evaluated / r->evaluate_seconds;
  }
  state.SetLabel("target: >= 2,000 evaluated in <= 60 s; goal >= 100 candidates/s");
}
BENCHMARK(BM_SearchGpt3_175B_1024xA100)->Arg(2)->Unit(benchmark::kSecond)->Iterations(1);

}  // namespace
}  // namespace preflight
