// Whole-run timing: the issue-2 benchmark scenario, GPT-3 175B on 1,024 A100s (TP 8, PP 16,
// DP 8, 1F1B, global batch 1,536). Target: <= 2 s per simulation on a 2-core machine.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

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

namespace preflight {
namespace {

// The same scenario on the flow-level network (issue 5 target: <= 2 s, goal <= 1 s), and
// LLaMA-3 405B on 16,384 H100s with TP 8, PP 16, DP 128 (target <= 60 s): its 126 layers run
// as Meta's did, 7 on the first and last stage and 8 on the others. Counters: flows and max-min
// rate recomputations.
void run_flow(benchmark::State& state, const std::vector<std::string>& overrides) {
  StatusOr<Scenario> s = load_scenario("", overrides);
  if (!s.ok()) {
    state.SkipWithError(s.status().message().c_str());
    return;
  }
  for (auto _ : state) {
    StatusOr<SimulationReport> r = simulate(*s);
    if (!r.ok()) {
      state.SkipWithError(r.status().message().c_str());
      return;
    }
    state.counters["flows"] = static_cast<double>(r->execution.network.flows);
    state.counters["rate_solves"] = static_cast<double>(r->execution.network.solves);
  }
}

void BM_SimulateGpt3_175B_1024xA100_Flow(benchmark::State& state) {
  run_flow(state, {"simulation.network=flow"});
  state.SetLabel("target: <= 2 s per run (goal <= 1 s)");
}
BENCHMARK(BM_SimulateGpt3_175B_1024xA100_Flow)->Unit(benchmark::kMillisecond)->Iterations(2);

void BM_SimulateLlama3_405B_16384xH100_Flow(benchmark::State& state) {
  run_flow(state,
           {"model.preset=llama3-405b", "parallelism.first_stage_layers=7",
            "parallelism.last_stage_layers=7", "cluster.preset=dgx-h100", "cluster.nodes=2048",
            "parallelism.tp=8", "parallelism.pp=16", "parallelism.dp=128", "training.seq_len=8192",
            "training.global_batch=2048", "parallelism.recompute=none", "simulation.network=flow"});
  state.SetLabel("target: <= 60 s per run");
}
BENCHMARK(BM_SimulateLlama3_405B_16384xH100_Flow)->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace
}  // namespace preflight
