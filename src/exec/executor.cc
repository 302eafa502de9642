#include "exec/executor.h"

#include <algorithm>
#include <deque>
#include <map>
#include <memory>

#include "base/check.h"
#include "engine/simulator.h"

namespace preflight {
namespace {

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

class StageRunner final : public EventHandler {
 public:
  StageRunner(Execution* exec, int stage) : exec_(exec), stage_(stage) {}
  void on_event(int64_t payload) override;
  void run_until_blocked();

  // State, readable by Execution.
  SimTime host, compute, comm;  // host thread, compute stream, TP communication stream
  SimTime dp_stream;            // the DP gradient-reduction stream (overlapped buckets)
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
  void start_next_tp();
  void launch_tp();
  void finish_tp(SimTime finish);
  // Runs the current kRun step's block instances from (block_rep, block_op); false when blocked.
  bool run_block(const Step& st);
  StageResult result;

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
};

class Execution {
 public:
  Execution(const Workload& w, const ComputeModel& compute, const CollectiveModel& coll,
            const JobGroups& groups, const ExecutorOptions& options)
      : w_(w), coll_(coll), compute_(&compute), groups_(groups), options_(options) {
    const size_t stages = w.stages.size();
    mailbox_.resize(stages);
    for (size_t s = 0; s < stages; ++s) runners_.push_back(std::make_unique<StageRunner>(this, s));
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
      for (const Op& op : b.ops) t.push_back(time_op(op));
      timings_.push_back(std::move(t));
    }
    step_timings_.resize(stages);
    for (size_t s = 0; s < stages; ++s) {
      for (const Step& st : w.stages[s].steps) {
        OpTiming t;
        if (st.kind == StepKind::kCollective || st.kind == StepKind::kCommAsync) {
          t = time_op(st.op);
        }
        step_timings_[s].push_back(t);
        if (st.kind == StepKind::kCollective && st.op.group == GroupKind::kEmbedding) {
          rendezvous_[st.tag].expected++;
        }
      }
    }
    for (auto& r : runners_) r->result.collectives = stats_names_;
    if (options_.transport) transport_ = options_.transport(&sim_);
  }

  // Starts a cross-stage collective carried by the transport (payload: its tag).
  struct RendezvousStarter final : EventHandler {
    explicit RendezvousStarter(Execution* e) : ex(e) {}
    void on_event(int64_t tag) override { ex->start_rendezvous(tag); }
    Execution* ex;
  };

  OpTiming time_op(const Op& op) {
    OpTiming t;
    t.category = op.category;
    t.async = op.async;
    t.wait_comm = op.wait_comm;
    t.comm_chain = op.comm_chain;
    t.launches = std::max(0, op.launches);
    t.host_time = op.host_time;
    t.host_sync = op.host_sync;
    if (op.type == OpType::kCollective) {
      const GroupPlacement& g = group(op.group);
      const CollectivePlan plan = coll_.plan(op.collective, g, op.comm_bytes);
      t.duration = plan.time;
      t.collective = true;
      if (options_.sm_count > 0 && plan.channels > 0) {
        t.sm_share = std::min(1.0, options_.comm_sm_interference * plan.channels /
                                       static_cast<double>(options_.sm_count));
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

  const GroupPlacement& group(GroupKind g) const {
    switch (g) {
      case GroupKind::kTensor:
        return groups_.tp;
      case GroupKind::kData:
        return groups_.dp;
      case GroupKind::kPipeline:
        return groups_.pp;
      case GroupKind::kEmbedding:
        return groups_.embedding;
      case GroupKind::kContext:
        return groups_.cp;
      case GroupKind::kExpert:
        return groups_.ep;
      case GroupKind::kExpertTensor:
        return groups_.etp;
      case GroupKind::kExpertData:
        return groups_.edp;
    }
    return groups_.tp;
  }

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

  void record(int stage, int stream, SimTime start, SimTime end, const std::string& name, int mb,
              Category c) {
    result_.trace.push_back(TraceInterval{stage, stream, start, end, name, mb, c});
  }

  void send(int from, const Step& st, SimTime transfer_start, SimTime arrival) {
    (void)from;
    mailbox_[st.peer][st.tag] = Message{transfer_start, arrival};
    StageRunner& r = *runners_[st.peer];
    if (r.waiting && r.waiting_tag == st.tag) {
      r.waiting = false;
      sim_.schedule(std::max(arrival, sim_.now()), &r, 0);
    }
  }

  bool take_message(int stage, int64_t tag, Message* out) {
    auto& box = mailbox_[stage];
    auto it = box.find(tag);
    if (it == box.end()) return false;
    *out = it->second;
    box.erase(it);
    return true;
  }

  // A stage arrives at a cross-stage collective, ready at `ready`. When the last member arrives
  // the collective runs for everyone; each member's wait for the others is bubble.
  void arrive(int stage, int64_t tag, SimTime ready, const Op& op, const OpTiming& t) {
    const SimTime duration = t.duration;
    const std::string& name = op.name;
    Rendezvous& r = rendezvous_[tag];
    r.arrived++;
    r.ready = std::max(r.ready, ready);
    r.members.push_back(stage);
    if (r.arrived < r.expected) return;
    const SimTime start = r.ready;
    if (t.network) {
      // Every member waits (bubble) until the start, then for the transport's completion.
      for (int m : r.members) {
        StageRunner& s = *runners_[m];
        if (start > s.compute) s.result.breakdown.bubble += start - s.compute;
        s.compute = start;
        s.host = std::max(s.host, start);
      }
      r.op = &op;
      r.timing = &t;
      r.start = start;
      sim_.schedule(std::max(start, sim_.now()), &rendezvous_starter_, tag);
      return;
    }
    for (int m : r.members) {
      StageRunner& s = *runners_[m];
      if (start > s.compute) s.result.breakdown.bubble += start - s.compute;
      s.compute = start;
      s.occupy(start, start + duration, Category::kDpComm, SimTime(), Category::kCompute);
      s.host = std::max(s.host, start);
      s.waiting = false;
      if (options_.trace != TraceLevel::kNone) {
        record(m, 0, start, start + duration, name, -1, Category::kDpComm);
      }
      sim_.schedule(std::max(start + duration, sim_.now()), &s, 0);
    }
  }

  void start_rendezvous(int64_t tag) {
    Rendezvous& r = rendezvous_[tag];
    transport_->collective(r.op->group, r.members.front(), r.op->collective, r.op->comm_bytes,
                           plans_[r.timing->plan], [this, tag](SimTime finish) {
                             Rendezvous& rv = rendezvous_[tag];
                             for (int m : rv.members) {
                               StageRunner& s = *runners_[m];
                               s.occupy(rv.start, finish, Category::kDpComm, SimTime(),
                                        Category::kCompute);
                               s.correct_collective_time(*rv.timing, finish - rv.start);
                               s.waiting = false;
                               if (options_.trace != TraceLevel::kNone) {
                                 record(m, 0, rv.start, finish, rv.op->name, -1, Category::kDpComm);
                               }
                               sim_.schedule(sim_.now(), &s, 0);
                             }
                           });
  }

  ExecutionResult run() {
    for (size_t s = 0; s < runners_.size(); ++s) {
      if (s < options_.resident_bytes.size() && options_.trace != TraceLevel::kNone &&
          options_.layer_activation_bytes.count() > 0) {
        runners_[s]->allocated = options_.resident_bytes[s];
        result_.memory_trace.push_back(
            MemorySample{static_cast<int>(s), SimTime(), runners_[s]->allocated});
      }
    }
    for (auto& r : runners_) sim_.schedule(SimTime(), r.get(), 0);
    result_.events = sim_.run();
    SimTime end;
    for (size_t s = 0; s < runners_.size(); ++s) {
      StageRunner& r = *runners_[s];
      PREFLIGHT_CHECK_MSG(r.done, "pipeline deadlock: a stage never finished its program");
      r.result.end = std::max(std::max(r.compute, r.dp_stream), std::max(r.comm, r.host));
      r.attribute_tail();
      if (r.result.end > end) {
        end = r.result.end;
        result_.critical_stage = static_cast<int>(s);
      }
      result_.stages.push_back(r.result);
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
  std::map<int64_t, Rendezvous> rendezvous_;
  std::vector<std::vector<OpTiming>> step_timings_;
  std::vector<CollectivePlan> plans_;  // of the collectives carried by the transport
  RendezvousStarter rendezvous_starter_{this};
  std::vector<CollectiveStats> stats_names_;
  ExecutionResult result_;
};

void StageRunner::add(Category c, SimTime t) {
  Breakdown& b = result.breakdown;
  switch (c) {
    case Category::kCompute:
      b.compute += t;
      break;
    case Category::kTpComm:
      b.tp_comm += t;
      break;
    case Category::kPpComm:
      b.pp_comm += t;
      break;
    case Category::kDpComm:
      b.dp_comm += t;
      break;
    case Category::kEpComm:
      b.ep_comm += t;
      break;
    case Category::kCpComm:
      b.cp_comm += t;
      break;
    case Category::kOptimizer:
      b.optimizer += t;
      break;
  }
}

void StageRunner::attribute_gap(SimTime from, SimTime to, SimTime reason_until, Category reason) {
  if (to <= from) return;
  SimTime cursor = from;
  // 1. Waiting for another stage's data or a comm stream: `reason` up to `reason_until`.
  if (reason_until > cursor) {
    const SimTime until = std::min(reason_until, to);
    add(reason, until - cursor);
    cursor = until;
  }
  // 2. The host was blocked in a p2p synchronisation.
  if (sync_until > cursor && cursor < to) {
    const SimTime until = std::min(sync_until, to);
    add(sync_reason, until - cursor);
    cursor = until;
  }
  // 3. The rest: the device waited for the host to launch.
  if (cursor < to) result.breakdown.host_overhead += to - cursor;
}

void StageRunner::attribute_tail() {
  SimTime cursor = compute;
  if (dp_stream > cursor) {
    add(Category::kDpComm, dp_stream - cursor);
    cursor = dp_stream;
  }
  if (comm > cursor) {
    add(comm_reason, comm - cursor);
    cursor = comm;
  }
  if (result.end > cursor) result.breakdown.host_overhead += result.end - cursor;
}

void StageRunner::occupy(SimTime start, SimTime end, Category busy, SimTime reason_until,
                         Category reason) {
  attribute_gap(compute, start, reason_until, reason);
  add(busy, end - start);
  if (busy == Category::kCompute) result.busy_compute += end - start;
  compute = end;
}

// Payloads: 0 resume, 1 start the current network op, 2 start the front DP bucket, 3 start the
// front of the TP stream's queue, 4 the TP stream's front (not carried by the transport) ended,
// kAsyncSend + i start the asynchronous send of step i.
constexpr int64_t kAsyncSend = 16;

void StageRunner::on_event(int64_t payload) {
  if (payload >= kAsyncSend) {
    start_async_send(static_cast<size_t>(payload - kAsyncSend));
  } else if (payload == 1) {
    start_network_op();
  } else if (payload == 2) {
    launch_bucket();
  } else if (payload == 3) {
    launch_tp();
  } else if (payload == 4) {
    finish_tp(exec_->sim_.now());
  } else {
    run_until_blocked();
  }
}

void StageRunner::start_network_op() {
  Execution& ex = *exec_;
  if (net_op != nullptr) {
    // A blocking collective inside a block.
    const Op& op = *net_op;
    const OpTiming& t = *net_timing;
    const int microbatch = ex.w_.stages[stage_].steps[step].microbatch;
    ex.transport_->collective(
        op.group, stage_, op.collective, op.comm_bytes, ex.plans_[t.plan],
        [this, &op, &t, microbatch](SimTime finish) {
          Execution& e = *exec_;
          occupy(net_start, finish, t.category, SimTime(), Category::kCompute);
          block_first = std::min(block_first, net_start);
          correct_collective_time(t, finish - net_start);
          if (e.options_.trace == TraceLevel::kKernels) {
            e.record(stage_, 0, net_start, finish, op.name, microbatch, t.category);
          }
          net_pending = false;
          net_op = nullptr;
          ++block_op;
          run_until_blocked();
        });
    return;
  }
  const Step& st = ex.w_.stages[stage_].steps[step];
  if (st.kind == StepKind::kSend) {
    const CollectivePlan plan = ex.coll_.p2p(Bytes(1), true);
    ex.transport_->send(stage_, st.peer, st.bytes, plan.latency, [this, &st](SimTime finish) {
      Execution& e = *exec_;
      e.send(stage_, st, net_start, finish);
      host = finish;
      sync_until = finish;
      sync_reason = Category::kPpComm;
      if (e.options_.trace != TraceLevel::kNone) {
        e.record(stage_, 1, net_start, finish, st.backward ? "pp.send.grad" : "pp.send.act",
                 st.microbatch, Category::kPpComm);
      }
      net_pending = false;
      ++step;
      run_until_blocked();
    });
    return;
  }
  // A blocking collective step (DP gradients, parameter all-gather, ...).
  const OpTiming& t = ex.step_timings_[stage_][step];
  ex.transport_->collective(st.op.group, stage_, st.op.collective, st.op.comm_bytes,
                            ex.plans_[t.plan], [this, &st, &t](SimTime finish) {
                              Execution& e = *exec_;
                              correct_collective_time(t, finish - net_start);
                              occupy(net_start, finish, t.category, SimTime(), Category::kCompute);
                              if (e.options_.trace != TraceLevel::kNone) {
                                e.record(stage_, 0, net_start, finish, st.op.name, -1, t.category);
                              }
                              net_pending = false;
                              ++step;
                              run_until_blocked();
                            });
}

// A send on its own stream (Step::async_p2p) through the transport: the stage has moved on;
// the completion only delivers the message.
void StageRunner::start_async_send(size_t send_step) {
  Execution& ex = *exec_;
  const Step& st = ex.w_.stages[stage_].steps[send_step];
  const SimTime start = ex.sim_.now();
  const CollectivePlan plan = ex.coll_.p2p(Bytes(1), true);
  ex.transport_->send(stage_, st.peer, st.bytes, plan.latency, [this, &st, start](SimTime finish) {
    Execution& e = *exec_;
    e.send(stage_, st, start, finish);
    if (e.options_.trace != TraceLevel::kNone) {
      e.record(stage_, 1, start, finish, st.backward ? "pp.send.grad" : "pp.send.act",
               st.microbatch, Category::kPpComm);
    }
  });
}

void StageRunner::start_next_bucket() {
  if (dp_busy || dp_queue.empty()) return;
  dp_busy = true;
  const SimTime start = std::max(dp_queue.front().ready, dp_stream);
  exec_->sim_.schedule(std::max(start, exec_->sim_.now()), this, 2);
}

void StageRunner::launch_bucket() {
  Execution& ex = *exec_;
  const size_t bucket_step = dp_queue.front().step;
  const Step& st = ex.w_.stages[stage_].steps[bucket_step];
  const SimTime start = ex.sim_.now();
  const OpTiming& t = ex.step_timings_[stage_][bucket_step];
  dp_busy_span = Busy{start, start + t.duration, t.sm_share};
  ex.transport_->collective(st.op.group, stage_, st.op.collective, st.op.comm_bytes,
                            ex.plans_[t.plan], [this, &st, &t, start](SimTime finish) {
                              Execution& e = *exec_;
                              correct_collective_time(t, finish - start);
                              dp_stream = finish;
                              if (e.options_.trace != TraceLevel::kNone) {
                                e.record(stage_, 2, start, finish, st.op.name, st.microbatch,
                                         Category::kDpComm);
                              }
                              dp_queue.pop_front();
                              dp_busy = false;
                              start_next_bucket();
                              if (waiting_dp && dp_queue.empty()) {
                                waiting_dp = false;
                                run_until_blocked();
                              }
                            });
}

void StageRunner::start_next_tp() {
  if (tp_busy || tp_queue.empty()) return;
  tp_busy = true;
  const SimTime start = std::max(tp_queue.front().ready, comm);
  exec_->sim_.schedule(std::max(start, exec_->sim_.now()), this, 3);
}

void StageRunner::launch_tp() {
  Execution& ex = *exec_;
  const CommOp& c = tp_queue.front();
  tp_start = ex.sim_.now();
  tp_busy_span = Busy{tp_start, tp_start + c.timing->duration, c.timing->sm_share};
  if (!c.timing->network) {
    ex.sim_.schedule(tp_start + c.timing->duration, this, 4);
    return;
  }
  ex.transport_->collective(c.op->group, stage_, c.op->collective, c.op->comm_bytes,
                            ex.plans_[c.timing->plan],
                            [this](SimTime finish) { finish_tp(finish); });
}

void StageRunner::finish_tp(SimTime finish) {
  Execution& ex = *exec_;
  const CommOp c = tp_queue.front();
  if (c.timing->network) correct_collective_time(*c.timing, finish - tp_start);
  comm = finish;
  comm_reason = c.timing->category;
  if (ex.options_.trace == TraceLevel::kKernels) {
    ex.record(stage_, 1, tp_start, finish, c.op->name, c.microbatch, c.timing->category);
  }
  tp_queue.pop_front();
  tp_busy = false;
  start_next_tp();
  if (waiting_tp && !tp_pending()) {
    waiting_tp = false;
    run_until_blocked();
  }
}

bool StageRunner::run_block(const Step& st) {
  Execution& ex = *exec_;
  const std::vector<OpTiming>& ops = ex.timings_[st.block];
  const Block& block = ex.w_.blocks[st.block];
  const SimTime launch = ex.options_.launch_overhead;
  const TraceLevel trace = ex.options_.trace;
  for (; block_rep < st.repeat; ++block_rep) {
    for (; block_op < ops.size(); ++block_op) {
      const OpTiming& op = ops[block_op];
      if (op.wait_comm && tp_pending()) {
        waiting_tp = true;
        return false;  // resumed when the TP stream's queue drains
      }
      host += launch * op.launches + op.host_time;
      if (op.async) {
        if (op.network || tp_pending()) {
          // Through the transport, or behind a collective that is: the stream's FIFO order.
          const SimTime ready = op.comm_chain ? host : std::max(host, compute);
          tp_queue.push_back(CommOp{ready, &block.ops[block_op], &op, st.microbatch});
          comm_reason = op.category;
          count_collective(op);
          start_next_tp();
          continue;
        }
        const SimTime start = std::max(host, op.comm_chain ? comm : std::max(compute, comm));
        comm = start + op.duration;
        tp_busy_span = Busy{start, comm, op.sm_share};
        comm_reason = op.category;
        count_collective(op);
        if (trace == TraceLevel::kKernels) {
          ex.record(stage_, 1, start, comm, block.ops[block_op].name, st.microbatch, op.category);
        }
        continue;
      }
      SimTime start = std::max(host, compute);
      SimTime reason_until;
      if (op.wait_comm && comm > start) {
        start = comm;
        reason_until = comm;
      }
      if (op.network) {
        // Blocks until the transport's completion, which resumes at the next op.
        attribute_gap(compute, start, reason_until, comm_reason);
        compute = start;
        count_collective(op);
        net_start = start;
        net_pending = true;
        net_op = &block.ops[block_op];
        net_timing = &op;
        ex.sim_.schedule(std::max(start, ex.sim_.now()), this, 1);
        return false;
      }
      const SimTime end =
          start + (op.collective ? op.duration : with_interference(start, op.duration));
      occupy(start, end, op.category, reason_until, comm_reason);
      block_first = std::min(block_first, start);
      count_collective(op);
      // A device-to-host copy: the host waits for the kernel before it launches the next.
      if (op.host_sync) host = std::max(host, end);
      if (trace == TraceLevel::kKernels) {
        ex.record(stage_, 0, start, end, block.ops[block_op].name, st.microbatch, op.category);
      }
    }
    if (trace == TraceLevel::kBlocks && !ops.empty()) {
      ex.record(stage_, 0, block_first, compute, block.name, st.microbatch,
                block.name.rfind("optimizer", 0) == 0 ? Category::kOptimizer : Category::kCompute);
    }
    ex.result_.ops_executed += static_cast<int64_t>(ops.size());
    const int sign = ex.memory_sign_[st.block];
    if (sign != 0 && trace != TraceLevel::kNone) {
      allocated += ex.options_.layer_activation_bytes * sign;
      ex.result_.memory_trace.push_back(MemorySample{stage_, compute, allocated});
    }
    block_op = 0;
    block_first = SimTime::max();
  }
  block_rep = 0;
  return true;
}

void StageRunner::run_until_blocked() {
  if (net_pending) return;  // resumed only by the completion callback
  Execution& ex = *exec_;
  const std::vector<Step>& steps = ex.w_.stages[stage_].steps;
  const SimTime launch = ex.options_.launch_overhead;
  const TraceLevel trace = ex.options_.trace;
  while (step < steps.size()) {
    const Step& st = steps[step];
    switch (st.kind) {
      case StepKind::kRun:
        if (!run_block(st)) return;  // resumed by the transport or the TP stream
        break;
      case StepKind::kSend: {
        if (ex.transport_ && ex.groups_.pp.crosses_nodes()) {
          host += launch;
          if (st.async_p2p) {
            const SimTime start = std::max(host, compute);
            ex.sim_.schedule(std::max(start, ex.sim_.now()), this,
                             kAsyncSend + static_cast<int64_t>(step));
            break;
          }
          net_start = std::max(host, compute);
          net_pending = true;
          ex.sim_.schedule(std::max(net_start, ex.sim_.now()), this, 1);
          return;
        }
        host += launch;
        const CollectivePlan plan = ex.coll_.p2p(st.bytes, ex.groups_.pp.crosses_nodes());
        const SimTime start = std::max(host, compute);
        const SimTime arrival = start + plan.time;
        ex.send(stage_, st, start, arrival);
        if (!st.async_p2p) {
          host = arrival;  // Megatron synchronises after batched isend/irecv
          sync_until = arrival;
          sync_reason = Category::kPpComm;
        }
        if (trace != TraceLevel::kNone) {
          ex.record(stage_, 1, start, arrival, st.backward ? "pp.send.grad" : "pp.send.act",
                    st.microbatch, Category::kPpComm);
        }
        break;
      }
      case StepKind::kRecv: {
        Message msg;
        if (!ex.take_message(stage_, st.tag, &msg)) {
          waiting = true;
          waiting_tag = st.tag;
          return;  // resumed by the matching send
        }
        const SimTime ready = std::max(compute, msg.arrival);
        if (ready > compute) {
          // Idle until the data arrives: the transfer itself is exposed PP time, the wait for
          // the peer to produce it is bubble.
          const SimTime from = compute;
          const SimTime transfer_from = std::max(from, msg.transfer_start);
          if (transfer_from > from) result.breakdown.bubble += transfer_from - from;
          if (ready > transfer_from) result.breakdown.pp_comm += ready - transfer_from;
          compute = ready;
        }
        // Synchronise, unless the receive is on its own stream: then only the compute stream
        // waited for the data.
        host = st.async_p2p ? host + launch : std::max(host + launch, compute);
        break;
      }
      case StepKind::kCollective: {
        host += launch;
        const OpTiming& t = ex.step_timings_[stage_][step];
        count_collective(t);
        const SimTime ready = std::max(host, compute);
        if (st.op.group == GroupKind::kEmbedding) {
          // Cross-stage: wait until every member stage has arrived. The gap before `ready` is
          // host time; the wait for the other stage is attributed by `arrive` as bubble.
          attribute_gap(compute, ready, SimTime(), Category::kCompute);
          compute = ready;
          ++step;
          waiting = true;
          ex.arrive(stage_, st.tag, ready, st.op, t);
          return;
        }
        if (t.network) {
          attribute_gap(compute, ready, SimTime(), Category::kCompute);
          compute = ready;
          net_start = ready;
          net_pending = true;
          ex.sim_.schedule(std::max(ready, ex.sim_.now()), this, 1);
          return;
        }
        occupy(ready, ready + t.duration, t.category, SimTime(), Category::kCompute);
        if (trace != TraceLevel::kNone) {
          ex.record(stage_, 0, ready, compute, st.op.name, -1, t.category);
        }
        break;
      }
      case StepKind::kCommAsync: {
        host += launch;
        const OpTiming& t = ex.step_timings_[stage_][step];
        count_collective(t);
        if (t.network) {
          dp_queue.push_back(Bucket{std::max(host, compute), step});
          start_next_bucket();
          break;
        }
        // DP buckets run on their own communicator and stream (Megatron DDP), so they do not
        // delay the TP stream's waits.
        const SimTime start = std::max(host, std::max(compute, dp_stream));
        dp_stream = start + t.duration;
        dp_busy_span = Busy{start, dp_stream, t.sm_share};
        if (trace != TraceLevel::kNone) {
          ex.record(stage_, 2, start, dp_stream, st.op.name, st.microbatch, t.category);
        }
        break;
      }
      case StepKind::kWaitComm: {
        if (!dp_queue.empty()) {
          waiting_dp = true;
          return;  // resumed when the last bucket finishes
        }
        if (dp_stream > compute) {
          add(Category::kDpComm, dp_stream - compute);
          compute = dp_stream;
        }
        break;
      }
      case StepKind::kHostSync:
        host = std::max(host, compute);
        break;
    }
    ++step;
  }
  done = true;
}

}  // namespace

ExecutionResult execute(const Workload& w, const ComputeModel& compute,
                        const CollectiveModel& collectives, const JobGroups& groups,
                        const ExecutorOptions& options) {
  PREFLIGHT_CHECK(!w.stages.empty());
  Execution exec(w, compute, collectives, groups, options);
  return exec.run();
}

}  // namespace preflight
