#include "search/search.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "config/loader.h"
#include "report/search_report.h"
#include "simulate/simulate.h"

namespace preflight {
namespace {

using ::testing::HasSubstr;

// GPT-3 13B on `nodes` DGX A100 nodes, global batch 32.
Scenario gpt3_13b(int nodes, const std::vector<std::string>& overrides = {}) {
  const std::string text =
      "model: {preset: gpt3-13b}\n"
      "cluster: {preset: dgx-a100, nodes: " +
      std::to_string(nodes) +
      "}\n"
      "training: {seq_len: 2048, global_batch: 32}\n"
      "parallelism: {tp: 8}\n";
  StatusOr<Scenario> s = load_scenario_text(text, "test.yaml", overrides);
  PREFLIGHT_CHECK(s.ok());
  return *s;
}

SearchSpace space_of(const std::vector<std::string>& axes) {
  SearchSpace space;
  for (const std::string& a : axes) PREFLIGHT_CHECK(set_space_axis(&space, a).ok());
  return space;
}

// A space of a few dozen candidates on one node.
const std::vector<std::string> kSmall = {"tp=1,2,4,8", "pp=1,2,4", "micro_batch=1,2",
                                         "recompute=selective,full"};

SearchOptions with_jobs(int jobs) {
  SearchOptions o;
  o.jobs = jobs;
  return o;
}

TEST(Search, HeadroomRejectsStrategiesThatLeaveTooLittleHbmFree) {
  SearchOptions none = with_jobs(2);
  none.headroom = Bytes(0);
  StatusOr<SearchResult> all = search(gpt3_13b(1), space_of(kSmall), none);
  ASSERT_TRUE(all.ok()) << all.status().message();
  // A headroom just under the tightest winner's free memory drops it and keeps the roomier ones.
  int64_t tightest = 0;
  for (const StrategyResult& x : all->results) tightest = std::max(tightest, x.peak_bytes);
  const Bytes hbm = gpt3_13b(1).cluster.gpu.hbm_capacity;
  SearchOptions some = none;
  some.headroom = Bytes(hbm.count() - tightest + 1);
  StatusOr<SearchResult> roomy = search(gpt3_13b(1), space_of(kSmall), some);
  ASSERT_TRUE(roomy.ok()) << roomy.status().message();
  EXPECT_LT(roomy->evaluated, all->evaluated);
  for (const StrategyResult& x : roomy->results) {
    EXPECT_GE(hbm.count() - x.peak_bytes, some.headroom.count());
  }
  // A headroom no strategy leaves: nothing fits, and the error names the headroom.
  some.headroom = Bytes(hbm.count() - 1);
  StatusOr<SearchResult> none_fit = search(gpt3_13b(1), space_of(kSmall), some);
  ASSERT_FALSE(none_fit.ok());
  EXPECT_THAT(none_fit.status().message(), HasSubstr("--headroom"));
}

TEST(Search, RanksByIterationTimeThenStrategyKey) {
  StatusOr<SearchResult> r = search(gpt3_13b(1), space_of(kSmall), with_jobs(2));
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_GT(r->results.size(), 10u);
  EXPECT_EQ(r->evaluated, static_cast<int64_t>(r->results.size()));
  for (size_t i = 1; i < r->results.size(); ++i) {
    const StrategyResult& a = r->results[i - 1];
    const StrategyResult& b = r->results[i];
    EXPECT_TRUE(
        a.iteration_time_s < b.iteration_time_s ||
        (a.iteration_time_s == b.iteration_time_s && strategy_less(a.strategy, b.strategy)));
    EXPECT_EQ(a.network, "analytical");
  }
  // Every candidate is accounted for: evaluated, or rejected with a reason.
  int64_t rejected_after = 0;
  for (const auto& [reason, n] : r->rejected) {
    if (reason.rfind("memory:", 0) == 0 || reason.rfind("simulation:", 0) == 0) {
      rejected_after += n;
    }
  }
  EXPECT_EQ(r->evaluated + rejected_after, r->candidates);
  // Figures are the simulator's: tokens/s = global batch · seq / time.
  const StrategyResult& best = r->results.front();
  EXPECT_NEAR(best.tokens_per_s * best.iteration_time_s, 32.0 * 2048, 1e-6);
  EXPECT_GT(best.mfu, 0.2);
  EXPECT_GT(best.peak_bytes, int64_t{10} << 30);
}

TEST(Search, IdenticalResultsOnOneAndTwoThreads) {
  StatusOr<SearchResult> one = search(gpt3_13b(1), space_of(kSmall), with_jobs(1));
  StatusOr<SearchResult> two = search(gpt3_13b(1), space_of(kSmall), with_jobs(2));
  ASSERT_TRUE(one.ok() && two.ok());
  EXPECT_EQ(search_to_csv(*one), search_to_csv(*two));
  EXPECT_EQ(search_to_json(*one).dump(), search_to_json(*two).dump());
}

TEST(Search, SharesOfTwoProcessesMergeToTheSingleProcessResult) {
  // What `mpirun -np 2` does, without MPI: rank r evaluates candidates i ≡ r (mod 2), rank 0
  // merges the shares.
  const Scenario base = gpt3_13b(1);
  const SearchSpace space = space_of(kSmall);
  const Enumeration e = enumerate_strategies(base, space);
  const SearchOptions options = with_jobs(1);
  const std::vector<std::string> shares = {evaluate_share(base, e.candidates, 0, 2, options),
                                           evaluate_share(base, e.candidates, 1, 2, options)};
  StatusOr<SearchResult> merged = merge_shares(base, e, shares, options);
  StatusOr<SearchResult> single = search(base, space, options);
  ASSERT_TRUE(merged.ok() && single.ok());
  EXPECT_EQ(search_to_csv(*merged), search_to_csv(*single));
  // A share that is missing or corrupt is an internal error, never a silent gap.
  EXPECT_FALSE(merge_shares(base, e, {shares[0]}, options).ok());
  EXPECT_FALSE(merge_shares(base, e, {shares[0], shares[1].substr(3)}, options).ok());
}

TEST(Search, ReevaluatesTheBestKOnTheConfiguredFlowNetwork) {
  // Two nodes, so data-parallel and pipeline traffic crosses the fabric.
  const Scenario flow = gpt3_13b(2, {"simulation.network=flow"});
  SearchOptions options = with_jobs(2);
  options.top_k = 2;
  StatusOr<SearchResult> r =
      search(flow, space_of({"tp=8", "pp=1,2", "micro_batch=1,2", "recompute=selective"}), options);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_GT(r->results.size(), 2u);
  EXPECT_EQ(r->reevaluated, 2);
  EXPECT_EQ(r->final_network, "flow");
  EXPECT_EQ(r->results[0].network, "flow");
  EXPECT_EQ(r->results[1].network, "flow");
  EXPECT_EQ(r->results[2].network, "analytical");
  EXPECT_LE(r->results[0].iteration_time_s, r->results[1].iteration_time_s);
  // The flow figures are the flow network's own simulation of that strategy.
  Scenario best = apply_strategy(flow, r->results[0].strategy);
  StatusOr<SimulationReport> direct = simulate(best);
  ASSERT_TRUE(direct.ok());
  EXPECT_EQ(direct->iteration_time_s, r->results[0].iteration_time_s);
}

TEST(Search, AnalyticalScenarioIsNotReevaluated) {
  StatusOr<SearchResult> r = search(gpt3_13b(1), space_of(kSmall), with_jobs(1));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->reevaluated, 0);
  EXPECT_EQ(r->final_network, "analytical");
}

TEST(Search, CostObjectiveUsesThePrice) {
  SearchOptions options = with_jobs(2);
  options.objective = Objective::kCost;
  StatusOr<SearchResult> r = search(gpt3_13b(1), space_of(kSmall), options);
  ASSERT_TRUE(r.ok()) << r.status().message();
  // dgx-a100 at $1.80 per GPU-hour: $/Mtok = 1.80 · 8 · t / 3600 / (32 · 2048 / 10^6).
  const StrategyResult& best = r->results.front();
  EXPECT_NEAR(best.cost.usd_per_million_tokens,
              1.80 * 8 * best.iteration_time_s / 3600 / (32 * 2048 / 1e6), 1e-9);
  // On a fixed cluster the cheapest strategy is the fastest.
  StatusOr<SearchResult> by_time = search(gpt3_13b(1), space_of(kSmall), with_jobs(2));
  ASSERT_TRUE(by_time.ok());
  EXPECT_EQ(by_time->results.front().strategy, best.strategy);
}

TEST(Search, MemoryRejectionsAreCounted) {
  // GPT-3 175B on one node: TP 8 without pipeline stages cannot hold 175B parameters, on 1F1B
  // or ZB-H1 (2 candidates: at DP 1 the distributed optimizer is the replicated one).
  Scenario s = gpt3_13b(1, {"model.preset=gpt3-175b", "training.global_batch=8"});
  StatusOr<SearchResult> r =
      search(s, space_of({"tp=8", "pp=1", "micro_batch=1", "recompute=full"}), with_jobs(1));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("nothing fits: every one of the 2 valid strategies"));
  EXPECT_THAT(
      r.status().message(),
      HasSubstr("80 GiB of HBM per GPU less the 2.0 GiB --headroom (the least needs 370 GiB)"));
  // 8 GPUs × 370 / (0.9 × (80 − 2)) = 42.2, in whole nodes of 8: 48.
  EXPECT_THAT(r.status().message(), HasSubstr("try more GPUs (about --gpus 48 to start with)"));
}

TEST(Search, ErrorsSayWhatWasWrong) {
  const Scenario base = gpt3_13b(1);
  StatusOr<SearchResult> r = search(base, space_of(kSmall), with_jobs(0));
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("--jobs 0: expected at least 1 worker thread"));

  SearchOptions no_top = with_jobs(1);
  no_top.top_k = 0;
  EXPECT_THAT(search(base, space_of(kSmall), no_top).status().message(),
              HasSubstr("--top 0: expected at least 1"));

  // vpp 2 pairs only with the interleaved schedule: nothing to enumerate.
  r = search(base, space_of({"vpp=2", "schedule=1f1b"}), with_jobs(1));
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("empty search space"));

  // tp 3 does not divide the 40 heads. The default axes give 600 combinations: 25 (pp, vpp,
  // schedule) shapes over the 8 divisors of 40 layers × mb {1, 2, 4, 8} × 3 recompute modes ×
  // distributed optimizer {false, true}.
  r = search(base, space_of({"tp=3"}), with_jobs(1));
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("no valid strategy: all 600 combinations"));
  EXPECT_THAT(r.status().message(), HasSubstr("divisibility: heads not a multiple of tp (600)"));

  SearchOptions cost = with_jobs(1);
  cost.objective = Objective::kCost;
  r = search(gpt3_13b(1, {"cluster.gpu_hour_price=0"}), space_of(kSmall), cost);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("has no gpu_hour_price"));
}

TEST(Search, ReportsProgressOfEveryCandidate) {
  SearchOptions options = with_jobs(2);
  int64_t calls = 0;
  int64_t last_total = 0;
  options.on_progress = [&](int64_t done, int64_t total) {
    ++calls;
    last_total = total;
  };
  StatusOr<SearchResult> r = search(gpt3_13b(1), space_of(kSmall), options);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(calls, r->candidates);
  EXPECT_EQ(last_total, r->candidates);
}

TEST(SearchReport, CsvAndJsonCarryTheRankedResults) {
  StatusOr<SearchResult> r = search(gpt3_13b(1), space_of(kSmall), with_jobs(2));
  ASSERT_TRUE(r.ok());
  const std::string csv = search_to_csv(*r);
  EXPECT_EQ(csv.rfind("rank,tp,pp,dp,cp,ep,vpp,micro_batch,recompute,", 0), 0u);
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 1 + r->evaluated);
  const nlohmann::json j = search_to_json(*r);
  EXPECT_EQ(j["evaluated"], r->evaluated);
  EXPECT_TRUE(j["rejected"].is_object());
  ASSERT_EQ(j["results"].size(), r->results.size());
  const nlohmann::json& first = j["results"][0];
  EXPECT_EQ(first["rank"], 1);
  EXPECT_EQ(first["strategy"]["tp"], r->results[0].strategy.tp);
  EXPECT_EQ(first["strategy"]["schedule"], to_string(r->results[0].strategy.schedule));
  for (const char* key :
       {"iteration_time_s", "tokens_per_s", "mfu", "peak_bytes", "cost_per_mtok"}) {
    EXPECT_TRUE(first.contains(key)) << key;
  }
  const std::string table = format_search_table(*r, 3);
  EXPECT_EQ(std::count(table.begin(), table.end(), '\n'), 4);
  EXPECT_THAT(table, HasSubstr("$/Mtok"));
}

}  // namespace
}  // namespace preflight
