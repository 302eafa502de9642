#include "report/sweep_report.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
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

// "64", "-2", "1.5", "1e9": the whole text is a finite number.
bool is_number(const std::string& s) {
  if (s.empty() || std::isspace(static_cast<unsigned char>(s[0]))) return false;
  char* end = nullptr;
  const double x = std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size() && std::isfinite(x) && s.find_first_of("xXnN") == s.npos;
}

// The value as JSON: an integer, another number, or the text itself.
nlohmann::ordered_json axis_value(const std::string& s, bool numeric) {
  if (!numeric) return s;
  if (s.find_first_of(".eE") == std::string::npos) {
    errno = 0;
    const long long v = std::strtoll(s.c_str(), nullptr, 10);
    if (errno == 0) return static_cast<int64_t>(v);
  }
  return std::strtod(s.c_str(), nullptr);
}

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

nlohmann::ordered_json sweep_to_json(const SweepResult& r) {
  using json = nlohmann::ordered_json;
  std::vector<bool> numeric;
  for (const SweepAxis& a : r.axes) {
    numeric.push_back(std::all_of(a.values.begin(), a.values.end(), is_number));
  }
  json rows = json::array();
  for (const SweepPoint& p : r.points) {
    json row = json::object();
    for (size_t k = 0; k < r.axes.size() && k < p.values.size(); ++k) {
      row[r.axes[k].key] = axis_value(p.values[k], numeric[k]);
    }
    const bool ok = p.status.ok();
    const ParallelismConfig& q = p.scenario.parallelism;
    auto number = [ok](double x) { return ok && std::isfinite(x) ? json(x) : json(nullptr); };
    auto integer = [ok](int64_t x) { return ok ? json(x) : json(nullptr); };
    row["tp"] = integer(q.tp);
    row["pp"] = integer(q.pp);
    row["dp"] = integer(q.dp);
    row["cp"] = integer(q.cp);
    row["ep"] = integer(q.ep);
    row["vpp"] = integer(q.vpp);
    row["micro_batch"] = integer(p.scenario.training.micro_batch);
    row["recompute"] = ok ? json(to_string(q.recompute)) : json(nullptr);
    row["schedule"] = ok ? json(to_string(q.schedule)) : json(nullptr);
    row["iteration_time_s"] = number(p.iteration_time_s);
    row["tokens_per_s"] = number(p.tokens_per_s);
    row["mfu"] = number(p.mfu);
    row["tflops_per_gpu"] = number(p.tflops_per_gpu);
    row["peak_memory_bytes"] = integer(p.peak_bytes);
    row["hbm_bytes"] = integer(p.hbm_bytes);
    row["fits"] = ok ? json(p.fits) : json(nullptr);
    row["speedup"] = number(p.speedup);
    row["error"] = ok ? json(nullptr) : json(p.status.message());
    rows.push_back(std::move(row));
  }
  return rows;
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
