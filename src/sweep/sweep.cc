#include "sweep/sweep.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <set>
#include <thread>

#include "config/loader.h"
#include "simulate/simulate.h"

namespace preflight {

StatusOr<SweepAxis> parse_sweep_axis(const std::string& spec) {
  const size_t eq = spec.find('=');
  if (eq == std::string::npos || eq == 0) {
    return invalid_argument("--vary " + spec + ": expected KEY=V1,V2,...");
  }
  SweepAxis axis;
  axis.key = spec.substr(0, eq);
  const std::string list = spec.substr(eq + 1);
  std::set<std::string> seen;
  size_t start = 0;
  while (true) {
    const size_t comma = list.find(',', start);
    const std::string value =
        list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (value.empty()) return invalid_argument("--vary " + spec + ": empty value");
    if (!seen.insert(value).second) {
      return invalid_argument("--vary " + spec + ": value '" + value + "' given twice");
    }
    axis.values.push_back(value);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return axis;
}

std::vector<std::vector<int>> sweep_points(const std::vector<SweepAxis>& axes) {
  std::vector<std::vector<int>> points = {{}};
  for (const SweepAxis& axis : axes) {
    std::vector<std::vector<int>> next;
    for (const std::vector<int>& p : points) {
      for (int v = 0; v < static_cast<int>(axis.values.size()); ++v) {
        next.push_back(p);
        next.back().push_back(v);
      }
    }
    points = std::move(next);
  }
  return points;
}

std::string strategy_summary(const Scenario& s) {
  const ParallelismConfig& p = s.parallelism;
  std::string out =
      "TP" + std::to_string(p.tp) + " PP" + std::to_string(p.pp) + " DP" + std::to_string(p.dp);
  if (p.cp > 1) out += " CP" + std::to_string(p.cp);
  if (p.ep > 1) out += " EP" + std::to_string(p.ep);
  if (p.vpp > 1) out += " VPP" + std::to_string(p.vpp);
  out += " mb" + std::to_string(s.training.micro_batch);
  if (p.recompute != Recompute::kNone) out += std::string(" recompute=") + to_string(p.recompute);
  if (p.sequence_parallel) out += " SP";
  if (p.distributed_optimizer) out += " DistOpt";
  if (p.zero_stage > 0) out += " ZeRO" + std::to_string(p.zero_stage);
  const bool implied = p.schedule == (p.vpp > 1 ? Schedule::kInterleaved : Schedule::kOneFOneB);
  if (!implied) out += std::string(" ") + to_string(p.schedule);
  return out;
}

namespace {

// Finds the strategy (when asked) and simulates one loaded point.
void evaluate(const SweepOptions& options, SweepPoint* point) {
  if (options.find_strategy) {
    StatusOr<Scenario> best = options.find_strategy(point->scenario);
    if (!best.ok()) {
      point->status = best.status();
      return;
    }
    point->scenario = *std::move(best);
  }
  StatusOr<SimulationReport> r = simulate(point->scenario);
  if (!r.ok()) {
    point->status = r.status();
    return;
  }
  point->iteration_time_s = r->iteration_time_s;
  point->tokens_per_s = r->tokens_per_s;
  point->mfu = r->mfu;
  point->tflops_per_gpu = r->tflops_per_gpu;
  const MemoryReport& m = r->memory;
  if (!m.stages.empty()) point->peak_bytes = m.stages[m.limiting_stage].peak.count();
  point->hbm_bytes = point->scenario.cluster.gpu.hbm_capacity.count();
  point->fits = m.fits;
}

}  // namespace

StatusOr<SweepResult> run_sweep(const std::string& scenario_path,
                                const std::vector<std::string>& overrides,
                                const std::vector<SweepAxis>& axes, const SweepOptions& options) {
  if (options.jobs < 1) {
    return invalid_argument("sweep: jobs = " + std::to_string(options.jobs) +
                            ": expected at least 1");
  }
  std::set<std::string> keys;
  for (const SweepAxis& axis : axes) {
    if (!keys.insert(axis.key).second) {
      return invalid_argument("--vary " + axis.key + ": the key is varied twice");
    }
  }
  SweepResult result;
  result.axes = axes;
  result.searched = static_cast<bool>(options.find_strategy);
  const std::vector<std::vector<int>> points = sweep_points(axes);
  result.points.resize(points.size());

  // Load every point here (cheap), so that a bad key or value is reported before any work.
  // loaded[a][v]: some point holding value v of axis a loaded.
  std::vector<std::vector<bool>> loaded(axes.size());
  std::vector<std::vector<Status>> first_error(axes.size());
  for (size_t a = 0; a < axes.size(); ++a) {
    loaded[a].assign(axes[a].values.size(), false);
    first_error[a].resize(axes[a].values.size());
  }
  for (size_t i = 0; i < points.size(); ++i) {
    SweepPoint& point = result.points[i];
    std::vector<std::string> assignments = overrides;
    for (size_t a = 0; a < axes.size(); ++a) {
      point.values.push_back(axes[a].values[points[i][a]]);
      assignments.push_back(axes[a].key + "=" + point.values.back());
    }
    StatusOr<Scenario> s = load_scenario(scenario_path, assignments);
    for (size_t a = 0; a < axes.size(); ++a) {
      const int v = points[i][a];
      if (s.ok()) {
        loaded[a][v] = true;
      } else if (first_error[a][v].ok()) {
        first_error[a][v] = s.status();
      }
    }
    if (s.ok()) {
      point.scenario = *std::move(s);
      // The points already run side by side: a packet network's partitions take one thread.
      if (options.jobs > 1) point.scenario.simulation.packet.threads = 1;
    } else {
      point.status = s.status();
      if (axes.empty()) return s.status();  // the scenario itself does not load
    }
  }
  for (size_t a = 0; a < axes.size(); ++a) {
    for (size_t v = 0; v < axes[a].values.size(); ++v) {
      if (loaded[a][v]) continue;
      return Status(first_error[a][v].code(), "--vary " + axes[a].key + "=" + axes[a].values[v] +
                                                  ": " + first_error[a][v].message());
    }
  }

  std::atomic<size_t> next{0};
  auto worker = [&]() {
    for (size_t i = next++; i < result.points.size(); i = next++) {
      if (result.points[i].status.ok()) evaluate(options, &result.points[i]);
    }
  };
  std::vector<std::thread> threads;
  const int n = std::min<int>(options.jobs, static_cast<int>(result.points.size()));
  for (int t = 1; t < n; ++t) threads.emplace_back(worker);
  worker();
  for (std::thread& t : threads) t.join();

  const SweepPoint& first = result.points[0];
  for (SweepPoint& p : result.points) {
    p.speedup = first.status.ok() && p.status.ok() && p.iteration_time_s > 0
                    ? first.iteration_time_s / p.iteration_time_s
                    : NAN;
  }
  return result;
}

}  // namespace preflight
