// Google Benchmarks of the event queue: schedule+fire throughput with N pending events.
// Target: >= 5 M events/s with 64k pending events (a whole GPT-3 175B run needs ~3k events, so
// the queue is never the bottleneck of the analytical backend; the flow backend will need more).
#include <benchmark/benchmark.h>

#include "engine/simulator.h"

namespace preflight {
namespace {

class Counter final : public EventHandler {
 public:
  explicit Counter(Simulator* sim, int64_t limit) : sim_(sim), limit_(limit) {}
  void on_event(int64_t payload) override {
    if (++fired_ < limit_)
      sim_->schedule(sim_->now() + SimTime::picoseconds(1 + payload % 97), this, payload + 1);
  }
  int64_t fired_ = 0;

 private:
  Simulator* sim_;
  int64_t limit_;
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

}  // namespace
}  // namespace preflight
