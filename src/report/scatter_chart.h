// A scatter chart for the HTML reports: one point per candidate (a searched strategy, a sweep
// point) on two axes where less x and more y are better (memory or cost against throughput),
// the Pareto front of those points drawn as a staircase, the chosen point marked, and an
// optional vertical limit (the HBM capacity). Plain values in, inline SVG text out;
// deterministic.
#pragma once

#include <string>
#include <vector>

namespace preflight {

struct ScatterPoint {
  double x = 0;       // smaller is better (e.g. GiB per GPU, $ per hour)
  double y = 0;       // larger is better (e.g. tokens/s)
  std::string label;  // the point's tooltip, e.g. its strategy
};

// The indices of the points on the Pareto front: those that no other point dominates, where
// p dominates q when p.x <= q.x and p.y >= q.y with one of them strict. Points equal on both
// axes do not dominate each other, so ties are all on the front. Points with a non-finite
// coordinate are left out. Ordered by x ascending (then y descending, then index), so y rises.
std::vector<size_t> pareto_front(const std::vector<ScatterPoint>& points);

struct ScatterChart {
  std::string id;  // the <svg> element's id
  std::string x_label;
  std::string y_label;
  std::vector<ScatterPoint> points;
  std::string points_label = "candidate";  // the points' legend entry
  int best = -1;                           // index of the point to mark (rank 1); -1: none
  std::string best_label;                  // its legend entry, e.g. "rank 1"
  double x_limit = 0;       // a dashed vertical line at this x when > 0 (HBM capacity)
  std::string limit_label;  // e.g. "HBM 80 GiB"
};

// Returns `<svg id=...>` with axes from 0 (ticks at 1/2/5 × 10^k), a `<circle class="point">`
// per finite point and `<circle class="front">` per Pareto point, each with a <title> tooltip
// "label: x, y"; a `<polyline class="pareto">` staircase through the front; a ring
// (`class="best"`) around the best point; the limit line; and a legend. An empty chart says
// "no points" in its plot area.
std::string render_scatter_svg(const ScatterChart& chart);

}  // namespace preflight
