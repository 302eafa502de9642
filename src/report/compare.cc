#include "report/compare.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <tuple>

#include "report/report.h"
#include "sweep/sweep.h"

namespace preflight {
namespace {

using nlohmann::json;

std::string fmt(const char* format, double x) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), format, x);
  return buf;
}

// 382114.6 -> "382,115"; with `sign`, "+382,115" (and "-382,115", but "0").
std::string thousands(double x, bool sign = false) {
  if (sign && x == 0) return "0";
  const std::string digits = fmt(sign ? "%+.0f" : "%.0f", x);
  const size_t lead = digits[0] == '-' || digits[0] == '+' ? 1 : 0;
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > lead && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string pad_left(const std::string& s, size_t width) {
  return s.size() >= width ? s : std::string(width - s.size(), ' ') + s;
}

std::string pad_right(const std::string& s, size_t width) {
  return s.size() >= width ? s : s + std::string(width - s.size(), ' ');
}

constexpr double kGiB = 1024.0 * 1024 * 1024;

int64_t peak_bytes(const MemoryReport& m) {
  return m.stages.empty() ? 0 : m.stages[m.limiting_stage].peak.count();
}

const Breakdown& critical_breakdown(const SimulationReport& r) {
  return r.execution.stages[r.execution.critical_stage].breakdown;
}

// How a row's values and its delta read in the table.
struct RowFormat {
  std::string (*value)(double);
  std::string (*delta)(double);
};

RowFormat row_format(const std::string& key) {
  if (key == "gpus") {
    return {[](double x) { return thousands(x); }, [](double x) { return thousands(x, true); }};
  }
  if (key == "tokens_per_s") {
    return {[](double x) { return thousands(x); }, [](double x) { return thousands(x, true); }};
  }
  if (key == "mfu") {
    return {[](double x) { return fmt("%.1f %%", x * 100); },
            [](double x) { return fmt("%+.1f pp", x * 100); }};
  }
  if (key == "tflops_per_gpu") {
    return {[](double x) { return fmt("%.1f", x); }, [](double x) { return fmt("%+.1f", x); }};
  }
  if (key == "peak_memory_bytes") {
    return {[](double x) { return fmt("%.1f GiB", x / kGiB); },
            [](double x) { return fmt("%+.1f GiB", x / kGiB); }};
  }
  return {[](double x) { return fmt("%.3f s", x); }, [](double x) { return fmt("%+.3f s", x); }};
}

// "GPT-3 175B on 1,024 x A100-SXM4-80GB (dgx-a100)".
std::string job_line(const SimulationReport& r) {
  const Scenario& s = r.scenario;
  return s.model.name + " on " + thousands(s.cluster.total_gpus()) + " x " + s.cluster.gpu.name +
         " (" + s.cluster.name + ")";
}

}  // namespace

double ComparisonRow::ratio() const {
  if (a == 0) return b == 0 ? 1.0 : NAN;
  return b / a;
}

std::vector<ComparisonRow> compare_reports(const SimulationReport& a, const SimulationReport& b) {
  const Breakdown& x = critical_breakdown(a);
  const Breakdown& y = critical_breakdown(b);
  std::vector<ComparisonRow> rows = {
      {"gpus", "GPUs", static_cast<double>(a.scenario.cluster.total_gpus()),
       static_cast<double>(b.scenario.cluster.total_gpus())},
      {"iteration_time_s", "iteration time", a.iteration_time_s, b.iteration_time_s},
      {"tokens_per_s", "tokens/s", a.tokens_per_s, b.tokens_per_s},
      {"mfu", "MFU", a.mfu, b.mfu},
      {"tflops_per_gpu", "TFLOP/s per GPU", a.tflops_per_gpu, b.tflops_per_gpu}};
  const std::vector<std::pair<const char*, SimTime Breakdown::*>> categories = {
      {"compute", &Breakdown::compute}, {"host_overhead", &Breakdown::host_overhead},
      {"tp_comm", &Breakdown::tp_comm}, {"pp_comm", &Breakdown::pp_comm},
      {"dp_comm", &Breakdown::dp_comm}, {"ep_comm", &Breakdown::ep_comm},
      {"cp_comm", &Breakdown::cp_comm}, {"optimizer", &Breakdown::optimizer},
      {"offload", &Breakdown::offload}, {"bubble", &Breakdown::bubble}};
  const std::vector<const char*> labels = {
      "  compute",         "  host/launch overhead", "  exposed TP comm", "  exposed PP comm",
      "  exposed DP comm", "  exposed EP comm",      "  exposed CP comm", "  optimizer",
      "  exposed offload", "  pipeline bubble"};
  for (size_t i = 0; i < categories.size(); ++i) {
    const auto& [name, member] = categories[i];
    rows.push_back({std::string("breakdown.") + name + "_s", labels[i], (x.*member).to_seconds(),
                    (y.*member).to_seconds()});
  }
  rows.push_back({"peak_memory_bytes", "peak memory per GPU",
                  static_cast<double>(peak_bytes(a.memory)),
                  static_cast<double>(peak_bytes(b.memory))});
  return rows;
}

std::string format_comparison(const SimulationReport& a, const SimulationReport& b,
                              const std::string& name_a, const std::string& name_b) {
  std::string out;
  for (const auto& [side, r, name] : {std::tuple{"A", &a, &name_a}, std::tuple{"B", &b, &name_b}}) {
    out += std::string(side) + "  " + *name + "\n";
    out += "   " + job_line(*r) + "\n";
    out += "   " + strategy_summary(r->scenario) + "\n";
  }
  out += "\n";
  // Every cell as text first, so the columns can be sized.
  std::vector<std::vector<std::string>> cells = {{"", "A", "B", "B-A", "B/A"}};
  const bool ep = a.scenario.parallelism.ep > 1 || b.scenario.parallelism.ep > 1;
  const bool cp = a.scenario.parallelism.cp > 1 || b.scenario.parallelism.cp > 1;
  const bool offload =
      a.scenario.parallelism.offload_layers > 0 || b.scenario.parallelism.offload_layers > 0;
  for (const ComparisonRow& row : compare_reports(a, b)) {
    const bool zero = row.a == 0 && row.b == 0;
    if (row.key == "breakdown.ep_comm_s" && !ep && zero) continue;
    if (row.key == "breakdown.cp_comm_s" && !cp && zero) continue;
    if (row.key == "breakdown.offload_s" && !offload && zero) continue;
    if (row.key == "breakdown.compute_s") {
      cells.push_back({"where the time goes", "stage " + std::to_string(a.execution.critical_stage),
                       "stage " + std::to_string(b.execution.critical_stage), "", ""});
    }
    const RowFormat f = row_format(row.key);
    const double ratio = row.ratio();
    cells.push_back({row.label, f.value(row.a), f.value(row.b), f.delta(row.delta()),
                     std::isfinite(ratio) ? fmt("%.3fx", ratio) : "-"});
  }
  auto fits = [](const SimulationReport& r) {
    return r.memory.stages.empty() ? "-" : r.memory.fits ? "yes" : "DOES NOT FIT";
  };
  cells.push_back({"fits in memory", fits(a), fits(b), "", ""});
  std::vector<size_t> width(cells[0].size(), 0);
  for (const auto& row : cells) {
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  }
  for (const auto& row : cells) {
    std::string text = pad_right(row[0], width[0]);
    for (size_t c = 1; c < row.size(); ++c) text += "  " + pad_left(row[c], width[c]);
    while (!text.empty() && text.back() == ' ') text.pop_back();
    out += text + "\n";
  }
  return out;
}

json comparison_to_json(const SimulationReport& a, const SimulationReport& b) {
  json delta = json::object();
  json ratio = json::object();
  for (const ComparisonRow& row : compare_reports(a, b)) {
    const double r = row.ratio();
    const json q = std::isfinite(r) ? json(r) : json(nullptr);
    if (row.key.rfind("breakdown.", 0) == 0) {
      const std::string k = row.key.substr(10);
      delta["breakdown"][k] = row.delta();
      ratio["breakdown"][k] = q;
    } else if (row.key == "gpus" || row.key == "peak_memory_bytes") {
      delta[row.key] = static_cast<int64_t>(row.delta());  // counts stay integers
      ratio[row.key] = q;
    } else {
      delta[row.key] = row.delta();
      ratio[row.key] = q;
    }
  }
  return json{
      {"a", report_to_json(a)}, {"b", report_to_json(b)}, {"delta", delta}, {"ratio", ratio}};
}

}  // namespace preflight
