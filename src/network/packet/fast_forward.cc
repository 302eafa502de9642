// PacketNetwork's fast-forward of steady states (the model: packet_network.h; the method and its
// error on a test set: docs/packet_network.md "Fast-forward"). In the spirit of Wormhole
// (NSDI '26): when every flow's rate has settled, the packets of the next stretch of time would
// repeat what the last window did, so the network skips them and moves its pending events on.
#include <algorithm>
#include <cmath>
#include <vector>

#include "network/packet/packet_network.h"

namespace preflight {
namespace packet {

void PacketNetwork::fast_forward_check(Part& c) {
  check_pending_ = false;
  std::erase_if(active_, [this](int id) { return flows_[id].finished; });
  const SimTime now = c.sim->now();
  const SimTime window = config_.fast_forward_window;
  if (active_.empty()) return;  // the next start arms the checks again
  // Whether link-level flow control held a port during the window: a pause or credit stall
  // began in it, or a port was held at its start or is held now.
  ff_window_held_ = c.stats.pauses != ff_snap_.pauses ||
                    c.stats.credit_stalls != ff_snap_.credit_stalls || c.held_ports > 0 ||
                    ff_held_at_check_;
  // Quiet: the same flows as at the last check, nothing lost, no start or finish in the offing.
  // Steady: besides, each flow delivers at the rate it did over the window before, its packets
  // in the network (the queues on its path) hold their number, and its congestion control is
  // not holding it back. Ports held by PFC or want of credits do not stop a jump: a flow they
  // hold is steady when its rate and its queues are (a congested port paused and resumed many
  // times a window, as a 4:1 incast's upstream ports are, is a periodic state whose average
  // the window measured); the jump carries each port's held fraction (carry_holds).
  // The holds begun in the window (PAUSE frames, credit stalls) repeat those of the window
  // before, as a periodic state's do: its count is what the jump carries on.
  const int64_t holds =
      c.stats.pauses - ff_snap_.pauses + c.stats.credit_stalls - ff_snap_.credit_stalls;
  const double tolerance = config_.fast_forward_tolerance;
  const bool holds_repeat =
      std::abs(static_cast<double>(holds - ff_holds_)) <=
      std::max(2.0, tolerance * static_cast<double>(std::max(holds, ff_holds_)));
  ff_holds_ = holds;
  bool steady = flow_epoch_ == ff_epoch_ && c.stats.drops == ff_snap_.drops && holds_repeat &&
                pending_starts_ == 0 && pending_finishes_ == 0;
  double reach_s = 1e6;  // how far the state may be carried (seconds)
  for (int id : active_) {
    Flow& f = flows_[id];
    // The rate from the delivery the last check saw to the latest one: exact for a flow whose
    // packets come evenly, with no rounding to whole packets per window.
    const int64_t delivered = f.expected - f.ff_mark;
    const SimTime span = f.last_delivery - f.ff_mark_time;
    const double rate = f.ff_mark_time >= SimTime() && delivered > 0 && span > SimTime()
                            ? static_cast<double>(delivered) / span.to_seconds()
                            : 0;
    // Its packets in the network: a queue on its path filling or draining shows as a change
    // (the receiver's rate is then the queue's, not the sender's).
    const int64_t in_flight = f.next_seq - f.expected;
    steady = steady && rate > 0 && f.ff_rate > 0;
    if (steady) {
      const double change = std::abs(rate - f.ff_rate) / std::max(rate, f.ff_rate);
      const double drift = static_cast<double>(std::abs(in_flight - f.ff_in_flight));
      // A flow DCQCN holds below its line rate is on its saw-tooth (cut on a CNP, timers
      // raising it again): its rate now says little about the next stretch, so it runs exactly.
      steady = change <= tolerance &&
               drift <= std::max(2.0, tolerance * static_cast<double>(delivered)) && f.rc >= f.line;
      if (steady) {
        // Its last packets (two windows' worth) run exactly; and the bounded-error check: the
        // rate moved by `change` over a window, so a trend would move it by the tolerance in
        // tolerance / change windows, as far as the state is carried.
        const double left = static_cast<double>(f.packets - f.next_seq) / rate;
        reach_s = std::min(reach_s, left - 2 * window.to_seconds());
        if (change > 0) reach_s = std::min(reach_s, window.to_seconds() * tolerance / change);
      }
    }
    f.ff_rate = rate;
    f.ff_in_flight = in_flight;
  }
  if (steady) {
    // Nor past an event outside the network (a kernel's end, a degraded link's edge).
    const SimTime reach =
        std::min(SimTime::seconds(std::max(0.0, reach_s)), c.sim->next_event_not_of(&c) - now);
    if (reach >= window) {
      std::vector<int64_t> credit;
      credit.reserve(active_.size());
      for (int id : active_) {
        const Flow& f = flows_[id];
        credit.push_back(static_cast<int64_t>(std::floor(f.ff_rate * reach.to_seconds())));
      }
      jump(c, reach, credit);
    }
  }
  ff_epoch_ = flow_epoch_;
  ff_snap_ = c.stats;
  // Each port's held time stays valid as the next window's start while no port is held.
  if (ff_window_held_) {
    snapshot_holds(c);
  } else {
    ff_check_time_ = now;
  }
  ff_held_at_check_ = c.held_ports > 0;
  for (int id : active_) {
    Flow& f = flows_[id];
    if (f.expected > 0) {
      f.ff_mark = f.expected;
      f.ff_mark_time = f.last_delivery;
    }
  }
  check_pending_ = true;
  schedule(c, c.sim->now() + window, kCheck, 0);
}

void PacketNetwork::jump(Part& c, SimTime delta, const std::vector<int64_t>& credit) {
  // The packets alive now (queued, on a wire, in flight) are renumbered after the credited ones.
  std::vector<uint8_t> free(c.packets.size(), 0);
  for (int id : c.free_packets) free[id] = 1;
  int64_t total = 0;
  const int64_t wire = config_.mtu + header_;
  for (size_t i = 0; i < active_.size(); ++i) {
    const int id = active_[i];
    Flow& f = flows_[id];
    const int64_t k = credit[i];
    f.ff_credit = k;
    total += k;
    f.next_seq += k;
    f.expected += k;
    // Its times stay where they were relative to its events.
    f.next_avail += delta;
    f.last_delivery += delta;
    f.last_cnp += delta;
    f.last_nack += delta;
    for (int h = f.begin; h <= f.end; ++h) ports_[f.path[h]].tx_bytes += k * wire;
  }
  for (size_t id = 0; id < c.packets.size(); ++id) {
    if (free[id]) continue;
    Packet& pk = c.packets[id];
    const Flow& f = flows_[pk.flow];
    if (!f.finished) pk.seq += f.ff_credit;
  }
  for (int id : active_) flows_[id].ff_credit = 0;
  for (Port& p : ports_) {
    if (p.wake_at != SimTime::max()) p.wake_at += delta;
    if (p.free_at > c.sim->now()) p.free_at += delta;  // the packet on the wire, with its events
    p.prune = true;  // a flow credited its last packets leaves its rotation
    // Credits on their way back move with the events, as their wake-ups do.
    for (auto& r : p.returns) r.first += delta;
  }
  if (ff_window_held_) carry_holds(c, delta);
  // ECN marks, CNPs, PAUSE frames and credit stalls at the rate of the window before the jump,
  // per data packet.
  const int64_t sent = c.stats.packets - ff_snap_.packets;
  if (sent > 0) {
    const double per_packet = static_cast<double>(total) / static_cast<double>(sent);
    const auto extrapolate = [per_packet](int64_t* now, int64_t before) {
      *now += std::llround(per_packet * static_cast<double>(*now - before));
    };
    extrapolate(&c.stats.ecn_marks, ff_snap_.ecn_marks);
    extrapolate(&c.stats.cnps, ff_snap_.cnps);
    extrapolate(&c.stats.pauses, ff_snap_.pauses);
    extrapolate(&c.stats.credit_stalls, ff_snap_.credit_stalls);
  }
  c.stats.packets += total;
  c.stats.delivered += total;
  c.stats.skipped_packets += total;
  c.stats.fast_forwards++;
  c.stats.skipped += delta;
  c.sim->advance(&c, delta);
}

void PacketNetwork::snapshot_holds(Part& c) {
  const SimTime now = c.sim->now();
  ff_held_.resize(ports_.size());
  for (size_t k = 0; k < ports_.size(); ++k) ff_held_[k] = paused_time(static_cast<int>(k), now);
  ff_check_time_ = now;
}

void PacketNetwork::carry_holds(Part& c, SimTime delta) {
  const SimTime now = c.sim->now();
  const double window = (now - ff_check_time_).to_seconds();
  if (window <= 0) return;
  const SimTime end = now + delta;
  for (size_t k = 0; k < ports_.size(); ++k) {
    const int channel = static_cast<int>(k);
    Port& p = ports_[k];
    const double held =
        std::clamp((paused_time(channel, now) - ff_held_[k]).to_seconds() / window, 0.0, 1.0);
    // Its series: up to now as it stands, then the jump at the window's queue and held fraction.
    if (trace_of_[k] >= 0) {
      observe(c, channel);
      widen(&c.traces, &c.slice, end);
      accumulate(&c.traces[trace_of_[k]], end, p.queue_bytes, held, c.slice);
    }
    // Its held time: the fraction of the jump; a hold in progress resumes after the jump.
    p.paused_total += delta.scaled(held);
    if (p.paused || p.starved) p.paused_since += delta;
  }
}

}  // namespace packet
}  // namespace preflight
