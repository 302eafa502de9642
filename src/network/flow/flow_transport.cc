#include "network/flow/flow_transport.h"

#include <algorithm>
#include <memory>

#include "collective/collective_model.h"
#include "network/flow/flow_network.h"
#include "network/routing.h"
#include "network/topology_builders.h"

namespace preflight {
namespace {

bool network_tier(LinkTier t) {
  return t == LinkTier::kNicLeaf || t == LinkTier::kLeafSpine || t == LinkTier::kSpineCore;
}

class FlowTransport final : public Transport {
 public:
  FlowTransport(std::shared_ptr<const Topology> topology, const Scenario& s, Simulator* sim)
      : topo_(std::move(topology)),
        net_(sim),
        router_(*topo_, s.simulation.seed),
        tp_(s.parallelism.tp),
        dp_(s.parallelism.dp),
        gpus_per_node_(s.cluster.gpus_per_node) {
    // One resource per link direction, id = 2·link + dir (the router's channel ids). Network
    // links run at the measured fraction of line rate (nic_efficiency).
    for (const TopoLink& l : topo_->links) {
      const double eff = network_tier(l.tier) ? s.cluster.nic_efficiency : 1.0;
      for (int dir = 0; dir < 2; ++dir) net_.add_resource(l.bandwidth * eff);
    }
  }

  void send(int from, int to, Bytes bytes, SimTime latency, Done done) override {
    std::vector<Transfer> flows;
    for (int d = 0; d < dp_; ++d) {
      for (int t = 0; t < tp_; ++t) {
        flows.push_back({rank(t, d, from), rank(t, d, to), static_cast<double>(bytes.count())});
      }
    }
    start_all(std::move(flows), latency, std::move(done));
  }

  void dp_collective(int stage, CollectiveKind kind, Bytes bytes, SimTime latency,
                     Done done) override {
    // Per-rank ring traffic: busBw factor × S (all-reduce 2(n−1)/n, AG/RS (n−1)/n).
    const double share = bus_factor(kind, dp_) * static_cast<double>(bytes.count());
    std::vector<Transfer> flows;
    for (int t = 0; t < tp_; ++t) {
      // Members of this DP group by node, in rank order.
      std::vector<std::vector<int>> by_node;
      int last_node = -1;
      for (int d = 0; d < dp_; ++d) {
        const int r = rank(t, d, stage);
        const int node = r / gpus_per_node_;
        if (node != last_node) {
          by_node.emplace_back();
          last_node = node;
        }
        by_node.back().push_back(r);
      }
      const int nodes = static_cast<int>(by_node.size());
      if (nodes < 2) continue;
      const int k = static_cast<int>(by_node[0].size());
      for (int a = 0; a < nodes; ++a) {
        const std::vector<int>& here = by_node[a];
        const std::vector<int>& next = by_node[(a + 1) % nodes];
        for (int j = 0;
             j < k && j < static_cast<int>(here.size()) && j < static_cast<int>(next.size()); ++j) {
          flows.push_back({here[j], next[j], share / k});
        }
      }
    }
    start_all(std::move(flows), latency, std::move(done));
  }

  TransportStats stats(SimTime end) const override {
    TransportStats s;
    s.flows = net_.flows_started();
    s.solves = net_.solves();
    const double seconds = end.to_seconds();
    for (size_t l = 0; l < topo_->links.size(); ++l) {
      const TopoLink& link = topo_->links[l];
      for (int dir = 0; dir < 2; ++dir) {
        const int r = static_cast<int>(2 * l) + dir;
        const double bytes = net_.bytes_carried(r);
        if (bytes <= 0) continue;
        const int from = dir == 0 ? link.a : link.b;
        const int to = dir == 0 ? link.b : link.a;
        LinkLoad load;
        load.name = topo_->nodes[from].name + ">" + topo_->nodes[to].name;
        load.tier = to_string(link.tier);
        load.bytes = bytes;
        const double cap = link.bandwidth.bytes_per_second();
        load.utilization = seconds > 0 ? bytes / (cap * seconds) : 0;
        s.links.push_back(load);
      }
    }
    return s;
  }

 private:
  struct Transfer {
    int src, dst;
    double bytes;
  };

  // Megatron's rank order: TP fastest, then DP, then PP; GPU index = rank.
  int rank(int t, int d, int stage) const { return t + tp_ * (d + dp_ * stage); }

  // Starts every transfer now; `done` fires once, at the last completion.
  void start_all(std::vector<Transfer> flows, SimTime latency, Done done) {
    auto pending = std::make_shared<int>(0);
    auto last = std::make_shared<SimTime>();
    auto callback = std::make_shared<Done>(std::move(done));
    for (const Transfer& f : flows) {
      if (f.src == f.dst || f.bytes <= 0) continue;
      std::vector<int> path = router_.route(f.src, f.dst, next_key_++);
      ++*pending;
      net_.start_flow(Bytes(static_cast<int64_t>(f.bytes + 0.5)), std::move(path), latency,
                      flow::FlowNetwork::kNoCap,
                      [pending, last, callback](int64_t, SimTime finish) {
                        *last = std::max(*last, finish);
                        if (--*pending == 0) (*callback)(*last);
                      });
    }
    if (*pending == 0) {
      // Nothing crosses the network: a zero-byte flow keeps the completion on an event.
      ++*pending;
      net_.start_flow(Bytes(0), {}, latency, flow::FlowNetwork::kNoCap,
                      [pending, last, callback](int64_t, SimTime finish) {
                        *last = finish;
                        if (--*pending == 0) (*callback)(*last);
                      });
    }
  }

  std::shared_ptr<const Topology> topo_;
  flow::FlowNetwork net_;
  Router router_;
  int tp_, dp_, gpus_per_node_;
  uint64_t next_key_ = 0;
};

}  // namespace

StatusOr<TransportFactory> make_flow_transport_factory(const Scenario& s) {
  PREFLIGHT_ASSIGN_OR_RETURN(Topology t, build_topology(s.cluster));
  auto topology = std::make_shared<const Topology>(std::move(t));
  const Scenario scenario = s;
  return TransportFactory([topology, scenario](Simulator* sim) -> std::unique_ptr<Transport> {
    return std::make_unique<FlowTransport>(topology, scenario, sim);
  });
}

}  // namespace preflight
