// Memory of hybrid Mamba-2/attention models: the Mamba-2 layer's activations in closed form,
// attention-only and MLP-only layers as the halves of a transformer layer, and the model states
// from the parameter counts.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "config/loader.h"
#include "memory/memory_model.h"
#include "model/transformer.h"
#include "workload/generator.h"

namespace preflight {
namespace {

Scenario load(const std::vector<std::string>& set) {
  StatusOr<Scenario> s = load_scenario_text("", "t", set);
  EXPECT_TRUE(s.ok()) << s.status().message();
  return *s;
}

// Nemotron 3 Nano on one DGX H100, EP 8, one 8192-token sequence per micro-batch.
std::vector<std::string> nano(std::vector<std::string> extra = {}) {
  std::vector<std::string> set = {
      "model.preset=nemotron3-nano",
      "model.moe.routing=uniform",  // the closed forms' ideal
      "cluster.preset=dgx-h100",     "cluster.nodes=1",  "training.seq_len=8192",
      "training.global_batch=64",    "parallelism.tp=1", "parallelism.pp=1",
      "parallelism.dp=auto",         "parallelism.ep=8", "parallelism.sequence_parallel=false"};
  set.insert(set.end(), extra.begin(), extra.end());
  return set;
}

TEST(HybridMemory, MambaLayerActivationsInClosedForm) {
  // Per token (memory_model.cc, mamba_layer_bytes): the norm's and in_proj's inputs 2·2·2688
  // = 10,752, in_proj's output 2·10304 = 20,608, the scan's pre-gate output, the gated output
  // (the group norm's input) and the norm's output 3·2·4096 = 24,576, fp32 rstd 4·8 = 32:
  // 55,968 B; × 8192 tokens = 458,489,856. Selective
  // recompute keeps it all (no attention core).
  const Scenario s = load(nano());
  ASSERT_TRUE(s.model.is_mamba_layer(0));
  EXPECT_EQ(layer_activation_bytes(s, 0).count(), int64_t{8192} * 55'968);
  // mamba_ssm's own mixer keeps no pre-gate output (its norm applies the gate): 2·2·4096 less.
  const Scenario own = load(nano({"training.stack.mamba_mixer=mamba_ssm"}));
  EXPECT_EQ(layer_activation_bytes(own, 0).count(), int64_t{8192} * 47'776);
  // TP 4 with SP: h-wide tensors split along the sequence, the rest by heads: 2·2·672 +
  // 2·2576 + 3·2·1024 + 4·2 = 13,992 per token.
  const Scenario tp4 =
      load(nano({"parallelism.tp=4", "parallelism.sequence_parallel=true", "parallelism.ep=2"}));
  EXPECT_EQ(layer_activation_bytes(tp4, 0).count(), int64_t{8192} * 13'992);
  // An E layer: its norm and router inputs 2·2·2688 = 10,752, the shared expert's FC1 output
  // and FC2 input 4·3712 = 14,848, fp32 router scores 4·128 = 512, and 6 routed copies: their
  // input 2·6·2688 = 32,256 and FC1 output / FC2 input 4·6·1856 = 44,544 — 102,912 B per token,
  // 1.8× a Mamba layer (Megatron-Core weights FC2's input by the routing probabilities, so no
  // expert output is kept for their gradient).
  ASSERT_TRUE(s.model.is_moe_layer(1));
  EXPECT_EQ(layer_activation_bytes(s, 1).count(), int64_t{8192} * 102'912);
  // Full recompute keeps the layer input only: 2·2688 per token.
  const Scenario full = load(nano({"parallelism.recompute=full"}));
  EXPECT_EQ(layer_activation_bytes(full, 0).count(), int64_t{8192} * 2 * 2688);
}

TEST(HybridMemory, AttentionAndMlpLayersAreTheHalvesOfATransformerLayer) {
  // "*-*-" against the 2-layer transformer it spells: each half keeps its own norm and GEMM
  // inputs and its tensors, so a '*' and a '-' layer hold one transformer layer's bytes.
  const std::vector<std::string> base = {
      "model.layers=2",          "model.hidden=2048", "model.heads=16",
      "model.kv_heads=16",       "model.vocab=32000", "model.ffn_hidden=8192",
      "cluster.preset=dgx-h100", "cluster.nodes=1",   "training.seq_len=4096",
      "training.global_batch=8", "parallelism.tp=2",  "parallelism.pp=1",
      "parallelism.dp=4"};
  std::vector<std::string> split = base;
  split.push_back("model.layers=4");
  split.push_back("model.hybrid_pattern=\"*-*-\"");
  for (const char* recompute : {"none", "selective", "full"}) {
    SCOPED_TRACE(recompute);
    std::vector<std::string> a = base, b = split;
    a.push_back(std::string("parallelism.recompute=") + recompute);
    b.push_back(std::string("parallelism.recompute=") + recompute);
    const Scenario transformer = load(a);
    const Scenario hybrid = load(b);
    const int64_t halves =
        layer_activation_bytes(hybrid, 0).count() + layer_activation_bytes(hybrid, 1).count();
    const int64_t whole = layer_activation_bytes(transformer, 0).count();
    if (std::string(recompute) == "full") {
      EXPECT_EQ(halves, 2 * whole);  // each layer keeps its input
    } else {
      EXPECT_NEAR(static_cast<double>(halves), static_cast<double>(whole), 2.0);
    }
  }
}

TEST(HybridMemory, ModelStatesComeFromTheParameterCounts) {
  // Nano, EP 8 on 8 GPUs: each GPU holds the dense part (31.58B less the experts) and 1/8 of
  // the routed experts; bf16 weights 2 B each.
  const Scenario s = load(nano({"parallelism.distributed_optimizer=true"}));
  const MemoryReport r = estimate_memory(s);
  ASSERT_EQ(r.stages.size(), 1u);
  const int64_t experts = int64_t{23} * 128 * 2 * 2688 * 1856;
  const int64_t per_gpu = total_parameters(s.model, 1, 8192) - experts + experts / 8;
  EXPECT_EQ(stage_parameters_per_gpu(s, 0), per_gpu);
  EXPECT_EQ(r.stages[0].weights.count(), 2 * per_gpu);
  EXPECT_GT(r.stages[0].activations.count(), 0);
}

TEST(HybridMemory, MeanLayerActivationsWeighEachKind) {
  // The mean over Nano's 23 M, 6 * and 23 E layers.
  const Scenario s = load(nano());
  double sum = 0;
  for (int i = 0; i < s.model.layers; ++i) {
    sum += static_cast<double>(layer_activation_bytes(s, i).count());
  }
  EXPECT_NEAR(static_cast<double>(layer_activation_bytes(s).count()), sum / s.model.layers, 1.0);
}

}  // namespace
}  // namespace preflight
