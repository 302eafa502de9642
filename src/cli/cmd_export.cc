// `preflight export simai [SCENARIO.yaml] [--set k=v]... [--stage N] -o FILE`: writes the
// generated workload of one pipeline stage (default 0) in SimAI/AICB's workload format
// (interop/simai_workload.h).
#include <cstdio>

#include "cli/common.h"
#include "config/loader.h"
#include "interop/simai_workload.h"
#include "report/report.h"

namespace preflight::cli {
namespace {

struct ExportArgs {
  std::string scenario;
  std::vector<std::string> overrides;
  std::string output;
  int stage = 0;
};

int run_simai(const ExportArgs& a) {
  StatusOr<Scenario> scenario = load_scenario(a.scenario, a.overrides);
  if (!scenario.ok()) return fail(scenario.status());
  StatusOr<SimaiExport> e = export_simai(*scenario, a.stage);
  if (!e.ok()) return fail(e.status());
  Status s = write_output(a.output, write_simai_workload(e->workload));
  if (!s.ok()) return fail(s);
  if (!e->dropped.empty()) {
    std::fprintf(stderr,
                 "preflight: note: %zu collectives have no SimAI equivalent and were left out "
                 "(first: %s)\n",
                 e->dropped.size(), e->dropped.front().c_str());
  }
  return kExitOk;
}

}  // namespace

void add_export_command(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand("export", "Write the generated workload in another tool's format.");
  cmd->require_subcommand(1);
  auto args = std::make_shared<ExportArgs>();
  auto* simai = cmd->add_subcommand(
      "simai",
      "Write one pipeline stage's workload as a SimAI/AICB workload file "
      "(HYBRID_TRANSFORMER_FWD_IN_BCKWD): per-layer compute in ns from the roofline model, "
      "communication types and sizes, ga copies of one micro-batch, e.g.\n"
      "  preflight export simai --set model.preset=llama3-8b -o llama.txt\n"
      "Read it back with `preflight simulate --workload simai:llama.txt` (docs/interop.md).");
  simai->add_option("scenario", args->scenario, "Scenario YAML file (default: built-in scenario)");
  simai->add_option("--set", args->overrides, "Override a key: section.key=value (repeatable)")
      ->take_all();
  simai->add_option("--stage", args->stage,
                    "Pipeline stage to write (default 0, as AICB; the import runs it on every "
                    "stage)");
  simai->add_option("-o,--output", args->output, "Output file ('-' for stdout)")->required();
  simai->callback([args, exit_code]() { *exit_code = run_simai(*args); });
}

}  // namespace preflight::cli
