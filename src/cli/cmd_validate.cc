// `preflight validate [--dataset single|multi|FILE] [--cv K] [--calibrate] [--json FILE]`
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <thread>

#include "cli/common.h"
#include "report/report.h"
#include "validation/dataset.h"
#include "validation/published_validate.h"
#include "validation/validate.h"

namespace preflight::cli {
namespace {

struct ValidateArgs {
  std::vector<std::string> datasets;
  std::string data_dir;
  std::string json;
  int cv = 0;
  bool calibrate = false;
  int jobs = 0;
  uint64_t seed = 1;
  int max_evaluations = 120;
  bool summary_only = false;
  int row = 0;  // --row: print the scenario of this CSV line instead of validating
};

nlohmann::json finite_or_null(double x) {
  return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(nullptr);
}

// Ranking accuracy per job: a row per job for sets with a few jobs (the multi-node set), one line
// for sets with many (the single-node set: --json lists them).
void print_ranking(const std::vector<SetMetrics>& sets) {
  constexpr size_t kMaxListed = 12;
  std::printf(
      "\nranking within each job (same model, GPUs, global batch; only the strategy "
      "differs):\nregret = measured time of Preflight's first-ranked strategy over the "
      "fastest measured, target <= %.0f%%\n",
      kRegretTargetPct);
  std::printf("%-8s %-10s %5s %6s %5s %9s %8s %s\n", "set", "model", "gpus", "batch", "rows",
              "Spearman", "regret", "<=5%");
  for (const SetMetrics& m : sets) {
    int within = 0;
    double sum = 0, worst = 0;
    for (const GroupMetrics& g : m.jobs) {
      within += g.regret_pct <= kRegretTargetPct;
      sum += g.regret_pct;
      worst = std::max(worst, g.regret_pct);
      if (m.jobs.size() > kMaxListed) continue;
      std::printf("%-8s %-10s %5d %6d %5d %9.3f %7.2f%% %s\n", m.set.c_str(), g.model.c_str(),
                  g.gpus, g.global_batch, g.rows, g.spearman, g.regret_pct,
                  g.regret_pct <= kRegretTargetPct ? "yes" : "no");
    }
    if (m.jobs.empty()) continue;
    std::printf("%-8s %d of %zu jobs within %.0f%%; regret mean %.2f%%, max %.2f%%%s\n",
                m.set.c_str(), within, m.jobs.size(), kRegretTargetPct, sum / m.jobs.size(), worst,
                m.jobs.size() > kMaxListed ? " (--json lists every job)" : "");
  }
}

// The first line of `path`, or "" when it cannot be read.
std::string first_line(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return "";
  std::string line;
  for (int c = std::fgetc(f); c != EOF && c != '\n' && line.size() < 4096; c = std::fgetc(f)) {
    line += static_cast<char>(c);
  }
  std::fclose(f);
  return line;
}

void print_group_table(const std::vector<GroupError>& groups) {
  std::printf("%-10s %-26s %5s %8s %8s %8s %8s %9s %9s\n", "by", "group", "rows", "MAPE", "MdAPE",
              "p90", "bias", "med.bias", "within10");
  std::string last;
  for (const GroupError& g : groups) {
    if (g.by != last && !last.empty()) std::printf("\n");
    last = g.by;
    std::printf("%-10s %-26.26s %5d %7.2f%% %7.2f%% %7.2f%% %+7.2f%% %+8.2f%% %8.1f%%\n",
                g.by.c_str(), g.group.c_str(), g.rows, g.mape_pct, g.mdape_pct, g.p90_pct,
                g.bias_pct, g.median_bias_pct, g.within10_pct);
  }
}

// --row LINE: the scenario a published row runs as, ready for `preflight simulate FILE`, with
// the iteration time its metric implies and what was assumed beyond the row.
int print_row_scenario(const std::vector<PublishedRow>& rows, int line) {
  for (const PublishedRow& row : rows) {
    if (row.line != line) continue;
    StatusOr<PublishedCase> c = published_case(row);
    if (!c.ok()) {
      return fail(Status(
          StatusCode::kInvalidArgument,
          row.file + ":" + std::to_string(line) + ": not simulated: " + c.status().message()));
    }
    std::printf("# %s line %d: %s %s on %d %s, %s = %g\n", row.file.c_str(), line,
                row.source.c_str(), row.model.c_str(), row.num_gpus, row.gpu.c_str(),
                row.metric.c_str(), row.value);
    std::printf("# measured iteration time %.3f ms; family %s, %s, stack %s\n", c->measured_ms,
                c->family.c_str(), c->kind.c_str(), c->stack.c_str());
    if (!c->notes.empty()) std::printf("# assumed: %s\n", c->notes.c_str());
    if (!c->layer_metric.empty()) {
      std::printf("# compared with the blocks %s of one layer, not the iteration\n",
                  c->layer_metric.c_str());
    }
    std::fputs(c->yaml.c_str(), stdout);
    return kExitOk;
  }
  return fail(Status(StatusCode::kInvalidArgument, "--row " + std::to_string(line) +
                                                       ": no data row on that line (the first "
                                                       "data row is line 2)"));
}

int run_published(const ValidateArgs& a, const std::vector<std::string>& paths) {
  std::vector<PublishedRow> rows;
  for (const std::string& path : paths) {
    StatusOr<std::vector<PublishedRow>> r = load_published_csv(path);
    if (!r.ok()) {
      return fail(Status(r.status().code(),
                         r.status().message() +
                             " (set PREFLIGHT_DATA_DIR or --data-dir to the folder holding "
                             "published/)"));
    }
    rows.insert(rows.end(), r->begin(), r->end());
  }
  if (a.row > 0) return print_row_scenario(rows, a.row);
  ValidationOptions o;
  if (isatty(fileno(stderr))) {
    o.progress = [](const std::string& line) {
      std::fprintf(stderr, "validate: %s...\n", line.c_str());
    };
  }
  o.folds = a.cv;
  o.calibrate = a.calibrate;
  o.jobs = a.jobs > 0 ? a.jobs : std::max(1u, std::thread::hardware_concurrency());
  o.seed = a.seed;
  o.max_evaluations = a.max_evaluations;
  StatusOr<PublishedValidationResult> result = run_published_validation(rows, o);
  if (!result.ok()) return fail(result.status());
  const PublishedValidationResult& res = *result;
  const bool to_stdout = a.json == "-";
  if (!to_stdout) {
    if (!a.summary_only) {
      std::printf("%5s %-14s %-28s %-6s %5s %3s %3s %3s %3s %3s %-6s %11s %11s %8s\n", "line",
                  "source", "model", "gpu", "gpus", "tp", "pp", "cp", "ep", "vp", "prec",
                  "measured ms", "predicted", "error");
      for (const PublishedPrediction& p : res.rows) {
        if (!p.simulated) continue;
        const PublishedRow& r = p.row;
        std::printf(
            "%5d %-14.14s %-28.28s %-6.6s %5d %3d %3d %3d %3d %3d %-6s %11.1f %11.1f "
            "%+7.1f%%\n",
            r.line, r.source.c_str(), r.model.c_str(), r.gpu.c_str(),
            p.run.scenario.cluster.total_gpus(), p.run.scenario.parallelism.tp,
            p.run.scenario.parallelism.pp, p.run.scenario.parallelism.cp,
            p.run.scenario.parallelism.ep, p.run.scenario.parallelism.vpp, p.run.precision.c_str(),
            p.run.measured_ms, p.predicted_ms, p.error_pct());
      }
      std::printf("\n");
    }
    std::printf("rows that cannot be simulated (%d of %d):\n", res.total - res.simulated,
                res.total);
    for (const PublishedPrediction& p : res.rows) {
      if (p.simulated) continue;
      std::printf("  line %d %s %s: %s\n", p.row.line, p.row.source.c_str(), p.row.model.c_str(),
                  p.reason.c_str());
    }
    std::printf("\ncoverage %d of %d rows (%.1f %%)\n", res.simulated, res.total,
                100.0 * res.simulated / res.total);
    std::printf("error = (predicted - measured) / measured iteration time; bias < 0: too fast\n");
    print_group_table(res.groups);
    auto print_fits = [](const std::string& label, const std::vector<GpuFit>& fits) {
      for (const GpuFit& f : fits) {
        std::printf("%s%-16s %4d rows", label.c_str(), f.gpu.c_str(), f.rows);
        for (size_t i = 0; i < f.constants.size(); ++i) {
          std::printf(" %s=%.4g", published_constants()[i].name, f.constants[i]);
        }
        std::printf("\n");
      }
    };
    if (!res.fitted.empty()) {
      std::printf("\nconstants fitted on all rows (in-sample):\n");
      print_fits("  ", res.fitted);
      std::printf("  stack megatron-core launch_overhead=%.3g us\n", res.launch_us);
    }
    for (size_t f = 0; f < res.fold_fits.size(); ++f) {
      std::printf("%sfold %zu (held out: %s):\n", f == 0 ? "\n" : "", f,
                  res.fold_families[f].c_str());
      print_fits("  ", res.fold_fits[f]);
      std::printf("  stack megatron-core launch_overhead=%.3g us\n", res.fold_launch_us[f]);
    }
  }
  if (!a.json.empty()) {
    nlohmann::json j;
    j["rows"] = res.total;
    j["simulated"] = res.simulated;
    nlohmann::json groups = nlohmann::json::array();
    for (const GroupError& g : res.groups) {
      groups.push_back({{"by", g.by},
                        {"group", g.group},
                        {"rows", g.rows},
                        {"mape_pct", finite_or_null(g.mape_pct)},
                        {"mdape_pct", finite_or_null(g.mdape_pct)},
                        {"p90_ape_pct", finite_or_null(g.p90_pct)},
                        {"bias_pct", finite_or_null(g.bias_pct)},
                        {"median_bias_pct", finite_or_null(g.median_bias_pct)},
                        {"within_10pct", g.within10_pct / 100}});
    }
    j["groups"] = groups;
    auto fits_json = [](const std::vector<GpuFit>& fits) {
      nlohmann::json out = nlohmann::json::object();
      for (const GpuFit& f : fits) {
        nlohmann::json c = {{"rows", f.rows}};
        for (size_t i = 0; i < f.constants.size(); ++i) {
          c[published_constants()[i].name] = f.constants[i];
        }
        out[f.gpu] = c;
      }
      return out;
    };
    if (!res.fitted.empty()) {
      j["constants"] = fits_json(res.fitted);
      j["constants"]["megatron-core"] = {{"launch_overhead_us", finite_or_null(res.launch_us)}};
    }
    j["cross_validation_folds"] = res.folds;
    nlohmann::json folds = nlohmann::json::array();
    for (size_t f = 0; f < res.fold_fits.size(); ++f) {
      nlohmann::json c = fits_json(res.fold_fits[f]);
      c["megatron-core"] = {{"launch_overhead_us", finite_or_null(res.fold_launch_us[f])}};
      folds.push_back({{"held_out_families", res.fold_families[f]}, {"constants", c}});
    }
    j["folds"] = folds;
    nlohmann::json preds = nlohmann::json::array();
    for (const PublishedPrediction& p : res.rows) {
      nlohmann::json e = {{"line", p.row.line},      {"source", p.row.source},
                          {"model", p.row.model},    {"gpu", p.row.gpu},
                          {"metric", p.row.metric},  {"value", p.row.value},
                          {"simulated", p.simulated}};
      if (p.simulated) {
        e["measured_ms"] = p.run.measured_ms;
        e["predicted_ms"] = finite_or_null(p.predicted_ms);
        e["error_pct"] = finite_or_null(p.error_pct());
        e["family"] = p.run.family;
        e["kind"] = p.run.kind;
        e["precision"] = p.run.precision;
        e["stack"] = p.run.stack;
        e["fold"] = p.fold;
        if (!p.run.notes.empty()) e["notes"] = p.run.notes;
      } else {
        e["reason"] = p.reason;
      }
      preds.push_back(e);
    }
    j["predictions"] = preds;
    Status s = write_output(a.json,
                            j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
    if (!s.ok()) return fail(s);
  }
  return kExitOk;
}

int run(const ValidateArgs& a) {
  const std::string dir = a.data_dir.empty() ? find_data_dir() : a.data_dir;
  std::vector<std::string> sets;
  for (const std::string& set : a.datasets) {
    if (set == "vtrain") {
      sets.push_back("single");
      sets.push_back("multi");
    } else {
      sets.push_back(set);
    }
  }
  if (sets.empty()) sets = {"single", "multi"};
  // The published layout (shared/data/published/) runs on its own path.
  std::vector<std::string> published;
  for (const std::string& set : sets) {
    if (set == "published") {
      published.push_back(dir + "/published/training_runs.csv");
    } else if (set == "fsdp" || set == "other_stacks") {
      published.push_back(dir + "/published/other_stacks.csv");
    } else if (set != "single" && set != "multi" && is_published_header(first_line(set))) {
      published.push_back(set);
    }
  }
  if (!published.empty()) {
    if (published.size() != sets.size()) {
      return fail(invalid_argument(
          "--dataset: the vTrain sets (single, multi, vtrain) and the published ones "
          "(published, fsdp, or a file in that layout) run in separate calls"));
    }
    return run_published(a, published);
  }
  std::vector<DatasetRow> rows;
  for (const std::string& set : sets) {
    std::string path = set;
    std::string name = std::filesystem::path(set).stem().string();
    if (set == "single" || set == "multi") {
      path = dir + "/vtrain/ground_truth_" + set + ".csv";
      name = set;
    }
    StatusOr<std::vector<DatasetRow>> r = load_dataset_csv(path, name);
    if (!r.ok()) {
      return fail(Status(r.status().code(),
                         r.status().message() +
                             " (set PREFLIGHT_DATA_DIR or --data-dir to the folder holding "
                             "vtrain/)"));
    }
    rows.insert(rows.end(), r->begin(), r->end());
  }
  ValidationOptions o;
  if (isatty(fileno(stderr))) {
    o.progress = [](const std::string& line) {
      std::fprintf(stderr, "validate: %s...\n", line.c_str());
    };
  }
  o.folds = a.cv;
  o.calibrate = a.calibrate;
  o.jobs = a.jobs > 0 ? a.jobs : std::max(1u, std::thread::hardware_concurrency());
  o.seed = a.seed;
  o.max_evaluations = a.max_evaluations;
  const bool to_stdout = a.json == "-";
  if (!to_stdout && (o.folds >= 2 || o.calibrate)) {
    std::fprintf(stderr, "calibrating %zu constants on %zu rows%s...\n",
                 calibration_constants().size(), rows.size(),
                 o.folds >= 2 ? (" in " + std::to_string(o.folds) + " folds").c_str() : "");
  }
  StatusOr<ValidationResult> result = run_validation(rows, o);
  if (!result.ok()) return fail(result.status());
  if (!to_stdout) {
    if (!a.summary_only) {
      std::printf("%-8s %5s %5s %4s %3s %6s %3s %3s %3s %12s %12s %7s\n", "set", "line", "gpus",
                  "gb", "mb", "hidden", "tp", "dp", "pp", "measured ms", "predicted", "error");
      for (const RowPrediction& p : result->rows) {
        const DatasetRow& r = p.row;
        std::printf("%-8s %5d %5d %4d %3d %6d %3d %3d %3d %12.1f %12.1f %+6.1f%%\n", r.set.c_str(),
                    r.line, r.gpus, r.global_batch, r.micro_batch, r.hidden, r.tp, r.dp, r.pp,
                    r.measured_ms, p.predicted_ms,
                    (p.predicted_ms - r.measured_ms) / r.measured_ms * 100);
      }
      std::printf("\n");
    }
    std::printf("%s on the vTrain A100 dev set (%s)\n",
                o.folds >= 2 ? "cross-validated accuracy" : "accuracy",
                o.folds >= 2 ? (std::to_string(o.folds) + "-fold; each row predicted by "
                                                          "constants fitted without its fold")
                                   .c_str()
                             : (o.calibrate ? "constants fitted on all rows: in-sample"
                                            : "the GPU preset's constants"));
    std::printf("%-8s %6s %8s %8s %8s %8s %10s %16s\n", "set", "rows", "MAPE", "MdAPE", "p90",
                "bias", "within10%", "Spearman (min)");
    for (const SetMetrics& m : result->sets) {
      std::printf("%-8s %6d %7.2f%% %7.2f%% %7.2f%% %+7.2f%% %9.1f%% %8.3f (%.3f) over %d groups\n",
                  m.set.c_str(), m.rows, m.mape_pct, m.mdape_pct, m.p90_pct, m.bias_pct,
                  m.within10_pct, m.spearman, m.spearman_min, m.groups);
    }
    print_ranking(result->sets);
    auto print_constants = [](const char* label, const std::vector<double>& c) {
      std::printf("%s", label);
      for (size_t i = 0; i < c.size(); ++i) {
        std::printf(" %s=%.4g", calibration_constants()[i].name, c[i]);
      }
      std::printf("\n");
    };
    if (o.folds >= 2) {
      for (size_t f = 0; f < result->fold_constants.size(); ++f) {
        print_constants(("fold " + std::to_string(f) + ":").c_str(), result->fold_constants[f]);
      }
    } else {
      print_constants("constants:", result->constants);
    }
  }
  if (!a.json.empty()) {
    nlohmann::json j;
    for (const SetMetrics& m : result->sets) {
      j[m.set] = {{"rows", m.rows},
                  {"mape_pct", m.mape_pct},
                  {"mdape_pct", m.mdape_pct},
                  {"p90_ape_pct", m.p90_pct},
                  {"bias_pct", m.bias_pct},
                  {"within_10pct", m.within10_pct / 100},
                  {"spearman", std::isfinite(m.spearman) ? nlohmann::json(m.spearman)
                                                         : nlohmann::json(nullptr)},
                  {"spearman_min", std::isfinite(m.spearman_min) ? nlohmann::json(m.spearman_min)
                                                                 : nlohmann::json(nullptr)},
                  {"spearman_groups", m.groups}};
      nlohmann::json groups = nlohmann::json::array();
      int within = 0;
      double worst = 0;
      for (const GroupMetrics& g : m.jobs) {
        groups.push_back({{"model", g.model},
                          {"gpus", g.gpus},
                          {"hidden", g.hidden},
                          {"layers", g.layers},
                          {"heads", g.heads},
                          {"global_batch", g.global_batch},
                          {"seq_len", g.seq_len},
                          {"rows", g.rows},
                          {"spearman", finite_or_null(g.spearman)},
                          {"regret_pct", finite_or_null(g.regret_pct)},
                          {"within_target", g.regret_pct <= kRegretTargetPct},
                          {"predicted_best_line", g.predicted_best_line},
                          {"measured_best_line", g.measured_best_line}});
        within += g.regret_pct <= kRegretTargetPct;
        worst = std::max(worst, std::isfinite(g.regret_pct) ? g.regret_pct : INFINITY);
      }
      j[m.set]["groups"] = groups;
      j[m.set]["regret_target_pct"] = kRegretTargetPct;
      j[m.set]["groups_within_target"] = within;
      j[m.set]["regret_max_pct"] = m.jobs.empty() ? nlohmann::json(nullptr) : finite_or_null(worst);
    }
    nlohmann::json preds = nlohmann::json::array();
    for (const RowPrediction& p : result->rows) {
      const DatasetRow& r = p.row;
      preds.push_back({{"set", r.set},
                       {"line", r.line},
                       {"gpus", r.gpus},
                       {"global_batch", r.global_batch},
                       {"micro_batch", r.micro_batch},
                       {"hidden", r.hidden},
                       {"heads", r.heads},
                       {"layers", r.layers},
                       {"seq_len", r.seq_len},
                       {"tp", r.tp},
                       {"dp", r.dp},
                       {"pp", r.pp},
                       {"measured_ms", r.measured_ms},
                       {"predicted_ms", p.predicted_ms},
                       {"fold", p.fold}});
    }
    j["predictions"] = preds;
    j["cross_validation_folds"] = o.folds >= 2 ? o.folds : 0;
    nlohmann::json constants = nlohmann::json::object();
    for (size_t i = 0; i < result->constants.size(); ++i) {
      constants[calibration_constants()[i].name] = result->constants[i];
    }
    j["constants"] = constants;
    Status s = write_output(a.json,
                            j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
    if (!s.ok()) return fail(s);
  }
  return kExitOk;
}

}  // namespace

void add_validate_command(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<ValidateArgs>();
  auto* cmd = app.add_subcommand(
      "validate",
      "Compare predictions with measured training runs: the vTrain A100 set (MAPE per set and "
      "Spearman's rank correlation within each model/GPU-count group) or the published set "
      "(NeMo/Megatron-Bridge runs on H100 to GB300: coverage, MAPE, MdAPE, p90 and bias per "
      "GPU, kind, precision, family, stack and source).\n"
      "--cv K reports k-fold cross-validated figures (the constants are re-fitted without "
      "each fold); --calibrate fits them on all rows.");
  cmd->add_option("--dataset", args->datasets,
                  "vtrain (= single + multi), single, multi, published (NeMo/Megatron-Bridge "
                  "runs on H100 to GB300), fsdp (llm-foundry's FSDP runs), or a CSV file in the "
                  "vTrain or the published layout (repeatable; default vtrain)");
  cmd->add_option("--data-dir", args->data_dir,
                  "Folder holding vtrain/ (default: $PREFLIGHT_DATA_DIR or ../shared/data)");
  cmd->add_option("--json", args->json, "Write metrics and per-row predictions ('-' = stdout)");
  cmd->add_option("--cv", args->cv, "k-fold cross-validation of the calibrated constants")
      ->check(CLI::Range(2, 50));
  cmd->add_flag("--calibrate", args->calibrate, "Fit the constants on all rows (in-sample)");
  cmd->add_option("--jobs,-j", args->jobs, "Threads (default: all cores; results identical)")
      ->check(CLI::Range(1, 256));
  cmd->add_option("--seed", args->seed, "Seed of the fold assignment");
  cmd->add_option("--max-evaluations", args->max_evaluations, "Nelder-Mead evaluations per fit")
      ->check(CLI::Range(1, 10000));
  cmd->add_flag("--summary-only", args->summary_only,
                "Print only the per-set metrics, not every row's prediction");
  cmd->add_option("--row", args->row,
                  "With a published set: print the scenario YAML that CSV line runs as (for "
                  "`preflight simulate FILE`), its measured iteration time and what was assumed")
      ->check(CLI::Range(2, 1000000));
  cmd->callback([args, exit_code]() { *exit_code = run(*args); });
}

}  // namespace preflight::cli
