#include "memory/memory_model.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "memory/layer_activations.h"
#include "model/transformer.h"
#include "workload/generator.h"
#include "workload/precision_ops.h"
#include "workload/schedule.h"

namespace preflight {
namespace {

using memory_internal::backward_working_set;
using memory_internal::half_layer_bytes;
using memory_internal::layer_bytes;
using memory_internal::LayerBytes;
using memory_internal::mamba_layer_bytes;
using memory_internal::saved_per_layer;

// Intermediates are doubles (exact below 2^53 bytes) and saturate at 2^58 bytes on the way back,
// so sums of the fields below cannot overflow int64 even for absurd but valid scenarios.
constexpr double kMaxBytes = 288230376151711744.0;  // 2^58

Bytes to_bytes(double b) {
  if (!(b > 0)) return Bytes(0);
  return Bytes(static_cast<int64_t>(std::llround(std::min(b, kMaxBytes))));
}

double as_double(Bytes b) { return static_cast<double>(b.count()); }

struct InFlight {
  int microbatches = 0;    // most distinct micro-batches holding activations
  int chunks = 0;          // most chunk forwards not yet run backward
  int head_chunks = 0;     // most forwards outstanding through the output layer (last stage)
  double bytes = 0;        // most bytes held
  double layer_bytes = 0;  // the transformer-layer part of `bytes` at that peak (split schedules)
  double logits = 0;       // split schedules: most loss-head bytes held (see in_flight_split)
};

// What one micro-batch keeps on one of a stage's chunks (split schedules), all of it and the
// transformer-layer part: from its forward to its B, and from its B to its W (the inputs of
// the GEMMs, LayerBytes::kept, recomputed by B under full recompute; the output layer's input
// on the loss head's chunk). Whether the chunk runs the loss head.
struct ChunkActivations {
  double bytes = 0, layer_bytes = 0;
  double w_bytes = 0, w_layer_bytes = 0;
  bool head = false;
};

// Split schedules (ZB-H1, ZB-H2, DualPipe) walked task by task: a chunk's forward keeps its
// activations until its B, and the inputs of its GEMMs from then until its W, which reads them
// (Qi et al. 2024 count a micro-batch in flight until its W as well). ZB-H1 holds up to p
// micro-batches on every stage, ZB-H2 2p − 1, DualPipe p + 1 (DeepSeek-V3 Table 2). A chunk
// with the loss head keeps its fp32 logits (`logits_fp32`) from forward to B, then the
// half-precision logits gradient (`logits_half`) the output layer's W reads until that W.
InFlight in_flight_split(const Scenario& sc, int stage, const std::vector<ChunkActivations>& c,
                         double logits_fp32, double logits_half) {
  const ParallelismConfig& par = sc.parallelism;
  InFlight r;
  int chunks = 0, heads = 0, head_grads = 0;
  double bytes = 0, layers = 0;
  for (const PipelineTask& task :
       pipeline_order(par.schedule, stage, par.pp, sc.num_microbatches(), 1)) {
    const ChunkActivations& a = c[task.chunk];
    const bool held_to_b = task.pass == Pass::kBackward || task.pass == Pass::kInputGrad;
    if (a.head) {
      if (task.pass == Pass::kForward) ++heads;
      if (held_to_b) --heads;
      if (task.pass == Pass::kInputGrad) ++head_grads;
      if (task.pass == Pass::kWeightGrad) --head_grads;
      r.head_chunks = std::max(r.head_chunks, heads);
      r.logits = std::max(r.logits, heads * logits_fp32 + head_grads * logits_half);
    }
    switch (task.pass) {
      case Pass::kForward:
        ++chunks;
        bytes += a.bytes;
        layers += a.layer_bytes;
        break;
      case Pass::kBackward:
        --chunks;
        bytes -= a.bytes;
        layers -= a.layer_bytes;
        break;
      case Pass::kInputGrad:
        bytes += a.w_bytes - a.bytes;
        layers += a.w_layer_bytes - a.layer_bytes;
        break;
      case Pass::kWeightGrad:
        --chunks;
        bytes -= a.w_bytes;
        layers -= a.w_layer_bytes;
        break;
    }
    // Each micro-batch passes through one chunk of a stage here (v = 1; DualPipe's two chunks
    // carry different micro-batches), so chunks in flight are micro-batches in flight.
    r.chunks = std::max(r.chunks, chunks);
    r.microbatches = r.chunks;
    if (bytes > r.bytes) {
      r.bytes = bytes;
      r.layer_bytes = layers;
    }
  }
  return r;
}

// Activations held on `stage`: each forward of a model chunk adds `chunk_bytes` (+ `first_extra`
// for chunk 0 of stage 0, + `last_extra` for chunk v−1 of the last stage); its backward frees
// them. GPipe holds all m; 1F1B min(p − stage, m); interleaved 1F1B is walked task by task.
InFlight in_flight(const Scenario& sc, int stage, double chunk_bytes, double first_extra,
                   double last_extra) {
  const ParallelismConfig& par = sc.parallelism;
  const int p = par.pp;
  const int v = par.vpp;
  const int m = sc.num_microbatches();
  const bool first = stage == 0;
  const bool last = stage == p - 1;
  InFlight r;
  // The combined 1F1B schedule (overlap_moe_comm) runs one more warm-up forward in a pipeline.
  // Without one (Megatron-Core combined_1f1b_schedule_for_no_pipelining) there is no warm-up:
  // micro-batch i+1's forward of layer j runs beside micro-batch i's backward of layer L−1−j,
  // which then releases its state (TransformerModelChunkSchedulePlan.run), so the stage holds
  // one micro-batch's activations and one layer more.
  const int extra = par.overlap_moe_comm && p > 1 ? 1 : 0;
  if (par.schedule != Schedule::kInterleaved) {
    const int n = par.schedule == Schedule::kGpipe ? m : std::min(p - stage + extra, m);
    r.microbatches = n;
    r.chunks = n;
    r.head_chunks = last ? n : 0;
    r.bytes = n * (chunk_bytes + (first ? first_extra : 0) + (last ? last_extra : 0));
    r.layer_bytes = n * chunk_bytes;
    const size_t layers = stage_layer_ids(sc, stage).size();
    if (par.overlap_moe_comm && p == 1 && m > 1 && layers > 0) {
      r.bytes += chunk_bytes / static_cast<double>(layers);
      r.layer_bytes += chunk_bytes / static_cast<double>(layers);
    }
    return r;
  }
  // The peak is reached in the warm-up ((p−stage−1)·2 + (v−1)·p forwards) or the steady phase,
  // which repeats with period p·v; p·(v+2) micro-batches cover the warm-up and a full period.
  const int walked = static_cast<int>(std::min<int64_t>(m, int64_t{p} * (v + 2 + extra)));
  std::vector<int> open_chunks(walked, 0);
  int microbatches = 0, chunks = 0, firsts = 0, lasts = 0;
  for (const PipelineTask& task :
       pipeline_order(Schedule::kInterleaved, stage, p, walked, v, par.overlap_moe_comm)) {
    const int delta = task.backward ? -1 : 1;
    int& open = open_chunks[task.microbatch];
    if (!task.backward && open == 0) ++microbatches;
    open += delta;
    if (task.backward && open == 0) --microbatches;
    chunks += delta;
    if (first && task.chunk == 0) firsts += delta;
    if (last && task.chunk == v - 1) lasts += delta;
    r.microbatches = std::max(r.microbatches, microbatches);
    r.chunks = std::max(r.chunks, chunks);
    r.head_chunks = std::max(r.head_chunks, lasts);
    r.bytes = std::max(r.bytes, chunks * chunk_bytes + firsts * first_extra + lasts * last_extra);
  }
  return r;
}

double shard(double params, bool sharded, int dp) {
  return sharded ? std::ceil(params / dp) : params;
}

struct ModelStates {
  double weights = 0, gradients = 0, optimizer = 0;
  double step_copy = 0;  // fp16 only: fp32 copy of the gradients the optimizer step makes
};

// Megatron mixed precision with Adam: half-precision weights (2 B), main gradients (4 B fp32
// for bf16/fp8, 2 B for fp16), fp32 master weights + m + v (12 B); fp16 copies its gradients
// to fp32 for the step (4 B). ZeRO k shards the first k of {optimizer, gradients, weights}:
// `params` less `expert_params` over the DP×CP group (CP ranks hold the same weights; Megatron's
// distributed optimizer shards over data_parallel_group_with_context_parallel), the routed
// experts' `expert_params` over the expert-DP group of tp·cp·dp/(ep·etp) ranks that hold the
// same experts (Megatron-Core MoE: the expert distributed optimizer).
ModelStates model_states(const Scenario& sc, int64_t params, int64_t expert_params = 0) {
  const int zero = effective_zero_stage(sc);
  const int dp = sc.parallelism.dp * sc.parallelism.cp;
  const int edp = sc.expert_dp();
  const double n = static_cast<double>(params - expert_params);
  const double e = static_cast<double>(expert_params);
  auto sharded = [&](int stage) {
    return shard(n, zero >= stage, dp) + shard(e, zero >= stage, edp);
  };
  ModelStates st;
  st.weights = 2.0 * sharded(3);
  st.gradients = gradient_bytes_per_element(sc) * sharded(2);
  st.optimizer = 12.0 * sharded(1);
  if (sc.training.precision == Precision::kFp16) st.step_copy = 4.0 * sharded(1);
  return st;
}

// Activations of every layer kind, saved for backward, and what each kind's backward adds. A
// transformer's layers are dense or MoE; a hybrid's are its pattern's M, *, - and E.
enum LayerKind { kDenseLayer, kMoeLayer, kMambaLayer, kAttentionLayer, kMlpLayer, kMoeOnlyLayer };
constexpr int kLayerKinds = 6;

int kind_of(const ModelConfig& m, int layer) {
  if (!m.is_hybrid()) return m.is_moe_layer(layer) ? kMoeLayer : kDenseLayer;
  if (m.is_mamba_layer(layer)) return kMambaLayer;
  if (m.has_attention(layer)) return kAttentionLayer;
  return m.is_moe_layer(layer) ? kMoeOnlyLayer : kMlpLayer;
}

struct LayerKinds {
  LayerBytes bytes[kLayerKinds];
  double saved[kLayerKinds] = {};
  bool hybrid = false;
};

LayerKinds layer_kinds(const Scenario& sc) {
  const ModelConfig& m = sc.model;
  LayerKinds k;
  k.hybrid = m.is_hybrid();
  if (k.hybrid) {
    if (m.mamba.enabled()) k.bytes[kMambaLayer] = mamba_layer_bytes(sc);
    k.bytes[kAttentionLayer] = half_layer_bytes(sc, /*attention=*/true, false);
    k.bytes[kMlpLayer] = half_layer_bytes(sc, false, false);
    if (m.moe.enabled()) k.bytes[kMoeOnlyLayer] = half_layer_bytes(sc, false, /*moe_layer=*/true);
    for (int i = kMambaLayer; i < kLayerKinds; ++i) k.saved[i] = saved_per_layer(sc, k.bytes[i]);
    return k;
  }
  k.bytes[kDenseLayer] = layer_bytes(sc, false);
  k.bytes[kMoeLayer] = m.moe.enabled() ? layer_bytes(sc, true) : k.bytes[kDenseLayer];
  k.saved[kDenseLayer] = saved_per_layer(sc, k.bytes[kDenseLayer]);
  k.saved[kMoeLayer] = saved_per_layer(sc, k.bytes[kMoeLayer]);
  return k;
}

// Layers of each kind among `layers`.
std::vector<int> kind_counts(const Scenario& sc, const std::vector<int>& layers) {
  std::vector<int> n(kLayerKinds, 0);
  for (int i : layers) ++n[kind_of(sc.model, i)];
  return n;
}

// Σ per-kind bytes × layers of that kind, the kinds in order.
double sum_by_kind(const double (&per_kind)[kLayerKinds], const std::vector<int>& counts) {
  double sum = 0;
  for (int i = 0; i < kLayerKinds; ++i) {
    if (counts[i] > 0) sum += per_kind[i] * counts[i];
  }
  return sum;
}

// Whether `counts` holds dense transformer layers only (the even split's exact L/v path).
bool dense_only(const LayerKinds& k, const std::vector<int>& counts) {
  int total = 0;
  for (int c : counts) total += c;
  return !k.hybrid && counts[kDenseLayer] == total;
}

// One model chunk's layer activations on `stage` for one micro-batch. Interleaved chunks of one
// stage that differ in kind (DeepSeek's leading dense layers, a hybrid's pattern) count as their
// mean.
double chunk_layer_bytes(const Scenario& sc, const LayerKinds& k, int stage) {
  const std::vector<int> layers = stage_layer_ids(sc, stage);
  const int v = sc.parallelism.vpp;
  const std::vector<int> counts = kind_counts(sc, layers);
  if (dense_only(k, counts)) return k.saved[kDenseLayer] * (counts[kDenseLayer] / v);
  return sum_by_kind(k.saved, counts) / v;
}

// The largest backward working set among the kinds in `counts`.
double largest_backward(const Scenario& sc, const LayerKinds& k, const std::vector<int>& counts) {
  double most = 0;
  bool any = false;
  for (int i = 0; i < kLayerKinds; ++i) {
    if (counts[i] == 0) continue;
    const double ws = backward_working_set(sc, k.bytes[i]);
    most = any ? std::max(most, ws) : ws;
    any = true;
  }
  return most;
}

// The most layer activations one micro-batch holds in HBM with the first N = offload_layers
// layers offloaded (pp 1, so the stage's layers are the model's), walking Transformer Engine's
// schedule (transformer_engine/pytorch/cpu_offload.py, OffloadSynchronizer's default): layer
// i < N is copied to the host after its forward and freed once that copy has finished, which
// the forward of layer L − N + i waits for; its reload starts at the backward of layer
// L − 1 − N + i and the backward of layer i waits for it. With layers of one size T the peak
// is (L − N)·T, as TE's own comment states.
double offloaded_peak(const Scenario& sc, const LayerKinds& k) {
  const int layers = sc.model.layers;
  const int n = sc.parallelism.offload_layers;
  std::vector<double> saved(layers);
  for (int l = 0; l < layers; ++l) saved[l] = k.saved[kind_of(sc.model, l)];
  double held = 0, peak = 0;
  for (int j = 0; j < layers; ++j) {
    const int done = j - (layers - n);  // the offload that finishes before this forward
    if (done >= 0 && done < n) held -= saved[done];
    held += saved[j];
    peak = std::max(peak, held);
  }
  for (int l = layers - 1; l >= 0; --l) {
    const int reload = l - (layers - 1 - n);  // the reload that starts before this backward
    if (reload >= 0 && reload < n) held += saved[reload];
    peak = std::max(peak, held);
    held -= saved[l];
  }
  return peak;
}

}  // namespace

std::vector<Bytes> offloaded_layer_bytes(const Scenario& s) {
  std::vector<Bytes> out;
  if (s.parallelism.offload_layers == 0) return out;
  const LayerKinds k = layer_kinds(s);
  for (int l = 0; l < s.parallelism.offload_layers; ++l) {
    out.push_back(to_bytes(k.saved[kind_of(s.model, l)]));
  }
  return out;
}

Bytes recommended_headroom(Bytes hbm) {
  return Bytes(std::max(Bytes::gib(2).count(), hbm.count() / 40));
}

int effective_zero_stage(const Scenario& s) {
  return std::max(s.parallelism.zero_stage, s.parallelism.distributed_optimizer ? 1 : 0);
}

Bytes layer_activation_bytes(const Scenario& s) {
  const LayerKinds k = layer_kinds(s);
  const ModelConfig& m = s.model;
  std::vector<int> all(m.layers);
  for (int i = 0; i < m.layers; ++i) all[i] = i;
  const std::vector<int> counts = kind_counts(s, all);
  if (dense_only(k, counts)) return to_bytes(k.saved[kDenseLayer]);
  return to_bytes(sum_by_kind(k.saved, counts) / m.layers);
}

Bytes layer_activation_bytes(const Scenario& s, int layer) {
  return to_bytes(layer_kinds(s).saved[kind_of(s.model, layer)]);
}

Bytes model_state_bytes(const Scenario& s, int64_t params) {
  const ModelStates st = model_states(s, params);
  return to_bytes(st.weights + st.gradients + st.optimizer);
}

MemoryReport estimate_memory(const Scenario& sc) {
  const ModelConfig& model = sc.model;
  const ParallelismConfig& par = sc.parallelism;
  const TrainingConfig& tr = sc.training;
  const int p = par.pp;
  const int v = par.vpp;
  // Tokens of one micro-batch on one CP rank.
  const double tokens = static_cast<double>(tr.seq_len) * tr.micro_batch / par.cp;
  const double h = model.hidden;
  const double whole = par.sequence_parallel ? par.tp : 1.0;
  const double vocab_shard = static_cast<double>(padded_vocab(model, par.tp) / par.tp);

  const LayerKinds kinds = layer_kinds(sc);
  const std::vector<int> layers_of_stage = stage_layers(sc);
  // First stage: token ids (int64) and the embedding dropout mask. Last stage: inputs of the
  // final norm and of the output layer, and each multi-token-prediction module (DeepSeek-V3
  // §2.2, on the last stage as in Megatron): its block like the last layer, the two normed
  // inputs of its projection (2·T·2h) and its own final-norm and output-layer inputs.
  const double embedding = 8.0 * tokens + (model.dropout ? tokens * h / whole : 0.0);
  double mtp = 0;
  if (model.mtp_layers > 0) {
    // A hybrid's MTP block is an attention layer and a copy of its last MLP layer ("*E").
    const int mlp_layer = mtp_mlp_layer(model);
    const double block = kinds.hybrid
                             ? kinds.saved[kAttentionLayer] + kinds.saved[kind_of(model, mlp_layer)]
                             : kinds.saved[kind_of(model, model.layers - 1)];
    mtp = model.mtp_layers * (block + 8.0 * tokens * h / whole);
  }
  const double head = 4.0 * tokens * h / whole + mtp;
  // Logits per token: the fp32 copy Megatron's loss keeps for backward (4 B) + the GEMM's half
  // output (2 B); each MTP module's loss keeps its own logits too. Transformer Engine's fused
  // loss (StackConfig::te_cross_entropy) keeps the half-precision logits themselves (2 B) and
  // writes the gradient over them, so nothing more.
  const bool te_loss = sc.training.stack.te_cross_entropy;
  const double heads_with_loss = 1.0 + model.mtp_layers;
  const double logits_fp32 = (te_loss ? 2.0 : 4.0) * tokens * vocab_shard * heads_with_loss;
  const double logits_half = 2.0 * tokens * vocab_shard;   // the gradient a split W waits on
  const double logits_copy = te_loss ? 0.0 : logits_half;  // beside the kept logits at the peak

  double comm = 0;
  if (par.dp > 1) {
    comm += static_cast<double>(grad_bucket_parameters(sc)) * gradient_bytes_per_element(sc);
  }
  if (par.sequence_parallel) comm += 2.0 * tokens * h;  // all-gathered layer input
  if (effective_zero_stage(sc) >= 3 && par.dp > 1) {
    // The layer being run and the one prefetched, gathered in half precision: the largest
    // layer's share of one GPU (non-expert / tp + routed experts / (ep·etp)).
    const int64_t expert_ranks = int64_t{par.ep} * sc.expert_tp();
    int64_t largest = 0;
    for (int i = 0; i < model.layers; ++i) {
      const int64_t experts = expert_parameters(model, i);
      largest = std::max(largest,
                         (layer_parameters(model, i) - experts) / par.tp + experts / expert_ranks);
    }
    comm += 2.0 * 2.0 * static_cast<double>(largest);
  }

  MemoryReport report;
  double least_headroom = 0;
  for (int stage = 0; stage < p; ++stage) {
    const bool first = stage == 0;
    const bool last = stage == p - 1;
    // Offloading (pp 1): what the layers hold in HBM at their peak, not all of it.
    const bool offload = par.offload_layers > 0;
    const double chunk_bytes =
        offload ? offloaded_peak(sc, kinds) : chunk_layer_bytes(sc, kinds, stage);
    // DualPipe: rank `stage` holds model stages `stage` and p−1−stage (chunks 0 and 1), so
    // twice the parameters, and either chunk may hold the embedding or the head.
    const bool dual = par.schedule == Schedule::kDualPipe;
    std::vector<ChunkActivations> chunk_acts;
    for (int c = 0; c < (dual ? 2 : 1); ++c) {
      const int ms = dual ? dualpipe_model_stage(stage, c, p) : stage;
      ChunkActivations a;
      a.layer_bytes = chunk_layer_bytes(sc, kinds, ms);  // v = 1 for the split schedules
      a.bytes = a.layer_bytes + (ms == 0 ? embedding : 0.0) + (ms == p - 1 ? head : 0.0);
      double kept[kLayerKinds];
      for (int i = 0; i < kLayerKinds; ++i) kept[i] = kinds.bytes[i].kept;
      a.w_layer_bytes = sum_by_kind(kept, kind_counts(sc, stage_layer_ids(sc, ms)));
      a.w_bytes = a.w_layer_bytes + (ms == p - 1 ? head : 0.0);
      a.head = ms == p - 1;
      chunk_acts.push_back(a);
    }
    const bool split = splits_backward(par.schedule);
    const InFlight f =
        split ? in_flight_split(sc, stage, chunk_acts, logits_fp32, logits_half)
              : in_flight(sc, stage, chunk_bytes, first ? embedding : 0.0, last ? head : 0.0);
    int64_t params = stage_parameters_per_gpu(sc, stage);
    int64_t expert_params = stage_expert_parameters_per_gpu(sc, stage);
    if (dual) {
      params += stage_parameters_per_gpu(sc, p - 1 - stage);
      expert_params += stage_expert_parameters_per_gpu(sc, p - 1 - stage);
    }
    ModelStates st = model_states(sc, params, expert_params);
    if (sc.training.lora.enabled()) {
      // LoRA: the frozen base weights stay; gradients and optimizer states are the adapters'.
      int64_t trainable = stage_trainable_parameters_per_gpu(sc, stage);
      if (dual) trainable += stage_trainable_parameters_per_gpu(sc, p - 1 - stage);
      const ModelStates adapters = model_states(sc, trainable, 0);
      st.weights += adapters.weights;
      st.gradients = adapters.gradients;
      st.optimizer = adapters.optimizer;
      st.step_copy = adapters.step_copy;
    }

    StageMemory mem;
    mem.stage = stage;
    mem.weights = to_bytes(st.weights);
    mem.gradients = to_bytes(st.gradients);
    mem.optimizer = to_bytes(st.optimizer);
    mem.activations = to_bytes(f.bytes);
    mem.layer_activations = to_bytes(
        split || par.schedule != Schedule::kInterleaved ? f.layer_bytes : f.chunks * chunk_bytes);
    mem.activations_per_microbatch =
        to_bytes(chunk_bytes * v + (first ? embedding : 0.0) + (last ? head : 0.0));
    // DualPipe: a micro-batch passes through one of the two chunks; the larger one.
    if (dual) {
      mem.activations_per_microbatch = to_bytes(std::max(chunk_acts[0].bytes, chunk_acts[1].bytes));
    }
    if (offload) {
      for (Bytes b : offloaded_layer_bytes(sc)) mem.offloaded += b;
      // One micro-batch passes through all the layers, offloaded or not.
      mem.activations_per_microbatch = to_bytes(chunk_layer_bytes(sc, kinds, stage) +
                                                (first ? embedding : 0.0) + (last ? head : 0.0));
    }
    mem.microbatches_in_flight = f.microbatches;
    mem.layer_sets_in_flight = static_cast<double>(f.chunks) / v;
    // Logits of the micro-batch in its loss, plus those held by earlier micro-batches whose
    // backward has not started (GPipe).
    const bool holds_head = std::any_of(chunk_acts.begin(), chunk_acts.end(),
                                        [](const ChunkActivations& a) { return a.head; });
    double logits = holds_head ? logits_fp32 * std::max(f.head_chunks, 1) + logits_copy : 0.0;
    if (split && holds_head) logits = std::max(logits_fp32, f.logits) + logits_copy;
    mem.logits_and_loss = to_bytes(logits);
    mem.comm_buffers = to_bytes(comm);
    const double activations = as_double(mem.activations);
    // The backward of the stage's largest layer kind.
    std::vector<int> rank_layer_ids = stage_layer_ids(sc, stage);
    if (dual) {
      for (int l : stage_layer_ids(sc, p - 1 - stage)) rank_layer_ids.push_back(l);
    }
    const double layer_backward = largest_backward(sc, kinds, kind_counts(sc, rank_layer_ids));
    const double transient = std::max({logits, layer_backward, st.step_copy - activations, 0.0});
    mem.transient = to_bytes(transient);
    mem.framework = to_bytes(as_double(tr.framework_overhead) +
                             tr.allocator_fragmentation * (activations + transient));
    mem.steady = mem.weights + mem.gradients + mem.optimizer + mem.activations + mem.comm_buffers +
                 mem.framework;
    mem.peak = mem.steady + mem.transient;
    mem.capacity = sc.cluster.gpu.hbm_capacity;
    mem.headroom = mem.capacity - mem.peak;
    mem.fits = mem.peak <= mem.capacity;

    const double headroom = as_double(mem.headroom);
    if (stage == 0 || headroom < least_headroom) {
      least_headroom = headroom;
      report.limiting_stage = stage;
    }
    report.stages.push_back(mem);
  }
  report.fits = std::all_of(report.stages.begin(), report.stages.end(),
                            [](const StageMemory& m) { return m.fits; });
  return report;
}

}  // namespace preflight
