#include "exec/transport.h"

#include <algorithm>
#include <utility>

#include "base/check.h"
#include "collective/collective_flows.h"
#include "parallel/rank_layout.h"

namespace preflight {
namespace {

// Sends and collectives of a Megatron job as GPU flows on a fabric.
class FabricTransport final : public Transport {
 public:
  FabricTransport(std::unique_ptr<Fabric> fabric, const Scenario& s)
      : fabric_(std::move(fabric)),
        layout_(RankLayout::of(s)),
        flows_(s.cluster.gpus_per_node, s.cluster.nics_per_node, s.collectives.pxn) {}

  void send(int from, int to, Bytes bytes, SimTime latency, Done done,
            const Replicas& replicas) override {
    std::vector<GpuFlow> flows;
    for (int r = 0; r < layout_.stage_ranks(); ++r) {
      if (!holds(replicas, replica_of(r))) continue;
      flows.push_back({layout_.rank(from, r), layout_.rank(to, r), -1, bytes.count()});
    }
    fabric_->transfer(flows, latency, std::move(done));
  }

  void collective(GroupKind group, int stage, CollectiveKind kind, Bytes bytes,
                  const CollectivePlan& plan, Done done, const Replicas& replicas) override {
    std::vector<GpuFlow> flows;
    for (const std::vector<int>& members : layout_.groups(group, stage)) {
      // A group goes with the replicas that hold all of its members.
      const bool held = std::all_of(members.begin(), members.end(), [&](int rank) {
        return holds(replicas, replica_of(rank % layout_.stage_ranks()));
      });
      if (!held) continue;
      flows_.add(members, kind, bytes, plan, &flows);
    }
    fabric_->transfer(flows, plan.latency, std::move(done));
  }

  void send_gpus(int src, int dst, Bytes bytes, SimTime latency, Done done) override {
    fabric_->transfer({{src, dst, -1, bytes.count()}}, latency, std::move(done));
  }

  void collective_gpus(const std::vector<int>& members, CollectiveKind kind, Bytes bytes,
                       const CollectivePlan& plan, Done done) override {
    std::vector<GpuFlow> flows;
    flows_.add(members, kind, bytes, plan, &flows);
    fabric_->transfer(flows, plan.latency, std::move(done));
  }

  NetworkStats stats(SimTime end) const override { return fabric_->stats(end); }

 private:
  // The DP replica of rank `local` of a stage (Megatron's order: TP fastest, then CP, then DP).
  int replica_of(int local) const { return local / (layout_.tp() * layout_.cp()); }
  static bool holds(const Replicas& replicas, int replica) {
    return replicas.empty() || std::binary_search(replicas.begin(), replicas.end(), replica);
  }

  std::unique_ptr<Fabric> fabric_;
  RankLayout layout_;
  CollectiveFlows flows_;
};

}  // namespace

TransportFactory make_transport_factory(FabricFactory fabric, const Scenario& s) {
  if (!fabric) return {};
  return [fabric = std::move(fabric), s](Simulator* sim) -> std::unique_ptr<Transport> {
    return std::make_unique<FabricTransport>(fabric(sim), s);
  };
}

}  // namespace preflight
