// `preflight validate [--dataset single|multi|FILE] [--cv K] [--calibrate] [--json FILE]`
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <thread>

#include "cli/common.h"
#include "report/report.h"
#include "report/validation_report.h"
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
  std::vector<std::string> overrides;  // --set: applied to every row's scenario
};

// The overrides, for the reports: "k=v, k=v".
std::string joined(const std::vector<std::string>& overrides) {
  std::string out;
  for (const std::string& o : overrides) out += (out.empty() ? "" : ", ") + o;
  return out;
}

// A report's JSON with the overrides it ran with (an empty list without --set).
std::string with_overrides(const std::string& json_text,
                           const std::vector<std::string>& overrides) {
  nlohmann::json j = nlohmann::json::parse(json_text);
  j["overrides"] = overrides;
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

// --set checked before the run: when no row that simulates without the overrides takes them (a
// misspelt key, a malformed value), the command fails (exit 2) with the first row's message; an
// override only some rows cannot take leaves those rows unsimulated, with their reasons.
template <typename Row, typename Build>
Status check_overrides_on(const std::vector<Row>& rows, const std::vector<std::string>& overrides,
                          Build build) {
  if (overrides.empty()) return Status();
  Status first;
  for (const Row& row : rows) {
    if (!build(row, std::vector<std::string>{}).ok()) continue;
    const auto with = build(row, overrides);
    if (with.ok()) return Status();
    if (first.ok()) first = Status(with.status().code(), "--set: " + with.status().message());
  }
  return first;
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

// --row LINE: the scenario a published row runs as, ready for `preflight simulate FILE`, with
// the iteration time its metric implies and what was assumed beyond the row.
int print_row_scenario(const std::vector<PublishedRow>& rows, int line,
                       const std::vector<std::string>& overrides) {
  for (const PublishedRow& row : rows) {
    if (row.line != line) continue;
    StatusOr<PublishedCase> c = published_case(row, overrides);
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
    for (const std::string& o : overrides) {
      std::printf("# validated with --set %s on top (pass it to preflight simulate too)\n",
                  o.c_str());
    }
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
  if (a.row > 0) return print_row_scenario(rows, a.row, a.overrides);
  Status checked = check_overrides_on(rows, a.overrides,
                                      [](const PublishedRow& r, const std::vector<std::string>& o) {
                                        return published_case(r, o);
                                      });
  if (!checked.ok()) return fail(checked);
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
  o.overrides = a.overrides;
  StatusOr<PublishedValidationResult> result = run_published_validation(rows, o);
  if (!result.ok()) return fail(result.status());
  const PublishedValidationResult& res = *result;
  const bool to_stdout = a.json == "-";
  if (!to_stdout) {
    if (!a.overrides.empty()) {
      std::printf("with --set on every row (not the shipped model): %s\n",
                  joined(a.overrides).c_str());
    }
    std::fputs(format_published_validation(res, a.summary_only).c_str(), stdout);
  }
  if (!a.json.empty()) {
    Status s = write_output(a.json, with_overrides(published_validation_json(res), a.overrides));
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
  o.overrides = a.overrides;
  Status checked = check_overrides_on(rows, a.overrides,
                                      [](const DatasetRow& r, const std::vector<std::string>& ov) {
                                        return scenario_for_row(r, ov);
                                      });
  if (!checked.ok()) return fail(checked);
  const bool to_stdout = a.json == "-";
  if (!to_stdout && !a.overrides.empty()) {
    std::printf("with --set on every row (not the shipped model): %s\n",
                joined(a.overrides).c_str());
  }
  if (!to_stdout && (o.folds >= 2 || o.calibrate)) {
    std::fprintf(stderr, "calibrating %zu constants on %zu rows%s...\n",
                 calibration_constants().size(), rows.size(),
                 o.folds >= 2 ? (" in " + std::to_string(o.folds) + " folds").c_str() : "");
  }
  StatusOr<ValidationResult> result = run_validation(rows, o);
  if (!result.ok()) return fail(result.status());
  if (!to_stdout) {
    std::fputs(format_vtrain_validation(*result, o.folds, o.calibrate, a.summary_only).c_str(),
               stdout);
  }
  if (!a.json.empty()) {
    Status s =
        write_output(a.json, with_overrides(vtrain_validation_json(*result, o.folds), a.overrides));
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
      "GPU, kind, precision, family, stack, expert-parallel placement (ep: none, nvlink, "
      "nics) and source).\n"
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
  cmd->add_option("--set", args->overrides,
                  "Override a key of every row's scenario, as simulate --set does: "
                  "section.key=value (repeatable), e.g. --set "
                  "training.stack.expert_launch_overhead=9us; a sensitivity study, so the report "
                  "says it ran with them. A constant --calibrate or --cv fits is refused")
      ->take_all()
      ->allow_extra_args(false);
  cmd->add_option("--row", args->row,
                  "With a published set: print the scenario YAML that CSV line runs as (for "
                  "`preflight simulate FILE`), its measured iteration time and what was assumed")
      ->check(CLI::Range(2, 1000000));
  cmd->callback([args, exit_code]() { *exit_code = run(*args); });
}

}  // namespace preflight::cli
