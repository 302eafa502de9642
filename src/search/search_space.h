// The space of parallelization strategies `preflight search` explores: one axis per knob (TP, PP,
// CP, EP, VPP with its schedule, micro-batch, recompute, sequence parallelism, distributed
// optimizer, ZeRO stage), defaults derived from the scenario, and the enumeration of every
// combination into valid candidates with the reason each other one was rejected.
// Plain values; enumeration is a pure, deterministic function (same inputs, same order).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "base/status.h"
#include "config/scenario.h"

namespace preflight {

// One point of the space: the parallelism keys a candidate sets on the base scenario.
// dp is derived: GPUs / (tp·cp·pp).
struct Strategy {
  int tp = 1;
  int pp = 1;
  int dp = 1;
  int cp = 1;
  int ep = 1;
  int vpp = 1;
  int micro_batch = 1;
  Recompute recompute = Recompute::kNone;
  bool sequence_parallel = false;
  bool distributed_optimizer = false;
  int zero_stage = 0;
  Schedule schedule = Schedule::kOneFOneB;
  int offload_layers = 0;  // activation offloading (PP 1, no recompute; parallelism.offload_layers)

  bool operator==(const Strategy&) const = default;
};

// The stable strategy key: a total order over the fields above (tp, pp, dp, cp, ep, vpp,
// micro_batch, recompute, sequence_parallel, distributed_optimizer, zero_stage, schedule,
// offload_layers).
// Search ranks by the objective, then by this, so equal figures rank the same on any run.
bool strategy_less(const Strategy& a, const Strategy& b);

// "TP8 PP16 DP8 mb1 selective SP DO 1f1b": the knobs that are not at their neutral value.
std::string strategy_label(const Strategy& s);

// The base scenario with `st`'s keys set. Companion switches the strategy makes invalid are
// turned off rather than rejected: overlap_param_gather without the distributed optimizer,
// overlap_p2p without the interleaved schedule, tp_comm_overlap without sequence parallelism;
// uneven first/last stages are kept only with vpp 1. The result may still fail validation.
Scenario apply_strategy(const Scenario& base, const Strategy& st);

// The values to try on each axis. An empty axis takes its default for the scenario:
//   tp          divisors of cluster.gpus_per_node up to 8 that divide model.heads
//   pp          divisors of model.layers (with uneven first/last stages in the scenario: every
//               pp from 2 on for which the rest of the layers split evenly)
//   cp          {1, 2, 4, 8} when training.seq_len >= 8K, else {1}
//   ep          divisors of model.moe.experts for an MoE model, else {1}
//   vpp         1, and for pp >= 2 the powers of two from 2 on that divide layers/pp
//   micro_batch {1, 2, 4, 8}
//   recompute   {none, selective, full}
//   sequence_parallel {true}: on wherever tp > 1 (never with tp 1)
//   distributed_optimizer {false, true}
//   zero_stage  {the scenario's}
//   schedule    {1f1b, interleaved, zb_h1}; interleaved pairs with vpp > 1 only, the others
//               with vpp 1 only
//   offload_layers {the scenario's}: activation offloading, where Megatron allows it (PP 1,
//               recompute none, 1f1b); other combinations with a count > 0 fail validation
struct SearchSpace {
  std::vector<int> tp, pp, cp, ep, vpp, micro_batch, zero_stage, offload_layers;
  std::vector<Recompute> recompute;
  std::vector<int> sequence_parallel;      // 0/1
  std::vector<int> distributed_optimizer;  // 0/1
  std::vector<Schedule> schedule;
};

// Sets one axis from "key=v1,v2,..." (the `--space` flag). Keys: parallelism.{tp, pp, cp, ep, vpp,
// recompute, sequence_parallel, distributed_optimizer, zero_stage, schedule, offload_layers} and
// training.micro_batch; the section may be left off ("tp=4,8").
Status set_space_axis(SearchSpace* space, const std::string& assignment);

// Every combination of the space, in a fixed nested order (tp, pp, cp, ep, vpp/schedule,
// micro_batch, recompute, sequence_parallel, distributed_optimizer, zero_stage).
struct Enumeration {
  std::vector<Strategy> candidates;  // valid ones, in enumeration order
  int64_t combinations = 0;          // every combination looked at
  // Rejected combinations by reason: "divisibility: ...", "validation: <key>: <what>".
  std::map<std::string, int64_t> rejected;
};

// REQUIRES: base as for search() (search.h); axis values as set_space_axis admits them.
Enumeration enumerate_strategies(const Scenario& base, const SearchSpace& space);

// The reason a search reports for a failed validation: "validation: " + the key path, and the
// value when it is a word (e.g. "validation: parallelism.schedule: dualpipe").
std::string validation_reason(const Status& s);

}  // namespace preflight
