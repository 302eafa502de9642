// The flow-level network as a NetworkBackend: it plans collectives with the analytical figures
// and provides a Fabric (network/fabric.h) that routes every GPU-to-GPU flow through the
// cluster's topology (rails, PXN, seeded ECMP or adaptive routing) and carries them as max-min fair
// flows on a FlowNetwork, so all the cross-node traffic of a step — every pipeline send, every
// group's collective — shares NICs and switch links as on the real machine. Network links (NIC to
// leaf and above) run at cluster.nic_efficiency of their line rate. The fabric also samples every
// link tier's load over the run (NetworkStats::tiers). In-node (NVLink) hops are not carried:
// the flows it is given are the inter-node ones (collective/collective_flows.h).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "config/scenario.h"
#include "network/channel_windows.h"
#include "network/network_backend.h"
#include "network/topology.h"

namespace preflight {

// The flow backend on `topology` (built from `cluster`): `planning` answers the bandwidth
// questions; `routing` puts each flow on one ECMP path (hashes seeded by `seed`) or spreads it
// over all equal-cost paths (config/packet_config.h FlowRouting); `windows` degrade channels
// over time.
std::unique_ptr<NetworkBackend> make_flow_network(std::unique_ptr<NetworkBackend> planning,
                                                  Topology topology, const ClusterConfig& cluster,
                                                  uint64_t seed, FlowRouting routing,
                                                  std::vector<ChannelWindow> windows = {});

}  // namespace preflight
