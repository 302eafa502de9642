#include "interop/simai_workload.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>

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

bool same_comm(const SimaiComm& a, const SimaiComm& b) {
  return a.none == b.none && (a.none || (a.kind == b.kind && a.group == b.group)) &&
         a.bytes == b.bytes;
}

bool same_line(const SimaiLayer& a, const SimaiLayer& b) {
  return a.name == b.name && a.fwd_ns == b.fwd_ns && same_comm(a.fwd, b.fwd) &&
         a.ig_ns == b.ig_ns && same_comm(a.ig, b.ig) && a.wg_ns == b.wg_ns &&
         same_comm(a.wg, b.wg);
}

// The micro-batch lines' period and the number of micro-batches: ga copies of one period when
// the file repeats them, else the whole body once.
void microbatch_layout(const SimaiWorkload& w, size_t first, size_t* period, int* m) {
  const size_t n = w.layers.size() - first;
  *period = n;
  *m = n == 0 ? 0 : 1;
  if (n == 0 || w.ga <= 1 || n % static_cast<size_t>(w.ga) != 0) return;
  const size_t p = n / static_cast<size_t>(w.ga);
  for (size_t i = first + p; i < w.layers.size(); ++i) {
    if (!same_line(w.layers[i], w.layers[i - p])) return;
  }
  *period = p;
  *m = w.ga;
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
    return invalid_argument("SimAI header: ep " + std::to_string(w.ep) +
                            ": expected a divisor of dp = all_gpus/(tp·pp) = " +
                            std::to_string(dp));
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
  size_t period = 0;
  int m = 0;
  microbatch_layout(w, iteration_lines(w), &period, &m);
  r.training.micro_batch = 1;
  r.training.global_batch = static_cast<int>(std::max(m, 1) * dp);
  return r;
}

StatusOr<Workload> simai_to_workload(const SimaiWorkload& w) {
  const bool micro = w.policy == kMicro;
  const size_t first = iteration_lines(w);
  size_t period = 0;
  int m = 0;
  microbatch_layout(w, first, &period, &m);
  {
    // One stage's compute must stay far inside int64 picoseconds.
    int64_t total = 0;
    for (size_t i = 0; i < w.layers.size(); ++i) {
      const SimaiLayer& l = w.layers[i];
      const int64_t line = l.fwd_ns + l.ig_ns + l.wg_ns;
      total += i >= first && i < first + period ? line * m : line;
      if (total > kMaxIterationNs) {
        return invalid_argument("SimAI workload: more than 10 days of compute per iteration on "
                                "one stage; expected smaller compute times");
      }
    }
  }
  // Each stage's program holds about 3 steps per micro-batch pass: bound the whole.
  const int64_t steps_per_stage = 6 * int64_t{m} + static_cast<int64_t>(2 * first) + 2;
  if (int64_t{w.pp} * steps_per_stage > kMaxSteps) {
    return invalid_argument("SimAI workload: pp " + std::to_string(w.pp) + " stages × " +
                            std::to_string(m) + " micro-batches is too large to simulate; "
                            "expected at most " + std::to_string(kMaxSteps) + " steps in all");
  }
  Workload out;
  out.microbatches = m;
  // Blocks 0 and 1: one micro-batch's forward (lines in order) and backward (in reverse).
  Block fwd{"simai.fwd", {}};
  Block bwd{"simai.bwd", {}};
  for (size_t i = first; i < first + period; ++i) {
    const SimaiLayer& l = w.layers[i];
    if (l.fwd_ns > 0) fwd.ops.push_back(compute_op(l.name + ".fwd", l.fwd_ns));
    if (has_comm(l.fwd)) fwd.ops.push_back(comm_op(l.name + ".fwd.comm", l.fwd, false));
  }
  for (size_t i = first + period; i-- > first;) {
    const SimaiLayer& l = w.layers[i];
    if (l.ig_ns > 0) bwd.ops.push_back(compute_op(l.name + ".ig", l.ig_ns));
    if (has_comm(l.ig)) bwd.ops.push_back(comm_op(l.name + ".ig.comm", l.ig, false));
    if (l.wg_ns > 0) bwd.ops.push_back(compute_op(l.name + ".wg", l.wg_ns));
    if (has_comm(l.wg)) {
      Op op = comm_op(l.name + ".wg.comm", l.wg, true);
      op.async = true;  // SimAI issues weight-gradient comm non-blocking
      bwd.ops.push_back(op);
    }
  }
  out.blocks.push_back(std::move(fwd));
  out.blocks.push_back(std::move(bwd));
  // One block per iteration-level line with compute.
  std::vector<int> iter_block(first, -1);
  for (size_t i = 0; i < first; ++i) {
    const SimaiLayer& l = w.layers[i];
    if (l.wg_ns > 0) {
      iter_block[i] = static_cast<int>(out.blocks.size());
      out.blocks.push_back(Block{l.name, {compute_op(l.name + ".wg", l.wg_ns)}});
    }
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
        if (!t.backward) {
          if (stage > 0) p2p(StepKind::kRecv, stage - 1, tag(t.microbatch, stage, false), t);
          run(0, t);
          if (stage < p - 1) p2p(StepKind::kSend, stage + 1, tag(t.microbatch, stage + 1, false), t);
        } else {
          if (stage < p - 1) p2p(StepKind::kRecv, stage + 1, tag(t.microbatch, stage, true), t);
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
        if (!micro && l.wg_ns > 1) {
          Step wait;  // compute at the end of the iteration (the optimizer) needs its gradients
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
    if (st.microbatch == 0 && (st.kind == StepKind::kCollective || st.kind == StepKind::kCommAsync)) {
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
  const std::unique_ptr<ComputeModel> compute =
      make_roofline_model(s.cluster.gpu, s.training.precision, s.training.stack.attention_kernel);
  return workload_to_simai(s, generate_workload(s), *compute, stage);
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
                "SimAI workload %s on %d x %s (%d nodes, %s network)\n"
                "  tp %d, pp %d, dp %d, ep %d, %d micro-batches per iteration (1F1B)\n\n"
                "iteration time   %.3f s\n",
                file.c_str(), s.cluster.total_gpus(), s.cluster.gpu.name.c_str(),
                s.cluster.nodes, s.simulation.network.c_str(), p.tp, p.pp, p.dp, p.ep,
                r.microbatches, r.iteration_time_s);
  return std::string(buf) + "\nSimAI EndToEnd columns (us):\n" +
         format_simai_columns(simai_columns(r.execution));
}

}  // namespace preflight
