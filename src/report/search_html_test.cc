#include "report/search_html.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "config/loader.h"
#include "report/html_test_util.h"
#include "report/search_report.h"

namespace preflight {
namespace {

using namespace html_test;  // count, expect_*

constexpr int64_t kGiB = int64_t{1} << 30;

// GPT-3 1.7B on 2 DGX A100 nodes (16 GPUs, 80 GiB of HBM, $1.80 per GPU-hour).
Scenario base() {
  StatusOr<Scenario> s =
      load_scenario_text("", "",
                         {"model.preset=gpt3-1.7b", "cluster.nodes=2", "parallelism.tp=2",
                          "parallelism.pp=2", "parallelism.dp=4", "training.global_batch=32"});
  EXPECT_TRUE(s.ok()) << s.status().message();
  return *s;
}

StrategyResult result(int tp, int pp, double time_s, int64_t peak_gib) {
  StrategyResult x;
  x.strategy.tp = tp;
  x.strategy.pp = pp;
  x.strategy.dp = 16 / (tp * pp);
  x.network = "analytical";
  x.iteration_time_s = time_s;
  x.tokens_per_s = 32 * 2048 / time_s;
  x.mfu = 0.5 * 0.2 / time_s;
  x.peak_bytes = peak_gib * kGiB;
  x.cost = iteration_cost(16, 1.8, time_s, 32 * 2048);
  return x;
}

// Four ranked candidates: (tp 1, pp 1) is fastest; (4, 1) needs more memory than (2, 2) for
// fewer tokens/s, so it is off the Pareto front.
SearchResult four() {
  SearchResult r;
  r.gpus = 16;
  r.tokens_per_iteration = 32 * 2048;
  r.combinations = 100;
  r.candidates = 10;
  r.evaluated = 4;
  r.rejected = {{"divisibility: tp·cp·pp does not divide the GPU count", 90},
                {"memory: does not fit", 6}};
  r.results = {result(1, 1, 0.20, 40), result(2, 2, 0.25, 20), result(4, 1, 0.30, 30),
               result(2, 4, 0.40, 10)};
  return r;
}

TEST(SearchHtml, HoldsTheRankedRowsAndEveryCandidateInTheChart) {
  SearchHtmlOptions o;
  o.space = {"tp=1,2,4"};
  const std::string html = search_to_html(base(), four(), o);
  // Header: scenario, space and rejections, the most common first.
  expect_has(html, {"gpt3-1.7b on 16 x A100-SXM4-80GB",
                    "100 combinations, 10 valid, 4 fit in memory", "with tp=1,2,4"});
  EXPECT_LT(html.find("does not divide the GPU count"), html.find("memory: does not fit"));
  // A row per candidate, rank 1 highlighted, with the terminal table's figures; the chart has
  // every candidate, three on the front, rank 1 ringed.
  expect_counts(html, {{"<tr class=\"cand", 4},
                       {"<tr class=\"cand best\">", 1},
                       {"class=\"point\"", 1},
                       {"class=\"front\"", 3},
                       {"class=\"best\"", 1}});
  expect_has(html, {"<tr class=\"cand best\"><td>1</td><td>1</td><td>1</td><td>16</td>",
                    "<td>327,680</td>",  // 65,536 tokens / 0.2 s
                    "<td>40.0 / 80</td>", "$/Mtok", "rank 3: TP4 PP1 DP4", "HBM 80 GiB"});
  // Nothing was re-evaluated, and every row is shown.
  expect_lacks(html, {"network</th>", "The best"});
  expect_balanced(html);
  expect_offline(html);
}

TEST(SearchHtml, TopLimitsTheTableButNotTheChart) {
  SearchResult r = four();
  r.reevaluated = 2;
  r.final_network = "flow";
  r.results[0].network = r.results[1].network = "flow";
  SearchHtmlOptions o;
  o.top = 2;
  const std::string html = search_to_html(base(), r, o);
  EXPECT_EQ(count(html, "<tr class=\"cand"), 2u);
  EXPECT_EQ(count(html, "class=\"point\"") + count(html, "class=\"front\""), 4u);
  expect_has(html, {"The best 2 of 4 simulated candidates", "the best 2 again on the flow network",
                    "<th>network</th>"});
  expect_balanced(html);
}

TEST(SearchHtml, EscapesNames) {
  Scenario s = base();
  s.model.name = "m<script>&\"x\"";
  s.cluster.name = "<b>lab</b>";
  SearchResult r = four();
  r.rejected["validation: a<b"] = 1;
  const std::string html = search_to_html(s, r, {});
  expect_lacks(html, {"<script>", "<b>"});
  expect_has(html, {"m&lt;script&gt;&amp;&quot;x&quot;", "&lt;b&gt;lab", "validation: a&lt;b"});
  expect_balanced(html);
}

TEST(SearchHtml, NoFeasibleCandidateSaysSo) {
  SearchResult r = four();
  r.evaluated = 0;
  r.results.clear();
  r.rejected["memory: does not fit"] = 10;
  const std::string html = search_to_html(base(), r, {});
  expect_has(html, {"No feasible candidate", "memory: does not fit"});
  expect_lacks(html, {"<tr class=\"cand", "<svg"});
  expect_balanced(html);
  expect_offline(html);
}

TEST(SearchHtml, RealSearchListsItsResults) {
  SearchSpace space;
  for (const char* axis : {"tp=1,2", "pp=1,2", "micro_batch=1,2"}) {
    ASSERT_TRUE(set_space_axis(&space, axis).ok());
  }
  StatusOr<SearchResult> r = search(base(), space, {});
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_GT(r->results.size(), 3u);
  SearchHtmlOptions o;
  o.top = 3;
  const std::string html = search_to_html(base(), *r, o);
  EXPECT_EQ(count(html, "<tr class=\"cand"), 3u);
  EXPECT_EQ(count(html, "class=\"point\"") + count(html, "class=\"front\""), r->results.size());
  // The table ranks as the terminal table does: rank 1's tokens/s in both.
  const std::string tokens =
      with_commas(static_cast<int64_t>(r->results.front().tokens_per_s + 0.5));
  EXPECT_NE(format_search_table(*r, 1).find(tokens), std::string::npos);
  expect_has(html, {"<td>" + tokens + "</td>"});
  expect_balanced(html);
}

}  // namespace
}  // namespace preflight
