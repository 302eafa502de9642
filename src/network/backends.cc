#include "network/backends.h"

#include <utility>

#include "network/analytical.h"
#include "network/flow/flow_fabric.h"
#include "network/nvlink.h"
#include "network/topology_builders.h"

namespace preflight {

StatusOr<NetworkKind> parse_network_kind(const std::string& name) {
  for (NetworkKind k : kNetworkKinds) {
    if (name == to_string(k)) return k;
  }
  return invalid_argument("simulation.network: '" + name + "': expected analytical or flow");
}

StatusOr<std::unique_ptr<NetworkBackend>> make_network_backend(NetworkKind kind,
                                                               const ClusterConfig& cluster,
                                                               const std::string& nccl_version,
                                                               uint64_t seed) {
  std::unique_ptr<NetworkBackend> analytical =
      make_analytical_network(cluster, nccl_minor_version(nccl_version));
  if (kind == NetworkKind::kAnalytical) return analytical;
  PREFLIGHT_ASSIGN_OR_RETURN(Topology t, build_topology(cluster));
  return make_flow_network(std::move(analytical), std::move(t), cluster, seed);
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
  return make_network_backend(kind, s.cluster, s.collectives.nccl_version, s.simulation.seed);
}

}  // namespace preflight
