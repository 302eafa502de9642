// Topology builders: turn a ClusterConfig (its `topology` section) into a Topology graph, sum up
// a topology (counts, per-tier capacity, bisection, path lengths) and write it in SimAI's
// topology-file format. Pure functions of their inputs; thread-safe. docs/topology.md describes
// each fabric, its parameters and where the defaults come from.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "base/status.h"
#include "config/scenario.h"
#include "network/topology.h"

namespace preflight {

// The cluster's graph. Every host: gpus_per_node GPUs on one NVSwitch node (GPU links at
// c.nvlink_bandwidth per direction), or on a PCIe host bridge when gpu.nvlinks == 0; NIC k of M
// joined by PCIe (c.pcie_gen x16) to every GPU g with ⌊g·M/G⌋ = k or ⌊k·G/M⌋ = g. Then the
// scale-out fabric of c.topology.kind:
//   nvswitch        one host, no network;
//   rail_optimized  NVIDIA DGX SuperPOD: per scalable unit (su_nodes hosts) one leaf per rail,
//                   spines over all leaves, a core tier beyond what 2 tiers hold;
//   spine_leaf      ToR leaves filled host by host (leaf_radix·r/(r+1) ports down), spines;
//   fat_tree        3-tier k-ary fat tree (k pods of k/2 edge + k/2 aggregation, (k/2)² cores);
//   hpn             Alibaba HPN: dual-ToR (each NIC's `planes` ports to different ToRs),
//                   dual-plane aggregation, segments of su_nodes (128) hosts;
//   nvl72           NVLink domains of nvl_domain GPUs on one NVSwitch node each, rails across.
// Returns a finalized topology whose validate() passes, or the first violated rule as
// "cluster.topology.<key>: <value>: <what was expected>" (one line).
StatusOr<Topology> build_topology(const ClusterConfig& c);

// One switch layer (or the hosts' scale-up/NIC attachment), bottom to top.
struct TierSummary {
  std::string name;     // nvswitch, nic, leaf, spine, core
  int switches = 0;     // nodes of this layer (NVSwitch nodes, NICs, or network switches)
  int links = 0;        // links below it: GPU-NVSwitch, GPU-NIC, NIC-leaf, leaf-spine, spine-core
  double down_bps = 0;  // total capacity of those links, bytes/s per direction
  double up_bps = 0;    // total capacity of the links above it (0 at the top)
  double oversubscription = 0;  // down / up; 0 at the top
};

struct TopologySummary {
  std::string kind;
  int gpus = 0, hosts = 0, nics = 0, nvswitches = 0;
  int switches = 0;  // network switches (leaf, spine, core), not NVSwitches
  int links = 0;
  std::vector<TierSummary> tiers;
  // bytes/s, one direction: the smaller of the capacities leaving the nodes that serve only the
  // first half of the hosts and only the second half (a cut of the graph, so an upper bound on
  // the min bisection; equal to it on the Clos fabrics built here). 0 with one host.
  double bisection_bandwidth_bps = 0;
  // Links on a shortest GPU-to-GPU path between different hosts, not passing through a GPU; from
  // BFS over up to 64 evenly spaced source GPUs. 0 with one host.
  int max_path_hops = 0;
  double mean_path_hops = 0;
};

// REQUIRES: t.validate() is OK.
TopologySummary summarize(const Topology& t);

// SimAI's ns-3 topology file (simai_formats.md §3.2): "<nodes> <gpus/server> <nvswitches>
// <switches> <links> <gpu_type>", the NVSwitch then switch ids, one "src dst <rate>Gbps
// <delay>ms 0" line per link. NICs are folded into their links (SimAI has no NIC node): a
// NIC-leaf link becomes one GPU-leaf link per GPU using the NIC, with the NIC's bandwidth split
// evenly; GPU-NIC PCIe links are dropped. `gpu_type` as SimAI spells it (A100, H100, ...).
Status write_simai_topology(const Topology& t, std::ostream& out,
                            const std::string& gpu_type = "H100");

}  // namespace preflight
