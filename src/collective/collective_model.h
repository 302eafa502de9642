// CollectiveModel: the time of one collective. Two planners sit behind the `plan()` seam:
//  * NCCL-faithful (`CollectiveModel::nccl`, the default in simulations): NCCL's tuning model
//    chooses the algorithm, protocol and channels (nccl_model.h), and the time comes from the
//    model calibrated on measured nccl-tests curves (docs/collectives.md):
//      t = α + β·steps + lat_NCCL + (S/bw_NCCL)·(1 + 4k·x(1−x)),  x = S/(S + S_mid)
//    with α = collective_latency (per-call launch and proxy cost), β = collective_step_latency,
//    k = collective_midsize_penalty and S_mid = collective_midsize_bytes (GPU calibration).
//  * Alpha-beta (the first version, `CollectiveModel(cluster, network)`), kept for comparison
//    (`collectives.model: alpha_beta`). Formulas, with n ranks on N nodes, k per node,
// α = collective_latency, β_s = collective_step_latency, L = inter-node latency, B = busBw:
//   ring all-reduce       α + 2(n−1)·β_s + 2(N−1)·L + 2(n−1)/n · S/B
//   tree all-reduce (N>1) α + 2((k−1)·β_s + ⌊log2 N⌋·(β_s + L)) + 2(n−1)/n · S/(0.92·B)
//   all-gather, reduce-scatter (ring)  α + (n−1)·β_s + (N−1)·L + (n−1)/n · S/B
//   broadcast (ring pipeline)          α + (n−1)·β_s + (N−1)·L + S/B
//   send/recv                          α + β_s (+ L across nodes) + S/B_p2p
// The cheaper of ring and tree is chosen, as NCCL's tuner does (0.92: NCCL's tree bandwidth
// correction, shared/reference nccl.md §5.5).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "base/units.h"
#include "config/scenario.h"
#include "network/network_backend.h"
#include "network/placement.h"
#include "workload/workload.h"

namespace preflight {

enum class Algorithm { kRing, kTree, kP2p, kNvls, kNvlsTree, kCollNetDirect, kCollNetChain, kPat };
const char* to_string(Algorithm a);
const char* to_string(CollectiveKind k);

// nccl-tests' bus-bandwidth factor of `kind` on n ranks: busBw = algBw · factor
// (all-reduce 2(n−1)/n; all-gather, reduce-scatter (n−1)/n; broadcast 1).
double bus_factor(CollectiveKind kind, int n);

struct CollectivePlan {
  Algorithm algorithm = Algorithm::kRing;
  std::string protocol;  // LL, LL128, Simple ("" for the alpha-beta model and p2p)
  int channels = 0;      // channels the call uses (0 when not modelled)
  SimTime time;
  SimTime latency;  // the size-independent part of `time` (per-call and per-step costs)
  // The size-dependent part as the protocol's per-channel caps alone allow it, with unbounded
  // links (nccl::Choice::protocol_bandwidth_gbs): a fabric that carries the links itself takes
  // at least latency + protocol_time. Zero where no cap binds (ring Simple, the alpha-beta model).
  SimTime protocol_time;
  double busbw_gbps = 0;  // achieved bus bandwidth (nccl-tests convention, 1e9 B/s)
};

// A planner behind CollectiveModel's seam. Immutable and thread-safe.
class CollectivePlanner {
 public:
  virtual ~CollectivePlanner() = default;
  virtual CollectivePlan plan(CollectiveKind kind, const GroupPlacement& g, Bytes bytes) const = 0;
};

class CollectiveModel {
 public:
  // The alpha-beta model (first version). `network` must outlive this object.
  CollectiveModel(const ClusterConfig& cluster, const NetworkBackend& network);

  // The NCCL-faithful planner for `cluster` with `config` (NCCL version, overrides, time
  // model). `placements` are the groups the caller will plan for: each is checked now, so
  // unknown algorithm or protocol names, NVLS forced on a GPU without it, or overrides that
  // leave nothing available are reported here as one-line errors.
  static StatusOr<CollectiveModel> nccl(const ClusterConfig& cluster,
                                        const CollectivesConfig& config,
                                        const NetworkBackend& network,
                                        const std::vector<GroupPlacement>& placements);

  // Whether `kind` can be planned on `g` under the configured overrides (always OK for the
  // alpha-beta model). Call it for every collective before plan().
  Status check(CollectiveKind kind, const GroupPlacement& g) const;

  // REQUIRES: g.size >= 1 and check(kind, g).ok(). A group of one rank costs nothing.
  CollectivePlan plan(CollectiveKind kind, const GroupPlacement& g, Bytes bytes) const;
  // One point-to-point transfer between two GPUs (NCCL's p2p path bypasses its tuning model).
  CollectivePlan p2p(Bytes bytes, bool cross_node) const;
  // All-to-all of a per-rank send buffer of `bytes` (1/n to every rank), pairwise send/recv as
  // NCCL runs it: the in-node share moves over NVLink while the rest leaves through the GPU's
  // share of its node's NICs, concurrently:
  //   t = α + β + (N > 1 ? L : 0) + max((k−1)/n·S / B_nvlink, (n−k)/n·S / B_nic)
  // so busBw ≈ N/(N−1) × the per-GPU network bandwidth across N nodes (nccl.md §1).
  CollectivePlan all_to_all(const GroupPlacement& g, Bytes bytes) const;

 private:
  const NetworkBackend* network_;
  SimTime alpha_;
  SimTime step_;
  std::shared_ptr<const CollectivePlanner> nccl_;  // null: alpha-beta
};

}  // namespace preflight
