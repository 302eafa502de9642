// NetworkBackend: the seam between collectives and the fabric. The collective model asks it how
// fast a communicator's traffic moves; backends differ in how much of the fabric they model.
// The analytical backend has no contention between different kinds of traffic: in-node traffic
// moves at one GPU's NVLink bandwidth as NCCL sees it (network/nvlink.h), inter-node traffic at
// the node's NIC bandwidth shared evenly by the groups that use it at once. The flow backend
// (network/flow/flow_fabric.h) and the packet backend (network/packet/packet_fabric.h) plan with
// the same figures and also provide a Fabric that carries the run's cross-node traffic through
// the routed topology under contention, as flows or as packets. Backends
// are made by one factory (network/backends.h). Thread-safe after construction.
#pragma once

#include <memory>
#include <utility>

#include "base/units.h"
#include "config/scenario.h"
#include "network/fabric.h"
#include "network/placement.h"

namespace preflight {

class NetworkBackend {
 public:
  virtual ~NetworkBackend() = default;
  virtual NetworkKind kind() const = 0;
  // Bus bandwidth (nccl-tests convention) of one collective on `g` while every group of the same
  // kind runs the same collective at once.
  virtual Bandwidth bus_bandwidth(const GroupPlacement& g) const = 0;
  // Bandwidth of one point-to-point transfer; across nodes every GPU of the node sends at once.
  virtual Bandwidth p2p_bandwidth(bool cross_node) const = 0;
  // One-way latency added by each inter-node hop (NIC, switches, proxy).
  virtual SimTime inter_node_latency() const = 0;
  // The fabric that carries cross-node traffic under contention, one per run; empty when the
  // backend has none (every transfer then takes the collective model's time).
  virtual FabricFactory fabric_factory() const { return {}; }
};

// A backend that plans with another's figures (the analytical ones) and adds a fabric: the flow
// and packet backends.
class PlannedBackend : public NetworkBackend {
 public:
  explicit PlannedBackend(std::unique_ptr<NetworkBackend> planning)
      : planning_(std::move(planning)) {}
  Bandwidth bus_bandwidth(const GroupPlacement& g) const override {
    return planning_->bus_bandwidth(g);
  }
  Bandwidth p2p_bandwidth(bool cross_node) const override {
    return planning_->p2p_bandwidth(cross_node);
  }
  SimTime inter_node_latency() const override { return planning_->inter_node_latency(); }

 private:
  std::unique_ptr<NetworkBackend> planning_;
};

}  // namespace preflight
