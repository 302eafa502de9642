// `preflight validate [--dataset single|multi|FILE] [--cv K] [--calibrate] [--json FILE]`
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <thread>

#include "cli/common.h"
#include "report/report.h"
#include "validation/dataset.h"
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

int run(const ValidateArgs& a) {
  const std::string dir = a.data_dir.empty() ? find_data_dir() : a.data_dir;
  std::vector<std::string> sets = a.datasets;
  if (sets.empty()) sets = {"single", "multi"};
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
    Status s = write_output(a.json, j.dump(2) + "\n");
    if (!s.ok()) return fail(s);
  }
  return kExitOk;
}

}  // namespace

void add_validate_command(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<ValidateArgs>();
  auto* cmd = app.add_subcommand(
      "validate",
      "Compare predictions with measured A100 training runs (the vTrain dev set): MAPE per set "
      "and Spearman's rank correlation within each model/GPU-count group.\n"
      "--cv K reports k-fold cross-validated figures (the constants are re-fitted without "
      "each fold); --calibrate fits them on all rows.");
  cmd->add_option("--dataset", args->datasets,
                  "single, multi, or a CSV file in the vTrain layout (repeatable; default both)");
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
  cmd->callback([args, exit_code]() { *exit_code = run(*args); });
}

}  // namespace preflight::cli
