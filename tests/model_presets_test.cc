// Every issue-6 model preset (and the hybrid Nemotron-H / Nemotron 3 ones) runs end to end on a
// matching cluster with a published-style strategy and gives a believable breakdown; routing skew
// and DualPipe move the time the expected way; invalid combinations are clear one-line errors.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "config/loader.h"
#include "simulate/simulate.h"

namespace preflight {
namespace {

struct Case {
  const char* model;
  const char* cluster;
  int nodes;
  std::vector<std::string> set;
};

std::vector<std::string> with_common(const Case& c) {
  std::vector<std::string> set = {
      std::string("model.preset=") + c.model,     std::string("cluster.preset=") + c.cluster,
      "cluster.nodes=" + std::to_string(c.nodes), "training.seq_len=4096",
      "parallelism.sequence_parallel=false",      "parallelism.distributed_optimizer=true"};
  set.insert(set.end(), c.set.begin(), c.set.end());
  return set;
}

std::vector<Case> published_style() {
  return {
      {"deepseek-v2-lite",
       "dgx-h100",
       8,
       {"training.global_batch=512", "parallelism.tp=1", "parallelism.pp=1", "parallelism.dp=64",
        "parallelism.ep=8"}},
      // DeepSeek-V3 report §3.2: PP 16, EP 64 (over 8 nodes), ZeRO-1, DualPipe.
      {"deepseek-v3",
       "dgx-h100",
       128,
       {"training.global_batch=2048", "parallelism.tp=1", "parallelism.pp=16", "parallelism.dp=64",
        "parallelism.ep=64", "parallelism.first_stage_layers=4", "parallelism.last_stage_layers=1",
        "parallelism.schedule=dualpipe"}},
      {"qwen3-30b-a3b",
       "dgx-h100",
       8,
       {"training.global_batch=512", "parallelism.tp=1", "parallelism.pp=2", "parallelism.dp=32",
        "parallelism.ep=8"}},
      // Two GB200 NVL72 racks: TP 4 and EP 8 inside the NVLink domain.
      // Megatron-Bridge's GB200 layout (TP 1, PP 8, EP 32 on 256 GPUs); at TP 4 with EP 8 and
      // 1,024 tokens per rank a micro-batch, its MoE layers would be host-bound (16 local
      // experts, docs/moe.md).
      {"qwen3-235b-a22b",
       "gb200-nvl72",
       4,
       {"cluster.gpus=256", "training.global_batch=1024", "parallelism.tp=1", "parallelism.pp=8",
        "parallelism.dp=32", "parallelism.ep=32", "parallelism.etp=1"}},
      {"mixtral-8x7b",
       "dgx-h100",
       8,
       {"training.global_batch=512", "parallelism.tp=2", "parallelism.sequence_parallel=true",
        "parallelism.pp=1", "parallelism.dp=32", "parallelism.ep=8", "parallelism.etp=1"}},
      {"mixtral-8x22b",
       "dgx-h100",
       32,
       {"training.global_batch=1024", "parallelism.tp=4", "parallelism.sequence_parallel=true",
        "parallelism.pp=4", "parallelism.dp=16", "parallelism.ep=8", "parallelism.etp=1"}},
      {"gpt-oss-120b",
       "dgx-h100",
       8,
       {"training.global_batch=512", "parallelism.tp=1", "parallelism.pp=4", "parallelism.dp=16",
        "parallelism.ep=16"}},
      {"llama4-scout",
       "dgx-h100",
       8,
       {"training.global_batch=512", "parallelism.tp=4", "parallelism.sequence_parallel=true",
        "parallelism.pp=2", "parallelism.dp=8", "parallelism.ep=16", "parallelism.etp=1"}},
      {"llama4-maverick",
       "dgx-h100",
       32,
       {"training.global_batch=1024", "parallelism.tp=4", "parallelism.sequence_parallel=true",
        "parallelism.pp=4", "parallelism.dp=16", "parallelism.ep=16", "parallelism.etp=1"}},
      {"grok-1",
       "dgx-h100",
       16,
       {"training.global_batch=512", "parallelism.tp=8", "parallelism.sequence_parallel=true",
        "parallelism.pp=8", "parallelism.dp=2", "parallelism.ep=8", "parallelism.etp=1"}},
      {"kimi-k2",
       "dgx-h100",
       128,
       {"training.global_batch=2048", "parallelism.tp=1", "parallelism.pp=16", "parallelism.dp=64",
        "parallelism.ep=64", "parallelism.first_stage_layers=4", "parallelism.last_stage_layers=1",
        "parallelism.schedule=dualpipe"}},
      {"nemotron4-15b",
       "dgx-h100",
       8,
       {"training.global_batch=512", "parallelism.tp=2", "parallelism.sequence_parallel=true",
        "parallelism.pp=1", "parallelism.dp=32"}},
      // Nemotron-H (dense hybrids): TP within the node (Mamba-2 groups 8), SP.
      {"nemotron-h-8b",
       "dgx-h100",
       1,
       {"training.global_batch=64", "parallelism.tp=2", "parallelism.sequence_parallel=true",
        "parallelism.pp=1", "parallelism.dp=4"}},
      {"nemotron-h-47b",
       "dgx-h100",
       8,
       {"training.global_batch=256", "parallelism.tp=8", "parallelism.sequence_parallel=true",
        "parallelism.pp=2", "parallelism.dp=4"}},
      {"nemotron-h-56b",
       "dgx-h100",
       8,
       {"training.global_batch=256", "parallelism.tp=8", "parallelism.sequence_parallel=true",
        "parallelism.pp=2", "parallelism.dp=4"}},
      // Megatron-Bridge's Nemotron 3 perf configs (nemotron_3_workload_base_configs.py): Nano
      // on 8 B200 (GBS 512, MBS 2, TP 1, EP 8), Super on 64 B200 (GBS 512, MBS 1, TP 1, EP 8).
      {"nemotron3-nano",
       "dgx-b200",
       1,
       {"training.seq_len=8192", "training.global_batch=512", "training.micro_batch=2",
        "parallelism.tp=1", "parallelism.pp=1", "parallelism.dp=8", "parallelism.ep=8"}},
      {"nemotron3-super",
       "dgx-b200",
       8,
       {"training.seq_len=8192", "training.global_batch=512", "parallelism.tp=1",
        "parallelism.pp=1", "parallelism.dp=64", "parallelism.ep=8"}},
      // Ultra: TP 8 with SP and EP 64 in the NVLink domain, as NVIDIA's own pretraining on
      // GB200 (its pretrain script), on 8 NVL72 racks.
      {"nemotron3-ultra",
       "gb200-nvl72",
       8,
       {"training.seq_len=8192", "training.global_batch=576", "parallelism.tp=8",
        "parallelism.sequence_parallel=true", "parallelism.pp=1", "parallelism.dp=72",
        "parallelism.ep=64", "parallelism.etp=1"}},
      // Nemotron-4 340B report: TP 8, PP 12, interleaved, on 768 H100s.
      {"nemotron4-340b",
       "dgx-h100",
       96,
       {"training.global_batch=768", "parallelism.tp=8", "parallelism.sequence_parallel=true",
        "parallelism.pp=12", "parallelism.vpp=8", "parallelism.schedule=interleaved",
        "parallelism.dp=8"}},
  };
}

Case published_case(const std::string& model) {
  for (const Case& c : published_style()) {
    if (model == c.model) return c;
  }
  ADD_FAILURE() << model << ": no published-style case";
  return published_style()[0];
}

StatusOr<SimulationReport> run(const std::vector<std::string>& set) {
  StatusOr<Scenario> s = load_scenario("", set);
  if (!s.ok()) return s.status();
  return simulate(*s);
}

TEST(ModelPresets, EachRunsWithAPublishedStyleStrategy) {
  for (const Case& c : published_style()) {
    SCOPED_TRACE(c.model);
    StatusOr<SimulationReport> r = run(with_common(c));
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_GT(r->iteration_time_s, 0);
    EXPECT_GT(r->mfu, 0.05);
    EXPECT_LT(r->mfu, 0.75);
    const Breakdown& b = r->execution.stages[r->execution.critical_stage].breakdown;
    if (r->scenario.model.moe.enabled()) {
      EXPECT_GT(b.ep_comm.to_seconds(), 0) << "EP all-to-all shown separately";
      EXPECT_LT(r->active_parameters, r->parameters);
      EXPECT_FALSE(r->moe_layers.empty());
    } else {
      EXPECT_EQ(b.ep_comm.to_seconds(), 0);
    }
  }
}

TEST(ModelPresets, Nemotron3NanoOnEightGpusWithEp8) {
  // Megatron-Bridge's B200 configuration of Nemotron 3 Nano: 8 GPUs, TP 1, EP 8, GBS 512, MBS
  // 2, seq 8192. It fits in 180 GB (that recipe runs without recompute of the MoE layers);
  // every one of the 23 MoE layers reports its routing; the EP all-to-alls are their own
  // category, the Mamba-2 layers' scan runs in the compute.
  StatusOr<SimulationReport> r = run(with_common(published_case("nemotron3-nano")));
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->scenario.model.name, "nemotron3-nano");
  EXPECT_EQ(r->scenario.parallelism.ep, 8);
  EXPECT_EQ(r->scenario.cluster.total_gpus(), 8);
  EXPECT_TRUE(r->memory.fits);
  EXPECT_EQ(r->moe_layers.size(), 23u);
  EXPECT_GT(r->mfu, 0.2);
  EXPECT_LT(r->mfu, 0.7);
  const Breakdown& b = r->execution.stages[0].breakdown;
  EXPECT_GT(b.ep_comm.to_seconds(), 0);
  EXPECT_EQ(b.tp_comm.to_seconds(), 0);  // TP 1
  EXPECT_EQ(b.cp_comm.to_seconds(), 0);
  EXPECT_NEAR(static_cast<double>(r->parameters) / 31.6e9, 1.0, 0.01);
}

TEST(ModelPresets, ContextParallelCommunicationIsShownSeparately) {
  StatusOr<SimulationReport> r =
      run({"model.preset=llama3-70b", "cluster.preset=dgx-h100", "cluster.nodes=16",
           "training.seq_len=32768", "training.global_batch=64", "parallelism.tp=8",
           "parallelism.sequence_parallel=true", "parallelism.pp=2", "parallelism.cp=4",
           "parallelism.dp=2", "parallelism.distributed_optimizer=true"});
  ASSERT_TRUE(r.ok()) << r.status().message();
  const Breakdown& b = r->execution.stages[r->execution.critical_stage].breakdown;
  EXPECT_GE(b.cp_comm.to_seconds(), 0);
  bool ring = false;
  for (const CollectiveStats& c : r->execution.stages[0].collectives) {
    ring |= c.name == "cp.ring.kv" && c.count > 0;
  }
  EXPECT_TRUE(ring);
}

TEST(ModelPresets, ZipfRoutingSlowsA64ExpertModel) {
  const std::vector<std::string> base = {"model.preset=deepseek-v2-lite",
                                         "cluster.preset=dgx-h100",
                                         "cluster.nodes=8",
                                         "training.seq_len=4096",
                                         "training.global_batch=512",
                                         "parallelism.tp=1",
                                         "parallelism.sequence_parallel=false",
                                         "parallelism.pp=1",
                                         "parallelism.dp=64",
                                         "parallelism.ep=8",
                                         "parallelism.distributed_optimizer=true"};
  std::vector<std::string> ideal = base;
  ideal.push_back("model.moe.routing=uniform");
  StatusOr<SimulationReport> uniform = run(ideal);
  std::vector<std::string> skewed = base;
  skewed.push_back("model.moe.routing=zipf");
  skewed.push_back("model.moe.zipf_exponent=1.2");
  StatusOr<SimulationReport> zipf = run(skewed);
  ASSERT_TRUE(uniform.ok() && zipf.ok());
  EXPECT_GT(zipf->iteration_time_s, uniform->iteration_time_s * 1.1);
  EXPECT_GT(zipf->moe_layers[0].imbalance, 1.2);
  EXPECT_DOUBLE_EQ(uniform->moe_layers[0].imbalance, 1.0);
}

TEST(ModelPresets, DualPipeHidesExpertAllToAllsBehindThePairedCompute) {
  Case c = published_style()[1];  // DeepSeek-V3
  std::vector<std::string> dual = with_common(c);
  std::vector<std::string> zb = dual;
  zb.push_back("parallelism.schedule=zb_h1");
  StatusOr<SimulationReport> d = run(dual);
  StatusOr<SimulationReport> z = run(zb);
  ASSERT_TRUE(d.ok() && z.ok());
  EXPECT_LT(d->iteration_time_s, z->iteration_time_s);
}

// The Blackwell presets' SSD-scan fraction against the measurement it comes from: a pure Mamba-2
// model (d_model 2048, 48 layers, batch 4 x 4096, bf16) trains at 360.4 TFLOP/s on a GB200 and
// 239.2 on an H200 (state-spaces/mamba issue #904), 1.51x. With Hopper's fraction on both the
// ratio would be 1.92x (the GEMMs run 2.4x faster); the GB200 preset's slower scan brings it back.
// The measurement ran mamba_ssm's own Mamba2 module (batch-first, the gate in the fused RMSNorm),
// not Megatron-Core's mixer: training.stack.mamba_mixer mamba_ssm.
double pure_mamba2_seconds(const std::string& cluster, int gpus,
                           const std::vector<std::string>& set = {}) {
  const std::string g = std::to_string(gpus);
  const std::string yaml =
      "model:\n"
      "  name: mamba2-1.3b\n"
      "  layers: 48\n"
      "  hybrid_pattern: " +
      std::string(48, 'M') +
      "\n"
      "  hidden: 2048\n"
      "  heads: 16\n"
      "  ffn_hidden: 8192\n"
      "  vocab: 50280\n"
      "  norm: rmsnorm\n"
      "  position_embedding: none\n"
      "  tied_embeddings: true\n"
      "  linear_bias: false\n"
      "  dropout: false\n"
      "  max_seq_len: 4096\n"
      "  mamba: {heads: 64, head_dim: 64, state: 128, groups: 1, conv_kernel: 4, chunk: 256}\n"
      "cluster: {preset: " +
      cluster + ", gpus: " + g +
      "}\n"
      "training: {stack: {preset: megatron-core, mamba_mixer: mamba_ssm}, seq_len: 4096, "
      "micro_batch: 4, global_batch: " +
      std::to_string(4 * gpus) +
      ", precision: bf16}\n"
      "parallelism: {tp: 1, pp: 1, dp: " +
      g + "}\n";
  StatusOr<Scenario> s = load_scenario_text(yaml, "mamba2.yaml", set);
  EXPECT_TRUE(s.ok()) << s.status().message();
  if (!s.ok()) return 0;
  StatusOr<SimulationReport> r = simulate(*s);
  EXPECT_TRUE(r.ok()) << r.status().message();
  if (!r.ok()) return 0;
  // Per GPU and step as the single-GPU measurement ran: without the data-parallel reduction the
  // GB200 job of 4 (a tray) adds.
  return r->iteration_time_s - r->execution.stages[0].breakdown.dp_comm.to_seconds();
}

TEST(ModelPresets, BlackwellMamba2ScanKeepsTheMeasuredSpeedupOverHopper) {
  const double h200 = pure_mamba2_seconds("dgx-h200", 1);
  const double gb200 = pure_mamba2_seconds("gb200-nvl72", 4);
  // The scan at Hopper's fractions of the peak and of the HBM the other kernels reach.
  const double gb200_hopper_fraction =
      pure_mamba2_seconds("gb200-nvl72", 4,
                          {"cluster.gpu.calibration.ssd_efficiency=0.09",
                           "cluster.gpu.calibration.ssd_memory_efficiency=0.544"});
  ASSERT_GT(gb200, 0);
  EXPECT_NEAR(h200 / gb200, 360.4 / 239.2, 0.03);
  EXPECT_GT(h200 / gb200_hopper_fraction, 1.8);
}

TEST(ModelPresets, InvalidCombinationsAreClearErrors) {
  auto error = [](const std::vector<std::string>& set) {
    StatusOr<Scenario> s = load_scenario("", set);
    return s.ok() ? std::string("ok") : s.status().message();
  };
  const std::vector<std::string> moe = {"model.preset=mixtral-8x7b",
                                        "cluster.preset=dgx-h100",
                                        "cluster.nodes=8",
                                        "parallelism.tp=1",
                                        "parallelism.sequence_parallel=false",
                                        "parallelism.pp=1",
                                        "parallelism.dp=64",
                                        "training.global_batch=512"};
  auto with = [&](std::vector<std::string> set, const std::string& extra) {
    set.push_back(extra);
    return set;
  };
  EXPECT_NE(error(with(moe, "parallelism.ep=3"))
                .find("parallelism.ep: 3: expected a divisor of "
                      "model.moe.experts (8)"),
            std::string::npos);
  EXPECT_NE(error(with(moe, "parallelism.ep=16")).find("model.moe.experts"), std::string::npos);
  EXPECT_NE(error({"model.preset=llama3-8b", "cluster.preset=dgx-h100", "cluster.nodes=1",
                   "training.seq_len=1000", "training.global_batch=8", "parallelism.tp=1",
                   "parallelism.sequence_parallel=false", "parallelism.pp=1", "parallelism.cp=8",
                   "parallelism.dp=1"})
                .find("parallelism.cp: 8: expected training.seq_len (1000) to be a multiple"),
            std::string::npos);
  EXPECT_NE(
      error({"model.preset=deepseek-v2-lite", "model.mla.v_head_dim=0", "cluster.preset=dgx-h100"})
          .find("model.mla"),
      std::string::npos);
  EXPECT_NE(error({"model.preset=deepseek-v2-lite", "model.mla.kv_lora_rank=100000",
                   "cluster.preset=dgx-h100"})
                .find("model.mla.kv_lora_rank: 100000"),
            std::string::npos);
  EXPECT_NE(error({"cluster.preset=dgx-h100", "training.precision=nvfp4"})
                .find("training.precision: nvfp4"),
            std::string::npos);
  EXPECT_NE(error(with(moe, "parallelism.ep=1")).find("ok"), std::string::npos);
}

}  // namespace
}  // namespace preflight
