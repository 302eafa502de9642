// A pipeline stage's program on its host thread and streams (execution_internal.h).
#include <algorithm>

#include "exec/execution_internal.h"

namespace preflight {
namespace exec_internal {

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
    case Category::kOffload:
      b.offload += t;
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
            e.record(index_, 0, net_start, finish, op.name, microbatch, t.category);
          }
          net_pending = false;
          net_op = nullptr;
          ++block_op;
          run_until_blocked();
        },
        replicas());
    return;
  }
  const Step& st = ex.w_.stages[stage_].steps[step];
  if (st.kind == StepKind::kSend) {
    const CollectivePlan plan = ex.coll_.p2p(Bytes(1), true);
    ex.transport_->send(
        stage_, st.peer, st.bytes, plan.latency,
        [this, &st](SimTime finish) {
          Execution& e = *exec_;
          e.send(cls_, st, net_start, finish);
          host = finish;
          sync_until = finish;
          sync_reason = Category::kPpComm;
          if (e.options_.trace != TraceLevel::kNone) {
            e.record(index_, 1, net_start, finish, st.backward ? "pp.send.grad" : "pp.send.act",
                     st.microbatch, Category::kPpComm);
          }
          net_pending = false;
          ++step;
          run_until_blocked();
        },
        replicas());
    return;
  }
  // A blocking collective step (DP gradients, parameter all-gather, ...).
  const OpTiming& t = ex.step_timings_[stage_][step];
  ex.transport_->collective(
      st.op.group, stage_, st.op.collective, st.op.comm_bytes, ex.plans_[t.plan],
      [this, &st, &t](SimTime finish) {
        Execution& e = *exec_;
        correct_collective_time(t, finish - net_start);
        occupy(net_start, finish, t.category, SimTime(), Category::kCompute);
        if (e.options_.trace != TraceLevel::kNone) {
          e.record(index_, 0, net_start, finish, st.op.name, -1, t.category);
        }
        net_pending = false;
        ++step;
        run_until_blocked();
      },
      replicas());
}

// A send on its own stream (Step::async_p2p) through the transport: the stage has moved on;
// the completion only delivers the message.
void StageRunner::start_async_send(size_t send_step) {
  Execution& ex = *exec_;
  const Step& st = ex.w_.stages[stage_].steps[send_step];
  const SimTime start = ex.sim_.now();
  const CollectivePlan plan = ex.coll_.p2p(Bytes(1), true);
  ex.transport_->send(
      stage_, st.peer, st.bytes, plan.latency,
      [this, &st, start](SimTime finish) {
        Execution& e = *exec_;
        e.send(cls_, st, start, finish);
        if (e.options_.trace != TraceLevel::kNone) {
          e.record(index_, 1, start, finish, st.backward ? "pp.send.grad" : "pp.send.act",
                   st.microbatch, Category::kPpComm);
        }
      },
      replicas());
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
  if (ex.step_crosses_replicas(index_, bucket_step)) {
    // Across the DP replicas run apart: it starts when every class has started it.
    ex.arrive_bucket(index_, bucket_step);
    return;
  }
  dp_busy_span = Busy{start, start + t.duration, t.sm_share};
  ex.transport_->collective(
      st.op.group, stage_, st.op.collective, st.op.comm_bytes, ex.plans_[t.plan],
      [this, start](SimTime finish) { finish_bucket(start, finish); }, replicas());
}

void StageRunner::finish_bucket(SimTime start, SimTime finish) {
  Execution& ex = *exec_;
  const size_t bucket_step = dp_queue.front().step;
  const Step& st = ex.w_.stages[stage_].steps[bucket_step];
  const OpTiming& t = ex.step_timings_[stage_][bucket_step];
  correct_collective_time(t, finish - start);
  dp_stream = finish;
  if (ex.options_.trace != TraceLevel::kNone) {
    ex.record(index_, 2, start, finish, st.op.name, st.microbatch, Category::kDpComm);
  }
  dp_queue.pop_front();
  dp_busy = false;
  start_next_bucket();
  if (waiting_dp && dp_queue.empty()) {
    waiting_dp = false;
    run_until_blocked();
  }
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
  if (c.timing->crosses && ex.meets_others(cls_, c.op->group)) {
    ex.arrive_stream_crossing(index_, tp_start);  // its peers' streams meet it there
    return;
  }
  tp_busy_span = Busy{tp_start, tp_start + c.timing->duration, c.timing->sm_share};
  if (!c.timing->network) {
    ex.sim_.schedule(tp_start + c.timing->duration, this, 4);
    return;
  }
  ex.transport_->collective(
      c.op->group, stage_, c.op->collective, c.op->comm_bytes, ex.plans_[c.timing->plan],
      [this](SimTime finish) { finish_tp(finish); }, replicas());
}

void StageRunner::finish_tp(SimTime finish) {
  Execution& ex = *exec_;
  const CommOp c = tp_queue.front();
  if (c.timing->network) correct_collective_time(*c.timing, finish - tp_start);
  comm = finish;
  comm_reason = c.timing->category;
  if (ex.options_.trace == TraceLevel::kKernels) {
    ex.record(index_, 1, tp_start, finish, c.op->name, c.microbatch, c.timing->category);
  }
  tp_queue.pop_front();
  tp_busy = false;
  start_next_tp();
  if (waiting_tp && !tp_pending()) {
    waiting_tp = false;
    run_until_blocked();
  }
}

template <bool kTimedApart>
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
        if (op.network || tp_pending() ||
            (op.crosses && ex.meets_others(cls_, block.ops[block_op].group))) {
          // Through the transport, across replica classes, or behind a collective that is: the
          // stream's FIFO order.
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
          ex.record(index_, 1, start, comm, block.ops[block_op].name, st.microbatch, op.category);
        }
        continue;
      }
      SimTime start = std::max(host, compute);
      SimTime reason_until;
      if (op.wait_comm && comm > start) {
        start = comm;
        reason_until = comm;
      }
      if (op.crosses && ex.meets_others(cls_, block.ops[block_op].group)) {
        // Across replica classes: it runs when the classes of its groups have all reached it,
        // and the completion resumes at the next op.
        attribute_gap(compute, start, reason_until, comm_reason);
        compute = start;
        count_collective(op);
        crossing_pending = true;
        ex.arrive_crossing(index_, block.ops[block_op], op, start, st.microbatch);
        return false;
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
      // A runner that holds a rank timed apart (ComputeModel::distinct_ranks) asks the compute
      // model for each kernel at its start; the others use the op's one timing.
      SimTime base = op.duration;
      if constexpr (kTimedApart) {
        if (!op.collective) base = ex.rank_duration(*this, block.ops[block_op], start);
      }
      const SimTime end = start + (op.collective ? base : with_interference(start, base));
      occupy(start, end, op.category, reason_until, comm_reason);
      block_first = std::min(block_first, start);
      count_collective(op);
      // A device-to-host copy: the host waits for the kernel before it launches the next.
      if (op.host_sync) host = std::max(host, end);
      if (trace == TraceLevel::kKernels) {
        ex.record(index_, 0, start, end, block.ops[block_op].name, st.microbatch, op.category);
      }
    }
    if (trace == TraceLevel::kBlocks && !ops.empty()) {
      ex.record(index_, 0, block_first, compute, block.name, st.microbatch,
                block.name.rfind("optimizer", 0) == 0 ? Category::kOptimizer : Category::kCompute);
    }
    ex.result_.ops_executed += static_cast<int64_t>(ops.size());
    const int sign = ex.memory_sign_[st.block];
    if (sign != 0 && trace != TraceLevel::kNone) {
      allocated += ex.options_.layer_activation_bytes * sign;
      ex.result_.memory_trace.push_back(MemorySample{stage_, compute, allocated, replica()});
    }
    block_op = 0;
    block_first = SimTime::max();
  }
  block_rep = 0;
  return true;
}

void StageRunner::run_until_blocked() {
  if (net_pending || crossing_pending) return;  // resumed only by the completion
  Execution& ex = *exec_;
  const std::vector<Step>& steps = ex.w_.stages[stage_].steps;
  const SimTime launch = ex.options_.launch_overhead;
  const TraceLevel trace = ex.options_.trace;
  while (step < steps.size()) {
    const Step& st = steps[step];
    switch (st.kind) {
      case StepKind::kRun:
        // Resumed by the transport or the TP stream when blocked.
        if (!(distinct ? run_block<true>(st) : run_block<false>(st))) return;
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
        ex.send(cls_, st, start, arrival);
        if (!st.async_p2p) {
          host = arrival;  // Megatron synchronises after batched isend/irecv
          sync_until = arrival;
          sync_reason = Category::kPpComm;
        }
        if (trace != TraceLevel::kNone) {
          ex.record(index_, 1, start, arrival, st.backward ? "pp.send.grad" : "pp.send.act",
                    st.microbatch, Category::kPpComm);
        }
        break;
      }
      case StepKind::kRecv: {
        Message msg;
        if (!ex.take_message(index_, st.tag, &msg)) {
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
          ex.arrive(index_, st.tag, ready, st.op, t);
          return;
        }
        if (ex.step_crosses_replicas(index_, step)) {
          // Across the DP replicas simulated apart: it starts when the last one arrives.
          attribute_gap(compute, ready, SimTime(), Category::kCompute);
          compute = ready;
          ++step;
          waiting = true;
          ex.arrive_replicas(index_, step - 1, ready, st.op, t);
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
          ex.record(index_, 0, ready, compute, st.op.name, -1, t.category);
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
        if (ex.step_crosses_replicas(index_, step)) {
          // Across the DP replicas simulated apart: the bucket starts when every replica has it
          // and its DP stream free. The runner waits for that only to learn its DP stream's
          // busy span before it times later kernels; its clocks do not move.
          ++step;
          waiting = true;
          ex.arrive_replicas(index_, step - 1, std::max(host, compute), st.op, t);
          return;
        }
        // DP buckets run on their own communicator and stream (Megatron DDP), so they do not
        // delay the TP stream's waits.
        const SimTime start = std::max(host, std::max(compute, dp_stream));
        dp_stream = start + t.duration;
        dp_busy_span = Busy{start, dp_stream, t.sm_share};
        if (trace != TraceLevel::kNone) {
          ex.record(index_, 2, start, dp_stream, st.op.name, st.microbatch, t.category);
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
      case StepKind::kHostCopy: {
        // cudaMemcpyAsync on the copy stream, after the compute stream's kernels so far (the
        // tensors it copies): an offload after the layer's forward, a reload before a backward.
        host += launch;
        const SimTime start = std::max(host, std::max(compute, copy_stream));
        copy_stream = start + st.bytes / ex.options_.host_bandwidth;
        copies[st.tag] = copy_stream;
        // The memory counter: a reload allocates the layer's activations again.
        if (st.backward && trace != TraceLevel::kNone &&
            ex.options_.layer_activation_bytes.count() > 0) {
          allocated += ex.options_.layer_activation_bytes;
          ex.result_.memory_trace.push_back(MemorySample{stage_, start, allocated, replica()});
        }
        if (trace != TraceLevel::kNone) {
          ex.record(index_, 3, start, copy_stream, st.backward ? "offload.reload" : "offload.copy",
                    st.microbatch, Category::kOffload);
        }
        break;
      }
      case StepKind::kWaitHostCopy: {
        const auto it = copies.find(st.tag);
        PREFLIGHT_CHECK_MSG(it != copies.end(), "a wait for a host copy never issued");
        if (it->second > compute) {
          add(Category::kOffload, it->second - compute);
          compute = it->second;
        }
        // The memory counter: an offload that has finished frees the layer's activations.
        if (!st.backward && trace != TraceLevel::kNone &&
            ex.options_.layer_activation_bytes.count() > 0) {
          allocated += ex.options_.layer_activation_bytes * -1;
          ex.result_.memory_trace.push_back(MemorySample{stage_, compute, allocated, replica()});
        }
        copies.erase(it);
        break;
      }
    }
    ++step;
  }
  done = true;
}

}  // namespace exec_internal
}  // namespace preflight
