// Megatron's rank layout: the one home of which GPU each rank of a job is and which ranks form
// each communicator. Every module that names ranks (the workload's groups, the executor, the
// flow network's routing, the Chakra export) asks here.
//
// Megatron orders ranks TP fastest, then CP, then DP, then PP:
//   rank = tp_rank + tp·(cp_rank + cp·(dp_rank + dp·stage)),   GPU = rank,
// so every communicator of a stage is a set of `size` ranks `stride` apart (GroupShape). Expert
// layers refold a stage's tp·cp·dp ranks as etp × ep × edp, expert-TP fastest, as
// Megatron-Core does. Gradients reduce over the DP ranks of every CP rank together
// (Megatron-Core's DP×CP group): dp·cp ranks, stride tp. GPU g sits on node g / gpus_per_node.
#pragma once

#include <cstdint>
#include <vector>

#include "config/scenario.h"
#include "network/placement.h"

namespace preflight {

// Which communicator a collective runs on.
enum class GroupKind : uint8_t {
  kTensor,        // the TP group of this rank
  kData,          // the DP group (same stage, same TP rank)
  kPipeline,      // the neighbouring stage (send/recv)
  kEmbedding,     // first and last stage (tied-embedding gradient all-reduce)
  kContext,       // the CP group (same TP rank, same DP replica)
  kExpert,        // the EP group of an expert layer (token dispatch and combine)
  kExpertTensor,  // the expert-TP group (etp ranks holding shards of the same experts)
  kExpertData,    // the expert-DP group (replicas of the same expert shard): expert gradients
};

// A stage's communicators of one kind: `size` ranks `stride` apart.
struct GroupShape {
  int size = 1;
  int stride = 1;
};

class RankLayout {
 public:
  RankLayout() = default;
  // REQUIRES: every degree >= 1.
  RankLayout(int tp, int cp, int dp, int pp, int etp, int ep);
  // The layout of scenario `s` (expert TP and EP as its MoE layers run them).
  static RankLayout of(const Scenario& s);

  int tp() const { return tp_; }
  int cp() const { return cp_; }
  int dp() const { return dp_; }
  int pp() const { return pp_; }
  int etp() const { return etp_; }
  int ep() const { return ep_; }
  // Ranks of one pipeline stage: tp·cp·dp.
  int stage_ranks() const { return tp_ * cp_ * dp_; }
  // The GPU of rank `local` (0 <= local < stage_ranks()) of `stage`.
  int rank(int stage, int local) const { return local + stage_ranks() * stage; }

  // The shape of the stage's groups of kind `g`. kPipeline: one rank (its peer is in another
  // stage); kEmbedding: one rank of a stage (the group pairs stages, see groups()).
  GroupShape shape(GroupKind g) const;

  // Every group of kind `g` in `stage`, each as its members' GPUs in group-rank order (which is
  // ascending), groups in order of their first member. kEmbedding: the pairs of rank r of the
  // first stage and rank r of the last (`stage` unused; none with one stage).
  std::vector<std::vector<int>> groups(GroupKind g, int stage) const;

  // The group of kind `g` that holds rank `local` of `stage`, in group-rank order.
  // REQUIRES: g is neither kPipeline nor kEmbedding (they pair stages: the caller knows which).
  std::vector<int> members(GroupKind g, int stage, int local) const;

 private:
  int tp_ = 1, cp_ = 1, dp_ = 1, pp_ = 1, etp_ = 1, ep_ = 1;
};

// Where the communicators of a Megatron job sit on the cluster's nodes.
struct JobGroups {
  GroupPlacement tp;
  GroupPlacement dp;         // the gradient-reduction group: dp·cp ranks, stride tp
  GroupPlacement pp;         // two neighbouring stages
  GroupPlacement embedding;  // first and last stage
  GroupPlacement cp;         // context-parallel ranks (stride tp)
  GroupPlacement ep;         // expert-parallel ranks (stride etp, in the expert folding)
  GroupPlacement etp;        // expert tensor-parallel ranks (contiguous)
  GroupPlacement edp;        // expert data-parallel ranks (stride etp·ep)

  // The placement of the groups of kind `g`.
  const GroupPlacement& of(GroupKind g) const;
};

JobGroups place_job_groups(const Scenario& s);

}  // namespace preflight
