#include <algorithm>

#include "network/network_backend.h"

namespace preflight {
namespace {

// In-node: the GPU's measured all-reduce bus bandwidth (calibration.nvlink_busbw, from
// nccl-tests), scaled when the cluster overrides the NVLink bandwidth.
// Across nodes: a ring or tree enters and leaves each node once per channel, so the node's NICs
// carry the whole bus traffic of a group; `sharing_nic` groups split them:
//   busBw = nics·nic_bw·nic_efficiency·per_node / gpus_per_node   (capped by NVLink).
class AnalyticalNetwork final : public NetworkBackend {
 public:
  explicit AnalyticalNetwork(const ClusterConfig& c) : cluster_(c) {
    const double scale =
        c.gpu.nvlink_bandwidth.bytes_per_second() > 0
            ? c.nvlink_bandwidth.bytes_per_second() / c.gpu.nvlink_bandwidth.bytes_per_second()
            : 1.0;
    nvlink_busbw_ = c.gpu.calibration.nvlink_busbw * scale;
    if (nvlink_busbw_.bytes_per_second() <= 0) nvlink_busbw_ = c.nvlink_bandwidth * 0.77;
    node_nic_ = c.nic_bandwidth * (c.nic_efficiency * c.nics_per_node);
  }

  Bandwidth bus_bandwidth(const GroupPlacement& g) const override {
    if (!g.crosses_nodes()) return nvlink_busbw_;
    const Bandwidth inter = node_nic_ / static_cast<double>(g.sharing_nic);
    return std::min(inter, nvlink_busbw_);
  }

  Bandwidth p2p_bandwidth(bool cross_node) const override {
    if (!cross_node) return nvlink_busbw_;
    return node_nic_ / static_cast<double>(cluster_.gpus_per_node);
  }

  SimTime inter_node_latency() const override { return cluster_.network_latency; }

 private:
  ClusterConfig cluster_;
  Bandwidth nvlink_busbw_;
  Bandwidth node_nic_;
};

}  // namespace

StatusOr<std::unique_ptr<NetworkBackend>> make_network_backend(const std::string& name,
                                                               const ClusterConfig& cluster) {
  if (name == "analytical") {
    return std::unique_ptr<NetworkBackend>(std::make_unique<AnalyticalNetwork>(cluster));
  }
  return invalid_argument("simulation.network: '" + name + "': expected analytical");
}

}  // namespace preflight
