// The model section of a scenario (config/loader.h): the transformer, its MoE, MLA and Mamba-2
// blocks, each key checked and bounded by YamlReader.
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "config/loader_sections.h"
#include "config/presets.h"
#include "config/yaml_reader.h"

namespace preflight {
namespace loader_internal {
namespace {

// model.moe: absent or `experts: 0` is a dense model.
Status read_moe(const YAML::Node& node, const std::string& source, ModelConfig* m) {
  YamlReader r(node, source, "model.moe");
  MoeConfig& e = m->moe;
  e.experts = r.get_int("experts", 0, 0);
  if (e.experts == 0) return r.finish();
  e.top_k = r.required_int("top_k");
  e.expert_ffn_hidden = r.required_int("expert_ffn_hidden");
  e.shared_experts = r.get_int("shared_experts", 0, 0);
  e.shared_expert_ffn_hidden = r.get_int("shared_expert_ffn_hidden", e.expert_ffn_hidden);
  e.dense_layers = r.get_int("dense_layers", 0, 0);
  e.layer_interval = r.get_int("layer_interval", 1);
  e.capacity_factor = r.get_double("capacity_factor", 0, 0, 1000);
  e.routing = static_cast<MoeRouting>(
      r.get_choice("routing", 4, {"uniform", "zipf", "dirichlet", "loads", "balanced"}));
  e.zipf_exponent = r.get_double("zipf_exponent", e.zipf_exponent, 0, 100);
  e.dirichlet_alpha = r.get_double("dirichlet_alpha", e.dirichlet_alpha, 1e-6, 1e9);
  if (r.has("loads")) {
    e.loads = r.get_double_list("loads", 0, 1e18);
    if (r.status().ok() && e.routing != MoeRouting::kLoads) {
      r.fail("loads", "given, but model.moe.routing is " + std::string(to_string(e.routing)) +
                          ": expected routing: loads");
    }
  }
  static const std::vector<std::string> kDispatchers = {"alltoall", "allgather", "flex"};
  const int dispatcher = r.get_choice("dispatcher", 0, kDispatchers);
  e.allgather_dispatcher = dispatcher == 1;
  e.flex_dispatcher = dispatcher == 2;
  const bool backend_given = r.has("flex_backend");
  const bool sms_given = r.has("flex_sms");
  e.flex_backend = r.get_choice("flex_backend", 0, {"deepep", "hybridep"}) == 1
                       ? MoeConfig::FlexBackend::kHybridEp
                       : MoeConfig::FlexBackend::kDeepEp;
  e.flex_sms = r.get_int("flex_sms", 0, 1);
  if (e.flex_sms > 1024) r.fail("flex_sms", std::to_string(e.flex_sms) + ": expected 1 to 1024");
  if (r.status().ok() && (backend_given || sms_given) && !e.flex_dispatcher) {
    r.fail(backend_given ? "flex_backend" : "flex_sms", "given, but model.moe.dispatcher is " +
                                                            std::string(kDispatchers[dispatcher]) +
                                                            ": expected dispatcher: flex");
  }
  e.group_topk = r.get_int("group_topk", 0, 0);
  e.fp8_dispatch = r.get_choice("dispatch_precision", 0, {"bf16", "fp8"}) == 1;
  e.router_aux_loss = r.get_double("router_aux_loss", 0, 0, 1e6);
  e.latent_size = r.get_int("latent_size", 0, 0);
  PREFLIGHT_RETURN_IF_ERROR(r.finish());
  if (e.group_topk > 0 && e.allgather_dispatcher) {
    return invalid_argument(source + ": model.moe.group_topk: " + std::to_string(e.group_topk) +
                            ": node-limited routing needs dispatcher: alltoall (the all-gather "
                            "dispatcher sends every token to every rank)");
  }
  if (e.top_k > e.experts) {
    return invalid_argument(source + ": model.moe.top_k: " + std::to_string(e.top_k) +
                            ": expected at most model.moe.experts (" + std::to_string(e.experts) +
                            ")");
  }
  if (e.routing == MoeRouting::kLoads) {
    double total = 0;
    for (double v : e.loads) total += v;
    if (e.loads.empty() || !(total > 0)) {
      return invalid_argument(source +
                              ": model.moe.loads: expected a list of per-expert loads with a "
                              "positive sum, e.g. [3, 1, 1, 1]");
    }
  }
  if (e.dense_layers >= m->layers) {
    return invalid_argument(source + ": model.moe.dense_layers: " + std::to_string(e.dense_layers) +
                            ": expected fewer than model.layers (" + std::to_string(m->layers) +
                            ")");
  }
  return Status();
}

// model.mamba: the Mamba-2 mixer of a hybrid model's M layers; absent = none. conv_kernel and
// chunk default to Megatron-Core's MambaMixer (d_conv 4, chunk_size 128).
Status read_mamba(const YAML::Node& node, const std::string& source, ModelConfig* m) {
  YamlReader r(node, source, "model.mamba");
  if (!node || node.IsNull()) return r.finish();
  MambaConfig& a = m->mamba;
  a.heads = r.required_int("heads");
  a.head_dim = r.required_int("head_dim");
  a.state = r.required_int("state");
  a.groups = r.required_int("groups");
  a.conv_kernel = r.get_int("conv_kernel", 4);
  // causal-conv1d, the kernel Mamba-2 runs, takes widths 2 to 4; the mixer costs the conv as a
  // memory-bound pass, which a far wider one is not (its model FLOPs passed the GPU's peak).
  if (r.status().ok() && a.conv_kernel > 4) {
    r.fail("conv_kernel", std::to_string(a.conv_kernel) +
                              ": expected at most 4 (causal-conv1d's widths are 2 to 4)");
  }
  a.chunk = r.get_int("chunk", 128);
  return r.finish();
}

// model.mla: absent = ordinary (GQA/MHA) attention.
Status read_mla(const YAML::Node& node, const std::string& source, ModelConfig* m) {
  YamlReader r(node, source, "model.mla");
  MlaConfig& a = m->mla;
  a.q_lora_rank = r.get_int("q_lora_rank", 0, 0);
  a.kv_lora_rank = r.get_int("kv_lora_rank", 0, 0);
  a.qk_nope_head_dim = r.get_int("qk_nope_head_dim", 0, 0);
  a.qk_rope_head_dim = r.get_int("qk_rope_head_dim", 0, 0);
  a.v_head_dim = r.get_int("v_head_dim", 0, 0);
  PREFLIGHT_RETURN_IF_ERROR(r.finish());
  if (!a.enabled() &&
      (a.q_lora_rank > 0 || a.qk_nope_head_dim > 0 || a.qk_rope_head_dim > 0 || a.v_head_dim > 0)) {
    return invalid_argument(source +
                            ": model.mla.kv_lora_rank: missing: expected a positive latent rank "
                            "when other MLA dimensions are given");
  }
  if (a.enabled() && m->kv_heads != m->heads) {
    return invalid_argument(source + ": model.kv_heads: " + std::to_string(m->kv_heads) +
                            ": MLA has one K/V per head; expected model.heads (" +
                            std::to_string(m->heads) + ")");
  }
  return Status();
}

// model.csa: absent = ordinary attention (or MLA). DeepSeek-V4's hybrid compressed attention
// (CsaConfig in config/scenario.h).
Status read_csa(const YAML::Node& node, const std::string& source, ModelConfig* m) {
  if (!node) return Status();
  YamlReader r(node, source, "model.csa");
  CsaConfig& a = m->csa;
  a.q_lora_rank = r.required_int("q_lora_rank");
  a.o_lora_rank = r.required_int("o_lora_rank");
  a.o_groups = r.get_int("o_groups", 1);
  a.rope_dim = r.get_int("rope_dim", 0, 0);
  const std::vector<double> ratios = r.get_double_list("compress_ratios", 0, 1e6);
  a.csa_ratio = r.get_int("csa_ratio", 0, 0);
  a.index_heads = r.get_int("index_heads", 0, 0);
  a.index_head_dim = r.get_int("index_head_dim", 0, 0);
  a.index_topk = r.get_int("index_topk", 0, 0);
  for (double v : ratios) {
    if (v != std::floor(v)) {
      char text[64];
      std::snprintf(text, sizeof text, "%g", v);
      r.fail("compress_ratios", std::string(text) + ": expected whole numbers of tokens per entry");
      break;
    }
    a.compress_ratios.push_back(static_cast<int>(v));
  }
  PREFLIGHT_RETURN_IF_ERROR(r.finish());
  const std::string at = source + ": model.csa.";
  // One entry per layer, then per MTP module; entries past those belong to no layer (Hugging
  // Face's configs ship a few more, and a model cut to fewer layers keeps its list).
  const int max_ratios = m->layers + m->mtp_layers;
  // A list that stops short would leave layers without a ratio: none is assumed (an empty list
  // is every layer window-only, as a ratio of 0 each).
  const int given = static_cast<int>(a.compress_ratios.size());
  if (given > 0 && given < max_ratios) {
    return invalid_argument(at + "compress_ratios: " + std::to_string(given) +
                            " entries: expected one per layer (" + std::to_string(m->layers) +
                            ") and per MTP module (" + std::to_string(m->mtp_layers) + "), " +
                            std::to_string(max_ratios) + " in all (0: window only)");
  }
  if (m->heads % a.o_groups != 0) {
    return invalid_argument(at + "o_groups: " + std::to_string(a.o_groups) +
                            ": expected a divisor of model.heads (" + std::to_string(m->heads) +
                            ")");
  }
  if (a.rope_dim > m->head_dim()) {
    return invalid_argument(at + "rope_dim: " + std::to_string(a.rope_dim) +
                            ": expected at most model.head_dim (" + std::to_string(m->head_dim()) +
                            ")");
  }
  bool any_indexed = false;
  for (int i = 0; i < max_ratios; ++i) any_indexed = any_indexed || a.indexed(i);
  if (any_indexed && (a.index_heads <= 0 || a.index_head_dim <= 0 || a.index_topk <= 0)) {
    return invalid_argument(at + "csa_ratio: " + std::to_string(a.csa_ratio) +
                            ": its layers select entries with the lightning indexer: expected "
                            "positive index_heads, index_head_dim and index_topk");
  }
  if (m->sliding_window <= 0) {
    return invalid_argument(source +
                            ": model.sliding_window: missing: every layer of model.csa attends "
                            "to a window of raw tokens; expected a positive window (V4: 128)");
  }
  if (m->sliding_window_pattern != 0) {
    return invalid_argument(
        source + ": model.sliding_window_pattern: " + std::to_string(m->sliding_window_pattern) +
        ": model.csa gives each layer its window and compression "
        "(compress_ratios); expected no sliding_window_pattern");
  }
  if (m->mla.enabled()) {
    return invalid_argument(source +
                            ": model.csa: expected either model.csa or model.mla, not both");
  }
  if (m->is_hybrid()) {
    return invalid_argument(source +
                            ": model.csa: expected no hybrid_pattern (compressed attention runs "
                            "in every layer of a transformer)");
  }
  return Status();
}

}  // namespace

Status read_model(const YAML::Node& node, const std::string& source, ModelConfig* m) {
  YamlReader r(node, source, "model");
  r.skip("preset");
  m->name = r.get_string("name", "custom");
  m->description = r.get_string("description", "");
  m->layers = r.required_int("layers");
  // The deepest trained LLMs have a few hundred layers (Llama 3 405B: 126); the workload holds
  // every layer's ops, so a billion layers took a minute to simulate.
  constexpr int kMaxLayers = 10'000;
  if (m->layers > kMaxLayers) {
    r.fail("layers",
           std::to_string(m->layers) + ": expected at most " + std::to_string(kMaxLayers));
  }
  m->hidden = r.required_int("hidden");
  m->heads = r.required_int("heads");
  m->kv_heads = r.get_int("kv_heads", m->heads);
  // The default ffn_hidden, 4·hidden, must stay within get_int's bound of 1e9.
  constexpr int kMaxHiddenForDefaultFfn = 250'000'000;
  if (m->hidden > kMaxHiddenForDefaultFfn && !r.has("ffn_hidden")) {
    r.fail("hidden", std::to_string(m->hidden) + ": expected at most " +
                         std::to_string(kMaxHiddenForDefaultFfn) +
                         " unless model.ffn_hidden is given");
  }
  m->ffn_hidden = r.get_int("ffn_hidden", 4 * std::min(m->hidden, kMaxHiddenForDefaultFfn));
  m->vocab = r.required_int("vocab");
  // relu2 (Hugging Face's name) and squared_relu are the same non-gated squared ReLU.
  const int activation = r.get_choice("activation", 0, {"gelu", "swiglu", "relu2", "squared_relu"});
  m->activation = activation >= 2 ? Activation::kSquaredRelu : static_cast<Activation>(activation);
  m->norm = static_cast<Norm>(r.get_choice("norm", 0, {"layernorm", "rmsnorm"}));
  m->position_embedding = static_cast<PositionEmbedding>(
      r.get_choice("position_embedding", 0, {"learned", "rope", "alibi", "none"}));
  m->tied_embeddings = r.get_bool("tied_embeddings", true);
  m->linear_bias = r.get_bool("linear_bias", true);
  m->dropout = r.get_bool("dropout", true);
  m->max_seq_len = r.get_int("max_seq_len", 2048);
  m->head_dim_override = r.get_int("head_dim", 0, 0);
  m->sliding_window = r.get_int("sliding_window", 0, 0);
  m->sliding_window_pattern = r.get_int("sliding_window_pattern", 0, 0);
  m->attention_sinks = r.get_bool("attention_sinks", false);
  m->qk_layernorm = r.get_bool("qk_layernorm", false);
  m->rope_mscale = r.get_double("rope_mscale", 1.0, 0.1, 10.0);
  if (m->rope_mscale != 1.0 && m->position_embedding != PositionEmbedding::kRope) {
    r.fail("rope_mscale",
           "scales RoPE's cos and sin: expected model.position_embedding: rope, "
           "or no rope_mscale");
  }
  m->activation_clamp = r.get_double("activation_clamp", 0, 0, 1e6);
  if (m->activation_clamp > 0 && m->activation != Activation::kSwiglu) {
    r.fail("activation_clamp",
           "clamps the two halves of a gated activation: expected "
           "model.activation: swiglu, or no activation_clamp");
  }
  m->mtp_layers = r.get_int("mtp_layers", 0, 0);
  m->mtp_repeated_layer = r.get_bool("mtp_repeated_layer", false);
  m->hybrid_pattern = r.get_string("hybrid_pattern", "");
  if (r.has("hybrid_pattern") && m->hybrid_pattern.empty()) {
    r.fail("hybrid_pattern", "'': expected one of M * - E per layer, e.g. \"M-M*-\"");
  }
  m->hyper_connections = r.get_int("hyper_connections", 0, 0);
  if (m->hyper_connections > 64) {
    r.fail("hyper_connections", std::to_string(m->hyper_connections) +
                                    ": expected at most 64 residual streams (DeepSeek-V4: 4)");
  }
  m->hc_sinkhorn_iterations = r.get_int("hc_sinkhorn_iterations", 20, 0);
  if (r.has("hc_sinkhorn_iterations") && m->hyper_connections <= 1) {
    r.fail("hc_sinkhorn_iterations",
           "mixes the streams of hyper-connections: expected model.hyper_connections above 1");
  }
  if (m->hc_sinkhorn_iterations > 1000) {
    r.fail("hc_sinkhorn_iterations",
           std::to_string(m->hc_sinkhorn_iterations) + ": expected at most 1000 (DeepSeek-V4: 20)");
  }
  r.skip("moe");
  r.skip("mla");
  r.skip("mamba");
  r.skip("csa");
  PREFLIGHT_RETURN_IF_ERROR(r.finish());
  PREFLIGHT_RETURN_IF_ERROR(read_moe(node["moe"], source, m));
  PREFLIGHT_RETURN_IF_ERROR(read_mla(node["mla"], source, m));
  if (m->qk_layernorm && m->mla.enabled()) {
    return invalid_argument(source +
                            ": model.qk_layernorm: true: MLA normalises its query and key/value "
                            "latents (model.mla) instead; expected no qk_layernorm with model.mla");
  }
  PREFLIGHT_RETURN_IF_ERROR(read_mamba(node["mamba"], source, m));
  PREFLIGHT_RETURN_IF_ERROR(validate_hybrid_model(*m).with_prefix(source + ": "));
  PREFLIGHT_RETURN_IF_ERROR(read_csa(node["csa"], source, m));
  if (m->head_dim_override == 0 && m->hidden % m->heads != 0) {
    return invalid_argument(source + ": model.heads: " + std::to_string(m->heads) +
                            ": expected a divisor of model.hidden (" + std::to_string(m->hidden) +
                            ")");
  }
  if (m->heads % m->kv_heads != 0) {
    return invalid_argument(source + ": model.kv_heads: " + std::to_string(m->kv_heads) +
                            ": expected a divisor of model.heads (" + std::to_string(m->heads) +
                            ")");
  }
  return Status();
}

}  // namespace loader_internal
}  // namespace preflight
