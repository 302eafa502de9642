// `preflight memory [SCENARIO.yaml] [--set k=v]... [--json FILE]`: memory per GPU of every
// pipeline stage and whether the strategy fits in HBM.
#include <cstdio>

#include "cli/common.h"
#include "config/loader.h"
#include "memory/memory_advice.h"
#include "memory/memory_model.h"
#include "report/report.h"

namespace preflight::cli {
namespace {

struct MemoryArgs {
  std::string scenario;
  std::vector<std::string> overrides;
  std::string json;
};

int run(const MemoryArgs& a) {
  StatusOr<Scenario> scenario = load_scenario(a.scenario, a.overrides);
  if (!scenario.ok()) return fail(scenario.status());
  const MemoryReport m = estimate_memory(*scenario);
  if (a.json != "-") {
    const Scenario& s = *scenario;
    const ParallelismConfig& p = s.parallelism;
    std::printf(
        "Preflight memory: %s on %d x %s; TP %d, PP %d, DP %d%s, %s, micro-batch %d, "
        "recompute %s%s, ZeRO %d\n\n",
        s.model.name.c_str(), s.cluster.total_gpus(), s.cluster.gpu.name.c_str(), p.tp, p.pp, p.dp,
        p.vpp > 1 ? (", VPP " + std::to_string(p.vpp)).c_str() : "", to_string(p.schedule),
        s.training.micro_batch, recompute_description(p).c_str(),
        p.sequence_parallel ? ", sequence parallel" : "", effective_zero_stage(s));
    std::printf(
        "GiB per GPU (activ = activations held at the peak by the in-flight "
        "micro-batches; buffers = comm buckets + logits/loss):\n");
    std::fputs(format_memory_table(m).c_str(), stdout);
    const StageMemory& lim = m.stages[m.limiting_stage];
    if (m.fits) {
      std::printf("\nfits: yes; the limiting stage is %d with %.2f GiB of headroom\n", lim.stage,
                  lim.headroom.to_gib());
    } else {
      std::printf("\nfits: NO; stage %d needs %.2f GiB, %.2f GiB more than the %.0f GiB of HBM\n",
                  lim.stage, lim.peak.to_gib(), -lim.headroom.to_gib(), lim.capacity.to_gib());
      for (const std::string& a : memory_advice(*scenario, m))
        std::printf("  try: %s\n", a.c_str());
    }
  }
  if (!a.json.empty()) {
    nlohmann::json j = memory_to_json(*scenario, m);
    j["scenario"] = scenario_to_json(*scenario);
    Status s = write_output(a.json,
                            j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
    if (!s.ok()) return fail(s);
  }
  return m.fits ? kExitOk : kExitDoesNotFit;
}

}  // namespace

void add_memory_command(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<MemoryArgs>();
  auto* cmd = app.add_subcommand(
      "memory",
      "Memory per GPU of every pipeline stage: weights, gradients, optimizer states, activations "
      "of the in-flight micro-batches, buffers, framework overhead, peak against HBM, and the "
      "stage that limits. Formulas: docs/memory.md.");
  cmd->add_option("scenario", args->scenario, "Scenario YAML file (default: built-in scenario)");
  cmd->add_option("--set", args->overrides,
                  "Override a key: section.key=value (repeatable), e.g. parallelism.zero_stage=1")
      ->take_all();
  cmd->add_option("--json", args->json,
                  "Write JSON ('-' for stdout): stages[] with weights_bytes, gradients_bytes, "
                  "optimizer_bytes, activations_bytes, peak_bytes, fits, ...");
  cmd->callback([args, exit_code]() { *exit_code = run(*args); });
}

}  // namespace preflight::cli
