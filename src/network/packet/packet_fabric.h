// The packet-level network as a NetworkBackend (simulation.network: packet): it plans
// collectives with the analytical figures, as the flow backend does, and provides a Fabric
// (network/fabric.h) that routes every GPU-to-GPU flow through the cluster's topology (rails,
// PXN, seeded ECMP, the same routes as the flow backend) and carries it as packets on a
// PacketNetwork (packet_network.h): queues, PFC, ECN, DCQCN. Each NIC paces its flows at most at
// nic_efficiency · (payload + headers)/payload of its line rate, so a lone flow's payload
// arrives at cluster.nic_efficiency of line rate as on the flow backend. The statistics add the
// packet counters (NetworkStats::packet).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "config/scenario.h"
#include "network/channel_windows.h"
#include "network/network_backend.h"
#include "network/topology.h"

namespace preflight {

// The packet backend on `topology` (built from `cluster`): `planning` answers the bandwidth
// questions; `config` sets packets, buffers and congestion control (its seed: ECMP and ECN);
// `windows` degrade channels over time (each port serializes at its degraded rate from its next
// packet on).
std::unique_ptr<NetworkBackend> make_packet_network(std::unique_ptr<NetworkBackend> planning,
                                                    Topology topology, const ClusterConfig& cluster,
                                                    const PacketNetworkConfig& config,
                                                    std::vector<ChannelWindow> windows = {});

}  // namespace preflight
