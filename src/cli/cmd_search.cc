// `preflight search [SCENARIO.yaml] [--gpus N] [--top K] [--objective time|cost|mfu] [--jobs J]
// [--space key=v1,v2,...]... [--csv FILE] [--json FILE] [--report FILE.html] [--tokens 1T]`:
// every valid parallelization strategy of the scenario's model on its cluster, ranked.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <thread>

#include "base/text.h"
#include "cli/common.h"
#include "config/loader.h"
#include "report/report.h"
#include "report/search_html.h"
#include "report/search_report.h"
#include "search/cost.h"
#include "search/process_group.h"
#include "search/search.h"
#include "search/search_base.h"

namespace preflight::cli {
namespace {

struct SearchArgs {
  std::string scenario;
  std::vector<std::string> overrides;
  std::vector<std::string> space;
  int gpus = 0;
  int top = 10;
  std::string objective = "time";
  int jobs = std::max(1u, std::thread::hardware_concurrency());
  double price = -1;
  std::string tokens;
  std::string csv;
  std::string json;
  std::string report;  // HTML report
  std::string headroom = "auto";
  bool quiet = false;
};

// A one-line bar on stderr, redrawn when the percentage changes; only on a terminal.
class ProgressBar {
 public:
  explicit ProgressBar(bool enabled) : enabled_(enabled) {}
  void update(int64_t done, int64_t total) {
    if (!enabled_ || total <= 0) return;
    const int percent = static_cast<int>(100 * done / total);
    if (percent == last_percent_ && done != total) return;
    last_percent_ = percent;
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    const int filled = percent * 30 / 100;
    std::fprintf(stderr, "\r[%s%s] %3d %%  %s/%s candidates  %.0f/s ",
                 std::string(filled, '#').c_str(), std::string(30 - filled, '.').c_str(), percent,
                 with_commas(done).c_str(), with_commas(total).c_str(),
                 elapsed > 0 ? done / elapsed : 0.0);
    std::fflush(stderr);
  }
  void finish() {
    if (enabled_ && last_percent_ >= 0) std::fputs("\r\033[K", stderr);
  }

 private:
  bool enabled_;
  int last_percent_ = -1;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

void print_summary(const Scenario& base, const SearchArgs& a, const SearchResult& r,
                   const TrainingCost* budget, int processes, double seconds) {
  std::printf("Preflight search: %s on %s x %s (global batch %s x %s tokens), objective: %s\n",
              base.model.name.c_str(), with_commas(r.gpus).c_str(), base.cluster.gpu.name.c_str(),
              with_commas(base.training.global_batch).c_str(),
              with_commas(base.training.seq_len).c_str(), a.objective.c_str());
  std::printf(
      "space: %s combinations, %s valid, %s fit in memory and were simulated on the "
      "analytical network",
      with_commas(r.combinations).c_str(), with_commas(r.candidates).c_str(),
      with_commas(r.evaluated).c_str());
  if (r.reevaluated > 0) {
    std::printf("; the best %d again on the %s network", r.reevaluated, r.final_network.c_str());
  }
  std::printf("\nrejected:\n");
  std::vector<std::pair<std::string, int64_t>> reasons(r.rejected.begin(), r.rejected.end());
  std::stable_sort(reasons.begin(), reasons.end(),
                   [](const auto& x, const auto& y) { return x.second > y.second; });
  for (const auto& [reason, count] : reasons) {
    std::printf("  %9s  %s\n", with_commas(count).c_str(), reason.c_str());
  }
  std::printf("\n");
  std::fputs(format_search_table(r, a.top).c_str(), stdout);
  if (budget != nullptr) {
    const double days = budget->time_s / 86400;
    std::printf("\ntraining %s tokens with rank 1: %s iterations, %.1f days, %s GPU-hours",
                a.tokens.c_str(), with_commas(budget->iterations).c_str(), days,
                with_commas(static_cast<int64_t>(budget->gpu_hours + 0.5)).c_str());
    if (budget->usd > 0) {
      std::printf(", $%s at $%.2f per GPU-hour",
                  with_commas(static_cast<int64_t>(budget->usd + 0.5)).c_str(),
                  base.cluster.gpu_hour_price);
    }
    std::printf("\n");
  }
  const double rate = r.evaluate_seconds > 0 ? r.candidates / r.evaluate_seconds : 0.0;
  std::printf(
      "\nsearched in %.1f s on %d thread%s x %d process%s: %s candidates checked and %s "
      "simulated in %.1f s (%.0f candidates/s)",
      seconds, a.jobs, a.jobs == 1 ? "" : "s", processes, processes == 1 ? "" : "es",
      with_commas(r.candidates).c_str(), with_commas(r.evaluated).c_str(), r.evaluate_seconds,
      rate);
  if (r.reevaluated > 0) {
    std::printf(", the best %d on the %s network in %.1f s", r.reevaluated, r.final_network.c_str(),
                r.reevaluate_seconds);
  }
  std::printf("\n");
}

int run(const SearchArgs& a) {
  const auto start = std::chrono::steady_clock::now();
  std::unique_ptr<ProcessGroup> group = make_process_group_from_environment();
  const bool root = group->rank() == 0;
  // The candidates are built from this scenario, resized to --gpus (search/search_base.h).
  StatusOr<Scenario> base = load_search_base(
      [&a](const std::vector<std::string>& overrides) {
        return load_scenario(a.scenario, overrides);
      },
      a.overrides, a.price, a.gpus);
  if (!base.ok()) return root ? fail(base.status()) : kExitBadInput;
  SearchSpace space;
  for (const std::string& axis : a.space) {
    Status s = set_space_axis(&space, axis);
    if (!s.ok()) return root ? fail(s) : kExitBadInput;
  }
  StatusOr<Objective> objective = parse_objective(a.objective);
  if (!objective.ok()) return root ? fail(objective.status()) : kExitBadInput;
  double token_budget = 0;
  if (!a.tokens.empty()) {
    StatusOr<double> t = parse_token_count(a.tokens);
    if (!t.ok()) return root ? fail(t.status()) : kExitBadInput;
    token_budget = *t;
  }
  Bytes headroom(-1);  // auto: the GPU's recommended headroom
  if (a.headroom != "auto") {
    StatusOr<Bytes> h = parse_bytes(a.headroom);
    if (!h.ok() || h->count() < 0 || h->count() >= base->cluster.gpu.hbm_capacity.count()) {
      return root ? fail(invalid_argument(
                        "--headroom: " + escape_for_message(a.headroom) +
                        ": expected auto or a size below the GPU's HBM, e.g. 4GiB or 0GiB" +
                        (h.ok() ? "" : " (" + h.status().message() + ")")))
                  : kExitBadInput;
    }
    headroom = *h;
  }
  const bool to_stdout = a.json == "-" || a.csv == "-";
  ProgressBar bar(root && !a.quiet && isatty(2));
  SearchOptions options;
  options.objective = *objective;
  options.jobs = a.jobs;
  options.top_k = a.top;
  options.headroom = headroom;
  options.group = group.get();
  options.on_progress = [&bar](int64_t done, int64_t total) { bar.update(done, total); };
  StatusOr<SearchResult> r = search(*base, space, options);
  bar.finish();
  if (!r.ok()) return root ? fail(r.status()) : kExitBadInput;
  if (!r->root) return kExitOk;

  TrainingCost budget;
  const StrategyResult& best = r->results.front();
  if (token_budget > 0) {
    budget = training_cost(r->gpus, base->cluster.gpu_hour_price, best.iteration_time_s,
                           r->tokens_per_iteration, token_budget);
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!a.quiet && !to_stdout) {
    print_summary(*base, a, *r, token_budget > 0 ? &budget : nullptr, group->size(), seconds);
  }
  if (!a.csv.empty()) {
    Status s = write_output(a.csv, search_to_csv(*r));
    if (!s.ok()) return fail(s);
  }
  if (!a.json.empty()) {
    nlohmann::json j = search_to_json(*r);
    j["objective"] = a.objective;
    if (token_budget > 0) {
      j["training_budget"] = {{"tokens", budget.tokens},
                              {"iterations", budget.iterations},
                              {"time_s", budget.time_s},
                              {"gpu_hours", budget.gpu_hours},
                              {"usd", budget.usd}};
    }
    j["scenario"] = scenario_to_json(*base);
    Status s = write_output(a.json,
                            j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
    if (!s.ok()) return fail(s);
  }
  if (!a.report.empty()) {
    SearchHtmlOptions html;
    html.objective = a.objective;
    html.top = a.top;
    html.space = a.space;
    Status s = write_output(a.report, search_to_html(*base, *r, html));
    if (!s.ok()) return fail(s);
    if (!a.quiet && !to_stdout) std::printf("report written to %s\n", a.report.c_str());
  }
  return kExitOk;
}

}  // namespace

void add_search_command(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<SearchArgs>();
  auto* cmd = app.add_subcommand(
      "search",
      "Find the fastest (or cheapest) parallelization strategy: enumerate every combination of "
      "TP, PP, CP, EP, VPP and schedule, micro-batch, recompute, sequence parallelism and "
      "distributed optimizer / ZeRO, reject the invalid ones and those that do not fit in HBM "
      "(counting why), simulate the rest on J threads on the analytical network, simulate the "
      "best K again on the scenario's network when it is `flow`, and print the ranked table.\n"
      "Examples:\n"
      "  preflight search                                # GPT-3 175B on 1,024 A100s\n"
      "  preflight search --gpus 512 --top 5 --tokens 300B\n"
      "  preflight search examples/llama3-70b-h100.yaml --objective cost --price 2.5\n"
      "  preflight search --space parallelism.tp=4,8 --space recompute=selective,full \\\n"
      "      --set simulation.network=flow --csv ranked.csv --json ranked.json\n"
      "  preflight search --report search.html            # the table and a chart, in a browser\n"
      "  mpirun -np 4 preflight search ...             # split over 4 processes (MPI build)\n"
      "Space axes (--space key=v1,v2,...): tp, pp, cp, ep, vpp, micro_batch, recompute, "
      "sequence_parallel, distributed_optimizer, zero_stage, schedule, offload_layers; defaults in "
      "docs/search.md.");
  cmd->add_option("scenario", args->scenario, "Scenario YAML file (default: built-in scenario)");
  cmd->add_option("--set", args->overrides,
                  "Override a key: section.key=value (repeatable), e.g. "
                  "simulation.network=flow to re-rank the best K on the flow network")
      ->take_all()
      ->allow_extra_args(false);
  cmd->add_option("--gpus", args->gpus,
                  "GPUs to search on (default: the scenario's cluster); a multiple of "
                  "cluster.gpus_per_node");
  cmd->add_option("--space", args->space,
                  "Values of one axis, e.g. parallelism.tp=4,8 or micro_batch=1,2 (repeatable)")
      ->take_all()
      ->allow_extra_args(false);
  cmd->add_option("--top", args->top, "Strategies to print and re-evaluate (default 10)");
  cmd->add_option("--objective", args->objective,
                  "Rank by iteration time, cost per token or MFU (default time)")
      ->check(CLI::IsMember({"time", "cost", "mfu"}));
  cmd->add_option("--jobs,-j", args->jobs,
                  "Worker threads per process (default: the CPU count); results do not depend "
                  "on it");
  cmd->add_option("--price", args->price,
                  "USD per GPU-hour (default: the cluster preset's gpu_hour_price)");
  cmd->add_option("--tokens", args->tokens,
                  "Token budget, e.g. 1T or 300B: time, GPU-hours and dollars to train it with "
                  "the best strategy");
  cmd->add_option("--csv", args->csv,
                  "Write every evaluated strategy, ranked, as CSV ('-': stdout)");
  cmd->add_option("--json", args->json,
                  "Write JSON ('-': stdout): evaluated, rejected (by reason), results[] with "
                  "strategy, iteration_time_s, tokens_per_s, mfu, peak_bytes, cost_per_mtok");
  cmd->add_option("--report", args->report,
                  "Write a self-contained HTML report (opens offline): the space and rejections "
                  "by reason, the ranked table of the --top best, and a chart of every simulated "
                  "strategy, tokens/s against memory per GPU, with the Pareto front and HBM line");
  cmd->add_option("--headroom", args->headroom,
                  "HBM every strategy must leave free per GPU, e.g. 4GiB (default auto: 2.5 % of "
                  "HBM, at least 2 GiB; the peak is an estimate and a real job's moves with "
                  "fragmentation and NCCL buffers); 0GiB admits a strategy that just fits");
  cmd->add_flag("--quiet,-q", args->quiet, "Print nothing but errors");
  cmd->callback([args, exit_code]() { *exit_code = run(*args); });
}

}  // namespace preflight::cli
