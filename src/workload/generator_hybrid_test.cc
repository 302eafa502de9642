// The workload of hybrid Mamba-2/attention models: one block per layer kind, chosen per layer by
// the pattern, and pipeline stages (even, uneven and interleaved) that run the blocks of their
// own layers.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "config/loader.h"
#include "model/transformer.h"
#include "workload/generator.h"
#include "workload/layer_ops.h"
#include "workload/model_blocks.h"

namespace preflight {
namespace {

Scenario load(const std::vector<std::string>& set) {
  StatusOr<Scenario> s = load_scenario_text("", "t", set);
  EXPECT_TRUE(s.ok()) << s.status().message();
  return *s;
}

// `model` on one DGX H100 (EP 8 when it has experts), micro-batches of one 4096-token sequence.
std::vector<std::string> one_node(const char* model, std::vector<std::string> extra = {}) {
  std::vector<std::string> set = {std::string("model.preset=") + model,
                                  "cluster.preset=dgx-h100",
                                  "cluster.nodes=1",
                                  "training.seq_len=4096",
                                  "training.global_batch=16",
                                  "parallelism.tp=1",
                                  "parallelism.pp=1",
                                  "parallelism.dp=auto",
                                  "parallelism.sequence_parallel=false"};
  set.insert(set.end(), extra.begin(), extra.end());
  return set;
}

bool has_op(const Block& b, const std::string& name) {
  for (const Op& op : b.ops) {
    if (op.name == name) return true;
  }
  return false;
}

// The blocks add_model_blocks gives `s`; generate_workload adds them first, with the same ids.
ModelBlocks model_blocks(const Scenario& s, Workload& w) {
  return add_model_blocks(s, make_layer_shape(s), w);
}

TEST(HybridWorkload, EachLayerRunsTheBlockOfItsKind) {
  // Nemotron 3 Nano (M, *, E) and Nemotron-H 8B (M, *, -): a layer's forward holds the kernels
  // of its pattern character and no other's.
  for (const char* model : {"nemotron3-nano", "nemotron-h-8b"}) {
    SCOPED_TRACE(model);
    const Scenario s = load(one_node(
        model, std::string(model) == "nemotron3-nano"
                   ? std::vector<std::string>{"parallelism.ep=8", "model.moe.routing=uniform"}
                   : std::vector<std::string>{"parallelism.ep=1"}));
    Workload w;
    const ModelBlocks mb = model_blocks(s, w);
    ASSERT_EQ(mb.layer_fwd.size(), s.model.hybrid_pattern.size());
    for (int i = 0; i < s.model.layers; ++i) {
      const char c = s.model.hybrid_pattern[i];
      const Block& f = w.blocks[mb.layer_fwd[i]];
      const Block& b = w.blocks[mb.layer_bwd[i]];
      EXPECT_EQ(has_op(f, "mamba.in_proj.fwd"), c == 'M') << i;
      EXPECT_EQ(has_op(f, "mamba.ssd.fwd"), c == 'M') << i;
      EXPECT_EQ(has_op(b, "mamba.ssd.bwd"), c == 'M') << i;
      EXPECT_EQ(has_op(f, "qkv.fwd"), c == '*') << i;
      EXPECT_EQ(has_op(b, "attn.core.bwd"), c == '*') << i;
      EXPECT_EQ(has_op(f, "fc1.fwd"), c == '-') << i;
      EXPECT_EQ(has_op(f, "moe.router.fwd"), c == 'E') << i;
      EXPECT_EQ(has_op(b, "moe.experts.fc1.wgrad[1.00x]"), c == 'E') << i;
    }
  }
}

TEST(HybridWorkload, LayersOfOneKindShareTheirBlocks) {
  // Uniform routing draws the same load for every MoE layer: Nano has three distinct layers
  // (M, *, E), so three forward and three backward blocks.
  const Scenario s = load(one_node("nemotron3-nano", {"parallelism.ep=8"}));
  Workload w;
  const ModelBlocks mb = model_blocks(s, w);
  EXPECT_EQ(std::set<int>(mb.layer_fwd.begin(), mb.layer_fwd.end()).size(), 3u);
  EXPECT_EQ(std::set<int>(mb.layer_bwd.begin(), mb.layer_bwd.end()).size(), 3u);
  EXPECT_EQ(mb.layer_fwd[0], mb.layer_fwd[2]);  // M, M
  EXPECT_EQ(mb.layer_fwd[1], mb.layer_fwd[3]);  // E, E
  EXPECT_NE(mb.layer_fwd[4], mb.layer_fwd[5]);  // M, *
  EXPECT_EQ(w.blocks[mb.layer_fwd[0]].name, "layer.fwd");
  // Expert statistics for the 23 E layers only.
  EXPECT_EQ(w.moe_layers.size(), 23u);
  EXPECT_EQ(w.moe_layers.front().layer, 1);
}

// Forward blocks stage `stage` runs for micro-batch 0, in order, with repeats expanded.
std::vector<int> forward_blocks(const Program& p, const std::set<int>& layer_blocks) {
  std::vector<int> out;
  for (const Step& st : p.steps) {
    if (st.kind != StepKind::kRun || st.backward || st.microbatch != 0) continue;
    if (layer_blocks.count(st.block) == 0) continue;
    for (int r = 0; r < st.repeat; ++r) out.push_back(st.block);
  }
  return out;
}

TEST(HybridWorkload, PipelineStagesRunTheirOwnLayersBlocks) {
  // Nano on PP 2 split evenly (26 + 26), unevenly (20 + 32) and interleaved (PP 2 × VPP 2, 13
  // layers per chunk): each stage's forward runs, for micro-batch 0, the blocks of its layers in
  // model order (stage_layer_ids).
  const std::vector<std::vector<std::string>> splits = {
      {},
      {"parallelism.pipeline_layout=[20, 32]"},
      {"parallelism.vpp=2", "parallelism.schedule=interleaved"},
  };
  for (const std::vector<std::string>& split : splits) {
    std::vector<std::string> set =
        one_node("nemotron3-nano", {"parallelism.ep=4", "parallelism.pp=2"});
    set.insert(set.end(), split.begin(), split.end());
    const Scenario s = load(set);
    SCOPED_TRACE(split.empty() ? "even" : split[0]);
    Workload scratch;
    const ModelBlocks mb = model_blocks(s, scratch);
    const std::set<int> layer_blocks(mb.layer_fwd.begin(), mb.layer_fwd.end());
    const Workload w = generate_workload(s);
    for (int stage = 0; stage < 2; ++stage) {
      std::vector<int> want;
      for (int l : stage_layer_ids(s, stage)) want.push_back(mb.layer_fwd[l]);
      EXPECT_EQ(forward_blocks(w.stages[stage], layer_blocks), want) << "stage " << stage;
    }
  }
}

TEST(HybridWorkload, MtpBlockIsAttentionAndMoe) {
  // Nemotron 3 Super: two MTP depths ("*E") on the last stage's head, each with attention and
  // the latent MoE block.
  const Scenario s = load(one_node("nemotron3-super", {"parallelism.ep=8"}));
  Workload w;
  const ModelBlocks mb = model_blocks(s, w);
  const Block& head = w.blocks[mb.head_fwd];
  for (const char* op : {"mtp0.qkv.fwd", "mtp0.moe.latent_down.fwd", "mtp1.attn.core.fwd",
                         "mtp1.moe.latent_up.fwd"}) {
    EXPECT_TRUE(has_op(head, op)) << op;
  }
}

TEST(HybridWorkload, StageParametersFollowTheLayerKinds) {
  // Nano on PP 2: the stages' dense parameters (TP 1) and routed experts (over EP 4) add up to
  // the model's total, with the first stage's embedding and the last's output layer.
  const Scenario s = load(one_node("nemotron3-nano", {"parallelism.ep=4", "parallelism.pp=2"}));
  int64_t sum = 0;
  for (int stage = 0; stage < 2; ++stage) {
    const int64_t experts = stage_expert_parameters_per_gpu(s, stage);
    sum += stage_parameters_per_gpu(s, stage) - experts + experts * 4;
  }
  EXPECT_EQ(sum, total_parameters(s.model, 1, 4096));
}

}  // namespace
}  // namespace preflight
