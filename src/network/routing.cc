#include "network/routing.h"

#include <algorithm>
#include <deque>
#include <utility>

#include "base/check.h"

namespace preflight {
namespace {

// SplitMix64 finaliser: a fixed, portable mixing function (no std::hash, whose values differ
// between standard libraries).
uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

bool is_fabric(NodeKind k) { return k == NodeKind::kNic || k == NodeKind::kSwitch; }

}  // namespace

Router::Router(const Topology& topology, uint64_t seed) : t_(topology), seed_(seed) {
  scale_up_switch_.assign(t_.nodes.size(), -1);
  for (size_t v = 0; v < t_.nodes.size(); ++v) {
    const TopoNode& n = t_.nodes[v];
    if (n.kind != NodeKind::kNic || n.host < 0 || n.local < 0) continue;
    if (static_cast<int>(host_nics_.size()) <= n.host) host_nics_.resize(n.host + 1);
    std::vector<int>& nics = host_nics_[n.host];
    if (static_cast<int>(nics.size()) <= n.local) nics.resize(n.local + 1, -1);
    nics[n.local] = static_cast<int>(v);
  }
  for (int g : t_.gpus) {
    for (const auto& [w, link] : t_.adjacency[g]) {
      if (t_.nodes[w].kind == NodeKind::kNvSwitch) {
        scale_up_switch_[g] = w;
        break;
      }
    }
  }
}

uint64_t Router::hash(uint64_t flow_key, int node) const {
  return mix(seed_ ^ mix(flow_key ^ (static_cast<uint64_t>(node) << 32)));
}

void Router::scale_up(int a, int b, std::vector<int>* out) const {
  if (a == b) return;
  // A direct NVLink (mesh) first, else through the host's scale-up switch.
  for (const auto& [w, link] : t_.adjacency[a]) {
    if (w == b) {
      out->push_back(channel(link, a, t_));
      return;
    }
  }
  const int s = scale_up_switch_[a];
  PREFLIGHT_CHECK_MSG(s >= 0 && s == scale_up_switch_[b], "GPUs without a shared scale-up switch");
  for (const auto& [w, link] : t_.adjacency[a]) {
    if (w == s) out->push_back(channel(link, a, t_));
  }
  for (const auto& [w, link] : t_.adjacency[s]) {
    if (w == b) {
      out->push_back(channel(link, s, t_));
      return;
    }
  }
}

void Router::gpu_to_nic(int gpu, int nic, std::vector<int>* out) const {
  for (const auto& [w, link] : t_.adjacency[nic]) {
    if (t_.nodes[w].kind != NodeKind::kGpu) continue;
    // `w` owns the NIC: reach it over the scale-up fabric (PXN when w != gpu), then PCIe.
    scale_up(gpu, w, out);
    out->push_back(channel(link, w, t_));
    return;
  }
  PREFLIGHT_CHECK_MSG(false, "NIC without a GPU");
}

void Router::nic_to_gpu(int nic, int gpu, std::vector<int>* out) const {
  for (const auto& [w, link] : t_.adjacency[nic]) {
    if (t_.nodes[w].kind != NodeKind::kGpu) continue;
    out->push_back(channel(link, nic, t_));
    scale_up(w, gpu, out);
    return;
  }
  PREFLIGHT_CHECK_MSG(false, "NIC without a GPU");
}

const std::vector<int>& Router::distances_to(int target) {
  auto it = distance_cache_.find(target);
  if (it != distance_cache_.end()) return it->second;
  std::vector<int> dist(t_.nodes.size(), -1);
  std::deque<int> queue{target};
  dist[target] = 0;
  while (!queue.empty()) {
    const int v = queue.front();
    queue.pop_front();
    for (const auto& [w, link] : t_.adjacency[v]) {
      if (dist[w] < 0 && is_fabric(t_.nodes[w].kind)) {
        dist[w] = dist[v] + 1;
        queue.push_back(w);
      }
    }
  }
  return distance_cache_.emplace(target, std::move(dist)).first->second;
}

const std::vector<int>& Router::next_hops(int v, int target) {
  auto it = next_hop_cache_.find({v, target});
  if (it != next_hop_cache_.end()) return it->second;
  const std::vector<int>& dist = distances_to(target);
  std::vector<int> out;
  if (dist[v] > 0) {
    for (const auto& [w, link] : t_.adjacency[v]) {
      if (dist[w] == dist[v] - 1) out.push_back(channel(link, v, t_));
    }
  }
  return next_hop_cache_.emplace(std::make_pair(v, target), std::move(out)).first->second;
}

bool Router::endpoints(int src, int dst, uint64_t flow_key, int nic, int* send_nic, int* recv_nic) {
  const int a = t_.gpus[src];
  const int b = t_.gpus[dst];
  if (t_.nodes[a].host == t_.nodes[b].host && scale_up_switch_[a] == scale_up_switch_[b]) {
    return false;
  }
  // Sending NIC: the one asked for, else one of src's own NICs.
  const std::vector<int>& own = t_.nic_of_gpu[src];
  *send_nic = nic >= 0 ? nic : own[flow_key % own.size()];
  // Receiving NIC: the destination host's NIC on the same rail (same local index) when it has
  // one, else one of dst's own NICs.
  *recv_nic = -1;
  const int rail = t_.nodes[*send_nic].local;
  for (int candidate : t_.nic_of_gpu[dst]) {
    if (t_.nodes[candidate].local == rail) *recv_nic = candidate;
  }
  const int dst_host = t_.nodes[b].host;
  if (*recv_nic < 0 && dst_host >= 0 && dst_host < static_cast<int>(host_nics_.size()) &&
      rail >= 0 && rail < static_cast<int>(host_nics_[dst_host].size())) {
    *recv_nic = host_nics_[dst_host][rail];  // PXN on receive is not NCCL's: relay after the NIC
  }
  if (*recv_nic < 0) *recv_nic = t_.nic_of_gpu[dst][flow_key % t_.nic_of_gpu[dst].size()];
  const std::vector<int>& dist = distances_to(*recv_nic);
  PREFLIGHT_CHECK_MSG(dist[*send_nic] > 0, "no network path between the NICs");
  return true;
}

std::vector<int> Router::route(int src, int dst, uint64_t flow_key, int nic) {
  PREFLIGHT_CHECK(src >= 0 && dst >= 0 && src < static_cast<int>(t_.gpus.size()) &&
                  dst < static_cast<int>(t_.gpus.size()));
  std::vector<int> out;
  if (src == dst) return out;
  const int a = t_.gpus[src];
  const int b = t_.gpus[dst];
  int send_nic = -1, recv_nic = -1;
  if (!endpoints(src, dst, flow_key, nic, &send_nic, &recv_nic)) {
    scale_up(a, b, &out);
    return out;
  }
  gpu_to_nic(a, send_nic, &out);
  // Shortest path NIC -> NIC through switches, ECMP among equal-cost next hops.
  int v = send_nic;
  while (v != recv_nic) {
    const std::vector<int>& choices = next_hops(v, recv_nic);
    const int c = choices[hash(flow_key, v) % choices.size()];
    out.push_back(c);
    v = c % 2 == 0 ? t_.links[c / 2].b : t_.links[c / 2].a;
  }
  nic_to_gpu(recv_nic, b, &out);
  return out;
}

std::vector<std::vector<int>> Router::route_sets(int src, int dst, uint64_t flow_key, int nic) {
  PREFLIGHT_CHECK(src >= 0 && dst >= 0 && src < static_cast<int>(t_.gpus.size()) &&
                  dst < static_cast<int>(t_.gpus.size()));
  std::vector<std::vector<int>> out;
  if (src == dst) return out;
  const int a = t_.gpus[src];
  const int b = t_.gpus[dst];
  std::vector<int> fixed;
  auto flush = [&out, &fixed] {
    for (int c : fixed) out.push_back({c});
    fixed.clear();
  };
  int send_nic = -1, recv_nic = -1;
  if (!endpoints(src, dst, flow_key, nic, &send_nic, &recv_nic)) {
    scale_up(a, b, &fixed);
    flush();
    return out;
  }
  gpu_to_nic(a, send_nic, &fixed);
  flush();
  auto cached = layer_cache_.find({send_nic, recv_nic});
  if (cached == layer_cache_.end()) {
    // Layer by layer along the minimal paths: the nodes one hop nearer the receiving NIC.
    std::vector<std::vector<int>> hops;
    std::vector<int> layer{send_nic};
    while (!(layer.size() == 1 && layer[0] == recv_nic)) {
      std::vector<int> channels, next;
      for (int v : layer) {
        for (int c : next_hops(v, recv_nic)) {
          channels.push_back(c);
          next.push_back(c % 2 == 0 ? t_.links[c / 2].b : t_.links[c / 2].a);
        }
      }
      PREFLIGHT_CHECK(!channels.empty());
      std::sort(channels.begin(), channels.end());
      std::sort(next.begin(), next.end());
      next.erase(std::unique(next.begin(), next.end()), next.end());
      hops.push_back(std::move(channels));
      layer = std::move(next);
    }
    cached = layer_cache_.emplace(std::make_pair(send_nic, recv_nic), std::move(hops)).first;
  }
  out.insert(out.end(), cached->second.begin(), cached->second.end());
  nic_to_gpu(recv_nic, b, &fixed);
  flush();
  return out;
}

std::vector<std::vector<int>> host_nic_nodes(const Topology& t) {
  std::vector<std::vector<int>> out;
  for (size_t v = 0; v < t.nodes.size(); ++v) {
    const TopoNode& n = t.nodes[v];
    if (n.kind != NodeKind::kNic || n.host < 0 || n.local < 0) continue;
    if (static_cast<int>(out.size()) <= n.host) out.resize(n.host + 1);
    std::vector<int>& nics = out[n.host];
    if (static_cast<int>(nics.size()) <= n.local) nics.resize(n.local + 1, -1);
    nics[n.local] = static_cast<int>(v);
  }
  return out;
}

int nic_node(const std::vector<std::vector<int>>& host_nics, int gpus_per_node, int src, int nic) {
  if (nic < 0) return -1;
  const int host = src / gpus_per_node;
  if (host >= static_cast<int>(host_nics.size()) ||
      nic >= static_cast<int>(host_nics[host].size())) {
    return -1;
  }
  return host_nics[host][nic];
}

SimTime shortest_network_path(const Topology& t) {
  if (t.nic_of_gpu.empty() || t.nic_of_gpu[0].empty()) return SimTime();
  const int nic = t.nic_of_gpu[0][0];
  SimTime up, out;
  for (const auto& [w, link] : t.adjacency[nic]) {
    const NodeKind k = t.nodes[w].kind;
    if (k == NodeKind::kGpu && up == SimTime()) up = t.links[link].latency;
    if (k == NodeKind::kSwitch && out == SimTime()) out = t.links[link].latency;
  }
  return (up + out) * 2;
}

SimTime path_latency(const Topology& t, const std::vector<int>& path) {
  SimTime sum;
  for (int channel : path) sum += t.links[channel / 2].latency;
  return sum;
}

}  // namespace preflight
