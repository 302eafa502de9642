// `preflight sweep [SCENARIO.yaml] --vary KEY=V1,V2,... [--vary ...] [--set k=v]... [--search]
// [--jobs J] [--csv FILE] [--json FILE] [--plot FILE.svg] [--report FILE.html]`: the cross
// product of hardware or strategy changes, each point simulated (optionally with its best
// strategy re-searched), as a table of speedups.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <memory>
#include <thread>

#include "cli/common.h"
#include "report/report.h"
#include "report/sweep_html.h"
#include "report/sweep_report.h"
#include "search/search.h"
#include "sweep/sweep.h"
#include "sweep/sweep_search.h"

namespace preflight::cli {
namespace {

struct SweepArgs {
  std::string scenario;
  std::vector<std::string> overrides;
  std::vector<std::string> vary;
  bool search = false;
  std::vector<std::string> space;
  std::string objective = "time";
  int top = 10;
  int jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::string csv;
  std::string json;
  std::string plot;
  std::string plot_metric = "iteration_time";
  std::string title;
  std::string report;  // HTML report
  bool quiet = false;
};

// "GPT-3 175B on 1,024 GPUs": the title of the chart, from the first point.
std::string default_title(const SweepResult& r) {
  for (const SweepPoint& p : r.points) {
    if (!p.status.ok()) continue;
    const Scenario& s = p.scenario;
    std::string gpus = std::to_string(s.cluster.total_gpus());
    for (int i = static_cast<int>(gpus.size()) - 3; i > 0; i -= 3) gpus.insert(i, ",");
    return s.model.name + " on " + gpus + " GPUs (" + s.cluster.name + ")";
  }
  return "preflight sweep";
}

int run(const SweepArgs& a) {
  std::vector<SweepAxis> axes;
  for (const std::string& spec : a.vary) {
    StatusOr<SweepAxis> axis = parse_sweep_axis(spec);
    if (!axis.ok()) return fail(axis.status());
    axes.push_back(*std::move(axis));
  }
  StatusOr<SweepMetric> metric = parse_sweep_metric(a.plot_metric);
  if (!metric.ok()) return fail(metric.status());
  SweepOptions options;
  options.jobs = a.jobs;
  if (a.search) {
    SearchSpace space;
    for (const std::string& axis : a.space) {
      Status s = set_space_axis(&space, axis);
      if (!s.ok()) return fail(s);
    }
    StatusOr<Objective> objective = parse_objective(a.objective);
    if (!objective.ok()) return fail(objective.status());
    // One point at a time, each search on every thread: a search has thousands of candidates,
    // a sweep a handful of points.
    std::vector<std::string> varied;
    for (const SweepAxis& axis : axes) varied.push_back(axis.key);
    options.find_strategy = search_strategy_finder(space, varied, *objective, a.jobs, a.top);
    options.jobs = 1;
    if (isatty(fileno(stderr)) && !a.quiet) {
      // A search per point takes seconds to minutes: say which point is being searched.
      size_t points = 1;
      for (const SweepAxis& axis : axes) points *= axis.values.size();
      auto done = std::make_shared<std::atomic<size_t>>(0);
      options.find_strategy = [finder = options.find_strategy, done,
                               points](const Scenario& s) -> StatusOr<Scenario> {
        std::fprintf(stderr, "sweep: searching point %zu of %zu...\n", ++*done, points);
        return finder(s);
      };
    }
  } else if (!a.space.empty()) {
    return fail(invalid_argument("--space " + a.space[0] + ": only with --search"));
  }
  if (a.csv == "-" && a.json == "-") {
    return fail(invalid_argument("--json -: --csv - already writes to stdout; give one a file"));
  }
  StatusOr<SweepResult> r = run_sweep(a.scenario, a.overrides, axes, options);
  if (!r.ok()) return fail(r.status());
  const bool to_stdout = a.csv == "-" || a.json == "-";  // nothing else goes there
  if (!a.quiet && !to_stdout) std::fputs(format_sweep_table(*r).c_str(), stdout);
  if (!a.csv.empty()) {
    Status s = write_output(a.csv, sweep_to_csv(*r));
    if (!s.ok()) return fail(s);
  }
  if (!a.json.empty()) {
    Status s = write_output(
        a.json,
        sweep_to_json(*r).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
    if (!s.ok()) return fail(s);
    if (!a.quiet && !to_stdout) std::printf("json written to %s\n", a.json.c_str());
  }
  if (!a.plot.empty()) {
    const std::string title = a.title.empty() ? default_title(*r) : a.title;
    Status s = write_output(a.plot, render_bar_chart_svg(sweep_chart(*r, *metric, title)));
    if (!s.ok()) return fail(s);
  }
  if (!a.report.empty()) {
    const std::string title = a.title.empty() ? default_title(*r) : a.title;
    Status s = write_output(a.report, sweep_to_html(*r, title));
    if (!s.ok()) return fail(s);
    if (!a.quiet && !to_stdout) std::printf("report written to %s\n", a.report.c_str());
  }
  return kExitOk;
}

}  // namespace

void add_sweep_command(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<SweepArgs>();
  auto* cmd = app.add_subcommand(
      "sweep",
      "Sweep hardware or strategy: simulate every combination of the --vary values (each point "
      "= the scenario + --set + the point's keys, as `simulate` reads them) and print a table "
      "of iteration time, tokens/s, MFU, peak memory and the speedup over the first point.\n"
      "Examples:\n"
      "  preflight sweep --vary cluster.nic_bandwidth=100Gbps,200Gbps,400Gbps\n"
      "  preflight sweep --set cluster.preset=dgx-h100 \\\n"
      "      --vary cluster.gpu=H100-SXM5-80GB,H20 --vary cluster.nic_bandwidth=200Gbps,400Gbps "
      "\\\n"
      "      --search --plot nic.svg --csv nic.csv   # best strategy re-searched per point\n"
      "  preflight sweep examples/llama3-70b-h100.yaml --vary parallelism.pp=2,4,8 \\\n"
      "      --vary training.micro_batch=1,2 --plot-metric mfu --plot pp.svg\n"
      "  preflight sweep --vary cluster.nic_bandwidth=100Gbps,400Gbps --report nic.html \\\n"
      "      --json nic.json   # the rows as JSON objects, the CSV's fields\n"
      "Each point must load: the scenario's strategy has to be valid on every point's cluster "
      "(with --search it is only the starting point). A value that fails at every point (an "
      "unknown key, a value without its unit) exits 2 naming it; a point that fails alone shows "
      "its error in the table.");
  cmd->add_option("scenario", args->scenario, "Scenario YAML file (default: built-in scenario)");
  cmd->add_option("--vary", args->vary,
                  "A key and its values, KEY=V1,V2,... (repeatable; the last key varies "
                  "fastest), e.g. cluster.nic_bandwidth=100Gbps,400Gbps or cluster.nodes=64,128")
      ->required()
      ->allow_extra_args(false);
  cmd->add_option("--set", args->overrides,
                  "Override a key at every point: section.key=value (repeatable)")
      ->take_all()
      ->allow_extra_args(false);
  cmd->add_flag(
      "--search", args->search,
      "Re-search each point's best strategy (as `preflight search`) before simulating it; "
      "varied strategy keys (e.g. parallelism.tp) keep the point's value");
  cmd->add_option("--space", args->space,
                  "With --search: values of one search axis, e.g. parallelism.tp=4,8 "
                  "(repeatable; see `preflight search --help`)")
      ->take_all()
      ->allow_extra_args(false);
  cmd->add_option("--objective", args->objective, "With --search: rank by time, cost or mfu")
      ->check(CLI::IsMember({"time", "cost", "mfu"}));
  cmd->add_option("--top", args->top,
                  "With --search: candidates simulated again on the flow network when the "
                  "scenario uses it (default 10)")
      ->check(CLI::Range(1, 100000));
  cmd->add_option("--jobs,-j", args->jobs,
                  "Threads (default: the CPU count); the output does not depend on it")
      ->check(CLI::Range(1, 1024));
  cmd->add_option("--csv", args->csv, "Write every point as CSV ('-': stdout)");
  cmd->add_option("--json", args->json,
                  "Write every point as a JSON array of objects with the CSV's fields, numbers "
                  "as numbers, a failed point's figures null ('-': stdout)");
  cmd->add_option("--plot", args->plot,
                  "Write an SVG bar chart: a bar per point; with two or more keys the last one "
                  "is the legend");
  cmd->add_option("--plot-metric", args->plot_metric,
                  "What the chart shows: iteration_time (default), tokens_per_s or mfu")
      ->check(CLI::IsMember({"iteration_time", "tokens_per_s", "mfu"}));
  cmd->add_option("--title", args->title,
                  "Chart and report title (default: the model and cluster)");
  cmd->add_option("--report", args->report,
                  "Write a self-contained HTML report (opens offline): the table of points, bar "
                  "charts of iteration time, tokens/s and MFU, and tokens/s against cost per hour "
                  "(or GPUs) with the Pareto front");
  cmd->add_flag("--quiet,-q", args->quiet, "Print nothing but errors");
  cmd->callback([args, exit_code]() { *exit_code = run(*args); });
}

}  // namespace preflight::cli
