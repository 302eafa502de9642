// `preflight collective --cluster PRESET [--nodes N] [--gpus-per-node G] --op OP
//  [--sizes 8B:16GiB] [--set k=v]... [--network analytical|flow|packet] [--json FILE]`:
//  nccl-tests' table, predicted.
#include <cstdio>

#include "cli/common.h"
#include "report/collective_table.h"
#include "report/report.h"

namespace preflight::cli {
namespace {

int run(const CollectiveRequest& a, const std::string& json) {
  StatusOr<CollectiveTable> table = predict_collective_table(a);
  if (!table.ok()) return fail(table.status());
  const ClusterConfig& c = table->setup.cluster;
  if (json != "-") {
    std::printf(
        "# preflight collective: %s on %d x %s (%d nodes x %d GPUs, %d x %s NICs per "
        "node), NCCL %s model, %s time, %s network\n",
        table->op.c_str(), table->ranks, c.gpu.name.c_str(), c.nodes, c.gpus_per_node,
        c.nics_per_node, format_bandwidth(c.nic_bandwidth).c_str(),
        table->setup.collectives.nccl_version.c_str(), table->setup.collectives.model.c_str(),
        table->network.c_str());
    std::printf("# %12s %12s %10s %10s  %-14s %-7s %8s\n", "size (B)", "time (us)", "algbw GB/s",
                "busbw GB/s", "algorithm", "proto", "channels");
    for (const CollectiveRow& r : table->rows) {
      std::printf("  %12lld %12.2f %10.2f %10.2f  %-14s %-7s %8d\n",
                  static_cast<long long>(r.bytes), r.time_us, r.algbw_gbps, r.busbw_gbps,
                  r.algorithm.c_str(), r.protocol.empty() ? "-" : r.protocol.c_str(), r.channels);
    }
  }
  if (!json.empty()) {
    Status s = write_output(json, collective_table_to_json(*table).dump(
                                      2, ' ', false, nlohmann::json::error_handler_t::replace) +
                                      "\n");
    if (!s.ok()) return fail(s);
  }
  return kExitOk;
}

}  // namespace

void add_collective_command(CLI::App& app, int* exit_code) {
  struct CollectiveArgs : CollectiveRequest {
    std::string json;
  };
  auto args = std::make_shared<CollectiveArgs>();
  auto* cmd = app.add_subcommand(
      "collective",
      "Predict an nccl-tests table: time, algBw, busBw and NCCL's choice of algorithm, protocol "
      "and channels for one collective over every GPU of a cluster, e.g.\n"
      "  preflight collective --cluster dgx-h100 --op all_reduce --sizes 8B:16GiB\n"
      "  preflight collective --cluster dgx-a100 --nodes 4 --set collectives.algo=ring\n"
      "  preflight collective --cluster dgx-a100 --nodes 2 --sizes 64MiB:256MiB --network packet\n"
      "NCCL environment variables map to keys: collectives.algo (NCCL_ALGO), .proto "
      "(NCCL_PROTO), .min_channels/.max_channels, .nvls (NCCL_NVLS_ENABLE), .pxn, "
      ".nccl_version (2.18 ... 2.28), .model (calibrated | nccl | alpha_beta).");
  cmd->add_option("--cluster", args->cluster, "Cluster preset (default dgx-h100)");
  cmd->add_option("--nodes", args->nodes, "Nodes (default: the preset's)")
      ->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--gpus-per-node", args->gpus_per_node, "GPUs per node (default: the preset's)")
      ->check(CLI::Range(1, 1024));
  cmd->add_option("--op", args->op,
                  "all_reduce, all_gather, reduce_scatter, broadcast, reduce, all_to_all, "
                  "send_recv");
  cmd->add_option("--sizes", args->sizes,
                  "MIN:MAX (doubling, as nccl-tests -b MIN -e MAX -f 2) or a list: 1MiB,1GiB");
  cmd->add_option(
         "--set", args->overrides,
         "Override a cluster.*, collectives.*, simulation.packet.* or simulation.flow.* key "
         "(simulation.packet with --network packet: link_layer, routing, mtu, header, "
         "switch_buffer, pfc, credit_buffer, ecn, kmin, kmax, pmax, cc, hpcc_eta, hpcc_max_stage, "
         "fast_forward; simulation.flow.routing with --network flow: adaptive (InfiniBand's "
         "default) or ecmp (RoCE's))")
      ->take_all();
  cmd->add_option("--network", args->network,
                  "analytical (the collective model's time; default), flow or packet (the planned "
                  "algorithm's inter-node transfers through the routed topology, as max-min fair "
                  "flows or as packets with PFC, ECN and DCQCN)");
  cmd->add_option("--json", args->json,
                  "Write JSON ('-' for stdout): rows of bytes, time_us, algbw_gbps, busbw_gbps, "
                  "algorithm, protocol, channels");
  cmd->add_option("--jobs,-j", args->jobs,
                  "Threads for --network flow or packet, one size per thread at a time (default "
                  "0: every core); the table is the same for any count")
      ->check(CLI::Range(0, 1024));
  cmd->callback([args, exit_code]() { *exit_code = run(*args, args->json); });
}

}  // namespace preflight::cli
