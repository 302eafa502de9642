#include "memory/memory_advice.h"

#include <algorithm>
#include <cstdio>

namespace preflight {
namespace {

std::string gib(Bytes b) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f GiB", b.to_gib());
  return buf;
}

// One step away from the scenario: what it changes, in words and as --set overrides, and the
// scenario it makes (not yet validated).
struct Step {
  std::string what;  // "PP 2 (DP 4)"
  std::vector<std::string> sets;
  Scenario s;
  bool split = false;  // changes the model's split or the GPU count (else a saving in place)
};

// The limiting stage's peak of `s`, or false when `s` is not a valid strategy.
bool peak_of(const Scenario& s, Bytes* peak, bool* fits) {
  if (!validate_scenario(s).ok()) return false;
  const MemoryReport m = estimate_memory(s);
  if (m.stages.empty()) return false;
  *peak = m.stages[m.limiting_stage].peak;
  *fits = m.fits;
  return true;
}

// The single changes that can lower the limiting stage's peak, least disruptive first: shard the
// optimizer or model states over DP, recompute everything, a smaller micro-batch, then more model
// parallelism on the same GPUs (CP, TP, PP, each taken from DP), then more GPUs holding the same
// DP with a deeper pipeline.
std::vector<Step> single_steps(const Scenario& base) {
  std::vector<Step> out;
  const ParallelismConfig& p = base.parallelism;
  const int zero = effective_zero_stage(base);
  auto add = [&](std::string what, std::vector<std::string> sets, auto&& edit) {
    Step st{std::move(what), std::move(sets), base};
    edit(st.s);
    st.split = st.s.parallelism.tp != p.tp || st.s.parallelism.cp != p.cp ||
               st.s.parallelism.pp != p.pp || st.s.cluster.nodes != base.cluster.nodes;
    out.push_back(std::move(st));
  };
  auto deeper = [](Scenario& s, int pp) {  // an even split of the layers on pp stages
    s.parallelism.pp = pp;
    s.parallelism.pipeline_layout.clear();
    s.parallelism.pipeline_split.clear();
    s.parallelism.first_stage_layers = 0;
    s.parallelism.last_stage_layers = 0;
  };
  const int shard = p.dp * p.cp;  // the states shard over dp·cp
  if (shard > 1 && zero < 1) {
    add("the distributed optimizer", {"parallelism.distributed_optimizer=true"},
        [](Scenario& s) { s.parallelism.distributed_optimizer = true; });
  }
  if (shard > 1 && zero < 3) {
    add("ZeRO-3 over DP " + std::to_string(shard), {"parallelism.zero_stage=3"},
        [](Scenario& s) { s.parallelism.zero_stage = 3; });
  }
  if (p.recompute != Recompute::kFull) {
    add("full recompute", {"parallelism.recompute=full"},
        [](Scenario& s) { s.parallelism.recompute = Recompute::kFull; });
  }
  if (base.training.micro_batch > 1) {
    add("micro-batch 1", {"training.micro_batch=1"},
        [](Scenario& s) { s.training.micro_batch = 1; });
  }
  // Activation offloading where Megatron allows it (PP 1, no recompute, no CUDA graphs): the
  // fewest layers that fit, or all but one. The HBM it saves grows with the layers offloaded.
  const int layers = base.model.layers;
  if (p.pp == 1 && p.recompute == Recompute::kNone && p.schedule == Schedule::kOneFOneB &&
      !p.overlap_moe_comm && !base.training.cuda_graphs && p.offload_layers < layers - 1) {
    auto offloaded = [&](int n) {
      Scenario s = base;
      s.parallelism.offload_layers = n;
      return s;
    };
    int lo = p.offload_layers + 1, hi = layers - 1;
    while (lo < hi) {  // the fewest layers whose offloading fits
      const int mid = lo + (hi - lo) / 2;
      Bytes peak;
      bool fits = false;
      if (peak_of(offloaded(mid), &peak, &fits) && fits) {
        hi = mid;
      } else {
        lo = mid + 1;
      }
    }
    add("offloading the activations of " + std::to_string(lo) + " layers",
        {"parallelism.offload_layers=" + std::to_string(lo)},
        [&](Scenario& s) { s.parallelism.offload_layers = lo; });
  }
  for (int k : {2, 4, 8}) {
    if (p.dp % k != 0) continue;
    const std::string dp = std::to_string(p.dp / k);
    add("CP " + std::to_string(p.cp * k) + " (DP " + dp + ")",
        {"parallelism.cp=" + std::to_string(p.cp * k), "parallelism.dp=auto"}, [&](Scenario& s) {
          s.parallelism.cp *= k;
          s.parallelism.dp /= k;
        });
    if (p.tp * k <= base.cluster.gpus_per_node) {
      add("TP " + std::to_string(p.tp * k) + " (DP " + dp + ")",
          {"parallelism.tp=" + std::to_string(p.tp * k), "parallelism.dp=auto"}, [&](Scenario& s) {
            s.parallelism.tp *= k;
            s.parallelism.dp /= k;
            if (s.parallelism.tp > 1 && !s.parallelism.sequence_parallel && p.tp == 1) {
              s.parallelism.sequence_parallel = true;  // Megatron's pairing
            }
          });
    }
    add("PP " + std::to_string(p.pp * k) + " (DP " + dp + ")",
        {"parallelism.pp=" + std::to_string(p.pp * k), "parallelism.dp=auto"}, [&](Scenario& s) {
          deeper(s, p.pp * k);
          s.parallelism.dp /= k;
        });
  }
  for (int k : {2, 4, 8, 16}) {
    const int gpus = base.cluster.total_gpus() * k;
    add(std::to_string(gpus) + " GPUs with PP " + std::to_string(p.pp * k) + " (DP " +
            std::to_string(p.dp) + ")",
        {"cluster.gpus=" + std::to_string(gpus), "parallelism.pp=" + std::to_string(p.pp * k)},
        [&](Scenario& s) {
          s.cluster.nodes *= k;
          deeper(s, p.pp * k);
        });
  }
  return out;
}

std::string sets_text(const std::vector<std::string>& sets) {
  std::string out;
  for (const std::string& s : sets) out += (out.empty() ? "--set " : " --set ") + s;
  return out;
}

}  // namespace

std::vector<std::string> memory_advice(const Scenario& s, const MemoryReport& m) {
  std::vector<std::string> out;
  if (m.fits || m.stages.empty()) return out;
  const StageMemory& st = m.stages[m.limiting_stage];
  struct Option {
    std::string what;
    std::vector<std::string> sets;
    int gpus = 0;
    int changes = 0;
    Bytes peak;
    bool fits = false;
  };
  std::vector<Option> options;
  auto consider = [&](const std::string& what, const std::vector<std::string>& sets,
                      const Scenario& v, int changes) {
    Option o{what, sets, v.cluster.total_gpus(), changes, Bytes(), false};
    if (peak_of(v, &o.peak, &o.fits)) options.push_back(o);
  };
  const std::vector<Step> singles = single_steps(s);
  for (const Step& step : singles) consider(step.what, step.sets, step.s, 1);
  // Pairs: a saving in place with another saving or with a split.
  for (size_t i = 0; i < singles.size(); ++i) {
    const Step& a = singles[i];
    if (a.split) continue;
    for (size_t j = i + 1; j < singles.size(); ++j) {
      const Step& b = singles[j];
      Scenario both = b.s;
      const ParallelismConfig& pa = a.s.parallelism;
      both.parallelism.distributed_optimizer |= pa.distributed_optimizer;
      both.parallelism.zero_stage = std::max(both.parallelism.zero_stage, pa.zero_stage);
      if (pa.recompute == Recompute::kFull) both.parallelism.recompute = Recompute::kFull;
      both.training.micro_batch = std::min(both.training.micro_batch, a.s.training.micro_batch);
      both.parallelism.offload_layers =
          std::max(both.parallelism.offload_layers, pa.offload_layers);
      std::vector<std::string> sets = a.sets;
      sets.insert(sets.end(), b.sets.begin(), b.sets.end());
      consider(a.what + " and " + b.what, sets, both, 2);
    }
  }
  // What fits, the smallest change first: the fewest GPUs, then one change before two, then
  // the order of the steps (least disruptive first); at most four. Or the closest change.
  std::stable_sort(options.begin(), options.end(), [](const Option& a, const Option& b) {
    return a.gpus != b.gpus ? a.gpus < b.gpus : a.changes < b.changes;
  });
  for (const Option& o : options) {
    if (!o.fits || out.size() >= 4) continue;
    out.push_back(o.what + " -> " + gib(o.peak) + " peak, fits (" + sets_text(o.sets) + ")");
  }
  if (out.empty()) {
    const Option* best = nullptr;
    for (const Option& o : options) {
      if (best == nullptr || o.peak.count() < best->peak.count()) best = &o;
    }
    std::string line = "no single or paired change fits (short by " +
                       gib(Bytes(st.peak.count() - st.capacity.count())) + ")";
    if (best != nullptr) {
      line += "; the closest is " + best->what + " -> " + gib(best->peak) + " (" +
              sets_text(best->sets) + "); `preflight search` tries every strategy";
    }
    out.push_back(line);
  }
  return out;
}

}  // namespace preflight
