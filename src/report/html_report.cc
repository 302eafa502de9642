#include "report/html_report.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <vector>

#include "report/html_charts.h"
#include "report/html_page.h"
#include "report/search_report.h"

namespace preflight {

namespace {

// Timeline spans drawn exactly per (stage, stream) lane; a lane with more is drawn as columns of
// kBucketPx pixels, each column stacking the share of its time every category takes, so every
// stage is drawn and a thin exposed communication shows as a thin band.
constexpr size_t kLaneSpans = 400;
constexpr double kBucketPx = 2.0;

using html::esc;
using html::fmt;
using html::line;
using html::num;
using html::rect;
using html::svg_open;
using html::text;
using html::tick_step;

std::string legend(bool offload) {
  return html::category_legend(
      "<span><i style=\"background:#fff;border:1px solid #999\"></i>idle (bubble)</span>", offload);
}

// 1. Iteration timeline: a row per stage, a lane per stream, spans coloured by category.
std::string timeline(const SimulationReport& r) {
  const size_t stages = r.execution.stages.size();
  const double total = std::max(r.iteration_time_s, 1e-12);
  const int left = 90, plot_w = 1100, lane_h = 9, row_h = 3 * lane_h + 8, top = 10;
  const int width = left + plot_w + 20, height = top + static_cast<int>(stages) * row_h + 40;
  const double px = plot_w / total;  // pixels per second
  // Per (stage, stream) lane: merge spans of one category closer than a pixel.
  std::vector<std::vector<html::LaneSpan>> lanes(stages * 3);
  std::vector<const TraceInterval*> sorted;
  for (const TraceInterval& t : r.execution.trace) {
    if (t.stage >= 0 && static_cast<size_t>(t.stage) < stages) sorted.push_back(&t);
  }
  std::stable_sort(
      sorted.begin(), sorted.end(),
      [](const TraceInterval* a, const TraceInterval* b) { return a->start < b->start; });
  for (const TraceInterval* t : sorted) {
    const size_t lane =
        static_cast<size_t>(t->stage) * 3 + static_cast<size_t>(std::clamp(t->stream, 0, 2));
    html::add_to_lane(lanes[lane], *t, px);
  }
  // Per lane, the time each category takes in each column (for the lanes drawn as columns).
  const size_t columns = static_cast<size_t>(std::ceil(plot_w / kBucketPx));
  const size_t kinds = static_cast<size_t>(Category::kOffload) + 1;
  std::vector<std::vector<double>> busy(lanes.size());
  for (size_t lane = 0; lane < lanes.size(); ++lane) {
    if (lanes[lane].size() > kLaneSpans) busy[lane].assign(columns * kinds, 0.0);
  }
  const double bucket_s = kBucketPx / px;
  for (const TraceInterval* t : sorted) {
    const size_t lane =
        static_cast<size_t>(t->stage) * 3 + static_cast<size_t>(std::clamp(t->stream, 0, 2));
    if (busy[lane].empty()) continue;
    double a = t->start.to_seconds();
    const double e = t->end.to_seconds();
    // Column by column (an integer walk: no rounding can stall it).
    for (size_t col = std::min(columns - 1, static_cast<size_t>(std::max(0.0, a / bucket_s)));
         col < columns && a < e; ++col) {
      const double col_end =
          col + 1 == columns ? e : std::min(e, static_cast<double>(col + 1) * bucket_s);
      busy[lane][col * kinds + static_cast<size_t>(t->category)] += std::max(0.0, col_end - a);
      a = std::max(a, col_end);
    }
  }
  std::string out = svg_open(width, height, "timeline");
  bool columned = false;
  for (size_t st = 0; st < stages; ++st) {
    const double y0 = top + static_cast<double>(st) * row_h;
    out += "<g class=\"stage-row\">\n";
    out += text(4, y0 + row_h / 2.0,
                "stage " + std::to_string(st) +
                    (static_cast<int>(st) == r.execution.critical_stage ? " *" : ""));
    out += rect(left, y0, plot_w, 3 * lane_h, "#ffffff");
    for (int stream = 0; stream < 3; ++stream) {
      const size_t lane = st * 3 + static_cast<size_t>(stream);
      const double y = y0 + stream * lane_h;
      if (busy[lane].empty()) {
        for (const html::LaneSpan& sp : lanes[lane]) {
          out += html::lane_rect(sp, left, px, y, lane_h - 1, html::category_color(sp.category));
        }
        continue;
      }
      columned = true;
      // Adjacent columns with the same shares (to a tenth of the lane) merge into one run.
      const double h = lane_h - 1;
      size_t c = 0;
      while (c < columns) {
        std::vector<int> tenths(kinds);
        for (size_t k = 0; k < kinds; ++k) {
          tenths[k] = static_cast<int>(std::lround(busy[lane][c * kinds + k] / bucket_s * 10));
        }
        size_t run = c + 1;
        while (run < columns) {
          bool same = true;
          for (size_t k = 0; k < kinds && same; ++k) {
            same = std::lround(busy[lane][run * kinds + k] / bucket_s * 10) == tenths[k];
          }
          if (!same) break;
          ++run;
        }
        double yk = y + h;  // stack from the lane's bottom
        for (size_t k = 0; k < kinds; ++k) {
          double share = 0;
          for (size_t j = c; j < run; ++j) share += busy[lane][j * kinds + k];
          share /= bucket_s * static_cast<double>(run - c);
          if (share * h < 0.25) continue;
          const Category cat = static_cast<Category>(k);
          yk -= share * h;
          out +=
              rect(left + static_cast<double>(c) * kBucketPx, yk,
                   static_cast<double>(run - c) * kBucketPx, share * h, html::category_color(cat),
                   std::string(html::category_name(cat)) + " " + fmt("%.0f", share * 100) +
                       " % of " + fmt("%.3f", static_cast<double>(c) * bucket_s * 1e3) + "-" +
                       fmt("%.3f", static_cast<double>(run) * bucket_s * 1e3) + " ms");
        }
        c = run;
      }
    }
    out += "</g>\n";
  }
  // Time axis in seconds.
  const double axis_y = top + static_cast<double>(stages) * row_h + 2;
  out += html::time_axis(left, plot_w, axis_y, total);
  out += "</svg>\n";
  std::string note;
  if (r.execution.trace.empty()) note = "<p class=\"note\">No trace intervals were recorded.</p>\n";
  if (columned) {
    note = "<p class=\"note\">Lanes with more than " + std::to_string(kLaneSpans) +
           " spans are drawn as columns of " + fmt("%.0f", kBucketPx) +
           " px, each stacking the share of its time every category takes (hover for it).</p>\n";
  }
  return out + note;
}

// 2. Critical stage breakdown: a stacked bar and a table.
std::string breakdown(const SimulationReport& r) {
  const std::vector<StageResult>& st = r.execution.stages;
  if (st.empty()) return "<p class=\"note\">No stages.</p>\n";
  const size_t crit =
      std::min(static_cast<size_t>(std::max(r.execution.critical_stage, 0)), st.size() - 1);
  const Breakdown& b = st[crit].breakdown;
  std::vector<html::BreakdownPart> parts = {
      {"compute", b.compute, "#4e79a7"}, {"host overhead", b.host_overhead, "#9c755f"},
      {"TP comm", b.tp_comm, "#f28e2b"}, {"PP comm", b.pp_comm, "#59a14f"},
      {"DP comm", b.dp_comm, "#e15759"}, {"EP comm", b.ep_comm, "#b07aa1"},
      {"CP comm", b.cp_comm, "#76b7b2"}, {"optimizer", b.optimizer, "#edc948"}};
  // Activation offloading's exposed copies, a part only for a run that offloads.
  if (r.scenario.parallelism.offload_layers > 0) {
    parts.push_back({"offload", b.offload, html::category_color(Category::kOffload)});
  }
  parts.push_back({"bubble", b.bubble, "#bab0ac"});
  return html::breakdown_chart("stage " + std::to_string(crit), parts);
}

// 3. Memory per stage: stacked bars of weights/gradients/optimizer/activations/other, HBM line.
std::string memory(const SimulationReport& r) {
  const std::vector<StageMemory>& m = r.memory.stages;
  if (m.empty()) return "<p class=\"note\">No memory estimate for this run.</p>\n";
  double max_gib = 0;
  for (const StageMemory& s : m) {
    max_gib = std::max({max_gib, s.peak.to_gib(), s.capacity.to_gib()});
  }
  max_gib = std::max(max_gib * 1.08, 1e-9);
  const int left = 60, plot_h = 260, top = 14;
  const int bar_w = std::clamp(900 / static_cast<int>(m.size()) - 6, 4, 60);
  const int plot_w = static_cast<int>(m.size()) * (bar_w + 6) + 10;
  const int width = std::max(left + plot_w + 200, 400), height = top + plot_h + 40;
  const double py = plot_h / max_gib;
  const std::array<const char*, 5> names = {"weights", "gradients", "optimizer", "activations",
                                            "other"};
  // Colours of their own: the timeline's category colours mean communication kinds.
  const std::array<const char*, 5> colors = {"#393b79", "#6b6ecf", "#8c6d31", "#e7ba52", "#cedb9c"};
  std::string out = svg_open(width, height, "memory");
  const double base = top + plot_h;
  out += line(left, base, left + plot_w, base, "#333");
  out += line(left, top, left, base, "#333");
  const double step = tick_step(max_gib, 6);
  for (double g = 0; g <= max_gib; g += step) {
    out += text(left - 4, base - g * py + 4, fmt("%g", g), "end");
  }
  out += text(4, top - 2, "GiB");
  for (size_t i = 0; i < m.size(); ++i) {
    const StageMemory& s = m[i];
    const double other = std::max(0.0, s.peak.to_gib() - s.weights.to_gib() - s.gradients.to_gib() -
                                           s.optimizer.to_gib() - s.activations.to_gib());
    const std::array<double, 5> v = {s.weights.to_gib(), s.gradients.to_gib(), s.optimizer.to_gib(),
                                     s.activations.to_gib(), other};
    const double x = left + 8 + static_cast<double>(i) * (bar_w + 6);
    double y = base;
    for (size_t k = 0; k < v.size(); ++k) {
      const double h = v[k] * py;
      if (h <= 0) continue;
      y -= h;
      out +=
          rect(x, y, bar_w, h, colors[k],
               "stage " + std::to_string(i) + " " + names[k] + ": " + fmt("%.2f", v[k]) + " GiB");
    }
    if (m.size() <= 32 || i % (m.size() / 16) == 0) {
      out += text(x + bar_w / 2.0, base + 14, std::to_string(i), "middle");
    }
  }
  const double hbm = m[0].capacity.to_gib();
  out += line(left, base - hbm * py, left + plot_w, base - hbm * py, "#d00",
              " stroke-width=\"2\" stroke-dasharray=\"6 3\"");
  out += text(left + plot_w + 4, base - hbm * py + 4, "HBM " + fmt("%.0f", hbm) + " GiB");
  out += text(left + plot_w / 2.0, base + 32, "pipeline stage", "middle");
  for (size_t k = 0; k < names.size(); ++k) {
    out += rect(left + plot_w + 100, top + 20 + 16.0 * k, 10, 10, colors[k]);
    out += text(left + plot_w + 114, top + 29 + 16.0 * k, names[k]);
  }
  out += "</svg>\n";
  if (!r.memory.fits) {
    out += "<p class=\"note\">Stage " + std::to_string(r.memory.limiting_stage) +
           " does not fit in HBM.</p>\n";
  }
  return out;
}

std::string strategy(const SimulationReport& r) {
  const Scenario& s = r.scenario;
  const ParallelismConfig& p = s.parallelism;
  std::string out = "TP " + std::to_string(p.tp) + ", PP " + std::to_string(p.pp) + ", DP " +
                    std::to_string(p.dp);
  if (p.cp > 1) out += ", CP " + std::to_string(p.cp);
  if (s.model.moe.enabled()) out += ", EP " + std::to_string(p.ep);
  if (p.vpp > 1) out += ", VPP " + std::to_string(p.vpp);
  return out + ", " + to_string(p.schedule) + ", micro-batch " +
         std::to_string(s.training.micro_batch) + " x " + std::to_string(r.microbatches) +
         ", global batch " + std::to_string(s.training.global_batch);
}

}  // namespace

std::string report_to_html(const SimulationReport& r) {
  const Scenario& s = r.scenario;
  std::string out =
      html::page_open("Preflight: " + s.model.name, "Preflight simulation report") + "<dl>\n";
  auto item = [&](const std::string& k, const std::string& v) { out += html::item(k, v); };
  item("model", s.model.name + " (" + fmt("%.1f", static_cast<double>(r.parameters) * 1e-9) +
                    "B parameters)");
  item("cluster", std::to_string(s.cluster.total_gpus()) + " x " + s.cluster.gpu.name + " (" +
                      std::to_string(s.cluster.nodes) +
                      (s.cluster.nodes == 1 ? " node, " : " nodes, ") + s.cluster.name + ")");
  item("strategy", strategy(r));
  item("iteration time", fmt("%.4f", r.iteration_time_s) + " s");
  item("tokens/s", with_commas(std::llround(r.tokens_per_s)));
  item("MFU", fmt("%.1f", 100 * r.mfu) + "% (causal attention as run; " +
                  fmt("%.1f", 100 * r.mfu_2021) + "% by Megatron's 2021 count)");
  out += "</dl>\n";
  for (const std::string& w : r.warnings) {
    out += "<p class=\"note\">warning: " + html::esc(w) + "</p>\n";
  }
  out += "<h2>Iteration timeline per pipeline stage</h2>\n" +
         legend(r.scenario.parallelism.offload_layers > 0) +
         "<p class=\"note\">Lanes per stage: compute stream, TP/PP communication, DP "
         "communication; gaps are idle time. * marks the critical stage.</p>\n" +
         timeline(r);
  out += "<h2>Time breakdown of the critical stage</h2>\n" + breakdown(r);
  out += "<h2>Memory per pipeline stage</h2>\n" + memory(r);
  out += "<h2>Link utilization per tier</h2>\n" +
         html::link_utilization(r.execution.has_network_stats, r.execution.network);
  const std::string ports = html::hot_ports(r.execution.has_network_stats, r.execution.network);
  if (!ports.empty()) {
    out +=
        "<h2>Hottest ports of the packet network</h2>\n<p class=\"note\">Each port's "
        "longest output queue per slice of the run; the legend gives its longest queue and "
        "how long link-level flow control (PFC pauses or InfiniBand's credits) held it.</p>\n" +
        ports;
  }
  return out + html::page_close();
}

}  // namespace preflight
