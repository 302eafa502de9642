#include "validation/recipes.h"

#include <cctype>
#include <cstdio>
#include <string>

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

bool contains(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }

// Nemotron 3 Ultra's one performance entry, GB300 with TP 1 and EP 64 on 256 GPUs
// (nemotron_3_workload_base_configs.py, BASE_NEMOTRON_3_ULTRA_CONFIG, "mirrors the reference
// Megatron-LM GB300 launch script"): Megatron-FSDP (HSDP), the CuTe DSL fused grouped MLP,
// HybridEP, selective recompute of moe_act, no CUDA graphs. Applied: Megatron-FSDP (sharded over
// the whole DP group; HSDP's replication is not modelled), HybridEP and the recompute. Not
// applied, as the Nemotron 3 graphs are not (recipe_graph_scope): the fused grouped MLP, which
// takes its row from −1.4 % to −15.4 % by removing the per-expert launches that stand for the
// hybrid layers' GPU cost the model lacks; and its offloading of the moe_act tensors over
// 500 MB (min_offloaded_tensor_size; memory only). GB200's TP 2 row has no published entry.
bool nemotron3_ultra_gb300(const PublishedRow& row) {
  return row.source == "mbridge_perf" && contains(row.model, "Nemotron_3_Ultra") &&
         row.gpu == "GB300" && row.tp == 1;
}

// Megatron-Bridge's performance recipes (scripts/performance/configs/*_workload_base_configs.py)
// that run the flex token dispatcher (moe_flex_dispatcher_backend hybridep or deepep) in the
// containers of the published tables, 26.02 on: Qwen3-30B-A3B on every GPU (B200 from 26.02.01,
// Megatron-Bridge PR #2499, which names the other GPUs' configs as already on it), Qwen3-235B-A22B
// on GB200 and GB300 (B300 from 26.06, PR #3490; B200 MXFP8 from 26.06, PR #4606; H100 stays on
// alltoall), DeepSeek-V3 on every GPU, Nemotron 3 Nano and Super on every GPU
// (nemotron_3_workload_base_configs.py: moe_flex_dispatcher_backend hybridep in their base
// configs, deepep on B300 in the later version), Nemotron 3 Ultra on GB300, Kimi-K2 on GB300 and
// GB200 (kimi_workload_base_configs.py: hybridep in every version of those entries).
bool flex_dispatcher(const PublishedRow& row) {
  if (row.source != "mbridge_perf") return false;
  const int c = container_of(row);
  if (c < 260200) return false;
  const std::string& m = row.model;
  const std::string& g = row.gpu;
  if (contains(m, "Qwen3_30B")) return g != "B200" || c >= 260201;
  if (contains(m, "Qwen3_235B")) {
    if (g == "GB200" || g == "GB300") return true;
    if (g == "B300" || g == "B200") return c >= 260600;
    return false;
  }
  if (contains(m, "Nemotron_3_Nano") || contains(m, "Nemotron_3_Super")) return true;
  if (nemotron3_ultra_gb300(row)) return true;
  if (contains(m, "Kimi_K2")) return g == "GB300" || g == "GB200";
  return contains(m, "DeepSeekV3") || contains(m, "DeepSeekV4");
}

// DeepSeek-V3's dropless H100 run of container 25.09 (TP 2, PP 8, VP 4, EP 64): that release's
// performance script enables DeepEP for DeepSeek-V3 ("enable this for token-dropless") with
// the expert all-to-alls overlapped; its token-drop rows on Blackwell run the alltoall
// dispatcher with capacity padding.
bool dropless_deepep_2509(const PublishedRow& row) {
  return row.source == "mbridge_perf" && container_of(row) / 100 == 2509 &&
         contains(row.model, "DeepSeekV3 (dropless)");
}

// DeepSeek-V3's B200 MXFP8 V2 entry of deepseek_workload_base_configs.py (PP 8 × VP 2, EP 32,
// the layout of the 26.04.01 row): moe_flex_dispatcher_backend deepep, with moe_a2a_overlap
// (eager_moe_a2a_overlap below).
bool deepseek_b200_v2(const PublishedRow& row) {
  return row.source == "mbridge_perf" && contains(row.model, "DeepSeekV3") && row.gpu == "B200" &&
         row.precision == "MXFP8" && row.pp == 8 && container_of(row) >= 260401;
}

// The MXFP8 MoE recipes that run full-iteration CUDA graphs, the CuTe DSL fused grouped MLP
// and the combined 1F1B all-to-all overlap (moe_a2a_overlap) from container 26.06 (Megatron-
// Bridge r0.5.0): Qwen3 on GB200 and GB300 (PR #4211, "Enable Qwen3 GB200/GB300 MXFP8 CuTeDSL
// Fusion and Full-Iter CUDA Graphs") and on B200 and B300 (PR #4606, "the same optimization
// path already used by GB200/GB300": moe_a2a_overlap, full-iteration graphs, fused grouped
// MLP); DeepSeek-V3 on GB200 and GB300 (deepseek_workload_base_configs *_FP8_MX_V1:
// cuda_graph_impl full_iteration, moe_a2a_overlap, cutedsl_fused_grouped_mlp; Megatron-Bridge
// 0.5.1 release notes), on B300 from 26.06.01 (PR #4498).
bool full_iteration_moe(const PublishedRow& row) {
  if (row.source != "mbridge_perf" || row.precision != "MXFP8") return false;
  const int c = container_of(row);
  if (c < 260600) return false;
  const std::string& g = row.gpu;
  const bool blackwell = g == "GB200" || g == "GB300" || g == "B200" || g == "B300";
  if (contains(row.model, "Qwen3_30B") || contains(row.model, "Qwen3_235B")) return blackwell;
  if (contains(row.model, "DeepSeekV3")) {
    return g == "GB200" || g == "GB300" || (g == "B300" && c >= 260601);
  }
  // DeepSeek-V4 Flash (container 26.08, GB200 and GB300 with TP 1, PP 1, EP 64): its recipe
  // (deepseek_v4_flash_pretrain_128gpu_gb200_fp8mx_paged_stash_config, "MXFP8 and
  // full-iteration CUDA graphs") captures the whole iteration (cuda_graph_impl local,
  // cuda_graph_scope full_iteration) and runs the grouped MLP through Transformer Engine's op
  // fuser (use_transformer_engine_op_fuser, moe_mlp_glu_interleave_size 32); it sets no
  // moe_a2a_overlap.
  if (contains(row.model, "DeepSeekV4")) return blackwell;
  return false;
}

// GPT-OSS 120B's performance recipes (gpt_oss_workload_base_configs.py, the V2 entries with the
// global batch of 1,280 the tables show). Each row's own columns single out its entry, which sets
// what follows in the same replace(): EP 16 on GB300 in MXFP8, EP 8 on B300 (from 26.02.01),
// GBS 1,280 with micro-batch 4 on GB200 (26.02 on; 25.11 ran another layout).
//   * MXFP8 on GB200 and GB300 (the rows from 26.06): cuda_graph_impl full_iteration,
//     moe_flex_dispatcher_backend hybridep, moe_a2a_overlap, cutedsl_fused_grouped_mlp and no
//     recompute;
//   * MXFP8 on B300: the BF16 V2 entry's HybridEP with EP 8, plus moe_a2a_overlap and the fused
//     grouped MLP, without full-iteration graphs (commented out in the entry);
//   * BF16 on B300 with EP 8: HybridEP;
//   * BF16 on GB200 with GBS 1,280: moe_a2a_overlap.
// fp8_dot_product_attention (MXFP8) and the partial TE graphs of GB300/B300 (attn, moe_router,
// moe_preprocess) are not modelled; both would make the predictions faster still.
enum class GptOssRecipe { kNone, kFullIteration, kB300Fused, kFlex, kOverlap };

GptOssRecipe gpt_oss_recipe(const PublishedRow& row) {
  if (row.source != "mbridge_perf" || !contains(row.model, "GPT OSS 120B")) {
    return GptOssRecipe::kNone;
  }
  const std::string& g = row.gpu;
  if (row.precision == "MXFP8") {
    if (g == "GB200" || g == "GB300") return GptOssRecipe::kFullIteration;
    if (g == "B300" && row.ep == 8) return GptOssRecipe::kB300Fused;
    return GptOssRecipe::kNone;
  }
  if (g == "B300" && row.ep == 8) return GptOssRecipe::kFlex;
  if (g == "GB200" && row.global_batch == 1280 && row.micro_batch == 4) {
    return GptOssRecipe::kOverlap;
  }
  return GptOssRecipe::kNone;
}

// Transformer Engine's scoped CUDA graphs of the MoE recipes (cuda_graph_impl
// transformer_engine with cuda_graph_scope), as Megatron-Bridge's qwen3_workload_base_configs.py
// and gpt_oss_workload_base_configs.py set them: Qwen3-30B-A3B on GB300, B300 and GB200 in
// MXFP8 (moe_router, moe_preprocess), on GB200 in BF16 and FP8 and on B200 (attn too), on H100
// in BF16 (moe_router, moe_preprocess; its FP8 entry none); Qwen3-235B-A22B on GB200 (attn,
// moe_router, moe_preprocess) and GB300 (moe_router, moe_preprocess; its 256-GPU V2 entry attn
// too), eager elsewhere (the alltoall dispatcher); GPT-OSS 120B on GB300 and B300 (attn,
// moe_router, moe_preprocess; B300's MXFP8 entry inherits them from its BF16 one); DeepSeek-V3
// (deepseek_workload_base_configs.py, the versions whose layouts the tables show) on GB200
// (GB200_V1: PP 4 × VP 4, EP 64), on B200's PP 8 × VP 2 entry (FP8_MX_V2) and on B300's PP 8
// entry at micro-batch 2 (B300_V2): attn, moe_router, moe_preprocess; eager at PP 16 on B200
// and B300 and at micro-batch 2 on GB300 (their host time is hidden behind the GPU there: the
// scopes move those rows by under 0.1 %). Nemotron 3's
// configurations (nemotron_3_workload_base_configs.py, the version whose layouts the tables show)
// capture attn, mamba, moe_router and moe_preprocess on Blackwell (not Super on B200 in MXFP8;
// mamba, with attn in BF16, on H100): the model has the mamba scope, but these recipes leave
// them out. Applied, the hybrid rows come out 8 % too fast (median; their in-sample MAPE 8.6 ->
// 11.4 %, Super with TP 2 on GB200 from −4 to −20 %): the host cost they remove was standing for
// a GPU cost of the hybrid layers that is not modelled, and the graphs wait on it
// (docs/calibration.md). Assumed from
// container 26.02 on, with the flex dispatcher these entries run (flex_dispatcher() above; the
// configs' history in the tables' containers is not published with them); never where the
// whole iteration is one graph.
uint32_t recipe_graph_scope(const PublishedRow& row) {
  if (row.source != "mbridge_perf" || contains(row.model, "tokendrop")) return 0;
  if (container_of(row) < 260200) return 0;
  const uint32_t router = kGraphMoeRouter | kGraphMoePreprocess;
  const uint32_t all = kGraphAttn | router;
  const std::string& g = row.gpu;
  const std::string& p = row.precision;
  if (contains(row.model, "Qwen3_30B")) {
    if (g == "GB300" || g == "B300") return router;
    if (g == "GB200") return p == "MXFP8" ? router : all;
    if (g == "B200") return all;
    if (g == "H100-SXM5-80GB") return p == "BF16" ? router : 0;
    return 0;
  }
  if (contains(row.model, "Qwen3_235B")) {
    if (g == "GB200") return all;
    if (g == "GB300") return row.num_gpus >= 256 ? all : router;
    return 0;
  }
  if (contains(row.model, "GPT OSS 120B")) return g == "GB300" || g == "B300" ? all : 0;
  if (starts_with(row.model, "DeepSeekV3")) {
    if (g == "GB200") return all;
    if ((g == "B200" || g == "B300") && row.pp == 8) return all;
    return 0;
  }
  return 0;
}

// The eager (not fully CUDA-graphed) MoE recipes that overlap the expert all-to-alls with the
// other micro-batch's compute (moe_a2a_overlap, Megatron-Core's combined 1F1B EP overlap):
// Qwen3-235B-A22B on H100 (TP 2, PP 8, VP 4, EP 32, the alltoall dispatcher), whose
// qwen3_workload_base_configs.py sets moe_a2a_overlap=True in the V1 and V2 configs of the
// tables' containers 25.11 to 26.04.01, and on B200 in 25.11 only: Megatron-Bridge PR #1760
// (December 2025) turned it off there "due to CPU overhead" after that release, with the VP 2
// the 25.11 row still shows; and on B300 in containers 26.02 and 26.02.01, whose configurations
// (PP 8, VP 4, EP 8, the tables' layout) matched B200's before that PR, until PR #2669 (March
// 2026, "disabling VP and moe_a2a_overlap" on B300 to match B200) removed both: the 26.04
// rows show no VP. The 25.09 script and the other models' eager recipes of the set
// name no such overlap (Qwen3-30B on H100 sets moe_a2a_overlap=False). DeepSeek-V3: the dropless
// H100 recipe of 25.09 (TP 2, PP 8, VP 4, EP 64, global batch 8192; DeepEP with
// overlap_moe_expert_parallel_comm, the performance script of that release), and B200's MXFP8 V2
// configuration from 26.04.01 (PP 8, VP 2, EP 32 with DeepEP and moe_a2a_overlap=True in one
// deepseek_workload_base_configs.py entry; the earlier B200 rows run PP 16, EP 8 without it).
bool eager_moe_a2a_overlap(const PublishedRow& row) {
  if (row.source != "mbridge_perf" || contains(row.model, "tokendrop")) return false;
  const int c = container_of(row);
  if (contains(row.model, "DeepSeekV3")) {
    if (row.gpu == "H100-SXM5-80GB") return c / 100 == 2509;
    return row.gpu == "B200" && row.precision == "MXFP8" && c >= 260401;
  }
  if (!contains(row.model, "Qwen3_235B")) return false;
  if (row.gpu == "H100-SXM5-80GB") return c >= 251100;
  if (row.gpu == "B200") return c >= 251100 && c < 260200;
  if (row.gpu == "B300") return c >= 260200 && c < 260400;
  return false;
}

// The token-drop MoE recipes of container 25.09 that capture the whole iteration in one CUDA
// graph (cuda_graph_impl local, cuda_graph_scope full_iteration in Megatron-Bridge's
// qwen3/workload_base_configs.py of that release: Qwen3-30B-A3B on GB300, GB200 and B200,
// Qwen3-235B-A22B on GB200). Dropping and padding to the expert capacity gives every step the
// static shapes a graph needs; the dropless recipes from 25.11 on cannot capture the
// dispatcher, and the same B200 configuration then measures half the throughput (9,299 against
// 18,066 tokens/s per GPU).
bool tokendrop_full_graphs(const PublishedRow& row) {
  if (row.source != "mbridge_perf" || !contains(row.model, "tokendrop")) return false;
  if (container_of(row) / 100 != 2509) return false;
  const std::string& g = row.gpu;
  if (contains(row.model, "Qwen3_30B")) return g == "GB300" || g == "GB200" || g == "B200";
  if (contains(row.model, "Qwen3_235B")) return g == "GB200";
  return false;
}

// The Megatron-FSDP recipes' cpu_offloading_num_layers (llama3_workload_base_configs.py and
// llama31_workload_base_configs.py, the same in every version of the tables' containers, 25.09
// to 26.04; with FP8 current scaling, "FP8_CS", the FP8 of the tables): LLaMA-3 70B on GB200 40
// (BF16 20), on GB300 20 (BF16 30), on B200 5; LLaMA-3.1 405B (TP 2) on GB200 95, on GB300 10
// (BF16 40). B300 and H100 offload nothing. NeMo 2's performance scripts before them
// (scripts/performance/recommended_model_configs/model_configs_gb200.csv, the
// activation_offload_layers column) give the same 95 for LLaMA-3.1 405B in FP8 on 128 GB200s
// (TP 2, Megatron-FSDP) and none for LLaMA-3 70B.
int recipe_offload_layers(const PublishedRow& row, bool fsdp) {
  if (!fsdp) return 0;
  if (starts_with(row.source, "nemofw_")) {
    const bool fp8 = row.precision == "fp8" || row.precision == "FP8";
    return contains(row.model, "LLAMA3.1-405B") && row.gpu == "GB200" && fp8 && row.tp == 2 ? 95
                                                                                            : 0;
  }
  if (row.source != "mbridge_perf") return 0;
  std::string p;
  for (char c : row.precision) p += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  const bool bf16 = p == "BF16";
  const bool fp8 = p == "FP8" || p == "FP8-CS" || (p.empty() && contains(row.notes, "FP8 implied"));
  if (!bf16 && !fp8) return 0;
  const std::string& g = row.gpu;
  if (contains(row.model, "LLAMA3_70B")) {
    if (g == "GB200") return fp8 ? 40 : 20;
    if (g == "GB300") return fp8 ? 20 : 30;
    if (g == "B200" && fp8) return 5;
    return 0;
  }
  if (contains(row.model, "LLAMA3.1_405B")) {
    if (g == "GB200" && fp8) return 95;
    if (g == "GB300") return fp8 ? 10 : 40;
  }
  return 0;
}

unsigned bit(RecomputeModule m) { return 1u << static_cast<int>(m); }

// The recompute_modules of the Megatron-Bridge recipes behind the published MoE and hybrid rows
// (scripts/performance/configs/*_workload_base_configs.py, the versions whose parallel layouts
// match the tables), applied with recompute_granularity selective:
//   Nemotron 3 Nano on H100 (FP8_CS): moe, layernorm, core_attn, moe_act;
//   Nemotron 3 Super on B200 in MXFP8 and on B300 in NVFP4 (and BF16): moe_act, layernorm (B200's
//   NVFP4 entry, TP 2, recomputes nothing);
//   GPT-OSS 120B on GB200, B200 and H100 in BF16 (V1 and V2): layernorm, moe_act;
//   DeepSeek-V3 from container 26.02 on GB200, B200 and B300: mla_up_proj, and mlp with it on
//   B200's PP 8 × VP 2 layout (FP8_MX_V2) and on H100 (H100_V1, 25.09's dropless rows); on GB300
//   mla_up_proj in the version whose layout the 26.02 to 26.04.01 rows show (GB300_V1: PP 2 ×
//   VP 8, EP 32, micro-batch 2, no graphs; FP8_MX_V2 is it at global batch 4,096), nothing in
//   the later entry of micro-batch 1 with full-iteration graphs (the 26.06 rows on);
//   Kimi-K2 (kimi_workload_base_configs.py): mla_up_proj on every GPU, mlp with it on H100;
//   GB300's entry with the tables' global batch of 4,096 and micro-batch 2 recomputes
//   mla_up_proj (its earlier entry, global batch 2,048, moe_act).
// Every other row's recipe recomputes nothing.
unsigned recipe_recompute_modules(const PublishedRow& row) {
  if (row.source != "mbridge_perf") return 0;
  using M = RecomputeModule;
  const std::string& m = row.model;
  const std::string& g = row.gpu;
  const bool h100 = starts_with(g, "H100");
  if (contains(m, "Nemotron_3_Nano") && h100) {
    return bit(M::kMoe) | bit(M::kLayerNorm) | bit(M::kCoreAttn) | bit(M::kMoeAct);
  }
  if (contains(m, "Nemotron_3_Super") &&
      ((g == "B200" && row.precision == "MXFP8") || (g == "B300" && row.precision != "MXFP8"))) {
    return bit(M::kMoeAct) | bit(M::kLayerNorm);
  }
  if (nemotron3_ultra_gb300(row)) return bit(M::kMoeAct);
  if (contains(m, "GPT OSS 120B") && row.precision == "BF16" &&
      (g == "GB200" || g == "B200" || h100)) {
    return bit(M::kLayerNorm) | bit(M::kMoeAct);
  }
  if (contains(m, "Kimi_K2")) {
    if (h100) return bit(M::kMlaUpProj) | bit(M::kMlp);
    if (g == "GB300" && row.global_batch != 4096) return bit(M::kMoeAct);
    return bit(M::kMlaUpProj);
  }
  // DeepSeek-V4 Flash's one performance recipe (Megatron-Bridge perf_recipes deepseek gb200
  // deepseek_v4_flash_pretrain_128gpu_gb200_fp8mx_paged_stash_config): mla_up_proj.
  if (starts_with(m, "DeepSeekV4")) return bit(M::kMlaUpProj);
  if (starts_with(m, "DeepSeekV3")) {
    if (h100) return bit(M::kMlaUpProj) | bit(M::kMlp);
    if (container_of(row) < 260200) return 0;
    if (g == "B200" && row.pp == 8) return bit(M::kMlaUpProj) | bit(M::kMlp);
    if (g == "GB200" || g == "B200" || g == "B300") return bit(M::kMlaUpProj);
    if (g == "GB300" && row.micro_batch == 2) return bit(M::kMlaUpProj);
  }
  return 0;
}

}  // namespace

int container_of(const PublishedRow& row) {
  const size_t at = row.notes.find("container ");
  if (at == std::string::npos) return 0;
  int yy = 0, mm = 0, patch = 0;
  if (std::sscanf(row.notes.c_str() + at + 10, "%d.%d.%d", &yy, &mm, &patch) < 2) return 0;
  return yy * 10000 + mm * 100 + patch;
}

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
    // Composer's FSDP mixed precision (the tables' "MP Mode"): DEFAULT reduces gradients in
    // fp32, PURE in the half precision of the parameters.
    if (row.notes.find("MP mode 'PURE'") != std::string::npos) {
      r.half_grad_reduce = true;
      r.note += ", gradients reduced in bf16 (PURE)";
    }
    // The A100 tables come from the 2023 benchmark scripts: submit_benchmarks.py on the
    // mosaicml/pytorch:1.13.1 image with --attn_impl defaulting to 'triton', as the MPT YAMLs of
    // the time set it (attn_config.attn_impl: triton), before FlashAttention-2 existed: the
    // Triton port of the first FlashAttention. The H100 tables come from the later script
    // (--attn_impl 'flash', installed with llm-foundry's gpu-flash2 extra): FlashAttention-2,
    // the stack preset's kernel.
    // The Triton path (triton_flash_attn_fn) hands the kernel the padded tensors as they are.
    if (row.gpu.rfind("A100", 0) == 0) {
      r.attention_kernel = "flash1";
      r.attention_unpad = 0;
      r.note += ", FlashAttention in Triton (2023 scripts)";
    }
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
    r.offload_layers = recipe_offload_layers(row, true);
    if (r.offload_layers > 0) {
      r.note += ", activations of " + std::to_string(r.offload_layers) + " layers offloaded";
    }
  }
  if (nemotron3_ultra_gb300(row)) {
    r.zero_stage = 3;
    r.note = "Megatron-FSDP";
  }
  if (row.precision == "NVFP4") r.tp_comm_overlap = false;  // overrides.py: off for nvfp4
  // Nemotron 3 Super's NVFP4 runs use nemotron_3_super_bf16_with_nvfp4_mixed
  // (training/mixed_precision.py; the perf configs' _nemotron_3_super_precision): the last 14 of
  // its 88 layers in bf16, the "final 15 %" of NVIDIA's NVFP4 pretraining recipe.
  if (row.precision == "NVFP4" && contains(row.model, "Nemotron_3_Super")) {
    r.bf16_layers_at_end = 14;
    r.note += std::string(r.note.empty() ? "" : ", ") + "last 14 layers in bf16";
  }
  // Gradients reduced in bf16: Megatron-Bridge's performance scripts (utils/overrides.py
  // set_basic_perf_overrides, and the recipes' _benchmark_common / _perf_precision) set
  // mixed_precision.grad_reduce_in_fp32 and ddp.grad_reduce_in_fp32 to False as their
  // "benchmark-mode default", and NeMo 2.0's performance recipes (25.02 to 25.07) set
  // trainer.plugins.grad_reduce_in_fp32=False. The Megatron-LM README's rows (--bf16 keeps the
  // fp32 main-gradient reduce), NeMo 24.07's launcher configs and the long-sequence tables
  // (24.03 / 25.04rc2, recipe not published) keep the fp32 reduce.
  r.half_grad_reduce = src == "mbridge_perf" || starts_with(src, "nemofw_");
  // The Megatron-LM README's H100 tables state TP, PP and DP but no VP, and "fine-grained
  // overlapping with ... PP (enabled by default)": Megatron-Core overlaps pipeline sends only in
  // the interleaved schedule (overlap_p2p_comm is switched off, with a warning, without virtual
  // stages). Its own strong-scaling figures rule the non-interleaved 1F1B out: GPT-3 175B at
  // batch 1,152 on PP 6 keeps 42 % MFU on 4,608 GPUs against 47 % on 96, where each replica's 12
  // micro-batches would leave 1F1B a bubble of 5 / 17 of the step (at most 47 % × 12 / 17 = 33 %
  // MFU); interleaving with VP v divides that bubble by v, and 42 % needs v ≥ 4. The tables' layer
  // splits admit one interleaving for every row: 92 layers on PP 4 and 112 on PP 16 leave 23 and
  // 7 layers per stage, primes, and Megatron-Core r0.8 (the README's) splits a stage into equal
  // virtual stages, so those runs can only have interleaved one layer per virtual stage; the
  // benchmark's other rows are taken to use the same setting.
  if (src == "megatron_readme_h100") r.layers_per_virtual_stage = 1;
  // NVLink SHARP off: Megatron-Bridge's and NeMo 2.0's performance executors
  // (scripts/performance/utils/executors.py PERF_ENV_VARS, NeMo's scripts/performance
  // executors) and NeMo-Framework-Launcher's conf/config.yaml (env_vars, 23.11 on) all export
  // NCCL_NVLS_ENABLE=0, "to save memory"; the long-sequence tables ran on those tools too. NCCL
  // then picks neither NVLS nor the NVLS tree. The Megatron-LM README's runs name no such setting.
  r.nvls = !(src == "mbridge_perf" || starts_with(src, "nemofw_") || src == "nemo_2407" ||
             src == "nemo_longseq");
  // The loss: Megatron-Bridge's performance scripts set cross_entropy_fusion_impl "te" for every
  // workload (utils/overrides.py _set_common_perf_overrides; the dry-run configs show it with
  // cross_entropy_loss_fusion true), and NeMo 2.0's do too (scripts/performance/helpers.py
  // set_perf_optimization_configs, "enable cross entropy fusion with TE kernel") once Megatron-Core
  // had the option (March 2025: Megatron-LM issue #1481): the megatron-core preset's loss. The
  // older runs use Megatron's own fp32 loss: the Megatron-LM README's (Megatron-Core r0.8),
  // NeMo 24.07's launcher configs, the long-sequence tables and NeMo 25.02 (whose default
  // cross_entropy_loss_fusion is Megatron's native fused loss, which keeps the fp32 logits
  // too; timed as the unfused one).
  if (src == "megatron_readme_h100" || src == "nemo_2407" || src == "nemo_longseq" ||
      src == "nemofw_2502") {
    r.cross_entropy = "unfused";
  }
  r.flex_dispatcher = flex_dispatcher(row) || dropless_deepep_2509(row);
  // The flex rows' backend: HybridEP in every performance config of the tables' models
  // (qwen3_, deepseek_, gpt_oss_ and nemotron_3_workload_base_configs.py:
  // moe_flex_dispatcher_backend "hybridep"; Nemotron 3 on B300 switches to "deepep" in a
  // container the tables do not name), DeepEP in 25.09's dropless DeepSeek-V3 run ("enable
  // DeepEP") and in DeepSeek-V3's B200 V2 entry (PP 8 × VP 2, the 26.04.01 row).
  if (r.flex_dispatcher) {
    r.flex_backend = dropless_deepep_2509(row) || deepseek_b200_v2(row) ? "deepep" : "hybridep";
  }
  r.recompute_modules = recipe_recompute_modules(row);
  if (eager_moe_a2a_overlap(row)) {
    r.overlap_moe_comm = true;
    r.note = "expert all-to-alls overlapped with the other micro-batch (moe_a2a_overlap)";
  }
  if (tokendrop_full_graphs(row)) {
    r.full_cuda_graphs = true;
    r.note = "token drop, full-iteration CUDA graphs";
  }
  const GptOssRecipe gpt_oss = gpt_oss_recipe(row);
  if (full_iteration_moe(row) || gpt_oss == GptOssRecipe::kFullIteration) {
    r.full_cuda_graphs = true;
    r.fused_grouped_gemm = true;
    r.overlap_moe_comm = !contains(row.model, "DeepSeekV4");
    r.note = r.overlap_moe_comm
                 ? "full-iteration CUDA graphs, fused grouped MLP, overlapped all-to-alls"
                 : "full-iteration CUDA graphs, fused grouped MLP";
  }
  if (gpt_oss != GptOssRecipe::kNone && gpt_oss != GptOssRecipe::kOverlap) {
    r.flex_dispatcher = true;
    r.flex_backend = "hybridep";
  }
  if (gpt_oss == GptOssRecipe::kB300Fused) {
    r.fused_grouped_gemm = true;
    r.overlap_moe_comm = true;
    r.note = "fused grouped MLP, overlapped all-to-alls";
  }
  if (gpt_oss == GptOssRecipe::kOverlap) {
    r.overlap_moe_comm = true;
    r.note = "expert all-to-alls overlapped with the other micro-batch (moe_a2a_overlap)";
  }
  if (!r.full_cuda_graphs) r.cuda_graph_scope = recipe_graph_scope(row);
  return r;
}

}  // namespace preflight
