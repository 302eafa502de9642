// The executor's internals (executor.h): the per-stage runner and the run that owns the
// stages, their rendezvous and the transport. Shared by executor.cc (the run) and
// stage_runner.cc (a stage's program on its streams); not for use outside exec/.
#pragma once

#include <algorithm>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <tuple>
#include <vector>

#include "base/check.h"
#include "engine/simulator.h"
#include "exec/executor.h"

namespace preflight {
namespace exec_internal {

struct OpTiming {
  SimTime duration;
  Category category = Category::kCompute;
  bool collective = false;
  bool async = false;
  bool wait_comm = false;
  bool comm_chain = false;
  int stats = -1;  // index into the stage's collective stats
  // A collective whose group crosses nodes, carried by the transport (flow network); `plan`
  // indexes the Execution's plans.
  bool network = false;
  int plan = -1;
  // A collective inside a block whose group spans DP replicas (an EP all-to-all over them), with
  // replicas run apart: the classes in its groups meet before it runs (arrive_crossing).
  bool crosses = false;
  // Collectives: the share of the GPU's SMs the NCCL kernel holds while it runs (its channels,
  // one thread block each, over the SM count), times the calibrated interference factor.
  double sm_share = 0;
  int launches = 1;        // host launches of the op (Op::launches)
  SimTime host_time;       // host work beyond the launches (Op::host_time)
  bool host_sync = false;  // the host waits for the op to finish (Op::host_sync)
};

struct Message {
  SimTime transfer_start;
  SimTime arrival;
};

struct Rendezvous {
  int expected = 0;
  int arrived = 0;
  SimTime ready;
  std::vector<int> members;
  // Through the transport: the collective and when it starts.
  const Op* op = nullptr;
  const OpTiming* timing = nullptr;
  SimTime start;
};

class Execution;

// One pipeline stage of one class of DP replicas (Execution::classes_): the tp·cp ranks of that
// stage and replica, which move together (every kernel waits for its TP and CP peers at the
// next collective, so the group runs at its slowest member's pace).
class StageRunner final : public EventHandler {
 public:
  StageRunner(Execution* exec, int stage, int cls, int index)
      : exec_(exec), stage_(stage), cls_(cls), index_(index) {}
  int stage() const { return stage_; }
  int replica() const;  // the DP replica the runner's class stands for
  void on_event(int64_t payload) override;
  void run_until_blocked();

  // State, readable by Execution.
  SimTime host, compute, comm;  // host thread, compute stream, TP communication stream
  SimTime dp_stream;            // the DP gradient-reduction stream (overlapped buckets)
  // Activation offloading's copy stream, and when each issued copy (by tag) ends.
  SimTime copy_stream;
  std::map<int64_t, SimTime> copies;
  // The collective last started on each communication stream, [start, end) (end as planned
  // when a transport carries it) and its SM share: compute kernels that run under it slow down.
  struct Busy {
    SimTime start, end;
    double share = 0;
  };
  Busy tp_busy_span, dp_busy_span;
  // `d` stretched for the SMs the communication kernels running under [start, start + d) take:
  // the kernel gets (1 − share) of the SMs while they overlap, so its time grows by
  // share × overlap (docs/engine.md "Communication slows the compute it hides behind").
  SimTime with_interference(SimTime start, SimTime d) const {
    double extra = 0;
    for (const Busy* b : {&tp_busy_span, &dp_busy_span}) {
      if (b->share <= 0) continue;
      const SimTime from = std::max(start, b->start);
      const SimTime to = std::min(start + d, b->end);
      if (to > from) extra += b->share * static_cast<double>((to - from).ps());
    }
    return d + SimTime::picoseconds(static_cast<int64_t>(extra));
  }
  Category comm_reason = Category::kTpComm;
  SimTime sync_until;  // the host waited (for a p2p) until this time
  Category sync_reason = Category::kPpComm;
  size_t step = 0;
  bool waiting = false;
  int64_t waiting_tag = 0;
  bool done = false;
  Bytes allocated;  // for the memory counter track
  // Inside a kRun step: the next op, and the start of the current instance's first kernel.
  int block_rep = 0;
  size_t block_op = 0;
  SimTime block_first = SimTime::max();
  // Network operations through a transport: the blocking op of the current step (or of the
  // current block, `net_op`) waits for an event at its start time, then for its completion;
  // async collectives queue on the TP stream, async DP buckets on the DP stream.
  bool net_pending = false;  // the current op is scheduled to start or in flight
  // The current op is a collective across replica classes waiting for its peers or running;
  // `crossing_seq` counts the runner's such collectives (peers meet on the same count).
  bool crossing_pending = false;
  int64_t crossing_seq = 0;
  // Asynchronous collectives across replica classes that this runner's communication stream has
  // launched (its FIFO order is program order, so peers meet on the same count).
  int64_t stream_crossing_seq = 0;
  SimTime net_start;
  const Op* net_op = nullptr;  // a block's op, or null for the current step's
  const OpTiming* net_timing = nullptr;
  struct Bucket {
    SimTime ready;
    size_t step;
  };
  std::deque<Bucket> dp_queue;  // issued, not finished (front is in flight when dp_busy)
  bool dp_busy = false;
  bool waiting_dp = false;
  // The TP stream while it holds a collective carried by the transport: later async ops queue
  // behind it, and a kernel that waits for the stream waits until the queue drains.
  struct CommOp {
    SimTime ready;
    const Op* op;
    const OpTiming* timing;
    int microbatch;
  };
  std::deque<CommOp> tp_queue;  // issued, not finished (front is in flight when tp_busy)
  bool tp_busy = false;
  bool waiting_tp = false;
  SimTime tp_start;
  bool tp_pending() const { return tp_busy || !tp_queue.empty(); }
  void start_network_op();
  void start_async_send(size_t send_step);
  void start_next_bucket();
  void launch_bucket();
  // The front DP bucket, started at `start`, landed at `finish`.
  void finish_bucket(SimTime start, SimTime finish);
  // The replicas the runner's class stands for (Transport::Replicas).
  const Transport::Replicas& replicas() const;
  void start_next_tp();
  void launch_tp();
  void finish_tp(SimTime finish);
  // Runs the current kRun step's block instances from (block_rep, block_op); false when blocked.
  // kTimedApart: the runner holds a distinct rank (`distinct`), so each kernel is timed at its
  // start; the common case pays nothing for it.
  template <bool kTimedApart>
  bool run_block(const Step& st);
  StageResult result;
  // The runner holds a rank the compute model times apart: its kernels are timed at their start
  // on each of `ranks` (its GPUs), the slowest deciding.
  bool distinct = false;
  std::vector<int> ranks;

  // Moves the compute stream to `start` then runs [start, end) as `busy`; the gap before
  // `start` is split between the host sync reason, `reason` (if `reason_until` > old clock),
  // and host overhead.
  void occupy(SimTime start, SimTime end, Category busy, SimTime reason_until, Category reason);
  void attribute_gap(SimTime from, SimTime to, SimTime reason_until, Category reason);
  // The stage's end after its compute stream drained (result.end set): the stage waits for
  // collectives still running on the DP stream (exposed DP communication), then on the TP stream
  // (its last collective's category); what is left is the host finishing (host overhead).
  void attribute_tail();
  void add(Category c, SimTime t);
  void count_collective(const OpTiming& t) {
    if (t.stats < 0) return;
    CollectiveStats& cs = result.collectives[t.stats];
    cs.count++;
    cs.time += t.duration;
    cs.planned_time += t.duration;
  }
  // A collective carried by the transport took `actual` instead of its planned duration.
  void correct_collective_time(const OpTiming& t, SimTime actual) {
    if (t.stats < 0) return;
    result.collectives[t.stats].time += actual - t.duration;
  }

 private:
  Execution* exec_;
  int stage_;
  int cls_;    // the class of DP replicas
  int index_;  // in Execution::runners_: cls_ · stages + stage_
};

// DP replicas that run alike, simulated once: `replica` stands for `count` replicas, all of
// `replicas` (ascending).
struct ReplicaClass {
  int replica = 0;
  int count = 1;
  std::vector<int> replicas;
};

// Stage runners of the replica classes a group holds arrive at a stage-level collective over
// several DP replicas (a DP or expert-DP gradient reduction, when some replica runs apart).
struct ReplicaRendezvous {
  int arrived = 0;
  SimTime start;  // the latest arrival's ready time (and DP stream, for a bucket)
  std::vector<int> members;
};

class Execution {
 public:
  Execution(const Workload& w, const ComputeModel& compute, const CollectiveModel& coll,
            const JobGroups& groups, const ExecutorOptions& options)
      : w_(w), coll_(coll), compute_(&compute), groups_(groups), options_(options) {
    const int stages = static_cast<int>(w.stages.size());
    stages_ = stages;
    // Groups of collectives inside layers that span DP replicas (an EP group over several):
    // replicas that share one with a replica run apart run apart too.
    // So do replicas that share the group of a stage-level collective over part of the
    // replicas (the expert-DP gradient reduction when EP spans replicas): a class stands for its
    // replicas' groups only when they all lie in it.
    auto add_kind = [this](GroupKind g) {
      if (std::find(crossing_kinds_.begin(), crossing_kinds_.end(), g) == crossing_kinds_.end()) {
        crossing_kinds_.push_back(g);
      }
    };
    for (const Block& b : w.blocks) {
      for (const Op& op : b.ops) {
        if (op.type == OpType::kCollective && group_crosses_replicas(options.layout, op.group)) {
          add_kind(op.group);
        }
      }
    }
    for (const Program& p : w.stages) {
      for (const Step& st : p.steps) {
        if ((st.kind == StepKind::kCollective || st.kind == StepKind::kCommAsync) &&
            group_spans_part_of_replicas(options.layout, st.op.group)) {
          add_kind(st.op.group);
        }
      }
    }
    make_classes(compute.distinct_ranks());
    const RankLayout& l = options.layout;
    for (int c = 0; c < static_cast<int>(classes_.size()); ++c) {
      for (int s = 0; s < stages; ++s) {
        runners_.push_back(std::make_unique<StageRunner>(this, s, c, c * stages + s));
        StageRunner& r = *runners_.back();
        const int first = l.tp() * l.cp() * classes_[c].replica;
        for (int i = 0; i < l.tp() * l.cp(); ++i) {
          const int rank = l.rank(s, first + i);
          r.ranks.push_back(rank);
          if (std::binary_search(distinct_.begin(), distinct_.end(), rank)) r.distinct = true;
        }
        if (!r.distinct) r.ranks.clear();
      }
    }
    mailbox_.resize(runners_.size());
    // Time every op of every block once: all instances of a block cost the same.
    for (const Block& b : w.blocks) {
      // Memory counter: a layer's forward keeps its activations, its backward frees them.
      const bool track = options.layer_activation_bytes.count() > 0;
      memory_sign_.push_back(!track                  ? 0
                             : b.name == "layer.fwd" ? 1
                             : b.name == "layer.bwd" ? -1
                                                     : 0);
      std::vector<OpTiming> t;
      t.reserve(b.ops.size());
      for (const Op& op : b.ops) {
        t.push_back(time_op(op));
        t.back().crosses = classes_.size() > 1 && op.type == OpType::kCollective &&
                           group_crosses_replicas(l, op.group);
      }
      timings_.push_back(std::move(t));
    }
    step_timings_.resize(stages);
    step_crosses_.resize(stages);
    for (int s = 0; s < stages; ++s) {
      for (const Step& st : w.stages[s].steps) {
        OpTiming t;
        const bool collective = st.kind == StepKind::kCollective || st.kind == StepKind::kCommAsync;
        if (collective) t = time_op(st.op);
        step_timings_[s].push_back(t);
        step_crosses_[s].push_back(collective && classes_.size() > 1 &&
                                   group_crosses_replicas(l, st.op.group));
        if (st.kind == StepKind::kCollective && st.op.group == GroupKind::kEmbedding) {
          for (int c = 0; c < static_cast<int>(classes_.size()); ++c) {
            rendezvous_[{c, st.tag}].expected++;
          }
        }
      }
    }
    for (auto& r : runners_) r->result.collectives = stats_names_;
    if (options_.transport) transport_ = options_.transport(&sim_);
  }

  // The classes of DP replicas: every replica that holds a distinct rank is a class of its own;
  // the others run alike and are one class (the first), unless options_.fold_replicas is off.
  void make_classes(std::vector<int> distinct) {
    const RankLayout& l = options_.layout;
    distinct_ = std::move(distinct);
    std::vector<bool> apart(l.dp(), !options_.fold_replicas);
    for (int rank : distinct_) {
      PREFLIGHT_CHECK_MSG(rank >= 0 && rank < l.stage_ranks() * l.pp(),
                          "a distinct rank outside the job's layout");
      apart[(rank % l.stage_ranks()) / (l.tp() * l.cp())] = true;
    }
    // A replica that shares a crossing group with one run apart waits for it inside that
    // collective, so it runs apart too (to a fixed point over the group kinds).
    for (bool grew = true; grew;) {
      grew = false;
      for (int d = 0; d < l.dp(); ++d) {
        if (!apart[d]) continue;
        for (GroupKind g : crossing_kinds_) {
          for (int peer : replicas_sharing(g, d)) {
            if (!apart[peer]) apart[peer] = grew = true;
          }
        }
      }
    }
    const int rest = static_cast<int>(std::count(apart.begin(), apart.end(), false));
    if (rest > 0) {
      ReplicaClass folded{-1, rest, {}};
      for (int d = 0; d < l.dp(); ++d) {
        if (apart[d]) continue;
        if (folded.replica < 0) folded.replica = d;
        folded.replicas.push_back(d);
      }
      classes_.push_back(std::move(folded));
    }
    for (int d = 0; d < l.dp(); ++d) {
      if (apart[d]) classes_.push_back(ReplicaClass{d, 1, {d}});
    }
    class_of_replica_.assign(l.dp(), 0);
    for (int c = 0; c < static_cast<int>(classes_.size()); ++c) {
      for (int d : classes_[c].replicas) class_of_replica_[d] = c;
    }
  }

  // The DP replicas that the groups of kind `g` holding replica `d`'s ranks (its tp·cp ranks of
  // stage 0; every stage's groups are alike) reach, ascending, `d` among them.
  std::vector<int> replicas_sharing(GroupKind g, int d) const {
    const RankLayout& l = options_.layout;
    const int width = l.tp() * l.cp();
    std::vector<int> out;
    for (int i = 0; i < width; ++i) {
      for (int rank : l.members(g, 0, d * width + i)) out.push_back(rank / width);
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
  }

  // The replicas runner class `cls` stands for, for the transport: all (empty) when one class
  // stands for every replica.
  const Transport::Replicas& class_replicas(int cls) const {
    static const Transport::Replicas kAll;
    return classes_.size() == 1 ? kAll : classes_[cls].replicas;
  }

  // Whether runner `index`'s stage-level step `step` is a collective it shares with other
  // classes (over all the replicas, or part of them with some of another class).
  bool step_crosses_replicas(int index, size_t step) const {
    const int stage = index % stages_;
    return step_crosses_[stage][step] &&
           meets_others(index / stages_, w_.stages[stage].steps[step].op.group);
  }
  // The replicas runner `index`'s groups of kind `g` reach, and what a transport call for them
  // stands for (empty: every replica).
  std::vector<int> group_reach(int index, GroupKind g) const {
    return replicas_sharing(g, classes_[index / stages_].replica);
  }
  Transport::Replicas transport_replicas(const std::vector<int>& reach) const {
    return static_cast<int>(reach.size()) == options_.layout.dp() ? Transport::Replicas() : reach;
  }

  // The compute time of `op` starting at `start` on the runner's GPUs: the slowest decides. A
  // time the input fixed (SimAI's compute) scales by each GPU's slowdown.
  SimTime rank_duration(const StageRunner& r, const Op& op, SimTime start) const {
    SimTime d;
    for (int rank : r.ranks) {
      const RankContext at{rank, r.stage(), start};
      if (op.fixed_time.ps() > 0) {
        const double factor = compute_->slowdown(at);
        d = std::max(d, factor == 1 ? op.fixed_time : op.fixed_time.scaled(factor));
      } else {
        d = std::max(d, compute_->duration(op, at));
      }
    }
    return d;
  }

  // Work that must start at a later instant: a collective carried by the transport that a
  // rendezvous started (payload: its index in `deferred_`).
  struct Deferred final : EventHandler {
    explicit Deferred(Execution* e) : ex(e) {}
    void on_event(int64_t i) override {
      std::function<void()> f = std::move(ex->deferred_[static_cast<size_t>(i)]);
      f();
    }
    Execution* ex;
  };
  void defer(SimTime at, std::function<void()> f) {
    deferred_.push_back(std::move(f));
    sim_.schedule(std::max(at, sim_.now()), &deferred_handler_,
                  static_cast<int64_t>(deferred_.size() - 1));
  }

  OpTiming time_op(const Op& op) {
    OpTiming t;
    t.category = op.category;
    t.async = op.async;
    t.wait_comm = op.wait_comm;
    t.comm_chain = op.comm_chain;
    t.launches = std::max(0, op.launches);
    t.host_time = options_.host_time_factor == 1.0 ? op.host_time
                                                   : op.host_time.scaled(options_.host_time_factor);
    t.host_sync = op.host_sync;
    if (op.type == OpType::kCollective) {
      const GroupPlacement& g = group(op.group);
      const CollectivePlan plan = coll_.plan(op.collective, g, op.comm_bytes);
      t.duration = plan.time;
      t.collective = true;
      // The SMs the collective's kernels hold: NCCL's channels, a thread block each, or the
      // library's own count (Op::comm_sms).
      const int sms = op.comm_sms > 0 ? op.comm_sms : plan.channels;
      if (options_.sm_count > 0 && sms > 0) {
        t.sm_share = std::min(
            1.0, options_.comm_sm_interference * sms / static_cast<double>(options_.sm_count));
      }
      t.stats = stats_index(op.name, to_string(op.collective), plan);
      // With a transport, a collective whose group spans nodes goes through the fabric.
      if (options_.transport && g.crosses_nodes() && g.size > 1 && op.comm_bytes.count() > 0) {
        t.network = true;
        t.plan = static_cast<int>(plans_.size());
        plans_.push_back(plan);
      }
    } else {
      t.duration = compute_duration(op);
    }
    return t;
  }

  SimTime compute_duration(const Op& op) {
    return op.fixed_time.ps() > 0 ? op.fixed_time : compute_->duration(op);
  }

  const GroupPlacement& group(GroupKind g) const { return groups_.of(g); }

  int stats_index(const std::string& name, const char* kind, const CollectivePlan& plan) {
    for (size_t i = 0; i < stats_names_.size(); ++i) {
      if (stats_names_[i].name == name) return static_cast<int>(i);
    }
    CollectiveStats s;
    s.name = name;
    s.kind = kind;
    s.algorithm = to_string(plan.algorithm);
    s.protocol = plan.protocol;
    s.channels = plan.channels;
    s.busbw_gbps = plan.busbw_gbps;
    stats_names_.push_back(s);
    return static_cast<int>(stats_names_.size()) - 1;
  }

  // A trace interval of runner `index` (its stage and replica).
  void record(int index, int stream, SimTime start, SimTime end, const std::string& name, int mb,
              Category c) {
    result_.trace.push_back(TraceInterval{index % stages_, stream, start, end, name, mb, c,
                                          classes_[index / stages_].replica});
  }

  // A pipeline send within replica class `cls`.
  void send(int cls, const Step& st, SimTime transfer_start, SimTime arrival) {
    const int peer = cls * stages_ + st.peer;
    mailbox_[peer][st.tag] = Message{transfer_start, arrival};
    StageRunner& r = *runners_[peer];
    if (r.waiting && r.waiting_tag == st.tag) {
      r.waiting = false;
      sim_.schedule(std::max(arrival, sim_.now()), &r, 0);
    }
  }

  bool take_message(int index, int64_t tag, Message* out) {
    auto& box = mailbox_[index];
    auto it = box.find(tag);
    if (it == box.end()) return false;
    *out = it->second;
    box.erase(it);
    return true;
  }

  // Runner `index` arrives at a cross-stage collective, ready at `ready`. When the last member
  // stage of its replica class arrives the collective runs for everyone; each member's wait for
  // the others is bubble.
  void arrive(int index, int64_t tag, SimTime ready, const Op& op, const OpTiming& t);

  // Runner `index` arrives at step `step` of its stage, a collective across the DP replicas
  // simulated apart, ready at `ready`. When every class its group holds (every class, for a
  // group over all replicas) has arrived it runs from the latest
  // ready time (for a DP bucket, also the latest DP stream): a replica that waits for a slower
  // one waits inside the collective, as NCCL's kernel does, and that wait is the collective's
  // category. Blocking steps resume after it; a bucket resumes its runner at once (clocks
  // unchanged) with its DP stream busy until the bucket ends.
  void arrive_replicas(int index, size_t step, SimTime ready, const Op& op, const OpTiming& t);

  // Whether runner class `cls` meets other classes in the groups of kind `g` that hold its
  // replicas: a class apart whose groups reach other replicas (the folded class holds whole
  // groups).
  bool meets_others(int cls, GroupKind g) const {
    for (int d : replicas_sharing(g, classes_[cls].replica)) {
      if (class_of_replica_[d] != cls) return true;
    }
    return false;
  }
  // The replica classes among `replicas`.
  int classes_in(const std::vector<int>& replicas) const {
    std::vector<int> c;
    for (int d : replicas) c.push_back(class_of_replica_[d]);
    std::sort(c.begin(), c.end());
    return static_cast<int>(std::unique(c.begin(), c.end()) - c.begin());
  }

  // Runner `index` reaches, ready at `ready`, the collective `op` (timed `t`) inside a block whose
  // groups span DP replicas run apart (an EP all-to-all over them; every replica of those groups
  // runs apart, make_classes). When each class of the groups has reached the same one (its
  // `crossing_seq`-th) it runs from the latest ready time for all of them at once: a class that
  // arrives first waits inside it, as NCCL's kernel does, and the wait is its category.
  void arrive_crossing(int index, const Op& op, const OpTiming& t, SimTime ready, int microbatch);

  // The same for an asynchronous collective (an EP all-to-all overlapped with another
  // micro-batch's compute, overlap_moe_comm) at the front of runner `index`'s communication
  // stream, launched at `ready`: the stream of a class that arrives first waits inside it, and
  // each member's stream is busy until it ends (StageRunner::finish_tp).
  void arrive_stream_crossing(int index, SimTime ready);

  // Runner `index` starts (now) its front DP bucket, step `step`, a collective across the DP
  // replicas run apart that the transport carries: when every class has started it, it runs
  // from now, the latest start, for all of them at once, and each member's DP stream is busy
  // until it lands (StageRunner::finish_bucket).
  void arrive_bucket(int index, size_t step);

  void start_rendezvous(int cls, int64_t tag);

  ExecutionResult run() {
    for (auto& r : runners_) {
      const size_t s = r->stage();
      if (s < options_.resident_bytes.size() && options_.trace != TraceLevel::kNone &&
          options_.layer_activation_bytes.count() > 0) {
        r->allocated = options_.resident_bytes[s];
        result_.memory_trace.push_back(
            MemorySample{static_cast<int>(s), SimTime(), r->allocated, r->replica()});
      }
    }
    for (auto& r : runners_) sim_.schedule(SimTime(), r.get(), 0);
    result_.events = sim_.run();
    SimTime end;
    int critical = 0;
    for (size_t i = 0; i < runners_.size(); ++i) {
      StageRunner& r = *runners_[i];
      PREFLIGHT_CHECK_MSG(r.done, "pipeline deadlock: a stage never finished its program");
      r.result.end = std::max(std::max(r.compute, r.dp_stream), std::max(r.comm, r.host));
      r.attribute_tail();
      if (r.result.end > end) {
        end = r.result.end;
        critical = static_cast<int>(i);
      }
    }
    // The stages reported are those of the replica class that holds the critical stage; so are
    // the trace and the memory track. Replicas that end together (the last DP collective joins
    // them) report the last class that ends then: a replica run apart, which the user asked about.
    for (int c = static_cast<int>(classes_.size()) - 1; c > critical / stages_; --c) {
      bool found = false;
      for (int s = 0; s < stages_ && !found; ++s) {
        if (runners_[c * stages_ + s]->result.end == end) {
          critical = c * stages_ + s;
          found = true;
        }
      }
      if (found) break;
    }
    const int cls = critical / stages_;
    for (int s = 0; s < stages_; ++s) result_.stages.push_back(runners_[cls * stages_ + s]->result);
    result_.critical_stage = critical % stages_;
    result_.critical_replica = classes_[cls].replica;
    for (size_t c = 0; c < classes_.size(); ++c) {
      ReplicaResult rr{classes_[c].replica, classes_[c].count, SimTime(), {}};
      for (int s = 0; s < stages_; ++s) {
        const StageResult& sr = runners_[c * stages_ + s]->result;
        rr.end = std::max(rr.end, sr.end);
        if (classes_.size() > 1) rr.stages.push_back(sr);
      }
      result_.replicas.push_back(std::move(rr));
    }
    if (classes_.size() > 1) {
      const int keep = result_.critical_replica;
      std::erase_if(result_.trace, [keep](const TraceInterval& t) { return t.replica != keep; });
      std::erase_if(result_.memory_trace,
                    [keep](const MemorySample& m) { return m.replica != keep; });
    }
    result_.iteration_time = end;
    if (transport_) {
      result_.has_network_stats = true;
      result_.network = transport_->stats(end);
    }
    return std::move(result_);
  }

  const Workload& w_;
  const CollectiveModel& coll_;
  const ComputeModel* compute_;
  JobGroups groups_;
  ExecutorOptions options_;
  Simulator sim_;
  std::unique_ptr<Transport> transport_;
  std::vector<std::unique_ptr<StageRunner>> runners_;
  std::vector<std::vector<OpTiming>> timings_;
  std::vector<int> memory_sign_;  // per block: +1 keeps activations, −1 frees them, 0 neither
  std::vector<std::map<int64_t, Message>> mailbox_;
  std::map<std::pair<int, int64_t>, Rendezvous> rendezvous_;  // by (replica class, tag)
  // By (stage, step, the first replica of the group).
  std::map<std::tuple<int, size_t, int>, ReplicaRendezvous> replica_rendezvous_;
  // Collectives inside blocks across replica classes, by (stage, first replica of the groups,
  // the members' crossing_seq).
  struct CrossingRendezvous {
    SimTime start;
    std::vector<int> members;
    std::vector<int> replicas;
  };
  using CrossingKey = std::tuple<int, int, int64_t>;
  using CrossingTable = std::map<CrossingKey, CrossingRendezvous>;
  CrossingTable crossing_;
  CrossingTable stream_crossing_;  // the same, for asynchronous collectives
  // Runner `index`, ready at `ready`, joins meeting `key` of `table` among the classes of
  // replicas `reach`; true, with the members and the latest ready time, for the last to come.
  bool meet(CrossingTable& table, const CrossingKey& key, const std::vector<int>& reach, int index,
            SimTime ready, std::vector<int>* members, SimTime* start);
  std::vector<GroupKind> crossing_kinds_;  // kinds of block collectives that span replicas
  std::vector<int> class_of_replica_;
  int stages_ = 0;
  std::vector<int> distinct_;  // ranks the compute model times apart, ascending
  std::vector<ReplicaClass> classes_;
  std::vector<std::vector<bool>> step_crosses_;  // per stage and step: across the replicas
  std::vector<std::vector<OpTiming>> step_timings_;
  std::vector<CollectivePlan> plans_;  // of the collectives carried by the transport
  std::vector<std::function<void()>> deferred_;
  Deferred deferred_handler_{this};
  std::vector<CollectiveStats> stats_names_;
  ExecutionResult result_;
};

inline int StageRunner::replica() const { return exec_->classes_[cls_].replica; }
inline const Transport::Replicas& StageRunner::replicas() const {
  return exec_->class_replicas(cls_);
}

}  // namespace exec_internal
}  // namespace preflight
