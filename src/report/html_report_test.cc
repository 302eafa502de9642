#include "report/html_report.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "config/loader.h"
#include "report/html_test_util.h"

namespace preflight {
namespace {

SimulationReport run(const std::vector<std::string>& overrides) {
  StatusOr<Scenario> s = load_scenario_text("", "", overrides);
  EXPECT_TRUE(s.ok()) << s.status().message();
  SimulateOptions o;
  o.trace = TraceLevel::kBlocks;
  StatusOr<SimulationReport> r = simulate(*s, o);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return *r;
}

using namespace html_test;  // count, expect_*

TEST(HtmlReport, AnalyticalNetwork) {
  const SimulationReport r =
      run({"model.preset=gpt3-1.7b", "cluster.nodes=2", "parallelism.tp=2", "parallelism.pp=2",
           "parallelism.dp=4", "training.global_batch=32"});
  ASSERT_FALSE(r.execution.trace.empty());
  const std::string html = report_to_html(r);
  EXPECT_EQ(count(html, "<svg "), 3u);  // timeline, breakdown, memory
  EXPECT_EQ(count(html, "id=\"timeline\""), 1u);
  EXPECT_EQ(count(html, "id=\"breakdown\""), 1u);
  EXPECT_EQ(count(html, "id=\"memory\""), 1u);
  EXPECT_EQ(count(html, "class=\"stage-row\""), 2u);
  EXPECT_NE(html.find("analytical network"), std::string::npos);
  EXPECT_NE(html.find("gpt3-1.7b"), std::string::npos);
  EXPECT_GT(count(html, "<rect"), 20u);
  // The timeline draws the optimizer step in the optimizer's colour, and nothing of this
  // dense model in the EP colour (the legend's colour has a span only when one exists).
  const std::string timeline = html.substr(html.find("id=\"timeline\""));
  const std::string timeline_svg = timeline.substr(0, timeline.find("</svg>"));
  EXPECT_NE(timeline_svg.find("fill=\"#edc948\""), std::string::npos);
  EXPECT_EQ(timeline_svg.find("fill=\"#b07aa1\""), std::string::npos);
  expect_balanced(html);
  expect_offline(html);
}

TEST(HtmlReport, FlowNetworkDrawsTierUtilization) {
  const SimulationReport r =
      run({"model.preset=gpt3-13b", "cluster.preset=dgx-h100", "cluster.nodes=4",
           "parallelism.tp=8", "parallelism.pp=4", "parallelism.dp=1", "training.global_batch=16",
           "simulation.network=flow"});
  const std::string html = report_to_html(r);
  EXPECT_EQ(count(html, "<svg "), 4u);
  EXPECT_EQ(count(html, "id=\"network\""), 1u);
  EXPECT_NE(html.find("<polyline"), std::string::npos);
  EXPECT_EQ(count(html, "class=\"stage-row\""), 4u);
  EXPECT_EQ(html.find("analytical network"), std::string::npos);
  expect_balanced(html);
  expect_offline(html);
}

TEST(HtmlReport, PacketNetworkDrawsItsHottestPorts) {
  const SimulationReport r =
      run({"model.preset=gpt3-13b", "cluster.preset=dgx-h100", "cluster.nodes=4",
           "parallelism.tp=8", "parallelism.pp=4", "parallelism.dp=1", "training.global_batch=16",
           "simulation.network=packet"});
  const std::string html = report_to_html(r);
  EXPECT_EQ(count(html, "id=\"ports\""), 1u);
  EXPECT_NE(html.find("Hottest ports of the packet network"), std::string::npos);
  EXPECT_NE(html.find("leaf"), std::string::npos);
  expect_balanced(html);
  expect_offline(html);
}

TEST(HtmlReport, LargeJobsDrawEveryStageAndTheirExposedTp) {
  // The default scenario (16 stages, 192 micro-batches) at kernel level: lanes of thousands of
  // spans become columns stacking each category's share; every stage is drawn and the TP
  // collectives on the compute stream show.
  StatusOr<Scenario> s = load_scenario_text("", "", {});
  ASSERT_TRUE(s.ok());
  SimulateOptions o;
  o.trace = TraceLevel::kKernels;
  StatusOr<SimulationReport> r = simulate(*s, o);
  ASSERT_TRUE(r.ok());
  const std::string html = report_to_html(*r);
  EXPECT_EQ(count(html, "class=\"stage-row\""), 16u);
  EXPECT_EQ(html.find("capped"), std::string::npos);
  EXPECT_NE(html.find("drawn as columns of 2 px"), std::string::npos);
  EXPECT_GT(count(html, "TP comm "), 100u);  // column titles: "TP comm 9 % of ..."
  EXPECT_LT(html.size(), 8u << 20);          // a few MB, not one rect per kernel
}

TEST(HtmlReport, NoTraceStillRenders) {
  SimulationReport r = run({"model.preset=gpt3-1.7b", "cluster.nodes=1", "parallelism.tp=2",
                            "parallelism.pp=2", "parallelism.dp=2", "training.global_batch=8"});
  r.execution.trace.clear();
  const std::string html = report_to_html(r);
  EXPECT_NE(html.find("No trace intervals"), std::string::npos);
  EXPECT_EQ(count(html, "class=\"stage-row\""), 2u);
  expect_balanced(html);
}

}  // namespace
}  // namespace preflight
