#include "interop/chakra_replay.h"

#include <algorithm>
#include <map>
#include <memory>
#include <unordered_map>

#include "collective/collective_model.h"
#include "compute/compute_model.h"
#include "compute/measured_model.h"
#include "exec/graph_runner.h"
#include "network/backends.h"
#include "network/network_backend.h"

namespace preflight {
namespace {

// What a node's interval counts as in the breakdown: the node's category (Preflight's export
// writes one), else compute for kernels and other communication for collectives and messages.
GraphClass class_of(const ChakraNode& n) {
  if (n.is_cpu_op) return GraphClass::kCpu;
  const std::string& c = n.category;
  if (c == "optimizer") return GraphClass::kOptimizer;
  if (c == "tp") return GraphClass::kTp;
  if (c == "pp") return GraphClass::kPp;
  if (c == "dp") return GraphClass::kDp;
  if (c == "ep") return GraphClass::kEp;
  if (c == "cp") return GraphClass::kCp;
  if (c == "offload") return GraphClass::kOffload;
  if (c == "compute") return GraphClass::kCompute;
  const bool comm = n.type == ChakraNodeType::kColl || n.type == ChakraNodeType::kSend ||
                    n.type == ChakraNodeType::kRecv;
  return comm ? GraphClass::kOtherComm : GraphClass::kCompute;
}

std::string where(int rank, const ChakraNode& n) {
  return "rank " + std::to_string(rank) + " node " + std::to_string(n.id) + " ('" +
         n.name.substr(0, 80) + "')";
}

// Turns a Chakra workload into the execution core's graph program: communicator groups and
// their placement, each node's kind, queue, time and class; errors name the node.
class Lowering {
 public:
  Lowering(const ChakraWorkload& w, const Scenario& s, const ComputeModel& compute)
      : w_(w), s_(s), compute_(compute) {}

  Status lower() {
    const int world = static_cast<int>(w_.ranks.size());
    const int gpn = s_.cluster.gpus_per_node;
    std::vector<int> all(world);
    for (int r = 0; r < world; ++r) all[r] = r;
    auto add_group = [&](const std::string& name, const std::vector<int>& members) {
      GraphGroup g;
      g.name = name;
      g.members = members;
      g.placement = graph_placement(members, gpn);
      group_index_[name] = static_cast<int>(program_.groups.size());
      program_.groups.push_back(std::move(g));
    };
    for (const auto& [name, members] : w_.groups) {
      for (int m : members) {
        if (m >= world) {
          return invalid_argument(w_.prefix + ": communicator group '" + name + "' names rank " +
                                  std::to_string(m) + ", but the workload has " +
                                  std::to_string(world) + " ranks (files .0.et to ." +
                                  std::to_string(world - 1) + ".et)");
        }
      }
      add_group(name, members);
    }
    if (!group_index_.count("")) add_group("", all);
    if (!group_index_.count("0")) group_index_["0"] = group_index_[""];
    std::vector<GroupPlacement> placements;
    for (const GraphGroup& g : program_.groups) placements.push_back(g.placement);
    PREFLIGHT_ASSIGN_OR_RETURN(network_, make_network_backend(s_.simulation.network, s_));
    PREFLIGHT_ASSIGN_OR_RETURN(
        CollectiveModel model,
        CollectiveModel::nccl(s_.cluster, s_.collectives, *network_, placements));
    collectives_ = std::make_unique<CollectiveModel>(std::move(model));
    plans_ = std::make_unique<GraphPlans>(*collectives_, program_.groups);

    program_.ranks.resize(world);
    for (int r = 0; r < world; ++r) {
      GraphRankProgram& rp = program_.ranks[r];
      const ChakraTrace& t = w_.ranks[r];
      const size_t n = t.nodes.size();
      rp.nodes.resize(n);
      std::unordered_map<uint64_t, int> index;
      index.reserve(n);
      for (size_t i = 0; i < n; ++i) index[t.nodes[i].id] = static_cast<int>(i);
      std::map<int64_t, int> queue_index;
      auto queue = [&](int64_t key) {
        auto [it, fresh] = queue_index.emplace(key, rp.queues);
        if (fresh) rp.queues++;
        return it->second;
      };
      for (size_t i = 0; i < n; ++i) {
        const ChakraNode& node = t.nodes[i];
        for (const auto* deps : {&node.data_deps, &node.ctrl_deps}) {
          for (uint64_t d : *deps) {
            rp.nodes[i].deps++;
            rp.nodes[index.at(d)].dependents.push_back(static_cast<int>(i));
          }
        }
        PREFLIGHT_RETURN_IF_ERROR(lower_node(r, static_cast<int>(i), queue));
      }
    }
    return Status();
  }

  StatusOr<ChakraReplayResult> run(const ChakraReplayOptions& options, const ComputeModel* slow) {
    GraphRunOptions o;
    o.trace = options.trace;
    o.compute = slow;
    o.prefix = w_.prefix;
    o.describe = [this](int rank, int node) {
      return where(rank, w_.ranks[rank].nodes[static_cast<size_t>(node)]);
    };
    return run_graph(program_, s_, *network_, *plans_, o);
  }

 private:
  template <typename QueueFn>
  Status lower_node(int r, int i, QueueFn& queue) {
    GraphNode& g = program_.ranks[r].nodes[i];
    const ChakraNode& n = w_.ranks[r].nodes[i];
    const int world = static_cast<int>(w_.ranks.size());
    auto fail = [&](const std::string& what) {
      return invalid_argument(w_.prefix + "." + std::to_string(r) + ".et: " + where(r, n) + ": " +
                              what);
    };
    g.order = n.id;
    g.cls = class_of(n);
    g.name = &n.name;
    constexpr int64_t kCpuQueue = INT64_MIN;
    if (n.comm_size > (int64_t{1} << 50)) return fail("comm_size is over 1 PiB");
    switch (n.type) {
      case ChakraNodeType::kComp: {
        g.kind = GraphNodeKind::kWork;
        if (n.duration_ps >= 0) {
          g.duration = SimTime::picoseconds(n.duration_ps);
        } else if (n.duration_micros > 0) {
          g.duration = SimTime::picoseconds(static_cast<int64_t>(n.duration_micros) * 1000000);
        } else if (!n.is_cpu_op && (n.num_ops > 0 || n.tensor_size > 0)) {
          // Roofline: max(FLOPs at the fused-kernel rate, bytes at the HBM rate) + kernel gap.
          Op op;
          op.type = OpType::kAttention;
          op.flops = Flops(static_cast<double>(n.num_ops));
          op.bytes = Bytes(n.tensor_size);
          g.duration = compute_.duration(op);
        }
        const int64_t stream = std::max<int64_t>(n.stream, 0);
        g.queue = queue(n.is_cpu_op ? kCpuQueue : stream);
        g.trace_stream = n.is_cpu_op ? -1 : static_cast<int>(stream);
        return bound(g.duration, fail);
      }
      case ChakraNodeType::kMemLoad:
      case ChakraNodeType::kMemStore: {
        g.kind = GraphNodeKind::kWork;
        Op op;
        op.type = OpType::kMemory;
        op.bytes = Bytes(n.tensor_size);
        g.duration = n.tensor_size > 0 ? compute_.duration(op) : SimTime();
        return bound(g.duration, fail);
      }
      case ChakraNodeType::kMetadata:
      case ChakraNodeType::kInvalid:
        g.kind = GraphNodeKind::kNone;
        return Status();
      case ChakraNodeType::kSend:
        if (n.comm_dst < 0) {
          return fail(
              "COMM_SEND_NODE without comm_dst (the receiving rank); Chakra's PyTorch "
              "converter does not record it, so such traces cannot be replayed as they "
              "are");
        }
        if (n.comm_dst >= world || n.comm_dst == r) {
          return fail("comm_dst " + std::to_string(n.comm_dst) + " is not another rank of the " +
                      std::to_string(world) + "-rank workload");
        }
        g.kind = GraphNodeKind::kSend;
        g.peer = static_cast<int>(n.comm_dst);
        g.tag = n.comm_tag;
        g.bytes = Bytes(n.comm_size);
        return bound(collectives_->p2p(g.bytes, cross_node(r, g.peer)).time, fail);
      case ChakraNodeType::kRecv:
        if (n.comm_src < 0) return fail("COMM_RECV_NODE without comm_src (the sending rank)");
        if (n.comm_src >= world || n.comm_src == r) {
          return fail("comm_src " + std::to_string(n.comm_src) + " is not another rank of the " +
                      std::to_string(world) + "-rank workload");
        }
        g.kind = GraphNodeKind::kRecv;
        g.peer = static_cast<int>(n.comm_src);
        g.tag = n.comm_tag;
        return Status();
      case ChakraNodeType::kColl:
        break;
    }
    auto it = group_index_.find(n.pg_name);
    if (it == group_index_.end()) {
      return fail("pg_name '" + n.pg_name +
                  "' is not a known communicator group (groups come from PREFIX.comm_group.json "
                  "or the process groups of METADATA nodes; '' and '0' mean all ranks)");
    }
    const GraphGroup& group = program_.groups[it->second];
    if (!std::binary_search(group.members.begin(), group.members.end(), r)) {
      return fail("rank " + std::to_string(r) + " is not a member of communicator group '" +
                  n.pg_name + "'");
    }
    const int members = static_cast<int>(group.members.size());
    CollectiveKind kind = CollectiveKind::kAllReduce;
    Bytes bytes(n.comm_size);
    switch (static_cast<ChakraCommType>(n.comm_type)) {
      case ChakraCommType::kAllReduce:
        break;
      case ChakraCommType::kAllGather:
        kind = CollectiveKind::kAllGather;
        if (n.comm_size > (int64_t{1} << 50) / members) return fail("comm_size is too large");
        bytes = Bytes(n.comm_size * members);  // the per-rank input → the gathered buffer
        break;
      case ChakraCommType::kReduceScatter:
      case ChakraCommType::kReduceScatterBlock:
        kind = CollectiveKind::kReduceScatter;
        break;
      case ChakraCommType::kAllToAll:
        kind = CollectiveKind::kAllToAll;
        break;
      case ChakraCommType::kBroadcast:
      case ChakraCommType::kReduce:  // NCCL runs both as one pipelined ring pass
        kind = CollectiveKind::kBroadcast;
        break;
      case ChakraCommType::kBarrier:
        bytes = Bytes(4);  // torch.distributed.barrier: an all-reduce of one element
        break;
      case ChakraCommType::kGather:
      case ChakraCommType::kScatter:
        return fail(std::string("collective ") +
                    to_string(static_cast<ChakraCommType>(n.comm_type)) +
                    " is not supported (supported: ALL_REDUCE, ALL_GATHER, REDUCE_SCATTER, "
                    "REDUCE_SCATTER_BLOCK, ALL_TO_ALL, BROADCAST, REDUCE, BARRIER)");
      default:
        return fail("COMM_COLL_NODE without a comm_type attribute");
    }
    Status ok = collectives_->check(kind, group.placement);
    if (!ok.ok()) return fail(ok.message());
    g.kind = GraphNodeKind::kCollective;
    g.group = it->second;
    g.collective = kind;
    g.bytes = bytes;
    const int64_t stream = n.stream >= 0 ? n.stream : 1;
    g.queue = queue(stream);
    g.trace_stream = static_cast<int>(stream);
    return bound(plans_->get(it->second, kind, bytes).time, fail);
  }

  // Every node's time adds to a bound on the run's end (a critical path cannot take longer than
  // everything in sequence): past 10^6 s the trace is refused, which keeps the int64
  // picosecond clock far from overflow.
  template <typename Fail>
  Status bound(SimTime t, Fail& fail) {
    total_ps_ += static_cast<double>(t.ps());
    if (total_ps_ > 1e18) return fail("the trace's node times add up to over 10^6 s");
    return Status();
  }

  bool cross_node(int a, int b) const {
    return a / s_.cluster.gpus_per_node != b / s_.cluster.gpus_per_node;
  }

  const ChakraWorkload& w_;
  const Scenario& s_;
  const ComputeModel& compute_;
  std::unique_ptr<NetworkBackend> network_;
  std::unique_ptr<CollectiveModel> collectives_;
  std::unique_ptr<GraphPlans> plans_;
  GraphProgram program_;
  std::map<std::string, int> group_index_;
  double total_ps_ = 0;
};

}  // namespace

StatusOr<Scenario> chakra_scenario(int ranks, const Scenario& s) {
  if (ranks < 1) return invalid_argument("Chakra workload: no ranks");
  const int gpn = s.cluster.gpus_per_node;
  if (gpn < 1) return invalid_argument("cluster.gpus_per_node: expected at least 1");
  Scenario r = s;
  r.cluster.nodes = (ranks + gpn - 1) / gpn;
  return r;
}

StatusOr<ChakraReplayResult> replay_chakra(const ChakraWorkload& w, const Scenario& s,
                                           const ChakraReplayOptions& options) {
  if (w.ranks.empty()) return invalid_argument(w.prefix + ": no ranks to replay");
  if (w.ranks.size() > static_cast<size_t>(1) << 24) {
    return invalid_argument(w.prefix + ": more than 16M ranks");
  }
  if (s.cluster.total_gpus() < static_cast<int64_t>(w.ranks.size())) {
    return invalid_argument(w.prefix + ": " + std::to_string(w.ranks.size()) +
                            " ranks do not fit the cluster's " +
                            std::to_string(s.cluster.total_gpus()) + " GPUs");
  }
  for (const ChakraTrace& t : w.ranks) {
    if (t.nodes.size() > static_cast<size_t>(INT32_MAX)) {
      return invalid_argument(w.prefix + ": a rank holds more than 2^31 nodes");
    }
  }
  // Stragglers (simulation.slow_ranks) slow their rank's GPU nodes, judged at each node's start.
  for (size_t i = 0; i < s.simulation.slow_ranks.size(); ++i) {
    const int rank = s.simulation.slow_ranks[i].rank;
    if (rank >= static_cast<int>(w.ranks.size())) {
      return invalid_argument(w.prefix + ": simulation.slow_ranks[" + std::to_string(i) +
                              "].rank: " + std::to_string(rank) + ": the workload has ranks 0-" +
                              std::to_string(w.ranks.size() - 1));
    }
  }
  const std::unique_ptr<ComputeModel> compute = make_compute_model(s);
  std::unique_ptr<ComputeModel> slowed;
  if (!s.simulation.slow_ranks.empty()) {
    slowed = make_slow_ranks_model(*compute, s.simulation.slow_ranks);
  }
  Lowering lowering(w, s, *compute);
  PREFLIGHT_RETURN_IF_ERROR(lowering.lower());
  return lowering.run(options, slowed.get());
}

}  // namespace preflight
