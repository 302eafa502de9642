#include "network/packet/packet_fabric.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <thread>
#include <utility>
#include <vector>

#include "network/packet/packet_network.h"
#include "network/routing.h"

namespace preflight {
namespace {

class PacketFabric final : public Fabric {
 public:
  PacketFabric(std::shared_ptr<const Topology> topology, const PacketNetworkConfig& config,
               int gpus_per_node, std::shared_ptr<const std::vector<ChannelWindow>> windows,
               Simulator* sim)
      : topo_(std::move(topology)),
        net_(*topo_, config, sim),
        router_(*topo_, config.seed),
        host_nics_(host_nic_nodes(*topo_)),
        shortest_network_path_(shortest_network_path(*topo_)),
        gpus_per_node_(gpus_per_node),
        infiniband_(config.link_layer == LinkLayer::kInfiniband),
        schedule_(windows, sim, [this](int channel, double factor) {
          const double nominal = topo_->links[channel / 2].bandwidth.bytes_per_second();
          net_.set_rate(channel, nominal * factor);
        }) {
    // A degraded link's rate changes at an event of the job's simulator: no window passes one.
    if (windows != nullptr && !windows->empty()) net_.sync_with_job();
  }

  void transfer(const std::vector<GpuFlow>& flows, SimTime latency, Done done) override {
    auto pending = std::make_shared<int>(0);
    auto last = std::make_shared<SimTime>();
    auto callback = std::make_shared<Done>(std::move(done));
    auto on_done = [pending, last, callback](SimTime finish) {
      *last = std::max(*last, finish);
      if (--*pending == 0) (*callback)(*last);
    };
    // The packets cross the route's hops themselves; the flow first waits what the planner's
    // latency holds beyond a shortest path's hops.
    const SimTime base = std::max(SimTime(), latency - shortest_network_path_);
    for (const GpuFlow& f : flows) {
      if (f.src == f.dst || f.bytes < 0) continue;
      std::vector<int> path = router_.route(f.src, f.dst, next_key_++,
                                            nic_node(host_nics_, gpus_per_node_, f.src, f.nic));
      ++*pending;
      net_.start_flow(f.bytes, std::move(path), base, on_done);
    }
    if (*pending == 0) {
      // Nothing crosses the network: an empty flow keeps the completion on an event.
      ++*pending;
      net_.start_flow(0, {}, latency, on_done);
    }
  }

  NetworkStats stats(SimTime end) const override {
    NetworkStats s;
    const packet::PacketStats& p = net_.stats();
    s.flows = p.flows;
    s.packet_level = true;
    PacketCounters& c = s.packet;
    c.packets = p.packets;
    c.ecn_marks = p.ecn_marks;
    c.cnps = p.cnps;
    c.pauses = p.pauses;
    c.infiniband = infiniband_;
    c.credit_stalls = p.credit_stalls;
    c.drops = p.drops;
    c.retransmitted = p.retransmitted;
    c.events = p.events;
    c.partitions = net_.partitions();
    c.windows = p.windows;
    c.fast_forwards = p.fast_forwards;
    c.skipped_s = p.skipped.to_seconds();
    c.skipped_packets = p.skipped_packets;
    // Flow completion times and slowdowns: nearest-rank percentiles.
    const std::vector<packet::PacketNetwork::Completion>& done = net_.completions();
    c.completed = static_cast<int64_t>(done.size());
    if (!done.empty()) {
      std::vector<double> fct, slowdown;
      for (const auto& d : done) {
        fct.push_back(d.time.to_seconds());
        slowdown.push_back(d.slowdown);
      }
      std::sort(fct.begin(), fct.end());
      std::sort(slowdown.begin(), slowdown.end());
      auto at = [](const std::vector<double>& v, double q) {
        const auto rank = static_cast<size_t>(std::ceil(q * static_cast<double>(v.size())));
        return v[std::clamp<size_t>(rank, 1, v.size()) - 1];
      };
      c.fct_p50_s = at(fct, 0.5);
      c.fct_p99_s = at(fct, 0.99);
      c.fct_max_s = fct.back();
      c.slowdown_p50 = at(slowdown, 0.5);
      c.slowdown_p99 = at(slowdown, 0.99);
      c.slowdown_max = slowdown.back();
    }
    const double seconds = end.to_seconds();
    // (max queue, held seconds, channel, name) of every port that queued or was held.
    struct Hot {
      int64_t queue;
      double held;
      int channel;
      std::string name;
    };
    std::vector<Hot> hot;
    for (size_t l = 0; l < topo_->links.size(); ++l) {
      const TopoLink& link = topo_->links[l];
      for (int dir = 0; dir < 2; ++dir) {
        const int channel = static_cast<int>(2 * l) + dir;
        const int from = dir == 0 ? link.a : link.b;
        const int to = dir == 0 ? link.b : link.a;
        const std::string name = topo_->nodes[from].name + ">" + topo_->nodes[to].name;
        const int64_t queue = net_.max_queue(channel);
        if (queue > c.max_queue) {
          c.max_queue = queue;
          c.max_queue_port = name;
        }
        const double paused = net_.paused_time(channel, end).to_seconds();
        if (paused > c.max_paused_s) {
          c.max_paused_s = paused;
          c.max_paused_port = name;
        }
        if (queue > 0 || paused > 0) hot.push_back({queue, paused, channel, name});
        const auto bytes = static_cast<double>(net_.bytes_sent(channel));
        if (bytes <= 0) continue;
        LinkLoad load;
        load.name = name;
        load.tier = to_string(link.tier);
        load.bytes = bytes;
        const double cap = link.bandwidth.bytes_per_second();
        load.utilization = seconds > 0 ? bytes / (cap * seconds) : 0;
        s.links.push_back(load);
      }
    }
    // The four longest queues, then the two longest holds not among them (ties by name).
    std::vector<const Hot*> picked;
    std::sort(hot.begin(), hot.end(), [](const Hot& a, const Hot& b) {
      return a.queue != b.queue ? a.queue > b.queue : a.name < b.name;
    });
    for (size_t i = 0; i < hot.size() && i < 4; ++i) picked.push_back(&hot[i]);
    std::vector<const Hot*> held;
    for (size_t i = 4; i < hot.size(); ++i) {
      if (hot[i].held > 0) held.push_back(&hot[i]);
    }
    std::sort(held.begin(), held.end(), [](const Hot* a, const Hot* b) {
      return a->held != b->held ? a->held > b->held : a->name < b->name;
    });
    for (size_t i = 0; i < held.size() && i < 2; ++i) picked.push_back(held[i]);
    for (const Hot* h : picked) {
      PortSeries p;
      p.port = h->name;
      p.max_queue = h->queue;
      p.held_s = h->held;
      for (const auto& slice : net_.port_series(h->channel, end)) {
        p.points.push_back({slice.from, slice.mean_queue, slice.max_queue, slice.held});
      }
      c.hot_ports.push_back(std::move(p));
    }
    return s;
  }

 private:
  std::shared_ptr<const Topology> topo_;
  packet::PacketNetwork net_;
  Router router_;
  std::vector<std::vector<int>> host_nics_;
  SimTime shortest_network_path_;
  int gpus_per_node_;
  bool infiniband_;
  uint64_t next_key_ = 0;
  WindowSchedule schedule_;  // degraded links
};

// Plans with the analytical figures; carries traffic on a PacketFabric.
class PacketBackend final : public PlannedBackend {
 public:
  PacketBackend(std::unique_ptr<NetworkBackend> planning, std::shared_ptr<const Topology> topology,
                const ClusterConfig& cluster, const PacketNetworkConfig& config,
                std::shared_ptr<const std::vector<ChannelWindow>> windows)
      : PlannedBackend(std::move(planning)),
        topology_(std::move(topology)),
        gpus_per_node_(cluster.gpus_per_node),
        config_(config),
        windows_(std::move(windows)) {
    // Payload at nic_efficiency of line rate: the NIC paces at that, headers counted.
    const double wire = static_cast<double>(config_.mtu + config_.header);
    config_.nic_pacing =
        std::min(1.0, cluster.nic_efficiency * wire / static_cast<double>(config_.mtu));
    // Auto: a partition per leaf switch (at most kAutoPartitions) where the fabric supports them,
    // on as many threads as the machine has cores (the outputs do not depend on the threads).
    if (config_.partitions == 0) {
      config_.partitions = partitions_supported(config_) ? PacketNetworkConfig::kAutoPartitions : 1;
    }
    if (config_.threads == 0) {
      config_.threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    }
  }

  NetworkKind kind() const override { return NetworkKind::kPacket; }
  FabricFactory fabric_factory() const override {
    std::shared_ptr<const Topology> topology = topology_;
    const PacketNetworkConfig config = config_;
    const int gpn = gpus_per_node_;
    std::shared_ptr<const std::vector<ChannelWindow>> windows = windows_;
    return [topology, config, gpn, windows](Simulator* sim) -> std::unique_ptr<Fabric> {
      return std::make_unique<PacketFabric>(topology, config, gpn, windows, sim);
    };
  }

 private:
  std::shared_ptr<const Topology> topology_;
  int gpus_per_node_;
  PacketNetworkConfig config_;
  std::shared_ptr<const std::vector<ChannelWindow>> windows_;  // may be empty
};

}  // namespace

std::unique_ptr<NetworkBackend> make_packet_network(std::unique_ptr<NetworkBackend> planning,
                                                    Topology topology, const ClusterConfig& cluster,
                                                    const PacketNetworkConfig& config,
                                                    std::vector<ChannelWindow> windows) {
  auto t = std::make_shared<const Topology>(std::move(topology));
  auto w = std::make_shared<const std::vector<ChannelWindow>>(std::move(windows));
  return std::make_unique<PacketBackend>(std::move(planning), std::move(t), cluster, config,
                                         std::move(w));
}

}  // namespace preflight
