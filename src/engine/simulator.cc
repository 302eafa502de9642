#include "engine/simulator.h"

#include <algorithm>

#include "base/check.h"

namespace preflight {

void Simulator::schedule(SimTime at, EventHandler* handler, int64_t payload) {
  PREFLIGHT_CHECK(at >= now_);
  PREFLIGHT_CHECK(handler != nullptr);
  heap_.push_back(Event{at, next_seq_++, handler, payload});
  sift_up(heap_.size() - 1);
}

void Simulator::sift_up(size_t i) {
  const Event e = heap_[i];
  while (i > 0) {
    const size_t parent = (i - 1) / 4;
    if (!before(e, heap_[parent])) break;
    heap_[i] = heap_[parent];
    i = parent;
  }
  heap_[i] = e;
}

void Simulator::pop_front() {
  // Floyd's pop: the hole at the root sinks to a leaf along the smallest children (no
  // comparison with the element to place), then the last element fills it and rises, rarely
  // more than a level. The smallest of four: two pairs, then their winners.
  const size_t n = heap_.size() - 1;  // after the pop
  size_t hole = 0;
  for (size_t first = 1; first < n; first = 4 * hole + 1) {
    size_t best = first;
    if (first + 3 < n) {
      const size_t a = first + static_cast<size_t>(before(heap_[first + 1], heap_[first]));
      const size_t b = first + 2 + static_cast<size_t>(before(heap_[first + 3], heap_[first + 2]));
      best = before(heap_[b], heap_[a]) ? b : a;
    } else {
      for (size_t c = first + 1; c < n; ++c) best = before(heap_[c], heap_[best]) ? c : best;
    }
    heap_[hole] = heap_[best];
    hole = best;
  }
  heap_[hole] = heap_[n];
  heap_.pop_back();
  if (hole != n) sift_up(hole);
}

SimTime Simulator::next_event_not_of(const EventHandler* handler) const {
  SimTime earliest = SimTime::max();
  for (const Event& e : heap_) {
    if (e.handler != handler) earliest = std::min(earliest, e.at);
  }
  return earliest;
}

void Simulator::advance(const EventHandler* handler, SimTime delta) {
  PREFLIGHT_CHECK(delta >= SimTime());
  PREFLIGHT_CHECK(delta <= next_event_not_of(handler) - now_);
  for (Event& e : heap_) {
    if (e.handler == handler) e.at += delta;
  }
  now_ += delta;
  // Re-heap: each event rises to its place, in array order (heap_[0..i) is a heap before i).
  for (size_t i = 1; i < heap_.size(); ++i) sift_up(i);
}

int64_t Simulator::run() {
  int64_t processed = 0;
  while (!heap_.empty()) {
    const Event e = heap_.front();
    pop_front();
    now_ = e.at;
    e.handler->on_event(e.payload);
    ++processed;
  }
  return processed;
}

}  // namespace preflight
