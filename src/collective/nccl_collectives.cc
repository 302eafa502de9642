// The NCCL-faithful planner behind CollectiveModel::nccl (collective_model.h): NCCL's tuning
// model (nccl_model.h) chooses algorithm, protocol and channels for the group as NCCL's
// topology detection would see it; the time is that choice's latency plus its bandwidth term
// corrected by the mid-size penalty calibrated on measured nccl-tests curves.
#include <map>
#include <mutex>
#include <tuple>

#include "collective/collective_model.h"
#include "collective/nccl_model.h"
#include "network/nvlink.h"

namespace preflight {
namespace {

// What NCCL sees for one communicator of `g`. Each channel leaves a node through the NIC
// closest to the GPU it leaves from, and NCCL spreads the channels over the NICs of the
// communicator's GPUs (nccl.md §4.1 ncclTopoSelectNets, §7): with per_node of the node's G GPUs
// it reaches ⌈nics·per_node/G⌉ NICs (make_fabric), its GPUs' own. Groups of the same kind run at
// once on disjoint GPUs (place_group), hence disjoint NICs. With less than one NIC's worth
// (nics·per_node < G: several groups behind one NIC) the group sees one NIC at that fraction of
// line rate.
nccl::Platform platform_for(const ClusterConfig& c, const GroupPlacement& g) {
  nccl::Platform p;
  p.compute_capability = compute_capability(c.gpu.architecture);
  p.nodes = g.nodes;
  p.ranks_per_node = g.per_node;
  p.gpus_per_node = c.gpus_per_node;
  p.nvlinks_per_gpu = c.gpu.nvlinks;
  p.nvlink_scale = nvlink_scale(c);
  p.nvswitch = c.gpu.nvlinks > 0 && c.gpus_per_node > 2;
  const double nic_share =
      static_cast<double>(c.nics_per_node) * g.per_node / std::max(1, c.gpus_per_node);
  p.nics_per_node = nic_share >= 1 ? c.nics_per_node : 1;
  // NCCL's curves are calibrated on clusters whose NICs reach kMeasuredNicEfficiency of line
  // rate; a fabric that reaches another fraction (cluster.nic_efficiency) moves NCCL's NIC speed
  // by the ratio, so every path of NIC traffic follows that one figure (1 for the presets).
  const double line_gbps =
      c.nic_bandwidth.bytes_per_second() * 8 / 1e9 * (c.nic_efficiency / kMeasuredNicEfficiency);
  p.nic_gbps = nic_share >= 1 ? line_gbps : line_gbps * nic_share;
  p.pcie_gen = c.pcie_gen;
  p.amd_cpu = c.cpu_vendor == "amd";
  p.nvls_capable = c.gpu.nvls && p.nvswitch;
  return p;
}

nccl::Coll to_coll(CollectiveKind k) {
  switch (k) {
    case CollectiveKind::kAllReduce:
      return nccl::Coll::kAllReduce;
    case CollectiveKind::kAllGather:
      return nccl::Coll::kAllGather;
    case CollectiveKind::kReduceScatter:
      return nccl::Coll::kReduceScatter;
    case CollectiveKind::kBroadcast:
      return nccl::Coll::kBroadcast;
    case CollectiveKind::kAllToAll:  // planned as point-to-point (CollectiveModel::plan)
    case CollectiveKind::kSendRecv:
      break;
  }
  return nccl::Coll::kAllReduce;
}

Algorithm to_algorithm(nccl::Algo a) {
  switch (a) {
    case nccl::Algo::kTree:
      return Algorithm::kTree;
    case nccl::Algo::kRing:
      return Algorithm::kRing;
    case nccl::Algo::kCollNetDirect:
      return Algorithm::kCollNetDirect;
    case nccl::Algo::kCollNetChain:
      return Algorithm::kCollNetChain;
    case nccl::Algo::kNvls:
      return Algorithm::kNvls;
    case nccl::Algo::kNvlsTree:
      return Algorithm::kNvlsTree;
    case nccl::Algo::kPat:
      return Algorithm::kPat;
  }
  return Algorithm::kRing;
}

// Ring steps of one call (α and β are per call and per step).
int steps(CollectiveKind kind, int n) {
  return kind == CollectiveKind::kAllReduce ? 2 * (n - 1) : n - 1;
}

class NcclPlanner final : public CollectivePlanner {
 public:
  NcclPlanner(const ClusterConfig& cluster, const CollectivesConfig& config)
      : cluster_(cluster), config_(config) {}

  // Builds (and caches) the tuning model of `g`'s communicator.
  StatusOr<const nccl::TuningModel*> model_for(const GroupPlacement& g) const {
    const auto key = std::make_tuple(g.size, g.nodes, g.per_node);
    std::lock_guard<std::mutex> lock(mu_);
    auto it = models_.find(key);
    if (it != models_.end()) return &it->second;
    nccl::Options o;
    o.version = config_.nccl_version;
    o.algo = config_.algo;
    o.proto = config_.proto;
    o.min_channels = config_.min_channels;
    o.max_channels = config_.max_channels;
    o.nvls = config_.nvls;
    o.tuner = cluster_.nccl_tuner;
    StatusOr<nccl::TuningModel> m = nccl::TuningModel::create(platform_for(cluster_, g), o);
    if (!m.ok()) return m.status();
    return &models_.emplace(key, std::move(m).value()).first->second;
  }

  // Checks that `kind` can be planned on `g` (an override may leave nothing available).
  Status check(CollectiveKind kind, const GroupPlacement& g) const {
    if (g.size <= 1) return Status();
    PREFLIGHT_ASSIGN_OR_RETURN(const nccl::TuningModel* m, model_for(g));
    StatusOr<nccl::Choice> c = m->choose(to_coll(kind), 1 << 20);
    if (!c.ok()) {
      return invalid_argument(std::string(to_string(kind)) + " on " + std::to_string(g.size) +
                              " ranks: " + c.status().message());
    }
    return Status();
  }

  CollectivePlan plan(CollectiveKind kind, const GroupPlacement& g, Bytes bytes) const override {
    CollectivePlan p;
    StatusOr<const nccl::TuningModel*> m = model_for(g);
    PREFLIGHT_CHECK_MSG(m.ok(), "collective planner was not validated for this group");
    StatusOr<nccl::Choice> c = (*m)->choose(to_coll(kind), bytes.count());
    PREFLIGHT_CHECK_MSG(c.ok(), "collective planner was not validated for this operation");
    p.algorithm = to_algorithm(c->algo);
    p.protocol = nccl::to_string(c->proto);
    p.channels = c->channels;
    const GpuCalibration& k = cluster_.gpu.calibration;
    double us = c->time_us;
    if (config_.model == "calibrated") {
      const double s = static_cast<double>(bytes.count());
      const double x = s / (s + static_cast<double>(k.collective_midsize_bytes.count()));
      const double bandwidth_term = c->time_us - c->latency_us;
      us = k.collective_latency.to_microseconds() +
           k.collective_step_latency.to_microseconds() * steps(kind, g.size) + c->latency_us +
           bandwidth_term * (1 + 4 * k.collective_midsize_penalty * x * (1 - x));
    }
    // The bandwidth term the protocol's caps alone allow, with the same mid-size excess.
    double protocol_us = c->protocol_bandwidth_gbs > 0 ? static_cast<double>(bytes.count()) /
                                                             (1000.0 * c->protocol_bandwidth_gbs)
                                                       : 0;
    if (config_.model == "calibrated") {
      const double s = static_cast<double>(bytes.count());
      const double x = s / (s + static_cast<double>(k.collective_midsize_bytes.count()));
      protocol_us *= 1 + 4 * k.collective_midsize_penalty * x * (1 - x);
    }
    p.protocol_time = SimTime::microseconds(protocol_us);
    p.time = SimTime::microseconds(us);
    p.latency = SimTime::microseconds(
        config_.model == "calibrated"
            ? k.collective_latency.to_microseconds() +
                  k.collective_step_latency.to_microseconds() * steps(kind, g.size) + c->latency_us
            : c->latency_us);
    p.busbw_gbps =
        static_cast<double>(bytes.count()) * bus_factor(kind, g.size) / p.time.to_seconds() * 1e-9;
    return p;
  }

 private:
  ClusterConfig cluster_;
  CollectivesConfig config_;
  mutable std::mutex mu_;
  mutable std::map<std::tuple<int, int, int>, nccl::TuningModel> models_;
};

}  // namespace

StatusOr<CollectiveModel> CollectiveModel::nccl(const ClusterConfig& cluster,
                                                const CollectivesConfig& config,
                                                const NetworkBackend& network,
                                                const std::vector<GroupPlacement>& placements) {
  CollectiveModel m(cluster, network);
  if (config.model == "alpha_beta") return m;
  auto planner = std::make_shared<NcclPlanner>(cluster, config);
  for (const GroupPlacement& g : placements) {
    if (g.size <= 1) continue;
    StatusOr<const nccl::TuningModel*> t = planner->model_for(g);
    if (!t.ok()) return t.status().with_prefix("collectives: ");
  }
  m.nccl_ = planner;
  return m;
}

Status CollectiveModel::check(CollectiveKind kind, const GroupPlacement& g) const {
  if (!nccl_ || kind == CollectiveKind::kAllToAll || kind == CollectiveKind::kSendRecv) {
    return Status();
  }
  return static_cast<const NcclPlanner&>(*nccl_).check(kind, g).with_prefix("collectives: ");
}

}  // namespace preflight
