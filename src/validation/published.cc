#include "validation/published.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <iterator>
#include <map>
#include <sstream>
#include <tuple>

#include "config/loader.h"
#include "validation/csv.h"
#include "validation/flops_conventions.h"
#include "validation/recipes.h"

namespace preflight {
namespace {

constexpr const char* kColumns[] = {
    "source",    "model",  "layers", "hidden",   "heads",       "kv_heads",     "ffn",
    "vocab",     "seq",    "gpu",    "num_gpus", "tp",          "pp",           "dp",
    "cp",        "ep",     "vpp",    "sp",       "micro_batch", "global_batch", "recompute",
    "precision", "metric", "value",  "notes"};
constexpr size_t kNumColumns = sizeof(kColumns) / sizeof(kColumns[0]);

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool contains(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }

std::string where(const PublishedRow& r) { return r.file + ":" + std::to_string(r.line); }

int micro_batch_of(const PublishedRow& r, const RecipeDefaults& d) {
  return r.micro_batch > 0 ? r.micro_batch : d.micro_batch;
}

// A model of the set: the Preflight preset that holds its architecture (empty: a GPT built from
// the row's dimensions) and its family, the unit of grouped cross-validation (every size of a
// family shares one fold, so no constant is fitted on a sibling of the model it predicts).
struct ModelMatch {
  std::string preset;
  std::string family;
  std::string kind;  // dense | moe | hybrid
  std::string why;   // non-empty: the model cannot be simulated, and why
};

ModelMatch match_model(const std::string& name) {
  const std::string n = lower(name);
  auto has = [&](const char* p) { return contains(n, p); };
  // Nemotron 3: hybrid Mamba-2 / attention MoE. Nemotron 3.5 Lightning's recipe reuses the
  // Nano provider with two MTP depths of one shared "*E" module (Megatron-Bridge).
  if (has("nemotron_3_nano")) return {"nemotron3-nano", "nemotron3", "hybrid", ""};
  if (has("nemotron_3_5_lightning")) return {"nemotron3-nano", "nemotron3", "hybrid", ""};
  if (has("nemotron_3_super")) return {"nemotron3-super", "nemotron3", "hybrid", ""};
  if (has("nemotron_3_ultra")) return {"nemotron3-ultra", "nemotron3", "hybrid", ""};
  // DeepSeek-V4 Flash: the tables give no dimensions; the preset holds the released config's.
  if (has("deepseekv4 flash") || has("deepseekv4_flash")) {
    return {"deepseek-v4-flash", "deepseek", "moe", ""};
  }
  if (has("deepseekv3")) return {"deepseek-v3", "deepseek", "moe", ""};
  if (has("kimi")) return {"kimi-k2", "kimi", "moe", ""};
  if (has("qwen3_235b")) return {"qwen3-235b-a22b", "qwen3", "moe", ""};
  if (has("qwen3_30b")) return {"qwen3-30b-a3b", "qwen3", "moe", ""};
  if (has("gpt oss")) return {"gpt-oss-120b", "gpt-oss", "moe", ""};
  if (has("llama4-scout") || has("llama4_scout")) return {"llama4-scout", "llama4", "moe", ""};
  if (has("mixtral-8x7b")) return {"mixtral-8x7b", "mixtral", "moe", ""};
  if (has("mixtral-8x22b")) return {"mixtral-8x22b", "mixtral", "moe", ""};
  if (has("llama3.1") || has("405b")) return {"llama3-405b", "llama3", "dense", ""};
  if (has("llama3-70b") || has("llama3_70b")) return {"llama3-70b", "llama3", "dense", ""};
  if (has("llama3-8b") || has("llama3_8b")) return {"llama3-8b", "llama3", "dense", ""};
  if (has("llama2-70b")) return {"llama2-70b", "llama2", "dense", ""};
  if (has("llama2-13b")) return {"llama2-13b", "llama2", "dense", ""};
  if (has("llama2-7b")) return {"llama2-7b", "llama2", "dense", ""};
  if (has("nemotron-340b")) return {"nemotron4-340b", "nemotron", "dense", ""};
  // Nemotron-15B is Nemotron-4 15B; the 8B and 22B of NeMo 24.07 are NeMo's Nemotron3Config8B /
  // 22B: the same block (squared-ReLU MLP, RoPE, no biases) with the row's dimensions.
  if (has("nemotron-15b") || has("nemotron-8b") || has("nemotron-22b")) {
    return {"nemotron4-15b", "nemotron", "dense", ""};
  }
  if (n.rfind("gpt", 0) == 0) return {"", "gpt", "dense", ""};
  // MosaicML's MPT (llm-foundry): a GPT block without biases, built from the row's dimensions.
  if (n.rfind("mpt-", 0) == 0) return {"", "mpt", "dense", ""};
  return {"", "", "", "model '" + name + "': no Preflight preset for it"};
}

// The cluster preset of a GPU column (H100 means H100 SXM5 80 GB in DGX H100; the A100 rows ran
// on Selene, DGX A100 nodes with eight 200 Gb/s HDR NICs).
std::string cluster_for(const std::string& gpu) {
  if (gpu == "A100-SXM4-80GB" || gpu == "A100-SXM4-40GB") return "dgx-a100";
  if (gpu == "H100-SXM5-80GB") return "dgx-h100";
  if (gpu == "B200") return "dgx-b200";
  if (gpu == "B300") return "dgx-b300";
  if (gpu == "GB200") return "gb200-nvl72";
  if (gpu == "GB300") return "gb300-nvl72";
  return "";
}

// Whether a per-tensor fp8 row ran Transformer Engine's current scaling (training.fp8_recipe
// current) rather than delayed scaling: Megatron-Bridge's performance configurations name their
// per-tensor FP8 entries FP8_CS (scripts/performance/configs/*_workload_base_configs.py, e.g.
// NEMOTRON_3_NANO_PRETRAIN_CONFIG_H100_FP8_CS_V1; the 25.11 tables print FP8-CS, later ones
// FP8), and NeMo 25.04's performance summary states "FP8 per-tensor current scaling". NeMo
// 24.07 predates the recipe (Transformer Engine 2.2, 2025) and ran delayed scaling; the 25.02
// and 25.07 summaries state no recipe and keep the default.
bool current_scaling(const PublishedRow& r) {
  return r.source == "mbridge_perf" || r.source == "nemofw_2504" || lower(r.precision) == "fp8-cs";
}

// training.precision of a precision column: FP8 and FP8-CS are per-tensor fp8 (their recipe:
// current_scaling above), FP8-MX is mxfp8. An empty cell of the 25.09 tables is FP8 per their
// footnote.
std::string precision_for(const PublishedRow& r) {
  const std::string p = lower(r.precision);
  if (p == "fp16 mixed" || p == "fp16/bf16 mixed") return "fp16";
  if (contains(p, "bf16")) return "bf16";
  if (p == "fp8" || p == "fp8-cs") return "fp8";
  if (p == "fp8-mx" || p == "mxfp8") return "mxfp8";
  if (p == "nvfp4") return "nvfp4";
  if (p.empty() && contains(r.notes, "FP8 implied")) return "fp8";
  return "";
}

// The measured iteration time (ms) a row's metric implies, or an error.
StatusOr<double> measured_ms(const PublishedRow& r, const Scenario& s) {
  const double gpus = s.cluster.total_gpus();
  const double tokens = static_cast<double>(s.training.global_batch) * s.training.seq_len;
  const double b = s.training.global_batch, seq = s.training.seq_len;
  const double l = s.model.layers, h = s.model.hidden, v = s.model.vocab;
  const double x = r.value;
  const std::string& m = r.metric;
  const bool paper = r.source.rfind("narayanan2021", 0) == 0;
  if (m == "tokens_per_sec_per_gpu") return tokens / (x * gpus) * 1e3;
  if (m == "tokens_per_sec") return tokens / x * 1e3;
  if (m == "iter_time_s") return x * 1e3;
  if (m == "model_tflops_per_gpu") {
    // Every model-TFLOP/s row of the set has a tokens/s row of the same run; its time is the
    // measurement itself, free of the release-specific FLOP formula (causal or not, gated or
    // not, packed-sequence statistics). Rows without one use Megatron-Core's formula: causal
    // from Megatron-Bridge on, full before.
    if (r.partner_tokens_per_gpu > 0) return tokens / (r.partner_tokens_per_gpu * gpus) * 1e3;
    const double causal = r.source == "mbridge_perf" ? 0.5 : 1.0;
    return megatron_model_flops(s, causal) / (x * 1e12 * gpus) * 1e3;
  }
  double flops = 0;  // per iteration, under the source's convention
  double rate = 0;   // FLOP/s per GPU
  if (m == "tflops_per_gpu" || m == "aggregate_pflops" || m == "pct_of_peak") {
    flops = paper ? narayanan_eq3_flops(b, seq, l, h, v) : megatron_model_flops(s, 1.0);
    if (m == "tflops_per_gpu") rate = x * 1e12;
    if (m == "aggregate_pflops") rate = x * 1e15 / gpus;
    if (m == "pct_of_peak") rate = x / 100 * 312e12;  // Narayanan et al.: A100 peak 312 TFLOP/s
  } else if (m == "mfu_pct" || m == "hfu_pct") {
    if (r.source == "korthikanti2022") {
      flops = m == "mfu_pct" ? korthikanti_model_flops(b, seq, l, h, v)
                             : korthikanti_selective_hfu_flops(b, seq, l, h, v);
      rate = x / 100 * 312e12;  // Korthikanti et al. Table 5: against the A100's 312 TFLOP/s
    } else if (r.source == "llmfoundry_bench") {
      // llm-foundry's README: MFU = (6·N·s + 12·L·d·s²)·samples/s / (GPUs·peak), HFU with 8
      // and 16 (the recompute pass); N = NumParams in the notes; peaks of the SXM parts. Without
      // activation checkpointing there is no recompute pass and the tables print HFU = MFU.
      const size_t at = r.notes.find("NumParams=");
      const double params = at == std::string::npos ? 0 : std::atof(r.notes.c_str() + at + 10);
      const bool recomputes = r.recompute == "full";
      const double pass = m == "hfu_pct" && recomputes ? 4.0 : 3.0;
      flops = b * (pass * 2 * params * seq + pass * 4 * l * h * seq * seq);
      rate = x / 100 * s.cluster.gpu.peak_for(s.training.precision).flops_per_second();
      if (params <= 0) flops = 0;
    } else if (r.source == "megatron_readme_h100" && m == "mfu_pct") {
      flops = megatron_model_flops(s, 1.0);
      rate = x / 100 * 989e12;  // the README's MFU: 408.8 / 989 = 41 %
    }
  }
  if (flops > 0 && rate > 0) return flops / (rate * gpus) * 1e3;
  return invalid_argument(where(r) + ": metric '" + m + "' of source " + r.source +
                          ": no FLOP convention known to turn it into a time");
}

}  // namespace

bool is_published_header(const std::string& header) {
  return header.rfind("source,model,layers,hidden,", 0) == 0;
}

StatusOr<std::vector<PublishedRow>> load_published_csv(const std::string& path) {
  PREFLIGHT_ASSIGN_OR_RETURN(std::vector<CsvRecord> records, read_csv_file(path));
  if (records.empty()) return invalid_argument(path + ": empty file");
  const std::vector<std::string>& header = records[0].cells;
  bool ok = header.size() == kNumColumns;
  for (size_t i = 0; ok && i < kNumColumns; ++i) ok = header[i] == kColumns[i];
  if (!ok) {
    return invalid_argument(path +
                            ":1: expected the published-runs header (source,model,layers,"
                            "hidden,...,metric,value,notes: " +
                            std::to_string(kNumColumns) + " columns)");
  }
  std::vector<PublishedRow> rows;
  for (size_t k = 1; k < records.size(); ++k) {
    const CsvRecord& rec = records[k];
    const std::string at = path + ":" + std::to_string(rec.line);
    if (rec.cells.size() != kNumColumns) {
      return invalid_argument(at + ": expected " + std::to_string(kNumColumns) +
                              " columns, found " + std::to_string(rec.cells.size()));
    }
    const std::vector<std::string>& c = rec.cells;
    PublishedRow r;
    r.file = path;
    r.line = rec.line;
    r.source = c[0];
    r.model = c[1];
    r.gpu = c[9];
    r.recompute = c[20];
    r.precision = c[21];
    r.metric = c[22];
    r.notes = c[24];
    int* ints[] = {&r.layers, &r.hidden,   &r.heads,       &r.kv_heads,    &r.ffn, &r.vocab,
                   &r.seq,    &r.num_gpus, &r.tp,          &r.pp,          &r.dp,  &r.cp,
                   &r.ep,     &r.vpp,      &r.micro_batch, &r.global_batch};
    const int cols[] = {2, 3, 4, 5, 6, 7, 8, 10, 11, 12, 13, 14, 15, 16, 18, 19};
    for (int i = 0; i < 16; ++i) {
      const std::string& cell = c[cols[i]];
      if (cell.empty()) continue;
      char* end = nullptr;
      const long v = std::strtol(cell.c_str(), &end, 10);
      if (*end != '\0' || v <= 0 || v > 100'000'000) {
        return invalid_argument(at + ": column '" + kColumns[cols[i]] + "': '" + cell +
                                "': expected a positive integer or an empty cell");
      }
      *ints[i] = static_cast<int>(v);
    }
    const std::string sp = lower(c[17]);
    if (sp == "yes") {
      r.sp = 1;
    } else if (sp == "no") {
      r.sp = 0;
    } else if (!sp.empty()) {
      return invalid_argument(at + ": column 'sp': '" + c[17] + "': expected yes, no or empty");
    }
    char* end = nullptr;
    r.value = std::strtod(c[23].c_str(), &end);
    if (c[23].empty() || *end != '\0' || !(r.value > 0) || !std::isfinite(r.value)) {
      return invalid_argument(at + ": column 'value': '" + c[23] + "': expected a positive number");
    }
    rows.push_back(std::move(r));
  }
  // Pair each model-TFLOP/s row with the tokens/s row of the same run (same source, model,
  // shape, strategy, precision and notes): the run's measured time is in the latter.
  using Key =
      std::tuple<std::string, std::string, std::string, std::string, std::string, std::vector<int>>;
  auto key = [](const PublishedRow& r) {
    return Key{r.source,
               r.model,
               r.gpu,
               r.precision,
               r.notes,
               {r.layers, r.hidden, r.seq, r.num_gpus, r.tp, r.pp, r.dp, r.cp, r.ep, r.vpp,
                r.micro_batch, r.global_batch}};
  };
  std::map<Key, double> tokens;
  for (const PublishedRow& r : rows) {
    if (r.metric == "tokens_per_sec_per_gpu") tokens[key(r)] = r.value;
  }
  for (PublishedRow& r : rows) {
    if (r.metric != "model_tflops_per_gpu") continue;
    auto it = tokens.find(key(r));
    if (it != tokens.end()) r.partner_tokens_per_gpu = it->second;
  }
  return rows;
}

std::string expert_parallel_span(const Scenario& s) {
  const ParallelismConfig& p = s.parallelism;
  if (!s.model.moe.enabled() || p.ep <= 1) return "none";
  const int64_t group = int64_t{p.ep} * (p.etp > 0 ? p.etp : p.tp);
  return group <= s.cluster.gpus_per_node ? "nvlink" : "nics";
}

StatusOr<PublishedCase> published_case(const PublishedRow& r,
                                       const std::vector<std::string>& overrides) {
  const ModelMatch match = match_model(r.model);
  if (!match.why.empty()) return invalid_argument(match.why);
  const std::string n = lower(r.model);
  const bool lora = contains(n, "lora");
  const bool sft = contains(n, "sft") || lora;
  const bool layer_row = r.metric.rfind("layer_", 0) == 0;
  const std::string cluster = cluster_for(r.gpu);
  if (cluster.empty()) return invalid_argument("GPU '" + r.gpu + "': no cluster preset");
  if (r.tp == 0 && r.pp == 0 && r.dp == 0) {
    return invalid_argument("the source gives no parallel configuration for this run");
  }
  if (r.global_batch == 0 && !layer_row) {
    return invalid_argument("the source gives no global batch");
  }
  if (r.seq == 0) return invalid_argument("the source gives no sequence length");
  const std::string precision = precision_for(r);
  if (precision.empty()) {
    return invalid_argument("precision '" + r.precision + "': not a training precision");
  }
  const RecipeDefaults d = recipe_defaults(r);
  PublishedCase out;
  out.family = match.family;
  out.kind = match.kind;
  out.precision = precision;
  out.stack = d.stack;
  out.gpu = r.gpu;
  const int tp = std::max(1, r.tp), pp = std::max(1, r.pp), cp = std::max(1, r.cp);
  const int ep = std::max(1, r.ep);
  int vpp = std::max(1, r.vpp);
  const int per_virtual = d.layers_per_virtual_stage;
  if (r.vpp <= 0 && pp > 1 && per_virtual > 0 && r.layers > 0 &&
      r.layers % (pp * per_virtual) == 0) {
    vpp = r.layers / (pp * per_virtual);
    out.notes += "interleaved schedule, " + std::to_string(per_virtual) +
                 (per_virtual == 1 ? " layer" : " layers") + " per virtual stage (VP " +
                 std::to_string(vpp) + "); ";
  }
  int gpus = r.num_gpus;
  const int64_t stated = int64_t{tp} * pp * cp * std::max(1, r.dp);
  if (r.dp > 0 && stated != gpus) {
    // nemo_longseq's B200 rows: TP·PP·DP·CP is a quarter of the #GPUs column in every row (the
    // README flags it). The parallel configuration is the fact that fixes the work per GPU.
    out.notes += "GPUs = tp·pp·cp·dp = " + std::to_string(stated) + " (the #GPUs column says " +
                 std::to_string(gpus) + "); ";
    gpus = static_cast<int>(stated);
  }
  std::ostringstream y;
  y << "model:\n";
  if (!match.preset.empty()) {
    y << "  preset: " << match.preset << "\n";
    out.model = match.preset;
    // The row's dimensions where it states them (NeMo's Nemotron 8B/22B are the 15B block with
    // other sizes). MoE rows list the expert FFN in the ffn column.
    if (match.kind == "dense") {
      if (r.layers > 0) y << "  layers: " << r.layers << "\n";
      if (r.hidden > 0) y << "  hidden: " << r.hidden << "\n";
      if (r.heads > 0) y << "  heads: " << r.heads << "\n";
      if (r.kv_heads > 0) y << "  kv_heads: " << r.kv_heads << "\n";
      if (r.ffn > 0) y << "  ffn_hidden: " << r.ffn << "\n";
      if (r.vocab > 0) y << "  vocab: " << r.vocab << "\n";
      if (r.layers > 0 || r.hidden > 0) out.model = "custom-" + match.preset;
    }
    if (contains(n, "w/o mtp")) y << "  mtp_layers: 0\n";
    if (contains(n, "lightning")) y << "  mtp_layers: 2\n  mtp_repeated_layer: true\n";
    // The recipe's router: moe_router_force_load_balancing routes each token to random experts,
    // balanced in expectation (model.moe.routing: balanced, workload/expert_routing.h).
    std::vector<std::string> moe;
    if (d.balanced_router && (match.kind == "moe" || match.kind == "hybrid")) {
      moe.push_back("routing: balanced");
    }
    if (contains(n, "tokendrop")) moe.push_back("capacity_factor: 1.0");
    if (d.flex_dispatcher) moe.push_back("dispatcher: flex");
    if (d.flex_dispatcher && !d.flex_backend.empty())
      moe.push_back("flex_backend: " + d.flex_backend);
    if (!moe.empty()) {
      y << "  moe: {";
      for (size_t i = 0; i < moe.size(); ++i) y << (i > 0 ? ", " : "") << moe[i];
      y << "}\n";
    }
    y << "  max_seq_len: " << r.seq << "\n";
  } else {
    // GPT (Megatron-LM papers, NeMo GPT3, the Megatron-LM README): GeLU MLP, LayerNorm, learned
    // positions, tied embeddings and biases, as in Megatron-LM's GPT model.
    if (r.layers == 0 || r.hidden == 0 || r.heads == 0) {
      return invalid_argument("GPT row without layers, hidden size or heads");
    }
    const bool paper = r.source.rfind("narayanan", 0) == 0 || r.source == "korthikanti2022";
    const bool mpt = match.family == "mpt";
    y << "  name: " << (mpt ? "mpt" : "gpt") << "-h" << r.hidden << "-l" << r.layers << "\n"
      << "  layers: " << r.layers << "\n  hidden: " << r.hidden << "\n  heads: " << r.heads
      << "\n  kv_heads: " << (r.kv_heads > 0 ? r.kv_heads : r.heads)
      << "\n  ffn_hidden: " << (r.ffn > 0 ? r.ffn : 4 * r.hidden)
      << "\n  vocab: " << (r.vocab > 0 ? r.vocab : 51200) << "\n"
      << "  activation: gelu\n  norm: layernorm\n  position_embedding: learned\n"
      << "  tied_embeddings: true\n  linear_bias: " << (mpt ? "false" : "true")
      << "\n  dropout: " << (paper ? "true" : "false") << "\n  max_seq_len: " << r.seq << "\n";
    out.model = "gpt-h" + std::to_string(r.hidden) + "-l" + std::to_string(r.layers);
  }
  y << "cluster:\n  preset: " << cluster << "\n  gpus: " << gpus << "\n";
  if (r.gpu == "A100-SXM4-40GB") y << "  gpu: A100-SXM4-40GB\n";
  const int micro_batch = r.micro_batch > 0 ? r.micro_batch : d.micro_batch;
  // Per-layer rows time one micro-batch of a one-layer model (Korthikanti et al. Table 4).
  const int global_batch = layer_row ? micro_batch_of(r, d) * std::max(1, r.dp) : r.global_batch;
  y << "training:\n  stack: ";
  if (d.fused_grouped_gemm || !d.attention_kernel.empty() || d.attention_unpad >= 0 ||
      !d.cross_entropy.empty()) {
    y << "{preset: " << d.stack;
    if (!d.cross_entropy.empty()) y << ", cross_entropy: " << d.cross_entropy;
    if (d.fused_grouped_gemm) y << ", grouped_gemm: fused";
    if (!d.attention_kernel.empty()) y << ", attention_kernel: " << d.attention_kernel;
    if (d.attention_unpad >= 0) {
      y << ", flash_attention_unpad: " << (d.attention_unpad ? "true" : "false");
    }
    y << "}";
  } else {
    y << d.stack;
  }
  y << "\n  seq_len: " << r.seq << "\n  global_batch: " << global_batch << "\n"
    << "  micro_batch: " << micro_batch << "\n  precision: " << precision << "\n"
    << "  flash_attention: " << (d.flash_attention ? "true" : "false") << "\n";
  if (precision == "fp8" && current_scaling(r)) {
    y << "  fp8_recipe: current\n";
  }
  if (d.full_cuda_graphs) y << "  cuda_graphs: full\n";
  if (!d.full_cuda_graphs && d.cuda_graph_scope != 0) {
    y << "  cuda_graphs: scoped\n  cuda_graph_scope: [";
    const char* sep = "";
    for (size_t k = 0; k < std::size(kGraphScopeNames); ++k) {
      if (d.cuda_graph_scope & (1u << k)) {
        y << sep << kGraphScopeNames[k];
        sep = ", ";
      }
    }
    y << "]\n";
  }
  if (d.bf16_layers_at_end > 0 && precision != "bf16" && precision != "fp16") {
    y << "  num_layers_at_end_in_bf16: " << d.bf16_layers_at_end << "\n";
  }
  if (sft) {
    // SQuAD packed into seq-length samples (the NeMo and Megatron-Bridge fine-tuning recipes):
    // attention stays within each document; Megatron-Bridge's flop_utils measures Σs² per
    // sample as 842,603 at 4,096 tokens and 488,991 over 2,030 at 2,048: Σs²/Σs = 206 and 241.
    y << "  packed_sequence_length: " << (r.seq <= 2048 ? 241 : 206) << "\n";
  }
  if (lora) {
    // LoRA on the attention's QKV projection only: Megatron-Bridge's performance scripts
    // override the targets to ["linear_qkv"] with rank 16 (llama3_70b_peft_config); NeMo 24.07's
    // launcher uses adapter_dim 32 on attention_qkv.
    y << "  lora: {rank: " << (r.source == "nemo_2407" ? 32 : 16) << ", targets: [qkv]}\n";
  }
  const bool sp = r.sp == 1 || (r.sp == -1 && d.sequence_parallel && tp > 1);
  Recompute recompute = d.recompute;
  const bool recipe_modules = r.recompute.empty() && d.recompute_modules != 0;
  if (recipe_modules) recompute = Recompute::kSelective;
  if (r.recompute == "full") recompute = Recompute::kFull;
  if (r.recompute == "selective") recompute = Recompute::kSelective;
  if (r.recompute == "none") recompute = Recompute::kNone;
  const int dp = gpus / (tp * pp * cp);
  y << "parallelism:\n  tp: " << tp << "\n  pp: " << pp << "\n  cp: " << cp << "\n  dp: auto\n"
    << "  vpp: " << vpp << "\n"
    << "  sequence_parallel: " << (sp ? "true" : "false") << "\n"
    << "  recompute: " << to_string(recompute) << "\n";
  if (recipe_modules) {
    ParallelismConfig modules;
    modules.recompute = Recompute::kSelective;
    modules.recompute_modules = d.recompute_modules;
    y << "  recompute_modules: [" << recompute_modules_string(modules) << "]\n";
  }
  y << "  distributed_optimizer: " << (d.distributed_optimizer && dp > 1 ? "true" : "false") << "\n"
    << "  overlap_grad_reduce: " << (d.overlap_grad_reduce && dp > 1 ? "true" : "false") << "\n"
    << "  overlap_param_gather: "
    << (d.overlap_param_gather && d.distributed_optimizer && dp > 1 ? "true" : "false") << "\n"
    << "  tp_comm_overlap: " << (d.tp_comm_overlap && sp && tp > 1 ? "true" : "false") << "\n"
    << "  overlap_p2p: " << (d.overlap_p2p && pp > 1 && vpp > 1 ? "true" : "false") << "\n";
  if (d.zero_stage > 0 && dp > 1) y << "  zero_stage: " << d.zero_stage << "\n";
  if (d.half_grad_reduce && dp > 1) y << "  grad_reduce_in_fp32: false\n";
  if (d.offload_layers > 0 && pp == 1) y << "  offload_layers: " << d.offload_layers << "\n";
  if (match.kind == "moe" || match.kind == "hybrid") {
    y << "  ep: " << ep << "\n  etp: " << d.etp << "\n";
    if (d.overlap_moe_comm && ep > 1) y << "  overlap_moe_comm: true\n";
  }
  if (vpp > 1) y << "  schedule: interleaved\n";
  if (!d.nvls) y << "collectives:\n  nvls: false\n";
  StatusOr<Scenario> s = load_scenario_text(y.str(), where(r), overrides);
  if (!s.ok()) return s.status();
  out.scenario = *std::move(s);
  out.expert_parallel = expert_parallel_span(out.scenario);
  out.yaml = y.str();
  if (layer_row) {
    if (r.metric != "layer_fwd_ms" && r.metric != "layer_bwd_ms" &&
        r.metric != "layer_fwd_bwd_ms") {
      return invalid_argument("metric '" + r.metric +
                              "': expected layer_fwd_ms, layer_bwd_ms or "
                              "layer_fwd_bwd_ms");
    }
    out.layer_metric = r.metric;
    out.measured_ms = r.value;
  } else {
    PREFLIGHT_ASSIGN_OR_RETURN(out.measured_ms, measured_ms(r, out.scenario));
  }
  if (!d.note.empty()) out.notes += d.note + "; ";
  return out;
}

}  // namespace preflight
