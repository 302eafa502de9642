#include "report/collective_table.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <sstream>
#include <thread>

#include "collective/collective_model.h"
#include "exec/graph_runner.h"
#include "network/backends.h"
#include "network/placement.h"

namespace preflight {

StatusOr<std::vector<Bytes>> parse_collective_sizes(const std::string& text) {
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

namespace {

// One collective over all `n` GPUs of `c`, carried through `network`'s fabric on the graph
// runner: each GPU issues it once, and it lasts until the fabric delivers the planned algorithm's
// transfers. A neutral strategy (DP over every GPU) stands for the job the transport expects.
StatusOr<SimTime> run_on_fabric(const CollectiveSetup& setup, const NetworkBackend& network,
                                const CollectiveModel& model, const GroupPlacement& g,
                                CollectiveKind kind, Bytes bytes) {
  Scenario s;
  s.source = "collective";
  s.cluster = setup.cluster;
  s.collectives = setup.collectives;
  s.parallelism.tp = s.parallelism.pp = s.parallelism.cp = s.parallelism.ep = 1;
  s.parallelism.etp = 1;
  s.parallelism.dp = g.size;
  GraphProgram program;
  GraphGroup all;
  all.name = "all";
  for (int r = 0; r < g.size; ++r) all.members.push_back(r);
  all.placement = g;
  program.groups.push_back(all);
  program.ranks.resize(static_cast<size_t>(g.size));
  for (GraphRankProgram& rank : program.ranks) {
    GraphNode n;
    n.kind = GraphNodeKind::kCollective;
    n.group = 0;
    n.collective = kind;
    n.bytes = bytes;
    n.queue = 0;
    n.cls = GraphClass::kDp;
    rank.nodes.push_back(n);
    rank.queues = 1;
  }
  GraphPlans plans(model, program.groups);
  GraphRunOptions options;
  options.prefix = "collective";
  options.describe = [](int rank, int) { return "rank " + std::to_string(rank); };
  PREFLIGHT_ASSIGN_OR_RETURN(GraphRunResult r, run_graph(program, s, network, plans, options));
  return r.iteration_time;
}

}  // namespace

StatusOr<CollectiveTable> predict_collective_table(const CollectiveRequest& request) {
  std::vector<std::string> overrides = request.overrides;
  if (request.nodes > 0) overrides.push_back("cluster.nodes=" + std::to_string(request.nodes));
  if (request.gpus_per_node > 0) {
    overrides.push_back("cluster.gpus_per_node=" + std::to_string(request.gpus_per_node));
  }
  CollectiveTable table;
  PREFLIGHT_ASSIGN_OR_RETURN(table.setup, load_collective_setup(request.cluster, overrides));
  const ClusterConfig& c = table.setup.cluster;
  PREFLIGHT_ASSIGN_OR_RETURN(std::vector<Bytes> sizes, parse_collective_sizes(request.sizes));
  StatusOr<NetworkKind> kind = parse_network_kind(request.network);
  if (!kind.ok()) {
    return invalid_argument("--network " + request.network +
                            ": expected analytical, flow or packet");
  }
  if (table.setup.has_packet && *kind != NetworkKind::kPacket) {
    return invalid_argument("--set simulation.packet.*: expected --network packet (the " +
                            request.network + " network carries no packets)");
  }
  if (table.setup.has_flow && *kind != NetworkKind::kFlow) {
    return invalid_argument("--set simulation.flow.*: expected --network flow (the " +
                            request.network + " network does not route flows)");
  }
  PREFLIGHT_ASSIGN_OR_RETURN(std::unique_ptr<NetworkBackend> network,
                             make_network_backend(*kind, c, table.setup.collectives.nccl_version,
                                                  table.setup.packet, table.setup.flow_routing));
  const bool fabric = *kind != NetworkKind::kAnalytical;
  // The whole cluster is one communicator, as nccl-tests runs it: every GPU of every node.
  GroupPlacement g;
  g.size = c.total_gpus();
  g.nodes = c.nodes;
  g.per_node = c.gpus_per_node;
  g.sharing_nic = 1;
  if (g.size < 2) {
    return invalid_argument("collective: a communicator of " + std::to_string(g.size) +
                            " GPU has nothing to exchange; expected at least 2 GPUs");
  }
  PREFLIGHT_ASSIGN_OR_RETURN(CollectiveModel model,
                             CollectiveModel::nccl(c, table.setup.collectives, *network, {g}));
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
    if (request.op == o.name) op = &o;
  }
  if (op == nullptr) {
    return invalid_argument("--op " + request.op +
                            ": expected all_reduce, all_gather, reduce_scatter, broadcast, "
                            "reduce, all_to_all or send_recv");
  }
  if (!op->p2p && !op->a2a) PREFLIGHT_RETURN_IF_ERROR(model.check(op->kind, g));
  if (fabric && (op->p2p || op->a2a || request.op == "reduce")) {
    return invalid_argument("--network " + request.network + " --op " + request.op +
                            ": the fabric carries all_reduce, all_gather, reduce_scatter and "
                            "broadcast; use --network analytical");
  }
  table.op = op->name;
  table.network = request.network;
  table.ranks = n;
  if (request.jobs < 0) {
    return invalid_argument("--jobs " + std::to_string(request.jobs) +
                            ": expected 0 (every core) or more");
  }
  // On a fabric each size is a simulation of its own: they run on `jobs` threads, each result in
  // its size's slot, so the table does not depend on the thread count.
  std::vector<StatusOr<SimTime>> fabric_times(sizes.size(), SimTime());
  if (fabric) {
    const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    const int jobs =
        std::min<int>(request.jobs > 0 ? request.jobs : cores, static_cast<int>(sizes.size()));
    std::atomic<size_t> next{0};
    auto worker = [&] {
      for (size_t i = next++; i < sizes.size(); i = next++) {
        fabric_times[i] = run_on_fabric(table.setup, *network, model, g, op->kind, sizes[i]);
      }
    };
    std::vector<std::thread> threads;
    for (int t = 1; t < jobs; ++t) threads.emplace_back(worker);
    worker();
    for (std::thread& t : threads) t.join();
  }
  for (size_t i = 0; i < sizes.size(); ++i) {
    const Bytes b = sizes[i];
    CollectivePlan p;
    if (op->p2p) {
      p = model.p2p(b, c.nodes > 1);
    } else if (op->a2a) {
      p = model.all_to_all(g, b);
    } else {
      p = model.plan(op->kind, g, b);
    }
    SimTime time = p.time;
    if (fabric) {
      if (!fabric_times[i].ok()) return fabric_times[i].status();
      time = *fabric_times[i];
    }
    CollectiveRow row;
    row.bytes = b.count();
    row.time_us = time.to_microseconds();
    row.algbw_gbps =
        row.time_us > 0 ? static_cast<double>(b.count()) / (row.time_us * 1e-6) * 1e-9 : 0;
    row.busbw_gbps = row.algbw_gbps * op->factor;
    row.algorithm = to_string(p.algorithm);
    row.protocol = p.protocol;
    row.channels = p.channels;
    table.rows.push_back(row);
  }
  return table;
}

nlohmann::json collective_table_to_json(const CollectiveTable& t) {
  nlohmann::json rows = nlohmann::json::array();
  for (const CollectiveRow& r : t.rows) {
    rows.push_back({{"bytes", r.bytes},
                    {"time_us", r.time_us},
                    {"algbw_gbps", r.algbw_gbps},
                    {"busbw_gbps", r.busbw_gbps},
                    {"algorithm", r.algorithm},
                    {"protocol", r.protocol},
                    {"channels", r.channels}});
  }
  const ClusterConfig& c = t.setup.cluster;
  return nlohmann::json{{"op", t.op},
                        {"network", t.network},
                        {"ranks", t.ranks},
                        {"nodes", c.nodes},
                        {"gpus_per_node", c.gpus_per_node},
                        {"cluster", c.name},
                        {"nccl_version", t.setup.collectives.nccl_version},
                        {"model", t.setup.collectives.model},
                        {"rows", rows}};
}

}  // namespace preflight
