// The receiver side of the packet network (docs/packet_network.md): in-order delivery with
// go-back-N NACKs, out-of-order placement under per-packet routing, CNPs and ACKs sent back, a
// flow's finish, and the sender's timeout for a lost last packet.
#include "network/packet/packet_network.h"

namespace preflight {
namespace packet {

void PacketNetwork::deliver_unordered(int packet) {
  const Packet pk = packets_[packet];
  free_packets_.push_back(packet);
  Flow& f = flows_[pk.flow];
  if (f.finished) return;
  if (f.got.empty()) f.got.assign(static_cast<size_t>(f.packets), 0);
  if (f.got[pk.seq]) return;  // a duplicate: resent after a timeout that a late packet beat
  f.got[pk.seq] = 1;
  f.received++;
  stats_.delivered++;
  while (f.expected < f.packets && f.got[f.expected]) f.expected++;
  const SimTime now = sim_->now();
  if (pk.ecn) notify_congestion(pk.flow);
  if (f.received == f.packets) finish_at(pk.flow, now + f.tail);
}

void PacketNetwork::deliver(int packet, SimTime now) {
  if (config_.routing != PacketRouting::kEcmp) {
    deliver_unordered(packet);
    return;
  }
  const Packet pk = packets_[packet];
  Flow& f = flows_[pk.flow];
  const bool acks = config_.cc == CongestionControl::kHpcc;
  if (f.finished || pk.seq != f.expected || !acks) free_packets_.push_back(packet);
  if (f.finished) return;
  if (pk.seq != f.expected) {
    // A gap: a packet before it was dropped. Go-back-N: NACK the expected one.
    if (pk.seq > f.expected &&
        (f.nacked != f.expected || now - f.last_nack >= config_.nack_interval)) {
      f.nacked = f.expected;
      f.last_nack = now;
      f.nack_seq = f.expected;
      schedule(now + f.back, kNack, pk.flow);
    }
    return;
  }
  f.expected++;
  f.last_delivery = now;
  stats_.delivered++;
  if (acks) {
    // The ACK carries the packet's telemetry back: the packet's slot holds it until then.
    stats_.acks++;
    schedule(now + f.back, kAck, packet);
  }
  if (pk.ecn) notify_congestion(pk.flow);
  if (f.expected == f.packets) finish_at(pk.flow, now + f.tail);
}

void PacketNetwork::finish_at(int flow, SimTime at) {
  Flow& f = flows_[flow];
  f.finished = true;
  if (f.in_rotation) ports_[f.path[f.begin]].prune = true;
  pending_finishes_++;
  flow_epoch_++;
  schedule(at, kFinish, flow);
}

void PacketNetwork::arm_timeout(int flow, SimTime at) {
  Flow& f = flows_[flow];
  if (f.timeout_pending) return;
  f.timeout_pending = true;
  schedule(at, kTimeout, flow);
}

}  // namespace packet
}  // namespace preflight
