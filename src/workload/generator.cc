#include "workload/generator.h"

#include <algorithm>

#include <map>

#include "base/check.h"
#include "model/transformer.h"
#include "workload/expert_routing.h"
#include "workload/layer_ops.h"
#include "workload/moe_ops.h"
#include "workload/overlap_ops.h"
#include "workload/precision_ops.h"
#include "workload/schedule.h"

namespace preflight {
namespace {

struct BlockIds {
  int layer_fwd = -1;
  int layer_bwd = -1;
  int embedding_fwd = -1;
  int embedding_bwd = -1;
  int head_fwd = -1;
  int head_bwd = -1;
  int optimizer = -1;
};

int add_block(Workload& w, const char* name, std::vector<Op> ops) {
  w.blocks.push_back(Block{name, std::move(ops)});
  return static_cast<int>(w.blocks.size()) - 1;
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

Step run(int block, int repeat, const PipelineTask& t) {
  Step s;
  s.kind = StepKind::kRun;
  s.block = block;
  s.repeat = repeat;
  s.microbatch = t.microbatch;
  s.chunk = t.chunk;
  s.backward = t.backward;
  return s;
}

// A run of consecutive layers that share one forward and one backward block.
struct LayerRun {
  int fwd = -1, bwd = -1;
  int count = 0;
  int first_layer = 0;  // model layer index of the run's first layer
};

// Layers differ when some are MoE and some dense (model.moe.dense_layers, layer_interval), when
// MoE layers draw their own expert loads, or when attention windows alternate. Each distinct
// layer gets one forward and one backward block (identical layers share them), named
// "layer.fwd" / "layer.bwd" as for a uniform model; `fwd_of[i]`, `bwd_of[i]` are layer i's.
struct LayerBlocks {
  std::vector<int> fwd_of, bwd_of;
  std::vector<ExpertLoad> loads;  // one per MoE layer, in layer order
};

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

// The ops replayed before a layer's backward by recompute, followed by the backward itself.
std::vector<Op> backward_with_recompute(const Scenario& s, const LayerShape& x,
                                        std::vector<Op> fwd, std::vector<Op> bwd) {
  std::vector<Op> ops;
  if (s.parallelism.recompute == Recompute::kFull) {
    ops = std::move(fwd);
    for (Op& op : ops) op.name += ".recompute";
  } else if (s.parallelism.recompute == Recompute::kSelective && !x.flash) {
    ops = attention_recompute_ops(x);
  }
  ops.insert(ops.end(), bwd.begin(), bwd.end());
  return ops;
}

// Runs of consecutive layers [first, first + count) with equal blocks; `backward` reverses them.
std::vector<LayerRun> layer_runs(const LayerBlocks& lb, int first, int count, bool backward) {
  std::vector<LayerRun> runs;
  for (int i = first; i < first + count; ++i) {
    if (!runs.empty() && runs.back().fwd == lb.fwd_of[i] && runs.back().bwd == lb.bwd_of[i]) {
      ++runs.back().count;
    } else {
      runs.push_back(LayerRun{lb.fwd_of[i], lb.bwd_of[i], 1, i});
    }
  }
  if (backward) std::reverse(runs.begin(), runs.end());
  return runs;
}

// Tag of the message that carries micro-batch `mb` into model chunk `k` (global chunk index).
int64_t p2p_tag(int mb, int k, int chunks, bool backward) {
  return (static_cast<int64_t>(mb) * chunks + k) * 2 + (backward ? 1 : 0);
}

}  // namespace

int gradient_bytes_per_element(const Scenario& s) {
  return s.training.precision == Precision::kFp16 ? 2 : 4;
}

int64_t stage_expert_parameters_per_gpu(const Scenario& s, int stage) {
  const ModelConfig& m = s.model;
  int64_t experts = 0;
  for (int layer : stage_layer_ids(s, stage)) experts += expert_parameters(m, layer);
  if (stage == s.parallelism.pp - 1) {
    experts += int64_t{m.mtp_layers} * expert_parameters(m, m.layers - 1);
  }
  return experts / (int64_t{s.parallelism.ep} * s.expert_tp());
}

int64_t stage_parameters_per_gpu(const Scenario& s, int stage) {
  const ModelConfig& m = s.model;
  const int tp = s.parallelism.tp;
  const int pp = s.parallelism.pp;
  // Everything but the routed experts is split over TP: attention, norms, dense MLPs, and, as
  // Megatron-Core shards them, the shared experts (the router, E·h, is replicated there; it is
  // split here with the rest). Routed experts are split over ep·etp. MTP modules sit on the
  // last stage.
  int64_t dense = 0;
  for (int layer : stage_layer_ids(s, stage)) {
    dense += layer_parameters(m, layer) - expert_parameters(m, layer);
  }
  if (stage == pp - 1) {
    const int64_t mtp = mtp_module_parameters(m) - expert_parameters(m, m.layers - 1);
    dense += int64_t{m.mtp_layers} * mtp;
  }
  int64_t p = dense / tp + stage_expert_parameters_per_gpu(s, stage);
  const int64_t vocab_shard = padded_vocab(m, tp) / tp * m.hidden;
  if (stage == 0) {
    p += vocab_shard;
    if (m.position_embedding == PositionEmbedding::kLearned) {
      p += static_cast<int64_t>(s.training.seq_len) * m.hidden;
    }
  }
  if (stage == pp - 1) {
    p += m.norm == Norm::kLayerNorm ? 2 * m.hidden : m.hidden;
    // Untied output layer; or, with PP, the last stage's copy of the tied embedding.
    if (!m.tied_embeddings || pp > 1) p += vocab_shard;
  }
  return p;
}

Workload generate_workload(const Scenario& s) {
  const ParallelismConfig& par = s.parallelism;
  const int p = par.pp;
  const int v = par.vpp;
  const int chunks = p * v;
  const int m = s.num_microbatches();
  const std::vector<int> layers_of_stage = stage_layers(s);
  const int layers_per_chunk = s.model.layers / chunks;  // even pipelines; see layers_of_stage
  const LayerShape x = make_layer_shape(s);

  Workload w;
  w.microbatches = m;
  w.layers_per_chunk = layers_per_chunk;
  BlockIds ids;
  LayerBlocks lb;
  if (!s.model.moe.enabled() && s.model.sliding_window == 0) {
    ids.layer_fwd = add_block(w, "layer.fwd", layer_forward_ops(x));
    ids.layer_bwd = add_block(w, "layer.bwd",
                              backward_with_recompute(s, x, layer_forward_ops(x),
                                                      layer_backward_ops(x)));
    lb.fwd_of.assign(s.model.layers, ids.layer_fwd);
    lb.bwd_of.assign(s.model.layers, ids.layer_bwd);
  } else {
    std::map<std::string, int> known;  // block signature -> block id
    auto block_for = [&](const char* name, std::vector<Op> ops) {
      const std::string sig = std::string(name) + '#' + signature(ops);
      auto it = known.find(sig);
      if (it != known.end()) return it->second;
      const int id = add_block(w, name, std::move(ops));
      known.emplace(sig, id);
      return id;
    };
    for (int i = 0; i < s.model.layers; ++i) {
      const LayerShape xi = make_layer_shape(s, i);
      std::vector<Op> fwd = attention_forward_ops(xi);
      std::vector<Op> mlp_fwd, mlp_bwd;
      if (s.model.is_moe_layer(i)) {
        const ExpertLoad load = draw_expert_load(s.model.moe, par.ep, i, s.simulation.seed);
        mlp_fwd = moe_forward_ops(xi, load);
        mlp_bwd = moe_backward_ops(xi, load);
        w.moe_layers.push_back(MoeLayerStats{i, load.imbalance(), load.max_expert_share,
                                             load.dropped, moe_rank_tokens(xi, load)});
      } else {
        mlp_fwd = mlp_forward_ops(xi);
        mlp_bwd = mlp_backward_ops(xi);
      }
      fwd.insert(fwd.end(), mlp_fwd.begin(), mlp_fwd.end());
      std::vector<Op> bwd = std::move(mlp_bwd);
      std::vector<Op> attn_bwd = attention_backward_ops(xi);
      bwd.insert(bwd.end(), attn_bwd.begin(), attn_bwd.end());
      lb.bwd_of.push_back(block_for("layer.bwd", backward_with_recompute(s, xi, fwd, bwd)));
      lb.fwd_of.push_back(block_for("layer.fwd", std::move(fwd)));
    }
  }
  // First model layer of each global chunk k (= chunk·p + stage).
  std::vector<int> chunk_first(chunks + 1, 0);
  for (int k = 0; k < chunks; ++k) {
    chunk_first[k + 1] =
        chunk_first[k] + (v == 1 ? layers_of_stage[k] : s.model.layers / chunks);
  }
  ids.embedding_fwd = add_block(w, "embedding.fwd", embedding_forward_ops(x));
  ids.embedding_bwd = add_block(w, "embedding.bwd", embedding_backward_ops(x));
  {
    std::vector<Op> head_fwd = head_forward_ops(x);
    std::vector<Op> head_bwd = head_backward_ops(x);
    // Multi-token prediction (DeepSeek-V3 §2.2): each of the mtp_layers modules on the last
    // stage normalises the hidden state and the next token's embedding, projects their
    // concatenation (2h → h), runs one transformer layer like the model's last, and shares the
    // output head and its loss. Forward runs after the main head, backward before it.
    for (int d = 0; d < s.model.mtp_layers; ++d) {
      const int last = s.model.layers - 1;
      const LayerShape xl = make_layer_shape(s, last);
      const double e = x.act_bytes;
      const double th = static_cast<double>(x.tokens) * static_cast<double>(x.h);
      std::vector<Op> f = {memory_op("mtp.norms.fwd", 4 * e * th),
                           gemm_op("mtp.proj.fwd", x.tokens, x.h, 2 * x.h, 1, x.gemm_bytes)};
      std::vector<Op> layer_f = attention_forward_ops(xl);
      std::vector<Op> mlp_f, mlp_b;
      if (s.model.is_moe_layer(last)) {
        const ExpertLoad load =
            draw_expert_load(s.model.moe, par.ep, s.model.layers + d, s.simulation.seed);
        mlp_f = moe_forward_ops(xl, load);
        mlp_b = moe_backward_ops(xl, load);
      } else {
        mlp_f = mlp_forward_ops(xl);
        mlp_b = mlp_backward_ops(xl);
      }
      layer_f.insert(layer_f.end(), mlp_f.begin(), mlp_f.end());
      std::vector<Op> layer_b = std::move(mlp_b);
      std::vector<Op> attn_b = attention_backward_ops(xl);
      layer_b.insert(layer_b.end(), attn_b.begin(), attn_b.end());
      f.insert(f.end(), layer_f.begin(), layer_f.end());
      std::vector<Op> hf = head_forward_ops(x);
      f.insert(f.end(), hf.begin(), hf.end());
      std::vector<Op> b = head_backward_ops(x);
      b.insert(b.end(), layer_b.begin(), layer_b.end());
      b.push_back(gemm_op("mtp.proj.dgrad", x.tokens, 2 * x.h, x.h, 1, x.gemm_bytes));
      b.push_back(gemm_op("mtp.proj.wgrad", 2 * x.h, x.h, x.tokens, 1, x.gemm_bytes, true));
      b.push_back(memory_op("mtp.norms.bwd", 8 * e * th));
      for (Op& op : f) op.name = "mtp" + std::to_string(d) + "." + op.name;
      for (Op& op : b) op.name = "mtp" + std::to_string(d) + "." + op.name;
      head_fwd.insert(head_fwd.end(), f.begin(), f.end());
      b.insert(b.end(), head_bwd.begin(), head_bwd.end());
      head_bwd = std::move(b);
    }
    ids.head_fwd = add_block(w, "head.fwd", std::move(head_fwd));
    ids.head_bwd = add_block(w, "head.bwd", std::move(head_bwd));
  }
  // Zero-bubble and DualPipe schedules run each backward block as B then, later, W.
  const bool split = splits_backward(par.schedule);
  const bool dual = par.schedule == Schedule::kDualPipe;
  std::map<int, int> input_block;  // backward (W) block -> its B block
  if (split) {
    for (int b : lb.bwd_of) {
      if (input_block.count(b) == 0) input_block[b] = split_off_input_grad(w, b);
    }
    input_block[ids.head_bwd] = split_off_input_grad(w, ids.head_bwd);
  }
  // DualPipe overlaps the forward of one micro-batch with the backward of another so that each
  // one's expert all-to-alls run behind the other's compute (DeepSeek-V3 §3.2.1, Figure 4).
  // Inside a pair, blocks run in a copy whose EP all-to-alls are asynchronous on the
  // communication stream; the pair ends by waiting for that stream. The pair then costs about
  // max(compute, all-to-all) instead of their sum: the ideal overlap, without the SMs DeepSeek
  // reserves for communication (20 of 132) slowing the compute.
  std::map<int, int> overlapped;  // block -> its copy with asynchronous EP all-to-alls
  auto overlapped_block = [&](int block) {
    auto it = overlapped.find(block);
    if (it != overlapped.end()) return it->second;
    Block copy = w.blocks[block];
    bool any = false;
    for (Op& op : copy.ops) {
      if (op.type == OpType::kCollective && op.group == GroupKind::kExpert) {
        op.async = true;
        any = true;
      }
    }
    int id = block;
    if (any) {
      w.blocks.push_back(std::move(copy));
      id = static_cast<int>(w.blocks.size()) - 1;
    }
    overlapped.emplace(block, id);
    return id;
  };
  int pair_sync = -1;  // a no-op kernel that waits for the communication stream
  if (dual && s.model.moe.enabled() && par.ep > 1) {
    Op wait = memory_op("dualpipe.pair.wait", 0, Category::kEpComm);
    wait.wait_comm = true;
    pair_sync = add_block(w, "dualpipe.pair.wait", {wait});
  }

  const int grad_bytes = gradient_bytes_per_element(s);
  const int dp_cp = par.dp * par.cp;    // the gradient-reduction group of dense parameters
  const int edp = s.model.moe.enabled() ? s.expert_dp() : 1;  // ... and of routed experts
  const Bytes p2p_bytes(x.act_bytes * x.tokens * x.h / (par.sequence_parallel ? par.tp : 1));
  const bool tied_sync = s.model.tied_embeddings && p > 1;
  const int64_t vocab_shard = padded_vocab(s.model, par.tp) / par.tp * s.model.hidden;

  for (int stage = 0; stage < p; ++stage) {
    Program prog;
    prog.stage = stage;
    // DualPipe: rank `stage` holds model stages `stage` (chunk 0) and p−1−stage (chunk 1).
    int64_t params = stage_parameters_per_gpu(s, stage);
    int64_t expert_params = stage_expert_parameters_per_gpu(s, stage);
    std::vector<int> rank_layer_ids = stage_layer_ids(s, stage);
    if (dual) {
      params += stage_parameters_per_gpu(s, p - 1 - stage);
      expert_params += stage_expert_parameters_per_gpu(s, p - 1 - stage);
      for (int l : stage_layer_ids(s, p - 1 - stage)) rank_layer_ids.push_back(l);
    }
    // Gradients reduce over the data-parallel group, which with context parallelism spans the
    // dp·cp ranks (Megatron-Core); routed experts over their expert-DP group instead.
    const int64_t dense_params = params - expert_params;
    const bool expert_reduce = expert_params > 0 && edp > 1;
    const int stage_chunk_layers = layers_of_stage[stage] / v;
    const std::vector<PipelineTask> order = pipeline_order(par.schedule, stage, p, m, v);
    // Last pass of each chunk that produces weight gradients (a whole backward or a W), where
    // overlapped DP buckets are issued.
    std::vector<int> last_grads(std::max(v, 2), -1);
    for (size_t i = 0; i < order.size(); ++i) {
      const Pass pass = order[i].pass;
      if (pass == Pass::kBackward || pass == Pass::kWeightGrad) {
        last_grads[order[i].chunk] = static_cast<int>(i);
      }
    }
    // Gradients of a layer's non-expert parameters (on this GPU) go to the DP buckets; routed
    // experts are reduced over the expert-DP group at the end (see below).
    auto dense_layer_params = [&](int layer) {
      return (layer_parameters(s.model, layer) - expert_parameters(s.model, layer)) / par.tp;
    };
    const int64_t bucket_params = std::max<int64_t>(1, par.grad_bucket_size.count() / grad_bytes);
    // Routed-expert parameters of a layer on this GPU, reduced and gathered over expert-DP.
    auto expert_layer_params = [&](int layer) {
      return expert_parameters(s.model, layer) / (int64_t{par.ep} * s.expert_tp());
    };
    // Sharded data parallelism. ZeRO-3 (FSDP) shards each layer's weights over the DP group:
    // every micro-batch gathers a layer's parameters before its forward and again before its
    // backward, one layer ahead, and reduce-scatters its gradients after its backward. The
    // embedding, output layer and MTP modules (the "rest") are reduced and gathered once per
    // iteration, as with the distributed optimizer, which ZeRO-3 implies.
    const bool zero3 = par.zero_stage == 3 && (dp_cp > 1 || expert_reduce);
    const bool sharded = par.distributed_optimizer || zero3;
    int64_t rest_dense = dense_params, rest_expert = expert_params;
    for (int l : rank_layer_ids) {
      rest_dense -= dense_layer_params(l);
      rest_expert -= expert_layer_params(l);
    }
    // A DP-stream collective (kCommAsync) of `count` parameters of `bytes_per` bytes each.
    auto dp_async = [&](const char* name, CollectiveKind kind, GroupKind group, int64_t count,
                        int bytes_per, const PipelineTask* t) {
      Step c;
      c.kind = StepKind::kCommAsync;
      c.op = collective_op(name, kind, group, Bytes(count * bytes_per));
      if (t != nullptr) {
        c.microbatch = t->microbatch;
        c.chunk = t->chunk;
        c.backward = t->backward;
      }
      prog.steps.push_back(c);
    };
    auto wait_dp = [&] {
      Step wait;
      wait.kind = StepKind::kWaitComm;
      prog.steps.push_back(wait);
    };
    // Half-precision parameters all-gathered (dense over DP, routed experts over expert-DP).
    auto gather = [&](const char* dense_name, const char* expert_name, int64_t dense,
                      int64_t experts, const PipelineTask* t) {
      if (dp_cp > 1 && dense > 0) {
        dp_async(dense_name, CollectiveKind::kAllGather, GroupKind::kData, dense, x.act_bytes, t);
      }
      if (expert_reduce && experts > 0) {
        dp_async(expert_name, CollectiveKind::kAllGather, GroupKind::kExpertData, experts,
                 x.act_bytes, t);
      }
    };
    auto zero3_collectives = [&](int layer, bool all_gather, const PipelineTask& t) {
      if (all_gather) {
        gather("dp.allgather.layer", "edp.allgather.layer", dense_layer_params(layer),
               expert_layer_params(layer), &t);
        return;
      }
      if (dp_cp > 1 && dense_layer_params(layer) > 0) {
        dp_async("dp.reducescatter.layer", CollectiveKind::kReduceScatter, GroupKind::kData,
                 dense_layer_params(layer), grad_bytes, &t);
      }
      if (expert_reduce && expert_layer_params(layer) > 0) {
        dp_async("edp.reducescatter.layer", CollectiveKind::kReduceScatter, GroupKind::kExpertData,
                 expert_layer_params(layer), grad_bytes, &t);
      }
    };
    // One ZeRO-3 pass over `layers` (in execution order), layer l running block_of(l): with
    // `all_gather`, the first layer's gather, then before each layer a wait for everything
    // issued (its gather, prefetched during the previous layer), the previous layer's
    // reduce-scatter (with `reduce`) and the next layer's gather; without, each layer's
    // reduce-scatter after it (a W pass, which needs no weights). One DP stream carries both,
    // in issue order, standing in for their sharing of the links.
    auto zero3_pass = [&](const PipelineTask& t, const std::vector<int>& layers, auto block_of,
                          bool all_gather, bool reduce) {
      const size_t n = layers.size();
      if (all_gather && n > 0) zero3_collectives(layers[0], true, t);
      for (size_t j = 0; j < n; ++j) {
        if (all_gather) {
          wait_dp();
          if (reduce && j > 0) zero3_collectives(layers[j - 1], false, t);
          if (j + 1 < n) zero3_collectives(layers[j + 1], true, t);
        }
        prog.steps.push_back(run(block_of(layers[j]), 1, t));
        if (reduce && !all_gather) zero3_collectives(layers[j], false, t);
      }
      if (all_gather && reduce && n > 0) zero3_collectives(layers[n - 1], false, t);
    };
    // Where task `t`'s chunk sits in the model: global chunk k (chunk·p + stage; DualPipe: the
    // model stage), its layers, and the stages its input comes from and its output goes to
    // (DualPipe's chunk 1 runs from rank p−1 down to rank 0).
    struct Place {
      int k = 0, layers = 0;
      bool first = false, last = false;
      int from = 0, to = 0;
    };
    auto place = [&](const PipelineTask& t) {
      Place q;
      if (dual) {
        q.k = dualpipe_model_stage(stage, t.chunk, p);
        q.layers = layers_of_stage[q.k];
        q.from = t.chunk == 0 ? stage - 1 : stage + 1;
        q.to = t.chunk == 0 ? stage + 1 : stage - 1;
      } else {
        q.k = t.chunk * p + stage;
        q.layers = stage_chunk_layers;
        q.from = (stage - 1 + p) % p;
        q.to = (stage + 1) % p;
      }
      q.first = q.k == 0;
      q.last = q.k == chunks - 1;
      return q;
    };
    auto p2p = [&](StepKind kind, int peer, int64_t tag, const PipelineTask& t, bool backward) {
      Step st;
      st.kind = kind;
      st.peer = peer;
      st.tag = tag;
      st.bytes = p2p_bytes;
      st.async_p2p = par.overlap_p2p;
      st.microbatch = t.microbatch;
      st.chunk = t.chunk;
      st.backward = backward;
      prog.steps.push_back(st);
    };
    const auto sends_grad = [](Pass pass) {
      return pass == Pass::kBackward || pass == Pass::kInputGrad;
    };
    // Activations arrive before a forward; gradients before a whole backward or a B.
    auto receive = [&](const PipelineTask& t) {
      const Place q = place(t);
      if (t.pass == Pass::kForward && !q.first) {
        p2p(StepKind::kRecv, q.from, p2p_tag(t.microbatch, q.k, chunks, false), t, false);
      }
      if (sends_grad(t.pass) && !q.last) {
        p2p(StepKind::kRecv, q.to, p2p_tag(t.microbatch, q.k, chunks, true), t, true);
      }
    };
    auto send = [&](const PipelineTask& t) {
      const Place q = place(t);
      if (t.pass == Pass::kForward && !q.last) {
        p2p(StepKind::kSend, q.to, p2p_tag(t.microbatch, q.k + 1, chunks, false), t, false);
      }
      if (sends_grad(t.pass) && !q.first) {
        p2p(StepKind::kSend, q.from, p2p_tag(t.microbatch, q.k - 1, chunks, true), t, true);
      }
    };
    // The model layers of the chunk at `q`, first to last (or last to first).
    auto chunk_layers = [&](const Place& q, bool backward) {
      std::vector<int> layers;
      for (int j = 0; j < q.layers; ++j) layers.push_back(chunk_first[q.k] + j);
      if (backward) std::reverse(layers.begin(), layers.end());
      return layers;
    };
    // The chunk's layers backward (last to first) with blocks `block_of(bwd block)`.
    auto layers_backward = [&](const PipelineTask& t, const Place& q, bool input) {
      if (zero3 && input) {
        zero3_pass(t, chunk_layers(q, true), [&](int l) { return input_block.at(lb.bwd_of[l]); },
                   true, false);
        return;
      }
      for (const LayerRun& r : layer_runs(lb, chunk_first[q.k], q.layers, true)) {
        prog.steps.push_back(run(input ? input_block.at(r.bwd) : r.bwd, r.count, t));
      }
    };
    // The pass that completes the chunk's weight gradients: layer by layer, issuing a DP
    // bucket whenever the finished layers' gradients fill one, when this is the chunk's last
    // such pass and buckets overlap; else the layers in one go.
    auto layers_gradients = [&](const PipelineTask& t, const Place& q, int i) {
      if (zero3) {
        // A whole backward gathers and reduces; a W pass (split schedules) only reduces.
        zero3_pass(t, chunk_layers(q, true), [&](int l) { return lb.bwd_of[l]; }, !split, true);
        return;
      }
      if (!(par.overlap_grad_reduce && dp_cp > 1 && i == last_grads[t.chunk])) {
        layers_backward(t, q, false);
        return;
      }
      // Issue a DP bucket whenever the finished layers' gradients fill one (Megatron DDP);
      // the backward visits the chunk's layers last to first.
      int64_t pending = 0;
      int run_block = -1, run_layers = 0;
      for (int j = 0; j < q.layers; ++j) {
        const int layer = chunk_first[q.k] + q.layers - 1 - j;
        if (run_layers > 0 && lb.bwd_of[layer] != run_block) {
          prog.steps.push_back(run(run_block, run_layers, t));
          run_layers = 0;
        }
        run_block = lb.bwd_of[layer];
        ++run_layers;
        pending += dense_layer_params(layer);
        if (pending >= bucket_params || j == q.layers - 1) {
          prog.steps.push_back(run(run_block, run_layers, t));
          run_layers = 0;
          Step c;
          c.kind = StepKind::kCommAsync;
          c.op = collective_op(par.distributed_optimizer ? "dp.reducescatter" : "dp.allreduce",
                               par.distributed_optimizer ? CollectiveKind::kReduceScatter
                                                         : CollectiveKind::kAllReduce,
                               GroupKind::kData, Bytes(pending * grad_bytes));
          c.microbatch = t.microbatch;
          c.chunk = t.chunk;
          prog.steps.push_back(c);
          pending = 0;
        }
      }
    };
    // Overlapped parameter all-gather (overlap_param_gather, Megatron's distributed optimizer):
    // in the steady state the gather of the parameters the last optimizer step updated runs
    // during this iteration's first forward of each chunk. Buckets of grad_bucket_size follow
    // the layers in the order of their first use (chunks in the order of their first forward);
    // the first bucket also holds the rest (embedding, output layer, MTP) and is issued when
    // the iteration starts; the first forward of each chunk waits for each of its buckets before
    // the bucket's first layer and then issues the next bucket (MCore's forward pre-hook), so
    // only the first bucket, and any bucket slower than the layers before it, is exposed. Under
    // ZeRO-3 the layers are gathered per micro-batch and the one bucket holds the rest.
    const bool param_gather = par.overlap_param_gather && sharded && (dp_cp > 1 || expert_reduce);
    struct ParamBucket {
      int chunk = 0, first_layer = 0, layers = 0;
      int64_t dense = 0, experts = 0;
    };
    std::vector<ParamBucket> buckets;
    std::vector<bool> gathered(std::max(v, 2), false);
    size_t next_bucket = 0;
    auto issue_bucket = [&] {
      if (next_bucket >= buckets.size()) return;
      const ParamBucket& b = buckets[next_bucket++];
      gather("dp.allgather.params", "edp.allgather.params", b.dense, b.experts, nullptr);
    };
    if (param_gather) {
      std::vector<int> chunk_order;
      for (const PipelineTask& t : order) {
        if (t.pass == Pass::kForward &&
            std::find(chunk_order.begin(), chunk_order.end(), t.chunk) == chunk_order.end()) {
          chunk_order.push_back(t.chunk);
        }
      }
      for (int c : chunk_order) {
        const Place q = place(make_task(Pass::kForward, 0, c));
        ParamBucket b{c, chunk_first[q.k], 0, 0, 0};
        for (int j = 0; j < q.layers && !zero3; ++j) {
          const int layer = chunk_first[q.k] + j;
          ++b.layers;
          b.dense += dense_layer_params(layer);
          b.experts += expert_layer_params(layer);
          if (b.dense + b.experts >= bucket_params || j == q.layers - 1) {
            buckets.push_back(b);
            b = ParamBucket{c, layer + 1, 0, 0, 0};
          }
        }
        if (zero3 && buckets.empty()) buckets.push_back(b);
      }
      if (buckets.empty() && !chunk_order.empty()) {
        buckets.push_back(ParamBucket{chunk_order.front(), 0, 0, 0, 0});
      }
      if (!buckets.empty()) {
        buckets.front().dense += rest_dense;
        buckets.front().experts += rest_expert;
      }
      issue_bucket();  // when the iteration starts
    }
    auto compute = [&](const PipelineTask& t, int i) {
      const Place q = place(t);
      switch (t.pass) {
        case Pass::kForward:
          if (param_gather && !gathered[t.chunk]) {
            // The chunk's first forward: each bucket's wait, the next bucket, its layers.
            gathered[t.chunk] = true;
            bool embedded = !q.first;
            for (const ParamBucket& b : buckets) {
              if (b.chunk != t.chunk) continue;
              wait_dp();
              issue_bucket();
              if (!embedded) prog.steps.push_back(run(ids.embedding_fwd, 1, t));
              embedded = true;
              for (const LayerRun& r : layer_runs(lb, b.first_layer, b.layers, false)) {
                prog.steps.push_back(run(r.fwd, r.count, t));
              }
            }
            if (!embedded) prog.steps.push_back(run(ids.embedding_fwd, 1, t));
            if (zero3) {
              zero3_pass(t, chunk_layers(q, false), [&](int l) { return lb.fwd_of[l]; }, true,
                         false);
            }
            if (q.last) prog.steps.push_back(run(ids.head_fwd, 1, t));
            return;
          }
          if (q.first) prog.steps.push_back(run(ids.embedding_fwd, 1, t));
          if (zero3) {
            zero3_pass(t, chunk_layers(q, false), [&](int l) { return lb.fwd_of[l]; }, true,
                       false);
          } else {
            for (const LayerRun& r : layer_runs(lb, chunk_first[q.k], q.layers, false)) {
              prog.steps.push_back(run(r.fwd, r.count, t));
            }
          }
          if (q.last) prog.steps.push_back(run(ids.head_fwd, 1, t));
          return;
        case Pass::kBackward:
          if (!split) {
            if (q.last) prog.steps.push_back(run(ids.head_bwd, 1, t));
            layers_gradients(t, q, i);
            if (q.first) prog.steps.push_back(run(ids.embedding_bwd, 1, t));
            return;
          }
          // A whole backward of a split schedule (DualPipe): B, then W.
          if (q.last) prog.steps.push_back(run(input_block.at(ids.head_bwd), 1, t));
          layers_backward(t, q, true);
          if (q.first) prog.steps.push_back(run(ids.embedding_bwd, 1, t));
          if (q.last) prog.steps.push_back(run(ids.head_bwd, 1, t));
          layers_gradients(t, q, i);
          return;
        case Pass::kInputGrad:
          if (q.last) prog.steps.push_back(run(input_block.at(ids.head_bwd), 1, t));
          layers_backward(t, q, true);
          if (q.first) prog.steps.push_back(run(ids.embedding_bwd, 1, t));
          return;
        case Pass::kWeightGrad:
          if (q.last) prog.steps.push_back(run(ids.head_bwd, 1, t));
          layers_gradients(t, q, i);
          return;
      }
    };
    for (size_t i = 0; i < order.size(); ++i) {
      const PipelineTask& t = order[i];
      if (!t.paired) {
        receive(t);
        compute(t, static_cast<int>(i));
        send(t);
        continue;
      }
      // DualPipe's overlapped pair (a forward and a backward of the other direction): both
      // inputs arrive before either runs, both outputs leave after both ran. One compute stream
      // runs them back to back, their expert all-to-alls behind them (see overlapped_block).
      PREFLIGHT_CHECK(i + 1 < order.size());
      const PipelineTask& u = order[i + 1];
      receive(t);
      receive(u);
      const size_t pair_start = prog.steps.size();
      compute(t, static_cast<int>(i));
      compute(u, static_cast<int>(i + 1));
      if (pair_sync >= 0) {
        for (size_t k = pair_start; k < prog.steps.size(); ++k) {
          Step& st = prog.steps[k];
          if (st.kind == StepKind::kRun) st.block = overlapped_block(st.block);
        }
        prog.steps.push_back(run(pair_sync, 1, u));
      }
      send(t);
      send(u);
      ++i;
    }
    // --- end of iteration: gradient reduction and optimizer ---
    if (zero3) wait_dp();  // the last layers' reduce-scatters
    const char* dp_name = sharded ? "dp.reducescatter" : "dp.allreduce";
    const CollectiveKind dp_kind =
        sharded ? CollectiveKind::kReduceScatter : CollectiveKind::kAllReduce;
    // What the end of the iteration reduces and gathers: all the stage's gradients, or under
    // ZeRO-3 the rest (the layers' were reduce-scattered after each backward).
    const int64_t end_dense = zero3 ? rest_dense : expert_reduce ? dense_params : params;
    const int64_t end_expert = zero3 ? rest_expert : expert_params;
    if (dp_cp > 1 || expert_reduce) {
      if (par.overlap_grad_reduce) {
        // The layer buckets above hold only the layers' non-expert gradients; the embedding,
        // final norm and output layer (or tied copy) go in one last bucket once the backward is
        // done, and the routed experts' gradients in their own, over the expert-DP group.
        if (rest_dense > 0 && dp_cp > 1) {
          Step c;
          c.kind = StepKind::kCommAsync;
          c.op = collective_op(dp_name, dp_kind, GroupKind::kData, Bytes(rest_dense * grad_bytes));
          prog.steps.push_back(c);
        }
        if (expert_reduce && end_expert > 0) {
          Step c;
          c.kind = StepKind::kCommAsync;
          c.op = collective_op(sharded ? "edp.reducescatter" : "edp.allreduce", dp_kind,
                               GroupKind::kExpertData, Bytes(end_expert * grad_bytes));
          prog.steps.push_back(c);
        }
        Step wait;
        wait.kind = StepKind::kWaitComm;
        prog.steps.push_back(wait);
      } else {
        if (dp_cp > 1 && end_dense > 0) {
          Step c;
          c.kind = StepKind::kCollective;
          c.op = collective_op(dp_name, dp_kind, GroupKind::kData, Bytes(end_dense * grad_bytes));
          prog.steps.push_back(c);
        }
        if (expert_reduce && end_expert > 0) {
          Step c;
          c.kind = StepKind::kCollective;
          c.op = collective_op(sharded ? "edp.reducescatter" : "edp.allreduce", dp_kind,
                               GroupKind::kExpertData, Bytes(end_expert * grad_bytes));
          prog.steps.push_back(c);
        }
      }
    }
    if (dual) {
      // The two copies of each model stage (chunk 0 of rank i, chunk 1 of rank p−1−i) add up
      // their gradients: an all-reduce between the pair of ranks of the rank's gradients (its
      // DP shard with the distributed optimizer). Ranks 0 and p−1 hold both the embedding and
      // the output layer, so this also ties tied embeddings. Timed on the embedding group's
      // placement (two ranks a pipeline apart).
      Step c;
      c.kind = StepKind::kCollective;
      c.tag = -2 - std::min(stage, p - 1 - stage);  // one rendezvous per pair
      const int64_t shard = sharded ? (params + par.dp - 1) / par.dp : params;
      c.op = collective_op("dualpipe.grad.allreduce", CollectiveKind::kAllReduce,
                           GroupKind::kEmbedding, Bytes(shard * grad_bytes));
      prog.steps.push_back(c);
    }
    if (tied_sync && !dual && (stage == 0 || stage == p - 1)) {
      Step c;
      c.kind = StepKind::kCollective;
      c.tag = -1;  // one cross-stage rendezvous per iteration
      c.op = collective_op("embedding.allreduce", CollectiveKind::kAllReduce, GroupKind::kEmbedding,
                           Bytes(vocab_shard * grad_bytes));
      prog.steps.push_back(c);
    }
    {
      // The distributed optimizer owns 1/(dp·cp) of the dense and 1/edp of the expert states.
      const int64_t owned =
          sharded ? (dense_params + dp_cp - 1) / dp_cp + (expert_params + edp - 1) / edp : params;
      std::vector<Op> ops;
      // Multi-tensor Adam: unscale + norm, update of fp32 master weights and moments, copy to
      // half-precision weights; `optimizer_bytes_per_param` bytes of HBM traffic per parameter.
      ops.push_back(memory_op("optimizer.step",
                              s.training.optimizer_bytes_per_param * static_cast<double>(owned),
                              Category::kOptimizer));
      Step r;
      r.kind = StepKind::kRun;
      const std::string name = "optimizer.stage" + std::to_string(stage);
      w.blocks.push_back(Block{name, std::move(ops)});
      r.block = static_cast<int>(w.blocks.size()) - 1;
      prog.steps.push_back(r);
    }
    // The updated parameters' all-gather (or, with overlap_param_gather, the next iteration's
    // buckets, issued at the start of this one: see above).
    if (sharded && !param_gather && dp_cp > 1 && end_dense > 0) {
      Step c;
      c.kind = StepKind::kCollective;
      c.op = collective_op("dp.allgather.params", CollectiveKind::kAllGather, GroupKind::kData,
                           Bytes(end_dense * x.act_bytes));
      prog.steps.push_back(c);
    }
    if (sharded && !param_gather && expert_reduce && end_expert > 0) {
      Step c;
      c.kind = StepKind::kCollective;
      c.op = collective_op("edp.allgather.params", CollectiveKind::kAllGather,
                           GroupKind::kExpertData, Bytes(end_expert * x.act_bytes));
      prog.steps.push_back(c);
    }
    Step sync;
    sync.kind = StepKind::kHostSync;
    prog.steps.push_back(sync);
    w.stages.push_back(std::move(prog));
  }
  // Low-precision linear layers: quantize kernels and narrower GEMM operands (precision_ops.h).
  for (Block& b : w.blocks) apply_precision(s, &b.ops);
  // TP communication pipelined with its GEMMs (overlap_ops.h); after precision, which finds each
  // cast's sequence-parallel all-gather as the blocking op right before its GEMM.
  for (Block& b : w.blocks) apply_tp_comm_overlap(s, &b.ops);
  return w;
}

}  // namespace preflight
