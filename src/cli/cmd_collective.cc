// `preflight collective --cluster PRESET [--nodes N] [--gpus-per-node G] --op OP
//  [--sizes 8B:16GiB] [--set k=v]... [--json FILE]`: nccl-tests' table, predicted.
#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/common.h"
#include "collective/collective_model.h"
#include "config/loader.h"
#include "network/network_backend.h"
#include "network/placement.h"
#include "report/report.h"

namespace preflight::cli {
namespace {

struct CollectiveArgs {
  std::string cluster = "dgx-h100";
  int nodes = 0;
  int gpus_per_node = 0;
  std::string op = "all_reduce";
  std::string sizes = "8B:16GiB";
  std::vector<std::string> overrides;
  std::string json;
};

// "MIN:MAX" doubles from MIN to MAX (nccl-tests -b MIN -e MAX -f 2); "A,B,C" lists sizes.
StatusOr<std::vector<Bytes>> parse_sizes(const std::string& text) {
  std::vector<Bytes> out;
  const size_t colon = text.find(':');
  if (colon != std::string::npos) {
    StatusOr<Bytes> lo = parse_bytes(text.substr(0, colon));
    StatusOr<Bytes> hi = parse_bytes(text.substr(colon + 1));
    if (!lo.ok()) return invalid_argument("--sizes: " + lo.status().message());
    if (!hi.ok()) return invalid_argument("--sizes: " + hi.status().message());
    if (lo->count() < 1 || hi->count() < lo->count()) {
      return invalid_argument("--sizes " + text + ": expected MIN:MAX with 1B <= MIN <= MAX");
    }
    for (int64_t b = lo->count(); b <= hi->count() && out.size() < 64; b *= 2)
      out.push_back(Bytes(b));
    return out;
  }
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, ',');) {
    StatusOr<Bytes> b = parse_bytes(item);
    if (!b.ok()) return invalid_argument("--sizes: " + b.status().message());
    if (b->count() < 1) return invalid_argument("--sizes: " + item + ": expected at least 1B");
    out.push_back(*b);
  }
  if (out.empty()) return invalid_argument("--sizes: expected MIN:MAX or a list such as 1MiB,1GiB");
  return out;
}

int run(const CollectiveArgs& a) {
  std::vector<std::string> overrides = a.overrides;
  if (a.nodes > 0) overrides.push_back("cluster.nodes=" + std::to_string(a.nodes));
  if (a.gpus_per_node > 0) {
    overrides.push_back("cluster.gpus_per_node=" + std::to_string(a.gpus_per_node));
  }
  StatusOr<CollectiveSetup> setup = load_collective_setup(a.cluster, overrides);
  if (!setup.ok()) return fail(setup.status());
  const ClusterConfig& c = setup->cluster;
  StatusOr<std::vector<Bytes>> sizes = parse_sizes(a.sizes);
  if (!sizes.ok()) return fail(sizes.status());
  StatusOr<std::unique_ptr<NetworkBackend>> network = make_network_backend("analytical", c);
  if (!network.ok()) return fail(network.status());
  // The whole cluster is one communicator, as nccl-tests runs it: every GPU of every node.
  GroupPlacement g;
  g.size = c.total_gpus();
  g.nodes = c.nodes;
  g.per_node = c.gpus_per_node;
  g.sharing_nic = 1;
  if (g.size < 2) {
    return fail(invalid_argument("collective: a communicator of " + std::to_string(g.size) +
                                 " GPU has nothing to exchange; expected at least 2 GPUs"));
  }
  StatusOr<CollectiveModel> model = CollectiveModel::nccl(c, setup->collectives, **network, {g});
  if (!model.ok()) return fail(model.status());
  struct OpInfo {
    const char* name;
    CollectiveKind kind;
    bool p2p;       // send/recv ring (nccl-tests sendrecv)
    bool a2a;       // all-to-all
    double factor;  // busBw = algBw · factor
  };
  const int n = g.size;
  const OpInfo ops[] = {
      {"all_reduce", CollectiveKind::kAllReduce, false, false,
       bus_factor(CollectiveKind::kAllReduce, n)},
      {"all_gather", CollectiveKind::kAllGather, false, false,
       bus_factor(CollectiveKind::kAllGather, n)},
      {"reduce_scatter", CollectiveKind::kReduceScatter, false, false,
       bus_factor(CollectiveKind::kReduceScatter, n)},
      {"broadcast", CollectiveKind::kBroadcast, false, false, 1.0},
      {"reduce", CollectiveKind::kBroadcast, false, false, 1.0},
      {"all_to_all", CollectiveKind::kAllReduce, false, true, static_cast<double>(n - 1) / n},
      {"send_recv", CollectiveKind::kAllReduce, true, false, 1.0},
  };
  const OpInfo* op = nullptr;
  for (const OpInfo& o : ops) {
    if (a.op == o.name) op = &o;
  }
  if (op == nullptr) {
    return fail(invalid_argument("--op " + a.op +
                                 ": expected all_reduce, all_gather, reduce_scatter, broadcast, "
                                 "reduce, all_to_all or send_recv"));
  }
  if (!op->p2p && !op->a2a) {
    Status s = model->check(op->kind, g);
    if (!s.ok()) return fail(s);
  }
  nlohmann::json rows = nlohmann::json::array();
  const bool to_stdout = a.json == "-";
  if (!to_stdout) {
    std::printf(
        "# preflight collective: %s on %d x %s (%d nodes x %d GPUs, %d x %s NICs per "
        "node), NCCL %s model, %s time\n",
        op->name, n, c.gpu.name.c_str(), c.nodes, c.gpus_per_node, c.nics_per_node,
        format_bandwidth(c.nic_bandwidth).c_str(), setup->collectives.nccl_version.c_str(),
        setup->collectives.model.c_str());
    std::printf("# %12s %12s %10s %10s  %-14s %-7s %8s\n", "size (B)", "time (us)", "algbw GB/s",
                "busbw GB/s", "algorithm", "proto", "channels");
  }
  for (Bytes b : *sizes) {
    CollectivePlan p;
    if (op->p2p) {
      p = model->p2p(b, c.nodes > 1);
    } else if (op->a2a) {
      p = model->all_to_all(g, b);
    } else {
      p = model->plan(op->kind, g, b);
    }
    const double us = p.time.to_microseconds();
    const double algbw = us > 0 ? static_cast<double>(b.count()) / (us * 1e-6) * 1e-9 : 0;
    const double busbw = algbw * op->factor;
    rows.push_back({{"bytes", b.count()},
                    {"time_us", us},
                    {"algbw_gbps", algbw},
                    {"busbw_gbps", busbw},
                    {"algorithm", to_string(p.algorithm)},
                    {"protocol", p.protocol},
                    {"channels", p.channels}});
    if (!to_stdout) {
      std::printf("  %12lld %12.2f %10.2f %10.2f  %-14s %-7s %8d\n",
                  static_cast<long long>(b.count()), us, algbw, busbw, to_string(p.algorithm),
                  p.protocol.empty() ? "-" : p.protocol.c_str(), p.channels);
    }
  }
  if (!a.json.empty()) {
    nlohmann::json j{{"op", op->name},
                     {"ranks", n},
                     {"nodes", c.nodes},
                     {"gpus_per_node", c.gpus_per_node},
                     {"cluster", c.name},
                     {"nccl_version", setup->collectives.nccl_version},
                     {"model", setup->collectives.model},
                     {"rows", rows}};
    Status s = write_output(a.json, j.dump(2) + "\n");
    if (!s.ok()) return fail(s);
  }
  return kExitOk;
}

}  // namespace

void add_collective_command(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<CollectiveArgs>();
  auto* cmd = app.add_subcommand(
      "collective",
      "Predict an nccl-tests table: time, algBw, busBw and NCCL's choice of algorithm, protocol "
      "and channels for one collective over every GPU of a cluster, e.g.\n"
      "  preflight collective --cluster dgx-h100 --op all_reduce --sizes 8B:16GiB\n"
      "  preflight collective --cluster dgx-a100 --nodes 4 --set collectives.algo=ring\n"
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
  cmd->add_option("--set", args->overrides, "Override a cluster.* or collectives.* key")
      ->take_all();
  cmd->add_option("--json", args->json,
                  "Write JSON ('-' for stdout): rows of bytes, time_us, algbw_gbps, busbw_gbps, "
                  "algorithm, protocol, channels");
  cmd->callback([args, exit_code]() { *exit_code = run(*args); });
}

}  // namespace preflight::cli
