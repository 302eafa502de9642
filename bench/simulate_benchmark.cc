// Whole-run timing: the issue-2 benchmark scenario, GPT-3 175B on 1,024 A100s (TP 8, PP 16,
// DP 8, 1F1B, global batch 1,536). Target: <= 2 s per simulation on a 2-core machine.
#include <benchmark/benchmark.h>

#include "config/loader.h"
#include "simulate/simulate.h"

namespace preflight {
namespace {

void BM_SimulateGpt3_175B_1024xA100(benchmark::State& state) {
  StatusOr<Scenario> s = load_scenario("", {});
  if (!s.ok()) {
    state.SkipWithError(s.status().message().c_str());
    return;
  }
  for (auto _ : state) {
    StatusOr<SimulationReport> r = simulate(*s);
    benchmark::DoNotOptimize(r.ok());
  }
  state.SetLabel("target: <= 2 s per run");
}
BENCHMARK(BM_SimulateGpt3_175B_1024xA100)->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace
}  // namespace preflight
