// The one factory of network backends (network_backend.h), by kind or by the name a scenario
// gives in simulation.network.
#pragma once

#include <memory>
#include <string>

#include "base/status.h"
#include "config/scenario.h"
#include "network/network_backend.h"

namespace preflight {

// The kind named `name`; another name is an error that lists the kinds.
StatusOr<NetworkKind> parse_network_kind(const std::string& name);

// The backend of kind `kind` for `cluster`: in-node figures at `nccl_version`'s per-link NVLink
// speed; the flow backend builds the cluster's topology (an invalid topology is an error here)
// and routes by the fabric's default (config/packet_config.h FlowRouting; ECMP seeded by `seed`).
StatusOr<std::unique_ptr<NetworkBackend>> make_network_backend(NetworkKind kind,
                                                               const ClusterConfig& cluster,
                                                               const std::string& nccl_version,
                                                               uint64_t seed);

// The same, the packet backend with `packet` (simulation.packet) for its packets, buffers and
// congestion control, the flow backend routing by `flow_routing` (simulation.flow.routing).
StatusOr<std::unique_ptr<NetworkBackend>> make_network_backend(NetworkKind kind,
                                                               const ClusterConfig& cluster,
                                                               const std::string& nccl_version,
                                                               const PacketNetworkConfig& packet,
                                                               FlowRouting flow_routing);

// The backend named `name` for `cluster` (seed 0).
StatusOr<std::unique_ptr<NetworkBackend>> make_network_backend(
    const std::string& name, const ClusterConfig& cluster,
    const std::string& nccl_version = "2.28");

// The backend named `name` for scenario `s`: its cluster, NCCL version and simulation.seed.
StatusOr<std::unique_ptr<NetworkBackend>> make_network_backend(const std::string& name,
                                                               const Scenario& s);

}  // namespace preflight
