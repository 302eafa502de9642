#include "exec/executor.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "config/loader.h"
#include "network/backends.h"
#include "tests/fakes.h"
#include "tests/load_scenario.h"
#include "workload/generator.h"
#include "workload/layer_ops.h"
#include "workload/schedule.h"

namespace preflight {
namespace {

SimTime us(double v) { return SimTime::microseconds(v); }

Step run_step(int block, const PipelineTask& t) {
  Step s;
  s.kind = StepKind::kRun;
  s.block = block;
  s.microbatch = t.microbatch;
  s.chunk = t.chunk;
  s.backward = t.backward;
  return s;
}

Step p2p_step(StepKind kind, int peer, int64_t tag, const PipelineTask& t) {
  Step s;
  s.kind = kind;
  s.peer = peer;
  s.tag = tag;
  s.bytes = Bytes(1'000'000);
  s.microbatch = t.microbatch;
  s.chunk = t.chunk;
  s.backward = t.backward;
  return s;
}

// Ends a stage's program with the host's wait for the GPU and adds it to `w`.
void add_program(Program prog, Workload& w) {
  Step sync;
  sync.kind = StepKind::kHostSync;
  prog.steps.push_back(sync);
  w.stages.push_back(std::move(prog));
}

// Runs `w` with each named kernel taking its time (every other one 0), free communication and
// no launch overhead.
ExecutionResult run_kernels(const Workload& w,
                            const std::vector<std::pair<std::string, SimTime>>& times) {
  FakeComputeModel compute(SimTime::zero());
  for (const auto& [name, t] : times) compute.set(name, t);
  const FakeNetwork network;
  const CollectiveModel collectives(free_collectives_cluster(), network);
  return execute(w, compute, collectives, JobGroups{}, ExecutorOptions{});
}

// p perfectly equal pipeline stages with v model chunks each, as the generator lays them out
// but without the embedding and loss head: the forward of a chunk is one kernel "f", its
// backward one kernel "b"; activations go forward and gradients backward between consecutive
// chunks (chunk k = c·p + stage), nothing else.
Workload equal_stage_pipeline(Schedule schedule, int p, int m, int v) {
  Workload w;
  w.microbatches = m;
  w.layers_per_chunk = 1;
  w.blocks.push_back(Block{"fwd", {memory_op("f", 0)}});
  w.blocks.push_back(Block{"bwd", {memory_op("b", 0)}});
  const int chunks = p * v;
  auto tag = [chunks](int mb, int k, bool backward) {
    return (static_cast<int64_t>(mb) * chunks + k) * 2 + (backward ? 1 : 0);
  };
  for (int stage = 0; stage < p; ++stage) {
    Program prog;
    prog.stage = stage;
    const int prev = (stage - 1 + p) % p, next = (stage + 1) % p;
    for (const PipelineTask& t : pipeline_order(schedule, stage, p, m, v)) {
      const int k = t.chunk * p + stage;
      if (!t.backward) {
        if (k > 0) {
          prog.steps.push_back(p2p_step(StepKind::kRecv, prev, tag(t.microbatch, k, false), t));
        }
        prog.steps.push_back(run_step(0, t));
        if (k < chunks - 1) {
          prog.steps.push_back(p2p_step(StepKind::kSend, next, tag(t.microbatch, k + 1, false), t));
        }
      } else {
        if (k < chunks - 1) {
          prog.steps.push_back(p2p_step(StepKind::kRecv, next, tag(t.microbatch, k, true), t));
        }
        prog.steps.push_back(run_step(1, t));
        if (k > 0) {
          prog.steps.push_back(p2p_step(StepKind::kSend, prev, tag(t.microbatch, k - 1, true), t));
        }
      }
    }
    add_program(std::move(prog), w);
  }
  return w;
}

// Runs `w` with a forward chunk costing t_f/v and a backward chunk t_b/v, free communication
// and no launch overhead.
ExecutionResult run_pipeline(const Workload& w, SimTime t_f, SimTime t_b, int v) {
  return run_kernels(
      w, {{"f", SimTime::picoseconds(t_f.ps() / v)}, {"b", SimTime::picoseconds(t_b.ps() / v)}});
}

void expect_breakdowns_add_up(const ExecutionResult& r) {
  SimTime latest;
  for (size_t i = 0; i < r.stages.size(); ++i) {
    const StageResult& st = r.stages[i];
    EXPECT_EQ(st.breakdown.total(), st.end) << "stage " << i;
    for (SimTime part : {st.breakdown.compute, st.breakdown.host_overhead, st.breakdown.tp_comm,
                         st.breakdown.pp_comm, st.breakdown.dp_comm, st.breakdown.optimizer,
                         st.breakdown.bubble}) {
      EXPECT_GE(part, SimTime::zero()) << "stage " << i;
    }
    EXPECT_LE(st.end, r.iteration_time);
    latest = max(latest, st.end);
  }
  EXPECT_EQ(latest, r.iteration_time);
  ASSERT_LT(static_cast<size_t>(r.critical_stage), r.stages.size());
  EXPECT_EQ(r.stages[r.critical_stage].end, r.iteration_time);
}

TEST(Execute, OneFOneBBubbleIsPMinus1OverMPlusPMinus1) {
  // Equal stages, free communication: T = (m + p − 1)·(t_f + t_b); p = 4, m = 8, t_f = 10 us,
  // t_b = 20 us: 11·30 = 330 us. Stage 0 idles (p − 1)·(t_f + t_b) = 90 us: 3/11 of T.
  const int p = 4, m = 8;
  const ExecutionResult r =
      run_pipeline(equal_stage_pipeline(Schedule::kOneFOneB, p, m, 1), us(10), us(20), 1);
  EXPECT_EQ(r.iteration_time, us(330));
  ASSERT_EQ(r.stages.size(), 4u);
  const Breakdown& b0 = r.stages[0].breakdown;
  EXPECT_EQ(b0.compute, us(240));  // m·(t_f + t_b)
  EXPECT_EQ(b0.bubble, us(90));
  EXPECT_DOUBLE_EQ(b0.bubble.to_seconds() / r.iteration_time.to_seconds(),
                   (p - 1.0) / (m + p - 1.0));
  // Every stage computes m·(t_f + t_b); stage i ends i·t_b early, having waited the rest.
  for (int i = 0; i < p; ++i) {
    const StageResult& st = r.stages[i];
    EXPECT_EQ(st.breakdown.compute, us(240)) << i;
    EXPECT_EQ(st.busy_compute, us(240)) << i;
    EXPECT_EQ(st.end, us(330) - us(20) * i) << i;
    EXPECT_EQ(st.breakdown.pp_comm, SimTime::zero()) << i;
    EXPECT_EQ(st.breakdown.host_overhead, SimTime::zero()) << i;
  }
  expect_breakdowns_add_up(r);
  EXPECT_EQ(r.ops_executed, p * m * 2);
}

// The split-backward schedules (ZB-H1, ZB-H2, DualPipe) on p equal stages, laid out as the
// generator does: kernels "f" (forward), "b" (B, the input gradient), "w" (W, the weight
// gradient); a whole backward runs "b" then "w"; a DualPipe pair receives both inputs, runs
// both passes, then sends both outputs. DualPipe's chunk c of rank i is model stage
// dualpipe_model_stage(i, c, p), chunk 1 flowing from rank p−1 down to rank 0.
Workload split_stage_pipeline(Schedule schedule, int p, int m) {
  Workload w;
  w.microbatches = m;
  w.layers_per_chunk = 1;
  w.blocks.push_back(Block{"fwd", {memory_op("f", 0)}});
  w.blocks.push_back(Block{"bwd.input", {memory_op("b", 0)}});
  w.blocks.push_back(Block{"bwd", {memory_op("w", 0)}});
  const bool dual = schedule == Schedule::kDualPipe;
  auto tag = [p](int mb, int k, bool backward) {
    return (static_cast<int64_t>(mb) * p + k) * 2 + (backward ? 1 : 0);
  };
  for (int stage = 0; stage < p; ++stage) {
    Program prog;
    prog.stage = stage;
    const std::vector<PipelineTask> order = pipeline_order(schedule, stage, p, m, 1);
    auto k_of = [&](const PipelineTask& t) {
      return dual ? dualpipe_model_stage(stage, t.chunk, p) : stage;
    };
    auto from = [&](const PipelineTask& t) { return dual && t.chunk == 1 ? stage + 1 : stage - 1; };
    auto to = [&](const PipelineTask& t) { return dual && t.chunk == 1 ? stage - 1 : stage + 1; };
    auto grad = [](const PipelineTask& t) {
      return t.pass == Pass::kBackward || t.pass == Pass::kInputGrad;
    };
    auto receive = [&](const PipelineTask& t) {
      const int k = k_of(t);
      if (t.pass == Pass::kForward && k > 0) {
        prog.steps.push_back(p2p_step(StepKind::kRecv, from(t), tag(t.microbatch, k, false), t));
      }
      if (grad(t) && k < p - 1) {
        prog.steps.push_back(p2p_step(StepKind::kRecv, to(t), tag(t.microbatch, k, true), t));
      }
    };
    auto compute = [&](const PipelineTask& t) {
      if (t.pass == Pass::kForward) prog.steps.push_back(run_step(0, t));
      if (grad(t)) prog.steps.push_back(run_step(1, t));
      if (t.pass == Pass::kBackward || t.pass == Pass::kWeightGrad) {
        prog.steps.push_back(run_step(2, t));
      }
    };
    auto send = [&](const PipelineTask& t) {
      const int k = k_of(t);
      if (t.pass == Pass::kForward && k < p - 1) {
        prog.steps.push_back(p2p_step(StepKind::kSend, to(t), tag(t.microbatch, k + 1, false), t));
      }
      if (grad(t) && k > 0) {
        prog.steps.push_back(p2p_step(StepKind::kSend, from(t), tag(t.microbatch, k - 1, true), t));
      }
    };
    for (size_t i = 0; i < order.size(); ++i) {
      const size_t n = order[i].paired ? 2 : 1;
      for (size_t j = 0; j < n; ++j) receive(order[i + j]);
      for (size_t j = 0; j < n; ++j) compute(order[i + j]);
      for (size_t j = 0; j < n; ++j) send(order[i + j]);
      i += n - 1;
    }
    add_program(std::move(prog), w);
  }
  return w;
}

ExecutionResult run_split_pipeline(const Workload& w, SimTime t_f, SimTime t_b, SimTime t_w) {
  return run_kernels(w, {{"f", t_f}, {"b", t_b}, {"w", t_w}});
}

TEST(Execute, ZeroBubbleSchedulesMatchTheirClosedForms) {
  // p = 4, m = 8, T_F = 10, T_B = 12, T_W = 8 us (W no longer than F or B), free comm. Every
  // stage computes m(T_F + T_B + T_W) = 240 us. Qi et al. 2024, Table 2:
  //   1F1B  + (p−1)(T_F + T_B + T_W) = 90 us → 330 us
  //   ZB-H1 + (p−1)(T_F + T_B − T_W) = 42 us → 282 us
  //   ZB-H2 + (p−1)·max(T_F, T_F + T_B − 2T_W) = 30 us → 270 us in one isolated iteration
  //         (its bubble between a stage's first and last pass, (p−1)(T_F + T_B − 2T_W) = 18 us,
  //         plus the parallelogram's skew).
  const int p = 4, m = 8;
  const SimTime f = us(10), b = us(12), wg = us(8);
  const ExecutionResult base =
      run_pipeline(equal_stage_pipeline(Schedule::kOneFOneB, p, m, 1), f, b + wg, 1);
  EXPECT_EQ(base.iteration_time, us(330));
  const ExecutionResult h1 =
      run_split_pipeline(split_stage_pipeline(Schedule::kZeroBubbleH1, p, m), f, b, wg);
  EXPECT_EQ(h1.iteration_time, us(282));
  const ExecutionResult h2 =
      run_split_pipeline(split_stage_pipeline(Schedule::kZeroBubbleH2, p, m), f, b, wg);
  EXPECT_EQ(h2.iteration_time, us(270));
  for (const ExecutionResult* r : {&h1, &h2}) {
    expect_breakdowns_add_up(*r);
    for (const StageResult& st : r->stages) EXPECT_EQ(st.breakdown.compute, us(240));
    EXPECT_LT(r->stages[r->critical_stage].breakdown.bubble,
              base.stages[base.critical_stage].breakdown.bubble);
  }
  // ZB-H1 with equal passes: a third of 1F1B's bubble.
  const ExecutionResult equal =
      run_split_pipeline(split_stage_pipeline(Schedule::kZeroBubbleH1, p, m), f, f, f);
  EXPECT_EQ(equal.iteration_time - us(240), us(30));
  EXPECT_EQ(equal.stages[0].breakdown.bubble, us(30));
}

TEST(Execute, DualPipeMatchesDeepSeekV3Table2) {
  // p = 8, m = 20 (10 each way), equal passes of 10 us, free comm: each rank computes
  // m·30 = 600 us. DeepSeek-V3 Table 2: (p/2 − 1)(F&B + B − 3W) with a whole backward B = 20 us
  // and, on one compute stream, F&B = F + B = 30 us: 3·(30 + 20 − 30) = 60 us → 660 us.
  // 1F1B: 7·30 = 210 us → 810 us.
  const int p = 8, m = 20;
  const SimTime t = us(10);
  const ExecutionResult r =
      run_split_pipeline(split_stage_pipeline(Schedule::kDualPipe, p, m), t, t, t);
  EXPECT_EQ(r.iteration_time, us(660));
  for (const StageResult& st : r.stages) EXPECT_EQ(st.breakdown.compute, us(600));
  expect_breakdowns_add_up(r);
  const ExecutionResult base =
      run_pipeline(equal_stage_pipeline(Schedule::kOneFOneB, p, m, 1), t, t + t, 1);
  EXPECT_EQ(base.iteration_time, us(810));
}

TEST(Execute, GpipeTakesAsLongAsOneFOneBWithEqualStages) {
  // GPipe: forwards fill in (m + p − 1)·t_f, backwards drain in (m + p − 1)·t_b: 330 us too.
  const ExecutionResult r =
      run_pipeline(equal_stage_pipeline(Schedule::kGpipe, 4, 8, 1), us(10), us(20), 1);
  EXPECT_EQ(r.iteration_time, us(330));
  EXPECT_EQ(r.stages[0].breakdown.bubble, us(90));
  expect_breakdowns_add_up(r);
}

TEST(Execute, InterleavedShrinksTheBubbleByV) {
  // v = 2 chunks of half the work: the bubble is (p − 1)·(t_f + t_b)/v = 45 us, so
  // T = m·(t_f + t_b) + 45 us = 285 us, a bubble of (p − 1)/(v·m) = 3/16 of the ideal time
  // against 1F1B's (p − 1)/m = 3/8.
  const int p = 4, m = 8, v = 2;
  const ExecutionResult r =
      run_pipeline(equal_stage_pipeline(Schedule::kInterleaved, p, m, v), us(10), us(20), v);
  EXPECT_EQ(r.iteration_time, us(285));
  const SimTime ideal = us(240);
  EXPECT_DOUBLE_EQ((r.iteration_time - ideal).to_seconds() / ideal.to_seconds(),
                   (p - 1.0) / (v * m));
  EXPECT_EQ(r.stages[0].breakdown.compute, ideal);
  EXPECT_EQ(r.stages[0].breakdown.bubble, us(45));
  expect_breakdowns_add_up(r);
  const ExecutionResult one_f_one_b =
      run_pipeline(equal_stage_pipeline(Schedule::kOneFOneB, p, m, 1), us(10), us(20), 1);
  EXPECT_LT(r.iteration_time, one_f_one_b.iteration_time);
}

TEST(Execute, ExposedTransferIsPipelineCommunication) {
  // Two stages, one micro-batch, each p2p transfer takes c = α + β_s + S/B = 0 + 1 MB / 1 GB/s
  // = 1 ms: T = t_f + c + t_f + t_b + c + t_b = 2·10 + 2·20 us + 2 ms = 2.06 ms.
  const Workload w = equal_stage_pipeline(Schedule::kOneFOneB, 2, 1, 1);
  FakeComputeModel compute(SimTime::zero());
  compute.set("f", us(10));
  compute.set("b", us(20));
  const FakeNetwork network(Bandwidth::gigabytes_per_second(1), Bandwidth::gigabytes_per_second(1),
                            SimTime::zero());
  const CollectiveModel collectives(free_collectives_cluster(), network);
  const ExecutionResult r = execute(w, compute, collectives, JobGroups{}, ExecutorOptions{});
  EXPECT_EQ(r.iteration_time, us(2060));
  // Stage 0 computes 30 us and waits 2030 us for stage 1; at least the gradient's own transfer
  // (c) is exposed PP time, the wait for stage 1 to produce it is bubble.
  const Breakdown& b0 = r.stages[0].breakdown;
  EXPECT_EQ(b0.compute, us(30));
  EXPECT_EQ(b0.bubble + b0.pp_comm, us(2030));
  EXPECT_GE(b0.pp_comm, us(1000));
  EXPECT_GE(b0.bubble, us(30));
  // Stage 1 waits t_f for stage 0, then c for the activation on the wire.
  const Breakdown& b1 = r.stages[1].breakdown;
  EXPECT_EQ(b1.bubble, us(10));
  EXPECT_GE(b1.pp_comm, us(1000));
  // Stage 1's host waits for its gradient send to land: it ends when the transfer does.
  EXPECT_EQ(r.stages[1].end, us(1000 + 10 + 30 + 1000));
  expect_breakdowns_add_up(r);
}

TEST(Execute, AsyncCollectiveOverlapsTheNextKernelUntilWaited) {
  // One stage: an async TP all-reduce (n = 2, S = 1 MB at busBw 10 GB/s: 1·1e6/1e10 = 100 us),
  // a 30 us kernel that overlaps it, then a kernel that waits for it: the last 70 us of the
  // all-reduce are exposed TP time. T = 100 + 20 = 120 us.
  Workload w;
  Op ar = collective_op("tp.allreduce.grad", CollectiveKind::kAllReduce, GroupKind::kTensor,
                        Bytes(1'000'000));
  ar.async = true;
  Op overlap = memory_op("overlap", 0);
  Op waiter = memory_op("waiter", 0);
  waiter.wait_comm = true;
  w.blocks.push_back(Block{"b", {ar, overlap, waiter}});
  Program prog;
  Step s;
  s.kind = StepKind::kRun;
  s.block = 0;
  prog.steps.push_back(s);
  w.stages.push_back(prog);
  FakeComputeModel compute(SimTime::zero());
  compute.set("overlap", us(30));
  compute.set("waiter", us(20));
  const FakeNetwork network(Bandwidth::gigabytes_per_second(10),
                            Bandwidth::gigabytes_per_second(10), SimTime::zero());
  const CollectiveModel collectives(free_collectives_cluster(), network);
  JobGroups groups;
  groups.tp = place_group(2, 1, 8);
  const ExecutionResult r = execute(w, compute, collectives, groups, ExecutorOptions{});
  EXPECT_EQ(r.iteration_time, us(120));
  const Breakdown& b = r.stages[0].breakdown;
  EXPECT_EQ(b.compute, us(50));
  EXPECT_EQ(b.tp_comm, us(70));
  expect_breakdowns_add_up(r);
  ASSERT_EQ(r.stages[0].collectives.size(), 1u);
  EXPECT_EQ(r.stages[0].collectives[0].count, 1);
  EXPECT_EQ(r.stages[0].collectives[0].time, us(100));
}

// One stage: a 50 us kernel, then a DP all-reduce (n = 2, S = 1 MB at busBw 10 GB/s:
// 2(n−1)/n · S/B = 100 us) that nothing waits for, issued from the block (`in_block`: the TP
// stream, as the SimAI import issues weight-gradient comm) or as a DP bucket step; the iteration
// ends when it does.
ExecutionResult run_trailing_dp_collective(bool in_block, SimTime launch) {
  Workload w;
  Op ar =
      collective_op("dp.allreduce", CollectiveKind::kAllReduce, GroupKind::kData, Bytes(1'000'000));
  ar.category = Category::kDpComm;
  ar.async = true;
  Block b{"b", {memory_op("k", 0)}};
  if (in_block) b.ops.push_back(ar);
  w.blocks.push_back(b);
  Program prog;
  Step run;
  run.kind = StepKind::kRun;
  run.block = 0;
  prog.steps.push_back(run);
  if (!in_block) {
    Step bucket;
    bucket.kind = StepKind::kCommAsync;
    bucket.op = ar;
    prog.steps.push_back(bucket);
  }
  Step sync;
  sync.kind = StepKind::kHostSync;
  prog.steps.push_back(sync);
  w.stages.push_back(prog);
  FakeComputeModel compute(us(50));
  const FakeNetwork network(Bandwidth::gigabytes_per_second(10),
                            Bandwidth::gigabytes_per_second(10), SimTime::zero());
  const CollectiveModel collectives(free_collectives_cluster(), network);
  JobGroups groups;
  groups.dp = place_group(2, 1, 8);
  ExecutorOptions options;
  options.launch_overhead = launch;
  return execute(w, compute, collectives, groups, options);
}

TEST(Execute, WaitForATrailingDpCollectiveIsExposedDpComm) {
  for (bool in_block : {true, false}) {
    // No launch overhead: T = 50 + 100 us; the 100 us after the kernel are exposed DP
    // communication, none of it host time.
    ExecutionResult r = run_trailing_dp_collective(in_block, SimTime::zero());
    EXPECT_EQ(r.iteration_time, us(150)) << in_block;
    const Breakdown& b = r.stages[0].breakdown;
    EXPECT_EQ(b.compute, us(50)) << in_block;
    EXPECT_EQ(b.dp_comm, us(100)) << in_block;
    EXPECT_EQ(b.host_overhead, SimTime::zero()) << in_block;
    expect_breakdowns_add_up(r);
    // 10 us per launch: the kernel starts at 10 us, the collective at 60 us (after the kernel);
    // host time is the first launch only.
    r = run_trailing_dp_collective(in_block, us(10));
    EXPECT_EQ(r.iteration_time, us(160)) << in_block;
    EXPECT_EQ(r.stages[0].breakdown.dp_comm, us(100)) << in_block;
    EXPECT_EQ(r.stages[0].breakdown.host_overhead, us(10)) << in_block;
    expect_breakdowns_add_up(r);
  }
}

// Two stages: stage 0 runs "short", stage 1 "long", then both join the tied-embedding all-reduce
// of 1 MB (and, with `host_sync`, the host waits for the GPU after it).
Workload embedding_allreduce_workload(bool host_sync) {
  Workload w;
  w.blocks.push_back(Block{"short", {memory_op("short", 0)}});
  w.blocks.push_back(Block{"long", {memory_op("long", 0)}});
  for (int stage = 0; stage < 2; ++stage) {
    Program prog;
    prog.stage = stage;
    Step r;
    r.kind = StepKind::kRun;
    r.block = stage;
    prog.steps.push_back(r);
    Step c;
    c.kind = StepKind::kCollective;
    c.tag = -1;
    c.op = collective_op("embedding.allreduce", CollectiveKind::kAllReduce, GroupKind::kEmbedding,
                         Bytes(1'000'000));
    prog.steps.push_back(c);
    if (host_sync) {
      Step sync;
      sync.kind = StepKind::kHostSync;
      prog.steps.push_back(sync);
    }
    w.stages.push_back(prog);
  }
  return w;
}

TEST(Execute, CrossStageCollectiveStartsWhenTheLastMemberArrives) {
  // Stage 0 arrives at the tied-embedding all-reduce at 10 us, stage 1 at 50 us; the all-reduce
  // (n = 2, 1 MB at 10 GB/s = 100 us) runs for both from 50 us: both end at 150 us, stage 0
  // after 40 us of bubble.
  const Workload w = embedding_allreduce_workload(/*host_sync=*/true);
  FakeComputeModel compute(SimTime::zero());
  compute.set("short", us(10));
  compute.set("long", us(50));
  const FakeNetwork network(Bandwidth::gigabytes_per_second(10),
                            Bandwidth::gigabytes_per_second(10), SimTime::zero());
  const CollectiveModel collectives(free_collectives_cluster(), network);
  JobGroups groups;
  groups.embedding = place_group(2, 8, 8);
  const ExecutionResult r = execute(w, compute, collectives, groups, ExecutorOptions{});
  EXPECT_EQ(r.iteration_time, us(150));
  EXPECT_EQ(r.stages[0].end, us(150));
  EXPECT_EQ(r.stages[1].end, us(150));
  EXPECT_EQ(r.stages[0].breakdown.bubble, us(40));
  EXPECT_EQ(r.stages[0].breakdown.dp_comm, us(100));
  EXPECT_EQ(r.stages[1].breakdown.bubble, SimTime::zero());
  EXPECT_EQ(r.stages[1].breakdown.dp_comm, us(100));
  expect_breakdowns_add_up(r);
}

// One GPU: no TP, PP or DP, so the program is kernels only.
const char* kOneGpu = R"(
model: {layers: 4, hidden: 1024, heads: 16, vocab: 50257}
cluster: {preset: dgx-a100, nodes: 1, gpus_per_node: 1}
training: {seq_len: 1024, global_batch: 2, micro_batch: 1}
parallelism: {tp: 1, pp: 1}
)";

TEST(Execute, HostBoundIterationIsOpsTimesLaunchOverhead) {
  // Kernels of 1 us launched every 1 ms: kernel i starts at i·L, so T = N·L + 1 us exactly,
  // and the device is idle waiting for the host for all but N·1 us.
  const Scenario s = load(kOneGpu);
  const Workload w = generate_workload(s);
  const FakeComputeModel compute(us(1));
  const FakeNetwork network;
  const CollectiveModel collectives(free_collectives_cluster(), network);
  ExecutorOptions options;
  options.launch_overhead = us(1000);
  const ExecutionResult r = execute(w, compute, collectives, place_job_groups(s), options);
  const int64_t n = r.ops_executed;
  ASSERT_GT(n, 100);
  EXPECT_EQ(r.iteration_time, us(1000) * n + us(1));
  EXPECT_EQ(r.stages[0].breakdown.compute + r.stages[0].breakdown.optimizer, us(1) * n);
  EXPECT_EQ(r.stages[0].breakdown.host_overhead, us(1000) * n + us(1) - us(1) * n);
  expect_breakdowns_add_up(r);
}

TEST(Execute, HostTimeOfAnOpDelaysTheNextLaunch) {
  // Every kernel carries 1 ms of host work beyond its launch (a per-expert loop): with no
  // launch overhead the iteration is host-bound just the same, N·1 ms + 1 us.
  Workload w = generate_workload(load(kOneGpu));
  for (Block& b : w.blocks) {
    for (Op& op : b.ops) op.host_time = us(1000);
  }
  const FakeComputeModel compute(us(1));
  const FakeNetwork network;
  const CollectiveModel collectives(free_collectives_cluster(), network);
  const ExecutionResult r =
      execute(w, compute, collectives, place_job_groups(load(kOneGpu)), ExecutorOptions{});
  const int64_t n = r.ops_executed;
  ASSERT_GT(n, 100);
  EXPECT_EQ(r.iteration_time, us(1000) * n + us(1));
  EXPECT_EQ(r.stages[0].breakdown.host_overhead, us(1000) * n + us(1) - us(1) * n);
  expect_breakdowns_add_up(r);
}

TEST(Execute, HostBoundWithTheRooflineModel) {
  // A 1 s launch overhead dwarfs every kernel of this small model: T ≈ N·L within 0.1%.
  const Scenario s = load(kOneGpu);
  const Workload w = generate_workload(s);
  const std::unique_ptr<ComputeModel> compute =
      make_roofline_model(s.cluster.gpu, s.training.precision);
  StatusOr<std::unique_ptr<NetworkBackend>> net = make_network_backend("analytical", s.cluster);
  ASSERT_TRUE(net.ok());
  const CollectiveModel collectives(s.cluster, **net);
  ExecutorOptions options;
  options.launch_overhead = SimTime::seconds(1);
  const ExecutionResult r = execute(w, *compute, collectives, place_job_groups(s), options);
  const double n = static_cast<double>(r.ops_executed);
  EXPECT_NEAR(r.iteration_time.to_seconds() / n, 1.0, 1e-3);
  EXPECT_GT(r.stages[0].breakdown.host_overhead.to_seconds(), 0.99 * n);
  expect_breakdowns_add_up(r);
}

ExecutionResult execute_scenario(const Scenario& s, TraceLevel trace = TraceLevel::kNone) {
  const Workload w = generate_workload(s);
  const std::unique_ptr<ComputeModel> compute =
      make_roofline_model(s.cluster.gpu, s.training.precision);
  StatusOr<std::unique_ptr<NetworkBackend>> net = make_network_backend("analytical", s.cluster);
  EXPECT_TRUE(net.ok());
  const CollectiveModel collectives(s.cluster, **net);
  ExecutorOptions options;
  options.launch_overhead = s.cluster.gpu.calibration.launch_overhead;
  options.trace = trace;
  return execute(w, *compute, collectives, place_job_groups(s), options);
}

TEST(Execute, DefaultScenarioIsDeterministic) {
  const Scenario s = load("");
  const ExecutionResult a = execute_scenario(s);
  const ExecutionResult b = execute_scenario(s);
  EXPECT_GT(a.iteration_time, SimTime::zero());
  EXPECT_EQ(a.iteration_time, b.iteration_time);
  EXPECT_EQ(a.critical_stage, b.critical_stage);
  EXPECT_EQ(a.events, b.events);
  EXPECT_EQ(a.ops_executed, b.ops_executed);
  ASSERT_EQ(a.stages.size(), 16u);
  ASSERT_EQ(b.stages.size(), 16u);
  for (size_t i = 0; i < a.stages.size(); ++i) {
    const Breakdown& x = a.stages[i].breakdown;
    const Breakdown& y = b.stages[i].breakdown;
    EXPECT_EQ(a.stages[i].end, b.stages[i].end) << i;
    EXPECT_EQ(x.compute, y.compute) << i;
    EXPECT_EQ(x.host_overhead, y.host_overhead) << i;
    EXPECT_EQ(x.tp_comm, y.tp_comm) << i;
    EXPECT_EQ(x.pp_comm, y.pp_comm) << i;
    EXPECT_EQ(x.dp_comm, y.dp_comm) << i;
    EXPECT_EQ(x.optimizer, y.optimizer) << i;
    EXPECT_EQ(x.bubble, y.bubble) << i;
  }
  expect_breakdowns_add_up(a);
}

TEST(Execute, BreakdownSumsToEachStageEndAcrossStrategies) {
  const std::vector<std::vector<std::string>> variants = {
      {},
      {"parallelism.schedule=gpipe"},
      {"parallelism.schedule=interleaved", "parallelism.vpp=2"},
      {"parallelism.schedule=zb_h1"},
      {"parallelism.schedule=zb_h2", "parallelism.overlap_grad_reduce=false"},
      {"parallelism.schedule=dualpipe"},
      {"parallelism.schedule=dualpipe", "parallelism.distributed_optimizer=false"},
      {"parallelism.overlap_grad_reduce=false"},
      {"parallelism.distributed_optimizer=false", "parallelism.overlap_grad_reduce=false"},
      {"parallelism.sequence_parallel=false", "parallelism.recompute=full"},
      {"model.tied_embeddings=false"},
      {"training.flash_attention=false", "parallelism.recompute=selective"},
  };
  // GPT-3 13B on 4 DGX A100 nodes: TP 4, PP 4, DP 2, 16 micro-batches.
  const char* yaml = R"(
model: {preset: gpt3-13b}
cluster: {preset: dgx-a100, nodes: 4}
training: {seq_len: 2048, global_batch: 32, micro_batch: 1}
parallelism: {tp: 4, pp: 4, sequence_parallel: true, recompute: selective,
              distributed_optimizer: true, overlap_grad_reduce: true}
)";
  for (const std::vector<std::string>& overrides : variants) {
    std::string name;
    for (const std::string& o : overrides) name += o + " ";
    SCOPED_TRACE(name);
    const ExecutionResult r = execute_scenario(load(yaml, overrides));
    expect_breakdowns_add_up(r);
    for (const StageResult& st : r.stages) {
      EXPECT_GT(st.breakdown.compute, SimTime::zero());
      EXPECT_GE(st.busy_compute, st.breakdown.compute);
    }
  }
}

TEST(Execute, SplitBackwardSchedulesShrinkTheBubbleOfAScenario) {
  // GPT-3 13B on 4 DGX A100 nodes, TP 4, PP 4, DP 2, 16 micro-batches: the zero-bubble
  // schedules fill 1F1B's drain with deferred weight gradients, so the critical stage idles
  // less and the iteration is shorter; ZB-H2's longer warm-up shortens it further. DualPipe
  // idles least but pays for its second parameter copy (twice the DP gradients and a pair
  // all-reduce), so only its bubble is compared.
  const char* yaml = R"(
model: {preset: gpt3-13b}
cluster: {preset: dgx-a100, nodes: 4}
training: {seq_len: 2048, global_batch: 32, micro_batch: 1}
parallelism: {tp: 4, pp: 4, sequence_parallel: true, recompute: selective,
              distributed_optimizer: true, overlap_grad_reduce: true}
)";
  auto run = [&](const char* schedule) {
    return execute_scenario(load(yaml, {std::string("parallelism.schedule=") + schedule}));
  };
  auto bubble = [](const ExecutionResult& r) {
    return r.stages[r.critical_stage].breakdown.bubble;
  };
  const ExecutionResult base = run("1f1b");
  const ExecutionResult h1 = run("zb_h1");
  const ExecutionResult h2 = run("zb_h2");
  const ExecutionResult dual = run("dualpipe");
  EXPECT_LT(h1.iteration_time, base.iteration_time);
  EXPECT_LT(bubble(h1), bubble(base));
  EXPECT_LT(h2.iteration_time, h1.iteration_time);
  EXPECT_LT(bubble(h2), bubble(base));
  EXPECT_LT(bubble(dual), bubble(h1));
  // The same kernels run, only in another order (DualPipe's ranks also hold the other end's
  // layers, so the first and last rank each run the embedding and the loss head).
  EXPECT_EQ(h1.ops_executed, base.ops_executed);
  EXPECT_EQ(h2.ops_executed, base.ops_executed);
  for (const ExecutionResult* r : {&h1, &h2, &dual}) expect_breakdowns_add_up(*r);
  // B blocks hold no weight-gradient GEMMs; the W blocks, which keep the backward's name,
  // hold only them.
  const Workload w = generate_workload(load(yaml, {"parallelism.schedule=zb_h1"}));
  int input_blocks = 0, weight_blocks = 0;
  for (const Block& b : w.blocks) {
    const bool input = b.name == "layer.bwd.input" || b.name == "head.bwd.input";
    const bool weight = b.name == "layer.bwd" || b.name == "head.bwd";
    input_blocks += input;
    weight_blocks += weight;
    for (const Op& op : b.ops) {
      const bool wgrad = op.name.size() > 6 && op.name.substr(op.name.size() - 6) == ".wgrad";
      if (input) {
        EXPECT_FALSE(wgrad) << b.name << ": " << op.name;
      }
      if (weight) {
        EXPECT_TRUE(wgrad) << b.name << ": " << op.name;
      }
    }
  }
  EXPECT_EQ(input_blocks, 2);
  EXPECT_EQ(weight_blocks, 2);
}

TEST(Execute, KernelTraceIsOrderedAndInsideTheIteration) {
  const Scenario s = load(R"(
model: {preset: gpt3-1.7b}
cluster: {preset: dgx-a100, nodes: 1}
training: {seq_len: 2048, global_batch: 8}
parallelism: {tp: 2, pp: 4}
)");
  const ExecutionResult r = execute_scenario(s, TraceLevel::kKernels);
  ASSERT_FALSE(r.trace.empty());
  std::vector<SimTime> last_end(4);
  for (const TraceInterval& t : r.trace) {
    ASSERT_GE(t.stage, 0);
    ASSERT_LT(t.stage, 4);
    EXPECT_LE(t.start, t.end) << t.name;
    EXPECT_LE(t.end, r.iteration_time) << t.name;
    if (t.stream != 0) continue;
    // The compute stream runs one kernel at a time.
    EXPECT_GE(t.start, last_end[t.stage]) << t.name << " on stage " << t.stage;
    last_end[t.stage] = t.end;
  }
  // Tracing does not change the timing.
  EXPECT_EQ(r.iteration_time, execute_scenario(s).iteration_time);
}

TEST(ExecuteDeathTest, UnmatchedReceiveIsADeadlock) {
  Workload w;
  w.blocks.push_back(Block{"f", {memory_op("f", 0)}});
  Program prog;
  Step r;
  r.kind = StepKind::kRecv;
  r.peer = 0;
  r.tag = 7;
  prog.steps.push_back(r);
  w.stages.push_back(prog);
  const FakeComputeModel compute(us(1));
  const FakeNetwork network;
  const CollectiveModel collectives(free_collectives_cluster(), network);
  EXPECT_DEATH(execute(w, compute, collectives, JobGroups{}, ExecutorOptions{}),
               "pipeline deadlock");
}

// A transport that completes every operation a fixed time after it starts and logs the calls.
struct TransportCall {
  GroupKind group;
  int stage;
  CollectiveKind kind;
  SimTime start;
};
class FakeTransport final : public Transport, public EventHandler {
 public:
  FakeTransport(Simulator* sim, SimTime each, std::vector<TransportCall>* log)
      : sim_(sim), each_(each), log_(log) {}
  void send(int from, int to, Bytes bytes, SimTime latency, Done done,
            const Replicas& replicas) override {
    finish_later(std::move(done));
  }
  void collective(GroupKind group, int stage, CollectiveKind kind, Bytes bytes,
                  const CollectivePlan& plan, Done done, const Replicas& replicas) override {
    log_->push_back({group, stage, kind, sim_->now()});
    finish_later(std::move(done));
  }
  void send_gpus(int src, int dst, Bytes bytes, SimTime latency, Done done) override {
    finish_later(std::move(done));
  }
  void collective_gpus(const std::vector<int>& members, CollectiveKind kind, Bytes bytes,
                       const CollectivePlan& plan, Done done) override {
    finish_later(std::move(done));
  }
  NetworkStats stats(SimTime end) const override { return {}; }
  void on_event(int64_t id) override { pending_[id](sim_->now()); }

 private:
  void finish_later(Done done) {
    pending_.push_back(std::move(done));
    sim_->schedule(sim_->now() + each_, this, static_cast<int64_t>(pending_.size()) - 1);
  }
  Simulator* sim_;
  SimTime each_;
  std::vector<TransportCall>* log_;
  std::vector<Done> pending_;
};

ExecutorOptions with_fake_transport(SimTime each, std::vector<TransportCall>* log) {
  ExecutorOptions o;
  o.transport = [each, log](Simulator* sim) -> std::unique_ptr<Transport> {
    return std::make_unique<FakeTransport>(sim, each, log);
  };
  return o;
}

// Runs `w` with each named kernel taking its time, free in-node communication, `groups`, and a
// fake transport that carries every cross-node collective in `each` (calls logged in `log`).
ExecutionResult run_carried(const Workload& w,
                            const std::vector<std::pair<std::string, SimTime>>& times,
                            const JobGroups& groups, SimTime each, std::vector<TransportCall>* log,
                            TraceLevel trace = TraceLevel::kNone) {
  FakeComputeModel compute(SimTime::zero());
  for (const auto& [name, t] : times) compute.set(name, t);
  const FakeNetwork network;
  const CollectiveModel collectives(free_collectives_cluster(), network);
  ExecutorOptions options = with_fake_transport(each, log);
  options.trace = trace;
  return execute(w, compute, collectives, groups, options);
}

Workload one_block(std::vector<Op> ops) {
  Workload w;
  w.blocks.push_back(Block{"b", std::move(ops)});
  Program prog;
  Step s;
  s.kind = StepKind::kRun;
  s.block = 0;
  s.repeat = 2;
  prog.steps.push_back(s);
  w.stages.push_back(prog);
  return w;
}

TEST(ExecuteWithTransport, BlockCollectiveOfAGroupSpanningNodesGoesThroughTheTransport) {
  // TP 16 over two 8-GPU nodes: the TP all-reduce inside the block is carried (7 us in the
  // fake); twice (repeat 2): a 10 us kernel, the all-reduce, a 5 us kernel → 2 × 22 us.
  Op ar = collective_op("tp.allreduce", CollectiveKind::kAllReduce, GroupKind::kTensor,
                        Bytes(1'000'000));
  const Workload w = one_block({memory_op("a", 0), ar, memory_op("b", 0)});
  JobGroups groups;
  groups.tp = place_group(16, 1, 8);
  std::vector<TransportCall> log;
  const ExecutionResult r =
      run_carried(w, {{"a", us(10)}, {"b", us(5)}}, groups, us(7), &log, TraceLevel::kBlocks);
  EXPECT_EQ(r.iteration_time, us(44));
  ASSERT_EQ(log.size(), 2u);
  EXPECT_EQ(log[0].group, GroupKind::kTensor);
  EXPECT_EQ(log[0].start, us(10));
  EXPECT_EQ(log[1].start, us(32));
  const Breakdown& b = r.stages[0].breakdown;
  EXPECT_EQ(b.compute, us(30));
  EXPECT_EQ(b.tp_comm, us(14));
  expect_breakdowns_add_up(r);
  ASSERT_EQ(r.stages[0].collectives.size(), 1u);
  EXPECT_EQ(r.stages[0].collectives[0].count, 2);
  EXPECT_EQ(r.stages[0].collectives[0].time, us(14));
  // The block spans in the trace cover the carried all-reduce.
  ASSERT_EQ(r.trace.size(), 2u);
  EXPECT_EQ(r.trace[0].start, SimTime());
  EXPECT_EQ(r.trace[0].end, us(22));
  EXPECT_EQ(r.trace[1].start, us(22));
  EXPECT_EQ(r.trace[1].end, us(44));
}

TEST(ExecuteWithTransport, InNodeGroupsKeepThePlannedTime) {
  // TP 8 on one node: not carried, the analytical time as without a transport, twice:
  // 2(n−1)/n · 1 MB / 17.5 GB/s = 100 us.
  Op ar = collective_op("tp.allreduce", CollectiveKind::kAllReduce, GroupKind::kTensor,
                        Bytes(1'000'000));
  const Workload w = one_block({ar});
  FakeComputeModel compute(SimTime::zero());
  const FakeNetwork network(Bandwidth::gigabytes_per_second(17.5),
                            Bandwidth::gigabytes_per_second(10), SimTime::zero());
  const CollectiveModel collectives(free_collectives_cluster(), network);
  JobGroups groups;
  groups.tp = place_group(8, 1, 8);
  std::vector<TransportCall> log;
  const ExecutionResult with =
      execute(w, compute, collectives, groups, with_fake_transport(us(7), &log));
  const ExecutionResult without = execute(w, compute, collectives, groups, ExecutorOptions{});
  EXPECT_TRUE(log.empty());
  EXPECT_EQ(with.iteration_time, without.iteration_time);
  EXPECT_EQ(with.iteration_time, us(200));
}

TEST(ExecuteWithTransport, AsyncCarriedCollectiveIsWaitedForByTheKernelThatNeedsIt) {
  // An async TP all-reduce carried in 100 us, a 30 us kernel overlapping it, then a kernel that
  // waits for it (20 us): T = 100 + 20 = 120 us, 70 us of it exposed TP time, as with the
  // analytical stream.
  Op ar = collective_op("tp.allreduce.grad", CollectiveKind::kAllReduce, GroupKind::kTensor,
                        Bytes(1'000'000));
  ar.async = true;
  Op waiter = memory_op("waiter", 0);
  waiter.wait_comm = true;
  Workload w = one_block({ar, memory_op("overlap", 0), waiter});
  w.stages[0].steps[0].repeat = 1;
  JobGroups groups;
  groups.tp = place_group(16, 1, 8);
  std::vector<TransportCall> log;
  const ExecutionResult r = run_carried(w, {{"overlap", us(30)}, {"waiter", us(20)}}, groups,
                                        us(100), &log, TraceLevel::kKernels);
  ASSERT_EQ(log.size(), 1u);
  EXPECT_EQ(log[0].start, SimTime());
  EXPECT_EQ(r.iteration_time, us(120));
  EXPECT_EQ(r.stages[0].breakdown.compute, us(50));
  EXPECT_EQ(r.stages[0].breakdown.tp_comm, us(70));
  expect_breakdowns_add_up(r);
  EXPECT_EQ(r.stages[0].collectives[0].time, us(100));
  bool traced = false;
  for (const TraceInterval& t : r.trace) {
    if (t.name == "tp.allreduce.grad") traced = t.stream == 1 && t.end == us(100);
  }
  EXPECT_TRUE(traced);
}

TEST(ExecuteWithTransport, TiedEmbeddingAllReduceIsCarriedOnceForBothStages) {
  // Stage 0 arrives at 10 us, stage 1 at 50 us; the carried all-reduce (60 us in the fake)
  // starts at 50 us for both: both end at 110 us, stage 0 after 40 us of bubble.
  const Workload w = embedding_allreduce_workload(/*host_sync=*/false);
  JobGroups groups;
  groups.embedding = place_group(2, 8, 8);
  std::vector<TransportCall> log;
  const ExecutionResult r =
      run_carried(w, {{"short", us(10)}, {"long", us(50)}}, groups, us(60), &log);
  ASSERT_EQ(log.size(), 1u);
  EXPECT_EQ(log[0].group, GroupKind::kEmbedding);
  EXPECT_EQ(log[0].start, us(50));
  EXPECT_EQ(r.stages[0].end, us(110));
  EXPECT_EQ(r.stages[1].end, us(110));
  EXPECT_EQ(r.stages[0].breakdown.bubble, us(40));
  EXPECT_EQ(r.stages[0].breakdown.dp_comm, us(60));
  EXPECT_EQ(r.stages[1].breakdown.dp_comm, us(60));
  for (const StageResult& st : r.stages) EXPECT_EQ(st.collectives[0].time, us(60));
  expect_breakdowns_add_up(r);
}

}  // namespace
}  // namespace preflight
