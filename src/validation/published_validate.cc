#include "validation/published_validate.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <thread>
#include <tuple>

#include "memory/memory_model.h"
#include "simulate/simulate.h"
#include "validation/optimize.h"
#include "validation/recipes.h"
#include "validation/stats.h"

namespace preflight {
namespace {

double median(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

GroupError group_error(const std::string& by, const std::string& group,
                       const std::vector<const PublishedPrediction*>& list) {
  GroupError g;
  g.by = by;
  g.group = group;
  std::vector<double> pred, meas, signed_err;
  int within = 0;
  for (const PublishedPrediction* p : list) {
    const double predicted = std::isfinite(p->predicted_ms) ? p->predicted_ms : 0;
    pred.push_back(predicted);
    meas.push_back(p->run.measured_ms);
    signed_err.push_back((predicted - p->run.measured_ms) / p->run.measured_ms * 100);
    within += std::fabs(signed_err.back()) <= 10;
  }
  g.rows = static_cast<int>(list.size());
  if (g.rows == 0) return g;
  g.mape_pct = mean_absolute_percentage_error(pred, meas);
  g.mdape_pct = median_absolute_percentage_error(pred, meas);
  g.p90_pct = percentile_absolute_percentage_error(pred, meas, 0.9);
  g.bias_pct = mean_signed_percentage_error(pred, meas);
  g.median_bias_pct = median(signed_err);
  g.within10_pct = 100.0 * within / g.rows;
  return g;
}

}  // namespace

std::vector<GroupError> published_group_errors(const std::vector<PublishedPrediction>& rows) {
  std::vector<const PublishedPrediction*> all;
  for (const PublishedPrediction& p : rows) {
    if (p.simulated) all.push_back(&p);
  }
  std::vector<GroupError> out;
  out.push_back(group_error("all", "all", all));
  const std::pair<const char*, std::string PublishedCase::*> dims[] = {
      {"gpu", &PublishedCase::gpu},
      {"kind", &PublishedCase::kind},
      {"precision", &PublishedCase::precision},
      {"family", &PublishedCase::family},
      {"stack", &PublishedCase::stack},
      {"ep", &PublishedCase::expert_parallel}};
  for (const auto& [by, field] : dims) {
    std::map<std::string, std::vector<const PublishedPrediction*>> groups;
    for (const PublishedPrediction* p : all) groups[p->run.*field].push_back(p);
    for (const auto& [name, list] : groups) out.push_back(group_error(by, name, list));
  }
  std::map<std::string, std::vector<const PublishedPrediction*>> sources;
  for (const PublishedPrediction* p : all) sources[p->row.source].push_back(p);
  for (const auto& [name, list] : sources) out.push_back(group_error("source", name, list));
  return out;
}

RepeatSpread repeat_spread(const std::vector<PublishedPrediction>& rows) {
  using Key = std::tuple<std::string, std::string, std::string, std::vector<int>, std::string>;
  // Per configuration, per container: the first simulated row's measured time and error (a
  // run's tokens/s and TFLOP/s rows give the same time).
  std::map<Key, std::map<int, std::pair<double, double>>> runs;
  for (const PublishedPrediction& p : rows) {
    if (!p.simulated) continue;
    const PublishedRow& r = p.row;
    const int container = container_of(r);
    if (container == 0) continue;
    const Key key{r.source,
                  r.model,
                  r.gpu,
                  {r.num_gpus, r.tp, r.pp, r.cp, r.ep, r.vpp, r.micro_batch, r.global_batch, r.seq,
                   r.layers, r.hidden},
                  r.precision};
    runs[key].emplace(container, std::make_pair(p.run.measured_ms, std::abs(p.error_pct())));
  }
  RepeatSpread out;
  std::vector<double> deviations, errors;
  for (const auto& [key, by_container] : runs) {
    if (by_container.size() < 2) continue;
    ++out.configurations;
    std::vector<double> times;
    for (const auto& [c, run] : by_container) times.push_back(run.first);
    const double mid = median(times);
    for (const auto& [c, run] : by_container) {
      deviations.push_back(std::abs(run.first / mid - 1) * 100);
      errors.push_back(run.second);
    }
  }
  out.runs = static_cast<int>(deviations.size());
  if (out.runs > 0) {
    double sum = 0, err = 0;
    for (size_t i = 0; i < deviations.size(); ++i) {
      sum += deviations[i];
      err += errors[i];
    }
    out.mean_pct = sum / out.runs;
    out.median_pct = median(deviations);
    out.model_mape_pct = err / out.runs;
  }
  return out;
}

const std::vector<PublishedConstant>& published_constants() {
  // Bounds: physical ranges (a GEMM cannot beat the best-shape matmul, 0.80-0.87 of peak;
  // FlashAttention kernels reach 0.35-0.75; the element-wise, normalisation, cast and permute
  // kernels of a training step 0.35-0.9 of HBM).
  // Starts: 0.78, the best-shape matmul fraction of Hopper and Blackwell (microbenchmarks.csv
  // mlengineering_mamf: H100 0.803, B200 0.776, B300 0.786, GB200 0.729); 0.6, FlashAttention-2
  // forward + backward (Dao 2023); 0.6 of HBM, between what PyTorch's eager RMSNorm reaches on a
  // B200 at training sizes (0.45 of 8 TB/s at 32768 x 4096 in bf16, 0.18-0.42 at 16384 rows;
  // PyTorch PR #175551) and a tuned streaming kernel on Hopper (about 0.75-0.9).
  // NVFP4 against FP8 at their peaks' ratio: 0.3-1 (an FP4 GEMM cannot beat its peak; at 0.3
  // it would run no faster than FP8 on Blackwell Ultra, whose FP4 peak is three times its FP8
  // one). Start 0.9, the assumption it replaces (config/scenario.h).
  static const std::vector<PublishedConstant> kConstants = {
      {"gemm_efficiency", 0.35, 0.85, 0.78},
      {"attention_efficiency", 0.25, 0.8, 0.6},
      {"memory_efficiency", 0.35, 0.9, 0.6},
      {"nvfp4_efficiency", 0.3, 1.0, 0.9},
  };
  return kConstants;
}

std::vector<double> get_published_calibration(const GpuCalibration& c) {
  return {c.gemm_efficiency, c.attention_efficiency, c.memory_efficiency, c.nvfp4_efficiency};
}

void set_published_calibration(const std::vector<double>& v, GpuCalibration* c) {
  c->gemm_efficiency = v[0];
  c->attention_efficiency = v[1];
  c->memory_efficiency = v[2];
  c->nvfp4_efficiency = v[3];
}

namespace {

// GPUs whose constants come from another data set and are not fitted here.
bool fitted_elsewhere(const std::string& gpu) { return gpu.rfind("A100", 0) == 0; }

// The GPU generation a GPU's constants are shared with: the same silicon, tensor cores and
// kernels (Blackwell B200 and GB200; Blackwell Ultra B300 and GB300), so the same sustained
// fractions of their peaks; a generation is fitted on the rows of all its GPUs.
std::string generation_of(const std::string& gpu) {
  if (gpu == "B200" || gpu == "GB200") return "blackwell";
  if (gpu == "B300" || gpu == "GB300") return "blackwell-ultra";
  if (gpu.rfind("H100", 0) == 0 || gpu.rfind("H200", 0) == 0) return "hopper";
  return gpu;
}

// Where a GPU's sustained GEMM fraction comes from, when not from its own generation's fit: the
// fraction a GEMM sustains under training load is set by the board's power and cooling as much
// as by the silicon, and the HGX B300 (1,100 W) shares the HGX B200's board (1,000 W), not
// GB300's NVL72 compute tray (1,400 W). The set has no dense B300 row to fit it on, and GB300's
// fit (above the best-shape ceiling GB200 measures) does not carry over, so B300 takes the
// Blackwell fit times the two HGX parts' measured best-shape BF16 ratio (MAMF: B300-SXM 1,769,
// B200-SXM 1,745 TFLOP/s; microbenchmarks.csv mlengineering_mamf). docs/calibration.md.
struct GemmSource {
  std::string generation;
  double ratio = 1;
};
GemmSource gemm_source(const std::string& gpu) {
  if (gpu == "B300") return {"blackwell", 1769.0 / 1745.0};
  return {generation_of(gpu), 1};
}

}  // namespace

// Where a generation's attention fraction comes from. The fitted fraction is that of the
// tensor cores in cuDNN's fused attention (the softmax's exponentials are timed apart, at each
// part's special-function rate: GpuConfig::sfu_exp_per_clock), and Blackwell Ultra runs the same
// sm_100-family kernels on the same fifth-generation tensor cores, with the same dense BF16 peak
// as its Blackwell counterpart (B300 B200's 2,250 TFLOP/s, GB300 GB200's 2,500); what it changes
// for attention is the exponentials' rate (twice the units), which the model has from NVIDIA's
// description of the part. So Blackwell Ultra takes Blackwell's
// fraction rather than a fit of its own: its dense rows (GB300's) are few and mostly long
// sequences, and alone they pushed the fraction to the bound of its range (0.80) while its GEMM
// fraction fell below GB200's best-shape ceiling to make up (docs/calibration.md).
std::string attention_source(const std::string& generation) {
  if (generation == "blackwell-ultra") return "blackwell";
  return generation;
}

// A generation's HBM fraction where a public measurement gives it rather than the fit (NaN:
// fitted on every row of the generation). Blackwell's and Blackwell Ultra's parts all carry
// 8 TB/s of HBM3e, and PyTorch's eager RMSNorm, the kind of kernel the fraction stands for,
// reaches 0.45 of a B200's at 32768 x 4096 in bf16 (PyTorch PR #175551; 0.50 at 8192 x 4096
// forward and 0.24 at 2048 x 4096 in Liger-Kernel PR #1462's B200 timings). Fitted instead, the
// fraction took up what the MoE and hybrid rows of the families a fold kept still lack, and
// moved with them (0.452-0.533 on Blackwell over the folds): a held-out family met a fraction
// fitted to others' gaps. Hopper keeps its fit: the same benchmarks put an H100's RMSNorm at
// 0.74 of its 3.35 TB/s at 8192 x 4096 and 0.48 at 2048 x 4096, no single figure
// (docs/calibration.md).
double measured_memory_fraction(const std::string& generation) {
  if (generation == "blackwell" || generation == "blackwell-ultra") return 0.45;
  return NAN;
}

namespace {

// The constants a scenario on `gpu` runs with: its generation's `own`, the GEMM fraction from
// `fits` where gemm_source() names another generation that has one.
std::vector<double> constants_on(const std::string& gpu, const std::vector<double>& own,
                                 const std::vector<GpuFit>& fits) {
  std::vector<double> c = own;
  const GemmSource src = gemm_source(gpu);
  if (c.empty() || src.generation == generation_of(gpu)) return c;
  for (const GpuFit& f : fits) {
    if (f.gpu == src.generation && !f.constants.empty()) c[0] = f.constants[0] * src.ratio;
  }
  return c;
}

// The stack whose host cost per kernel launch is fitted (on every kind of row: MoE and hybrid
// layers launch many small kernels, dense layers few).
constexpr const char* kFittedStack = "megatron-core";
constexpr double kLaunchLo = 2, kLaunchHi = 120;  // µs
// The launch cost is the x86 hosts' (Intel and AMD); the Grace hosts' (Arm) is that times a
// host_overhead_factor fitted after it, within [1, 4] (TransformerEngine #2053 measures 2.75
// for a PyTorch Linear's host work on GB200 against a DGX H100's Xeon; docs/calibration.md).
constexpr const char* kGraceVendor = "arm";
constexpr double kGraceLo = 1, kGraceHi = 4;

// The minimum of f over [lo, hi] by golden-section search, `steps` evaluations after the two
// first; f unimodal enough there.
double golden_section(const std::function<double(double)>& f, double lo, double hi, int steps) {
  const double g = (std::sqrt(5.0) - 1) / 2;
  double a = lo, b = hi;
  double c = b - g * (b - a), d = a + g * (b - a);
  double fc = f(c), fd = f(d);
  for (int i = 0; i < steps; ++i) {
    if (fc < fd) {
      b = d;
      d = c;
      fd = fc;
      c = b - g * (b - a);
      fc = f(c);
    } else {
      a = c;
      c = d;
      fc = fd;
      d = a + g * (b - a);
      fd = f(d);
    }
  }
  return fc < fd ? c : d;
}

// The rows the GEMM and attention fractions are fitted on: dense models, whose every cost the
// model holds (GEMMs, attention, the memory-bound kernels, TP/PP/DP communication). The HBM
// fraction of the memory-bound kernels is fitted on every row of the generation: dense layers
// are GEMM-bound and cannot tell it apart from the GEMM fraction, while MoE and hybrid layers
// (permutes, casts of many small expert GEMMs' operands, Mamba's element-wise kernels) weigh it
// heavily. Cross-validation holds out whole families, so no constant sees the model it predicts.
bool fits_on(const PublishedPrediction& p) { return p.run.kind == "dense"; }

// What one simulation gives the rows of its run: the iteration time, and for per-layer rows
// the first layer's forward and backward block times (stage 0, micro-batch 0).
struct Predicted {
  double iteration_ms = NAN, layer_fwd_ms = NAN, layer_bwd_ms = NAN;
  double for_row(const PublishedCase& c) const {
    if (c.layer_metric == "layer_fwd_ms") return layer_fwd_ms;
    if (c.layer_metric == "layer_bwd_ms") return layer_bwd_ms;
    if (c.layer_metric == "layer_fwd_bwd_ms") return layer_fwd_ms + layer_bwd_ms;
    return iteration_ms;
  }
};

// Simulates `scenarios`, each with `constants[i]` applied to its GPU calibration (null or
// empty: the preset's); `layers[i]` asks for the per-layer block times too.
std::vector<Predicted> predict(const std::vector<const Scenario*>& scenarios,
                               const std::vector<const std::vector<double>*>& constants,
                               const std::vector<bool>& layers, int jobs, double launch_us = NAN,
                               double grace_factor = NAN) {
  std::vector<Predicted> out(scenarios.size());
  std::atomic<size_t> next{0};
  auto worker = [&]() {
    for (size_t i = next++; i < scenarios.size(); i = next++) {
      Scenario s = *scenarios[i];
      if (constants[i] != nullptr && !constants[i]->empty()) {
        set_published_calibration(*constants[i], &s.cluster.gpu.calibration);
      }
      if (std::isfinite(launch_us) && s.training.stack.name == kFittedStack &&
          !s.cluster.gpu.calibration.launch_overhead_given) {
        s.cluster.gpu.calibration.launch_overhead = SimTime::microseconds(launch_us);
      }
      if (std::isfinite(grace_factor) && s.training.stack.name == kFittedStack &&
          s.cluster.cpu_vendor == kGraceVendor) {
        s.cluster.host_overhead_factor = grace_factor;
      }
      SimulateOptions o;
      if (layers[i]) o.trace = TraceLevel::kBlocks;
      StatusOr<SimulationReport> r = simulate(s, o);
      if (!r.ok()) continue;
      out[i].iteration_ms = r->iteration_time_s * 1e3;
      for (const TraceInterval& t : r->execution.trace) {
        if (t.stage != 0 || t.microbatch != 0) continue;
        const double ms = (t.end - t.start).to_seconds() * 1e3;
        if (t.name == "layer.fwd" && std::isnan(out[i].layer_fwd_ms)) out[i].layer_fwd_ms = ms;
        if (t.name == "layer.bwd" && std::isnan(out[i].layer_bwd_ms)) out[i].layer_bwd_ms = ms;
      }
    }
  };
  std::vector<std::thread> threads;
  for (int t = 1; t < std::max(1, jobs); ++t) threads.emplace_back(worker);
  worker();
  for (std::thread& t : threads) t.join();
  return out;
}

}  // namespace

StatusOr<PublishedValidationResult> run_published_validation(const std::vector<PublishedRow>& rows,
                                                             const ValidationOptions& options) {
  if (rows.empty()) return invalid_argument("validate: the dataset has no rows");
  PREFLIGHT_RETURN_IF_ERROR(check_validation_overrides(options));
  PublishedValidationResult result;
  result.total = static_cast<int>(rows.size());
  result.rows.resize(rows.size());
  // Rows of one run share a scenario: simulate each distinct scenario once.
  std::map<std::string, size_t> unique_index;
  std::vector<const Scenario*> unique;
  std::vector<std::string> unique_gpu;
  std::vector<bool> unique_layers;
  std::vector<size_t> row_unique(rows.size(), SIZE_MAX);
  for (size_t i = 0; i < rows.size(); ++i) {
    PublishedPrediction& p = result.rows[i];
    p.row = rows[i];
    StatusOr<PublishedCase> c = published_case(rows[i], options.overrides);
    if (!c.ok()) {
      p.reason = c.status().message();
      continue;
    }
    p.simulated = true;
    p.run = *std::move(c);
    ++result.simulated;
    auto [it, fresh] = unique_index.emplace(p.run.yaml, unique.size());
    if (fresh) {
      unique.push_back(&p.run.scenario);
      unique_gpu.push_back(p.run.gpu);
      unique_layers.push_back(false);
    }
    row_unique[i] = it->second;
    if (!p.run.layer_metric.empty()) unique_layers[it->second] = true;
  }
  // The memory model on each configuration: no calibrated constant enters it.
  std::vector<MemoryReport> unique_memory;
  for (const Scenario* s : unique) unique_memory.push_back(estimate_memory(*s));
  result.configurations = static_cast<int>(unique.size());
  for (const MemoryReport& m : unique_memory) result.configurations_not_fitting += m.fits ? 0 : 1;
  for (size_t i = 0; i < rows.size(); ++i) {
    if (row_unique[i] == SIZE_MAX) continue;
    const MemoryReport& m = unique_memory[row_unique[i]];
    PublishedPrediction& p = result.rows[i];
    p.fits = m.fits;
    for (const StageMemory& st : m.stages) {
      p.peak_gib = std::max(p.peak_gib, st.peak.to_gib());
      p.hbm_gib = st.capacity.to_gib();
    }
  }
  // The GPUs to fit, in name order.
  std::vector<std::string> gpus;  // the generations to fit
  for (const std::string& g : unique_gpu) {
    const std::string gen = generation_of(g);
    if (!fitted_elsewhere(g) && std::find(gpus.begin(), gpus.end(), gen) == gpus.end()) {
      gpus.push_back(gen);
    }
  }
  // Name order, with a generation that another's GEMM fraction comes from (gemm_source())
  // before it: "blackwell" sorts before "blackwell-ultra".
  std::sort(gpus.begin(), gpus.end());
  std::vector<double> start, lo, hi;
  for (const PublishedConstant& c : published_constants()) {
    start.push_back(c.start);
    lo.push_back(c.lo);
    hi.push_back(c.hi);
  }
  // Fits the constants of `gpu`: the GEMM and attention fractions on its dense rows `dense`,
  // the HBM fraction on all its rows `all` (indices into result.rows; none where a measurement
  // gives it, measured_memory_fraction()), the NVFP4 fraction on
  // its NVFP4 rows, in four stages: the two fractions with the others at their starts, the HBM
  // fraction with them fixed, the NVFP4 fraction likewise, then the two again from where they
  // were.
  // `done`: the generations fitted before, which a GEMM source may name (gemm_source()).
  auto fit_gpu = [&](const std::string& gpu, const std::vector<size_t>& dense,
                     const std::vector<size_t>& all, const std::vector<GpuFit>& done) {
    GpuFit fit;
    fit.gpu = gpu;
    fit.rows = static_cast<int>(all.size());
    fit.constants = start;
    const double measured_memory = measured_memory_fraction(gpu);
    if (std::isfinite(measured_memory)) fit.constants[2] = measured_memory;
    // A generation whose attention fraction is another's takes it as that one was fitted, and
    // fits its GEMM fraction alone on its dense rows (attention_source()).
    double shared_attention = NAN;
    for (const GpuFit& f : done) {
      if (f.gpu == attention_source(gpu) && f.gpu != gpu && !f.constants.empty()) {
        shared_attention = f.constants[1];
        fit.constants[1] = shared_attention;
      }
    }
    // MAPE (%) of rows `train` with constants `x`, each distinct scenario simulated once.
    auto mape = [&](const std::vector<size_t>& train, const std::vector<double>& x) {
      std::map<size_t, size_t> local;  // unique index -> position in the scenario list
      std::vector<const Scenario*> scen;
      std::vector<const std::string*> scen_gpu;
      std::vector<bool> scen_layers;
      std::vector<size_t> row_pos;
      for (size_t i : train) {
        auto [it, fresh] = local.emplace(row_unique[i], scen.size());
        if (fresh) {
          scen.push_back(unique[row_unique[i]]);
          scen_gpu.push_back(&unique_gpu[row_unique[i]]);
          scen_layers.push_back(unique_layers[row_unique[i]]);
        }
        row_pos.push_back(it->second);
      }
      std::vector<std::vector<double>> own;
      own.reserve(scen.size());
      std::vector<const std::vector<double>*> cs;
      for (const std::string* gpu : scen_gpu) {
        own.push_back(constants_on(*gpu, x, done));
        cs.push_back(&own.back());
      }
      const std::vector<Predicted> p = predict(scen, cs, scen_layers, options.jobs);
      double sum = 0;
      for (size_t k = 0; k < train.size(); ++k) {
        const double m = result.rows[train[k]].run.measured_ms;
        const double v = p[row_pos[k]].for_row(result.rows[train[k]].run);
        sum += std::isfinite(v) ? std::fabs(v - m) / m : 10.0;
      }
      return train.empty() ? 0.0 : sum / static_cast<double>(train.size()) * 100;
    };
    // The GEMM and attention fractions on the dense rows from `from`, the HBM fraction fixed;
    // the GEMM fraction alone where the attention fraction is shared.
    auto fit_compute = [&](const std::vector<double>& from, double step) {
      if (std::isfinite(shared_attention)) {
        // A generation the fold leaves no dense row fits its GEMM fraction on all its rows.
        const std::vector<size_t>& train = dense.empty() ? all : dense;
        if (train.empty()) return from;
        std::vector<double> x = from;
        x[0] = golden_section(
            [&](double v) {
              std::vector<double> y = x;
              y[0] = v;
              return mape(train, y);
            },
            lo[0], hi[0], 12);
        return x;
      }
      if (dense.empty()) return from;
      OptimizeOptions o;
      o.max_evaluations = options.max_evaluations;
      o.tolerance = 1e-4;
      o.initial_step = step;
      const OptimizeResult r = minimize_nelder_mead(
          [&](const std::vector<double>& x) {
            return mape(dense, {x[0], x[1], from[2], from[3]});
          },
          {from[0], from[1]}, {lo[0], lo[1]}, {hi[0], hi[1]}, o);
      return std::vector<double>{r.x[0], r.x[1], from[2], from[3]};
    };
    fit.constants = fit_compute(fit.constants, 0.15);
    // Constant `k` alone on rows `train` (none: it keeps its value), the others fixed.
    auto fit_one = [&](size_t k, const std::vector<size_t>& train) {
      if (train.empty()) return;
      std::vector<double> x = fit.constants;
      fit.constants[k] = golden_section(
          [&](double v) {
            x[k] = v;
            return mape(train, x);
          },
          lo[k], hi[k], 12);
    };
    if (!std::isfinite(measured_memory)) fit_one(2, all);
    // The NVFP4 fraction on the generation's dense NVFP4 rows: like the GEMM fraction, on rows
    // whose every cost the model holds (fitted on the hybrids' NVFP4 rows, it would take up their
    // other gaps: a fold without dense NVFP4 rows pushed it to its bound and the held-out dense
    // rows 46 % slow). Without such rows it keeps its start, the assumption.
    std::vector<size_t> fp4;
    for (size_t i : dense) {
      if (result.rows[i].run.precision == "nvfp4") fp4.push_back(i);
    }
    fit_one(3, fp4);
    fit.constants = fit_compute(fit.constants, 0.05);
    return fit;
  };
  // Predicts rows `idx` with per-GPU constants `fits` (GPUs without one: the preset).
  // The per-row constants: the fit of the row's generation, its GEMM fraction from its GEMM
  // source (none: the preset's).
  auto constants_for = [&](size_t unique_row, const std::vector<GpuFit>& fits) {
    const std::string& gpu = unique_gpu[unique_row];
    for (const GpuFit& f : fits) {
      if (f.gpu == generation_of(gpu)) return constants_on(gpu, f.constants, fits);
    }
    return std::vector<double>{};
  };
  // The predicted time (ms) of each of rows `idx` with `fits` and the stack launch cost
  // `launch_us`: each distinct scenario simulated once.
  auto predict_each = [&](const std::vector<size_t>& idx, const std::vector<GpuFit>& fits,
                          double launch_us, double grace) {
    std::map<size_t, size_t> local;
    std::vector<const Scenario*> scen;
    std::vector<std::vector<double>> own;
    own.reserve(idx.size());
    std::vector<const std::vector<double>*> cs;
    std::vector<bool> scen_layers;
    for (size_t i : idx) {
      if (!local.emplace(row_unique[i], scen.size()).second) continue;
      scen.push_back(unique[row_unique[i]]);
      scen_layers.push_back(unique_layers[row_unique[i]]);
      own.push_back(constants_for(row_unique[i], fits));
      cs.push_back(&own.back());
    }
    const std::vector<Predicted> p = predict(scen, cs, scen_layers, options.jobs, launch_us, grace);
    std::vector<double> out;
    out.reserve(idx.size());
    for (size_t i : idx) out.push_back(p[local[row_unique[i]]].for_row(result.rows[i].run));
    return out;
  };
  // MAPE (%) of rows `idx` with `fits` and the stack launch cost `launch_us`.
  auto rows_mape = [&](const std::vector<size_t>& idx, const std::vector<GpuFit>& fits,
                       double launch_us, double grace) {
    const std::vector<double> v = predict_each(idx, fits, launch_us, grace);
    double sum = 0;
    for (size_t k = 0; k < idx.size(); ++k) {
      const double m = result.rows[idx[k]].run.measured_ms;
      sum += std::isfinite(v[k]) ? std::fabs(v[k] - m) / m : 10.0;
    }
    return idx.empty() ? 0.0 : sum / static_cast<double>(idx.size()) * 100;
  };
  // The stack's host constants fitted on rows `train` of that stack, the GPU constants fixed:
  // the launch cost on the x86 hosts' rows, then the Grace hosts' factor on theirs.
  struct HostFit {
    double launch_us = NAN, grace = NAN;
  };
  auto fit_host = [&](const std::vector<size_t>& train, const std::vector<GpuFit>& fits) {
    std::vector<size_t> x86, grace;
    for (size_t i : train) {
      if (result.rows[i].run.stack != kFittedStack) continue;
      (unique[row_unique[i]]->cluster.cpu_vendor == kGraceVendor ? grace : x86).push_back(i);
    }
    HostFit h;
    if (x86.empty()) return h;
    h.launch_us = golden_section([&](double us) { return rows_mape(x86, fits, us, NAN); },
                                 kLaunchLo, kLaunchHi, 10);
    if (grace.empty()) return h;
    h.grace = golden_section([&](double g) { return rows_mape(grace, fits, h.launch_us, g); },
                             kGraceLo, kGraceHi, 10);
    return h;
  };
  auto predict_rows = [&](const std::vector<size_t>& idx, const std::vector<GpuFit>& fits, int fold,
                          const HostFit& host) {
    const std::vector<double> v = predict_each(idx, fits, host.launch_us, host.grace);
    for (size_t k = 0; k < idx.size(); ++k) {
      result.rows[idx[k]].predicted_ms = v[k];
      result.rows[idx[k]].fold = fold;
    }
  };
  std::vector<size_t> simulated;
  for (size_t i = 0; i < rows.size(); ++i) {
    if (row_unique[i] != SIZE_MAX) simulated.push_back(i);
  }
  if (options.folds >= 2) {
    // Whole model families per fold: shuffle the families, deal them round-robin.
    std::vector<std::string> families;
    for (size_t i : simulated) {
      const std::string& f = result.rows[i].run.family;
      if (std::find(families.begin(), families.end(), f) == families.end()) families.push_back(f);
    }
    std::sort(families.begin(), families.end());
    const int k = std::min<int>(options.folds, static_cast<int>(families.size()));
    if (k < 2) return invalid_argument("validate --cv: the data set holds one model family");
    const std::vector<int> a = kfold_assignment(static_cast<int>(families.size()), k, options.seed);
    std::map<std::string, int> family_fold;
    result.folds = k;
    result.fold_families.assign(static_cast<size_t>(k), "");
    for (size_t j = 0; j < families.size(); ++j) {
      family_fold[families[j]] = a[j];
      std::string& list = result.fold_families[static_cast<size_t>(a[j])];
      list += (list.empty() ? "" : ",") + families[j];
    }
    for (int f = 0; f < k; ++f) {
      if (options.progress) {
        options.progress("fold " + std::to_string(f + 1) + " of " + std::to_string(k) +
                         " (held out: " + result.fold_families[static_cast<size_t>(f)] +
                         "): fitting the GPU and stack constants");
      }
      std::vector<GpuFit> fits;
      for (const std::string& g : gpus) {
        std::vector<size_t> dense, all;
        for (size_t i : simulated) {
          const PublishedPrediction& p = result.rows[i];
          if (generation_of(p.run.gpu) != g || family_fold[p.run.family] == f) continue;
          all.push_back(i);
          if (fits_on(p)) dense.push_back(i);
        }
        fits.push_back(fit_gpu(g, dense, all, fits));
      }
      std::vector<size_t> train_all, test;
      for (size_t i : simulated) {
        (family_fold[result.rows[i].run.family] == f ? test : train_all).push_back(i);
      }
      const HostFit host = fit_host(train_all, fits);
      predict_rows(test, fits, f, host);
      result.fold_fits.push_back(std::move(fits));
      result.fold_launch_us.push_back(host.launch_us);
      result.fold_grace_factor.push_back(host.grace);
    }
  } else if (options.calibrate) {
    for (const std::string& g : gpus) {
      std::vector<size_t> dense, all;
      for (size_t i : simulated) {
        if (generation_of(result.rows[i].run.gpu) != g) continue;
        all.push_back(i);
        if (fits_on(result.rows[i])) dense.push_back(i);
      }
      result.fitted.push_back(fit_gpu(g, dense, all, result.fitted));
    }
    const HostFit host = fit_host(simulated, result.fitted);
    result.launch_us = host.launch_us;
    result.grace_factor = host.grace;
    predict_rows(simulated, result.fitted, -1, host);
  } else {
    predict_rows(simulated, {}, -1, HostFit{});
  }
  result.groups = published_group_errors(result.rows);
  result.repeats = repeat_spread(result.rows);
  return result;
}

}  // namespace preflight
