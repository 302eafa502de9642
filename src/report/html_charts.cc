#include "report/html_charts.h"

#include <algorithm>
#include <array>

#include "report/html_page.h"

namespace preflight::html {

namespace {

struct CategoryStyle {
  const char* name;
  const char* color;
};

// In legend order (not Category's declaration order; style() maps one to the other).
constexpr std::array<CategoryStyle, 8> kCategories = {{{"compute", "#4e79a7"},
                                                       {"TP comm", "#f28e2b"},
                                                       {"PP comm", "#59a14f"},
                                                       {"DP comm", "#e15759"},
                                                       {"EP comm", "#b07aa1"},
                                                       {"CP comm", "#76b7b2"},
                                                       {"optimizer", "#edc948"},
                                                       {"offload", "#ff9da7"}}};

const CategoryStyle& style(Category c) {
  switch (c) {
    case Category::kCompute:
      return kCategories[0];
    case Category::kTpComm:
      return kCategories[1];
    case Category::kPpComm:
      return kCategories[2];
    case Category::kDpComm:
      return kCategories[3];
    case Category::kEpComm:
      return kCategories[4];
    case Category::kCpComm:
      return kCategories[5];
    case Category::kOptimizer:
      return kCategories[6];
    case Category::kOffload:
      return kCategories[7];
  }
  return kCategories[0];
}

}  // namespace

const char* category_color(Category c) { return style(c).color; }
const char* category_name(Category c) { return style(c).name; }

std::string category_legend(const std::string& tail, bool offload) {
  std::string out = "<div class=\"legend\">";
  for (const CategoryStyle& c : kCategories) {
    if (&c == &style(Category::kOffload) && !offload) continue;
    out += std::string("<span><i style=\"background:") + c.color + "\"></i>" + c.name + "</span>";
  }
  return out + tail + "</div>\n";
}

void add_to_lane(std::vector<LaneSpan>& lane, const TraceInterval& t, double px) {
  const double s = t.start.to_seconds(), e = t.end.to_seconds();
  if (!lane.empty() && lane.back().category == t.category && (s - lane.back().end) * px < 1.0) {
    lane.back().end = std::max(lane.back().end, e);
    ++lane.back().merged;
  } else {
    lane.push_back({s, e, t.category, t.name, 1});
  }
}

std::string lane_rect(const LaneSpan& s, double left, double px, double y, double h,
                      const char* fill) {
  std::string title = s.merged > 1 ? std::string(category_name(s.category)) + " (" +
                                         std::to_string(s.merged) + " spans)"
                                   : s.name;
  title += ": " + fmt("%.3f", s.start * 1e3) + "-" + fmt("%.3f", s.end * 1e3) + " ms";
  return rect(left + s.start * px, y, (s.end - s.start) * px, h, fill, title);
}

std::string breakdown_chart(const std::string& label, const std::vector<BreakdownPart>& parts) {
  SimTime sum;
  for (const BreakdownPart& p : parts) sum = sum + p.time;
  const double total = std::max(sum.to_seconds(), 1e-12);
  const int width = 1210, plot_w = 1100, left = 90, height = 50;
  std::string out = svg_open(width, height, "breakdown");
  out += text(4, 25, label);
  double x = left;
  for (const BreakdownPart& p : parts) {
    const double w = p.time.to_seconds() / total * plot_w;
    if (w <= 0) continue;
    out += rect(x, 8, w, 28, p.color,
                p.name + ": " + fmt("%.4f", p.time.to_seconds()) + " s (" +
                    fmt("%.1f", 100 * p.time.to_seconds() / total) + "%)");
    x += w;
  }
  out += "</svg>\n<table><tr><th></th><th>seconds</th><th>%</th></tr>\n";
  for (const BreakdownPart& p : parts) {
    out += std::string("<tr><td><i style=\"background:") + p.color + "\"></i>" + esc(p.name) +
           "</td><td>" + fmt("%.4f", p.time.to_seconds()) + "</td><td>" +
           fmt("%.1f", 100 * p.time.to_seconds() / total) + "</td></tr>\n";
  }
  return out + "<tr><th>total</th><th>" + fmt("%.4f", sum.to_seconds()) +
         "</th><th>100</th></tr>\n</table>\n";
}

std::string time_axis(double left, double plot_w, double y, double total_s) {
  const double px = plot_w / total_s;
  std::string out = line(left, y, left + plot_w, y, "#333");
  const double step = tick_step(total_s, 10);
  for (double t = 0; t <= total_s * 1.0001; t += step) {
    out += line(left + t * px, y, left + t * px, y + 5, "#333");
    out += text(left + t * px, y + 18, fmt("%g", t), "middle");
  }
  return out + text(left + plot_w, y + 34, "time (s)", "end");
}

namespace {

// One line of a step chart: from each point's time (s) on, the value (a fraction of the y axis)
// holds until the next point.
struct StepLine {
  std::string legend;
  std::vector<std::pair<double, double>> points;
};

// <svg id=`id`>: step lines over [0, the last point's time], the y axis labelled `y_labels` at
// 0, 1/4, .., 1 (and `y_unit` above them), a legend `legend_w` pixels wide at the right.
std::string step_chart(const char* id, const std::vector<StepLine>& lines,
                       const std::array<std::string, 5>& y_labels, const std::string& y_unit,
                       int legend_w) {
  const std::array<const char*, 6> colors = {"#4e79a7", "#f28e2b", "#59a14f",
                                             "#e15759", "#b07aa1", "#76b7b2"};
  double end = 0;
  for (const StepLine& l : lines) {
    if (!l.points.empty()) end = std::max(end, l.points.back().first);
  }
  end = std::max(end, 1e-12);
  const int left = 60, plot_w = 1000, plot_h = 200, top = 14;
  const int width = left + plot_w + legend_w, height = top + plot_h + 44;
  const double px = plot_w / end, base = top + plot_h;
  std::string out = svg_open(width, height, id);
  out += rect(left, top, plot_w, plot_h, "#fafafa");
  out += line(left, base, left + plot_w, base, "#333");
  for (int k = 0; k <= 4; ++k)
    out += text(left - 4, base - k * plot_h / 4.0 + 4, y_labels[k], "end");
  if (!y_unit.empty()) out += text(left - 4, top - 2, y_unit, "end");
  const double step = tick_step(end, 10);
  for (double t = 0; t <= end * 1.0001; t += step) {
    out += text(left + t * px, base + 16, fmt("%g", t), "middle");
  }
  out += text(left + plot_w, base + 34, "time (s)", "end");
  size_t i = 0;
  for (const StepLine& l : lines) {
    const char* c = colors[i % colors.size()];
    std::string pts;
    double prev_y = base;
    for (const auto& [time, v] : l.points) {
      const double x = left + time * px;
      pts += num(x) + "," + num(prev_y) + " ";
      prev_y = base - std::clamp(v, 0.0, 1.0) * plot_h;
      pts += num(x) + "," + num(prev_y) + " ";
    }
    out += std::string("<polyline fill=\"none\" stroke=\"") + c +
           "\" stroke-width=\"1.5\" points=\"" + pts + "\"/>\n";
    out += rect(left + plot_w + 10, top + 10 + 18.0 * i, 10, 10, c);
    out += text(left + plot_w + 24, top + 19 + 18.0 * i, l.legend);
    ++i;
  }
  return out + "</svg>\n";
}

}  // namespace

std::string link_utilization(bool has_stats, const NetworkStats& n) {
  if (!has_stats || n.tiers.empty()) {
    return "<p class=\"note\">analytical network: no link utilization over time (run with "
           "simulation.network=flow).</p>\n";
  }
  std::vector<StepLine> lines;
  for (const TierSeries& t : n.tiers) {
    StepLine l{t.tier + " (mean " + fmt("%.0f", 100 * t.mean) + "%)", {}};
    for (const auto& [time, u] : t.points) l.points.emplace_back(time.to_seconds(), u);
    lines.push_back(std::move(l));
  }
  return step_chart("network", lines, {"0%", "25%", "50%", "75%", "100%"}, "", 160);
}

std::string hot_ports(bool has_stats, const NetworkStats& n) {
  if (!has_stats || !n.packet_level || n.packet.hot_ports.empty()) return "";
  double top_kib = 1e-9;
  for (const PortSeries& p : n.packet.hot_ports) {
    top_kib = std::max(top_kib, static_cast<double>(p.max_queue) / 1024);
  }
  std::vector<StepLine> lines;
  for (const PortSeries& p : n.packet.hot_ports) {
    StepLine l{p.port + " (max " + fmt("%.1f", static_cast<double>(p.max_queue) / 1024) +
                   " KiB, held " + fmt("%.3f", p.held_s * 1e3) + " ms)",
               {}};
    for (const PortSeries::Point& x : p.points) {
      l.points.emplace_back(x.from.to_seconds(), static_cast<double>(x.max_queue) / 1024 / top_kib);
    }
    lines.push_back(std::move(l));
  }
  std::array<std::string, 5> labels;
  for (int k = 0; k <= 4; ++k) labels[k] = fmt("%.0f", top_kib * k / 4);
  return step_chart("ports", lines, labels, "KiB", 320);
}

}  // namespace preflight::html
