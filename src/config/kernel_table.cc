#include "config/kernel_table.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "base/text.h"

namespace preflight {

const char* const kKernelTableColumns[19] = {
    "kind",     "name",         "dtype",  "m",      "n",      "k",    "batch", "heads",
    "kv_heads", "head_dim",     "seq_q",  "seq_kv", "causal", "pass", "bytes", "time_us",
    "reps",     "sm_clock_mhz", "power_w"};

namespace {

constexpr int kColumns = 19;

const char* const kDtypes[] = {"bf16", "fp16", "fp8", "fp8_blockwise", "mxfp8", "nvfp4"};

std::vector<std::string> split(std::string_view line) {
  std::vector<std::string> cells;
  size_t start = 0;
  while (true) {
    const size_t comma = line.find(',', start);
    const std::string_view cell = line.substr(
        start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    std::string c(cell);
    while (!c.empty() && (c.back() == ' ' || c.back() == '\t')) c.pop_back();
    size_t lead = 0;
    while (lead < c.size() && (c[lead] == ' ' || c[lead] == '\t')) ++lead;
    cells.push_back(c.substr(lead));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return cells;
}

// One row's reader: each failure names file:line and the column.
class RowReader {
 public:
  RowReader(const std::string& file, int line, const std::vector<std::string>& cells)
      : file_(file), line_(line), cells_(cells) {}

  const std::string& cell(int i) const { return cells_[i]; }

  int64_t integer(int i, int64_t min, bool allow_empty = true) {
    const std::string& c = cells_[i];
    if (c.empty()) {
      if (allow_empty && min <= 0) return 0;
      fail(i, "a whole number of at least " + std::to_string(min));
      return 0;
    }
    char* end = nullptr;
    errno = 0;
    const long long v = std::strtoll(c.c_str(), &end, 10);
    if (errno != 0 || end == c.c_str() || *end != '\0' || v < min || v > kMaxKernelValue) {
      fail(i, "a whole number from " + std::to_string(min) + " to 2^40");
      return 0;
    }
    return v;
  }

  double real(int i, double min, double max) {
    const std::string& c = cells_[i];
    if (c.empty()) return 0;
    char* end = nullptr;
    const double v = std::strtod(c.c_str(), &end);
    if (end == c.c_str() || *end != '\0' || !std::isfinite(v) || v < min || v > max) {
      char buf[96];
      std::snprintf(buf, sizeof buf, "a number from %g to %g", min, max);
      fail(i, buf);
      return 0;
    }
    return v;
  }

  void fail(int i, const std::string& expected) {
    if (!status_.ok()) return;
    status_ =
        invalid_argument(file_ + ":" + std::to_string(line_) + ": " + kKernelTableColumns[i] +
                         ": '" + escape_for_message(cells_[i], 80) + "': expected " + expected);
  }

  const Status& status() const { return status_; }

 private:
  const std::string& file_;
  int line_;
  const std::vector<std::string>& cells_;
  Status status_;
};

bool valid_name(const std::string& s) {
  if (s.size() > 200) return false;
  for (unsigned char c : s) {
    if (c < 0x20 || c == 0x7f || c == '"' || c == ',') return false;
  }
  return invalid_utf8_at(s) == std::string_view::npos;
}

std::string join(const char* const* names, size_t n) {
  std::string out;
  for (size_t i = 0; i < n; ++i) out += (i ? ", " : "") + std::string(names[i]);
  return out;
}

StatusOr<KernelMeasurement> parse_row(const std::string& file, int line,
                                      const std::vector<std::string>& cells, bool require_times) {
  RowReader r(file, line, cells);
  KernelMeasurement km;
  KernelShape& s = km.shape;
  const std::string& kind = cells[0];
  if (kind == "gemm") {
    s.kind = KernelKind::kGemm;
  } else if (kind == "attention") {
    s.kind = KernelKind::kAttention;
  } else if (kind == "memory") {
    s.kind = KernelKind::kMemory;
  } else {
    r.fail(0, "gemm, attention or memory");
    return r.status();
  }
  s.name = cells[1];
  if (!valid_name(s.name)) r.fail(1, "a name of at most 200 characters without commas or quotes");
  if (s.kind == KernelKind::kMemory && s.name.empty()) r.fail(1, "the kernel's name");
  s.dtype = cells[2];
  bool known = false;
  for (const char* d : kDtypes) known |= s.dtype == d;
  if (!known) r.fail(2, join(kDtypes, std::size(kDtypes)));
  const bool gemm = s.kind == KernelKind::kGemm;
  const bool attention = s.kind == KernelKind::kAttention;
  if (!gemm && s.dtype != "bf16" && s.dtype != "fp16") {
    r.fail(2, "bf16 or fp16 for an attention or memory kernel");
  }
  s.m = r.integer(3, gemm ? 1 : 0, !gemm);
  s.n = r.integer(4, gemm ? 1 : 0, !gemm);
  s.k = r.integer(5, gemm ? 1 : 0, !gemm);
  s.batch = r.integer(6, gemm || attention ? 1 : 0, !(gemm || attention));
  s.heads = r.integer(7, attention ? 1 : 0, !attention);
  s.kv_heads = r.integer(8, attention ? 1 : 0, !attention);
  s.head_dim = r.integer(9, attention ? 1 : 0, !attention);
  s.seq_q = r.integer(10, attention ? 1 : 0, !attention);
  s.seq_kv = r.integer(11, attention ? 1 : 0, !attention);
  const std::string& causal = cells[12];
  if (causal == "1") {
    s.causal = true;
  } else if (causal != "0" && !(causal.empty() && !attention)) {
    r.fail(12, "0 or 1");
  }
  const std::string& pass = cells[13];
  if (pass == "bwd") {
    s.backward = true;
  } else if (pass != "fwd" && !(pass.empty() && !attention)) {
    r.fail(13, "fwd or bwd");
  }
  if (attention && r.status().ok() && s.heads % s.kv_heads != 0) {
    r.fail(8, "a divisor of heads (" + std::to_string(s.heads) + ")");
  }
  s.bytes = r.integer(14, s.kind == KernelKind::kMemory ? 1 : 0, s.kind != KernelKind::kMemory);
  km.time_us = r.real(15, 0, kMaxKernelTimeUs);
  if (require_times && r.status().ok() && !(km.time_us > 0)) {
    r.fail(15, "the kernel's time in microseconds (> 0)");
  }
  km.reps = r.integer(16, 0);
  km.sm_clock_mhz = r.real(17, 0, 1e5);
  km.power_w = r.real(18, 0, 1e5);
  if (!r.status().ok()) return r.status();
  return km;
}

std::string fmt_int(int64_t v) { return std::to_string(v); }

std::string fmt_real(double v) {
  if (v == 0) return "0";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

}  // namespace

const char* to_string(KernelKind k) {
  switch (k) {
    case KernelKind::kGemm:
      return "gemm";
    case KernelKind::kAttention:
      return "attention";
    case KernelKind::kMemory:
      return "memory";
  }
  return "?";
}

bool KernelShape::same_as(const KernelShape& o) const {
  return kind == o.kind && (kind != KernelKind::kMemory || name == o.name) && dtype == o.dtype &&
         m == o.m && n == o.n && k == o.k && batch == o.batch && heads == o.heads &&
         kv_heads == o.kv_heads && head_dim == o.head_dim && seq_q == o.seq_q &&
         seq_kv == o.seq_kv && causal == o.causal && backward == o.backward && bytes == o.bytes;
}

StatusOr<KernelTable> parse_kernel_table(std::string_view text, const std::string& file,
                                         bool require_times) {
  KernelTable t;
  t.file = file;
  bool header = false;
  int line = 0;
  size_t pos = 0;
  while (pos <= text.size()) {
    const size_t nl = text.find('\n', pos);
    std::string_view raw =
        text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    pos = nl == std::string_view::npos ? text.size() + 1 : nl + 1;
    ++line;
    if (!raw.empty() && raw.back() == '\r') raw.remove_suffix(1);
    if (raw.find_first_not_of(" \t") == std::string_view::npos) continue;
    if (raw.front() == '#') {
      constexpr std::string_view kGpu = "# gpu:";
      if (raw.substr(0, kGpu.size()) == kGpu) {
        std::string gpu(raw.substr(kGpu.size()));
        while (!gpu.empty() && gpu.front() == ' ') gpu.erase(gpu.begin());
        if (!valid_name(gpu)) {
          return invalid_argument(file + ":" + std::to_string(line) +
                                  ": gpu: expected a name of at most 200 printable characters");
        }
        t.gpu = gpu;
      }
      continue;
    }
    const std::vector<std::string> cells = split(raw);
    if (!header) {
      bool same = cells.size() == kColumns;
      for (int i = 0; same && i < kColumns; ++i) same = cells[i] == kKernelTableColumns[i];
      if (!same) {
        return invalid_argument(file + ":" + std::to_string(line) + ": '" +
                                escape_for_message(raw, 120) + "': expected the header " +
                                join(kKernelTableColumns, kColumns));
      }
      header = true;
      continue;
    }
    if (cells.size() != kColumns) {
      return invalid_argument(file + ":" + std::to_string(line) + ": expected " +
                              std::to_string(kColumns) + " comma-separated columns, got " +
                              std::to_string(cells.size()));
    }
    PREFLIGHT_ASSIGN_OR_RETURN(KernelMeasurement km, parse_row(file, line, cells, require_times));
    for (const KernelMeasurement& other : t.rows) {
      if (other.shape.same_as(km.shape)) {
        return invalid_argument(file + ":" + std::to_string(line) +
                                ": the same kernel and shape is listed twice");
      }
    }
    t.rows.push_back(std::move(km));
  }
  if (!header) {
    return invalid_argument(file + ": expected the header " + join(kKernelTableColumns, kColumns));
  }
  return t;
}

StatusOr<KernelTable> read_kernel_table(const std::string& path, bool require_times) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return not_found(path + ": cannot read the kernel table");
  std::ostringstream ss;
  ss << in.rdbuf();
  return parse_kernel_table(ss.str(), path, require_times);
}

std::string write_kernel_table(const KernelTable& t, bool with_times) {
  std::string out;
  out += "# Preflight kernel table (docs/kernel_tables.md)\n";
  if (!t.gpu.empty()) out += "# gpu: " + t.gpu + "\n";
  out +=
      "# kind: gemm | attention | memory; name: the kernel (memory kernels are looked up by it)\n"
      "# dtype: operand format (bf16 fp16 fp8 fp8_blockwise mxfp8 nvfp4)\n"
      "# m n k batch: gemm C[m x n] = A[m x k] B[k x n], batch products; attention: batch\n"
      "# heads kv_heads head_dim seq_q seq_kv causal pass: attention (pass fwd | bwd)\n"
      "# bytes: memory kernels' HBM bytes read + written\n"
      "# time_us: device time per kernel in microseconds (mean over reps)\n"
      "# reps sm_clock_mhz power_w: how it was measured (0: not known)\n";
  for (int i = 0; i < kColumns; ++i) {
    if (i > 0) out.push_back(',');
    out.append(kKernelTableColumns[i]);
  }
  out.push_back('\n');
  for (const KernelMeasurement& km : t.rows) {
    const KernelShape& s = km.shape;
    const bool attention = s.kind == KernelKind::kAttention;
    std::vector<std::string> cells = {to_string(s.kind),
                                      s.name,
                                      s.dtype,
                                      fmt_int(s.m),
                                      fmt_int(s.n),
                                      fmt_int(s.k),
                                      fmt_int(s.batch),
                                      fmt_int(s.heads),
                                      fmt_int(s.kv_heads),
                                      fmt_int(s.head_dim),
                                      fmt_int(s.seq_q),
                                      fmt_int(s.seq_kv),
                                      attention ? (s.causal ? "1" : "0") : "",
                                      attention ? (s.backward ? "bwd" : "fwd") : "",
                                      fmt_int(s.bytes)};
    if (with_times) {
      cells.push_back(fmt_real(km.time_us));
      cells.push_back(fmt_int(km.reps));
      cells.push_back(fmt_real(km.sm_clock_mhz));
      cells.push_back(fmt_real(km.power_w));
    } else {
      cells.resize(kColumns);
    }
    for (size_t i = 0; i < cells.size(); ++i) {
      if (i > 0) out.push_back(',');
      out.append(cells[i]);
    }
    out.push_back('\n');
  }
  return out;
}

}  // namespace preflight
