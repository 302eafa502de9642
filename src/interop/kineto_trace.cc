#include "interop/kineto_trace.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

namespace preflight {
namespace {

using nlohmann::json;

struct CpuOp {
  std::string name;
  double ts = 0, end = 0;
  int64_t tid = 0, pid = 0;
  const json* args = nullptr;
};

// A dims list of one input: [d0, d1, ...] of non-negative integers up to the kernel table's
// bound; empty when absent or out of it (the op is then shapeless).
std::vector<int64_t> dims(const json& all, size_t i) {
  std::vector<int64_t> out;
  if (!all.is_array() || i >= all.size() || !all[i].is_array()) return out;
  for (const json& d : all[i]) {
    if (!d.is_number_integer() || d.get<int64_t>() < 0 || d.get<int64_t>() > kMaxKernelValue) {
      return {};
    }
    out.push_back(d.get<int64_t>());
  }
  return out;
}

std::string input_type(const json& args, size_t i) {
  const auto it = args.find("Input type");
  if (it == args.end() || !it->is_array() || i >= it->size() || !(*it)[i].is_string()) return "";
  return (*it)[i].get<std::string>();
}

// Kernel-table dtype of a PyTorch dtype string; empty when it is not a GEMM operand format.
std::string dtype_of(const std::string& t) {
  if (t.find("BFloat16") != std::string::npos) return "bf16";
  if (t.find("Half") != std::string::npos) return "fp16";
  if (t.find("Float8") != std::string::npos) return "fp8";
  return "";
}

double element_bytes(const std::string& t) {
  if (t.find("Float8") != std::string::npos || t.find("Byte") != std::string::npos ||
      t.find("Char") != std::string::npos || t.find("Bool") != std::string::npos ||
      t == "unsigned char" || t == "signed char" || t == "bool") {
    return 1;
  }
  if (t.find("BFloat16") != std::string::npos || t.find("Half") != std::string::npos ||
      t == "short") {
    return 2;
  }
  if (t.find("Double") != std::string::npos || t == "double" || t == "long int" ||
      t.find("Long") != std::string::npos) {
    return 8;
  }
  return 4;
}

int64_t product(const std::vector<int64_t>& d) {
  int64_t p = 1;
  for (int64_t v : d) {
    if (v > 0 && p > kMaxKernelValue / v) return kMaxKernelValue;
    p *= v;
  }
  return p;
}

// The Concrete Inputs entry `i` as a bool: "True" / "False", else nullopt.
std::optional<bool> concrete_bool(const json& args, size_t i) {
  const auto it = args.find("Concrete Inputs");
  if (it == args.end() || !it->is_array() || i >= it->size() || !(*it)[i].is_string()) {
    return std::nullopt;
  }
  const std::string v = (*it)[i].get<std::string>();
  if (v == "True") return true;
  if (v == "False") return false;
  return std::nullopt;
}

struct AttentionOp {
  const char* name;
  bool backward;
  size_t query;      // input index of the query
  size_t is_causal;  // input index of is_causal
};

// ATen's signatures (native_functions.yaml): where the query and is_causal are.
constexpr AttentionOp kAttentionOps[] = {
    {"aten::_scaled_dot_product_flash_attention", false, 0, 4},
    {"aten::_scaled_dot_product_cudnn_attention", false, 0, 6},
    {"aten::_scaled_dot_product_efficient_attention", false, 0, 6},
    {"aten::_scaled_dot_product_flash_attention_backward", true, 1, 11},
    {"aten::_scaled_dot_product_cudnn_attention_backward", true, 1, 13},
    {"aten::_scaled_dot_product_efficient_attention_backward", true, 1, 10},
};

// The kernel-table shape of one CPU op instance, or nullopt without usable shapes.
std::optional<KernelShape> shape_of(const CpuOp& op) {
  if (op.args == nullptr) return std::nullopt;
  const json& args = *op.args;
  const auto in = args.find("Input Dims");
  if (in == args.end() || !in->is_array() || in->empty()) return std::nullopt;
  const json& d = *in;
  KernelShape s;
  // The table's names hold no commas, quotes or control bytes.
  for (char c : op.name.substr(0, 200)) {
    const unsigned char u = static_cast<unsigned char>(c);
    s.name.push_back(u < 0x20 || u == 0x7f || c == ',' || c == '"' ? '_' : c);
  }
  const std::string& n = op.name;
  auto gemm = [&](size_t a, size_t b, bool batched) -> std::optional<KernelShape> {
    const std::vector<int64_t> da = dims(d, a), db = dims(d, b);
    const size_t rank = batched ? 3 : 2;
    if (da.size() != rank || db.size() != rank) return std::nullopt;
    s.kind = KernelKind::kGemm;
    s.batch = batched ? da[0] : 1;
    s.m = da[rank - 2];
    s.k = da[rank - 1];
    s.n = db[rank - 1];
    if (db[rank - 2] != s.k || s.m <= 0 || s.n <= 0 || s.k <= 0 || s.batch <= 0) {
      return std::nullopt;
    }
    s.dtype = dtype_of(input_type(args, a));
    if (s.dtype.empty()) return std::nullopt;  // fp32 GEMMs: not a training kernel here
    return s;
  };
  if (n == "aten::mm" || n == "aten::_scaled_mm") return gemm(0, 1, false);
  if (n == "aten::addmm") return gemm(1, 2, false);
  if (n == "aten::bmm") return gemm(0, 1, true);
  if (n == "aten::baddbmm") return gemm(1, 2, true);
  for (const AttentionOp& a : kAttentionOps) {
    if (n != a.name) continue;
    const std::vector<int64_t> q = dims(d, a.query), k = dims(d, a.query + 1);
    if (q.size() != 4 || k.size() != 4 || q[0] != k[0] || q[3] != k[3]) return std::nullopt;
    s.kind = KernelKind::kAttention;
    s.batch = q[0];
    s.heads = q[1];
    s.kv_heads = k[1];
    s.seq_q = q[2];
    s.seq_kv = k[2];
    s.head_dim = q[3];
    if (s.batch <= 0 || s.heads <= 0 || s.kv_heads <= 0 || s.heads % s.kv_heads != 0 ||
        s.seq_q <= 0 || s.seq_kv <= 0 || s.head_dim <= 0) {
      return std::nullopt;
    }
    s.backward = a.backward;
    s.causal = concrete_bool(args, a.is_causal).value_or(false);
    s.dtype = dtype_of(input_type(args, a.query));
    if (s.dtype != "bf16" && s.dtype != "fp16") return std::nullopt;
    return s;
  }
  // Anything else: a memory-bound kernel of its inputs' bytes and an output of the largest.
  double bytes = 0, largest = 0;
  for (size_t i = 0; i < d.size(); ++i) {
    const std::vector<int64_t> di = dims(d, i);
    if (di.empty()) continue;
    const double b = static_cast<double>(product(di)) * element_bytes(input_type(args, i));
    bytes += b;
    largest = std::max(largest, b);
  }
  if (bytes + largest < 1) return std::nullopt;
  s.kind = KernelKind::kMemory;
  s.dtype = "bf16";
  s.bytes = static_cast<int64_t>(std::min(bytes + largest, 1e12));
  return s;
}

int64_t as_int(const json& v) {
  if (v.is_number_integer()) return v.get<int64_t>();
  if (v.is_number()) {
    // Ids past 2^53 are not exact in a double, and past 2^63 not an int64_t: no id.
    const double d = v.get<double>();
    return std::isfinite(d) && std::fabs(d) < 9e15 ? static_cast<int64_t>(d) : -1;
  }
  if (v.is_string()) {
    try {
      return std::stoll(v.get<std::string>());
    } catch (...) {
      return -1;
    }
  }
  return -1;
}

double number(const json& e, const char* key) {
  const auto it = e.find(key);
  return it != e.end() && it->is_number() ? it->get<double>() : -1;
}

}  // namespace

StatusOr<KinetoConversion> kineto_to_kernel_table(std::string_view text, const std::string& file) {
  json root = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded()) return invalid_argument(file + ": expected a JSON Chrome trace");
  const json* events = nullptr;
  if (root.is_object()) {
    const auto it = root.find("traceEvents");
    if (it != root.end() && it->is_array()) events = &*it;
  }
  if (events == nullptr) {
    return invalid_argument(file +
                            ": traceEvents: expected the PyTorch profiler's list of trace events");
  }
  KinetoConversion out;
  out.table.file = file;
  if (const auto dp = root.find("deviceProperties");
      dp != root.end() && dp->is_array() && !dp->empty() && (*dp)[0].is_object()) {
    const auto name = (*dp)[0].find("name");
    if (name != (*dp)[0].end() && name->is_string()) {
      std::string g = name->get<std::string>();
      std::string clean;
      for (char c : g.substr(0, 200)) {
        if (static_cast<unsigned char>(c) >= 0x20 && c != ',' && c != '"' && c != 0x7f)
          clean.push_back(c);
      }
      out.table.gpu = clean;
    }
  }
  std::vector<CpuOp> ops;
  std::map<int64_t, size_t> by_external;                   // External id -> op
  std::map<int64_t, std::pair<double, int64_t>> launches;  // correlation -> (ts, tid)
  std::vector<const json*> kernels;
  for (size_t index = 0; index < events->size(); ++index) {
    const json& e = (*events)[index];
    if (!e.is_object()) continue;
    const auto ph = e.find("ph"), cat = e.find("cat");
    if (ph == e.end() || cat == e.end() || !cat->is_string() || *ph != "X") continue;
    const std::string c = cat->get<std::string>();
    const auto args = e.find("args");
    const json* a = args != e.end() && args->is_object() ? &*args : nullptr;
    if (c == "cpu_op") {
      CpuOp op;
      const auto name = e.find("name");
      if (name == e.end() || !name->is_string()) continue;
      op.name = name->get<std::string>();
      op.ts = number(e, "ts");
      op.end = op.ts + std::max(0.0, number(e, "dur"));
      op.tid = e.contains("tid") ? as_int(e["tid"]) : 0;
      op.pid = e.contains("pid") ? as_int(e["pid"]) : 0;
      op.args = a;
      if (a != nullptr && a->contains("External id")) {
        by_external[as_int((*a)["External id"])] = ops.size();
      }
      ops.push_back(std::move(op));
    } else if (c == "cuda_runtime" || c == "cuda_driver") {
      if (a != nullptr && a->contains("correlation")) {
        launches[as_int((*a)["correlation"])] = {number(e, "ts"),
                                                 e.contains("tid") ? as_int(e["tid"]) : 0};
      }
    } else if (c == "kernel") {
      // The table takes a kernel's mean time; one kernel past the table's bound is a broken
      // trace, not a measurement to average away.
      if (const double dur = number(e, "dur"); !(dur <= kMaxKernelTimeUs)) {
        char bound[32];
        std::snprintf(bound, sizeof bound, "%g", kMaxKernelTimeUs);
        return invalid_argument(file + ": traceEvents[" + std::to_string(index) +
                                "].dur: expected a kernel's duration in microseconds, at most " +
                                bound + " (an hour)");
      }
      kernels.push_back(&e);
    }
  }
  if (kernels.empty()) {
    return invalid_argument(file +
                            ": expected GPU kernel events (category kernel): profile with "
                            "ProfilerActivity.CUDA");
  }
  // Innermost op holding the launch at `ts` on thread `tid`: the latest-starting one that does.
  auto innermost = [&](double ts, int64_t tid) -> std::optional<size_t> {
    std::optional<size_t> best;
    for (size_t i = 0; i < ops.size(); ++i) {
      const CpuOp& op = ops[i];
      if (op.tid != tid || op.ts > ts || op.end < ts) continue;
      if (!best || op.ts >= ops[*best].ts) best = i;
    }
    return best;
  };
  // Kernel time per op instance, in the order instances first launched.
  std::map<size_t, double> instance_time;
  for (const json* k : kernels) {
    const double dur = std::max(0.0, number(*k, "dur"));
    ++out.kernels;
    out.kernel_time_us += dur;
    const auto args = k->find("args");
    std::optional<size_t> op;
    if (args != k->end() && args->is_object()) {
      if (args->contains("External id")) {
        const auto it = by_external.find(as_int((*args)["External id"]));
        if (it != by_external.end()) op = it->second;
      }
      if (!op && args->contains("correlation")) {
        const auto l = launches.find(as_int((*args)["correlation"]));
        if (l != launches.end()) op = innermost(l->second.first, l->second.second);
      }
    }
    if (!op) {
      ++out.unmatched_kernels;
      continue;
    }
    instance_time[*op] += dur;
  }
  struct Acc {
    KernelShape shape;
    double total = 0;
    int64_t count = 0;
  };
  std::vector<Acc> rows;
  for (const auto& [index, time] : instance_time) {
    const std::optional<KernelShape> s = shape_of(ops[index]);
    if (!s) {
      ++out.shapeless_ops;
      continue;
    }
    auto it =
        std::find_if(rows.begin(), rows.end(), [&](const Acc& a) { return a.shape.same_as(*s); });
    if (it == rows.end()) {
      rows.push_back({*s, 0, 0});
      it = rows.end() - 1;
    }
    it->total += time;
    ++it->count;
  }
  for (const Acc& a : rows) {
    if (!(a.total > 0)) continue;  // kernels of no duration carry no measurement
    KernelMeasurement km;
    km.shape = a.shape;
    km.time_us = std::min(kMaxKernelTimeUs, a.total / static_cast<double>(a.count));
    km.reps = a.count;
    out.table_time_us += a.total;
    out.table.rows.push_back(km);
  }
  return out;
}

}  // namespace preflight
