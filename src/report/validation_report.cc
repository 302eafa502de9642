#include "report/validation_report.h"

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

namespace preflight {
namespace {

// printf onto `out`.
void appendf(std::string* out, const char* format, ...) __attribute__((format(printf, 2, 3)));
void appendf(std::string* out, const char* format, ...) {
  char buf[1024];
  va_list args;
  va_start(args, format);
  const int n = std::vsnprintf(buf, sizeof buf, format, args);
  va_end(args);
  if (n < 0) return;
  if (static_cast<size_t>(n) < sizeof buf) {
    out->append(buf, static_cast<size_t>(n));
    return;
  }
  std::string big(static_cast<size_t>(n) + 1, '\0');
  va_start(args, format);
  std::vsnprintf(big.data(), big.size(), format, args);
  va_end(args);
  out->append(big.data(), static_cast<size_t>(n));
}

nlohmann::json finite_or_null(double x) {
  return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(nullptr);
}

// Ranking accuracy per job: a row per job for sets with a few jobs (the multi-node set), one line
// for sets with many (the single-node set: --json lists them).
void format_ranking(const std::vector<SetMetrics>& sets, std::string* out_) {
  std::string& out = *out_;
  constexpr size_t kMaxListed = 12;
  appendf(&out,
          "\nranking within each job (same model, GPUs, global batch; only the strategy "
          "differs):\nregret = measured time of Preflight's first-ranked strategy over the "
          "fastest measured, target <= %.0f%%\n",
          kRegretTargetPct);
  appendf(&out, "%-8s %-10s %5s %6s %5s %9s %8s %s\n", "set", "model", "gpus", "batch", "rows",
          "Spearman", "regret", "<=5%");
  for (const SetMetrics& m : sets) {
    int within = 0;
    double sum = 0, worst = 0;
    for (const GroupMetrics& g : m.jobs) {
      within += g.regret_pct <= kRegretTargetPct;
      sum += g.regret_pct;
      worst = std::max(worst, g.regret_pct);
      if (m.jobs.size() > kMaxListed) continue;
      appendf(&out, "%-8s %-10s %5d %6d %5d %9.3f %7.2f%% %s\n", m.set.c_str(), g.model.c_str(),
              g.gpus, g.global_batch, g.rows, g.spearman, g.regret_pct,
              g.regret_pct <= kRegretTargetPct ? "yes" : "no");
    }
    if (m.jobs.empty()) continue;
    appendf(&out, "%-8s %d of %zu jobs within %.0f%%; regret mean %.2f%%, max %.2f%%%s\n",
            m.set.c_str(), within, m.jobs.size(), kRegretTargetPct, sum / m.jobs.size(), worst,
            m.jobs.size() > kMaxListed ? " (--json lists every job)" : "");
  }
}

void format_group_table(const std::vector<GroupError>& groups, std::string* out_) {
  std::string& out = *out_;
  appendf(&out, "%-10s %-26s %5s %8s %8s %8s %8s %9s %9s\n", "by", "group", "rows", "MAPE", "MdAPE",
          "p90", "bias", "med.bias", "within10");
  std::string last;
  for (const GroupError& g : groups) {
    if (g.by != last && !last.empty()) appendf(&out, "\n");
    last = g.by;
    appendf(&out, "%-10s %-26.26s %5d %7.2f%% %7.2f%% %7.2f%% %+7.2f%% %+8.2f%% %8.1f%%\n",
            g.by.c_str(), g.group.c_str(), g.rows, g.mape_pct, g.mdape_pct, g.p90_pct, g.bias_pct,
            g.median_bias_pct, g.within10_pct);
  }
}

}  // namespace

std::string format_published_validation(const PublishedValidationResult& res, bool summary_only) {
  std::string out;
  if (!summary_only) {
    appendf(&out, "%5s %-14s %-28s %-6s %5s %3s %3s %3s %3s %3s %-6s %11s %11s %8s\n", "line",
            "source", "model", "gpu", "gpus", "tp", "pp", "cp", "ep", "vp", "prec", "measured ms",
            "predicted", "error");
    for (const PublishedPrediction& p : res.rows) {
      if (!p.simulated) continue;
      const PublishedRow& r = p.row;
      appendf(&out,
              "%5d %-14.14s %-28.28s %-6.6s %5d %3d %3d %3d %3d %3d %-6s %11.1f %11.1f "
              "%+7.1f%%\n",
              r.line, r.source.c_str(), r.model.c_str(), r.gpu.c_str(),
              p.run.scenario.cluster.total_gpus(), p.run.scenario.parallelism.tp,
              p.run.scenario.parallelism.pp, p.run.scenario.parallelism.cp,
              p.run.scenario.parallelism.ep, p.run.scenario.parallelism.vpp,
              p.run.precision.c_str(), p.run.measured_ms, p.predicted_ms, p.error_pct());
    }
    appendf(&out, "\n");
  }
  appendf(&out, "rows that cannot be simulated (%d of %d):\n", res.total - res.simulated,
          res.total);
  for (const PublishedPrediction& p : res.rows) {
    if (p.simulated) continue;
    appendf(&out, "  line %d %s %s: %s\n", p.row.line, p.row.source.c_str(), p.row.model.c_str(),
            p.reason.c_str());
  }
  if (!summary_only && res.configurations_not_fitting > 0) {
    appendf(&out,
            "\nconfigurations the memory model does not fit in HBM, though each ran (%d of %d):\n",
            res.configurations_not_fitting, res.configurations);
    std::set<std::string> listed;
    for (const PublishedPrediction& p : res.rows) {
      if (!p.simulated || p.fits || !listed.insert(p.run.yaml).second) continue;
      appendf(&out, "  line %d %s %s on %d %s: peak %.1f GiB of %.1f GiB\n", p.row.line,
              p.row.source.c_str(), p.row.model.c_str(), p.run.scenario.cluster.total_gpus(),
              p.row.gpu.c_str(), p.peak_gib, p.hbm_gib);
    }
  }
  appendf(&out, "\ncoverage %d of %d rows (%.1f %%)\n", res.simulated, res.total,
          100.0 * res.simulated / res.total);
  // Every published run ran: a configuration the memory model does not fit is its overestimate.
  appendf(&out, "memory: %d of %d configurations fit in HBM by the memory model (%.1f %%)\n",
          res.configurations - res.configurations_not_fitting, res.configurations,
          res.configurations > 0
              ? 100.0 * (res.configurations - res.configurations_not_fitting) / res.configurations
              : 0.0);
  // What the source's own releases move: the floor under any model of the configuration.
  if (res.repeats.runs > 0) {
    appendf(&out,
            "repeat spread: %d configurations measured in two or more containers (%d runs): a "
            "run lies %.1f %% (median %.1f %%) from its configuration's median; Preflight's "
            "error on those runs %.1f %%\n",
            res.repeats.configurations, res.repeats.runs, res.repeats.mean_pct,
            res.repeats.median_pct, res.repeats.model_mape_pct);
  }
  appendf(&out, "error = (predicted - measured) / measured iteration time; bias < 0: too fast\n");
  format_group_table(res.groups, &out);
  auto print_fits = [&out](const std::string& label, const std::vector<GpuFit>& fits) {
    for (const GpuFit& f : fits) {
      appendf(&out, "%s%-16s %4d rows", label.c_str(), f.gpu.c_str(), f.rows);
      for (size_t i = 0; i < f.constants.size(); ++i) {
        appendf(&out, " %s=%.4g", published_constants()[i].name, f.constants[i]);
        // The constants a generation takes rather than fits (published_validate.h).
        if (i == 1 && attention_source(f.gpu) != f.gpu) {
          appendf(&out, " (%s's)", attention_source(f.gpu).c_str());
        }
        const bool measured = i == 2 && std::isfinite(measured_memory_fraction(f.gpu));
        if (measured) appendf(&out, " (measured)");
        // A fitted constant the search left at an end of its physical range: the rows it was
        // fitted on do not pin it (e.g. a fold without the rows that weigh it), and its value
        // is the bound's, not a measurement's.
        const bool taken = measured || (i == 1 && attention_source(f.gpu) != f.gpu);
        const PublishedConstant& c = published_constants()[i];
        const double v = f.constants[i];
        if (!taken && (std::fabs(v - c.lo) <= 1e-9 || std::fabs(v - c.hi) <= 1e-9)) {
          appendf(&out, " (at its bound)");
        }
      }
      appendf(&out, "\n");
    }
  };
  if (!res.fitted.empty()) {
    appendf(&out, "\nconstants fitted on all rows (in-sample):\n");
    print_fits("  ", res.fitted);
    appendf(&out, "  stack megatron-core launch_overhead=%.3g us (x86 hosts), Grace hosts x%.3g\n",
            res.launch_us, res.grace_factor);
  }
  for (size_t f = 0; f < res.fold_fits.size(); ++f) {
    appendf(&out, "%sfold %zu (held out: %s):\n", f == 0 ? "\n" : "", f,
            res.fold_families[f].c_str());
    print_fits("  ", res.fold_fits[f]);
    appendf(&out, "  stack megatron-core launch_overhead=%.3g us (x86 hosts), Grace hosts x%.3g\n",
            res.fold_launch_us[f], res.fold_grace_factor[f]);
  }
  return out;
}

std::string published_validation_json(const PublishedValidationResult& res) {
  nlohmann::json j;
  j["rows"] = res.total;
  j["simulated"] = res.simulated;
  j["memory"] = {{"configurations", res.configurations},
                 {"not_fitting", res.configurations_not_fitting}};
  j["repeat_spread"] = {{"configurations", res.repeats.configurations},
                        {"runs", res.repeats.runs},
                        {"mean_pct", finite_or_null(res.repeats.mean_pct)},
                        {"median_pct", finite_or_null(res.repeats.median_pct)},
                        {"model_mape_pct", finite_or_null(res.repeats.model_mape_pct)}};
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
      // The constants the generation takes rather than fits, and from where.
      nlohmann::json taken = nlohmann::json::object();
      if (attention_source(f.gpu) != f.gpu) {
        taken["attention_efficiency"] = attention_source(f.gpu);
      }
      if (std::isfinite(measured_memory_fraction(f.gpu))) taken["memory_efficiency"] = "measured";
      if (!taken.empty()) c["not_fitted"] = taken;
      out[f.gpu] = c;
    }
    return out;
  };
  if (!res.fitted.empty()) {
    j["constants"] = fits_json(res.fitted);
    j["constants"]["megatron-core"] = {{"launch_overhead_us", finite_or_null(res.launch_us)},
                                       {"grace_host_factor", finite_or_null(res.grace_factor)}};
  }
  j["cross_validation_folds"] = res.folds;
  nlohmann::json folds = nlohmann::json::array();
  for (size_t f = 0; f < res.fold_fits.size(); ++f) {
    nlohmann::json c = fits_json(res.fold_fits[f]);
    c["megatron-core"] = {{"launch_overhead_us", finite_or_null(res.fold_launch_us[f])},
                          {"grace_host_factor", finite_or_null(res.fold_grace_factor[f])}};
    folds.push_back({{"held_out_families", res.fold_families[f]}, {"constants", c}});
  }
  j["folds"] = folds;
  nlohmann::json preds = nlohmann::json::array();
  for (const PublishedPrediction& p : res.rows) {
    nlohmann::json e = {{"line", p.row.line},      {"source", p.row.source}, {"model", p.row.model},
                        {"gpu", p.row.gpu},        {"metric", p.row.metric}, {"value", p.row.value},
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
      e["fits"] = p.fits;
      e["peak_gib"] = p.peak_gib;
      e["hbm_gib"] = p.hbm_gib;
      if (!p.run.notes.empty()) e["notes"] = p.run.notes;
    } else {
      e["reason"] = p.reason;
    }
    preds.push_back(e);
  }
  j["predictions"] = preds;
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::string format_vtrain_validation(const ValidationResult& r, int folds, bool calibrate,
                                     bool summary_only) {
  std::string out;
  if (!summary_only) {
    appendf(&out, "%-8s %5s %5s %4s %3s %6s %3s %3s %3s %12s %12s %7s\n", "set", "line", "gpus",
            "gb", "mb", "hidden", "tp", "dp", "pp", "measured ms", "predicted", "error");
    for (const RowPrediction& p : r.rows) {
      const DatasetRow& r = p.row;
      appendf(&out, "%-8s %5d %5d %4d %3d %6d %3d %3d %3d %12.1f %12.1f %+6.1f%%\n", r.set.c_str(),
              r.line, r.gpus, r.global_batch, r.micro_batch, r.hidden, r.tp, r.dp, r.pp,
              r.measured_ms, p.predicted_ms,
              (p.predicted_ms - r.measured_ms) / r.measured_ms * 100);
    }
    appendf(&out, "\n");
  }
  appendf(&out, "%s on the vTrain A100 dev set (%s)\n",
          folds >= 2 ? "cross-validated accuracy" : "accuracy",
          folds >= 2 ? (std::to_string(folds) + "-fold; each row predicted by "
                                                "constants fitted without its fold")
                           .c_str()
                     : (calibrate ? "constants fitted on all rows: in-sample"
                                  : "the GPU preset's constants"));
  appendf(&out, "%-8s %6s %8s %8s %8s %8s %10s %16s\n", "set", "rows", "MAPE", "MdAPE", "p90",
          "bias", "within10%", "Spearman (min)");
  for (const SetMetrics& m : r.sets) {
    appendf(&out, "%-8s %6d %7.2f%% %7.2f%% %7.2f%% %+7.2f%% %9.1f%% %8.3f (%.3f) over %d groups\n",
            m.set.c_str(), m.rows, m.mape_pct, m.mdape_pct, m.p90_pct, m.bias_pct, m.within10_pct,
            m.spearman, m.spearman_min, m.groups);
  }
  format_ranking(r.sets, &out);
  auto print_constants = [&out](const char* label, const std::vector<double>& c) {
    appendf(&out, "%s", label);
    for (size_t i = 0; i < c.size(); ++i) {
      appendf(&out, " %s=%.4g", calibration_constants()[i].name, c[i]);
    }
    appendf(&out, "\n");
  };
  if (folds >= 2) {
    for (size_t f = 0; f < r.fold_constants.size(); ++f) {
      print_constants(("fold " + std::to_string(f) + ":").c_str(), r.fold_constants[f]);
    }
  } else {
    print_constants("constants:", r.constants);
  }
  return out;
}

std::string vtrain_validation_json(const ValidationResult& r, int folds) {
  nlohmann::json j;
  for (const SetMetrics& m : r.sets) {
    j[m.set] = {{"rows", m.rows},
                {"mape_pct", m.mape_pct},
                {"mdape_pct", m.mdape_pct},
                {"p90_ape_pct", m.p90_pct},
                {"bias_pct", m.bias_pct},
                {"within_10pct", m.within10_pct / 100},
                {"spearman",
                 std::isfinite(m.spearman) ? nlohmann::json(m.spearman) : nlohmann::json(nullptr)},
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
  for (const RowPrediction& p : r.rows) {
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
  j["cross_validation_folds"] = folds >= 2 ? folds : 0;
  nlohmann::json constants = nlohmann::json::object();
  for (size_t i = 0; i < r.constants.size(); ++i) {
    constants[calibration_constants()[i].name] = r.constants[i];
  }
  j["constants"] = constants;
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace preflight
