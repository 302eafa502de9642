#include "report/svg_chart.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "base/check.h"
#include "report/html_page.h"

namespace preflight {
namespace {

// Tableau 10: distinguishable, and readable when printed in grey.
constexpr const char* kColors[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                   "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
constexpr int kColorCount = sizeof(kColors) / sizeof(kColors[0]);

using html::fmt;

// 7.64, 35.6, 158k, 1.2M: `digits` significant digits, with a k/M/G suffix from 10,000 on.
std::string short_number(double v, int digits) {
  const char* suffix = "";
  if (std::fabs(v) >= 1e9) {
    v /= 1e9, suffix = "G";
  } else if (std::fabs(v) >= 1e6) {
    v /= 1e6, suffix = "M";
  } else if (std::fabs(v) >= 1e4) {
    v /= 1e3, suffix = "k";
  }
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*g%s", digits, v, suffix);
  return buf;
}

bool drawn(double v) { return std::isfinite(v) && v >= 0; }

}  // namespace

std::string render_bar_chart_svg(const BarChart& chart) {
  const int categories = static_cast<int>(chart.categories.size());
  const int series = static_cast<int>(chart.series.size());
  for (const BarSeries& s : chart.series)
    PREFLIGHT_CHECK(s.values.size() == chart.categories.size());
  double max = 0;
  for (const BarSeries& s : chart.series) {
    for (double v : s.values) {
      if (drawn(v)) max = std::max(max, v);
    }
  }
  // The y axis as every chart draws it (html_page.h): about five 1-2-5 steps from zero.
  const double step = max > 0 ? html::tick_step(max, 5) : 0.2;
  const double top = max > 0 ? std::ceil(max / step - 1e-9) * step : 1.0;
  const int ticks = static_cast<int>(std::lround(top / step));

  // Layout in pixels: the plot area, with room for the title, tick labels and the legend.
  const bool legend = series > 1;
  const double bar_width = 28, bar_gap = 4, group_gap = 24;
  const double group_width = std::max(1, series) * (bar_width + bar_gap) - bar_gap;
  const double left = 80, right = legend ? 200 : 30, top_margin = 50, bottom = 80;
  const double plot_width = std::max(400.0, categories * (group_width + group_gap) + group_gap);
  const double plot_height = 300;
  // Wide enough for the title (15px bold: about 9px a character).
  const double width = std::max(left + plot_width + right, chart.title.size() * 9.0 + 40);
  const double height = top_margin + plot_height + bottom;
  auto y_of = [&](double v) { return top_margin + plot_height * (1 - v / top); };

  std::string o;
  o += "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  o += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + fmt("%.0f", width) + "\" height=\"" +
       fmt("%.0f", height) + "\" viewBox=\"0 0 " + fmt("%.0f", width) + " " + fmt("%.0f", height) +
       "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  o += "<rect x=\"0\" y=\"0\" width=\"" + fmt("%.0f", width) + "\" height=\"" +
       fmt("%.0f", height) + "\" fill=\"white\"/>\n";
  o += "<text x=\"" + fmt("%.1f", width / 2) +
       "\" y=\"28\" text-anchor=\"middle\" font-size=\"15\" font-weight=\"bold\">" +
       html::esc(chart.title) + "</text>\n";

  // Grid lines and y tick labels.
  for (int t = 0; t <= ticks; ++t) {
    const double v = t * step, y = y_of(v);
    o += html::line(left, y, left + plot_width, y, "#dddddd");
    o += html::text(left - 6, y + 4, html::tick_label(v), "end");
  }

  // Bars, with their value above and a tooltip.
  for (int c = 0; c < categories; ++c) {
    const double slot = plot_width / categories;  // groups are centred in equal slots
    const double x0 = left + slot * c + (slot - group_width) / 2;
    for (int s = 0; s < series; ++s) {
      const double v = chart.series[s].values[c];
      if (!drawn(v)) continue;
      const double x = x0 + s * (bar_width + bar_gap), y = y_of(v);
      std::string tip = chart.categories[c];
      if (legend) tip += ", " + chart.series[s].name;
      tip += ": " + fmt("%.6g", v);
      o += "<rect class=\"bar\" x=\"" + fmt("%.1f", x) + "\" y=\"" + fmt("%.1f", y) +
           "\" width=\"" + fmt("%.1f", bar_width) + "\" height=\"" +
           fmt("%.1f", top_margin + plot_height - y) + "\" fill=\"" + kColors[s % kColorCount] +
           "\"><title>" + html::esc(tip) + "</title></rect>\n";
      o += "<text x=\"" + fmt("%.1f", x + bar_width / 2) + "\" y=\"" + fmt("%.1f", y - 3) +
           "\" text-anchor=\"middle\" font-size=\"10\">" + short_number(v, 3) + "</text>\n";
    }
    // Category label under the group; long ones are turned to fit.
    const double cx = x0 + group_width / 2, cy = top_margin + plot_height + 16;
    const bool turn = chart.categories[c].size() * 6.5 > slot;
    o += "<text x=\"" + fmt("%.1f", cx) + "\" y=\"" + fmt("%.1f", cy) + "\"" +
         (turn ? " text-anchor=\"end\" transform=\"rotate(-25 " + fmt("%.1f", cx) + " " +
                     fmt("%.1f", cy) + ")\""
               : std::string(" text-anchor=\"middle\"")) +
         ">" + html::esc(chart.categories[c]) + "</text>\n";
  }

  // Axes and their labels.
  o += html::line(left, top_margin, left, top_margin + plot_height, "black");
  o += html::line(left, top_margin + plot_height, left + plot_width, top_margin + plot_height,
                  "black");
  o += html::text(left + plot_width / 2, height - 12, chart.x_label, "middle");
  const double ly = top_margin + plot_height / 2;
  o += "<text x=\"18\" y=\"" + fmt("%.1f", ly) +
       "\" text-anchor=\"middle\" transform=\"rotate(-90 18 " + fmt("%.1f", ly) + ")\">" +
       html::esc(chart.y_label) + "</text>\n";

  if (legend) {
    const double lx = left + plot_width + 20;
    o += "<g class=\"legend\">\n";
    o += "<text x=\"" + fmt("%.1f", lx) + "\" y=\"" + fmt("%.1f", top_margin + 4) +
         "\" font-weight=\"bold\">" + html::esc(chart.legend_title) + "</text>\n";
    for (int s = 0; s < series; ++s) {
      const double y = top_margin + 16 + s * 20;
      o += "<rect x=\"" + fmt("%.1f", lx) + "\" y=\"" + fmt("%.1f", y) +
           "\" width=\"12\" height=\"12\" fill=\"" + kColors[s % kColorCount] + "\"/>\n";
      o += "<text x=\"" + fmt("%.1f", lx + 18) + "\" y=\"" + fmt("%.1f", y + 10) + "\">" +
           html::esc(chart.series[s].name) + "</text>\n";
    }
    o += "</g>\n";
  }
  o += "</svg>\n";
  return o;
}

}  // namespace preflight
