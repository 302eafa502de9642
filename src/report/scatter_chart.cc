#include "report/scatter_chart.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "report/html_page.h"

namespace preflight {

namespace {

constexpr const char* kPointColor = "#4e79a7";
constexpr const char* kFrontColor = "#f28e2b";
constexpr const char* kMarkColor = "#d00";

bool finite(const ScatterPoint& p) { return std::isfinite(p.x) && std::isfinite(p.y); }

// `attrs` is raw attributes (class, fill, stroke); a <title> tooltip when `title` is not empty.
std::string circle(double cx, double cy, double r, const std::string& attrs,
                   const std::string& title = "") {
  const std::string s = "<circle cx=\"" + html::num(cx) + "\" cy=\"" + html::num(cy) + "\" r=\"" +
                        html::num(r) + "\" " + attrs;
  if (title.empty()) return s + "/>\n";
  return s + "><title>" + html::esc(title) + "</title></circle>\n";
}

std::string fill(const char* cls, const char* color) {
  return std::string("class=\"") + cls + "\" fill=\"" + color + "\"";
}

std::string ring() {
  return std::string("fill=\"none\" stroke=\"") + kMarkColor + "\" stroke-width=\"2\"";
}

}  // namespace

std::vector<size_t> pareto_front(const std::vector<ScatterPoint>& points) {
  std::vector<size_t> order;
  for (size_t i = 0; i < points.size(); ++i) {
    if (finite(points[i])) order.push_back(i);
  }
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (points[a].x != points[b].x) return points[a].x < points[b].x;
    return points[a].y > points[b].y;
  });
  // Walking by x: a point is on the front when it beats the best y so far, or equals the point
  // that set it on both axes.
  std::vector<size_t> front;
  for (size_t i : order) {
    const ScatterPoint& p = points[i];
    if (front.empty() || p.y > points[front.back()].y) {
      front.push_back(i);
    } else if (p.y == points[front.back()].y && p.x == points[front.back()].x) {
      front.push_back(i);
    }
  }
  return front;
}

std::string render_scatter_svg(const ScatterChart& c) {
  const int left = 70, top = 14, plot_w = 700, plot_h = 340, legend_w = 190;
  const int width = left + plot_w + legend_w, height = top + plot_h + 46;
  double x_max = std::max(c.x_limit, 0.0), y_max = 0;
  size_t drawn = 0;
  for (const ScatterPoint& p : c.points) {
    if (!finite(p)) continue;
    x_max = std::max(x_max, p.x);
    y_max = std::max(y_max, p.y);
    ++drawn;
  }
  // Axes from 0 to a whole number of ticks, with a little room above the highest point.
  const double xs = html::tick_step(x_max > 0 ? x_max * 1.03 : 1, 10);
  const double ys = html::tick_step(y_max > 0 ? y_max * 1.05 : 1, 6);
  x_max = std::max(1.0, std::ceil(x_max * 1.03 / xs)) * xs;
  y_max = std::max(1.0, std::ceil(y_max * 1.05 / ys)) * ys;
  const double base = top + plot_h;
  auto px = [&](double x) { return left + x / x_max * plot_w; };
  auto py = [&](double y) { return base - y / y_max * plot_h; };

  std::string out = html::svg_open(width, height, c.id.c_str());
  out += html::rect(left, top, plot_w, plot_h, "#fafafa");
  for (double x = 0; x <= x_max * 1.0001; x += xs) {
    out += html::line(px(x), top, px(x), base + 4, "#e4e4e4");
    out += html::text(px(x), base + 16, html::tick_label(x), "middle");
  }
  for (double y = 0; y <= y_max * 1.0001; y += ys) {
    out += html::line(left - 4, py(y), left + plot_w, py(y), "#e4e4e4");
    out += html::text(left - 6, py(y) + 4, html::tick_label(y), "end");
  }
  out += html::line(left, base, left + plot_w, base, "#333");
  out += html::line(left, top, left, base, "#333");
  out += html::text(left + plot_w / 2.0, base + 36, c.x_label, "middle");
  out += "<text x=\"14\" y=\"" + html::num(top + plot_h / 2.0) +
         "\" text-anchor=\"middle\" transform=\"rotate(-90 14 " + html::num(top + plot_h / 2.0) +
         ")\">" + html::esc(c.y_label) + "</text>\n";
  if (drawn == 0) out += html::text(left + plot_w / 2.0, top + plot_h / 2.0, "no points", "middle");

  if (c.x_limit > 0) {
    out += html::line(px(c.x_limit), top, px(c.x_limit), base, kMarkColor,
                      " stroke-width=\"2\" stroke-dasharray=\"6 3\"");
    out += html::text(px(c.x_limit) - 4, top + 12, c.limit_label, "end");
  }

  auto tooltip = [&](const ScatterPoint& p) {
    return p.label + ": " + c.x_label + " " + html::fmt("%.4g", p.x) + ", " + c.y_label + " " +
           html::fmt("%.6g", p.y);
  };
  const std::vector<size_t> front = pareto_front(c.points);
  std::vector<bool> on_front(c.points.size(), false);
  for (size_t i : front) on_front[i] = true;
  out += "<g class=\"points\" fill-opacity=\"0.55\">\n";
  for (size_t i = 0; i < c.points.size(); ++i) {
    const ScatterPoint& p = c.points[i];
    if (finite(p) && !on_front[i]) {
      out += circle(px(p.x), py(p.y), 3.5, fill("point", kPointColor), tooltip(p));
    }
  }
  out += "</g>\n";
  if (!front.empty()) {
    // The staircase: from each front point right to the next one's x, then up to its y.
    std::string pts;
    for (size_t k = 0; k < front.size(); ++k) {
      const ScatterPoint& p = c.points[front[k]];
      if (k > 0) pts += html::num(px(p.x)) + "," + html::num(py(c.points[front[k - 1]].y)) + " ";
      pts += html::num(px(p.x)) + "," + html::num(py(p.y)) + " ";
    }
    pts += html::num(left + plot_w) + "," + html::num(py(c.points[front.back()].y));
    out += std::string("<polyline class=\"pareto\" fill=\"none\" stroke=\"") + kFrontColor +
           "\" stroke-width=\"1.5\" points=\"" + pts + "\"/>\n";
    for (size_t i : front) {
      out += circle(px(c.points[i].x), py(c.points[i].y), 4.5, fill("front", kFrontColor),
                    tooltip(c.points[i]) + " (Pareto front)");
    }
  }
  const bool best =
      c.best >= 0 && static_cast<size_t>(c.best) < c.points.size() && finite(c.points[c.best]);
  if (best) {
    const ScatterPoint& p = c.points[c.best];
    out +=
        circle(px(p.x), py(p.y), 8, "class=\"best\" " + ring(), c.best_label + ": " + tooltip(p));
  }

  // Legend.
  const double lx = left + plot_w + 18;
  double ly = top + 14;
  out += "<g class=\"legend\">\n";
  out += circle(lx + 5, ly - 4, 3.5, fill("key", kPointColor) + " fill-opacity=\"0.55\"");
  out += html::text(lx + 16, ly, c.points_label + " (" + std::to_string(drawn) + ")");
  ly += 18;
  out += html::line(lx, ly - 4, lx + 10, ly - 4, kFrontColor, " stroke-width=\"1.5\"");
  out += circle(lx + 5, ly - 4, 4.5, fill("key", kFrontColor));
  out += html::text(lx + 16, ly, "Pareto front (" + std::to_string(front.size()) + ")");
  if (best) {
    ly += 18;
    out += circle(lx + 5, ly - 4, 6, ring());
    out += html::text(lx + 16, ly, c.best_label);
  }
  if (c.x_limit > 0) {
    ly += 18;
    out += html::line(lx, ly - 4, lx + 10, ly - 4, kMarkColor,
                      " stroke-width=\"2\" stroke-dasharray=\"6 3\"");
    out += html::text(lx + 16, ly, c.limit_label);
  }
  out += "</g>\n</svg>\n";
  return out;
}

}  // namespace preflight
