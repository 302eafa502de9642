// NCCL's graph search, apart from the tuning model that uses it (nccl_model.h): what the search
// sees of a node (SearchFabric), and the rings, trees and NVLS channels it finds there (§3,
// §4.1 of shared/reference/nccl.md).
#pragma once

#include <span>

#include "collective/nccl_model.h"

namespace preflight::nccl {

// What the search sees on each node (simplified topology, see the header).
struct SearchFabric {
  int gpus = 1;  // G: communicator GPUs on one node
  bool multi_node = false;
  bool nvlink = false;  // GPU<->GPU traffic goes over NVLink (typeIntra NVL), else PCIe
  double gpu_bw = 0;    // one GPU's intra-node port (NVLink sum or PCIe), per direction
  double path_bw = 0;   // best single GPU->GPU path (maxBw of a single-node search)
  double pcie_bw = 0;
  int nics = 0;         // NICs the communicator uses per node
  double nic_cap = 0;   // GPU->NET path: min(PCIe, NIC) (maxBw of a multi-node search)
  double total_bw = 0;  // max(NVLink sum, PCIe) (§3 totalBw)
};

// The node's fabric as NCCL `minor` (2.minor) measures it on platform `p`.
SearchFabric make_fabric(const Platform& p, int minor);

// Per-channel speed candidates the search walks, descending (§4.1 table): intra- or inter-node.
std::span<const double> speed_array(int minor, int cc, bool inter);

enum class Pattern { kTree, kRing, kNvls };

// ncclTopoCompute, simplified: the best graph of pattern `pat` with min_ch..max_ch channels
// for NCCL 2.`minor` on compute capability `cc`.
Graph search(const SearchFabric& f, Pattern pat, int min_ch, int max_ch, int minor, int cc);

}  // namespace preflight::nccl
