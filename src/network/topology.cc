#include "network/topology.h"

#include <algorithm>
#include <deque>
#include <map>

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

namespace {

// "nic0.0-leaf0.0": a real link of `t` to show in an error (its first NIC's), or the first
// link when there is no NIC.
std::string example_link(const Topology& t) {
  for (const TopoLink& l : t.links) {
    if (t.nodes[l.a].kind == NodeKind::kNic && t.nodes[l.b].kind == NodeKind::kSwitch) {
      return t.nodes[l.a].name + "-" + t.nodes[l.b].name;
    }
  }
  return t.links.empty() ? "a-b" : t.nodes[t.links[0].a].name + "-" + t.nodes[t.links[0].b].name;
}

}  // namespace

StatusOr<std::vector<int>> find_channels(const Topology& t, const std::string& spec) {
  std::map<std::string, std::vector<int>> by_name;
  for (size_t v = 0; v < t.nodes.size(); ++v)
    by_name[t.nodes[v].name].push_back(static_cast<int>(v));
  const std::string form = "expected a node of the " + t.kind +
                           " topology, A-B (both directions of a link) or A>B (one), e.g. " +
                           example_link(t);
  const size_t cut = spec.find_first_of("->");
  const std::string a = spec.substr(0, cut);
  const std::string b = cut == std::string::npos ? "" : spec.substr(cut + 1);
  auto nodes_of = [&](const std::string& name) -> const std::vector<int>* {
    auto it = by_name.find(name);
    return it == by_name.end() ? nullptr : &it->second;
  };
  const std::vector<int>* from = nodes_of(a);
  if (from == nullptr) return invalid_argument("'" + a + "': no such node; " + form);
  const std::vector<int>* to = cut == std::string::npos ? nullptr : nodes_of(b);
  if (cut != std::string::npos && to == nullptr) {
    return invalid_argument("'" + b + "': no such node; " + form);
  }
  const bool one_way = cut != std::string::npos && spec[cut] == '>';
  std::vector<int> channels;
  for (size_t l = 0; l < t.links.size(); ++l) {
    const TopoLink& k = t.links[l];
    auto in = [](const std::vector<int>* set, int v) {
      return set != nullptr && std::find(set->begin(), set->end(), v) != set->end();
    };
    const int base = 2 * static_cast<int>(l);
    if (to == nullptr) {
      if (in(from, k.a) || in(from, k.b)) channels.insert(channels.end(), {base, base + 1});
      continue;
    }
    const bool forward = in(from, k.a) && in(to, k.b);
    const bool backward = in(from, k.b) && in(to, k.a);
    if (!forward && !backward) continue;
    // The channel A -> B (dir 0 runs a -> b), and with A-B its reverse as well.
    const int a_to_b = forward ? base : base + 1;
    channels.push_back(a_to_b);
    if (!one_way) channels.push_back(a_to_b ^ 1);
  }
  if (channels.empty() && to == nullptr) return invalid_argument("'" + a + "': has no links");
  if (channels.empty()) {
    // Name what A does link to (its first 8 neighbours).
    std::vector<std::string> names;
    for (int v : *from) {
      for (const auto& [w, link] : t.adjacency[v]) {
        if (std::find(names.begin(), names.end(), t.nodes[w].name) == names.end()) {
          names.push_back(t.nodes[w].name);
        }
      }
    }
    std::string near;
    for (size_t i = 0; i < names.size() && i < 8; ++i) near += (i ? ", " : "") + names[i];
    if (names.size() > 8) near += ", ...";
    return invalid_argument("'" + spec + "': no link between " + a + " and " + b + "; " + a +
                            " links to " + near);
  }
  return channels;
}

}  // namespace preflight
