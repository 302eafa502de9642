#include "workload/schedule.h"

#include <algorithm>
#include <deque>

#include "base/check.h"

namespace preflight {
namespace {

PipelineTask interleaved_task(int k, bool backward, int p, int v) {
  const int group = k / (p * v);
  const int in_group = k % (p * v);
  int chunk = in_group / p;
  if (backward) chunk = v - 1 - chunk;
  return make_task(backward ? Pass::kBackward : Pass::kForward, group * p + in_group % p, chunk);
}

// 1F1B with split backwards: `warmup` forwards, then F, B (and a W whenever more than `pending`
// W passes wait) until the forwards run out, then B (and W) until the backwards run out, then
// the pending W passes. ZB-H1 and ZB-H2 differ only in `warmup` and `pending`.
std::vector<PipelineTask> zero_bubble_order(int m, int warmup, int pending) {
  std::vector<PipelineTask> order;
  order.reserve(3 * static_cast<size_t>(m));
  int f = 0, b = 0, w = 0;
  auto backward = [&] {
    order.push_back(make_task(Pass::kInputGrad, b++, 0));
    if (b - w > pending) order.push_back(make_task(Pass::kWeightGrad, w++, 0));
  };
  for (; f < std::min(warmup, m); ++f) order.push_back(make_task(Pass::kForward, f, 0));
  while (f < m) {
    order.push_back(make_task(Pass::kForward, f++, 0));
    backward();
  }
  while (b < m) backward();
  while (w < m) order.push_back(make_task(Pass::kWeightGrad, w++, 0));
  return order;
}

// DualPipe's eight phases as the reference implementation runs them on rank `rank`, in its
// terms: "phase 0" is the direction that starts on this rank's half of the pipeline (the
// forward direction on ranks < p/2), "phase 1" the other. W passes of split backwards queue
// and run first-in first-out.
class DualPipeOrder {
 public:
  DualPipeOrder(int rank, int p, int m)
      : p_(p),
        half_m_(m / 2),
        flip_(rank >= p / 2),
        half_rank_(std::min(rank, p - 1 - rank)),
        middle_(rank == p / 2 - 1 || rank == p / 2) {}

  std::vector<PipelineTask> build() {
    const int half_p = p_ / 2;
    const int hr = half_rank_;
    // 1: forwards of phase 0.
    for (int i = 0; i < (half_p - hr - 1) * 2; ++i) forward(0);
    // 2: alternate forwards of both phases.
    for (int i = 0; i < hr + 1; ++i) {
      forward(0);
      forward(1);
    }
    // 3: B and W of phase 1 (split), then a forward of phase 1.
    for (int i = 0; i < half_p - hr - 1; ++i) {
      backward(1, /*split=*/true);
      weight();
      forward(1);
    }
    // 4, the steady state: overlapped pairs F0&B1, F1&B0. The middle ranks run their first
    // F0 and B1 one after the other, not overlapped.
    for (int i = 0; i < half_m_ - p_ + hr + 1; ++i) {
      if (i == 0 && middle_) {
        forward(0);
        backward(1, false);
      } else {
        pair(0, 1);
      }
      pair(1, 0);
    }
    // 5: B1, then the pair F1&B0.
    for (int i = 0; i < half_p - hr - 1; ++i) {
      backward(1, false);
      pair(1, 0);
    }
    // 6: backwards of both phases; from the middle one on, split.
    bool split = false;
    const int step6 = hr + 1;
    for (int i = 0; i < step6; ++i) {
      if (i == step6 / 2 && hr % 2 == 1) split = true;
      backward(1, split);
      if (i == step6 / 2 && hr % 2 == 0) split = true;
      backward(0, split);
    }
    // 7: a pending W, then a split B of phase 0.
    for (int i = 0; i < half_p - hr - 1; ++i) {
      weight();
      backward(0, true);
    }
    // 8: the remaining W passes.
    for (int i = 0; i < hr + 1; ++i) weight();
    PREFLIGHT_CHECK(pending_w_.empty());
    return std::move(order_);
  }

 private:
  // Direction (chunk) of a phase on this rank.
  int chunk(int phase) const { return phase ^ (flip_ ? 1 : 0); }
  int microbatch(int c, int index) const { return c == 0 ? index : half_m_ + index; }

  PipelineTask next_forward(int phase) {
    const int c = chunk(phase);
    return make_task(Pass::kForward, microbatch(c, forwards_[c]++), c);
  }
  PipelineTask next_backward(int phase, bool split) {
    const int c = chunk(phase);
    const int mb = microbatch(c, backwards_[c]++);
    if (split) pending_w_.push_back(make_task(Pass::kWeightGrad, mb, c));
    return make_task(split ? Pass::kInputGrad : Pass::kBackward, mb, c);
  }
  void forward(int phase) { order_.push_back(next_forward(phase)); }
  void backward(int phase, bool split) { order_.push_back(next_backward(phase, split)); }
  void weight() {
    PREFLIGHT_CHECK(!pending_w_.empty());
    order_.push_back(pending_w_.front());
    pending_w_.pop_front();
  }
  void pair(int forward_phase, int backward_phase) {
    PipelineTask f = next_forward(forward_phase);
    f.paired = true;
    order_.push_back(f);
    order_.push_back(next_backward(backward_phase, false));
  }

  const int p_, half_m_;
  const bool flip_;
  const int half_rank_;
  const bool middle_;
  int forwards_[2] = {0, 0};
  int backwards_[2] = {0, 0};
  std::deque<PipelineTask> pending_w_;
  std::vector<PipelineTask> order_;
};

}  // namespace

PipelineTask make_task(Pass pass, int microbatch, int chunk, bool paired) {
  PipelineTask t;
  t.backward = pass != Pass::kForward;
  t.microbatch = microbatch;
  t.chunk = chunk;
  t.pass = pass;
  t.paired = paired;
  return t;
}

bool splits_backward(Schedule schedule) {
  return schedule == Schedule::kZeroBubbleH1 || schedule == Schedule::kZeroBubbleH2 ||
         schedule == Schedule::kDualPipe;
}

int dualpipe_model_stage(int rank, int chunk, int p) { return chunk == 0 ? rank : p - 1 - rank; }

std::vector<PipelineTask> pipeline_order(Schedule schedule, int stage, int p, int m, int v,
                                         bool overlap_pairs) {
  PREFLIGHT_CHECK(stage >= 0 && stage < p && m >= 1 && v >= 1);
  PREFLIGHT_CHECK(!overlap_pairs || schedule == Schedule::kOneFOneB ||
                  schedule == Schedule::kInterleaved);
  const int extra = overlap_pairs ? 1 : 0;  // combined 1F1B: one more warm-up forward
  std::vector<PipelineTask> order;
  switch (schedule) {
    case Schedule::kZeroBubbleH1:
      PREFLIGHT_CHECK(v == 1);
      return zero_bubble_order(m, p - stage - 1, stage);
    case Schedule::kZeroBubbleH2:
      PREFLIGHT_CHECK(v == 1);
      return zero_bubble_order(m, 2 * (p - stage - 1), 2 * stage);
    case Schedule::kDualPipe:
      PREFLIGHT_CHECK(v == 1 && p % 2 == 0 && m % 2 == 0 && m >= 2 * p);
      return DualPipeOrder(stage, p, m).build();
    case Schedule::kGpipe:
      order.reserve(2 * static_cast<size_t>(m));
      for (int j = 0; j < m; ++j) order.push_back(make_task(Pass::kForward, j, 0));
      for (int j = 0; j < m; ++j) order.push_back(make_task(Pass::kBackward, j, 0));
      return order;
    case Schedule::kOneFOneB:
    case Schedule::kInterleaved:
      break;
  }
  order.reserve(2 * static_cast<size_t>(m) * v);
  if (schedule == Schedule::kOneFOneB || v == 1) {
    const int warmup = std::min(p - stage - 1 + extra, m);
    int next_f = 0;
    int next_b = 0;
    for (; next_f < warmup; ++next_f) order.push_back(make_task(Pass::kForward, next_f, 0));
    while (next_f < m) {
      order.push_back(make_task(Pass::kForward, next_f++, 0, overlap_pairs));
      order.push_back(make_task(Pass::kBackward, next_b++, 0));
    }
    while (next_b < m) order.push_back(make_task(Pass::kBackward, next_b++, 0));
    return order;
  }
  PREFLIGHT_CHECK(m % p == 0);
  const int total = m * v;
  int warmup = (p - stage - 1) * 2 + (v - 1) * p;
  if (m == p) warmup = total;  // Megatron: everything is warm-up when m == p
  warmup = std::min(warmup + extra, total);
  const int steady = total - warmup;
  for (int k = 0; k < warmup; ++k) order.push_back(interleaved_task(k, false, p, v));
  for (int i = 0; i < steady; ++i) {
    order.push_back(interleaved_task(warmup + i, false, p, v));
    order.back().paired = overlap_pairs;
    order.push_back(interleaved_task(i, true, p, v));
  }
  for (int k = steady; k < total; ++k) order.push_back(interleaved_task(k, true, p, v));
  return order;
}

}  // namespace preflight
