#include "interop/chakra_export.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <set>

#include "compute/measured_model.h"
#include "memory/memory_model.h"
#include "workload/generator.h"

namespace preflight {
namespace {

// Ring exchange steps share one tag; first-in first-out matching keeps their order.
constexpr int64_t kRingTag = int64_t{1} << 30;

const char* category_name(Category c) {
  switch (c) {
    case Category::kCompute:
      return "compute";
    case Category::kTpComm:
      return "tp";
    case Category::kPpComm:
      return "pp";
    case Category::kDpComm:
      return "dp";
    case Category::kOptimizer:
      return "optimizer";
    case Category::kEpComm:
      return "ep";
    case Category::kCpComm:
      return "cp";
    case Category::kOffload:
      return "offload";
  }
  return "compute";
}

int comm_type_of(CollectiveKind k) {
  switch (k) {
    case CollectiveKind::kAllReduce:
      return static_cast<int>(ChakraCommType::kAllReduce);
    case CollectiveKind::kAllGather:
      return static_cast<int>(ChakraCommType::kAllGather);
    case CollectiveKind::kReduceScatter:
      return static_cast<int>(ChakraCommType::kReduceScatter);
    case CollectiveKind::kBroadcast:
      return static_cast<int>(ChakraCommType::kBroadcast);
    case CollectiveKind::kAllToAll:
      return static_cast<int>(ChakraCommType::kAllToAll);
    case CollectiveKind::kSendRecv:
      break;
  }
  return -1;
}

// The members of each communicator: Megatron's rank layout (parallel/rank_layout.h), and for
// cross-stage collectives the stages that share their tag.
class Layout {
 public:
  Layout(const Scenario& s, const Workload& w) : ranks_(RankLayout::of(s)) {
    // Cross-stage collectives (tied embedding) meet the stages that share their tag.
    for (size_t st = 0; st < w.stages.size(); ++st) {
      for (const Step& step : w.stages[st].steps) {
        if (step.kind == StepKind::kCollective && step.op.group == GroupKind::kEmbedding) {
          tag_stages_[step.tag].insert(static_cast<int>(st));
        }
      }
    }
  }
  int stage_ranks() const { return ranks_.stage_ranks(); }
  int rank(int stage, int local) const { return ranks_.rank(stage, local); }

  std::vector<int> members(GroupKind g, int stage, int local, int64_t tag) const {
    if (g != GroupKind::kPipeline && g != GroupKind::kEmbedding) {
      return ranks_.members(g, stage, local);
    }
    std::vector<int> m;
    auto it = tag_stages_.find(tag);
    if (it != tag_stages_.end()) {
      for (int st : it->second) m.push_back(rank(st, local));
    } else {
      m.push_back(rank(stage, local));
    }
    return m;
  }

  // The next and previous member of `local`'s group of kind `g` (a ring exchange step).
  std::pair<int, int> ring_neighbours(GroupKind g, int stage, int local) const {
    const std::vector<int> m = members(g, stage, local, 0);
    const int me = rank(stage, local);
    const auto it = std::find(m.begin(), m.end(), me);
    const size_t i = static_cast<size_t>(it - m.begin());
    return {m[(i + 1) % m.size()], m[(i + m.size() - 1) % m.size()]};
  }

 private:
  RankLayout ranks_;
  std::map<int64_t, std::set<int>> tag_stages_;
};

// Communicator names, "1", "2", ... in order of first use ("0" means all ranks to ASTRA-sim).
class GroupNames {
 public:
  const std::string& name(GroupKind kind, const std::vector<int>& members) {
    auto [it, fresh] = ids_.emplace(std::make_pair(static_cast<int>(kind), members), "");
    if (fresh) {
      it->second = std::to_string(ids_.size());
      groups_[it->second] = members;
    }
    return it->second;
  }
  const ChakraGroups& groups() const { return groups_; }

 private:
  std::map<std::pair<int, std::vector<int>>, std::string> ids_;
  ChakraGroups groups_;
};

// One rank's program as a dependency graph (see the header for the encoding).
class Lowering {
 public:
  Lowering(const Workload& w, const Layout& layout,
           const std::vector<std::vector<SimTime>>& durations, SimTime launch, double host_factor,
           Bandwidth host_bandwidth, GroupNames* names, int stage, int local)
      : w_(w),
        layout_(layout),
        durations_(durations),
        launch_(launch),
        host_factor_(host_factor),
        host_bandwidth_(host_bandwidth),
        names_(names),
        stage_(stage),
        local_(local) {}

  ChakraTrace run() {
    for (const Step& st : w_.stages[stage_].steps) step(st);
    return std::move(t_);
  }

  // Nodes of one rank of the stage, without building them: for the size check.
  int64_t count() {
    counting_ = true;
    for (const Step& st : w_.stages[stage_].steps) step(st);
    return static_cast<int64_t>(next_);
  }

 private:
  using Deps = std::vector<uint64_t>;

  static Deps join(std::initializer_list<const Deps*> sets) {
    Deps d;
    for (const Deps* s : sets) d.insert(d.end(), s->begin(), s->end());
    std::sort(d.begin(), d.end());
    d.erase(std::unique(d.begin(), d.end()), d.end());
    return d;
  }

  uint64_t add(ChakraNode n, Deps deps) {
    const uint64_t id = next_++;
    if (counting_) return id;
    n.id = id;
    n.data_deps = std::move(deps);
    t_.nodes.push_back(std::move(n));
    return id;
  }

  // The host launches `count` kernels and does `extra` more host work (a per_expert grouped
  // GEMM's loop over its experts, Op::host_time, at the cluster's host_overhead_factor): a CPU
  // node after the previous launch or synchronisation.
  void launch(int count = 1, SimTime extra = SimTime()) {
    if ((launch_.ps() == 0 || count <= 0) && extra.ps() == 0) return;
    ChakraNode n;
    n.name = "launch";
    n.type = ChakraNodeType::kComp;
    n.is_cpu_op = true;
    if (host_factor_ != 1.0) extra = extra.scaled(host_factor_);
    set_duration(&n, launch_ * std::max(0, count) + extra);
    host_ = {add(std::move(n), host_)};
  }

  static void set_duration(ChakraNode* n, SimTime t) {
    n->duration_ps = t.ps();
    n->duration_micros = static_cast<uint64_t>(std::llround(static_cast<double>(t.ps()) * 1e-6));
  }

  // A zero-length node that waits for `deps` (a join; on the CPU thread when `cpu`).
  uint64_t join_node(const char* name, Deps deps, bool cpu, int stream) {
    ChakraNode n;
    n.name = name;
    n.type = ChakraNodeType::kComp;
    n.is_cpu_op = cpu;
    if (!cpu) n.stream = stream;
    set_duration(&n, SimTime());
    return add(std::move(n), std::move(deps));
  }

  ChakraNode collective(const Op& op, int64_t tag) {
    ChakraNode n;
    n.name = op.name;
    n.type = ChakraNodeType::kColl;
    n.category = category_name(op.category);
    if (counting_) return n;
    const std::vector<int> m = layout_.members(op.group, stage_, local_, tag);
    n.pg_name = names_->name(op.group, m);
    n.comm_type = comm_type_of(op.collective);
    n.comm_size = op.comm_bytes.count();
    if (op.collective == CollectiveKind::kAllGather) {
      // ASTRA-sim's all-gather size is the per-rank input.
      n.comm_size = op.comm_bytes.count() / static_cast<int64_t>(m.size());
    }
    return n;
  }

  // A send to `peer` or a receive from it.
  static ChakraNode p2p(ChakraNodeType type, std::string name, Category c, int peer, Bytes bytes,
                        int64_t tag) {
    ChakraNode n;
    n.name = std::move(name);
    n.type = type;
    n.category = category_name(c);
    (type == ChakraNodeType::kSend ? n.comm_dst : n.comm_src) = peer;
    n.comm_size = bytes.count();
    n.comm_tag = tag;
    return n;
  }

  // One op of a block: a kernel, a collective, or a ring exchange step.
  void op(const Op& op, SimTime duration) {
    launch(op.launches, op.host_time);
    const bool wait_tp = op.wait_comm && !op.async;
    if (op.type == OpType::kCollective && op.collective == CollectiveKind::kSendRecv) {
      // A ring step (ring attention, TP overlap): send to the next member of the group, receive
      // from the previous one, join on the stream.
      const auto [next, prev] = layout_.ring_neighbours(op.group, stage_, local_);
      const Deps none;
      Deps deps = op.async ? join({&host_, &tp_, op.comm_chain ? &none : &comp_})
                           : join({&host_, &comp_, wait_tp ? &tp_ : &none});
      const uint64_t send = add(
          p2p(ChakraNodeType::kSend, op.name + ".send", op.category, next, op.comm_bytes, kRingTag),
          std::move(deps));
      const uint64_t recv = add(
          p2p(ChakraNodeType::kRecv, op.name + ".recv", op.category, prev, op.comm_bytes, kRingTag),
          {});
      const uint64_t j = join_node(op.name.c_str(), {send, recv}, false, op.async ? 1 : 0);
      (op.async ? tp_ : comp_) = {j};
      return;
    }
    if (op.async) {
      // On the TP communication stream, after the previous op there.
      const Deps none;
      ChakraNode n = collective(op, 0);
      n.stream = 1;
      tp_ = {add(std::move(n), join({&host_, &tp_, op.comm_chain ? &none : &comp_}))};
      return;
    }
    const Deps none;
    Deps deps = join({&host_, &comp_, wait_tp ? &tp_ : &none});
    ChakraNode n;
    if (op.type == OpType::kCollective) {
      n = collective(op, 0);
    } else {
      n.name = op.name;
      n.type = ChakraNodeType::kComp;
      n.category = category_name(op.category);
      set_duration(&n, duration);
      n.num_ops = static_cast<int64_t>(std::llround(op.flops.count()));
      n.tensor_size = op.bytes.count();
    }
    n.stream = 0;
    comp_ = {add(std::move(n), std::move(deps))};
    // A device-to-host copy: the host's next launch waits for this kernel.
    if (op.host_sync) host_ = join({&host_, &comp_});
  }

  void step(const Step& st) {
    const Deps none;
    switch (st.kind) {
      case StepKind::kRun: {
        const Block& b = w_.blocks[st.block];
        for (int rep = 0; rep < st.repeat; ++rep) {
          for (size_t i = 0; i < b.ops.size(); ++i) op(b.ops[i], durations_[st.block][i]);
        }
        return;
      }
      case StepKind::kSend: {
        launch();
        const uint64_t id =
            add(p2p(ChakraNodeType::kSend, st.backward ? "pp.send.grad" : "pp.send.act",
                    Category::kPpComm, layout_.rank(st.peer, local_), st.bytes, st.tag),
                join({&host_, &comp_}));
        if (!st.async_p2p) host_ = {id};  // Megatron synchronises after the send
        return;
      }
      case StepKind::kRecv: {
        const Deps recv = {
            add(p2p(ChakraNodeType::kRecv, st.backward ? "pp.recv.grad" : "pp.recv.act",
                    Category::kPpComm, layout_.rank(st.peer, local_), st.bytes, st.tag),
                {})};
        launch();
        comp_ = join({&comp_, &recv});
        if (!st.async_p2p) host_ = {join_node("sync", join({&host_, &comp_}), true, 0)};
        return;
      }
      case StepKind::kCollective: {
        launch();
        ChakraNode n = collective(st.op, st.tag);
        n.stream = 0;
        comp_ = {add(std::move(n), join({&host_, &comp_}))};
        return;
      }
      case StepKind::kCommAsync: {
        launch();
        ChakraNode n = collective(st.op, st.tag);
        n.stream = 2;
        dp_ = {add(std::move(n), join({&host_, &comp_, &dp_}))};
        return;
      }
      case StepKind::kWaitComm:
        comp_ = join({&comp_, &dp_});
        return;
      case StepKind::kHostSync:
        host_ = {join_node("host_sync", join({&host_, &comp_}), true, 0)};
        return;
      case StepKind::kHostCopy: {
        // An activation copy to or from host memory on stream 3, with its duration at
        // cluster.host_bandwidth: a COMP node, since Chakra's MEM_LOAD/MEM_STORE nodes stand
        // for HBM traffic in the replay.
        launch();
        ChakraNode n;
        n.name = st.backward ? "offload.reload" : "offload.copy";
        n.type = ChakraNodeType::kComp;
        n.category = category_name(Category::kOffload);
        n.tensor_size = st.bytes.count();
        set_duration(&n, st.bytes / host_bandwidth_);
        n.stream = 3;
        copy_ = {add(std::move(n), join({&host_, &comp_, &copy_}))};
        copies_[st.tag] = copy_.front();
        return;
      }
      case StepKind::kWaitHostCopy: {
        const Deps copy = {copies_.at(st.tag)};
        comp_ = join({&comp_, &copy});
        return;
      }
    }
  }

  const Workload& w_;
  const Layout& layout_;
  const std::vector<std::vector<SimTime>>& durations_;
  SimTime launch_;
  double host_factor_;
  Bandwidth host_bandwidth_;
  GroupNames* names_;
  int stage_, local_;
  bool counting_ = false;
  uint64_t next_ = 0;
  Deps host_, comp_, tp_, dp_;          // the last node(s) of the host thread and of each stream
  Deps copy_;                           // activation offloading's copy stream
  std::map<int64_t, uint64_t> copies_;  // each host copy's node, by tag
  ChakraTrace t_;
};

}  // namespace

StatusOr<ChakraWorkload> workload_to_chakra(const Scenario& s, const Workload& w,
                                            const ComputeModel& compute, SimTime launch_overhead,
                                            int64_t max_nodes) {
  const Layout layout(s, w);
  // Kernel durations, once per block op (every instance of a block costs the same): one table
  // for the GPUs that run alike, one more for each rank the model times apart (a straggler,
  // ComputeModel::distinct_ranks), asked at the iteration's start.
  using Durations = std::vector<std::vector<SimTime>>;
  auto table = [&](const RankContext* at) {
    Durations durations;
    for (const Block& b : w.blocks) {
      std::vector<SimTime> d;
      for (const Op& op : b.ops) {
        d.push_back(op.type == OpType::kCollective ? SimTime()
                    : op.fixed_time.ps() > 0       ? op.fixed_time
                    : at != nullptr                ? compute.duration(op, *at)
                                                   : compute.duration(op));
      }
      durations.push_back(std::move(d));
    }
    return durations;
  };
  const Durations durations = table(nullptr);
  std::map<int, Durations> distinct;  // by global rank
  for (int rank : compute.distinct_ranks()) {
    for (size_t st = 0; st < w.stages.size(); ++st) {
      for (int local = 0; local < layout.stage_ranks(); ++local) {
        if (layout.rank(static_cast<int>(st), local) != rank) continue;
        const RankContext at{rank, static_cast<int>(st), SimTime()};
        distinct.emplace(rank, table(&at));
      }
    }
  }
  GroupNames names;
  int64_t total = 0;
  for (size_t st = 0; st < w.stages.size(); ++st) {
    Lowering l(w, layout, durations, launch_overhead, s.cluster.host_overhead_factor,
               s.cluster.host_bandwidth, &names, static_cast<int>(st), 0);
    total += l.count() * layout.stage_ranks();
  }
  if (total > max_nodes) {
    return invalid_argument("export chakra: the job's " + std::to_string(w.stages.size()) + "x" +
                            std::to_string(layout.stage_ranks()) + " ranks would hold " +
                            std::to_string(total) + " nodes in all, over the limit of " +
                            std::to_string(max_nodes) +
                            " (--max-nodes); export a smaller job (fewer GPUs, layers or "
                            "micro-batches)");
  }
  ChakraWorkload out;
  for (size_t st = 0; st < w.stages.size(); ++st) {
    for (int local = 0; local < layout.stage_ranks(); ++local) {
      auto own = distinct.find(layout.rank(static_cast<int>(st), local));
      Lowering l(w, layout, own != distinct.end() ? own->second : durations, launch_overhead,
                 s.cluster.host_overhead_factor, s.cluster.host_bandwidth, &names,
                 static_cast<int>(st), local);
      out.ranks.push_back(l.run());
    }
  }
  out.groups = names.groups();
  return out;
}

StatusOr<ChakraWorkload> export_chakra(const Scenario& s, int64_t max_nodes) {
  PREFLIGHT_RETURN_IF_ERROR(validate_scenario(s));
  // Stragglers (simulation.slow_ranks) slow their rank's kernels in its trace. A trace holds one
  // duration per kernel, so a slowdown that starts or ends within the iteration cannot be
  // written; the simulation takes it (the kernel's start decides there).
  for (size_t i = 0; i < s.simulation.slow_ranks.size(); ++i) {
    const SlowRank& r = s.simulation.slow_ranks[i];
    if (r.from.ps() != 0 || r.until != SimTime::max()) {
      return invalid_argument("export chakra: simulation.slow_ranks[" + std::to_string(i) +
                              "]: a trace holds one duration per kernel, so only a slowdown over "
                              "the whole iteration can be exported (drop from/until)");
    }
  }
  const std::unique_ptr<ComputeModel> roofline = make_compute_model(s);
  std::unique_ptr<ComputeModel> slowed;
  if (!s.simulation.slow_ranks.empty()) {
    slowed = make_slow_ranks_model(*roofline, s.simulation.slow_ranks);
  }
  const ComputeModel* compute = slowed ? slowed.get() : roofline.get();
  return workload_to_chakra(
      s, generate_workload(s, offloaded_layer_bytes(s)), *compute,
      s.cluster.gpu.calibration.launch_overhead.scaled(s.cluster.host_overhead_factor), max_nodes);
}

}  // namespace preflight
