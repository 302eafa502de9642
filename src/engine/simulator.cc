#include "engine/simulator.h"

#include <algorithm>

#include "base/check.h"

namespace preflight {

void Simulator::schedule(SimTime at, EventHandler* handler, int64_t payload) {
  PREFLIGHT_CHECK(at >= now_);
  PREFLIGHT_CHECK(handler != nullptr);
  heap_.push_back(Event{at, next_seq_++, handler, payload});
  std::push_heap(heap_.begin(), heap_.end(), Later());
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
  std::make_heap(heap_.begin(), heap_.end(), Later());
}

int64_t Simulator::run() {
  int64_t processed = 0;
  while (!heap_.empty()) {
    std::pop_heap(heap_.begin(), heap_.end(), Later());
    const Event e = heap_.back();
    heap_.pop_back();
    now_ = e.at;
    e.handler->on_event(e.payload);
    ++processed;
  }
  return processed;
}

}  // namespace preflight
