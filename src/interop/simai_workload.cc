#include "interop/simai_workload.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>

#include "compute/measured_model.h"
#include "memory/memory_model.h"
#include "workload/generator.h"
#include "workload/schedule.h"

namespace preflight {
namespace {

// An iteration of more than 10 days of compute on one stage is refused, as simulate() does.
constexpr int64_t kMaxIterationNs = 864'000'000'000'000;
// Program steps over all stages (memory: about 150 bytes each, so 2M steps take ~300 MB).
constexpr int64_t kMaxSteps = 2'000'000;

constexpr const char* kMicro = "MICRO";

bool has_comm(const SimaiComm& c) { return !c.none && c.bytes > 0; }

// Iteration-level lines: the leading lines whose forward and input-gradient columns are empty.
size_t iteration_lines(const SimaiWorkload& w) {
  if (w.policy == kMicro) return w.layers.size();
  size_t k = 0;
  while (k < w.layers.size()) {
    const SimaiLayer& l = w.layers[k];
    if (l.fwd_ns > 1 || l.ig_ns > 1 || has_comm(l.fwd) || has_comm(l.ig)) break;
    ++k;
  }
  return k;
}

bool forward_empty(const SimaiLayer& l) { return l.fwd_ns <= 1 && !has_comm(l.fwd); }

bool same_comm(const SimaiComm& a, const SimaiComm& b) {
  return a.none == b.none && (a.none || (a.kind == b.kind && a.group == b.group)) &&
         a.bytes == b.bytes;
}

// Two lines of the same layer in different micro-batches: the name and the three collectives
// agree. Compute times may differ (AICB's first copy times the embedding's weight gradient
// differently from the others).
bool same_shape(const SimaiLayer& a, const SimaiLayer& b) {
  return a.name == b.name && same_comm(a.fwd, b.fwd) && same_comm(a.ig, b.ig) &&
         same_comm(a.wg, b.wg);
}

bool same_times(const SimaiLayer& a, const SimaiLayer& b) {
  return a.fwd_ns == b.fwd_ns && a.ig_ns == b.ig_ns && a.wg_ns == b.wg_ns;
}

// Line comparisons the repetition search may spend before it gives up (under a second on
// adversarial input; AICB's files match on the first or second candidate).
constexpr int64_t kMaxComparisons = 50'000'000;

// How the lines divide: `leading` iteration-level lines, then `copies` micro-batches of
// `period` lines each, then `trailing` lines that run once.
struct Layout {
  size_t leading = 0;
  size_t period = 0;
  int copies = 0;
  size_t trailing = 0;
};

// AICB writes the leading lines (DP gradient reduction, optimizer), then the micro-batch lines
// ga times, then a few per-iteration lines (cross-entropy and optimizer all-reduces). The
// leading lines are the strict iteration-level ones (empty forward and input-gradient columns)
// extended by lines whose forward column is empty (AICB keeps `grad_param_compute`'s time in
// the input-gradient column and gives `embedding_grads` an input-gradient all-reduce). The
// first start s among those whose next ga·p lines are ga copies of p lines (same_shape), with
// fewer than p lines left after them, wins; the longest period first. Without such a start
// (or with ga ≤ 1) the lines after the strict leading ones are one micro-batch.
Layout layout_of(const SimaiWorkload& w) {
  const size_t n = w.layers.size();
  const size_t strict = iteration_lines(w);
  Layout fallback{strict, n - strict, n > strict ? 1 : 0, 0};
  if (w.policy == kMicro || w.ga <= 1) return fallback;
  const size_t ga = static_cast<size_t>(w.ga);
  size_t relaxed = strict;
  while (relaxed < n && forward_empty(w.layers[relaxed])) ++relaxed;
  int64_t budget = kMaxComparisons;
  for (size_t s = strict; s <= relaxed && s < n; ++s) {
    const size_t body = n - s;
    if (body < ga) break;
    const size_t longest = body / ga;
    const size_t shortest = body / (ga + 1) + 1;  // trailing = body − ga·p < p
    for (size_t p = longest; p >= shortest && p >= 1; --p) {
      bool match = true;
      for (size_t i = s + p; i < s + ga * p; ++i) {
        if (--budget < 0) return fallback;
        if (!same_shape(w.layers[i], w.layers[i - p])) {
          match = false;
          break;
        }
      }
      if (match) return Layout{s, p, w.ga, body - ga * p};
    }
  }
  return fallback;
}

Op compute_op(const std::string& name, int64_t ns) {
  Op op;
  op.name = name;
  op.type = OpType::kMemory;
  op.category = Category::kCompute;
  op.fixed_time = SimTime::picoseconds(ns * 1000);
  return op;
}

// `wg`: the weight-gradient column, where a bare type means the DP group.
Op comm_op(const std::string& name, const SimaiComm& c, bool wg) {
  Op op;
  op.name = name;
  op.type = OpType::kCollective;
  op.collective = c.kind;
  op.comm_bytes = Bytes(c.bytes);
  switch (c.group) {
    case SimaiGroup::kDefault:
      op.group = wg ? GroupKind::kData : GroupKind::kTensor;
      op.category = wg ? Category::kDpComm : Category::kTpComm;
      break;
    case SimaiGroup::kExpert:
      op.group = GroupKind::kExpert;
      op.category = Category::kEpComm;
      break;
    case SimaiGroup::kDataExpert:
      op.group = GroupKind::kExpertData;
      op.category = Category::kDpComm;
      break;
  }
  return op;
}

}  // namespace

StatusOr<Scenario> simai_scenario(const SimaiWorkload& w, const Scenario& s) {
  Scenario r = s;
  const int gpn = s.cluster.gpus_per_node;
  const int64_t gpus = w.all_gpus > 0 ? w.all_gpus : s.cluster.total_gpus();
  const int64_t tp_pp = int64_t{w.tp} * w.pp;
  if (gpus % tp_pp != 0) {
    return invalid_argument("SimAI header: all_gpus " + std::to_string(gpus) +
                            ": expected a multiple of tp·pp = " + std::to_string(tp_pp));
  }
  const int64_t dp = gpus / tp_pp;
  if (dp % w.ep != 0) {
    return invalid_argument(
        "SimAI header: ep " + std::to_string(w.ep) +
        ": expected a divisor of dp = all_gpus/(tp·pp) = " + std::to_string(dp));
  }
  if (gpn <= 0 || gpus % gpn != 0) {
    return invalid_argument("SimAI header: all_gpus " + std::to_string(gpus) +
                            ": expected a multiple of cluster.gpus_per_node (" +
                            std::to_string(gpn) + ")");
  }
  r.cluster.nodes = static_cast<int>(gpus / gpn);
  r.parallelism = ParallelismConfig{};
  r.parallelism.tp = w.tp;
  r.parallelism.pp = w.pp;
  r.parallelism.dp = static_cast<int>(dp);
  r.parallelism.ep = w.ep;
  r.parallelism.etp = 0;  // = tp: an EP group takes the same TP rank of ep TP groups
  r.training.micro_batch = 1;
  r.training.global_batch = static_cast<int>(std::max(layout_of(w).copies, 1) * dp);
  // The file's GPUs bound the stragglers (the scenario's cluster did not, load_imported_scenario).
  for (size_t i = 0; i < r.simulation.slow_ranks.size(); ++i) {
    const int rank = r.simulation.slow_ranks[i].rank;
    if (rank >= gpus) {
      return invalid_argument("simulation.slow_ranks[" + std::to_string(i) +
                              "].rank: " + std::to_string(rank) +
                              ": the SimAI workload has ranks 0-" + std::to_string(gpus - 1));
    }
  }
  return r;
}

StatusOr<Workload> simai_to_workload(const SimaiWorkload& w) {
  const bool micro = w.policy == kMicro;
  const Layout lay = layout_of(w);
  const size_t first = lay.leading;
  const int m = lay.copies;
  // Each stage's program holds about 3 steps per micro-batch pass: bound the whole.
  const int64_t steps_per_stage = 6 * int64_t{m} + static_cast<int64_t>(4 * first) + 4;
  if (int64_t{w.pp} * steps_per_stage > kMaxSteps) {
    return invalid_argument("SimAI workload: pp " + std::to_string(w.pp) + " stages × " +
                            std::to_string(m) +
                            " micro-batches is too large to simulate; "
                            "expected at most " +
                            std::to_string(kMaxSteps) + " steps in all");
  }
  Workload out;
  out.microbatches = m;
  // The forward (lines in order) and backward (in reverse) of lines [from, to).
  auto forward_ops = [&](size_t from, size_t to) {
    std::vector<Op> ops;
    for (size_t i = from; i < to; ++i) {
      const SimaiLayer& l = w.layers[i];
      if (l.fwd_ns > 0) ops.push_back(compute_op(l.name + ".fwd", l.fwd_ns));
      if (has_comm(l.fwd)) ops.push_back(comm_op(l.name + ".fwd.comm", l.fwd, false));
    }
    return ops;
  };
  auto backward_ops = [&](size_t from, size_t to) {
    std::vector<Op> ops;
    for (size_t i = to; i-- > from;) {
      const SimaiLayer& l = w.layers[i];
      if (l.ig_ns > 0) ops.push_back(compute_op(l.name + ".ig", l.ig_ns));
      if (has_comm(l.ig)) ops.push_back(comm_op(l.name + ".ig.comm", l.ig, false));
      if (l.wg_ns > 0) ops.push_back(compute_op(l.name + ".wg", l.wg_ns));
      if (has_comm(l.wg)) {
        Op op = comm_op(l.name + ".wg.comm", l.wg, true);
        op.async = true;  // SimAI issues weight-gradient comm non-blocking
        ops.push_back(op);
      }
    }
    return ops;
  };
  // Blocks 0 and 1: one micro-batch's forward and backward, from the copy that most copies in a
  // row equal in compute time (AICB's first copy times the embedding's weight gradient
  // differently: the others stand for it).
  size_t chosen = 0;
  {
    int best_run = 0, run_length = 0;
    for (int c = 0; c < m; ++c) {
      const size_t from = first + static_cast<size_t>(c) * lay.period;
      bool same = c > 0;
      for (size_t i = 0; same && i < lay.period; ++i) {
        same = same_times(w.layers[from + i], w.layers[from + i - lay.period]);
      }
      run_length = same ? run_length + 1 : 1;
      if (run_length > best_run) {
        best_run = run_length;
        chosen = from - static_cast<size_t>(run_length - 1) * lay.period;
      }
    }
  }
  {
    // One stage's compute must stay far inside int64 picoseconds: the leading and trailing
    // lines once, the chosen copy m times. Each field is at most 1e12 ns (the parser's bound).
    auto line_ns = [&](size_t i) {
      const SimaiLayer& l = w.layers[i];
      return l.fwd_ns + l.ig_ns + l.wg_ns;
    };
    int64_t once = 0, copy = 0;
    const size_t tail = first + static_cast<size_t>(m) * lay.period;
    for (size_t i = 0; i < w.layers.size() && once <= kMaxIterationNs; ++i) {
      if (i < first || i >= tail) once += line_ns(i);
    }
    for (size_t i = chosen; m > 0 && i < chosen + lay.period && copy <= kMaxIterationNs; ++i) {
      copy += line_ns(i);
    }
    if (once > kMaxIterationNs || (m > 0 && copy > (kMaxIterationNs - once) / m)) {
      return invalid_argument(
          "SimAI workload: more than 10 days of compute per iteration on "
          "one stage; expected smaller compute times");
    }
  }
  if (m > 0) {
    out.blocks.push_back(Block{"simai.fwd", forward_ops(chosen, chosen + lay.period)});
    out.blocks.push_back(Block{"simai.bwd", backward_ops(chosen, chosen + lay.period)});
  }
  // The trailing lines, once: their forward after the last micro-batch's, their backward
  // before it.
  const size_t tail_from = first + static_cast<size_t>(m) * lay.period;
  int tail_fwd = -1, tail_bwd = -1;
  if (lay.trailing > 0) {
    std::vector<Op> f = forward_ops(tail_from, w.layers.size());
    std::vector<Op> b = backward_ops(tail_from, w.layers.size());
    if (!f.empty()) {
      tail_fwd = static_cast<int>(out.blocks.size());
      out.blocks.push_back(Block{"simai.tail.fwd", std::move(f)});
    }
    if (!b.empty()) {
      tail_bwd = static_cast<int>(out.blocks.size());
      out.blocks.push_back(Block{"simai.tail.bwd", std::move(b)});
    }
  }
  // Iteration-level lines: the input-gradient compute (> 1 ns; AICB's grad_param_compute) and
  // collective (blocking; AICB's embedding_grads) and the weight-gradient compute in one block
  // per line. Compute > 1 ns (an optimizer step) first waits for both communication streams, as
  // the optimizer waits for its gradients.
  std::vector<int> iter_block(first, -1);
  std::vector<bool> iter_waits(first, false);
  for (size_t i = 0; i < first; ++i) {
    const SimaiLayer& l = w.layers[i];
    std::vector<Op> ops;
    if (l.ig_ns > 1) ops.push_back(compute_op(l.name + ".ig", l.ig_ns));
    if (has_comm(l.ig)) ops.push_back(comm_op(l.name + ".ig.comm", l.ig, false));
    if (l.wg_ns > 0) ops.push_back(compute_op(l.name + ".wg", l.wg_ns));
    if (ops.empty()) continue;
    iter_waits[i] = !micro && (l.ig_ns > 1 || l.wg_ns > 1);
    if (iter_waits[i]) ops.front().wait_comm = true;
    iter_block[i] = static_cast<int>(out.blocks.size());
    out.blocks.push_back(Block{l.name, std::move(ops)});
  }
  const int p = w.pp;
  auto tag = [&](int mb, int stage, bool backward) {
    return (static_cast<int64_t>(mb) * p + stage) * 2 + (backward ? 1 : 0);
  };
  for (int stage = 0; stage < p; ++stage) {
    Program prog;
    prog.stage = stage;
    auto p2p = [&](StepKind kind, int peer, int64_t t, const PipelineTask& task) {
      Step st;
      st.kind = kind;
      st.peer = peer;
      st.tag = t;
      st.bytes = Bytes(w.pp_comm);
      st.microbatch = task.microbatch;
      st.backward = task.backward;
      prog.steps.push_back(st);
    };
    auto run = [&](int block, const PipelineTask& task) {
      Step st;
      st.kind = StepKind::kRun;
      st.block = block;
      st.microbatch = task.microbatch;
      st.backward = task.backward;
      prog.steps.push_back(st);
    };
    if (m > 0) {
      for (const PipelineTask& t : pipeline_order(Schedule::kOneFOneB, stage, p, m, 1)) {
        const bool last = t.microbatch == m - 1;
        if (!t.backward) {
          if (stage > 0) p2p(StepKind::kRecv, stage - 1, tag(t.microbatch, stage, false), t);
          run(0, t);
          if (last && tail_fwd >= 0) run(tail_fwd, t);
          if (stage < p - 1)
            p2p(StepKind::kSend, stage + 1, tag(t.microbatch, stage + 1, false), t);
        } else {
          if (stage < p - 1) p2p(StepKind::kRecv, stage + 1, tag(t.microbatch, stage, true), t);
          if (last && tail_bwd >= 0) run(tail_bwd, t);
          run(1, t);
          if (stage > 0) p2p(StepKind::kSend, stage - 1, tag(t.microbatch, stage - 1, true), t);
        }
      }
    }
    // Iteration-level lines: issued last, bottom to top (SimAI's backward order); MICRO files
    // run top to bottom, each collective blocking.
    for (size_t j = 0; j < first; ++j) {
      const size_t i = micro ? j : first - 1 - j;
      const SimaiLayer& l = w.layers[i];
      if (iter_block[i] >= 0) {
        if (iter_waits[i]) {
          Step wait;  // the DP stream; the block's first op waits for the TP stream
          wait.kind = StepKind::kWaitComm;
          prog.steps.push_back(wait);
        }
        Step st;
        st.kind = StepKind::kRun;
        st.block = iter_block[i];
        prog.steps.push_back(st);
      }
      if (has_comm(l.wg)) {
        Step st;
        st.kind = micro ? StepKind::kCollective : StepKind::kCommAsync;
        st.op = comm_op(l.name + ".wg.comm", l.wg, true);
        prog.steps.push_back(st);
      }
    }
    Step wait;
    wait.kind = StepKind::kWaitComm;
    prog.steps.push_back(wait);
    Step sync;
    sync.kind = StepKind::kHostSync;
    prog.steps.push_back(sync);
    out.stages.push_back(std::move(prog));
  }
  return out;
}

namespace {

// A stretch of one pass: compute between two collectives, then the collective (if any).
struct Segment {
  int64_t ps = 0;
  bool has_comm = false;
  SimaiComm comm;
  bool async = false;  // a DP-stream collective (the weight-gradient column)
  std::string name;
};

// The SimAI comm of `op` in the forward/input-gradient column (wg = false) or the
// weight-gradient column; false when SimAI cannot express it.
bool to_simai_comm(const Op& op, bool wg, SimaiComm* c) {
  if (op.collective == CollectiveKind::kSendRecv) return false;
  c->none = false;
  c->kind = op.collective;
  c->bytes = op.comm_bytes.count();
  switch (op.group) {
    case GroupKind::kTensor:
    case GroupKind::kExpertTensor:  // = the TP group: the export requires etp = tp
      c->group = SimaiGroup::kDefault;
      return !wg;
    case GroupKind::kData:
      c->group = SimaiGroup::kDefault;
      return wg;
    case GroupKind::kExpert:
      c->group = SimaiGroup::kExpert;
      return true;
    case GroupKind::kExpertData:
      c->group = SimaiGroup::kDataExpert;
      return true;
    default:
      return false;
  }
}

std::string line_name(const std::string& s) {
  std::string out;
  for (char c : s) out.push_back(std::isgraph(static_cast<unsigned char>(c)) ? c : '_');
  return out.empty() ? "layer" : out;
}

int64_t to_ns(int64_t ps) { return (ps + 500) / 1000; }

SimTime compute_duration_of(const Op& op, const ComputeModel& compute) {
  return op.fixed_time.ps() > 0 ? op.fixed_time : compute.duration(op);
}

}  // namespace

StatusOr<SimaiExport> workload_to_simai(const Scenario& s, const Workload& w,
                                        const ComputeModel& compute, int stage) {
  const ParallelismConfig& par = s.parallelism;
  if (par.cp != 1) {
    return invalid_argument("export simai: parallelism.cp: " + std::to_string(par.cp) +
                            ": SimAI has no context-parallel group; expected 1");
  }
  if (par.ep > 1 && s.expert_tp() != par.tp) {
    return invalid_argument("export simai: parallelism.etp: " + std::to_string(s.expert_tp()) +
                            ": SimAI's EP groups assume expert-TP = tp; expected " +
                            std::to_string(par.tp));
  }
  if (stage < 0 || stage >= static_cast<int>(w.stages.size())) {
    return invalid_argument("export simai: stage " + std::to_string(stage) +
                            ": expected 0 .. pp-1 = " + std::to_string(w.stages.size() - 1));
  }
  SimaiExport out;
  SimaiWorkload& sw = out.workload;
  sw.tp = par.tp;
  sw.ep = par.ep;
  sw.pp = par.pp;
  sw.vpp = s.model.layers;  // AICB's convention: the number of layers
  sw.ga = std::max(1, s.num_microbatches());
  sw.all_gpus = s.cluster.total_gpus();

  std::vector<Segment> fwd, bwd, iter;
  Segment cur_f, cur_b, cur_i;
  auto close = [](std::vector<Segment>* v, Segment* cur) {
    v->push_back(*cur);
    *cur = Segment{};
  };
  auto add_comm = [&](const Op& op, bool wg, bool async, std::vector<Segment>* v, Segment* cur) {
    SimaiComm c;
    if (!to_simai_comm(op, wg, &c)) {
      out.dropped.push_back(op.name);
      return;
    }
    cur->has_comm = true;
    cur->comm = c;
    cur->async = async;
    cur->name = op.name;
    close(v, cur);
  };
  const std::vector<Step>& steps = w.stages[static_cast<size_t>(stage)].steps;
  int last_mb = 0;
  std::map<std::string, int> mb0_comms;  // micro-batch 0's collective steps, by name
  for (const Step& st : steps) {
    last_mb = std::max(last_mb, st.microbatch);
    if (st.microbatch == 0 &&
        (st.kind == StepKind::kCollective || st.kind == StepKind::kCommAsync)) {
      ++mb0_comms[st.op.name];
    }
  }
  for (const Step& st : steps) {
    if ((st.kind == StepKind::kSend || st.kind == StepKind::kRecv) && sw.pp_comm == 0) {
      sw.pp_comm = st.bytes.count();
    }
    const bool comm_step = st.kind == StepKind::kCollective || st.kind == StepKind::kCommAsync;
    // Micro-batch 0 stands for all of them; the last micro-batch's collectives beyond micro-batch
    // 0's (the gradient buckets overlapped with the last backward) move to the end of the
    // iteration.
    if (st.microbatch > 0 &&
        (!comm_step || st.microbatch != last_mb || --mb0_comms[st.op.name] >= 0)) {
      continue;
    }
    const bool iteration = st.microbatch != 0;
    std::vector<Segment>* v = iteration ? &iter : st.backward ? &bwd : &fwd;
    Segment* cur = iteration ? &cur_i : st.backward ? &cur_b : &cur_f;
    switch (st.kind) {
      case StepKind::kRun: {
        if (st.block < 0 || st.block >= static_cast<int>(w.blocks.size())) break;
        for (int r = 0; r < st.repeat; ++r) {
          for (const Op& op : w.blocks[st.block].ops) {
            if (op.type == OpType::kCollective) {
              add_comm(op, iteration, false, v, cur);
            } else {
              cur->ps += compute_duration_of(op, compute).ps();
            }
          }
        }
        break;
      }
      case StepKind::kCollective:
        add_comm(st.op, iteration, false, v, cur);
        break;
      case StepKind::kHostCopy:
        // SimAI's workload format has no host copies: activation offloading is left out.
        if (std::find(out.dropped.begin(), out.dropped.end(), "offload") == out.dropped.end()) {
          out.dropped.push_back("offload");
        }
        break;
      case StepKind::kCommAsync:
        // The weight-gradient column carries non-blocking comm on the DP groups, in the
        // backward only; in the forward (ZeRO-3 parameter gathers) SimAI has no DP column.
        add_comm(st.op, iteration || st.backward, iteration || st.backward, v, cur);
        break;
      default:
        break;
    }
  }
  if (cur_f.ps > 0) close(&fwd, &cur_f);
  if (cur_b.ps > 0) close(&bwd, &cur_b);
  if (cur_i.ps > 0) close(&iter, &cur_i);

  // Iteration-level lines: in reverse issue order at the top of the file.
  for (size_t j = iter.size(); j-- > 0;) {
    const Segment& g = iter[j];
    SimaiLayer l;
    l.name = line_name(g.name.empty() ? "optimizer" : g.name);
    l.wg_ns = to_ns(g.ps);
    if (g.has_comm) l.wg = g.comm;
    sw.layers.push_back(l);
  }
  // One micro-batch: forward segment i on line i, backward segment j on line n−1−j.
  const size_t n = std::max(fwd.size(), bwd.size());
  std::vector<SimaiLayer> period(n);
  for (size_t i = 0; i < n; ++i) {
    SimaiLayer& l = period[i];
    std::string name;
    if (i < fwd.size()) {
      l.fwd_ns = to_ns(fwd[i].ps);
      if (fwd[i].has_comm) l.fwd = fwd[i].comm;
      name = fwd[i].name;
    }
    const size_t j = n - 1 - i;
    if (j < bwd.size()) {
      const Segment& g = bwd[j];
      if (g.async) {
        l.wg_ns = 0;
        l.ig_ns = to_ns(g.ps);
        l.wg = g.comm;
      } else {
        l.ig_ns = to_ns(g.ps);
        if (g.has_comm) l.ig = g.comm;
      }
      if (name.empty()) name = g.name;
    }
    l.name = line_name(name.empty() ? "layer" : name) + "." + std::to_string(i);
    // A line with empty forward and input-gradient columns would read as iteration-level.
    if (i == 0 && l.fwd_ns <= 1 && l.ig_ns <= 1 && !has_comm(l.fwd) && !has_comm(l.ig)) {
      l.fwd_ns = 2;
    }
  }
  for (int mb = 0; mb < sw.ga; ++mb) {
    sw.layers.insert(sw.layers.end(), period.begin(), period.end());
  }
  return out;
}

StatusOr<SimulationReport> simulate_simai(const SimaiWorkload& w, const Scenario& base,
                                          const SimulateOptions& options) {
  PREFLIGHT_ASSIGN_OR_RETURN(const Scenario s, simai_scenario(w, base));
  PREFLIGHT_ASSIGN_OR_RETURN(const Workload workload, simai_to_workload(w));
  return simulate_workload(s, workload, options);
}

StatusOr<SimaiExport> export_simai(const Scenario& s, int stage) {
  PREFLIGHT_RETURN_IF_ERROR(validate_scenario(s));
  const std::unique_ptr<ComputeModel> compute = make_compute_model(s);
  return workload_to_simai(s, generate_workload(s, offloaded_layer_bytes(s)), *compute, stage);
}

SimaiColumns simai_columns(const ExecutionResult& r) {
  SimaiColumns c;
  if (r.stages.empty()) return c;
  const Breakdown& b = r.stages[static_cast<size_t>(r.critical_stage)].breakdown;
  auto us = [](SimTime t) { return static_cast<double>(t.ps()) * 1e-6; };
  c.exposed_dp_us = us(b.dp_comm);
  c.exposed_tp_us = us(b.tp_comm + b.cp_comm);
  c.exposed_ep_us = us(b.ep_comm);
  c.exposed_pp_us = us(b.pp_comm);
  c.bubble_us = us(b.bubble);
  c.compute_us = us(b.compute + b.optimizer + b.host_overhead);
  c.exposed_comm_us = c.exposed_dp_us + c.exposed_tp_us + c.exposed_ep_us + c.exposed_pp_us;
  c.total_us = us(r.iteration_time);
  return c;
}

std::string format_simai_columns(const SimaiColumns& c) {
  std::string out =
      "File name, Expose DP comm, Expose DP_EP comm, Expose TP comm, Expose_EP_comm, "
      "Expose_PP_comm, bubble time, total comp, total exposed comm, Total time\n";
  auto cell = [&](double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.0f (%.2f%%)", v, c.total_us > 0 ? 100 * v / c.total_us : 0);
    return std::string(buf);
  };
  char total[32];
  std::snprintf(total, sizeof total, "%.0f", c.total_us);
  out += "preflight, " + cell(c.exposed_dp_us) + ", " + cell(0) + ", " + cell(c.exposed_tp_us) +
         ", " + cell(c.exposed_ep_us) + ", " + cell(c.exposed_pp_us) + ", " + cell(c.bubble_us) +
         ", " + cell(c.compute_us) + ", " + cell(c.exposed_comm_us) + ", " + total + "\n";
  return out;
}

std::string format_simai_summary(const SimulationReport& r, const std::string& file) {
  const Scenario& s = r.scenario;
  const ParallelismConfig& p = s.parallelism;
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "SimAI workload %s on %d x %s (%d node%s, %s network)\n"
                "  tp %d, pp %d, dp %d, ep %d, %d micro-batches per iteration (1F1B)\n\n"
                "iteration time   %.3f s\n",
                file.c_str(), s.cluster.total_gpus(), s.cluster.gpu.name.c_str(), s.cluster.nodes,
                s.cluster.nodes == 1 ? "" : "s", s.simulation.network.c_str(), p.tp, p.pp, p.dp,
                p.ep, r.microbatches, r.iteration_time_s);
  return std::string(buf) + "\nSimAI EndToEnd columns (us):\n" +
         format_simai_columns(simai_columns(r.execution));
}

}  // namespace preflight
