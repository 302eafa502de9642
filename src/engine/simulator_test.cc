#include "engine/simulator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

namespace preflight {
namespace {

SimTime us(double v) { return SimTime::microseconds(v); }
SimTime ns(int64_t v) { return SimTime::picoseconds(1000 * v); }

// Records (time, payload) of every event it receives.
class Recorder final : public EventHandler {
 public:
  explicit Recorder(Simulator* sim) : sim_(sim) {}
  void on_event(int64_t payload) override { fired.emplace_back(sim_->now(), payload); }
  std::vector<std::pair<SimTime, int64_t>> fired;

 private:
  Simulator* sim_;
};

TEST(Simulator, StartsAtZeroAndEmpty) {
  Simulator sim;
  EXPECT_EQ(sim.now(), SimTime::zero());
  EXPECT_TRUE(sim.empty());
  EXPECT_EQ(sim.run(), 0);
}

TEST(Simulator, FiresInTimeOrderThenScheduleOrder) {
  Simulator sim;
  Recorder r(&sim);
  // Scheduled out of time order; the three at 5 us must keep their schedule order 1, 2, 3.
  sim.schedule(us(5), &r, 1);
  sim.schedule(us(9), &r, 9);
  sim.schedule(us(5), &r, 2);
  sim.schedule(us(1), &r, 0);
  sim.schedule(us(5), &r, 3);
  EXPECT_EQ(sim.pending(), 5u);
  EXPECT_EQ(sim.run(), 5);
  EXPECT_TRUE(sim.empty());
  const std::vector<std::pair<SimTime, int64_t>> want = {
      {us(1), 0}, {us(5), 1}, {us(5), 2}, {us(5), 3}, {us(9), 9}};
  EXPECT_EQ(r.fired, want);
  EXPECT_EQ(sim.now(), us(9));
}

TEST(Simulator, FiresManyEqualTimesInScheduleOrder) {
  // A heap is not stable by itself: 1000 equal-time events would come out scrambled without the
  // sequence number.
  Simulator sim;
  Recorder r(&sim);
  for (int i = 0; i < 1000; ++i) sim.schedule(us(7), &r, i);
  sim.run();
  ASSERT_EQ(r.fired.size(), 1000u);
  for (int i = 0; i < 1000; ++i) EXPECT_EQ(r.fired[i].second, i);
}

// Each event schedules up to two follow-ups at now + a pseudo-random delay (possibly zero).
class Spawner final : public EventHandler {
 public:
  explicit Spawner(Simulator* sim) : sim_(sim) {}
  void on_event(int64_t payload) override {
    times.push_back(sim_->now());
    if (payload <= 0) return;
    state_ = state_ * 6364136223846793005ULL + 1442695040888963407ULL;  // LCG, fixed seed
    const int64_t delay_ps = static_cast<int64_t>((state_ >> 33) % 5) * 1000;
    sim_->schedule(sim_->now() + SimTime::picoseconds(delay_ps), this, payload - 1);
    if (payload % 3 == 0) sim_->schedule(sim_->now(), this, payload - 2);
  }
  std::vector<SimTime> times;

 private:
  Simulator* sim_;
  uint64_t state_ = 42;
};

TEST(Simulator, TimeNeverGoesBackwards) {
  Simulator sim;
  Spawner s(&sim);
  sim.schedule(us(3), &s, 40);
  sim.schedule(us(1), &s, 40);
  const int64_t processed = sim.run();
  ASSERT_EQ(static_cast<size_t>(processed), s.times.size());
  ASSERT_GT(processed, 80);
  for (size_t i = 1; i < s.times.size(); ++i) {
    EXPECT_LE(s.times[i - 1], s.times[i]) << "event " << i;
  }
  EXPECT_EQ(sim.now(), s.times.back());
}

// Each event schedules 0–2 more at now + a pseudo-random delay (`wide` false: 0–7 ps, many ties;
// true: 0 ps to about 17 ms, log-uniform, so the events fall in the ring's buckets (16 ns wide,
// 67 us in all), crowd some of them out of order, wrap around the ring and lie beyond it in the
// heap), and records (time, id). The ids are handed out in scheduling order, so the firing order
// must be (time, id) sorted.
class Brancher final : public EventHandler {
 public:
  Brancher(Simulator* sim, bool wide) : sim_(sim), wide_(wide) {}
  void add(SimTime at) { sim_->schedule(at, this, next_id_++); }
  void on_event(int64_t id) override {
    fired.emplace_back(sim_->now(), id);
    if (next_id_ >= 200000) return;
    state_ = state_ * 6364136223846793005ULL + 1442695040888963407ULL;
    const int n = static_cast<int>((state_ >> 40) % 3);
    for (int i = 0; i < n; ++i) {
      int64_t delay = static_cast<int64_t>((state_ >> (20 + 3 * i)) % 8);
      if (wide_) {
        const int bits = static_cast<int>((state_ >> (7 * i)) % 35);  // up to 2^34 ps
        delay = static_cast<int64_t>((state_ >> (27 + i)) & ((uint64_t{1} << bits) - 1));
      }
      add(sim_->now() + SimTime::picoseconds(delay));
    }
  }
  std::vector<std::pair<SimTime, int64_t>> fired;

 private:
  Simulator* sim_;
  bool wide_;
  uint64_t state_ = 7;
  int64_t next_id_ = 0;
};

void ExpectTimeThenScheduleOrder(bool wide, int64_t spread_ps) {
  // An oracle for the queue: every event fired, and in (time, schedule order): the order the
  // events were scheduled in, sorted by time with ties kept, is the order they fire in.
  Simulator sim;
  Brancher b(&sim, wide);
  for (int i = 0; i < 500; ++i) b.add(SimTime::picoseconds(int64_t{i} * 977 % spread_ps));
  const int64_t processed = sim.run();
  ASSERT_GT(processed, 100000);
  ASSERT_EQ(static_cast<size_t>(processed), b.fired.size());
  std::vector<std::pair<SimTime, int64_t>> want = b.fired;
  std::sort(want.begin(), want.end());
  EXPECT_TRUE(b.fired == want);
  EXPECT_TRUE(sim.empty());
}

TEST(Simulator, FiresInTimeThenScheduleOrderUnderAnyInterleaving) {
  ExpectTimeThenScheduleOrder(/*wide=*/false, 13);
}

TEST(Simulator, FiresInOrderAcrossTheRingAndTheHeap) {
  ExpectTimeThenScheduleOrder(/*wide=*/true, 5000000);
}

// Schedules one event in the past from inside on_event.
class TimeTraveller final : public EventHandler {
 public:
  explicit TimeTraveller(Simulator* sim) : sim_(sim) {}
  void on_event(int64_t) override { sim_->schedule(sim_->now() - SimTime::picoseconds(1), this); }

 private:
  Simulator* sim_;
};

// At its first event, moves its own pending events `delta` on (the fast-forward of a steady
// state), leaving the other handler's events where they are.
class Jumper final : public EventHandler {
 public:
  Jumper(Simulator* sim, SimTime delta) : sim_(sim), delta_(delta) {}
  void on_event(int64_t payload) override {
    fired.emplace_back(sim_->now(), payload);
    if (payload == 0) {
      next_other = sim_->next_event_not_of(this);
      sim_->advance(this, delta_);
      after = sim_->now();
    }
  }
  std::vector<std::pair<SimTime, int64_t>> fired;
  SimTime next_other, after;

 private:
  Simulator* sim_;
  SimTime delta_;
};

TEST(Simulator, AdvanceMovesOneHandlersEventsAndTheClock) {
  Simulator sim;
  Jumper j(&sim, us(10));
  Recorder r(&sim);
  sim.schedule(us(1), &j, 0);
  sim.schedule(us(2), &j, 1);
  sim.schedule(us(2), &j, 2);
  sim.schedule(us(15), &r, 7);
  sim.schedule(us(30), &r, 8);
  sim.run();
  EXPECT_EQ(j.next_other, us(15));
  EXPECT_EQ(j.after, us(11));
  // Its events 10 us later, in their order; the other handler's where they were, so the jump
  // reorders them against each other.
  const std::vector<std::pair<SimTime, int64_t>> mine = {{us(1), 0}, {us(12), 1}, {us(12), 2}};
  const std::vector<std::pair<SimTime, int64_t>> theirs = {{us(15), 7}, {us(30), 8}};
  EXPECT_EQ(j.fired, mine);
  EXPECT_EQ(r.fired, theirs);
}

TEST(Simulator, AdvanceKeepsTheOrderOfEventsNearAndFar) {
  // The jumper's events lie in the ring (ns apart) and beyond it (ms); the other handler's far
  // ahead. After the jump every event keeps its order, the jumper's 1 ms later.
  Simulator sim;
  Jumper j(&sim, us(1000 * 1));
  Recorder r(&sim);
  sim.schedule(ns(1), &j, 0);
  sim.schedule(ns(20), &j, 1);
  sim.schedule(ns(20), &j, 2);
  sim.schedule(ns(90), &j, 3);
  sim.schedule(us(1000 * 2), &j, 4);
  sim.schedule(us(1000 * 5), &r, 7);
  sim.run();
  EXPECT_EQ(j.next_other, us(1000 * 5));
  const SimTime ms = us(1000 * 1);
  const std::vector<std::pair<SimTime, int64_t>> mine = {
      {ns(1), 0}, {ns(20) + ms, 1}, {ns(20) + ms, 2}, {ns(90) + ms, 3}, {us(1000 * 3), 4}};
  EXPECT_EQ(j.fired, mine);
  EXPECT_EQ(r.fired, (std::vector<std::pair<SimTime, int64_t>>{{us(1000 * 5), 7}}));
}

TEST(SimulatorDeathTest, AdvancePastAnotherHandlersEventIsACheck) {
  Simulator sim;
  Jumper j(&sim, us(20));
  Recorder r(&sim);
  sim.schedule(us(1), &j, 0);
  sim.schedule(us(15), &r, 7);
  EXPECT_DEATH(sim.run(), "next_event_not_of");
}

TEST(SimulatorDeathTest, ScheduleInThePastIsACheck) {
  Simulator sim;
  TimeTraveller t(&sim);
  sim.schedule(us(10), &t);
  EXPECT_DEATH(sim.run(), "at >= now_");
}

TEST(SimulatorDeathTest, NullHandlerIsACheck) {
  Simulator sim;
  EXPECT_DEATH(sim.schedule(us(1), nullptr), "handler != nullptr");
}

}  // namespace
}  // namespace preflight

namespace preflight {
namespace {

class Count final : public EventHandler {
 public:
  void on_event(int64_t payload) override { seen.push_back(payload); }
  std::vector<int64_t> seen;
};

TEST(Simulator, RunUntilStopsBeforeItsEndAndPeeksTheNext) {
  Simulator sim;
  Count c;
  EXPECT_EQ(sim.next_time(), SimTime::max());
  for (int i : {5, 1, 3, 3, 9}) sim.schedule(SimTime::microseconds(i), &c, i);
  EXPECT_EQ(sim.next_time(), SimTime::microseconds(1));
  EXPECT_EQ(sim.run_until(SimTime::microseconds(3)), 1);  // events at 3 us are not before it
  EXPECT_EQ(sim.now(), SimTime::microseconds(1));
  EXPECT_EQ(sim.next_time(), SimTime::microseconds(3));
  EXPECT_EQ(sim.run_until(SimTime::microseconds(6)), 3);
  EXPECT_EQ(c.seen, (std::vector<int64_t>{1, 3, 3, 5}));
  sim.schedule(SimTime::microseconds(7), &c, 7);
  EXPECT_EQ(sim.run(), 2);
  EXPECT_EQ(sim.next_time(), SimTime::max());
}

}  // namespace
}  // namespace preflight
