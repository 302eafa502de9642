#include "simulate/simulate.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "config/loader.h"
#include "memory/memory_model.h"
#include "model/transformer.h"
#include "tests/load_scenario.h"

namespace preflight {
namespace {

// GPT-3 13B on 4 DGX A100 nodes: TP 4, PP 4, DP 2, 16 micro-batches of 1.
const char* k13b = R"(
model: {preset: gpt3-13b}
cluster: {preset: dgx-a100, nodes: 4}
training: {seq_len: 2048, global_batch: 32, micro_batch: 1}
parallelism: {tp: 4, pp: 4, sequence_parallel: true}
)";

TEST(Simulate, ThroughputFiguresFollowFromIterationTime) {
  const Scenario s = load(k13b);
  StatusOr<SimulationReport> r = simulate(s);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const double t = r->iteration_time_s;
  ASSERT_GT(t, 0);
  EXPECT_EQ(t, r->execution.iteration_time.to_seconds());
  // tokens/s = global_batch · seq_len / T = 32·2048 / T.
  EXPECT_DOUBLE_EQ(r->tokens_per_s, 32.0 * 2048 / t);
  // MFU = model FLOPs / (T · GPUs · peak), model FLOPs with causal attention as run; the 2021
  // count (72·B·s·l·h²(1 + s/6h + V/12lh)) counts the attention core non-causally, so it is
  // larger.
  EXPECT_DOUBLE_EQ(r->model_flops, causal_model_flops_per_iteration(s));
  EXPECT_DOUBLE_EQ(r->model_flops_2021, model_flops_per_iteration(s));
  EXPECT_LT(r->model_flops, r->model_flops_2021);
  EXPECT_DOUBLE_EQ(r->peak_tflops, 312);  // A100 dense bf16
  EXPECT_NEAR(r->tflops_per_gpu, r->model_flops / t / 32 / 1e12, 1e-9);
  EXPECT_NEAR(r->tflops_per_gpu_2021, r->model_flops_2021 / t / 32 / 1e12, 1e-9);
  EXPECT_NEAR(r->mfu, r->model_flops / (t * 32 * 312e12), 1e-12);
  EXPECT_NEAR(r->mfu_2021, r->model_flops_2021 / (t * 32 * 312e12), 1e-12);
  EXPECT_NEAR(r->mfu, r->tflops_per_gpu / r->peak_tflops, 1e-12);
  EXPECT_GT(r->mfu, 0.0);
  EXPECT_LT(r->mfu, 1.0);  // no faster than the hardware
  EXPECT_EQ(r->parameters, total_parameters(s.model, 4, 2048));
  EXPECT_EQ(r->microbatches, 16);
  EXPECT_EQ(r->execution.stages.size(), 4u);
}

TEST(Simulate, IsAPureFunctionOfTheScenario) {
  const Scenario s = load(k13b);
  StatusOr<SimulationReport> a = simulate(s);
  StatusOr<SimulationReport> b = simulate(s);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->execution.iteration_time, b->execution.iteration_time);
  EXPECT_EQ(a->tokens_per_s, b->tokens_per_s);
  EXPECT_EQ(a->mfu, b->mfu);
}

TEST(Simulate, DefaultScenarioMfuIsPlausible) {
  // GPT-3 175B on 1,024 A100s with Megatron's 3D parallelism: Narayanan et al. 2021 report
  // 138 TFLOP/s per GPU (44% of peak); any MFU outside 20–70% means a model is broken.
  StatusOr<SimulationReport> r = simulate(load(""));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_GT(r->mfu, 0.2);
  EXPECT_LT(r->mfu, 0.7);
  EXPECT_DOUBLE_EQ(r->tokens_per_s, 1536.0 * 2048 / r->iteration_time_s);
}

TEST(Simulate, TraceIsRecordedOnlyWhenAsked) {
  const Scenario s = load(k13b);
  StatusOr<SimulationReport> plain = simulate(s);
  SimulateOptions options;
  options.trace = TraceLevel::kBlocks;
  StatusOr<SimulationReport> traced = simulate(s, options);
  ASSERT_TRUE(plain.ok() && traced.ok());
  EXPECT_TRUE(plain->execution.trace.empty());
  EXPECT_FALSE(traced->execution.trace.empty());
  EXPECT_EQ(plain->execution.iteration_time, traced->execution.iteration_time);
}

TEST(Simulate, RejectsAnInvalidScenario) {
  Scenario s = load(k13b);
  s.parallelism.dp = 3;  // tp·pp·dp = 48 ≠ 32 GPUs
  StatusOr<SimulationReport> r = simulate(s);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
}

TEST(Simulate, RejectsAnUnknownNetworkBackend) {
  Scenario s = load(k13b);
  s.simulation.network = "ns3";
  StatusOr<SimulationReport> r = simulate(s);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("ns3"), std::string::npos) << r.status().message();
}

TEST(Simulate, ReportsMemoryAndStillTimesAStrategyThatDoesNotFit) {
  // GPT-3 175B with TP 1, PP 1 on 8 GPUs: ~175e9 × 18 B of model state per GPU cannot fit
  // in 80 GiB, yet the run still gets a time.
  StatusOr<Scenario> s = load_scenario_text(
      "", "",
      {"cluster.nodes=1", "parallelism.tp=1", "parallelism.pp=1", "parallelism.dp=8",
       "training.global_batch=8", "parallelism.sequence_parallel=false"});
  ASSERT_TRUE(s.ok()) << s.status().message();
  StatusOr<SimulationReport> r = simulate(*s);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_FALSE(r->memory.fits);
  EXPECT_GT(r->iteration_time_s, 0);
  ASSERT_EQ(r->memory.stages.size(), 1u);
  EXPECT_LT(r->memory.stages[0].headroom.count(), 0);
}

TEST(Simulate, MemoryTrackPeaksAtTheModelsInFlightActivations) {
  // 1F1B: stage i holds min(p − i, m) micro-batches of activations at its peak. The executor's
  // counter (resident + layers kept by forwards not yet backwarded) must peak at exactly
  // resident + in_flight × layers_per_stage × layer_activation_bytes.
  StatusOr<Scenario> s =
      load_scenario_text("", "",
                         {"cluster.nodes=4", "parallelism.tp=8", "parallelism.pp=4",
                          "parallelism.dp=1", "training.global_batch=16", "model.preset=gpt3-13b"});
  ASSERT_TRUE(s.ok()) << s.status().message();
  SimulateOptions options;
  options.trace = TraceLevel::kBlocks;
  StatusOr<SimulationReport> r = simulate(*s, options);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const int p = 4;
  const int layers = 40 / p;
  const Bytes per_layer = layer_activation_bytes(*s);
  for (int stage = 0; stage < p; ++stage) {
    const StageMemory& m = r->memory.stages[stage];
    const Bytes resident = m.weights + m.gradients + m.optimizer + m.comm_buffers + m.framework;
    Bytes peak;
    for (const MemorySample& sample : r->execution.memory_trace) {
      if (sample.stage == stage) peak = std::max(peak, sample.bytes);
    }
    EXPECT_EQ(m.microbatches_in_flight, std::min(p - stage, 16));
    EXPECT_EQ(peak,
              resident + per_layer * (static_cast<int64_t>(m.microbatches_in_flight) * layers))
        << "stage " << stage;
  }
}

TEST(Simulate, OverlappedDpBucketsDoNotDelayTpWaits) {
  // The default scenario overlaps DP gradient buckets with the last micro-batch's backward.
  // They run on their own communicator and stream, so a layer's backward in the last
  // micro-batch (when buckets are in flight) takes as long as in any other micro-batch.
  // Regression: both once shared one stream, and each TP wait also waited for a 33 ms bucket.
  // (The buckets' SM share, which does slow that backward, is off here.)
  StatusOr<Scenario> s =
      load_scenario_text("", "", {"cluster.gpu.calibration.comm_sm_interference=0"});
  ASSERT_TRUE(s.ok()) << s.status().message();
  ASSERT_TRUE(s->parallelism.overlap_grad_reduce);
  SimulateOptions options;
  options.trace = TraceLevel::kBlocks;
  StatusOr<SimulationReport> r = simulate(*s, options);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const int last = r->microbatches - 1;
  SimTime last_mb, middle_mb;
  for (const TraceInterval& t : r->execution.trace) {
    if (t.stage != 8 || t.name != "layer.bwd") continue;
    if (t.microbatch == last) last_mb = std::max(last_mb, t.end - t.start);
    if (t.microbatch == last / 2) middle_mb = std::max(middle_mb, t.end - t.start);
  }
  ASSERT_GT(middle_mb, SimTime());
  EXPECT_LT(last_mb.to_seconds(), middle_mb.to_seconds() * 1.01);
}

TEST(Simulate, OverlappedCollectivesSlowTheComputeUnderThem) {
  // The default scenario's last micro-batch backward runs under the DP reduce-scatter buckets:
  // with NCCL's channels taking their share of the SMs it is slower than a middle one, by at
  // most the buckets' SM share (channels / SMs) of its time; without, it is not.
  auto last_over_middle = [](double factor) {
    StatusOr<Scenario> s = load_scenario_text(
        "", "", {"cluster.gpu.calibration.comm_sm_interference=" + std::to_string(factor)});
    EXPECT_TRUE(s.ok()) << s.status().message();
    SimulateOptions options;
    options.trace = TraceLevel::kBlocks;
    StatusOr<SimulationReport> r = simulate(*s, options);
    EXPECT_TRUE(r.ok()) << r.status().message();
    const int last = r->microbatches - 1;
    double last_mb = 0, middle_mb = 0, stage0_last = 0;
    for (const TraceInterval& t : r->execution.trace) {
      if (t.name != "layer.bwd") continue;
      const double d = (t.end - t.start).to_seconds();
      if (t.stage == 0 && t.microbatch == last) stage0_last = std::max(stage0_last, d);
      if (t.stage == 0 && t.microbatch == last / 2) middle_mb = std::max(middle_mb, d);
    }
    last_mb = stage0_last;
    return last_mb / middle_mb;
  };
  EXPECT_NEAR(last_over_middle(0), 1.0, 1e-9);
  const double slowed = last_over_middle(1);
  EXPECT_GT(slowed, 1.0);
  EXPECT_LT(slowed, 1.0 + 32.0 / 108.0);  // at most 32 channels of the A100's 108 SMs
}

TEST(Simulate, OverlappedFlexAllToAllsSlowTheComputeBesideThem) {
  // Mixtral with the flex dispatcher and overlap_moe_comm: the all-to-alls run on the
  // communication stream beside the other micro-batch's compute and hold their kernels' SMs
  // (HybridEP 16 of the H100's 132), so the compute beside them runs on the rest. With the SM
  // interference off the flex backend's SM count changes nothing; with it the iteration is
  // longer the more SMs the kernels hold, by less than their share of the compute.
  auto run = [](const std::vector<std::string>& extra) {
    std::vector<std::string> set = {"model.preset=mixtral-8x7b",
                                    "model.layers=8",
                                    "model.moe.dispatcher=flex",
                                    "cluster.preset=dgx-h100",
                                    "cluster.nodes=2",
                                    "training.seq_len=4096",
                                    "training.global_batch=32",
                                    "training.micro_batch=1",
                                    "parallelism.tp=1",
                                    "parallelism.pp=1",
                                    "parallelism.ep=8",
                                    "parallelism.etp=1",
                                    "parallelism.overlap_moe_comm=true"};
    set.insert(set.end(), extra.begin(), extra.end());
    StatusOr<Scenario> s = load_scenario_text("", "", set);
    EXPECT_TRUE(s.ok()) << s.status().message();
    StatusOr<SimulationReport> r = simulate(*s, SimulateOptions());
    EXPECT_TRUE(r.ok()) << r.status().message();
    return r->iteration_time_s;
  };
  const std::string off = "cluster.gpu.calibration.comm_sm_interference=0";
  EXPECT_DOUBLE_EQ(run({off, "model.moe.flex_sms=1"}), run({off, "model.moe.flex_sms=64"}));
  const double few = run({"model.moe.flex_sms=1"});
  const double hybridep = run({"model.moe.flex_backend=hybridep"});
  const double deepep = run({"model.moe.flex_backend=deepep"});
  EXPECT_LT(few, hybridep);
  EXPECT_LT(hybridep, deepep);
  EXPECT_LT(deepep, run({off}) * (1 + 20.0 / (132 - 20)));
}

TEST(Simulate, HostCostsRunAtTheClustersHostCpuSpeed) {
  // GPT-3 1.7B at 256 tokens per micro-batch on one DGX H100: every kernel is shorter than the
  // host's launch of it, so the iteration follows the host thread. A host twice as slow per
  // framework op (cluster.host_overhead_factor, Grace against x86: TransformerEngine #2053)
  // doubles each launch: the host-bound time grows in proportion, the same step from 1 to 2 as
  // from 2 to 3. Under full-iteration CUDA graphs nothing is launched per kernel to slow.
  auto time = [](double factor, bool graphs) {
    StatusOr<Scenario> s = load_scenario_text(
        "", "",
        {"model.preset=gpt3-1.7b", "cluster.preset=dgx-h100", "cluster.nodes=1",
         "training.seq_len=256", "training.global_batch=64", "training.micro_batch=1",
         "parallelism.tp=1", "parallelism.pp=1", "parallelism.dp=8",
         "training.cuda_graphs=" + std::string(graphs ? "full" : "none"),
         "cluster.host_overhead_factor=" + std::to_string(factor)});
    EXPECT_TRUE(s.ok()) << s.status().message();
    StatusOr<SimulationReport> r = simulate(*s);
    EXPECT_TRUE(r.ok()) << r.status().message();
    return r->iteration_time_s;
  };
  const double t1 = time(1, false), t2 = time(2, false), t3 = time(3, false);
  EXPECT_GT(t2, 1.6 * t1);  // host-bound: nearly all of the time is launches
  EXPECT_NEAR(t3 - t2, t2 - t1, 0.05 * (t2 - t1));
  EXPECT_EQ(time(1, true), time(3, true));
}

TEST(Simulate, FlowNetworkMatchesAnalyticalWhenNoLinkIsShared) {
  // Two DGX H100 nodes, TP 8, PP 2, DP 1, untied embeddings: the only cross-node traffic is each
  // GPU's pipeline send to its peer on the other node, over its own rail NIC and one leaf (the
  // shortest network path, whose hop latencies L stands for). No link is shared, so the
  // flow-level network must give the analytical times exactly: α + β + L + S/(NIC·efficiency).
  const std::vector<std::string> base = {"model.preset=gpt3-13b",   "cluster.preset=dgx-h100",
                                         "cluster.nodes=2",         "parallelism.tp=8",
                                         "parallelism.pp=2",        "parallelism.dp=1",
                                         "training.global_batch=8", "model.tied_embeddings=false"};
  StatusOr<Scenario> analytical = load_scenario_text("", "", base);
  std::vector<std::string> with_flow = base;
  with_flow.push_back("simulation.network=flow");
  StatusOr<Scenario> flow = load_scenario_text("", "", with_flow);
  ASSERT_TRUE(analytical.ok() && flow.ok()) << analytical.status().message();
  StatusOr<SimulationReport> a = simulate(*analytical);
  StatusOr<SimulationReport> f = simulate(*flow);
  ASSERT_TRUE(a.ok() && f.ok()) << f.status().message();
  EXPECT_TRUE(f->execution.has_network_stats);
  EXPECT_GT(f->execution.network.flows, 0);
  // Equal to the picosecond up to rounding of each transfer (one ps per send at most).
  EXPECT_NEAR(f->iteration_time_s, a->iteration_time_s, 1e-9 * 64);
}

TEST(Simulate, FlowNetworkSlowsSharedNics) {
  // DGX A100, TP 8, PP 4 over 4 nodes: every GPU sends its pipeline activations over its own
  // rail NIC. With one NIC per node, all eight GPUs of a node share it, so the flow-level run
  // must take longer.
  const std::vector<std::string> base = {"model.preset=gpt3-13b",    "cluster.preset=dgx-a100",
                                         "cluster.nodes=4",          "parallelism.tp=8",
                                         "parallelism.pp=4",         "parallelism.dp=1",
                                         "training.global_batch=16", "simulation.network=flow"};
  std::vector<std::string> one_nic = base;
  one_nic.push_back("cluster.nics_per_node=1");
  StatusOr<Scenario> eight = load_scenario_text("", "", base);
  StatusOr<Scenario> one = load_scenario_text("", "", one_nic);
  ASSERT_TRUE(eight.ok() && one.ok()) << one.status().message();
  StatusOr<SimulationReport> r8 = simulate(*eight);
  StatusOr<SimulationReport> r1 = simulate(*one);
  ASSERT_TRUE(r8.ok() && r1.ok()) << r1.status().message();
  EXPECT_GT(r1->iteration_time_s, r8->iteration_time_s);
}

TEST(Simulate, FlowNetworkCarriesTpGroupsThatSpanNodes) {
  // TP 16 over two DGX H100 nodes (no PP, no DP): the only cross-node traffic is the TP
  // collectives of every layer, which the flow network carries. Spine-leaf fabrics with one
  // node per leaf (8 NIC ports down): 16-port leaves have 8 uplinks (1:1), 12-port leaves at 2:1
  // only 4, so the TP traffic between the nodes shares half as many uplinks and slows. No host
  // launch cost, so that the host does not hide the network (this small job is host-bound).
  auto run = [](const std::string& ratio, int leaf_radix) {
    StatusOr<Scenario> s = load_scenario_text(
        "", "",
        {"model.preset=llama2-7b", "cluster.preset=dgx-h100", "cluster.nodes=2",
         "parallelism.tp=16", "parallelism.pp=1", "parallelism.dp=1", "training.global_batch=4",
         "simulation.network=flow", "cluster.topology.kind=spine_leaf",
         "training.stack.launch_overhead=0us", "cluster.topology.oversubscription=" + ratio,
         "cluster.topology.leaf_radix=" + std::to_string(leaf_radix)});
    EXPECT_TRUE(s.ok()) << s.status().message();
    StatusOr<SimulationReport> r = simulate(*s);
    EXPECT_TRUE(r.ok()) << r.status().message();
    return *r;
  };
  const SimulationReport full = run("1:1", 16);
  const SimulationReport half = run("2:1", 12);
  EXPECT_GT(full.execution.network.flows, 0);
  bool carried = false;
  for (const CollectiveStats& c : full.execution.stages[0].collectives) {
    if (c.name.rfind("tp.", 0) == 0 && c.count > 0) carried |= c.time != c.planned_time;
  }
  EXPECT_TRUE(carried);
  EXPECT_GT(half.iteration_time_s, full.iteration_time_s * 1.05);
}

TEST(Simulate, FlowNetworkCarriesTheTiedEmbeddingAllReduce) {
  // Two DGX H100 nodes, TP 8, PP 2 with tied embeddings: the first and last stage (one node
  // each) all-reduce the embedding gradients through the fabric, so the op's executed time is
  // the flow network's, not the planned one.
  StatusOr<Scenario> s =
      load_scenario_text("", "",
                         {"model.preset=gpt3-13b", "cluster.preset=dgx-h100", "cluster.nodes=2",
                          "parallelism.tp=8", "parallelism.pp=2", "parallelism.dp=1",
                          "training.global_batch=8", "simulation.network=flow"});
  ASSERT_TRUE(s.ok()) << s.status().message();
  ASSERT_TRUE(s->model.tied_embeddings);
  StatusOr<SimulationReport> r = simulate(*s);
  ASSERT_TRUE(r.ok()) << r.status().message();
  for (const StageResult& stage : r->execution.stages) {
    bool found = false;
    for (const CollectiveStats& c : stage.collectives) {
      if (c.name != "embedding.allreduce" || c.count == 0) continue;
      found = true;
      EXPECT_NE(c.time, c.planned_time);
    }
    EXPECT_TRUE(found);
  }
}

TEST(Simulate, FlowNetworkReportsTierLoadOverTime) {
  StatusOr<Scenario> s =
      load_scenario_text("", "",
                         {"model.preset=gpt3-13b", "cluster.preset=dgx-h100", "cluster.nodes=4",
                          "parallelism.tp=8", "parallelism.pp=2", "parallelism.dp=2",
                          "training.global_batch=16", "simulation.network=flow"});
  ASSERT_TRUE(s.ok()) << s.status().message();
  StatusOr<SimulationReport> r = simulate(*s);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const NetworkStats& n = r->execution.network;
  ASSERT_FALSE(n.tiers.empty());
  for (const TierSeries& t : n.tiers) {
    EXPECT_GT(t.capacity, 0) << t.tier;
    EXPECT_GT(t.peak, 0) << t.tier;
    EXPECT_LE(t.peak, 1.0) << t.tier;
    EXPECT_LE(t.mean, t.peak) << t.tier;
    ASSERT_FALSE(t.points.empty());
    EXPECT_LE(t.points.size(), 501u) << t.tier;
    EXPECT_EQ(t.points.front().first, SimTime());
    EXPECT_EQ(t.points.back().first, r->execution.iteration_time);
    for (size_t i = 1; i < t.points.size(); ++i) {
      EXPECT_LT(t.points[i - 1].first, t.points[i].first);
    }
    // The step function integrates to the mean.
    double integral = 0;
    for (size_t i = 0; i + 1 < t.points.size(); ++i) {
      integral += t.points[i].second * (t.points[i + 1].first - t.points[i].first).to_seconds();
    }
    EXPECT_NEAR(integral / r->iteration_time_s, t.mean, 1e-6 + 1e-3 * t.mean) << t.tier;
  }
}

TEST(Simulate, CombinedOneFOneBRunsItsPairsLayerByLayerAndCostsTheHostItsLead) {
  // Megatron-Bridge PR #1760 turned moe_a2a_overlap off for Qwen3-235B-A22B in BF16 on 64 B200s
  // (PP 8, EP 8, micro-batch 1, global batch 1,024) "due to CPU overhead": the step went from
  // 17.2 to 16.0 s. The combined 1F1B schedule runs the two micro-batches' layers in lockstep,
  // so the all-to-all dispatcher's sync in each forward MoE layer also waits for the other
  // micro-batch's layer queued before it, and the host is never more than a layer pair ahead.
  // Run whole pass after whole pass the host ran a pass ahead and the overlap came out 0.6 s
  // faster than without it; in lockstep it is slower, as measured.
  auto time = [](bool overlap) {
    StatusOr<Scenario> s = load_scenario_text(
        "", "",
        {"model.preset=qwen3-235b-a22b",
         "model.moe.routing=balanced",
         "cluster.preset=dgx-b200",
         "cluster.gpus=64",
         "training.stack=megatron-core",
         "training.seq_len=4096",
         "training.global_batch=1024",
         "training.micro_batch=1",
         "training.precision=bf16",
         "parallelism.tp=1",
         "parallelism.pp=8",
         "parallelism.vpp=2",
         "parallelism.schedule=interleaved",
         "parallelism.ep=8",
         "parallelism.etp=1",
         "parallelism.distributed_optimizer=true",
         "parallelism.overlap_grad_reduce=true",
         "parallelism.overlap_param_gather=true",
         "parallelism.overlap_p2p=true",
         "parallelism.overlap_moe_comm=" + std::string(overlap ? "true" : "false")});
    EXPECT_TRUE(s.ok()) << s.status().message();
    StatusOr<SimulationReport> r = simulate(*s);
    EXPECT_TRUE(r.ok()) << r.status().message();
    return r->iteration_time_s;
  };
  const double on = time(true), off = time(false);
  EXPECT_GT(on, off);
  EXPECT_NEAR(on, 17.2, 0.1 * 17.2);
  EXPECT_NEAR(off, 16.0, 0.1 * 16.0);
}

}  // namespace
}  // namespace preflight
