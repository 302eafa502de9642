// A grouped bar chart written as a self-contained SVG document (no scripts, fonts or external
// references): one group of bars per category along the x axis, one bar per series in each
// group, a y axis from 0 with "nice" ticks, axis labels, and a legend when there is more than one
// series. Plain value in, text out; deterministic (numbers printed with fixed precision).
#pragma once

#include <string>
#include <vector>

namespace preflight {

struct BarSeries {
  std::string name;            // legend entry (unused with one series)
  std::vector<double> values;  // one per category; NaN or negative: no bar (a failed point)
};

struct BarChart {
  std::string title;
  std::string x_label;
  std::string y_label;
  std::vector<std::string> categories;  // x-axis groups, left to right
  std::vector<BarSeries> series;        // bars within each group, left to right
  std::string legend_title;             // e.g. the varied key the series stand for
};

// Returns the SVG text: `<svg>` with a `<rect class="bar">` per finite non-negative value, each
// with a `<title>` tooltip "category, series: value". Text is XML-escaped.
// REQUIRES: every series has categories.size() values.
std::string render_bar_chart_svg(const BarChart& chart);

}  // namespace preflight
