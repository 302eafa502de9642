// Selective recompute by module (parallelism.recompute_modules, Megatron-Core's
// --recompute-modules): what each module replays before a layer's backward, what it stops
// keeping for that backward, and what the loader accepts.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "config/loader.h"
#include "memory/memory_model.h"
#include "simulate/simulate.h"
#include "workload/generator.h"
#include "workload/layer_ops.h"
#include "workload/model_blocks.h"

namespace preflight {
namespace {

// Mixtral 8x7B on one DGX H100: EP 8, one micro-batch of 4,096 tokens per GPU.
const char* kMoe = R"(
model: {preset: mixtral-8x7b, moe: {routing: uniform}}
cluster: {preset: dgx-h100, nodes: 1}
training: {seq_len: 4096, global_batch: 8, micro_batch: 1, precision: bf16}
parallelism: {tp: 1, pp: 1, ep: 8}
)";

// LLaMA-3 8B on one DGX H100, TP 2 (a dense MLP and FlashAttention).
const char* kDense = R"(
model: {preset: llama3-8b}
cluster: {preset: dgx-h100, nodes: 1}
training: {seq_len: 8192, global_batch: 8, micro_batch: 1, precision: bf16}
parallelism: {tp: 2, pp: 1, sequence_parallel: true}
)";

StatusOr<Scenario> try_load(const char* yaml, const std::vector<std::string>& overrides) {
  return load_scenario_text(yaml, "test.yaml", overrides);
}

Scenario load(const char* yaml, const std::vector<std::string>& overrides = {}) {
  StatusOr<Scenario> s = try_load(yaml, overrides);
  EXPECT_TRUE(s.ok()) << s.status().message();
  return s.ok() ? *s : Scenario{};
}

// The names of the ops layer 0's backward replays (those ending in ".recompute").
std::vector<std::string> replayed(const Scenario& s) {
  const Workload w = generate_workload(s);
  std::vector<std::string> out;
  for (const Block& b : w.blocks) {
    if (b.name != "layer.bwd") continue;
    for (const Op& op : b.ops) {
      const std::string& n = op.name;
      if (n.size() > 10 && n.compare(n.size() - 10, 10, ".recompute") == 0) out.push_back(n);
    }
    break;
  }
  return out;
}

bool has(const std::vector<std::string>& v, const std::string& name) {
  for (const std::string& x : v) {
    if (x == name) return true;
  }
  return false;
}

double peak_activations_gib(const Scenario& s) {
  return static_cast<double>(estimate_memory(s).stages[0].layer_activations.count()) /
         (1024.0 * 1024.0 * 1024.0);
}

double iteration_s(const Scenario& s) {
  StatusOr<SimulationReport> r = simulate(s);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? r->iteration_time_s : 0;
}

TEST(RecomputeModules, DefaultSelectiveReplaysTheFlashAttentionForward) {
  // Megatron-Core's default module list is [core_attn]: the checkpointed core attention runs
  // its fused forward again before its backward, FlashAttention or not.
  const std::vector<std::string> ops = replayed(load(kDense, {"parallelism.recompute=selective"}));
  ASSERT_EQ(ops.size(), 1u);
  EXPECT_EQ(ops[0], "attn.core.fwd.recompute");
  EXPECT_TRUE(replayed(load(kDense)).empty());  // recompute none
}

TEST(RecomputeModules, EachModuleReplaysItsOwnKernels) {
  const std::vector<std::string> norms =
      replayed(load(kDense, {"parallelism.recompute_modules=[layernorm]"}));
  EXPECT_EQ(norms, (std::vector<std::string>{"ln1.fwd.recompute", "ln2.fwd.recompute"}));
  // A dense MLP: its norm (fused into FC1), SP gather, GEMMs, activation and TP reduction.
  const std::vector<std::string> mlp =
      replayed(load(kDense, {"parallelism.recompute_modules=[mlp]"}));
  EXPECT_TRUE(has(mlp, "ln2.fwd.recompute"));
  EXPECT_TRUE(has(mlp, "fc1.fwd.recompute"));
  EXPECT_TRUE(has(mlp, "mlp.act.fwd.recompute"));
  EXPECT_TRUE(has(mlp, "fc2.fwd.recompute"));
  EXPECT_FALSE(has(mlp, "attn.core.fwd.recompute"));
  EXPECT_FALSE(has(mlp, "mlp.residual.recompute"));
  // The MoE layer: router, dispatch and combine all-to-alls again, and the experts.
  const std::vector<std::string> moe = replayed(load(kMoe, {"parallelism.recompute_modules=moe"}));
  EXPECT_TRUE(has(moe, "moe.router.fwd.recompute"));
  EXPECT_TRUE(has(moe, "ep.alltoall.dispatch.recompute"));
  EXPECT_TRUE(has(moe, "ep.alltoall.combine.recompute"));
  EXPECT_TRUE(has(moe, "moe.experts.act.fwd.recompute"));
  EXPECT_FALSE(has(moe, "ln2.fwd.recompute"));  // the norm is outside the MoE layer
  const std::vector<std::string> act =
      replayed(load(kMoe, {"parallelism.recompute_modules=[moe_act]"}));
  EXPECT_EQ(act, std::vector<std::string>{"moe.experts.act.fwd.recompute"});
  // Modules overlap (moe holds moe_act): each kernel is replayed once.
  EXPECT_EQ(replayed(load(kMoe, {"parallelism.recompute_modules=[moe, moe_act, moe]"})).size(),
            moe.size());
}

TEST(RecomputeModules, ReplayingMoreKeepsLessAndCostsTime) {
  const Scenario none = load(kMoe);
  const Scenario act = load(kMoe, {"parallelism.recompute_modules=[moe_act]"});
  const Scenario moe = load(kMoe, {"parallelism.recompute_modules=[moe, layernorm]"});
  const Scenario full = load(kMoe, {"parallelism.recompute=full"});
  EXPECT_LT(peak_activations_gib(act), peak_activations_gib(none));
  EXPECT_LT(peak_activations_gib(moe), peak_activations_gib(act));
  EXPECT_LT(peak_activations_gib(full), peak_activations_gib(moe));
  // moe_act drops FC2's input, 2 B × k·T routed copies × expert ffn per layer (uniform router):
  // Mixtral k = 2, T = 4096, ffn 14,336, 32 layers, one micro-batch in flight.
  const double drop = 2.0 * 2 * 4096 * 14336 * 32 / (1024.0 * 1024.0 * 1024.0);
  EXPECT_NEAR(peak_activations_gib(none) - peak_activations_gib(act), drop, 1e-6);
  const double t_none = iteration_s(none), t_act = iteration_s(act);
  const double t_moe = iteration_s(moe), t_full = iteration_s(full);
  EXPECT_GT(t_act, t_none);
  EXPECT_GT(t_moe, t_act);
  EXPECT_GT(t_full, t_moe);
  // Full recompute replays the whole forward, moe the MoE block: per token 2 experts of
  // 3·2·4096·14336 = 704 MFLOP against attention's 117 (QKV 50, projection 34, causal core 34),
  // 86 % of the layer's forward FLOPs, with the all-to-alls on top. Its cost lies between 70 %
  // and all of full recompute's.
  const double share = (t_moe - t_none) / (t_full - t_none);
  EXPECT_GT(share, 0.7);
  EXPECT_LT(share, 1.0);
}

TEST(RecomputeModules, LoaderRules) {
  // Given alone, the modules imply selective recompute.
  const Scenario s = load(kMoe, {"parallelism.recompute_modules=moe_act,layernorm"});
  EXPECT_EQ(s.parallelism.recompute, Recompute::kSelective);
  EXPECT_EQ(recompute_modules_string(s.parallelism), "layernorm,moe_act");
  auto error = [](const char* yaml, const std::vector<std::string>& o) {
    StatusOr<Scenario> r = try_load(yaml, o);
    return r.ok() ? std::string("loaded") : r.status().message();
  };
  EXPECT_NE(error(kMoe, {"parallelism.recompute=full", "parallelism.recompute_modules=[moe]"})
                .find("given with recompute full: expected recompute: selective"),
            std::string::npos);
  EXPECT_NE(error(kMoe, {"parallelism.recompute_modules=[moe_atc]"})
                .find("'moe_atc': expected one of core_attn, layernorm, moe_act, mlp, moe, "
                      "shared_experts, mla_up_proj (did you mean 'moe_act'?)"),
            std::string::npos);
  EXPECT_NE(error(kMoe, {"parallelism.recompute_modules=[]"}).find("an empty list"),
            std::string::npos);
  EXPECT_NE(error(kDense, {"parallelism.recompute_modules=[moe]"})
                .find("parallelism.recompute_modules: moe: model llama3-8b has no MoE layers"),
            std::string::npos);
  EXPECT_NE(error(kMoe, {"parallelism.recompute_modules=[mla_up_proj]"})
                .find("has no multi-head latent attention"),
            std::string::npos);
  EXPECT_NE(error(kMoe, {"parallelism.recompute_modules=[mlp]"}).find("has no dense MLP layer"),
            std::string::npos);
}

}  // namespace
}  // namespace preflight
