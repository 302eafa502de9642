#include "validation/published_validate.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <map>
#include <thread>

#include "simulate/simulate.h"
#include "validation/stats.h"

namespace preflight {
namespace {

double median(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

GroupError group_error(const std::string& by, const std::string& group,
                       const std::vector<const PublishedPrediction*>& list) {
  GroupError g;
  g.by = by;
  g.group = group;
  std::vector<double> pred, meas, signed_err;
  int within = 0;
  for (const PublishedPrediction* p : list) {
    const double predicted = std::isfinite(p->predicted_ms) ? p->predicted_ms : 0;
    pred.push_back(predicted);
    meas.push_back(p->run.measured_ms);
    signed_err.push_back((predicted - p->run.measured_ms) / p->run.measured_ms * 100);
    within += std::fabs(signed_err.back()) <= 10;
  }
  g.rows = static_cast<int>(list.size());
  if (g.rows == 0) return g;
  g.mape_pct = mean_absolute_percentage_error(pred, meas);
  g.mdape_pct = median_absolute_percentage_error(pred, meas);
  g.p90_pct = percentile_absolute_percentage_error(pred, meas, 0.9);
  g.bias_pct = mean_signed_percentage_error(pred, meas);
  g.median_bias_pct = median(signed_err);
  g.within10_pct = 100.0 * within / g.rows;
  return g;
}

}  // namespace

std::vector<GroupError> published_group_errors(const std::vector<PublishedPrediction>& rows) {
  std::vector<const PublishedPrediction*> all;
  for (const PublishedPrediction& p : rows) {
    if (p.simulated) all.push_back(&p);
  }
  std::vector<GroupError> out;
  out.push_back(group_error("all", "all", all));
  const std::pair<const char*, std::string PublishedCase::*> dims[] = {
      {"gpu", &PublishedCase::gpu},
      {"kind", &PublishedCase::kind},
      {"precision", &PublishedCase::precision},
      {"family", &PublishedCase::family},
      {"stack", &PublishedCase::stack}};
  for (const auto& [by, field] : dims) {
    std::map<std::string, std::vector<const PublishedPrediction*>> groups;
    for (const PublishedPrediction* p : all) groups[p->run.*field].push_back(p);
    for (const auto& [name, list] : groups) out.push_back(group_error(by, name, list));
  }
  std::map<std::string, std::vector<const PublishedPrediction*>> sources;
  for (const PublishedPrediction* p : all) sources[p->row.source].push_back(p);
  for (const auto& [name, list] : sources) out.push_back(group_error("source", name, list));
  return out;
}

StatusOr<PublishedValidationResult> run_published_validation(const std::vector<PublishedRow>& rows,
                                                             const ValidationOptions& options) {
  if (rows.empty()) return invalid_argument("validate: the dataset has no rows");
  PublishedValidationResult result;
  result.total = static_cast<int>(rows.size());
  result.rows.resize(rows.size());
  // Rows of one run share a scenario: simulate each distinct scenario once.
  std::map<std::string, size_t> unique_index;
  std::vector<const Scenario*> unique;
  std::vector<size_t> row_unique(rows.size(), SIZE_MAX);
  for (size_t i = 0; i < rows.size(); ++i) {
    PublishedPrediction& p = result.rows[i];
    p.row = rows[i];
    StatusOr<PublishedCase> c = published_case(rows[i]);
    if (!c.ok()) {
      p.reason = c.status().message();
      continue;
    }
    p.simulated = true;
    p.run = *std::move(c);
    ++result.simulated;
    auto [it, fresh] = unique_index.emplace(p.run.yaml, unique.size());
    if (fresh) unique.push_back(&p.run.scenario);
    row_unique[i] = it->second;
  }
  std::vector<double> predicted(unique.size(), NAN);
  std::atomic<size_t> next{0};
  auto worker = [&]() {
    for (size_t i = next++; i < unique.size(); i = next++) {
      StatusOr<SimulationReport> r = simulate(*unique[i]);
      predicted[i] = r.ok() ? r->iteration_time_s * 1e3 : NAN;
    }
  };
  std::vector<std::thread> threads;
  for (int t = 1; t < std::max(1, options.jobs); ++t) threads.emplace_back(worker);
  worker();
  for (std::thread& t : threads) t.join();
  for (size_t i = 0; i < rows.size(); ++i) {
    if (row_unique[i] != SIZE_MAX) result.rows[i].predicted_ms = predicted[row_unique[i]];
  }
  result.groups = published_group_errors(result.rows);
  return result;
}

}  // namespace preflight
