#include "report/chakra_html.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "config/loader.h"
#include "report/html_test_util.h"

namespace preflight {
namespace {

using namespace html_test;  // count, expect_*

ChakraNode node(uint64_t id, ChakraNodeType type, std::string name, std::vector<uint64_t> deps) {
  ChakraNode n;
  n.id = id;
  n.type = type;
  n.name = std::move(name);
  n.data_deps = std::move(deps);
  return n;
}

// Every rank: a kernel whose name needs escaping (10 µs, stream 0), a CPU op (3 µs), a 1 MiB
// data-parallel all-reduce of all ranks, the optimizer step; rank 0 sends 1 MiB to the last rank.
ChakraWorkload workload(int ranks) {
  ChakraWorkload w;
  w.prefix = "toy<&>";
  w.ranks.resize(static_cast<size_t>(ranks));
  for (int r = 0; r < ranks; ++r) {
    std::vector<ChakraNode>& v = w.ranks[static_cast<size_t>(r)].nodes;
    v.push_back(node(0, ChakraNodeType::kComp, "attn<b>&\"fwd\"", {}));
    v.back().duration_micros = 10;
    v.back().stream = 0;
    v.back().category = "compute";
    v.push_back(node(1, ChakraNodeType::kComp, "cpu op", {}));
    v.back().duration_micros = 3;
    v.back().is_cpu_op = true;
    v.push_back(node(2, ChakraNodeType::kColl, "grad allreduce", {0}));
    v.back().comm_type = static_cast<int>(ChakraCommType::kAllReduce);
    v.back().comm_size = 1 << 20;
    v.back().category = "dp";
    v.push_back(node(3, ChakraNodeType::kComp, "adam", {2}));
    v.back().duration_micros = 4;
    v.back().category = "optimizer";
  }
  ChakraNode send = node(4, ChakraNodeType::kSend, "send", {0});
  send.comm_dst = ranks - 1;
  send.comm_size = 1 << 20;
  w.ranks[0].nodes.push_back(send);
  ChakraNode recv = node(4, ChakraNodeType::kRecv, "recv", {});
  recv.comm_src = 0;
  recv.comm_size = 1 << 20;
  w.ranks[static_cast<size_t>(ranks - 1)].nodes.push_back(recv);
  return w;
}

struct Replayed {
  ChakraWorkload w;
  Scenario s;
  ChakraReplayResult r;
};

Replayed replay(int ranks, bool trace, const std::string& network = "analytical") {
  Replayed out;
  out.w = workload(ranks);
  StatusOr<Scenario> base =
      load_scenario("", {"cluster.preset=dgx-h100", "simulation.network=" + network});
  EXPECT_TRUE(base.ok()) << base.status().message();
  StatusOr<Scenario> s = chakra_scenario(ranks, *base);
  EXPECT_TRUE(s.ok()) << s.status().message();
  out.s = *s;
  ChakraReplayOptions o;
  o.trace = trace;
  StatusOr<ChakraReplayResult> r = replay_chakra(out.w, out.s, o);
  EXPECT_TRUE(r.ok()) << r.status().message();
  out.r = *r;
  return out;
}

TEST(ChakraHtml, DrawsLanesPerRankAndEscapesNodeNames) {
  const Replayed x = replay(4, /*trace=*/true);
  ASSERT_FALSE(x.r.trace.empty());
  const std::string html = chakra_report_to_html(x.r, x.w, x.s);
  expect_counts(html, {{"<svg ", 3},  // timeline, breakdown, per-rank bars
                       {"id=\"timeline\"", 1},
                       {"id=\"breakdown\"", 1},
                       {"id=\"ranks\"", 1},
                       {"class=\"rank-row\"", 4},
                       // Lanes: stream 0 on every rank; the all-reduce's default stream 1
                       // and the CPU thread on all; send/recv on ranks 0 and 3.
                       {">stream 0</text>", 4},
                       {">stream 1</text>", 4},
                       {">CPU</text>", 4},
                       {">send/recv</text>", 2}});
  expect_has(html, {"toy&lt;&amp;&gt;.&lt;rank&gt;.et", "attn&lt;b&gt;&amp;&quot;fwd&quot;",
                    "analytical network", "exposed DP comm", "idle (waiting for other ranks)",
                    "H100", "#edc948", "#e15759"});
  expect_lacks(html, {"attn<b>", "toy<&>", "Showing", "No trace intervals"});
  // The critical rank is marked, and its breakdown's row total is its end time.
  EXPECT_EQ(count(html, " *</text>"), 1u);
  EXPECT_GT(count(html, "<rect"), 20u);
  expect_balanced(html);
  expect_offline(html);
}

TEST(ChakraHtml, ResultWithoutTraceIntervalsStillMakesAPage) {
  const Replayed x = replay(2, /*trace=*/false);
  ASSERT_TRUE(x.r.trace.empty());
  const std::string html = chakra_report_to_html(x.r, x.w, x.s);
  expect_has(html, {"No trace intervals were recorded", "id=\"breakdown\"", "id=\"ranks\""});
  EXPECT_EQ(count(html, "class=\"rank-row\""), 2u);
  expect_balanced(html);
  expect_offline(html);
}

TEST(ChakraHtml, FlowNetworkAddsLinkUtilization) {
  // 9 ranks fill one 8-GPU node and one GPU of a second: the all-reduce crosses the fabric.
  const Replayed x = replay(9, /*trace=*/true, "flow");
  ASSERT_TRUE(x.r.has_network_stats);
  const std::string html = chakra_report_to_html(x.r, x.w, x.s);
  expect_has(html, {"id=\"network\"", "<polyline", "flow-level"});
  expect_lacks(html, {"analytical network"});
  expect_balanced(html);
}

TEST(ChakraHtml, SamplesRankZeroTheCriticalRankAndEvenlySpacedOthers) {
  const std::vector<int> s = sample_ranks(1000, 537, 32);
  ASSERT_EQ(s.size(), 32u);
  EXPECT_TRUE(std::is_sorted(s.begin(), s.end()));
  EXPECT_EQ(std::adjacent_find(s.begin(), s.end()), s.end());
  EXPECT_EQ(s.front(), 0);
  EXPECT_EQ(s.back(), 999);
  EXPECT_NE(std::find(s.begin(), s.end(), 537), s.end());
  EXPECT_EQ(sample_ranks(5, 3, 32), (std::vector<int>{0, 1, 2, 3, 4}));
  // Collisions with the critical rank are filled: still exactly `max`.
  EXPECT_EQ(sample_ranks(40, 1, 33).size(), 33u);
}

TEST(ChakraHtml, ManyRanksShowAtMost32LaneGroupsAnd64Bars) {
  const Replayed x = replay(100, /*trace=*/true);
  const std::string html = chakra_report_to_html(x.r, x.w, x.s);
  EXPECT_EQ(count(html, "class=\"rank-row\""), 32u);
  expect_has(html, {"Showing 32 of 100 ranks", "Showing 64 of 100 ranks"});
  expect_balanced(html);
}

TEST(ChakraHtml, AlternatingCategoriesAreDrawnInColumnsNotCut) {
  // 2 ranks of 6,000 1 µs nodes in a chain on one stream, compute and TP by turns: merging one
  // category's neighbours cannot help, so lanes go to columns and every rank is still drawn.
  ChakraWorkload w;
  w.prefix = "dense";
  w.ranks.resize(2);
  for (ChakraTrace& t : w.ranks) {
    for (uint64_t i = 0; i < 6000; ++i) {
      t.nodes.push_back(node(i, ChakraNodeType::kComp, "k",
                             i ? std::vector<uint64_t>{i - 1} : std::vector<uint64_t>{}));
      t.nodes.back().duration_micros = 1;
      t.nodes.back().category = i % 2 ? "tp" : "compute";
    }
  }
  StatusOr<Scenario> base = load_scenario("", {"cluster.preset=dgx-h100"});
  ASSERT_TRUE(base.ok());
  const Scenario s = *chakra_scenario(2, *base);
  ChakraReplayOptions o;
  o.trace = true;
  StatusOr<ChakraReplayResult> r = replay_chakra(w, s, o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const std::string html = chakra_report_to_html(*r, w, s);
  expect_has(html, {"columns of up to"});
  expect_lacks(html, {"Timeline capped"});
  EXPECT_LT(count(html, "<rect"), 5200u);
  // Both ranks' lanes are drawn to the end, 6,000 µs.
  EXPECT_EQ(count(html, "-6.000 ms</title>"), 2u);
  expect_balanced(html);
}

}  // namespace
}  // namespace preflight
