#include "network/flow/flow_fabric.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <utility>
#include <vector>

#include "network/flow/flow_network.h"
#include "network/routing.h"

namespace preflight {
namespace {

constexpr int kTiers = 5;  // LinkTier values, scale_up .. spine_core
// Points per tier series in the statistics, and samples kept during the run before neighbours
// are merged.
constexpr int kSeriesPoints = 500;
constexpr size_t kMaxSamples = 1 << 16;

bool network_tier(LinkTier t) {
  return t == LinkTier::kNicLeaf || t == LinkTier::kLeafSpine || t == LinkTier::kSpineCore;
}

// Load of every tier at one time; the run's samples form a step function.
struct Sample {
  SimTime time;
  std::array<double, kTiers> value{};
};

// Merges neighbouring closed intervals pairwise (time-weighted means, so every interval's
// integral is kept); the last sample, whose interval is open, stays as it is.
void merge_pairs(std::vector<Sample>* samples) {
  std::vector<Sample>& s = *samples;
  if (s.size() < 3) return;
  const size_t closed = s.size() - 1;
  std::vector<Sample> out;
  out.reserve(closed / 2 + 2);
  size_t i = 0;
  for (; i + 1 < closed; i += 2) {
    const double d0 = static_cast<double>((s[i + 1].time - s[i].time).ps());
    const double d1 = static_cast<double>((s[i + 2].time - s[i + 1].time).ps());
    Sample m{s[i].time, {}};
    for (int k = 0; k < kTiers; ++k) {
      m.value[k] = (s[i].value[k] * d0 + s[i + 1].value[k] * d1) / (d0 + d1);
    }
    out.push_back(m);
  }
  if (i < closed) out.push_back(s[i]);
  out.push_back(s.back());
  s = std::move(out);
}

class FlowFabric final : public Fabric {
 public:
  FlowFabric(std::shared_ptr<const Topology> topology, double nic_efficiency, int gpus_per_node,
             uint64_t seed, FlowRouting routing,
             std::shared_ptr<const std::vector<ChannelWindow>> windows, Simulator* sim)
      : topo_(std::move(topology)),
        net_(sim),
        router_(*topo_, seed),
        gpus_per_node_(gpus_per_node),
        adaptive_(routing == FlowRouting::kAdaptive) {
    // One resource per link direction, id = 2·link + dir (the router's channel ids), grouped by
    // tier. Network links run at the measured fraction of line rate (nic_efficiency).
    for (const TopoLink& l : topo_->links) {
      const double eff = network_tier(l.tier) ? nic_efficiency : 1.0;
      const int tier = static_cast<int>(l.tier);
      for (int dir = 0; dir < 2; ++dir) net_.add_resource(l.bandwidth * eff, tier);
      tier_capacity_[tier] += 2 * l.bandwidth.bytes_per_second();
    }
    spread_of_.assign(2 * topo_->links.size(), -1);
    // NIC node ids by (host, local index), and the hop latencies of a shortest network path
    // (GPU, its NIC, leaf, NIC, GPU), which the planners' inter-node latency stands for.
    host_nics_ = host_nic_nodes(*topo_);
    shortest_network_path_ = shortest_network_path(*topo_);
    samples_.push_back(Sample{sim->now(), {}});
    net_.set_on_resolve([this, sim] { sample(sim->now()); });
    // Degraded channels: their capacity without windows, times the windows open.
    degradable_ = windows != nullptr && !windows->empty();
    schedule_ = std::make_unique<WindowSchedule>(
        std::move(windows), sim, [this](int channel, double factor) {
          const double nominal = nominal_.emplace(channel, net_.capacity(channel)).first->second;
          net_.set_capacity(channel, Bandwidth::bytes_per_second(nominal * factor));
          // A hop spread over this channel keeps the sum of its channels' capacities.
          if (spread_of_[channel] >= 0) update_spread(spread_of_[channel]);
        });
  }

  void transfer(const std::vector<GpuFlow>& flows, SimTime latency, Done done) override {
    auto pending = std::make_shared<int>(0);
    auto last = std::make_shared<SimTime>();
    auto callback = std::make_shared<Done>(std::move(done));
    auto on_done = [pending, last, callback](int64_t, SimTime finish) {
      *last = std::max(*last, finish);
      if (--*pending == 0) (*callback)(*last);
    };
    const SimTime base = std::max(SimTime(), latency - shortest_network_path_);
    for (const GpuFlow& f : flows) {
      if (f.src == f.dst || f.bytes < 0) continue;
      std::vector<int> path;
      SimTime delay;
      std::vector<int> tally;
      if (adaptive_) {
        // Each hop's channels as one resource (one channel: the channel itself); a spread hop
        // that can never be the bottleneck only counts the flow's bytes. The latency is a
        // minimal path's (equal-cost links have equal latencies).
        std::vector<int> one;
        for (std::vector<int>& hop : router_.route_sets(f.src, f.dst, next_key_++, nic_node(f))) {
          one.push_back(hop[0]);
          if (hop.size() == 1) {
            path.push_back(hop[0]);
            continue;
          }
          const int r = spread_resource(std::move(hop));
          (passive_.count(r) ? tally : path).push_back(r);
        }
        delay = base + path_latency(*topo_, one);
      } else {
        path = router_.route(f.src, f.dst, next_key_++, nic_node(f));
        delay = base + path_latency(*topo_, path);
      }
      ++*pending;
      net_.start_flow(Bytes(f.bytes), std::move(path), delay, flow::FlowNetwork::kNoCap, on_done,
                      std::move(tally));
    }
    if (*pending == 0) {
      // Nothing crosses the network: a zero-byte flow keeps the completion on an event.
      ++*pending;
      net_.start_flow(Bytes(0), {}, latency, flow::FlowNetwork::kNoCap, on_done);
    }
  }

  NetworkStats stats(SimTime end) const override {
    NetworkStats s;
    s.flows = net_.flows_started();
    s.solves = net_.solves();
    s.spread_conflicts = spread_conflicts_;
    const double seconds = end.to_seconds();
    std::array<double, kTiers> tier_bytes{};
    // A spread hop's bytes are its channels', each carrying its share of the capacity.
    std::vector<double> spread_bytes(spread_of_.size(), 0.0);
    for (const auto& [resource, channels] : spreads_) {
      const double total = net_.bytes_carried(resource);
      double capacity = 0;
      for (int c : channels) capacity += net_.capacity(c);
      for (int c : channels) spread_bytes[c] += total * net_.capacity(c) / capacity;
    }
    for (size_t l = 0; l < topo_->links.size(); ++l) {
      const TopoLink& link = topo_->links[l];
      for (int dir = 0; dir < 2; ++dir) {
        const int r = static_cast<int>(2 * l) + dir;
        const double bytes = net_.bytes_carried(r) + spread_bytes[r];
        if (bytes <= 0) continue;
        tier_bytes[static_cast<int>(link.tier)] += bytes;
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
    if (end <= SimTime()) return s;
    const std::vector<Sample> grid = resample(end);
    for (int k = 0; k < kTiers; ++k) {
      if (tier_bytes[k] <= 0 || tier_capacity_[k] <= 0) continue;
      TierSeries t;
      t.tier = to_string(static_cast<LinkTier>(k));
      t.capacity = tier_capacity_[k];
      t.mean = tier_bytes[k] / (tier_capacity_[k] * seconds);
      t.peak = peak_[k];
      for (const Sample& g : grid) {
        if (!t.points.empty() && t.points.back().second == g.value[k]) continue;
        t.points.emplace_back(g.time, g.value[k]);
      }
      if (t.points.back().first != end) t.points.emplace_back(end, grid.back().value[k]);
      s.tiers.push_back(std::move(t));
    }
    return s;
  }

 private:
  // The NIC node `f` leaves through: its node's NIC of index f.nic, or -1 (routing's choice).
  int nic_node(const GpuFlow& f) const {
    return preflight::nic_node(host_nics_, gpus_per_node_, f.src, f.nic);
  }

  // The resource of a hop spread over `channels` (two or more, sorted): one per distinct set,
  // of their summed capacity, in their tier's group. In the fat trees and rail-optimized fabrics
  // the builders make, two hops' sets are equal or disjoint (a leaf's uplinks, the spines' links
  // down to one leaf); a set that overlaps another would count a channel's capacity twice, so
  // such a hop takes one of its channels instead (NetworkStats::spread_conflicts, 0 on every
  // builder's fabric by test).
  int spread_resource(std::vector<int> channels) {
    // Sets are equal or disjoint, so a channel names its set's resource.
    const int known = spread_of_[channels[0]];
    if (known >= 0 && spreads_.at(known) == channels) return known;
    for (int c : channels) {
      if (spread_of_[c] >= 0) {
        ++spread_conflicts_;
        return channels[static_cast<size_t>(next_key_) % channels.size()];
      }
    }
    double capacity = 0;
    for (int c : channels) capacity += net_.capacity(c);
    const int tier = static_cast<int>(topo_->links[channels[0] / 2].tier);
    const int id = net_.add_resource(Bandwidth::bytes_per_second(capacity), tier);
    if (!degradable_ && capacity >= feed_bound(channels) * (1 - 1e-9)) passive_.insert(id);
    for (int c : channels) spread_of_[c] = id;
    spreads_.emplace(id, std::move(channels));
    return id;
  }

  // An upper bound on what a spread hop's channels (from switches A to switches B) can carry at
  // once, from links that are always in the solve: on minimal routes everything they carry
  // entered A from elsewhere than B, and leaves B other than back to A. Where all of A's other
  // neighbours are NICs with one network port (a leaf's hosts), those NIC links, each a hop of
  // its own on every route and so never above its capacity, bound the hop by their sum; the
  // same for B's other neighbours. The bound never rests on another spread hop, so no two
  // tallies vouch for each other (two hops in series, each bounded by the other, would both
  // pass). Infinite where neither side is fed by NICs alone (a spine's uplinks to the cores).
  double feed_bound(const std::vector<int>& channels) const {
    std::set<int> from, to;
    for (int c : channels) {
      const TopoLink& l = topo_->links[c / 2];
      from.insert(c % 2 == 0 ? l.a : l.b);
      to.insert(c % 2 == 0 ? l.b : l.a);
    }
    // Sum over the NIC links of `side`'s neighbours outside `skip`, into (toward) the side or
    // out of it; infinite if one of them is not a single-homed NIC.
    auto nic_sum = [this](const std::set<int>& side, const std::set<int>& skip,
                          bool inbound) -> double {
      double sum = 0;
      for (int v : side) {
        for (const auto& [w, link] : topo_->adjacency[v]) {
          if (skip.count(w)) continue;
          if (!single_homed_nic(w)) return std::numeric_limits<double>::infinity();
          sum += net_.capacity(Router::channel(link, inbound ? w : v, *topo_));
        }
      }
      return sum;
    };
    return std::min(nic_sum(from, to, true), nic_sum(to, from, false));
  }

  // A NIC with one link into the network (its other links go to GPUs).
  bool single_homed_nic(int v) const {
    if (topo_->nodes[v].kind != NodeKind::kNic) return false;
    int ports = 0;
    for (const auto& [w, link] : topo_->adjacency[v]) {
      ports += topo_->nodes[w].kind == NodeKind::kSwitch;
    }
    return ports == 1;
  }

  // Sets a spread hop's capacity to its channels' current sum (after a window degraded one).
  void update_spread(int id) {
    double capacity = 0;
    for (int c : spreads_.at(id)) capacity += net_.capacity(c);
    net_.set_capacity(id, Bandwidth::bytes_per_second(capacity));
  }

  // Records every tier's load at `now` (called after each re-solve).
  void sample(SimTime now) {
    Sample s{now, {}};
    for (int k = 0; k < kTiers; ++k) {
      if (tier_capacity_[k] <= 0) continue;
      s.value[k] = net_.group_load(k) / tier_capacity_[k];
      peak_[k] = std::max(peak_[k], s.value[k]);
    }
    if (samples_.back().time == now) {
      samples_.back().value = s.value;
    } else if (samples_.back().value != s.value) {
      samples_.push_back(s);
      if (samples_.size() > kMaxSamples) merge_pairs(&samples_);
    }
  }

  // The step function of the samples up to `end` as the time-weighted mean over each of
  // kSeriesPoints equal slices of [0, end), so every slice keeps its integral.
  std::vector<Sample> resample(SimTime end) const {
    std::vector<Sample> grid;
    const int64_t total = end.ps();
    size_t i = 0;
    for (int slice = 0; slice < kSeriesPoints; ++slice) {
      const int64_t from = total * slice / kSeriesPoints;
      const int64_t to = total * (slice + 1) / kSeriesPoints;
      if (to <= from) continue;
      Sample g{SimTime::picoseconds(from), {}};
      while (i + 1 < samples_.size() && samples_[i + 1].time.ps() <= from) ++i;
      for (size_t j = i; j < samples_.size() && samples_[j].time.ps() < to; ++j) {
        const int64_t a = std::max(from, samples_[j].time.ps());
        const int64_t b = j + 1 < samples_.size() ? std::min(to, samples_[j + 1].time.ps()) : to;
        if (b <= a) continue;
        const double w = static_cast<double>(b - a) / static_cast<double>(to - from);
        for (int k = 0; k < kTiers; ++k) g.value[k] += samples_[j].value[k] * w;
      }
      grid.push_back(g);
    }
    return grid;
  }

  std::shared_ptr<const Topology> topo_;
  flow::FlowNetwork net_;
  Router router_;
  int gpus_per_node_;
  std::vector<std::vector<int>> host_nics_;  // [host][local NIC index] -> NIC node id
  SimTime shortest_network_path_;
  uint64_t next_key_ = 0;
  bool adaptive_;            // FlowRouting::kAdaptive: hops spread over their equal-cost channels
  bool degradable_ = false;  // windows change capacities: every spread hop stays in the solve
  std::set<int> passive_;    // spread hops that can never bind (feed_bound)
  std::vector<int> spread_of_;               // channel -> its spread hop's resource, or -1
  std::map<int, std::vector<int>> spreads_;  // resource -> its channels
  int64_t spread_conflicts_ = 0;
  std::array<double, kTiers> tier_capacity_{};  // bytes/s, line rate, both directions
  std::array<double, kTiers> peak_{};
  std::vector<Sample> samples_;
  std::map<int, double> nominal_;  // degraded channel -> capacity without windows, bytes/s
  std::unique_ptr<WindowSchedule> schedule_;
};

// Plans with the analytical figures; carries traffic on a FlowFabric.
class FlowBackend final : public PlannedBackend {
 public:
  FlowBackend(std::unique_ptr<NetworkBackend> planning, std::shared_ptr<const Topology> topology,
              const ClusterConfig& cluster, uint64_t seed, FlowRouting routing,
              std::shared_ptr<const std::vector<ChannelWindow>> windows)
      : PlannedBackend(std::move(planning)),
        topology_(std::move(topology)),
        nic_efficiency_(cluster.nic_efficiency),
        gpus_per_node_(cluster.gpus_per_node),
        seed_(seed),
        routing_(routing),
        windows_(std::move(windows)) {}

  NetworkKind kind() const override { return NetworkKind::kFlow; }
  FabricFactory fabric_factory() const override {
    std::shared_ptr<const Topology> topology = topology_;
    const double eff = nic_efficiency_;
    const int gpn = gpus_per_node_;
    const uint64_t seed = seed_;
    const FlowRouting routing = routing_;
    std::shared_ptr<const std::vector<ChannelWindow>> windows = windows_;
    return [topology, eff, gpn, seed, routing, windows](Simulator* sim) -> std::unique_ptr<Fabric> {
      return std::make_unique<FlowFabric>(topology, eff, gpn, seed, routing, windows, sim);
    };
  }

 private:
  std::shared_ptr<const Topology> topology_;
  double nic_efficiency_;
  int gpus_per_node_;
  uint64_t seed_;
  FlowRouting routing_;
  std::shared_ptr<const std::vector<ChannelWindow>> windows_;
};

}  // namespace

std::unique_ptr<NetworkBackend> make_flow_network(std::unique_ptr<NetworkBackend> planning,
                                                  Topology topology, const ClusterConfig& cluster,
                                                  uint64_t seed, FlowRouting routing,
                                                  std::vector<ChannelWindow> windows) {
  auto t = std::make_shared<const Topology>(std::move(topology));
  auto w = std::make_shared<const std::vector<ChannelWindow>>(std::move(windows));
  return std::make_unique<FlowBackend>(std::move(planning), std::move(t), cluster, seed, routing,
                                       std::move(w));
}

}  // namespace preflight
