#include "search/cost.h"

#include <cmath>
#include <cstdlib>

namespace preflight {

IterationCost iteration_cost(int gpus, double gpu_hour_price, double iteration_time_s,
                             int64_t tokens_per_iteration) {
  PREFLIGHT_CHECK(gpus > 0 && iteration_time_s > 0 && tokens_per_iteration > 0 &&
                  gpu_hour_price >= 0);
  IterationCost c;
  c.gpu_hours = gpus * iteration_time_s / 3600.0;
  c.usd = c.gpu_hours * gpu_hour_price;
  c.usd_per_million_tokens = c.usd / (static_cast<double>(tokens_per_iteration) / 1e6);
  return c;
}

TrainingCost training_cost(int gpus, double gpu_hour_price, double iteration_time_s,
                           int64_t tokens_per_iteration, double token_budget) {
  PREFLIGHT_CHECK(token_budget > 0);
  const IterationCost per =
      iteration_cost(gpus, gpu_hour_price, iteration_time_s, tokens_per_iteration);
  TrainingCost t;
  t.tokens = token_budget;
  t.iterations = static_cast<int64_t>(std::ceil(token_budget / tokens_per_iteration));
  t.time_s = t.iterations * iteration_time_s;
  t.gpu_hours = t.iterations * per.gpu_hours;
  t.usd = t.iterations * per.usd;
  return t;
}

StatusOr<double> parse_token_count(const std::string& text) {
  auto bad = [&]() {
    return invalid_argument("--tokens " + text +
                            ": expected a positive token count such as 1T, 300B, 2.5e12 "
                            "(suffixes K, M, B/G, T)");
  };
  if (text.empty()) return bad();
  double scale = 1;
  std::string number = text;
  switch (text.back()) {
    case 'K':
    case 'k':
      scale = 1e3;
      break;
    case 'M':
      scale = 1e6;
      break;
    case 'B':
    case 'G':
      scale = 1e9;
      break;
    case 'T':
      scale = 1e12;
      break;
    default:
      break;
  }
  if (scale != 1) number.pop_back();
  char* end = nullptr;
  const double v = number.empty() ? 0 : std::strtod(number.c_str(), &end);
  if (number.empty() || *end != '\0' || !std::isfinite(v) || !(v > 0) || v * scale > 1e18) {
    return bad();
  }
  return v * scale;
}

}  // namespace preflight
