// Chakra execution traces (interop/chakra_*.h): export, parse and replay of LLaMA-3 8B on 64
// H100s (TP 2, PP 4, DP 8, 16 micro-batches; 0.62 million nodes over 64 ranks). Targets: replay
// >= 1 million nodes/s and parse >= 2 million nodes/s on a 2-core machine (so that a
// 10-million-node trace set replays in seconds).
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "config/loader.h"
#include "interop/chakra_export.h"
#include "interop/chakra_replay.h"

namespace preflight {
namespace {

const std::vector<std::string> kScenario = {"model.preset=llama3-8b",   "cluster.preset=dgx-h100",
                                            "cluster.nodes=8",          "parallelism.tp=2",
                                            "parallelism.pp=4",         "parallelism.dp=8",
                                            "training.global_batch=128"};

struct Fixture {
  Scenario scenario;
  ChakraWorkload workload;
  std::vector<std::string> files;
  int64_t nodes = 0;
  std::string error;
};

const Fixture& fixture() {
  static const Fixture f = [] {
    Fixture f;
    StatusOr<Scenario> s = load_scenario("", kScenario);
    if (!s.ok()) {
      f.error = s.status().message();
      return f;
    }
    f.scenario = *s;
    StatusOr<ChakraWorkload> w = export_chakra(*s);
    if (!w.ok()) {
      f.error = w.status().message();
      return f;
    }
    f.workload = std::move(*w);
    f.workload.prefix = "bench";
    for (const ChakraTrace& t : f.workload.ranks) {
      f.files.push_back(write_chakra_trace(t));
      f.nodes += static_cast<int64_t>(t.nodes.size());
    }
    return f;
  }();
  return f;
}

void BM_ChakraExport_Llama3_8B_64xH100(benchmark::State& state) {
  const Fixture& f = fixture();
  if (!f.error.empty()) return state.SkipWithError(f.error.c_str());
  for (auto _ : state) {
    StatusOr<ChakraWorkload> w = export_chakra(f.scenario);
    benchmark::DoNotOptimize(w.ok());
  }
  state.SetItemsProcessed(state.iterations() * f.nodes);
  state.SetLabel("nodes/s; no target (export is one pass)");
}
BENCHMARK(BM_ChakraExport_Llama3_8B_64xH100)->Unit(benchmark::kMillisecond)->Iterations(3);

void BM_ChakraParse_Llama3_8B_64xH100(benchmark::State& state) {
  const Fixture& f = fixture();
  if (!f.error.empty()) return state.SkipWithError(f.error.c_str());
  for (auto _ : state) {
    for (const std::string& bytes : f.files) {
      StatusOr<ChakraTrace> t = parse_chakra_trace(bytes, "bench.et");
      benchmark::DoNotOptimize(t.ok());
    }
  }
  state.SetItemsProcessed(state.iterations() * f.nodes);
  state.SetLabel("nodes/s; target: >= 2M nodes/s");
}
BENCHMARK(BM_ChakraParse_Llama3_8B_64xH100)->Unit(benchmark::kMillisecond)->Iterations(3);

void BM_ChakraReplay_Llama3_8B_64xH100(benchmark::State& state) {
  const Fixture& f = fixture();
  if (!f.error.empty()) return state.SkipWithError(f.error.c_str());
  StatusOr<Scenario> s = chakra_scenario(static_cast<int>(f.workload.ranks.size()), f.scenario);
  for (auto _ : state) {
    StatusOr<ChakraReplayResult> r = replay_chakra(f.workload, *s);
    if (!r.ok()) return state.SkipWithError(r.status().message().c_str());
    benchmark::DoNotOptimize(r->iteration_time);
  }
  state.SetItemsProcessed(state.iterations() * f.nodes);
  state.SetLabel("nodes/s; target: >= 1M nodes/s");
}
BENCHMARK(BM_ChakraReplay_Llama3_8B_64xH100)->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace
}  // namespace preflight
