// FlowTransport: the flow-level network behind the executor's Transport seam. It builds the
// cluster's topology, routes every GPU-to-GPU transfer (rails, PXN, seeded ECMP) and carries
// them as max-min fair flows on a FlowNetwork, so all the traffic of a step — every TP rank's
// pipeline send, every DP group's ring — shares NICs and switch links as on the real machine.
// Collectives are modelled as rings over the nodes the group spans: with k group members per
// node, k rail-parallel rings (member j of each node to member j of the next), each carrying
// 1/k of the ring traffic, as NCCL spreads its channels over the rails; in-node ring hops ride
// NVLink and are not carried (NVLink is far faster than the NICs).
#pragma once

#include <memory>

#include "base/status.h"
#include "config/scenario.h"
#include "engine/transport.h"
#include "network/topology.h"

namespace preflight {

// Builds the topology of `s` once (errors: an invalid topology) and returns a factory that
// makes a FlowTransport on a run's simulator.
StatusOr<TransportFactory> make_flow_transport_factory(const Scenario& s);

}  // namespace preflight
