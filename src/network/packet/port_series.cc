// PacketNetwork's queue and hold series of the switch ports (PacketNetwork::port_series): each
// port a packet queues at keeps kSeriesSlices slices of the run, the time-weighted queue, the
// longest queue and the time link-level flow control held it; the slice starts at 1 µs and
// doubles, neighbours merging, as the run outgrows the slices.
#include <algorithm>

#include "network/packet/packet_network.h"

namespace preflight {
namespace packet {

void PacketNetwork::observe(Part& c, int channel) {
  const Port& p = ports_[channel];
  if (!is_switch(p.from)) return;
  const SimTime now = c.sim->now();
  widen(&c.traces, &c.slice, now);
  int& index = trace_of_[channel];
  if (index < 0) {
    index = static_cast<int>(c.traces.size());
    PortTrace t;
    t.last = now;
    t.area.assign(kSeriesSlices, 0);
    t.held.assign(kSeriesSlices, 0);
    t.peak.assign(kSeriesSlices, 0);
    c.traces.push_back(std::move(t));
  }
  PortTrace& t = c.traces[index];
  accumulate(&t, now, p.queue_bytes, p.paused || p.starved ? 1.0 : 0.0, c.slice);
  const auto at =
      static_cast<size_t>(std::min<int64_t>(now.ps() / c.slice.ps(), kSeriesSlices - 1));
  t.peak[at] = std::max(t.peak[at], p.queue_bytes);
}

void PacketNetwork::change_queue(Part& c, int channel, int64_t delta) {
  Port& p = ports_[channel];
  if (!is_switch(p.from)) {
    p.queue_bytes += delta;
    return;
  }
  observe(c, channel);  // up to now at the old length
  p.queue_bytes += delta;
  PortTrace& t = c.traces[trace_of_[channel]];
  const auto at =
      static_cast<size_t>(std::min<int64_t>(c.sim->now().ps() / c.slice.ps(), kSeriesSlices - 1));
  t.peak[at] = std::max(t.peak[at], p.queue_bytes);
}

void PacketNetwork::accumulate(PortTrace* t, SimTime to, int64_t queue, double held,
                               SimTime slice) {
  SimTime from = t->last;
  t->last = std::max(t->last, to);
  if (queue == 0 && held == 0) return;
  while (from < to) {
    const int64_t k = std::min<int64_t>(from.ps() / slice.ps(), kSeriesSlices - 1);
    const SimTime until = k == kSeriesSlices - 1 ? to : std::min(to, slice * (k + 1));
    const double seconds = (until - from).to_seconds();
    t->area[k] += static_cast<double>(queue) * seconds;
    t->held[k] += held * seconds;
    t->peak[k] = std::max(t->peak[k], queue);
    from = until;
  }
}

void PacketNetwork::widen(Traces* traces, SimTime* slice, SimTime to) {
  while (to.ps() >= slice->ps() * kSeriesSlices) {
    for (PortTrace& t : *traces) {
      for (int i = 0; i < kSeriesSlices / 2; ++i) {
        t.area[i] = t.area[2 * i] + t.area[2 * i + 1];
        t.held[i] = t.held[2 * i] + t.held[2 * i + 1];
        t.peak[i] = std::max(t.peak[2 * i], t.peak[2 * i + 1]);
      }
      std::fill(t.area.begin() + kSeriesSlices / 2, t.area.end(), 0.0);
      std::fill(t.held.begin() + kSeriesSlices / 2, t.held.end(), 0.0);
      std::fill(t.peak.begin() + kSeriesSlices / 2, t.peak.end(), 0);
    }
    *slice = *slice * 2;
  }
}

std::vector<PacketNetwork::Slice> PacketNetwork::port_series(int channel, SimTime end) const {
  std::vector<Slice> out;
  if (trace_of_[channel] < 0) return out;
  // A copy brought up to `end`, as the others would be.
  const Part& owner = part_of_channel(channel);
  Traces one = {owner.traces[trace_of_[channel]]};
  SimTime slice = owner.slice;
  widen(&one, &slice, end);
  const Port& p = ports_[channel];
  accumulate(&one[0], end, p.queue_bytes, p.paused || p.starved ? 1.0 : 0.0, slice);
  const PortTrace& t = one[0];
  for (int k = 0; k < kSeriesSlices && slice * k < end; ++k) {
    Slice s;
    s.from = slice * k;
    const SimTime until = std::min(end, slice * (k + 1));
    const double seconds = (until - s.from).to_seconds();
    s.mean_queue = seconds > 0 ? t.area[k] / seconds : 0;
    s.max_queue = t.peak[k];
    s.held = seconds > 0 ? std::min(1.0, t.held[k] / seconds) : 0;
    out.push_back(s);
  }
  return out;
}

}  // namespace packet
}  // namespace preflight
