// `preflight validate --dataset published`: every row of shared/data/published/
// training_runs.csv turned into a scenario and simulated with the GPU presets' constants, on 2
// threads. Target (issue 13): <= 2 min on 2 cores. Counters: rows, rows simulated, distinct
// simulations. Skipped when the data set is not beside the checkout.
#include <benchmark/benchmark.h>

#include <filesystem>
#include <string>

#include "validation/dataset.h"
#include "validation/published_validate.h"

namespace preflight {
namespace {

void BM_ValidatePublished(benchmark::State& state) {
  const std::string path = find_data_dir() + "/published/training_runs.csv";
  if (!std::filesystem::exists(path)) {
    state.SkipWithError(("no data set at " + path).c_str());
    return;
  }
  StatusOr<std::vector<PublishedRow>> rows = load_published_csv(path);
  if (!rows.ok()) {
    state.SkipWithError(rows.status().message().c_str());
    return;
  }
  ValidationOptions o;
  o.jobs = 2;
  for (auto _ : state) {
    StatusOr<PublishedValidationResult> r = run_published_validation(*rows, o);
    if (!r.ok()) {
      state.SkipWithError(r.status().message().c_str());
      return;
    }
    state.counters["rows"] = r->total;
    state.counters["simulated"] = r->simulated;
  }
  state.SetLabel("target: <= 120 s on 2 cores");
}
BENCHMARK(BM_ValidatePublished)->Unit(benchmark::kSecond)->Iterations(1);

}  // namespace
}  // namespace preflight
