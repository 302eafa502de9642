// make_slow_ranks_model (compute_model.h): stragglers on top of another compute model.
#include <algorithm>

#include "base/check.h"
#include "compute/compute_model.h"

namespace preflight {
namespace {

class SlowRanksModel final : public ComputeModel {
 public:
  SlowRanksModel(const ComputeModel& base, std::vector<SlowRank> ranks)
      : base_(base), ranks_(std::move(ranks)) {
    std::stable_sort(ranks_.begin(), ranks_.end(),
                     [](const SlowRank& a, const SlowRank& b) { return a.rank < b.rank; });
    for (const SlowRank& r : ranks_) {
      PREFLIGHT_CHECK(r.factor > 0 && r.rank >= 0);
      if (distinct_.empty() || distinct_.back() != r.rank) distinct_.push_back(r.rank);
    }
  }

  SimTime duration(const Op& op) const override { return base_.duration(op); }

  SimTime duration(const Op& op, const RankContext& at) const override {
    const SimTime d = base_.duration(op, at);
    const double factor = slowdown(at);
    if (factor == 1) return d;
    return d.scaled(factor);
  }

  double slowdown(const RankContext& at) const override {
    double factor = base_.slowdown(at);
    auto it = std::lower_bound(ranks_.begin(), ranks_.end(), at.rank,
                               [](const SlowRank& r, int rank) { return r.rank < rank; });
    for (; it != ranks_.end() && it->rank == at.rank; ++it) {
      if (at.time >= it->from && at.time < it->until) factor *= it->factor;
    }
    return factor;
  }

  std::vector<int> distinct_ranks() const override {
    // The base model's distinct ranks and ours, merged.
    std::vector<int> all = base_.distinct_ranks();
    all.insert(all.end(), distinct_.begin(), distinct_.end());
    std::sort(all.begin(), all.end());
    all.erase(std::unique(all.begin(), all.end()), all.end());
    return all;
  }

 private:
  const ComputeModel& base_;
  std::vector<SlowRank> ranks_;  // by rank
  std::vector<int> distinct_;
};

}  // namespace

std::unique_ptr<ComputeModel> make_slow_ranks_model(const ComputeModel& base,
                                                    std::vector<SlowRank> ranks) {
  return std::make_unique<SlowRanksModel>(base, std::move(ranks));
}

}  // namespace preflight
