#include "network/flow/flow_network.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <random>
#include <utility>
#include <vector>

#include "engine/simulator.h"

namespace preflight::flow {
namespace {

constexpr Bandwidth kNoCap = FlowNetwork::kNoCap;
SimTime us(double v) { return SimTime::microseconds(v); }
Bandwidth gbs(double v) { return Bandwidth::gigabytes_per_second(v); }

// Runs actions at chosen simulated times (to start flows later than zero).
class Script final : public EventHandler {
 public:
  explicit Script(Simulator* sim) : sim_(sim) {}
  void at(SimTime t, std::function<void()> action) {
    actions_.push_back(std::move(action));
    sim_->schedule(t, this, static_cast<int64_t>(actions_.size()) - 1);
  }
  void on_event(int64_t payload) override { actions_[payload](); }

 private:
  Simulator* sim_;
  std::vector<std::function<void()>> actions_;
};

// Records every completion: how often each flow finished and when.
struct Finishes {
  std::map<int64_t, SimTime> at;
  std::map<int64_t, int> calls;
  std::vector<int64_t> order;
  FlowNetwork::Callback record() {
    return [this](int64_t id, SimTime t) {
      at[id] = t;
      ++calls[id];
      order.push_back(id);
    };
  }
};

TEST(TransferTime, ExactQuotientsStayExactOthersRoundUp) {
  EXPECT_EQ(transfer_time(1e6, 1e11), us(10));  // 1 MB at 100 GB/s = 10 us
  // 1 byte at 3 B/s = 333333333333.33 ps -> rounded up.
  EXPECT_EQ(transfer_time(1, 3).ps(), 333333333334);
  EXPECT_EQ(transfer_time(0, 1), SimTime::zero());
}

TEST(FlowNetwork, OneFlowOnIdlePathTakesLatencyPlusBytesOverSlowestLink) {
  // 2 us + 1 MiB / 50 GB/s = 2 us + 20.97152 us = 22,971,520 ps.
  Simulator sim;
  FlowNetwork net(&sim);
  const int a = net.add_resource(gbs(100)), b = net.add_resource(gbs(50)),
            c = net.add_resource(gbs(200));
  Finishes fin;
  const int64_t id = net.start_flow(Bytes::mib(1), {a, b, c}, us(2), kNoCap, fin.record());
  sim.run();
  EXPECT_EQ(fin.at.at(id).ps(), 22'971'520);
  EXPECT_EQ(fin.calls.at(id), 1);
  EXPECT_NEAR(net.bytes_carried(b), 1048576, 1);
  EXPECT_EQ(net.flows_in_flight(), 0);
}

TEST(FlowNetwork, ALinkThatSlowsMidRunSlowsItsFlowsFromThenOn) {
  // 1 MB over a 100 GB/s link: 10 us alone. At 4 us (400 kB moved) the link drops to 25 GB/s:
  // the other 600 kB take 24 us more, so the flow ends at 28 us; a second flow on another link
  // is untouched (10 us), and a link brought back up mid-run speeds its flow up again.
  Simulator sim;
  FlowNetwork net(&sim);
  const int slow = net.add_resource(gbs(100));
  const int other = net.add_resource(gbs(100));
  const int back = net.add_resource(gbs(100));
  Finishes f;
  const int64_t a = net.start_flow(Bytes(1000000), {slow}, SimTime(), kNoCap, f.record());
  const int64_t b = net.start_flow(Bytes(1000000), {other}, SimTime(), kNoCap, f.record());
  const int64_t c = net.start_flow(Bytes(1000000), {back}, SimTime(), kNoCap, f.record());
  Script script(&sim);
  script.at(us(4), [&] { net.set_capacity(slow, gbs(25)); });
  // `back`: 25 GB/s from 2 us to 6 us (100 kB), then 100 GB/s again: 200 kB + 100 kB by 6 us,
  // 700 kB left at 100 GB/s = 7 us, done at 13 us.
  script.at(us(2), [&] { net.set_capacity(back, gbs(25)); });
  script.at(us(6), [&] { net.set_capacity(back, gbs(100)); });
  sim.run();
  EXPECT_EQ(f.at[a], us(28));
  EXPECT_EQ(f.at[b], us(10));
  EXPECT_EQ(f.at[c], us(13));
  EXPECT_EQ(f.calls[a], 1);
  EXPECT_EQ(net.capacity(slow), 25e9);
  // Every byte was carried once.
  EXPECT_NEAR(net.bytes_carried(slow), 1e6, 1e-3);
}

TEST(FlowNetwork, FullLinkHasUtilizationOne) {
  // 1 MB at 100 GB/s with no latency: the link is busy for all 10 us that elapse.
  Simulator sim;
  FlowNetwork net(&sim);
  const int a = net.add_resource(gbs(100));
  net.start_flow(Bytes(1'000'000), {a}, SimTime::zero(), kNoCap, nullptr);
  sim.run();
  EXPECT_EQ(sim.now(), us(10));
  EXPECT_NEAR(net.utilization(a), 1.0, 1e-9);
}

TEST(FlowNetwork, TwoFlowsStartedTogetherGetHalfEach) {
  // S = 1 MB each on C = 100 GB/s: both at C/2, both finish at 2S/C = 20 us.
  Simulator sim;
  FlowNetwork net(&sim);
  const int a = net.add_resource(gbs(100));
  Finishes fin;
  const int64_t f0 = net.start_flow(Bytes(1'000'000), {a}, SimTime::zero(), kNoCap, fin.record());
  const int64_t f1 = net.start_flow(Bytes(1'000'000), {a}, SimTime::zero(), kNoCap, fin.record());
  sim.run();
  EXPECT_EQ(fin.at.at(f0), us(20));
  EXPECT_EQ(fin.at.at(f1), us(20));
  EXPECT_EQ(fin.order, (std::vector<int64_t>{f0, f1}));  // equal times: by flow id
}

TEST(FlowNetwork, ATallyCountsAFlowsBytesWithoutLimitingIt) {
  // Two 1 MB flows share link a (100 GB/s); both tally t, of 1 GB/s, which would hold them to
  // 0.5 GB/s each were it on their paths. They run at 50 GB/s and finish at 20 us; t's load is
  // their 100 GB/s while they run (group 0) and it carries their 2 MB.
  Simulator sim;
  FlowNetwork net(&sim);
  const int a = net.add_resource(gbs(100));
  const int t = net.add_resource(gbs(1), 0);
  Finishes fin;
  std::vector<double> loads;
  net.set_on_resolve([&] { loads.push_back(net.group_load(0)); });
  const int64_t f0 =
      net.start_flow(Bytes(1'000'000), {a}, SimTime::zero(), kNoCap, fin.record(), {t});
  const int64_t f1 =
      net.start_flow(Bytes(1'000'000), {a}, SimTime::zero(), kNoCap, fin.record(), {t});
  sim.run();
  EXPECT_EQ(fin.at.at(f0), us(20));
  EXPECT_EQ(fin.at.at(f1), us(20));
  ASSERT_FALSE(loads.empty());
  EXPECT_DOUBLE_EQ(loads.front(), 100e9);
  EXPECT_EQ(net.load(t), 0.0);
  EXPECT_NEAR(net.bytes_carried(t), 2e6, 1e-6);
  EXPECT_NEAR(net.bytes_carried(a), 2e6, 1e-6);
}

TEST(FlowNetwork, GroupLoadFollowsTheRatesAtEveryResolve) {
  // Links 0 and 1 (10 GB/s each) in group 0, link 2 (5 GB/s) in group 1. Flow A crosses 0 and 2
  // (5 GB/s, bottleneck 2), flow B link 1 alone (10 GB/s): group 0 carries 15 GB/s, group 1
  // 5 GB/s until A's 5 KB finish at 1 us, then 10 and 0; nothing once B's 20 KB finish at 2 us.
  Simulator sim;
  FlowNetwork net(&sim);
  net.add_resource(gbs(10), 0);
  net.add_resource(gbs(10), 0);
  net.add_resource(gbs(5), 1);
  std::vector<std::pair<SimTime, std::pair<double, double>>> seen;
  net.set_on_resolve([&] { seen.push_back({sim.now(), {net.group_load(0), net.group_load(1)}}); });
  net.start_flow(Bytes(5'000), {0, 2}, SimTime(), kNoCap, {});
  net.start_flow(Bytes(20'000), {1}, SimTime(), kNoCap, {});
  sim.run();
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen[0].first, SimTime());
  EXPECT_DOUBLE_EQ(seen[0].second.first, 15e9);
  EXPECT_DOUBLE_EQ(seen[0].second.second, 5e9);
  EXPECT_EQ(seen[1].first, us(1));
  EXPECT_DOUBLE_EQ(seen[1].second.first, 10e9);
  EXPECT_EQ(seen[1].second.second, 0.0);
  EXPECT_EQ(seen[2].first, us(2));
  EXPECT_EQ(seen[2].second.first, 0.0);
}

TEST(FlowNetwork, LaterFlowFollowsPiecewiseClosedForm) {
  // A (S) starts at 0, B (S) at t0 = 4 us, C = 100 GB/s, S = 1 MB (S/C = 10 us).
  // A alone until t0, then C/2 each: A ends at t0 + 2(S - C·t0)/C = 2S/C - t0 = 16 us; B has then
  // moved S - C·t0 and finishes the remaining C·t0 alone: 16 + 4 = 20 us = 2S/C.
  Simulator sim;
  FlowNetwork net(&sim);
  Script script(&sim);
  const int a = net.add_resource(gbs(100));
  Finishes fin;
  net.start_flow(Bytes(1'000'000), {a}, SimTime::zero(), kNoCap, fin.record());
  script.at(us(4),
            [&] { net.start_flow(Bytes(1'000'000), {a}, SimTime::zero(), kNoCap, fin.record()); });
  sim.run();
  EXPECT_NEAR(fin.at.at(0).ps(), us(16).ps(), 1);
  EXPECT_NEAR(fin.at.at(1).ps(), us(20).ps(), 1);
}

TEST(FlowNetwork, LatencyPhaseDoesNotLoadLinks) {
  // B starts at 0 with 6 us latency: A (1 MB, 100 GB/s) is alone until 6 us, moving 0.6 MB; then
  // both at C/2: A ends at 6 + 0.4 MB / 50 GB/s = 14 us; B ends at 14 + 0.6 MB/100 GB/s = 20 us.
  Simulator sim;
  FlowNetwork net(&sim);
  const int a = net.add_resource(gbs(100));
  Finishes fin;
  net.start_flow(Bytes(1'000'000), {a}, SimTime::zero(), kNoCap, fin.record());
  net.start_flow(Bytes(1'000'000), {a}, us(6), kNoCap, fin.record());
  sim.run();
  EXPECT_NEAR(fin.at.at(0).ps(), us(14).ps(), 1);
  EXPECT_NEAR(fin.at.at(1).ps(), us(20).ps(), 1);
}

TEST(FlowNetwork, ParkingLotGivesHalfToEveryFlow) {
  // Links L1, L2, L3 of C = 100 GB/s; short flows of S = 1 MB on each, a long flow of 2S over
  // all three. Max-min: every link has two flows, C/2 each. Shorts end at 2S/C = 20 us; the long
  // flow has S left and then runs at C: 20 + 10 = 30 us.
  Simulator sim;
  FlowNetwork net(&sim);
  const int l1 = net.add_resource(gbs(100)), l2 = net.add_resource(gbs(100)),
            l3 = net.add_resource(gbs(100));
  Finishes fin;
  const int64_t lng =
      net.start_flow(Bytes(2'000'000), {l1, l2, l3}, SimTime::zero(), kNoCap, fin.record());
  for (int l : {l1, l2, l3})
    net.start_flow(Bytes(1'000'000), {l}, SimTime::zero(), kNoCap, fin.record());
  sim.run();
  for (int64_t s = 1; s <= 3; ++s) EXPECT_EQ(fin.at.at(s), us(20));
  EXPECT_NEAR(fin.at.at(lng).ps(), us(30).ps(), 1);
}

TEST(FlowNetwork, HeterogeneousCapacitiesShareByBottleneck) {
  // A = 10 GB/s, B = 4 GB/s. X (4 MB) crosses A and B, Y (12 MB) only A: rates 4 and 6 GB/s.
  // X ends at 4 MB / 4 GB/s = 1 ms; Y has moved 6 MB, then runs at 10 GB/s: 1 + 0.6 = 1.6 ms.
  Simulator sim;
  FlowNetwork net(&sim);
  Script script(&sim);
  const int a = net.add_resource(gbs(10)), b = net.add_resource(gbs(4));
  Finishes fin;
  const int64_t x = net.start_flow(Bytes(4'000'000), {a, b}, SimTime::zero(), kNoCap, fin.record());
  const int64_t y = net.start_flow(Bytes(12'000'000), {a}, SimTime::zero(), kNoCap, fin.record());
  double load_a = 0, load_b = 0;
  script.at(us(500), [&] {
    load_a = net.load(a);
    load_b = net.load(b);
  });
  sim.run();
  EXPECT_DOUBLE_EQ(load_a, 10e9);
  EXPECT_DOUBLE_EQ(load_b, 4e9);
  EXPECT_NEAR(fin.at.at(x).ps(), us(1000).ps(), 1);
  EXPECT_NEAR(fin.at.at(y).ps(), us(1600).ps(), 1);
}

TEST(FlowNetwork, RateCapLimitsAFlowAndLeavesTheRestToOthers) {
  // C = 100 GB/s; P (1 MB) capped at 25 GB/s ends at 40 us; Q (4.5 MB) gets 75 GB/s, moving
  // 3 MB by 40 us, then 1.5 MB at 100 GB/s: 40 + 15 = 55 us.
  Simulator sim;
  FlowNetwork net(&sim);
  const int a = net.add_resource(gbs(100));
  Finishes fin;
  const int64_t p = net.start_flow(Bytes(1'000'000), {a}, SimTime::zero(), gbs(25), fin.record());
  const int64_t q = net.start_flow(Bytes(4'500'000), {a}, SimTime::zero(), kNoCap, fin.record());
  sim.run();
  EXPECT_NEAR(fin.at.at(p).ps(), us(40).ps(), 1);
  EXPECT_NEAR(fin.at.at(q).ps(), us(55).ps(), 1);
}

TEST(FlowNetwork, EmptyPathHasInfiniteBandwidthUnlessCapped) {
  // Started at 3 us with 1.5 us latency: finishes at 4.5 us. With a 10 GB/s cap, 1 MB adds 100 us.
  Simulator sim;
  FlowNetwork net(&sim);
  Script script(&sim);
  Finishes fin;
  script.at(us(3), [&] {
    net.start_flow(Bytes::gib(1), {}, us(1.5), kNoCap, fin.record());
    net.start_flow(Bytes(1'000'000), {}, us(1.5), gbs(10), fin.record());
  });
  sim.run();
  EXPECT_EQ(fin.at.at(0), us(4.5));
  EXPECT_EQ(fin.at.at(1), us(104.5));
  EXPECT_EQ(net.solves(), 0);  // nothing shared, nothing to solve
}

TEST(FlowNetwork, ZeroByteFlowFinishesAfterLatencyWithoutLoadingLinks) {
  Simulator sim;
  FlowNetwork net(&sim);
  const int a = net.add_resource(gbs(100));
  Finishes fin;
  net.start_flow(Bytes(0), {a}, us(2), kNoCap, fin.record());
  net.start_flow(Bytes(0), {a}, SimTime::zero(), kNoCap, fin.record());
  EXPECT_TRUE(fin.at.empty());  // on_done never runs inside start_flow
  sim.run();
  EXPECT_EQ(fin.at.at(0), us(2));
  EXPECT_EQ(fin.at.at(1), SimTime::zero());
  EXPECT_EQ(net.solves(), 0);
}

TEST(FlowNetwork, DisjointComponentsDoNotResolveEachOther) {
  // Flow on A at 0, flow on B at 5 us (1 MB each, 100 GB/s). Four changes (start A, start B,
  // finish A at 10 us, finish B at 15 us), each re-solving only its own one-link component.
  Simulator sim;
  FlowNetwork net(&sim);
  Script script(&sim);
  const int a = net.add_resource(gbs(100)), b = net.add_resource(gbs(100));
  Finishes fin;
  net.start_flow(Bytes(1'000'000), {a}, SimTime::zero(), kNoCap, fin.record());
  script.at(us(5),
            [&] { net.start_flow(Bytes(1'000'000), {b}, SimTime::zero(), kNoCap, fin.record()); });
  sim.run();
  EXPECT_EQ(fin.at.at(0), us(10));
  EXPECT_EQ(fin.at.at(1), us(15));
  EXPECT_EQ(net.solves(), 4);
  EXPECT_EQ(net.components_solved(), 4);
  EXPECT_EQ(net.resources_solved(), 4);
  EXPECT_EQ(net.flows_solved(), 2);  // each start solves its one flow; finishes leave none
}

TEST(FlowNetwork, SharedFlowsJoinLinksIntoOneComponent) {
  // Flows on {A, B} and {B, C} join A, B, C; a later flow on C re-solves all three resources
  // and the three flows, while a flow on the separate link D re-solves only D.
  Simulator sim;
  FlowNetwork net(&sim);
  Script script(&sim);
  const int a = net.add_resource(gbs(100)), b = net.add_resource(gbs(100)),
            c = net.add_resource(gbs(100)), d = net.add_resource(gbs(100));
  net.start_flow(Bytes(10'000'000), {a, b}, SimTime::zero(), kNoCap, nullptr);
  net.start_flow(Bytes(10'000'000), {b, c}, SimTime::zero(), kNoCap, nullptr);
  int64_t before_c = 0, after_c = 0, after_d = 0;
  script.at(us(1), [&] {
    before_c = net.resources_solved();
    net.start_flow(Bytes(1'000), {c}, SimTime::zero(), kNoCap, nullptr);
  });
  script.at(us(2), [&] {
    after_c = net.resources_solved();
    net.start_flow(Bytes(1'000), {d}, SimTime::zero(), kNoCap, nullptr);
  });
  script.at(us(3), [&] { after_d = net.resources_solved(); });
  sim.run();
  EXPECT_EQ(after_c - before_c, 3 + 3);  // start on C, then its finish: {A, B, C} both times
  EXPECT_EQ(after_d - after_c, 1 + 1);   // start and finish on D: {D} only
}

TEST(FlowNetwork, BatchesStartsOfOneTimestampIntoOneSolve) {
  // 100 equal flows started together on one link: one solve for the starts, one for the joint
  // finish at 100·S/C = 100 · 10 us = 1 ms. With equal latencies the starts still batch.
  for (SimTime latency : {SimTime::zero(), us(3)}) {
    Simulator sim;
    FlowNetwork net(&sim);
    const int a = net.add_resource(gbs(100));
    Finishes fin;
    for (int i = 0; i < 100; ++i)
      net.start_flow(Bytes(1'000'000), {a}, latency, kNoCap, fin.record());
    sim.run();
    EXPECT_EQ(net.solves(), 2);
    ASSERT_EQ(fin.at.size(), 100u);
    for (const auto& [id, t] : fin.at) EXPECT_EQ(t, latency + us(1000));
  }
}

TEST(FlowNetwork, BatchesDisjointStartsButSolvesEachComponent) {
  // 100 flows on 100 separate links at once: 2 solves (starts, finishes), 200 components.
  Simulator sim;
  FlowNetwork net(&sim);
  Finishes fin;
  for (int i = 0; i < 100; ++i) {
    const int r = net.add_resource(gbs(100));
    net.start_flow(Bytes(1'000'000), {r}, SimTime::zero(), kNoCap, fin.record());
  }
  sim.run();
  EXPECT_EQ(net.solves(), 2);
  EXPECT_EQ(net.components_solved(), 200);
  for (const auto& [id, t] : fin.at) EXPECT_EQ(t, us(10));
}

TEST(FlowNetwork, CallbackMayStartTheNextFlow) {
  // Three 1 MB flows back to back on 100 GB/s, each started by the previous one's on_done:
  // 10, 20, 30 us; the start joins the finish's re-solve (one solve per hand-over).
  Simulator sim;
  FlowNetwork net(&sim);
  const int a = net.add_resource(gbs(100));
  std::vector<SimTime> ends;
  std::function<void(int64_t, SimTime)> next = [&](int64_t, SimTime t) {
    ends.push_back(t);
    if (ends.size() < 3) net.start_flow(Bytes(1'000'000), {a}, SimTime::zero(), kNoCap, next);
  };
  net.start_flow(Bytes(1'000'000), {a}, SimTime::zero(), kNoCap, next);
  sim.run();
  EXPECT_EQ(ends, (std::vector<SimTime>{us(10), us(20), us(30)}));
  EXPECT_EQ(net.solves(), 4);
  EXPECT_EQ(net.flows_started(), 3);
}

// A random workload: random links, then flows with random paths, sizes, caps and start times.
struct RandomRun {
  Simulator sim;
  FlowNetwork net{&sim};
  Script script{&sim};
  std::vector<double> capacity;
  std::vector<SimTime> finish;
  std::vector<int> calls;
  std::vector<double> expected_bytes;  // per resource
  std::vector<SimTime> lower_bound;    // per flow: start + latency + bytes / slowest rate

  RandomRun(uint64_t seed, int resources, int flows) {
    std::mt19937_64 rng(seed);
    const double kCapacities[] = {12.5e9, 25e9, 50e9, 100e9, 450e9};
    for (int r = 0; r < resources; ++r) {
      capacity.push_back(kCapacities[rng() % 5]);
      net.add_resource(Bandwidth::bytes_per_second(capacity.back()));
    }
    finish.assign(flows, SimTime::max());
    calls.assign(flows, 0);
    expected_bytes.assign(resources, 0);
    lower_bound.resize(flows);
    for (int i = 0; i < flows; ++i) {
      const SimTime start = SimTime::picoseconds(static_cast<int64_t>(rng() % 500'000'000));
      const SimTime latency = SimTime::picoseconds(static_cast<int64_t>(rng() % 3) * 1'000'000);
      const int64_t bytes = static_cast<int64_t>(rng() % (4 << 20));
      const double cap = rng() % 4 == 0 ? 10e9 : FlowNetwork::kNoCap.bytes_per_second();
      std::vector<int> path;
      const int hops = static_cast<int>(rng() % 5);
      while (static_cast<int>(path.size()) < hops) {
        const int r = static_cast<int>(rng() % resources);
        if (std::find(path.begin(), path.end(), r) == path.end()) path.push_back(r);
      }
      double slowest = cap;
      for (int r : path) {
        slowest = std::min(slowest, capacity[r]);
        expected_bytes[r] += static_cast<double>(bytes);
      }
      lower_bound[i] = start + latency +
                       (slowest == FlowNetwork::kNoCap.bytes_per_second() || bytes == 0
                            ? SimTime::zero()
                            : transfer_time(static_cast<double>(bytes), slowest));
      script.at(start, [this, i, bytes, path, latency, cap] {
        net.start_flow(Bytes(bytes), path, latency, Bandwidth::bytes_per_second(cap),
                       [this, i](int64_t, SimTime t) {
                         finish[i] = t;
                         ++calls[i];
                       });
      });
    }
    sim.run();
  }
};

TEST(FlowNetwork, IdenticalRunsGiveIdenticalFinishTimes) {
  RandomRun first(7, 32, 600);
  RandomRun second(7, 32, 600);
  EXPECT_EQ(first.finish, second.finish);
  EXPECT_EQ(first.net.solves(), second.net.solves());
}

TEST(FlowNetwork, StressConservesBytesAndFinishesEveryFlowOnce) {
  // Random paths (0-4 hops over 48 links of mixed capacities), sizes, caps, latencies and start
  // times. Oracles: every flow calls back exactly once, never before start + latency +
  // bytes / (its slowest link or cap); each link carries exactly the bytes of the flows that
  // cross it, and never more than capacity · time.
  RandomRun run(2024, 48, 3000);
  EXPECT_EQ(run.net.flows_started(), 3000);
  EXPECT_EQ(run.net.flows_finished(), 3000);
  EXPECT_EQ(run.net.flows_in_flight(), 0);
  for (size_t i = 0; i < run.calls.size(); ++i) {
    ASSERT_EQ(run.calls[i], 1) << "flow " << i;
    EXPECT_GE(run.finish[i].ps(), run.lower_bound[i].ps() - 1) << "flow " << i;
  }
  const double elapsed = run.sim.now().to_seconds();
  for (int r = 0; r < run.net.num_resources(); ++r) {
    const double carried = run.net.bytes_carried(r);
    EXPECT_NEAR(carried, run.expected_bytes[r], 1e-9 * run.expected_bytes[r] + 1.0) << r;
    EXPECT_LE(carried, run.capacity[r] * elapsed * (1 + 1e-9)) << r;
    EXPECT_LE(run.net.utilization(r), 1 + 1e-9) << r;
    EXPECT_EQ(run.net.load(r), 0) << r;
  }
  EXPECT_GT(run.net.solves(), 0);
}

}  // namespace
}  // namespace preflight::flow
