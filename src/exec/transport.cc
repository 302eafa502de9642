#include "exec/transport.h"

#include <algorithm>
#include <map>
#include <utility>

#include "base/check.h"
#include "collective/collective_flows.h"
#include "parallel/rank_layout.h"

namespace preflight {
namespace {

// Sends and collectives of a Megatron job as GPU flows on a fabric.
class FabricTransport final : public Transport, private EventHandler {
 public:
  FabricTransport(std::unique_ptr<Fabric> fabric, const Scenario& s, Simulator* sim)
      : sim_(sim),
        fabric_(std::move(fabric)),
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
    fabric_->transfer(flows, plan.latency, no_earlier(plan, std::move(done)));
  }

  void send_gpus(int src, int dst, Bytes bytes, SimTime latency, Done done) override {
    fabric_->transfer({{src, dst, -1, bytes.count()}}, latency, std::move(done));
  }

  void collective_gpus(const std::vector<int>& members, CollectiveKind kind, Bytes bytes,
                       const CollectivePlan& plan, Done done) override {
    std::vector<GpuFlow> flows;
    flows_.add(members, kind, bytes, plan, &flows);
    fabric_->transfer(flows, plan.latency, no_earlier(plan, std::move(done)));
  }

  NetworkStats stats(SimTime end) const override { return fabric_->stats(end); }

 private:
  // `done` for a collective that started now: it fires when the fabric's transfers land, or at
  // now + plan.latency + plan.protocol_time if that is later (the protocol's per-channel caps,
  // which the fabric's links do not see: LL, LL128, the trees' channel maxima).
  Done no_earlier(const CollectivePlan& plan, Done done) {
    if (plan.protocol_time <= SimTime()) return done;
    const SimTime floor = sim_->now() + plan.latency + plan.protocol_time;
    return [this, floor, done = std::move(done)](SimTime finish) mutable {
      if (finish >= floor) {
        done(finish);
        return;
      }
      const int64_t id = next_deferred_++;
      deferred_.emplace(id, std::move(done));
      sim_->schedule(floor, this, id);
    };
  }
  void on_event(int64_t id) override {
    auto it = deferred_.find(id);
    PREFLIGHT_CHECK(it != deferred_.end());
    Done done = std::move(it->second);
    deferred_.erase(it);
    done(sim_->now());
  }

  // The DP replica of rank `local` of a stage (Megatron's order: TP fastest, then CP, then DP).
  int replica_of(int local) const { return local / (layout_.tp() * layout_.cp()); }
  static bool holds(const Replicas& replicas, int replica) {
    return replicas.empty() || std::binary_search(replicas.begin(), replicas.end(), replica);
  }

  Simulator* sim_;
  std::unique_ptr<Fabric> fabric_;
  RankLayout layout_;
  CollectiveFlows flows_;
  // Completions held back to their protocol floor, by event payload.
  std::map<int64_t, Done> deferred_;
  int64_t next_deferred_ = 0;
};

}  // namespace

TransportFactory make_transport_factory(FabricFactory fabric, const Scenario& s) {
  if (!fabric) return {};
  return [fabric = std::move(fabric), s](Simulator* sim) -> std::unique_ptr<Transport> {
    return std::make_unique<FabricTransport>(fabric(sim), s, sim);
  };
}

}  // namespace preflight
