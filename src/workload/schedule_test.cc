#include "workload/schedule.h"

#include <gtest/gtest.h>

#include <map>
#include <tuple>
#include <utility>
#include <vector>

namespace preflight {
namespace {

// Index of each (backward, microbatch, chunk) in `order`; fails the test on a duplicate.
std::map<std::tuple<bool, int, int>, int> positions(const std::vector<PipelineTask>& order) {
  std::map<std::tuple<bool, int, int>, int> pos;
  for (size_t i = 0; i < order.size(); ++i) {
    const auto key = std::make_tuple(order[i].backward, order[i].microbatch, order[i].chunk);
    EXPECT_TRUE(pos.emplace(key, static_cast<int>(i)).second)
        << "duplicate task: backward=" << order[i].backward << " mb=" << order[i].microbatch
        << " chunk=" << order[i].chunk;
  }
  return pos;
}

// Every (micro-batch, chunk) runs forward and backward exactly once, forward first.
void expect_complete(const std::vector<PipelineTask>& order, int m, int v) {
  ASSERT_EQ(order.size(), static_cast<size_t>(2 * m * v));
  const auto pos = positions(order);
  for (int j = 0; j < m; ++j) {
    for (int c = 0; c < v; ++c) {
      auto f = pos.find({false, j, c});
      auto b = pos.find({true, j, c});
      ASSERT_NE(f, pos.end()) << "no forward of mb " << j << " chunk " << c;
      ASSERT_NE(b, pos.end()) << "no backward of mb " << j << " chunk " << c;
      EXPECT_LT(f->second, b->second) << "mb " << j << " chunk " << c;
    }
  }
}

int leading_forwards(const std::vector<PipelineTask>& order) {
  int n = 0;
  while (n < static_cast<int>(order.size()) && !order[n].backward) ++n;
  return n;
}

TEST(PipelineOrder, GpipeRunsAllForwardsThenAllBackwards) {
  const std::vector<PipelineTask> order = pipeline_order(Schedule::kGpipe, 2, 4, 6, 1);
  expect_complete(order, 6, 1);
  for (int j = 0; j < 6; ++j) {
    EXPECT_FALSE(order[j].backward);
    EXPECT_EQ(order[j].microbatch, j);
    EXPECT_TRUE(order[6 + j].backward);
    EXPECT_EQ(order[6 + j].microbatch, j);
  }
}

TEST(PipelineOrder, OneFOneBWarmsUpWithPMinusIMinus1Forwards) {
  const int p = 4, m = 8;
  for (int stage = 0; stage < p; ++stage) {
    SCOPED_TRACE(stage);
    const std::vector<PipelineTask> order = pipeline_order(Schedule::kOneFOneB, stage, p, m, 1);
    expect_complete(order, m, 1);
    // p−i−1 warm-up forwards, then the steady state opens with one more forward before the
    // first backward: the first backward sits at index p−i.
    const int warmup = p - stage - 1;
    EXPECT_EQ(leading_forwards(order), warmup + 1);
    // Steady state: strictly alternating F, B for m − warmup pairs; then the drain backwards.
    for (int k = 0; k < m - warmup; ++k) {
      EXPECT_FALSE(order[warmup + 2 * k].backward) << k;
      EXPECT_TRUE(order[warmup + 2 * k + 1].backward) << k;
    }
    for (size_t i = warmup + 2 * (m - warmup); i < order.size(); ++i) {
      EXPECT_TRUE(order[i].backward) << i;
    }
    // Micro-batches go in order within each direction.
    int next_f = 0, next_b = 0;
    for (const PipelineTask& t : order) {
      EXPECT_EQ(t.chunk, 0);
      EXPECT_EQ(t.microbatch, t.backward ? next_b++ : next_f++);
    }
  }
}

TEST(PipelineOrder, OneFOneBLastStageAlternatesFromTheStart) {
  const std::vector<PipelineTask> order = pipeline_order(Schedule::kOneFOneB, 3, 4, 3, 1);
  const std::vector<std::pair<bool, int>> want = {{false, 0}, {true, 0},  {false, 1},
                                                  {true, 1},  {false, 2}, {true, 2}};
  ASSERT_EQ(order.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(order[i].backward, want[i].first) << i;
    EXPECT_EQ(order[i].microbatch, want[i].second) << i;
  }
}

TEST(PipelineOrder, OneFOneBWithFewerMicrobatchesThanStagesIsGpipe) {
  // m = 2 < p − 1 = 3: the warm-up is capped at m, so stage 0 runs F0 F1 B0 B1.
  const std::vector<PipelineTask> order = pipeline_order(Schedule::kOneFOneB, 0, 4, 2, 1);
  expect_complete(order, 2, 1);
  EXPECT_EQ(leading_forwards(order), 2);
}

TEST(PipelineOrder, InterleavedMatchesMegatronChunkFormula) {
  // Megatron-LM (Narayanan et al. 2021 §2.2): the k-th forward runs chunk (k mod p·v)/p of
  // micro-batch ⌊k/(p·v)⌋·p + k mod p; the k-th backward runs chunk v−1−(k mod p·v)/p.
  // Warm-up on stage i: (p−i−1)·2 + (v−1)·p forwards.
  const int p = 4, v = 2, m = 8;
  for (int stage = 0; stage < p; ++stage) {
    SCOPED_TRACE(stage);
    const std::vector<PipelineTask> order = pipeline_order(Schedule::kInterleaved, stage, p, m, v);
    expect_complete(order, m, v);
    const int warmup = (p - stage - 1) * 2 + (v - 1) * p;
    EXPECT_EQ(leading_forwards(order), warmup + 1);
    int kf = 0, kb = 0;
    for (const PipelineTask& t : order) {
      const int k = t.backward ? kb++ : kf++;
      const int in_group = k % (p * v);
      const int chunk = t.backward ? v - 1 - in_group / p : in_group / p;
      EXPECT_EQ(t.chunk, chunk) << "k=" << k << " backward=" << t.backward;
      EXPECT_EQ(t.microbatch, k / (p * v) * p + k % p) << "k=" << k;
    }
  }
}

TEST(PipelineOrder, InterleavedStage0OfTwoStagesTwoChunks) {
  // p = 2, v = 2, m = 4, stage 0: warm-up (2−0−1)·2 + (2−1)·2 = 4 forwards
  // F(0,c0) F(1,c0) F(0,c1) F(1,c1), then F(2,c0) B(0,c1) F(3,c0) B(1,c1) F(2,c1) B(0,c0)
  // F(3,c1) B(1,c0), then B(2,c1) B(3,c1) B(2,c0) B(3,c0).
  const std::vector<PipelineTask> order = pipeline_order(Schedule::kInterleaved, 0, 2, 4, 2);
  struct T {
    bool b;
    int mb, chunk;
  };
  const std::vector<T> want = {{false, 0, 0}, {false, 1, 0}, {false, 0, 1}, {false, 1, 1},
                               {false, 2, 0}, {true, 0, 1},  {false, 3, 0}, {true, 1, 1},
                               {false, 2, 1}, {true, 0, 0},  {false, 3, 1}, {true, 1, 0},
                               {true, 2, 1},  {true, 3, 1},  {true, 2, 0},  {true, 3, 0}};
  ASSERT_EQ(order.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(order[i].backward, want[i].b) << i;
    EXPECT_EQ(order[i].microbatch, want[i].mb) << i;
    EXPECT_EQ(order[i].chunk, want[i].chunk) << i;
  }
}

TEST(PipelineOrder, InterleavedWithMEqualPIsAllWarmup) {
  // Megatron: with m == p every forward is warm-up; all backwards follow.
  const int p = 4, v = 2;
  const std::vector<PipelineTask> order = pipeline_order(Schedule::kInterleaved, 3, p, p, v);
  expect_complete(order, p, v);
  EXPECT_EQ(leading_forwards(order), p * v);
}

TEST(PipelineOrder, InterleavedWithOneChunkIsOneFOneB) {
  for (int stage = 0; stage < 4; ++stage) {
    const std::vector<PipelineTask> a = pipeline_order(Schedule::kInterleaved, stage, 4, 8, 1);
    const std::vector<PipelineTask> b = pipeline_order(Schedule::kOneFOneB, stage, 4, 8, 1);
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) {
      EXPECT_EQ(a[i].backward, b[i].backward);
      EXPECT_EQ(a[i].microbatch, b[i].microbatch);
    }
  }
}

TEST(PipelineOrderDeathTest, InterleavedRequiresMicrobatchesDivisibleByStages) {
  EXPECT_DEATH(pipeline_order(Schedule::kInterleaved, 0, 4, 6, 2), "m % p == 0");
}

TEST(PipelineOrderDeathTest, StageOutOfRangeIsACheck) {
  EXPECT_DEATH(pipeline_order(Schedule::kOneFOneB, 4, 4, 8, 1), "stage < p");
}

}  // namespace
}  // namespace preflight
