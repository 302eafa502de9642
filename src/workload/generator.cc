// The workload generator's top level (generator.h): the parameters each stage holds, and the
// order in which a workload is put together: the model's blocks (model_blocks.h), then one
// program per pipeline stage (stage_program.h), then the precision and TP-overlap rewrites of
// every block (precision_ops.h, overlap_ops.h).
#include "workload/generator.h"

#include "base/check.h"
#include "model/transformer.h"
#include "workload/dualpipe_pairs.h"
#include "workload/generator_internal.h"
#include "workload/layer_ops.h"
#include "workload/lora_ops.h"
#include "workload/model_blocks.h"
#include "workload/overlap_ops.h"
#include "workload/precision_ops.h"
#include "workload/stage_program.h"

namespace preflight {

int add_block(Workload& w, const char* name, std::vector<Op> ops) {
  w.blocks.push_back(Block{name, std::move(ops)});
  return static_cast<int>(w.blocks.size()) - 1;
}

Step block_step(int block, int repeat, const PipelineTask& t) {
  Step s;
  s.kind = StepKind::kRun;
  s.block = block;
  s.repeat = repeat;
  s.microbatch = t.microbatch;
  s.chunk = t.chunk;
  s.backward = t.backward;
  return s;
}

int64_t layer_dense_params_per_gpu(const Scenario& s, int layer) {
  if (s.training.lora.enabled()) {
    return lora_parameters(s.model, s.training.lora, layer) / s.parallelism.tp;
  }
  return (layer_parameters(s.model, layer) - expert_parameters(s.model, layer)) / s.parallelism.tp;
}

int64_t layer_expert_params_per_gpu(const Scenario& s, int layer) {
  if (s.training.lora.enabled()) return 0;  // frozen
  return expert_parameters(s.model, layer) / (int64_t{s.parallelism.ep} * s.expert_tp());
}

int64_t stage_trainable_parameters_per_gpu(const Scenario& s, int stage) {
  if (!s.training.lora.enabled()) return stage_parameters_per_gpu(s, stage);
  int64_t p = 0;
  for (int layer : stage_layer_ids(s, stage)) p += layer_dense_params_per_gpu(s, layer);
  return p;
}

int64_t stage_trainable_expert_parameters_per_gpu(const Scenario& s, int stage) {
  return s.training.lora.enabled() ? 0 : stage_expert_parameters_per_gpu(s, stage);
}

int gradient_bytes_per_element(const Scenario& s) {
  const ParallelismConfig& p = s.parallelism;
  if (p.grad_reduce_in_fp32_given) return p.grad_reduce_in_fp32 ? 4 : 2;
  return s.training.precision == Precision::kFp16 ? 2 : 4;
}

int64_t grad_bucket_parameters(const Scenario& s) {
  const ParallelismConfig& p = s.parallelism;
  if (p.grad_bucket_size.count() > 0) {
    return std::max<int64_t>(1, p.grad_bucket_size.count() / gradient_bytes_per_element(s));
  }
  return std::max<int64_t>(40'000'000, int64_t{1'000'000} * p.dp * p.cp);
}

int64_t stage_expert_parameters_per_gpu(const Scenario& s, int stage) {
  const ModelConfig& m = s.model;
  int64_t experts = 0;
  for (int layer : stage_layer_ids(s, stage)) experts += expert_parameters(m, layer);
  if (stage == s.parallelism.pp - 1 && m.mtp_layers > 0) {
    experts += int64_t{mtp_weight_modules(m)} * expert_parameters(m, mtp_mlp_layer(m));
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
  if (stage == pp - 1 && m.mtp_layers > 0) {
    const int64_t mtp = mtp_module_parameters(m) - expert_parameters(m, mtp_mlp_layer(m));
    dense += int64_t{mtp_weight_modules(m)} * mtp;
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

Workload generate_workload(const Scenario& s, const std::vector<Bytes>& offload_bytes) {
  PREFLIGHT_CHECK_MSG(static_cast<int>(offload_bytes.size()) == s.parallelism.offload_layers,
                      "the offloaded layers' bytes (memory's offloaded_layer_bytes)");
  const LayerShape x = make_layer_shape(s);
  Workload w;
  w.microbatches = s.num_microbatches();
  // Even pipelines; stage_layers() gives the layers of each stage.
  w.layers_per_chunk = s.model.layers / (s.parallelism.pp * s.parallelism.vpp);
  const ModelBlocks blocks = add_model_blocks(s, x, w);
  DualPipePairs pairs(s, w);
  for (int stage = 0; stage < s.parallelism.pp; ++stage) {
    w.stages.push_back(stage_program(s, x, blocks, stage, offload_bytes, pairs, w));
  }
  // LoRA: frozen weights lose their weight gradients, target linears gain adapters (lora_ops.h).
  for (Block& b : w.blocks) apply_lora(s, &b.ops);
  // Low-precision linear layers: quantize kernels and narrower GEMM operands (precision_ops.h).
  for (Block& b : w.blocks) {
    if (!b.high_precision) apply_precision(s, &b.ops);
  }
  // TP communication pipelined with its GEMMs (overlap_ops.h); after precision, which finds each
  // cast's sequence-parallel all-gather as the blocking op right before its GEMM.
  for (Block& b : w.blocks) apply_tp_comm_overlap(s, &b.ops);
  return w;
}

}  // namespace preflight
