// Simulator: a discrete-event loop owned by one simulation run (no globals, so many runs can go
// on at once on different threads). Events fire in order of (time, schedule sequence number), so
// equal-time events fire in the order they were scheduled: runs are deterministic.
// Components implement EventHandler::on_event and schedule their own events. Not thread-safe.
#pragma once

#include <cstdint>
#include <vector>

#include "base/line_allocator.h"
#include "base/units.h"

namespace preflight {

class EventHandler {
 public:
  virtual ~EventHandler() = default;
  // Called at the event's time; `payload` is whatever the scheduler passed.
  virtual void on_event(int64_t payload) = 0;
};

class alignas(64) Simulator {
 public:
  // The time of the event being processed (zero before run()).
  SimTime now() const { return now_; }

  // Schedules `handler->on_event(payload)` at `at`. REQUIRES: at >= now(); handler outlives the
  // event.
  void schedule(SimTime at, EventHandler* handler, int64_t payload = 0);

  // Processes events until none remain. Returns the number processed.
  int64_t run();

  // Processes the events before `end` (not those at `end` or after), in order. Returns the
  // number processed; now() is then the last one's time.
  int64_t run_until(SimTime end);

  // The time of the next event (SimTime::max() if none).
  SimTime next_time() const;

  // The earliest pending event of a handler other than `handler` (SimTime::max() if none).
  // O(pending).
  SimTime next_event_not_of(const EventHandler* handler) const;

  // Fast-forward of one component in a steady state: moves every pending event of `handler`
  // `delta` later and the clock `delta` on, as if the component's state had repeated itself
  // over the interval. Events keep their sequence numbers, so equal times still fire in
  // scheduling order. REQUIRES: delta >= 0 and no event of another handler before now() + delta.
  // O(pending).
  void advance(const EventHandler* handler, SimTime delta);

  bool empty() const { return pending() == 0; }
  size_t pending() const { return near_ + heap_.size(); }

 private:
  struct Event {
    SimTime at;
    uint64_t seq;
    EventHandler* handler;
    int64_t payload;
  };
  // The pending events, in two parts (a calendar queue beside a heap, after Brown 1988):
  //  * the ring: kBuckets buckets, each 2^kWidthShift ps (16 ns) wide, the bucket at cursor_
  //    starting at base_ (a multiple of the width, never after now()), so the ring spans
  //    [base_, base_ + kBuckets widths); a bitmap marks the buckets that hold events. Each
  //    bucket is a list sorted by (time, sequence number), its nodes from one pool with a free
  //    list (the few nodes in use stay hot in cache). A new event in the ring's span goes after
  //    its bucket's tail when it is not earlier (always so for a burst at one time), else in its
  //    place, found from the head in at most kMaxWalk steps.
  //  * the heap (4-ary, min at the root): every other event: beyond the ring's span (kernel
  //    ends, timers) or out of order in a crowded bucket.
  // The next event is the earlier of the first marked bucket's head and the heap's root. A
  // packet run keeps about 150 events pending within a few microseconds (a packet's
  // serialization is 84 ns at 400 Gb/s), one or two per bucket, and the executor's events far
  // behind them: scheduling is an append and firing takes a list's head, where in one heap each
  // new event climbed past the far ones (a packet run 10–30 % faster, its queue's throughput
  // flat in the far events pending; docs/packet_network.md "Speed"). Events fire in (time,
  // sequence number) order, a total order: the same order as with any other priority queue.
  static constexpr int kWidthShift = 14;
  static constexpr int kBuckets = 4096;
  static constexpr int kWords = kBuckets / 64;
  static constexpr int kMaxWalk = 8;

  static bool before(const Event& a, const Event& b) {
    // One 128-bit comparison (times are never negative): cmp/sbb, no branch.
    using Key = unsigned __int128;
    const Key ka = static_cast<Key>(static_cast<uint64_t>(a.at.ps())) << 64 | a.seq;
    const Key kb = static_cast<Key>(static_cast<uint64_t>(b.at.ps())) << 64 | b.seq;
    return ka < kb;
  }
  // Files `e` in the ring or the heap.
  void insert(const Event& e);
  // Takes the next event out (false if none), the ring moved on to its time.
  bool pop(Event* e);
  // The first marked bucket from the cursor on (there is one: near_ > 0).
  int first_marked() const;
  // Moves the ring on by `steps` buckets (all of those it leaves behind are empty).
  void move_ring(int steps);
  void heap_sift_up(size_t i);
  void heap_pop();  // removes heap_[0]

  struct Node {
    Event e;
    int32_t next;
  };
  // The pool and the heap on cache lines of their own: a packet network's partitions run their
  // simulators side by side on several threads (base/line_allocator.h).
  std::vector<Node, LineAllocator<Node>> nodes_;  // the pool
  int32_t free_ = -1;                             // its free list
  std::vector<int32_t> head_ = std::vector<int32_t>(kBuckets, -1);
  std::vector<int32_t> tail_ = std::vector<int32_t>(kBuckets, -1);
  uint64_t occupied_[kWords] = {};
  int64_t base_ = 0;  // ps
  int cursor_ = 0;
  size_t near_ = 0;  // events in the ring
  std::vector<Event, LineAllocator<Event>> heap_;
  uint64_t next_seq_ = 0;
  SimTime now_;
};

}  // namespace preflight
