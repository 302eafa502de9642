// What the published tables leave out and the recipe that ran each row sets: the one place where
// validate's assumptions about a published run are written down (docs/calibration.md lists them
// with their sources). Keyed by the row's source and, where the recipes differ, by model, GPU and
// precision, never by row. Sources: NVIDIA-NeMo/Megatron-Bridge scripts/performance (configs/*,
// utils/overrides.py, src/megatron/bridge/training/comm_overlap.py), NVIDIA/NeMo
// scripts/performance (recommended_model_configs/*.csv), NeMo-Framework-Launcher
// conf/training/*.yaml (24.07), the Megatron-LM papers' setup sections.
#pragma once

#include <string>

#include "config/scenario.h"

namespace preflight {

struct PublishedRow;

struct RecipeDefaults {
  std::string stack;            // training stack preset the run used (presets/stacks/)
  int micro_batch = 1;          // when the table gives none
  bool flash_attention = true;  // fused attention core (cuDNN / FlashAttention)
  // The fused-attention family when it is not the stack preset's own (training.stack's
  // attention_kernel); empty = the preset's.
  std::string attention_kernel;
  // training.stack's flash_attention_unpad when it is not the preset's: -1 the preset's, 0, 1.
  int attention_unpad = -1;
  // training.stack's cross_entropy when it is not the preset's ("unfused" | "te"); empty = the
  // preset's.
  std::string cross_entropy;
  bool distributed_optimizer = true;
  bool overlap_grad_reduce = true;         // with DP > 1
  bool overlap_param_gather = true;        // with DP > 1 and the distributed optimizer
  bool tp_comm_overlap = true;             // with TP > 1 and sequence parallelism
  bool overlap_p2p = true;                 // with PP > 1 and VP > 1
  bool sequence_parallel = true;           // with TP > 1
  Recompute recompute = Recompute::kNone;  // when the table gives none
  // The recipe's recompute_modules (RecomputeModule bits) when the table gives no recompute:
  // selective recompute of those modules; 0 = none.
  unsigned recompute_modules = 0;
  Schedule schedule = Schedule::kOneFOneB;
  // When the table gives PP > 1 and no VP: the interleaved schedule with this many layers per
  // virtual stage (VP = layers / (PP · this)); 0 = the non-interleaved 1F1B.
  int layers_per_virtual_stage = 0;
  int zero_stage = 0;  // 3: Megatron-FSDP optim_grads_params / DeepSpeed ZeRO-3
  // Gradients reduced in bf16, not fp32 (parallelism.grad_reduce_in_fp32: false): Composer's
  // PURE FSDP mixed precision, and the Megatron-Bridge / NeMo 2.0 performance recipes.
  bool half_grad_reduce = false;
  int etp = 1;                   // expert tensor parallelism (MoE)
  bool balanced_router = true;   // moe_router_force_load_balancing
  bool flex_dispatcher = false;  // moe_token_dispatcher_type flex (DeepEP / HybridEP)
  // moe_flex_dispatcher_backend of a flex row: "hybridep" or "deepep" (model.moe.flex_backend).
  std::string flex_backend;
  // The 26.06 MXFP8 MoE recipes: cuda_graph_impl full_iteration, the CuTe DSL fused grouped
  // MLP (one kernel per expert GEMM) and moe_a2a_overlap (combined 1F1B).
  bool full_cuda_graphs = false;
  // cuda_graph_impl transformer_engine with cuda_graph_scope: GraphScope bits (0: none).
  uint32_t cuda_graph_scope = 0;
  bool fused_grouped_gemm = false;
  bool overlap_moe_comm = false;
  // cpu_offloading_num_layers: the layers whose activations go to host memory (the
  // Megatron-FSDP LLaMA-3 recipes on Blackwell).
  int offload_layers = 0;
  // first_last_layers_bf16 with num_layers_at_end_in_bf16: the last layers' linear layers in
  // bf16 (Nemotron 3 Super's NVFP4 recipe).
  int bf16_layers_at_end = 0;
  // NCCL_NVLS_ENABLE as the launch scripts set it: NeMo 2's and Megatron-Bridge's performance
  // executors and NeMo 24.07's launcher turn NVLink SHARP off ("to save memory").
  bool nvls = true;
  std::string note;  // what the recipe fills in that is worth printing
};

// The defaults of the recipe behind `row` (its source, NeMo release, model, GPU, precision).
RecipeDefaults recipe_defaults(const PublishedRow& row);

// The NeMo container in the notes of a Megatron-Bridge row ("container 26.04.01") as yymmpp
// (260401); 0 when the notes name none.
int container_of(const PublishedRow& row);

}  // namespace preflight
