// The executor's rendezvous (execution_internal.h): where runners of several stages or replica
// classes meet before a collective they share starts, and how it starts, analytically or through
// the transport.
#include <algorithm>

#include "exec/execution_internal.h"

namespace preflight {
namespace exec_internal {

void Execution::arrive(int index, int64_t tag, SimTime ready, const Op& op, const OpTiming& t) {
  const SimTime duration = t.duration;
  const std::string& name = op.name;
  Rendezvous& r = rendezvous_[{index / stages_, tag}];
  r.arrived++;
  r.ready = std::max(r.ready, ready);
  r.members.push_back(index);
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
    const int cls = index / stages_;
    defer(start, [this, cls, tag] { start_rendezvous(cls, tag); });
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

void Execution::arrive_replicas(int index, size_t step, SimTime ready, const Op& op,
                                const OpTiming& t) {
  const int stage = index % stages_;
  const Step& st = w_.stages[stage].steps[step];
  const bool bucket = st.kind == StepKind::kCommAsync;
  const std::vector<int> replicas = group_reach(index, op.group);
  const auto key = std::make_tuple(stage, step, replicas.front());
  ReplicaRendezvous& r = replica_rendezvous_[key];
  StageRunner& self = *runners_[index];
  r.start = std::max(r.start, bucket ? std::max(ready, self.dp_stream) : ready);
  r.members.push_back(index);
  if (++r.arrived < classes_in(replicas)) return;
  const SimTime start = r.start;
  if (t.network) {
    // A blocking collective over the replicas through the transport (buckets take
    // arrive_bucket): it starts at the latest arrival for all of them at once.
    PREFLIGHT_CHECK(!bucket);
    const std::vector<int> members = r.members;
    replica_rendezvous_.erase(key);
    defer(start, [this, members, start, stage, &op, &t, carried = transport_replicas(replicas)] {
      transport_->collective(
          op.group, stage, op.collective, op.comm_bytes, plans_[t.plan],
          [this, members, start, &op, &t](SimTime finish) {
            for (int m : members) {
              StageRunner& s = *runners_[m];
              s.occupy(start, finish, t.category, start, t.category);
              s.correct_collective_time(t, finish - start);
              if (options_.trace != TraceLevel::kNone) {
                record(m, 0, start, finish, op.name, -1, t.category);
              }
              s.waiting = false;
              sim_.schedule(sim_.now(), &s, 0);
            }
          },
          carried);
    });
    return;
  }
  const SimTime end = start + t.duration;
  for (int m : r.members) {
    StageRunner& s = *runners_[m];
    if (bucket) {
      s.dp_stream = end;
      s.dp_busy_span = StageRunner::Busy{start, end, t.sm_share};
      if (options_.trace != TraceLevel::kNone) {
        record(m, 2, start, end, op.name, st.microbatch, t.category);
      }
    } else {
      s.occupy(start, end, t.category, start, t.category);
      if (options_.trace != TraceLevel::kNone) record(m, 0, start, end, op.name, -1, t.category);
    }
    s.waiting = false;
    sim_.schedule(std::max(bucket ? start : end, sim_.now()), &s, 0);
  }
  replica_rendezvous_.erase(key);
}

bool Execution::meet(CrossingTable& table, const CrossingKey& key, const std::vector<int>& reach,
                     int index, SimTime ready, std::vector<int>* members, SimTime* start) {
  CrossingRendezvous& r = table[key];
  if (r.members.empty()) r.replicas = reach;
  PREFLIGHT_CHECK_MSG(r.replicas == reach, "replicas that meet in a collective disagree");
  r.start = std::max(r.start, ready);
  r.members.push_back(index);
  if (static_cast<int>(r.members.size()) < classes_in(reach)) return false;
  *members = std::move(r.members);
  *start = r.start;
  table.erase(key);
  return true;
}

void Execution::arrive_crossing(int index, const Op& op, const OpTiming& t, SimTime ready,
                                int microbatch) {
  StageRunner& self = *runners_[index];
  const int stage = index % stages_;
  const std::vector<int> reach = replicas_sharing(op.group, classes_[index / stages_].replica);
  std::vector<int> members;
  SimTime start;
  if (!meet(crossing_, {stage, reach.front(), self.crossing_seq++}, reach, index, ready, &members,
            &start)) {
    return;
  }
  auto finish = [this, members, start, &op, &t, microbatch](SimTime end) {
    for (int m : members) {
      StageRunner& s = *runners_[m];
      s.occupy(start, end, t.category, start, t.category);
      s.block_first = std::min(s.block_first, start);
      if (t.network) s.correct_collective_time(t, end - start);
      if (options_.trace == TraceLevel::kKernels) {
        record(m, 0, start, end, op.name, microbatch, t.category);
      }
      s.crossing_pending = false;
      ++s.block_op;
      sim_.schedule(std::max(end, sim_.now()), &s, 0);
    }
  };
  if (!t.network) {
    finish(start + t.duration);
    return;
  }
  defer(start, [this, stage, reach, &op, &t, finish] {
    transport_->collective(op.group, stage, op.collective, op.comm_bytes, plans_[t.plan], finish,
                           reach);
  });
}

void Execution::arrive_stream_crossing(int index, SimTime ready) {
  StageRunner& self = *runners_[index];
  const Op& op = *self.tp_queue.front().op;
  const OpTiming& t = *self.tp_queue.front().timing;
  const int stage = index % stages_;
  const std::vector<int> reach = replicas_sharing(op.group, classes_[index / stages_].replica);
  std::vector<int> members;
  SimTime start;
  if (!meet(stream_crossing_, {stage, reach.front(), self.stream_crossing_seq++}, reach, index,
            ready, &members, &start)) {
    return;
  }
  for (int m : members) {
    StageRunner& s = *runners_[m];
    PREFLIGHT_CHECK_MSG(s.tp_queue.front().op == &op,
                        "replicas that meet in a collective disagree");
    s.tp_start = start;
    s.tp_busy_span = StageRunner::Busy{start, start + t.duration, t.sm_share};
  }
  auto finish = [this, members](SimTime end) {
    for (int m : members) runners_[m]->finish_tp(end);
  };
  if (!t.network) {
    const SimTime end = start + t.duration;
    defer(end, [finish, end] { finish(end); });
    return;
  }
  defer(start, [this, stage, reach, &op, &t, finish] {
    transport_->collective(op.group, stage, op.collective, op.comm_bytes, plans_[t.plan], finish,
                           reach);
  });
}

void Execution::arrive_bucket(int index, size_t step) {
  const int stage = index % stages_;
  const Step& st = w_.stages[stage].steps[step];
  const std::vector<int> replicas = group_reach(index, st.op.group);
  const auto key = std::make_tuple(stage, step, replicas.front());
  ReplicaRendezvous& r = replica_rendezvous_[key];
  r.members.push_back(index);
  if (++r.arrived < classes_in(replicas)) return;
  const std::vector<int> members = r.members;
  replica_rendezvous_.erase(key);
  const SimTime start = sim_.now();
  const OpTiming& t = step_timings_[stage][step];
  for (int m : members) {
    runners_[m]->dp_busy_span = StageRunner::Busy{start, start + t.duration, t.sm_share};
  }
  transport_->collective(
      st.op.group, stage, st.op.collective, st.op.comm_bytes, plans_[t.plan],
      [this, members, start](SimTime finish) {
        for (int m : members) runners_[m]->finish_bucket(start, finish);
      },
      transport_replicas(replicas));
}

void Execution::start_rendezvous(int cls, int64_t tag) {
  Rendezvous& r = rendezvous_[{cls, tag}];
  transport_->collective(
      r.op->group, r.members.front() % stages_, r.op->collective, r.op->comm_bytes,
      plans_[r.timing->plan],
      [this, cls, tag](SimTime finish) {
        Rendezvous& rv = rendezvous_[{cls, tag}];
        for (int m : rv.members) {
          StageRunner& s = *runners_[m];
          s.occupy(rv.start, finish, Category::kDpComm, SimTime(), Category::kCompute);
          s.correct_collective_time(*rv.timing, finish - rv.start);
          s.waiting = false;
          if (options_.trace != TraceLevel::kNone) {
            record(m, 0, rv.start, finish, rv.op->name, -1, Category::kDpComm);
          }
          sim_.schedule(sim_.now(), &s, 0);
        }
      },
      class_replicas(cls));
}

}  // namespace exec_internal
}  // namespace preflight
