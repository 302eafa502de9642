#include "collective/collective_model.h"

#include <algorithm>
#include <bit>

namespace preflight {
namespace {

constexpr double kTreeBandwidthFactor = 0.92;

}  // namespace

double bus_factor(CollectiveKind kind, int n) {
  switch (kind) {
    case CollectiveKind::kAllReduce:
      return 2.0 * (n - 1) / n;
    case CollectiveKind::kAllGather:
    case CollectiveKind::kReduceScatter:
      return static_cast<double>(n - 1) / n;
    case CollectiveKind::kAllToAll:
      return static_cast<double>(n - 1) / n;
    case CollectiveKind::kBroadcast:
    case CollectiveKind::kSendRecv:
      return 1.0;
  }
  return 1.0;
}

const char* to_string(Algorithm a) {
  switch (a) {
    case Algorithm::kRing:
      return "ring";
    case Algorithm::kTree:
      return "tree";
    case Algorithm::kP2p:
      return "p2p";
    case Algorithm::kNvls:
      return "nvls";
    case Algorithm::kNvlsTree:
      return "nvls_tree";
    case Algorithm::kCollNetDirect:
      return "collnet_direct";
    case Algorithm::kCollNetChain:
      return "collnet_chain";
    case Algorithm::kPat:
      return "pat";
  }
  return "?";
}

const char* to_string(CollectiveKind k) {
  switch (k) {
    case CollectiveKind::kAllReduce:
      return "all_reduce";
    case CollectiveKind::kAllGather:
      return "all_gather";
    case CollectiveKind::kReduceScatter:
      return "reduce_scatter";
    case CollectiveKind::kBroadcast:
      return "broadcast";
    case CollectiveKind::kAllToAll:
      return "all_to_all";
    case CollectiveKind::kSendRecv:
      return "send_recv";
  }
  return "?";
}

CollectiveModel::CollectiveModel(const ClusterConfig& cluster, const NetworkBackend& network)
    : network_(&network),
      alpha_(cluster.gpu.calibration.collective_latency),
      step_(cluster.gpu.calibration.collective_step_latency) {}

CollectivePlan CollectiveModel::plan(CollectiveKind kind, const GroupPlacement& g,
                                     Bytes bytes) const {
  CollectivePlan best;
  if (g.size <= 1 || bytes.count() <= 0) return best;
  // Point-to-point patterns bypass NCCL's collective tuning model (grouped send/recv).
  if (kind == CollectiveKind::kAllToAll) return all_to_all(g, bytes);
  if (kind == CollectiveKind::kSendRecv) return p2p(bytes, g.crosses_nodes());
  if (nccl_) return nccl_->plan(kind, g, bytes);
  const int n = g.size;
  const int N = g.nodes;
  const Bandwidth bus = network_->bus_bandwidth(g);
  const SimTime L = network_->inter_node_latency();
  const double factor = bus_factor(kind, n);
  const Bytes wire(static_cast<int64_t>(static_cast<double>(bytes.count()) * factor));
  const int steps = kind == CollectiveKind::kAllReduce ? 2 * (n - 1) : n - 1;
  const int inter_steps = N > 1 ? (kind == CollectiveKind::kAllReduce ? 2 * (N - 1) : N - 1) : 0;
  best.algorithm = Algorithm::kRing;
  best.latency = alpha_ + step_ * steps + L * inter_steps;
  best.time = best.latency + wire / bus;
  if (kind == CollectiveKind::kAllReduce && N > 1) {
    const int depth = std::bit_width(static_cast<unsigned>(N)) - 1;  // ⌊log2 N⌋
    const SimTime tree = alpha_ + (step_ * (g.per_node - 1) + (step_ + L) * depth) * 2 +
                         wire / (bus * kTreeBandwidthFactor);
    if (tree < best.time) {
      best.algorithm = Algorithm::kTree;
      best.latency = alpha_ + (step_ * (g.per_node - 1) + (step_ + L) * depth) * 2;
      best.time = tree;
    }
  }
  best.busbw_gbps = static_cast<double>(wire.count()) / best.time.to_seconds() * 1e-9;
  return best;
}

CollectivePlan CollectiveModel::p2p(Bytes bytes, bool cross_node) const {
  CollectivePlan p;
  p.algorithm = Algorithm::kP2p;
  if (bytes.count() <= 0) return p;
  p.latency = alpha_ + step_ + (cross_node ? network_->inter_node_latency() : SimTime());
  p.time = p.latency + bytes / network_->p2p_bandwidth(cross_node);
  p.busbw_gbps = static_cast<double>(bytes.count()) / p.time.to_seconds() * 1e-9;
  return p;
}

CollectivePlan CollectiveModel::all_to_all(const GroupPlacement& g, Bytes bytes) const {
  CollectivePlan p;
  p.algorithm = Algorithm::kP2p;
  if (g.size <= 1 || bytes.count() <= 0) return p;
  const double n = g.size;
  const double s = static_cast<double>(bytes.count());
  const double intra = s * (g.per_node - 1) / n;
  const double inter = s * (g.size - g.per_node) / n;
  double seconds = intra / network_->p2p_bandwidth(false).bytes_per_second();
  if (inter > 0) {
    seconds = std::max(seconds, inter / network_->p2p_bandwidth(true).bytes_per_second());
  }
  p.latency = alpha_ + step_ + (g.nodes > 1 ? network_->inter_node_latency() : SimTime());
  p.time = p.latency + SimTime::seconds(seconds);
  p.busbw_gbps = s * (n - 1) / n / p.time.to_seconds() * 1e-9;
  return p;
}

}  // namespace preflight
