#include "search/search_space.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <sstream>
#include <tuple>

namespace preflight {
namespace {

auto key_of(const Strategy& s) {
  return std::make_tuple(s.tp, s.pp, s.dp, s.cp, s.ep, s.vpp, s.micro_batch,
                         static_cast<int>(s.recompute), s.sequence_parallel,
                         s.distributed_optimizer, s.zero_stage, static_cast<int>(s.schedule),
                         s.offload_layers);
}

std::vector<int> sorted_unique(std::vector<int> v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

std::vector<int> divisors(int n) {
  std::vector<int> out;
  for (int d = 1; d <= n; ++d) {
    if (n % d == 0) out.push_back(d);
  }
  return out;
}

// Layers split as the scenario's uneven layout asks: first/last stages fixed, the rest even.
bool uneven_layout_valid(const ParallelismConfig& p, int layers, int pp) {
  const int fixed = (p.first_stage_layers > 0) + (p.last_stage_layers > 0);
  const int rest = layers - p.first_stage_layers - p.last_stage_layers;
  const int middle = pp - fixed;
  if (pp < 2 || middle < 0) return false;
  if (middle == 0) return rest == 0;
  return rest >= middle && rest % middle == 0;
}

bool uneven(const Scenario& s) {
  return s.parallelism.first_stage_layers > 0 || s.parallelism.last_stage_layers > 0;
}

std::vector<int> default_tp(const Scenario& s) {
  std::vector<int> out{s.parallelism.tp};
  for (int d : divisors(s.cluster.gpus_per_node)) {
    if (d <= 8 && s.model.heads % d == 0) out.push_back(d);
  }
  return sorted_unique(out);
}

std::vector<int> default_pp(const Scenario& s) {
  const int layers = s.model.layers;
  std::vector<int> out{s.parallelism.pp};
  if (uneven(s)) {
    const int most = std::min(layers, s.cluster.total_gpus());
    for (int pp = 2; pp <= most; ++pp) {
      if (uneven_layout_valid(s.parallelism, layers, pp)) out.push_back(pp);
    }
  } else {
    for (int d : divisors(layers)) out.push_back(d);
  }
  return sorted_unique(out);
}

std::vector<int> default_vpp(const Scenario& s, int pp) {
  std::vector<int> out{1};
  if (pp < 2) return out;
  if (uneven(s)) {
    // Uneven stages split over their chunks as chunk_layers() says: the scenario's own vpp, if
    // any (validation rejects a pp whose stages are too small for it).
    if (s.parallelism.vpp > 1) out.push_back(s.parallelism.vpp);
    return out;
  }
  const int per_stage = s.model.layers / pp;
  if (s.parallelism.vpp > 1 && s.model.layers % (pp * s.parallelism.vpp) == 0) {
    out.push_back(s.parallelism.vpp);
  }
  for (int v = 2; v <= per_stage; v *= 2) {
    if (s.model.layers % (pp * v) == 0) out.push_back(v);
  }
  return sorted_unique(out);
}

std::vector<int> default_cp(const Scenario& s) {
  std::vector<int> out{s.parallelism.cp};
  // From 8K tokens context parallelism can pay: the attention core is s/6h of a layer's GEMM
  // FLOPs (non-causal count; a third at h 4,096, a sixth at h 8,192) and its activations grow
  // with s, so splitting the sequence competes with TP and PP (Megatron's long-context recipes
  // use CP 2 from 8K).
  if (s.training.seq_len >= 8192) out.insert(out.end(), {1, 2, 4, 8});
  return sorted_unique(out);
}

std::vector<int> default_ep(const Scenario& s) {
  std::vector<int> out{s.parallelism.ep};
  if (s.model.moe.enabled()) {
    for (int d : divisors(s.model.moe.experts)) out.push_back(d);
  }
  return sorted_unique(out);
}

std::vector<Schedule> default_schedules(const Scenario& s) {
  std::vector<Schedule> out{Schedule::kOneFOneB, Schedule::kInterleaved, Schedule::kZeroBubbleH1};
  if (std::find(out.begin(), out.end(), s.parallelism.schedule) == out.end()) {
    out.push_back(s.parallelism.schedule);
  }
  return out;
}

// The first divisibility rule `st` breaks on `s`, or "" (validation does the rest).
std::string divisibility(const Scenario& s, const Strategy& st, int64_t model_parallel) {
  const int gpus = s.cluster.total_gpus();
  if (s.model.heads % st.tp != 0) return "divisibility: heads not a multiple of tp";
  if (gpus % model_parallel != 0) return "divisibility: tp·cp·pp does not divide the GPU count";
  if (!uneven(s) && s.model.layers % (int64_t{st.pp} * st.vpp) != 0) {
    return "divisibility: layers not a multiple of pp·vpp";
  }
  if (s.training.global_batch % (int64_t{st.micro_batch} * st.dp) != 0) {
    return "divisibility: global_batch not a multiple of micro_batch·dp";
  }
  if (s.model.moe.enabled()) {
    if (s.model.moe.experts % st.ep != 0) return "divisibility: experts not a multiple of ep";
    const int etp = s.parallelism.etp > 0 ? s.parallelism.etp : st.tp;
    if ((int64_t{st.tp} * st.cp * st.dp) % (int64_t{st.ep} * etp) != 0) {
      return "divisibility: tp·cp·dp not a multiple of ep·etp";
    }
  }
  if (st.schedule == Schedule::kInterleaved &&
      (s.training.global_batch / (int64_t{st.micro_batch} * st.dp)) % st.pp != 0) {
    return "divisibility: micro-batches not a multiple of pp (interleaved)";
  }
  return "";
}

Status parse_int_list(const std::string& key, const std::string& values, int min, int max,
                      std::vector<int>* out) {
  out->clear();
  std::stringstream ss(values);
  for (std::string v; std::getline(ss, v, ',');) {
    char* end = nullptr;
    const long x = v.empty() ? 0 : std::strtol(v.c_str(), &end, 10);
    if (v.empty() || *end != '\0' || x < min || x > max) {
      return invalid_argument("--space " + key + ": '" + v + "': expected integers from " +
                              std::to_string(min) + " to " + std::to_string(max) +
                              ", comma-separated");
    }
    out->push_back(static_cast<int>(x));
  }
  *out = sorted_unique(*out);
  return Status();
}

Status parse_bool_list(const std::string& key, const std::string& values, std::vector<int>* out) {
  out->clear();
  std::stringstream ss(values);
  for (std::string v; std::getline(ss, v, ',');) {
    if (v == "true" || v == "1" || v == "on" || v == "yes") {
      out->push_back(1);
    } else if (v == "false" || v == "0" || v == "off" || v == "no") {
      out->push_back(0);
    } else {
      return invalid_argument("--space " + key + ": '" + v + "': expected true or false");
    }
  }
  *out = sorted_unique(*out);
  return Status();
}

template <typename Enum>
Status parse_enum_list(const std::string& key, const std::string& values,
                       const std::vector<Enum>& all, std::vector<Enum>* out) {
  out->clear();
  std::string names;
  for (Enum e : all) names += std::string(names.empty() ? "" : ", ") + to_string(e);
  std::stringstream ss(values);
  for (std::string v; std::getline(ss, v, ',');) {
    auto it = std::find_if(all.begin(), all.end(), [&](Enum e) { return v == to_string(e); });
    if (it == all.end()) {
      return invalid_argument("--space " + key + ": '" + v + "': expected one of " + names);
    }
    if (std::find(out->begin(), out->end(), *it) == out->end()) out->push_back(*it);
  }
  return Status();
}

}  // namespace

bool strategy_less(const Strategy& a, const Strategy& b) { return key_of(a) < key_of(b); }

std::string strategy_label(const Strategy& s) {
  std::string out =
      "TP" + std::to_string(s.tp) + " PP" + std::to_string(s.pp) + " DP" + std::to_string(s.dp);
  if (s.cp > 1) out += " CP" + std::to_string(s.cp);
  if (s.ep > 1) out += " EP" + std::to_string(s.ep);
  if (s.vpp > 1) out += " VPP" + std::to_string(s.vpp);
  out += " mb" + std::to_string(s.micro_batch);
  out += std::string(" recompute=") + to_string(s.recompute);
  if (s.sequence_parallel) out += " SP";
  if (s.distributed_optimizer) out += " DistOpt";
  if (s.zero_stage > 0) out += " ZeRO" + std::to_string(s.zero_stage);
  out += std::string(" ") + to_string(s.schedule);
  if (s.offload_layers > 0) out += " offload" + std::to_string(s.offload_layers);
  return out;
}

Scenario apply_strategy(const Scenario& base, const Strategy& st) {
  Scenario s = base;
  ParallelismConfig& p = s.parallelism;
  p.tp = st.tp;
  p.pp = st.pp;
  p.dp = st.dp;
  p.cp = st.cp;
  p.ep = st.ep;
  p.vpp = st.vpp;
  p.recompute = st.recompute;
  p.sequence_parallel = st.sequence_parallel;
  p.distributed_optimizer = st.distributed_optimizer;
  p.zero_stage = st.zero_stage;
  p.schedule = st.schedule;
  p.offload_layers = st.offload_layers;
  s.training.micro_batch = st.micro_batch;
  if (!p.distributed_optimizer) p.overlap_param_gather = false;
  if (p.schedule != Schedule::kInterleaved) p.overlap_p2p = false;
  if (!p.sequence_parallel) p.tp_comm_overlap = false;
  if (p.vpp > 1) {
    p.first_stage_layers = 0;
    p.last_stage_layers = 0;
  }
  return s;
}

Status set_space_axis(SearchSpace* space, const std::string& assignment) {
  const size_t eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == assignment.size()) {
    return invalid_argument("--space " + assignment +
                            ": expected key=v1,v2,... (e.g. parallelism.tp=4,8)");
  }
  const std::string key = assignment.substr(0, eq);
  const std::string values = assignment.substr(eq + 1);
  std::string name = key;
  for (const char* section : {"parallelism.", "training."}) {
    if (name.rfind(section, 0) == 0) name = name.substr(std::string(section).size());
  }
  constexpr int kMaxWidth = 1 << 20;
  if (name == "tp") return parse_int_list(key, values, 1, kMaxWidth, &space->tp);
  if (name == "pp") return parse_int_list(key, values, 1, kMaxWidth, &space->pp);
  if (name == "cp") return parse_int_list(key, values, 1, kMaxWidth, &space->cp);
  if (name == "ep") return parse_int_list(key, values, 1, kMaxWidth, &space->ep);
  if (name == "vpp") return parse_int_list(key, values, 1, 1024, &space->vpp);
  if (name == "micro_batch") return parse_int_list(key, values, 1, kMaxWidth, &space->micro_batch);
  if (name == "zero_stage") return parse_int_list(key, values, 0, 3, &space->zero_stage);
  if (name == "offload_layers") {
    return parse_int_list(key, values, 0, kMaxWidth, &space->offload_layers);
  }
  if (name == "sequence_parallel") return parse_bool_list(key, values, &space->sequence_parallel);
  if (name == "distributed_optimizer") {
    return parse_bool_list(key, values, &space->distributed_optimizer);
  }
  if (name == "recompute") {
    return parse_enum_list(key, values, {Recompute::kNone, Recompute::kSelective, Recompute::kFull},
                           &space->recompute);
  }
  if (name == "schedule") {
    return parse_enum_list(key, values,
                           {Schedule::kGpipe, Schedule::kOneFOneB, Schedule::kInterleaved,
                            Schedule::kZeroBubbleH1, Schedule::kZeroBubbleH2, Schedule::kDualPipe},
                           &space->schedule);
  }
  return invalid_argument("--space " + key +
                          ": unknown axis; expected parallelism.tp, pp, cp, ep, vpp, recompute, "
                          "sequence_parallel, distributed_optimizer, zero_stage, schedule, "
                          "offload_layers or training.micro_batch");
}

std::string validation_reason(const Status& s) {
  const std::string& m = s.message();
  const size_t first = m.find(": ");
  if (first == std::string::npos) return "validation: " + m;
  std::string out = "validation: " + m.substr(0, first);
  const size_t second = m.find(": ", first + 2);
  const std::string value =
      m.substr(first + 2, second == std::string::npos ? std::string::npos : second - first - 2);
  const bool word = !value.empty() && std::all_of(value.begin(), value.end(), [](char c) {
    return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
  });
  if (word) out += ": " + value;
  return out;
}

Enumeration enumerate_strategies(const Scenario& base, const SearchSpace& space) {
  const std::vector<int> tps = space.tp.empty() ? default_tp(base) : space.tp;
  const std::vector<int> cps = space.cp.empty() ? default_cp(base) : space.cp;
  const std::vector<int> eps = space.ep.empty() ? default_ep(base) : space.ep;
  const std::vector<int> pps = space.pp.empty() ? default_pp(base) : space.pp;
  const std::vector<int> mbs = space.micro_batch.empty()
                                   ? sorted_unique({1, 2, 4, 8, base.training.micro_batch})
                                   : space.micro_batch;
  const std::vector<Recompute> recomputes =
      space.recompute.empty()
          ? std::vector<Recompute>{Recompute::kNone, Recompute::kSelective, Recompute::kFull}
          : space.recompute;
  const std::vector<int> sps =
      space.sequence_parallel.empty() ? std::vector<int>{1} : space.sequence_parallel;
  const std::vector<int> dos =
      space.distributed_optimizer.empty() ? std::vector<int>{0, 1} : space.distributed_optimizer;
  const std::vector<int> zeros =
      space.zero_stage.empty() ? std::vector<int>{base.parallelism.zero_stage} : space.zero_stage;
  const std::vector<Schedule> schedules =
      space.schedule.empty() ? default_schedules(base) : space.schedule;
  const std::vector<int> offloads = space.offload_layers.empty()
                                        ? std::vector<int>{base.parallelism.offload_layers}
                                        : space.offload_layers;

  // The knobs that do not change the shape of the job, for tp 1 (no sequence parallelism) and
  // for tp > 1.
  struct Knobs {
    int micro_batch;
    Recompute recompute;
    bool sequence_parallel;
    bool distributed_optimizer;
    int zero_stage;
    int offload_layers;
  };
  std::vector<Knobs> knobs[2];
  for (int wide = 0; wide < 2; ++wide) {
    for (int mb : mbs) {
      for (Recompute rc : recomputes) {
        for (int sp : wide ? sps : std::vector<int>{0}) {
          for (int dist : dos) {
            for (int zero : zeros) {
              for (int off : offloads) {
                knobs[wide].push_back({mb, rc, sp != 0, dist != 0, zero, off});
              }
            }
          }
        }
      }
    }
  }

  auto has = [](const auto& v, auto x) { return std::find(v.begin(), v.end(), x) != v.end(); };
  // Selective recompute of the attention core alone (the scenario's modules, or the default)
  // with the fused core: it replays the core's forward to save only its log-sum-exp.
  const unsigned core_bit = 1u << static_cast<int>(RecomputeModule::kCoreAttn);
  const bool core_only =
      base.parallelism.recompute_modules == 0 || base.parallelism.recompute_modules == core_bit;
  const bool selective_dominated = has(recomputes, Recompute::kNone) &&
                                   has(recomputes, Recompute::kSelective) &&
                                   base.training.flash_attention && core_only;
  const bool dedupe_optimizer = has(dos, 0) && has(dos, 1);

  Enumeration out;
  const int gpus = base.cluster.total_gpus();
  auto visit = [&](Strategy st, int64_t model_parallel) {
    for (const Knobs& k : knobs[st.tp > 1]) {
      ++out.combinations;
      st.micro_batch = k.micro_batch;
      st.recompute = k.recompute;
      st.sequence_parallel = k.sequence_parallel;
      st.distributed_optimizer = k.distributed_optimizer;
      st.zero_stage = k.zero_stage;
      st.offload_layers = k.offload_layers;
      const std::string reason = divisibility(base, st, model_parallel);
      if (!reason.empty()) {
        ++out.rejected[reason];
        continue;
      }
      // A knob that only costs time here is left out: selective recompute of the fused
      // attention core replays its forward (Megatron-Core's checkpointed core attention) to save
      // 4 B per head and token, so the same strategy with recompute none is never slower and
      // within those bytes of its memory. An optimizer sharded over a DP group of one is the
      // replicated one: of the two the space enumerates, the one the scenario names stays.
      if (selective_dominated && st.recompute == Recompute::kSelective) {
        ++out.rejected
              ["dominated by recompute none (fused attention: selective replays the core's "
               "forward to save its log-sum-exp)"];
        continue;
      }
      if (dedupe_optimizer && int64_t{st.dp} * st.cp <= 1 &&
          st.distributed_optimizer != base.parallelism.distributed_optimizer) {
        ++out.rejected["same strategy with the optimizer " +
                       std::string(base.parallelism.distributed_optimizer ? "sharded"
                                                                          : "replicated") +
                       " (DP 1: nothing to shard over)"];
        continue;
      }
      const Status v = validate_scenario(apply_strategy(base, st));
      if (!v.ok()) {
        ++out.rejected[validation_reason(v)];
        continue;
      }
      out.candidates.push_back(st);
    }
  };
  for (int tp : tps) {
    for (int pp : pps) {
      const std::vector<int> vpps = space.vpp.empty() ? default_vpp(base, pp) : space.vpp;
      for (int cp : cps) {
        const int64_t model_parallel = int64_t{tp} * cp * pp;
        const int dp = gpus % model_parallel == 0 ? static_cast<int>(gpus / model_parallel) : 0;
        for (int ep : eps) {
          for (int vpp : vpps) {
            for (Schedule sched : schedules) {
              // Interleaving is what vpp > 1 means; the other schedules run one chunk per rank.
              if ((sched == Schedule::kInterleaved) != (vpp > 1)) continue;
              Strategy st;
              st.tp = tp;
              st.pp = pp;
              st.dp = dp;
              st.cp = cp;
              st.ep = ep;
              st.vpp = vpp;
              st.schedule = sched;
              visit(st, model_parallel);
            }
          }
        }
      }
    }
  }
  return out;
}

}  // namespace preflight
