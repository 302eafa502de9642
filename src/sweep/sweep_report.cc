#include "sweep/sweep_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

namespace preflight {
namespace {

std::string fmt(const char* format, double x) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), format, x);
  return buf;
}

// 382114.6 -> "382,115".
std::string thousands(double x) {
  std::string digits = fmt("%.0f", x);
  std::string out;
  const size_t sign = digits[0] == '-' ? 1 : 0;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > sign && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string pad(const std::string& s, size_t width, bool right = false) {
  if (s.size() >= width) return s;
  return right ? std::string(width - s.size(), ' ') + s : s + std::string(width - s.size(), ' ');
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

constexpr double kGiB = 1024.0 * 1024 * 1024;

}  // namespace

std::string format_sweep_table(const SweepResult& r) {
  // Every cell as text first, so the columns can be sized.
  std::vector<std::string> header;
  for (const SweepAxis& a : r.axes) header.push_back(a.key);
  const size_t keys = header.size();
  // The strategy has a column when it was searched or when it differs between points (a varied
  // parallelism key, or dp: auto over a varied GPU count).
  std::set<std::string> strategies;
  for (const SweepPoint& p : r.points) {
    if (p.status.ok()) strategies.insert(strategy_summary(p.scenario));
  }
  const bool strategy = r.searched || strategies.size() > 1;
  if (strategy) header.push_back(r.searched ? "best strategy" : "strategy");
  for (const char* h : {"iteration", "tokens/s", "MFU", "peak/HBM GiB", "fits", "speedup"}) {
    header.push_back(h);
  }
  std::vector<std::vector<std::string>> rows;
  for (const SweepPoint& p : r.points) {
    std::vector<std::string> row = p.values;
    if (!p.status.ok()) {
      row.push_back("error: " + p.status.message());
      rows.push_back(row);
      continue;
    }
    if (strategy) row.push_back(strategy_summary(p.scenario));
    row.push_back(fmt("%.3f s", p.iteration_time_s));
    row.push_back(thousands(p.tokens_per_s));
    row.push_back(fmt("%.1f %%", p.mfu * 100));
    row.push_back(fmt("%.1f", p.peak_bytes / kGiB) + "/" + fmt("%.0f", p.hbm_bytes / kGiB));
    row.push_back(p.fits ? "yes" : "NO");
    row.push_back(std::isfinite(p.speedup) ? fmt("%.2fx", p.speedup) : "-");
    rows.push_back(row);
  }
  std::vector<size_t> width(header.size());
  for (size_t c = 0; c < header.size(); ++c) width[c] = header[c].size();
  for (const auto& row : rows) {
    for (size_t c = 0; c < row.size() && c < header.size(); ++c) {
      // An error spans the figure columns: it does not widen them.
      if (row.size() == keys + 1 && c == keys) continue;
      width[c] = std::max(width[c], row[c].size());
    }
  }
  auto line = [&](const std::vector<std::string>& cells) {
    std::string out;
    for (size_t c = 0; c < cells.size(); ++c) {
      const bool last = c + 1 == cells.size();
      const bool number = c >= keys && !(strategy && c == keys);
      if (c > 0) out += "  ";
      out += last && !number ? cells[c] : pad(cells[c], width[c], number);
    }
    return out + "\n";
  };
  std::string out = line(header);
  for (const auto& row : rows) out += line(row);
  return out;
}

std::string sweep_to_csv(const SweepResult& r) {
  std::string out;
  for (const SweepAxis& a : r.axes) out += csv_field(a.key) + ",";
  out +=
      "tp,pp,dp,cp,ep,vpp,micro_batch,recompute,schedule,iteration_time_s,tokens_per_s,mfu,"
      "tflops_per_gpu,peak_memory_bytes,hbm_bytes,fits,speedup,error\n";
  for (const SweepPoint& p : r.points) {
    for (const std::string& v : p.values) out += csv_field(v) + ",";
    if (!p.status.ok()) {
      out += ",,,,,,,,,,,,,,,,," + csv_field(p.status.message()) + "\n";
      continue;
    }
    const ParallelismConfig& q = p.scenario.parallelism;
    for (int x : {q.tp, q.pp, q.dp, q.cp, q.ep, q.vpp, p.scenario.training.micro_batch}) {
      out += std::to_string(x) + ",";
    }
    out += std::string(to_string(q.recompute)) + "," + to_string(q.schedule) + ",";
    out += fmt("%.6f", p.iteration_time_s) + "," + fmt("%.1f", p.tokens_per_s) + "," +
           fmt("%.6f", p.mfu) + "," + fmt("%.3f", p.tflops_per_gpu) + "," +
           std::to_string(p.peak_bytes) + "," + std::to_string(p.hbm_bytes) + "," +
           (p.fits ? "true" : "false") + "," +
           (std::isfinite(p.speedup) ? fmt("%.6f", p.speedup) : std::string()) + ",\n";
  }
  return out;
}

StatusOr<SweepMetric> parse_sweep_metric(const std::string& name) {
  if (name == "iteration_time") return SweepMetric::kIterationTime;
  if (name == "tokens_per_s") return SweepMetric::kTokensPerSecond;
  if (name == "mfu") return SweepMetric::kMfu;
  return invalid_argument("--plot-metric " + name +
                          ": expected iteration_time, tokens_per_s or mfu");
}

BarChart sweep_chart(const SweepResult& r, SweepMetric metric, const std::string& title) {
  BarChart chart;
  chart.title = title;
  chart.y_label = metric == SweepMetric::kIterationTime     ? "iteration time (s)"
                  : metric == SweepMetric::kTokensPerSecond ? "tokens/s"
                                                            : "MFU (%)";
  auto value = [&](const SweepPoint& p) {
    if (!p.status.ok()) return static_cast<double>(NAN);
    return metric == SweepMetric::kIterationTime     ? p.iteration_time_s
           : metric == SweepMetric::kTokensPerSecond ? p.tokens_per_s
                                                     : p.mfu * 100;
  };
  if (r.axes.empty()) {
    chart.categories = {"scenario"};
    chart.series = {{"", {r.points.empty() ? NAN : value(r.points[0])}}};
    return chart;
  }
  // Points are row-major with the last axis fastest: consecutive runs of `n` points share every
  // other key.
  const SweepAxis& last = r.axes.back();
  const size_t n = last.values.size();
  for (size_t a = 0; a + 1 < r.axes.size(); ++a) {
    chart.x_label += (a > 0 ? " / " : "") + r.axes[a].key;
  }
  if (r.axes.size() == 1) {
    chart.x_label = last.key;
    chart.series = {{"", {}}};
    for (const SweepPoint& p : r.points) {
      chart.categories.push_back(p.values[0]);
      chart.series[0].values.push_back(value(p));
    }
    return chart;
  }
  chart.legend_title = last.key;
  for (const std::string& v : last.values) chart.series.push_back({v, {}});
  for (size_t i = 0; i < r.points.size(); i += n) {
    std::string category;
    for (size_t a = 0; a + 1 < r.axes.size(); ++a) {
      category += (a > 0 ? " / " : "") + r.points[i].values[a];
    }
    chart.categories.push_back(category);
    for (size_t k = 0; k < n; ++k) chart.series[k].values.push_back(value(r.points[i + k]));
  }
  return chart;
}

}  // namespace preflight
