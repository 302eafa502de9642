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
    : topo_(topology), config_(config), sim_(sim), router_(topology, config.seed) {
  // Per-packet routing reads the adjacency Topology::finalize() builds.
  PREFLIGHT_CHECK(config_.routing == PacketRouting::kEcmp ||
                  topo_.adjacency.size() == topo_.nodes.size());
  PREFLIGHT_CHECK(config_.mtu > 0 && config_.header >= 0);
  header_ = config_.header + (config_.cc == CongestionControl::kHpcc ? config_.hpcc.int_header : 0);
  ports_.resize(2 * topo_.links.size());
  switches_.resize(topo_.nodes.size());
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
  // One partition, whose queue is the job's simulator, unless the config asks for more.
  auto first = std::make_unique<Part>();
  first->net = this;
  first->sim = sim_;
  first->rng = config_.seed ^ 0x5eedull;
  parts_.push_back(std::move(first));
  main_ = parts_[0].get();
  part_of_.assign(topo_.nodes.size(), 0);
  quiet_receivers_ = credit_mode_ && config_.routing == PacketRouting::kEcmp && !config_.ecn &&
                     config_.cc != CongestionControl::kHpcc;
  if (credit_mode_) {
    config_.pfc = false;
    // Ports into a NIC deliver at once: their credits never run out.
    for (Port& p : ports_) p.credits = std::numeric_limits<int64_t>::max() / 4;
    const int64_t wire = config_.mtu + header_;
    for (size_t c = 0; c < ports_.size(); ++c) {
      const Port& p = ports_[c];
      if (!is_switch(p.to)) continue;
      // Auto: the credit loop's round trip (the link both ways) at line rate, and two packets.
      ports_[c].credits = config_.credit_buffer > 0
                              ? config_.credit_buffer
                              : std::llround(2.0 * p.rate * p.latency.to_seconds()) + 2 * wire;
    }
  }
  PREFLIGHT_CHECK_MSG(config_.partitions <= 1 || partitions_supported(config_),
                      "packet network: partitions on a fabric that does not support them");
  if (config_.partitions > 1) partition(config_.partitions);
}

PacketStats PacketNetwork::stats() const {
  PacketStats s;
  std::vector<const Part*> all;
  for (const auto& p : parts_) all.push_back(p.get());
  if (main_part_) all.push_back(main_part_.get());
  for (const Part* p : all) {
    const PacketStats& a = p->stats;
    s.flows += a.flows;
    s.packets += a.packets;
    s.delivered += a.delivered;
    s.ecn_marks += a.ecn_marks;
    s.cnps += a.cnps;
    s.pauses += a.pauses;
    s.drops += a.drops;
    s.retransmitted += a.retransmitted;
    s.acks += a.acks;
    s.credit_stalls += a.credit_stalls;
    s.events += a.events;
    s.windows += a.windows;
    s.fast_forwards += a.fast_forwards;
    s.skipped += a.skipped;
    s.skipped_packets += a.skipped_packets;
  }
  return s;
}

int64_t PacketNetwork::encode(Event e, int64_t index, uint32_t gen) {
  PREFLIGHT_CHECK(index >= 0 && index <= kIndexMask);
  return (static_cast<int64_t>(e) << kEventShift) | (static_cast<int64_t>(gen & 0xffffff) << 32) |
         index;
}

void PacketNetwork::schedule(Part& c, SimTime at, Event e, int64_t index, uint32_t gen) {
  const int64_t payload = encode(e, index, gen);
  if (single_) {
    c.sim->schedule(std::max(at, c.sim->now()), &c, payload);
    return;
  }
  // With partitions: the event goes to the partition that owns what it acts on.
  int owner = c.index;
  switch (e) {
    case kStart:
    case kCnp:
    case kNack:
    case kAlpha:
    case kIncrease:
    case kTimeout: {
      const Flow& f = flows_[index];
      owner = part_of_[ports_[f.path[f.begin]].from];
      break;
    }
    case kTxDone:
    case kWake:
    case kCredit:
    case kPause:
    case kResume:
      owner = part_of_[ports_[index].from];
      break;
    case kFinish:
    case kTick:
      owner = -1;  // the job's simulator
      break;
    case kArrive:  // transmit sends a packet across itself
    case kAck:
    case kCheck:
      break;
  }
  if (owner < 0) {
    if (&c == main_) {
      sim_->schedule(std::max(at, sim_->now()), main_, payload);
    } else {
      c.outbox.push_back(Message{Message::kDone, -1, at, index, 0, {}});
    }
    return;
  }
  Part& to = *parts_[owner];
  if (&to == &c) {
    c.sim->schedule(std::max(at, c.sim->now()), &c, payload);
    return;
  }
  // Another partition's: nothing crosses a partition within the window it is sent in.
  PREFLIGHT_CHECK_MSG(at >= horizon_,
                      "packet network: an event crosses partitions inside a window");
  if (&c == main_) {
    // From the job's simulator, between windows (a flow's start): straight in.
    to.sim->schedule(at, &to, payload);
    schedule_tick(at);
    return;
  }
  c.outbox.push_back(Message{Message::kEvent, owner, at, payload, 0, {}});
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

void PacketNetwork::take_returns(Part& c, int channel) {
  Port& p = ports_[channel];
  const SimTime now = c.sim->now();
  while (!p.returns.empty() && p.returns.front().first <= now) {
    p.credits += p.returns.front().second;
    p.returns.pop_front();
  }
}

void PacketNetwork::arm_credit_wake(Part& c, int channel) {
  take_returns(c, channel);  // what is left comes back later than now
  Port& p = ports_[channel];
  if (!p.starved || p.credit_wake || p.returns.empty()) return;
  p.credit_wake = true;
  schedule(c, p.returns.front().first, kCredit, channel);
}

bool PacketNetwork::has_credit(Part& c, int channel, int64_t wire) {
  if (!credit_mode_) return true;
  Port& p = ports_[channel];
  take_returns(c, channel);
  if (p.credits >= wire) {
    if (p.starved) {
      observe(c, channel);
      p.starved = false;
      c.held_ports--;
      p.paused_total += c.sim->now() - p.paused_since;
    }
    return true;
  }
  if (!p.starved) {
    observe(c, channel);
    p.starved = true;
    c.held_ports++;
    p.paused_since = c.sim->now();
    c.stats.credit_stalls++;
  }
  arm_credit_wake(c, channel);
  return false;
}

int PacketNetwork::alloc_packet(Part& c) {
  if (!c.free_packets.empty()) {
    const int id = c.free_packets.back();
    c.free_packets.pop_back();
    c.packets[id] = Packet{};
    return id;
  }
  c.packets.emplace_back();
  if (config_.cc == CongestionControl::kHpcc) c.int_records.resize(c.packets.size() * kMaxIntHops);
  return static_cast<int>(c.packets.size() - 1);
}

int PacketNetwork::start_flow(int64_t bytes, std::vector<int> path, SimTime delay, Done done) {
  PREFLIGHT_CHECK(bytes >= 0);
  const int id = static_cast<int>(flows_.size());
  flows_.emplace_back();
  Flow& f = flows_.back();
  f.bytes = bytes;
  f.done = std::move(done);
  f.path = std::move(path);
  Part& c = *main_;
  c.stats.flows++;
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
    finish_at(c, id, sim_->now() + delay + f.head + f.back + f.tail);
    return id;
  }
  f.packets = (bytes + config_.mtu - 1) / config_.mtu;
  f.dst_nic = ports_[f.path[f.end]].to;
  if (!single_ && config_.routing != PacketRouting::kEcmp) warm_next_hops(f.dst_nic);
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
  if (single_) pending_starts_++;
  schedule(c, sim_->now() + delay + f.head, kStart, id);
  return id;
}

void PacketNetwork::handle(Part& c, int64_t payload) {
  const auto e = static_cast<Event>(payload >> kEventShift);
  const uint32_t gen = static_cast<uint32_t>((payload >> 32) & 0xffffff);
  const int index = static_cast<int>(payload & kIndexMask);
  if (e == kTick) {
    if (gen == (tick_gen_ & 0xffffff)) tick();
    return;
  }
  c.stats.events++;
  const SimTime now = c.sim->now();
  switch (e) {
    case kStart: {
      Flow& f = flows_[index];
      f.started = true;
      f.started_at = now;
      f.next_avail = now;
      if (single_) {
        pending_starts_--;
        flow_epoch_++;
      }
      if (config_.fast_forward) {
        active_.push_back(index);
        if (!check_pending_) {
          check_pending_ = true;
          ff_snap_ = c.stats;
          snapshot_holds(c);
          schedule(c, now + config_.fast_forward_window, kCheck, 0);
        }
      }
      rotate(c, index);
      return;
    }
    case kTxDone:
      tx_done(c, index);
      return;
    case kArrive:
      arrive(c, index);
      return;
    case kPause: {
      Port& p = ports_[index];
      if (!p.paused) {
        observe(c, index);
        p.paused = true;
        c.held_ports++;
        p.paused_since = now;
      }
      return;
    }
    case kResume: {
      Port& p = ports_[index];
      if (p.paused) {
        observe(c, index);
        p.paused = false;
        c.held_ports--;
        p.paused_total += now - p.paused_since;
      }
      try_send(c, index);
      return;
    }
    case kWake: {
      Port& p = ports_[index];
      if (now >= p.wake_at) p.wake_at = SimTime::max();
      try_send(c, index);
      return;
    }
    case kCnp:
      on_cnp(c, index);
      return;
    case kNack: {
      if (!single_) {
        // With partitions the index is the NACK's slot (send_nack); the sender cannot see
        // whether the flow has finished, and goes back as a real one would.
        const auto [flow, seq] = c.nacks[index];
        c.free_nacks.push_back(index);
        go_back(c, flow, seq);
        return;
      }
      Flow& f = flows_[index];
      if (f.finished) return;
      go_back(c, index, f.nack_seq);
      return;
    }
    case kTimeout: {
      // All sent (or HPCC's window full), some not delivered: resend from the receiver's next
      // packet (the cumulative acknowledgement a real sender would hold, taken as known).
      Flow& f = flows_[index];
      if (!single_) {
        // Judged between windows, where the receiver's and the drops' state can be read.
        c.outbox.push_back(Message{Message::kTimeout, -1, now, index, 0, {}});
        return;
      }
      f.timeout_pending = false;
      if (f.finished || f.expected >= f.next_seq) return;
      if (f.drops == f.drops_handled) {
        // Nothing of it was lost: its packets are still queued somewhere; look again later.
        arm_timeout(c, index, now + config_.nack_interval);
        return;
      }
      f.drops_handled = f.drops;
      go_back(c, index, f.expected);
      return;
    }
    case kAlpha: {
      Flow& f = flows_[index];
      if (gen != (f.alpha_gen & 0xffffff) || (single_ ? f.finished : sent_all(f))) return;
      f.alpha *= 1.0 - config_.dcqcn.g;
      schedule(c, now + config_.dcqcn.alpha_interval, kAlpha, index, f.alpha_gen);
      return;
    }
    case kIncrease: {
      Flow& f = flows_[index];
      if (gen != (f.increase_gen & 0xffffff) || (single_ ? f.finished : sent_all(f))) return;
      f.time_stage++;
      increase(f);
      if (f.rc < f.line) {
        schedule(c, now + config_.dcqcn.increase_interval, kIncrease, index, f.increase_gen);
      }
      return;
    }
    case kAck:
      on_ack(c, index);
      return;
    case kCredit:
      ports_[index].credit_wake = false;
      try_send(c, index);
      arm_credit_wake(c, index);  // still starved (busy, or the return too small): the next one
      return;
    case kCheck:
      fast_forward_check(c);
      return;
    case kFinish: {
      Flow& f = flows_[index];
      f.finished = true;
      if (single_) pending_finishes_--;
      if (f.packets > 0) {
        // The idle path: every wire byte at the sender's rate, the first packet's store and
        // forward at each further hop, the latency of every hop.
        double ideal = static_cast<double>(f.bytes + f.packets * header_) / f.line +
                       (f.head + f.back + f.tail).to_seconds();
        const auto wire = static_cast<double>(std::min(f.bytes, config_.mtu) + header_);
        for (int i = f.begin + 1; i <= f.end; ++i) ideal += wire / ports_[f.path[i]].rate;
        const SimTime fct = now - f.started_at + f.head;
        completions_.push_back({fct, fct.to_seconds() / ideal});
      }
      if (f.done) {
        Done done = std::move(f.done);
        done(now);
      }
      return;
    }
    case kTick:
      return;
  }
}

void PacketNetwork::try_send(Part& c, int channel) {
  Port& p = ports_[channel];
  if (p.paused) return;
  if (busy(c, p)) {
    arm_port(c, channel);
    return;
  }
  if (!p.queue.empty()) {
    const int id = p.queue.front();
    if (!has_credit(c, channel, wire_bytes(c.packets[id]))) return;
    p.queue.pop_front();
    const Packet& pk = c.packets[id];
    const int64_t wire = wire_bytes(pk);
    // ECN on dequeue, against the queue it leaves (HPCC/SimAI's switch).
    if (config_.ecn && is_switch(p.from)) {
      const int64_t q = p.queue_bytes;
      bool mark = q > p.kmax;
      if (!mark && q > p.kmin) {
        const double prob =
            config_.pmax * static_cast<double>(q - p.kmin) / static_cast<double>(p.kmax - p.kmin);
        // One stream in event order; with partitions, the port's own.
        uint64_t* stream = single_ ? &c.rng : &p.rng;
        mark = static_cast<double>(next_random(stream) >> 11) * 0x1.0p-53 < prob;
      }
      if (mark && !c.packets[id].ecn) {
        c.packets[id].ecn = true;
        c.stats.ecn_marks++;
      }
    }
    change_queue(c, channel, -wire);
    if (config_.cc == CongestionControl::kHpcc && is_switch(p.from) &&
        c.packets[id].int_hops < kMaxIntHops) {
      IntRecord& rec =
          c.int_records[static_cast<size_t>(id) * kMaxIntHops + c.packets[id].int_hops++];
      rec.channel = channel;
      rec.time = c.sim->now();
      rec.tx_bytes = p.tx_bytes;
      rec.queue = p.queue_bytes;
    }
    if (c.packets[id].in_channel >= 0 && is_switch(p.from)) {
      const int in = c.packets[id].in_channel;
      account(in, -wire);
      check_resume(c, in);
      // Its buffer is free again: the credits go back up the link it came on.
      if (credit_mode_) {
        const SimTime back = c.sim->now() + ports_[in].latency;
        Part& up = part_of_channel(in);
        if (&up == &c) {
          ports_[in].returns.emplace_back(back, wire);
          arm_credit_wake(c, in);
        } else {
          PREFLIGHT_CHECK(back >= horizon_);
          c.outbox.push_back(Message{Message::kReturn, up.index, back, in, wire, {}});
        }
      }
    }
    transmit(c, channel, id);
    return;
  }
  if (!p.senders.empty()) send_from_flows(c, channel);
}

// A NIC's egress serves its flows round-robin: the first whose pacing allows it now.
bool PacketNetwork::send_from_flows(Part& c, int channel) {
  Port& p = ports_[channel];
  const SimTime now = c.sim->now();
  // Flows with nothing left to send leave the rotation (a NACK or a timeout puts them back).
  if (p.prune) {
    p.prune = false;
    size_t kept = 0, next = 0;
    for (size_t i = 0; i < p.senders.size(); ++i) {
      Flow& f = flows_[p.senders[i]];
      if (sent_all(f)) {
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
    if (sent_all(f)) {  // leaves at the next prune
      p.prune = true;
      continue;
    }
    if (!window_open(f)) {
      // An ACK reopens it; without one (a lost packet and no later arrival) a timeout resends.
      arm_timeout(c, flow, now + config_.nack_interval);
      continue;
    }
    if (f.next_avail > now) {
      earliest = std::min(earliest, f.next_avail);
      continue;
    }
    const int64_t next_wire = std::min(config_.mtu, f.bytes - f.next_seq * config_.mtu) + header_;
    if (!has_credit(c, channel, next_wire)) return false;  // the credits' return tries again
    p.next_sender = i + 1 == n ? 0 : i + 1;
    const int id = alloc_packet(c);
    Packet& pk = c.packets[id];
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
    c.stats.packets++;
    if (config_.cc == CongestionControl::kDcqcn && f.reacting) {
      f.byte_count += wire;
      if (f.byte_count >= config_.dcqcn.byte_counter) {
        f.byte_count = 0;
        f.byte_stage++;
        increase(f);
      }
    }
    // Its last packet: if it is lost, no later packet makes the receiver NACK it. With
    // partitions the flow is ending, to finish within a window or two (counted once, however
    // often go-back-N resends it); InfiniBand's credits lose nothing.
    if (f.next_seq == f.packets) {
      p.prune = true;
      if (!single_ && !f.ending_counted) {
        f.ending_counted = true;
        c.ending++;
      }
      if (single_ || !credit_mode_) arm_timeout(c, flow, now + config_.nack_interval);
    }
    transmit(c, channel, id);
    return true;
  }
  if (earliest != SimTime::max() && earliest < p.wake_at) {
    p.wake_at = earliest;
    schedule(c, earliest, kWake, channel);
  }
  return false;
}

void PacketNetwork::rotate(Part& c, int flow) {
  Flow& f = flows_[flow];
  const int ch = f.path[f.begin];
  if (!f.in_rotation) {
    f.in_rotation = true;
    ports_[ch].senders.push_back(flow);
    // A flow with nothing to send (an ACK reopening a finished flow's window) leaves again at
    // the port's next look.
    if (sent_all(f)) ports_[ch].prune = true;
  }
  try_send(c, ch);
}

void PacketNetwork::transmit(Part& c, int channel, int packet) {
  Port& p = ports_[channel];
  Packet& pk = c.packets[packet];
  const int64_t wire = wire_bytes(pk);
  p.tx_bytes += wire;
  if (credit_mode_) p.credits -= wire;
  const SimTime end =
      c.sim->now() + (wire == config_.mtu + header_ ? p.full_time : wire_time(wire, p.rate));
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
    deliver(c, packet, end + p.latency);  // its arrival at the receiver
  } else if (single_ || part_of_[p.to] == c.index) {
    schedule(c, end + p.latency, kArrive, packet);
  } else {
    // Into the next hop's partition at the window's end; its slot here is free at once.
    const SimTime at = end + p.latency;
    PREFLIGHT_CHECK(at >= horizon_);
    c.outbox.push_back(Message{Message::kPacket, part_of_[p.to], at, 0, stash_ints(c, packet), pk});
    c.free_packets.push_back(packet);
  }
  arm_port(c, channel);
}

void PacketNetwork::arm_port(Part& c, int channel) {
  Port& p = ports_[channel];
  if (!busy(c, p)) return;
  if (!p.queue.empty()) {
    if (!p.done_pending) {
      p.done_pending = true;
      schedule(c, p.free_at, kTxDone, channel);
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
    if (sent_all(f)) continue;
    next = std::min(next, window_open(f) ? std::max(f.next_avail, p.free_at) : p.free_at);
  }
  if (next != SimTime::max() && next < p.wake_at) {
    p.wake_at = next;
    schedule(c, next, kWake, channel);
  }
}

void PacketNetwork::tx_done(Part& c, int channel) {
  ports_[channel].done_pending = false;
  try_send(c, channel);
}

}  // namespace packet
}  // namespace preflight
