#include "report/sweep_html.h"

#include <cmath>
#include <cstdint>
#include <vector>

#include "report/html_page.h"
#include "report/scatter_chart.h"
#include "report/search_report.h"
#include "report/sweep_report.h"
#include "search/cost.h"

namespace preflight {

namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;

// Every simulated point has a price: the scatter's x is then dollars per hour, else GPUs.
bool priced(const SweepResult& r) {
  bool any = false;
  for (const SweepPoint& p : r.points) {
    if (!p.status.ok()) continue;
    if (p.scenario.cluster.gpu_hour_price <= 0) return false;
    any = true;
  }
  return any;
}

// The simulated point with the most tokens/s (the first on ties); -1 when none simulated.
int fastest(const SweepResult& r) {
  int best = -1;
  for (size_t i = 0; i < r.points.size(); ++i) {
    const SweepPoint& p = r.points[i];
    if (p.status.ok() && (best < 0 || p.tokens_per_s > r.points[best].tokens_per_s)) {
      best = static_cast<int>(i);
    }
  }
  return best;
}

// "cluster.gpu=H20, cluster.nic_bandwidth=100Gbps".
std::string assignments(const SweepResult& r, const SweepPoint& p) {
  std::string out;
  for (size_t a = 0; a < r.axes.size() && a < p.values.size(); ++a) {
    out += (a > 0 ? ", " : "") + r.axes[a].key + "=" + p.values[a];
  }
  return out.empty() ? "scenario" : out;
}

std::string header(const SweepResult& r, int best) {
  std::string out = "<dl>\n";
  if (best >= 0) {
    const Scenario& s = r.points[best].scenario;
    out += html::item("model", s.model.name);
    out += html::item("training", "global batch " + with_commas(s.training.global_batch) + " x " +
                                      with_commas(s.training.seq_len) + " tokens");
  }
  for (const SweepAxis& a : r.axes) {
    std::string values;
    for (size_t i = 0; i < a.values.size(); ++i) values += (i > 0 ? ", " : "") + a.values[i];
    out += html::item("varied: " + a.key, values);
  }
  int failed = 0;
  for (const SweepPoint& p : r.points) failed += p.status.ok() ? 0 : 1;
  out += html::item("points",
                    std::to_string(r.points.size()) + " (" + std::to_string(failed) + " failed)");
  out += html::item("strategy", r.searched ? "each point's best, re-searched (--search)"
                                           : "the scenario's, at every point");
  return out + "</dl>\n";
}

// The CSV's columns (sweep_report.h), in the terminal table's units.
std::string points_table(const SweepResult& r, int best, bool cost) {
  std::vector<std::string> names;
  for (const SweepAxis& a : r.axes) names.push_back(a.key);
  for (const char* n :
       {"tp", "pp", "dp", "cp", "ep", "vpp", "mb", "recompute", "schedule", "iteration (s)",
        "tokens/s", "MFU", "TFLOP/s/GPU", "peak / HBM GiB", "fits", "speedup"}) {
    names.push_back(n);
  }
  if (cost) {
    names.push_back("$/hour");
    names.push_back("$/Mtok");
  }
  const size_t figures = names.size() - r.axes.size();
  std::string out = "<table class=\"ranked\" id=\"points\">\n" + html::header_row(names);
  for (size_t i = 0; i < r.points.size(); ++i) {
    const SweepPoint& p = r.points[i];
    out += static_cast<int>(i) == best ? "<tr class=\"cand best\">" : "<tr class=\"cand\">";
    for (const std::string& v : p.values) out += html::td(v, true);
    if (!p.status.ok()) {
      out += "<td class=\"error\" colspan=\"" + std::to_string(figures) +
             "\">error: " + html::esc(p.status.message()) + "</td></tr>\n";
      continue;
    }
    const Scenario& s = p.scenario;
    const ParallelismConfig& q = s.parallelism;
    for (int v : {q.tp, q.pp, q.dp, q.cp, q.ep, q.vpp, s.training.micro_batch}) {
      out += html::td(std::to_string(v));
    }
    out += html::td(to_string(q.recompute), true) + html::td(to_string(q.schedule), true) +
           html::td(html::fmt("%.3f", p.iteration_time_s)) +
           html::td(with_commas(static_cast<int64_t>(p.tokens_per_s + 0.5))) +
           html::td(html::fmt("%.1f %%", p.mfu * 100)) +
           html::td(html::fmt("%.1f", p.tflops_per_gpu)) +
           html::td(html::fmt("%.1f", p.peak_bytes / kGiB) + " / " +
                    html::fmt("%.0f", p.hbm_bytes / kGiB)) +
           html::td(p.fits ? "yes" : "NO") +
           html::td(std::isfinite(p.speedup) ? html::fmt("%.2fx", p.speedup) : "-");
    if (cost) {
      const int gpus = s.cluster.total_gpus();
      const IterationCost c = iteration_cost(gpus, s.cluster.gpu_hour_price, p.iteration_time_s,
                                             int64_t{s.training.global_batch} * s.training.seq_len);
      out += html::td(html::fmt("%.2f", gpus * s.cluster.gpu_hour_price)) +
             html::td(html::fmt(c.usd_per_million_tokens < 1 ? "%.3f" : "%.2f",
                                c.usd_per_million_tokens));
    }
    out += "</tr>\n";
  }
  return out + "</table>\n";
}

// render_bar_chart_svg writes a standalone document: inline, its XML declaration goes.
std::string inline_svg(const std::string& svg) {
  if (svg.rfind("<?xml", 0) != 0) return svg;
  return svg.substr(svg.find('\n') + 1);
}

std::string scatter(const SweepResult& r, int best, bool cost) {
  ScatterChart c;
  c.id = "scatter";
  c.x_label = cost ? "cluster cost ($/hour)" : "GPUs";
  c.y_label = "tokens/s";
  c.points_label = "sweep point";
  for (const SweepPoint& p : r.points) {
    if (!p.status.ok()) {
      c.points.push_back({NAN, NAN, assignments(r, p)});
      continue;
    }
    const ClusterConfig& k = p.scenario.cluster;
    const double x = k.total_gpus() * (cost ? k.gpu_hour_price : 1.0);
    c.points.push_back(
        {x, p.tokens_per_s, assignments(r, p) + ": " + strategy_summary(p.scenario)});
  }
  c.best = best;
  c.best_label = "most tokens/s";
  bool one_x = true;
  for (const ScatterPoint& p : c.points) {
    one_x = one_x && (std::isnan(p.x) || p.x == c.points[best].x);
  }
  return std::string("<p class=\"note\">Each simulated point: tokens/s against ") +
         (cost ? "the cluster's price per hour (GPUs x gpu_hour_price)"
               : "the GPU count (some point has no gpu_hour_price)") +
         ". The Pareto front joins the points no other beats on both (more tokens/s for "
         "less); the ring marks the most tokens/s." +
         (!one_x ? ""
          : cost ? " Every point costs the same per hour: the chart ranks them by tokens/s alone."
                 : " Every point has the same GPU count: the chart ranks them by tokens/s alone.") +
         "</p>\n" + render_scatter_svg(c);
}

}  // namespace

std::string sweep_to_html(const SweepResult& r, const std::string& title) {
  const int best = fastest(r);
  const bool cost = priced(r);
  std::string out =
      html::page_open("Preflight sweep: " + title, "Preflight sweep: " + title) + header(r, best);
  if (best < 0) {
    out +=
        "<p class=\"note\" id=\"empty\">No point simulated: every one failed, so there is "
        "nothing to chart.</p>\n";
  }
  out += "<h2>Points</h2>\n" + points_table(r, best, cost);
  if (best < 0) return out + html::page_close();
  const struct {
    SweepMetric metric;
    const char* id;
    const char* heading;
  } charts[] = {{SweepMetric::kIterationTime, "chart-iteration_time", "Iteration time"},
                {SweepMetric::kTokensPerSecond, "chart-tokens_per_s", "Tokens/s"},
                {SweepMetric::kMfu, "chart-mfu", "MFU"}};
  for (const auto& chart : charts) {
    out += std::string("<h2>") + chart.heading + "</h2>\n<div class=\"chart\" id=\"" + chart.id +
           "\">\n" + inline_svg(render_bar_chart_svg(sweep_chart(r, chart.metric, title))) +
           "</div>\n";
  }
  out += std::string("<h2>Throughput against ") + (cost ? "cost" : "GPUs") + "</h2>\n" +
         scatter(r, best, cost);
  return out + html::page_close();
}

}  // namespace preflight
