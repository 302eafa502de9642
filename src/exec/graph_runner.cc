#include "exec/graph_runner.h"

#include <algorithm>
#include <deque>
#include <memory>
#include <queue>
#include <utility>

#include "engine/simulator.h"
#include "exec/transport.h"

namespace preflight {

Category category_of(GraphClass c) {
  switch (c) {
    case GraphClass::kOptimizer:
      return Category::kOptimizer;
    case GraphClass::kTp:
      return Category::kTpComm;
    case GraphClass::kPp:
      return Category::kPpComm;
    case GraphClass::kDp:
    case GraphClass::kOtherComm:
      return Category::kDpComm;
    case GraphClass::kEp:
      return Category::kEpComm;
    case GraphClass::kCp:
      return Category::kCpComm;
    case GraphClass::kOffload:
      return Category::kOffload;
    default:
      return Category::kCompute;
  }
}

GroupPlacement graph_placement(const std::vector<int>& members, int gpus_per_node) {
  std::map<int, int> per_node;
  for (int m : members) per_node[m / gpus_per_node]++;
  GroupPlacement p;
  p.size = static_cast<int>(members.size());
  p.nodes = static_cast<int>(per_node.size());
  p.per_node = 1;
  for (const auto& [node, count] : per_node) p.per_node = std::max(p.per_node, count);
  p.sharing_nic = std::max(1, gpus_per_node / p.per_node);
  return p;
}

const CollectivePlan& GraphPlans::get(int group, CollectiveKind kind, Bytes bytes) {
  const auto key = std::make_tuple(group, static_cast<int>(kind), bytes.count());
  auto it = cache_.find(key);
  if (it != cache_.end()) return it->second;
  return cache_.emplace(key, model_.plan(kind, groups_[group].placement, bytes)).first->second;
}

namespace {

// Exposed communication overlapping other communication counts as the first of these.
constexpr GraphClass kCommPriority[] = {GraphClass::kTp, GraphClass::kCp, GraphClass::kEp,
                                        GraphClass::kPp, GraphClass::kDp, GraphClass::kOtherComm};

struct Interval {
  SimTime start, end;
  GraphClass cls;
};

// A per-rank queue: a CPU thread or a GPU stream, one node at a time, lowest ready order first.
struct Queue {
  bool busy = false;
  std::priority_queue<std::pair<uint64_t, int>, std::vector<std::pair<uint64_t, int>>,
                      std::greater<>>
      ready;
};

struct Rank {
  GraphRankProgram* program = nullptr;
  std::vector<Queue> queues;
  std::vector<SimTime> start, end;
  std::vector<uint8_t> state;     // 0 waiting for deps, 1 ready/queued, 2 running, 3 done
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

class Runner final : public EventHandler {
 public:
  Runner(GraphProgram& p, const Scenario& s, GraphPlans& plans, const GraphRunOptions& options)
      : p_(p), s_(s), plans_(plans), options_(options) {}

  Status prepare(const NetworkBackend& network) {
    if (TransportFactory f = make_transport_factory(network.fabric_factory(), s_)) {
      transport_ = f(&sim_);
    }
    ranks_.resize(p_.ranks.size());
    for (size_t r = 0; r < ranks_.size(); ++r) {
      Rank& rk = ranks_[r];
      rk.program = &p_.ranks[r];
      const size_t n = rk.program->nodes.size();
      rk.queues.resize(static_cast<size_t>(rk.program->queues));
      rk.start.assign(n, SimTime());
      rk.end.assign(n, SimTime());
      rk.state.assign(n, 0);
      nodes_ += static_cast<int64_t>(n);
    }
    return Status();
  }

  StatusOr<GraphRunResult> run() {
    for (int r = 0; r < static_cast<int>(ranks_.size()); ++r) {
      const std::vector<GraphNode>& nodes = ranks_[r].program->nodes;
      for (size_t i = 0; i < nodes.size(); ++i) {
        if (nodes[i].deps == 0) make_ready(r, static_cast<int>(i));
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
      GraphRankResult rr = summarize(ranks_[r]);
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
  GraphNode& node(int r, int i) { return ranks_[r].program->nodes[static_cast<size_t>(i)]; }

  bool cross_node(int a, int b) const {
    return a / s_.cluster.gpus_per_node != b / s_.cluster.gpus_per_node;
  }

  void make_ready(int r, int i) {
    Rank& rk = ranks_[r];
    rk.state[i] = 1;
    const GraphNode& n = node(r, i);
    if (n.queue < 0) {
      start(r, i);
      return;
    }
    rk.queues[n.queue].ready.emplace(n.order, i);
    pump(r, n.queue);
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
    const GraphNode& n = node(r, i);
    const SimTime now = sim_.now();
    rk.state[i] = 2;
    rk.start[i] = now;
    switch (n.kind) {
      case GraphNodeKind::kCollective:
        arrive(r, i);
        return;
      case GraphNodeKind::kSend: {
        const Key key{r, n.peer, n.tag};
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
        if (transport_ && cross_node(r, n.peer) && n.bytes.count() > 0) {
          // Through the fabric; the planner's latency of one transfer counts the shortest path.
          const SimTime latency = plans_.model().p2p(Bytes(1), true).latency;
          transport_->send_gpus(r, n.peer, n.bytes, latency, [this, r, i, m](SimTime finish) {
            land(m, finish);
            schedule_done(r, i, std::max(finish, sim_.now()));
          });
          return;
        }
        const SimTime arrival = now + plans_.model().p2p(n.bytes, cross_node(r, n.peer)).time;
        land(m, arrival);
        schedule_done(r, i, arrival);
        return;
      }
      case GraphNodeKind::kRecv: {
        const Key key{n.peer, r, n.tag};
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
      case GraphNodeKind::kWork: {
        SimTime d = n.duration;
        if (options_.compute != nullptr &&
            (n.cls == GraphClass::kCompute || n.cls == GraphClass::kOptimizer)) {
          const double factor = options_.compute->slowdown(RankContext{r, 0, now});
          if (factor != 1) d = d.scaled(factor);
        }
        schedule_done(r, i, now + d);
        return;
      }
      case GraphNodeKind::kNone:
        schedule_done(r, i, now);
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
    rk.intervals.push_back(
        Interval{msg.start, msg.arrival, node(msg.recv_rank, msg.recv_node).cls});
    // The trace shows a receive from its transfer's start, not from when it was posted (a
    // receive without dependencies is posted at time zero).
    SimTime& shown = rk.start[msg.recv_node];
    shown = std::max(shown, std::min(msg.start, msg.arrival));
    schedule_done(msg.recv_rank, msg.recv_node, std::max(msg.arrival, sim_.now()));
  }

  void arrive(int r, int i) {
    Rank& rk = ranks_[r];
    const GraphNode& n = node(r, i);
    const int g = n.group;
    const int64_t seq = rk.issued[g]++;
    Instance& inst = instances_[{g, seq}];
    if (inst.arrived == 0) {
      inst.kind = n.collective;
      inst.bytes = n.bytes;
      inst.first_rank = r;
      inst.first_node = i;
    } else if (inst.kind != n.collective || inst.bytes.count() != n.bytes.count()) {
      error_ = invalid_argument(
          options_.prefix + ": collective #" + std::to_string(seq + 1) + " on group '" +
          p_.groups[g].name + "' does not match across ranks: " +
          options_.describe(inst.first_rank, inst.first_node) + " issues " + to_string(inst.kind) +
          " of " + std::to_string(inst.bytes.count()) + " bytes, " + options_.describe(r, i) + " " +
          to_string(n.collective) + " of " + std::to_string(n.bytes.count()) + " bytes");
      return;
    }
    inst.arrived++;
    inst.members.emplace_back(r, i);
    const GraphGroup& group = p_.groups[g];
    if (inst.arrived < static_cast<int>(group.members.size())) return;
    const SimTime now = sim_.now();
    result_.collectives++;
    std::vector<std::pair<int, int>> members = std::move(inst.members);
    const CollectiveKind kind = inst.kind;
    const Bytes bytes = inst.bytes;
    instances_.erase({g, seq});
    auto finish = [this, now](const std::vector<std::pair<int, int>>& ms, SimTime end) {
      for (const auto& [mr, mi] : ms) {
        ranks_[mr].intervals.push_back(Interval{now, end, node(mr, mi).cls});
        schedule_done(mr, mi, std::max(end, sim_.now()));
      }
    };
    if (transport_ && group.placement.crosses_nodes() && group.members.size() > 1 &&
        bytes.count() > 0) {
      // Through the fabric, as the transfers of the algorithm the planner chose.
      transport_->collective_gpus(
          group.members, kind, bytes, plans_.get(g, kind, bytes),
          [finish, members = std::move(members)](SimTime end) { finish(members, end); });
      return;
    }
    finish(members, now + plans_.get(g, kind, bytes).time);
  }

  void complete(int r, int i) {
    Rank& rk = ranks_[r];
    GraphNode& n = node(r, i);
    const SimTime now = sim_.now();
    rk.state[i] = 3;
    rk.end[i] = now;
    rk.finished++;
    if (n.kind == GraphNodeKind::kWork) {
      if (now > rk.start[i]) rk.intervals.push_back(Interval{rk.start[i], now, n.cls});
    } else if (n.kind == GraphNodeKind::kSend) {
      rk.intervals.push_back(Interval{rk.start[i], now, n.cls});
    }
    if (options_.trace && n.kind != GraphNodeKind::kNone) {
      result_.trace.push_back(TraceInterval{r, n.trace_stream, rk.start[i], now,
                                            n.name ? *n.name : std::string(), -1,
                                            category_of(n.cls)});
    }
    for (int d : n.dependents) {
      if (--node(r, d).deps == 0) make_ready(r, d);
    }
    if (n.queue >= 0) {
      rk.queues[n.queue].busy = false;
      pump(r, n.queue);
    }
  }

  // After the run: every node of every rank finished, or the first stuck one is named.
  Status check_finished() {
    for (int r = 0; r < static_cast<int>(ranks_.size()); ++r) {
      const Rank& rk = ranks_[r];
      if (rk.finished == static_cast<int64_t>(rk.state.size())) continue;
      for (size_t i = 0; i < rk.state.size(); ++i) {
        if (rk.state[i] != 2) continue;
        const GraphNode& n = node(r, static_cast<int>(i));
        std::string why;
        if (n.kind == GraphNodeKind::kCollective) {
          const GraphGroup& g = p_.groups[n.group];
          const int64_t seq = rk.issued.at(n.group) - 1;
          std::string missing;
          int count = 0;
          for (int m : g.members) {
            if (ranks_[m].issued.count(n.group) && ranks_[m].issued.at(n.group) > seq) continue;
            if (count++ < 8) missing += (missing.empty() ? "" : ", ") + std::to_string(m);
          }
          why = "collective #" + std::to_string(seq + 1) + " on group '" + g.name +
                "' never started: rank(s) " + missing + (count > 8 ? ", ..." : "") +
                " never issued it";
        } else if (n.kind == GraphNodeKind::kRecv) {
          why = "the receive from rank " + std::to_string(n.peer) + " with tag " +
                std::to_string(n.tag) + " never got a matching send";
        } else {
          why = "it never finished";
        }
        return invalid_argument(options_.prefix + ": replay stopped: " +
                                options_.describe(r, static_cast<int>(i)) + ": " + why);
      }
      return invalid_argument(options_.prefix + ": replay stopped: rank " + std::to_string(r) +
                              " finished " + std::to_string(rk.finished) + " of " +
                              std::to_string(rk.state.size()) +
                              " nodes; the rest wait on nodes that never finished");
    }
    return Status();
  }

  // Sweep over the rank's intervals: at each instant the highest-priority class running.
  static GraphRankResult summarize(const Rank& rk) {
    GraphRankResult out;
    out.nodes = static_cast<int64_t>(rk.state.size());
    for (const SimTime& e : rk.end) out.end = std::max(out.end, e);
    std::vector<std::tuple<SimTime, int, uint8_t>> points;
    points.reserve(rk.intervals.size() * 2);
    for (const Interval& iv : rk.intervals) {
      if (iv.end <= iv.start) continue;
      points.emplace_back(iv.start, 1, static_cast<uint8_t>(iv.cls));
      points.emplace_back(iv.end, -1, static_cast<uint8_t>(iv.cls));
    }
    std::sort(points.begin(), points.end());
    int active[kGraphClasses] = {};
    auto on = [&](GraphClass c) { return active[static_cast<int>(c)] > 0; };
    SimTime at;
    Breakdown& b = out.breakdown;
    auto account = [&](SimTime from, SimTime to) {
      if (to <= from) return;
      const SimTime d = to - from;
      bool comm = false;
      for (GraphClass c : kCommPriority) comm = comm || on(c);
      if (on(GraphClass::kCompute) || on(GraphClass::kOptimizer)) out.gpu_busy += d;
      if (comm) out.comm_busy += d;
      if (on(GraphClass::kCompute)) {
        b.compute += d;
      } else if (on(GraphClass::kOptimizer)) {
        b.optimizer += d;
      } else if (comm) {
        for (GraphClass c : kCommPriority) {
          if (!on(c)) continue;
          SimTime* slot[] = {nullptr,    nullptr,    &b.tp_comm, &b.pp_comm,
                             &b.dp_comm, &b.ep_comm, &b.cp_comm, &b.other_comm};
          *slot[static_cast<int>(c)] += d;
          break;
        }
      } else if (on(GraphClass::kOffload)) {
        b.offload += d;  // the GPU waits for a copy to or from the host
      } else if (on(GraphClass::kCpu)) {
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

  GraphProgram& p_;
  const Scenario& s_;
  GraphPlans& plans_;
  const GraphRunOptions& options_;
  std::vector<Rank> ranks_;
  std::map<std::pair<int, int64_t>, Instance> instances_;
  std::unique_ptr<Transport> transport_;  // the flow network's, or null (analytical)
  std::vector<Message> messages_;
  std::map<Key, std::deque<int>> mailbox_;  // sent messages not yet matched with a receive
  std::map<Key, std::deque<std::pair<int, int>>> receivers_;
  Simulator sim_;
  Status error_;
  int64_t nodes_ = 0;
  GraphRunResult result_;
};

}  // namespace

StatusOr<GraphRunResult> run_graph(GraphProgram& p, const Scenario& s,
                                   const NetworkBackend& network, GraphPlans& plans,
                                   const GraphRunOptions& options) {
  Runner runner(p, s, plans, options);
  PREFLIGHT_RETURN_IF_ERROR(runner.prepare(network));
  return runner.run();
}

}  // namespace preflight
