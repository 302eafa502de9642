// A pipeline stage's program (stage_program.h), built by StageBuilder: the passes with their
// point-to-point messages and block runs, the overlapped DP buckets of the last backward, and
// the end of the iteration (gradient reduction, optimizer step, parameter all-gather). The
// data-parallel collectives themselves come from sharded_dp.h, the pairs from dualpipe_pairs.h.
#include "workload/stage_program.h"

#include <algorithm>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/check.h"
#include "model/transformer.h"
#include "workload/generator.h"
#include "workload/generator_internal.h"
#include "workload/schedule.h"
#include "workload/sharded_dp.h"

namespace preflight {
namespace {

// Tag of the message that carries micro-batch `mb` into model chunk `k` (global chunk index).
int64_t p2p_tag(int mb, int k, int chunks, bool backward) {
  return (static_cast<int64_t>(mb) * chunks + k) * 2 + (backward ? 1 : 0);
}

// Gradients leave a whole backward or a B, as they arrive before it.
bool sends_grad(Pass pass) { return pass == Pass::kBackward || pass == Pass::kInputGrad; }

// Where a task's chunk sits in the model: global chunk k (chunk·p + stage; DualPipe: the
// model stage), its layers, and the stages its input comes from and its output goes to
// (DualPipe's chunk 1 runs from rank p−1 down to rank 0).
struct Place {
  int k = 0, layers = 0;
  bool first = false, last = false;
  int from = 0, to = 0;
};

// What a rank trains (its gradients and optimizer states): one model stage, or with DualPipe two
// (`stage` and p−1−stage).
struct RankParams {
  int64_t params = 0;         // on one GPU
  int64_t expert_params = 0;  // the routed experts among them
  std::vector<int> layer_ids;
};

RankParams rank_params(const Scenario& s, int stage) {
  RankParams r{stage_trainable_parameters_per_gpu(s, stage),
               stage_trainable_expert_parameters_per_gpu(s, stage), stage_layer_ids(s, stage)};
  if (s.parallelism.schedule == Schedule::kDualPipe) {
    const int mirror = s.parallelism.pp - 1 - stage;
    r.params += stage_trainable_parameters_per_gpu(s, mirror);
    r.expert_params += stage_trainable_expert_parameters_per_gpu(s, mirror);
    for (int l : stage_layer_ids(s, mirror)) r.layer_ids.push_back(l);
  }
  return r;
}

// Builds one stage's program: the per-stage facts are worked out once in the constructor, and
// build(), called once, emits the steps in order.
class StageBuilder {
 public:
  StageBuilder(const Scenario& s, const LayerShape& x, const ModelBlocks& mb, int stage,
               const std::vector<Bytes>& offload_bytes, DualPipePairs& pairs, Workload& w);
  Program build();

 private:
  Place place(const PipelineTask& t) const;
  void run(int block, int repeat, const PipelineTask& t) {
    prog_.steps.push_back(block_step(block, repeat, t));
  }
  void p2p(StepKind kind, int peer, int64_t tag, const PipelineTask& t, bool backward);
  void receive(const PipelineTask& t);
  void send(const PipelineTask& t);
  void compute(const PipelineTask& t, int i);
  void forward(const PipelineTask& t, const Place& q);
  void input_grad(const PipelineTask& t, const Place& q);
  void weight_grad(const PipelineTask& t, const Place& q, int i);
  // The model layers of the chunk at `q`, first to last (or last to first).
  std::vector<int> chunk_layers(const Place& q, bool backward) const;
  void layers_backward(const PipelineTask& t, const Place& q, bool input);
  void layers_gradients(const PipelineTask& t, const Place& q, int i);
  // Layers first .. first+count−1 forward, each between its offloading hooks when offloading.
  void forward_layers(int first, int count, const PipelineTask& t);
  // Activation offloading (parallelism.offload_layers = N of L layers, pp 1), as Transformer
  // Engine's OffloadSynchronizer schedules it (transformer_engine/pytorch/cpu_offload.py): the
  // copy of layer i < N to the host starts after its forward, and the forward of layer
  // L − N + i waits for it (then frees its tensors); its copy back starts before the backward of
  // layer L − 1 − N + i, and layer i's backward waits for it. One copy stream carries both.
  void offload_hook(int layer, bool after, bool backward, const PipelineTask& t);
  void host_copy(StepKind kind, int layer, bool reload, const PipelineTask& t);
  std::function<void(int, bool)> offload_hooks(bool backward, const PipelineTask& t) {
    if (offload_ == 0) return nullptr;
    return [this, backward, &t](int layer, bool after) { offload_hook(layer, after, backward, t); };
  }
  // Interleaves a pair's two passes, steps [first, second) and [second, end), block by block:
  // the first pass's block i, then the second's block i, and so on (see the definition).
  void interleave_pair(size_t first, size_t second);
  void end_of_iteration();

  const Scenario& s_;
  const ParallelismConfig& par_;
  const LayerShape& x_;
  const ModelBlocks& mb_;
  DualPipePairs& pairs_;
  Workload& w_;
  const int stage_, p_, v_, chunks_;
  const bool split_, dual_;
  const int grad_bytes_;
  const std::vector<Bytes>& offload_bytes_;  // per offloaded layer (generate_workload)
  const int offload_;                        // parallelism.offload_layers
  const int dp_cp_;                          // the gradient-reduction group of dense parameters
  const int edp_;                            // ... and of routed experts
  const std::vector<int> layers_of_stage_;
  const std::vector<int> chunk_layers_;  // model order (k = c·p + stage)
  // First model layer of each global chunk k (= chunk·p + stage), and past the last chunk.
  std::vector<int> chunk_first_;
  const RankParams rank_;
  const bool expert_reduce_;
  const std::vector<PipelineTask> order_;
  // Last pass of each chunk that produces weight gradients (a whole backward or a W), where
  // overlapped DP buckets are issued.
  std::vector<int> last_grads_;
  const int64_t bucket_params_;
  // Whether the gradient reduction goes out in buckets during the last backward of each chunk
  // (overlap_grad_reduce with a dense or expert group to reduce over).
  bool overlap_buckets() const {
    return par_.overlap_grad_reduce && (dp_cp_ > 1 || expert_reduce_);
  }
  bool zero3_ = false, sharded_ = false, param_gather_ = false;
  // The stage's parameters outside its layers (embedding, output layer, MTP modules).
  int64_t rest_dense_ = 0, rest_expert_ = 0;
  Program prog_;
  DpCollectives dp_;
  std::optional<ParamGather> gather_;
};

StageBuilder::StageBuilder(const Scenario& s, const LayerShape& x, const ModelBlocks& mb, int stage,
                           const std::vector<Bytes>& offload_bytes, DualPipePairs& pairs,
                           Workload& w)
    : s_(s),
      par_(s.parallelism),
      x_(x),
      mb_(mb),
      pairs_(pairs),
      w_(w),
      stage_(stage),
      p_(par_.pp),
      v_(par_.vpp),
      chunks_(p_ * v_),
      split_(splits_backward(par_.schedule)),
      dual_(par_.schedule == Schedule::kDualPipe),
      grad_bytes_(gradient_bytes_per_element(s)),
      offload_bytes_(offload_bytes),
      offload_(par_.offload_layers),
      dp_cp_(par_.dp * par_.cp),
      edp_(s.model.moe.enabled() ? s.expert_dp() : 1),
      layers_of_stage_(stage_layers(s)),
      chunk_layers_(preflight::chunk_layers(s)),
      chunk_first_(chunks_ + 1, 0),
      rank_(rank_params(s, stage)),
      expert_reduce_(rank_.expert_params > 0 && edp_ > 1),
      order_(pipeline_order(par_.schedule, stage, p_, s.num_microbatches(), v_,
                            par_.overlap_moe_comm)),
      last_grads_(std::max(v_, 2), -1),
      bucket_params_(grad_bucket_parameters(s)),
      dp_(s, expert_reduce_, x.act_bytes, prog_) {
  for (int k = 0; k < chunks_; ++k) chunk_first_[k + 1] = chunk_first_[k] + chunk_layers_[k];
  for (size_t i = 0; i < order_.size(); ++i) {
    const Pass pass = order_[i].pass;
    if (pass == Pass::kBackward || pass == Pass::kWeightGrad) {
      last_grads_[order_[i].chunk] = static_cast<int>(i);
    }
  }
  // Sharded data parallelism: ZeRO-3 (sharded_dp.h) gathers and reduce-scatters the layers
  // every micro-batch; the embedding, output layer and MTP modules (the "rest") are reduced and
  // gathered once per iteration, as with the distributed optimizer, which ZeRO-3 implies.
  zero3_ = par_.zero_stage == 3 && (dp_cp_ > 1 || expert_reduce_);
  sharded_ = par_.distributed_optimizer || zero3_;
  param_gather_ = par_.overlap_param_gather && sharded_ && (dp_cp_ > 1 || expert_reduce_);
  rest_dense_ = rank_.params - rank_.expert_params;
  rest_expert_ = rank_.expert_params;
  for (int l : rank_.layer_ids) {
    rest_dense_ -= layer_dense_params_per_gpu(s, l);
    rest_expert_ -= layer_expert_params_per_gpu(s, l);
  }
}

Place StageBuilder::place(const PipelineTask& t) const {
  Place q;
  if (dual_) {
    q.k = dualpipe_model_stage(stage_, t.chunk, p_);
    q.layers = layers_of_stage_[q.k];
    q.from = t.chunk == 0 ? stage_ - 1 : stage_ + 1;
    q.to = t.chunk == 0 ? stage_ + 1 : stage_ - 1;
  } else {
    q.k = t.chunk * p_ + stage_;
    q.layers = chunk_layers_[q.k];
    q.from = (stage_ - 1 + p_) % p_;
    q.to = (stage_ + 1) % p_;
  }
  q.first = q.k == 0;
  q.last = q.k == chunks_ - 1;
  return q;
}

void StageBuilder::p2p(StepKind kind, int peer, int64_t tag, const PipelineTask& t, bool backward) {
  Step st;
  st.kind = kind;
  st.peer = peer;
  st.tag = tag;
  st.bytes = Bytes(x_.act_bytes * x_.tokens * x_.h / (par_.sequence_parallel ? par_.tp : 1));
  st.async_p2p = par_.overlap_p2p;
  st.microbatch = t.microbatch;
  st.chunk = t.chunk;
  st.backward = backward;
  prog_.steps.push_back(st);
}

// Activations arrive before a forward; gradients before a whole backward or a B.
void StageBuilder::receive(const PipelineTask& t) {
  const Place q = place(t);
  if (t.pass == Pass::kForward && !q.first) {
    p2p(StepKind::kRecv, q.from, p2p_tag(t.microbatch, q.k, chunks_, false), t, false);
  }
  if (sends_grad(t.pass) && !q.last) {
    p2p(StepKind::kRecv, q.to, p2p_tag(t.microbatch, q.k, chunks_, true), t, true);
  }
}

void StageBuilder::send(const PipelineTask& t) {
  const Place q = place(t);
  if (t.pass == Pass::kForward && !q.last) {
    p2p(StepKind::kSend, q.to, p2p_tag(t.microbatch, q.k + 1, chunks_, false), t, false);
  }
  if (sends_grad(t.pass) && !q.first) {
    p2p(StepKind::kSend, q.from, p2p_tag(t.microbatch, q.k - 1, chunks_, true), t, true);
  }
}

void StageBuilder::compute(const PipelineTask& t, int i) {
  const Place q = place(t);
  switch (t.pass) {
    case Pass::kForward:
      forward(t, q);
      return;
    case Pass::kBackward:
      if (split_) {
        // A whole backward of a split schedule (DualPipe): B, then W.
        input_grad(t, q);
        weight_grad(t, q, i);
      } else {
        weight_grad(t, q, i);
        if (q.first) run(mb_.embedding_bwd, 1, t);
      }
      return;
    case Pass::kInputGrad:
      input_grad(t, q);
      return;
    case Pass::kWeightGrad:
      weight_grad(t, q, i);
      return;
  }
}

void StageBuilder::forward(const PipelineTask& t, const Place& q) {
  bool embedded = !q.first;
  auto embed = [&] {
    if (!embedded) run(mb_.embedding_fwd, 1, t);
    embedded = true;
  };
  // The chunk's first forward with overlapped parameter gathers: for each of its buckets, the
  // wait for it, the next bucket's gather, then the bucket's layers (none under ZeRO-3).
  bool layers_ran = false;
  if (gather_ && gather_->first_forward(t.chunk)) {
    for (const ParamGather::Bucket& b : gather_->buckets()) {
      if (b.chunk != t.chunk) continue;
      dp_.wait();
      gather_->issue_next();
      embed();
      forward_layers(b.first_layer, b.layers, t);
    }
    layers_ran = !zero3_;
  }
  embed();
  if (zero3_) {
    dp_.zero3_pass(
        t, chunk_layers(q, false), [&](int l) { return mb_.layer_fwd[l]; },
        /*all_gather=*/true, /*reduce=*/false, offload_hooks(false, t));
  } else if (!layers_ran) {
    forward_layers(chunk_first_[q.k], q.layers, t);
  }
  if (q.last) run(mb_.head_fwd, 1, t);
}

// B: the input gradients of the head (last stage), the layers and the embedding (first stage).
void StageBuilder::input_grad(const PipelineTask& t, const Place& q) {
  if (q.last) run(mb_.input_block.at(mb_.head_bwd), 1, t);
  layers_backward(t, q, true);
  if (q.first) run(mb_.embedding_bwd, 1, t);
}

// W, or a whole backward but the embedding's: the head's and the layers' weight gradients.
void StageBuilder::weight_grad(const PipelineTask& t, const Place& q, int i) {
  if (q.last) run(mb_.head_bwd, 1, t);
  layers_gradients(t, q, i);
}

std::vector<int> StageBuilder::chunk_layers(const Place& q, bool backward) const {
  std::vector<int> layers;
  for (int j = 0; j < q.layers; ++j) layers.push_back(chunk_first_[q.k] + j);
  if (backward) std::reverse(layers.begin(), layers.end());
  return layers;
}

// The chunk's layers backward (last to first): their B blocks when `input`, else their
// backward blocks.
void StageBuilder::layers_backward(const PipelineTask& t, const Place& q, bool input) {
  if (zero3_ && input) {
    dp_.zero3_pass(
        t, chunk_layers(q, true), [&](int l) { return mb_.input_block.at(mb_.layer_bwd[l]); },
        /*all_gather=*/true, /*reduce=*/false);
    return;
  }
  if (offload_ > 0) {
    for (int l : chunk_layers(q, true)) {
      offload_hook(l, false, true, t);
      run(input ? mb_.input_block.at(mb_.layer_bwd[l]) : mb_.layer_bwd[l], 1, t);
    }
    return;
  }
  for (const LayerRun& r : layer_runs(mb_, chunk_first_[q.k], q.layers, true)) {
    run(input ? mb_.input_block.at(r.bwd) : r.bwd, r.count, t);
  }
}

void StageBuilder::forward_layers(int first, int count, const PipelineTask& t) {
  if (offload_ == 0) {
    for (const LayerRun& r : layer_runs(mb_, first, count, false)) run(r.fwd, r.count, t);
    return;
  }
  for (int l = first; l < first + count; ++l) {
    offload_hook(l, false, false, t);
    run(mb_.layer_fwd[l], 1, t);
    offload_hook(l, true, false, t);
  }
}

void StageBuilder::offload_hook(int layer, bool after, bool backward, const PipelineTask& t) {
  const int layers = s_.model.layers, n = offload_;
  if (!backward) {
    if (after && layer < n) host_copy(StepKind::kHostCopy, layer, false, t);
    const int done = layer - (layers - n);  // the copy this forward waits for
    if (!after && done >= 0 && done < n) host_copy(StepKind::kWaitHostCopy, done, false, t);
    return;
  }
  if (after) return;
  const int reload = layer - (layers - 1 - n);  // the copy back that starts here
  if (reload >= 0 && reload < n) host_copy(StepKind::kHostCopy, reload, true, t);
  if (layer < n) host_copy(StepKind::kWaitHostCopy, layer, true, t);
}

void StageBuilder::host_copy(StepKind kind, int layer, bool reload, const PipelineTask& t) {
  Step c;
  c.kind = kind;
  c.tag = (static_cast<int64_t>(t.microbatch) * offload_ + layer) * 2 + (reload ? 1 : 0);
  if (kind == StepKind::kHostCopy) c.bytes = offload_bytes_.at(layer);
  c.microbatch = t.microbatch;
  c.chunk = t.chunk;
  c.backward = reload;
  prog_.steps.push_back(c);
}

// The pass that completes the chunk's weight gradients: layer by layer, issuing a DP bucket
// whenever the finished layers' gradients fill one, when this is the chunk's last such pass and
// buckets overlap; else the layers in one go.
void StageBuilder::layers_gradients(const PipelineTask& t, const Place& q, int i) {
  if (zero3_) {
    // A whole backward gathers and reduces; a W pass (split schedules) only reduces.
    dp_.zero3_pass(
        t, chunk_layers(q, true), [&](int l) { return mb_.layer_bwd[l]; },
        /*all_gather=*/!split_, /*reduce=*/true, offload_hooks(true, t));
    return;
  }
  if (!(overlap_buckets() && i == last_grads_[t.chunk])) {
    layers_backward(t, q, false);
    return;
  }
  // Issue a DP bucket whenever the finished layers' gradients fill one (Megatron DDP); the
  // backward visits the chunk's layers last to first. Megatron-Core keeps the routed experts'
  // gradients in a buffer of their own, bucketed the same way and reduced over the expert-DP
  // group (DistributedDataParallel: expert_parallel_buffers), so both kinds of bucket fill
  // and go out as the backward passes their layers.
  const char* dp_name = par_.distributed_optimizer ? "dp.reducescatter" : "dp.allreduce";
  const char* edp_name = par_.distributed_optimizer ? "edp.reducescatter" : "edp.allreduce";
  const CollectiveKind kind =
      par_.distributed_optimizer ? CollectiveKind::kReduceScatter : CollectiveKind::kAllReduce;
  auto bucket = [&](const char* name, GroupKind group, int64_t params) {
    Step c;
    c.kind = StepKind::kCommAsync;
    c.op = collective_op(name, kind, group, Bytes(params * grad_bytes_));
    c.microbatch = t.microbatch;
    c.chunk = t.chunk;
    prog_.steps.push_back(c);
  };
  // The rank's model chunks after its first are not bucketed (grad_bucket_parameters()): their
  // gradients go out in one reduction once the chunk's last backward is done.
  const bool bucketed = t.chunk == 0;
  int64_t pending = 0, pending_experts = 0;
  int run_block = -1, run_layers = 0;
  for (int j = 0; j < q.layers; ++j) {
    const int layer = chunk_first_[q.k] + q.layers - 1 - j;
    if (run_layers > 0 && (mb_.layer_bwd[layer] != run_block || offload_ > 0)) {
      run(run_block, run_layers, t);
      run_layers = 0;
    }
    if (offload_ > 0) offload_hook(layer, false, true, t);
    run_block = mb_.layer_bwd[layer];
    ++run_layers;
    if (dp_cp_ > 1) pending += layer_dense_params_per_gpu(s_, layer);
    if (expert_reduce_) pending_experts += layer_expert_params_per_gpu(s_, layer);
    const bool last = j == q.layers - 1;
    const bool dense_full = pending > 0 && ((bucketed && pending >= bucket_params_) || last);
    const bool experts_full =
        pending_experts > 0 && ((bucketed && pending_experts >= bucket_params_) || last);
    if (dense_full || experts_full) {
      run(run_block, run_layers, t);
      run_layers = 0;
    }
    if (dense_full) {
      bucket(dp_name, GroupKind::kData, pending);
      pending = 0;
    }
    if (experts_full) {
      bucket(edp_name, GroupKind::kExpertData, pending_experts);
      pending_experts = 0;
    }
  }
  if (run_layers > 0) run(run_block, run_layers, t);
}

void StageBuilder::end_of_iteration() {
  // --- gradient reduction ---
  if (zero3_) dp_.wait();  // the last layers' reduce-scatters
  const char* dp_name = sharded_ ? "dp.reducescatter" : "dp.allreduce";
  const char* edp_name = sharded_ ? "edp.reducescatter" : "edp.allreduce";
  const CollectiveKind dp_kind =
      sharded_ ? CollectiveKind::kReduceScatter : CollectiveKind::kAllReduce;
  // Gradients reduce over the data-parallel group, which with context parallelism spans the
  // dp·cp ranks (Megatron-Core); routed experts over their expert-DP group instead. What the
  // end of the iteration reduces and gathers: all the stage's gradients, or under ZeRO-3 the
  // rest (the layers' were reduce-scattered after each backward).
  const int64_t dense_params = rank_.params - rank_.expert_params;
  const int64_t end_dense = zero3_ ? rest_dense_ : expert_reduce_ ? dense_params : rank_.params;
  const int64_t end_expert = zero3_ ? rest_expert_ : rank_.expert_params;
  if (dp_cp_ > 1 || expert_reduce_) {
    // With overlap_grad_reduce the layer buckets above hold the layers' gradients; the
    // embedding, final norm and output layer (or tied copy), and any experts outside the
    // layers (MTP modules), go in one last bucket of each kind once the backward is done.
    // Without, all of them are reduced here, blocking.
    const bool overlap = overlap_buckets();
    dp_.collectives(overlap ? StepKind::kCommAsync : StepKind::kCollective, dp_kind, dp_name,
                    edp_name, overlap ? rest_dense_ : end_dense,
                    overlap ? rest_expert_ : end_expert, grad_bytes_, nullptr);
    if (overlap) dp_.wait();
  }
  if (dual_) {
    // The two copies of each model stage (chunk 0 of rank i, chunk 1 of rank p−1−i) add up
    // their gradients: an all-reduce between the pair of ranks of the rank's gradients (its
    // DP shard with the distributed optimizer). Ranks 0 and p−1 hold both the embedding and
    // the output layer, so this also ties tied embeddings. Timed on the embedding group's
    // placement (two ranks a pipeline apart).
    Step c;
    c.kind = StepKind::kCollective;
    c.tag = -2 - std::min(stage_, p_ - 1 - stage_);  // one rendezvous per pair
    const int64_t shard = sharded_ ? (rank_.params + par_.dp - 1) / par_.dp : rank_.params;
    c.op = collective_op("dualpipe.grad.allreduce", CollectiveKind::kAllReduce,
                         GroupKind::kEmbedding, Bytes(shard * grad_bytes_));
    prog_.steps.push_back(c);
  }
  const bool tied_sync = s_.model.tied_embeddings && p_ > 1;
  if (tied_sync && !dual_ && (stage_ == 0 || stage_ == p_ - 1)) {
    const int64_t vocab_shard = padded_vocab(s_.model, par_.tp) / par_.tp * s_.model.hidden;
    Step c;
    c.kind = StepKind::kCollective;
    c.tag = -1;  // one cross-stage rendezvous per iteration
    c.op = collective_op("embedding.allreduce", CollectiveKind::kAllReduce, GroupKind::kEmbedding,
                         Bytes(vocab_shard * grad_bytes_));
    prog_.steps.push_back(c);
  }
  // --- optimizer ---
  // The distributed optimizer owns 1/(dp·cp) of the dense and 1/edp of the expert states.
  const int64_t owned =
      sharded_ ? (dense_params + dp_cp_ - 1) / dp_cp_ + (rank_.expert_params + edp_ - 1) / edp_
               : rank_.params;
  // Multi-tensor Adam: unscale + norm, update of fp32 master weights and moments, copy to
  // half-precision weights; `optimizer_bytes_per_param` bytes of HBM traffic per parameter.
  const std::string name = "optimizer.stage" + std::to_string(stage_);
  Step r;
  r.kind = StepKind::kRun;
  r.block = add_block(w_, name.c_str(),
                      {memory_op("optimizer.step",
                                 s_.training.optimizer_bytes_per_param * static_cast<double>(owned),
                                 Category::kOptimizer)});
  prog_.steps.push_back(r);
  // The updated parameters' all-gather (or, with overlap_param_gather, the next iteration's
  // buckets, issued at the start of this one: see ParamGather).
  if (sharded_ && !param_gather_) {
    dp_.collectives(StepKind::kCollective, CollectiveKind::kAllGather, "dp.allgather.params",
                    "edp.allgather.params", end_dense, end_expert, x_.act_bytes, nullptr);
  }
  Step sync;
  sync.kind = StepKind::kHostSync;
  prog_.steps.push_back(sync);
}

// An overlapped pair's host order. Megatron-Core's combined 1F1B schedule (moe_a2a_overlap,
// TransformerModelChunkSchedulePlan.run in models/common/model_chunk_schedule_plan.py) runs the
// two micro-batches' layers in lockstep: the forward's pre-process, the backward's
// post-process, then for each i the forward of layer i with the backward of layer n−1−i
// (TransformerLayerSchedulePlan.run: its attention, MLP and the two all-to-alls of each pass,
// alternating), then the forward's post-process and the backward's pre-process. DeepSeek's
// DualPipe overlaps its pairs chunk by chunk in the same way (DeepSeek-V3 §3.2.1, Figure 4).
// The order matters on the host: a dispatcher that copies its token counts to the host
// synchronises in every forward MoE layer, and with the passes in lockstep each sync also waits
// for the other micro-batch's layer queued before it, so the host never runs more than a layer
// pair ahead of the GPU, where a plain backward lets it run a whole pass ahead. Here the unit is
// a block run of one repeat (a layer, the embedding, the head); a step that is not a block run
// (a gradient bucket's reduction) stays after the block before it.
void StageBuilder::interleave_pair(size_t first, size_t second) {
  auto units = [&](size_t from, size_t to) {
    std::vector<std::vector<Step>> out;
    for (size_t k = from; k < to; ++k) {
      const Step& st = prog_.steps[k];
      if (st.kind != StepKind::kRun) {
        if (out.empty()) out.emplace_back();
        out.back().push_back(st);
        continue;
      }
      for (int r = 0; r < st.repeat; ++r) {
        Step one = st;
        one.repeat = 1;
        out.push_back({one});
      }
    }
    return out;
  };
  const std::vector<std::vector<Step>> a = units(first, second);
  const std::vector<std::vector<Step>> b = units(second, prog_.steps.size());
  prog_.steps.resize(first);
  for (size_t k = 0; k < std::max(a.size(), b.size()); ++k) {
    if (k < a.size()) prog_.steps.insert(prog_.steps.end(), a[k].begin(), a[k].end());
    if (k < b.size()) prog_.steps.insert(prog_.steps.end(), b[k].begin(), b[k].end());
  }
}

Program StageBuilder::build() {
  prog_.stage = stage_;
  if (param_gather_) {
    std::vector<ParamGather::Chunk> chunks;  // in the order of their first forward
    for (const PipelineTask& t : order_) {
      if (t.pass != Pass::kForward ||
          std::any_of(chunks.begin(), chunks.end(),
                      [&](const ParamGather::Chunk& c) { return c.chunk == t.chunk; })) {
        continue;
      }
      const Place q = place(make_task(Pass::kForward, 0, t.chunk));
      chunks.push_back(ParamGather::Chunk{t.chunk, chunk_first_[q.k], q.layers});
    }
    gather_.emplace(s_, chunks, zero3_, bucket_params_, rest_dense_, rest_expert_, dp_);
  }
  for (size_t i = 0; i < order_.size(); ++i) {
    const PipelineTask& t = order_[i];
    if (!t.paired) {
      receive(t);
      compute(t, static_cast<int>(i));
      send(t);
      continue;
    }
    // An overlapped pair (DualPipe's forward and backward of the other direction, or the
    // combined 1F1B schedule's forward and the backward of an earlier micro-batch): both
    // inputs arrive before either runs, both outputs leave after both ran. One compute stream
    // runs them back to back, their expert all-to-alls behind them (dualpipe_pairs.h).
    PREFLIGHT_CHECK(i + 1 < order_.size());
    const PipelineTask& u = order_[i + 1];
    receive(t);
    receive(u);
    const size_t pair_start = prog_.steps.size();
    compute(t, static_cast<int>(i));
    const size_t second_start = prog_.steps.size();
    compute(u, static_cast<int>(i + 1));
    interleave_pair(pair_start, second_start);
    pairs_.overlap(prog_, pair_start, u);
    send(t);
    send(u);
    ++i;
  }
  end_of_iteration();
  return std::move(prog_);
}

}  // namespace

Program stage_program(const Scenario& s, const LayerShape& x, const ModelBlocks& blocks, int stage,
                      const std::vector<Bytes>& offload_bytes, DualPipePairs& pairs, Workload& w) {
  return StageBuilder(s, x, blocks, stage, offload_bytes, pairs, w).build();
}

}  // namespace preflight
