#include "workload/schedule.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
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

TEST(PipelineOrder, CombinedOneFOneBPairsEachForwardWithAnEarlierBackward) {
  // Megatron's combined 1F1B without pipelining (combined_1f1b_schedule_for_no_pipelining):
  // F0, then (F1, B0), (F2, B1), (F3, B2) as overlapped pairs, then B3.
  const std::vector<PipelineTask> order = pipeline_order(Schedule::kOneFOneB, 0, 1, 4, 1, true);
  expect_complete(order, 4, 1);
  struct T {
    bool b, paired;
    int mb;
  };
  const std::vector<T> want = {{false, false, 0}, {false, true, 1}, {true, false, 0},
                               {false, true, 2},  {true, false, 1}, {false, true, 3},
                               {true, false, 2},  {true, false, 3}};
  ASSERT_EQ(order.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(order[i].backward, want[i].b) << i;
    EXPECT_EQ(order[i].paired, want[i].paired) << i;
    EXPECT_EQ(order[i].microbatch, want[i].mb) << i;
  }
  // With a pipeline: one more warm-up forward than 1F1B on every stage, and every forward
  // after the warm-up is paired with the backward that follows it.
  for (int stage = 0; stage < 4; ++stage) {
    const std::vector<PipelineTask> plain = pipeline_order(Schedule::kOneFOneB, stage, 4, 8, 1);
    const std::vector<PipelineTask> pairs =
        pipeline_order(Schedule::kOneFOneB, stage, 4, 8, 1, true);
    expect_complete(pairs, 8, 1);
    EXPECT_EQ(leading_forwards(pairs), leading_forwards(plain) + 1) << stage;
    for (size_t i = 0; i < pairs.size(); ++i) {
      if (!pairs[i].paired) continue;
      EXPECT_FALSE(pairs[i].backward) << stage << " " << i;
      ASSERT_LT(i + 1, pairs.size());
      EXPECT_TRUE(pairs[i + 1].backward) << stage << " " << i;
    }
  }
  // Interleaved (p = 2, v = 2, m = 4, stage 0): 4 + 1 warm-up forwards, then 3 pairs, each
  // led by a forward.
  const std::vector<PipelineTask> inter = pipeline_order(Schedule::kInterleaved, 0, 2, 4, 2, true);
  expect_complete(inter, 4, 2);
  EXPECT_EQ(leading_forwards(inter), 6);
  EXPECT_EQ(
      std::count_if(inter.begin(), inter.end(), [](const PipelineTask& t) { return t.paired; }), 3);
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

// --- split backwards: ZB-H1, ZB-H2, DualPipe ---

const char* pass_name(Pass p) {
  switch (p) {
    case Pass::kForward:
      return "F";
    case Pass::kBackward:
      return "BW";
    case Pass::kInputGrad:
      return "B";
    case Pass::kWeightGrad:
      return "W";
  }
  return "?";
}

// Every (micro-batch, chunk) in `want` runs one forward, then either one whole backward or a B
// and, later, its W; nothing else runs.
void expect_split_complete(const std::vector<PipelineTask>& order,
                           const std::vector<std::pair<int, int>>& want) {
  std::map<std::tuple<Pass, int, int>, int> pos;
  for (size_t i = 0; i < order.size(); ++i) {
    const PipelineTask& t = order[i];
    EXPECT_EQ(t.backward, t.pass != Pass::kForward) << i;
    EXPECT_TRUE(pos.emplace(std::make_tuple(t.pass, t.microbatch, t.chunk), i).second)
        << "duplicate " << pass_name(t.pass) << " mb " << t.microbatch << " chunk " << t.chunk;
  }
  size_t expected = 0;
  for (const auto& [mb, chunk] : want) {
    SCOPED_TRACE(testing::Message() << "mb " << mb << " chunk " << chunk);
    auto f = pos.find({Pass::kForward, mb, chunk});
    ASSERT_NE(f, pos.end());
    auto whole = pos.find({Pass::kBackward, mb, chunk});
    auto b = pos.find({Pass::kInputGrad, mb, chunk});
    auto w = pos.find({Pass::kWeightGrad, mb, chunk});
    if (whole != pos.end()) {
      EXPECT_EQ(b, pos.end());
      EXPECT_EQ(w, pos.end());
      EXPECT_LT(f->second, whole->second);
      expected += 2;
    } else {
      ASSERT_NE(b, pos.end());
      ASSERT_NE(w, pos.end());
      EXPECT_LT(f->second, b->second);
      EXPECT_LT(b->second, w->second);
      expected += 3;
    }
  }
  EXPECT_EQ(order.size(), expected);
}

std::vector<std::pair<int, int>> one_chunk(int m) {
  std::vector<std::pair<int, int>> want;
  for (int j = 0; j < m; ++j) want.push_back({j, 0});
  return want;
}

// Most micro-batch chunks whose forward ran and whose weight gradient did not.
int peak_in_flight(const std::vector<PipelineTask>& order) {
  int held = 0, peak = 0;
  for (const PipelineTask& t : order) {
    if (t.pass == Pass::kForward) peak = std::max(peak, ++held);
    if (t.pass == Pass::kBackward || t.pass == Pass::kWeightGrad) --held;
  }
  return peak;
}

int leading(const std::vector<PipelineTask>& order, Pass pass) {
  int n = 0;
  while (n < static_cast<int>(order.size()) && order[n].pass == pass) ++n;
  return n;
}

int trailing(const std::vector<PipelineTask>& order, Pass pass) {
  int n = 0;
  while (n < static_cast<int>(order.size()) && order[order.size() - 1 - n].pass == pass) ++n;
  return n;
}

TEST(PipelineOrder, ZeroBubbleH1Stage1Of4) {
  // p = 4, stage 1: 1F1B's p−i−1 = 2 warm-up forwards; at most i = 1 W pending, which runs
  // after the last B.
  const std::vector<PipelineTask> order = pipeline_order(Schedule::kZeroBubbleH1, 1, 4, 6, 1);
  std::string got;
  for (const PipelineTask& t : order) {
    got += std::string(pass_name(t.pass)) + std::to_string(t.microbatch) + " ";
  }
  EXPECT_EQ(got, "F0 F1 F2 B0 F3 B1 W0 F4 B2 W1 F5 B3 W2 B4 W3 B5 W4 W5 ");
}

TEST(PipelineOrder, ZeroBubbleH1KeepsOneFOneBWarmupAndPeakMemory) {
  const int p = 4;
  for (int m : {2, 4, 8, 13}) {
    for (int stage = 0; stage < p; ++stage) {
      SCOPED_TRACE(testing::Message() << "m " << m << " stage " << stage);
      const std::vector<PipelineTask> order =
          pipeline_order(Schedule::kZeroBubbleH1, stage, p, m, 1);
      expect_split_complete(order, one_chunk(m));
      // Same first backward as 1F1B: after min(p − i, m) forwards.
      EXPECT_EQ(leading(order, Pass::kForward), std::min(p - stage, m));
      // Stage i defers i weight passes past its last B (fewer when m is small).
      EXPECT_EQ(trailing(order, Pass::kWeightGrad), std::min(stage, m - 1) + 1);
      // Every stage holds at most p micro-batches (1F1B holds p − i), when m allows.
      EXPECT_EQ(peak_in_flight(order), std::min(p, m));
      // Micro-batches in order within each pass.
      int next[4] = {0, 0, 0, 0};
      for (const PipelineTask& t : order) {
        EXPECT_EQ(t.microbatch, next[static_cast<int>(t.pass)]++);
        EXPECT_EQ(t.chunk, 0);
        EXPECT_FALSE(t.paired);
      }
    }
  }
}

TEST(PipelineOrder, ZeroBubbleH2WarmsUpWith2PMinus1Forwards) {
  // ZB-H2 (Qi et al. 2024 §2.2): stage i runs 2(p−1−i) + 1 forwards before its first B and
  // defers up to 2i W passes; every stage holds up to 2p − 1 micro-batches.
  const int p = 4, m = 12;
  for (int stage = 0; stage < p; ++stage) {
    SCOPED_TRACE(stage);
    const std::vector<PipelineTask> order = pipeline_order(Schedule::kZeroBubbleH2, stage, p, m, 1);
    expect_split_complete(order, one_chunk(m));
    EXPECT_EQ(leading(order, Pass::kForward), 2 * (p - 1 - stage) + 1);
    EXPECT_EQ(trailing(order, Pass::kWeightGrad), 2 * stage + 1);
    EXPECT_EQ(peak_in_flight(order), 2 * p - 1);
  }
}

TEST(PipelineOrder, DualPipeTwoRanksFollowTheReferencePhases) {
  // p = 2, m = 4, both ranks are middle ranks. Rank 0 (phase 0 = chunk 0): step 2 F0 F2';
  // step 4 F1, B2' (not overlapped on a middle rank), then the pair F3'&B0; step 6 B3', then
  // B1 split; step 8 its W. (' = chunk 1, micro-batches 2 and 3.) Rank 1 mirrors it with the
  // chunks swapped.
  auto str = [](const std::vector<PipelineTask>& order) {
    std::string s;
    for (const PipelineTask& t : order) {
      s += std::string(pass_name(t.pass)) + std::to_string(t.microbatch) + "/" +
           std::to_string(t.chunk) + (t.paired ? "&" : "") + " ";
    }
    return s;
  };
  EXPECT_EQ(str(pipeline_order(Schedule::kDualPipe, 0, 2, 4, 1)),
            "F0/0 F2/1 F1/0 BW2/1 F3/1& BW0/0 BW3/1 B1/0 W1/0 ");
  EXPECT_EQ(str(pipeline_order(Schedule::kDualPipe, 1, 2, 4, 1)),
            "F2/1 F0/0 F3/1 BW0/0 F1/0& BW2/1 BW1/0 B3/1 W3/1 ");
}

TEST(PipelineOrder, DualPipeRunsEveryMicrobatchOnceWithPPlus1InFlight) {
  for (const auto& [p, m] : std::vector<std::pair<int, int>>{{2, 4}, {4, 8}, {8, 20}, {8, 40}}) {
    for (int rank = 0; rank < p; ++rank) {
      SCOPED_TRACE(testing::Message() << "p " << p << " m " << m << " rank " << rank);
      const std::vector<PipelineTask> order = pipeline_order(Schedule::kDualPipe, rank, p, m, 1);
      // Chunk 0 carries micro-batches 0 … m/2−1, chunk 1 the rest.
      std::vector<std::pair<int, int>> want;
      for (int j = 0; j < m; ++j) want.push_back({j, j < m / 2 ? 0 : 1});
      expect_split_complete(order, want);
      // DeepSeek-V3 Table 2: PP + 1 micro-batches' activations.
      EXPECT_EQ(peak_in_flight(order), p + 1);
      // A pair is a forward followed by a whole backward of the other chunk.
      for (size_t i = 0; i < order.size(); ++i) {
        if (!order[i].paired) continue;
        EXPECT_EQ(order[i].pass, Pass::kForward);
        ASSERT_LT(i + 1, order.size());
        EXPECT_EQ(order[i + 1].pass, Pass::kBackward);
        EXPECT_NE(order[i + 1].chunk, order[i].chunk);
      }
      // Each direction's micro-batches go in order within each pass.
      std::map<std::pair<int, bool>, int> next;
      for (const PipelineTask& t : order) {
        if (t.pass == Pass::kWeightGrad) continue;
        int& n = next[{t.chunk, t.backward}];
        EXPECT_EQ(t.microbatch, (t.chunk == 0 ? 0 : m / 2) + n++);
      }
    }
  }
  EXPECT_EQ(dualpipe_model_stage(1, 0, 8), 1);
  EXPECT_EQ(dualpipe_model_stage(1, 1, 8), 6);
}

// A timeline of the schedule on p equal stages with free communication: a forward waits for
// the same micro-batch's forward on the previous model chunk, a B (or whole backward) for the
// next chunk's B, a W only for its own stage's earlier passes; a DualPipe pair waits for both
// inputs and delivers both outputs when it ends. Times in arbitrary integer units.
struct PassTimes {
  int64_t f = 0, b = 0, w = 0;
  int64_t pair = -1;  // an overlapped forward-backward pair; default f + b + w (no overlap)
};

struct Timeline {
  int64_t makespan = 0;
  int64_t work = 0;       // least busy time of a stage; makespan − work is the most idle stage's
  int64_t most_work = 0;  // = work unless overlapped pairs make stages unequal
  int64_t worst_in_span = 0;  // most idle time of a stage between its first and last pass
};

Timeline simulate(Schedule schedule, int p, int m, int v, PassTimes t) {
  if (t.pair < 0) t.pair = t.f + t.b + t.w;
  const bool dual = schedule == Schedule::kDualPipe;
  // (pipe, position) of chunk c of stage s, and back.
  auto place = [&](int s, int c) {
    return dual ? std::make_pair(c, dualpipe_model_stage(s, c, p)) : std::make_pair(0, c * p + s);
  };
  const int length = dual ? p : p * v;
  std::vector<std::vector<PipelineTask>> orders;
  for (int s = 0; s < p; ++s) orders.push_back(pipeline_order(schedule, s, p, m, v));
  // End of (pipe, position, micro-batch, 0 forward output / 1 input gradient).
  std::map<std::tuple<int, int, int, int>, int64_t> done;
  // When the inputs of `task` on stage s are ready, or −1 if not yet.
  auto ready = [&](int s, const PipelineTask& task) -> int64_t {
    const auto [pipe, pos] = place(s, task.chunk);
    if (task.pass == Pass::kForward && pos > 0) {
      auto it = done.find({pipe, pos - 1, task.microbatch, 0});
      return it == done.end() ? -1 : it->second;
    }
    if ((task.pass == Pass::kBackward || task.pass == Pass::kInputGrad) && pos < length - 1) {
      auto it = done.find({pipe, pos + 1, task.microbatch, 1});
      return it == done.end() ? -1 : it->second;
    }
    return 0;
  };
  auto duration = [&](Pass pass) {
    switch (pass) {
      case Pass::kForward:
        return t.f;
      case Pass::kBackward:
        return t.b + t.w;
      case Pass::kInputGrad:
        return t.b;
      case Pass::kWeightGrad:
        return t.w;
    }
    return int64_t{0};
  };
  std::vector<size_t> next(p, 0);
  std::vector<int64_t> clock(p, 0), first(p, -1), busy(p, 0);
  for (bool progress = true; progress;) {
    progress = false;
    for (int s = 0; s < p; ++s) {
      while (next[s] < orders[s].size()) {
        const PipelineTask& a = orders[s][next[s]];
        const bool pair = a.paired;
        int64_t start = ready(s, a);
        int64_t d = duration(a.pass);
        if (pair) {
          const int64_t other = ready(s, orders[s][next[s] + 1]);
          start = other < 0 ? -1 : std::max(start, other);
          d = t.pair;
        }
        if (start < 0) break;
        start = std::max(start, clock[s]);
        if (first[s] < 0) first[s] = start;
        clock[s] = start + d;
        busy[s] += d;
        for (size_t k = 0; k < (pair ? 2u : 1u); ++k) {
          const PipelineTask& task = orders[s][next[s] + k];
          const auto [pipe, pos] = place(s, task.chunk);
          if (task.pass == Pass::kForward) done[{pipe, pos, task.microbatch, 0}] = clock[s];
          if (task.pass == Pass::kBackward || task.pass == Pass::kInputGrad) {
            done[{pipe, pos, task.microbatch, 1}] = clock[s];
          }
        }
        next[s] += pair ? 2 : 1;
        progress = true;
      }
    }
  }
  Timeline r;
  for (int s = 0; s < p; ++s) {
    EXPECT_EQ(next[s], orders[s].size()) << "deadlock on stage " << s;
    r.makespan = std::max(r.makespan, clock[s]);
    r.worst_in_span = std::max(r.worst_in_span, clock[s] - first[s] - busy[s]);
  }
  r.work = *std::min_element(busy.begin(), busy.end());
  r.most_work = *std::max_element(busy.begin(), busy.end());
  return r;
}

// (p, m) pairs and pass times the bubble formulas are checked at: equal passes, and W no
// longer than F or B (the zero-bubble paper's regime).
const std::vector<std::pair<int, int>> kShapes = {{2, 4}, {4, 8}, {4, 12}, {8, 16}, {8, 40}};
const std::vector<PassTimes> kTimes = {{10, 10, 10}, {10, 15, 7}, {20, 20, 10}, {10, 20, 10}};

TEST(ScheduleBubble, OneFOneBIsPMinus1TimesAWholePass) {
  // 1F1B: (p−1)(T_F + T_B + T_W), the whole iteration m(T_F + T_B + T_W) + bubble.
  for (const auto& [p, m] : kShapes) {
    for (const PassTimes& t : kTimes) {
      const Timeline r = simulate(Schedule::kOneFOneB, p, m, 1, t);
      EXPECT_EQ(r.work, m * (t.f + t.b + t.w));
      EXPECT_EQ(r.most_work, r.work);
      EXPECT_EQ(r.makespan - r.work, (p - 1) * (t.f + t.b + t.w)) << p << " " << m;
    }
  }
}

TEST(ScheduleBubble, ZeroBubbleH1IsPMinus1TimesFPlusBMinusW) {
  // Qi et al. 2024, Table 2: ZB-H1 (p−1)(T_F + T_B − T_W); 1/3 of 1F1B's when all are equal.
  for (const auto& [p, m] : kShapes) {
    for (const PassTimes& t : kTimes) {
      SCOPED_TRACE(testing::Message()
                   << "p " << p << " m " << m << " T " << t.f << "/" << t.b << "/" << t.w);
      const Timeline r = simulate(Schedule::kZeroBubbleH1, p, m, 1, t);
      EXPECT_EQ(r.work, m * (t.f + t.b + t.w));
      EXPECT_EQ(r.most_work, r.work);
      EXPECT_EQ(r.makespan - r.work, (p - 1) * (t.f + t.b - t.w));
      EXPECT_EQ(r.worst_in_span, (p - 1) * (t.f + t.b - t.w));
    }
  }
  const Timeline zb = simulate(Schedule::kZeroBubbleH1, 8, 16, 1, {10, 10, 10});
  const Timeline base = simulate(Schedule::kOneFOneB, 8, 16, 1, {10, 10, 10});
  EXPECT_EQ(3 * (zb.makespan - zb.work), base.makespan - base.work);
}

TEST(ScheduleBubble, ZeroBubbleH2IsPMinus1TimesFPlusBMinus2W) {
  // Qi et al. 2024, Table 2: ZB-H2 (p−1)(T_F + T_B − 2T_W) between a stage's first and last
  // pass (m >= 2p − 1): zero when all are equal. One isolated iteration still carries the
  // parallelogram's skew, (p−1)·max(T_F, T_F + T_B − 2T_W).
  for (const auto& [p, m] : kShapes) {
    for (const PassTimes& t : kTimes) {
      SCOPED_TRACE(testing::Message()
                   << "p " << p << " m " << m << " T " << t.f << "/" << t.b << "/" << t.w);
      const Timeline r = simulate(Schedule::kZeroBubbleH2, p, m, 1, t);
      EXPECT_EQ(r.worst_in_span, (p - 1) * (t.f + t.b - 2 * t.w));
      EXPECT_EQ(r.makespan - r.work, (p - 1) * std::max(t.f, t.f + t.b - 2 * t.w));
    }
  }
}

TEST(ScheduleBubble, DualPipeMatchesDeepSeekV3Table2) {
  // DeepSeek-V3 Table 2: (PP/2 − 1)(F&B + B − 3W), B a whole backward, F&B an overlapped pair;
  // the bubble of the most idle rank. Exact with equal passes; with Preflight's single compute
  // stream F&B = F + B. When pairs overlap, the middle ranks (whose first pair runs
  // unoverlapped) work longer than the others.
  for (const auto& [p, m] : kShapes) {
    for (const int64_t pair : {int64_t{30}, int64_t{25}, int64_t{20}}) {
      SCOPED_TRACE(testing::Message() << "p " << p << " m " << m << " F&B " << pair);
      const PassTimes t{10, 10, 10, pair};
      const Timeline r = simulate(Schedule::kDualPipe, p, m, 1, t);
      EXPECT_EQ(r.makespan - r.work, (p / 2 - 1) * (pair + (t.b + t.w) - 3 * t.w));
    }
  }
  // Against 1F1B's (p−1)(F + B) and ZB-H1's (p−1)(F + B − 2W) (whole B) on p = 8, equal
  // passes of 10: 210, 70 and DualPipe's 3·(30 + 20 − 30) = 60.
  const PassTimes t{10, 10, 10};
  const Timeline dual = simulate(Schedule::kDualPipe, 8, 40, 1, t);
  EXPECT_EQ(dual.makespan - dual.work, 60);
  EXPECT_EQ(simulate(Schedule::kZeroBubbleH1, 8, 40, 1, t).makespan - dual.work, 70);
  EXPECT_EQ(simulate(Schedule::kOneFOneB, 8, 40, 1, t).makespan - dual.work, 210);
}

TEST(PipelineOrderDeathTest, DualPipeRequiresEvenStagesAndTwicePMicrobatches) {
  EXPECT_DEATH(pipeline_order(Schedule::kDualPipe, 0, 3, 12, 1), "p % 2 == 0");
  EXPECT_DEATH(pipeline_order(Schedule::kDualPipe, 0, 4, 6, 1), "m >= 2 \\* p");
  EXPECT_DEATH(pipeline_order(Schedule::kZeroBubbleH1, 0, 4, 8, 2), "v == 1");
}

TEST(PipelineOrderDeathTest, InterleavedRequiresMicrobatchesDivisibleByStages) {
  EXPECT_DEATH(pipeline_order(Schedule::kInterleaved, 0, 4, 6, 2), "m % p == 0");
}

TEST(PipelineOrderDeathTest, StageOutOfRangeIsACheck) {
  EXPECT_DEATH(pipeline_order(Schedule::kOneFOneB, 4, 4, 8, 1), "stage < p");
}

}  // namespace
}  // namespace preflight
