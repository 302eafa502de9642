#include "report/sweep_html.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "config/loader.h"
#include "report/html_test_util.h"

namespace preflight {
namespace {

using namespace html_test;  // count, expect_*

constexpr int64_t kGiB = int64_t{1} << 30;

// One point of a cluster.nodes sweep: GPT-3 1.7B, TP 2, PP 2, DP derived.
SweepPoint point(int nodes, double time_s) {
  SweepPoint p;
  p.values = {std::to_string(nodes)};
  StatusOr<Scenario> s = load_scenario_text(
      "", "",
      {"model.preset=gpt3-1.7b", "cluster.nodes=" + std::to_string(nodes), "parallelism.tp=2",
       "parallelism.pp=2", "parallelism.dp=" + std::to_string(2 * nodes),
       "training.global_batch=32"});
  EXPECT_TRUE(s.ok()) << s.status().message();
  p.scenario = *s;
  p.iteration_time_s = time_s;
  p.tokens_per_s = 32 * 2048 / time_s;
  p.mfu = 0.4;
  p.tflops_per_gpu = 120;
  p.peak_bytes = 9 * kGiB;
  p.hbm_bytes = 80 * kGiB;
  p.fits = true;
  return p;
}

// nodes = 1, 2, 4 and a failed 3: 4 nodes cost twice 2 nodes for barely more tokens/s, but
// nothing beats it on tokens/s, so all three simulated points are on the front.
SweepResult nodes_sweep() {
  SweepResult r;
  r.axes = {{"cluster.nodes", {"1", "2", "3", "4"}}};
  SweepPoint failed;
  failed.values = {"3"};
  failed.status = invalid_argument("parallelism: tp·pp·dp = 12: expected <24>");
  failed.speedup = NAN;
  r.points = {point(1, 0.6), point(2, 0.35), failed, point(4, 0.34)};
  for (SweepPoint& p : r.points) {
    if (p.status.ok()) p.speedup = r.points[0].iteration_time_s / p.iteration_time_s;
  }
  return r;
}

TEST(SweepHtml, HoldsARowPerPointTheChartsAndTheScatter) {
  const std::string html = sweep_to_html(nodes_sweep(), "gpt3-1.7b on 8 GPUs");
  // A row per point, the fastest highlighted; the --plot bar chart of each metric (a bar per
  // simulated point); the scatter of the three simulated points, all on the front.
  expect_counts(html, {{"<tr class=\"cand", 4},
                       {"id=\"chart-iteration_time\"", 1},
                       {"id=\"chart-tokens_per_s\"", 1},
                       {"id=\"chart-mfu\"", 1},
                       {"class=\"bar\"", 9},
                       {"class=\"front\"", 3},
                       {"class=\"point\"", 0},
                       {"class=\"best\"", 1}});
  expect_has(html, {"Preflight sweep: gpt3-1.7b on 8 GPUs",
                    "<dt>varied: cluster.nodes</dt><dd>1, 2, 3, 4</dd>", "4 (1 failed)",
                    "<tr class=\"cand best\"><td class=\"text\">4</td>",
                    // The failed point's error, escaped, across the figure columns.
                    "<td class=\"error\" colspan=\"18\">error: parallelism: tp·pp·dp = 12: "
                    "expected &lt;24&gt;</td>",
                    "<td>1.71x</td>",  // 0.6 / 0.35
                    "<td>9.0 / 80</td>",
                    "<td>28.80</td>",  // 16 GPUs x $1.80
                    "cluster cost ($/hour)", "cluster.nodes=4: TP2 PP2 DP8 mb1"});
  expect_lacks(html, {"<?xml"});  // the bar charts are inline
  expect_balanced(html);
  expect_offline(html);
}

TEST(SweepHtml, WithoutAPriceTheScatterUsesGpus) {
  SweepResult r = nodes_sweep();
  r.points[1].scenario.cluster.gpu_hour_price = 0;
  r.points[1].tokens_per_s = 1;  // now dominated by the 1-node point
  const std::string html = sweep_to_html(r, "t");
  expect_has(html, {">GPUs</text>"});
  expect_lacks(html, {"$/Mtok"});
  expect_counts(html, {{"class=\"point\"", 1}, {"class=\"front\"", 2}});
}

TEST(SweepHtml, EscapesKeysValuesAndTitle) {
  SweepResult r = nodes_sweep();
  r.axes[0].key = "cluster.<name>";
  r.points[0].values[0] = "a&b";
  const std::string html = sweep_to_html(r, "<i>t</i>");
  expect_lacks(html, {"<name>", "<i>"});
  expect_has(html, {"<th>cluster.&lt;name&gt;</th>", "<td class=\"text\">a&amp;b</td>",
                    "&lt;i&gt;t&lt;/i&gt;"});
  expect_balanced(html);
}

TEST(SweepHtml, EveryPointFailedSaysSo) {
  SweepResult r = nodes_sweep();
  for (SweepPoint& p : r.points) p.status = invalid_argument("no");
  const std::string html = sweep_to_html(r, "t");
  expect_has(html, {"No point simulated"});
  expect_counts(html, {{"<td class=\"error\"", 4}});
  expect_lacks(html, {"<svg"});
  expect_balanced(html);
  expect_offline(html);
}

}  // namespace
}  // namespace preflight
