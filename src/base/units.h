// Unit types. Simulated time is an integer count of picoseconds (exact, deterministic); bytes are
// int64; bandwidths and FLOP counts/rates are doubles at the edges. Only operators that make
// physical sense exist: Bytes / Bandwidth -> SimTime and Flops / FlopRate -> SimTime, each rounded
// in one place (to the nearest picosecond). Parsers accept strings with explicit units only
// ("400Gbps", "900GB/s", "80GiB", "1.5us", "989TFLOPS"); a bare number is an error.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace preflight {

// A point in or span of simulated time, in picoseconds.
class SimTime {
 public:
  constexpr SimTime() = default;
  static constexpr SimTime picoseconds(int64_t ps) { return SimTime(ps); }
  static SimTime seconds(double s);        // rounded to the nearest picosecond
  static SimTime microseconds(double us);  // rounded to the nearest picosecond
  static constexpr SimTime zero() { return SimTime(0); }
  static constexpr SimTime max() { return SimTime(INT64_MAX); }

  constexpr int64_t ps() const { return ps_; }
  double to_seconds() const { return static_cast<double>(ps_) * 1e-12; }
  double to_microseconds() const { return static_cast<double>(ps_) * 1e-6; }
  double to_milliseconds() const { return static_cast<double>(ps_) * 1e-9; }

  constexpr SimTime operator+(SimTime o) const { return SimTime(ps_ + o.ps_); }
  constexpr SimTime operator-(SimTime o) const { return SimTime(ps_ - o.ps_); }
  SimTime& operator+=(SimTime o) {
    ps_ += o.ps_;
    return *this;
  }
  SimTime& operator-=(SimTime o) {
    ps_ -= o.ps_;
    return *this;
  }
  constexpr SimTime operator*(int64_t k) const { return SimTime(ps_ * k); }
  SimTime scaled(double factor) const;  // rounded to the nearest picosecond
  constexpr auto operator<=>(const SimTime&) const = default;

 private:
  explicit constexpr SimTime(int64_t ps) : ps_(ps) {}
  int64_t ps_ = 0;
};

constexpr SimTime max(SimTime a, SimTime b) { return a < b ? b : a; }
constexpr SimTime min(SimTime a, SimTime b) { return a < b ? a : b; }

// A byte count.
class Bytes {
 public:
  constexpr Bytes() = default;
  explicit constexpr Bytes(int64_t n) : n_(n) {}
  static constexpr Bytes kib(int64_t k) { return Bytes(k << 10); }
  static constexpr Bytes mib(int64_t m) { return Bytes(m << 20); }
  static constexpr Bytes gib(int64_t g) { return Bytes(g << 30); }
  constexpr int64_t count() const { return n_; }
  double to_gib() const { return static_cast<double>(n_) / (1024.0 * 1024.0 * 1024.0); }
  constexpr Bytes operator+(Bytes o) const { return Bytes(n_ + o.n_); }
  constexpr Bytes operator-(Bytes o) const { return Bytes(n_ - o.n_); }
  constexpr Bytes operator*(int64_t k) const { return Bytes(n_ * k); }
  Bytes& operator+=(Bytes o) {
    n_ += o.n_;
    return *this;
  }
  constexpr auto operator<=>(const Bytes&) const = default;

 private:
  int64_t n_ = 0;
};

// A data rate in bytes per second.
class Bandwidth {
 public:
  constexpr Bandwidth() = default;
  static constexpr Bandwidth bytes_per_second(double bps) { return Bandwidth(bps); }
  static constexpr Bandwidth gigabytes_per_second(double gbs) { return Bandwidth(gbs * 1e9); }
  static constexpr Bandwidth gigabits_per_second(double gbps) { return Bandwidth(gbps * 1e9 / 8); }
  constexpr double bytes_per_second() const { return bps_; }
  constexpr double gigabytes_per_second() const { return bps_ * 1e-9; }
  constexpr Bandwidth operator*(double k) const { return Bandwidth(bps_ * k); }
  constexpr Bandwidth operator/(double k) const { return Bandwidth(bps_ / k); }
  constexpr auto operator<=>(const Bandwidth&) const = default;

 private:
  explicit constexpr Bandwidth(double bps) : bps_(bps) {}
  double bps_ = 0;
};

// A count of floating-point operations.
class Flops {
 public:
  constexpr Flops() = default;
  explicit constexpr Flops(double n) : n_(n) {}
  constexpr double count() const { return n_; }
  constexpr Flops operator+(Flops o) const { return Flops(n_ + o.n_); }
  Flops& operator+=(Flops o) {
    n_ += o.n_;
    return *this;
  }
  constexpr Flops operator*(double k) const { return Flops(n_ * k); }
  constexpr auto operator<=>(const Flops&) const = default;

 private:
  double n_ = 0;
};

// A rate of floating-point operations per second.
class FlopRate {
 public:
  constexpr FlopRate() = default;
  static constexpr FlopRate flops_per_second(double f) { return FlopRate(f); }
  static constexpr FlopRate teraflops(double tf) { return FlopRate(tf * 1e12); }
  constexpr double flops_per_second() const { return f_; }
  constexpr double teraflops() const { return f_ * 1e-12; }
  constexpr FlopRate operator*(double k) const { return FlopRate(f_ * k); }
  constexpr auto operator<=>(const FlopRate&) const = default;

 private:
  explicit constexpr FlopRate(double f) : f_(f) {}
  double f_ = 0;
};

// Time to move `b` at rate `bw`. REQUIRES: bw > 0.
SimTime operator/(Bytes b, Bandwidth bw);
// Time to execute `f` at rate `r`. REQUIRES: r > 0.
SimTime operator/(Flops f, FlopRate r);

// Parsers. Each accepts a number immediately or space-followed by a unit and rejects a bare number,
// an unknown unit, a negative value, or trailing junk, with a message saying what was expected.
StatusOr<SimTime> parse_time(std::string_view text);  // ps ns us µs ms s
StatusOr<Bytes> parse_bytes(std::string_view text);   // B KB MB GB TB KiB MiB GiB TiB
StatusOr<Bandwidth> parse_bandwidth(
    std::string_view text);  // bps Kbps Mbps Gbps Tbps, B/s .. TB/s, KiB/s .. GiB/s
StatusOr<Flops> parse_flops(std::string_view text);  // FLOP GFLOP TFLOP PFLOP
StatusOr<FlopRate> parse_flop_rate(
    std::string_view text);  // FLOPS GFLOPS TFLOPS PFLOPS (or FLOP/s)

// Human-readable renderings for summaries ("1.50 us", "80.00 GiB", "50.0 GB/s").
std::string format_time(SimTime t);
std::string format_bytes(Bytes b);
std::string format_bandwidth(Bandwidth bw);

}  // namespace preflight
