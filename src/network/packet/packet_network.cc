#include "network/packet/packet_network.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "base/check.h"

namespace preflight {
namespace packet {
namespace {

constexpr int kEventShift = 56;
constexpr int64_t kIndexMask = (int64_t{1} << 32) - 1;

}  // namespace

uint64_t PacketNetwork::next_random(uint64_t* state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

PacketNetwork::PacketNetwork(const Topology& topology, PacketConfig config, Simulator* sim)
    : topo_(topology),
      config_(config),
      sim_(sim),
      router_(topology, config.seed),
      rng_(config.seed ^ 0x5eedull) {
  // Per-packet routing reads the adjacency Topology::finalize() builds.
  PREFLIGHT_CHECK(config_.routing == PacketRouting::kEcmp ||
                  topo_.adjacency.size() == topo_.nodes.size());
  PREFLIGHT_CHECK(config_.mtu > 0 && config_.header >= 0);
  header_ = config_.header + (config_.cc == CongestionControl::kHpcc ? config_.hpcc.int_header : 0);
  ports_.resize(2 * topo_.links.size());
  switches_.resize(topo_.nodes.size());
  ingress_.assign(ports_.size(), 0);
  paused_up_.assign(ports_.size(), 0);
  trace_of_.assign(ports_.size(), -1);
  for (size_t l = 0; l < topo_.links.size(); ++l) {
    const TopoLink& link = topo_.links[l];
    for (int dir = 0; dir < 2; ++dir) {
      Port& p = ports_[2 * l + dir];
      p.from = dir == 0 ? link.a : link.b;
      p.to = dir == 0 ? link.b : link.a;
      p.rate = link.bandwidth.bytes_per_second();
      p.full_time = wire_time(config_.mtu + header_, p.rate);
      p.latency = link.latency;
      const double scale = p.rate / kRate40G;
      p.kmin = static_cast<int64_t>(static_cast<double>(config_.kmin) * scale);
      p.kmax =
          std::max(p.kmin + 1, static_cast<int64_t>(static_cast<double>(config_.kmax) * scale));
      if (is_switch(p.to)) {
        // PFC headroom: what arrives while a PAUSE travels up and the packet on the wire ends:
        // 3 × rate × link delay (the HPCC/SimAI MMU), and at least two packets.
        const int64_t wire = config_.mtu + header_;
        const auto headroom = static_cast<int64_t>(3.0 * p.rate * link.latency.to_seconds());
        switches_[p.to].headroom += std::max(headroom, 2 * wire);
        switches_[p.to].reserve += config_.reserve;
      }
    }
  }
  credit_mode_ = config_.link_layer == LinkLayer::kInfiniband;
  quiet_receivers_ = credit_mode_ && config_.routing == PacketRouting::kEcmp && !config_.ecn &&
                     config_.cc != CongestionControl::kHpcc;
  if (credit_mode_) {
    config_.pfc = false;
    // Ports into a NIC deliver at once: their credits never run out.
    credits_.assign(ports_.size(), std::numeric_limits<int64_t>::max() / 4);
    const int64_t wire = config_.mtu + header_;
    for (size_t c = 0; c < ports_.size(); ++c) {
      const Port& p = ports_[c];
      if (!is_switch(p.to)) continue;
      // Auto: the credit loop's round trip (the link both ways) at line rate, and two packets.
      credits_[c] = config_.credit_buffer > 0
                        ? config_.credit_buffer
                        : std::llround(2.0 * p.rate * p.latency.to_seconds()) + 2 * wire;
    }
  }
}

void PacketNetwork::schedule(SimTime at, Event e, int64_t index, uint32_t gen) {
  PREFLIGHT_CHECK(index >= 0 && index <= kIndexMask);
  const int64_t payload = (static_cast<int64_t>(e) << kEventShift) |
                          (static_cast<int64_t>(gen & 0xffffff) << 32) | index;
  sim_->schedule(std::max(at, sim_->now()), this, payload);
}

SimTime PacketNetwork::wire_time(int64_t wire, double rate) const {
  return SimTime::picoseconds(std::llround(static_cast<double>(wire) * 1e12 / rate));
}

void PacketNetwork::set_rate(int channel, double bytes_per_second) {
  PREFLIGHT_CHECK(bytes_per_second > 0);
  ports_[channel].rate = bytes_per_second;
  ports_[channel].full_time = wire_time(config_.mtu + header_, bytes_per_second);
}

SimTime PacketNetwork::paused_time(int channel, SimTime now) const {
  const Port& p = ports_[channel];
  return p.paused_total + (p.paused || p.starved ? now - p.paused_since : SimTime());
}

void PacketNetwork::take_returns(int channel) {
  Port& p = ports_[channel];
  const SimTime now = sim_->now();
  while (!p.returns.empty() && p.returns.front().first <= now) {
    credits_[channel] += p.returns.front().second;
    p.returns.pop_front();
  }
}

void PacketNetwork::arm_credit_wake(int channel) {
  take_returns(channel);  // what is left comes back later than now
  Port& p = ports_[channel];
  if (!p.starved || p.credit_wake || p.returns.empty()) return;
  p.credit_wake = true;
  schedule(p.returns.front().first, kCredit, channel);
}

bool PacketNetwork::has_credit(int channel, int64_t wire) {
  if (!credit_mode_) return true;
  Port& p = ports_[channel];
  take_returns(channel);
  if (credits_[channel] >= wire) {
    if (p.starved) {
      observe(channel);
      p.starved = false;
      held_ports_--;
      p.paused_total += sim_->now() - p.paused_since;
    }
    return true;
  }
  if (!p.starved) {
    observe(channel);
    p.starved = true;
    held_ports_++;
    p.paused_since = sim_->now();
    stats_.credit_stalls++;
  }
  arm_credit_wake(channel);
  return false;
}

int PacketNetwork::alloc_packet() {
  if (!free_packets_.empty()) {
    const int id = free_packets_.back();
    free_packets_.pop_back();
    packets_[id] = Packet{};
    return id;
  }
  packets_.emplace_back();
  if (config_.cc == CongestionControl::kHpcc) int_records_.resize(packets_.size() * kMaxIntHops);
  return static_cast<int>(packets_.size() - 1);
}

int PacketNetwork::start_flow(int64_t bytes, std::vector<int> path, SimTime delay, Done done) {
  PREFLIGHT_CHECK(bytes >= 0);
  const int id = static_cast<int>(flows_.size());
  flows_.emplace_back();
  Flow& f = flows_.back();
  f.bytes = bytes;
  f.done = std::move(done);
  f.path = std::move(path);
  stats_.flows++;
  const int n = static_cast<int>(f.path.size());
  // The simulated hops run from the first NIC on the path to the last.
  f.begin = 0;
  f.end = n - 1;
  for (int i = 0; i < n; ++i) {
    if (topo_.nodes[ports_[f.path[i]].from].kind == NodeKind::kNic) {
      f.begin = i;
      break;
    }
  }
  for (int i = n - 1; i >= f.begin; --i) {
    if (topo_.nodes[ports_[f.path[i]].to].kind == NodeKind::kNic) {
      f.end = i;
      break;
    }
  }
  for (int i = 0; i < n; ++i) {
    const SimTime l = ports_[f.path[i]].latency;
    if (i < f.begin) {
      f.head += l;
    } else if (i > f.end) {
      f.tail += l;
    } else {
      f.back += l;
    }
  }
  if (bytes == 0 || n == 0) {
    finish_at(id, sim_->now() + delay + f.head + f.back + f.tail);
    return id;
  }
  f.packets = (bytes + config_.mtu - 1) / config_.mtu;
  f.dst_nic = ports_[f.path[f.end]].to;
  f.line = ports_[f.path[f.begin]].rate * std::min(1.0, config_.nic_pacing);
  f.rc = f.rt = f.line;
  if (config_.cc == CongestionControl::kHpcc) {
    // Base RTT: the simulated hops' propagation both ways and a full packet's serialization
    // at each hop (the ACK rides unqueued); the window starts at the line rate's BDP.
    f.base_rtt = f.back + f.back;
    const int64_t wire = config_.mtu + header_;
    for (int i = f.begin; i <= f.end; ++i) f.base_rtt += wire_time(wire, ports_[f.path[i]].rate);
    f.hp_rc = f.line;
    f.window = f.line * f.base_rtt.to_seconds();
  }
  pending_starts_++;
  schedule(sim_->now() + delay + f.head, kStart, id);
  return id;
}

void PacketNetwork::on_event(int64_t payload) {
  stats_.events++;
  const auto e = static_cast<Event>(payload >> kEventShift);
  const uint32_t gen = static_cast<uint32_t>((payload >> 32) & 0xffffff);
  const int index = static_cast<int>(payload & kIndexMask);
  switch (e) {
    case kStart: {
      Flow& f = flows_[index];
      f.started = true;
      f.started_at = sim_->now();
      f.next_avail = sim_->now();
      pending_starts_--;
      flow_epoch_++;
      if (config_.fast_forward) {
        active_.push_back(index);
        if (!check_pending_) {
          check_pending_ = true;
          ff_snap_ = stats_;
          snapshot_holds();
          schedule(sim_->now() + config_.fast_forward_window, kCheck, 0);
        }
      }
      rotate(index);
      return;
    }
    case kTxDone:
      tx_done(index);
      return;
    case kArrive:
      arrive(index);
      return;
    case kPause: {
      Port& p = ports_[index];
      if (!p.paused) {
        observe(index);
        p.paused = true;
        held_ports_++;
        p.paused_since = sim_->now();
      }
      return;
    }
    case kResume: {
      Port& p = ports_[index];
      if (p.paused) {
        observe(index);
        p.paused = false;
        held_ports_--;
        p.paused_total += sim_->now() - p.paused_since;
      }
      try_send(index);
      return;
    }
    case kWake: {
      Port& p = ports_[index];
      if (sim_->now() >= p.wake_at) p.wake_at = SimTime::max();
      try_send(index);
      return;
    }
    case kCnp:
      on_cnp(index);
      return;
    case kNack: {
      Flow& f = flows_[index];
      if (f.finished || f.nack_seq >= f.next_seq) return;
      stats_.retransmitted += f.next_seq - f.nack_seq;
      f.next_seq = f.nack_seq;
      rotate(index);
      return;
    }
    case kTimeout: {
      // All sent (or HPCC's window full), some not delivered: resend from the receiver's next
      // packet (the cumulative acknowledgement a real sender would hold, taken as known).
      Flow& f = flows_[index];
      f.timeout_pending = false;
      if (f.finished || f.expected >= f.next_seq) return;
      if (f.drops == f.drops_handled) {
        // Nothing of it was lost: its packets are still queued somewhere; look again later.
        arm_timeout(index, sim_->now() + config_.nack_interval);
        return;
      }
      f.drops_handled = f.drops;
      stats_.retransmitted += f.next_seq - f.expected;
      f.next_seq = f.expected;
      rotate(index);
      return;
    }
    case kAlpha: {
      Flow& f = flows_[index];
      if (gen != (f.alpha_gen & 0xffffff) || f.finished) return;
      f.alpha *= 1.0 - config_.dcqcn.g;
      schedule(sim_->now() + config_.dcqcn.alpha_interval, kAlpha, index, f.alpha_gen);
      return;
    }
    case kIncrease: {
      Flow& f = flows_[index];
      if (gen != (f.increase_gen & 0xffffff) || f.finished) return;
      f.time_stage++;
      increase(f);
      if (f.rc < f.line) {
        schedule(sim_->now() + config_.dcqcn.increase_interval, kIncrease, index, f.increase_gen);
      }
      return;
    }
    case kAck:
      on_ack(index);
      return;
    case kCredit:
      ports_[index].credit_wake = false;
      try_send(index);
      arm_credit_wake(index);  // still starved (busy, or the return too small): the next one
      return;
    case kCheck:
      fast_forward_check();
      return;
    case kFinish: {
      Flow& f = flows_[index];
      f.finished = true;
      pending_finishes_--;
      if (f.packets > 0) {
        // The idle path: every wire byte at the sender's rate, the first packet's store and
        // forward at each further hop, the latency of every hop.
        double ideal = static_cast<double>(f.bytes + f.packets * header_) / f.line +
                       (f.head + f.back + f.tail).to_seconds();
        const auto wire = static_cast<double>(std::min(f.bytes, config_.mtu) + header_);
        for (int i = f.begin + 1; i <= f.end; ++i) ideal += wire / ports_[f.path[i]].rate;
        const SimTime fct = sim_->now() - f.started_at + f.head;
        completions_.push_back({fct, fct.to_seconds() / ideal});
      }
      if (f.done) {
        Done done = std::move(f.done);
        done(sim_->now());
      }
      return;
    }
  }
}

void PacketNetwork::try_send(int channel) {
  Port& p = ports_[channel];
  if (p.paused) return;
  if (busy(p)) {
    arm_port(channel);
    return;
  }
  if (!p.queue.empty()) {
    const int id = p.queue.front();
    if (!has_credit(channel, wire_bytes(packets_[id]))) return;
    p.queue.pop_front();
    const Packet& pk = packets_[id];
    const int64_t wire = wire_bytes(pk);
    // ECN on dequeue, against the queue it leaves (HPCC/SimAI's switch).
    if (config_.ecn && is_switch(p.from)) {
      const int64_t q = p.queue_bytes;
      bool mark = q > p.kmax;
      if (!mark && q > p.kmin) {
        const double prob =
            config_.pmax * static_cast<double>(q - p.kmin) / static_cast<double>(p.kmax - p.kmin);
        mark = static_cast<double>(next_random(&rng_) >> 11) * 0x1.0p-53 < prob;
      }
      if (mark && !packets_[id].ecn) {
        packets_[id].ecn = true;
        stats_.ecn_marks++;
      }
    }
    change_queue(channel, -wire);
    if (config_.cc == CongestionControl::kHpcc && is_switch(p.from) &&
        packets_[id].int_hops < kMaxIntHops) {
      IntRecord& rec =
          int_records_[static_cast<size_t>(id) * kMaxIntHops + packets_[id].int_hops++];
      rec.channel = channel;
      rec.time = sim_->now();
      rec.tx_bytes = p.tx_bytes;
      rec.queue = p.queue_bytes;
    }
    if (packets_[id].in_channel >= 0 && is_switch(p.from)) {
      const int in = packets_[id].in_channel;
      account(in, -wire);
      check_resume(in);
      // Its buffer is free again: the credits go back up the link it came on.
      if (credit_mode_) {
        ports_[in].returns.emplace_back(sim_->now() + ports_[in].latency, wire);
        arm_credit_wake(in);
      }
    }
    transmit(channel, id);
    return;
  }
  if (!p.senders.empty()) send_from_flows(channel);
}

// A NIC's egress serves its flows round-robin: the first whose pacing allows it now.
bool PacketNetwork::send_from_flows(int channel) {
  Port& p = ports_[channel];
  const SimTime now = sim_->now();
  // Flows with nothing left to send leave the rotation (a NACK or a timeout puts them back).
  if (p.prune) {
    p.prune = false;
    size_t kept = 0, next = 0;
    for (size_t i = 0; i < p.senders.size(); ++i) {
      Flow& f = flows_[p.senders[i]];
      if (f.next_seq >= f.packets || f.finished) {
        f.in_rotation = false;
        continue;
      }
      if (i < p.next_sender) ++next;
      p.senders[kept++] = p.senders[i];
    }
    p.senders.resize(kept);
    p.next_sender = next;
  }
  const size_t n = p.senders.size();
  p.next_sender = n == 0 ? 0 : p.next_sender % n;
  SimTime earliest = SimTime::max();
  // The rotation from the next in turn; i wraps by a compare, not a division (the scan is the
  // hottest loop of an all-to-all run).
  for (size_t k = 0, i = p.next_sender; k < n; ++k, i = i + 1 == n ? 0 : i + 1) {
    const int flow = p.senders[i];
    Flow& f = flows_[flow];
    if (f.next_seq >= f.packets || f.finished) {  // leaves at the next prune
      p.prune = true;
      continue;
    }
    if (!window_open(f)) {
      // An ACK reopens it; without one (a lost packet and no later arrival) a timeout resends.
      arm_timeout(flow, now + config_.nack_interval);
      continue;
    }
    if (f.next_avail > now) {
      earliest = std::min(earliest, f.next_avail);
      continue;
    }
    const int64_t next_wire = std::min(config_.mtu, f.bytes - f.next_seq * config_.mtu) + header_;
    if (!has_credit(channel, next_wire)) return false;  // the credits' return tries again
    p.next_sender = i + 1 == n ? 0 : i + 1;
    const int id = alloc_packet();
    Packet& pk = packets_[id];
    pk.flow = flow;
    pk.seq = f.next_seq++;
    pk.payload = static_cast<int32_t>(std::min(config_.mtu, f.bytes - pk.seq * config_.mtu));
    pk.hop = f.begin;
    const int64_t wire = wire_bytes(pk);
    // Paced at its rate, and at most at the NIC's pacing of its port's rate now (a degraded port
    // slows its NIC's pacing with it).
    const double pace = std::min(f.rc, p.rate * std::min(1.0, config_.nic_pacing));
    if (pace != f.pace_rate) {
      f.pace_rate = pace;
      f.pace_full = wire_time(config_.mtu + header_, pace);
    }
    f.next_avail = now + (wire == config_.mtu + header_ ? f.pace_full : wire_time(wire, pace));
    stats_.packets++;
    if (config_.cc == CongestionControl::kDcqcn && f.reacting) {
      f.byte_count += wire;
      if (f.byte_count >= config_.dcqcn.byte_counter) {
        f.byte_count = 0;
        f.byte_stage++;
        increase(f);
      }
    }
    // Its last packet: if it is lost, no later packet makes the receiver NACK it.
    if (f.next_seq == f.packets) {
      p.prune = true;
      arm_timeout(flow, now + config_.nack_interval);
    }
    transmit(channel, id);
    return true;
  }
  if (earliest != SimTime::max() && earliest < p.wake_at) {
    p.wake_at = earliest;
    schedule(earliest, kWake, channel);
  }
  return false;
}

void PacketNetwork::rotate(int flow) {
  Flow& f = flows_[flow];
  const int c = f.path[f.begin];
  if (!f.in_rotation) {
    f.in_rotation = true;
    ports_[c].senders.push_back(flow);
    // A flow with nothing to send (an ACK reopening a finished flow's window) leaves again at
    // the port's next look.
    if (f.next_seq >= f.packets || f.finished) ports_[c].prune = true;
  }
  try_send(c);
}

void PacketNetwork::transmit(int channel, int packet) {
  Port& p = ports_[channel];
  Packet& pk = packets_[packet];
  const int64_t wire = wire_bytes(pk);
  p.tx_bytes += wire;
  if (credit_mode_) credits_[channel] -= wire;
  const SimTime end =
      sim_->now() + (wire == config_.mtu + header_ ? p.full_time : wire_time(wire, p.rate));
  p.free_at = end;
  p.current_wire = wire;
  // The end of its serialization, whose time is known now: nothing reads the packet while it is
  // on the wire, so it takes its next hop (or, with quiet receivers, is delivered) here, and
  // the end costs an event only where the port has more to send (arm_port). A train of packets
  // through idle switch ports then costs one event a packet at each switch (its arrival) and one
  // at the sending NIC (its next send), where it had cost two each.
  pk.in_channel = channel;
  pk.hop++;
  if (quiet_receivers_ && pk.hop > flows_[pk.flow].end) {
    deliver(packet, end + p.latency);  // its arrival at the receiver
  } else {
    schedule(end + p.latency, kArrive, packet);
  }
  arm_port(channel);
}

void PacketNetwork::arm_port(int channel) {
  Port& p = ports_[channel];
  if (!busy(p)) return;
  if (!p.queue.empty()) {
    if (!p.done_pending) {
      p.done_pending = true;
      schedule(p.free_at, kTxDone, channel);
    }
    return;
  }
  // A NIC's egress: its next send comes when the wire is free and a flow's pacing allows it
  // (send_from_flows then serves them round-robin as at any other moment). A flow whose window
  // is closed is looked at when the wire frees, as send_from_flows arms its timeout then.
  SimTime next = SimTime::max();
  const size_t n = p.senders.size();
  // From the next in turn: likely ready.
  for (size_t k = 0, i = p.next_sender < n ? p.next_sender : 0; k < n && next > p.free_at;
       ++k, i = i + 1 == n ? 0 : i + 1) {
    const Flow& f = flows_[p.senders[i]];
    if (f.next_seq >= f.packets || f.finished) continue;
    next = std::min(next, window_open(f) ? std::max(f.next_avail, p.free_at) : p.free_at);
  }
  if (next != SimTime::max() && next < p.wake_at) {
    p.wake_at = next;
    schedule(next, kWake, channel);
  }
}

void PacketNetwork::tx_done(int channel) {
  ports_[channel].done_pending = false;
  try_send(channel);
}

}  // namespace packet
}  // namespace preflight
