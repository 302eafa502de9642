#include "network/analytical.h"

#include <algorithm>

#include "network/nvlink.h"

namespace preflight {
namespace {

// In-node: one GPU's NVLink bandwidth as NCCL's topology sees it (network/nvlink.h: gpu.nvlinks
// links at NCCL's per-link speed, scaled when the cluster overrides the NVLink bandwidth), the
// figure NCCL's graph search starts from.
// Across nodes: a ring or tree enters and leaves each node once per channel, so the node's NICs
// carry the whole bus traffic of a group; `sharing_nic` groups split them:
//   busBw = nics·nic_bw·nic_efficiency·per_node / gpus_per_node   (capped by NVLink).
class AnalyticalNetwork final : public NetworkBackend {
 public:
  AnalyticalNetwork(const ClusterConfig& c, int nccl_minor) : cluster_(c) {
    nvlink_ = gpu_nvlink_bandwidth(c, nccl_minor);
    node_nic_ = c.nic_bandwidth * (c.nic_efficiency * c.nics_per_node);
  }

  NetworkKind kind() const override { return NetworkKind::kAnalytical; }

  Bandwidth bus_bandwidth(const GroupPlacement& g) const override {
    if (!g.crosses_nodes()) return nvlink_;
    const Bandwidth inter = node_nic_ / static_cast<double>(g.sharing_nic);
    return std::min(inter, nvlink_);
  }

  Bandwidth p2p_bandwidth(bool cross_node) const override {
    if (!cross_node) return nvlink_;
    return node_nic_ / static_cast<double>(cluster_.gpus_per_node);
  }

  SimTime inter_node_latency() const override { return cluster_.network_latency; }

 private:
  ClusterConfig cluster_;
  Bandwidth nvlink_;
  Bandwidth node_nic_;
};

}  // namespace

std::unique_ptr<NetworkBackend> make_analytical_network(const ClusterConfig& cluster,
                                                        int nccl_minor) {
  return std::make_unique<AnalyticalNetwork>(cluster, nccl_minor);
}

}  // namespace preflight
