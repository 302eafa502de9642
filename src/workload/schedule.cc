#include "workload/schedule.h"

#include <algorithm>

#include "base/check.h"

namespace preflight {
namespace {

PipelineTask interleaved_task(int k, bool backward, int p, int v) {
  const int group = k / (p * v);
  const int in_group = k % (p * v);
  int chunk = in_group / p;
  if (backward) chunk = v - 1 - chunk;
  return PipelineTask{backward, group * p + in_group % p, chunk};
}

}  // namespace

std::vector<PipelineTask> pipeline_order(Schedule schedule, int stage, int p, int m, int v) {
  PREFLIGHT_CHECK(stage >= 0 && stage < p && m >= 1 && v >= 1);
  std::vector<PipelineTask> order;
  order.reserve(2 * static_cast<size_t>(m) * v);
  if (schedule == Schedule::kGpipe) {
    for (int j = 0; j < m; ++j) order.push_back({false, j, 0});
    for (int j = 0; j < m; ++j) order.push_back({true, j, 0});
    return order;
  }
  if (schedule == Schedule::kOneFOneB || v == 1) {
    const int warmup = std::min(p - stage - 1, m);
    int next_f = 0;
    int next_b = 0;
    for (; next_f < warmup; ++next_f) order.push_back({false, next_f, 0});
    while (next_f < m) {
      order.push_back({false, next_f++, 0});
      order.push_back({true, next_b++, 0});
    }
    while (next_b < m) order.push_back({true, next_b++, 0});
    return order;
  }
  PREFLIGHT_CHECK(m % p == 0);
  const int total = m * v;
  int warmup = (p - stage - 1) * 2 + (v - 1) * p;
  if (m == p) warmup = total;  // Megatron: everything is warm-up when m == p
  warmup = std::min(warmup, total);
  const int steady = total - warmup;
  for (int k = 0; k < warmup; ++k) order.push_back(interleaved_task(k, false, p, v));
  for (int i = 0; i < steady; ++i) {
    order.push_back(interleaved_task(warmup + i, false, p, v));
    order.push_back(interleaved_task(i, true, p, v));
  }
  for (int k = steady; k < total; ++k) order.push_back(interleaved_task(k, true, p, v));
  return order;
}

}  // namespace preflight
