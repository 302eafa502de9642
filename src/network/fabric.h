// Fabric: the seam between what runs on the GPUs and the network under contention. A fabric
// carries GPU-to-GPU flows and knows nothing of layers, ranks or collectives: the execution core
// (exec/transport.h) turns pipeline sends and collective plans into flows (collective/
// collective_flows.h for the latter) and hands them here. GPU g sits on node g / gpus_per_node.
// A fabric is created per run on the run's Simulator (NetworkBackend::fabric_factory) and calls
// each completion callback exactly once, from a simulator event.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/units.h"

namespace preflight {

class Simulator;  // engine/simulator.h

// One GPU-to-GPU transfer.
struct GpuFlow {
  int src = 0;  // GPU
  int dst = 0;  // GPU
  // Index, on src's node, of the NIC the flow leaves through (NCCL's channel choice), or -1 for
  // the one routing gives src (its rail's NIC, or PXN's).
  int nic = -1;
  int64_t bytes = 0;
};

// Load of one directed link channel over the run.
struct LinkLoad {
  std::string name;  // "nic3.5>leaf0.5"
  std::string tier;  // LinkTier name: scale_up, host_nic, nic_leaf, leaf_spine, spine_core
  double bytes = 0;
  double utilization = 0;  // bytes / (capacity · run time)
};

// Load of one link tier over time: Σ rates of the flows on the tier's channels / Σ capacities.
struct TierSeries {
  std::string tier;     // LinkTier name
  double capacity = 0;  // bytes/s, both directions of every link of the tier (line rate)
  double mean = 0;      // bytes carried / (capacity · run time)
  double peak = 0;      // highest instantaneous value
  // (from, utilization): a step function, each value holding until the next point's time: the
  // time-weighted mean over each of 500 equal slices of the run (a value equal to the previous
  // one is left out), and a last point at the run's end.
  std::vector<std::pair<SimTime, double>> points;
};

// A switch port of the packet-level network over the run: per slice (equal slices, at most 256)
// its time-weighted mean and longest output queue and the fraction it was held by link-level
// flow control (PFC pauses, or InfiniBand's want of credits).
struct PortSeries {
  std::string port;  // "leaf0.0>nic3.0"
  int64_t max_queue = 0;
  double held_s = 0;
  struct Point {
    SimTime from;
    double mean_queue = 0;  // bytes
    int64_t max_queue = 0;  // bytes
    double held = 0;        // fraction of the slice
  };
  std::vector<Point> points;
};

// The packet-level network's counters (simulation.network: packet).
struct PacketCounters {
  int64_t packets = 0;  // data packets sent (retransmissions included)
  int64_t ecn_marks = 0;
  int64_t cnps = 0;           // congestion notifications the receivers sent
  int64_t pauses = 0;         // PFC PAUSE frames the switches sent
  bool infiniband = false;    // the link layer: InfiniBand's credits, not RoCE's PFC
  int64_t credit_stalls = 0;  // InfiniBand: times a port waited for its downstream's credits
  int64_t drops = 0;
  int64_t retransmitted = 0;  // packets sent again (go-back-N)
  int64_t events = 0;         // the packet simulation's events
  // Partitions (simulation.packet.partitions): how many ran side by side, and the windows of
  // simulated time they ran in.
  int partitions = 1;
  int64_t windows = 0;
  // Fast-forward (simulation.packet.fast_forward): jumps taken, the simulated time they covered
  // and the packets credited across them (counted in `packets`).
  int64_t fast_forwards = 0;
  double skipped_s = 0;
  int64_t skipped_packets = 0;
  int64_t max_queue = 0;  // the longest output queue of any port, bytes
  std::string max_queue_port;
  double max_paused_s = 0;  // the longest time PFC (or want of credits) held one port
  std::string max_paused_port;
  // Flow completion times (first byte sent to last byte in) of the flows that carried bytes:
  // median, 99th percentile and longest, and their slowdown over an idle path's time.
  int64_t completed = 0;
  double fct_p50_s = 0, fct_p99_s = 0, fct_max_s = 0;
  double slowdown_p50 = 0, slowdown_p99 = 0, slowdown_max = 0;
  // The hottest ports: the four with the longest queues, then up to two more held longest.
  std::vector<PortSeries> hot_ports;
};

struct NetworkStats {
  int64_t flows = 0;
  int64_t solves = 0;  // max-min rate recomputations (flow network)
  // Flow network under adaptive routing: hops whose equal-cost channels overlap another hop's
  // set and so ran on one channel (0 on the fabrics Preflight builds).
  int64_t spread_conflicts = 0;
  std::vector<LinkLoad> links;    // every channel that carried bytes
  std::vector<TierSeries> tiers;  // every tier that carried bytes, bottom (scale_up) first
  bool packet_level = false;      // `packet` holds the packet network's counters
  PacketCounters packet;
};

class Fabric {
 public:
  using Done = std::function<void(SimTime finish)>;
  virtual ~Fabric() = default;

  // Starts every flow of `flows` now; `done` fires once, when the last one lands (with no flow
  // that crosses the network, `latency` after now). A flow waits `latency` with the hop
  // latencies of a shortest network path (GPU, NIC, leaf, NIC, GPU) replaced by those of its own
  // route, then moves at its max-min fair rate. A flow from a GPU to itself carries nothing.
  virtual void transfer(const std::vector<GpuFlow>& flows, SimTime latency, Done done) = 0;

  // Statistics at the end of a run that lasted `end`.
  virtual NetworkStats stats(SimTime end) const = 0;
};

// Creates a run's Fabric on the run's simulator.
using FabricFactory = std::function<std::unique_ptr<Fabric>(Simulator*)>;

}  // namespace preflight
