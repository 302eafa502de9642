// The data-parallel collectives of one stage's program: gradient reductions and parameter
// all-gathers over the DP group (dense parameters; dp·cp ranks with context parallelism, as in
// Megatron-Core) and the expert-DP group (routed experts), ZeRO-3's per-layer gathers and
// reduce-scatters, and the buckets of the overlapped parameter gather. Internal to the workload
// generator; each object appends to one Program, which must outlive it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <set>
#include <vector>

#include "config/scenario.h"
#include "workload/schedule.h"
#include "workload/workload.h"

namespace preflight {

class DpCollectives {
 public:
  // `expert_reduce`: the stage holds routed experts whose expert-DP group has more than one
  // rank. Parameters are gathered at `param_bytes` per element, gradients reduced at
  // gradient_bytes_per_element(s).
  DpCollectives(const Scenario& s, bool expert_reduce, int param_bytes, Program& prog);

  // One collective of `dense` parameters over the DP group and one of `experts` over the
  // expert-DP group, each only when its group has more than one rank and its count is
  // positive, of `bytes_per` bytes per parameter; as steps of kind `step` (kCommAsync on the DP
  // stream, or kCollective, blocking), labelled with task `t` when not null.
  void collectives(StepKind step, CollectiveKind kind, const char* dense_name,
                   const char* expert_name, int64_t dense, int64_t experts, int bytes_per,
                   const PipelineTask* t);
  // The half-precision parameters' all-gather on the DP stream.
  void gather(const char* dense_name, const char* expert_name, int64_t dense, int64_t experts,
              const PipelineTask* t);
  // The compute stream waits for the DP stream (kWaitComm).
  void wait();

  // ZeRO-3 (FSDP) shards each layer's weights over the DP group: every micro-batch gathers a
  // layer's parameters before its forward and again before its backward, one layer ahead, and
  // reduce-scatters its gradients after its backward. One pass over `layers` (in execution
  // order) for task `t`, layer l running block block_of(l): with `all_gather`, the first
  // layer's gather, then before each layer a wait for everything issued (its gather,
  // prefetched during the previous layer), the previous layer's reduce-scatter (with `reduce`)
  // and the next layer's gather; without, each layer's reduce-scatter after it (a W pass, which
  // needs no weights). One DP stream carries both, in issue order, standing in for their
  // sharing of the links. `around`, when given, is called with (layer, false) right before the
  // layer's block and (layer, true) right after it (activation offloading's copies and waits).
  void zero3_pass(const PipelineTask& t, const std::vector<int>& layers,
                  const std::function<int(int)>& block_of, bool all_gather, bool reduce,
                  const std::function<void(int, bool)>& around = nullptr);

 private:
  // Layer `layer`'s gather (`all_gather`) or gradient reduce-scatter, labelled with `t`.
  void zero3_layer(int layer, bool all_gather, const PipelineTask& t);

  const Scenario& s_;
  Program& prog_;
  const int dp_cp_;
  const bool expert_reduce_;
  const int param_bytes_;
  const int grad_bytes_;
};

// Overlapped parameter all-gather (overlap_param_gather, Megatron's distributed optimizer): in
// the steady state the gather of the parameters the last optimizer step updated runs during
// this iteration's first forward of each chunk. Buckets (grad_bucket_parameters(): one per chunk
// after the rank's first) follow the layers in
// the order of their first use (chunks in the order of their first forward); the first bucket
// also holds the rest (embedding, output layer, MTP) and is issued when the iteration starts;
// the first forward of each chunk waits for each of its buckets before the bucket's first layer
// and then issues the next bucket (MCore's forward pre-hook), so only the first bucket, and any
// bucket slower than the layers before it, is exposed. Under ZeRO-3 the layers are gathered per
// micro-batch and the one bucket holds the rest.
class ParamGather {
 public:
  // A model chunk of the stage: its layers [first_layer, first_layer + layers).
  struct Chunk {
    int chunk = 0, first_layer = 0, layers = 0;
  };
  struct Bucket {
    int chunk = 0, first_layer = 0, layers = 0;
    int64_t dense = 0, experts = 0;  // parameters on this GPU
  };

  // Plans the buckets over `chunks` (in the order of their first forward), layers filling
  // buckets of `bucket_params` parameters, and issues the first bucket on `dp` (the iteration's
  // start). `rest_dense`, `rest_expert`: the stage's parameters outside its layers.
  ParamGather(const Scenario& s, const std::vector<Chunk>& chunks, bool zero3,
              int64_t bucket_params, int64_t rest_dense, int64_t rest_expert, DpCollectives& dp);

  // True on the first call for `chunk`: its first forward, which waits for its buckets.
  bool first_forward(int chunk) { return gathered_.insert(chunk).second; }
  // The buckets in issue order.
  const std::vector<Bucket>& buckets() const { return buckets_; }
  // Issues the next bucket's gathers on the DP stream, if any bucket is left.
  void issue_next();

 private:
  DpCollectives& dp_;
  std::vector<Bucket> buckets_;
  size_t next_ = 0;
  std::set<int> gathered_;  // chunks whose first forward has run
};

}  // namespace preflight
