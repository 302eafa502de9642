// PacketNetwork's congestion control: DCQCN's notification point at the receiver
// (notify_congestion) and its reaction point at the sender (on_cnp, increase; Zhu et al.,
// SIGCOMM 2015), and HPCC's window and rate from in-band telemetry (window_open, on_ack,
// hpcc_update; Li et al., SIGCOMM 2019). The model is described in packet_network.h.
#include <algorithm>

#include "network/packet/packet_network.h"

namespace preflight {
namespace packet {

void PacketNetwork::notify_congestion(Part& c, int flow) {
  Flow& f = flows_[flow];
  const SimTime now = c.sim->now();
  if (config_.cc != CongestionControl::kDcqcn ||
      (f.cnp_sent && now - f.last_cnp < config_.dcqcn.cnp_interval)) {
    return;
  }
  f.cnp_sent = true;
  f.last_cnp = now;
  c.stats.cnps++;
  schedule(c, now + f.back, kCnp, flow);
}

bool PacketNetwork::window_open(const Flow& f) const {
  if (config_.cc != CongestionControl::kHpcc) return true;
  // At least one packet may always be in flight.
  const double in_flight = static_cast<double>((f.next_seq - f.acked) * config_.mtu);
  return f.next_seq == f.acked || in_flight < f.window;
}

void PacketNetwork::on_ack(Part& c, int packet) {
  const Packet ack = c.packets[packet];
  Flow& f = flows_[ack.flow];
  // With partitions the sender cannot see the receiver's finish: every packet acknowledged is
  // its own sign of it.
  const bool done = single_ ? f.finished : f.acked >= f.packets;
  if (!done) {
    f.acked = std::max(f.acked, ack.seq + 1);
    hpcc_update(c, f, packet);
  }
  c.free_packets.push_back(packet);
  if (!done) rotate(c, ack.flow);  // the window may have opened
}

// HPCC's sender (the HPCC/SimAI ns-3 model's UpdateRateHp, single rate with fast react).
void PacketNetwork::hpcc_update(Part& c, Flow& f, int packet) {
  const HpccConfig& h = config_.hpcc;
  const Packet& ack = c.packets[packet];
  const IntRecord* hops = &c.int_records[static_cast<size_t>(packet) * kMaxIntHops];
  const int n = ack.int_hops;
  if (f.hp_last_update < 0 || n != f.hp_nhops) {
    // The first telemetry: nothing to take a rate from yet.
    std::copy_n(hops, n, f.hp_hops);
    f.hp_nhops = n;
    f.hp_last_update = f.next_seq;
    return;
  }
  const double rtt = f.base_rtt.to_seconds();
  double u_max = 0, tau_max = 0;
  bool updated = false;
  for (int i = 0; i < n; ++i) {
    const IntRecord& now = hops[i];
    IntRecord& prev = f.hp_hops[i];
    if (now.time <= prev.time) continue;  // no newer sample of this hop
    const double tau = (now.time - prev.time).to_seconds();
    const double b = ports_[now.channel].rate;
    const double tx_rate = static_cast<double>(now.tx_bytes - prev.tx_bytes) / tau;
    const double q = static_cast<double>(std::min(now.queue, prev.queue));
    const double u = tx_rate / b + q / (b * rtt);
    if (u > u_max) {
      u_max = u;
      tau_max = tau;
    }
    prev = now;
    updated = true;
  }
  if (!updated) return;
  const double tau = std::min(tau_max, rtt);
  f.hp_u = (f.hp_u * (rtt - tau) + u_max * tau) / rtt;
  const double ratio = f.hp_u / h.eta;
  const double ai = h.additive_fraction * f.line;
  double rate = 0;
  int stage = 0;
  if (ratio >= 1 || f.hp_stage >= h.max_stage) {
    rate = f.hp_rc / ratio + ai;
  } else {
    rate = f.hp_rc + ai;
    stage = f.hp_stage + 1;
  }
  rate = std::clamp(rate, h.min_rate.bytes_per_second(), f.line);
  f.rc = rate;
  f.window = rate * rtt;
  // The reference commits once per RTT: on the first ACK of a packet sent after the last commit.
  if (ack.seq >= f.hp_last_update) {
    f.hp_rc = rate;
    f.hp_stage = stage;
    f.hp_last_update = f.next_seq;
  }
}

void PacketNetwork::on_cnp(Part& c, int flow) {
  Flow& f = flows_[flow];
  if (single_ ? f.finished : sent_all(f)) return;
  const DcqcnConfig& d = config_.dcqcn;
  f.rt = f.rc;
  f.rc = std::max(d.min_rate.bytes_per_second(), f.rc * (1.0 - f.alpha / 2.0));
  f.alpha = (1.0 - d.g) * f.alpha + d.g;
  f.time_stage = f.byte_stage = 0;
  f.byte_count = 0;
  f.reacting = true;
  // The timers restart from the CNP.
  ++f.increase_gen;
  ++f.alpha_gen;
  schedule(c, c.sim->now() + d.increase_interval, kIncrease, flow, f.increase_gen);
  schedule(c, c.sim->now() + d.alpha_interval, kAlpha, flow, f.alpha_gen);
}

void PacketNetwork::increase(Flow& f) {
  const DcqcnConfig& d = config_.dcqcn;
  // Fast recovery while both stages are under F; hyper increase once both are past it;
  // additive in between.
  const int hi = std::max(f.time_stage, f.byte_stage);
  const int lo = std::min(f.time_stage, f.byte_stage);
  if (hi >= d.fast_recovery) {
    f.rt += (lo > d.fast_recovery ? d.hyper : d.additive).bytes_per_second() * f.line / kRate40G;
    f.rt = std::min(f.rt, f.line);
  }
  f.rc = std::min(f.line, (f.rt + f.rc) / 2.0);
}

}  // namespace packet
}  // namespace preflight
