// The scenario's training, parallelism, collectives and simulation sections
// (loader_sections.h).
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "base/text.h"
#include "config/loader_sections.h"
#include "config/pipeline_layout.h"
#include "config/yaml_reader.h"

namespace preflight {
namespace loader_internal {
namespace {

// training.stack: a preset name (presets/stacks/) or a mapping (preset and inline keys).
Status read_stack(const YAML::Node& training, const std::string& source, StackConfig* k) {
  YAML::Node section(YAML::NodeType::Map);
  section["preset"] = "megatron-core";
  if (training && training.IsMap() && training["stack"] && !training["stack"].IsNull()) {
    section.reset(training["stack"]);
  }
  PREFLIGHT_ASSIGN_OR_RETURN(YAML::Node merged,
                             resolve_preset(section, "stacks", source, "training.stack"));
  YamlReader r(merged, source, "training.stack");
  r.skip("preset");
  k->name = r.get_string("name", "custom");
  k->description = r.get_string("description", "");
  k->launch_overhead = r.get_time("launch_overhead", k->launch_overhead, "1s");
  k->collective_call_overhead =
      r.get_time("collective_call_overhead", k->collective_call_overhead, "1s");
  k->attention_kernel = static_cast<AttentionKernel>(
      r.get_choice("attention_kernel", 0, {"cudnn", "flash2", "unfused", "flash1"}));
  k->fused_grouped_gemm = r.get_choice("grouped_gemm", 0, {"per_expert", "fused"}) == 1;
  k->expert_launch_overhead_given = r.has("expert_launch_overhead");
  k->expert_launch_overhead = r.get_time("expert_launch_overhead", k->expert_launch_overhead, "1s");
  k->fsdp_gradient_staging = r.get_bool("fsdp_gradient_staging", k->fsdp_gradient_staging);
  k->flash_attention_unpad = r.get_bool("flash_attention_unpad", k->flash_attention_unpad);
  k->optimizer_bytes_per_param =
      r.get_double("optimizer_bytes_per_param", k->optimizer_bytes_per_param, 0, 1000);
  k->moe_router = static_cast<MoeRouterOps>(
      r.get_choice("moe_router", static_cast<int>(k->moe_router), {"none", "fused", "unfused"}));
  k->fused_scaled_rope =
      r.get_choice("scaled_rope", k->fused_scaled_rope ? 0 : 1, {"fused", "unfused"}) == 0;
  k->te_cross_entropy =
      r.get_choice("cross_entropy", k->te_cross_entropy ? 1 : 0, {"unfused", "te"}) == 1;
  k->moe_probs_in_activation =
      r.get_choice("moe_probs", k->moe_probs_in_activation ? 1 : 0, {"combine", "activation"}) == 1;
  k->mamba_mixer = static_cast<MambaMixer>(
      r.get_choice("mamba_mixer", static_cast<int>(k->mamba_mixer), {"mamba_ssm", "megatron"}));
  PREFLIGHT_RETURN_IF_ERROR(r.finish());
  const SimTime one_second = SimTime::seconds(1.0);
  if (k->launch_overhead > one_second || k->collective_call_overhead > one_second ||
      k->expert_launch_overhead > one_second) {
    return invalid_argument(source +
                            ": training.stack: launch_overhead, expert_launch_overhead and "
                            "collective_call_overhead: expected at most 1 s");
  }
  return Status();
}

// training.lora: {rank, targets}; absent = no LoRA.
Status read_lora(const YAML::Node& training, const std::string& source, const ModelConfig& m,
                 LoraConfig* l) {
  if (!training || !training.IsMap() || !training["lora"] || training["lora"].IsNull()) {
    return Status();
  }
  const YAML::Node node = training["lora"];
  if (!node.IsMap()) {
    return invalid_argument(source +
                            ": training.lora: expected a mapping such as {rank: 16, "
                            "targets: [qkv, proj, fc1, fc2]}");
  }
  YamlReader r(node, source, "training.lora");
  r.skip("targets");
  l->rank = r.required_int("rank");
  r.get_double("alpha", 0, 0, 1e9);  // scales the adapter's output; changes no time
  PREFLIGHT_RETURN_IF_ERROR(r.finish());
  if (l->rank > m.hidden) {
    return invalid_argument(source + ": training.lora.rank: " + std::to_string(l->rank) +
                            ": expected at most model.hidden (" + std::to_string(m.hidden) + ")");
  }
  static const std::vector<std::string> kTargets = {"qkv", "proj", "fc1", "fc2"};
  const YAML::Node targets = node["targets"];
  if (!targets) {
    l->targets = kTargets;  // Megatron-Bridge's LoRA default: every linear layer
    return Status();
  }
  if (!targets.IsSequence() || targets.size() == 0 || targets.size() > 4) {
    return invalid_argument(source +
                            ": training.lora.targets: expected a list of qkv, proj, "
                            "fc1, fc2");
  }
  for (const YAML::Node& t : targets) {
    const std::string v = t.IsScalar() ? t.Scalar() : "";
    if (std::find(kTargets.begin(), kTargets.end(), v) == kTargets.end()) {
      return invalid_argument(source + ": training.lora.targets: '" + v.substr(0, 32) +
                              "': expected qkv, proj, fc1 or fc2");
    }
    if (!l->targets_layer(v)) l->targets.push_back(v);
  }
  return Status();
}

}  // namespace

Status read_training(const YAML::Node& node, const std::string& source, const ModelConfig& m,
                     TrainingConfig* t) {
  YamlReader r(node, source, "training");
  r.skip("stack");
  r.skip("lora");
  r.skip("cuda_graph_scope");  // read with cuda_graphs below
  PREFLIGHT_RETURN_IF_ERROR(read_lora(node, source, m, &t->lora));
  PREFLIGHT_RETURN_IF_ERROR(read_stack(node, source, &t->stack));
  t->seq_len = r.get_int("seq_len", m.max_seq_len);
  t->global_batch = r.required_int("global_batch");
  t->micro_batch = r.get_int("micro_batch", 1);
  t->precision = static_cast<Precision>(
      r.get_choice("precision", 1, {"fp16", "bf16", "fp8", "fp8_blockwise", "mxfp8", "nvfp4"}));
  t->fp8_recipe = static_cast<Fp8Recipe>(r.get_choice("fp8_recipe", 0, {"delayed", "current"}));
  if (r.status().ok() && r.has("fp8_recipe") && t->precision != Precision::kFp8) {
    r.fail("fp8_recipe", std::string("expected training.precision: fp8 (the recipe of per-tensor "
                                     "fp8 scaling), not ") +
                             to_string(t->precision));
  }
  t->flash_attention =
      r.get_bool("flash_attention", t->stack.attention_kernel != AttentionKernel::kUnfused);
  // The stack's optimizer sets the default (StackConfig::optimizer_bytes_per_param).
  if (t->stack.optimizer_bytes_per_param > 0) {
    t->optimizer_bytes_per_param = t->stack.optimizer_bytes_per_param;
  }
  t->optimizer_bytes_per_param =
      r.get_double("optimizer_bytes_per_param", t->optimizer_bytes_per_param, 0, 1000);
  // No GPU holds 16 TiB (cluster.gpu.hbm_capacity's bound).
  t->framework_overhead = r.get_bytes("framework_overhead", t->framework_overhead, "16TiB");
  t->allocator_fragmentation =
      r.get_double("allocator_fragmentation", t->allocator_fragmentation, 0, 1);
  t->packed_sequence_length = r.get_int("packed_sequence_length", 0, 0);
  t->bf16_layers_at_start = r.get_int("num_layers_at_start_in_bf16", 0, 0);
  t->bf16_layers_at_end = r.get_int("num_layers_at_end_in_bf16", 0, 0);
  if (r.status().ok() && t->bf16_layers_at_start + t->bf16_layers_at_end > 0) {
    const int sum = t->bf16_layers_at_start + t->bf16_layers_at_end;
    const char* key =
        t->bf16_layers_at_end > 0 ? "num_layers_at_end_in_bf16" : "num_layers_at_start_in_bf16";
    if (t->precision == Precision::kBf16 || t->precision == Precision::kFp16) {
      r.fail(key, std::string("expected a low-precision training.precision (fp8, fp8_blockwise, "
                              "mxfp8, nvfp4): under ") +
                      to_string(t->precision) + " every layer already is");
    } else if (sum > m.layers) {
      r.fail(key, std::to_string(t->bf16_layers_at_start) + " + " +
                      std::to_string(t->bf16_layers_at_end) + " layers: expected at most " +
                      "model.layers (" + std::to_string(m.layers) + ")");
    }
  }
  const int graphs = r.get_choice("cuda_graphs", 0, {"none", "full", "scoped"});
  t->cuda_graphs = graphs == 1;
  // Scoped graphs name their modules (Megatron-Core's cuda_graph_scope; kGraphScopeNames).
  if (r.has("cuda_graph_scope") && graphs != 2) {
    r.fail("cuda_graph_scope", "expected only with training.cuda_graphs: scoped");
  } else if (graphs == 2 && !r.has("cuda_graph_scope")) {
    r.fail("cuda_graph_scope",
           "missing key: expected a list of attn, mlp, moe_router, moe_preprocess, mamba (the "
           "modules training.cuda_graphs: scoped captures)");
  } else if (graphs == 2) {
    const YAML::Node list = node["cuda_graph_scope"];
    if (!list.IsSequence() || list.size() == 0) {
      r.fail("cuda_graph_scope", "expected a non-empty list such as [attn, moe_router]");
    } else {
      for (size_t i = 0; i < list.size(); ++i) {
        const std::string name = list[i].IsScalar() ? list[i].as<std::string>() : "";
        uint32_t bit = 0;
        for (size_t k = 0; k < std::size(kGraphScopeNames); ++k) {
          if (name == kGraphScopeNames[k]) bit = 1u << k;
        }
        if (bit == 0) {
          r.fail("cuda_graph_scope", "'" + name +
                                         "': expected attn, mlp, moe_router, moe_preprocess or "
                                         "mamba (whole-MoE graphs are not modelled)");
          break;
        }
        if (bit == kGraphMamba && m.hybrid_pattern.find('M') == std::string::npos) {
          r.fail("cuda_graph_scope", "'mamba': model " + m.name +
                                         " has no Mamba-2 layers (model.hybrid_pattern has no M)");
          break;
        }
        t->cuda_graph_scope |= bit;
      }
    }
  }
  if (r.status().ok() && t->packed_sequence_length > t->seq_len) {
    r.fail("packed_sequence_length", std::to_string(t->packed_sequence_length) +
                                         ": expected at most training.seq_len (" +
                                         std::to_string(t->seq_len) + ")");
  }
  return r.finish();
}

Status read_parallelism(const YAML::Node& node, const std::string& source, ParallelismConfig* p) {
  YamlReader r(node, source, "parallelism");
  p->tp = r.get_int("tp", 1);
  p->pp = r.get_int("pp", 1);
  p->dp = r.get_int_or_auto("dp", 0);  // auto (0) is resolved by build()
  p->vpp = r.get_int("vpp", 1);
  p->first_stage_layers = r.get_int("first_stage_layers", 0, 0);
  p->last_stage_layers = r.get_int("last_stage_layers", 0, 0);
  // pipeline_layout (a list of layers per virtual stage, or Megatron's layout string) and the
  // account_for_* flags are resolved against the model in resolve_pipeline_split().
  r.skip("pipeline_layout");
  r.get_bool("account_for_embedding_in_pipeline_split", false);
  r.get_bool("account_for_loss_in_pipeline_split", false);
  p->sequence_parallel = r.get_bool("sequence_parallel", false);
  p->recompute =
      static_cast<Recompute>(r.get_choice("recompute", 0, {"none", "selective", "full"}));
  // Megatron-Core's --recompute-modules, in RecomputeModule order; given alone it implies
  // recompute: selective, the only granularity that reads it.
  std::vector<std::string> module_names;
  for (int i = 0; i < kRecomputeModuleCount; ++i) {
    module_names.push_back(to_string(static_cast<RecomputeModule>(i)));
  }
  const std::vector<int> modules = r.get_choice_list("recompute_modules", module_names);
  if (!modules.empty()) {
    if (!r.has("recompute")) {
      p->recompute = Recompute::kSelective;
    } else if (p->recompute != Recompute::kSelective) {
      r.fail("recompute_modules", std::string("given with recompute ") + to_string(p->recompute) +
                                      ": expected recompute: selective (the modules are what "
                                      "selective recompute replays; --set "
                                      "parallelism.recompute=selective)");
    }
    p->recompute_modules = 0;
    for (int i : modules) p->recompute_modules |= 1u << i;
  }
  p->distributed_optimizer = r.get_bool("distributed_optimizer", false);
  p->zero_stage = r.get_int("zero_stage", 0, -1'000'000'000);
  if (p->zero_stage < 0 || p->zero_stage > 3) {
    r.fail("zero_stage", "'" + std::to_string(p->zero_stage) + "': expected 0, 1, 2 or 3");
  }
  p->grad_reduce_in_fp32_given = r.has("grad_reduce_in_fp32");
  p->grad_reduce_in_fp32 = r.get_bool("grad_reduce_in_fp32", true);
  p->schedule = static_cast<Schedule>(
      r.get_choice("schedule", 1, {"gpipe", "1f1b", "interleaved", "zb_h1", "zb_h2", "dualpipe"}));
  p->ep = r.get_int("ep", 1);
  p->etp = r.get_int("etp", 0, 0);
  p->cp = r.get_int("cp", 1);
  p->cp_kind = static_cast<ContextParallelKind>(r.get_choice("cp_kind", 0, {"ring", "a2a"}));
  p->tp_comm_overlap = r.get_bool("tp_comm_overlap", false);
  p->overlap_param_gather = r.get_bool("overlap_param_gather", false);
  p->overlap_p2p = r.get_bool("overlap_p2p", false);
  p->overlap_grad_reduce = r.get_bool("overlap_grad_reduce", false);
  p->overlap_moe_comm = r.get_bool("overlap_moe_comm", false);
  // No GPU holds 16 TiB (cluster.gpu.hbm_capacity's bound).
  p->grad_bucket_size = r.get_bytes("grad_bucket_size", p->grad_bucket_size, "16TiB");
  // Bounded by the model's layers in validate_scenario().
  p->offload_layers = r.get_int("offload_layers", 0, 0);
  PREFLIGHT_RETURN_IF_ERROR(r.finish());
  if (p->vpp > 1 && !r.has("schedule")) p->schedule = Schedule::kInterleaved;
  return Status();
}

// The layers of each virtual stage: parallelism.pipeline_layout, the account_for_* split, or,
// when pp·vpp does not divide the layers and no split is named, the default of
// config/pipeline_layout.h (said in parallelism.pipeline_split).
Status resolve_pipeline_split(const YAML::Node& node, const std::string& source, Scenario* s) {
  ParallelismConfig& p = s->parallelism;
  const int layers = s->model.layers;
  const int64_t chunks64 = int64_t{p.pp} * std::max(1, p.vpp);
  if (chunks64 > 1'000'000) return Status();  // validate_scenario() reports pp and vpp
  const int chunks = static_cast<int>(chunks64);
  const YAML::Node layout = node && node.IsMap() ? node["pipeline_layout"] : YAML::Node();
  const bool embedding = node && node.IsMap() && node["account_for_embedding_in_pipeline_split"] &&
                         node["account_for_embedding_in_pipeline_split"].as<bool>(false);
  const bool loss = node && node.IsMap() && node["account_for_loss_in_pipeline_split"] &&
                    node["account_for_loss_in_pipeline_split"].as<bool>(false);
  const std::string key = source + ": parallelism.pipeline_layout";
  if (layout && !layout.IsNull()) {
    if (embedding || loss) {
      return invalid_argument(key + ": give a layout or the account_for_* flags, not both");
    }
    if (layout.IsScalar()) {
      StatusOr<std::vector<int>> parsed = parse_megatron_layout(layout.Scalar(), chunks);
      if (!parsed.ok()) return invalid_argument(key + ": " + parsed.status().message());
      p.pipeline_layout = *std::move(parsed);
    } else if (layout.IsSequence()) {
      if (layout.size() > 1'000'000) return invalid_argument(key + ": too many entries");
      for (const YAML::Node& n : layout) {
        int v = -1;
        try {
          v = n.IsScalar() ? n.as<int>() : -1;
        } catch (const YAML::Exception&) {
          v = -1;
        }
        if (v < 0) {
          return invalid_argument(key +
                                  ": expected a list of layer counts (integers >= 0), one "
                                  "per virtual stage");
        }
        p.pipeline_layout.push_back(v);
      }
    } else {
      return invalid_argument(key +
                              ": expected a list of layers per virtual stage or a "
                              "Megatron layout string such as \"Et|(tt|)*30mL\"");
    }
    return Status();
  }
  if (embedding || loss) {
    StatusOr<std::vector<int>> split = account_for_split(layers, chunks, embedding, loss);
    if (!split.ok()) {
      return invalid_argument(source + ": parallelism.account_for_" +
                              std::string(embedding ? "embedding" : "loss") +
                              "_in_pipeline_split: " + split.status().message());
    }
    p.pipeline_layout = *std::move(split);
    return Status();
  }
  if (p.first_stage_layers > 0 || p.last_stage_layers > 0 || chunks <= 1 || layers % chunks == 0) {
    return Status();
  }
  PipelineSplit split = default_pipeline_split(layers, chunks);
  p.pipeline_layout = std::move(split.layers);
  p.pipeline_split = "pp " + std::to_string(p.pp) +
                     (p.vpp > 1 ? " × vpp " + std::to_string(p.vpp) : "") + " does not divide " +
                     std::to_string(layers) + " layers: " + split.description;
  return Status();
}

Status read_collectives(const YAML::Node& node, const std::string& source, CollectivesConfig* c) {
  YamlReader r(node, source, "collectives");
  static const std::vector<std::string> kVersions = {"2.18", "2.19", "2.20", "2.21", "2.22", "2.23",
                                                     "2.24", "2.25", "2.26", "2.27", "2.28"};
  c->nccl_version = kVersions[r.get_choice("nccl_version", 10, kVersions)];
  c->algo = r.get_string("algo", "");
  c->proto = r.get_string("proto", "");
  c->min_channels = r.get_int("min_channels", 0, 0);
  c->max_channels = r.get_int("max_channels", 0, 0);
  c->pxn = r.get_bool("pxn", true);
  if (r.has("nvls")) {
    const std::string v = r.get_string("nvls", "auto");
    if (v == "auto" || v == "2") {
      c->nvls = 2;
    } else if (v == "true" || v == "1" || v == "on" || v == "yes") {
      c->nvls = 1;
    } else if (v == "false" || v == "0" || v == "off" || v == "no") {
      c->nvls = 0;
    } else {
      r.fail("nvls", "'" + v + "': expected auto, true or false (NCCL_NVLS_ENABLE 2, 1, 0)");
    }
  }
  static const std::vector<std::string> kModels = {"calibrated", "nccl", "alpha_beta"};
  c->model = kModels[r.get_choice("model", 0, kModels)];
  PREFLIGHT_RETURN_IF_ERROR(r.finish());
  if (c->max_channels > 0 && c->min_channels > c->max_channels) {
    return invalid_argument(
        source + ": collectives.min_channels: " + std::to_string(c->min_channels) +
        ": expected at most collectives.max_channels (" + std::to_string(c->max_channels) + ")");
  }
  return Status();
}

namespace {

// The `from`/`until` window of a simulation.* list entry: up to 1000 s, until after from.
void read_window(YamlReader& e, const YAML::Node& entry, SimTime* from, SimTime* until) {
  *from = e.get_time("from", SimTime(), "1000s");
  *until = e.get_time("until", SimTime::max(), "1000s");
  if (e.status().ok() && entry["until"] && *until <= *from) {
    e.fail("until", "expected a time after `from`");
  }
}

// simulation.<key>: a list of at most 4096 maps, each read by `read(reader, entry)`.
template <typename Read>
Status read_windows(const YAML::Node& node, const std::string& source, const char* key,
                    const char* fields, Read read) {
  if (!node.IsMap() || !node[key]) return Status();
  const YAML::Node list = node[key];
  const std::string list_path = std::string("simulation.") + key;
  if (!list.IsSequence() || list.size() > 4096) {
    return invalid_argument(source + ": " + list_path + ": expected a list of at most 4096 " +
                            fields + " entries");
  }
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string path = list_path + "[" + std::to_string(i) + "]";
    if (!list[i].IsMap()) {
      return invalid_argument(source + ": " + path + ": expected a map " + fields);
    }
    YamlReader e(list[i], source, path);
    read(e, list[i]);
    PREFLIGHT_RETURN_IF_ERROR(e.finish());
  }
  return Status();
}

}  // namespace

Status read_compute(const YAML::Node& node, const std::string& source, ComputeConfig* c) {
  YamlReader r(node, source, "compute");
  static const std::vector<std::string> kModels = {"roofline", "measured"};
  c->model = r.get_choice("model", 0, kModels) == 1 ? ComputeModelKind::kMeasured
                                                    : ComputeModelKind::kRoofline;
  std::string table = r.get_string("kernel_table", "");
  PREFLIGHT_RETURN_IF_ERROR(r.finish());
  const bool measured = c->model == ComputeModelKind::kMeasured;
  if (measured && table.empty()) {
    return invalid_argument(source +
                            ": compute.kernel_table: missing key: compute.model measured needs a "
                            "kernel table (preflight kernels --shapes, then tools/kernel-profiler "
                            "or preflight kernels --from-trace)");
  }
  if (!measured && !table.empty()) {
    return invalid_argument(source +
                            ": compute.kernel_table: only used with compute.model: measured "
                            "(the roofline needs no table)");
  }
  if (!measured) return Status();
  // A relative path is relative to the scenario file's folder.
  if (table.front() != '/' && !source.empty() && source.front() != '<') {
    const size_t slash = source.find_last_of('/');
    if (slash != std::string::npos) table = source.substr(0, slash + 1) + table;
  }
  StatusOr<KernelTable> t = read_kernel_table(table, /*require_times=*/true);
  if (!t.ok()) return t.status().with_prefix(source + ": compute.kernel_table: ");
  if (t->rows.empty()) {
    return invalid_argument(source + ": compute.kernel_table: " + table +
                            ": expected at least one measured kernel");
  }
  c->kernel_table = table;
  c->table = std::make_shared<const KernelTable>(std::move(t).value());
  return Status();
}

// simulation.packet: {link_layer: roce, mtu: 4096, switch_buffer: 32MiB, pfc: true,
// pfc_alpha: 0.125, ecn: true, kmin: 5KB, kmax: 200KB, pmax: 0.01, cc: dcqcn, hpcc_eta: 0.95,
// hpcc_max_stage: 5}, or {link_layer: infiniband, credit_buffer: 64KiB, cc: none, ...}
Status read_packet(const YAML::Node& node, const std::string& source, LinkLayer fabric,
                   PacketNetworkConfig* p) {
  YamlReader r(node, source, "simulation.packet");
  static const std::vector<std::string> kLayers = {"roce", "infiniband"};
  // The cluster's fabric unless the key names another.
  const int fallback = fabric == LinkLayer::kInfiniband ? 1 : 0;
  p->link_layer = r.get_choice("link_layer", fallback, kLayers) == 1 ? LinkLayer::kInfiniband
                                                                     : LinkLayer::kRoce;
  const bool ib = p->link_layer == LinkLayer::kInfiniband;
  if (r.status().ok() && ib) {
    // InfiniBand has no PFC and no shared-buffer thresholds: its credits hold the links lossless.
    const std::string why =
        r.has("link_layer")
            ? "expected link_layer: roce (InfiniBand's links are held lossless by credits; set "
              "credit_buffer)"
            : "expected link_layer: roce (cluster.fabric is infiniband, whose links credits hold "
              "lossless: set credit_buffer, or link_layer: roce for PFC)";
    for (const char* key : {"pfc", "pfc_alpha", "switch_buffer"}) {
      if (r.has(key)) r.fail(key, why);
    }
    p->header = PacketNetworkConfig::kIbHeader;
    p->pfc = false;
    // IB's congestion control (FECN/BECN) is off unless cc names one; marking goes with it.
    p->cc = CongestionControl::kNone;
    p->ecn = false;
  }
  if (r.status().ok() && !ib && r.has("credit_buffer")) {
    r.fail("credit_buffer", r.has("link_layer")
                                ? "expected link_layer: infiniband (RoCE's links use PFC)"
                                : "expected link_layer: infiniband (the cluster's "
                                  "fabric, cluster.fabric, is roce; RoCE's links "
                                  "use PFC)");
  }
  // No switch port has 1 GiB of buffer of its own; at least a packet (below, with the MTU).
  p->credit_buffer = r.get_bytes("credit_buffer", Bytes(p->credit_buffer), "1GiB").count();
  p->header = r.get_int("header", static_cast<int>(p->header), 0);
  if (r.status().ok() && p->header > 256) {
    r.fail("header", std::to_string(p->header) + ": expected at most 256 bytes");
  }
  p->mtu = r.get_int("mtu", static_cast<int>(p->mtu), 256);
  if (r.status().ok() && p->mtu > 9000)
    r.fail("mtu", std::to_string(p->mtu) + ": expected at most 9000 bytes");
  if (r.status().ok() && r.has("credit_buffer") && p->credit_buffer < p->mtu + p->header) {
    r.fail("credit_buffer", std::to_string(p->credit_buffer) +
                                " bytes: expected at least one packet (" +
                                std::to_string(p->mtu + p->header) + " bytes: mtu and header)");
  }
  p->switch_buffer = r.get_bytes("switch_buffer", Bytes(p->switch_buffer), "4GiB").count();
  if (r.status().ok() && p->switch_buffer < (int64_t{64} << 10)) {
    r.fail("switch_buffer", "expected at least 64KiB");
  }
  p->pfc = r.get_bool("pfc", p->pfc);
  p->pfc_alpha = r.get_double("pfc_alpha", p->pfc_alpha, 1.0 / 1024, 1);
  // Under InfiniBand a congestion control brings its marking (FECN) with it.
  if (ib && r.has("cc") && !r.has("ecn")) p->ecn = true;
  p->ecn = r.get_bool("ecn", p->ecn);
  p->kmin = r.get_bytes("kmin", Bytes(p->kmin), "1GiB").count();
  p->kmax = r.get_bytes("kmax", Bytes(p->kmax), "1GiB").count();
  if (r.status().ok() && p->kmax <= p->kmin) {
    r.fail("kmax", "expected more than kmin (" + std::to_string(p->kmin) + " bytes)");
  }
  p->pmax = r.get_double("pmax", p->pmax, 1e-6, 1);
  static const std::vector<std::string> kCc = {"dcqcn", "hpcc", "none"};
  static const CongestionControl kCcKinds[] = {CongestionControl::kDcqcn, CongestionControl::kHpcc,
                                               CongestionControl::kNone};
  // The default: DCQCN under RoCE, none under InfiniBand (set above).
  p->cc = kCcKinds[r.get_choice("cc", p->cc == CongestionControl::kNone ? 2 : 0, kCc)];
  // HPCC's target utilization: below 0.5 it leaves half the link idle; at most the whole link.
  p->hpcc.eta = r.get_double("hpcc_eta", p->hpcc.eta, 0.5, 1);
  p->hpcc.max_stage = r.get_int("hpcc_max_stage", p->hpcc.max_stage, 0);
  if (r.status().ok() && p->hpcc.max_stage > 100) {
    r.fail("hpcc_max_stage", std::to_string(p->hpcc.max_stage) + ": expected at most 100");
  }
  if (r.status().ok() && p->cc != CongestionControl::kHpcc) {
    for (const char* key : {"hpcc_eta", "hpcc_max_stage"}) {
      if (r.has(key)) r.fail(key, "expected cc: hpcc (the key tunes HPCC only)");
    }
  }
  static const std::vector<std::string> kRouting = {"ecmp", "spray", "adaptive"};
  p->routing = static_cast<PacketRouting>(r.get_choice("routing", 0, kRouting));
  if (r.status().ok() && p->routing != PacketRouting::kEcmp) {
    // Per-packet routing reorders: the receiver places packets as they come and recovers a loss
    // only by the sender's timeout, and HPCC's telemetry is of one path per flow.
    if (p->cc == CongestionControl::kHpcc) {
      r.fail("routing", kRouting[static_cast<int>(p->routing)] +
                            ": expected ecmp with cc: hpcc (its telemetry follows one path)");
    } else if (!ib && !p->pfc) {
      r.fail("routing", kRouting[static_cast<int>(p->routing)] +
                            ": expected a lossless fabric (pfc: true or link_layer: infiniband)");
    }
  }
  p->fast_forward = r.get_bool("fast_forward", p->fast_forward);
  // A window holds enough packets to measure a rate (1 us) and leaves room to skip (10 ms).
  p->fast_forward_window = r.get_time("fast_forward_window", p->fast_forward_window, "10ms");
  if (r.status().ok() && p->fast_forward_window < SimTime::microseconds(1)) {
    r.fail("fast_forward_window", "expected at least 1us");
  }
  p->fast_forward_tolerance =
      r.get_double("fast_forward_tolerance", p->fast_forward_tolerance, 1e-4, 0.2);
  if (r.status().ok() && !p->fast_forward) {
    for (const char* key : {"fast_forward_window", "fast_forward_tolerance"}) {
      if (r.has(key)) r.fail(key, "expected fast_forward: true (the key tunes the fast-forward)");
    }
  }
  if (r.status().ok() && p->fast_forward) {
    // The jump renumbers each flow's packets in order: per-packet routing's out-of-order
    // receiver and HPCC's per-packet telemetry are not carried across it.
    if (p->routing != PacketRouting::kEcmp) {
      r.fail("fast_forward", "expected routing: ecmp (per-packet routing is simulated exactly)");
    } else if (p->cc == CongestionControl::kHpcc) {
      r.fail("fast_forward", "expected cc: dcqcn or none (HPCC is simulated exactly)");
    }
  }
  // Partitions run side by side (docs/packet_network.md "Partitions"): 1 unless set; auto = one
  // per leaf switch (at most kAutoPartitions) where the fabric supports them, else 1. They pay
  // where the traffic stays under its leaves (rail-aligned), and cost where it crosses the
  // spines at every packet, so they are not the default. threads: auto = the cores.
  p->partitions = r.get_int_or_auto("partitions", 0, 1);
  if (!r.has("partitions")) p->partitions = 1;
  if (r.status().ok() && p->partitions > PacketNetworkConfig::kMaxPartitions) {
    r.fail("partitions", std::to_string(p->partitions) + ": expected at most " +
                             std::to_string(PacketNetworkConfig::kMaxPartitions));
  }
  const char* why = nullptr;
  if (r.status().ok() && p->partitions > 1 && !partitions_supported(*p, &why)) {
    r.fail("partitions", std::to_string(p->partitions) + ": expected 1, or " + why);
  }
  p->threads = r.get_int_or_auto("threads", 0, 1);
  if (r.status().ok() && p->threads > 1024) {
    r.fail("threads", std::to_string(p->threads) + ": expected at most 1024");
  }
  return r.finish();
}

Status read_simulation(const YAML::Node& node, const std::string& source, LinkLayer fabric,
                       SimulationConfig* s) {
  YamlReader r(node, source, "simulation");
  static const std::vector<std::string> kNetworks = [] {
    std::vector<std::string> names;
    for (NetworkKind k : kNetworkKinds) names.emplace_back(to_string(k));
    return names;
  }();
  s->network = kNetworks[r.get_choice("network", 0, kNetworks)];
  s->seed = r.get_uint64("seed", 0);
  r.skip("slow_ranks");
  r.skip("degraded_links");
  r.skip("packet");
  r.skip("flow");
  PREFLIGHT_RETURN_IF_ERROR(r.finish());
  // simulation.flow: {routing: ecmp | adaptive}, the flow-level network's; the fabric's default.
  s->flow_routing = default_flow_routing(fabric);
  const bool flow_keys = node && node.IsMap() && node["flow"];
  if (flow_keys && s->network != "flow") {
    return invalid_argument(source + ": simulation.flow: expected simulation.network: flow (the " +
                            s->network + " network does not route flows)");
  }
  if (flow_keys) {
    YamlReader f(node["flow"], source, "simulation.flow");
    static const std::vector<std::string> kFlowRouting = {"ecmp", "adaptive"};
    s->flow_routing = static_cast<FlowRouting>(
        f.get_choice("routing", static_cast<int>(s->flow_routing), kFlowRouting));
    PREFLIGHT_RETURN_IF_ERROR(f.finish());
  }
  const bool packet_keys = node && node.IsMap() && node["packet"];
  if (packet_keys && s->network != "packet") {
    return invalid_argument(source +
                            ": simulation.packet: expected simulation.network: packet (the " +
                            s->network + " network carries no packets)");
  }
  if (s->network == "packet") {
    // Its keys, or the defaults of the cluster's fabric.
    PREFLIGHT_RETURN_IF_ERROR(
        read_packet(packet_keys ? node["packet"] : YAML::Node(), source, fabric, &s->packet));
  }
  s->packet.seed = s->seed;
  // simulation.slow_ranks: [{rank: 5, factor: 1.3, from: 10ms, until: 50ms}, ...]
  PREFLIGHT_RETURN_IF_ERROR(read_windows(node, source, "slow_ranks", "{rank, factor, from, until}",
                                         [&](YamlReader& e, const YAML::Node& entry) {
                                           SlowRank slow;
                                           slow.rank = e.required_int("rank", 0);
                                           // A GPU 100 times slower than its peers is a failed one,
                                           // not a straggler.
                                           slow.factor = e.get_double("factor", 0, 0.01, 100);
                                           if (e.status().ok() && !entry["factor"])
                                             e.fail("factor", "missing key");
                                           read_window(e, entry, &slow.from, &slow.until);
                                           s->slow_ranks.push_back(slow);
                                         }));
  // simulation.degraded_links: [{link: nic3.5-leaf0.5, capacity: 0.25, from: 1s, until: 2s}]
  return read_windows(node, source, "degraded_links", "{link, capacity, from, until}",
                      [&](YamlReader& e, const YAML::Node& entry) {
                        DegradedLink link;
                        link.link = e.get_string("link", "");
                        if (e.status().ok() && link.link.empty()) e.fail("link", "missing key");
                        if (e.status().ok() && link.link.size() > 200) {
                          e.fail("link", "expected a link or node name of at most 200 characters");
                        }
                        // A link at a thousandth of its line rate has failed; a dead link (0) would
                        // hold its flows forever, where NCCL would abort or route around it.
                        link.capacity = e.get_double("capacity", 0, 0.001, 1);
                        if (e.status().ok() && !entry["capacity"])
                          e.fail("capacity", "missing key");
                        read_window(e, entry, &link.from, &link.until);
                        s->degraded_links.push_back(link);
                      });
}

}  // namespace loader_internal
}  // namespace preflight
