// Fakes behind the ComputeModel and NetworkBackend seams, for tests that need exact closed-form
// oracles: every compute op costs a fixed time chosen by the test, and the network has fixed
// bandwidths and latency. Header-only; immutable after setup, like the real models.
#pragma once

#include <map>
#include <string>

#include "compute/compute_model.h"
#include "network/network_backend.h"

namespace preflight {

// Every compute op costs `per_op`, unless its name was given its own duration with set().
class FakeComputeModel final : public ComputeModel {
 public:
  explicit FakeComputeModel(SimTime per_op) : per_op_(per_op) {}

  void set(const std::string& op_name, SimTime t) { by_name_[op_name] = t; }

  SimTime duration(const Op& op) const override {
    auto it = by_name_.find(op.name);
    return it == by_name_.end() ? per_op_ : it->second;
  }

 private:
  SimTime per_op_;
  std::map<std::string, SimTime> by_name_;
};

// A fabric with one bus bandwidth for every group, one p2p bandwidth and one inter-node latency.
// The defaults make communication free: 1e30 B/s moves any realistic buffer in 0 ps.
class FakeNetwork final : public NetworkBackend {
 public:
  FakeNetwork() = default;
  FakeNetwork(Bandwidth bus, Bandwidth p2p, SimTime latency)
      : bus_(bus), p2p_(p2p), latency_(latency) {}

  NetworkKind kind() const override { return NetworkKind::kAnalytical; }
  Bandwidth bus_bandwidth(const GroupPlacement&) const override { return bus_; }
  Bandwidth p2p_bandwidth(bool) const override { return p2p_; }
  SimTime inter_node_latency() const override { return latency_; }

 private:
  Bandwidth bus_ = Bandwidth::bytes_per_second(1e30);
  Bandwidth p2p_ = Bandwidth::bytes_per_second(1e30);
  SimTime latency_;
};

// A cluster whose collectives have no fixed or per-step latency (α = β_s = 0), so that with a
// FakeNetwork every collective and transfer is free.
inline ClusterConfig free_collectives_cluster() {
  ClusterConfig c;
  c.gpu.calibration.collective_latency = SimTime::zero();
  c.gpu.calibration.collective_step_latency = SimTime::zero();
  return c;
}

}  // namespace preflight
