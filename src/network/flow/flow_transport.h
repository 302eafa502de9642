// The flow-level network as a NetworkBackend: it plans collectives with the analytical figures
// and provides a Transport (engine/transport.h) that builds the cluster's topology, routes every
// GPU-to-GPU transfer (rails, PXN, seeded ECMP) and carries them as max-min fair flows on a
// FlowNetwork, so all the cross-node traffic of a step — every pipeline send, every group's
// collective — shares NICs and switch links as on the real machine.
//
// Collectives: the transport decomposes the planner's choice (ring, tree, direct all-to-all,
// ring send/recv steps; decomposition.h) into per-step transfers and keeps the inter-node ones,
// summed per (source GPU, destination GPU, sending NIC) over all steps and channels: one flow per
// pair. That is the fluid limit of NCCL's pipelined chunks: each pair streams its whole share at
// once rather than step after step, so link loads (which links, how many bytes) are exact, while
// the start-up of the pipeline and the dependency of one step on the previous are left to the
// planner's size-independent latency. In-node (NVLink) hops are not carried.
#pragma once

#include <memory>
#include <string>

#include "base/status.h"
#include "config/scenario.h"
#include "network/network_backend.h"

namespace preflight {

// The backend named by `simulation.network` for scenario `s`: "analytical", or "flow" (the
// analytical figures for planning plus the flow-level transport; builds the topology, so an
// invalid topology is an error here). Other names are errors.
StatusOr<std::unique_ptr<NetworkBackend>> make_network_backend(const std::string& name,
                                                               const Scenario& s);

}  // namespace preflight
