#include "memory/memory_advice.h"

#include <cmath>
#include <cstdio>

namespace preflight {
namespace {

std::string gib(Bytes b) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f GiB", b.to_gib());
  return buf;
}

}  // namespace

std::vector<std::string> memory_advice(const Scenario& s, const MemoryReport& m) {
  std::vector<std::string> out;
  if (m.fits || m.stages.empty()) return out;
  const StageMemory& st = m.stages[m.limiting_stage];
  const ParallelismConfig& p = s.parallelism;
  const int zero = effective_zero_stage(s);
  const int64_t short_by = st.peak.count() - st.capacity.count();
  const int64_t states = st.weights.count() + st.gradients.count() + st.optimizer.count();
  const int dp = p.dp * p.cp;  // the states shard over dp·cp
  // Sharding over DP: what each ZeRO stage would leave of the states (the stage's current
  // sharding undone first).
  if (dp > 1 && zero < 3) {
    const double d = static_cast<double>(dp);
    const double opt = static_cast<double>(st.optimizer.count()) * (zero >= 1 ? d : 1.0);
    const double grad = static_cast<double>(st.gradients.count()) * (zero >= 2 ? d : 1.0);
    const double w = static_cast<double>(st.weights.count());
    if (zero < 1) {
      const Bytes saves(static_cast<int64_t>(opt - opt / d));
      out.push_back("shard the optimizer states over DP " + std::to_string(dp) +
                    " (parallelism.distributed_optimizer: true): saves " + gib(saves));
    }
    const Bytes saves3(states - static_cast<int64_t>((opt + grad + w) / d));
    out.push_back("shard weights, gradients and optimizer states over DP " + std::to_string(dp) +
                  " (parallelism.zero_stage: 3): saves " + gib(saves3) +
                  ", for a gather of each layer's weights per micro-batch");
  }
  // Model parallelism: the model states scale as 1/(tp·pp) (experts as 1/ep).
  if (states > st.capacity.count() * 9 / 10) {
    const double factor =
        std::ceil(static_cast<double>(states) / (0.6 * static_cast<double>(st.capacity.count())));
    out.push_back("the model states alone need " + gib(Bytes(states)) + " of " + gib(st.capacity) +
                  ": split the model " + std::to_string(int(factor)) + "x further (TP " +
                  std::to_string(p.tp) + " x PP " + std::to_string(p.pp) +
                  " now; parallelism.tp / pp, or more GPUs)");
  }
  // Activations.
  if (st.activations.count() * 4 > st.peak.count()) {
    const std::string act = gib(st.activations);
    if (p.recompute != Recompute::kFull) {
      out.push_back("activations hold " + act +
                    ": full recompute (parallelism.recompute: full) keeps only each layer's "
                    "input, for about a third more compute");
    }
    if (p.tp > 1 && !p.sequence_parallel) {
      out.push_back(
          "sequence parallelism (parallelism.sequence_parallel: true) splits the "
          "norm and dropout activations over TP " +
          std::to_string(p.tp));
    }
    if (s.training.micro_batch > 1) {
      out.push_back("a smaller micro-batch (training.micro_batch: " +
                    std::to_string(s.training.micro_batch / 2) +
                    ") halves each micro-batch's activations");
    }
    if (p.schedule == Schedule::kGpipe && st.microbatches_in_flight > p.pp) {
      out.push_back("GPipe holds all " + std::to_string(st.microbatches_in_flight) +
                    " micro-batches; 1F1B (parallelism.schedule: 1f1b) holds at most " +
                    std::to_string(p.pp));
    }
  }
  if (dp <= 1) {
    out.push_back(
        "DP is 1: sharding the optimizer or model states over DP (distributed "
        "optimizer, ZeRO) cannot help here");
  }
  if (out.empty() || (dp <= 1 && out.size() == 1)) {
    out.push_back("short by " + gib(Bytes(short_by)) +
                  ": more GPUs per model replica (TP, PP) or GPUs with more HBM");
  }
  return out;
}

}  // namespace preflight
