// Simulator: a discrete-event loop owned by one simulation run (no globals, so many runs can go
// on at once on different threads). Events fire in order of (time, schedule sequence number), so
// equal-time events fire in the order they were scheduled: runs are deterministic.
// Components implement EventHandler::on_event and schedule their own events. Not thread-safe.
#pragma once

#include <cstdint>
#include <vector>

#include "base/units.h"

namespace preflight {

class EventHandler {
 public:
  virtual ~EventHandler() = default;
  // Called at the event's time; `payload` is whatever the scheduler passed.
  virtual void on_event(int64_t payload) = 0;
};

class Simulator {
 public:
  // The time of the event being processed (zero before run()).
  SimTime now() const { return now_; }

  // Schedules `handler->on_event(payload)` at `at`. REQUIRES: at >= now(); handler outlives the
  // event.
  void schedule(SimTime at, EventHandler* handler, int64_t payload = 0);

  // Processes events until none remain. Returns the number processed.
  int64_t run();

  // The earliest pending event of a handler other than `handler` (SimTime::max() if none).
  // O(pending).
  SimTime next_event_not_of(const EventHandler* handler) const;

  // Fast-forward of one component in a steady state: moves every pending event of `handler`
  // `delta` later and the clock `delta` on, as if the component's state had repeated itself
  // over the interval. Events keep their sequence numbers, so equal times still fire in
  // scheduling order. REQUIRES: delta >= 0 and no event of another handler before now() + delta.
  // O(pending).
  void advance(const EventHandler* handler, SimTime delta);

  bool empty() const { return heap_.empty(); }
  size_t pending() const { return heap_.size(); }

 private:
  struct Event {
    SimTime at;
    uint64_t seq;
    EventHandler* handler;
    int64_t payload;
  };
  // The pending events are a 4-ary min-heap ordered by (time, sequence number): a total order,
  // so events fire in the same order as with any other priority queue. A packet run keeps about
  // 150 events pending (per-port queues hold the packets) and schedules most new ones near the
  // front, so what costs is the levels an event climbs and mispredicted branches: four children
  // halve the levels, the comparison is one 128-bit compare and the child choice conditional
  // moves (bench/event_queue_benchmark.cc).
  static bool before(const Event& a, const Event& b) {
    // One 128-bit comparison (times are never negative): cmp/sbb, no branch.
    using Key = unsigned __int128;
    const Key ka = static_cast<Key>(static_cast<uint64_t>(a.at.ps())) << 64 | a.seq;
    const Key kb = static_cast<Key>(static_cast<uint64_t>(b.at.ps())) << 64 | b.seq;
    return ka < kb;
  }
  void sift_up(size_t i);
  void pop_front();  // removes heap_[0]

  std::vector<Event> heap_;
  uint64_t next_seq_ = 0;
  SimTime now_;
};

}  // namespace preflight
