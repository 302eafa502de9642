// The data-parallel collectives of a stage's program (sharded_dp.h): DP and expert-DP
// collectives side by side, ZeRO-3's per-layer passes and the overlapped parameter-gather
// buckets.
#include "workload/sharded_dp.h"

#include "workload/generator.h"
#include "workload/generator_internal.h"
#include "workload/layer_ops.h"

namespace preflight {

DpCollectives::DpCollectives(const Scenario& s, bool expert_reduce, int param_bytes, Program& prog)
    : s_(s),
      prog_(prog),
      dp_cp_(s.parallelism.dp * s.parallelism.cp),
      expert_reduce_(expert_reduce),
      param_bytes_(param_bytes),
      grad_bytes_(gradient_bytes_per_element(s)) {}

void DpCollectives::collectives(StepKind step, CollectiveKind kind, const char* dense_name,
                                const char* expert_name, int64_t dense, int64_t experts,
                                int bytes_per, const PipelineTask* t) {
  auto issue = [&](const char* name, GroupKind group, int64_t count) {
    Step c;
    c.kind = step;
    c.op = collective_op(name, kind, group, Bytes(count * bytes_per));
    if (t != nullptr) {
      c.microbatch = t->microbatch;
      c.chunk = t->chunk;
      c.backward = t->backward;
    }
    prog_.steps.push_back(c);
  };
  if (dp_cp_ > 1 && dense > 0) issue(dense_name, GroupKind::kData, dense);
  if (expert_reduce_ && experts > 0) issue(expert_name, GroupKind::kExpertData, experts);
}

void DpCollectives::gather(const char* dense_name, const char* expert_name, int64_t dense,
                           int64_t experts, const PipelineTask* t) {
  collectives(StepKind::kCommAsync, CollectiveKind::kAllGather, dense_name, expert_name, dense,
              experts, param_bytes_, t);
}

void DpCollectives::wait() {
  Step wait;
  wait.kind = StepKind::kWaitComm;
  prog_.steps.push_back(wait);
}

void DpCollectives::zero3_layer(int layer, bool all_gather, const PipelineTask& t) {
  const int64_t dense = layer_dense_params_per_gpu(s_, layer);
  const int64_t experts = layer_expert_params_per_gpu(s_, layer);
  if (all_gather) {
    gather("dp.allgather.layer", "edp.allgather.layer", dense, experts, &t);
  } else {
    collectives(StepKind::kCommAsync, CollectiveKind::kReduceScatter, "dp.reducescatter.layer",
                "edp.reducescatter.layer", dense, experts, grad_bytes_, &t);
  }
}

void DpCollectives::zero3_pass(const PipelineTask& t, const std::vector<int>& layers,
                               const std::function<int(int)>& block_of, bool all_gather,
                               bool reduce, const std::function<void(int, bool)>& around) {
  const size_t n = layers.size();
  if (all_gather && n > 0) zero3_layer(layers[0], true, t);
  for (size_t j = 0; j < n; ++j) {
    if (all_gather) {
      wait();
      if (reduce && j > 0) zero3_layer(layers[j - 1], false, t);
      if (j + 1 < n) zero3_layer(layers[j + 1], true, t);
    }
    if (around) around(layers[j], false);
    prog_.steps.push_back(block_step(block_of(layers[j]), 1, t));
    if (around) around(layers[j], true);
    if (reduce && !all_gather) zero3_layer(layers[j], false, t);
  }
  if (all_gather && reduce && n > 0) zero3_layer(layers[n - 1], false, t);
}

ParamGather::ParamGather(const Scenario& s, const std::vector<Chunk>& chunks, bool zero3,
                         int64_t bucket_params, int64_t rest_dense, int64_t rest_expert,
                         DpCollectives& dp)
    : dp_(dp) {
  for (const Chunk& c : chunks) {
    Bucket b{c.chunk, c.first_layer, 0, 0, 0};
    for (int j = 0; j < c.layers && !zero3; ++j) {
      const int layer = c.first_layer + j;
      ++b.layers;
      b.dense += layer_dense_params_per_gpu(s, layer);
      b.experts += layer_expert_params_per_gpu(s, layer);
      // Chunks after the rank's first are one bucket each (grad_bucket_parameters()).
      if ((c.chunk == 0 && b.dense + b.experts >= bucket_params) || j == c.layers - 1) {
        buckets_.push_back(b);
        b = Bucket{c.chunk, layer + 1, 0, 0, 0};
      }
    }
    if (zero3 && buckets_.empty()) buckets_.push_back(b);
  }
  if (buckets_.empty() && !chunks.empty()) {
    buckets_.push_back(Bucket{chunks.front().chunk, 0, 0, 0, 0});
  }
  if (!buckets_.empty()) {
    buckets_.front().dense += rest_dense;
    buckets_.front().experts += rest_expert;
  }
  issue_next();  // when the iteration starts
}

void ParamGather::issue_next() {
  if (next_ >= buckets_.size()) return;
  const Bucket& b = buckets_[next_++];
  dp_.gather("dp.allgather.params", "edp.allgather.params", b.dense, b.experts, nullptr);
}

}  // namespace preflight
