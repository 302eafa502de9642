#include "network/backends.h"

#include <string>
#include <utility>
#include <vector>

#include "network/analytical.h"
#include "network/flow/flow_fabric.h"
#include "network/nvlink.h"
#include "network/packet/packet_fabric.h"
#include "network/topology_builders.h"

namespace preflight {

StatusOr<NetworkKind> parse_network_kind(const std::string& name) {
  for (NetworkKind k : kNetworkKinds) {
    if (name == to_string(k)) return k;
  }
  return invalid_argument("simulation.network: '" + name +
                          "': expected analytical, flow or packet");
}

StatusOr<std::unique_ptr<NetworkBackend>> make_network_backend(NetworkKind kind,
                                                               const ClusterConfig& cluster,
                                                               const std::string& nccl_version,
                                                               uint64_t seed) {
  std::unique_ptr<NetworkBackend> analytical =
      make_analytical_network(cluster, nccl_minor_version(nccl_version));
  if (kind == NetworkKind::kAnalytical) return analytical;
  PREFLIGHT_ASSIGN_OR_RETURN(Topology t, build_topology(cluster));
  if (kind == NetworkKind::kPacket) {
    PacketNetworkConfig packet;
    packet.seed = seed;
    return make_packet_network(std::move(analytical), std::move(t), cluster, packet);
  }
  return make_flow_network(std::move(analytical), std::move(t), cluster, seed,
                           default_flow_routing(cluster.fabric));
}

StatusOr<std::unique_ptr<NetworkBackend>> make_network_backend(NetworkKind kind,
                                                               const ClusterConfig& cluster,
                                                               const std::string& nccl_version,
                                                               const PacketNetworkConfig& packet,
                                                               FlowRouting flow_routing) {
  if (kind == NetworkKind::kFlow) {
    PREFLIGHT_ASSIGN_OR_RETURN(Topology t, build_topology(cluster));
    return make_flow_network(make_analytical_network(cluster, nccl_minor_version(nccl_version)),
                             std::move(t), cluster, packet.seed, flow_routing);
  }
  if (kind != NetworkKind::kPacket) {
    return make_network_backend(kind, cluster, nccl_version, packet.seed);
  }
  PREFLIGHT_ASSIGN_OR_RETURN(Topology t, build_topology(cluster));
  return make_packet_network(make_analytical_network(cluster, nccl_minor_version(nccl_version)),
                             std::move(t), cluster, packet);
}

StatusOr<std::unique_ptr<NetworkBackend>> make_network_backend(const std::string& name,
                                                               const ClusterConfig& cluster,
                                                               const std::string& nccl_version) {
  PREFLIGHT_ASSIGN_OR_RETURN(NetworkKind kind, parse_network_kind(name));
  return make_network_backend(kind, cluster, nccl_version, 0);
}

StatusOr<std::unique_ptr<NetworkBackend>> make_network_backend(const std::string& name,
                                                               const Scenario& s) {
  PREFLIGHT_ASSIGN_OR_RETURN(NetworkKind kind, parse_network_kind(name));
  const std::vector<DegradedLink>& degraded = s.simulation.degraded_links;
  if (!degraded.empty() && kind == NetworkKind::kAnalytical) {
    return invalid_argument(s.source +
                            ": simulation.degraded_links: expected simulation.network: flow or "
                            "packet (the analytical network has no links to degrade)");
  }
  if (kind == NetworkKind::kAnalytical) {
    return make_network_backend(kind, s.cluster, s.collectives.nccl_version, s.simulation.seed);
  }
  PREFLIGHT_ASSIGN_OR_RETURN(Topology t, build_topology(s.cluster));
  std::vector<ChannelWindow> windows;
  for (size_t i = 0; i < degraded.size(); ++i) {
    StatusOr<std::vector<int>> channels = find_channels(t, degraded[i].link);
    if (!channels.ok()) {
      return channels.status().with_prefix(s.source + ": simulation.degraded_links[" +
                                           std::to_string(i) + "].link: ");
    }
    windows.push_back(ChannelWindow{std::move(channels).value(), degraded[i].capacity,
                                    degraded[i].from, degraded[i].until});
  }
  if (kind == NetworkKind::kPacket) {
    return make_packet_network(
        make_analytical_network(s.cluster, nccl_minor_version(s.collectives.nccl_version)),
        std::move(t), s.cluster, s.simulation.packet, std::move(windows));
  }
  return make_flow_network(
      make_analytical_network(s.cluster, nccl_minor_version(s.collectives.nccl_version)),
      std::move(t), s.cluster, s.simulation.seed, s.simulation.flow_routing, std::move(windows));
}

}  // namespace preflight
