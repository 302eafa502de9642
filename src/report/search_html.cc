#include "report/search_html.h"

#include <algorithm>
#include <cstdint>
#include <utility>

#include "report/html_page.h"
#include "report/scatter_chart.h"
#include "report/search_report.h"

namespace preflight {

namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;

std::string header(const Scenario& base, const SearchResult& r, const SearchHtmlOptions& o) {
  std::string out = "<dl>\n";
  out += html::item("model", base.model.name);
  out += html::item("cluster", with_commas(r.gpus) + " x " + base.cluster.gpu.name + " (" +
                                   std::to_string(base.cluster.nodes) +
                                   (base.cluster.nodes == 1 ? " node, " : " nodes, ") +
                                   base.cluster.name + ")");
  out += html::item("training", "global batch " + with_commas(base.training.global_batch) + " x " +
                                    with_commas(base.training.seq_len) + " tokens");
  out += html::item("objective", o.objective);
  std::string space = "the defaults for this scenario";
  for (size_t i = 0; i < o.space.size(); ++i) space += (i == 0 ? ", with " : "; ") + o.space[i];
  out += html::item("space", space);
  std::string searched = with_commas(r.combinations) + " combinations, " +
                         with_commas(r.candidates) + " valid, " + with_commas(r.evaluated) +
                         " fit in memory and were simulated on the analytical network";
  if (r.reevaluated > 0) {
    searched += "; the best " + std::to_string(r.reevaluated) + " again on the " + r.final_network +
                " network";
  }
  out += html::item("searched", searched);
  out += html::item("price", base.cluster.gpu_hour_price > 0
                                 ? html::fmt("$%.2f per GPU-hour", base.cluster.gpu_hour_price)
                                 : "none (no cost columns)");
  return out + "</dl>\n";
}

// Rejected combinations by reason, the most common first.
std::string rejections(const SearchResult& r) {
  if (r.rejected.empty()) return "<p class=\"note\">Nothing was rejected.</p>\n";
  std::vector<std::pair<std::string, int64_t>> reasons(r.rejected.begin(), r.rejected.end());
  std::stable_sort(reasons.begin(), reasons.end(),
                   [](const auto& x, const auto& y) { return x.second > y.second; });
  std::string out = "<table id=\"rejected\">\n" + html::header_row({"reason", "combinations"});
  for (const auto& [reason, count] : reasons) {
    out += "<tr>" + html::td(reason, true) + html::td(with_commas(count)) + "</tr>\n";
  }
  return out + "</table>\n";
}

// The terminal table's columns (search_report.h), with HBM beside the peak and the network
// when some rows were simulated again on another one.
std::string ranked_table(const Scenario& base, const SearchResult& r, int top) {
  const bool network = r.reevaluated > 0;
  const bool priced = !r.results.empty() && r.results.front().cost.usd > 0;
  std::vector<std::string> names = {"rank", "tp", "pp",        "dp", "cp",        "ep",
                                    "vpp",  "mb", "recompute", "sp", "optimizer", "schedule"};
  if (network) names.push_back("network");
  for (const char* n : {"iteration (s)", "tokens/s", "MFU", "peak / HBM GiB"}) names.push_back(n);
  if (priced) {
    names.push_back("$/iteration");
    names.push_back("$/Mtok");
  }
  const std::string hbm = html::fmt("%.0f", base.cluster.gpu.hbm_capacity.to_gib());
  std::string out = "<table class=\"ranked\" id=\"ranked\">\n" + html::header_row(names);
  const size_t n = std::min(r.results.size(), static_cast<size_t>(std::max(top, 0)));
  for (size_t i = 0; i < n; ++i) {
    const StrategyResult& x = r.results[i];
    const Strategy& s = x.strategy;
    out += i == 0 ? "<tr class=\"cand best\">" : "<tr class=\"cand\">";
    for (int v : {static_cast<int>(i + 1), s.tp, s.pp, s.dp, s.cp, s.ep, s.vpp, s.micro_batch}) {
      out += html::td(std::to_string(v));
    }
    out += html::td(to_string(s.recompute), true) +
           html::td(s.sequence_parallel ? "on" : "off", true) + html::td(optimizer_label(s), true) +
           html::td(to_string(s.schedule), true);
    if (network) out += html::td(x.network, true);
    out += html::td(html::fmt("%.3f", x.iteration_time_s)) +
           html::td(with_commas(static_cast<int64_t>(x.tokens_per_s + 0.5))) +
           html::td(html::fmt("%.1f %%", x.mfu * 100)) +
           html::td(html::fmt("%.1f", static_cast<double>(x.peak_bytes) / kGiB) + " / " + hbm);
    if (priced) {
      const double mtok = x.cost.usd_per_million_tokens;
      out += html::td(html::fmt(x.cost.usd < 1 ? "%.4f" : "%.2f", x.cost.usd)) +
             html::td(html::fmt(mtok < 1 ? "%.3f" : "%.2f", mtok));
    }
    out += "</tr>\n";
  }
  out += "</table>\n";
  if (r.results.size() > n) {
    out += "<p class=\"note\">The best " + std::to_string(n) + " of " +
           with_commas(static_cast<int64_t>(r.results.size())) +
           " simulated candidates (--top); the chart shows all of them, --csv writes every "
           "one.</p>\n";
  }
  return out;
}

std::string scatter(const Scenario& base, const SearchResult& r) {
  ScatterChart c;
  c.id = "scatter";
  c.x_label = "memory per GPU (GiB)";
  c.y_label = "tokens/s";
  for (size_t i = 0; i < r.results.size(); ++i) {
    const StrategyResult& x = r.results[i];
    c.points.push_back({static_cast<double>(x.peak_bytes) / kGiB, x.tokens_per_s,
                        "rank " + std::to_string(i + 1) + ": " + strategy_label(x.strategy)});
  }
  c.best = 0;
  c.best_label = "rank 1";
  c.x_limit = base.cluster.gpu.hbm_capacity.to_gib();
  c.limit_label = "HBM " + html::fmt("%.0f", c.x_limit) + " GiB";
  return "<p class=\"note\">Every simulated candidate: the peak memory per GPU of its limiting "
         "pipeline stage against tokens/s. The Pareto front joins those no other candidate "
         "beats on both (more tokens/s for less memory); the ring marks rank 1.</p>\n" +
         render_scatter_svg(c);
}

}  // namespace

std::string search_to_html(const Scenario& base, const SearchResult& r,
                           const SearchHtmlOptions& options) {
  const std::string title = "Preflight search: " + base.model.name + " on " + with_commas(r.gpus) +
                            " x " + base.cluster.gpu.name;
  std::string out = html::page_open(title, title) + header(base, r, options);
  if (r.results.empty()) {
    out += "<p class=\"note\" id=\"empty\">No feasible candidate: none of the " +
           with_commas(r.candidates) +
           " valid strategies fits in memory and simulates, so there is nothing to rank or "
           "chart.</p>\n";
  }
  out += "<h2>Rejected combinations</h2>\n" + rejections(r);
  if (!r.results.empty()) {
    out += "<h2>Ranked strategies</h2>\n" + ranked_table(base, r, options.top);
    out += "<h2>Throughput against memory per GPU</h2>\n" + scatter(base, r);
  }
  return out + html::page_close();
}

}  // namespace preflight
