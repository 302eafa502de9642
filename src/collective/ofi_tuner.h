// The AWS OFI NCCL plugin's region tuner (aws-ofi-nccl, src/tuner/nccl_ofi_regions.cpp): on AWS
// EFA instances the plugin, not NCCL's cost model, picks each collective's algorithm and
// protocol. It maps (message bytes, communicator ranks) to an (algorithm, protocol) by regions,
// polygons in that plane measured per instance type; the first region (in its order) that holds
// the point, edge included, wins. It sets that pair's cost to zero, so NCCL takes it where NCCL
// itself offers it; a point in no region, a pair NCCL does not offer, or a communicator of two
// nodes or fewer ("the regions are not well defined") falls back to NCCL's own choice.
//
// Modelled: P6-B200 (p6-b200.48xlarge: 8 B200s, 8 × 400 Gb/s EFA per instance) with one rank
// per GPU (ranks = 8 × nodes), all-reduce, all-gather and reduce-scatter, the regions of the
// plugin's region_init_internal_p6. Not modelled: its other instance types (P5, P5en, P6-B300),
// one-rank-per-node communicators, and its channel-count choice for tree LL128 at 4–32 MiB.
// Preflight's reading of the plugin's tables, in its own code.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "collective/nccl_model.h"

namespace preflight::nccl {

// The tuner plugins Preflight models: "" (none: NCCL's own choice) or "aws-ofi-p6".
bool is_known_tuner(std::string_view name);

// A point in the plugin's plane and a region of it.
struct TunerPoint {
  double x = 0;  // message bytes (nccl-tests' convention, as NCCL hands them to the tuner)
  double y = 0;  // communicator ranks
};

// Whether `p` lies in the polygon `v` (n vertices, in order): 1 inside, 0 on an edge, -1
// outside. Self-touching polygons (a region that wraps another through a slit) count by the
// even-odd rule, as the plugin's ray casting does.
int region_contains(const TunerPoint* v, int n, TunerPoint p);

// The (algorithm, protocol) tuner `name` sets for collective `c` of `bytes` on a communicator
// of `ranks` ranks over `nodes` nodes, among the pairs NCCL offers (`offered[algo][proto]`: a
// region whose pair NCCL does not offer is passed over, as the plugin's v3 interface does); none
// where the tuner leaves the choice to NCCL.
struct TunerPick {
  Algo algo;
  Proto proto;
};
using OfferedPairs = std::array<std::array<bool, kNumProtos>, kNumAlgos>;
std::optional<TunerPick> tuner_choice(std::string_view name, Coll c, int64_t bytes, int ranks,
                                      int nodes, const OfferedPairs& offered);

}  // namespace preflight::nccl
