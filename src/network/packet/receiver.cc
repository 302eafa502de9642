// The receiver side of the packet network (docs/packet_network.md): in-order delivery with
// go-back-N NACKs, out-of-order placement under per-packet routing, CNPs and ACKs sent back, a
// flow's finish, and the sender's timeout for a lost last packet.
#include "base/check.h"
#include "network/packet/packet_network.h"

namespace preflight {
namespace packet {

void PacketNetwork::deliver_unordered(Part& c, int packet) {
  const Packet pk = c.packets[packet];
  c.free_packets.push_back(packet);
  Flow& f = flows_[pk.flow];
  if (f.finished) return;
  if (f.got.empty()) f.got.assign(static_cast<size_t>(f.packets), 0);
  if (f.got[pk.seq]) return;  // a duplicate: resent after a timeout that a late packet beat
  f.got[pk.seq] = 1;
  f.received++;
  c.stats.delivered++;
  while (f.expected < f.packets && f.got[f.expected]) f.expected++;
  const SimTime now = c.sim->now();
  if (pk.ecn) notify_congestion(c, pk.flow);
  if (f.received == f.packets) finish_at(c, pk.flow, now + f.tail);
}

void PacketNetwork::deliver(Part& c, int packet, SimTime now) {
  if (config_.routing != PacketRouting::kEcmp) {
    deliver_unordered(c, packet);
    return;
  }
  const Packet pk = c.packets[packet];
  Flow& f = flows_[pk.flow];
  const bool acks = config_.cc == CongestionControl::kHpcc;
  // With partitions an ACK to another partition's sender takes the packet's telemetry with it.
  const int sender = single_ ? c.index : part_of_[ports_[f.path[f.begin]].from];
  const bool ack_here = acks && sender == c.index;
  if (f.finished || pk.seq != f.expected || !ack_here) c.free_packets.push_back(packet);
  if (f.finished) return;
  if (pk.seq != f.expected) {
    // A gap: a packet before it was dropped. Go-back-N: NACK the expected one.
    if (pk.seq > f.expected &&
        (f.nacked != f.expected || now - f.last_nack >= config_.nack_interval)) {
      f.nacked = f.expected;
      f.last_nack = now;
      send_nack(c, now + f.back, pk.flow, f.expected);
    }
    return;
  }
  f.expected++;
  f.last_delivery = now;
  c.stats.delivered++;
  if (acks) {
    // The ACK carries the packet's telemetry back: the packet's slot holds it until then.
    c.stats.acks++;
    if (ack_here) {
      schedule(c, now + f.back, kAck, packet);
    } else {
      PREFLIGHT_CHECK_MSG(now + f.back >= horizon_,
                          "packet network: an ACK crosses partitions inside a window");
      c.outbox.push_back(
          Message{Message::kAck, sender, now + f.back, 0, stash_ints(c, packet), pk});
    }
  }
  if (pk.ecn) notify_congestion(c, pk.flow);
  if (f.expected == f.packets) finish_at(c, pk.flow, now + f.tail);
}

void PacketNetwork::finish_at(Part& c, int flow, SimTime at) {
  Flow& f = flows_[flow];
  f.finished = true;
  if (single_) {
    if (f.in_rotation) ports_[f.path[f.begin]].prune = true;
    pending_finishes_++;
    flow_epoch_++;
  } else if (f.packets > 0) {
    // Its sender counted it ending when it sent the last packet (its rotation dropped it then).
    c.ending--;
  }
  schedule(c, at, kFinish, flow);
}

void PacketNetwork::send_nack(Part& c, SimTime at, int flow, int64_t seq) {
  if (single_) {
    flows_[flow].nack_seq = seq;
    schedule(c, at, kNack, flow);
    return;
  }
  // With partitions the packet to go back to travels with the NACK: the receiver's own
  // fields may move on before the sender's partition reads it.
  const Flow& f = flows_[flow];
  const int owner = part_of_[ports_[f.path[f.begin]].from];
  if (owner == c.index) {
    take_nack(c, at, flow, seq);
    return;
  }
  PREFLIGHT_CHECK_MSG(at >= horizon_, "packet network: a NACK crosses partitions inside a window");
  c.outbox.push_back(Message{Message::kNack, owner, at, flow, seq, {}});
}

void PacketNetwork::go_back(Part& c, int flow, int64_t seq) {
  Flow& f = flows_[flow];
  if (seq >= f.next_seq) return;
  c.stats.retransmitted += f.next_seq - seq;
  f.next_seq = seq;
  rotate(c, flow);
}

void PacketNetwork::arm_timeout(Part& c, int flow, SimTime at) {
  Flow& f = flows_[flow];
  if (f.timeout_pending) return;
  f.timeout_pending = true;
  schedule(c, at, kTimeout, flow);
}

}  // namespace packet
}  // namespace preflight
