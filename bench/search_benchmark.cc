// Strategy search, whole runs on GPT-3 175B on 1,024 A100s (the default scenario) at the cheap
// fidelity (analytical network) on 2 threads. Targets (issue 7): >= 2,000 candidates evaluated in
// <= 60 s on a 2-core machine; goal >= 100 candidates/s.
//   Default: the default space (4,704 combinations, 1,272 valid, 342 fit and are simulated).
//   Wide: zero_stage 0-3, micro-batch up to 16 and every pipeline schedule but DualPipe
//         (35,040 combinations, 9,696 valid, 3,390 simulated).
// Counters: candidates (valid strategies, each memory-checked), evaluated (simulated), and the
// rates of both over the cheap pass.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "config/loader.h"
#include "search/search.h"

namespace preflight {
namespace {

void run_search(benchmark::State& state, const std::vector<std::string>& axes) {
  StatusOr<Scenario> s = load_scenario("", {});
  if (!s.ok()) {
    state.SkipWithError(s.status().message().c_str());
    return;
  }
  SearchSpace space;
  for (const std::string& a : axes) {
    if (!set_space_axis(&space, a).ok()) {
      state.SkipWithError("bad space axis");
      return;
    }
  }
  SearchOptions options;
  options.jobs = 2;
  for (auto _ : state) {
    StatusOr<SearchResult> r = search(*s, space, options);
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

void BM_SearchGpt3_175B_1024xA100_Default(benchmark::State& state) { run_search(state, {}); }
BENCHMARK(BM_SearchGpt3_175B_1024xA100_Default)->Unit(benchmark::kSecond)->Iterations(1);

void BM_SearchGpt3_175B_1024xA100_Wide(benchmark::State& state) {
  run_search(state, {"zero_stage=0,1,2,3", "micro_batch=1,2,4,8,16",
                     "schedule=gpipe,1f1b,interleaved,zb_h1,zb_h2"});
}
BENCHMARK(BM_SearchGpt3_175B_1024xA100_Wide)->Unit(benchmark::kSecond)->Iterations(1);

}  // namespace
}  // namespace preflight
