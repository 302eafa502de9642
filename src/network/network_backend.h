// NetworkBackend: the seam between collectives and the fabric. The collective model asks it how
// fast a communicator's traffic moves; backends differ in how much of the fabric they model.
// The analytical backend has no contention between different kinds of traffic: in-node traffic
// moves at one GPU's NVLink bandwidth as NCCL sees it (network/nvlink.h), inter-node traffic at
// the node's NIC bandwidth shared evenly by the groups that use it at once. The flow backend
// (network/flow/flow_transport.h) plans with the same figures and also provides a Transport
// that carries the run's cross-node traffic through the routed topology under contention.
// Thread-safe after construction.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "base/status.h"
#include "base/units.h"
#include "config/scenario.h"
#include "network/placement.h"

namespace preflight {

class Simulator;
class Transport;  // engine/transport.h

// Creates a run's Transport on the run's simulator (engine/transport.h).
using TransportFactory = std::function<std::unique_ptr<Transport>(Simulator*)>;

class NetworkBackend {
 public:
  virtual ~NetworkBackend() = default;
  // Bus bandwidth (nccl-tests convention) of one collective on `g` while every group of the same
  // kind runs the same collective at once.
  virtual Bandwidth bus_bandwidth(const GroupPlacement& g) const = 0;
  // Bandwidth of one point-to-point transfer; across nodes every GPU of the node sends at once.
  virtual Bandwidth p2p_bandwidth(bool cross_node) const = 0;
  // One-way latency added by each inter-node hop (NIC, switches, proxy).
  virtual SimTime inter_node_latency() const = 0;
  // The transport that carries cross-node traffic under contention, one per run; empty when the
  // backend has none (every transfer then takes the collective model's time).
  virtual TransportFactory transport_factory() const { return {}; }
};

// The analytical backend ("analytical"; other names are errors), its in-node figure at
// `nccl_version`'s per-link NVLink speed. The backend of a whole scenario, flow included, comes
// from make_network_backend(name, scenario) in network/flow/flow_transport.h.
StatusOr<std::unique_ptr<NetworkBackend>> make_network_backend(
    const std::string& name, const ClusterConfig& cluster,
    const std::string& nccl_version = "2.28");

}  // namespace preflight
