#include "report/svg_chart.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace preflight {
namespace {

int count(const std::string& text, const std::string& needle) {
  int n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

// Checks that every element opened is closed in order (self-closing ones aside), the way an XML
// parser would: returns the first problem, or "" when the tags balance.
std::string tag_balance(const std::string& svg) {
  std::vector<std::string> open;
  for (size_t at = svg.find('<'); at != std::string::npos; at = svg.find('<', at + 1)) {
    const size_t end = svg.find('>', at);
    if (end == std::string::npos) return "unterminated tag";
    const std::string tag = svg.substr(at + 1, end - at - 1);
    if (tag.empty()) return "empty tag";
    if (tag[0] == '?' || tag[0] == '!') continue;  // XML declaration
    if (tag.back() == '/') continue;               // <rect .../>
    const std::string name =
        tag.substr(tag[0] == '/' ? 1 : 0, tag.find_first_of(" \n/", 1) - (tag[0] == '/' ? 1 : 0));
    if (tag[0] != '/') {
      open.push_back(name);
    } else if (open.empty() || open.back() != name) {
      return "</" + name + "> closes " + (open.empty() ? "nothing" : "<" + open.back() + ">");
    } else {
      open.pop_back();
    }
  }
  return open.empty() ? "" : "<" + open.back() + "> never closed";
}

TEST(BarChart, OneSeriesHasABarPerCategoryAndNoLegend) {
  BarChart chart;
  chart.title = "GPT-3 175B on 1,024 GPUs";
  chart.x_label = "cluster.nic_bandwidth";
  chart.y_label = "iteration time (s)";
  chart.categories = {"100Gbps", "200Gbps", "400Gbps"};
  chart.series = {{"", {8.2, 7.8, 7.6}}};
  const std::string svg = render_bar_chart_svg(chart);
  ASSERT_FALSE(svg.empty());
  EXPECT_EQ(tag_balance(svg), "");
  EXPECT_EQ(svg.rfind("<?xml", 0), 0u);
  EXPECT_EQ(count(svg, "<svg "), 1);
  EXPECT_EQ(count(svg, "class=\"bar\""), 3);
  EXPECT_EQ(count(svg, "class=\"legend\""), 0);
  EXPECT_NE(svg.find(">iteration time (s)</text>"), std::string::npos);
  EXPECT_NE(svg.find(">cluster.nic_bandwidth</text>"), std::string::npos);
  EXPECT_NE(svg.find("<title>200Gbps: 7.8</title>"), std::string::npos);
}

TEST(BarChart, TwoSeriesGetALegendAndFailedPointsNoBar) {
  BarChart chart;
  chart.categories = {"100Gbps", "200Gbps", "400Gbps"};
  chart.series = {{"H100", {8.2, 7.8, 7.6}}, {"H20", {NAN, 20.1, 19.9}}};
  chart.legend_title = "cluster.gpu";
  const std::string svg = render_bar_chart_svg(chart);
  EXPECT_EQ(tag_balance(svg), "");
  EXPECT_EQ(count(svg, "class=\"bar\""), 5);  // 100Gbps on H20 failed
  EXPECT_EQ(count(svg, "class=\"legend\""), 1);
  EXPECT_NE(svg.find(">H20</text>"), std::string::npos);
  EXPECT_NE(svg.find(">cluster.gpu</text>"), std::string::npos);
}

TEST(BarChart, EscapesTextAndTicksStartAtZero) {
  BarChart chart;
  chart.title = "a<b & \"c\"";
  chart.categories = {"x"};
  chart.series = {{"", {3.0}}};
  const std::string svg = render_bar_chart_svg(chart);
  EXPECT_EQ(tag_balance(svg), "");
  EXPECT_NE(svg.find("a&lt;b &amp; &quot;c&quot;"), std::string::npos);
  // max 3: step nice(3/5 = 0.6) = 1, ticks 0, 1, 2, 3.
  for (const char* tick : {">0</text>", ">1</text>", ">2</text>", ">3</text>"}) {
    EXPECT_NE(svg.find(tick), std::string::npos) << tick;
  }
  EXPECT_EQ(svg.find(">4</text>"), std::string::npos);
}

TEST(BarChart, LargeValuesGetASuffix) {
  BarChart chart;
  chart.categories = {"a", "b"};
  chart.series = {{"", {158123.0, 2.5e6}}};
  const std::string svg = render_bar_chart_svg(chart);
  EXPECT_NE(svg.find(">158k</text>"), std::string::npos);  // bar labels: 3 digits
  EXPECT_NE(svg.find(">2.5M</text>"), std::string::npos);
  EXPECT_NE(svg.find("<title>a: 158123</title>"), std::string::npos);  // tooltips: 6 digits
}

TEST(BarChart, AnEmptyChartIsStillAWellFormedDocument) {
  const std::string svg = render_bar_chart_svg(BarChart{});
  EXPECT_EQ(tag_balance(svg), "");
  EXPECT_EQ(count(svg, "class=\"bar\""), 0);
}

}  // namespace
}  // namespace preflight
