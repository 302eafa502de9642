// Fuzz target for the unit parsers (base/units.h): the same input goes to all five. Each must
// return a value or a Status, never crash; an accepted value must be finite and non-negative
// (the parsers reject negative and non-finite numbers, so scaling must not create one either).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "base/units.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace preflight;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto accepted = [](double v) { return std::isfinite(v) && v >= 0; };

  if (StatusOr<SimTime> t = parse_time(text); t.ok() && t->ps() < 0) __builtin_trap();
  if (StatusOr<Bytes> b = parse_bytes(text); b.ok() && b->count() < 0) __builtin_trap();
  if (StatusOr<Bandwidth> bw = parse_bandwidth(text);
      bw.ok() && !accepted(bw->bytes_per_second())) {
    __builtin_trap();
  }
  if (StatusOr<Flops> f = parse_flops(text); f.ok() && !accepted(f->count())) __builtin_trap();
  if (StatusOr<FlopRate> r = parse_flop_rate(text); r.ok() && !accepted(r->flops_per_second())) {
    __builtin_trap();
  }
  return 0;
}
