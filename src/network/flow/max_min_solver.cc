#include "network/flow/max_min_solver.h"

#include <algorithm>
#include <cmath>

#include "base/check.h"

namespace preflight::flow {

void MaxMinSolver::clear() {
  capacity_.clear();
  cap_.clear();
  path_begin_.assign(1, 0);
  path_.clear();
}

int MaxMinSolver::add_resource(double capacity) {
  PREFLIGHT_CHECK(capacity > 0);
  capacity_.push_back(capacity);
  return static_cast<int>(capacity_.size()) - 1;
}

int MaxMinSolver::add_flow(double cap, std::span<const int> resources) {
  PREFLIGHT_CHECK(cap > 0);
  if (path_begin_.empty()) path_begin_.push_back(0);
  for (int r : resources) {
    PREFLIGHT_CHECK(r >= 0 && r < num_resources());
    path_.push_back(r);
  }
  path_begin_.push_back(static_cast<int>(path_.size()));
  cap_.push_back(cap);
  return static_cast<int>(cap_.size()) - 1;
}

double MaxMinSolver::share(int r) const { return std::max(remaining_[r], 0.0) / unfrozen_[r]; }

void MaxMinSolver::freeze(int f, double rate) {
  frozen_[f] = 1;
  rate_[f] = rate;
  for (int i = path_begin_[f]; i < path_begin_[f + 1]; ++i) {
    const int r = path_[i];
    remaining_[r] -= rate;
    --unfrozen_[r];
  }
}

void MaxMinSolver::solve() {
  if (path_begin_.empty()) path_begin_.push_back(0);
  const int nr = num_resources();
  const int nf = num_flows();
  remaining_.assign(capacity_.begin(), capacity_.end());
  unfrozen_.assign(nr, 0);
  rate_.assign(nf, 0.0);
  frozen_.assign(nf, 0);

  // Resource -> flows incidence (counting sort keeps flows in index order per resource).
  for (int r : path_) ++unfrozen_[r];
  flows_begin_.assign(nr + 1, 0);
  for (int r = 0; r < nr; ++r) flows_begin_[r + 1] = flows_begin_[r] + unfrozen_[r];
  flows_of_.resize(path_.size());
  {
    std::vector<int>& fill = by_cap_;  // borrowed as a cursor array before it holds caps
    fill.assign(flows_begin_.begin(), flows_begin_.end() - 1);
    for (int f = 0; f < nf; ++f)
      for (int i = path_begin_[f]; i < path_begin_[f + 1]; ++i) flows_of_[fill[path_[i]]++] = f;
  }

  heap_.clear();
  for (int r = 0; r < nr; ++r)
    if (unfrozen_[r] > 0) heap_.push_back(Share{share(r), r});
  std::make_heap(heap_.begin(), heap_.end(), Larger());
  by_cap_.clear();
  for (int f = 0; f < nf; ++f)
    if (cap_[f] != kNoCap) by_cap_.push_back(f);
  std::sort(by_cap_.begin(), by_cap_.end(),
            [&](int a, int b) { return cap_[a] != cap_[b] ? cap_[a] < cap_[b] : a < b; });

  size_t next_cap = 0;
  int left = nf;
  while (left > 0) {
    // The smallest current fair share. Freezing a flow at the smallest share never lowers
    // another resource's share, so a popped key below the current share is stale: re-push it.
    while (!heap_.empty()) {
      const Share top = heap_.front();
      if (unfrozen_[top.resource] > 0) {
        const double current = share(top.resource);
        if (!(current > top.share)) break;
        std::pop_heap(heap_.begin(), heap_.end(), Larger());
        heap_.back().share = current;
        std::push_heap(heap_.begin(), heap_.end(), Larger());
        continue;
      }
      std::pop_heap(heap_.begin(), heap_.end(), Larger());
      heap_.pop_back();
    }
    while (next_cap < by_cap_.size() && frozen_[by_cap_[next_cap]]) ++next_cap;
    const double link_share = heap_.empty() ? kNoCap : share(heap_.front().resource);
    const double flow_cap = next_cap < by_cap_.size() ? cap_[by_cap_[next_cap]] : kNoCap;

    if (link_share == kNoCap && flow_cap == kNoCap) {
      // Only flows with no resources and no cap are left: infinite bandwidth.
      for (int f = 0; f < nf; ++f)
        if (!frozen_[f]) freeze(f, kNoCap);
      break;
    }
    if (flow_cap <= link_share) {
      // A flow reaches its own cap before any of its resources saturate.
      freeze(by_cap_[next_cap], flow_cap);
      --left;
      continue;
    }
    // Resource r saturates: every unfrozen flow crossing it gets the fair share.
    const int r = heap_.front().resource;
    for (int i = flows_begin_[r]; i < flows_begin_[r + 1]; ++i) {
      const int f = flows_of_[i];
      if (frozen_[f]) continue;
      freeze(f, link_share);
      --left;
    }
  }
}

}  // namespace preflight::flow
