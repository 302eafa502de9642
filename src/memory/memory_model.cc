#include "memory/memory_model.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "model/transformer.h"
#include "workload/generator.h"
#include "workload/schedule.h"

namespace preflight {
namespace {

// Intermediates are doubles (exact below 2^53 bytes) and saturate at 2^58 bytes on the way back,
// so sums of the fields below cannot overflow int64 even for absurd but valid scenarios.
constexpr double kMaxBytes = 288230376151711744.0;  // 2^58

Bytes to_bytes(double b) {
  if (!(b > 0)) return Bytes(0);
  return Bytes(static_cast<int64_t>(std::llround(std::min(b, kMaxBytes))));
}

double as_double(Bytes b) { return static_cast<double>(b.count()); }

// One layer's activation bytes per GPU for one micro-batch, split the way recompute uses them
// (docs/memory.md §2). Activations are 2-byte (fp16/bf16) tensors, dropout masks 1 byte.
struct LayerBytes {
  double kept = 0;        // saved for backward without recompute, attention core excluded
  double core = 0;        // attention core: softmax (+ dropout) of the unfused core, or the fp32
                          // log-sum-exp FlashAttention keeps
  double checkpoint = 0;  // the layer input, all that full recompute keeps
  double gradients = 0;   // activation gradients alive while one layer runs backward
};

LayerBytes layer_bytes(const Scenario& sc) {
  const ModelConfig& m = sc.model;
  const ParallelismConfig& par = sc.parallelism;
  const double s = sc.training.seq_len;
  const double b = sc.training.micro_batch;
  const double tokens = s * b;
  const double h = m.hidden;
  const double t = par.tp;
  const double d_h = m.head_dim();
  const double heads = static_cast<double>(m.heads / par.tp);
  const double q = heads * d_h;
  const double kv = static_cast<double>(std::max(m.kv_heads / par.tp, 1)) * d_h;
  const double f = static_cast<double>(m.ffn_hidden / par.tp);
  const bool swiglu = m.activation == Activation::kSwiglu;
  // Tensors TP leaves whole are split along the sequence with SP.
  const double whole = par.sequence_parallel ? t : 1.0;

  LayerBytes l;
  // Whole under TP: inputs of norm 1, QKV, norm 2 and FC1 (2 B each); two dropout masks (1 B).
  const double replicated = tokens * h * (8.0 + (m.dropout ? 2.0 : 0.0)) / whole;
  // Split by TP: Q, K, V (inputs of the core), the projection input, the MLP's saved tensors
  // (GELU: its input and FC2's input; SwiGLU: gate and up, and FC2's input).
  const double sharded =
      2.0 * tokens * q + 4.0 * tokens * kv + 2.0 * tokens * q + (swiglu ? 6.0 : 4.0) * tokens * f;
  l.kept = replicated + sharded;
  if (sc.training.flash_attention) {
    l.core = 4.0 * heads * s * b;  // fp32 log-sum-exp per head and token
  } else {
    // Softmax output (2 B), dropout mask (1 B) and dropout output (2 B) per score.
    l.core = (m.dropout ? 5.0 : 2.0) * heads * s * s * b;
  }
  l.checkpoint = 2.0 * tokens * h / whole;
  // Backward: the gradients of the layer's output and input, plus the largest intermediate
  // gradient pair (scores of the unfused core, FlashAttention's fp32 dQ accumulator and
  // dQ/dK/dV, or the MLP's FC1 output).
  const double core_grad = sc.training.flash_attention
                               ? 4.0 * tokens * q + 2.0 * tokens * (q + 2.0 * kv)
                               : (m.dropout ? 4.0 : 2.0) * heads * s * s * b;
  const double mlp_grad = (swiglu ? 4.0 : 2.0) * tokens * f;
  l.gradients = 4.0 * tokens * h / whole + std::max(core_grad, mlp_grad);
  return l;
}

double saved_per_layer(const Scenario& sc, const LayerBytes& l) {
  switch (sc.parallelism.recompute) {
    case Recompute::kNone:
      return l.kept + l.core;
    case Recompute::kSelective:
      return l.kept;
    case Recompute::kFull:
      return l.checkpoint;
  }
  return l.kept + l.core;
}

// Backward of one layer on top of what is held: what recompute rebuilds, plus gradients.
double backward_working_set(const Scenario& sc, const LayerBytes& l) {
  switch (sc.parallelism.recompute) {
    case Recompute::kNone:
      return l.gradients;
    case Recompute::kSelective:
      return l.core + l.gradients;
    case Recompute::kFull:
      return l.kept + l.core - l.checkpoint + l.gradients;
  }
  return l.gradients;
}

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
  if (par.schedule != Schedule::kInterleaved) {
    const int n = par.schedule == Schedule::kGpipe ? m : std::min(p - stage, m);
    r.microbatches = n;
    r.chunks = n;
    r.head_chunks = last ? n : 0;
    r.bytes = n * (chunk_bytes + (first ? first_extra : 0) + (last ? last_extra : 0));
    return r;
  }
  // The peak is reached in the warm-up ((p−stage−1)·2 + (v−1)·p forwards) or the steady phase,
  // which repeats with period p·v; p·(v+2) micro-batches cover the warm-up and a full period.
  const int walked = static_cast<int>(std::min<int64_t>(m, int64_t{p} * (v + 2)));
  std::vector<int> open_chunks(walked, 0);
  int microbatches = 0, chunks = 0, firsts = 0, lasts = 0;
  for (const PipelineTask& task : pipeline_order(Schedule::kInterleaved, stage, p, walked, v)) {
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
// to fp32 for the step (4 B). ZeRO k shards the first k of {optimizer, gradients, weights}
// over the DP group.
ModelStates model_states(const Scenario& sc, int64_t params) {
  const int zero = effective_zero_stage(sc);
  const int dp = sc.parallelism.dp;
  const double n = static_cast<double>(params);
  ModelStates st;
  st.weights = 2.0 * shard(n, zero >= 3, dp);
  st.gradients = gradient_bytes_per_element(sc) * shard(n, zero >= 2, dp);
  st.optimizer = 12.0 * shard(n, zero >= 1, dp);
  if (sc.training.precision == Precision::kFp16) st.step_copy = 4.0 * shard(n, zero >= 1, dp);
  return st;
}

}  // namespace

int effective_zero_stage(const Scenario& s) {
  return std::max(s.parallelism.zero_stage, s.parallelism.distributed_optimizer ? 1 : 0);
}

Bytes layer_activation_bytes(const Scenario& s) {
  return to_bytes(saved_per_layer(s, layer_bytes(s)));
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
  const double tokens = static_cast<double>(tr.seq_len) * tr.micro_batch;
  const double h = model.hidden;
  const double whole = par.sequence_parallel ? par.tp : 1.0;
  const double vocab_shard = static_cast<double>(padded_vocab(model, par.tp) / par.tp);

  const LayerBytes layer = layer_bytes(sc);
  const double per_layer = saved_per_layer(sc, layer);
  const std::vector<int> layers_of_stage = stage_layers(sc);
  // First stage: token ids (int64) and the embedding dropout mask. Last stage: inputs of the
  // final norm and of the output layer.
  const double embedding = 8.0 * tokens + (model.dropout ? tokens * h / whole : 0.0);
  const double head = 4.0 * tokens * h / whole;
  // Logits per token: fp32 copy the loss keeps for backward (4 B) + the GEMM's half output (2 B).
  const double logits_fp32 = 4.0 * tokens * vocab_shard;
  const double logits_half = 2.0 * tokens * vocab_shard;

  double comm = 0;
  if (par.dp > 1) comm += as_double(par.grad_bucket_size);
  if (par.sequence_parallel) comm += 2.0 * tokens * h;  // all-gathered layer input
  if (effective_zero_stage(sc) >= 3 && par.dp > 1) {
    // The layer being run and the one prefetched, gathered in half precision.
    comm += 2.0 * 2.0 * static_cast<double>(layer_parameters(model) / par.tp);
  }

  MemoryReport report;
  double least_headroom = 0;
  for (int stage = 0; stage < p; ++stage) {
    const bool first = stage == 0;
    const bool last = stage == p - 1;
    const double chunk_bytes = per_layer * (layers_of_stage[stage] / v);
    // DualPipe: rank `stage` holds model stages `stage` and p−1−stage (chunks 0 and 1), so
    // twice the parameters, and either chunk may hold the embedding or the head.
    const bool dual = par.schedule == Schedule::kDualPipe;
    std::vector<ChunkActivations> chunk_acts;
    for (int c = 0; c < (dual ? 2 : 1); ++c) {
      const int ms = dual ? dualpipe_model_stage(stage, c, p) : stage;
      ChunkActivations a;
      a.layer_bytes = per_layer * layers_of_stage[ms];  // v = 1 for the split schedules
      a.bytes = a.layer_bytes + (ms == 0 ? embedding : 0.0) + (ms == p - 1 ? head : 0.0);
      a.w_layer_bytes = layer.kept * layers_of_stage[ms];
      a.w_bytes = a.w_layer_bytes + (ms == p - 1 ? head : 0.0);
      a.head = ms == p - 1;
      chunk_acts.push_back(a);
    }
    const bool split = splits_backward(par.schedule);
    const InFlight f =
        split ? in_flight_split(sc, stage, chunk_acts, logits_fp32, logits_half)
              : in_flight(sc, stage, chunk_bytes, first ? embedding : 0.0, last ? head : 0.0);
    int64_t params = stage_parameters_per_gpu(sc, stage);
    if (dual) params += stage_parameters_per_gpu(sc, p - 1 - stage);
    const ModelStates st = model_states(sc, params);

    StageMemory mem;
    mem.stage = stage;
    mem.weights = to_bytes(st.weights);
    mem.gradients = to_bytes(st.gradients);
    mem.optimizer = to_bytes(st.optimizer);
    mem.activations = to_bytes(f.bytes);
    mem.layer_activations = to_bytes(split ? f.layer_bytes : f.chunks * chunk_bytes);
    mem.activations_per_microbatch =
        to_bytes(chunk_bytes * v + (first ? embedding : 0.0) + (last ? head : 0.0));
    // DualPipe: a micro-batch passes through one of the two chunks; the larger one.
    if (dual) {
      mem.activations_per_microbatch = to_bytes(std::max(chunk_acts[0].bytes, chunk_acts[1].bytes));
    }
    mem.microbatches_in_flight = f.microbatches;
    mem.layer_sets_in_flight = static_cast<double>(f.chunks) / v;
    // Logits of the micro-batch in its loss, plus those held by earlier micro-batches whose
    // backward has not started (GPipe).
    const bool holds_head = std::any_of(chunk_acts.begin(), chunk_acts.end(),
                                        [](const ChunkActivations& a) { return a.head; });
    double logits = holds_head ? logits_fp32 * std::max(f.head_chunks, 1) + logits_half : 0.0;
    if (split && holds_head) logits = std::max(logits_fp32, f.logits) + logits_half;
    mem.logits_and_loss = to_bytes(logits);
    mem.comm_buffers = to_bytes(comm);
    const double activations = as_double(mem.activations);
    const double transient =
        std::max({logits, backward_working_set(sc, layer), st.step_copy - activations, 0.0});
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
