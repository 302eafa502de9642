// The overlap switches and ZeRO-3 through the generator and the executor, against closed forms
// (docs/workload.md, "Overlap switches and sharded data parallelism"): every compute op costs a
// time the test picks (FakeComputeModel) and the network has fixed bandwidths and no latency.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "config/loader.h"
#include "exec/executor.h"
#include "model/transformer.h"
#include "parallel/rank_layout.h"
#include "simulate/simulate.h"
#include "tests/fakes.h"
#include "tests/load_scenario.h"
#include "workload/generator.h"
#include "workload/layer_ops.h"
#include "workload/overlap_ops.h"

namespace preflight {
namespace {

SimTime us(double v) { return SimTime::microseconds(v); }

std::string load_error(const std::string& yaml, const std::vector<std::string>& overrides) {
  StatusOr<Scenario> s = load_scenario_text(yaml, "test.yaml", overrides);
  return s.ok() ? "" : s.status().message();
}

// GPT-3 1.7B (24 layers, h 2304) on one DGX A100 node: TP 8, SP.
const char* kTensorParallel = R"(
model: {preset: gpt3-1.7b}
cluster: {preset: dgx-a100, nodes: 1}
training: {seq_len: 2048, global_batch: 8, micro_batch: 1}
parallelism: {tp: 8, sequence_parallel: true}
)";

// The same model data-parallel over the node's 8 GPUs, one micro-batch each.
const char* kDataParallel = R"(
model: {preset: gpt3-1.7b}
cluster: {preset: dgx-a100, nodes: 1}
training: {seq_len: 2048, global_batch: 8, micro_batch: 1}
parallelism: {tp: 1, pp: 1, dp: 8}
)";

Bandwidth bytes_per_s(double v) { return Bandwidth::bytes_per_second(v); }

// Runs one block `ops` on one stage of TP 8 on one node.
SimTime run_block(const std::vector<Op>& ops, const FakeComputeModel& compute,
                  const CollectiveModel& collectives) {
  Workload w;
  w.blocks.push_back(Block{"block", ops});
  Program prog;
  Step s;
  s.kind = StepKind::kRun;
  s.block = 0;
  prog.steps.push_back(s);
  w.stages.push_back(prog);
  JobGroups groups;
  groups.tp = place_group(8, 1, 8);
  return execute(w, compute, collectives, groups, ExecutorOptions{}).iteration_time;
}

// --- tp_comm_overlap -------------------------------------------------------------------------

// The ring exchange of a gathered GEMM of time G = 8g with t − 1 = 7 transfers of c each
// (C = 7c, the ring all-gather's transfers): max(G, C + G/t).
TEST(TpCommOverlap, RingExchangeTakesMaxOfGemmAndTransfersPlusOneChunk) {
  const Scenario s = load(kTensorParallel, {"parallelism.tp_comm_overlap=true"});
  const int64_t S = 8'000'000;  // the gathered buffer; each transfer carries S/8
  const std::vector<Op> plain = {
      memory_op("ln1.fwd", 0),
      collective_op("tp.allgather", CollectiveKind::kAllGather, GroupKind::kTensor, Bytes(S)),
      gemm_op("qkv.fwd", 2048, 512, 512, 1, 2), memory_op("attn.next", 0)};
  std::vector<Op> ops = plain;
  apply_tp_comm_overlap(s, &ops);
  // p2p 1e10 B/s: a 1 MB block takes 100 us.
  const FakeNetwork network(bytes_per_s(1e11), bytes_per_s(1e10), SimTime::zero());
  const CollectiveModel collectives(free_collectives_cluster(), network);
  const SimTime c =
      collectives.plan(CollectiveKind::kSendRecv, place_group(8, 1, 8), Bytes(S / 8)).time;
  ASSERT_EQ(c, us(100));
  for (double g : {150.0, 100.0, 50.0, 10.0}) {
    FakeComputeModel compute(SimTime::zero());
    compute.set("qkv.fwd", us(g));
    const SimTime expected = max(us(8 * g), c * 7 + us(g));
    EXPECT_EQ(run_block(ops, compute, collectives), expected) << "g = " << g;
    // Without the overlap: the blocking all-gather, then the whole GEMM.
    FakeComputeModel whole(SimTime::zero());
    whole.set("qkv.fwd", us(8 * g));
    const SimTime ag =
        collectives.plan(CollectiveKind::kAllGather, place_group(8, 1, 8), Bytes(S)).time;
    EXPECT_EQ(run_block(plain, whole, collectives), ag + us(8 * g));
  }
}

// Pipelined reduce-scatter after a GEMM of time G = 4g, n = 4 chunks of c each (C = 4c):
// max(G + C/n, C + G/n) = max(G, C) + min(G, C)/n.
TEST(TpCommOverlap, PipelinedReduceScatterTakesMaxPlusMinOverN) {
  const Scenario s = load(kTensorParallel, {"parallelism.tp_comm_overlap=true"});
  const int64_t S = 8'000'000;
  std::vector<Op> ops = {gemm_op("proj.fwd", 2048, 512, 512, 1, 2),
                         collective_op("tp.reducescatter", CollectiveKind::kReduceScatter,
                                       GroupKind::kTensor, Bytes(S)),
                         memory_op("attn.residual", 0)};
  apply_tp_comm_overlap(s, &ops);
  ASSERT_EQ(ops.size(), 2u * kTpOverlapPipelineSplits + 1);
  EXPECT_TRUE(ops.back().wait_comm);
  // Bus 1.75e10 B/s: a reduce-scatter of S/4 = 2 MB moves 7/8 of it in 100 us.
  const FakeNetwork network(bytes_per_s(1.75e10), bytes_per_s(1e10), SimTime::zero());
  const CollectiveModel collectives(free_collectives_cluster(), network);
  const SimTime c =
      collectives.plan(CollectiveKind::kReduceScatter, place_group(8, 1, 8), Bytes(S / 4)).time;
  ASSERT_EQ(c, us(100));
  for (double g : {300.0, 100.0, 40.0}) {
    FakeComputeModel compute(SimTime::zero());
    compute.set("proj.fwd", us(g));
    const SimTime G = us(4 * g), C = c * 4;
    EXPECT_EQ(run_block(ops, compute, collectives),
              max(G, C) + SimTime::picoseconds(min(G, C).ps() / 4))
        << "g = " << g;
  }
}

TEST(TpCommOverlap, NeedsSequenceParallelism) {
  EXPECT_EQ(load_error(kTensorParallel,
                       {"parallelism.tp_comm_overlap=true", "parallelism.sequence_parallel=false"}),
            "test.yaml: parallelism.tp_comm_overlap: true needs sequence_parallel: true "
            "(Transformer Engine overlaps its all-gathers and reduce-scatters)");
  // With tp 1 there is nothing to overlap, and nothing to require.
  EXPECT_EQ(load_error(kDataParallel, {"parallelism.tp_comm_overlap=true"}), "");
}

TEST(TpCommOverlap, GeneratorRewritesTheLayerBlocksOnly) {
  const Workload w = generate_workload(load(kTensorParallel, {"parallelism.tp_comm_overlap=true"}));
  int rewritten = 0;
  for (const Block& b : w.blocks) {
    for (const Op& op : b.ops) {
      if (op.name.find(".overlap") != std::string::npos) ++rewritten;
      if (b.name == "layer.fwd" || b.name == "layer.bwd") {
        EXPECT_FALSE(op.name == "tp.allgather" || op.name == "tp.reducescatter") << op.name;
      }
    }
  }
  EXPECT_GT(rewritten, 0);
}

// --- overlap_p2p -----------------------------------------------------------------------------

// Two stages: stage 0 computes f, sends X to stage 1 and computes f again; stage 1 receives and
// computes. Megatron's default host waits for the send (stage 0 ends at 2F + X); on its own
// stream the sender's next compute starts at once (2F). The receiver waits for the data either
// way (F + X + F).
TEST(OverlapP2p, SenderDoesNotWaitForTheSend) {
  const SimTime F = us(100), X = us(40);
  for (bool async : {false, true}) {
    Workload w;
    w.blocks.push_back(Block{"fwd", {memory_op("f", 0)}});
    Program p0, p1;
    p0.stage = 0;
    p1.stage = 1;
    Step run;
    run.kind = StepKind::kRun;
    run.block = 0;
    Step send;
    send.kind = StepKind::kSend;
    send.peer = 1;
    send.tag = 7;
    send.bytes = Bytes(4'000'000);
    send.async_p2p = async;
    Step recv = send;
    recv.kind = StepKind::kRecv;
    recv.peer = 0;
    p0.steps = {run, send, run};
    p1.steps = {recv, run};
    w.stages = {p0, p1};
    FakeComputeModel compute(F);
    // p2p 1e11 B/s: 4 MB in 40 us.
    const FakeNetwork network(bytes_per_s(1e11), bytes_per_s(1e11), SimTime::zero());
    const CollectiveModel collectives(free_collectives_cluster(), network);
    const ExecutionResult r = execute(w, compute, collectives, JobGroups{}, ExecutorOptions{});
    EXPECT_EQ(r.stages[0].end, async ? F * 2 : F * 2 + X) << async;
    EXPECT_EQ(r.stages[0].breakdown.pp_comm, async ? SimTime::zero() : X) << async;
    EXPECT_EQ(r.stages[1].end, F * 2 + X) << async;
  }
}

const char* kInterleaved = R"(
model: {preset: gpt3-1.7b}
cluster: {preset: dgx-a100, nodes: 1}
training: {seq_len: 2048, global_batch: 8, micro_batch: 1}
parallelism: {tp: 2, pp: 4, vpp: 2, schedule: interleaved}
)";

TEST(OverlapP2p, GeneratorMarksEverySendAndReceive) {
  for (bool on : {false, true}) {
    const Workload w = generate_workload(
        load(kInterleaved, {std::string("parallelism.overlap_p2p=") + (on ? "true" : "false")}));
    int p2p = 0;
    for (const Program& prog : w.stages) {
      for (const Step& st : prog.steps) {
        if (st.kind != StepKind::kSend && st.kind != StepKind::kRecv) continue;
        ++p2p;
        EXPECT_EQ(st.async_p2p, on);
      }
    }
    EXPECT_GT(p2p, 0);
  }
}

TEST(OverlapP2p, NeedsTheInterleavedSchedule) {
  EXPECT_EQ(load_error(kInterleaved, {"parallelism.overlap_p2p=true", "parallelism.vpp=1",
                                      "parallelism.schedule=1f1b"}),
            "test.yaml: parallelism.overlap_p2p: true needs schedule: interleaved (Megatron "
            "turns --overlap-p2p-comm off with the others; schedule 1f1b)");
}

TEST(OverlapP2p, ShortensTheInterleavedIteration) {
  StatusOr<SimulationReport> off = simulate(load(kInterleaved));
  StatusOr<SimulationReport> on = simulate(load(kInterleaved, {"parallelism.overlap_p2p=true"}));
  ASSERT_TRUE(off.ok() && on.ok());
  EXPECT_LT(on->iteration_time_s, off->iteration_time_s);
}

// --- overlap_moe_comm (Megatron's combined 1F1B) -------------------------------------------

// Mixtral 8x7B shape, 4 layers, EP 8 on two DGX H100 nodes.
const char* kMoeOverlap = R"(
model: {preset: mixtral-8x7b, layers: 4}
cluster: {preset: dgx-h100, nodes: 2}
training: {seq_len: 4096, global_batch: 32, micro_batch: 1}
parallelism: {tp: 1, pp: 1, dp: 16, ep: 8, distributed_optimizer: true}
)";

TEST(OverlapMoeComm, HidesTheAllToAllsBehindTheOtherMicrobatch) {
  StatusOr<SimulationReport> off = simulate(load(kMoeOverlap));
  StatusOr<SimulationReport> on =
      simulate(load(kMoeOverlap, {"parallelism.overlap_moe_comm=true"}));
  ASSERT_TRUE(off.ok() && on.ok());
  const Breakdown& a = off->execution.stages[0].breakdown;
  const Breakdown& b = on->execution.stages[0].breakdown;
  ASSERT_GT(a.ep_comm, SimTime::zero());
  // Two micro-batches per rank: F0, (F1, B0), B1; the pair's all-to-alls run behind its
  // compute, the first forward's and the last backward's stay exposed.
  EXPECT_LT(b.ep_comm, a.ep_comm);
  EXPECT_GT(b.ep_comm, SimTime::zero());
  EXPECT_LT(on->iteration_time_s, off->iteration_time_s);
  // The same work: the compute is unchanged.
  EXPECT_EQ(a.compute, b.compute);
}

TEST(OverlapMoeComm, NeedsAMoeModelWithExpertParallelismAndA1F1BSchedule) {
  EXPECT_EQ(load_error(kTensorParallel, {"parallelism.overlap_moe_comm=true"}),
            "test.yaml: parallelism.overlap_moe_comm: true needs a MoE model with ep > 1 (it "
            "overlaps the expert all-to-alls)");
  EXPECT_EQ(
      load_error(kMoeOverlap, {"parallelism.overlap_moe_comm=true", "parallelism.schedule=gpipe"}),
      "test.yaml: parallelism.overlap_moe_comm: true needs schedule: 1f1b or interleaved "
      "(Megatron's combined 1F1B; dualpipe overlaps by construction); schedule gpipe");
}

// --- shared helpers for the DP tests -------------------------------------------------------

int64_t step_bytes(const Workload& w, StepKind kind, const std::string& name) {
  int64_t b = 0;
  for (const Program& p : w.stages) {
    for (const Step& st : p.steps) {
      if (st.kind == kind && st.op.name == name) b += st.op.comm_bytes.count();
    }
  }
  return b;
}

int step_count(const Workload& w, StepKind kind, const std::string& name) {
  int n = 0;
  for (const Program& p : w.stages) {
    for (const Step& st : p.steps) n += st.kind == kind && st.op.name == name ? 1 : 0;
  }
  return n;
}

// Each layer's forward costs F (its FC1), its backward B (its FC1 input gradient); everything
// else is free. The DP group's bus moves 100 GB/s unless `bus` says otherwise.
ExecutionResult run_dp(const Scenario& s, const Workload& w, SimTime F, SimTime B,
                       double bus = 1e11) {
  FakeComputeModel compute(SimTime::zero());
  compute.set("fc1.fwd", F);
  compute.set("fc1.dgrad", B);
  const FakeNetwork network(bytes_per_s(bus), bytes_per_s(bus), SimTime::zero());
  const CollectiveModel collectives(free_collectives_cluster(), network);
  return execute(w, compute, collectives, place_job_groups(s), ExecutorOptions{});
}

SimTime plan_time(const Scenario& s, CollectiveKind kind, int64_t bytes, double bus = 1e11) {
  const FakeNetwork network(bytes_per_s(bus), bytes_per_s(bus), SimTime::zero());
  const CollectiveModel collectives(free_collectives_cluster(), network);
  return collectives.plan(kind, place_job_groups(s).dp, Bytes(bytes)).time;
}

// --- overlap_param_gather ------------------------------------------------------------------

const std::vector<std::string> kDistOpt = {"parallelism.distributed_optimizer=true",
                                           "parallelism.overlap_grad_reduce=true",
                                           "training.global_batch=16"};

std::vector<std::string> with(std::vector<std::string> a, const std::string& b) {
  a.push_back(b);
  return a;
}

TEST(OverlapParamGather, BucketsTheGatherAtTheIterationStart) {
  const Scenario off_s = load(kDataParallel, kDistOpt);
  const Scenario on_s =
      load(kDataParallel, with(kDistOpt, "parallelism.overlap_param_gather=true"));
  const Workload off = generate_workload(off_s);
  const Workload on = generate_workload(on_s);
  // One blocking gather of all the parameters, or 24 async buckets (a layer of 64M parameters
  // fills a 40M-gradient bucket) with the same bytes, the first one issued first.
  EXPECT_EQ(step_count(off, StepKind::kCollective, "dp.allgather.params"), 1);
  EXPECT_EQ(step_count(on, StepKind::kCollective, "dp.allgather.params"), 0);
  EXPECT_EQ(step_count(on, StepKind::kCommAsync, "dp.allgather.params"), 24);
  EXPECT_EQ(step_bytes(on, StepKind::kCommAsync, "dp.allgather.params"),
            step_bytes(off, StepKind::kCollective, "dp.allgather.params"));
  EXPECT_EQ(on.stages[0].steps.front().kind, StepKind::kCommAsync);
}

// Each bucket after the first is gathered while the layers of the bucket before it run, so the
// iteration is the one without the gather plus the first bucket's: T_on = T_off − A + A_0.
TEST(OverlapParamGather, OnlyTheFirstBucketIsExposed) {
  const Scenario off_s = load(kDataParallel, kDistOpt);
  const Scenario on_s =
      load(kDataParallel, with(kDistOpt, "parallelism.overlap_param_gather=true"));
  const Workload off = generate_workload(off_s);
  const Workload on = generate_workload(on_s);
  const SimTime F = us(5000), B = us(10000);
  const SimTime t_off = run_dp(off_s, off, F, B).iteration_time;
  const SimTime t_on = run_dp(on_s, on, F, B).iteration_time;
  const SimTime all = plan_time(off_s, CollectiveKind::kAllGather,
                                step_bytes(off, StepKind::kCollective, "dp.allgather.params"));
  const SimTime first =
      plan_time(on_s, CollectiveKind::kAllGather, on.stages[0].steps.front().op.comm_bytes.count());
  EXPECT_GT(all, first * 2);
  EXPECT_EQ(t_on, t_off - all + first);
}

TEST(OverlapParamGather, NeedsTheDistributedOptimizer) {
  EXPECT_EQ(load_error(kDataParallel, {"parallelism.overlap_param_gather=true"}),
            "test.yaml: parallelism.overlap_param_gather: true needs distributed_optimizer: "
            "true (as Megatron)");
  EXPECT_EQ(load_error(kDataParallel, {"parallelism.overlap_param_gather=true",
                                       "parallelism.distributed_optimizer=true"}),
            "test.yaml: parallelism.overlap_param_gather: true needs overlap_grad_reduce: true "
            "(as Megatron)");
}

// --- ZeRO-3 ----------------------------------------------------------------------------------

// Per micro-batch ZeRO-3 gathers each layer's half-precision weights twice (forward, backward)
// and reduce-scatters its fp32 gradients once; ZeRO-1 (the distributed optimizer) reduces the
// gradients and gathers the weights once per iteration.
TEST(Zero3, MovesThreeTimesTheLayerParametersPerMicrobatch) {
  const std::vector<std::string> two_mb = {"training.global_batch=16"};
  const Scenario z3 = load(kDataParallel, with(two_mb, "parallelism.zero_stage=3"));
  const Scenario z1 = load(kDataParallel, with(two_mb, "parallelism.distributed_optimizer=true"));
  const Workload w3 = generate_workload(z3);
  const Workload w1 = generate_workload(z1);
  const int m = 2, layers = 24;
  const int64_t layer = layer_parameters(z3.model, 0);  // 12h² + 13h
  EXPECT_EQ(layer, 12LL * 2304 * 2304 + 13 * 2304);
  const int64_t params = stage_parameters_per_gpu(z3, 0);
  const int64_t rest = params - layers * layer;
  EXPECT_EQ(step_bytes(w3, StepKind::kCommAsync, "dp.allgather.layer"),
            2LL * m * layers * layer * 2);
  EXPECT_EQ(step_bytes(w3, StepKind::kCommAsync, "dp.reducescatter.layer"),
            1LL * m * layers * layer * 4);
  EXPECT_EQ(step_count(w3, StepKind::kCommAsync, "dp.allgather.layer"), 2 * m * layers);
  // The embedding and the output layer once per iteration.
  EXPECT_EQ(step_bytes(w3, StepKind::kCollective, "dp.reducescatter"), rest * 4);
  EXPECT_EQ(step_bytes(w3, StepKind::kCollective, "dp.allgather.params"), rest * 2);
  EXPECT_EQ(step_bytes(w1, StepKind::kCollective, "dp.reducescatter"), params * 4);
  EXPECT_EQ(step_bytes(w1, StepKind::kCollective, "dp.allgather.params"), params * 2);
}

// One micro-batch, compute-bound (A <= F, A + R <= B, A and R a layer's gather and
// reduce-scatter): the forward exposes its first gather, the backward its first gather and the
// last reduce-scatter; the rest is reduced and gathered around the optimizer:
// T = L(F + B) + 2A + R + RS_rest + AG_rest.
TEST(Zero3, PrefetchHidesAllButTheFirstGatherOfEachPass) {
  const Scenario s = load(kDataParallel, {"parallelism.zero_stage=3"});
  const Workload w = generate_workload(s);
  const SimTime F = us(5000), B = us(10000);
  const int L = 24;
  const int64_t layer_bytes = step_bytes(w, StepKind::kCommAsync, "dp.allgather.layer") / (2 * L);
  const SimTime A = plan_time(s, CollectiveKind::kAllGather, layer_bytes);
  const SimTime R = plan_time(s, CollectiveKind::kReduceScatter, layer_bytes * 2);
  ASSERT_LE(A, F);
  ASSERT_LE(A + R, B);
  const SimTime rs_rest = plan_time(s, CollectiveKind::kReduceScatter,
                                    step_bytes(w, StepKind::kCollective, "dp.reducescatter"));
  const SimTime ag_rest = plan_time(s, CollectiveKind::kAllGather,
                                    step_bytes(w, StepKind::kCollective, "dp.allgather.params"));
  const ExecutionResult r = run_dp(s, w, F, B);
  const SimTime exposed = A * 2 + R + rs_rest + ag_rest;
  EXPECT_EQ(r.stages[0].breakdown.dp_comm, exposed);
  EXPECT_EQ(r.iteration_time, (F + B) * L + exposed);
  // Overlap works: far less exposed than the gathers take.
  EXPECT_LT(r.stages[0].breakdown.dp_comm, A * (2 * L));
}

// Communication-bound (a 10 GB/s bus: A > F), ZeRO-3 takes longer than ZeRO-1, whose one
// gradient reduction and one parameter gather per iteration are smaller than its 3 per
// micro-batch.
TEST(Zero3, CommunicationBoundIsSlowerThanZero1) {
  const std::vector<std::string> two_mb = {"training.global_batch=16"};
  const Scenario z3 = load(kDataParallel, with(two_mb, "parallelism.zero_stage=3"));
  const Scenario z1 = load(kDataParallel, with(two_mb, "parallelism.distributed_optimizer=true"));
  const SimTime F = us(2000), B = us(4000);
  const ExecutionResult r3 = run_dp(z3, generate_workload(z3), F, B, 1e10);
  const ExecutionResult r1 = run_dp(z1, generate_workload(z1), F, B, 1e10);
  EXPECT_GT(r3.iteration_time, r1.iteration_time);
  EXPECT_GT(r3.stages[0].breakdown.dp_comm, r1.stages[0].breakdown.dp_comm);
}

TEST(Zero3, SimulatesWithPipelinesAndSplitSchedules) {
  for (const char* schedule : {"1f1b", "zb_h1", "interleaved"}) {
    const Scenario s = load(
        R"(
model: {preset: gpt3-1.7b}
cluster: {preset: dgx-a100, nodes: 2}
training: {seq_len: 2048, global_batch: 16, micro_batch: 1}
parallelism: {tp: 2, pp: 2, dp: 4, zero_stage: 3}
)",
        {std::string("parallelism.schedule=") + schedule,
         std::string("parallelism.vpp=") + (std::string(schedule) == "interleaved" ? "2" : "1")});
    StatusOr<SimulationReport> r = simulate(s);
    ASSERT_TRUE(r.ok()) << schedule;
    EXPECT_GT(r->iteration_time_s, 0) << schedule;
    const Workload w = generate_workload(s);
    // Each layer of each stage: 2 gathers and 1 reduce-scatter per micro-batch.
    EXPECT_EQ(step_count(w, StepKind::kCommAsync, "dp.allgather.layer"), 2 * 4 * 24) << schedule;
    EXPECT_EQ(step_count(w, StepKind::kCommAsync, "dp.reducescatter.layer"), 4 * 24) << schedule;
  }
}

// --- all switches through the flow network --------------------------------------------------

// Asynchronous sends, chunked TP collectives and DP-stream gathers all go through the transport
// when the network is the flow model; alone on an uncontended fabric it agrees with the
// analytical network.
TEST(OverlapSwitches, FlowNetworkAgreesWithAnalytical) {
  const char* yaml = R"(
model: {preset: gpt3-1.7b}
cluster: {preset: dgx-a100, nodes: 2}
training: {seq_len: 2048, global_batch: 32, micro_batch: 1}
parallelism: {tp: 2, pp: 4, vpp: 2, schedule: interleaved, dp: 2, sequence_parallel: true,
              distributed_optimizer: true, overlap_grad_reduce: true, tp_comm_overlap: true,
              overlap_p2p: true}
)";
  for (const char* extra : {"parallelism.overlap_param_gather=true", "parallelism.zero_stage=3"}) {
    StatusOr<SimulationReport> a = simulate(load(yaml, {extra, "simulation.network=analytical"}));
    StatusOr<SimulationReport> f = simulate(load(yaml, {extra, "simulation.network=flow"}));
    ASSERT_TRUE(a.ok() && f.ok()) << extra;
    EXPECT_NEAR(f->iteration_time_s, a->iteration_time_s, 0.05 * a->iteration_time_s) << extra;
  }
}

}  // namespace
}  // namespace preflight
