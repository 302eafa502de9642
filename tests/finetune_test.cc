// Fine-tuning: SFT on packed samples attends within each document; LoRA trains low-rank
// adapters on frozen weights.
#include <gtest/gtest.h>

#include <string>

#include "config/loader.h"
#include "memory/memory_model.h"
#include "model/transformer.h"
#include "workload/generator.h"
#include "workload/layer_ops.h"

namespace preflight {
namespace {

Op attention_core(const std::string& packed) {
  std::vector<std::string> sets;
  if (!packed.empty()) sets.push_back("training.packed_sequence_length=" + packed);
  StatusOr<Scenario> s = load_scenario_text(
      "model: {preset: llama3-8b}\ncluster: {preset: dgx-h100, gpus: 8}\n"
      "training: {seq_len: 4096, global_batch: 8}\n",
      "t", sets);
  EXPECT_TRUE(s.ok()) << s.status().message();
  for (const Op& op : attention_forward_ops(make_layer_shape(*s, 0))) {
    if (op.name == "attn.core.fwd") return op;
  }
  ADD_FAILURE() << "no attention core";
  return Op();
}

TEST(PackedSequences, AttentionWorkScalesWithTheDocumentLength) {
  // Causal attention over one 4,096-token sequence computes, in whole 128-key tiles, 32·33/2
  // tiles of the 32 query tiles' rows: 4,096·4,224/2 query-key products per head. Documents
  // with Σs²/Σs = 206 packed into it, each tiled on its own (2 query tiles, 1 + 2 key tiles:
  // 192 keys a query), do 4,096·384/2: the ratio is 384/4,224, not 206/4,096.
  const Op full = attention_core("");
  const Op packed = attention_core("206");
  EXPECT_NEAR(packed.flops.count() / full.flops.count(), 384.0 / 4224.0, 1e-12);
  EXPECT_EQ(packed.bytes, full.bytes);  // the same Q, K, V and O pass through
}

TEST(PackedSequences, LongerThanTheSampleIsAnError) {
  StatusOr<Scenario> s = load_scenario_text(
      "model: {preset: llama3-8b}\ncluster: {preset: dgx-h100, gpus: 8}\n"
      "training: {seq_len: 4096, global_batch: 8, packed_sequence_length: 8192}\n",
      "t", {});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("training.packed_sequence_length: 8192: expected at most "
                                      "training.seq_len (4096)"),
            std::string::npos)
      << s.status().message();
}

}  // namespace
}  // namespace preflight

namespace preflight {
namespace {

StatusOr<Scenario> lora_scenario(const std::vector<std::string>& sets) {
  return load_scenario_text(
      "model: {preset: llama3-8b}\ncluster: {preset: dgx-h100, gpus: 8}\n"
      "training: {seq_len: 4096, global_batch: 32, lora: {rank: 16, targets: [qkv]}}\n"
      "parallelism: {distributed_optimizer: true}\n",
      "t", sets);
}

int count_ops(const Workload& w, const std::string& block, const std::string& prefix) {
  for (const Block& b : w.blocks) {
    if (b.name != block) continue;
    int n = 0;
    for (const Op& op : b.ops) n += op.name.rfind(prefix, 0) == 0;
    return n;
  }
  return -1;
}

TEST(Lora, AdaptersTrainAndFrozenWeightsHaveNoWeightGradient) {
  StatusOr<Scenario> s = lora_scenario({});
  ASSERT_TRUE(s.ok()) << s.status().message();
  // qkv of LLaMA-3 8B: 4,096 → 4,096 + 2·1,024; rank 16: 16·(4,096 + 6,144) per layer.
  EXPECT_EQ(lora_parameters(s->model, s->training.lora, 0), 16 * (4096 + 6144));
  const Workload w = generate_workload(*s);
  int wgrads = 0;
  for (const Block& b : w.blocks) {
    for (const Op& op : b.ops) {
      const bool wgrad = op.name.size() > 6 && op.name.rfind(".wgrad") == op.name.size() - 6;
      if (wgrad && op.name.rfind("lora.", 0) != 0) ++wgrads;
    }
  }
  EXPECT_EQ(wgrads, 0);                                  // every base weight is frozen
  EXPECT_EQ(count_ops(w, "layer.fwd", "lora.qkv."), 2);  // A and B
  EXPECT_EQ(count_ops(w, "layer.bwd", "lora.qkv."), 4);  // their dgrads and wgrads
  EXPECT_EQ(count_ops(w, "layer.fwd", "lora.fc1."), 0);  // not a target
  // The DP reduce-scatters carry the adapters' fp32 gradients only: 32 layers of them.
  double reduced = 0;
  for (const Step& st : w.stages[0].steps) {
    if (st.kind == StepKind::kCommAsync || st.kind == StepKind::kCollective) {
      if (st.op.name == "dp.reducescatter")
        reduced += static_cast<double>(st.op.comm_bytes.count());
    }
  }
  EXPECT_DOUBLE_EQ(reduced, 32.0 * 16 * (4096 + 6144) * 4);
}

TEST(Lora, OnlyTheAdaptersHoldGradientsAndOptimizerStates) {
  StatusOr<Scenario> full = load_scenario_text(
      "model: {preset: llama3-8b}\ncluster: {preset: dgx-h100, gpus: 8}\n"
      "training: {seq_len: 4096, global_batch: 32}\nparallelism: {distributed_optimizer: true}\n",
      "t", {});
  StatusOr<Scenario> lora = lora_scenario({});
  ASSERT_TRUE(full.ok() && lora.ok());
  const MemoryReport a = estimate_memory(*full);
  const MemoryReport b = estimate_memory(*lora);
  EXPECT_GT(b.stages[0].weights, a.stages[0].weights);  // the frozen weights plus adapters
  // 32 · 163,840 adapter parameters: 4 B fp32 gradients each, 12 B of Adam states over 8 ranks.
  EXPECT_EQ(b.stages[0].gradients.count(), 32LL * 163840 * 4);
  EXPECT_EQ(b.stages[0].optimizer.count(), 32LL * 163840 * 12 / 8);
}

TEST(Lora, Errors) {
  StatusOr<Scenario> z = lora_scenario({"parallelism.zero_stage=3"});
  ASSERT_FALSE(z.ok());
  EXPECT_NE(z.status().message().find("training.lora: with parallelism.zero_stage 3"),
            std::string::npos);
  StatusOr<Scenario> t = lora_scenario({"training.lora.targets=[gate]"});
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("training.lora.targets: 'gate': expected qkv, proj, fc1 or "
                                      "fc2"),
            std::string::npos)
      << t.status().message();
}

}  // namespace
}  // namespace preflight
