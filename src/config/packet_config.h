// simulation.packet: the packet-level network's configuration (a part of Scenario,
// config/scenario.h; read by config/job_sections.cc, used by network/packet/).
#pragma once

#include <cstdint>

#include "base/units.h"

namespace preflight {

enum class CongestionControl : uint8_t { kNone, kDcqcn, kHpcc };

// DCQCN's reaction point. Defaults: Zhu et al. 2015 (g, the 55 µs timers, the 10 MB byte
// counter, F = 5, R_AI = 40 Mb/s, the 50 µs CNP interval); R_HAI is 10·R_AI as in the Mellanox
// and HPCC implementations, and the floor 100 Mb/s is theirs (shared/reference/network_models.md
// §1.6). R_AI and R_HAI are the paper's at its 40 Gb/s and scale with the sender's line rate, as
// the ECN thresholds do (HPCC/SimAI's run.py scales them with the link's bandwidth too): the
// protocol's dynamics in units of the line rate stay the paper's.
struct DcqcnConfig {
  double g = 1.0 / 256;
  SimTime alpha_interval = SimTime::microseconds(55);
  SimTime increase_interval = SimTime::microseconds(55);
  int64_t byte_counter = 10'000'000;
  int fast_recovery = 5;
  Bandwidth additive = Bandwidth::gigabits_per_second(0.04);
  Bandwidth hyper = Bandwidth::gigabits_per_second(0.4);
  Bandwidth min_rate = Bandwidth::gigabits_per_second(0.1);
  SimTime cnp_interval = SimTime::microseconds(50);
};

// HPCC (Li et al., SIGCOMM 2019) at the sender, from the in-band telemetry each switch egress
// stamps on the data packets and the receiver echoes in a per-packet ACK. Defaults: the paper's
// η = 0.95 and maxStage = 5; the additive step W_AI = W_init·(1 − η)/N with N = 125 concurrent
// flows, 4·10⁻⁴ of the line rate (10·bw/25 Mb/s in HPCC/SimAI's run.py); the INT header of up
// to 5 hops of 8 bytes and 2 of its own (42 bytes on every data packet, the ns-3 model's).
struct HpccConfig {
  double eta = 0.95;
  int max_stage = 5;
  double additive_fraction = 4e-4;  // W_AI as a fraction of the line rate
  int64_t int_header = 42;
  Bandwidth min_rate = Bandwidth::gigabits_per_second(0.1);
};

// The link layer under the packets: RoCEv2 (Ethernet: PFC keeps it lossless, ECN marks for the
// congestion control) or InfiniBand (credit-based link-level flow control, no PFC).
enum class LinkLayer : uint8_t { kRoce, kInfiniband };

// How the switches choose among equal-cost next hops: per flow (ECMP's hash, as the flow network
// routes), per packet at random (packet spraying), or per packet onto the least-queued one
// (adaptive routing, as InfiniBand AR and Spectrum-X do); the last two deliver out of order.
enum class PacketRouting : uint8_t { kEcmp, kSpray, kAdaptive };

// How the flow-level network routes a flow among equal-cost paths: on one path by ECMP's
// per-flow hash, or spread evenly over all of them (adaptive routing at its ideal: every
// equal-cost link of a hop shares the load, so each hop is one resource of their summed
// capacity). InfiniBand fabrics take adaptive by default: the subnet manager enables adaptive
// routing with AR groups of all minimal-hop ports in fat trees (NVIDIA InfiniBand Cluster
// Bring-up Procedure, "Adaptive Routing": enabled by default in opensm.conf, TREE algorithm),
// and NCCL requests it on InfiniBand (NCCL_IB_ADAPTIVE_ROUTING: 1 on InfiniBand, 0 on RoCE).
// Ethernet switches ship with it off, so RoCE fabrics take ECMP.
enum class FlowRouting : uint8_t { kEcmp, kAdaptive };

// The flow-level network's routing where the scenario names none: by the fabric's link layer.
inline FlowRouting default_flow_routing(LinkLayer fabric) {
  return fabric == LinkLayer::kInfiniband ? FlowRouting::kAdaptive : FlowRouting::kEcmp;
}

// simulation.packet: the packet-level network's packets, switch buffers, flow control and
// congestion control (network/packet/packet_network.h, docs/packet_network.md).
struct PacketNetworkConfig {
  LinkLayer link_layer = LinkLayer::kRoce;
  PacketRouting routing = PacketRouting::kEcmp;
  int64_t mtu = 4096;  // payload bytes per packet (RoCEv2's largest IB MTU)
  // Wire bytes per packet beyond the payload. RoCEv2: Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 +
  // ICRC 4 + FCS 4, and the preamble (8) and inter-frame gap (12) the wire carries between
  // frames. InfiniBand: kIbHeader.
  int64_t header = 82;
  // InfiniBand's data packet: local route header 8 + base transport header 12 + invariant CRC 4 +
  // variant CRC 2 (IBTA specification vol. 1, ch. 7); no preamble or gap between packets, and a
  // global route header (40) only between subnets.
  static constexpr int64_t kIbHeader = 26;
  // InfiniBand: the receive buffer each switch ingress port advertises as credits to the port
  // upstream (bytes); 0 = the link's round trip at line rate plus two packets, the least that
  // keeps the link busy (the specification sizes the credit buffer to the cable for that reason).
  int64_t credit_buffer = 0;
  int64_t switch_buffer = int64_t{32} << 20;  // shared by one switch's ports (SimAI.conf)
  bool pfc = true;
  double pfc_alpha = 1.0 / 8;    // the dynamic PFC threshold's share of the free buffer
  int64_t reserve = 4096;        // per ingress port, before shared usage
  int64_t resume_offset = 3072;  // resume this far below the threshold
  double dt_alpha = 1.0;         // without PFC: an egress queue's share of the free buffer
  bool ecn = true;
  int64_t kmin = 5000;    // bytes at 40 Gb/s (DCQCN's paper), scaled by the port's line rate
  int64_t kmax = 200000;  // bytes at 40 Gb/s
  double pmax = 0.01;
  CongestionControl cc = CongestionControl::kDcqcn;
  DcqcnConfig dcqcn;
  HpccConfig hpcc;
  SimTime nack_interval = SimTime::microseconds(500);  // HPCC/SimAI's NACK generation interval
  uint64_t seed = 0;                                   // simulation.seed
  // Fast-forward of steady states (docs/packet_network.md): every `fast_forward_window` of
  // simulated time the network measures each active flow's delivery rate; once the same flows
  // have run two windows in a row at rates within `fast_forward_tolerance` of each other, with
  // no loss and no port held by flow control, it jumps ahead to two windows before the first
  // of them would finish (or to the next event outside the network), crediting each flow its
  // rate times the jump.
  bool fast_forward = false;
  SimTime fast_forward_window = SimTime::microseconds(50);
  double fast_forward_tolerance = 0.01;
  // A NIC sends at most this fraction of its line rate (not a key: the packet backend sets it so
  // that payload reaches cluster.nic_efficiency of line rate, headers counted).
  double nic_pacing = 1.0;
  // Partitions (docs/packet_network.md "Partitions"): the NICs and switches split into this
  // many parts, each with its own event queue, run side by side in windows of simulated time.
  // 0 = auto: one per leaf switch (at most kAutoPartitions) where partitions_supported(), else
  // one. The outputs depend on the partitions (their tie order and ECN streams), not on the
  // threads.
  static constexpr int kAutoPartitions = 16;
  static constexpr int kMaxPartitions = 256;
  int partitions = 1;
  // Threads running the partitions (0 = the machine's cores; at most the partitions).
  int threads = 1;
};

// Whether partitions can run `c`: anything but the fast-forward (its check reads every flow at
// once). InfiniBand or RoCE, with or without PFC, per-flow or per-packet routing, any congestion
// control: go-back-N's NACKs and HPCC's ACKs (with their telemetry) cross between partitions as
// messages, and a sender's timeout is judged between windows. Else `why` (if given) says what
// stands in the way, as a config key's expected value.
inline bool partitions_supported(const PacketNetworkConfig& c, const char** why = nullptr) {
  const char* reason = nullptr;
  if (c.fast_forward) reason = "fast_forward: false (its check reads every flow at once)";
  if (why != nullptr) *why = reason;
  return reason == nullptr;
}

}  // namespace preflight
