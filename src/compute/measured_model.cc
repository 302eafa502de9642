#include "compute/measured_model.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "workload/layer_ops.h"
#include "workload/layer_shape.h"
#include "workload/precision_ops.h"

namespace preflight {
namespace {

constexpr int kMaxAxes = 4;
using Axes = std::array<int64_t, kMaxAxes>;

// The exact-match part of a shape's key and its interpolation axes (docs/compute.md).
std::string group_key(const KernelShape& s) {
  switch (s.kind) {
    case KernelKind::kGemm:
      return "gemm|" + s.dtype;
    case KernelKind::kAttention:
      return "attention|" + s.dtype + "|" + std::to_string(s.heads) + "|" +
             std::to_string(s.kv_heads) + "|" + std::to_string(s.head_dim) + "|" +
             (s.causal ? "causal" : "full") + "|" + (s.backward ? "bwd" : "fwd");
    case KernelKind::kMemory:
      return "memory|" + s.name;
  }
  return "";
}

int axis_count(KernelKind k) {
  switch (k) {
    case KernelKind::kGemm:
      return 4;
    case KernelKind::kAttention:
      return 3;
    case KernelKind::kMemory:
      return 1;
  }
  return 0;
}

Axes axes_of(const KernelShape& s) {
  switch (s.kind) {
    case KernelKind::kGemm:
      return {s.m, s.n, s.k, s.batch};
    case KernelKind::kAttention:
      return {s.batch, s.seq_q, s.seq_kv, 0};
    case KernelKind::kMemory:
      return {s.bytes, 0, 0, 0};
  }
  return {};
}

// The op the roofline times for a table shape: what the workload generator would emit for it
// (layer_ops.cc), so that efficiencies compare like with like.
Op canonical_op(const KernelShape& s) {
  switch (s.kind) {
    case KernelKind::kGemm: {
      const int e = s.dtype == "bf16" || s.dtype == "fp16" ? 2 : 1;
      return gemm_op(s.name.c_str(), s.m, s.n, s.k, s.batch, e);
    }
    case KernelKind::kAttention: {
      // As the workload counts a fused kernel (workload/layer_ops.cc): forward QKᵀ and PV,
      // 2·b·h·s_q·keys2·d with keys2 = 2·s_kv, or causal the whole tiles the kernel computes
      // (tiled_keys2, about s_kv + 128); one exponential per score element; backward 2.5× the
      // FLOPs (five GEMMs against two), P recomputed once. Bytes: Q and O per query, K and V
      // per key, 2 bytes each, and the 4-byte softmax statistics per query and head; backward
      // reads and writes twice that.
      const double b = static_cast<double>(s.batch), h = static_cast<double>(s.heads);
      const double d = static_cast<double>(s.head_dim);
      const double sq = static_cast<double>(s.seq_q), skv = static_cast<double>(s.seq_kv);
      const double keys2 = s.causal ? tiled_keys2(s.seq_kv, 0) : 2.0 * skv;
      double flops = 2.0 * b * h * sq * keys2 * d;
      double bytes =
          2.0 * b * (2.0 * sq * h * d + 2.0 * skv * static_cast<double>(s.kv_heads) * d) +
          4.0 * b * h * sq;
      if (s.backward) {
        flops *= 2.5;
        bytes *= 2;
      }
      Op op;
      op.name = s.name;
      op.type = OpType::kAttention;
      op.backward = s.backward;
      op.flops = Flops(flops);
      op.exponentials = b * h * sq * keys2 / 2;
      op.attention_tiles_per_unit = keys2 / (2.0 * static_cast<double>(kAttentionTile));
      op.bytes = round_bytes(bytes);
      return op;
    }
    case KernelKind::kMemory:
      return memory_op(s.name.c_str(), static_cast<double>(s.bytes));
  }
  return Op();
}

// Kernels a GEMM runs as: ⌈batch / gemm_streams⌉ groups of separate kernels, else 1.
int64_t kernel_groups(const Op& op) {
  return op.type == OpType::kGemm ? device_kernel_count(op) : 1;
}

struct Row {
  Axes axes;
  double seconds = 0;  // measured
  double log_seconds = 0;
};

struct Group {
  int dims = 0;
  std::vector<Row> rows;
  std::array<std::vector<int64_t>, kMaxAxes> values;  // each axis' measured values, ascending
};

// How often each block of `w` runs over every stage's program.
std::vector<int64_t> block_runs(const Workload& w) {
  std::vector<int64_t> runs(w.blocks.size(), 0);
  for (const Program& p : w.stages) {
    for (const Step& st : p.steps) {
      if (st.kind == StepKind::kRun && st.block >= 0 &&
          st.block < static_cast<int>(w.blocks.size())) {
        runs[st.block] += st.repeat;
      }
    }
  }
  return runs;
}

}  // namespace

std::optional<KernelShape> kernel_shape(const Op& op, Precision p) {
  KernelShape s;
  s.name = op.name;
  const char* half = p == Precision::kFp16 ? "fp16" : "bf16";
  switch (op.type) {
    case OpType::kGemm:
      s.kind = KernelKind::kGemm;
      s.dtype = op.bytes_per_element >= 2 ? half : is_low_precision(p) ? to_string(p) : "fp8";
      s.m = op.m;
      s.n = op.n;
      s.k = op.k;
      s.batch = op.gemm_streams > 0 && op.batch > 1 ? 1 : op.batch;
      return s;
    case OpType::kAttention:
      if (op.ssd_scan || op.attention.heads <= 0) return std::nullopt;
      s.kind = KernelKind::kAttention;
      s.dtype = half;
      s.batch = op.attention.batch;
      s.heads = op.attention.heads;
      s.kv_heads = op.attention.kv_heads;
      s.head_dim = op.attention.head_dim;
      s.seq_q = op.attention.seq_q;
      s.seq_kv = op.attention.seq_kv;
      s.causal = op.attention.causal;
      s.backward = op.backward;
      return s;
    case OpType::kMemory:
      s.kind = KernelKind::kMemory;
      s.dtype = half;
      s.bytes = op.bytes.count();
      return s;
    case OpType::kCollective:
      return std::nullopt;
  }
  return std::nullopt;
}

struct MeasuredModel::Impl {
  std::shared_ptr<const KernelTable> table;
  std::unique_ptr<ComputeModel> roofline;
  SimTime gap;
  Precision precision = Precision::kBf16;
  std::map<std::string, Group> groups;

  // The roofline's time of `op` without its kernel gaps.
  double roofline_seconds(const Op& op) const {
    return (roofline->duration(op) - gap * device_kernel_count(op)).to_seconds();
  }

  // Measured (or interpolated) seconds of the kernel `s`, or nullopt outside the table.
  std::optional<double> lookup(const KernelShape& s, KernelSource* source) const {
    std::string key = group_key(s);
    auto it = groups.find(key);
    if (it == groups.end() && s.kind == KernelKind::kMemory) it = groups.find("memory|*");
    if (it == groups.end()) return std::nullopt;
    const Group& g = it->second;
    const Axes q = axes_of(s);
    for (const Row& r : g.rows) {
      if (r.axes == q) {
        *source = KernelSource::kMeasured;
        return r.seconds;
      }
    }
    // The box around q: on each axis the nearest measured value at or below and at or above.
    std::array<int64_t, kMaxAxes> lo{}, hi{};
    for (int d = 0; d < g.dims; ++d) {
      const std::vector<int64_t>& v = g.values[d];
      auto up = std::lower_bound(v.begin(), v.end(), q[d]);
      if (up == v.end()) return std::nullopt;
      hi[d] = *up;
      if (*up == q[d]) {
        lo[d] = *up;
      } else {
        if (up == v.begin()) return std::nullopt;
        lo[d] = *(up - 1);
      }
    }
    double log_t = 0;
    for (int corner = 0; corner < (1 << g.dims); ++corner) {
      Axes c{};
      double weight = 1;
      for (int d = 0; d < g.dims; ++d) {
        const bool upper = (corner >> d) & 1;
        if (lo[d] == hi[d]) {
          if (upper) weight = 0;  // a degenerate axis: count its corner once
          c[d] = lo[d];
          continue;
        }
        c[d] = upper ? hi[d] : lo[d];
        const double t =
            (std::log(static_cast<double>(q[d])) - std::log(static_cast<double>(lo[d]))) /
            (std::log(static_cast<double>(hi[d])) - std::log(static_cast<double>(lo[d])));
        weight *= upper ? t : 1 - t;
      }
      if (weight == 0) continue;
      const Row* found = nullptr;
      for (const Row& r : g.rows) {
        if (r.axes == c) {
          found = &r;
          break;
        }
      }
      if (found == nullptr) return std::nullopt;  // a corner not measured
      log_t += weight * found->log_seconds;
    }
    *source = KernelSource::kInterpolated;
    return std::exp(log_t);
  }

  // The op's time without gaps and where it came from.
  double seconds(const Op& op, KernelSource* source) const {
    *source = KernelSource::kRoofline;
    const std::optional<KernelShape> s = kernel_shape(op, precision);
    if (!s) return roofline_seconds(op);
    const std::optional<double> t = lookup(*s, source);
    if (!t) {
      *source = KernelSource::kRoofline;
      return roofline_seconds(op);
    }
    if (kernel_groups(op) > 1) {
      // Separate per-expert kernels: the one kernel's efficiency over the roofline's schedule.
      return roofline_seconds(op) * (*t / roofline_seconds(canonical_op(*s)));
    }
    return *t;
  }
};

MeasuredModel::MeasuredModel(std::shared_ptr<const KernelTable> table, const GpuConfig& gpu,
                             Precision p, AttentionKernel kernel)
    : impl_(std::make_unique<Impl>()) {
  PREFLIGHT_CHECK(table != nullptr);
  impl_->table = std::move(table);
  impl_->roofline = make_roofline_model(gpu, p, kernel);
  impl_->gap = gpu.calibration.kernel_gap;
  impl_->precision = p;
  for (const KernelMeasurement& km : impl_->table->rows) {
    PREFLIGHT_CHECK(km.time_us > 0);
    Group& g = impl_->groups[group_key(km.shape)];
    g.dims = axis_count(km.shape.kind);
    Row r;
    r.axes = axes_of(km.shape);
    r.seconds = km.time_us * 1e-6;
    r.log_seconds = std::log(r.seconds);
    g.rows.push_back(r);
    for (int d = 0; d < g.dims; ++d) g.values[d].push_back(r.axes[d]);
  }
  for (auto& [key, g] : impl_->groups) {
    for (int d = 0; d < g.dims; ++d) {
      std::vector<int64_t>& v = g.values[d];
      std::sort(v.begin(), v.end());
      v.erase(std::unique(v.begin(), v.end()), v.end());
    }
  }
}

MeasuredModel::~MeasuredModel() = default;

SimTime MeasuredModel::duration(const Op& op) const {
  KernelSource source;
  const double s = impl_->seconds(op, &source);
  return SimTime::seconds(s) + impl_->gap * device_kernel_count(op);
}

KernelSource MeasuredModel::source(const Op& op) const {
  KernelSource source;
  impl_->seconds(op, &source);
  return source;
}

std::unique_ptr<ComputeModel> make_compute_model(const Scenario& s) {
  if (s.compute.model == ComputeModelKind::kMeasured && s.compute.table != nullptr) {
    return std::make_unique<MeasuredModel>(s.compute.table, s.cluster.gpu, s.training.precision,
                                           s.training.stack.attention_kernel);
  }
  return make_roofline_model(s.cluster.gpu, s.training.precision,
                             s.training.stack.attention_kernel);
}

std::vector<RooflineComparison> compare_with_roofline(const KernelTable& t, const GpuConfig& gpu,
                                                      Precision p, AttentionKernel kernel) {
  const std::unique_ptr<ComputeModel> roofline = make_roofline_model(gpu, p, kernel);
  std::vector<RooflineComparison> out;
  for (const KernelMeasurement& km : t.rows) {
    if (!(km.time_us > 0)) continue;
    const KernelShape& s = km.shape;
    const std::string cls = s.kind == KernelKind::kGemm ? "gemm " + s.dtype
                            : s.kind == KernelKind::kAttention
                                ? std::string("attention ") + (s.backward ? "bwd" : "fwd")
                                : std::string("memory");
    auto it = std::find_if(out.begin(), out.end(),
                           [&](const RooflineComparison& c) { return c.kernel_class == cls; });
    if (it == out.end()) {
      out.push_back({cls, 0, 0, 1e300, 0, 0, 0});
      it = out.end() - 1;
    }
    const Op op = canonical_op(s);
    const double roof_us = (roofline->duration(op) - gpu.calibration.kernel_gap).to_seconds() * 1e6;
    const double ratio = roof_us / km.time_us;
    ++it->rows;
    it->mean_ratio += ratio;
    it->min_ratio = std::min(it->min_ratio, ratio);
    it->max_ratio = std::max(it->max_ratio, ratio);
    it->measured_us += km.time_us;
    it->roofline_us += roof_us;
  }
  for (RooflineComparison& c : out) c.mean_ratio /= c.rows;
  std::sort(out.begin(), out.end(), [](const RooflineComparison& a, const RooflineComparison& b) {
    return a.kernel_class < b.kernel_class;
  });
  return out;
}

std::vector<KernelShape> workload_kernel_shapes(const Workload& w, Precision p) {
  const std::vector<int64_t> runs = block_runs(w);
  std::vector<KernelShape> out;
  for (size_t b = 0; b < w.blocks.size(); ++b) {
    if (runs[b] == 0) continue;
    for (const Op& op : w.blocks[b].ops) {
      if (op.fixed_time.ps() > 0) continue;
      const std::optional<KernelShape> s = kernel_shape(op, p);
      if (!s) continue;
      bool seen = false;
      for (const KernelShape& o : out) seen = seen || o.same_as(*s);
      if (!seen) out.push_back(*s);
    }
  }
  return out;
}

ComputeCoverage compute_coverage(const Workload& w, const ComputeModel& model) {
  const auto* measured = dynamic_cast<const MeasuredModel*>(&model);
  const std::vector<int64_t> runs = block_runs(w);
  ComputeCoverage c;
  for (size_t b = 0; b < w.blocks.size(); ++b) {
    if (runs[b] == 0) continue;
    for (const Op& op : w.blocks[b].ops) {
      if (op.type == OpType::kCollective) continue;
      const SimTime t = (op.fixed_time.ps() > 0 ? op.fixed_time : model.duration(op)) * runs[b];
      const KernelSource src = op.fixed_time.ps() > 0 ? KernelSource::kMeasured
                               : measured != nullptr  ? measured->source(op)
                                                      : KernelSource::kRoofline;
      switch (src) {
        case KernelSource::kMeasured:
          c.measured += t;
          break;
        case KernelSource::kInterpolated:
          c.interpolated += t;
          break;
        case KernelSource::kRoofline:
          c.roofline += t;
          break;
      }
    }
  }
  return c;
}

}  // namespace preflight
