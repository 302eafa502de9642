// FlowNetwork: a flow-level (fluid) network model driven by a Simulator. Resources are directed
// link channels with a capacity in bytes/s; a flow carries a byte count along a path of
// resources, optionally under its own rate cap. A flow first waits its latency (paid up front and
// without loading any link, as SimGrid's network models do), then shares its resources with the
// other transferring flows under max-min fairness (progressive filling, max_min_solver.h):
//   finish = start + latency + time to move `bytes` at the (piecewise constant) max-min rate.
// Rates are recomputed only for the connected component of resources touched by flows that
// started or finished, once per timestamp however many changed (docs/flow_network.md).
// Owns its flows; the Simulator is borrowed and must outlive this object. Not thread-safe; runs
// are deterministic (same calls, same finish times, bit for bit).
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <utility>
#include <vector>

#include "base/units.h"
#include "engine/simulator.h"
#include "network/flow/max_min_solver.h"

namespace preflight::flow {

class FlowNetwork final : public EventHandler {
 public:
  // Called once per flow when its last byte arrives: the flow's id and the finish time (= now).
  using Callback = std::function<void(int64_t flow, SimTime finish)>;
  // Pass as a flow's cap for "no cap of its own".
  static constexpr Bandwidth kNoCap =
      Bandwidth::bytes_per_second(std::numeric_limits<double>::infinity());

  // REQUIRES: sim outlives this object, and this object outlives its pending events (destroy it
  // only once sim->run() has returned or together with the simulator).
  explicit FlowNetwork(Simulator* sim);
  FlowNetwork(const FlowNetwork&) = delete;
  FlowNetwork& operator=(const FlowNetwork&) = delete;

  // Adds a resource and returns its id (0, 1, 2, ... in call order). `group` (>= 0, or -1 for
  // none) adds the resource's load to group_load(group), e.g. to follow a link tier over time.
  // REQUIRES: capacity is finite and > 0.
  int add_resource(Bandwidth capacity, int group = -1);

  // Changes `resource`'s capacity from now on (a link that degrades, fails over to a slower
  // path or recovers): the flows crossing it are re-solved at this timestamp under the new
  // capacity, the bytes they moved so far kept at their old rates. utilization() then divides
  // by the current capacity. REQUIRES: a valid id; capacity finite and > 0.
  void set_capacity(int resource, Bandwidth capacity);
  // The resource's current capacity, bytes/s.
  double capacity(int resource) const { return resources_[resource].capacity; }

  // Called after every re-solve (at most once per timestamp, after the rates of that time are
  // set and before the completion callbacks of flows it finished run); empty: none.
  void set_on_resolve(std::function<void()> on_resolve) { on_resolve_ = std::move(on_resolve); }

  // Starts a flow now (sim->now()) of `bytes` along `path` (resource ids, each at most once; an
  // empty path has infinite bandwidth), which begins to load its links after `latency`, never
  // exceeds `cap` (kNoCap: no cap of its own), and calls on_done(id, finish) exactly once, from
  // a simulator event (never from inside this call).
  // A zero-byte flow, or one with an empty path and no cap, finishes at now + latency.
  // Returns the flow's id (0, 1, 2, ... in call order). on_done may start new flows, or be empty.
  // `tally` (resource ids, none on `path`) are loaded by the flow's rate and carry its bytes in
  // the statistics, but neither limit it nor join it to other flows in a solve: resources the
  // caller knows can never be a bottleneck.
  // REQUIRES: bytes >= 0, latency >= 0, cap > 0, valid distinct resource ids.
  int64_t start_flow(Bytes bytes, std::vector<int> path, SimTime latency, Bandwidth cap,
                     Callback on_done, std::vector<int> tally = {});

  // Statistics, all as of sim->now().
  // Bytes carried by `resource` so far (flows' bytes integrated over their rates).
  double bytes_carried(int resource) const;
  // bytes_carried / (capacity · now); 0 at time zero.
  double utilization(int resource) const;
  // Current Σ of the rates of the flows crossing `resource` (bytes/s).
  double load(int resource) const;
  // Current Σ of load() over the resources of `group` (exactly 0 when none carries a flow).
  double group_load(int group) const;
  int64_t flows_started() const { return flows_started_; }
  int64_t flows_finished() const { return flows_finished_; }
  // Flows started and not yet finished (in latency or transfer phase).
  int64_t flows_in_flight() const { return flows_started_ - flows_finished_; }
  // Rate recomputations: one per timestamp at which flows started or finished on links.
  int64_t solves() const { return solves_; }
  // Connected components re-solved, and the resources and flows they held, summed over solves
  // (a start or finish re-solves only its own component, so these measure incremental work).
  int64_t components_solved() const { return components_solved_; }
  int64_t resources_solved() const { return resources_solved_; }
  int64_t flows_solved() const { return flows_solved_; }
  int num_resources() const { return static_cast<int>(resources_.size()); }

  // EventHandler: resolve, completion wake-up and end-of-latency events (payload says which).
  void on_event(int64_t payload) override;

 private:
  enum class Phase : uint8_t { kFree, kLatency, kTransfer };
  struct Flow {
    int64_t id = -1;
    Phase phase = Phase::kFree;
    uint32_t version = 0;       // bumped whenever `finish` is recomputed (heap invalidation)
    double remaining = 0;       // bytes left as of `settled_at`
    double rate = 0;            // bytes/s since `settled_at`
    double cap = 0;             // bytes/s, +inf for none
    SimTime settled_at;         // when `remaining` was last brought up to date
    std::vector<int> path;      // resource ids
    std::vector<int> position;  // index of this flow in resources_[path[i]].flows
    std::vector<int> tally;     // resource ids loaded by its rate, outside the solve
    Callback on_done;
    uint32_t visit = 0;  // solve epoch that last collected this flow
  };
  struct Resource {
    double capacity = 0;  // bytes/s
    double load = 0;      // Σ rates of its transferring flows, bytes/s
    double carried = 0;   // bytes carried up to `settled_at`
    SimTime settled_at;
    std::vector<int> flows;  // slots of its transferring flows
    bool dirty = false;      // a flow joined or left since the last solve
    uint32_t visit = 0;      // solve epoch that last collected this resource
    int local = 0;           // index in the solver during a solve
    int group = -1;          // add_resource's group
    int tallied = 0;         // transferring flows that count it in their `tally`
  };
  struct Completion {
    SimTime at;
    int64_t id;
    int slot;
    uint32_t version;
  };
  // Min-heap order: earlier finish first, then the lower flow id.
  static bool later(const Completion& a, const Completion& b) {
    return a.at != b.at ? a.at > b.at : a.id > b.id;
  }

  void begin_transfer(int slot);
  void resolve();
  void solve_component(int seed, std::vector<std::pair<int64_t, Callback>>* done);
  void settle_resource(Resource& r);
  void settle_flow(Flow& f);
  // Moves flow `f`'s tally resources from its current rate to `rate` (joining: from 0).
  void retally(Flow& f, double rate, bool joining);
  void predict_finish(int slot);
  void wake_up();
  // Removes a transferring flow from its resources' lists, charging them its bytes up to now.
  void detach(int slot);
  // Frees the slot of a finished flow and hands its callback to `done`.
  void retire(int slot, std::vector<std::pair<int64_t, Callback>>* done);
  void finish(int slot, std::vector<std::pair<int64_t, Callback>>* done);
  bool valid(const Completion& c) const;
  void mark_dirty(int resource);
  void request_resolve();
  void schedule_wake_up();
  void compact_completions();
  // Sets r.load, keeping its group's sum up to date.
  void set_load(Resource& r, double load);

  Simulator* sim_;
  std::vector<Resource> resources_;
  std::vector<Flow> flows_;  // slots; free ones are listed in free_slots_
  std::vector<int> free_slots_;
  std::vector<int> dirty_;               // resources with dirty == true
  std::vector<Completion> completions_;  // heap, lazily invalidated by Flow::version
  std::vector<SimTime> wake_ups_;        // pending wake-up events (min-heap of times)
  bool resolve_pending_ = false;
  uint32_t epoch_ = 0;
  MaxMinSolver solver_;
  std::function<void()> on_resolve_;
  struct Group {
    double load = 0;  // Σ loads of its resources
    int busy = 0;     // its resources with a load > 0
  };
  std::vector<Group> groups_;
  // Scratch for one component.
  std::vector<int> comp_resources_;
  std::vector<int> comp_flows_;
  std::vector<int> local_path_;

  int64_t next_id_ = 0;
  int64_t flows_started_ = 0;
  int64_t flows_finished_ = 0;
  int64_t solves_ = 0;
  int64_t components_solved_ = 0;
  int64_t resources_solved_ = 0;
  int64_t flows_solved_ = 0;
};

// Time to move `bytes` at `rate` bytes/s, rounded up to the next picosecond so that a flow never
// finishes early (the only seconds -> SimTime conversion of the flow model). A relative slack of
// 1e-14 absorbs floating-point noise, so exact quotients stay exact.
// REQUIRES: bytes >= 0, rate > 0, result below ~106 days.
SimTime transfer_time(double bytes, double rate);

}  // namespace preflight::flow
