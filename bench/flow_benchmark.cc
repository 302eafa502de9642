// Google Benchmarks of the flow-level network (src/network/flow/).
// Overall target: a whole-iteration flow simulation of GPT-3 175B on 1,024 GPUs in <= 2 s.
// Such an iteration is a sequence of collective phases, each starting ~1k concurrent flows on a
// two-tier fabric whose links are all connected (one component), plus many small, independent
// point-to-point transfers (pipeline activations) that only touch their own links. The two
// benchmarks below time those two shapes. Budget: ~100 fabric-wide phases at <= 10 ms each (1 s)
// plus ~1e5 point-to-point transfers at >= 1M start/finish events/s (0.2 s) fits in 2 s.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <functional>
#include <random>
#include <vector>

#include "engine/simulator.h"
#include "network/flow/flow_network.h"

namespace preflight::flow {
namespace {

// A two-tier leaf-spine fabric: `hosts` hosts, 32 per leaf, each leaf with 4 uplinks and 4
// downlinks to 4 spines (128 leaf uplinks for 1,024 hosts). Host links 50 GB/s (400 Gb/s NIC),
// leaf-spine links 200 GB/s (2:1 oversubscribed). Every host sends one flow (1-17 MiB) to another
// host, its spine chosen by a seeded hash, as ECMP would.
void BM_FlowFatTreeShuffle(benchmark::State& state) {
  const int hosts = static_cast<int>(state.range(0));
  constexpr int kPerLeaf = 32, kSpines = 4;
  const int leaves = hosts / kPerLeaf;
  int64_t solves = 0, flows = 0, flows_solved = 0;
  for (auto _ : state) {
    Simulator sim;
    FlowNetwork net(&sim);
    std::vector<int> host_up, host_down, leaf_up, leaf_down;  // leaf_* index: leaf·kSpines+spine
    for (int h = 0; h < hosts; ++h)
      host_up.push_back(net.add_resource(Bandwidth::gigabytes_per_second(50)));
    for (int h = 0; h < hosts; ++h)
      host_down.push_back(net.add_resource(Bandwidth::gigabytes_per_second(50)));
    for (int i = 0; i < leaves * kSpines; ++i) {
      leaf_up.push_back(net.add_resource(Bandwidth::gigabytes_per_second(200)));
      leaf_down.push_back(net.add_resource(Bandwidth::gigabytes_per_second(200)));
    }
    // Destinations: a seeded random permutation (an all-to-all phase), so every leaf uplink
    // carries flows to many leaves and the whole fabric is one connected component.
    std::mt19937_64 rng(42);
    std::vector<int> dst(hosts);
    for (int h = 0; h < hosts; ++h) dst[h] = h;
    for (int h = hosts - 1; h > 0; --h) std::swap(dst[h], dst[rng() % (h + 1)]);
    int64_t finished = 0;
    for (int src = 0; src < hosts; ++src) {
      const int spine = static_cast<int>(rng() % kSpines);
      const Bytes bytes(static_cast<int64_t>((1 << 20) + rng() % (16 << 20)));
      net.start_flow(bytes,
                     {host_up[src], leaf_up[(src / kPerLeaf) * kSpines + spine],
                      leaf_down[(dst[src] / kPerLeaf) * kSpines + spine], host_down[dst[src]]},
                     SimTime::microseconds(2), FlowNetwork::kNoCap,
                     [&finished](int64_t, SimTime) { ++finished; });
    }
    sim.run();
    if (finished != hosts) state.SkipWithError("not every flow finished");
    solves += net.solves();
    flows_solved += net.flows_solved();
    flows += hosts;
  }
  state.counters["solves"] =
      benchmark::Counter(static_cast<double>(solves) / static_cast<double>(state.iterations()));
  state.counters["flows_per_solve"] =
      benchmark::Counter(static_cast<double>(flows_solved) / static_cast<double>(solves));
  state.counters["solves_per_s"] =
      benchmark::Counter(static_cast<double>(solves), benchmark::Counter::kIsRate);
  state.SetItemsProcessed(flows);
  state.SetLabel("target: <= 10 ms to finish 1,024 flows on 128 shared leaf uplinks");
}
BENCHMARK(BM_FlowFatTreeShuffle)->Arg(256)->Arg(1024)->Unit(benchmark::kMillisecond);

// 10,000 flow starts and finishes on 1,000 disjoint two-link components: each component runs a
// chain of 10 flows, the next started by the previous one's on_done, with staggered sizes so that
// components change at different times. Every change re-solves one two-link component.
void BM_FlowIncrementalDisjoint(benchmark::State& state) {
  constexpr int kComponents = 1000, kChain = 10;
  int64_t resources_solved = 0, components = 0, solves = 0;
  for (auto _ : state) {
    Simulator sim;
    FlowNetwork net(&sim);
    std::vector<std::vector<int>> paths;
    for (int c = 0; c < kComponents; ++c) {
      const int a = net.add_resource(Bandwidth::gigabytes_per_second(50));
      const int b = net.add_resource(Bandwidth::gigabytes_per_second(25 + c % 7));
      paths.push_back({a, b});
    }
    std::vector<int> left(kComponents, kChain);
    std::function<void(int)> launch = [&](int c) {
      const Bytes bytes(static_cast<int64_t>(64 << 10) * (1 + (c * 7 + left[c]) % 13));
      net.start_flow(bytes, paths[c], SimTime::zero(), FlowNetwork::kNoCap,
                     [&, c](int64_t, SimTime) {
                       if (--left[c] > 0) launch(c);
                     });
    };
    for (int c = 0; c < kComponents; ++c) launch(c);
    sim.run();
    if (net.flows_finished() != kComponents * kChain) state.SkipWithError("flows lost");
    resources_solved += net.resources_solved();
    components += net.components_solved();
    solves += net.solves();
  }
  state.SetItemsProcessed(state.iterations() * kComponents * kChain * 2);  // starts + finishes
  state.counters["resources_per_component"] =
      benchmark::Counter(static_cast<double>(resources_solved) / static_cast<double>(components));
  state.counters["solves"] =
      benchmark::Counter(static_cast<double>(solves) / static_cast<double>(state.iterations()));
  state.SetLabel("target: >= 1M flow start/finish events/s on disjoint components");
}
BENCHMARK(BM_FlowIncrementalDisjoint)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace preflight::flow
