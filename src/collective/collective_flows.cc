#include "collective/collective_flows.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "base/check.h"
#include "collective/decomposition.h"

namespace preflight {
namespace {

// The decomposition algorithm that carries `plan`'s traffic (see the header): all-gather,
// reduce-scatter and broadcast are rings.
DecompAlgo decomp_algo(CollectiveKind kind, Algorithm a) {
  if (kind == CollectiveKind::kAllToAll || kind == CollectiveKind::kSendRecv) {
    return DecompAlgo::kDirect;
  }
  if (kind != CollectiveKind::kAllReduce) return DecompAlgo::kRing;
  switch (a) {
    case Algorithm::kTree:
    case Algorithm::kNvlsTree:
    case Algorithm::kCollNetDirect:
    case Algorithm::kCollNetChain:
      return DecompAlgo::kTree;
    default:
      return DecompAlgo::kRing;
  }
}

DecompOp decomp_op(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::kAllReduce:
      return DecompOp::kAllReduce;
    case CollectiveKind::kAllGather:
      return DecompOp::kAllGather;
    case CollectiveKind::kReduceScatter:
      return DecompOp::kReduceScatter;
    case CollectiveKind::kBroadcast:
      return DecompOp::kBroadcast;
    case CollectiveKind::kAllToAll:
      return DecompOp::kAllToAll;
    case CollectiveKind::kSendRecv:
      return DecompOp::kSendRecv;
  }
  return DecompOp::kAllReduce;
}

}  // namespace

double protocol_wire_factor(const std::string& protocol) {
  if (protocol == "LL") return 2.0;
  if (protocol == "LL128") return 128.0 / 120.0;
  return 1.0;
}

CollectiveFlows::CollectiveFlows(int gpus_per_node, int nics_per_node, bool pxn)
    : gpus_per_node_(gpus_per_node), nics_per_node_(nics_per_node), pxn_(pxn) {
  PREFLIGHT_CHECK(gpus_per_node >= 1);
}

void CollectiveFlows::add(const std::vector<int>& members, CollectiveKind kind, Bytes bytes,
                          const CollectivePlan& plan, std::vector<GpuFlow>* flows) {
  if (members.size() < 2) return;
  const double wire = protocol_wire_factor(plan.protocol);
  for (const PairFlow& f : pair_flows(members, kind, bytes, plan)) {
    const int64_t b = wire == 1 ? f.bytes : std::llround(static_cast<double>(f.bytes) * wire);
    flows->push_back({members[f.src], members[f.dst], f.nic, b});
  }
}

const std::vector<CollectiveFlows::PairFlow>& CollectiveFlows::pair_flows(
    const std::vector<int>& members, CollectiveKind kind, Bytes bytes, const CollectivePlan& plan) {
  GroupLayout g;
  g.gpus_per_node = gpus_per_node_;
  g.nics_per_node = std::max(1, nics_per_node_);
  std::map<int, int> node_index;
  for (int gpu : members) {
    const int node = gpu / gpus_per_node_;
    const int index = node_index.emplace(node, static_cast<int>(node_index.size())).first->second;
    g.node.push_back(index);
    g.local.push_back(gpu % gpus_per_node_);
  }
  DecompositionRequest r;
  r.op = decomp_op(kind);
  r.algo = decomp_algo(kind, plan.algorithm);
  r.bytes = bytes;
  // Point-to-point kinds spread over the sender's NICs; the pipeline chunk does not change a
  // pair's sum, so one chunk per channel keeps tree and broadcast decompositions small.
  const int p2p_channels = std::max(1, nics_per_node_ / std::max(1, gpus_per_node_));
  r.channels = std::clamp(r.algo == DecompAlgo::kDirect ? p2p_channels : plan.channels, 1, 64);
  r.pxn = pxn_;
  r.chunk = Bytes(std::max<int64_t>(1, bytes.count()));
  const auto key = std::make_tuple(g.node, g.local, static_cast<int>(r.op),
                                   static_cast<int>(r.algo), r.bytes.count(), r.channels);
  auto it = cache_.find(key);
  if (it != cache_.end()) return it->second;
  std::vector<Transfer> transfers;
  if (kind == CollectiveKind::kSendRecv) {
    // One ring step: every member sends `bytes` to its successor.
    const int n = g.size();
    for (int i = 0; i < n; ++i) {
      r.root = i;
      r.peer = (i + 1) % n;
      StatusOr<std::vector<Transfer>> t = decompose(g, r);
      PREFLIGHT_CHECK_MSG(t.ok(), t.status().message().c_str());
      transfers.insert(transfers.end(), t->begin(), t->end());
    }
  } else {
    StatusOr<std::vector<Transfer>> t = decompose(g, r);
    PREFLIGHT_CHECK_MSG(t.ok(), t.status().message().c_str());
    transfers = std::move(t).value();
  }
  // The inter-node transfers, one PairFlow per (src, dst, nic) in that order.
  std::vector<PairFlow> all;
  for (const Transfer& t : transfers) {
    if (t.route == Route::kNvlink) continue;
    all.push_back({t.src, t.dst, t.nic, t.bytes.count()});
  }
  std::sort(all.begin(), all.end(), [](const PairFlow& a, const PairFlow& b) {
    return std::tie(a.src, a.dst, a.nic) < std::tie(b.src, b.dst, b.nic);
  });
  std::vector<PairFlow> out;
  for (const PairFlow& f : all) {
    if (!out.empty() && out.back().src == f.src && out.back().dst == f.dst &&
        out.back().nic == f.nic) {
      out.back().bytes += f.bytes;
    } else {
      out.push_back(f);
    }
  }
  return cache_.emplace(key, std::move(out)).first->second;
}

}  // namespace preflight
