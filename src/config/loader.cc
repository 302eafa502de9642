#include "config/loader.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

#include "base/text.h"
#include "config/loader_sections.h"
#include "config/pipeline_layout.h"
#include "config/presets.h"
#include "config/yaml_reader.h"

namespace preflight {
namespace loader_internal {

// Writes `over` into `base`: mappings merge key by key (recursively), anything else replaces.
void deep_merge(YAML::Node base, const YAML::Node& over) {
  for (const auto& kv : over) {
    const std::string key = kv.first.Scalar();
    YAML::Node current = base[key];
    if (kv.second.IsMap() && current && current.IsMap() && !kv.second["preset"]) {
      deep_merge(current, kv.second);
    } else {
      base[key] = YAML::Clone(kv.second);
    }
  }
}

// Merges section `node` over its preset (`kind`), if it names one. Inline keys win; nested
// mappings (e.g. a cluster's `gpu.calibration`) merge key by key.
StatusOr<YAML::Node> resolve_preset(const YAML::Node& node, const std::string& kind,
                                    const std::string& source, const std::string& path) {
  if (!node || node.IsNull()) return YAML::Node(YAML::NodeType::Map);
  // yaml-cpp's operator= writes through to the referenced node; reset() rebinds the handle.
  YAML::Node section;
  section.reset(node);
  if (node.IsScalar()) {  // `gpu: A100-SXM4-80GB` is shorthand for {preset: A100-SXM4-80GB}
    YAML::Node map(YAML::NodeType::Map);
    map["preset"] = node.Scalar();
    section.reset(map);
  }
  if (!section.IsMap()) {
    return invalid_argument(source + ": " + path + ": expected a mapping or a preset name");
  }
  if (!section["preset"]) return YAML::Clone(section);
  if (!section["preset"].IsScalar()) {
    return invalid_argument(source + ": " + path + ".preset: expected a preset name");
  }
  StatusOr<YAML::Node> preset = find_preset(kind, section["preset"].Scalar());
  if (!preset.ok()) {
    return invalid_argument(source + ": " + path + ".preset: " + preset.status().message());
  }
  YAML::Node merged = YAML::Clone(*preset);
  YAML::Node inline_keys(YAML::NodeType::Map);
  for (const auto& kv : section) {
    if (kv.first.Scalar() != "preset") inline_keys[kv.first.Scalar()] = kv.second;
  }
  // A scalar `gpu: NAME` in the preset becomes {preset: NAME} so inline GPU keys merge into it.
  for (const auto& kv : inline_keys) {
    YAML::Node current = merged[kv.first.Scalar()];
    if (kv.second.IsMap() && current && current.IsScalar()) {
      YAML::Node m(YAML::NodeType::Map);
      m["preset"] = current.Scalar();
      merged[kv.first.Scalar()] = m;
    }
  }
  deep_merge(merged, inline_keys);
  return merged;
}

}  // namespace loader_internal

using loader_internal::read_cluster;
using loader_internal::read_collectives;
using loader_internal::read_compute;
using loader_internal::read_model;
using loader_internal::read_packet;
using loader_internal::read_parallelism;
using loader_internal::read_simulation;
using loader_internal::read_training;
using loader_internal::resolve_cluster;
using loader_internal::resolve_pipeline_split;
using loader_internal::resolve_preset;

namespace {

// Errors are one line: control bytes that come from the input (a block-scalar preset name, a
// key, an override) are escaped and huge values shortened (base/text.h), as YamlReader does.
Status one_line(const Status& status) {
  if (status.ok()) return status;
  return Status(status.code(), escape_for_message(status.message()));
}

// Applies one "a.b.c=value" override to `root`. A scalar met on the way (e.g. `cluster.gpu: A100`
// when setting cluster.gpu.sm_count) becomes {preset: scalar}.
Status apply_override(YAML::Node root, const std::string& assignment) {
  const size_t eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0) {
    return invalid_argument("--set " + assignment + ": expected key.path=value");
  }
  const std::string path = assignment.substr(0, eq);
  const std::string value = assignment.substr(eq + 1);
  std::vector<std::string> keys;
  std::stringstream ss(path);
  for (std::string k; std::getline(ss, k, '.');) {
    if (k.empty()) return invalid_argument("--set " + assignment + ": empty key in '" + path + "'");
    keys.push_back(k);
  }
  // yaml-cpp copies and frees nodes recursively: a path of ~100k keys overflows the stack.
  constexpr size_t kMaxKeys = 64;
  if (keys.size() > kMaxKeys) {
    return invalid_argument("--set " + keys[0] + ".(...)=: key path of " +
                            std::to_string(keys.size()) + " keys: expected at most " +
                            std::to_string(kMaxKeys));
  }
  YAML::Node parsed;
  try {
    parsed = YAML::Load(value);
  } catch (const YAML::Exception& e) {
    return invalid_argument("--set " + assignment + ": value is not valid YAML");
  }
  if (!parsed || parsed.IsNull()) parsed.reset(YAML::Node(value));
  // Walk with explicit node copies (yaml-cpp nodes are handles).
  std::vector<YAML::Node> chain{root};
  for (size_t i = 0; i + 1 < keys.size(); ++i) {
    YAML::Node cur = chain.back();
    YAML::Node next = cur[keys[i]];
    if (!next || next.IsNull()) {
      cur[keys[i]] = YAML::Node(YAML::NodeType::Map);
    } else if (next.IsScalar()) {
      YAML::Node m(YAML::NodeType::Map);
      m["preset"] = next.Scalar();
      cur[keys[i]] = m;
    } else if (!next.IsMap()) {
      return invalid_argument("--set " + assignment + ": '" + keys[i] +
                              "' is a list, not a mapping");
    }
    chain.push_back(cur[keys[i]]);
  }
  chain.back()[keys.back()] = parsed;
  // The GPU count and the node count say the same thing: the one set last wins, so that
  // `--set cluster.gpus=32` resizes a scenario that states its nodes (and vice versa).
  if (keys.size() == 2 && keys[0] == "cluster" && (keys[1] == "gpus" || keys[1] == "nodes")) {
    chain.back().remove(keys[1] == "gpus" ? "nodes" : "gpus");
  }
  return Status();
}

// Scenario::defaults: the keys that define the job (its batch, precision, strategy and overlap
// switches, the MoE router, the network rung) that the scenario and --set left out, each with
// the value the loader took. Keys that only tune a model (calibration, buffers) are not listed.
void list_defaults(const YAML::Node& root, Scenario* s) {
  const TrainingConfig& t = s->training;
  const ParallelismConfig& p = s->parallelism;
  const bool moe = s->model.moe.enabled();
  auto num = [](int64_t v) { return std::to_string(v); };
  auto yes = [](bool b) { return std::string(b ? "true" : "false"); };
  struct Key {
    const char* section;
    const char* key;
    std::string value;
    bool listed;
  };
  const Key keys[] = {
      {"training", "seq_len", num(t.seq_len), true},
      {"training", "micro_batch", num(t.micro_batch), true},
      {"training", "precision", to_string(t.precision), true},
      {"training", "fp8_recipe", to_string(t.fp8_recipe), t.precision == Precision::kFp8},
      {"training", "stack", t.stack.name, true},
      {"training", "cuda_graphs",
       t.cuda_graphs        ? "full"
       : t.cuda_graph_scope ? "scoped"
                            : "none",
       true},
      {"parallelism", "tp", num(p.tp), true},
      {"parallelism", "pp", num(p.pp), true},
      {"parallelism", "dp", num(p.dp), true},
      {"parallelism", "cp", num(p.cp), true},
      {"parallelism", "ep", num(p.ep), moe},
      {"parallelism", "etp", num(s->expert_tp()), moe},
      {"parallelism", "vpp", num(p.vpp), true},
      {"parallelism", "schedule", to_string(p.schedule), true},
      {"parallelism", "sequence_parallel", yes(p.sequence_parallel), true},
      {"parallelism", "recompute", to_string(p.recompute), true},
      {"parallelism", "distributed_optimizer", yes(p.distributed_optimizer), true},
      {"parallelism", "zero_stage", num(p.zero_stage), true},
      {"parallelism", "tp_comm_overlap", yes(p.tp_comm_overlap), p.tp > 1},
      {"parallelism", "overlap_grad_reduce", yes(p.overlap_grad_reduce), true},
      {"parallelism", "overlap_param_gather", yes(p.overlap_param_gather), true},
      {"parallelism", "overlap_p2p", yes(p.overlap_p2p), p.pp > 1},
      {"parallelism", "overlap_moe_comm", yes(p.overlap_moe_comm), moe},
      {"simulation", "network", s->simulation.network, true},
  };
  for (const Key& k : keys) {
    const YAML::Node section = root[k.section];
    const bool given = section && section.IsMap() && section[k.key];
    if (k.listed && !given) s->defaults.emplace_back(std::string(k.section) + "." + k.key, k.value);
  }
  const YAML::Node model = root["model"];
  const bool routing_given =
      model && model.IsMap() && model["moe"] && model["moe"].IsMap() && model["moe"]["routing"];
  if (moe && !routing_given) {
    s->defaults.emplace_back("model.moe.routing", to_string(s->model.moe.routing));
  }
  const bool backend_given = model && model.IsMap() && model["moe"] && model["moe"].IsMap() &&
                             model["moe"]["flex_backend"];
  if (moe && s->model.moe.flex_dispatcher && !backend_given) {
    s->defaults.emplace_back(
        "model.moe.flex_backend",
        s->model.moe.flex_backend == MoeConfig::FlexBackend::kHybridEp ? "hybridep" : "deepep");
  }
}

// Scenario::notes and Scenario::warnings, and the one adjustment Megatron makes itself: sequence
// parallelism is turned off at TP 1 (megatron/training/arguments.py), not an error.
void add_notes(const YAML::Node& root, Scenario* s) {
  ParallelismConfig& p = s->parallelism;
  if (p.sequence_parallel && p.tp == 1) {
    p.sequence_parallel = false;
    s->notes.push_back("sequence parallelism is off at TP 1 (as Megatron turns it off)");
  }
  const ModelConfig& m = s->model;
  if (s->training.seq_len > m.max_seq_len) {
    s->warnings.push_back("training.seq_len " + std::to_string(s->training.seq_len) +
                          " is longer than the model's max_seq_len " +
                          std::to_string(m.max_seq_len) + " (positions it was not built for)");
  }
  const YAML::Node model = root["model"];
  const bool routing_given =
      model && model.IsMap() && model["moe"] && model["moe"].IsMap() && model["moe"]["routing"];
  if (m.moe.enabled() && p.ep > 1 && !routing_given && m.moe.routing == MoeRouting::kBalanced) {
    s->warnings.push_back(
        "model.moe.routing: balanced, a router balanced in expectation (only the sampling noise "
        "of each micro-batch's tokens: a near-best case); set dirichlet or zipf for a real "
        "router's skew");
  }
  // A kernel table measured on another GPU: its times do not carry over. The preset's name up to
  // its first '-' ("H100" of H100-SXM5-80GB) must appear in the table's device name ("NVIDIA
  // H100 80GB HBM3").
  if (s->compute.table && !s->compute.table->gpu.empty()) {
    auto upper = [](std::string v) {
      for (char& c : v) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      return v;
    };
    const std::string family = upper(s->cluster.gpu.name.substr(0, s->cluster.gpu.name.find('-')));
    if (!family.empty() && upper(s->compute.table->gpu).find(family) == std::string::npos) {
      s->warnings.push_back("compute.kernel_table was measured on " + s->compute.table->gpu +
                            ", the cluster's GPU is " + s->cluster.gpu.name +
                            ": measured kernel times hold on the GPU they were measured on");
    }
  }
  const int per_node = s->cluster.gpus_per_node;
  if (p.tp > per_node && s->cluster.nodes > 1) {
    s->warnings.push_back("TP " + std::to_string(p.tp) + " spans " +
                          std::to_string((p.tp + per_node - 1) / per_node) +
                          " nodes: its collectives cross the NICs");
  }
}

StatusOr<Scenario> build(YAML::Node root, const std::string& source) {
  if (!root || root.IsNull()) root.reset(YAML::Node(YAML::NodeType::Map));
  if (!root.IsMap()) {
    return invalid_argument(source +
                            ": expected a mapping with sections model, cluster, "
                            "training, parallelism, simulation");
  }
  static const char* kSections[] = {"name",        "description", "model",
                                    "cluster",     "training",    "parallelism",
                                    "collectives", "compute",     "simulation"};
  for (const auto& kv : root) {
    const std::string key = kv.first.Scalar();
    bool known = false;
    for (const char* s : kSections) known |= key == s;
    if (!known) {
      return invalid_argument(source + ": " + key +
                              ": unknown section (expected model, cluster, training, "
                              "parallelism, collectives, compute, simulation)");
    }
  }
  Scenario s;
  s.source = source;
  if (!root["model"]) {
    return invalid_argument(source +
                            ": model: missing section: expected a preset "
                            "(model.preset: gpt3-175b) or the model's fields");
  }
  if (!root["cluster"]) {
    return invalid_argument(source +
                            ": cluster: missing section: expected a preset "
                            "(cluster.preset: dgx-a100) or the cluster's fields");
  }
  PREFLIGHT_ASSIGN_OR_RETURN(YAML::Node model,
                             resolve_preset(root["model"], "models", source, "model"));
  PREFLIGHT_RETURN_IF_ERROR(read_model(model, source, &s.model));
  PREFLIGHT_ASSIGN_OR_RETURN(YAML::Node cluster, resolve_cluster(root["cluster"], source));
  PREFLIGHT_RETURN_IF_ERROR(read_cluster(cluster, source, &s.cluster));
  PREFLIGHT_RETURN_IF_ERROR(read_training(root["training"], source, s.model, &s.training));
  // The stack's host constants: its launch cost (unless the GPU's YAML names one) and its
  // per-call collective cost on top of NCCL's own.
  GpuCalibration& cal = s.cluster.gpu.calibration;
  if (!cal.launch_overhead_given) cal.launch_overhead = s.training.stack.launch_overhead;
  cal.collective_latency += s.training.stack.collective_call_overhead;
  PREFLIGHT_RETURN_IF_ERROR(read_parallelism(root["parallelism"], source, &s.parallelism));
  PREFLIGHT_RETURN_IF_ERROR(resolve_pipeline_split(root["parallelism"], source, &s));
  PREFLIGHT_RETURN_IF_ERROR(read_collectives(root["collectives"], source, &s.collectives));
  PREFLIGHT_RETURN_IF_ERROR(read_compute(root["compute"], source, &s.compute));
  PREFLIGHT_RETURN_IF_ERROR(
      read_simulation(root["simulation"], source, s.cluster.fabric, &s.simulation));
  add_notes(root, &s);
  if (s.parallelism.dp == 0) {  // dp: auto
    const ParallelismConfig& p = s.parallelism;
    int64_t tp_cp_pp = 0;  // each factor is at most 10^9, so only the last product may overflow
    const bool overflow = __builtin_mul_overflow(int64_t{p.tp} * p.cp, p.pp, &tp_cp_pp);
    const int gpus = s.cluster.total_gpus();
    if (overflow || gpus % tp_cp_pp != 0) {
      return invalid_argument(
          source + ": parallelism.dp: auto: " + std::to_string(gpus) +
          " GPUs is not a multiple of tp·cp·pp = " +
          (overflow ? "over 2^63" : std::to_string(tp_cp_pp)) + " (tp " + std::to_string(p.tp) +
          ", cp " + std::to_string(p.cp) + ", pp " + std::to_string(p.pp) + ")" +
          (!overflow && gpus < tp_cp_pp ? ": one model replica needs " + std::to_string(tp_cp_pp) +
                                              " GPUs; use more GPUs or a smaller tp·pp"
                                        : ""));
    }
    s.parallelism.dp = static_cast<int>(gpus / tp_cp_pp);
  }
  list_defaults(root, &s);
  PREFLIGHT_RETURN_IF_ERROR(validate_scenario(s).with_prefix(source + ": "));
  return s;
}

// What yaml-cpp accepts silently and Preflight does not: a key given twice in one mapping (the
// first would win, the second be ignored), text that is not UTF-8 (reports and traces are
// JSON), and an alias inside the node it names (`a: &x [*x]`), which yaml-cpp turns into a
// cycle that every later walk of the tree would follow forever. `path` is the key path of `n`;
// `ancestors` the nodes that contain it.
Status check_tree(const YAML::Node& n, const std::string& name, const std::string& path,
                  std::vector<YAML::Node>* ancestors) {
  auto not_utf8 = [&](const std::string& where, const std::string& text, size_t at) {
    char byte[8];
    std::snprintf(byte, sizeof byte, "0x%02X", static_cast<unsigned char>(text[at]));
    return invalid_argument(name + ": " + (where.empty() ? "<document>" : where) +
                            ": not UTF-8 text (byte " + byte + " at offset " + std::to_string(at) +
                            "): expected UTF-8");
  };
  if (n.IsScalar()) {
    const size_t bad = invalid_utf8_at(n.Scalar());
    if (bad != std::string::npos) return not_utf8(path, n.Scalar(), bad);
    return Status();
  }
  if (!n.IsSequence() && !n.IsMap()) return Status();
  const std::string here = path.empty() ? "<document>" : path;
  for (const YAML::Node& a : *ancestors) {
    if (a.is(n)) {
      return invalid_argument(
          name + ": " + here + ": a YAML alias names a node that contains it (line " +
          std::to_string(n.Mark().line + 1) + "): expected a tree; copy the values instead");
    }
  }
  // No scenario section nests this deep; the bound keeps the walks below off the stack's end.
  constexpr size_t kMaxDepth = 64;
  if (ancestors->size() >= kMaxDepth) {
    return invalid_argument(name + ": " + here + ": nested more than " + std::to_string(kMaxDepth) +
                            " levels deep: expected at most " + std::to_string(kMaxDepth));
  }
  ancestors->push_back(n);
  struct Pop {
    std::vector<YAML::Node>* v;
    ~Pop() { v->pop_back(); }
  } pop{ancestors};
  if (n.IsSequence()) {
    for (size_t i = 0; i < n.size(); ++i) {
      PREFLIGHT_RETURN_IF_ERROR(
          check_tree(n[i], name, path + "[" + std::to_string(i) + "]", ancestors));
    }
    return Status();
  }
  std::map<std::string, int> first_line;
  for (const auto& kv : n) {
    if (!kv.first.IsScalar()) {
      return invalid_argument(name + ": " + (path.empty() ? "<document>" : path) +
                              ": a key at line " + std::to_string(kv.first.Mark().line + 1) +
                              " is not a name: expected key: value");
    }
    const std::string& key = kv.first.Scalar();
    const std::string where = path.empty() ? key : path + "." + key;
    const size_t bad = invalid_utf8_at(key);
    if (bad != std::string::npos) return not_utf8(where, key, bad);
    const int line = kv.first.Mark().line + 1;
    auto [it, fresh] = first_line.emplace(key, line);
    if (!fresh) {
      return invalid_argument(name + ": " + where + ": duplicate key at line " +
                              std::to_string(line) + " (first at line " +
                              std::to_string(it->second) +
                              "): expected each key once; merge the two");
    }
    PREFLIGHT_RETURN_IF_ERROR(check_tree(kv.second, name, where, ancestors));
  }
  return Status();
}

// YAML indents with spaces; yaml-cpp reports a tab in the indentation as "illegal map value"
// or the like. The hint names the tab when line `line` (0-based) of `text` has one.
std::string tab_hint(const std::string& text, int line) {
  if (line < 0) return "";  // no position known
  size_t start = 0;
  for (int i = 0; i < line && start != std::string::npos; ++i) {
    start = text.find('\n', start);
    if (start != std::string::npos) ++start;
  }
  if (start == std::string::npos) return "";
  const size_t end = text.find('\n', start);
  const std::string l = text.substr(start, end == std::string::npos ? end : end - start);
  const size_t lead = l.find_first_not_of(" \t");
  if (l.substr(0, lead).find('\t') == std::string::npos) return "";
  return " (a tab in the indentation of line " + std::to_string(line + 1) +
         ": YAML indents with spaces)";
}

// The tree of `text` (from `source`; empty: the default scenario) before overrides, checked;
// `name` gets the source's name for messages.
StatusOr<YAML::Node> parse_tree(const std::string& text, const std::string& source,
                                std::string* name) {
  std::string body = text;
  *name = source;
  if (body.empty()) {
    PREFLIGHT_ASSIGN_OR_RETURN(body, preset_text("scenarios", "default"));
    if (name->empty()) *name = "<default scenario>";
  }
  YAML::Node root;
  try {
    root = YAML::Load(body);
  } catch (const YAML::Exception& e) {
    return invalid_argument(*name + ": malformed YAML at line " + std::to_string(e.mark.line + 1) +
                            ", column " + std::to_string(e.mark.column + 1) + ": " + e.msg +
                            tab_hint(body, e.mark.line));
  }
  std::vector<YAML::Node> ancestors;
  if (root) PREFLIGHT_RETURN_IF_ERROR(check_tree(root, *name, "", &ancestors));
  if (!root || root.IsNull()) root.reset(YAML::Node(YAML::NodeType::Map));
  if (!root.IsMap()) {
    return invalid_argument(*name +
                            ": expected a mapping with sections model, cluster, training, "
                            "parallelism, simulation");
  }
  return root;
}

// Applies `overrides` to `root` and checks the result.
Status apply_overrides(YAML::Node root, const std::vector<std::string>& overrides) {
  for (const std::string& o : overrides) PREFLIGHT_RETURN_IF_ERROR(apply_override(root, o));
  std::vector<YAML::Node> ancestors;
  if (!overrides.empty()) PREFLIGHT_RETURN_IF_ERROR(check_tree(root, "--set", "", &ancestors));
  return Status();
}

// load_scenario_text, before its error (if any) is made one line.
StatusOr<Scenario> load_text(const std::string& text, const std::string& source,
                             const std::vector<std::string>& overrides) {
  std::string name;
  PREFLIGHT_ASSIGN_OR_RETURN(YAML::Node root, parse_tree(text, source, &name));
  const YAML::Node default_model = root["model"];
  const std::string default_preset =
      text.empty() && default_model.IsMap() && default_model["preset"].IsScalar()
          ? default_model["preset"].Scalar()
          : "";
  PREFLIGHT_RETURN_IF_ERROR(apply_overrides(root, overrides));
  auto set = [&](const char* prefix) {
    return std::any_of(overrides.begin(), overrides.end(),
                       [&](const std::string& o) { return o.rfind(prefix, 0) == 0; });
  };
  // The default scenario is GPT-3 175B's job at its 2,048 tokens. Another model brings its own
  // pre-training sequence length (the preset's max_seq_len, which each preset sources) unless
  // --set gives one; the global batch stays the default scenario's, with a note.
  const bool other_model = text.empty() && set("model.");
  if (other_model && !set("training.seq_len=") && root["training"].IsMap()) {
    root["training"].remove("seq_len");
  }
  StatusOr<Scenario> s = invalid_argument("unreachable");
  try {
    s = build(root, name);
  } catch (const YAML::Exception& e) {
    return invalid_argument(name + ": malformed value: " + e.msg);
  }
  if (s.ok() && other_model && s->model.name != default_preset) {
    std::string note;
    if (!set("training.seq_len=")) {
      note = "training.seq_len " + std::to_string(s->training.seq_len) + " is " + s->model.name +
             "'s pre-training length (model.max_seq_len)";
    }
    if (!set("training.global_batch=")) {
      note += (note.empty() ? "" : "; ") + std::string("training.global_batch ") +
              std::to_string(s->training.global_batch) +
              " is the default scenario's (GPT-3 175B): set it for " + s->model.name;
    }
    if (!note.empty()) s->notes.push_back(note);
  }
  return s;
}

}  // namespace

StatusOr<Scenario> load_scenario_text(const std::string& text, const std::string& source,
                                      const std::vector<std::string>& overrides) {
  StatusOr<Scenario> s = load_text(text, source, overrides);
  if (!s.ok()) return one_line(s.status());
  return s;
}

namespace {

// The cluster section of `text` with `overrides` applied, and its simulation section when
// `simulation` is given.
Status load_cluster_and_simulation(const std::string& text, const std::string& source,
                                   const std::vector<std::string>& overrides, ClusterConfig* c,
                                   SimulationConfig* simulation) {
  try {
    std::string name;
    StatusOr<YAML::Node> root = parse_tree(text, source, &name);
    if (!root.ok()) return one_line(root.status());
    Status st = apply_overrides(*root, overrides);
    if (!st.ok()) return one_line(st);
    StatusOr<YAML::Node> cluster = resolve_cluster((*root)["cluster"], name);
    if (!cluster.ok()) return one_line(cluster.status());
    st = read_cluster(*cluster, name, c);
    if (!st.ok()) return one_line(st);
    if (simulation != nullptr) {
      st = read_simulation((*root)["simulation"], name, c->fabric, simulation);
      if (!st.ok()) return one_line(st);
    }
    return Status();
  } catch (const YAML::Exception& e) {
    return one_line(invalid_argument(source + ": malformed value: " + e.msg));
  }
}

}  // namespace

StatusOr<ClusterConfig> load_scenario_cluster_text(const std::string& text,
                                                   const std::string& source,
                                                   const std::vector<std::string>& overrides) {
  ClusterConfig c;
  PREFLIGHT_RETURN_IF_ERROR(load_cluster_and_simulation(text, source, overrides, &c, nullptr));
  return c;
}

StatusOr<SimulationConfig> load_scenario_simulation_text(
    const std::string& text, const std::string& source, const std::vector<std::string>& overrides) {
  ClusterConfig c;
  SimulationConfig simulation;
  PREFLIGHT_RETURN_IF_ERROR(load_cluster_and_simulation(text, source, overrides, &c, &simulation));
  return simulation;
}

StatusOr<std::string> read_scenario_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) return not_found(path + ": cannot open scenario file");
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) {
    return invalid_argument(path +
                            ": empty scenario file: expected sections model, cluster, "
                            "training, parallelism");
  }
  return text;
}

StatusOr<Scenario> load_scenario(const std::string& path,
                                 const std::vector<std::string>& overrides) {
  if (path.empty()) return load_scenario_text("", "", overrides);
  PREFLIGHT_ASSIGN_OR_RETURN(std::string text, read_scenario_file(path));
  return load_scenario_text(text, path, overrides);
}

StatusOr<ModelConfig> load_model_preset(const std::string& name) {
  PREFLIGHT_ASSIGN_OR_RETURN(YAML::Node node, find_preset("models", name));
  ModelConfig m;
  PREFLIGHT_RETURN_IF_ERROR(read_model(node, "presets/models/" + name + ".yaml", &m));
  return m;
}

namespace {

StatusOr<CollectiveSetup> collective_setup(const std::string& cluster_preset,
                                           const std::vector<std::string>& overrides) {
  YAML::Node root(YAML::NodeType::Map);
  root["cluster"]["preset"] = cluster_preset;
  for (const std::string& o : overrides) {
    const std::string key = o.substr(0, o.find('='));
    if (key.rfind("cluster.", 0) != 0 && key.rfind("collectives.", 0) != 0 &&
        key.rfind("simulation.packet.", 0) != 0 && key.rfind("simulation.flow.", 0) != 0) {
      return invalid_argument("--set " + o +
                              ": expected a cluster.*, collectives.*, simulation.packet.* or "
                              "simulation.flow.* key here");
    }
    PREFLIGHT_RETURN_IF_ERROR(apply_override(root, o));
  }
  CollectiveSetup setup;
  PREFLIGHT_ASSIGN_OR_RETURN(YAML::Node cluster, resolve_cluster(root["cluster"], "<flags>"));
  PREFLIGHT_RETURN_IF_ERROR(read_cluster(cluster, "<flags>", &setup.cluster));
  PREFLIGHT_RETURN_IF_ERROR(read_collectives(root["collectives"], "<flags>", &setup.collectives));
  // The packet and flow keys given, or the defaults of the cluster's fabric.
  const YAML::Node sim = root["simulation"];
  setup.has_packet = sim && sim["packet"];
  PREFLIGHT_RETURN_IF_ERROR(read_packet(setup.has_packet ? sim["packet"] : YAML::Node(), "<flags>",
                                        setup.cluster.fabric, &setup.packet));
  setup.has_flow = sim && sim["flow"];
  setup.flow_routing = default_flow_routing(setup.cluster.fabric);
  if (setup.has_flow) {
    YamlReader f(sim["flow"], "<flags>", "simulation.flow");
    setup.flow_routing = static_cast<FlowRouting>(
        f.get_choice("routing", static_cast<int>(setup.flow_routing), {"ecmp", "adaptive"}));
    PREFLIGHT_RETURN_IF_ERROR(f.finish());
  }
  return setup;
}

}  // namespace

StatusOr<ClusterConfig> load_cluster_preset(const std::string& name,
                                            const std::vector<std::string>& overrides) {
  std::vector<std::string> cluster_only;
  for (const std::string& o : overrides) {
    if (o.rfind("simulation.", 0) == 0) {
      return invalid_argument("--set " + o + ": expected a cluster.* key here");
    }
    if (o.rfind("collectives.", 0) != 0) cluster_only.push_back(o);
  }
  StatusOr<CollectiveSetup> setup = load_collective_setup(name, cluster_only);
  if (!setup.ok()) return setup.status();
  return setup->cluster;
}

StatusOr<CollectiveSetup> load_collective_setup(const std::string& cluster_preset,
                                                const std::vector<std::string>& overrides) {
  try {
    StatusOr<CollectiveSetup> s = collective_setup(cluster_preset, overrides);
    if (!s.ok()) return one_line(s.status());
    return s;
  } catch (const YAML::Exception& e) {
    return one_line(invalid_argument("<flags>: malformed value: " + e.msg));
  }
}

}  // namespace preflight
