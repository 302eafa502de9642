#include "memory/memory_model.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "config/loader.h"
#include "config/presets.h"
#include "model/transformer.h"
#include "tests/load_scenario.h"
#include "validation/dataset.h"
#include "workload/generator.h"

namespace preflight {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// Korthikanti et al. 2022 count with Megatron's unfused attention core.
const std::vector<std::string> kSequenceParallelSelective = {"parallelism.sequence_parallel=true",
                                                             "parallelism.recompute=selective"};

void expect_gib_near(Bytes actual, double expected_gib, const char* what) {
  const double gib = static_cast<double>(actual.count()) / kGiB;
  EXPECT_NEAR(gib, expected_gib, 0.005 * expected_gib) << what << ": " << gib << " GiB";
}

// ---------------------------------------------------------------------------------------------
// Korthikanti et al. 2022, Figure 1: the first stage's activations and the transformer layers'
// weights, gradients and optimizer states (18 B/param), for GPT-3 175B, 530B, 1T and a 22B
// model, all at sequence 2048, TP 8. Per layer and micro-batch (sbh = s·b·h bytes):
//   TP only:            sbh·(10 + 24/t + 5·a·s/(h·t))
//   TP + SP + selective: sbh·34/t
// First stage of 1F1B: p micro-batches × L/p layers; interleaved: × (1 + (p−1)/(p·v)).

// 175B (h 12288, a 96, L 96), TP 8, PP 8, interleaved with v = 3, micro-batch 1; 128
// micro-batches, so stage 0 warms up (p−1)·2 + (v−1)·p = 30 chunks of 4 layers and holds a 31st
// before its first backward: 31/3 = 8·(1 + 7/24) = 10.33 layer sets = 124 layers.
const char* const kGpt175b = R"(
model: {preset: gpt3-175b}
cluster: {preset: dgx-a100, nodes: 8}
training: {seq_len: 2048, global_batch: 128, micro_batch: 1, flash_attention: false}
parallelism: {tp: 8, pp: 8, vpp: 3, schedule: interleaved}
)";

TEST(EstimateMemory, Korthikanti175bInterleavedFirstStage) {
  const MemoryReport r = estimate_memory(load(kGpt175b));
  ASSERT_EQ(r.stages.size(), 8u);
  EXPECT_DOUBLE_EQ(r.stages[0].layer_sets_in_flight, 8.0 * (1.0 + 7.0 / 24.0));
  // 2048·12288·(10 + 3 + 10) = 578,813,952 B per layer × 124 = 71,772,930,048 B = 66.84 GiB.
  EXPECT_EQ(r.stages[0].layer_activations.count(), 71'772'930'048);
  expect_gib_near(r.stages[0].layer_activations, 66.84, "175B, no SP, no recompute");
  // The embedding's token ids and dropout masks add 15 chunk-0 forwards × (s·h + 8·s) B = 0.5 %.
  EXPECT_NEAR(r.stages[0].activations.to_gib(), 66.84, 0.01 * 66.84);

  const MemoryReport sp = estimate_memory(load(kGpt175b, kSequenceParallelSelective));
  // 2048·12288·34/8 = 106,954,752 B per layer × 124 = 13,262,389,248 B = 12.35 GiB.
  EXPECT_EQ(sp.stages[0].layer_activations.count(), 13'262'389'248);
  expect_gib_near(sp.stages[0].layer_activations, 12.35, "175B, SP + selective");
}

TEST(EstimateMemory, Korthikanti175bModelStates) {
  const Scenario s = load(kGpt175b);
  // 18 B × 12·L·h²/(t·p) = 18 × 12·96·12288²/64 = 48,922,361,856 B = 45.5625 GiB. A middle stage
  // holds only transformer layers (12·h² + 13·h parameters each: +0.009 %).
  const StageMemory middle = estimate_memory(s).stages[3];
  expect_gib_near(middle.weights + middle.gradients + middle.optimizer, 45.5625, "175B states");
  EXPECT_EQ(middle.weights.count() * 9,
            (middle.weights + middle.gradients + middle.optimizer).count());
}

// 22B (h 6144, a 64, L 48), TP 8, PP 1, micro-batch 4: the figure is all 48 layers of one
// micro-batch (no pipeline, so one in flight):
//   none: 2048·4·6144·(13 + 5·64·2048/(6144·8)) = 1,325,400,064 B × 48 = 59.25 GiB
//   SP + selective: 2048·4·6144·34/8 = 213,909,504 B × 48 = 9.5625 GiB
const char* const kGpt22b = R"(
model: {name: gpt-22b, layers: 48, hidden: 6144, heads: 64, vocab: 50257, max_seq_len: 2048}
cluster: {preset: dgx-a100, nodes: 1}
training: {seq_len: 2048, global_batch: 4, micro_batch: 4, flash_attention: false}
parallelism: {tp: 8, pp: 1}
)";

// Mixtral-8x7B cut to 8 layers, EP 8 over two stages of 8 H100s.
const char* kMixtralEp8 = R"(
model: {preset: mixtral-8x7b, layers: 8}
cluster: {preset: dgx-h100, nodes: 2}
training: {seq_len: 4096, global_batch: 64, micro_batch: 1}
parallelism: {tp: 1, pp: 2, dp: 8, ep: 8}
)";

TEST(EstimateMemory, CombinedOneFOneBHoldsOneMoreMicrobatch) {
  // overlap_moe_comm in a pipeline: Megatron's combined 1F1B runs one more warm-up forward, so
  // each stage holds one more micro-batch's activations (capped at m): p - i -> p - i + 1.
  const MemoryReport plain = estimate_memory(load(kMixtralEp8));
  const MemoryReport pairs =
      estimate_memory(load(kMixtralEp8, {"parallelism.overlap_moe_comm=true"}));
  ASSERT_EQ(plain.stages.size(), 2u);
  ASSERT_EQ(pairs.stages.size(), 2u);
  for (int st = 0; st < 2; ++st) {
    EXPECT_EQ(plain.stages[st].microbatches_in_flight, 2 - st);
    EXPECT_EQ(pairs.stages[st].microbatches_in_flight, 3 - st);
    EXPECT_GT(pairs.stages[st].activations.count(), plain.stages[st].activations.count());
  }
}

TEST(EstimateMemory, CombinedOneFOneBWithoutAPipelineHoldsOneMoreLayer) {
  // PP 1: micro-batch i+1's forward of layer j runs beside micro-batch i's backward of layer
  // L-1-j, which then frees its state (Megatron-Core TransformerModelChunkSchedulePlan.run):
  // one micro-batch in flight, and one of the 8 layers' activations more.
  const std::vector<std::string> pp1 = {"parallelism.pp=1", "parallelism.dp=16"};
  std::vector<std::string> overlapped = pp1;
  overlapped.push_back("parallelism.overlap_moe_comm=true");
  const MemoryReport plain = estimate_memory(load(kMixtralEp8, pp1));
  const MemoryReport pairs = estimate_memory(load(kMixtralEp8, overlapped));
  ASSERT_EQ(pairs.stages.size(), 1u);
  EXPECT_EQ(pairs.stages[0].microbatches_in_flight, 1);
  const double one = static_cast<double>(plain.stages[0].layer_activations.count());
  EXPECT_NEAR(static_cast<double>(pairs.stages[0].layer_activations.count()), one * 9 / 8,
              0.01 * one / 8);
}

TEST(EstimateMemory, Korthikanti22bSingleStage) {
  const Scenario s = load(kGpt22b);
  const MemoryReport r = estimate_memory(s);
  ASSERT_EQ(r.stages.size(), 1u);
  EXPECT_EQ(r.stages[0].microbatches_in_flight, 1);
  EXPECT_EQ(r.stages[0].layer_activations.count(), 63'619'203'072);
  expect_gib_near(r.stages[0].layer_activations, 59.25, "22B, no SP, no recompute");
  const MemoryReport sp = estimate_memory(load(kGpt22b, kSequenceParallelSelective));
  EXPECT_EQ(sp.stages[0].layer_activations.count(), 10'267'656'192);
  expect_gib_near(sp.stages[0].layer_activations, 9.5625, "22B, SP + selective");
  // 18 B × 12·48·6144²/8 = 45.5625 GiB for the layers (the embedding comes on top).
  const int64_t layer_params = layer_parameters(s.model) * 48 / 8;
  expect_gib_near(model_state_bytes(s, layer_params), 45.5625, "22B states");
}

// 530B (h 20480, a 128, L 105), TP 8, PP 35, v = 3: one layer per chunk; stage 0 holds
// 34·2 + 2·35 + 1 = 139 layers = 105·(1 + 34/105).
//   none: 2048·20480·(13 + 8) = 880,803,840 B × 139 = 114.02 GiB
//   SP + selective: 2048·20480·34/8 = 178,257,920 B × 139 = 23.08 GiB
const char* const kGpt530b = R"(
model: {preset: mt-nlg-530b}
cluster: {preset: dgx-a100, nodes: 35}
training: {seq_len: 2048, global_batch: 140, micro_batch: 1, flash_attention: false}
parallelism: {tp: 8, pp: 35, vpp: 3, schedule: interleaved}
)";

TEST(EstimateMemory, Korthikanti530bInterleavedFirstStage) {
  const Scenario s = load(kGpt530b);
  const MemoryReport r = estimate_memory(s);
  EXPECT_DOUBLE_EQ(r.stages[0].layer_sets_in_flight, 139.0 / 3.0);
  EXPECT_EQ(r.stages[0].layer_activations.count(), 122'431'733'760);
  expect_gib_near(r.stages[0].layer_activations, 114.02, "530B, no SP, no recompute");
  const MemoryReport sp = estimate_memory(load(kGpt530b, kSequenceParallelSelective));
  expect_gib_near(sp.stages[0].layer_activations, 23.08, "530B, SP + selective");
  // 18 B × 12·105·20480²/(8·35) = 31.64 GiB.
  expect_gib_near(model_state_bytes(s, layer_parameters(s.model) * 3 / 8), 31.64, "530B states");
}

// 1T (h 25600, a 160, L 128), TP 8, PP 64, plain 1F1B: the figure has no interleaving factor,
// i.e. stage 0 holds p = 64 micro-batches (m >= p) × 2 layers = all 128 layers' worth.
//   none: 2048·25600·(13 + 8) = 1,101,004,800 B × 128 = 131.25 GiB
//   SP + selective: 2048·25600·34/8 = 222,822,400 B × 128 = 26.5625 GiB
const char* const kGpt1t = R"(
model: {preset: gpt3-1t}
cluster: {preset: dgx-a100, nodes: 64}
training: {seq_len: 2048, global_batch: 128, micro_batch: 1, flash_attention: false}
parallelism: {tp: 8, pp: 64}
)";

TEST(EstimateMemory, Korthikanti1tFirstStage) {
  const Scenario s = load(kGpt1t);
  const MemoryReport r = estimate_memory(s);
  EXPECT_EQ(r.stages[0].microbatches_in_flight, 64);
  EXPECT_EQ(r.stages[0].layer_activations.count(), 140'928'614'400);
  expect_gib_near(r.stages[0].layer_activations, 131.25, "1T, no SP, no recompute");
  const MemoryReport sp = estimate_memory(load(kGpt1t, kSequenceParallelSelective));
  expect_gib_near(sp.stages[0].layer_activations, 26.5625, "1T, SP + selective");
  // 18 B × 12·128·25600²/(8·64) = 32.96 GiB.
  expect_gib_near(model_state_bytes(s, layer_parameters(s.model) * 2 / 8), 32.96, "1T states");
}

TEST(LayerActivationBytes, FullRecomputeKeepsTheLayerInput) {
  // 2·s·b·h = 2·2048·12288 = 50,331,648 B; with SP split over t = 8.
  EXPECT_EQ(layer_activation_bytes(load(kGpt175b, {"parallelism.recompute=full"})).count(),
            50'331'648);
  EXPECT_EQ(layer_activation_bytes(load(kGpt175b, {"parallelism.recompute=full",
                                                   "parallelism.sequence_parallel=true"}))
                .count(),
            50'331'648 / 8);
}

TEST(LayerActivationBytes, FlashAttentionKeepsLogSumExpInsteadOfScores) {
  // GPT with FlashAttention, TP 8, no SP: sbh·(10 + 24/8) + 4·(a/t)·s·b (fp32 LSE)
  // = 25,165,824·13 + 4·12·2048 = 327,155,712 + 98,304 = 327,254,016 B.
  EXPECT_EQ(layer_activation_bytes(load(kGpt175b, {"training.flash_attention=true"})).count(),
            327'254'016);
}

// ---------------------------------------------------------------------------------------------
// LLaMA-3 8B (h 4096, a 32, g 8, d_h 128, F 14336, SwiGLU, RMSNorm, no dropout, FlashAttention)
// at s 4096, b 1, per layer (docs/memory.md §2.3), hand-derived:
//   norm1 in, QKV in, norm2 in, FC1 in   4 × 2·s·h          = 134,217,728
//   Q and the projection input          2 × 2·s·h          =  67,108,864
//   K, V                                4·s·g·d_h          =  16,777,216
//   SwiGLU input (gate, up), FC2 input  (4 + 2)·s·F        = 352,321,536
//   log-sum-exp (fp32)                  4·a·s              =     524,288
//   total                                                  = 570,949,632 B = 544.5 MiB
// 16 layers (PP 2) = 9,135,194,112 B = 8.508 GiB per micro-batch; SimuMax reports 8.504 GiB of
// activation cache for the same first stage (memory_and_flops.md §2.3, 0.04 % apart).
const char* const kLlama3_8b = R"(
model: {preset: llama3-8b}
cluster: {preset: dgx-a100, nodes: 1}
training: {seq_len: 4096, global_batch: 16, micro_batch: 1}
parallelism: {tp: 1, pp: 2}
)";

TEST(EstimateMemory, Llama3_8bHandDerivedLayer) {
  const Scenario s = load(kLlama3_8b);
  EXPECT_EQ(layer_activation_bytes(s).count(), 570'949'632);
  const MemoryReport r = estimate_memory(s);
  // 4 micro-batches per pipeline; stage 0 of 1F1B holds min(p, m) = 2.
  EXPECT_EQ(r.stages[0].microbatches_in_flight, 2);
  EXPECT_EQ(r.stages[0].layer_activations.count(), 2 * 9'135'194'112);
  // Plus the token ids (8 B each) of the embedding; no dropout mask.
  EXPECT_EQ(r.stages[0].activations_per_microbatch.count(), 9'135'194'112 + 8 * 4096);
  EXPECT_NEAR(r.stages[0].activations_per_microbatch.to_gib(), 8.504, 0.001 * 8.504);
}

TEST(EstimateMemory, LowPrecisionLinearLayersKeepTheirQuantizedInputs) {
  // With fp8 Transformer Engine keeps the 1-byte copy each linear layer's weight gradient reads:
  // the inputs of QKV, the projection, FC1 and FC2 (h + h + h + F per token on LLaMA-3 8B:
  // 4096 · 3 + 14336 = 26,624 B less per token per layer at 4,096 tokens); the norms' inputs,
  // Q, K, V and SwiGLU's input stay 16-bit. MXFP8 adds a 1-byte scale per 32 elements back.
  const int64_t bf16 = layer_activation_bytes(load(kLlama3_8b)).count();
  const int64_t fp8 = layer_activation_bytes(
                          load(kLlama3_8b, {"cluster.preset=dgx-h100", "training.precision=fp8"}))
                          .count();
  const int64_t mxfp8 = layer_activation_bytes(load(kLlama3_8b, {"cluster.preset=dgx-b200",
                                                                 "training.precision=mxfp8"}))
                            .count();
  EXPECT_EQ(bf16 - fp8, int64_t{4096} * 26'624);
  EXPECT_EQ(mxfp8 - fp8, int64_t{4096} * 26'624 / 32);
}

TEST(EstimateMemory, Llama3_8bTensorAndSequenceParallelSplitEverything) {
  // TP 2 with SP, g = 8 >= t: every term above halves: 285,474,816 B per layer.
  const Scenario s = load(kLlama3_8b, {"parallelism.tp=2", "parallelism.sequence_parallel=true"});
  EXPECT_EQ(layer_activation_bytes(s).count(), 570'949'632 / 2);
}

// ---------------------------------------------------------------------------------------------
// Schedules: micro-batches in flight.

// GPT-3 1.7B (24 layers) on one DGX A100: TP 2, PP 4, DP 1.
const char* const kPipeline = R"(
model: {preset: gpt3-1.7b}
cluster: {preset: dgx-a100, nodes: 1}
training: {seq_len: 2048, global_batch: 8, micro_batch: 1}
parallelism: {tp: 2, pp: 4}
)";

TEST(EstimateMemory, OneFOneBStageHoldsMinOfPMinusIAndM) {
  for (int m : {1, 2, 3, 8}) {
    const MemoryReport r =
        estimate_memory(load(kPipeline, {"training.global_batch=" + std::to_string(m)}));
    for (int i = 0; i < 4; ++i) {
      EXPECT_EQ(r.stages[i].microbatches_in_flight, std::min(4 - i, m)) << "m " << m << " i " << i;
      EXPECT_DOUBLE_EQ(r.stages[i].layer_sets_in_flight, std::min(4 - i, m));
    }
  }
}

TEST(EstimateMemory, SplitBackwardSchedulesHoldMicroBatchesUntilTheirWeightGradient) {
  // A micro-batch keeps activations from its forward to its W pass: all it saved until its B,
  // the inputs of its GEMMs from then on (all it saved, with selective recompute). p = 4, m = 8:
  // ZB-H1 holds p = 4 on every stage (1F1B's peak; Qi et al. 2024 §2.1), ZB-H2 2p − 1 = 7
  // (§2.2), DualPipe p + 1 = 5 (DeepSeek-V3 Table 2).
  const std::vector<std::pair<std::string, int>> cases = {
      {"zb_h1", 4}, {"zb_h2", 7}, {"dualpipe", 5}};
  for (const auto& [schedule, held] : cases) {
    const Scenario s =
        load(kPipeline, {"parallelism.schedule=" + schedule, "parallelism.recompute=selective"});
    const MemoryReport r = estimate_memory(s);
    for (const StageMemory& st : r.stages) {
      EXPECT_EQ(st.microbatches_in_flight, held) << schedule << " stage " << st.stage;
      EXPECT_DOUBLE_EQ(st.layer_sets_in_flight, held);
      // 6 layers per stage (and per DualPipe chunk).
      EXPECT_EQ(st.layer_activations.count(), held * 6 * layer_activation_bytes(s).count());
    }
  }
  // ZB-H1's last stage runs F B F B F B F B, then its W passes: at the fourth forward it keeps
  // that micro-batch's fp32 logits for the loss and the half-precision logits gradients of the
  // three whose output-layer W waits, plus one half copy: (4 + 3·2 + 2) B per logit.
  const int64_t vocab_shard = 50'432 / 2;
  EXPECT_EQ(estimate_memory(load(kPipeline, {"parallelism.schedule=zb_h1",
                                             "training.stack.cross_entropy=unfused"}))
                .stages[3]
                .logits_and_loss.count(),
            (4 + 3 * 2 + 2) * 2048LL * vocab_shard);
  // Transformer Engine's loss keeps the half-precision logits (2 B) and writes their gradient
  // in place: no fp32 copy and no extra half copy, (2 + 3·2) B per logit.
  EXPECT_EQ(estimate_memory(
                load(kPipeline, {"parallelism.schedule=zb_h1", "training.stack.cross_entropy=te"}))
                .stages[3]
                .logits_and_loss.count(),
            (2 + 3 * 2) * 2048LL * vocab_shard);
}

TEST(EstimateMemory, DeferredWeightGradientsKeepTheirGemmInputs) {
  // Between its B and its W a micro-batch keeps the inputs of the layer's GEMMs, which full
  // recompute rebuilt in B (= what selective recompute keeps). ZB-H1 on p = 4: stage 0 runs
  // each W right after its B, so it peaks with 3 checkpoints and one micro-batch's GEMM inputs
  // per layer; the last stage defers its W passes and, after its fourth B, holds 4 micro-batches'
  // GEMM inputs.
  const Scenario full =
      load(kPipeline, {"parallelism.schedule=zb_h1", "parallelism.recompute=full"});
  const Scenario selective =
      load(kPipeline, {"parallelism.schedule=zb_h1", "parallelism.recompute=selective"});
  const MemoryReport r = estimate_memory(full);
  const int64_t checkpoint = layer_activation_bytes(full).count();
  const int64_t gemm_inputs = layer_activation_bytes(selective).count();
  ASSERT_GT(gemm_inputs, checkpoint);
  EXPECT_EQ(r.stages[0].layer_activations.count(), 6 * (3 * checkpoint + gemm_inputs));
  EXPECT_EQ(r.stages[3].layer_activations.count(), 4 * 6 * gemm_inputs);
  EXPECT_EQ(r.stages[3].microbatches_in_flight, 4);
}

TEST(EstimateMemory, DualPipeRanksHoldTwoModelStages) {
  // DeepSeek-V3 Table 2, parameters 2×: rank i holds model stages i and p−1−i (2 B weights).
  const Scenario one = load(kPipeline);
  const MemoryReport r = estimate_memory(load(kPipeline, {"parallelism.schedule=dualpipe"}));
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(r.stages[i].weights.count(),
              2 * (stage_parameters_per_gpu(one, i) + stage_parameters_per_gpu(one, 3 - i)))
        << i;
  }
  // Ranks 0 and 3 both run the loss head (of opposite directions).
  EXPECT_GT(r.stages[0].logits_and_loss.count(), 0);
  EXPECT_GT(r.stages[3].logits_and_loss.count(), 0);
  EXPECT_EQ(r.stages[1].logits_and_loss.count(), 0);
}

TEST(EstimateMemory, GpipeHoldsEveryMicroBatch) {
  const Scenario s =
      load(kPipeline, {"parallelism.schedule=gpipe", "training.stack.cross_entropy=unfused"});
  const MemoryReport r = estimate_memory(s);
  for (const StageMemory& st : r.stages) {
    EXPECT_EQ(st.microbatches_in_flight, 8);
    // 6 layers per stage; the activations of all 8 micro-batches, not 4 − i.
    EXPECT_EQ(st.layer_activations.count(), 8 * 6 * layer_activation_bytes(s).count());
  }
  // The last stage keeps the fp32 logits of all 8 for their backward, plus one half copy:
  // (8·4 + 2) B × 2048 tokens × 50,432/2 vocabulary entries; with Transformer Engine's loss the
  // half-precision logits of all 8 (8·2 B).
  const int64_t vocab_shard = 50'432 / 2;
  EXPECT_EQ(r.stages[3].logits_and_loss.count(), (8 * 4 + 2) * 2048LL * vocab_shard);
  EXPECT_EQ(estimate_memory(load(kPipeline, {"parallelism.schedule=gpipe"}))
                .stages[3]
                .logits_and_loss.count(),
            8 * 2 * 2048LL * vocab_shard);
}

TEST(EstimateMemory, InterleavedStagesFollowMegatronWarmup) {
  // p 4, v 2, 16 micro-batches: stage i runs (p−i−1)·2 + (v−1)·p forwards of one chunk (3
  // layers) before its first backward and a last one just before it.
  const MemoryReport r =
      estimate_memory(load(kPipeline, {"training.global_batch=16", "parallelism.vpp=2"}));
  for (int i = 0; i < 4; ++i) {
    const int chunks = (4 - i - 1) * 2 + 4 + 1;
    EXPECT_DOUBLE_EQ(r.stages[i].layer_sets_in_flight, chunks / 2.0) << "stage " << i;
  }
  // Megatron's first-stage factor: p·(1 + (p−1)/(p·v)) = 4·(1 + 3/8) = 5.5.
  EXPECT_DOUBLE_EQ(r.stages[0].layer_sets_in_flight, 5.5);
  EXPECT_EQ(r.stages[0].microbatches_in_flight, 8);  // micro-batches 0..7 hold chunk 0 or 1
}

TEST(EstimateMemory, InterleavedAllWarmupWhenMicroBatchesEqualStages) {
  // m = p: Megatron runs every forward first, so every stage holds all m·v chunks = m layer sets.
  const MemoryReport r =
      estimate_memory(load(kPipeline, {"training.global_batch=4", "parallelism.vpp=2"}));
  for (const StageMemory& st : r.stages) EXPECT_DOUBLE_EQ(st.layer_sets_in_flight, 4.0);
}

TEST(EstimateMemory, ManyMicroBatchesDoNotChangeTheInterleavedPeak) {
  const MemoryReport few =
      estimate_memory(load(kPipeline, {"training.global_batch=16", "parallelism.vpp=2"}));
  const MemoryReport many =
      estimate_memory(load(kPipeline, {"training.global_batch=4096", "parallelism.vpp=2"}));
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(few.stages[i].activations, many.stages[i].activations);
    EXPECT_EQ(few.stages[i].microbatches_in_flight, many.stages[i].microbatches_in_flight);
  }
}

// ---------------------------------------------------------------------------------------------
// Model states and sharding.

// GPT-3 1.7B on two DGX A100 nodes: TP 2, PP 2, DP 4.
const char* const kDataParallel = R"(
model: {preset: gpt3-1.7b}
cluster: {preset: dgx-a100, nodes: 2}
training: {seq_len: 2048, global_batch: 16, micro_batch: 1}
parallelism: {tp: 2, pp: 2}
)";

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

TEST(EstimateMemory, MixedPrecisionAdamIs18BytesPerParameter) {
  const Scenario s = load(kDataParallel);
  const int64_t n = stage_parameters_per_gpu(s, 0);
  const StageMemory st = estimate_memory(s).stages[0];
  EXPECT_EQ(st.weights.count(), 2 * n);
  EXPECT_EQ(st.gradients.count(), 4 * n);  // fp32 main gradients (bf16)
  EXPECT_EQ(st.optimizer.count(), 12 * n);
  EXPECT_EQ(model_state_bytes(s, n).count(), 18 * n);
}

TEST(EstimateMemory, ZeroStagesShardTheRightStates) {
  const int64_t n = stage_parameters_per_gpu(load(kDataParallel), 0);
  const int64_t shard = ceil_div(n, 4);
  struct Case {
    std::vector<std::string> set;
    int64_t weights, gradients, optimizer;
  };
  const std::vector<Case> cases = {
      {{"parallelism.zero_stage=0"}, 2 * n, 4 * n, 12 * n},
      {{"parallelism.zero_stage=1"}, 2 * n, 4 * n, 12 * shard},  // 6 + 12/d
      {{"parallelism.distributed_optimizer=true"}, 2 * n, 4 * n, 12 * shard},
      {{"parallelism.zero_stage=2"}, 2 * n, 4 * shard, 12 * shard},
      {{"parallelism.zero_stage=3"}, 2 * shard, 4 * shard, 12 * shard},
  };
  for (const Case& c : cases) {
    const StageMemory st = estimate_memory(load(kDataParallel, c.set)).stages[0];
    EXPECT_EQ(st.weights.count(), c.weights) << c.set[0];
    EXPECT_EQ(st.gradients.count(), c.gradients) << c.set[0];
    EXPECT_EQ(st.optimizer.count(), c.optimizer) << c.set[0];
  }
}

TEST(EstimateMemory, Fp16KeepsHalfGradientsAndCopiesThemForTheStep) {
  // Megatron's table: fp16 parameters and gradients are 20 B/param (4 + 16/d distributed):
  // 2 + 2 held, 12 optimizer, and a 4 B fp32 gradient copy while the step runs, when the
  // activations are gone.
  const Scenario s = load(kDataParallel, {"training.precision=fp16"});
  const int64_t n = stage_parameters_per_gpu(s, 0);
  const StageMemory st = estimate_memory(s).stages[0];
  EXPECT_EQ(st.gradients.count(), 2 * n);
  EXPECT_GE(st.transient.count(), 4 * n - st.activations.count());
}

TEST(EstimateMemory, PeakIsSteadyPlusLargestTransient) {
  const Scenario s = load(kDataParallel, {"parallelism.recompute=full"});
  const MemoryReport r = estimate_memory(s);
  for (const StageMemory& st : r.stages) {
    EXPECT_EQ(st.steady, st.weights + st.gradients + st.optimizer + st.activations +
                             st.comm_buffers + st.framework);
    EXPECT_EQ(st.peak, st.steady + st.transient);
    EXPECT_EQ(st.headroom, st.capacity - st.peak);
    EXPECT_EQ(st.capacity, Bytes::gib(80));
    EXPECT_GE(st.transient, st.logits_and_loss);
    EXPECT_GE(st.framework, s.training.framework_overhead);
    // One bucket, DP 4, no SP: Megatron's 40M parameters in fp32.
    EXPECT_EQ(st.comm_buffers, Bytes(160'000'000));
  }
  // Only the last stage computes the loss.
  EXPECT_EQ(r.stages[0].logits_and_loss.count(), 0);
  EXPECT_GT(r.stages[1].logits_and_loss.count(), 0);
}

TEST(EstimateMemory, CommBuffersHoldBucketSpGatherAndZero3Gathers) {
  const Scenario s = load(kDataParallel);
  const int64_t bucket = grad_bucket_parameters(s) * gradient_bytes_per_element(s);
  EXPECT_EQ(estimate_memory(s).stages[0].comm_buffers.count(), bucket);
  // SP: the all-gathered layer input, 2·s·b·h bytes.
  const MemoryReport sp =
      estimate_memory(load(kDataParallel, {"parallelism.sequence_parallel=true"}));
  EXPECT_EQ(sp.stages[0].comm_buffers.count(), bucket + 2 * 2048LL * s.model.hidden);
  // ZeRO-3: the running and the prefetched layer's half-precision weights.
  const MemoryReport z3 = estimate_memory(load(kDataParallel, {"parallelism.zero_stage=3"}));
  EXPECT_EQ(z3.stages[0].comm_buffers.count(), bucket + 2 * 2 * layer_parameters(s.model) / 2);
}

TEST(EstimateMemory, OneFOneBLastStageHoldsOneMicroBatchOfLogits) {
  // Megatron's loss: fp32 logits (4 B) + half logits (2 B) per token and vocabulary entry of
  // the TP shard; Transformer Engine's (the megatron-core preset's): the half logits alone.
  const Scenario s = load(kDataParallel, {"training.stack.cross_entropy=unfused"});
  const int64_t vocab_shard = padded_vocab(s.model, 2) / 2;
  EXPECT_EQ(estimate_memory(s).stages[1].logits_and_loss.count(), 6 * 2048LL * vocab_shard);
  EXPECT_EQ(estimate_memory(load(kDataParallel)).stages[1].logits_and_loss.count(),
            2 * 2048LL * vocab_shard);
}

TEST(EstimateMemory, FrameworkOverheadAndFragmentationAreConfigurable) {
  const Scenario s = load(
      kDataParallel, {"training.framework_overhead=5GiB", "training.allocator_fragmentation=0"});
  const MemoryReport r = estimate_memory(s);
  for (const StageMemory& st : r.stages) {
    EXPECT_EQ(st.framework, Bytes::gib(5));
  }
}

// ---------------------------------------------------------------------------------------------
// Verdicts.

TEST(EstimateMemory, Gpt175bOnOneNodeWithoutModelParallelismDoesNotFit) {
  // 175B parameters × 18 B = 3.2 TB on each of 8 GPUs of 80 GiB.
  const MemoryReport r = estimate_memory(load(R"(
model: {preset: gpt3-175b}
cluster: {preset: dgx-a100, nodes: 1}
training: {seq_len: 2048, global_batch: 8, micro_batch: 1}
parallelism: {tp: 1, pp: 1}
)"));
  ASSERT_EQ(r.stages.size(), 1u);
  EXPECT_FALSE(r.fits);
  EXPECT_FALSE(r.stages[0].fits);
  EXPECT_LT(r.stages[0].headroom.count(), 0);
  EXPECT_GT(r.stages[0].peak.to_gib(), 2900);
}

TEST(EstimateMemory, DefaultScenarioFits) {
  // GPT-3 175B, TP 8, PP 16, DP 8, SP + selective, distributed optimizer on A100 80GB.
  const MemoryReport r = estimate_memory(load(""));
  EXPECT_TRUE(r.fits);
  EXPECT_EQ(r.limiting_stage, 0);  // the first stage holds p micro-batches and the embedding
}

// Every configuration of the vTrain dev set ran on A100 80GB, so each must be predicted to fit.
TEST(EstimateMemory, EveryVtrainDevSetConfigurationFits) {
  const std::string dir = find_data_dir() + "/vtrain";
  if (!std::filesystem::exists(dir + "/ground_truth_single.csv")) {
    GTEST_SKIP() << "no vTrain data at " << dir;
  }
  int checked = 0;
  double least_headroom_gib = 1e30;
  std::string tightest;
  for (const std::string set : {"single", "multi"}) {
    StatusOr<std::vector<DatasetRow>> rows =
        load_dataset_csv(dir + "/ground_truth_" + set + ".csv", set);
    ASSERT_TRUE(rows.ok()) << rows.status().message();
    for (const DatasetRow& row : *rows) {
      StatusOr<Scenario> s = scenario_for_row(row);
      ASSERT_TRUE(s.ok()) << s.status().message();
      const MemoryReport r = estimate_memory(*s);
      const StageMemory& st = r.stages[r.limiting_stage];
      EXPECT_TRUE(r.fits) << set << " line " << row.line << ": stage " << st.stage << " peak "
                          << format_bytes(st.peak);
      if (st.headroom.to_gib() < least_headroom_gib) {
        least_headroom_gib = st.headroom.to_gib();
        tightest = set + " line " + std::to_string(row.line) + ", peak " + format_bytes(st.peak);
      }
      ++checked;
    }
  }
  EXPECT_EQ(checked, 1440 + 109);
  std::printf("tightest vTrain row: %s (%.2f GiB headroom)\n", tightest.c_str(),
              least_headroom_gib);
}

// ---------------------------------------------------------------------------------------------
// Mixture of experts, MLA and context parallelism.

// Mixtral 8x7B on one H100 node, TP 1, no SP, no recompute, FlashAttention, s 4096, b 1.
// Per layer (T = 4096, h = 4096, q = 4096, kv = 1024, top-2 of 8 experts of F = 14336; with
// ep 8 every GPU routes its T tokens and its expert receives k·T = 8192 copies on average):
//   norm/QKV/norm/router inputs 8·T·h          134,217,728
//   Q, K, V, projection input 4·T·q + 4·T·kv    83,886,080
//   fp32 router logits 4·T·E                        131,072
//   dispatched tokens 2·(k·T)·h                  67,108,864
//   expert gate, up, FC2 input 6·(k·T)·F        704,643,072
//   log-sum-exp 4·a·T                               524,288
//   total                                       990,511,104
// Megatron-Core weights FC2's input by the routing probabilities (the weighted SwiGLU), so no
// expert output is kept for their gradient; a stack that weights at the combine
// (training.stack.moe_probs: combine) keeps the expert outputs, 2·(k·T)·h = 67,108,864 more.
TEST(LayerActivationBytes, MixtralMoeLayerHandDerived) {
  const char* kMixtral = R"(
model: {preset: mixtral-8x7b, moe: {routing: uniform}}
cluster: {preset: dgx-h100, nodes: 1}
training: {seq_len: 4096, global_batch: 8, micro_batch: 1}
parallelism: {tp: 1, pp: 1, dp: 8, ep: 8}
)";
  const Scenario s = load(kMixtral);
  EXPECT_EQ(layer_activation_bytes(s, 0).count(), 990'511'104);
  EXPECT_EQ(layer_activation_bytes(s).count(), 990'511'104);  // every layer is MoE
  const Scenario combine = load(kMixtral, {"training.stack.moe_probs=combine"});
  EXPECT_EQ(layer_activation_bytes(combine, 0).count(), 1'057'619'968);
}

TEST(LayerActivationBytes, QkNormKeepsItsInputsAndOneRstdPerHead) {
  // Qwen3-30B at TP 1, s 4096, b 1: q_layernorm and k_layernorm keep their inputs, 32 query and
  // 4 KV heads of 128 (2 B each), and an fp32 rstd per head: T·(2·4608 + 4·36) = 4096·9360.
  const char* kQwen = R"(
model: {preset: qwen3-30b-a3b, moe: {routing: uniform}}
cluster: {preset: dgx-h100, nodes: 1}
training: {seq_len: 4096, global_batch: 8, micro_batch: 1}
parallelism: {tp: 1, pp: 1, dp: 8, ep: 8}
)";
  const Scenario with = load(kQwen);
  ASSERT_TRUE(with.model.qk_layernorm);
  const Scenario without = load(kQwen, {"model.qk_layernorm=false"});
  EXPECT_EQ(layer_activation_bytes(with, 0).count() - layer_activation_bytes(without, 0).count(),
            int64_t{4096} * 9360);
}

// DeepSeek-V2-Lite's first (dense) layer at TP 1, s 4096, b 1: MLA with a = 16, d_qk 192,
// d_v 128, no query latent, r_kv 512, d_rope 64; SwiGLU MLP of 10944.
//   inputs 8·T·h 67,108,864; Q, K 4·T·a·d_qk + V, projection input 4·T·a·d_v 83,886,080;
//   latents c_KV + k_R before the norm and c_KV after it 2·T·(576 + 512) 8,912,896;
//   MLP 6·T·f 268,959,744; log-sum-exp 4·a·T 262,144: 429,129,728.
TEST(LayerActivationBytes, MlaLatentsAndUpProjectedHeads) {
  const Scenario s = load(R"(
model: {preset: deepseek-v2-lite}
cluster: {preset: dgx-h100, nodes: 1}
training: {seq_len: 4096, global_batch: 8, micro_batch: 1}
parallelism: {tp: 1, pp: 1, dp: 8, ep: 8}
)");
  ASSERT_FALSE(s.model.is_moe_layer(0));
  EXPECT_EQ(layer_activation_bytes(s, 0).count(), 429'129'728);
  // MoE layers (1-26) hold more: 6 of 64 experts per token plus 2 shared experts.
  EXPECT_GT(layer_activation_bytes(s, 1).count(), layer_activation_bytes(s, 0).count());
}

// Mixtral 8x7B, TP 2 with SP, PP 4, DP 8 on 64 H100s: EP 4 or 8 (ETP = TP = 2).
const char* const kMixtral64 = R"(
model: {preset: mixtral-8x7b}
cluster: {preset: dgx-h100, nodes: 8}
training: {seq_len: 4096, global_batch: 256, micro_batch: 1}
parallelism: {tp: 2, pp: 4, dp: 8, sequence_parallel: true, distributed_optimizer: true,
              recompute: selective}
)";

TEST(EstimateMemory, ExpertParametersPerGpuShrinkWithEp) {
  const Scenario ep4 = load(kMixtral64, {"parallelism.ep=4"});
  const Scenario ep8 = load(kMixtral64, {"parallelism.ep=8"});
  // 8 layers per stage × 8 experts × 3·4096·14336 over ep·etp = 8 or 16 GPUs.
  const int64_t experts = 8LL * 8 * 3 * 4096 * 14336;
  EXPECT_EQ(stage_expert_parameters_per_gpu(ep4, 1), experts / 8);
  EXPECT_EQ(stage_expert_parameters_per_gpu(ep8, 1), experts / 16);
  EXPECT_EQ(stage_parameters_per_gpu(ep4, 1) - stage_parameters_per_gpu(ep8, 1), experts / 16);
  const StageMemory a = estimate_memory(ep4).stages[1];
  const StageMemory b = estimate_memory(ep8).stages[1];
  // Weights (2 B) and fp32 gradients (4 B) of the halved expert share go; the distributed
  // optimizer already spread the experts' 12 B over all 16 ranks of the stage (expert-DP 2 × ep
  // 4 or 1 × 8), so the optimizer states stay.
  EXPECT_EQ((a.weights - b.weights).count(), 2 * (experts / 16));
  EXPECT_EQ((a.gradients - b.gradients).count(), 4 * (experts / 16));
  EXPECT_NEAR(static_cast<double>(a.optimizer.count()), static_cast<double>(b.optimizer.count()),
              1.0);
}

TEST(EstimateMemory, MixtralOn64H100WithEp8Fits) {
  const MemoryReport r = estimate_memory(load(kMixtral64, {"parallelism.ep=8"}));
  EXPECT_TRUE(r.fits);
  EXPECT_EQ(r.limiting_stage, 0);  // the first stage holds p = 4 micro-batches
}

TEST(EstimateMemory, ContextParallelTwoHalvesActivations) {
  // Llama 3 70B, s 8192 on 16 H100s, TP 8: CP 2 × DP 1 against CP 1 × DP 2. Each CP rank keeps
  // s/2 tokens of every tensor and s/2 log-sum-exp rows; the distributed optimizer shards over
  // DP×CP = 2 either way.
  const char* const yaml = R"(
model: {preset: llama3-70b}
cluster: {preset: dgx-h100, nodes: 2}
training: {seq_len: 8192, global_batch: 8, micro_batch: 1}
parallelism: {tp: 8, pp: 1, sequence_parallel: true, distributed_optimizer: true}
)";
  const StageMemory cp1 = estimate_memory(load(yaml, {"parallelism.dp=2"})).stages[0];
  const StageMemory cp2 =
      estimate_memory(load(yaml, {"parallelism.dp=1", "parallelism.cp=2"})).stages[0];
  EXPECT_EQ(cp1.layer_activations.count(), 2 * cp2.layer_activations.count());
  EXPECT_EQ(cp1.activations_per_microbatch.count(), 2 * cp2.activations_per_microbatch.count());
  EXPECT_EQ(cp1.optimizer, cp2.optimizer);
  EXPECT_EQ(cp1.weights, cp2.weights);
  // The same for MoE and MLA layers.
  const char* const lite = R"(
model: {preset: deepseek-v2-lite, moe: {routing: uniform}}
cluster: {preset: dgx-h100, nodes: 1}
training: {seq_len: 4096, global_batch: 8, micro_batch: 1}
parallelism: {tp: 1, pp: 1, ep: 4}
)";
  const Scenario l1 = load(lite, {"parallelism.dp=8"});
  const Scenario l2 = load(lite, {"parallelism.dp=4", "parallelism.cp=2"});
  EXPECT_EQ(layer_activation_bytes(l1, 5).count(), 2 * layer_activation_bytes(l2, 5).count());
}

// DeepSeek-V3 on 1,024 H100s (128 DGX nodes): PP 16 (3 + 14 × 4 + 2 layers; the MTP module on
// the last stage), EP 64, TP 1, DP 64 with the distributed optimizer (ZeRO-1), s 4096. The
// published run trained on 2,048 H800s with PP 16, EP 64 and ZeRO-1 DP (DeepSeek-V3 report
// §3.2); it recomputes RMSNorm and the MLA up-projections and caches some activations in FP8,
// which Preflight does not model, so full recompute stands in for them here.
const char* const kDeepSeekV3 = R"(
model: {preset: deepseek-v3}
cluster: {preset: dgx-h100, nodes: 128}
training: {seq_len: 4096, global_batch: 1024, micro_batch: 1}
parallelism: {tp: 1, pp: 16, dp: 64, ep: 64, first_stage_layers: 3, last_stage_layers: 2,
              distributed_optimizer: true, recompute: full}
)";

TEST(EstimateMemory, DeepSeekV3On1024H100WithPp16Ep64Fits) {
  const Scenario s = load(kDeepSeekV3);
  ASSERT_EQ(s.expert_dp(), 1);
  // A middle stage: 4 MoE layers × 4 local experts of 3·7168·2048 on each GPU.
  EXPECT_EQ(stage_expert_parameters_per_gpu(s, 1), 4LL * 4 * 3 * 7168 * 2048);
  EXPECT_EQ(stage_expert_parameters_per_gpu(s, 0), 0);  // layers 0-2 are dense
  const MemoryReport r = estimate_memory(s);
  EXPECT_TRUE(r.fits);
  for (const StageMemory& m : r.stages) EXPECT_LT(m.peak.to_gib(), 40.0) << "stage " << m.stage;
  // The experts' optimizer states are not sharded (expert-DP 1): 12 B × 704,643,072 = 7.9 GiB
  // of the middle stages' 8.0 GiB.
  EXPECT_NEAR(r.stages[1].optimizer.to_gib(), 8.04, 0.01);
  // Without recompute the routed tokens' activations (≈ 2.4 GB per layer) of 15 micro-batches
  // do not fit on stage 1.
  EXPECT_FALSE(estimate_memory(load(kDeepSeekV3, {"parallelism.recompute=none"})).fits);
}

TEST(StageParameters, StagesAddUpToTheModelAndItsMtpModule) {
  // DeepSeek-V3 on PP 16 without TP or EP: the stages hold every layer, the embedding, the
  // output layer and the final norm once (untied), and the MTP module on the last stage.
  const Scenario s = load(R"(
model: {preset: deepseek-v3}
cluster: {preset: dgx-h100, nodes: 2}
training: {seq_len: 4096, global_batch: 16, micro_batch: 1}
parallelism: {tp: 1, pp: 16, first_stage_layers: 3, last_stage_layers: 2}
)");
  int64_t sum = 0;
  for (int st = 0; st < 16; ++st) sum += stage_parameters_per_gpu(s, st);
  EXPECT_EQ(sum, total_parameters(s.model, 1, 4096) + mtp_module_parameters(s.model));
}

TEST(EstimateMemory, EveryModelPresetHasAMemoryEstimate) {
  // Each model on one H100 node (TP 1, PP 1, DP 8, EP the largest divisor of 8 and E), at its
  // pre-training sequence length up to 4096: the estimate runs; the big models do not fit.
  int models = 0;
  for (const PresetInfo& p : list_presets()) {
    if (p.kind != "models") continue;
    StatusOr<ModelConfig> m = load_model_preset(p.name);
    ASSERT_TRUE(m.ok()) << p.name << ": " << m.status().message();
    int ep = 1;
    while (m->moe.enabled() && ep < 8 && m->moe.experts % (2 * ep) == 0) ep *= 2;
    const int seq = std::min(m->max_seq_len, 4096);
    StatusOr<Scenario> s = load_scenario_text(
        "model: {preset: " + p.name + "}\ncluster: {preset: dgx-h100, nodes: 1}\n", "test.yaml",
        {"training.seq_len=" + std::to_string(seq), "training.global_batch=8", "parallelism.dp=8",
         "parallelism.ep=" + std::to_string(ep)});
    ASSERT_TRUE(s.ok()) << p.name << ": " << s.status().message();
    const MemoryReport r = estimate_memory(*s);
    ASSERT_EQ(r.stages.size(), 1u) << p.name;
    const StageMemory& st = r.stages[0];
    EXPECT_GT(st.weights.count(), 0) << p.name;
    EXPECT_GT(st.layer_activations.count(), 0) << p.name;
    EXPECT_EQ(st.peak, st.steady + st.transient) << p.name;
    ++models;
  }
  EXPECT_GE(models, 37);
}

}  // namespace
}  // namespace preflight

namespace preflight {
namespace {

TEST(EstimateMemory, SkewedRoutingSizesMoeLayersForTheBusiestRank) {
  // DeepSeek-V2-Lite on one DGX H100 with EP 8: a Zipf(1.2) router sends the busiest EP rank
  // about twice the balanced tokens, and its routed-token activations grow with it; a uniform
  // router changes nothing, and a dense model ignores routing.
  const std::vector<std::string> base = {"model.preset=deepseek-v2-lite",
                                         "cluster.preset=dgx-h100",
                                         "cluster.nodes=1",
                                         "parallelism.tp=1",
                                         "parallelism.pp=1",
                                         "parallelism.dp=8",
                                         "parallelism.ep=8",
                                         "parallelism.etp=1",
                                         "training.global_batch=8",
                                         "parallelism.sequence_parallel=false"};
  auto activations = [&](std::vector<std::string> extra) {
    extra.insert(extra.begin(), base.begin(), base.end());
    return estimate_memory(load("", extra)).stages.at(0).activations.count();
  };
  const int64_t uniform = activations({"model.moe.routing=uniform"});
  const int64_t zipf = activations({"model.moe.routing=zipf", "model.moe.zipf_exponent=1.2"});
  const int64_t flat =
      activations({"model.moe.routing=dirichlet", "model.moe.dirichlet_alpha=1e9"});
  EXPECT_GT(zipf, uniform * 3 / 2);
  EXPECT_GE(flat, uniform);
  EXPECT_LT(flat, uniform + uniform / 50);  // a near-balanced draw is within 2 %
}

}  // namespace
}  // namespace preflight
