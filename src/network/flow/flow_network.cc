#include "network/flow/flow_network.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <utility>

#include "base/check.h"

namespace preflight::flow {
namespace {

// Event payloads; a payload >= 0 is the slot of a flow whose latency has elapsed.
constexpr int64_t kResolve = -1;
constexpr int64_t kWakeUp = -2;
// A flow with fewer bytes left than this is done (floating-point remainders).
constexpr double kDoneBytes = 1e-6;

bool distinct(const std::vector<int>& path) {
  std::vector<int> sorted = path;
  std::sort(sorted.begin(), sorted.end());
  return std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end();
}

}  // namespace

SimTime transfer_time(double bytes, double rate) {
  PREFLIGHT_CHECK(bytes >= 0 && rate > 0);
  const double ps = bytes / rate * 1e12;
  PREFLIGHT_CHECK(std::isfinite(ps) && ps < 9.2e18);
  return SimTime::picoseconds(static_cast<int64_t>(std::ceil(ps * (1 - 1e-14))));
}

FlowNetwork::FlowNetwork(Simulator* sim) : sim_(sim) { PREFLIGHT_CHECK(sim != nullptr); }

int FlowNetwork::add_resource(Bandwidth capacity, int group) {
  const double c = capacity.bytes_per_second();
  PREFLIGHT_CHECK_MSG(c > 0 && std::isfinite(c), "a resource needs a finite capacity > 0");
  PREFLIGHT_CHECK(group >= -1);
  Resource r;
  r.capacity = c;
  r.settled_at = sim_->now();
  r.group = group;
  if (group >= static_cast<int>(groups_.size())) groups_.resize(group + 1);
  resources_.push_back(std::move(r));
  return static_cast<int>(resources_.size()) - 1;
}

void FlowNetwork::set_capacity(int resource, Bandwidth capacity) {
  PREFLIGHT_CHECK(resource >= 0 && resource < num_resources());
  const double c = capacity.bytes_per_second();
  PREFLIGHT_CHECK_MSG(c > 0 && std::isfinite(c), "a resource needs a finite capacity > 0");
  if (c == resources_[resource].capacity) return;
  resources_[resource].capacity = c;
  // The re-solve settles the component's bytes at the old rates before it uses the new one.
  mark_dirty(resource);
  request_resolve();
}

int64_t FlowNetwork::start_flow(Bytes bytes, std::vector<int> path, SimTime latency, Bandwidth cap,
                                Callback on_done, std::vector<int> tally) {
  PREFLIGHT_CHECK(bytes.count() >= 0);
  PREFLIGHT_CHECK(latency >= SimTime::zero());
  PREFLIGHT_CHECK(cap.bytes_per_second() > 0);
  for (int r : path) PREFLIGHT_CHECK(r >= 0 && r < num_resources());
  for (int r : tally) PREFLIGHT_CHECK(r >= 0 && r < num_resources());
  PREFLIGHT_CHECK_MSG(distinct(path), "a flow's path crosses a resource twice");
  {
    std::vector<int> all = path;
    all.insert(all.end(), tally.begin(), tally.end());
    PREFLIGHT_CHECK_MSG(distinct(all), "a flow's tally repeats a resource or one of its path");
  }

  int slot;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
  } else {
    slot = static_cast<int>(flows_.size());
    flows_.emplace_back();
  }
  Flow& f = flows_[slot];
  f.id = next_id_++;
  f.phase = Phase::kLatency;
  f.remaining = static_cast<double>(bytes.count());
  f.rate = 0;
  f.cap = cap.bytes_per_second();
  f.settled_at = sim_->now();
  f.path = std::move(path);
  f.position.assign(f.path.size(), -1);
  f.tally = std::move(tally);
  f.on_done = std::move(on_done);
  ++flows_started_;
  const int64_t id = f.id;
  const bool instantaneous = f.remaining == 0 || (f.path.empty() && f.cap == MaxMinSolver::kNoCap);
  // Instantaneous flows finish from an event, so on_done never runs inside start_flow.
  if (latency > SimTime::zero() || instantaneous) {
    sim_->schedule(sim_->now() + latency, this, slot);
  } else {
    begin_transfer(slot);
  }
  return id;
}

void FlowNetwork::on_event(int64_t payload) {
  if (payload == kResolve) return resolve();
  if (payload == kWakeUp) return wake_up();
  const int slot = static_cast<int>(payload);
  Flow& f = flows_[slot];
  PREFLIGHT_CHECK(f.phase == Phase::kLatency);
  if (f.remaining == 0 || (f.path.empty() && f.cap == MaxMinSolver::kNoCap)) {
    std::vector<std::pair<int64_t, Callback>> done;
    retire(slot, &done);
    if (done.front().second) done.front().second(done.front().first, sim_->now());
    return;
  }
  begin_transfer(slot);
}

void FlowNetwork::begin_transfer(int slot) {
  Flow& f = flows_[slot];
  f.phase = Phase::kTransfer;
  f.settled_at = sim_->now();
  if (f.path.empty()) {
    // Its own cap is its only constraint: no other flow is affected, nothing to re-solve.
    f.rate = 0;
    retally(f, f.cap, true);
    f.rate = f.cap;
    predict_finish(slot);
    schedule_wake_up();
    return;
  }
  for (size_t i = 0; i < f.path.size(); ++i) {
    Resource& r = resources_[f.path[i]];
    f.position[i] = static_cast<int>(r.flows.size());
    r.flows.push_back(slot);
    mark_dirty(f.path[i]);
  }
  retally(f, 0, true);
  request_resolve();
}

void FlowNetwork::retally(Flow& f, double rate, bool joining) {
  for (int t : f.tally) {
    Resource& r = resources_[t];
    settle_resource(r);
    if (joining) ++r.tallied;
    // The last flow to leave sets it to exactly zero, so rounding does not accumulate.
    set_load(r, r.tallied == 0 ? 0.0 : std::max(0.0, r.load + (rate - f.rate)));
  }
}

void FlowNetwork::mark_dirty(int resource) {
  Resource& r = resources_[resource];
  if (r.dirty) return;
  r.dirty = true;
  dirty_.push_back(resource);
}

void FlowNetwork::request_resolve() {
  if (resolve_pending_) return;
  resolve_pending_ = true;
  // Fires after every event already scheduled at this time, so all starts and finishes of one
  // timestamp share one re-solve.
  sim_->schedule(sim_->now(), this, kResolve);
}

void FlowNetwork::settle_resource(Resource& r) {
  r.carried += r.load * (sim_->now() - r.settled_at).to_seconds();
  r.settled_at = sim_->now();
}

void FlowNetwork::settle_flow(Flow& f) {
  f.remaining = std::max(0.0, f.remaining - f.rate * (sim_->now() - f.settled_at).to_seconds());
  f.settled_at = sim_->now();
}

void FlowNetwork::predict_finish(int slot) {
  Flow& f = flows_[slot];
  ++f.version;
  completions_.push_back(
      Completion{f.settled_at + transfer_time(f.remaining, f.rate), f.id, slot, f.version});
  std::push_heap(completions_.begin(), completions_.end(), later);
}

void FlowNetwork::detach(int slot) {
  Flow& f = flows_[slot];
  // The finish time was rounded up to a picosecond (or a crumb is left): charge the resources
  // exactly the flow's bytes, not its rate over the rounded interval.
  const double excess = f.rate * (sim_->now() - f.settled_at).to_seconds() - f.remaining;
  for (size_t i = 0; i < f.path.size(); ++i) {
    Resource& r = resources_[f.path[i]];
    settle_resource(r);
    r.carried -= excess;
    const int pos = f.position[i];
    const int moved = r.flows.back();
    r.flows[pos] = moved;
    r.flows.pop_back();
    if (moved != slot) {
      Flow& m = flows_[moved];
      for (size_t j = 0; j < m.path.size(); ++j)
        if (m.path[j] == f.path[i]) m.position[j] = pos;
    }
    set_load(r, r.flows.empty() ? 0.0 : std::max(0.0, r.load - f.rate));
  }
  for (int t : f.tally) {
    Resource& r = resources_[t];
    settle_resource(r);
    r.carried -= excess;
    --r.tallied;
    set_load(r, r.tallied == 0 ? 0.0 : std::max(0.0, r.load - f.rate));
  }
}

void FlowNetwork::retire(int slot, std::vector<std::pair<int64_t, Callback>>* done) {
  Flow& f = flows_[slot];
  done->emplace_back(f.id, std::move(f.on_done));
  f.on_done = nullptr;
  f.phase = Phase::kFree;
  ++f.version;  // invalidates its pending completion, if any
  f.rate = 0;
  free_slots_.push_back(slot);
  ++flows_finished_;
}

void FlowNetwork::finish(int slot, std::vector<std::pair<int64_t, Callback>>* done) {
  Flow& f = flows_[slot];
  if (!f.path.empty() || !f.tally.empty()) detach(slot);
  if (!f.path.empty()) {
    for (int r : f.path) mark_dirty(r);
    request_resolve();
  }
  retire(slot, done);
}

bool FlowNetwork::valid(const Completion& c) const {
  const Flow& f = flows_[c.slot];
  return f.phase == Phase::kTransfer && f.version == c.version && f.id == c.id;
}

void FlowNetwork::wake_up() {
  std::pop_heap(wake_ups_.begin(), wake_ups_.end(), std::greater<>());
  wake_ups_.pop_back();
  std::vector<std::pair<int64_t, Callback>> done;
  while (!completions_.empty() && completions_.front().at <= sim_->now()) {
    std::pop_heap(completions_.begin(), completions_.end(), later);
    const Completion c = completions_.back();
    completions_.pop_back();
    if (valid(c)) finish(c.slot, &done);
  }
  // In (finish time, id) order; flows they start join this timestamp's re-solve.
  for (auto& [id, callback] : done)
    if (callback) callback(id, sim_->now());
  schedule_wake_up();
}

void FlowNetwork::schedule_wake_up() {
  while (!completions_.empty() && !valid(completions_.front())) {
    std::pop_heap(completions_.begin(), completions_.end(), later);
    completions_.pop_back();
  }
  if (completions_.empty()) return;
  const SimTime at = completions_.front().at;
  if (!wake_ups_.empty() && wake_ups_.front() <= at) return;
  wake_ups_.push_back(at);
  std::push_heap(wake_ups_.begin(), wake_ups_.end(), std::greater<>());
  sim_->schedule(at, this, kWakeUp);
}

void FlowNetwork::compact_completions() {
  const size_t live = static_cast<size_t>(flows_in_flight());
  if (completions_.size() <= 2 * live + 1024) return;
  std::erase_if(completions_, [&](const Completion& c) { return !valid(c); });
  std::make_heap(completions_.begin(), completions_.end(), later);
}

void FlowNetwork::resolve() {
  resolve_pending_ = false;
  if (dirty_.empty()) return;
  ++solves_;
  ++epoch_;
  std::vector<std::pair<int64_t, Callback>> done;
  for (int r : dirty_)
    if (resources_[r].visit != epoch_) solve_component(r, &done);
  for (int r : dirty_) resources_[r].dirty = false;
  dirty_.clear();
  compact_completions();
  schedule_wake_up();
  if (on_resolve_) on_resolve_();
  std::sort(done.begin(), done.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& [id, callback] : done)
    if (callback) callback(id, sim_->now());
}

void FlowNetwork::solve_component(int seed, std::vector<std::pair<int64_t, Callback>>* done) {
  // Collect the connected component of `seed`: resources linked through transferring flows.
  comp_resources_.clear();
  comp_flows_.clear();
  resources_[seed].visit = epoch_;
  comp_resources_.push_back(seed);
  for (size_t i = 0; i < comp_resources_.size(); ++i) {
    for (int slot : resources_[comp_resources_[i]].flows) {
      Flow& f = flows_[slot];
      if (f.visit == epoch_) continue;
      f.visit = epoch_;
      comp_flows_.push_back(slot);
      for (int r : f.path) {
        if (resources_[r].visit == epoch_) continue;
        resources_[r].visit = epoch_;
        comp_resources_.push_back(r);
      }
    }
  }
  ++components_solved_;
  resources_solved_ += static_cast<int64_t>(comp_resources_.size());
  flows_solved_ += static_cast<int64_t>(comp_flows_.size());

  // Bring bytes up to now under the old rates; flows left with a floating-point crumb are done.
  for (int r : comp_resources_) settle_resource(resources_[r]);
  size_t kept = 0;
  for (int slot : comp_flows_) {
    Flow& f = flows_[slot];
    settle_flow(f);
    if (f.remaining < kDoneBytes) {
      detach(slot);
      retire(slot, done);
    } else {
      comp_flows_[kept++] = slot;
    }
  }
  comp_flows_.resize(kept);

  solver_.clear();
  for (int r : comp_resources_) resources_[r].local = solver_.add_resource(resources_[r].capacity);
  for (int slot : comp_flows_) {
    const Flow& f = flows_[slot];
    local_path_.clear();
    for (int r : f.path) local_path_.push_back(resources_[r].local);
    solver_.add_flow(f.cap, local_path_);
  }
  solver_.solve();

  for (int r : comp_resources_) set_load(resources_[r], solver_.load(resources_[r].local));
  for (size_t k = 0; k < comp_flows_.size(); ++k) {
    Flow& f = flows_[comp_flows_[k]];
    const double rate = solver_.rate(static_cast<int>(k));
    PREFLIGHT_CHECK(rate > 0);
    if (rate == f.rate) continue;  // its predicted finish still holds
    retally(f, rate, false);
    f.rate = rate;
    predict_finish(comp_flows_[k]);
  }
}

double FlowNetwork::bytes_carried(int resource) const {
  const Resource& r = resources_[resource];
  return r.carried + r.load * (sim_->now() - r.settled_at).to_seconds();
}

double FlowNetwork::utilization(int resource) const {
  const double elapsed = sim_->now().to_seconds();
  if (elapsed <= 0) return 0;
  return bytes_carried(resource) / (resources_[resource].capacity * elapsed);
}

double FlowNetwork::load(int resource) const { return resources_[resource].load; }

double FlowNetwork::group_load(int group) const {
  PREFLIGHT_CHECK(group >= 0);
  return group < static_cast<int>(groups_.size()) ? groups_[group].load : 0.0;
}

void FlowNetwork::set_load(Resource& r, double load) {
  if (r.group >= 0) {
    Group& g = groups_[r.group];
    g.busy += (load > 0) - (r.load > 0);
    // Re-summing from zero when the group empties keeps rounding from accumulating.
    g.load = g.busy == 0 ? 0.0 : g.load + (load - r.load);
  }
  r.load = load;
}

}  // namespace preflight::flow
