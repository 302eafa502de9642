#include "search/search_space.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "config/loader.h"

namespace preflight {
namespace {

using ::testing::HasSubstr;

// GPT-3 13B (40 layers, 40 heads) on one DGX A100: 8 GPUs, global batch 32.
const char* const kOneNode = R"(
model: {preset: gpt3-13b}
cluster: {preset: dgx-a100, nodes: 1}
training: {seq_len: 2048, global_batch: 32}
parallelism: {tp: 2, pp: 4}
)";

Scenario one_node(const std::vector<std::string>& overrides = {}) {
  StatusOr<Scenario> s = load_scenario_text(kOneNode, "test.yaml", overrides);
  PREFLIGHT_CHECK(s.ok());
  return *s;
}

SearchSpace space_of(const std::vector<std::string>& axes) {
  SearchSpace space;
  for (const std::string& a : axes) PREFLIGHT_CHECK(set_space_axis(&space, a).ok());
  return space;
}

TEST(EnumerateStrategies, CountsEveryCombinationOfASmallSpace) {
  // tp {1, 2, 3} × pp {1, 2} × mb {1, 2}, one value on every other axis: 12 combinations. tp 3
  // does not divide the 40 heads (4 rejected); the other 8 are valid (tp·pp divides 8 GPUs,
  // 32 is a multiple of mb·dp).
  const Enumeration e = enumerate_strategies(
      one_node(), space_of({"tp=1,2,3", "pp=1,2", "micro_batch=1,2", "recompute=none",
                            "distributed_optimizer=false", "schedule=1f1b"}));
  EXPECT_EQ(e.combinations, 12);
  EXPECT_EQ(e.candidates.size(), 8u);
  ASSERT_EQ(e.rejected.size(), 1u);
  EXPECT_EQ(e.rejected.at("divisibility: heads not a multiple of tp"), 4);
  // Enumeration order: tp, then pp, then micro-batch; dp derived, SP on with tp > 1.
  EXPECT_EQ(e.candidates[0].tp, 1);
  EXPECT_EQ(e.candidates[0].dp, 8);
  EXPECT_FALSE(e.candidates[0].sequence_parallel);
  EXPECT_EQ(e.candidates[1].micro_batch, 2);
  EXPECT_EQ(e.candidates[7].tp, 2);
  EXPECT_EQ(e.candidates[7].pp, 2);
  EXPECT_EQ(e.candidates[7].dp, 2);
  EXPECT_TRUE(e.candidates[7].sequence_parallel);
}

TEST(EnumerateStrategies, DefaultSpaceOfGpt3_175BOn1024Gpus) {
  // tp {1, 2, 4, 8} × 49 (pp, vpp, schedule) shapes × mb {1, 2, 4, 8} × recompute {none,
  // selective, full} × distributed optimizer {false, true}: 4 · 49 · 24 = 4,704. The shapes: pp
  // over the 12 divisors of 96 layers; vpp 1 with 1f1b and zb_h1, and with pp >= 2 every power of
  // two from 2 dividing 96/pp with interleaved (pp 2: 2, 4, 8, 16 → 6 shapes; ... 49 in all).
  StatusOr<Scenario> s = load_scenario("", {});
  ASSERT_TRUE(s.ok());
  const Enumeration e = enumerate_strategies(*s, SearchSpace{});
  EXPECT_EQ(e.combinations, 4704);
  int64_t rejected = 0;
  for (const auto& [reason, n] : e.rejected) rejected += n;
  EXPECT_EQ(rejected + static_cast<int64_t>(e.candidates.size()), e.combinations);
  // The scenario's own strategy (TP 8, PP 16, DP 8, mb 1, no recompute, 1F1B) is a candidate.
  Strategy own{8, 16, 8, 1, 1, 1, 1, Recompute::kNone, true, true, 0, Schedule::kOneFOneB};
  EXPECT_NE(std::find(e.candidates.begin(), e.candidates.end(), own), e.candidates.end());
}

TEST(EnumerateStrategies, CountsRejectionsByReason) {
  // pp 3 does not divide 8 GPUs; mb 8 · dp 8 = 64 does not divide the global batch 32; dualpipe
  // on pp 1 fails validation; interleaved with 32 / (1 · 4) = 8 micro-batches on pp 2 is fine.
  const Enumeration e = enumerate_strategies(
      one_node(), space_of({"tp=1", "pp=1,3", "micro_batch=1,8", "recompute=none",
                            "distributed_optimizer=false", "schedule=1f1b,dualpipe"}));
  EXPECT_EQ(e.combinations, 8);
  EXPECT_EQ(e.rejected.at("divisibility: tp·cp·pp does not divide the GPU count"), 4);
  EXPECT_EQ(e.rejected.at("divisibility: global_batch not a multiple of micro_batch·dp"), 2);
  EXPECT_EQ(e.rejected.at("validation: parallelism.schedule: dualpipe"), 1);
  ASSERT_EQ(e.candidates.size(), 1u);
  EXPECT_EQ(e.candidates[0].schedule, Schedule::kOneFOneB);
}

TEST(EnumerateStrategies, KnobsThatChangeNothingOrOnlyCostAreNotRepeated) {
  // tp 8 × pp 1 on 8 GPUs is DP 1: the sharded optimizer is the replicated one (the scenario's
  // choice stays; kOneNode: replicated); with the fused attention core selective recompute
  // replays the core's forward to save its log-sum-exp: dominated by recompute none.
  const Enumeration e = enumerate_strategies(
      one_node(), space_of({"tp=8", "pp=1", "micro_batch=1", "recompute=none,selective",
                            "distributed_optimizer=false,true", "schedule=1f1b"}));
  EXPECT_EQ(e.combinations, 4);
  ASSERT_EQ(e.candidates.size(), 1u);
  EXPECT_EQ(e.candidates[0].recompute, Recompute::kNone);
  EXPECT_FALSE(e.candidates[0].distributed_optimizer);
  EXPECT_EQ(e.rejected.at("dominated by recompute none (fused attention: selective replays "
                          "the core's forward to save its log-sum-exp)"),
            2);
  EXPECT_EQ(e.rejected.at("same strategy with the optimizer replicated (DP 1: nothing to "
                          "shard over)"),
            1);
  // Over DP 2 the sharded optimizer is a strategy of its own; without fused attention
  // selective recompute is too.
  const Enumeration d =
      enumerate_strategies(one_node({"training.flash_attention=false"}),
                           space_of({"tp=4", "pp=1", "micro_batch=1", "recompute=none,selective",
                                     "distributed_optimizer=false,true", "schedule=1f1b"}));
  EXPECT_EQ(d.candidates.size(), 4u);
  // Selective recompute of other modules than the core saves memory: a strategy of its own.
  const Enumeration m =
      enumerate_strategies(one_node({"parallelism.recompute_modules=[core_attn, layernorm]"}),
                           space_of({"tp=8", "pp=1", "micro_batch=1", "recompute=none,selective",
                                     "distributed_optimizer=false", "schedule=1f1b"}));
  EXPECT_EQ(m.candidates.size(), 2u);
}

TEST(EnumerateStrategies, InterleavedPairsWithVirtualStagesOnly) {
  // vpp {1, 2} × schedule {1f1b, interleaved}: (1, 1f1b) and (2, interleaved), on pp 2.
  const Enumeration e = enumerate_strategies(
      one_node(), space_of({"tp=1", "pp=2", "vpp=1,2", "micro_batch=1", "recompute=none",
                            "distributed_optimizer=false", "schedule=1f1b,interleaved"}));
  ASSERT_EQ(e.combinations, 2);
  ASSERT_EQ(e.candidates.size(), 2u);
  EXPECT_EQ(e.candidates[0].vpp, 1);
  EXPECT_EQ(e.candidates[0].schedule, Schedule::kOneFOneB);
  EXPECT_EQ(e.candidates[1].vpp, 2);
  EXPECT_EQ(e.candidates[1].schedule, Schedule::kInterleaved);
}

TEST(EnumerateStrategies, ContextAndExpertAxesFollowTheScenario) {
  // seq 8K opens cp {1, 2, 4, 8}; a dense model keeps ep at 1.
  const Enumeration e =
      enumerate_strategies(one_node({"training.seq_len=8192"}),
                           space_of({"tp=1", "pp=1", "micro_batch=1", "recompute=full",
                                     "distributed_optimizer=true", "schedule=1f1b"}));
  EXPECT_EQ(e.combinations, 4);
  ASSERT_EQ(e.candidates.size(), 4u);
  EXPECT_EQ(e.candidates[3].cp, 8);
  EXPECT_EQ(e.candidates[3].dp, 1);
  EXPECT_EQ(e.candidates[3].ep, 1);
  // Below 8K, CP stays the scenario's.
  const Enumeration shorter =
      enumerate_strategies(one_node({"training.seq_len=4096"}),
                           space_of({"tp=1", "pp=1", "micro_batch=1", "recompute=full",
                                     "distributed_optimizer=true", "schedule=1f1b"}));
  EXPECT_EQ(shorter.combinations, 1);
}

TEST(EnumerateStrategies, OffloadingWhereMegatronAllowsIt) {
  // tp {2} × pp {1, 2} × recompute {none, full} × offload {0, 10}: 8 combinations. Offloading
  // needs PP 1 and no recompute, so 3 of the 4 with 10 layers fail validation on its key.
  const Enumeration e = enumerate_strategies(
      one_node(), space_of({"tp=2", "pp=1,2", "micro_batch=1", "recompute=none,full",
                            "distributed_optimizer=false", "schedule=1f1b",
                            "parallelism.offload_layers=0,10"}));
  EXPECT_EQ(e.combinations, 8);
  ASSERT_EQ(e.candidates.size(), 5u);
  int offloaded = 0;
  for (const Strategy& st : e.candidates) {
    if (st.offload_layers == 0) continue;
    ++offloaded;
    EXPECT_EQ(st.pp, 1);
    EXPECT_EQ(st.recompute, Recompute::kNone);
    EXPECT_EQ(apply_strategy(one_node(), st).parallelism.offload_layers, 10);
    EXPECT_THAT(strategy_label(st), HasSubstr("offload10"));
  }
  EXPECT_EQ(offloaded, 1);
  EXPECT_EQ(e.rejected.at("validation: parallelism.offload_layers"), 3);
}

TEST(ApplyStrategy, TurnsOffCompanionSwitchesTheStrategyCannotHave) {
  Scenario base =
      one_node({"parallelism.distributed_optimizer=true", "parallelism.overlap_grad_reduce=true",
                "parallelism.overlap_param_gather=true"});
  Strategy st{1, 8, 1, 1, 1, 1, 4, Recompute::kFull, false, false, 0, Schedule::kOneFOneB};
  const Scenario s = apply_strategy(base, st);
  EXPECT_FALSE(s.parallelism.overlap_param_gather);
  EXPECT_EQ(s.parallelism.pp, 8);
  EXPECT_EQ(s.training.micro_batch, 4);
  EXPECT_TRUE(validate_scenario(s).ok()) << validate_scenario(s).message();
}

TEST(StrategyLess, OrdersByEveryKey) {
  Strategy a;
  Strategy b;
  EXPECT_FALSE(strategy_less(a, b));
  b.schedule = Schedule::kZeroBubbleH1;
  EXPECT_TRUE(strategy_less(a, b));
  a.tp = 2;
  EXPECT_TRUE(strategy_less(b, a));
  EXPECT_EQ(strategy_label(a), "TP2 PP1 DP1 mb1 recompute=none 1f1b");
}

TEST(SetSpaceAxis, AcceptsSectionedAndShortKeys) {
  SearchSpace s;
  ASSERT_TRUE(set_space_axis(&s, "parallelism.tp=8,4,4").ok());
  EXPECT_EQ(s.tp, (std::vector<int>{4, 8}));
  ASSERT_TRUE(set_space_axis(&s, "training.micro_batch=2").ok());
  EXPECT_EQ(s.micro_batch, (std::vector<int>{2}));
  ASSERT_TRUE(set_space_axis(&s, "recompute=full,none").ok());
  EXPECT_EQ(s.recompute, (std::vector<Recompute>{Recompute::kFull, Recompute::kNone}));
  ASSERT_TRUE(set_space_axis(&s, "sequence_parallel=true,false").ok());
  EXPECT_EQ(s.sequence_parallel, (std::vector<int>{0, 1}));
  ASSERT_TRUE(set_space_axis(&s, "schedule=zb_h2").ok());
  EXPECT_EQ(s.schedule, (std::vector<Schedule>{Schedule::kZeroBubbleH2}));
}

TEST(SetSpaceAxis, NamesTheBadKeyOrValue) {
  SearchSpace s;
  EXPECT_THAT(set_space_axis(&s, "parallelism.tq=4").message(), HasSubstr("unknown axis"));
  EXPECT_THAT(set_space_axis(&s, "tp=0").message(), HasSubstr("'0': expected integers from 1"));
  EXPECT_THAT(set_space_axis(&s, "tp=4,,8").message(), HasSubstr("''"));
  EXPECT_THAT(set_space_axis(&s, "zero_stage=4").message(), HasSubstr("from 0 to 3"));
  EXPECT_THAT(set_space_axis(&s, "recompute=some").message(),
              HasSubstr("expected one of none, selective, full"));
  EXPECT_THAT(set_space_axis(&s, "tp").message(), HasSubstr("expected key=v1,v2"));
  EXPECT_THAT(set_space_axis(&s, "tp=").message(), HasSubstr("expected key=v1,v2"));
}

TEST(ValidationReason, KeepsTheKeyAndAWordValue) {
  EXPECT_EQ(validation_reason(invalid_argument("parallelism.schedule: dualpipe: expected pp 2")),
            "validation: parallelism.schedule: dualpipe");
  EXPECT_EQ(validation_reason(invalid_argument("parallelism.tp: 3: expected a divisor")),
            "validation: parallelism.tp");
  EXPECT_EQ(validation_reason(invalid_argument("parallelism.overlap_p2p: true needs x")),
            "validation: parallelism.overlap_p2p");
  EXPECT_EQ(validation_reason(invalid_argument("no colon")), "validation: no colon");
}

}  // namespace
}  // namespace preflight
