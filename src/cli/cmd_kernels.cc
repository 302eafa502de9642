// `preflight kernels`: kernel tables for the measured compute model (docs/kernel_tables.md).
//   --shapes SCENARIO...     the distinct kernels the scenarios run, as a shapes list for
//                            tools/kernel-profiler
//   --from-trace TRACE.json  a PyTorch profiler trace of a user's step, as a kernel table
//   --table TABLE [SCENARIO] how far the roofline is from the table, per kernel class, on the
//                            scenario's GPU
#include <cstdio>
#include <fstream>
#include <sstream>

#include "cli/common.h"
#include "compute/measured_model.h"
#include "config/loader.h"
#include "interop/kineto_trace.h"
#include "memory/memory_model.h"
#include "report/report.h"
#include "workload/generator.h"

namespace preflight::cli {
namespace {

struct KernelsArgs {
  std::vector<std::string> scenarios;
  std::vector<std::string> overrides;
  bool shapes = false;
  std::string from_trace;
  std::string table;
  std::string out = "-";
};

int shapes(const KernelsArgs& a) {
  KernelTable list;
  std::vector<std::string> scenarios = a.scenarios;
  if (scenarios.empty()) scenarios.push_back("");  // the built-in scenario
  for (size_t i = 0; i < scenarios.size(); ++i) {
    StatusOr<Scenario> s = load_scenario(scenarios[i], a.overrides);
    if (!s.ok()) return fail(s.status());
    if (i == 0) {
      list.gpu = s->cluster.gpu.name;
    } else if (list.gpu != s->cluster.gpu.name) {
      return fail(invalid_argument(
          (scenarios[i].empty() ? std::string("<default>") : scenarios[i]) +
          ": cluster.gpu: runs on " + s->cluster.gpu.name + ", the first scenario on " + list.gpu +
          ": a kernel table holds one GPU's kernels; list each GPU's scenarios apart"));
    }
    const Workload w = generate_workload(*s, offloaded_layer_bytes(*s));
    for (const KernelShape& k : workload_kernel_shapes(w, s->training.precision)) {
      bool seen = false;
      for (const KernelMeasurement& m : list.rows) seen = seen || m.shape.same_as(k);
      if (!seen) list.rows.push_back({k, 0, 0, 0, 0});
    }
  }
  const Status st = write_output(a.out, write_kernel_table(list, /*with_times=*/false));
  if (!st.ok()) return fail(st);
  if (a.out != "-") {
    std::fprintf(stderr, "preflight kernels: %zu kernel shapes written to %s\n", list.rows.size(),
                 a.out.c_str());
  }
  return kExitOk;
}

int from_trace(const KernelsArgs& a) {
  std::ifstream in(a.from_trace, std::ios::binary);
  if (!in) return fail(not_found(a.from_trace + ": cannot read the trace"));
  std::ostringstream text;
  text << in.rdbuf();
  StatusOr<KinetoConversion> c = kineto_to_kernel_table(text.str(), a.from_trace);
  if (!c.ok()) return fail(c.status());
  const Status st = write_output(a.out, write_kernel_table(c->table, /*with_times=*/true));
  if (!st.ok()) return fail(st);
  std::fprintf(stderr,
               "preflight kernels: %zu kernel rows from %lld GPU kernels (%.1f %% of their %.3f "
               "ms); %lld kernels matched no CPU op, %lld op instances had no input shapes "
               "(record_shapes=True)\n",
               c->table.rows.size(), static_cast<long long>(c->kernels),
               c->kernel_time_us > 0 ? 100 * c->table_time_us / c->kernel_time_us : 0.0,
               c->kernel_time_us * 1e-3, static_cast<long long>(c->unmatched_kernels),
               static_cast<long long>(c->shapeless_ops));
  return kExitOk;
}

int compare(const KernelsArgs& a) {
  if (a.scenarios.size() > 1) {
    return fail(invalid_argument("--table: expected at most one scenario (its GPU and precision)"));
  }
  StatusOr<KernelTable> t = read_kernel_table(a.table, /*require_times=*/true);
  if (!t.ok()) return fail(t.status());
  StatusOr<Scenario> s = load_scenario(a.scenarios.empty() ? "" : a.scenarios[0], a.overrides);
  if (!s.ok()) return fail(s.status());
  const std::vector<RooflineComparison> rows = compare_with_roofline(
      *t, s->cluster.gpu, s->training.precision, s->training.stack.attention_kernel);
  std::printf("# roofline of %s against %s (%zu kernels%s%s): roofline / measured time\n",
              s->cluster.gpu.name.c_str(), a.table.c_str(), t->rows.size(),
              t->gpu.empty() ? "" : ", measured on ", t->gpu.c_str());
  std::printf("%-18s %6s %10s %10s %10s %14s %14s\n", "class", "rows", "mean", "min", "max",
              "measured (us)", "roofline (us)");
  for (const RooflineComparison& c : rows) {
    std::printf("%-18s %6d %10.3f %10.3f %10.3f %14.1f %14.1f\n", c.kernel_class.c_str(), c.rows,
                c.mean_ratio, c.min_ratio, c.max_ratio, c.measured_us, c.roofline_us);
  }
  return kExitOk;
}

int run(const KernelsArgs& a) {
  const int modes = (a.shapes ? 1 : 0) + (a.from_trace.empty() ? 0 : 1) + (a.table.empty() ? 0 : 1);
  if (modes != 1) {
    return fail(invalid_argument(
        "kernels: expected exactly one of --shapes, --from-trace TRACE.json, --table TABLE"));
  }
  if (!a.from_trace.empty() && !a.scenarios.empty()) {
    return fail(invalid_argument("--from-trace: takes no scenario"));
  }
  if (a.shapes) return shapes(a);
  if (!a.from_trace.empty()) return from_trace(a);
  return compare(a);
}

}  // namespace

void add_kernels_command(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<KernelsArgs>();
  auto* cmd = app.add_subcommand(
      "kernels",
      "Kernel tables for `compute.model: measured` (docs/kernel_tables.md):\n"
      "  preflight kernels --shapes examples/llama3-70b-h100.yaml --out shapes.csv\n"
      "      the distinct GEMMs, attention kernels and memory-bound kernels the scenarios run;\n"
      "      then, on the GPU: preflight-kernel-profiler --shapes shapes.csv --out table.csv\n"
      "  preflight kernels --from-trace tests/data/kineto_step.json --out table.csv\n"
      "      a PyTorch profiler trace (record_shapes=True, CUDA activity; this one is the\n"
      "      repository's small example of the format) as a kernel table\n"
      "  preflight kernels --table table.csv examples/llama3-70b-h100.yaml\n"
      "      the roofline against the table, per kernel class, on the scenario's GPU\n"
      "Then run a scenario with `compute: {model: measured, kernel_table: table.csv}`: shapes in "
      "the table take their measured time, shapes inside a box of measured ones are "
      "interpolated in log space, the rest fall back to the roofline; the summary and JSON say "
      "what share of compute time came from each.");
  cmd->add_option("scenario", args->scenarios,
                  "Scenario YAML files (default: the built-in scenario)");
  cmd->add_option("--set", args->overrides, "Override a key in every scenario: section.key=value")
      ->take_all();
  cmd->add_flag("--shapes", args->shapes, "List the kernel shapes the scenarios run");
  cmd->add_option("--from-trace", args->from_trace,
                  "Convert a PyTorch profiler (Kineto) Chrome trace to a kernel table");
  cmd->add_option("--table", args->table,
                  "Compare a kernel table with the roofline on the scenario's GPU");
  cmd->add_option("--out", args->out, "Where --shapes and --from-trace write ('-' = stdout)");
  cmd->callback([args, exit_code]() { *exit_code = run(*args); });
}

}  // namespace preflight::cli
