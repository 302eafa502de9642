#include "base/units.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "base/text.h"

namespace preflight {
namespace {

int64_t round_to_ps(double ps) {
  PREFLIGHT_CHECK(std::isfinite(ps));
  PREFLIGHT_CHECK(std::fabs(ps) < 9.2e18);
  return static_cast<int64_t>(std::llround(ps));
}

// Splits "400Gbps" / "1.5 us" into a non-negative number and a unit suffix.
struct Quantity {
  double value = 0;
  std::string unit;
};

StatusOr<Quantity> split_quantity(std::string_view text, const char* what, const char* units) {
  std::string s(text);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.pop_back();
  size_t start = 0;
  while (start < s.size() && (s[start] == ' ' || s[start] == '\t')) ++start;
  s = s.substr(start);
  const std::string expected = std::string("expected ") + what + " with a unit (" + units + ")";
  if (s.empty()) return invalid_argument("empty value; " + expected);
  const char* begin = s.c_str();
  char* end = nullptr;
  double v = std::strtod(begin, &end);
  if (end == begin) return invalid_argument("'" + s + "' is not a number; " + expected);
  if (!std::isfinite(v)) return invalid_argument("'" + s + "' is not finite; " + expected);
  if (v < 0) return invalid_argument("'" + s + "' is negative; " + expected);
  std::string unit(end);
  size_t u = 0;
  while (u < unit.size() && unit[u] == ' ') ++u;
  unit = unit.substr(u);
  if (unit.empty()) return invalid_argument("'" + s + "' has no unit; " + expected);
  return Quantity{v, unit};
}

// 'text', built by appending: GCC 12 warns (-Wrestrict, a false positive) on "'" + string.
std::string quoted(std::string_view text) {
  std::string q;
  q.reserve(text.size() + 2);
  q += '\'';
  q.append(text);
  q += '\'';
  return q;
}

template <typename T>
StatusOr<double> lookup_scale(const Quantity& q, std::string_view text,
                              const std::vector<std::pair<const char*, double>>& table,
                              const char* what, const char* units) {
  for (const auto& [name, scale] : table) {
    if (q.unit != name) continue;
    // A finite number can overflow once scaled ("1e300TB/s").
    if (!std::isfinite(q.value * scale)) {
      std::string m = quoted(text);
      m.append(" is too large; expected ").append(what);
      return invalid_argument(m.append(" with a unit (").append(units).append(")"));
    }
    return q.value * scale;
  }
  std::vector<std::string> names;
  for (const auto& entry : table) names.emplace_back(entry.first);
  std::string m = quoted(text);
  m.append(" has unknown unit '").append(q.unit).append("'");
  m.append(did_you_mean(q.unit, names)).append("; expected ").append(what);
  return invalid_argument(m.append(" with a unit (").append(units).append(")"));
}

}  // namespace

SimTime SimTime::seconds(double s) { return SimTime(round_to_ps(s * 1e12)); }
SimTime SimTime::microseconds(double us) { return SimTime(round_to_ps(us * 1e6)); }
SimTime SimTime::scaled(double factor) const {
  return SimTime(round_to_ps(static_cast<double>(ps_) * factor));
}

SimTime operator/(Bytes b, Bandwidth bw) {
  PREFLIGHT_CHECK(bw.bytes_per_second() > 0);
  return SimTime::seconds(static_cast<double>(b.count()) / bw.bytes_per_second());
}

SimTime operator/(Flops f, FlopRate r) {
  PREFLIGHT_CHECK(r.flops_per_second() > 0);
  return SimTime::seconds(f.count() / r.flops_per_second());
}

StatusOr<SimTime> parse_time(std::string_view text) {
  static const char* kUnits = "ps, ns, us, ms, s";
  PREFLIGHT_ASSIGN_OR_RETURN(Quantity q, split_quantity(text, "a duration", kUnits));
  PREFLIGHT_ASSIGN_OR_RETURN(double seconds, lookup_scale<SimTime>(q, text,
                                                                   {{"ps", 1e-12},
                                                                    {"ns", 1e-9},
                                                                    {"us", 1e-6},
                                                                    {"\xC2\xB5s", 1e-6},
                                                                    {"ms", 1e-3},
                                                                    {"s", 1.0}},
                                                                   "a duration", kUnits));
  if (seconds * 1e12 > 9e18) return invalid_argument(quoted(text) + " is too long");
  return SimTime::seconds(seconds);
}

StatusOr<Bytes> parse_bytes(std::string_view text) {
  static const char* kUnits = "B, KB, MB, GB, TB, KiB, MiB, GiB, TiB";
  PREFLIGHT_ASSIGN_OR_RETURN(Quantity q, split_quantity(text, "a size", kUnits));
  PREFLIGHT_ASSIGN_OR_RETURN(double bytes, lookup_scale<Bytes>(q, text,
                                                               {{"B", 1.0},
                                                                {"KB", 1e3},
                                                                {"MB", 1e6},
                                                                {"GB", 1e9},
                                                                {"TB", 1e12},
                                                                {"KiB", 1024.0},
                                                                {"MiB", 1048576.0},
                                                                {"GiB", 1073741824.0},
                                                                {"TiB", 1099511627776.0}},
                                                               "a size", kUnits));
  if (bytes > 9e18) return invalid_argument(quoted(text) + " is too large");
  return Bytes(static_cast<int64_t>(std::llround(bytes)));
}

StatusOr<Bandwidth> parse_bandwidth(std::string_view text) {
  static const char* kUnits = "bps, Kbps, Mbps, Gbps, Tbps, B/s, KB/s, MB/s, GB/s, TB/s, GiB/s";
  PREFLIGHT_ASSIGN_OR_RETURN(Quantity q, split_quantity(text, "a bandwidth", kUnits));
  PREFLIGHT_ASSIGN_OR_RETURN(double bps, lookup_scale<Bandwidth>(q, text,
                                                                 {{"bps", 1.0 / 8},
                                                                  {"Kbps", 1e3 / 8},
                                                                  {"Mbps", 1e6 / 8},
                                                                  {"Gbps", 1e9 / 8},
                                                                  {"Tbps", 1e12 / 8},
                                                                  {"Gb/s", 1e9 / 8},
                                                                  {"B/s", 1.0},
                                                                  {"KB/s", 1e3},
                                                                  {"MB/s", 1e6},
                                                                  {"GB/s", 1e9},
                                                                  {"TB/s", 1e12},
                                                                  {"KiB/s", 1024.0},
                                                                  {"MiB/s", 1048576.0},
                                                                  {"GiB/s", 1073741824.0}},
                                                                 "a bandwidth", kUnits));
  return Bandwidth::bytes_per_second(bps);
}

StatusOr<Flops> parse_flops(std::string_view text) {
  static const char* kUnits = "FLOP, GFLOP, TFLOP, PFLOP";
  PREFLIGHT_ASSIGN_OR_RETURN(Quantity q, split_quantity(text, "a FLOP count", kUnits));
  PREFLIGHT_ASSIGN_OR_RETURN(
      double f, lookup_scale<Flops>(
                    q, text, {{"FLOP", 1.0}, {"GFLOP", 1e9}, {"TFLOP", 1e12}, {"PFLOP", 1e15}},
                    "a FLOP count", kUnits));
  return Flops(f);
}

StatusOr<FlopRate> parse_flop_rate(std::string_view text) {
  static const char* kUnits = "FLOPS, GFLOPS, TFLOPS, PFLOPS";
  PREFLIGHT_ASSIGN_OR_RETURN(Quantity q, split_quantity(text, "a FLOP rate", kUnits));
  PREFLIGHT_ASSIGN_OR_RETURN(double f, lookup_scale<FlopRate>(q, text,
                                                              {{"FLOPS", 1.0},
                                                               {"GFLOPS", 1e9},
                                                               {"TFLOPS", 1e12},
                                                               {"PFLOPS", 1e15},
                                                               {"FLOP/s", 1.0},
                                                               {"GFLOP/s", 1e9},
                                                               {"TFLOP/s", 1e12},
                                                               {"PFLOP/s", 1e15}},
                                                              "a FLOP rate", kUnits));
  return FlopRate::flops_per_second(f);
}

std::string format_time(SimTime t) {
  char buf[64];
  const double ps = static_cast<double>(t.ps());
  if (ps >= 1e12) {
    std::snprintf(buf, sizeof buf, "%.3f s", ps * 1e-12);
  } else if (ps >= 1e9) {
    std::snprintf(buf, sizeof buf, "%.2f ms", ps * 1e-9);
  } else {
    std::snprintf(buf, sizeof buf, "%.2f us", ps * 1e-6);
  }
  return buf;
}

std::string format_bytes(Bytes b) {
  char buf[64];
  const double n = static_cast<double>(b.count());
  if (n >= 1073741824.0) {
    std::snprintf(buf, sizeof buf, "%.2f GiB", n / 1073741824.0);
  } else if (n >= 1048576.0) {
    std::snprintf(buf, sizeof buf, "%.2f MiB", n / 1048576.0);
  } else if (n >= 1024.0) {
    std::snprintf(buf, sizeof buf, "%.2f KiB", n / 1024.0);
  } else {
    std::snprintf(buf, sizeof buf, "%lld B", static_cast<long long>(b.count()));
  }
  return buf;
}

std::string format_bandwidth(Bandwidth bw) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f GB/s", bw.gigabytes_per_second());
  return buf;
}

}  // namespace preflight
