// Router: paths through a Topology for traffic between GPUs, as directed channels (2·link + dir).
// Inside a host: GPU -> scale-up switch (NVSwitch, or the PCIe host bridge) -> GPU. Between hosts:
// GPU -> its NIC (or, with PXN, over NVLink to the GPU that owns the chosen NIC, then its NIC)
// -> switches along a shortest path -> the destination NIC on the same rail when it exists ->
// the destination GPU. Among equal-cost next hops, ECMP picks one by a deterministic hash of
// (seed, flow key, switch), so one flow always takes one path and different flows spread.
// Distance tables are computed lazily per destination switch; not thread-safe (one per run).
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "network/topology.h"

namespace preflight {

class Router {
 public:
  // `topology` must be validated and outlive the router.
  Router(const Topology& topology, uint64_t seed);

  // Directed channels from GPU `src` to GPU `dst` (global GPU indices). `flow_key` feeds the ECMP
  // hash. `nic` chooses the sending NIC (a NIC node id of src's host; -1: src's own first NIC
  // on rail `flow_key` mod its NIC count). Empty when src == dst.
  // REQUIRES: 0 <= src, dst < gpus.
  std::vector<int> route(int src, int dst, uint64_t flow_key, int nic = -1);

  // The hops from GPU `src` to GPU `dst` as adaptive routing at its ideal spreads a flow: for
  // each hop, every directed channel a minimal path can take there (the channels out of the
  // previous hop's nodes that lead one hop nearer the receiving NIC), sorted. Hops with one
  // channel (GPU, PCIe and scale-up hops, a NIC's own link) are sets of one. The NICs are
  // route()'s for the same arguments. Empty when src == dst.
  std::vector<std::vector<int>> route_sets(int src, int dst, uint64_t flow_key, int nic = -1);

  // Number of hops (links) of route(src, dst, key).
  int hops(int src, int dst, uint64_t flow_key) {
    return static_cast<int>(route(src, dst, flow_key).size());
  }

  // The channels from fabric node `v` (a NIC or switch) to its neighbours one hop nearer to NIC
  // `target` on a shortest path: the equal-cost next hops ECMP picks one of per flow (and packet
  // spraying or adaptive routing per packet). Empty at the target.
  const std::vector<int>& next_hops(int v, int target);

  static int channel(int link, int from_node, const Topology& t) {
    return 2 * link + (t.links[link].a == from_node ? 0 : 1);
  }

 private:
  // Appends the channels of the scale-up hop(s) from GPU node `a` to GPU node `b` of one host.
  void scale_up(int a, int b, std::vector<int>* out) const;
  // Appends the channels from GPU node `gpu` to NIC node `nic` of the same host.
  void gpu_to_nic(int gpu, int nic, std::vector<int>* out) const;
  void nic_to_gpu(int nic, int gpu, std::vector<int>* out) const;
  // The sending and receiving NIC nodes of a flow between hosts (route()'s choice); false when
  // src and dst share a scale-up fabric and the flow crosses no NIC.
  bool endpoints(int src, int dst, uint64_t flow_key, int nic, int* send_nic, int* recv_nic);
  // Distances (in hops over NIC and switch nodes only) to `target`.
  const std::vector<int>& distances_to(int target);
  uint64_t hash(uint64_t flow_key, int node) const;

  const Topology& t_;
  uint64_t seed_;
  std::vector<int> scale_up_switch_;         // per GPU node: its NVSwitch/bridge node, or -1
  std::vector<std::vector<int>> host_nics_;  // [host][local NIC index] -> NIC node id
  std::map<int, std::vector<int>> distance_cache_;
  std::map<std::pair<int, int>, std::vector<int>> next_hop_cache_;  // (v, target) -> channels
  // (sending NIC, receiving NIC) -> route_sets' hops between them
  std::map<std::pair<int, int>, std::vector<std::vector<int>>> layer_cache_;
};

// NIC node ids by (host, local NIC index); -1 where a host has no NIC of that index.
std::vector<std::vector<int>> host_nic_nodes(const Topology& t);

// The NIC node GPU `src` sends through for NIC index `nic` of its host (GpuFlow::nic), or -1
// (routing's choice) for nic < 0 or an index its host lacks.
int nic_node(const std::vector<std::vector<int>>& host_nics, int gpus_per_node, int src, int nic);

// The hop latencies of a shortest network path (GPU, its NIC, leaf, NIC, GPU), which the
// planners' inter-node latency stands for; zero without NICs.
SimTime shortest_network_path(const Topology& t);

// The hop latencies along `path` (directed channels).
SimTime path_latency(const Topology& t, const std::vector<int>& path);

}  // namespace preflight
