// The Python module `preflight`: simulate, memory, search, sweep, collective and presets, each
// taking a scenario dict or a YAML path (or None for the default scenario; sweep: a path or None)
// and returning plain dicts with the keys of the matching `preflight ... --json` output. The JSON
// comes from the same report functions the CLI uses and is handed to Python's json.loads, so the
// keys agree by construction. Errors raise preflight.Error with the CLI's one-line message (without
// its "preflight: error: " prefix). The GIL is released while a scenario simulates or a search
// runs, so threads overlap.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "config/loader.h"
#include "config/presets.h"
#include "interop/chakra_export.h"
#include "interop/chakra_replay.h"
#include "memory/memory_model.h"
#include "report/chakra_report.h"
#include "report/collective_table.h"
#include "report/html_report.h"
#include "report/report.h"
#include "report/search_report.h"
#include "report/sweep_report.h"
#include "search/cost.h"
#include "search/search.h"
#include "search/search_base.h"
#include "simulate/simulate.h"
#include "sweep/sweep.h"
#include "sweep/sweep_search.h"

namespace py = pybind11;

namespace preflight {
namespace {

// preflight.Error, created at import.
PyObject* g_error = nullptr;

[[noreturn]] void raise(const Status& s) {
  PyErr_SetString(g_error, s.message().c_str());
  throw py::error_already_set();
}

template <typename T>
T value_or_raise(StatusOr<T> v) {
  if (!v.ok()) raise(v.status());
  return std::move(*v);
}

template <typename Json>
py::object to_python(const Json& j) {
  return py::module_::import("json").attr("loads")(
      j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

// A dict scenario over the default scenario: the sections the dict leaves out come from the
// default, except `parallelism`, which comes from it only when `cluster` does too (its strategy
// is sized for the default's 1,024 GPUs); otherwise an omitted `parallelism` is the loader's
// (TP 1, PP 1, DP over every GPU). `name` and `description` are never inherited.
StatusOr<std::string> dict_scenario_text(const py::dict& scenario) {
  const std::string json = py::str(py::module_::import("json").attr("dumps")(scenario));
  YAML::Node given;
  try {
    given = YAML::Load(json);  // JSON is YAML
  } catch (const YAML::Exception& e) {
    return invalid_argument("<dict>: " + e.msg);
  }
  PREFLIGHT_ASSIGN_OR_RETURN(std::string default_text, preset_text("scenarios", "default"));
  const YAML::Node defaults = YAML::Load(default_text);
  YAML::Node merged(YAML::NodeType::Map);
  for (const auto& kv : given) merged[kv.first.Scalar()] = kv.second;
  for (const char* section :
       {"model", "cluster", "training", "parallelism", "collectives", "simulation"}) {
    if (given[section]) continue;
    if (std::string(section) == "parallelism" && given["cluster"]) continue;
    if (defaults[section]) merged[section] = defaults[section];
  }
  // Another model than the default's brings its own pre-training sequence length (its
  // max_seq_len), as `--set model.preset=...` on the default scenario does; the JSON's
  // "defaults" names it.
  if (given["model"] && !given["training"] && merged["training"].IsMap()) {
    YAML::Node training = YAML::Clone(merged["training"]);
    training.remove("seq_len");
    merged["training"] = training;
  }
  YAML::Emitter out;
  out << YAML::DoubleQuoted << YAML::Flow << merged;
  return std::string(out.c_str());
}

// None: the default scenario; str: a YAML file; dict: see dict_scenario_text. Anything else
// raises TypeError. `imported`: for a workload imported from a trace, whose ranks fix the
// strategy (config/loader.h: load_imported_scenario), as `simulate --workload` loads it.
StatusOr<Scenario> try_load(const py::object& scenario, const std::vector<std::string>& overrides,
                            std::optional<ImportedCluster> imported = std::nullopt) {
  std::string text, source;
  if (scenario.is_none()) {
  } else if (py::isinstance<py::str>(scenario)) {
    source = scenario.cast<std::string>();
    PREFLIGHT_ASSIGN_OR_RETURN(text, read_scenario_file(source));
  } else if (py::isinstance<py::dict>(scenario)) {
    source = "<dict>";
    PREFLIGHT_ASSIGN_OR_RETURN(text, dict_scenario_text(scenario.cast<py::dict>()));
  } else {
    throw py::type_error("scenario: expected a dict, a path to a YAML file or None");
  }
  if (imported) return load_imported_scenario_text(text, source, overrides, *imported);
  return load_scenario_text(text, source, overrides);
}

Scenario load(const py::object& scenario, const std::vector<std::string>& overrides) {
  return value_or_raise(try_load(scenario, overrides));
}

// With `trace` and `report`, also writes the files `preflight simulate --trace FILE
// --trace-level LEVEL --report FILE.html` writes, byte for byte.
py::object py_simulate(const py::object& scenario, const std::vector<std::string>& set,
                       const std::optional<std::string>& trace,
                       const std::optional<std::string>& report_html,
                       const std::string& trace_level) {
  if (trace_level != "blocks" && trace_level != "kernels") {
    raise(invalid_argument("trace_level " + trace_level + ": expected blocks or kernels"));
  }
  const Scenario s = load(scenario, set);
  SimulateOptions options;
  if (trace) {
    options.trace = trace_level == "kernels" ? TraceLevel::kKernels : TraceLevel::kBlocks;
  } else if (report_html) {
    options.trace = TraceLevel::kKernels;  // the report's timeline, as the CLI's
  }
  StatusOr<SimulationReport> report = invalid_argument("");
  Status written;
  {
    py::gil_scoped_release release;
    report = simulate(s, options);
    if (report.ok() && trace) {
      written = write_output(*trace, trace_to_json(*report).dump(
                                         -1, ' ', false, nlohmann::json::error_handler_t::replace) +
                                         "\n");
    }
    if (report.ok() && written.ok() && report_html) {
      written = write_output(*report_html, report_to_html(*report));
    }
  }
  const SimulationReport r = value_or_raise(std::move(report));
  if (!written.ok()) raise(written);
  return to_python(report_to_json(r));
}

// One value of a `vary` dict as the CLI would spell it: True -> "true", 100 -> "100".
std::string axis_text(const py::handle& v) {
  if (py::isinstance<py::bool_>(v)) return v.cast<bool>() ? "true" : "false";
  return py::str(v);
}

// `vary` as --vary specs: a list of "KEY=V1,V2,..." strings (or one string), or a dict
// {KEY: [V1, V2, ...]} (a single value for a one-point axis).
std::vector<std::string> vary_specs(const py::object& vary) {
  std::vector<std::string> specs;
  if (py::isinstance<py::str>(vary)) return {vary.cast<std::string>()};
  if (py::isinstance<py::dict>(vary)) {
    for (const auto& [key, values] : vary.cast<py::dict>()) {
      std::string spec = py::str(key).cast<std::string>() + "=";
      if (py::isinstance<py::str>(values) || !py::isinstance<py::iterable>(values)) {
        spec += axis_text(values);
      } else {
        bool first = true;
        for (const py::handle& v : values) {
          spec += (first ? "" : ",") + axis_text(v);
          first = false;
        }
      }
      specs.push_back(spec);
    }
    return specs;
  }
  if (py::isinstance<py::list>(vary) || py::isinstance<py::tuple>(vary)) {
    for (const py::handle& v : vary) {
      if (!py::isinstance<py::str>(v)) {
        throw py::type_error("vary: expected \"KEY=V1,V2,...\" strings or a dict {KEY: [values]}");
      }
      specs.push_back(v.cast<std::string>());
    }
    return specs;
  }
  throw py::type_error(
      "vary: expected a list of \"KEY=V1,V2,...\" strings or a dict {KEY: [values]}");
}

// `preflight sweep [SCENARIO] --vary ... --set ... [--search --space ... --objective ... --top
// ...] --jobs J --json -`: the JSON rows as a list of dicts.
py::list py_sweep(const py::object& scenario, const py::object& vary,
                  const std::vector<std::string>& set, bool search_each,
                  const std::vector<std::string>& space_axes, const std::string& objective, int top,
                  std::optional<int> jobs) {
  if (!scenario.is_none() && !py::isinstance<py::str>(scenario)) {
    throw py::type_error("scenario: expected a path to a YAML file or None");
  }
  const std::string path = scenario.is_none() ? "" : scenario.cast<std::string>();
  std::vector<SweepAxis> axes;
  for (const std::string& spec : vary_specs(vary)) {
    axes.push_back(value_or_raise(parse_sweep_axis(spec)));
  }
  const int threads = jobs.value_or(std::max(1u, std::thread::hardware_concurrency()));
  if (threads < 1) raise(invalid_argument("jobs " + std::to_string(threads) + ": expected >= 1"));
  if (top < 1) raise(invalid_argument("top " + std::to_string(top) + ": expected >= 1"));
  SweepOptions options;
  options.jobs = threads;
  if (search_each) {
    SearchSpace space;
    for (const std::string& axis : space_axes) {
      Status s = set_space_axis(&space, axis);
      if (!s.ok()) raise(s);
    }
    std::vector<std::string> varied;
    for (const SweepAxis& axis : axes) varied.push_back(axis.key);
    // As the CLI: one point at a time, each search on every thread.
    options.find_strategy = search_strategy_finder(
        space, varied, value_or_raise(parse_objective(objective)), threads, top);
    options.jobs = 1;
  } else if (!space_axes.empty()) {
    raise(invalid_argument("space " + space_axes[0] + ": only with search=True"));
  }
  StatusOr<SweepResult> result = invalid_argument("");
  {
    py::gil_scoped_release release;
    result = run_sweep(path, set, axes, options);
  }
  return to_python(sweep_to_json(value_or_raise(std::move(result))));
}

py::object py_memory(const py::object& scenario, const std::vector<std::string>& set) {
  const Scenario s = load(scenario, set);
  nlohmann::json j;
  {
    py::gil_scoped_release release;
    j = memory_to_json(s, estimate_memory(s));
  }
  j["scenario"] = scenario_to_json(s);
  return to_python(j);
}

// Chakra execution traces (interop/chakra_*.h): the generated workload of `scenario` written as
// PREFIX.<rank>.et + PREFIX.comm_group.json; a summary of what was written.
py::object py_export_chakra(const py::object& scenario, const std::vector<std::string>& set,
                            const std::string& prefix, int64_t max_nodes) {
  const Scenario s = load(scenario, set);
  StatusOr<ChakraWorkload> w = invalid_argument("");
  Status written;
  {
    py::gil_scoped_release release;
    w = export_chakra(s, max_nodes);
    if (w.ok()) written = write_chakra_workload(*w, prefix);
  }
  const ChakraWorkload& out = value_or_raise(std::move(w));
  if (!written.ok()) raise(written);
  nlohmann::json j{{"prefix", prefix}, {"ranks", out.ranks.size()}, {"groups", out.groups.size()}};
  int64_t nodes = 0;
  for (const ChakraTrace& t : out.ranks) nodes += static_cast<int64_t>(t.nodes.size());
  j["nodes"] = nodes;
  return to_python(j);
}

// Replays PREFIX.<rank>.et on the cluster of `scenario` (its parallelism is not used; one that
// does not fit gives way to a neutral one, as in the CLI): the `simulate --workload
// chakra:PREFIX --json` document.
py::object py_replay_chakra(const std::string& prefix, const py::object& scenario,
                            const std::vector<std::string>& set) {
  const Scenario base = value_or_raise(try_load(scenario, set, ImportedCluster::kOneNode));
  std::string json;
  Status failed;
  {
    py::gil_scoped_release release;
    StatusOr<ChakraWorkload> w = load_chakra_workload(prefix);
    StatusOr<Scenario> s = w.ok() ? chakra_scenario(static_cast<int>(w->ranks.size()), base)
                                  : StatusOr<Scenario>(w.status());
    StatusOr<ChakraReplayResult> r =
        s.ok() ? replay_chakra(*w, *s) : StatusOr<ChakraReplayResult>(s.status());
    if (r.ok()) {
      json = chakra_result_json(*r, *w, *s);
    } else {
      failed = r.status();
    }
  }
  if (!failed.ok()) raise(failed);
  return py::module_::import("json").attr("loads")(json);
}

py::object py_search(const py::object& scenario, const std::vector<std::string>& set,
                     const std::vector<std::string>& space_axes, const std::string& objective,
                     std::optional<int> jobs, int top, double price, const std::string& tokens,
                     int gpus) {
  const Scenario base = value_or_raise(load_search_base(
      [&scenario](const std::vector<std::string>& overrides) {
        return try_load(scenario, overrides);
      },
      set, price, gpus));
  SearchSpace space;
  for (const std::string& axis : space_axes) {
    Status s = set_space_axis(&space, axis);
    if (!s.ok()) raise(s);
  }
  SearchOptions options;
  options.objective = value_or_raise(parse_objective(objective));
  options.jobs = jobs.value_or(std::max(1u, std::thread::hardware_concurrency()));
  options.top_k = top;
  const double token_budget = tokens.empty() ? 0 : value_or_raise(parse_token_count(tokens));
  StatusOr<SearchResult> result = invalid_argument("");
  {
    py::gil_scoped_release release;
    result = search(base, space, options);
  }
  const SearchResult r = value_or_raise(std::move(result));
  nlohmann::json j = search_to_json(r);
  j["objective"] = objective;
  if (token_budget > 0) {
    const TrainingCost budget =
        training_cost(r.gpus, base.cluster.gpu_hour_price, r.results.front().iteration_time_s,
                      r.tokens_per_iteration, token_budget);
    j["training_budget"] = {{"tokens", budget.tokens},
                            {"iterations", budget.iterations},
                            {"time_s", budget.time_s},
                            {"gpu_hours", budget.gpu_hours},
                            {"usd", budget.usd}};
  }
  j["scenario"] = scenario_to_json(base);
  return to_python(j);
}

py::object py_collective(const std::string& cluster, const std::string& op,
                         const std::string& sizes, int nodes, int gpus_per_node,
                         const std::vector<std::string>& set, const std::string& network) {
  CollectiveRequest request;
  request.network = network;
  request.cluster = cluster;
  request.op = op;
  request.sizes = sizes;
  request.nodes = nodes;
  request.gpus_per_node = gpus_per_node;
  request.overrides = set;
  StatusOr<CollectiveTable> table = invalid_argument("");
  {
    py::gil_scoped_release release;
    table = predict_collective_table(request);
  }
  return to_python(collective_table_to_json(value_or_raise(std::move(table))));
}

py::list py_presets(const std::string& kind) {
  if (!kind.empty() && kind != "gpus" && kind != "clusters" && kind != "models" &&
      kind != "scenarios") {
    raise(invalid_argument("--kind " + kind + ": expected gpus, clusters, models or scenarios"));
  }
  py::list out;
  for (const PresetInfo& p : list_presets()) {
    if (!kind.empty() && p.kind != kind) continue;
    py::dict d;
    d["kind"] = p.kind;
    d["name"] = p.name;
    d["description"] = p.description;
    out.append(d);
  }
  return out;
}

std::string py_preset_text(const std::string& name, const std::string& kind) {
  for (const char* k : {"gpus", "clusters", "models", "scenarios"}) {
    if (!kind.empty() && kind != k) continue;
    StatusOr<std::string> text = preset_text(k, name);
    if (text.ok()) return *text;
  }
  raise(not_found("unknown preset '" + name + "' (see `preflight presets`)"));
}

}  // namespace
}  // namespace preflight

PYBIND11_MODULE(preflight, m) {
  using namespace preflight;
  m.doc() =
      "Preflight: predict LLM training iteration time, memory and MFU on GPU clusters.\n"
      "Each function takes a scenario dict, a path to a scenario YAML file or None (the default "
      "scenario), plus `set=[\"section.key=value\", ...]` overrides as the CLI's --set, and "
      "returns the dict that `preflight <command> --json` writes.";
  g_error =
      PyErr_NewExceptionWithDoc("preflight.Error", "A Preflight error: the CLI's one-line message.",
                                PyExc_Exception, nullptr);
  m.attr("Error") = py::handle(g_error);
  m.attr("__version__") = PREFLIGHT_VERSION;
  m.def("simulate", &py_simulate, py::arg("scenario") = py::none(), py::kw_only(),
        py::arg("set") = std::vector<std::string>{}, py::arg("trace") = py::none(),
        py::arg("report") = py::none(), py::arg("trace_level") = "blocks",
        "Simulates one training iteration: the `preflight simulate --json` document "
        "(iteration_time_s, tokens_per_s, mfu, breakdown, memory, scenario, ...). trace: also "
        "write the Chrome trace-event file there (as --trace; trace_level blocks or kernels, as "
        "--trace-level); report: also write the self-contained HTML report there (as --report).");
  m.def("sweep", &py_sweep, py::arg("scenario") = py::none(), py::kw_only(), py::arg("vary"),
        py::arg("set") = std::vector<std::string>{}, py::arg("search") = false,
        py::arg("space") = std::vector<std::string>{}, py::arg("objective") = "time",
        py::arg("top") = 10, py::arg("jobs") = py::none(),
        "Simulates every combination of the vary values (as `preflight sweep`): a list with a "
        "dict per point, the rows of `preflight sweep --json` (the varied keys, tp, pp, dp, cp, "
        "ep, vpp, micro_batch, recompute, schedule, iteration_time_s, tokens_per_s, mfu, "
        "tflops_per_gpu, peak_memory_bytes, hbm_bytes, fits, speedup, error). scenario: a YAML "
        "path or None; vary: [\"KEY=V1,V2,...\", ...] as --vary, or {KEY: [V1, V2, ...]}; "
        "search: re-search each point's strategy (space, objective, top as in search()); jobs: "
        "threads (default: the CPU count).");
  m.def("memory", &py_memory, py::arg("scenario") = py::none(), py::kw_only(),
        py::arg("set") = std::vector<std::string>{},
        "Memory per GPU of every pipeline stage: the `preflight memory --json` document.");
  m.def("search", &py_search, py::arg("scenario") = py::none(), py::kw_only(),
        py::arg("set") = std::vector<std::string>{}, py::arg("space") = std::vector<std::string>{},
        py::arg("objective") = "time", py::arg("jobs") = py::none(), py::arg("top") = 10,
        py::arg("price") = -1.0, py::arg("tokens") = "", py::arg("gpus") = 0,
        "Ranks every valid strategy of the scenario's model on its cluster: the `preflight "
        "search --json` document. space: axes as --space ('tp=4,8'); objective: time, cost or "
        "mfu; jobs: worker threads (default: the CPU count); top: strategies re-evaluated; price: "
        "USD per GPU-hour; "
        "tokens: a budget such as '1T'; gpus: search on this many GPUs (0: the scenario's).");
  m.def("collective", &py_collective, py::arg("cluster") = "dgx-h100", py::kw_only(),
        py::arg("op") = "all_reduce", py::arg("sizes") = "8B:16GiB", py::arg("nodes") = 0,
        py::arg("gpus_per_node") = 0, py::arg("set") = std::vector<std::string>{},
        py::arg("network") = "analytical",
        "Predicts an nccl-tests table: the `preflight collective --json` document (op, network, "
        "ranks, rows of bytes, time_us, algbw_gbps, busbw_gbps, algorithm, protocol, channels); "
        "network: analytical, flow or packet.");
  m.def("export_chakra", &py_export_chakra, py::arg("scenario") = py::none(), py::kw_only(),
        py::arg("set") = std::vector<std::string>{}, py::arg("prefix"),
        py::arg("max_nodes") = kChakraDefaultMaxNodes,
        "Writes the scenario's generated workload as Chakra execution traces, PREFIX.<rank>.et "
        "and PREFIX.comm_group.json (as `preflight export chakra -o PREFIX`); returns {prefix, "
        "ranks, nodes, groups}.");
  m.def("replay_chakra", &py_replay_chakra, py::arg("prefix"), py::arg("scenario") = py::none(),
        py::kw_only(), py::arg("set") = std::vector<std::string>{},
        "Replays Chakra execution traces PREFIX.<rank>.et on the scenario's cluster (its "
        "parallelism must load but is not used): the `preflight simulate --workload "
        "chakra:PREFIX --json` document (iteration_time_s, critical_rank, breakdown, per_rank, "
        "network, ...).");
  m.def("presets", &py_presets, py::arg("kind") = "",
        "The built-in presets: a list of {kind, name, description}; kind: gpus, clusters, "
        "models or scenarios (empty: all).");
  m.def("preset_text", &py_preset_text, py::arg("name"), py::arg("kind") = "",
        "The YAML text of one preset (as `preflight presets --show NAME`).");
}
