// Topology: the graph of one cluster — GPUs, NVSwitches, NICs, network switches and the links
// between them, each link full duplex with a per-direction bandwidth and a latency. Built from the
// cluster's `topology` section by the builders in topology_builders.cc; read by routing and by
// the flow-level network. A plain copyable value; `validate()` names the first broken rule.
//
// Conventions:
//  * GPU g (global rank order: host-major, g = host·gpus_per_node + local) is node gpus[g].
//  * Every GPU of a host reaches the others through its scale-up fabric (an NVSwitch node, an
//    NVLink mesh, or PCIe through the host) and the network through the NIC(s) it owns;
//    nic_of_gpu[g] lists the NIC nodes GPU g uses directly (its rail).
//  * Link ids index `links`; a directed channel is 2·link + dir (dir 0: a→b, 1: b→a), so the
//    flow solver has one resource per direction.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "base/units.h"

namespace preflight {

enum class NodeKind : uint8_t {
  kGpu,
  kNvSwitch,  // a scale-up switch (one logical node per NVLink domain of a host or rack)
  kNic,
  kSwitch,  // a network switch (leaf/ToR, spine, core)
};

// Which part of the fabric a link belongs to, for per-tier statistics.
enum class LinkTier : uint8_t {
  kScaleUp,    // GPU <-> NVSwitch, NVLink mesh, PCIe
  kHostNic,    // GPU <-> its NIC (PCIe)
  kNicLeaf,    // NIC <-> leaf / ToR
  kLeafSpine,  // leaf <-> spine (aggregation)
  kSpineCore,  // spine <-> core
};

const char* to_string(NodeKind k);
const char* to_string(LinkTier t);

struct TopoNode {
  NodeKind kind = NodeKind::kGpu;
  int host = -1;     // server (or NVLink rack) index; -1 for network switches
  int local = -1;    // index within the host (GPU or NIC number); switch: index within its tier
  int tier = 0;      // switches: 1 leaf/ToR, 2 spine/aggregation, 3 core; 0 otherwise
  int plane = 0;     // dual-plane fabrics (HPN): 0 or 1
  std::string name;  // "gpu3.5" (host 3, GPU 5), "nic3.5", "nvs3", "leaf0.2", "spine7", "core1"
};

struct TopoLink {
  int a = 0, b = 0;     // node ids
  Bandwidth bandwidth;  // per direction
  SimTime latency;      // propagation + switching, one way
  LinkTier tier = LinkTier::kScaleUp;
};

struct Topology {
  std::string kind;  // the builder: nvswitch, rail_optimized, spine_leaf, fat_tree, hpn, nvl72
  std::vector<TopoNode> nodes;
  std::vector<TopoLink> links;
  std::vector<int> gpus;                     // node id of GPU g
  std::vector<std::vector<int>> nic_of_gpu;  // NIC node ids GPU g sends through directly
  int gpus_per_host = 0;
  int hosts = 0;
  // adjacency[v]: (neighbour node, link id), in link order. Filled by finalize().
  std::vector<std::vector<std::pair<int, int>>> adjacency;

  int add_node(TopoNode n);
  int add_link(int a, int b, Bandwidth bw, SimTime latency, LinkTier tier);
  // Rebuilds `adjacency`. Builders call it last.
  void finalize();
  // The first violated rule: ids in range, positive bandwidths, every GPU listed once, every
  // GPU with a NIC when there is more than one host, the graph connected (every GPU reaches
  // every other GPU).
  Status validate() const;

  int switch_count() const;
  int count(NodeKind k) const;
};

// The directed channels (2·link + dir) that `spec` names by the nodes' names: "A>B" the
// direction A to B of every link between nodes A and B, "A-B" both directions of them, "A"
// both directions of every link of node A (a NIC, a switch port's switch, a GPU). An unknown
// node, or two nodes with no link between them, is an error that shows the names' form.
StatusOr<std::vector<int>> find_channels(const Topology& t, const std::string& spec);

}  // namespace preflight
