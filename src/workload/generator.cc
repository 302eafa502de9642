#include "workload/generator.h"

#include <algorithm>

#include "model/transformer.h"
#include "workload/layer_ops.h"
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

  const int grad_bytes = gradient_bytes_per_element(s);
  const Bytes p2p_bytes(x.act_bytes * x.tokens * x.h / (par.sequence_parallel ? par.tp : 1));
  const bool tied_sync = s.model.tied_embeddings && p > 1;
  const int64_t vocab_shard = padded_vocab(s.model, par.tp) / par.tp * s.model.hidden;

  for (int stage = 0; stage < p; ++stage) {
    Program prog;
    prog.stage = stage;
    const int64_t params = stage_parameters_per_gpu(s, stage);
    const int stage_chunk_layers = layers_of_stage[stage] / v;
    const std::vector<PipelineTask> order = pipeline_order(par.schedule, stage, p, m, v);
    // Last backward of each chunk, where overlapped DP buckets are issued.
    std::vector<int> last_backward(v, -1);
    for (size_t i = 0; i < order.size(); ++i) {
      if (order[i].backward) last_backward[order[i].chunk] = static_cast<int>(i);
    }
    const int64_t layer_params = layer_parameters(s.model) / par.tp;
    const int64_t bucket_params = std::max<int64_t>(1, par.grad_bucket_size.count() / grad_bytes);
    for (size_t i = 0; i < order.size(); ++i) {
      const PipelineTask& t = order[i];
      const int k = t.chunk * p + stage;  // global model chunk
      const bool first = k == 0;
      const bool last = k == chunks - 1;
      const int prev_stage = (stage - 1 + p) % p;
      const int next_stage = (stage + 1) % p;
      if (!t.backward) {
        if (!first) {
          Step r;
          r.kind = StepKind::kRecv;
          r.peer = prev_stage;
          r.tag = p2p_tag(t.microbatch, k, chunks, false);
          r.bytes = p2p_bytes;
          r.microbatch = t.microbatch;
          r.chunk = t.chunk;
          prog.steps.push_back(r);
        }
        if (first) prog.steps.push_back(run(ids.embedding_fwd, 1, t));
        prog.steps.push_back(run(ids.layer_fwd, stage_chunk_layers, t));
        if (last) prog.steps.push_back(run(ids.head_fwd, 1, t));
        if (!last) {
          Step snd;
          snd.kind = StepKind::kSend;
          snd.peer = next_stage;
          snd.tag = p2p_tag(t.microbatch, k + 1, chunks, false);
          snd.bytes = p2p_bytes;
          snd.microbatch = t.microbatch;
          snd.chunk = t.chunk;
          prog.steps.push_back(snd);
        }
        continue;
      }
      if (!last) {
        Step r;
        r.kind = StepKind::kRecv;
        r.peer = next_stage;
        r.tag = p2p_tag(t.microbatch, k, chunks, true);
        r.bytes = p2p_bytes;
        r.microbatch = t.microbatch;
        r.chunk = t.chunk;
        r.backward = true;
        prog.steps.push_back(r);
      }
      if (last) prog.steps.push_back(run(ids.head_bwd, 1, t));
      const bool overlap_here =
          par.overlap_grad_reduce && par.dp > 1 && static_cast<int>(i) == last_backward[t.chunk];
      if (!overlap_here) {
        prog.steps.push_back(run(ids.layer_bwd, stage_chunk_layers, t));
      } else {
        // Issue a DP bucket whenever the finished layers' gradients fill one (Megatron DDP).
        int64_t pending = 0;
        int run_layers = 0;
        for (int layer = 0; layer < stage_chunk_layers; ++layer) {
          ++run_layers;
          pending += layer_params;
          if (pending >= bucket_params || layer == stage_chunk_layers - 1) {
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
      }
      if (first) prog.steps.push_back(run(ids.embedding_bwd, 1, t));
      if (!first) {
        Step snd;
        snd.kind = StepKind::kSend;
        snd.peer = prev_stage;
        snd.tag = p2p_tag(t.microbatch, k - 1, chunks, true);
        snd.bytes = p2p_bytes;
        snd.microbatch = t.microbatch;
        snd.chunk = t.chunk;
        snd.backward = true;
        prog.steps.push_back(snd);
      }
    }
    // --- end of iteration: gradient reduction and optimizer ---
    if (par.dp > 1) {
      if (par.overlap_grad_reduce) {
        // The layer buckets above hold only layer gradients; the embedding, final norm and
        // output layer (or tied copy) go in one last bucket once the backward is done.
        const int64_t rest = params - layer_parameters(s.model) * layers_of_stage[stage] / par.tp;
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
    if (tied_sync && (stage == 0 || stage == p - 1)) {
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
  return w;
}

}  // namespace preflight
