// Reading a shapes list. The checks follow src/config/kernel_table.cc (the format's reader in the
// simulator) so that a list `preflight kernels --shapes` writes is accepted here and a table
// written here is accepted there; every error names file:line, the column and what was expected.
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string_view>

#include "profiler.h"

namespace preflight::kp {

const char* const kColumns[19] = {"kind",    "name",   "dtype",        "m",        "n",
                                  "k",       "batch",  "heads",        "kv_heads", "head_dim",
                                  "seq_q",   "seq_kv", "causal",       "pass",     "bytes",
                                  "time_us", "reps",   "sm_clock_mhz", "power_w"};

namespace {

// Dimensions and byte counts stay below 2^40, as in the simulator's reader.
constexpr int64_t kMaxValue = int64_t{1} << 40;

const char* const kDtypes[] = {"bf16", "fp16", "fp8", "fp8_blockwise", "mxfp8", "nvfp4"};

Fatal bad_input(const std::string& message) { return Fatal{kExitBadInput, message}; }

// Printable form of a cell for a one-line message: control and non-ASCII bytes as \xNN, cut at
// `limit` bytes.
std::string quoted(std::string_view s, size_t limit) {
  std::string out;
  for (unsigned char c : s.substr(0, limit)) {
    if (c < 0x20 || c >= 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out.push_back(static_cast<char>(c));
    }
  }
  if (s.size() > limit) out += "...";
  return out;
}

bool valid_utf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    int extra = 0;
    uint32_t cp = 0;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xe0) == 0xc0) {
      extra = 1;
      cp = c & 0x1f;
    } else if ((c & 0xf0) == 0xe0) {
      extra = 2;
      cp = c & 0x0f;
    } else if ((c & 0xf8) == 0xf0) {
      extra = 3;
      cp = c & 0x07;
    } else {
      return false;
    }
    if (i + extra >= s.size()) return false;  // truncated sequence
    for (int j = 1; j <= extra; ++j) {
      const unsigned char cc = static_cast<unsigned char>(s[i + j]);
      if ((cc & 0xc0) != 0x80) return false;
      cp = (cp << 6) | (cc & 0x3f);
    }
    // Overlong forms, surrogates and code points past U+10FFFF are not UTF-8.
    static const uint32_t kMin[] = {0, 0x80, 0x800, 0x10000};
    if (cp < kMin[extra] || (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff) return false;
    i += extra + 1;
  }
  return true;
}

bool valid_name(const std::string& s) {
  if (s.size() > 200) return false;
  for (unsigned char c : s) {
    if (c < 0x20 || c == 0x7f || c == '"' || c == ',') return false;
  }
  return valid_utf8(s);
}

std::string trim(std::string_view s) {
  size_t a = 0, b = s.size();
  while (a < b && (s[a] == ' ' || s[a] == '\t')) ++a;
  while (b > a && (s[b - 1] == ' ' || s[b - 1] == '\t')) --b;
  return std::string(s.substr(a, b - a));
}

std::vector<std::string> split(std::string_view line) {
  std::vector<std::string> cells;
  size_t start = 0;
  while (true) {
    const size_t comma = line.find(',', start);
    cells.push_back(trim(
        line.substr(start, comma == std::string_view::npos ? line.size() - start : comma - start)));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return cells;
}

std::string header_text() {
  std::string out;
  for (int i = 0; i < kNumColumns; ++i) out += (i ? "," : "") + std::string(kColumns[i]);
  return out;
}

// Checks one row's cells; the first failure ends the run.
class RowChecker {
 public:
  RowChecker(const std::string& file, int line, const std::vector<std::string>& cells)
      : file_(file), line_(line), cells_(cells) {}

  [[noreturn]] void fail(int column, const std::string& expected) const {
    throw bad_input(file_ + ":" + std::to_string(line_) + ": " + kColumns[column] + ": '" +
                    quoted(cells_[column], 80) + "': expected " + expected);
  }

  // A whole number in [min, 2^40]; an empty cell reads as 0 where that is allowed.
  int64_t integer(int column, int64_t min, bool allow_empty) const {
    const std::string& c = cells_[column];
    if (c.empty()) {
      if (allow_empty && min <= 0) return 0;
      fail(column, "a whole number of at least " + std::to_string(min));
    }
    char* end = nullptr;
    errno = 0;
    const long long v = std::strtoll(c.c_str(), &end, 10);
    if (errno != 0 || end == c.c_str() || *end != '\0' || v < min || v > kMaxValue) {
      fail(column, "a whole number from " + std::to_string(min) + " to 2^40");
    }
    return v;
  }

  // An optional number in [min, max] (the measurement columns of a table given as input).
  void real(int column, double min, double max) const {
    const std::string& c = cells_[column];
    if (c.empty()) return;
    char* end = nullptr;
    const double v = std::strtod(c.c_str(), &end);
    if (end == c.c_str() || *end != '\0' || !std::isfinite(v) || v < min || v > max) {
      char buf[96];
      std::snprintf(buf, sizeof buf, "a number from %g to %g", min, max);
      fail(column, buf);
    }
  }

 private:
  const std::string& file_;
  int line_;
  const std::vector<std::string>& cells_;
};

Row parse_row(const std::string& file, int line, std::vector<std::string> cells) {
  const RowChecker c(file, line, cells);
  Row r;
  r.file = file;
  r.line = line;
  if (cells[0] == "gemm") {
    r.kind = Kind::kGemm;
  } else if (cells[0] == "attention") {
    r.kind = Kind::kAttention;
  } else if (cells[0] == "memory") {
    r.kind = Kind::kMemory;
  } else {
    c.fail(0, "gemm, attention or memory");
  }
  const bool gemm = r.kind == Kind::kGemm;
  const bool attention = r.kind == Kind::kAttention;
  const bool memory = r.kind == Kind::kMemory;
  r.name = cells[1];
  if (!valid_name(r.name)) c.fail(1, "a name of at most 200 characters without commas or quotes");
  if (memory && r.name.empty()) c.fail(1, "the kernel's name");
  r.dtype = cells[2];
  bool known = false;
  for (const char* d : kDtypes) known = known || r.dtype == d;
  if (!known) c.fail(2, "bf16, fp16, fp8, fp8_blockwise, mxfp8 or nvfp4");
  if (!gemm && r.dtype != "bf16" && r.dtype != "fp16") {
    c.fail(2, "bf16 or fp16 for an attention or memory kernel");
  }
  r.m = c.integer(3, gemm ? 1 : 0, !gemm);
  r.n = c.integer(4, gemm ? 1 : 0, !gemm);
  r.k = c.integer(5, gemm ? 1 : 0, !gemm);
  r.batch = c.integer(6, gemm || attention ? 1 : 0, memory);
  r.heads = c.integer(7, attention ? 1 : 0, !attention);
  r.kv_heads = c.integer(8, attention ? 1 : 0, !attention);
  r.head_dim = c.integer(9, attention ? 1 : 0, !attention);
  r.seq_q = c.integer(10, attention ? 1 : 0, !attention);
  r.seq_kv = c.integer(11, attention ? 1 : 0, !attention);
  if (cells[12] == "1") {
    r.causal = true;
  } else if (cells[12] != "0" && !(cells[12].empty() && !attention)) {
    c.fail(12, "0 or 1");
  }
  if (cells[13] == "bwd") {
    r.backward = true;
  } else if (cells[13] != "fwd" && !(cells[13].empty() && !attention)) {
    c.fail(13, "fwd or bwd");
  }
  if (attention && r.heads % r.kv_heads != 0) {
    c.fail(8, "a divisor of heads (" + std::to_string(r.heads) + ")");
  }
  r.bytes = c.integer(14, memory ? 1 : 0, !memory);
  // A shapes list leaves the measurement columns empty; a table given as input may fill them
  // (they are measured again and replaced).
  c.real(15, 0, 3.6e9);
  c.integer(16, 0, true);
  c.real(17, 0, 1e5);
  c.real(18, 0, 1e5);
  r.cells = std::move(cells);
  return r;
}

// The simulator's notion of one kernel at one shape (KernelShape::same_as).
bool same_shape(const Row& a, const Row& b) {
  return a.kind == b.kind && (a.kind != Kind::kMemory || a.name == b.name) && a.dtype == b.dtype &&
         a.m == b.m && a.n == b.n && a.k == b.k && a.batch == b.batch && a.heads == b.heads &&
         a.kv_heads == b.kv_heads && a.head_dim == b.head_dim && a.seq_q == b.seq_q &&
         a.seq_kv == b.seq_kv && a.causal == b.causal && a.backward == b.backward &&
         a.bytes == b.bytes;
}

}  // namespace

std::string Row::describe() const {
  std::string s = file + ":" + std::to_string(line) + ": ";
  switch (kind) {
    case Kind::kGemm:
      s += "gemm '" + name + "' " + dtype + " " + std::to_string(m) + "x" + std::to_string(n) +
           "x" + std::to_string(k) + (batch > 1 ? " batch " + std::to_string(batch) : "");
      break;
    case Kind::kAttention:
      s += "attention '" + name + "' " + dtype + " " + (backward ? "bwd" : "fwd") + " batch " +
           std::to_string(batch) + " heads " + std::to_string(heads) + "/" +
           std::to_string(kv_heads) + " d " + std::to_string(head_dim) + " seq " +
           std::to_string(seq_q) + "x" + std::to_string(seq_kv) + (causal ? " causal" : "");
      break;
    case Kind::kMemory:
      s += "memory '" + name + "' " + dtype + " " + std::to_string(bytes) + " bytes";
      break;
  }
  return s;
}

std::vector<Row> read_shapes(const std::string& path) {
  std::string text;
  const std::string file = path == "-" ? std::string("<stdin>") : path;
  {
    std::ostringstream ss;
    if (path == "-") {
      ss << std::cin.rdbuf();
    } else {
      std::error_code ec;
      if (std::filesystem::is_directory(path, ec)) {
        throw bad_input(path + ": is a folder; expected a shapes list");
      }
      std::ifstream in(path, std::ios::binary);
      if (!in) throw bad_input(path + ": cannot read the shapes list");
      ss << in.rdbuf();
      if (in.bad()) throw bad_input(path + ": cannot read the shapes list");
    }
    text = ss.str();
  }
  std::vector<Row> rows;
  bool header = false;
  int line = 0;
  size_t pos = 0;
  while (pos <= text.size()) {
    const size_t nl = text.find('\n', pos);
    std::string_view raw = std::string_view(text).substr(
        pos, nl == std::string::npos ? std::string_view::npos : nl - pos);
    pos = nl == std::string::npos ? text.size() + 1 : nl + 1;
    ++line;
    if (!raw.empty() && raw.back() == '\r') raw.remove_suffix(1);
    if (raw.find_first_not_of(" \t") == std::string_view::npos) continue;
    if (raw.front() == '#') continue;  // comments, "# gpu:" among them (this GPU is measured)
    std::vector<std::string> cells = split(raw);
    if (!header) {
      bool same = cells.size() == static_cast<size_t>(kNumColumns);
      for (int i = 0; same && i < kNumColumns; ++i) same = cells[i] == kColumns[i];
      if (!same) {
        throw bad_input(file + ":" + std::to_string(line) + ": '" + quoted(raw, 120) +
                        "': expected the header " + header_text());
      }
      header = true;
      continue;
    }
    if (cells.size() != static_cast<size_t>(kNumColumns)) {
      throw bad_input(file + ":" + std::to_string(line) + ": expected " +
                      std::to_string(kNumColumns) + " comma-separated columns, got " +
                      std::to_string(cells.size()));
    }
    Row r = parse_row(file, line, std::move(cells));
    for (const Row& other : rows) {
      if (same_shape(other, r)) {
        throw bad_input(file + ":" + std::to_string(line) +
                        ": the same kernel and shape is listed twice (first on line " +
                        std::to_string(other.line) + ")");
      }
    }
    rows.push_back(std::move(r));
  }
  if (!header) throw bad_input(file + ": expected the header " + header_text());
  return rows;
}

}  // namespace preflight::kp
