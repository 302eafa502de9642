// The model's blocks of a generated workload (model_blocks.h): which kernels each distinct
// layer, the embedding and the loss head run, assembled from layer_ops.h, moe_ops.h and
// mamba_ops.h (a hybrid's layers are each one part: Mamba-2, attention, MLP or MoE), with
// recompute replayed before a backward, multi-token-prediction modules folded into the head,
// and the backward blocks of split schedules cut into their B and W halves.
#include "workload/model_blocks.h"

#include <algorithm>
#include <optional>
#include <string>

#include "model/transformer.h"
#include "workload/csa_ops.h"
#include "workload/expert_routing.h"
#include "workload/generator.h"
#include "workload/generator_internal.h"
#include "workload/mamba_ops.h"
#include "workload/moe_ops.h"
#include "workload/schedule.h"

namespace preflight {
namespace {

// One transformer layer's kernels: forward attention then MLP, backward MLP then attention.
struct LayerOps {
  std::vector<Op> fwd, bwd;
};

bool is_router_op(const std::string& n) {
  return n == "ln2.fwd" || n == "ln2.bwd" || n.rfind("moe.router.", 0) == 0;
}

// Transformer Engine's per-layer CUDA graphs of some modules (training.cuda_graphs: scoped,
// Megatron-Core's cuda_graph_impl transformer_engine with cuda_graph_scope; docs/workload.md
// "CUDA graphs"). Megatron-Core captures each layer's forward and backward once per micro-batch
// from its start to where capture must stop (a module outside the scope, or the dispatcher's
// host sync, which no graph may hold), so each run of captured kernels in a pass is one graph:
// the host launches the graph once and none of its kernels, nor the framework ops around them.
// `attn_ops` of `ops` are the attention block's (its first ones forward, its last ones
// backward); the rest is the MLP or MoE block. The MoE router's top-k carries the router's and
// the dispatcher's framework ops (LayerShape::moe_ops_router, moe_ops_preprocess): each part
// stays on the host unless its module is captured. The dispatcher's sync stays.
void capture_graph_scopes(const LayerShape& x, bool moe, size_t attn_ops, bool backward,
                          std::vector<Op>* ops) {
  const uint32_t scope = x.graph_scope;
  if (scope == 0) return;
  const size_t n = ops->size();
  std::vector<bool> captured(n, false);
  for (size_t i = 0; i < n; ++i) {
    const bool attn = backward ? i >= n - attn_ops : i < attn_ops;
    const std::string& name = (*ops)[i].name;
    if (attn) {
      captured[i] = (scope & kGraphAttn) != 0;
    } else if (moe) {
      captured[i] = (scope & kGraphMoeRouter) != 0 && is_router_op(name);
    } else {
      captured[i] = (scope & kGraphMlp) != 0;
    }
  }
  for (size_t i = 0; i < n; ++i) {
    Op& op = (*ops)[i];
    const bool topk = moe && !backward && op.name == "moe.router.topk";
    const int preprocess_eager = (scope & kGraphMoePreprocess) ? 0 : x.moe_ops_preprocess;
    if (captured[i]) {
      op.launches = i > 0 && captured[i - 1] ? 0 : 1;  // the graph's one launch
      op.host_time = SimTime();
      if (topk) op.launches += preprocess_eager;
    } else if (topk && (scope & kGraphMoePreprocess)) {
      // The router eager, its dispatcher's preprocessing captured: one graph for the latter.
      op.launches += 1 - x.moe_ops_preprocess;
    }
  }
}

// A transformer layer of shape `xl`; its MLP is a MoE block routed by `load` when given, else
// dense.
LayerOps transformer_layer_ops(const LayerShape& xl, const std::optional<ExpertLoad>& load) {
  // Each sublayer inside its hyper-connections (none without them): before and after it
  // forward, their gradients around its backward.
  auto wrap = [&](const char* sublayer, bool backward, std::vector<Op> inner) {
    std::vector<Op> ops;
    hyper_connection_ops(xl, sublayer, backward, /*before=*/!backward, ops);
    ops.insert(ops.end(), inner.begin(), inner.end());
    hyper_connection_ops(xl, sublayer, backward, /*before=*/backward, ops);
    return ops;
  };
  LayerOps ops;
  ops.fwd = wrap("attn", false, attention_forward_ops(xl));
  const size_t attn_fwd = ops.fwd.size();
  const std::vector<Op> mlp_fwd =
      wrap("mlp", false, load ? moe_forward_ops(xl, *load) : mlp_forward_ops(xl));
  ops.fwd.insert(ops.fwd.end(), mlp_fwd.begin(), mlp_fwd.end());
  ops.bwd = wrap("mlp", true, load ? moe_backward_ops(xl, *load) : mlp_backward_ops(xl));
  const std::vector<Op> attn_bwd = wrap("attn", true, attention_backward_ops(xl));
  ops.bwd.insert(ops.bwd.end(), attn_bwd.begin(), attn_bwd.end());
  capture_graph_scopes(xl, load.has_value(), attn_fwd, false, &ops.fwd);
  capture_graph_scopes(xl, load.has_value(), attn_bwd.size(), true, &ops.bwd);
  return ops;
}

// Model layer `layer` of shape `xl`: a transformer layer, or a hybrid's one part (M: Mamba-2
// mixer, *: attention, -: dense MLP, E: MoE routed by `load`).
LayerOps layer_ops(const ModelConfig& m, const LayerShape& xl, int layer,
                   const std::optional<ExpertLoad>& load) {
  if (!m.is_hybrid()) return transformer_layer_ops(xl, load);
  LayerOps ops;
  if (m.is_mamba_layer(layer)) {
    ops.fwd = mamba_forward_ops(xl);
    ops.bwd = mamba_backward_ops(xl);
    // cuda_graph_scope mamba: the mixer with its norm is one graph per pass (Megatron-Core's
    // MambaLayer under Transformer Engine's make_graphed_callables); nothing in it syncs the host.
    if (xl.graph_scope & kGraphMamba) {
      for (std::vector<Op>* pass : {&ops.fwd, &ops.bwd}) {
        for (size_t i = 0; i < pass->size(); ++i) {
          (*pass)[i].launches = i == 0 ? 1 : 0;
          (*pass)[i].host_time = SimTime();
        }
      }
    }
  } else if (m.has_attention(layer)) {
    ops.fwd = attention_forward_ops(xl);
    ops.bwd = attention_backward_ops(xl);
    capture_graph_scopes(xl, false, ops.fwd.size(), false, &ops.fwd);
    capture_graph_scopes(xl, false, ops.bwd.size(), true, &ops.bwd);
  } else if (load) {
    ops.fwd = moe_forward_ops(xl, *load);
    ops.bwd = moe_backward_ops(xl, *load);
    capture_graph_scopes(xl, true, 0, false, &ops.fwd);
    capture_graph_scopes(xl, true, 0, true, &ops.bwd);
  } else {
    ops.fwd = mlp_forward_ops(xl);
    ops.bwd = mlp_backward_ops(xl);
    capture_graph_scopes(xl, false, 0, false, &ops.fwd);
    capture_graph_scopes(xl, false, 0, true, &ops.bwd);
  }
  return ops;
}

// The expert load of model layer `layer` if it is a MoE layer, drawn as routing draw `draw`
// (the layer's index, or past the last layer for an MTP module); none for a dense layer.
std::optional<ExpertLoad> routing(const Scenario& s, int layer, int draw) {
  if (!s.model.is_moe_layer(layer)) return std::nullopt;
  return draw_expert_load(s.model.moe, s.parallelism.ep, draw, s.simulation.seed,
                          ep_group_token_copies(s));
}

std::string signature(const std::vector<Op>& ops) {
  std::string sig;
  for (const Op& op : ops) {
    sig += op.name;
    sig += '|';
    sig += std::to_string(op.flops.count()) + '|' + std::to_string(op.bytes.count()) + '|' +
           std::to_string(op.comm_bytes.count()) + ';';
  }
  return sig;
}

bool name_starts(const std::string& name, const char* prefix) { return name.rfind(prefix, 0) == 0; }

// The forward ops of one layer that selective recompute replays (parallelism.recompute_modules,
// Megatron-Core's names; docs/workload.md "Recompute"), in forward order, each once:
//   core_attn       FlashAttention's fused forward (attn.core.*; the unfused core is replayed
//                   by attention_recompute_ops, Korthikanti et al. 2022);
//   layernorm       the two pre-GEMM norms (ln1, ln2);
//   moe_act         the experts' activation function;
//   mlp             a dense MLP with its norm (TE fuses the norm into FC1), its SP gather and
//                   its TP reduction;
//   moe             a MoE layer after its norm: router, permutation, dispatch and combine
//                   all-to-alls, experts, shared experts;
//   shared_experts  the shared experts;
//   mla_up_proj     MLA's Q and KV up projections and RoPE.
std::vector<Op> selective_replay(const ParallelismConfig& p, const std::vector<Op>& fwd,
                                 bool moe_layer) {
  const bool layernorm = p.recomputes(RecomputeModule::kLayerNorm);
  const bool core = p.recomputes(RecomputeModule::kCoreAttn);
  const bool moe_act = p.recomputes(RecomputeModule::kMoeAct);
  const bool mlp = p.recomputes(RecomputeModule::kMlp) && !moe_layer;
  const bool moe = p.recomputes(RecomputeModule::kMoe) && moe_layer;
  const bool shared = p.recomputes(RecomputeModule::kSharedExperts);
  const bool mla_up = p.recomputes(RecomputeModule::kMlaUpProj);
  std::vector<Op> ops;
  bool in_mlp = false;  // between ln2.fwd and mlp.residual
  for (const Op& op : fwd) {
    const std::string& n = op.name;
    if (n == "ln2.fwd") in_mlp = true;
    if (n == "mlp.residual") in_mlp = false;
    const bool take = (layernorm && (n == "ln1.fwd" || n == "ln2.fwd")) ||
                      (core && name_starts(n, "attn.core")) ||
                      (moe_act && name_starts(n, "moe.experts.act.")) || (mlp && in_mlp) ||
                      (moe && in_mlp && n != "ln2.fwd") || (shared && name_starts(n, "shared.")) ||
                      (mla_up && (name_starts(n, "mla.q_up.") || name_starts(n, "mla.kv_up.") ||
                                  name_starts(n, "rope.")));
    if (!take) continue;
    ops.push_back(op);
    ops.back().name += ".recompute";
  }
  return ops;
}

// The ops replayed before a layer's backward by recompute, followed by the backward itself:
// the whole forward under full recompute; under selective recompute the chosen modules
// (selective_replay) and, for the attention core of an unfused attention, its kernels.
std::vector<Op> backward_with_recompute(const Scenario& s, const LayerShape& x, bool attention,
                                        bool moe_layer, std::vector<Op> fwd, std::vector<Op> bwd) {
  std::vector<Op> ops;
  const ParallelismConfig& p = s.parallelism;
  if (p.recompute == Recompute::kFull) {
    ops = std::move(fwd);
    for (Op& op : ops) op.name += ".recompute";
  } else if (p.recompute == Recompute::kSelective) {
    if (!x.flash && attention && p.recomputes(RecomputeModule::kCoreAttn)) {
      ops = attention_recompute_ops(x);
    }
    const std::vector<Op> replay = selective_replay(p, fwd, moe_layer);
    ops.insert(ops.end(), replay.begin(), replay.end());
  }
  ops.insert(ops.end(), bwd.begin(), bwd.end());
  return ops;
}

// PyTorch FSDP's gradient staging (StackConfig::fsdp_gradient_staging) at the end of layer
// `layer`'s backward under ZeRO-3 over more than one rank: the copy of the layer's gradients
// into the flat gradient (read and write at the gradient's half precision), the cast to the
// reduce dtype (gradient_bytes_per_element; none when they match) and the in-place pre-divide
// in the reduce dtype, each over the layer's whole unsharded gradient on this GPU. Frozen LoRA
// base weights have no gradient; their adapters' are negligible.
void append_gradient_staging(const Scenario& s, int layer, std::vector<Op>& bwd) {
  const ParallelismConfig& p = s.parallelism;
  if (!s.training.stack.fsdp_gradient_staging || p.zero_stage != 3 || s.training.lora.enabled() ||
      int64_t{p.dp} * p.cp <= 1) {
    return;
  }
  const double params = static_cast<double>(layer_dense_params_per_gpu(s, layer) +
                                            layer_expert_params_per_gpu(s, layer));
  const double half = 2, reduce = gradient_bytes_per_element(s);
  const double cast = reduce == half ? 0 : half + reduce;
  bwd.push_back(memory_op("fsdp.grad_stage", params * (2 * half + cast + 2 * reduce)));
}

// Layers differ when some are MoE and some dense (model.moe.dense_layers, layer_interval), when
// MoE layers draw their own expert loads, when attention windows alternate, or in a hybrid's
// pattern (each kind its own blocks). Each distinct layer gets one forward and one backward
// block (identical layers share them), named "layer.fwd" / "layer.bwd" as for a uniform model.
void add_layer_blocks(const Scenario& s, const LayerShape& x, Workload& w, ModelBlocks& mb) {
  const TrainingConfig& t = s.training;
  const bool bf16_layers = t.bf16_layers_at_start + t.bf16_layers_at_end > 0;
  if (!s.model.moe.enabled() && s.model.sliding_window == 0 && !s.model.is_hybrid() &&
      !bf16_layers) {
    const LayerOps ops = transformer_layer_ops(x, std::nullopt);
    const int fwd = add_block(w, "layer.fwd", ops.fwd);
    std::vector<Op> bwd_ops = backward_with_recompute(s, x, true, false, ops.fwd, ops.bwd);
    append_gradient_staging(s, 0, bwd_ops);
    const int bwd = add_block(w, "layer.bwd", std::move(bwd_ops));
    mb.layer_fwd.assign(s.model.layers, fwd);
    mb.layer_bwd.assign(s.model.layers, bwd);
    return;
  }
  std::map<std::string, int> known;  // block signature -> block id
  bool high = false;                 // the layer at hand is one of the bf16 layers
  auto block_for = [&](const char* name, std::vector<Op> ops) {
    const std::string sig = std::string(name) + (high ? "#bf16#" : "#") + signature(ops);
    auto it = known.find(sig);
    if (it != known.end()) return it->second;
    const int id = add_block(w, name, std::move(ops));
    w.blocks[id].high_precision = high;
    known.emplace(sig, id);
    return id;
  };
  for (int i = 0; i < s.model.layers; ++i) {
    high = i < t.bf16_layers_at_start || i >= s.model.layers - t.bf16_layers_at_end;
    LayerShape xi = make_layer_shape(s, i);
    if (high) xi.gemm_bytes = 2;
    const std::optional<ExpertLoad> load = routing(s, i, i);
    LayerOps ops = layer_ops(s.model, xi, i, load);
    if (load) {
      w.moe_layers.push_back(MoeLayerStats{i, load->imbalance(), load->max_expert_share,
                                           load->dropped, moe_rank_tokens(xi, *load)});
    }
    std::vector<Op> bwd = backward_with_recompute(s, xi, s.model.has_attention(i), load.has_value(),
                                                  ops.fwd, ops.bwd);
    append_gradient_staging(s, i, bwd);
    mb.layer_bwd.push_back(block_for("layer.bwd", std::move(bwd)));
    mb.layer_fwd.push_back(block_for("layer.fwd", std::move(ops.fwd)));
  }
}

// The final norm, output layer and loss; with multi-token prediction (DeepSeek-V3 §2.2) each
// of the mtp_layers modules on the last stage normalises the hidden state and the next token's
// embedding, projects their concatenation (2h → h), runs one transformer layer like the
// model's last (a hybrid's: attention and the MLP of its last - or E layer, Nemotron 3's "*E"),
// and shares the output head and its loss. Forward runs after the main head, backward before
// it.
void add_head_blocks(const Scenario& s, const LayerShape& x, Workload& w, ModelBlocks& mb) {
  std::vector<Op> head_fwd = head_forward_ops(x);
  std::vector<Op> head_bwd = head_backward_ops(x);
  for (int d = 0; d < s.model.mtp_layers; ++d) {
    const int last = mtp_mlp_layer(s.model);
    // With model.csa module d attends as its compress_ratios entry (after the layers') says.
    const LayerShape xl = make_layer_shape(s, s.model.csa.enabled() ? s.model.layers + d : last);
    const double e = x.act_bytes;
    const double th = static_cast<double>(x.tokens) * static_cast<double>(x.h);
    const LayerOps layer = transformer_layer_ops(xl, routing(s, last, s.model.layers + d));
    std::vector<Op> f = {memory_op("mtp.norms.fwd", 4 * e * th),
                         gemm_op("mtp.proj.fwd", x.tokens, x.h, 2 * x.h, 1, x.gemm_bytes)};
    f.insert(f.end(), layer.fwd.begin(), layer.fwd.end());
    std::vector<Op> hf = head_forward_ops(x);
    f.insert(f.end(), hf.begin(), hf.end());
    std::vector<Op> b = head_backward_ops(x);
    b.insert(b.end(), layer.bwd.begin(), layer.bwd.end());
    b.push_back(gemm_op("mtp.proj.dgrad", x.tokens, 2 * x.h, x.h, 1, x.gemm_bytes));
    b.push_back(gemm_op("mtp.proj.wgrad", 2 * x.h, x.h, x.tokens, 1, x.gemm_bytes, true));
    b.push_back(memory_op("mtp.norms.bwd", 8 * e * th));
    for (Op& op : f) op.name = "mtp" + std::to_string(d) + "." + op.name;
    for (Op& op : b) op.name = "mtp" + std::to_string(d) + "." + op.name;
    head_fwd.insert(head_fwd.end(), f.begin(), f.end());
    b.insert(b.end(), head_bwd.begin(), head_bwd.end());
    head_bwd = std::move(b);
  }
  mb.head_fwd = add_block(w, "head.fwd", std::move(head_fwd));
  mb.head_bwd = add_block(w, "head.bwd", std::move(head_bwd));
}

// Split schedules (zb_h1, zb_h2, dualpipe): backward block `block` keeps its weight-gradient
// GEMMs ("*.wgrad", the W pass, which completes the backward and keeps the block's name) and
// hands everything else to a new block "<name>.input" (the B pass), whose id is returned. The
// B part drains the TP stream before it ends, so the W GEMMs no longer wait for it.
int split_off_input_grad(Workload& w, int block) {
  std::vector<Op> input, weight;
  for (const Op& op : w.blocks[block].ops) {
    const std::string& n = op.name;
    const bool wgrad = n.size() > 6 && n.compare(n.size() - 6, 6, ".wgrad") == 0;
    (wgrad ? weight : input).push_back(op);
  }
  for (Op& op : weight) op.wait_comm = false;
  const std::string name = w.blocks[block].name + ".input";
  w.blocks[block].ops = std::move(weight);
  return add_block(w, name.c_str(), std::move(input));
}

}  // namespace

ModelBlocks add_model_blocks(const Scenario& s, const LayerShape& x, Workload& w) {
  ModelBlocks mb;
  add_layer_blocks(s, x, w, mb);
  mb.embedding_fwd = add_block(w, "embedding.fwd", embedding_forward_ops(x));
  mb.embedding_bwd = add_block(w, "embedding.bwd", embedding_backward_ops(x));
  add_head_blocks(s, x, w, mb);
  // Zero-bubble and DualPipe schedules run each backward block as B then, later, W.
  if (splits_backward(s.parallelism.schedule)) {
    for (int b : mb.layer_bwd) {
      if (mb.input_block.count(b) == 0) mb.input_block[b] = split_off_input_grad(w, b);
    }
    mb.input_block[mb.head_bwd] = split_off_input_grad(w, mb.head_bwd);
  }
  return mb;
}

std::vector<LayerRun> layer_runs(const ModelBlocks& mb, int first, int count, bool backward) {
  std::vector<LayerRun> runs;
  for (int i = first; i < first + count; ++i) {
    if (!runs.empty() && runs.back().fwd == mb.layer_fwd[i] && runs.back().bwd == mb.layer_bwd[i]) {
      ++runs.back().count;
    } else {
      runs.push_back(LayerRun{mb.layer_fwd[i], mb.layer_bwd[i], 1, i});
    }
  }
  if (backward) std::reverse(runs.begin(), runs.end());
  return runs;
}

}  // namespace preflight
