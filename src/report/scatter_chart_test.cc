#include "report/scatter_chart.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "report/html_test_util.h"

namespace preflight {
namespace {

using namespace html_test;  // count, expect_*

using Indices = std::vector<size_t>;

TEST(ParetoFront, DropsAPointDominatedOnBothAxes) {
  // (2, 5) needs more memory than (1, 6) for fewer tokens/s.
  const std::vector<ScatterPoint> p = {{1, 6, "a"}, {2, 5, "b"}, {3, 9, "c"}};
  EXPECT_EQ(pareto_front(p), (Indices{0, 2}));
}

TEST(ParetoFront, DropsAPointDominatedOnOneAxisAndEqualOnTheOther) {
  // Same memory, fewer tokens/s; same tokens/s, more memory.
  const std::vector<ScatterPoint> p = {{1, 6, "a"}, {1, 4, "b"}, {3, 6, "c"}, {4, 8, "d"}};
  EXPECT_EQ(pareto_front(p), (Indices{0, 3}));
}

TEST(ParetoFront, KeepsEveryCopyOfATie) {
  // Points equal on both axes do not dominate each other: both copies of (2, 7) stay.
  const std::vector<ScatterPoint> p = {{2, 7, "a"}, {1, 3, "b"}, {2, 7, "c"}, {2.5, 6, "d"}};
  EXPECT_EQ(pareto_front(p), (Indices{1, 0, 2}));
}

TEST(ParetoFront, OrdersByMemoryAndSkipsNonFinitePoints) {
  const std::vector<ScatterPoint> p = {
      {5, 10, "a"}, {NAN, 99, "failed"}, {1, 2, "b"}, {3, INFINITY, "bad"}, {3, 4, "c"}};
  EXPECT_EQ(pareto_front(p), (Indices{2, 4, 0}));
  EXPECT_TRUE(pareto_front({}).empty());
}

ScatterChart chart() {
  ScatterChart c;
  c.id = "scatter";
  c.x_label = "memory per GPU (GiB)";
  c.y_label = "tokens/s";
  c.points = {{10, 100, "TP1 <a&b>"}, {20, 150, "TP2"}, {30, 120, "TP4"}, {NAN, NAN, "failed"}};
  c.best = 1;
  c.best_label = "rank 1";
  c.x_limit = 80;
  c.limit_label = "HBM 80 GiB";
  return c;
}

TEST(ScatterChart, DrawsEveryPointTheFrontTheBestAndTheLimit) {
  const std::string svg = render_scatter_svg(chart());
  EXPECT_EQ(svg.rfind("<svg ", 0), 0u);
  // (30, 120) is dominated by (20, 150); the NaN point is not drawn.
  expect_counts(svg, {{"id=\"scatter\"", 1},
                      {"class=\"point\"", 1},
                      {"class=\"front\"", 2},
                      {"class=\"pareto\"", 1},
                      {"class=\"best\"", 1}});
  // The limit line and the legend; tooltips name the strategy, escaped, and the values.
  expect_has(svg, {"HBM 80 GiB", "stroke-dasharray", "candidate (3)", "Pareto front (2)",
                   "<title>TP1 &lt;a&amp;b&gt;: memory per GPU (GiB) 10, tokens/s 100 (Pareto "
                   "front)</title>"});
  expect_lacks(svg, {"<a&b>", "nan"});
  expect_balanced(svg);
}

TEST(ScatterChart, EmptyChartSaysSo) {
  ScatterChart c;
  c.id = "scatter";
  const std::string svg = render_scatter_svg(c);
  expect_has(svg, {"no points", "(0)"});
  expect_lacks(svg, {"class=\"point\"", "class=\"pareto\"", "class=\"best\""});
  expect_balanced(svg);
}

}  // namespace
}  // namespace preflight
