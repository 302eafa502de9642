#include "validation/recipes.h"

#include "validation/published.h"

namespace preflight {
namespace {

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

// FSDP=N in the notes of a Megatron-Bridge / NeMo 25.04+ row: N > 0 is Megatron-FSDP with
// data_parallel_sharding_strategy optim_grads_params (weights, gradients and optimizer states
// sharded over the DP group: ZeRO-3); the tables' own column, kept in the notes.
bool megatron_fsdp(const PublishedRow& row) {
  const size_t at = row.notes.find("FSDP=");
  if (at == std::string::npos) return false;
  const char c = row.notes.size() > at + 5 ? row.notes[at + 5] : '0';
  return c >= '1' && c <= '9';
}

}  // namespace

RecipeDefaults recipe_defaults(const PublishedRow& row) {
  RecipeDefaults r;
  const std::string& src = row.source;
  if (starts_with(src, "narayanan2021") || starts_with(src, "korthikanti2022")) {
    // Megatron-LM on Selene, 2021-2022 (Narayanan et al. §5, Korthikanti et al. §6): fp16 with
    // fused softmax (no FlashAttention), fused bias+GeLU, scatter/gather of cross-node pipeline
    // sends, gradient all-reduce after the backward pass (no overlap), no distributed optimizer
    // (Narayanan's ZeRO-3 rows are DeepSpeed). Table 1 gives no micro-batch: 1, as the paper's
    // largest-model configurations use (§5.1; Table 2 and 5 state it).
    r.stack = "megatron-lm-2021";
    r.flash_attention = false;
    r.distributed_optimizer = false;
    r.overlap_grad_reduce = false;
    r.overlap_param_gather = false;
    r.tp_comm_overlap = false;
    r.overlap_p2p = false;
    r.sequence_parallel = false;  // the tables state it where it was used (Korthikanti)
    r.recompute = Recompute::kFull;
    if (src == "narayanan2021_t2" && row.tp <= 1 && row.pp <= 1) {
      r.stack = "megatron-lm-2021";  // DeepSpeed ZeRO-3 on the same PyTorch and GPUs
      r.zero_stage = 3;
      r.note = "DeepSpeed ZeRO-3";
    }
    return r;
  }
  if (src == "llmfoundry_bench") {
    // MosaicML Composer + PyTorch FSDP (llm-foundry's benchmark YAMLs): FULL_SHARD (ZeRO-3:
    // parameters gathered per block before its forward and backward, gradients reduce-scattered
    // per block, both overlapped by FSDP's prefetch) or SHARD_GRAD_OP (ZeRO-2), FlashAttention,
    // no tensor or pipeline parallelism; activation checkpointing per block as the table states.
    r.stack = "pytorch-fsdp";
    r.distributed_optimizer = false;
    r.overlap_param_gather = false;
    r.tp_comm_overlap = false;
    r.overlap_p2p = false;
    r.sequence_parallel = false;
    r.zero_stage = row.notes.find("SHARD_GRAD_OP") != std::string::npos ? 2 : 3;
    r.note = r.zero_stage == 3 ? "FSDP FULL_SHARD" : "FSDP SHARD_GRAD_OP";
    return r;
  }
  // Megatron-Core with Transformer Engine: the Megatron-LM README's H100 tables (Megatron-Core
  // r0.8: --overlap-grad-reduce, --overlap-param-gather, --tp-comm-overlap, overlapped P2P),
  // NeMo 24.07 (NeMo-Framework-Launcher conf/training: ub_tp_comm_overlap, overlap_p2p_comm,
  // overlap_grad_sync/param_sync, distributed optimizer, no activation checkpointing) and NeMo
  // 2.0 / Megatron-Bridge performance scripts (utils/overrides.py: sequence_parallel = TP > 1;
  // comm_overlap.py: overlap_grad_reduce and overlap_param_gather with DP > 1, overlap_p2p_comm
  // with PP > 1 and VP > 1; MoE runs force a balanced, dropless router and ETP 1).
  r.stack = "megatron-core";
  r.micro_batch = 1;
  if (megatron_fsdp(row)) {
    r.zero_stage = 3;
    r.note = "Megatron-FSDP";
  }
  if (row.precision == "NVFP4") r.tp_comm_overlap = false;  // overrides.py: off for nvfp4
  return r;
}

}  // namespace preflight
