#include "validation/published.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "report/validation_report.h"
#include "validation/flops_conventions.h"
#include "validation/published_validate.h"
#include "validation/recipes.h"

namespace preflight {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string sample() {
  return std::string(PREFLIGHT_SOURCE_DIR) + "/tests/data/published_sample.csv";
}

const PublishedRow& row_at_line(const std::vector<PublishedRow>& rows, int line) {
  for (const PublishedRow& r : rows) {
    if (r.line == line) return r;
  }
  ADD_FAILURE() << "no row at line " << line;
  return rows.front();
}

TEST(LoadPublishedCsv, ReadsRowsAndPairsModelTflopsWithTokens) {
  StatusOr<std::vector<PublishedRow>> rows = load_published_csv(sample());
  ASSERT_TRUE(rows.ok()) << rows.status().message();
  ASSERT_EQ(rows->size(), 12u);
  const PublishedRow& tokens = row_at_line(*rows, 2);
  EXPECT_EQ(tokens.model, "LLAMA3_8B");
  EXPECT_EQ(tokens.micro_batch, 2);
  EXPECT_EQ(tokens.vpp, 0);  // empty cell
  EXPECT_EQ(tokens.sp, -1);
  EXPECT_NE(tokens.notes.find("FSDP=0"), std::string::npos);  // the quoted notes with ';'
  const PublishedRow& tflops = row_at_line(*rows, 3);
  EXPECT_DOUBLE_EQ(tflops.partner_tokens_per_gpu, 30624);
  EXPECT_EQ(row_at_line(*rows, 8).sp, 1);
}

TEST(LoadPublishedCsv, Errors) {
  EXPECT_EQ(load_published_csv("/nonexistent.csv").status().code(), StatusCode::kNotFound);
}

TEST(PublishedCase, TokensPerGpuIsIterationTime) {
  StatusOr<std::vector<PublishedRow>> rows = load_published_csv(sample());
  ASSERT_TRUE(rows.ok());
  // 128 · 8192 tokens / (30,624 tokens/s/GPU · 8 GPUs) = 4.280 s.
  StatusOr<PublishedCase> c = published_case(row_at_line(*rows, 2));
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_NEAR(c->measured_ms, 128.0 * 8192 / (30624.0 * 8) * 1e3, 1e-6);
  EXPECT_EQ(c->family, "llama3");
  EXPECT_EQ(c->precision, "fp8");
  EXPECT_EQ(c->stack, "megatron-core");
  EXPECT_EQ(c->scenario.parallelism.dp, 8);
  EXPECT_TRUE(c->scenario.parallelism.distributed_optimizer);
  EXPECT_TRUE(c->scenario.parallelism.overlap_grad_reduce);
  // Megatron-Bridge's performance scripts reduce gradients in bf16 (grad_reduce_in_fp32=False).
  EXPECT_FALSE(c->scenario.parallelism.grad_reduce_in_fp32);
  // Their per-tensor FP8 entries are FP8_CS: Transformer Engine's current scaling.
  EXPECT_EQ(c->scenario.training.fp8_recipe, Fp8Recipe::kCurrent);
  // Its model-TFLOP/s row is the same run: the same time.
  StatusOr<PublishedCase> t = published_case(row_at_line(*rows, 3));
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_DOUBLE_EQ(t->measured_ms, c->measured_ms);
  EXPECT_EQ(t->yaml, c->yaml);
}

TEST(PublishedCase, Nvl72JobAndMegatronFsdp) {
  StatusOr<std::vector<PublishedRow>> rows = load_published_csv(sample());
  ASSERT_TRUE(rows.ok());
  StatusOr<PublishedCase> c = published_case(row_at_line(*rows, 4));
  ASSERT_TRUE(c.ok()) << c.status().message();
  // 64 GPUs of one GB200 NVL72 rack; FSDP=64: Megatron-FSDP, sharded like ZeRO-3.
  EXPECT_EQ(c->scenario.cluster.nodes, 1);
  EXPECT_EQ(c->scenario.cluster.gpus_per_node, 64);
  EXPECT_EQ(c->scenario.parallelism.zero_stage, 3);
}

TEST(PublishedCase, SaysWhetherTheExpertAllToAllsCrossTheNics) {
  StatusOr<std::vector<PublishedRow>> rows = load_published_csv(sample());
  ASSERT_TRUE(rows.ok());
  const auto span = [&](int line) {
    StatusOr<PublishedCase> c = published_case(row_at_line(*rows, line));
    EXPECT_TRUE(c.ok()) << c.status().message();
    return c.ok() ? c->expert_parallel : std::string();
  };
  EXPECT_EQ(span(2), "none");     // LLaMA-3 8B: dense
  EXPECT_EQ(span(6), "nvlink");   // Nemotron 3 Nano, EP 8 on 8 GB300s of one rack
  EXPECT_EQ(span(11), "nvlink");  // Nemotron 3 Nano, EP 8 in each DGX H100 of two
  EXPECT_EQ(span(12), "nics");    // Qwen3-235B, EP 32 (ETP 1) over four DGX H100s
  // The rule itself: a group of ep·etp ranks (etp 0 = tp) stays in a node when it fits.
  StatusOr<PublishedCase> c = published_case(row_at_line(*rows, 12));
  ASSERT_TRUE(c.ok());
  Scenario s = c->scenario;
  s.parallelism.ep = 4;
  s.parallelism.etp = 2;
  EXPECT_EQ(expert_parallel_span(s), "nvlink");  // 8 ranks in an 8-GPU node
  s.parallelism.etp = 0;                         // etp = tp = 2
  s.parallelism.ep = 8;
  EXPECT_EQ(expert_parallel_span(s), "nics");  // 16 ranks
  s.parallelism.ep = 1;
  EXPECT_EQ(expert_parallel_span(s), "none");
}

TEST(PublishedCase, NemotronRecipesRunTheFlexDispatcherAndTheirRecomputeModules) {
  StatusOr<std::vector<PublishedRow>> rows = load_published_csv(sample());
  ASSERT_TRUE(rows.ok());
  // nemotron_3_workload_base_configs.py: HybridEP on every GPU; on H100 (FP8_CS) selective
  // recompute of moe, layernorm, core_attn and moe_act; on GB300 no recompute.
  StatusOr<PublishedCase> gb300 = published_case(row_at_line(*rows, 6));
  ASSERT_TRUE(gb300.ok()) << gb300.status().message();
  EXPECT_TRUE(gb300->scenario.model.moe.flex_dispatcher);
  EXPECT_EQ(gb300->scenario.parallelism.recompute, Recompute::kNone);
  StatusOr<PublishedCase> h100 = published_case(row_at_line(*rows, 11));
  ASSERT_TRUE(h100.ok()) << h100.status().message();
  const ParallelismConfig& p = h100->scenario.parallelism;
  EXPECT_TRUE(h100->scenario.model.moe.flex_dispatcher);
  EXPECT_EQ(p.recompute, Recompute::kSelective);
  EXPECT_EQ(recompute_modules_string(p), "core_attn,layernorm,moe_act,moe");
}

TEST(PublishedCase, MoeRecipesOverlapAndGraphAsTheyRan) {
  StatusOr<std::vector<PublishedRow>> rows = load_published_csv(sample());
  ASSERT_TRUE(rows.ok());
  // qwen3_workload_base_configs.py: Qwen3-235B on H100 (TP 2, PP 8, VP 4, EP 32) runs the
  // alltoall dispatcher with moe_a2a_overlap=True; the other MoE rows of the sample do not.
  StatusOr<PublishedCase> h100 = published_case(row_at_line(*rows, 12));
  ASSERT_TRUE(h100.ok()) << h100.status().message();
  EXPECT_TRUE(h100->scenario.parallelism.overlap_moe_comm);
  EXPECT_FALSE(h100->scenario.model.moe.flex_dispatcher);
  StatusOr<PublishedCase> nano = published_case(row_at_line(*rows, 11));
  ASSERT_TRUE(nano.ok()) << nano.status().message();
  EXPECT_FALSE(nano->scenario.parallelism.overlap_moe_comm);
  EXPECT_FALSE(h100->scenario.training.cuda_graphs);
  // Container 25.09's token-drop Qwen3-30B on B200: one CUDA graph for the whole iteration
  // (static shapes), which the dropless recipes after it cannot capture.
  StatusOr<PublishedCase> tokendrop = published_case(row_at_line(*rows, 13));
  ASSERT_TRUE(tokendrop.ok()) << tokendrop.status().message();
  EXPECT_TRUE(tokendrop->scenario.training.cuda_graphs);
  EXPECT_GT(tokendrop->scenario.model.moe.capacity_factor, 0);
}

// gpt_oss_workload_base_configs.py: each row's columns single out its V2 entry (EP 16 on GB300
// in MXFP8, EP 8 on B300, GBS 1,280 with micro-batch 4 on GB200), and the entry sets the rest.
// The Megatron-FSDP recipes offload activations where their configuration tables say so:
// LLaMA-3.1 405B in FP8 on 128 GB200s (TP 2) offloads 95 of its 126 layers in NeMo 2's table
// (model_configs_gb200.csv) as in Megatron-Bridge's; LLaMA-3 70B in NeMo 2's offloads none.
TEST(RecipeDefaults, MegatronFsdpOffloadsTheLayersItsTableGives) {
  PublishedRow row;
  row.gpu = "GB200";
  row.precision = "fp8";
  // {ZeRO stage, layers offloaded} of the row as `source` gives it.
  auto recipe = [&](const char* source, const char* model, int tp, const char* notes) {
    row.source = source;
    row.model = model;
    row.tp = tp;
    row.notes = notes;
    const RecipeDefaults r = recipe_defaults(row);
    return std::make_pair(r.zero_stage, r.offload_layers);
  };
  using P = std::pair<int, int>;
  EXPECT_EQ(recipe("nemofw_2507", "LLAMA3.1-405B", 2, "GA=1; FSDP=1 (Megatron FSDP)"), P(3, 95));
  EXPECT_EQ(recipe("mbridge_perf", "LLAMA3.1_405B", 2, "container 26.04; FSDP=64"), P(3, 95));
  EXPECT_EQ(recipe("nemofw_2504", "LLAMA3-70B", 1, "GA=2; FSDP=1 (Megatron FSDP)"), P(3, 0));
  EXPECT_EQ(recipe("nemofw_2504", "LLAMA3-70B", 1, "GA=2; FSDP=0"), P(0, 0));
}

TEST(RecipeDefaults, TheLossIsTransformerEnginesWhereTheRecipesSetIt) {
  // Megatron-Bridge (utils/overrides.py) and NeMo 2.0 from 25.04 set cross_entropy_fusion_impl
  // "te", the megatron-core preset's loss (empty: the preset's); the older runs keep Megatron's
  // fp32 loss.
  PublishedRow row;
  row.gpu = "H100-SXM5-80GB";
  row.precision = "fp8";
  row.model = "LLAMA3-8B";
  for (const char* source : {"mbridge_perf", "nemofw_2504", "nemofw_2507"}) {
    row.source = source;
    EXPECT_EQ(recipe_defaults(row).cross_entropy, "") << source;
  }
  for (const char* source : {"megatron_readme_h100", "nemo_2407", "nemo_longseq", "nemofw_2502"}) {
    row.source = source;
    EXPECT_EQ(recipe_defaults(row).cross_entropy, "unfused") << source;
  }
}

TEST(RecipeDefaults, GptOssRunsAsItsWorkloadConfigsSay) {
  PublishedRow row;
  row.source = "mbridge_perf";
  row.model = "GPT OSS 120B";
  row.notes = "container 26.06; Pre-Training Performance";
  row.micro_batch = 4;
  row.global_batch = 1280;
  const auto defaults = [&](const char* gpu, const char* precision, int ep) {
    row.gpu = gpu;
    row.precision = precision;
    row.ep = ep;
    return recipe_defaults(row);
  };
  // MXFP8 on NVL72: full-iteration graphs, HybridEP, the fused grouped MLP, moe_a2a_overlap.
  const RecipeDefaults gb300 = defaults("GB300", "MXFP8", 16);
  EXPECT_TRUE(gb300.full_cuda_graphs);
  EXPECT_TRUE(gb300.flex_dispatcher);
  EXPECT_TRUE(gb300.fused_grouped_gemm);
  EXPECT_TRUE(gb300.overlap_moe_comm);
  EXPECT_EQ(gb300.recompute_modules, 0u);
  // MXFP8 on B300: the same without the graphs (commented out in its entry).
  const RecipeDefaults b300 = defaults("B300", "MXFP8", 8);
  EXPECT_FALSE(b300.full_cuda_graphs);
  EXPECT_TRUE(b300.flex_dispatcher && b300.fused_grouped_gemm && b300.overlap_moe_comm);
  // BF16 on B300 with EP 8: HybridEP only; with the V1 layout's EP 64 the alltoall dispatcher.
  const RecipeDefaults b300_bf16 = defaults("B300", "BF16", 8);
  EXPECT_TRUE(b300_bf16.flex_dispatcher);
  EXPECT_FALSE(b300_bf16.overlap_moe_comm || b300_bf16.fused_grouped_gemm);
  EXPECT_FALSE(defaults("B300", "BF16", 64).flex_dispatcher);
  // BF16 on GB200: moe_a2a_overlap with the alltoall dispatcher and its recompute modules.
  const RecipeDefaults gb200 = defaults("GB200", "BF16", 64);
  EXPECT_TRUE(gb200.overlap_moe_comm);
  EXPECT_FALSE(gb200.flex_dispatcher || gb200.full_cuda_graphs);
  EXPECT_NE(gb200.recompute_modules, 0u);
  // H100 (PP 4, EP 8): none of these.
  const RecipeDefaults h100 = defaults("H100-SXM5-80GB", "BF16", 8);
  EXPECT_FALSE(h100.overlap_moe_comm || h100.flex_dispatcher || h100.full_cuda_graphs);
}

TEST(RecipeDefaults, Qwen3OverlapsItsAllToAllsWhereItsConfigurationsDid) {
  // qwen3_workload_base_configs.py: moe_a2a_overlap on H100 from 25.11; on B200 in 25.11 only
  // (Megatron-Bridge PR #1760 turned it off "due to CPU overhead"); on B300 while its entries
  // matched B200's old ones, with VP 4, until PR #2669 took both off for 26.04.
  PublishedRow row;
  row.source = "mbridge_perf";
  row.model = "Qwen3_235B_a22B";
  row.precision = "MXFP8";
  const auto overlaps = [&](const char* gpu, const char* container) {
    row.gpu = gpu;
    row.notes = std::string("container ") + container + "; Pre-Training Performance";
    return recipe_defaults(row).overlap_moe_comm;
  };
  EXPECT_TRUE(overlaps("H100-SXM5-80GB", "26.04"));
  EXPECT_TRUE(overlaps("B200", "25.11"));
  EXPECT_FALSE(overlaps("B200", "26.02"));
  EXPECT_TRUE(overlaps("B300", "26.02"));
  EXPECT_TRUE(overlaps("B300", "26.02.01"));
  EXPECT_FALSE(overlaps("B300", "26.04"));
  EXPECT_FALSE(overlaps("B300", "26.04.01"));
  EXPECT_FALSE(overlaps("GB300", "26.02"));
}

TEST(RecipeDefaults, DeepSeekV4FlashRunsItsPresetWithFullIterationGraphs) {
  // The tables give DeepSeek-V4 Flash no dimensions; the deepseek-v4-flash preset (its
  // config.json) does. Its one performance recipe
  // (deepseek_v4_flash_pretrain_128gpu_gb200_fp8mx_paged_stash_config): MXFP8, TP 1, PP 1, EP 64,
  // HybridEP, full-iteration CUDA graphs, TE's fused grouped MLP, mla_up_proj recompute, no
  // moe_a2a_overlap.
  PublishedRow row;
  row.source = "mbridge_perf";
  row.model = "DeepSeekV4 Flash";
  row.notes = "container 26.08; Pre-Training Performance";
  row.gpu = "GB200";
  row.precision = "MXFP8";
  row.num_gpus = 128;
  row.tp = 1;
  row.pp = 1;
  row.ep = 64;
  row.seq = 4096;
  row.micro_batch = 1;
  row.global_batch = 2048;
  row.metric = "tokens_per_sec_per_gpu";
  row.value = 7776;
  const RecipeDefaults r = recipe_defaults(row);
  EXPECT_TRUE(r.full_cuda_graphs);
  EXPECT_TRUE(r.fused_grouped_gemm);
  EXPECT_FALSE(r.overlap_moe_comm);
  EXPECT_TRUE(r.flex_dispatcher);
  EXPECT_EQ(r.flex_backend, "hybridep");
  EXPECT_EQ(r.recompute_modules, 1u << static_cast<int>(RecomputeModule::kMlaUpProj));
  StatusOr<PublishedCase> c = published_case(row);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->model, "deepseek-v4-flash");
  EXPECT_EQ(c->family, "deepseek");
  EXPECT_TRUE(c->scenario.model.csa.enabled());
  EXPECT_EQ(c->scenario.model.hyper_connections, 4);
  // 2,048 × 4,096 tokens at 7,776 per GPU-second on 128 GPUs.
  EXPECT_NEAR(c->measured_ms, 2048.0 * 4096 / (7776.0 * 128) * 1e3, 1e-9);
}

TEST(RecipeDefaults, KimiK2RunsHybridEpAndRecomputesItsMlaUpProjections) {
  PublishedRow row;
  row.source = "mbridge_perf";
  row.model = "Kimi_K2";
  row.notes = "container 26.04; Pre-Training Performance";
  row.precision = "MXFP8";
  row.gpu = "GB300";
  row.micro_batch = 2;
  row.global_batch = 4096;
  // kimi_workload_base_configs.py, the GB300 entry of the tables' layout (global batch 4,096,
  // micro-batch 2): moe_flex_dispatcher_backend hybridep, recompute_modules [mla_up_proj], no
  // graphs, no all-to-all overlap.
  const RecipeDefaults gb300 = recipe_defaults(row);
  EXPECT_TRUE(gb300.flex_dispatcher);
  EXPECT_EQ(gb300.flex_backend, "hybridep");
  EXPECT_EQ(gb300.recompute_modules, 1u << static_cast<int>(RecomputeModule::kMlaUpProj));
  EXPECT_FALSE(gb300.full_cuda_graphs || gb300.overlap_moe_comm);
  EXPECT_EQ(gb300.cuda_graph_scope, 0u);
  // Its earlier entry (global batch 2,048) recomputed moe_act; H100 adds mlp.
  row.global_batch = 2048;
  EXPECT_EQ(recipe_defaults(row).recompute_modules,
            1u << static_cast<int>(RecomputeModule::kMoeAct));
  row.gpu = "H100-SXM5-80GB";
  EXPECT_EQ(recipe_defaults(row).recompute_modules,
            (1u << static_cast<int>(RecomputeModule::kMlaUpProj)) |
                (1u << static_cast<int>(RecomputeModule::kMlp)));
  EXPECT_FALSE(recipe_defaults(row).flex_dispatcher);
}

TEST(RecipeDefaults, DeepSeekV3OnGb300RecomputesItsMlaUpProjectionsAtMicroBatchTwo) {
  PublishedRow row;
  row.source = "mbridge_perf";
  row.model = "DeepSeekV3";
  row.notes = "container 26.04.01; Pre-Training Performance";
  row.precision = "MXFP8";
  row.gpu = "GB300";
  row.pp = 2;
  row.micro_batch = 2;
  row.global_batch = 4096;
  // deepseek_workload_base_configs.py, the version of the tables' layout (PP 2 x VP 8, EP 32,
  // micro-batch 2: DEEPSEEK_V3_PRETRAIN_CONFIG_GB300_FP8_MX_V2 = GB300_V1 at global batch 4,096)
  // recomputes mla_up_proj; the later entry (micro-batch 1, full-iteration graphs) nothing.
  EXPECT_EQ(recipe_defaults(row).recompute_modules,
            1u << static_cast<int>(RecomputeModule::kMlaUpProj));
  EXPECT_EQ(recipe_defaults(row).cuda_graph_scope, 0u);  // that entry runs no graphs
  // The performance executors export NCCL_NVLS_ENABLE=0; the Megatron-LM README's runs do not.
  EXPECT_FALSE(recipe_defaults(row).nvls);
  PublishedRow readme = row;
  readme.source = "megatron_readme_h100";
  EXPECT_TRUE(recipe_defaults(readme).nvls);
  row.micro_batch = 1;
  row.notes = "container 26.06; Pre-Training Performance";
  EXPECT_EQ(recipe_defaults(row).recompute_modules, 0u);
  // GB200's entry of the same version (PP 4 x VP 4, EP 64) captures attention, the router and
  // the dispatcher's preprocessing in Transformer Engine's graphs.
  row.gpu = "GB200";
  row.pp = 4;
  row.notes = "container 26.04; Pre-Training Performance";
  EXPECT_EQ(recipe_defaults(row).cuda_graph_scope,
            kGraphAttn | kGraphMoeRouter | kGraphMoePreprocess);
  EXPECT_EQ(recipe_defaults(row).flex_backend, "hybridep");
  // B200's V2 entry (PP 8 x VP 2, EP 32; the 26.04.01 row): DeepEP, the all-to-alls overlapped,
  // the same graphs, mla_up_proj and mlp recomputed.
  row.gpu = "B200";
  row.pp = 8;
  row.micro_batch = 1;
  row.notes = "container 26.04.01; Pre-Training Performance";
  const RecipeDefaults b200 = recipe_defaults(row);
  EXPECT_EQ(b200.flex_backend, "deepep");
  EXPECT_TRUE(b200.overlap_moe_comm);
  EXPECT_EQ(b200.cuda_graph_scope, kGraphAttn | kGraphMoeRouter | kGraphMoePreprocess);
  EXPECT_EQ(b200.recompute_modules, (1u << static_cast<int>(RecomputeModule::kMlaUpProj)) |
                                        (1u << static_cast<int>(RecomputeModule::kMlp)));
}

TEST(RecipeDefaults, NemotronThreeUltraRunsMegatronFsdpHybridEpAndRecomputesMoeAct) {
  PublishedRow row;
  row.source = "mbridge_perf";
  row.model = "Nemotron_3_Ultra";
  row.notes = "container 26.08; Pre-Training Performance";
  row.precision = "MXFP8";
  row.gpu = "GB300";
  row.tp = 1;
  row.ep = 64;
  // nemotron_3_workload_base_configs.py, BASE_NEMOTRON_3_ULTRA_CONFIG: use_megatron_fsdp,
  // hybridep, recompute_modules [moe_act], no graphs (its fused grouped MLP is not applied).
  const RecipeDefaults r = recipe_defaults(row);
  EXPECT_EQ(r.zero_stage, 3);
  EXPECT_TRUE(r.flex_dispatcher);
  EXPECT_EQ(r.flex_backend, "hybridep");
  EXPECT_EQ(r.recompute_modules, 1u << static_cast<int>(RecomputeModule::kMoeAct));
  EXPECT_FALSE(r.fused_grouped_gemm || r.full_cuda_graphs);
  EXPECT_EQ(r.cuda_graph_scope, 0u);
  // GB200's TP 2 row has no published entry.
  row.gpu = "GB200";
  row.tp = 2;
  EXPECT_EQ(recipe_defaults(row).zero_stage, 0);
  EXPECT_FALSE(recipe_defaults(row).flex_dispatcher);
}

TEST(PublishedCase, RowsThatCannotBeSimulatedSayWhy) {
  StatusOr<std::vector<PublishedRow>> rows = load_published_csv(sample());
  ASSERT_TRUE(rows.ok());
  EXPECT_THAT(published_case(row_at_line(*rows, 5)).status().message(),
              HasSubstr("no parallel configuration"));
}

TEST(PublishedCase, MegatronPaperConventions) {
  StatusOr<std::vector<PublishedRow>> rows = load_published_csv(sample());
  ASSERT_TRUE(rows.ok());
  // Korthikanti et al. Table 5, GPT-3 175B on 64 A100s: 13.75 s per iteration, MFU 51.4 %,
  // HFU 52.8 %. Both percentages turn back into that time within the table's rounding.
  StatusOr<PublishedCase> time = published_case(row_at_line(*rows, 10));
  StatusOr<PublishedCase> mfu = published_case(row_at_line(*rows, 8));
  StatusOr<PublishedCase> hfu = published_case(row_at_line(*rows, 9));
  ASSERT_TRUE(time.ok() && mfu.ok() && hfu.ok()) << time.status().message();
  EXPECT_DOUBLE_EQ(time->measured_ms, 13750);
  EXPECT_NEAR(mfu->measured_ms / time->measured_ms, 1.0, 0.002);
  EXPECT_NEAR(hfu->measured_ms / time->measured_ms, 1.0, 0.002);
  EXPECT_EQ(time->stack, "megatron-lm-2021");
  EXPECT_FALSE(time->scenario.training.flash_attention);
  EXPECT_EQ(time->scenario.parallelism.recompute, Recompute::kSelective);
  EXPECT_TRUE(time->scenario.parallelism.sequence_parallel);
  EXPECT_TRUE(time->scenario.parallelism.grad_reduce_in_fp32);  // --fp16: fp32 main gradients
  // Narayanan et al. Eq. 3: 96·B·s·l·h²·(1 + s/6h + V/16lh) at 148 TFLOP/s on 1,536 GPUs.
  StatusOr<PublishedCase> eq3 = published_case(row_at_line(*rows, 7));
  ASSERT_TRUE(eq3.ok()) << eq3.status().message();
  const double f = 96.0 * 2304 * 2048 * 96 * 12288.0 * 12288 *
                   (1 + 2048 / (6 * 12288.0) + 51200 / (16 * 96 * 12288.0));
  EXPECT_NEAR(eq3->measured_ms, f / (148e12 * 1536) * 1e3, 1e-6);
}

TEST(PublishedCase, MegatronReadmeRowsInterleaveOneLayerPerVirtualStage) {
  // The README's GPT-119B row: 92 layers on TP 8 x PP 4 x DP 48, batch 768, no VP stated. Its
  // 23 layers per stage admit only one interleaving (one layer per virtual stage, VP 23), and
  // the README's strong-scaling figures rule the non-interleaved 1F1B out (recipes.cc).
  PublishedRow row;
  row.source = "megatron_readme_h100";
  row.model = "GPT-119B";
  row.layers = 92;
  row.hidden = 10240;
  row.heads = 80;
  row.kv_heads = 80;
  row.ffn = 40960;
  row.vocab = 131072;
  row.seq = 4096;
  row.gpu = "H100-SXM5-80GB";
  row.num_gpus = 1536;
  row.tp = 8;
  row.pp = 4;
  row.dp = 48;
  row.global_batch = 768;
  row.precision = "bf16 (inferred)";
  row.metric = "tflops_per_gpu";
  row.value = 420.5;
  StatusOr<PublishedCase> c = published_case(row);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->scenario.parallelism.vpp, 23);
  EXPECT_EQ(c->scenario.parallelism.schedule, Schedule::kInterleaved);
  EXPECT_TRUE(c->scenario.parallelism.overlap_p2p);
  EXPECT_THAT(c->notes, HasSubstr("1 layer per virtual stage (VP 23)"));
  // A stated VP stays; PP 1 has nothing to interleave; other sources keep 1F1B without a VP.
  row.vpp = 4;
  c = published_case(row);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->scenario.parallelism.vpp, 4);
  row.vpp = 0;
  row.pp = 1;
  row.dp = 192;
  c = published_case(row);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->scenario.parallelism.vpp, 1);
  EXPECT_EQ(c->scenario.parallelism.schedule, Schedule::kOneFOneB);
  row.pp = 4;
  row.dp = 48;
  row.source = "nemo_2407";
  row.metric = "tokens_per_sec_per_gpu";
  row.value = 1000;
  c = published_case(row);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->scenario.parallelism.vpp, 1);
  EXPECT_FALSE(c->scenario.parallelism.overlap_p2p);
}

TEST(PublishedCase, PerTensorFp8RunsTheScalingItsSourceStates) {
  // LLaMA-3 8B on 8 H100s in FP8: Megatron-Bridge's FP8 (and FP8-CS) entries and NeMo 25.04's
  // table ran current scaling; NeMo 24.07 (before the recipe) and the sources that state none
  // keep delayed scaling, Megatron-Core's default.
  PublishedRow row;
  row.model = "LLAMA3_8B";
  row.layers = 32;
  row.hidden = 4096;
  row.heads = 32;
  row.kv_heads = 8;
  row.ffn = 14336;
  row.vocab = 128256;
  row.seq = 8192;
  row.gpu = "H100-SXM5-80GB";
  row.num_gpus = 8;
  row.tp = 1;
  row.pp = 1;
  row.dp = 8;
  row.micro_batch = 1;
  row.global_batch = 128;
  row.metric = "tokens_per_sec_per_gpu";
  row.value = 14000;
  const struct {
    const char* source;
    const char* precision;
    Fp8Recipe recipe;
  } cases[] = {{"mbridge_perf", "FP8", Fp8Recipe::kCurrent},
               {"mbridge_perf", "FP8-CS", Fp8Recipe::kCurrent},
               {"nemofw_2504", "fp8", Fp8Recipe::kCurrent},
               {"nemo_2407", "fp8", Fp8Recipe::kDelayed},
               {"nemofw_2502", "fp8", Fp8Recipe::kDelayed}};
  for (const auto& k : cases) {
    row.source = k.source;
    row.precision = k.precision;
    row.notes = std::string(k.source) == "mbridge_perf" ? "container 26.02" : "";
    StatusOr<PublishedCase> c = published_case(row);
    ASSERT_TRUE(c.ok()) << k.source << ": " << c.status().message();
    EXPECT_EQ(c->scenario.training.precision, Precision::kFp8) << k.source;
    EXPECT_EQ(c->scenario.training.fp8_recipe, k.recipe) << k.source << " " << k.precision;
  }
}

TEST(PublishedCase, LlmFoundryHfuCountsARecomputePassOnlyWithCheckpointing) {
  // llm-foundry's tables: HFU counts the recompute pass (factor 4 for 3) under activation
  // checkpointing and equals MFU without it. MPT-70B (AC on): MFU 41.25 %, HFU 55.0 %, 515,636
  // tokens/s; MPT-7B (AC off): HFU 42.2 %, 4,951,479 tokens/s. Each percentage turns back into
  // the tokens/s row's time within the tables' rounding (0.5 %).
  StatusOr<std::vector<PublishedRow>> rows =
      load_published_csv(std::string(PREFLIGHT_SOURCE_DIR) + "/tests/data/llmfoundry_sample.csv");
  ASSERT_TRUE(rows.ok()) << rows.status().message();
  StatusOr<PublishedCase> mfu70 = published_case(row_at_line(*rows, 2));
  StatusOr<PublishedCase> hfu70 = published_case(row_at_line(*rows, 3));
  StatusOr<PublishedCase> time70 = published_case(row_at_line(*rows, 4));
  StatusOr<PublishedCase> hfu7 = published_case(row_at_line(*rows, 5));
  StatusOr<PublishedCase> time7 = published_case(row_at_line(*rows, 6));
  ASSERT_TRUE(mfu70.ok() && hfu70.ok() && time70.ok() && hfu7.ok() && time7.ok());
  EXPECT_NEAR(time70->measured_ms, 4096.0 * 2048 / 515636 * 1e3, 1e-6);
  EXPECT_NEAR(mfu70->measured_ms / time70->measured_ms, 1.0, 0.005);
  EXPECT_NEAR(hfu70->measured_ms / time70->measured_ms, 1.0, 0.005);
  EXPECT_NEAR(hfu7->measured_ms / time7->measured_ms, 1.0, 0.005);
  EXPECT_EQ(time7->stack, "pytorch-fsdp");
  EXPECT_EQ(time7->scenario.parallelism.recompute, Recompute::kNone);
  EXPECT_EQ(time70->scenario.parallelism.recompute, Recompute::kFull);
}

TEST(PublishedCase, LlmFoundryA100TablesRanFlashAttentionInTritonAndTheH100OnesFlashAttention2) {
  // The A100 tables come from the 2023 benchmark script (attn_impl 'triton'), the H100 ones from
  // the later one (attn_impl 'flash', FlashAttention-2): the same MPT-7B row on each GPU.
  StatusOr<std::vector<PublishedRow>> rows =
      load_published_csv(std::string(PREFLIGHT_SOURCE_DIR) + "/tests/data/llmfoundry_sample.csv");
  ASSERT_TRUE(rows.ok()) << rows.status().message();
  PublishedRow h100 = row_at_line(*rows, 6);
  PublishedRow a100 = h100;
  a100.gpu = "A100-SXM4-80GB";
  EXPECT_EQ(recipe_defaults(a100).attention_kernel, "flash1");
  EXPECT_EQ(recipe_defaults(h100).attention_kernel, "");
  StatusOr<PublishedCase> on_a100 = published_case(a100);
  StatusOr<PublishedCase> on_h100 = published_case(h100);
  ASSERT_TRUE(on_a100.ok() && on_h100.ok()) << on_a100.status().message();
  EXPECT_EQ(on_a100->scenario.training.stack.attention_kernel, AttentionKernel::kFlash1);
  EXPECT_EQ(on_a100->scenario.training.stack.name, "pytorch-fsdp");
  EXPECT_EQ(on_h100->scenario.training.stack.attention_kernel, AttentionKernel::kFlash2);
  // The flash path unpads around the kernel; the Triton path takes the padded tensors.
  EXPECT_FALSE(on_a100->scenario.training.stack.flash_attention_unpad);
  EXPECT_TRUE(on_h100->scenario.training.stack.flash_attention_unpad);
}

TEST(MegatronModelFlops, MatchesPublishedPairs) {
  // LLaMA-3 8B at seq 8192: Megatron-Bridge's tables imply 51.47 GFLOP per token (1,576 TFLOP/s
  // over 30,624 tokens/s: causal attention), NeMo 25.02's 57.91 (1,506 / 26,006: full s²).
  StatusOr<std::vector<PublishedRow>> rows = load_published_csv(sample());
  ASSERT_TRUE(rows.ok());
  StatusOr<PublishedCase> c = published_case(row_at_line(*rows, 2));
  ASSERT_TRUE(c.ok());
  const double tokens = 128.0 * 8192;
  EXPECT_NEAR(megatron_model_flops(c->scenario, 0.5) / tokens / 1e9, 1576e12 / 30624 / 1e9, 0.05);
  EXPECT_NEAR(megatron_model_flops(c->scenario, 1.0) / tokens / 1e9, 1506e12 / 26006 / 1e9, 0.05);
}

TEST(PublishedValidation, CoverageAndGroups) {
  StatusOr<std::vector<PublishedRow>> rows = load_published_csv(sample());
  ASSERT_TRUE(rows.ok());
  ValidationOptions o;
  StatusOr<PublishedValidationResult> r = run_published_validation(*rows, o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->total, 12);
  EXPECT_EQ(r->simulated, 11);  // all but the row with no parallel configuration
  ASSERT_FALSE(r->groups.empty());
  EXPECT_EQ(r->groups[0].by, "all");
  EXPECT_EQ(r->groups[0].rows, 11);
  // The expert-parallel placements split the simulated rows between them.
  int by_ep = 0;
  for (const GroupError& g : r->groups) {
    if (g.by == "ep") by_ep += g.rows;
  }
  EXPECT_EQ(by_ep, 11);
  for (const PublishedPrediction& p : r->rows) {
    if (p.simulated) {
      EXPECT_GT(p.predicted_ms, 0) << p.row.line;
    }
  }
  // Rows of one run share a configuration; the memory model sizes each one.
  EXPECT_EQ(r->configurations, 8);
  EXPECT_GE(r->configurations_not_fitting, 0);
  for (const PublishedPrediction& p : r->rows) {
    if (!p.simulated) continue;
    EXPECT_GT(p.peak_gib, 0) << p.row.line;
    EXPECT_GT(p.hbm_gib, 0) << p.row.line;
    EXPECT_EQ(p.fits, p.peak_gib <= p.hbm_gib) << p.row.line;
  }
}

TEST(PublishedValidation, OverridesReachEveryRowAndAFitRefusesItsOwnConstants) {
  StatusOr<std::vector<PublishedRow>> rows = load_published_csv(sample());
  ASSERT_TRUE(rows.ok());
  // One row: the override lands in its scenario; the YAML stays the row's own.
  const std::vector<std::string> set = {"training.stack.expert_launch_overhead=100us"};
  StatusOr<PublishedCase> plain = published_case(row_at_line(*rows, 12));
  StatusOr<PublishedCase> with = published_case(row_at_line(*rows, 12), set);
  ASSERT_TRUE(plain.ok() && with.ok());
  EXPECT_FALSE(plain->scenario.training.stack.expert_launch_overhead_given);
  EXPECT_TRUE(with->scenario.training.stack.expert_launch_overhead_given);
  EXPECT_EQ(with->scenario.training.stack.expert_launch_overhead, SimTime::microseconds(100));
  EXPECT_EQ(with->yaml, plain->yaml);
  // The whole set: a host cost per expert GEMM moves MoE rows whose experts run eagerly and
  // leaves every dense row as it was.
  ValidationOptions o;
  StatusOr<PublishedValidationResult> base = run_published_validation(*rows, o);
  o.overrides = set;
  StatusOr<PublishedValidationResult> moved = run_published_validation(*rows, o);
  ASSERT_TRUE(base.ok() && moved.ok());
  ASSERT_EQ(base->rows.size(), moved->rows.size());
  int moe_moved = 0;
  for (size_t i = 0; i < base->rows.size(); ++i) {
    const PublishedPrediction& a = base->rows[i];
    const PublishedPrediction& b = moved->rows[i];
    ASSERT_EQ(a.simulated, b.simulated) << a.row.line;
    if (!a.simulated) continue;
    if (a.run.kind == "dense") {
      EXPECT_EQ(a.predicted_ms, b.predicted_ms) << a.row.line;
    } else if (b.predicted_ms > a.predicted_ms) {
      ++moe_moved;
    }
  }
  EXPECT_GT(moe_moved, 0);
  // An override the row cannot take leaves that row unsimulated, with the loader's reason.
  o.overrides = {"parallelism.tp=3"};
  StatusOr<PublishedValidationResult> bad = run_published_validation(*rows, o);
  ASSERT_TRUE(bad.ok());
  int refused_rows = 0;
  for (const PublishedPrediction& p : bad->rows) {
    if (p.row.line != 2) continue;  // LLaMA-3 8B: 32 heads do not split over TP 3
    EXPECT_FALSE(p.simulated);
    EXPECT_THAT(p.reason, HasSubstr("tp"));
    ++refused_rows;
  }
  EXPECT_EQ(refused_rows, 1);
  // A fit sets these constants on every row: an override of one is refused, not overwritten.
  o.overrides = {"cluster.gpu.calibration.gemm_efficiency=0.5"};
  EXPECT_TRUE(check_validation_overrides(o).ok());  // no fit: it applies
  o.calibrate = true;
  Status refused = check_validation_overrides(o);
  EXPECT_FALSE(refused.ok());
  EXPECT_THAT(refused.message(), HasSubstr("cluster.gpu.calibration.gemm_efficiency"));
  EXPECT_FALSE(run_published_validation(*rows, o).ok());
  o.calibrate = false;
  o.folds = 5;
  o.overrides = {"training.stack.launch_overhead=20us"};
  EXPECT_FALSE(check_validation_overrides(o).ok());
  o.overrides = {"cluster.gpu.calibration.kernel_gap=5us"};  // not fitted: it applies
  EXPECT_TRUE(check_validation_overrides(o).ok());
}

TEST(PublishedValidation, BlackwellUltraTakesBlackwellsAttentionFractionAndBothTheMeasuredHbmOne) {
  // The sample's B200 and GB200 dense rows fit Blackwell's GEMM and attention fractions; Blackwell
  // Ultra's attention fraction is Blackwell's as fitted, not the public start the fit would
  // otherwise keep (its one row, GB300's Nemotron 3 Nano, is a hybrid); with no dense row, its
  // GEMM fraction is fitted on the rows it has rather than left at the start. Both take the HBM
  // fraction of PyTorch's eager RMSNorm on a B200 (0.45); Hopper's is fitted on its rows.
  StatusOr<std::vector<PublishedRow>> rows = load_published_csv(sample());
  ASSERT_TRUE(rows.ok());
  ValidationOptions o;
  o.calibrate = true;
  o.max_evaluations = 12;
  StatusOr<PublishedValidationResult> r = run_published_validation(*rows, o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const GpuFit* blackwell = nullptr;
  const GpuFit* ultra = nullptr;
  for (const GpuFit& f : r->fitted) {
    if (f.gpu == "blackwell") blackwell = &f;
    if (f.gpu == "blackwell-ultra") ultra = &f;
  }
  ASSERT_TRUE(blackwell != nullptr && ultra != nullptr);
  const double start = published_constants()[1].start;
  EXPECT_NE(blackwell->constants[1], start);  // fitted on the dense rows
  EXPECT_DOUBLE_EQ(ultra->constants[1], blackwell->constants[1]);
  EXPECT_NE(ultra->constants[0], published_constants()[0].start);
  EXPECT_DOUBLE_EQ(blackwell->constants[2], 0.45);
  EXPECT_DOUBLE_EQ(ultra->constants[2], 0.45);
  for (const GpuFit& f : r->fitted) {
    if (f.gpu == "hopper") {
      EXPECT_NE(f.constants[2], published_constants()[2].start);
    }
  }
  // The report says which constants were taken rather than fitted.
  const std::string text = format_published_validation(*r, /*summary_only=*/true);
  EXPECT_THAT(text, HasSubstr("(blackwell's)"));
  EXPECT_THAT(text, HasSubstr("memory_efficiency=0.45 (measured)"));
  const nlohmann::json j = nlohmann::json::parse(published_validation_json(*r));
  EXPECT_EQ(j["constants"]["blackwell-ultra"]["not_fitted"]["attention_efficiency"], "blackwell");
  EXPECT_EQ(j["constants"]["blackwell"]["not_fitted"]["memory_efficiency"], "measured");
  EXPECT_FALSE(j["constants"]["hopper"].contains("not_fitted"));
}

TEST(PublishedValidation, SaysWhichFittedConstantsSitAtTheirBounds) {
  // A fold whose rows leave Hopper's attention fraction free (no long-sequence rows) ends at
  // the range's top; the report says so, and not for a constant taken from a measurement.
  PublishedValidationResult r;
  const std::vector<PublishedConstant>& c = published_constants();
  r.total = r.simulated = 1;
  r.folds = 1;
  r.fold_families = {"llama2"};
  r.fold_fits = {{GpuFit{"hopper", 109, {0.669, c[1].hi, 0.529, 0.9}},
                  GpuFit{"blackwell-ultra", 184, {0.731, c[1].hi, 0.45, 0.703}}}};
  r.fold_launch_us = {60.2};
  r.fold_grace_factor = {1.37};
  const std::string text = format_published_validation(r, /*summary_only=*/true);
  EXPECT_THAT(text, HasSubstr("attention_efficiency=0.8 (at its bound)"));
  // Blackwell Ultra takes Blackwell's attention fraction: not flagged, even at the bound.
  EXPECT_THAT(text, HasSubstr("attention_efficiency=0.8 (blackwell's) memory_efficiency=0.45 "
                              "(measured) nvfp4"));
  EXPECT_THAT(text, Not(HasSubstr("gemm_efficiency=0.669 (at its bound)")));
}

TEST(PublishedValidation, RepeatSpreadComparesAConfigurationsContainers) {
  // One configuration in three containers (100, 110 and 130 ms: the median 110, deviations 9.1,
  // 0 and 18.2 %), its tokens/s and TFLOP/s rows counted once per container; another in one
  // container only, and a row without a container: neither counts.
  auto run = [](const char* model, const char* container, int line, double ms, double pred) {
    PublishedPrediction p;
    p.simulated = true;
    p.row.source = "mbridge_perf";
    p.row.model = model;
    p.row.gpu = "B200";
    p.row.num_gpus = 8;
    p.row.tp = 1;
    p.row.line = line;
    p.row.precision = "BF16";
    p.row.notes = std::string("container ") + container + "; Pre-Training Performance";
    p.run.measured_ms = ms;
    p.predicted_ms = pred;
    return p;
  };
  std::vector<PublishedPrediction> rows = {
      run("A", "25.11", 2, 100, 100), run("A", "25.11", 3, 100, 100),
      run("A", "26.02", 4, 110, 99),  run("A", "26.04.01", 5, 130, 117),
      run("B", "26.04", 6, 50, 40),   run("A", "", 7, 90, 90),
  };
  rows.back().row.notes = "no container named";
  const RepeatSpread r = repeat_spread(rows);
  EXPECT_EQ(r.configurations, 1);
  EXPECT_EQ(r.runs, 3);
  EXPECT_NEAR(r.mean_pct, (100.0 / 11 + 0 + 200.0 / 11) / 3, 1e-9);
  EXPECT_NEAR(r.median_pct, 100.0 / 11, 1e-9);
  EXPECT_NEAR(r.model_mape_pct, (0 + 10 + 10) / 3.0, 1e-9);
  EXPECT_EQ(repeat_spread({}).runs, 0);
}

TEST(PublishedValidation, CountsConfigurationsTheMemoryModelDoesNotFit) {
  // LLaMA-3 70B unsharded on 8 H100s (TP 1, PP 1, FSDP 0): 141 GB of bf16 weights alone; and
  // LLaMA-3 8B on 8 B200s, which fits.
  const std::string path = ::testing::TempDir() + "published_memory.csv";
  std::FILE* f = std::fopen(path.c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fputs(
      "source,model,layers,hidden,heads,kv_heads,ffn,vocab,seq,gpu,num_gpus,tp,pp,dp,cp,ep,vpp,sp,"
      "micro_batch,global_batch,recompute,precision,metric,value,notes\n"
      "mbridge_perf,LLAMA3_70B,80,8192,64,8,28672,128256,8192,H100-SXM5-80GB,8,1,1,8,1,1,,,1,128,,"
      "FP8-CS,tokens_per_sec_per_gpu,500,container 25.11; FSDP=0\n"
      "mbridge_perf,LLAMA3_8B,32,4096,32,8,14336,128256,8192,B200,8,1,1,8,1,1,,,2,128,,FP8-CS,"
      "tokens_per_sec_per_gpu,30624,container 25.11; FSDP=0\n",
      f);
  std::fclose(f);
  StatusOr<std::vector<PublishedRow>> rows = load_published_csv(path);
  ASSERT_TRUE(rows.ok()) << rows.status().message();
  StatusOr<PublishedValidationResult> r = run_published_validation(*rows, ValidationOptions{});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->configurations, 2);
  EXPECT_EQ(r->configurations_not_fitting, 1);
  ASSERT_EQ(r->rows.size(), 2u);
  EXPECT_FALSE(r->rows[0].fits);
  EXPECT_GT(r->rows[0].peak_gib, 131.0);       // the bf16 weights: 70.6B x 2 B
  EXPECT_DOUBLE_EQ(r->rows[0].hbm_gib, 80.0);  // the preset: 80 GiB
  EXPECT_TRUE(r->rows[1].fits);
}

}  // namespace
}  // namespace preflight
