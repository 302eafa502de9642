// Channels of reduced capacity over windows of a run (simulation.degraded_links, resolved by
// find_channels), and the schedule that applies them on a fabric's simulator: the flow network
// re-solves its rates at each window edge, the packet network serializes at the new rate from
// the next packet on.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <vector>

#include "base/units.h"
#include "engine/simulator.h"

namespace preflight {

// Within [from, until) each channel carries `capacity` times what it otherwise would (its line
// rate, times nic_efficiency on the flow network's network links). Overlapping windows on one
// channel multiply. The change takes effect at the window's edge, mid-flow.
struct ChannelWindow {
  std::vector<int> channels;  // 2·link + dir
  double capacity = 1;        // (0, 1]
  SimTime from;
  SimTime until = SimTime::max();
};

// Applies `windows` on `sim`: at construction for edges at or before now, then by an event at
// every later edge, `apply(channel, factor)` with the product of the windows open on the channel
// (1 once none is). `windows` may be null.
class WindowSchedule final : private EventHandler {
 public:
  using Apply = std::function<void(int channel, double factor)>;
  WindowSchedule(std::shared_ptr<const std::vector<ChannelWindow>> windows, Simulator* sim,
                 Apply apply);

 private:
  void on_event(int64_t edge) override { apply_at(edges_[edge]); }
  void apply_at(SimTime t);

  std::shared_ptr<const std::vector<ChannelWindow>> windows_;
  Apply apply_;
  std::vector<int> channels_;   // every degraded channel, ascending
  std::vector<SimTime> edges_;  // the windows' edges, ascending
};

}  // namespace preflight
