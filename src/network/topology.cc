#include "network/topology.h"

#include <deque>

namespace preflight {

const char* to_string(NodeKind k) {
  switch (k) {
    case NodeKind::kGpu:
      return "gpu";
    case NodeKind::kNvSwitch:
      return "nvswitch";
    case NodeKind::kNic:
      return "nic";
    case NodeKind::kSwitch:
      return "switch";
  }
  return "?";
}

const char* to_string(LinkTier t) {
  switch (t) {
    case LinkTier::kScaleUp:
      return "scale_up";
    case LinkTier::kHostNic:
      return "host_nic";
    case LinkTier::kNicLeaf:
      return "nic_leaf";
    case LinkTier::kLeafSpine:
      return "leaf_spine";
    case LinkTier::kSpineCore:
      return "spine_core";
  }
  return "?";
}

int Topology::add_node(TopoNode n) {
  nodes.push_back(std::move(n));
  return static_cast<int>(nodes.size()) - 1;
}

int Topology::add_link(int a, int b, Bandwidth bw, SimTime latency, LinkTier tier) {
  links.push_back(TopoLink{a, b, bw, latency, tier});
  return static_cast<int>(links.size()) - 1;
}

void Topology::finalize() {
  adjacency.assign(nodes.size(), {});
  for (size_t l = 0; l < links.size(); ++l) {
    const TopoLink& k = links[l];
    if (k.a < 0 || k.b < 0 || k.a >= static_cast<int>(nodes.size()) ||
        k.b >= static_cast<int>(nodes.size())) {
      continue;  // validate() reports it
    }
    adjacency[k.a].push_back({k.b, static_cast<int>(l)});
    adjacency[k.b].push_back({k.a, static_cast<int>(l)});
  }
}

Status Topology::validate() const {
  const int n = static_cast<int>(nodes.size());
  for (size_t l = 0; l < links.size(); ++l) {
    const TopoLink& k = links[l];
    if (k.a < 0 || k.b < 0 || k.a >= n || k.b >= n || k.a == k.b) {
      return invalid_argument("topology: link " + std::to_string(l) + " joins invalid nodes");
    }
    if (k.bandwidth.bytes_per_second() <= 0) {
      return invalid_argument("topology: link " + nodes[k.a].name + " - " + nodes[k.b].name +
                              " has no bandwidth");
    }
  }
  if (gpus.empty()) return invalid_argument("topology: no GPUs");
  if (adjacency.size() != nodes.size()) {
    return internal_error("topology: finalize() was not called");
  }
  std::vector<int> seen(n, 0);
  for (int g : gpus) {
    if (g < 0 || g >= n || nodes[g].kind != NodeKind::kGpu || seen[g]++) {
      return invalid_argument("topology: GPU list is inconsistent");
    }
  }
  if (hosts > 1) {
    for (size_t g = 0; g < gpus.size(); ++g) {
      if (g >= nic_of_gpu.size() || nic_of_gpu[g].empty()) {
        return invalid_argument("topology: " + nodes[gpus[g]].name +
                                " has no NIC to reach other hosts");
      }
    }
  }
  // Connectivity: one BFS from GPU 0 must reach every GPU.
  std::vector<char> reached(n, 0);
  std::deque<int> queue{gpus[0]};
  reached[gpus[0]] = 1;
  while (!queue.empty()) {
    const int v = queue.front();
    queue.pop_front();
    for (const auto& [w, link] : adjacency[v]) {
      if (!reached[w]) {
        reached[w] = 1;
        queue.push_back(w);
      }
    }
  }
  for (int g : gpus) {
    if (!reached[g]) {
      return invalid_argument("topology: " + nodes[g].name + " has no path to " +
                              nodes[gpus[0]].name);
    }
  }
  return Status();
}

int Topology::count(NodeKind k) const {
  int c = 0;
  for (const TopoNode& v : nodes) c += v.kind == k;
  return c;
}

int Topology::switch_count() const { return count(NodeKind::kSwitch) + count(NodeKind::kNvSwitch); }

}  // namespace preflight
