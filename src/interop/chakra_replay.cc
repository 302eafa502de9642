#include "interop/chakra_replay.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>
#include <map>
#include <memory>
#include <queue>
#include <set>
#include <tuple>
#include <unordered_map>

#include "collective/collective_model.h"
#include "compute/compute_model.h"
#include "compute/measured_model.h"
#include "engine/simulator.h"
#include "exec/transport.h"
#include "network/backends.h"
#include "network/network_backend.h"

namespace preflight {
namespace {

// What an interval of a rank's time counts as; the first seven are Category-like classes in
// the order the breakdown reports them.
enum Class : uint8_t {
  kCompute,
  kOptimizer,
  kTp,
  kPp,
  kDp,
  kEp,
  kCp,
  kOtherComm,
  kOffload,  // activation copies to or from host memory (Preflight's export, category offload)
  kCpu,
  kClasses,
};

// Exposed communication overlapping other communication counts as the first of these.
constexpr Class kCommPriority[] = {kTp, kCp, kEp, kPp, kDp, kOtherComm};

Class class_of(const ChakraNode& n) {
  if (n.is_cpu_op) return kCpu;
  const std::string& c = n.category;
  if (c == "optimizer") return kOptimizer;
  if (c == "tp") return kTp;
  if (c == "pp") return kPp;
  if (c == "dp") return kDp;
  if (c == "ep") return kEp;
  if (c == "cp") return kCp;
  if (c == "offload") return kOffload;
  if (c == "compute") return kCompute;
  const bool comm = n.type == ChakraNodeType::kColl || n.type == ChakraNodeType::kSend ||
                    n.type == ChakraNodeType::kRecv;
  return comm ? kOtherComm : kCompute;
}

Category category_of(Class c) {
  switch (c) {
    case kOptimizer:
      return Category::kOptimizer;
    case kTp:
      return Category::kTpComm;
    case kPp:
      return Category::kPpComm;
    case kDp:
    case kOtherComm:
      return Category::kDpComm;
    case kEp:
      return Category::kEpComm;
    case kCp:
      return Category::kCpComm;
    case kOffload:
      return Category::kOffload;
    default:
      return Category::kCompute;
  }
}

struct Interval {
  SimTime start, end;
  Class cls;
};

struct Group {
  std::string name;
  std::vector<int> members;  // ascending
  GroupPlacement placement;
};

// A per-rank queue: a CPU thread or a GPU stream, one node at a time, lowest ready id first.
struct Queue {
  bool busy = false;
  std::priority_queue<std::pair<uint64_t, int>, std::vector<std::pair<uint64_t, int>>,
                      std::greater<>>
      ready;
};

struct Rank {
  const ChakraTrace* trace = nullptr;
  std::vector<int> pending;
  std::vector<std::vector<int>> dependents;
  std::vector<int> queue_of;  // −1: no queue
  std::vector<Queue> queues;
  std::vector<SimTime> start, end;
  std::vector<uint8_t> state;     // 0 waiting for deps, 1 ready/queued, 2 running, 3 done
  std::vector<SimTime> duration;  // COMP/MEM nodes
  std::vector<int> group;         // COMM_COLL_NODE: index into groups
  std::vector<CollectiveKind> kind;
  std::vector<Bytes> bytes;
  std::map<int, int64_t> issued;  // per group: collectives issued so far
  int64_t finished = 0;
  std::vector<Interval> intervals;
};

struct Instance {
  int arrived = 0;
  CollectiveKind kind = CollectiveKind::kAllReduce;
  Bytes bytes;
  int first_rank = 0, first_node = 0;
  std::vector<std::pair<int, int>> members;  // (rank, node)
};

// A point-to-point message, in send order per (source, destination, tag): it lands at
// `arrival` (known when it starts on the analytical network, when the transport completes it on
// the flow network) and goes to the receive matched with it.
struct Message {
  SimTime start, arrival;
  bool landed = false;
  int recv_rank = -1, recv_node = -1;
};

using Key = std::tuple<int, int, int64_t>;  // (source, destination, tag)

std::string where(int rank, const ChakraNode& n) {
  return "rank " + std::to_string(rank) + " node " + std::to_string(n.id) + " ('" +
         n.name.substr(0, 80) + "')";
}

class Replay final : public EventHandler {
 public:
  Replay(const ChakraWorkload& w, const Scenario& s, const ComputeModel& compute,
         const ChakraReplayOptions& options)
      : w_(w), s_(s), compute_(compute), options_(options) {}

  // Resolves groups, kinds, durations and queues; errors name the node.
  Status prepare() {
    const int world = static_cast<int>(w_.ranks.size());
    const int gpn = s_.cluster.gpus_per_node;
    std::vector<int> all(world);
    for (int r = 0; r < world; ++r) all[r] = r;
    auto add_group = [&](const std::string& name, const std::vector<int>& members) {
      Group g;
      g.name = name;
      g.members = members;
      std::map<int, int> per_node;
      for (int m : members) per_node[m / gpn]++;
      g.placement.size = static_cast<int>(members.size());
      g.placement.nodes = static_cast<int>(per_node.size());
      g.placement.per_node = 1;
      for (const auto& [node, count] : per_node) {
        g.placement.per_node = std::max(g.placement.per_node, count);
      }
      g.placement.sharing_nic = std::max(1, gpn / g.placement.per_node);
      group_index_[name] = static_cast<int>(groups_.size());
      groups_.push_back(std::move(g));
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
    for (const Group& g : groups_) placements.push_back(g.placement);
    PREFLIGHT_ASSIGN_OR_RETURN(network_, make_network_backend(s_.simulation.network, s_));
    if (TransportFactory f = make_transport_factory(network_->fabric_factory(), s_)) {
      transport_ = f(&sim_);
    }
    PREFLIGHT_ASSIGN_OR_RETURN(
        CollectiveModel model,
        CollectiveModel::nccl(s_.cluster, s_.collectives, *network_, placements));
    collectives_ = std::make_unique<CollectiveModel>(std::move(model));

    ranks_.resize(world);
    for (int r = 0; r < world; ++r) {
      Rank& rk = ranks_[r];
      const ChakraTrace& t = w_.ranks[r];
      rk.trace = &t;
      const size_t n = t.nodes.size();
      rk.pending.assign(n, 0);
      rk.dependents.assign(n, {});
      rk.queue_of.assign(n, -1);
      rk.start.assign(n, SimTime());
      rk.end.assign(n, SimTime());
      rk.state.assign(n, 0);
      rk.duration.assign(n, SimTime());
      rk.group.assign(n, -1);
      rk.kind.assign(n, CollectiveKind::kAllReduce);
      rk.bytes.assign(n, Bytes());
      std::unordered_map<uint64_t, int> index;
      index.reserve(n);
      for (size_t i = 0; i < n; ++i) index[t.nodes[i].id] = static_cast<int>(i);
      std::map<int64_t, int> queue_index;
      auto queue = [&](int64_t key) {
        auto [it, fresh] = queue_index.emplace(key, static_cast<int>(rk.queues.size()));
        if (fresh) rk.queues.emplace_back();
        return it->second;
      };
      for (size_t i = 0; i < n; ++i) {
        const ChakraNode& node = t.nodes[i];
        for (const auto* deps : {&node.data_deps, &node.ctrl_deps}) {
          for (uint64_t d : *deps) {
            rk.pending[i]++;
            rk.dependents[index.at(d)].push_back(static_cast<int>(i));
          }
        }
        PREFLIGHT_RETURN_IF_ERROR(prepare_node(r, static_cast<int>(i), queue));
      }
      nodes_ += static_cast<int64_t>(n);
    }
    return Status();
  }

  StatusOr<ChakraReplayResult> run() {
    for (int r = 0; r < static_cast<int>(ranks_.size()); ++r) {
      Rank& rk = ranks_[r];
      for (size_t i = 0; i < rk.pending.size(); ++i) {
        if (rk.pending[i] == 0) make_ready(r, static_cast<int>(i));
      }
    }
    result_.events = sim_.run();
    if (!error_.ok()) return error_;
    PREFLIGHT_RETURN_IF_ERROR(check_finished());
    result_.nodes = nodes_;
    if (transport_) {
      SimTime end;
      for (const Rank& rk : ranks_) {
        for (const SimTime& e : rk.end) end = std::max(end, e);
      }
      result_.has_network_stats = true;
      result_.network = transport_->stats(end);
    }
    for (int r = 0; r < static_cast<int>(ranks_.size()); ++r) {
      ChakraRankResult rr = summarize(ranks_[r]);
      if (rr.end > result_.iteration_time) {
        result_.iteration_time = rr.end;
        result_.critical_rank = r;
      }
      result_.ranks.push_back(rr);
    }
    return std::move(result_);
  }

  void on_event(int64_t payload) override {
    if (!error_.ok()) return;
    complete(static_cast<int>(payload >> 32), static_cast<int>(payload & 0xffffffff));
  }

 private:
  template <typename QueueFn>
  Status prepare_node(int r, int i, QueueFn& queue) {
    Rank& rk = ranks_[r];
    const ChakraNode& n = rk.trace->nodes[i];
    auto fail = [&](const std::string& what) {
      return invalid_argument(w_.prefix + "." + std::to_string(r) + ".et: " + where(r, n) + ": " +
                              what);
    };
    constexpr int64_t kCpuQueue = INT64_MIN;
    if (n.comm_size > (int64_t{1} << 50)) return fail("comm_size is over 1 PiB");
    switch (n.type) {
      case ChakraNodeType::kComp: {
        if (n.duration_ps >= 0) {
          rk.duration[i] = SimTime::picoseconds(n.duration_ps);
        } else if (n.duration_micros > 0) {
          rk.duration[i] = SimTime::picoseconds(static_cast<int64_t>(n.duration_micros) * 1000000);
        } else if (!n.is_cpu_op && (n.num_ops > 0 || n.tensor_size > 0)) {
          // Roofline: max(FLOPs at the fused-kernel rate, bytes at the HBM rate) + kernel gap.
          Op op;
          op.type = OpType::kAttention;
          op.flops = Flops(static_cast<double>(n.num_ops));
          op.bytes = Bytes(n.tensor_size);
          rk.duration[i] = compute_.duration(op);
        }
        rk.queue_of[i] = queue(n.is_cpu_op ? kCpuQueue : std::max<int64_t>(n.stream, 0));
        return bound(rk.duration[i], fail);
      }
      case ChakraNodeType::kMemLoad:
      case ChakraNodeType::kMemStore: {
        Op op;
        op.type = OpType::kMemory;
        op.bytes = Bytes(n.tensor_size);
        rk.duration[i] = n.tensor_size > 0 ? compute_.duration(op) : SimTime();
        return bound(rk.duration[i], fail);
      }
      case ChakraNodeType::kMetadata:
      case ChakraNodeType::kInvalid:
        return Status();
      case ChakraNodeType::kSend:
        if (n.comm_dst < 0) {
          return fail(
              "COMM_SEND_NODE without comm_dst (the receiving rank); Chakra's PyTorch "
              "converter does not record it, so such traces cannot be replayed as they "
              "are");
        }
        if (n.comm_dst >= static_cast<int>(ranks_.size()) || n.comm_dst == r) {
          return fail("comm_dst " + std::to_string(n.comm_dst) + " is not another rank of the " +
                      std::to_string(ranks_.size()) + "-rank workload");
        }
        return bound(p2p_time(r, n.comm_dst, n.comm_size), fail);
      case ChakraNodeType::kRecv:
        if (n.comm_src < 0) return fail("COMM_RECV_NODE without comm_src (the sending rank)");
        if (n.comm_src >= static_cast<int>(ranks_.size()) || n.comm_src == r) {
          return fail("comm_src " + std::to_string(n.comm_src) + " is not another rank of the " +
                      std::to_string(ranks_.size()) + "-rank workload");
        }
        return Status();
      case ChakraNodeType::kColl:
        break;
    }
    auto g = group_index_.find(n.pg_name);
    if (g == group_index_.end()) {
      return fail("pg_name '" + n.pg_name +
                  "' is not a known communicator group (groups come from PREFIX.comm_group.json "
                  "or the process groups of METADATA nodes; '' and '0' mean all ranks)");
    }
    const Group& group = groups_[g->second];
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
    rk.group[i] = g->second;
    rk.kind[i] = kind;
    rk.bytes[i] = bytes;
    rk.queue_of[i] = queue(n.stream >= 0 ? n.stream : 1);
    return bound(collective_time(g->second, kind, bytes), fail);
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

  SimTime p2p_time(int src, int dst, int64_t bytes) {
    return collectives_->p2p(Bytes(bytes), cross_node(src, dst)).time;
  }

  // The collective model's plan, cached per (group, kind, bytes).
  const CollectivePlan& collective_plan(int group, CollectiveKind kind, Bytes bytes) {
    const auto key = std::make_tuple(group, static_cast<int>(kind), bytes.count());
    auto it = plan_cache_.find(key);
    if (it != plan_cache_.end()) return it->second;
    return plan_cache_.emplace(key, collectives_->plan(kind, groups_[group].placement, bytes))
        .first->second;
  }
  SimTime collective_time(int group, CollectiveKind kind, Bytes bytes) {
    return collective_plan(group, kind, bytes).time;
  }

  void make_ready(int r, int i) {
    Rank& rk = ranks_[r];
    rk.state[i] = 1;
    const int q = rk.queue_of[i];
    if (q < 0) {
      start(r, i);
      return;
    }
    Queue& queue = rk.queues[q];
    queue.ready.emplace(rk.trace->nodes[i].id, i);
    pump(r, q);
  }

  void pump(int r, int q) {
    Queue& queue = ranks_[r].queues[q];
    if (queue.busy || queue.ready.empty()) return;
    const int i = queue.ready.top().second;
    queue.ready.pop();
    queue.busy = true;
    start(r, i);
  }

  void schedule_done(int r, int i, SimTime at) {
    sim_.schedule(at, this, (static_cast<int64_t>(r) << 32) | static_cast<int64_t>(i));
  }

  void start(int r, int i) {
    Rank& rk = ranks_[r];
    const ChakraNode& n = rk.trace->nodes[i];
    const SimTime now = sim_.now();
    rk.state[i] = 2;
    rk.start[i] = now;
    switch (n.type) {
      case ChakraNodeType::kColl:
        arrive(r, i);
        return;
      case ChakraNodeType::kSend: {
        const Key key{r, n.comm_dst, n.comm_tag};
        result_.messages++;
        const int m = static_cast<int>(messages_.size());
        messages_.push_back(Message{now, now, false, -1, -1});
        auto waiting = receivers_.find(key);
        if (waiting != receivers_.end() && !waiting->second.empty()) {
          std::tie(messages_[m].recv_rank, messages_[m].recv_node) = waiting->second.front();
          waiting->second.pop_front();
        } else {
          mailbox_[key].push_back(m);
        }
        if (transport_ && cross_node(r, n.comm_dst) && n.comm_size > 0) {
          // Through the fabric; the planner's latency of one transfer counts the shortest path.
          const SimTime latency = collectives_->p2p(Bytes(1), true).latency;
          transport_->send_gpus(r, n.comm_dst, Bytes(n.comm_size), latency,
                                [this, r, i, m](SimTime finish) {
                                  land(m, finish);
                                  schedule_done(r, i, std::max(finish, sim_.now()));
                                });
          return;
        }
        const SimTime arrival = now + p2p_time(r, n.comm_dst, n.comm_size);
        land(m, arrival);
        schedule_done(r, i, arrival);
        return;
      }
      case ChakraNodeType::kRecv: {
        const Key key{n.comm_src, r, n.comm_tag};
        auto box = mailbox_.find(key);
        if (box != mailbox_.end() && !box->second.empty()) {
          const int m = box->second.front();
          box->second.pop_front();
          messages_[m].recv_rank = r;
          messages_[m].recv_node = i;
          if (messages_[m].landed) deliver(m);
        } else {
          receivers_[key].emplace_back(r, i);
        }
        return;
      }
      default:
        schedule_done(r, i, now + rk.duration[i]);
        return;
    }
  }

  // Message m lands at `arrival`; its receive, if already matched, completes then.
  void land(int m, SimTime arrival) {
    messages_[m].landed = true;
    messages_[m].arrival = arrival;
    if (messages_[m].recv_rank >= 0) deliver(m);
  }

  // Message m to the receive matched with it.
  void deliver(int m) {
    const Message& msg = messages_[m];
    Rank& rk = ranks_[msg.recv_rank];
    const ChakraNode& n = rk.trace->nodes[msg.recv_node];
    rk.intervals.push_back(Interval{msg.start, msg.arrival, class_of(n)});
    // The trace shows a receive from its transfer's start, not from when it was posted (a
    // receive without dependencies is posted at time zero).
    SimTime& shown = rk.start[msg.recv_node];
    shown = std::max(shown, std::min(msg.start, msg.arrival));
    schedule_done(msg.recv_rank, msg.recv_node, std::max(msg.arrival, sim_.now()));
  }

  void arrive(int r, int i) {
    Rank& rk = ranks_[r];
    const int g = rk.group[i];
    const int64_t seq = rk.issued[g]++;
    Instance& inst = instances_[{g, seq}];
    if (inst.arrived == 0) {
      inst.kind = rk.kind[i];
      inst.bytes = rk.bytes[i];
      inst.first_rank = r;
      inst.first_node = i;
    } else if (inst.kind != rk.kind[i] || inst.bytes.count() != rk.bytes[i].count()) {
      const ChakraNode& a = ranks_[inst.first_rank].trace->nodes[inst.first_node];
      const ChakraNode& b = rk.trace->nodes[i];
      error_ = invalid_argument(
          w_.prefix + ": collective #" + std::to_string(seq + 1) + " on group '" + groups_[g].name +
          "' does not match across ranks: " + where(inst.first_rank, a) + " issues " +
          to_string(inst.kind) + " of " + std::to_string(inst.bytes.count()) + " bytes, " +
          where(r, b) + " " + to_string(rk.kind[i]) + " of " + std::to_string(rk.bytes[i].count()) +
          " bytes");
      return;
    }
    inst.arrived++;
    inst.members.emplace_back(r, i);
    const Group& group = groups_[g];
    if (inst.arrived < static_cast<int>(group.members.size())) return;
    const SimTime now = sim_.now();
    result_.collectives++;
    std::vector<std::pair<int, int>> members = std::move(inst.members);
    const CollectiveKind kind = inst.kind;
    const Bytes bytes = inst.bytes;
    instances_.erase({g, seq});
    auto finish = [this, now](const std::vector<std::pair<int, int>>& ms, SimTime end) {
      for (const auto& [mr, mi] : ms) {
        Rank& m = ranks_[mr];
        m.intervals.push_back(Interval{now, end, class_of(m.trace->nodes[mi])});
        schedule_done(mr, mi, std::max(end, sim_.now()));
      }
    };
    if (transport_ && group.placement.crosses_nodes() && group.members.size() > 1 &&
        bytes.count() > 0) {
      // Through the fabric, as the transfers of the algorithm the planner chose.
      transport_->collective_gpus(
          group.members, kind, bytes, collective_plan(g, kind, bytes),
          [finish, members = std::move(members)](SimTime end) { finish(members, end); });
      return;
    }
    finish(members, now + collective_time(g, kind, bytes));
  }

  void complete(int r, int i) {
    Rank& rk = ranks_[r];
    const ChakraNode& n = rk.trace->nodes[i];
    const SimTime now = sim_.now();
    rk.state[i] = 3;
    rk.end[i] = now;
    rk.finished++;
    if (n.type == ChakraNodeType::kComp || n.type == ChakraNodeType::kMemLoad ||
        n.type == ChakraNodeType::kMemStore) {
      if (now > rk.start[i]) rk.intervals.push_back(Interval{rk.start[i], now, class_of(n)});
    } else if (n.type == ChakraNodeType::kSend) {
      rk.intervals.push_back(Interval{rk.start[i], now, class_of(n)});
    }
    if (options_.trace) {
      const int q = rk.queue_of[i];
      int stream = -2;
      if (n.is_cpu_op) {
        stream = -1;
      } else if (q >= 0) {
        stream = static_cast<int>(
            n.type == ChakraNodeType::kColl && n.stream < 0 ? 1 : std::max<int64_t>(n.stream, 0));
      }
      if (n.type != ChakraNodeType::kMetadata && n.type != ChakraNodeType::kInvalid) {
        result_.trace.push_back(
            TraceInterval{r, stream, rk.start[i], now, n.name, -1, category_of(class_of(n))});
      }
    }
    for (int d : rk.dependents[i]) {
      if (--rk.pending[d] == 0) make_ready(r, d);
    }
    if (rk.queue_of[i] >= 0) {
      rk.queues[rk.queue_of[i]].busy = false;
      pump(r, rk.queue_of[i]);
    }
  }

  // After the run: every node of every rank finished, or the first stuck one is named.
  Status check_finished() const {
    for (int r = 0; r < static_cast<int>(ranks_.size()); ++r) {
      const Rank& rk = ranks_[r];
      if (rk.finished == static_cast<int64_t>(rk.state.size())) continue;
      for (size_t i = 0; i < rk.state.size(); ++i) {
        if (rk.state[i] != 2) continue;
        const ChakraNode& n = rk.trace->nodes[i];
        std::string why;
        if (n.type == ChakraNodeType::kColl) {
          const Group& g = groups_[rk.group[i]];
          const int64_t seq = rk.issued.at(rk.group[i]) - 1;
          std::string missing;
          int count = 0;
          for (int m : g.members) {
            if (ranks_[m].issued.count(rk.group[i]) && ranks_[m].issued.at(rk.group[i]) > seq) {
              continue;
            }
            if (count++ < 8) missing += (missing.empty() ? "" : ", ") + std::to_string(m);
          }
          why = "collective #" + std::to_string(seq + 1) + " on group '" + g.name +
                "' never started: rank(s) " + missing + (count > 8 ? ", ..." : "") +
                " never issued it";
        } else if (n.type == ChakraNodeType::kRecv) {
          why = "the receive from rank " + std::to_string(n.comm_src) + " with tag " +
                std::to_string(n.comm_tag) + " never got a matching send";
        } else {
          why = "it never finished";
        }
        return invalid_argument(w_.prefix + ": replay stopped: " + where(r, n) + ": " + why);
      }
      return invalid_argument(w_.prefix + ": replay stopped: rank " + std::to_string(r) +
                              " finished " + std::to_string(rk.finished) + " of " +
                              std::to_string(rk.state.size()) +
                              " nodes; the rest wait on nodes that never finished");
    }
    return Status();
  }

  // Sweep over the rank's intervals: at each instant the highest-priority class running.
  static ChakraRankResult summarize(const Rank& rk) {
    ChakraRankResult out;
    out.nodes = static_cast<int64_t>(rk.state.size());
    for (const SimTime& e : rk.end) out.end = std::max(out.end, e);
    std::vector<std::tuple<SimTime, int, uint8_t>> points;
    points.reserve(rk.intervals.size() * 2);
    for (const Interval& iv : rk.intervals) {
      if (iv.end <= iv.start) continue;
      points.emplace_back(iv.start, 1, iv.cls);
      points.emplace_back(iv.end, -1, iv.cls);
    }
    std::sort(points.begin(), points.end());
    int active[kClasses] = {};
    SimTime at;
    Breakdown& b = out.breakdown;
    auto account = [&](SimTime from, SimTime to) {
      if (to <= from) return;
      const SimTime d = to - from;
      bool comm = false;
      for (Class c : kCommPriority) comm = comm || active[c] > 0;
      if (active[kCompute] > 0 || active[kOptimizer] > 0) out.gpu_busy += d;
      if (comm) out.comm_busy += d;
      if (active[kCompute] > 0) {
        b.compute += d;
      } else if (active[kOptimizer] > 0) {
        b.optimizer += d;
      } else if (comm) {
        for (Class c : kCommPriority) {
          if (active[c] == 0) continue;
          SimTime* slot[] = {nullptr,    nullptr,    &b.tp_comm, &b.pp_comm,
                             &b.dp_comm, &b.ep_comm, &b.cp_comm, &b.other_comm};
          *slot[c] += d;
          break;
        }
      } else if (active[kOffload] > 0) {
        b.offload += d;  // the GPU waits for a copy to or from the host
      } else if (active[kCpu] > 0) {
        b.host_overhead += d;
      } else {
        b.bubble += d;
      }
    };
    for (const auto& [t, delta, cls] : points) {
      account(at, t);
      at = t;
      active[cls] += delta;
    }
    account(at, out.end);
    return out;
  }

  const ChakraWorkload& w_;
  const Scenario& s_;
  const ComputeModel& compute_;
  ChakraReplayOptions options_;
  std::unique_ptr<NetworkBackend> network_;
  std::unique_ptr<CollectiveModel> collectives_;
  std::vector<Group> groups_;
  std::map<std::string, int> group_index_;
  std::vector<Rank> ranks_;
  std::map<std::pair<int, int64_t>, Instance> instances_;
  std::unique_ptr<Transport> transport_;  // the flow network's, or null (analytical)
  std::vector<Message> messages_;
  std::map<Key, std::deque<int>> mailbox_;  // sent messages not yet matched with a receive
  std::map<Key, std::deque<std::pair<int, int>>> receivers_;
  std::map<std::tuple<int, int, int64_t>, CollectivePlan> plan_cache_;
  double total_ps_ = 0;
  Simulator sim_;
  Status error_;
  int64_t nodes_ = 0;
  ChakraReplayResult result_;
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
  const std::unique_ptr<ComputeModel> compute =
      make_compute_model(s);
  Replay replay(w, s, *compute, options);
  PREFLIGHT_RETURN_IF_ERROR(replay.prepare());
  return replay.run();
}

}  // namespace preflight
