#include "engine/simulator.h"

#include <algorithm>

#include "base/check.h"

namespace preflight {

void Simulator::insert(const Event& e) {
  const int64_t offset = (e.at.ps() - base_) >> kWidthShift;  // at >= now() >= base_
  if (offset < kBuckets) {
    const int b = (cursor_ + static_cast<int>(offset)) & (kBuckets - 1);
    const int32_t tail = tail_[b];
    int32_t after = -1;  // the node it goes after (-1: at the head)
    if (tail < 0) {
      after = -1;  // an empty bucket
    } else if (!before(e, nodes_[tail].e)) {
      after = tail;
    } else if (before(e, nodes_[head_[b]].e)) {
      after = -1;
    } else {
      // Between the head and the tail: its place from the head, if near enough.
      after = head_[b];
      for (int steps = 0; before(nodes_[nodes_[after].next].e, e); ++steps) {
        if (steps == kMaxWalk) {
          after = -2;  // too far in: the heap takes it
          break;
        }
        after = nodes_[after].next;
      }
    }
    if (after != -2) {
      int32_t n = free_;
      if (n >= 0) {
        free_ = nodes_[n].next;
      } else {
        n = static_cast<int32_t>(nodes_.size());
        nodes_.push_back(Node{});
      }
      nodes_[n].e = e;
      int32_t& link = after < 0 ? head_[b] : nodes_[after].next;
      nodes_[n].next = link;  // -1 at the tail
      if (link < 0) tail_[b] = n;
      link = n;
      occupied_[b >> 6] |= uint64_t{1} << (b & 63);
      ++near_;
      return;
    }
  }
  heap_.push_back(e);
  heap_sift_up(heap_.size() - 1);
}

void Simulator::schedule(SimTime at, EventHandler* handler, int64_t payload) {
  PREFLIGHT_CHECK(at >= now_);
  PREFLIGHT_CHECK(handler != nullptr);
  insert(Event{at, next_seq_++, handler, payload});
}

void Simulator::heap_sift_up(size_t i) {
  const Event e = heap_[i];
  while (i > 0) {
    const size_t parent = (i - 1) / 4;
    if (!before(e, heap_[parent])) break;
    heap_[i] = heap_[parent];
    i = parent;
  }
  heap_[i] = e;
}

void Simulator::heap_pop() {
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
  if (hole != n) heap_sift_up(hole);
}

int Simulator::first_marked() const {
  const int word = cursor_ >> 6;
  const uint64_t from_cursor = occupied_[word] & (~uint64_t{0} << (cursor_ & 63));
  if (from_cursor != 0) return (word << 6) + __builtin_ctzll(from_cursor);
  for (int k = 1; k <= kWords; ++k) {
    const int w = (word + k) % kWords;
    // Back at the cursor's word: only the bits before the cursor are left.
    const uint64_t bits =
        k == kWords ? occupied_[w] & ~(~uint64_t{0} << (cursor_ & 63)) : occupied_[w];
    if (bits != 0) return (w << 6) + __builtin_ctzll(bits);
  }
  PREFLIGHT_CHECK_MSG(false, "the ring holds events but no bucket is marked");
  return -1;
}

void Simulator::move_ring(int steps) {
  base_ += int64_t{steps} << kWidthShift;
  cursor_ = (cursor_ + steps) & (kBuckets - 1);
}

bool Simulator::pop(Event* e) {
  if (near_ == 0) {
    if (heap_.empty()) return false;
    *e = heap_[0];
    heap_pop();
    // The ring is empty: it restarts at the event's bucket.
    base_ = e->at.ps() & ~((int64_t{1} << kWidthShift) - 1);
    return true;
  }
  const int b = first_marked();
  const int32_t n = head_[b];
  if (!heap_.empty() && before(heap_[0], nodes_[n].e)) {
    *e = heap_[0];
    heap_pop();
    // The ring moves on to the event's bucket (at or before b's: the buckets passed are empty).
    move_ring(static_cast<int>((e->at.ps() - base_) >> kWidthShift));
    return true;
  }
  *e = nodes_[n].e;
  head_[b] = nodes_[n].next;
  if (head_[b] < 0) {
    tail_[b] = -1;
    occupied_[b >> 6] &= ~(uint64_t{1} << (b & 63));
  }
  nodes_[n].next = free_;
  free_ = n;
  --near_;
  move_ring((b - cursor_) & (kBuckets - 1));
  return true;
}

SimTime Simulator::next_event_not_of(const EventHandler* handler) const {
  SimTime earliest = SimTime::max();
  for (int w = 0; w < kWords; ++w) {
    for (uint64_t bits = occupied_[w]; bits != 0; bits &= bits - 1) {
      for (int32_t n = head_[(w << 6) + __builtin_ctzll(bits)]; n >= 0; n = nodes_[n].next) {
        if (nodes_[n].e.handler != handler) earliest = std::min(earliest, nodes_[n].e.at);
      }
    }
  }
  for (const Event& e : heap_) {
    if (e.handler != handler) earliest = std::min(earliest, e.at);
  }
  return earliest;
}

void Simulator::advance(const EventHandler* handler, SimTime delta) {
  PREFLIGHT_CHECK(delta >= SimTime());
  PREFLIGHT_CHECK(delta <= next_event_not_of(handler) - now_);
  std::vector<Event> all;
  all.reserve(pending());
  for (int w = 0; w < kWords; ++w) {
    for (uint64_t bits = occupied_[w]; bits != 0; bits &= bits - 1) {
      const int b = (w << 6) + __builtin_ctzll(bits);
      for (int32_t n = head_[b]; n >= 0;) {
        all.push_back(nodes_[n].e);
        const int32_t next = nodes_[n].next;
        nodes_[n].next = free_;
        free_ = n;
        n = next;
      }
      head_[b] = tail_[b] = -1;
    }
    occupied_[w] = 0;
  }
  near_ = 0;
  all.insert(all.end(), heap_.begin(), heap_.end());
  heap_.clear();
  for (Event& e : all) {
    if (e.handler == handler) e.at += delta;
  }
  now_ += delta;
  // Filed again from the new time on, in (time, sequence) order (each after its bucket's
  // tail); the events keep their sequence numbers.
  std::sort(all.begin(), all.end(), before);
  base_ = now_.ps() & ~((int64_t{1} << kWidthShift) - 1);
  for (const Event& e : all) insert(e);
}

SimTime Simulator::next_time() const {
  SimTime t = heap_.empty() ? SimTime::max() : heap_[0].at;
  if (near_ > 0) t = std::min(t, nodes_[head_[first_marked()]].e.at);
  return t;
}

int64_t Simulator::run_until(SimTime end) {
  int64_t processed = 0;
  Event e;
  while (next_time() < end && pop(&e)) {
    now_ = e.at;
    e.handler->on_event(e.payload);
    ++processed;
  }
  return processed;
}

int64_t Simulator::run() {
  int64_t processed = 0;
  Event e;
  while (pop(&e)) {
    now_ = e.at;
    e.handler->on_event(e.payload);
    ++processed;
  }
  return processed;
}

}  // namespace preflight
