#include "network/flow/flow_transport.h"

#include <algorithm>
#include <array>
#include <map>
#include <memory>
#include <tuple>
#include <utility>
#include <vector>

#include "base/check.h"
#include "collective/collective_model.h"
#include "collective/decomposition.h"
#include "engine/transport.h"
#include "network/flow/flow_network.h"
#include "network/placement.h"
#include "network/routing.h"
#include "network/topology_builders.h"

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

// One flow of a collective: group ranks, the NIC (index on the sending node) the transfers leave
// through, and their bytes summed over the decomposition's steps and channels.
struct PairFlow {
  int src = 0, dst = 0, nic = -1;
  int64_t bytes = 0;
};

// The inter-node transfers of `transfers`, one PairFlow per (src, dst, nic) in that order.
std::vector<PairFlow> aggregate_inter_node(const std::vector<Transfer>& transfers) {
  std::vector<PairFlow> flows;
  for (const Transfer& t : transfers) {
    if (t.route == Route::kNvlink) continue;
    flows.push_back({t.src, t.dst, t.nic, t.bytes.count()});
  }
  std::sort(flows.begin(), flows.end(), [](const PairFlow& a, const PairFlow& b) {
    return std::tie(a.src, a.dst, a.nic) < std::tie(b.src, b.dst, b.nic);
  });
  std::vector<PairFlow> out;
  for (const PairFlow& f : flows) {
    if (!out.empty() && out.back().src == f.src && out.back().dst == f.dst &&
        out.back().nic == f.nic) {
      out.back().bytes += f.bytes;
    } else {
      out.push_back(f);
    }
  }
  return out;
}

// The decomposition algorithm that carries `plan`'s traffic. NVLS and CollNet have no
// inter-node decomposition: NVLS Tree and CollNet (in-network reduction) cross nodes as a tree,
// NVLS and PAT as a ring; all-gather, reduce-scatter and broadcast are rings.
DecompAlgo decomp_algo(CollectiveKind kind, Algorithm a) {
  if (kind == CollectiveKind::kAllToAll || kind == CollectiveKind::kSendRecv) {
    return DecompAlgo::kDirect;
  }
  if (kind != CollectiveKind::kAllReduce) return DecompAlgo::kRing;
  switch (a) {
    case Algorithm::kTree:
    case Algorithm::kNvlsTree:
    case Algorithm::kCollNetDirect:
    case Algorithm::kCollNetChain:
      return DecompAlgo::kTree;
    default:
      return DecompAlgo::kRing;
  }
}

DecompOp decomp_op(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::kAllReduce:
      return DecompOp::kAllReduce;
    case CollectiveKind::kAllGather:
      return DecompOp::kAllGather;
    case CollectiveKind::kReduceScatter:
      return DecompOp::kReduceScatter;
    case CollectiveKind::kBroadcast:
      return DecompOp::kBroadcast;
    case CollectiveKind::kAllToAll:
      return DecompOp::kAllToAll;
    case CollectiveKind::kSendRecv:
      return DecompOp::kSendRecv;
  }
  return DecompOp::kAllReduce;
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

// Megatron's rank layout: rank = tp_rank + tp·(cp_rank + cp·(dp_rank + dp·stage)), GPU = rank.
// Expert layers refold a stage's tp·cp·dp ranks as etp × ep × edp, expert-TP fastest
// (network/placement.h). The gradient group has `dp_group` members: the dp ranks of one CP rank
// (stride tp·cp), or, when it spans the CP ranks too (dp·cp members, Megatron-Core's DP×CP
// group), every rank of one TP rank (stride tp).
struct RankLayout {
  int tp = 1, cp = 1, dp = 1, pp = 1, etp = 1, ep = 1, dp_group = 1;

  int stage_ranks() const { return tp * cp * dp; }

  // The groups of kind `g` in `stage`, each as its members' GPUs in group-rank order.
  std::vector<std::vector<int>> groups(GroupKind g, int stage) const {
    std::vector<std::vector<int>> out;
    const int n = stage_ranks();
    if (g == GroupKind::kEmbedding) {
      if (pp < 2) return out;
      for (int r = 0; r < n; ++r) out.push_back({r, r + n * (pp - 1)});
      return out;
    }
    int size = 1, stride = 1;
    switch (g) {
      case GroupKind::kTensor:
        size = tp;
        break;
      case GroupKind::kContext:
        size = cp, stride = tp;
        break;
      case GroupKind::kData:
        size = dp_group, stride = dp_group == dp ? tp * cp : tp;
        break;
      case GroupKind::kPipeline:
        size = 1;
        break;
      case GroupKind::kExpertTensor:
        size = etp;
        break;
      case GroupKind::kExpert:
        size = ep, stride = etp;
        break;
      case GroupKind::kExpertData:
        size = std::max(1, n / (etp * ep)), stride = etp * ep;
        break;
      case GroupKind::kEmbedding:
        break;
    }
    for (int base = 0; base < n; ++base) {
      if ((base / stride) % size != 0) continue;
      std::vector<int> members;
      for (int i = 0; i < size; ++i) members.push_back(n * stage + base + i * stride);
      out.push_back(std::move(members));
    }
    return out;
  }
};

class FlowTransport final : public Transport {
 public:
  FlowTransport(std::shared_ptr<const Topology> topology, const Scenario& s, Simulator* sim)
      : topo_(std::move(topology)),
        net_(sim),
        router_(*topo_, s.simulation.seed),
        gpus_per_node_(s.cluster.gpus_per_node),
        nics_per_node_(s.cluster.nics_per_node),
        pxn_(s.collectives.pxn) {
    const ParallelismConfig& p = s.parallelism;
    layout_ = RankLayout{
        p.tp, p.cp, p.dp, p.pp, s.expert_tp(), std::max(1, p.ep), place_job_groups(s).dp.size};
    // One resource per link direction, id = 2·link + dir (the router's channel ids), grouped by
    // tier. Network links run at the measured fraction of line rate (nic_efficiency).
    for (const TopoLink& l : topo_->links) {
      const double eff = network_tier(l.tier) ? s.cluster.nic_efficiency : 1.0;
      const int tier = static_cast<int>(l.tier);
      for (int dir = 0; dir < 2; ++dir) net_.add_resource(l.bandwidth * eff, tier);
      tier_capacity_[tier] += 2 * l.bandwidth.bytes_per_second();
    }
    // NIC node ids by (host, local index), and the hop latencies of a shortest network path
    // (GPU, its NIC, leaf, NIC, GPU), which the planners' inter-node latency stands for.
    for (size_t v = 0; v < topo_->nodes.size(); ++v) {
      const TopoNode& n = topo_->nodes[v];
      if (n.kind != NodeKind::kNic || n.host < 0 || n.local < 0) continue;
      if (static_cast<int>(host_nics_.size()) <= n.host) host_nics_.resize(n.host + 1);
      std::vector<int>& nics = host_nics_[n.host];
      if (static_cast<int>(nics.size()) <= n.local) nics.resize(n.local + 1, -1);
      nics[n.local] = static_cast<int>(v);
    }
    if (!topo_->nic_of_gpu.empty() && !topo_->nic_of_gpu[0].empty()) {
      const int nic = topo_->nic_of_gpu[0][0];
      SimTime up, out;
      for (const auto& [w, link] : topo_->adjacency[nic]) {
        const NodeKind k = topo_->nodes[w].kind;
        if (k == NodeKind::kGpu && up == SimTime()) up = topo_->links[link].latency;
        if (k == NodeKind::kSwitch && out == SimTime()) out = topo_->links[link].latency;
      }
      shortest_network_path_ = (up + out) * 2;
    }
    samples_.push_back(Sample{sim->now(), {}});
    net_.set_on_resolve([this, sim] { sample(sim->now()); });
  }

  void send(int from, int to, Bytes bytes, SimTime latency, Done done) override {
    std::vector<FlowSpec> flows;
    const int n = layout_.stage_ranks();
    for (int r = 0; r < n; ++r) {
      flows.push_back({n * from + r, n * to + r, -1, static_cast<double>(bytes.count())});
    }
    start_all(flows, latency, std::move(done));
  }

  void collective(GroupKind group, int stage, CollectiveKind kind, Bytes bytes,
                  const CollectivePlan& plan, Done done) override {
    std::vector<FlowSpec> flows;
    for (const std::vector<int>& members : layout_.groups(group, stage)) {
      add_group_flows(members, kind, bytes, plan, &flows);
    }
    start_all(flows, plan.latency, std::move(done));
  }

  void send_gpus(int src, int dst, Bytes bytes, SimTime latency, Done done) override {
    start_all({{src, dst, -1, static_cast<double>(bytes.count())}}, latency, std::move(done));
  }

  void collective_gpus(const std::vector<int>& members, CollectiveKind kind, Bytes bytes,
                       const CollectivePlan& plan, Done done) override {
    std::vector<FlowSpec> flows;
    add_group_flows(members, kind, bytes, plan, &flows);
    start_all(flows, plan.latency, std::move(done));
  }

  TransportStats stats(SimTime end) const override {
    TransportStats s;
    s.flows = net_.flows_started();
    s.solves = net_.solves();
    const double seconds = end.to_seconds();
    std::array<double, kTiers> tier_bytes{};
    for (size_t l = 0; l < topo_->links.size(); ++l) {
      const TopoLink& link = topo_->links[l];
      for (int dir = 0; dir < 2; ++dir) {
        const int r = static_cast<int>(2 * l) + dir;
        const double bytes = net_.bytes_carried(r);
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
  struct FlowSpec {
    int src, dst;
    int nic;  // sending NIC node id, or -1: src's own
    double bytes;
  };

  // The inter-node flows of one group's collective, onto `flows`.
  void add_group_flows(const std::vector<int>& members, CollectiveKind kind, Bytes bytes,
                       const CollectivePlan& plan, std::vector<FlowSpec>* flows) {
    if (members.size() < 2) return;
    for (const PairFlow& f : pair_flows(members, kind, bytes, plan)) {
      const int src = members[f.src];
      const int host = src / gpus_per_node_;
      int nic = -1;
      if (f.nic >= 0 && host < static_cast<int>(host_nics_.size()) &&
          f.nic < static_cast<int>(host_nics_[host].size())) {
        nic = host_nics_[host][f.nic];
      }
      flows->push_back({src, members[f.dst], nic, static_cast<double>(f.bytes)});
    }
  }

  // The inter-node pair flows of `kind` on the group `members` (GPUs), from the cache: groups
  // of the same shape (node pattern and GPU indices) decompose alike.
  const std::vector<PairFlow>& pair_flows(const std::vector<int>& members, CollectiveKind kind,
                                          Bytes bytes, const CollectivePlan& plan) {
    GroupLayout g;
    g.gpus_per_node = gpus_per_node_;
    g.nics_per_node = std::max(1, nics_per_node_);
    std::map<int, int> node_index;
    for (int gpu : members) {
      const int node = gpu / gpus_per_node_;
      const int index = node_index.emplace(node, static_cast<int>(node_index.size())).first->second;
      g.node.push_back(index);
      g.local.push_back(gpu % gpus_per_node_);
    }
    DecompositionRequest r;
    r.op = decomp_op(kind);
    r.algo = decomp_algo(kind, plan.algorithm);
    r.bytes = bytes;
    // Point-to-point kinds spread over the sender's NICs; the pipeline chunk does not change a
    // pair's sum, so one chunk per channel keeps tree and broadcast decompositions small.
    const int p2p_channels = std::max(1, nics_per_node_ / std::max(1, gpus_per_node_));
    r.channels = std::clamp(r.algo == DecompAlgo::kDirect ? p2p_channels : plan.channels, 1, 64);
    r.pxn = pxn_;
    r.chunk = Bytes(std::max<int64_t>(1, bytes.count()));
    const auto key = std::make_tuple(g.node, g.local, static_cast<int>(r.op),
                                     static_cast<int>(r.algo), r.bytes.count(), r.channels);
    auto it = cache_.find(key);
    if (it != cache_.end()) return it->second;
    std::vector<Transfer> transfers;
    if (kind == CollectiveKind::kSendRecv) {
      // One ring step: every member sends `bytes` to its successor.
      const int n = g.size();
      for (int i = 0; i < n; ++i) {
        r.root = i;
        r.peer = (i + 1) % n;
        StatusOr<std::vector<Transfer>> t = decompose(g, r);
        PREFLIGHT_CHECK_MSG(t.ok(), t.status().message().c_str());
        transfers.insert(transfers.end(), t->begin(), t->end());
      }
    } else {
      StatusOr<std::vector<Transfer>> t = decompose(g, r);
      PREFLIGHT_CHECK_MSG(t.ok(), t.status().message().c_str());
      transfers = std::move(t).value();
    }
    return cache_.emplace(key, aggregate_inter_node(transfers)).first->second;
  }

  // Hop latencies along `path`.
  SimTime path_latency(const std::vector<int>& path) const {
    SimTime t;
    for (int channel : path) t += topo_->links[channel / 2].latency;
    return t;
  }

  // Starts every flow now, each after `latency` with the shortest network path's hops replaced
  // by its own route's; `done` fires once, at the last completion.
  void start_all(const std::vector<FlowSpec>& flows, SimTime latency, Done done) {
    auto pending = std::make_shared<int>(0);
    auto last = std::make_shared<SimTime>();
    auto callback = std::make_shared<Done>(std::move(done));
    auto on_done = [pending, last, callback](int64_t, SimTime finish) {
      *last = std::max(*last, finish);
      if (--*pending == 0) (*callback)(*last);
    };
    const SimTime base = std::max(SimTime(), latency - shortest_network_path_);
    for (const FlowSpec& f : flows) {
      if (f.src == f.dst || f.bytes < 0) continue;
      std::vector<int> path = router_.route(f.src, f.dst, next_key_++, f.nic);
      const SimTime delay = base + path_latency(path);
      ++*pending;
      net_.start_flow(Bytes(static_cast<int64_t>(f.bytes + 0.5)), std::move(path), delay,
                      flow::FlowNetwork::kNoCap, on_done);
    }
    if (*pending == 0) {
      // Nothing crosses the network: a zero-byte flow keeps the completion on an event.
      ++*pending;
      net_.start_flow(Bytes(0), {}, latency, flow::FlowNetwork::kNoCap, on_done);
    }
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
  RankLayout layout_;
  int gpus_per_node_, nics_per_node_;
  bool pxn_;
  std::vector<std::vector<int>> host_nics_;  // [host][local NIC index] -> NIC node id
  SimTime shortest_network_path_;
  uint64_t next_key_ = 0;
  std::map<std::tuple<std::vector<int>, std::vector<int>, int, int, int64_t, int>,
           std::vector<PairFlow>>
      cache_;
  std::array<double, kTiers> tier_capacity_{};  // bytes/s, line rate, both directions
  std::array<double, kTiers> peak_{};
  std::vector<Sample> samples_;
};

// Plans with the analytical figures; carries traffic on a FlowTransport.
class FlowBackend final : public NetworkBackend {
 public:
  FlowBackend(std::unique_ptr<NetworkBackend> planning, std::shared_ptr<const Topology> topology,
              const Scenario& s)
      : planning_(std::move(planning)), topology_(std::move(topology)), scenario_(s) {}

  Bandwidth bus_bandwidth(const GroupPlacement& g) const override {
    return planning_->bus_bandwidth(g);
  }
  Bandwidth p2p_bandwidth(bool cross_node) const override {
    return planning_->p2p_bandwidth(cross_node);
  }
  SimTime inter_node_latency() const override { return planning_->inter_node_latency(); }

  TransportFactory transport_factory() const override {
    std::shared_ptr<const Topology> topology = topology_;
    const Scenario scenario = scenario_;
    return [topology, scenario](Simulator* sim) -> std::unique_ptr<Transport> {
      return std::make_unique<FlowTransport>(topology, scenario, sim);
    };
  }

 private:
  std::unique_ptr<NetworkBackend> planning_;
  std::shared_ptr<const Topology> topology_;
  Scenario scenario_;
};

}  // namespace

StatusOr<std::unique_ptr<NetworkBackend>> make_network_backend(const std::string& name,
                                                               const Scenario& s) {
  if (name == "analytical") {
    return make_network_backend(name, s.cluster, s.collectives.nccl_version);
  }
  if (name != "flow") {
    return invalid_argument("simulation.network: '" + name + "': expected analytical or flow");
  }
  PREFLIGHT_ASSIGN_OR_RETURN(
      std::unique_ptr<NetworkBackend> planning,
      make_network_backend("analytical", s.cluster, s.collectives.nccl_version));
  PREFLIGHT_ASSIGN_OR_RETURN(Topology t, build_topology(s.cluster));
  auto topology = std::make_shared<const Topology>(std::move(t));
  return std::unique_ptr<NetworkBackend>(
      std::make_unique<FlowBackend>(std::move(planning), std::move(topology), s));
}

}  // namespace preflight
