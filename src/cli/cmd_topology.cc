// `preflight topology CLUSTER [--nodes N] [--set cluster.k=v]... [--json FILE]
//  [--export simai FILE]`: builds a cluster's fabric and prints its counts, per-tier capacity and
// oversubscription, bisection bandwidth and path lengths (docs/topology.md).
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/common.h"
#include "config/loader.h"
#include "network/topology_builders.h"
#include "report/report.h"

namespace preflight::cli {
namespace {

struct TopologyArgs {
  std::string cluster;
  int nodes = 0;
  std::vector<std::string> overrides;
  std::string json;
  std::vector<std::string> export_args;  // {"simai", FILE}
};

// SimAI's GPU type string: the preset name up to its first '-' ("H100-SXM5-80GB" -> "H100").
std::string simai_gpu_type(const std::string& name) {
  const std::string head = name.substr(0, name.find('-'));
  return head.empty() ? "H100" : head;
}

int run(const TopologyArgs& a) {
  std::vector<std::string> overrides;
  for (const std::string& o : a.overrides) {
    if (o.rfind("cluster.", 0) != 0) {
      return fail(invalid_argument("--set " + o + ": expected a cluster.* key here"));
    }
    overrides.push_back(o);
  }
  if (a.nodes > 0) overrides.push_back("cluster.nodes=" + std::to_string(a.nodes));
  if (!a.export_args.empty() && (a.export_args.size() != 2 || a.export_args[0] != "simai")) {
    return fail(invalid_argument("--export: expected `--export simai FILE`"));
  }
  StatusOr<ClusterConfig> c = load_cluster_preset(a.cluster, overrides);
  if (!c.ok()) return fail(c.status());
  StatusOr<Topology> topo = build_topology(*c);
  if (!topo.ok()) return fail(topo.status());
  const TopologySummary s = summarize(*topo);

  if (!a.export_args.empty()) {
    std::ostringstream text;
    Status st = write_simai_topology(*topo, text, simai_gpu_type(c->gpu.name));
    if (!st.ok()) return fail(st);
    st = write_output(a.export_args[1], text.str());
    if (!st.ok()) return fail(st);
  }
  const bool json_stdout = a.json == "-" || (!a.export_args.empty() && a.export_args[1] == "-");
  if (!json_stdout) {
    std::printf(
        "# preflight topology: %s, %s fabric, %d nodes x %d GPUs (%s), %d x %s NICs per "
        "node\n",
        c->name.c_str(), s.kind.c_str(), c->nodes, c->gpus_per_node, c->gpu.name.c_str(),
        c->nics_per_node, format_bandwidth(c->nic_bandwidth).c_str());
    std::printf("GPUs %d, hosts %d, NICs %d, NVSwitch nodes %d, network switches %d, links %d\n",
                s.gpus, s.hosts, s.nics, s.nvswitches, s.switches, s.links);
    std::printf("  %-9s %9s %9s %16s %16s %10s\n", "layer", "nodes", "links", "down (GB/s)",
                "up (GB/s)", "oversub");
    for (const TierSummary& t : s.tiers) {
      char over[32] = "-";
      if (t.oversubscription > 0) std::snprintf(over, sizeof over, "%.2f:1", t.oversubscription);
      std::printf("  %-9s %9d %9d %16.1f %16.1f %10s\n", t.name.c_str(), t.switches, t.links,
                  t.down_bps * 1e-9, t.up_bps * 1e-9, over);
    }
    std::printf("bisection bandwidth %.1f GB/s per direction (%.1f%% of half the NIC capacity)\n",
                s.bisection_bandwidth_bps * 1e-9,
                c->nodes > 1
                    ? 100 * s.bisection_bandwidth_bps /
                          (c->nodes / 2 * c->nics_per_node * c->nic_bandwidth.bytes_per_second())
                    : 0.0);
    std::printf("GPU-to-GPU paths across hosts: max %d hops, mean %.2f\n", s.max_path_hops,
                s.mean_path_hops);
  }
  if (!a.json.empty()) {
    nlohmann::json tiers = nlohmann::json::array();
    for (const TierSummary& t : s.tiers) {
      tiers.push_back({{"name", t.name},
                       {"nodes", t.switches},
                       {"links", t.links},
                       {"down_bandwidth_bps", t.down_bps},
                       {"up_bandwidth_bps", t.up_bps},
                       {"oversubscription", t.oversubscription}});
    }
    nlohmann::json j{{"cluster", c->name},
                     {"kind", s.kind},
                     {"nodes", c->nodes},
                     {"gpus", s.gpus},
                     {"hosts", s.hosts},
                     {"nics", s.nics},
                     {"nvswitches", s.nvswitches},
                     {"switches", s.switches},
                     {"links", s.links},
                     {"tiers", tiers},
                     {"bisection_bandwidth_bps", s.bisection_bandwidth_bps},
                     {"path_hops", {{"max", s.max_path_hops}, {"mean", s.mean_path_hops}}}};
    Status st = write_output(
        a.json, j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
    if (!st.ok()) return fail(st);
  }
  return kExitOk;
}

}  // namespace

void add_topology_command(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<TopologyArgs>();
  auto* cmd = app.add_subcommand(
      "topology",
      "Build a cluster's fabric and print its switch and link counts, per-tier oversubscription, "
      "bisection bandwidth and path lengths, e.g.\n"
      "  preflight topology dgx-h100 --nodes 128\n"
      "  preflight topology dgx-h100 --nodes 256 --set cluster.topology.kind=spine_leaf "
      "--set cluster.topology.oversubscription=2:1\n"
      "  preflight topology dgx-h100 --nodes 2 --export simai topo.txt\n"
      "Fabric keys (docs/topology.md): cluster.topology.kind (nvswitch, rail_optimized, "
      "spine_leaf, fat_tree, hpn, nvl72), .oversubscription, .su_nodes, .leaf_radix, "
      ".spine_radix, .tiers, .k, .planes, .nvl_domain, .link_latency, .nvlink_latency.");
  cmd->add_option("cluster", args->cluster, "Cluster preset (e.g. dgx-h100)")->required();
  cmd->add_option("--nodes", args->nodes, "Nodes (default: the preset's)")
      ->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--set", args->overrides, "Override a cluster.* key")->take_all();
  cmd->add_option("--json", args->json,
                  "Write JSON ('-' for stdout): gpus, hosts, nics, switches, links, tiers, "
                  "bisection_bandwidth_bps, path_hops");
  cmd->add_option("--export", args->export_args,
                  "Write the topology for another simulator: `--export simai FILE` (SimAI ns-3 "
                  "topology file)")
      ->expected(2);
  cmd->callback([args, exit_code]() { *exit_code = run(*args); });
}

}  // namespace preflight::cli
