// The switch side of the packet network (docs/packet_network.md): the shared buffer's
// accounting per ingress port, PFC's dynamic threshold and its PAUSE/RESUME frames, a packet's
// arrival at a port (drop or queue), and the next hop of per-packet routing.
#include <algorithm>
#include <vector>

#include "base/check.h"
#include "network/packet/packet_network.h"

namespace preflight {
namespace packet {

void PacketNetwork::account(int channel, int64_t delta) {
  SwitchState& s = switches_[ports_[channel].to];
  Port& p = ports_[channel];
  const int64_t before = std::max<int64_t>(0, p.ingress - config_.reserve);
  p.ingress += delta;
  const int64_t after = std::max<int64_t>(0, p.ingress - config_.reserve);
  s.shared += after - before;
  s.used += delta;
}

int64_t PacketNetwork::pfc_threshold(int sw) const {
  const SwitchState& s = switches_[sw];
  const int64_t free = config_.switch_buffer - s.headroom - s.reserve - s.shared;
  return static_cast<int64_t>(config_.pfc_alpha * static_cast<double>(std::max<int64_t>(0, free)));
}

void PacketNetwork::check_pause(Part& c, int channel) {
  if (!config_.pfc || ports_[channel].paused_up) return;
  const int sw = ports_[channel].to;
  if (ports_[channel].ingress - config_.reserve < std::max<int64_t>(1, pfc_threshold(sw))) return;
  ports_[channel].paused_up = true;
  c.stats.pauses++;
  schedule(c, c.sim->now() + ports_[channel].latency, kPause, channel);
}

void PacketNetwork::check_resume(Part& c, int channel) {
  if (!ports_[channel].paused_up) return;
  const int sw = ports_[channel].to;
  const int64_t shared = ports_[channel].ingress - config_.reserve;
  if (shared > 0 && shared + config_.resume_offset > pfc_threshold(sw)) return;
  ports_[channel].paused_up = false;
  schedule(c, c.sim->now() + ports_[channel].latency, kResume, channel);
}

void PacketNetwork::arrive(Part& c, int packet) {
  Packet& pk = c.packets[packet];
  Flow& f = flows_[pk.flow];
  if (pk.hop > f.end) {
    deliver(c, packet, c.sim->now());
    return;
  }
  const int in = pk.in_channel;
  const int node = ports_[in].to;
  const int out = config_.routing != PacketRouting::kEcmp && is_switch(node) ? next_hop(c, node, pk)
                                                                             : f.path[pk.hop];
  Port& q = ports_[out];
  const int64_t wire = wire_bytes(pk);
  if (is_switch(node)) {
    SwitchState& s = switches_[node];
    // Credits keep InfiniBand lossless: the packet was sent into buffer held for it.
    bool drop = !credit_mode_ && s.used + wire > config_.switch_buffer;  // headroom included
    if (!config_.pfc && !credit_mode_) {
      const double room = config_.dt_alpha * static_cast<double>(config_.switch_buffer - s.used);
      drop = drop || static_cast<double>(q.queue_bytes + wire) > room;
    }
    if (drop) {
      c.stats.drops++;
      if (single_) {
        f.drops++;
      } else {
        c.dropped.push_back(pk.flow);  // summed between windows (exchange)
      }
      c.free_packets.push_back(packet);
      return;
    }
    account(in, wire);
    check_pause(c, in);
  } else {
    pk.in_channel = -1;  // not a switch: nothing to account
  }
  q.queue.push_back(packet);
  change_queue(c, out, wire);
  q.max_queue = std::max(q.max_queue, q.queue_bytes);
  try_send(c, out);
}

void PacketNetwork::warm_next_hops(int nic) {
  if (warmed_.empty()) warmed_.assign(topo_.nodes.size(), 0);
  if (warmed_[nic]) return;
  warmed_[nic] = 1;
  for (int v = 0; v < static_cast<int>(topo_.nodes.size()); ++v) {
    if (is_switch(v)) router_.next_hops(v, nic);
  }
}

int PacketNetwork::next_hop(const Part& c, int node, const Packet& packet) {
  const std::vector<int>& choices = router_.next_hops(node, flows_[packet.flow].dst_nic);
  PREFLIGHT_CHECK(!choices.empty());
  if (choices.size() == 1) return choices[0];
  uint64_t h = config_.seed ^ 0x5bd1e995ull;
  h = next_random(&h) ^ static_cast<uint64_t>(packet.flow);
  h = next_random(&h) ^ static_cast<uint64_t>(packet.seq);
  h = next_random(&h) ^ static_cast<uint64_t>(node);
  const size_t first = next_random(&h) % choices.size();
  if (config_.routing == PacketRouting::kSpray) return choices[first];
  // Adaptive: the least bytes waiting at the output, the packet on the wire counted.
  int best = -1;
  int64_t least = 0;
  for (size_t k = 0; k < choices.size(); ++k) {
    const int ch = choices[(first + k) % choices.size()];
    const Port& p = ports_[ch];
    const int64_t load = p.queue_bytes + (busy(c, p) ? p.current_wire : 0);
    if (best < 0 || load < least) {
      best = ch;
      least = load;
    }
  }
  return best;
}

}  // namespace packet
}  // namespace preflight
