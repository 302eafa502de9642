// `preflight export simai [SCENARIO.yaml] [--set k=v]... [--stage N] -o FILE`: writes the
// generated workload of one pipeline stage (default 0) in SimAI/AICB's workload format
// (interop/simai_workload.h).
// `preflight export chakra [SCENARIO.yaml] [--set k=v]... -o PREFIX`: one Chakra execution trace
// per rank, PREFIX.<rank>.et, and PREFIX.comm_group.json (interop/chakra_export.h).
#include <cstdio>

#include "cli/common.h"
#include "config/loader.h"
#include "interop/chakra_export.h"
#include "interop/simai_workload.h"
#include "report/report.h"

namespace preflight::cli {
namespace {

struct ExportArgs {
  std::string scenario;
  std::vector<std::string> overrides;
  std::string output;
  int stage = 0;
  int64_t max_nodes = kChakraDefaultMaxNodes;
  bool quiet = false;
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

int run_chakra(const ExportArgs& a) {
  StatusOr<Scenario> scenario = load_scenario(a.scenario, a.overrides);
  if (!scenario.ok()) return fail(scenario.status());
  StatusOr<ChakraWorkload> w = export_chakra(*scenario, a.max_nodes);
  if (!w.ok()) return fail(w.status());
  Status s = write_chakra_workload(*w, a.output);
  if (!s.ok()) return fail(s);
  if (!a.quiet) {
    int64_t nodes = 0;
    for (const ChakraTrace& t : w->ranks) nodes += static_cast<int64_t>(t.nodes.size());
    std::printf("wrote %s.0.et .. %s.%zu.et (%zu ranks, %lld nodes) and %s.comm_group.json "
                "(%zu communicators)\n",
                a.output.c_str(), a.output.c_str(), w->ranks.size() - 1, w->ranks.size(),
                static_cast<long long>(nodes), a.output.c_str(), w->groups.size());
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

  auto* chakra = cmd->add_subcommand(
      "chakra",
      "Write the generated workload as Chakra execution traces, one per rank of the job "
      "(PREFIX.<rank>.et, Megatron's rank order: tp fastest, then cp, dp, pp) and the "
      "communicator groups (PREFIX.comm_group.json, ASTRA-sim's --comm-group-configuration). "
      "Every kernel launch, kernel, collective and pipeline send/recv is a node; dependencies "
      "encode the host thread and the compute, TP and DP streams, so replaying the traces gives "
      "the simulated iteration time. Kernels carry duration_micros (exact picoseconds in "
      "preflight.duration_ps), num_ops and tensor_size; a straggler of simulation.slow_ranks "
      "has its slowed kernels in its own trace (a window from/until is refused). E.g.\n"
      "  preflight export chakra --set model.preset=llama3-8b --set cluster.preset=dgx-h100 \\\n"
      "      --set cluster.nodes=1 --set parallelism.tp=4 --set parallelism.pp=2 \\\n"
      "      --set parallelism.dp=auto --set training.global_batch=16 -o llama\n"
      "  preflight simulate --workload chakra:llama --set cluster.preset=dgx-h100\n"
      "Or give ASTRA-sim --workload-configuration=llama (docs/interop.md).");
  chakra->add_option("scenario", args->scenario, "Scenario YAML file (default: built-in scenario)");
  chakra->add_option("--set", args->overrides, "Override a key: section.key=value (repeatable)")
      ->take_all();
  chakra->add_option("--max-nodes", args->max_nodes,
                     "Refuse exports with more nodes than this over all ranks (default 20000000; "
                     "a node takes about 100 bytes)");
  chakra->add_flag("--quiet,-q", args->quiet, "Print nothing but errors");
  chakra->add_option("-o,--output", args->output,
                     "Output prefix: writes PREFIX.<rank>.et and PREFIX.comm_group.json")
      ->required();
  chakra->callback([args, exit_code]() { *exit_code = run_chakra(*args); });
}

}  // namespace preflight::cli
