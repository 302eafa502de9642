// MaxMinSolver: max-min fair rates for one set of flows over shared resources, by progressive
// filling (water-filling; Bertsekas & Gallager, "Data Networks" §6.5.2). Every flow's rate rises
// at the same pace until a resource saturates or the flow reaches its own cap; flows so stopped
// are frozen and the rest keep rising. The result is the unique max-min fair allocation:
// no rate can grow without shrinking one that is no larger.
// A heap of per-resource fair shares (remaining capacity / unfrozen flows) makes one solve about
// O(E + L log L), E = Σ path lengths (network_models.md §4.1). Shares only grow as flows freeze at
// the smallest share, so heap keys are lower bounds, re-pushed only when popped stale.
// Problems use compact local indices 0..n-1; the caller maps them. Reusable: buffers are kept
// between solves, so a solve allocates nothing once warm. Not thread-safe; deterministic (ties
// are broken by the lower index).
#pragma once

#include <cstdint>
#include <limits>
#include <span>
#include <vector>

namespace preflight::flow {

class MaxMinSolver {
 public:
  static constexpr double kNoCap = std::numeric_limits<double>::infinity();

  // Forgets the previous problem (keeps the buffers).
  void clear();
  // Adds a resource of `capacity` bytes/s and returns its local index. REQUIRES: capacity > 0.
  int add_resource(double capacity);
  // Adds a flow crossing `resources` (local indices, each at most once) with its own rate cap
  // (bytes/s, kNoCap for none) and returns its local index. REQUIRES: cap > 0.
  int add_flow(double cap, std::span<const int> resources);

  // Computes the max-min fair rates. A flow with no resources and no cap gets +infinity.
  void solve();
  // The rate of flow `f` (bytes/s) from the last solve().
  double rate(int f) const { return rate_[f]; }
  // Σ rates of the flows crossing resource `r` from the last solve().
  double load(int r) const { return capacity_[r] - remaining_[r]; }

  int num_resources() const { return static_cast<int>(capacity_.size()); }
  int num_flows() const { return static_cast<int>(cap_.size()); }

 private:
  struct Share {
    double share;  // remaining capacity / unfrozen flows when pushed (a lower bound of the current)
    int resource;
  };
  // Min-heap order: smaller share first, then the lower resource index.
  struct Larger {
    bool operator()(const Share& a, const Share& b) const {
      return a.share != b.share ? a.share > b.share : a.resource > b.resource;
    }
  };
  double share(int r) const;
  void freeze(int f, double rate);

  // Resources.
  std::vector<double> capacity_;
  std::vector<double> remaining_;
  std::vector<int> unfrozen_;
  std::vector<int> flows_begin_;  // CSR: flows of resource r are flows_of_[begin[r]..begin[r+1])
  std::vector<int> flows_of_;
  // Flows.
  std::vector<double> cap_;
  std::vector<int> path_begin_;  // CSR: resources of flow f are path_[begin[f]..begin[f+1])
  std::vector<int> path_;
  std::vector<double> rate_;
  std::vector<char> frozen_;
  // Scratch.
  std::vector<Share> heap_;
  std::vector<int> by_cap_;  // capped flows, ascending (cap, index)
};

}  // namespace preflight::flow
