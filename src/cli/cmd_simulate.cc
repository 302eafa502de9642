// `preflight simulate [SCENARIO.yaml] [--set k=v]... [--json FILE] [--trace FILE]`
#include <cstdio>

#include "cli/common.h"
#include "config/loader.h"
#include "report/report.h"
#include "simulate/simulate.h"

namespace preflight::cli {
namespace {

struct SimulateArgs {
  std::string scenario;
  std::vector<std::string> overrides;
  std::string json;
  std::string trace;
  std::string trace_level = "blocks";
  bool quiet = false;
};

int run(const SimulateArgs& a) {
  StatusOr<Scenario> scenario = load_scenario(a.scenario, a.overrides);
  if (!scenario.ok()) return fail(scenario.status());
  SimulateOptions options;
  if (!a.trace.empty()) {
    options.trace = a.trace_level == "kernels" ? TraceLevel::kKernels : TraceLevel::kBlocks;
  }
  StatusOr<SimulationReport> report = simulate(*scenario, options);
  if (!report.ok()) return fail(report.status());
  const bool json_to_stdout = a.json == "-";
  if (!a.quiet && !json_to_stdout) {
    std::fputs(format_summary(*report).c_str(), stdout);
    std::printf("\nsimulated in %.2f s (%lld ops, %lld events)\n", report->wall_seconds,
                static_cast<long long>(report->execution.ops_executed),
                static_cast<long long>(report->execution.events));
  }
  if (!a.json.empty()) {
    Status s = write_output(a.json, report_to_json(*report).dump(2) + "\n");
    if (!s.ok()) return fail(s);
  }
  if (!a.trace.empty()) {
    Status s = write_output(a.trace, trace_to_json(*report).dump() + "\n");
    if (!s.ok()) return fail(s);
    if (!a.quiet && !json_to_stdout) {
      std::printf("trace written to %s (open it in https://ui.perfetto.dev)\n", a.trace.c_str());
    }
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
      "      --set cluster.nodes=64 --set parallelism.tp=8 --set parallelism.pp=4\n"
      "A MoE model with expert parallelism and a skewed router:\n"
      "  preflight simulate --set model.preset=mixtral-8x7b --set cluster.preset=dgx-h100 \\\n"
      "      --set cluster.nodes=8 --set parallelism.tp=2 --set parallelism.pp=1 \\\n"
      "      --set parallelism.dp=32 --set parallelism.ep=8 --set parallelism.etp=1 \\\n"
      "      --set model.moe.routing=zipf --set model.moe.zipf_exponent=1.2\n"
      "Parallelism keys: tp, pp, dp, cp (+cp_kind ring|a2a), ep (+etp), vpp, schedule "
      "(gpipe|1f1b|interleaved|zb_h1|zb_h2|dualpipe), sequence_parallel, recompute, "
      "distributed_optimizer, zero_stage, overlap switches; precision: bf16|fp16|fp8|"
      "fp8_blockwise|mxfp8|nvfp4.\n"
      "Scenario sections: model, cluster, training, parallelism, collectives, simulation (see "
      "README).");
  cmd->add_option("scenario", args->scenario, "Scenario YAML file (default: built-in scenario)");
  cmd->add_option("--set", args->overrides,
                  "Override a key: section.key=value (repeatable), e.g. parallelism.tp=4, "
                  "cluster.nic_bandwidth=400Gbps")
      ->take_all();
  cmd->add_option("--json", args->json, "Write the JSON report to FILE ('-' for stdout)");
  cmd->add_option("--trace", args->trace,
                  "Write a Chrome trace-event file (open in Perfetto or chrome://tracing)");
  cmd->add_option("--trace-level", args->trace_level,
                  "Trace detail: blocks (a span per layer and comm op) or kernels (every op)")
      ->check(CLI::IsMember({"blocks", "kernels"}));
  cmd->add_flag("--quiet,-q", args->quiet, "Print nothing but errors");
  cmd->callback([args, exit_code]() { *exit_code = run(*args); });
}

}  // namespace preflight::cli
