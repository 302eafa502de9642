#include "workload/generator.h"

#include <algorithm>
#include <map>

#include "base/check.h"
#include "model/transformer.h"
#include "workload/layer_ops.h"
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

// Tag of the message that carries micro-batch `mb` into model chunk `k` (global chunk index).
int64_t p2p_tag(int mb, int k, int chunks, bool backward) {
  return (static_cast<int64_t>(mb) * chunks + k) * 2 + (backward ? 1 : 0);
}

}  // namespace

int gradient_bytes_per_element(const Scenario& s) {
  return s.training.precision == Precision::kFp16 ? 2 : 4;
}

int64_t stage_parameters_per_gpu(const Scenario& s, int stage) {
  const ModelConfig& m = s.model;
  const int tp = s.parallelism.tp;
  const int pp = s.parallelism.pp;
  const int64_t layers = stage_layers(s)[stage];
  int64_t p = layer_parameters(m) * layers / tp;
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
  ids.layer_fwd = add_block(w, "layer.fwd", layer_forward_ops(x));
  {
    std::vector<Op> ops;
    if (par.recompute == Recompute::kFull) {
      ops = layer_forward_ops(x);
      for (Op& op : ops) op.name += ".recompute";
    } else if (par.recompute == Recompute::kSelective && !x.flash) {
      ops = attention_recompute_ops(x);
    }
    std::vector<Op> bwd = layer_backward_ops(x);
    ops.insert(ops.end(), bwd.begin(), bwd.end());
    ids.layer_bwd = add_block(w, "layer.bwd", std::move(ops));
  }
  ids.embedding_fwd = add_block(w, "embedding.fwd", embedding_forward_ops(x));
  ids.embedding_bwd = add_block(w, "embedding.bwd", embedding_backward_ops(x));
  ids.head_fwd = add_block(w, "head.fwd", head_forward_ops(x));
  ids.head_bwd = add_block(w, "head.bwd", head_backward_ops(x));
  // Zero-bubble and DualPipe schedules run each backward block as B then, later, W.
  const bool split = splits_backward(par.schedule);
  const bool dual = par.schedule == Schedule::kDualPipe;
  std::map<int, int> input_block;  // backward (W) block -> its B block
  if (split) {
    input_block[ids.layer_bwd] = split_off_input_grad(w, ids.layer_bwd);
    input_block[ids.head_bwd] = split_off_input_grad(w, ids.head_bwd);
  }

  const int grad_bytes = gradient_bytes_per_element(s);
  const Bytes p2p_bytes(x.act_bytes * x.tokens * x.h / (par.sequence_parallel ? par.tp : 1));
  const bool tied_sync = s.model.tied_embeddings && p > 1;
  const int64_t vocab_shard = padded_vocab(s.model, par.tp) / par.tp * s.model.hidden;

  for (int stage = 0; stage < p; ++stage) {
    Program prog;
    prog.stage = stage;
    // DualPipe: rank `stage` holds model stages `stage` (chunk 0) and p−1−stage (chunk 1).
    int64_t params = stage_parameters_per_gpu(s, stage);
    int rank_layers = layers_of_stage[stage];
    if (dual) {
      params += stage_parameters_per_gpu(s, p - 1 - stage);
      rank_layers += layers_of_stage[p - 1 - stage];
    }
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
    const int64_t layer_params = layer_parameters(s.model) / par.tp;
    const int64_t bucket_params = std::max<int64_t>(1, par.grad_bucket_size.count() / grad_bytes);
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
    // The chunk's layers backward: their B blocks (`input`), else their whole backward or W.
    auto layers_backward = [&](const PipelineTask& t, const Place& q, bool input) {
      prog.steps.push_back(
          run(input ? input_block.at(ids.layer_bwd) : ids.layer_bwd, q.layers, t));
    };
    // The pass that completes the chunk's weight gradients: layer by layer, issuing a DP
    // bucket whenever the finished layers' gradients fill one, when this is the chunk's last
    // such pass and buckets overlap; else the layers in one go.
    auto layers_gradients = [&](const PipelineTask& t, const Place& q, int i) {
      if (!(par.overlap_grad_reduce && par.dp > 1 && i == last_grads[t.chunk])) {
        layers_backward(t, q, false);
        return;
      }
      // Issue a DP bucket whenever the finished layers' gradients fill one (Megatron DDP).
      int64_t pending = 0;
      int run_layers = 0;
      for (int layer = 0; layer < q.layers; ++layer) {
        ++run_layers;
        pending += layer_params;
        if (pending >= bucket_params || layer == q.layers - 1) {
          prog.steps.push_back(run(ids.layer_bwd, run_layers, t));
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
    auto compute = [&](const PipelineTask& t, int i) {
      const Place q = place(t);
      switch (t.pass) {
        case Pass::kForward:
          if (q.first) prog.steps.push_back(run(ids.embedding_fwd, 1, t));
          prog.steps.push_back(run(ids.layer_fwd, q.layers, t));
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
      // runs them back to back; what overlapping them hides (each one's communication behind
      // the other's compute) is not modelled.
      PREFLIGHT_CHECK(i + 1 < order.size());
      const PipelineTask& u = order[i + 1];
      receive(t);
      receive(u);
      compute(t, static_cast<int>(i));
      compute(u, static_cast<int>(i + 1));
      send(t);
      send(u);
      ++i;
    }
    // --- end of iteration: gradient reduction and optimizer ---
    if (par.dp > 1) {
      if (par.overlap_grad_reduce) {
        // The layer buckets above hold only layer gradients; the embedding, final norm and
        // output layer (or tied copy) go in one last bucket once the backward is done.
        const int64_t rest = params - layer_parameters(s.model) * rank_layers / par.tp;
        if (rest > 0) {
          Step c;
          c.kind = StepKind::kCommAsync;
          c.op = collective_op(par.distributed_optimizer ? "dp.reducescatter" : "dp.allreduce",
                               par.distributed_optimizer ? CollectiveKind::kReduceScatter
                                                         : CollectiveKind::kAllReduce,
                               GroupKind::kData, Bytes(rest * grad_bytes));
          prog.steps.push_back(c);
        }
        Step wait;
        wait.kind = StepKind::kWaitComm;
        prog.steps.push_back(wait);
      } else {
        Step c;
        c.kind = StepKind::kCollective;
        c.op = collective_op(
            par.distributed_optimizer ? "dp.reducescatter" : "dp.allreduce",
            par.distributed_optimizer ? CollectiveKind::kReduceScatter : CollectiveKind::kAllReduce,
            GroupKind::kData, Bytes(params * grad_bytes));
        prog.steps.push_back(c);
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
      const int64_t shard = par.distributed_optimizer ? (params + par.dp - 1) / par.dp : params;
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
      const int64_t owned = par.distributed_optimizer ? (params + par.dp - 1) / par.dp : params;
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
    if (par.distributed_optimizer && par.dp > 1) {
      Step c;
      c.kind = StepKind::kCollective;
      c.op = collective_op("dp.allgather.params", CollectiveKind::kAllGather, GroupKind::kData,
                           Bytes(params * x.act_bytes));
      prog.steps.push_back(c);
    }
    Step sync;
    sync.kind = StepKind::kHostSync;
    prog.steps.push_back(sync);
    w.stages.push_back(std::move(prog));
  }
  // Low-precision linear layers: quantize kernels and narrower GEMM operands (precision_ops.h).
  for (Block& b : w.blocks) apply_precision(s, &b.ops);
  return w;
}

}  // namespace preflight
