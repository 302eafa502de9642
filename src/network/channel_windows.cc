#include "network/channel_windows.h"

#include <algorithm>
#include <utility>

namespace preflight {

WindowSchedule::WindowSchedule(std::shared_ptr<const std::vector<ChannelWindow>> windows,
                               Simulator* sim, Apply apply)
    : windows_(std::move(windows)), apply_(std::move(apply)) {
  if (windows_ == nullptr || windows_->empty()) return;
  for (const ChannelWindow& w : *windows_) {
    channels_.insert(channels_.end(), w.channels.begin(), w.channels.end());
    edges_.push_back(w.from);
    if (w.until != SimTime::max()) edges_.push_back(w.until);
  }
  std::sort(channels_.begin(), channels_.end());
  channels_.erase(std::unique(channels_.begin(), channels_.end()), channels_.end());
  std::sort(edges_.begin(), edges_.end());
  edges_.erase(std::unique(edges_.begin(), edges_.end()), edges_.end());
  for (size_t i = 0; i < edges_.size(); ++i) {
    if (edges_[i] <= sim->now()) {
      apply_at(edges_[i]);
    } else {
      sim->schedule(edges_[i], this, static_cast<int64_t>(i));
    }
  }
}

void WindowSchedule::apply_at(SimTime t) {
  std::map<int, double> factor;
  for (int c : channels_) factor[c] = 1.0;
  for (const ChannelWindow& w : *windows_) {
    if (w.from > t || t >= w.until) continue;
    for (int c : w.channels) factor[c] *= w.capacity;
  }
  for (const auto& [c, f] : factor) apply_(c, f);
}

}  // namespace preflight
