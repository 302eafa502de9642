// `preflight simulate [SCENARIO.yaml] [--set k=v]... [--gpus N] [--workload simai:FILE]
// [--json FILE] [--csv FILE] [--trace FILE] [--report FILE.html] [--allow-oom]`
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "cli/common.h"
#include "config/loader.h"
#include "interop/chakra_replay.h"
#include "interop/simai_workload.h"
#include "report/chakra_html.h"
#include "report/chakra_report.h"
#include "report/html_report.h"
#include "report/report.h"
#include "simulate/simulate.h"

namespace preflight::cli {
namespace {

struct SimulateArgs {
  std::string scenario;
  std::vector<std::string> overrides;
  std::string json;
  std::string trace;
  std::string report;  // HTML report
  std::string trace_level = "blocks";
  std::string csv;       // a row per run, appended under one header
  std::string workload;  // "simai:FILE" or "chakra:PREFIX": run an imported workload
  int gpus = 0;          // --gpus N: cluster.gpus=N with dp: auto
  bool allow_oom = false;
  bool quiet = false;
};

// `--csv FILE`: the header and the row into a new or empty file, the row alone appended to a file
// that already starts with the same header; '-' writes both to stdout.
Status write_csv(const std::string& path, const SimulationReport& r) {
  const std::string header = report_csv_header();
  const std::string row = report_to_csv_row(r);
  if (path == "-") return write_output(path, header + row);
  std::string existing;
  {
    std::ifstream in(path, std::ios::binary);
    if (in) {
      std::stringstream ss;
      ss << in.rdbuf();
      existing = ss.str();
    }
  }
  if (existing.empty()) return write_output(path, header + row);
  if (existing.compare(0, header.size(), header) != 0) {
    return invalid_argument(path +
                            ": --csv: the file exists and does not start with simulate's CSV "
                            "header: expected a file an earlier `simulate --csv` wrote, or a new "
                            "path");
  }
  std::ofstream out(path, std::ios::binary | std::ios::app);
  if (existing.back() != '\n') out << '\n';
  out << row;
  out.close();
  if (!out) return invalid_argument(path + ": write failed");
  return Status();
}

// Warnings go to stderr, one line each, after the summary.
void print_warnings(const std::vector<std::string>& warnings, bool quiet) {
  if (quiet) return;
  std::fflush(stdout);
  for (const std::string& w : warnings) std::fprintf(stderr, "preflight: warning: %s\n", w.c_str());
}

// For an imported workload only the scenario's cluster, collectives and network matter: the
// workload's ranks replace its parallelism (config/loader.h: load_imported_scenario), on one
// node when the trace's rank count or the SimAI header's all_gpus decides the GPUs anyway.

// `--workload chakra:PREFIX`: replays one Chakra execution trace per rank on the scenario's
// cluster (interop/chakra_replay.h).
int run_chakra(const SimulateArgs& a, const std::string& prefix) {
  StatusOr<ChakraWorkload> w = load_chakra_workload(prefix);
  if (!w.ok()) return fail(w.status());
  StatusOr<Scenario> base =
      load_imported_scenario(a.scenario, a.overrides, ImportedCluster::kOneNode);
  if (!base.ok()) return fail(base.status());
  StatusOr<Scenario> s = chakra_scenario(static_cast<int>(w->ranks.size()), *base);
  if (!s.ok()) return fail(s.status());
  ChakraReplayOptions options;
  options.trace = !a.trace.empty() || !a.report.empty();  // the report's timeline
  const auto wall_start = std::chrono::steady_clock::now();
  StatusOr<ChakraReplayResult> r = replay_chakra(*w, *s, options);
  if (!r.ok()) return fail(r.status());
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  const bool json_to_stdout = a.json == "-";
  if (!a.quiet && !json_to_stdout) {
    std::fputs(format_chakra_summary(*r, *w, *s).c_str(), stdout);
    std::printf("\nreplayed in %.2f s (%lld nodes, %lld events)\n", wall,
                static_cast<long long>(r->nodes), static_cast<long long>(r->events));
  }
  if (!a.json.empty()) {
    Status st = write_output(a.json, chakra_result_json(*r, *w, *s));
    if (!st.ok()) return fail(st);
  }
  if (!a.trace.empty()) {
    Status st = write_output(a.trace, chakra_trace_events(*r));
    if (!st.ok()) return fail(st);
    if (!a.quiet && !json_to_stdout) {
      std::printf("trace written to %s (open it in https://ui.perfetto.dev)\n", a.trace.c_str());
    }
  }
  if (!a.report.empty()) {
    Status st = write_output(a.report, chakra_report_to_html(*r, *w, *s));
    if (!st.ok()) return fail(st);
    if (!a.quiet && !json_to_stdout) std::printf("report written to %s\n", a.report.c_str());
  }
  return kExitOk;
}

int run(const SimulateArgs& given) {
  SimulateArgs a = given;
  if (a.gpus > 0) {
    // The job on N GPUs: the GPU count replaces the node count, and DP follows it unless --set
    // names a DP of its own.
    std::vector<std::string> o = {"cluster.gpus=" + std::to_string(a.gpus)};
    const bool dp_given = std::any_of(a.overrides.begin(), a.overrides.end(), [](const auto& x) {
      return x.rfind("parallelism.dp=", 0) == 0;
    });
    if (!dp_given) o.push_back("parallelism.dp=auto");
    a.overrides.insert(a.overrides.begin(), o.begin(), o.end());
  }
  if (a.workload.rfind("chakra:", 0) == 0) return run_chakra(a, a.workload.substr(7));
  const bool simai = !a.workload.empty();
  StatusOr<SimaiWorkload> imported = invalid_argument("unreachable");
  if (simai) {
    if (a.workload.rfind("simai:", 0) != 0) {
      return fail(
          invalid_argument("--workload: " + a.workload + ": expected simai:FILE or chakra:PREFIX"));
    }
    imported = load_simai_workload(a.workload.substr(6));
    if (!imported.ok()) return fail(imported.status());
  }
  StatusOr<Scenario> scenario =
      simai ? load_imported_scenario(
                  a.scenario, a.overrides,
                  imported->all_gpus > 0 ? ImportedCluster::kOneNode : ImportedCluster::kAsGiven)
            : load_scenario(a.scenario, a.overrides);
  if (!scenario.ok()) return fail(scenario.status());
  SimulateOptions options;
  if (!a.trace.empty()) {
    options.trace = a.trace_level == "kernels" ? TraceLevel::kKernels : TraceLevel::kBlocks;
  } else if (!a.report.empty()) {
    options.trace =
        TraceLevel::kKernels;  // the report's timeline: every kernel, so exposed TP shows
  }
  StatusOr<SimulationReport> report = invalid_argument("unreachable");
  if (simai) {
    report = simulate_simai(*imported, *scenario, options);
  } else {
    report = simulate(*scenario, options);
  }
  if (!report.ok()) return fail(report.status());
  const bool json_to_stdout = a.json == "-";
  if (!a.quiet && !json_to_stdout) {
    const std::string summary =
        simai ? format_simai_summary(*report, a.workload.substr(6)) : format_summary(*report);
    std::fputs(summary.c_str(), stdout);
    // With partitions the packet network's events run on their own queues.
    int64_t events = report->execution.events;
    const NetworkStats& n = report->execution.network;
    if (report->execution.has_network_stats && n.packet_level && n.packet.partitions > 1) {
      events += n.packet.events;
    }
    std::printf("\nsimulated in %.2f s (%lld ops, %lld events)\n", report->wall_seconds,
                static_cast<long long>(report->execution.ops_executed),
                static_cast<long long>(events));
  }
  if (!a.json.empty()) {
    nlohmann::json j = report_to_json(*report);
    if (simai) {
      const SimaiColumns c = simai_columns(report->execution);
      j["simai"] = {{"exposed_dp_us", c.exposed_dp_us},
                    {"exposed_tp_us", c.exposed_tp_us},
                    {"exposed_ep_us", c.exposed_ep_us},
                    {"exposed_pp_us", c.exposed_pp_us},
                    {"bubble_us", c.bubble_us},
                    {"compute_us", c.compute_us},
                    {"exposed_comm_us", c.exposed_comm_us},
                    {"total_us", c.total_us}};
    }
    Status s = write_output(a.json,
                            j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
    if (!s.ok()) return fail(s);
  }
  if (!a.trace.empty()) {
    Status s = write_output(a.trace, trace_to_json(*report).dump(
                                         -1, ' ', false, nlohmann::json::error_handler_t::replace) +
                                         "\n");
    if (!s.ok()) return fail(s);
    if (!a.quiet && !json_to_stdout) {
      std::printf("trace written to %s (open it in https://ui.perfetto.dev)\n", a.trace.c_str());
    }
  }
  if (!a.report.empty()) {
    Status s = write_output(a.report, report_to_html(*report));
    if (!s.ok()) return fail(s);
    if (!a.quiet && !json_to_stdout) std::printf("report written to %s\n", a.report.c_str());
  }
  if (!a.csv.empty()) {
    Status s = write_csv(a.csv, *report);
    if (!s.ok()) return fail(s);
    if (!a.quiet && !json_to_stdout && a.csv != "-") {
      std::printf("csv row written to %s\n", a.csv.c_str());
    }
  }
  if (!a.json.empty() && a.json != "-" && !a.quiet) {
    std::printf("json written to %s\n", a.json.c_str());
  }
  const bool oom = !report->memory.fits && !report->memory.stages.empty();
  std::vector<std::string> warnings = report->warnings;
  if (oom && !a.allow_oom) {  // said below, as the error it is without --allow-oom
    warnings.erase(
        std::remove_if(warnings.begin(), warnings.end(),
                       [](const std::string& w) { return w.rfind("does not fit", 0) == 0; }),
        warnings.end());
  }
  print_warnings(warnings, a.quiet);
  if (oom) {
    const StageMemory& lim = report->memory.stages[report->memory.limiting_stage];
    if (a.allow_oom) return kExitOk;
    std::fprintf(stderr,
                 "preflight: does not fit: stage %d needs %.1f GiB of %.0f GiB HBM (exit code "
                 "3; `preflight memory` with the same scenario says what to change; --allow-oom "
                 "exits 0)\n",
                 lim.stage, lim.peak.to_gib(), lim.capacity.to_gib());
    return kExitDoesNotFit;
  }
  return kExitOk;
}

}  // namespace

void add_simulate_command(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<SimulateArgs>();
  auto* cmd = app.add_subcommand(
      "simulate",
      "Simulate one training iteration and report time, tokens/s, MFU and where the time goes.\n"
      "With no scenario file, runs the default scenario (GPT-3 175B on 128 DGX A100 nodes, "
      "TP 8 / PP 16 / DP 8); --set overrides any key, e.g.\n"
      "  preflight simulate --set model.preset=llama3-70b --set cluster.preset=dgx-h100 \\\n"
      "      --set cluster.nodes=64 --set parallelism.tp=8 --set parallelism.pp=4 \\\n"
      "      --set parallelism.dp=auto\n"
      "A MoE model with expert parallelism and a skewed router:\n"
      "  preflight simulate --set model.preset=mixtral-8x7b --set cluster.preset=dgx-h100 \\\n"
      "      --set cluster.nodes=8 --set parallelism.tp=2 --set parallelism.pp=1 \\\n"
      "      --set parallelism.dp=32 --set parallelism.ep=8 --set parallelism.etp=1 \\\n"
      "      --set training.seq_len=2048 --set training.global_batch=512 \\\n"
      "      --set model.moe.routing=zipf --set model.moe.zipf_exponent=1.2\n"
      "LLaMA-3 8B on 16 H100s (DP follows the GPU count), a row appended to runs.csv:\n"
      "  preflight simulate --set model.preset=llama3-8b --set cluster.preset=dgx-h100 \\\n"
      "      --set parallelism.tp=2 --set parallelism.pp=1 --gpus 16 --csv runs.csv\n"
      "Parallelism keys: tp, pp, dp, cp (+cp_kind ring|a2a), ep (+etp), vpp, schedule "
      "(gpipe|1f1b|interleaved|zb_h1|zb_h2|dualpipe), sequence_parallel, recompute "
      "(none|selective|full; +recompute_modules core_attn,layernorm,moe_act,mlp,moe,"
      "shared_experts,mla_up_proj), distributed_optimizer, zero_stage, overlap switches, "
      "offload_layers (activations of the first N layers to host memory at "
      "cluster.host_bandwidth; PP 1, no recompute); "
      "precision: bf16|fp16|fp8|"
      "fp8_blockwise|mxfp8|nvfp4 (fp8: +fp8_recipe delayed|current).\n"
      "Scenario sections: model, cluster, training, parallelism, collectives, simulation (see "
      "README).\n"
      "Warnings (a result that flatters: the balanced MoE router left as the default, a "
      "sequence past the model's, TP across nodes, memory headroom under 2.5 % of HBM or 2 GiB) "
      "go to stderr as 'preflight: warning: ...' and into the JSON's \"warnings\".\n"
      "Exit codes: 0 ok, 2 bad input, 3 simulated but the strategy does not fit in GPU memory "
      "(the outputs are still written; --allow-oom exits 0), 1 internal error.");
  cmd->add_option("scenario", args->scenario, "Scenario YAML file (default: built-in scenario)");
  cmd->add_option("--set", args->overrides,
                  "Override a key: section.key=value (repeatable), e.g. parallelism.tp=4, "
                  "cluster.nic_bandwidth=400Gbps")
      ->take_all();
  cmd->add_option("--json", args->json, "Write the JSON report to FILE ('-' for stdout)");
  cmd->add_option("--trace", args->trace,
                  "Write a Chrome trace-event file (open in Perfetto or chrome://tracing)");
  cmd->add_option("--report", args->report,
                  "Write a self-contained HTML report (timeline, breakdown, memory, network)");
  cmd->add_option("--trace-level", args->trace_level,
                  "Trace detail: blocks (a span per layer and comm op) or kernels (every op)")
      ->check(CLI::IsMember({"blocks", "kernels"}));
  cmd->add_option("--workload", args->workload,
                  "Run an imported workload instead of generating one: simai:FILE (a SimAI/AICB "
                  "workload .txt; tp, pp, ep, ga and the GPU count come from its header, the "
                  "cluster from the scenario), or chakra:PREFIX (Chakra execution traces "
                  "PREFIX.<rank>.et, one per rank, and PREFIX.comm_group.json if present; the "
                  "cluster from the scenario, ranks filling nodes in order; docs/interop.md)");
  cmd->add_option("--gpus", args->gpus,
                  "Run the job on N GPUs: sets cluster.gpus=N (the node count follows) and "
                  "parallelism.dp=auto unless --set gives a DP")
      ->check(CLI::Range(1, 1 << 24));
  cmd->add_option("--csv", args->csv,
                  "Append a row (scenario, strategy, time, tokens/s, MFU, breakdown, memory, "
                  "warnings) to FILE, writing the header into a new file; '-' for stdout");
  cmd->add_flag("--allow-oom", args->allow_oom,
                "Exit 0 when the strategy does not fit in GPU memory (a warning instead of exit "
                "code 3)");
  cmd->add_flag("--quiet,-q", args->quiet, "Print nothing but errors");
  cmd->callback([args, exit_code]() { *exit_code = run(*args); });
}

}  // namespace preflight::cli
