// What a training strategy costs: GPU-hours and dollars per iteration and per million tokens,
// and the time, GPU-hours and dollars to train a token budget. Pure arithmetic on a simulated
// iteration time and the cluster's price (cluster.gpu_hour_price, USD per GPU-hour).
//   GPU-hours per iteration = GPUs · t_iter / 3600
//   $ per iteration         = GPU-hours per iteration · price
//   $ per million tokens    = $ per iteration / (tokens per iteration / 10^6)
//   iterations for budget T = ceil(T / tokens per iteration); time = iterations · t_iter
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"

namespace preflight {

struct IterationCost {
  double gpu_hours = 0;               // per iteration
  double usd = 0;                     // per iteration; 0 without a price
  double usd_per_million_tokens = 0;  // 0 without a price
};

// REQUIRES: gpus > 0, iteration_time_s > 0, tokens_per_iteration > 0, gpu_hour_price >= 0.
IterationCost iteration_cost(int gpus, double gpu_hour_price, double iteration_time_s,
                             int64_t tokens_per_iteration);

// Training on a token budget at a fixed iteration time (no warm-up, checkpoints or failures).
struct TrainingCost {
  double tokens = 0;       // the budget
  int64_t iterations = 0;  // whole iterations that cover it
  double time_s = 0;       // wall-clock
  double gpu_hours = 0;
  double usd = 0;  // 0 without a price
};

// REQUIRES: as iteration_cost; token_budget > 0.
TrainingCost training_cost(int gpus, double gpu_hour_price, double iteration_time_s,
                           int64_t tokens_per_iteration, double token_budget);

// A token count: a number with an optional suffix K, M, B (or G) or T (powers of 1000), e.g.
// "1T", "300B", "2.5e12". Errors name the text and what was expected.
StatusOr<double> parse_token_count(const std::string& text);

}  // namespace preflight
