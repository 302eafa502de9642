// Google Benchmarks of the event queue: schedule+fire throughput with N pending events, at delays
// of 1–97 ps (every event in one bucket of the calendar ring, out of order: its worst case) and
// in a packet run's pattern.
// Target: >= 5 M events/s with 64k pending events (a whole GPT-3 175B run needs ~3k events, so
// the queue is never the bottleneck of the analytical backend; the flow backend will need more).
#include <benchmark/benchmark.h>

#include "engine/simulator.h"

namespace preflight {
namespace {

// Each event schedules the next of its chain (payload) until `limit` have fired: `packet` false,
// 1–97 ps on (payload + 1 next); true, a packet's serialization and the chain's own hop latency on
// (84 ns at 400 Gb/s, and 0–0.7 us: new events a few hundred nanoseconds ahead, mostly in order).
class Counter final : public EventHandler {
 public:
  Counter(Simulator* sim, int64_t limit, bool packet = false)
      : sim_(sim), limit_(limit), packet_(packet) {}
  void on_event(int64_t payload) override {
    if (++fired_ >= limit_) return;
    if (packet_) {
      sim_->schedule(sim_->now() + SimTime::picoseconds(84000 + (payload % 13) * 61000), this,
                     payload);
    } else {
      sim_->schedule(sim_->now() + SimTime::picoseconds(1 + payload % 97), this, payload + 1);
    }
  }
  int64_t fired_ = 0;

 private:
  Simulator* sim_;
  int64_t limit_;
  bool packet_;
};

void BM_EventQueueScheduleAndRun(benchmark::State& state) {
  const int64_t pending = state.range(0);
  for (auto _ : state) {
    Simulator sim;
    Counter c(&sim, pending * 4);
    for (int64_t i = 0; i < pending; ++i) sim.schedule(SimTime::picoseconds(i * 7 % 1000), &c, i);
    benchmark::DoNotOptimize(sim.run());
  }
  state.SetItemsProcessed(state.iterations() * pending * 4);
  state.SetLabel("target: >= 5M events/s at 64k pending");
}
BENCHMARK(BM_EventQueueScheduleAndRun)->Arg(16)->Arg(1024)->Arg(65536);

// A packet run's pattern: about 150 paced senders and hops pending (chains, above); beside them,
// events far ahead (the executor's kernel ends and timers, a second on), which the near ones had
// to climb past in a single heap.
void BM_EventQueuePacketPattern(benchmark::State& state) {
  const int64_t chains = state.range(0);
  const int64_t far = state.range(1);
  constexpr int64_t kEvents = 1 << 20;
  for (auto _ : state) {
    Simulator sim;
    Counter h(&sim, kEvents, /*packet=*/true);
    Counter idle(&sim, 0);
    for (int64_t i = 0; i < chains; ++i) sim.schedule(SimTime::picoseconds(i * 5003), &h, i);
    for (int64_t i = 0; i < far; ++i) sim.schedule(SimTime::microseconds(1e6 + i), &idle, i);
    benchmark::DoNotOptimize(sim.run());
  }
  state.SetItemsProcessed(state.iterations() * (kEvents + far));
  state.SetLabel("packet-like: paced chains a serialization and a hop ahead");
}
BENCHMARK(BM_EventQueuePacketPattern)->Args({150, 0})->Args({150, 1024})->Args({150, 16384});

}  // namespace
}  // namespace preflight
