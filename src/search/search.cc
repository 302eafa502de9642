#include "search/search.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <thread>

#include "base/text.h"
#include "memory/memory_model.h"
#include "simulate/simulate.h"

namespace preflight {
namespace {

constexpr const char* kCheapNetwork = "analytical";
constexpr const char* kNoFit = "memory: does not fit";

std::string gib_text(Bytes b) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f GiB", b.to_gib());
  return buf;
}

// SearchOptions::headroom, the GPU's recommended one when negative.
Bytes headroom_of(const Scenario& base, const SearchOptions& options) {
  return options.headroom.count() < 0 ? recommended_headroom(base.cluster.gpu.hbm_capacity)
                                      : options.headroom;
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// Runs fn(i) for i in [0, n) on `jobs` threads. Each call owns its slot i, so the outcome does
// not depend on which thread ran it or when.
void parallel_for(int64_t n, int jobs, const std::function<void(int64_t)>& fn) {
  std::atomic<int64_t> next{0};
  auto worker = [&]() {
    for (int64_t i = next++; i < n; i = next++) fn(i);
  };
  const int extra = static_cast<int>(std::min<int64_t>(jobs, n)) - 1;
  std::vector<std::thread> threads;
  for (int t = 0; t < extra; ++t) threads.emplace_back(worker);
  worker();
  for (std::thread& t : threads) t.join();
}

// What became of one candidate at one fidelity.
struct Outcome {
  enum Kind : uint8_t { kOk = 0, kNoFit = 1, kFailed = 2 };
  int64_t index = 0;
  Kind kind = kOk;
  double iteration_time_s = 0;
  double tokens_per_s = 0;
  double mfu = 0;
  int64_t peak_bytes = 0;  // also for kNoFit
  std::string reason;      // kFailed: "simulation: <key>"
};

int64_t peak_of(const MemoryReport& m) {
  int64_t peak = 0;
  for (const StageMemory& s : m.stages) peak = std::max(peak, s.peak.count());
  return peak;
}

// A strategy fits when every stage leaves at least `headroom` of its HBM free.
Outcome evaluate(const Scenario& base, const Strategy& st, const std::string& network,
                 bool check_memory, Bytes headroom) {
  Outcome o;
  Scenario s = apply_strategy(base, st);
  s.simulation.network = network;
  // The analytical pass has no links: degraded ones weigh only in the flow re-run of the best.
  if (network == kCheapNetwork) s.simulation.degraded_links.clear();
  if (check_memory) {
    const MemoryReport m = estimate_memory(s);
    o.peak_bytes = peak_of(m);
    const bool roomy = std::all_of(m.stages.begin(), m.stages.end(), [&](const StageMemory& x) {
      return x.headroom.count() >= headroom.count();
    });
    if (!m.fits || !roomy) {
      o.kind = Outcome::kNoFit;
      return o;
    }
  }
  StatusOr<SimulationReport> r = simulate(s);
  if (!r.ok()) {
    o.kind = Outcome::kFailed;
    o.reason = "simulation: " + validation_reason(r.status()).substr(sizeof("validation: ") - 1);
    return o;
  }
  o.iteration_time_s = r->iteration_time_s;
  o.tokens_per_s = r->tokens_per_s;
  o.mfu = r->mfu;
  o.peak_bytes = peak_of(r->memory);
  return o;
}

// Outcomes travel between processes as bytes: fixed-width fields in host order (every rank of
// one job runs the same binary on the same architecture).
template <typename T>
void put(std::string* out, const T& v) {
  out->append(reinterpret_cast<const char*>(&v), sizeof v);
}
template <typename T>
bool get(const std::string& in, size_t* at, T* v) {
  if (*at + sizeof(T) > in.size()) return false;
  std::memcpy(v, in.data() + *at, sizeof(T));
  *at += sizeof(T);
  return true;
}

void serialize(const Outcome& o, std::string* out) {
  put(out, o.index);
  put(out, static_cast<uint8_t>(o.kind));
  put(out, o.iteration_time_s);
  put(out, o.tokens_per_s);
  put(out, o.mfu);
  put(out, o.peak_bytes);
  put(out, static_cast<uint32_t>(o.reason.size()));
  out->append(o.reason);
}

bool deserialize(const std::string& in, size_t* at, Outcome* o) {
  uint8_t kind = 0;
  uint32_t len = 0;
  if (!get(in, at, &o->index) || !get(in, at, &kind) || !get(in, at, &o->iteration_time_s) ||
      !get(in, at, &o->tokens_per_s) || !get(in, at, &o->mfu) || !get(in, at, &o->peak_bytes) ||
      !get(in, at, &len) || *at + len > in.size() || kind > Outcome::kFailed) {
    return false;
  }
  o->kind = static_cast<Outcome::Kind>(kind);
  o->reason = in.substr(*at, len);
  *at += len;
  return true;
}

// Smaller is better.
double objective_value(Objective objective, const StrategyResult& r) {
  switch (objective) {
    case Objective::kTime:
      return r.iteration_time_s;
    case Objective::kCost:
      return r.cost.usd_per_million_tokens;
    case Objective::kMfu:
      return -r.mfu;
  }
  return r.iteration_time_s;
}

void rank_results(Objective objective, std::vector<StrategyResult>::iterator begin,
                  std::vector<StrategyResult>::iterator end) {
  std::sort(begin, end, [objective](const StrategyResult& a, const StrategyResult& b) {
    const double va = objective_value(objective, a);
    const double vb = objective_value(objective, b);
    if (va != vb) return va < vb;
    return strategy_less(a.strategy, b.strategy);
  });
}

StrategyResult to_result(const Scenario& base, const Strategy& st, const Outcome& o,
                         const std::string& network, int64_t tokens_per_iteration) {
  StrategyResult r;
  r.strategy = st;
  r.network = network;
  r.iteration_time_s = o.iteration_time_s;
  r.tokens_per_s = o.tokens_per_s;
  r.mfu = o.mfu;
  r.peak_bytes = o.peak_bytes;
  r.cost = iteration_cost(base.cluster.total_gpus(), base.cluster.gpu_hour_price,
                          o.iteration_time_s, tokens_per_iteration);
  return r;
}

// "divisibility: ... (1,234), validation: ... (56)": the most frequent reasons first.
std::string top_reasons(const std::map<std::string, int64_t>& rejected, size_t most) {
  std::vector<std::pair<std::string, int64_t>> v(rejected.begin(), rejected.end());
  std::stable_sort(v.begin(), v.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string out;
  for (size_t i = 0; i < v.size() && i < most; ++i) {
    out += (i ? "; " : "") + v[i].first + " (" + with_commas(v[i].second) + ")";
  }
  return out;
}

Status check_options(const Scenario& base, const SearchOptions& options) {
  if (options.jobs < 1) {
    return invalid_argument("--jobs " + std::to_string(options.jobs) +
                            ": expected at least 1 worker thread");
  }
  if (options.top_k < 1) {
    return invalid_argument("--top " + std::to_string(options.top_k) +
                            ": expected at least 1 strategy to report");
  }
  if (options.objective == Objective::kCost && !(base.cluster.gpu_hour_price > 0)) {
    return invalid_argument("--objective cost: cluster " + base.cluster.name +
                            " has no gpu_hour_price; set one with --price USD or --set "
                            "cluster.gpu_hour_price=USD");
  }
  return Status();
}

}  // namespace

const char* to_string(Objective o) {
  switch (o) {
    case Objective::kTime:
      return "time";
    case Objective::kCost:
      return "cost";
    case Objective::kMfu:
      return "mfu";
  }
  return "?";
}

StatusOr<Objective> parse_objective(const std::string& name) {
  for (Objective o : {Objective::kTime, Objective::kCost, Objective::kMfu}) {
    if (name == to_string(o)) return o;
  }
  return invalid_argument("--objective " + name + ": expected time, cost or mfu");
}

std::string evaluate_share(const Scenario& base, const std::vector<Strategy>& candidates, int rank,
                           int size, const SearchOptions& options) {
  PREFLIGHT_CHECK(size >= 1 && rank >= 0 && rank < size && options.jobs >= 1);
  const int64_t n = static_cast<int64_t>(candidates.size());
  const int64_t share = n > rank ? (n - rank + size - 1) / size : 0;
  std::vector<Outcome> outcomes(share);
  std::mutex progress_mu;
  int64_t done = 0;
  parallel_for(share, options.jobs, [&](int64_t k) {
    const int64_t i = rank + k * size;
    outcomes[k] = evaluate(base, candidates[i], kCheapNetwork, /*check_memory=*/true,
                           headroom_of(base, options));
    outcomes[k].index = i;
    if (options.on_progress) {
      std::lock_guard<std::mutex> lock(progress_mu);
      options.on_progress(++done, share);
    }
  });
  std::string out;
  for (const Outcome& o : outcomes) serialize(o, &out);
  return out;
}

StatusOr<SearchResult> merge_shares(const Scenario& base, const Enumeration& enumeration,
                                    const std::vector<std::string>& shares,
                                    const SearchOptions& options) {
  PREFLIGHT_RETURN_IF_ERROR(check_options(base, options));
  const int64_t n = static_cast<int64_t>(enumeration.candidates.size());
  std::vector<Outcome> outcomes(n);
  std::vector<char> seen(n, 0);
  for (const std::string& share : shares) {
    size_t at = 0;
    Outcome o;
    while (at < share.size()) {
      if (!deserialize(share, &at, &o) || o.index < 0 || o.index >= n || seen[o.index]) {
        return internal_error("search: a process sent a malformed share of results");
      }
      seen[o.index] = 1;
      outcomes[o.index] = o;
    }
  }
  if (std::count(seen.begin(), seen.end(), 1) != n) {
    return internal_error("search: the processes' shares do not cover every candidate");
  }

  SearchResult out;
  out.gpus = base.cluster.total_gpus();
  out.tokens_per_iteration = int64_t{base.training.global_batch} * base.training.seq_len;
  out.combinations = enumeration.combinations;
  out.candidates = n;
  out.rejected = enumeration.rejected;
  int64_t least_peak = INT64_MAX;
  for (int64_t i = 0; i < n; ++i) {
    const Outcome& o = outcomes[i];
    if (o.kind == Outcome::kOk) {
      out.results.push_back(
          to_result(base, enumeration.candidates[i], o, kCheapNetwork, out.tokens_per_iteration));
    } else if (o.kind == Outcome::kNoFit) {
      ++out.rejected[kNoFit];
      least_peak = std::min(least_peak, o.peak_bytes);
    } else {
      ++out.rejected[o.reason];
    }
  }
  out.evaluated = static_cast<int64_t>(out.results.size());
  if (out.evaluated == 0) {
    const int64_t no_fit = out.rejected.count(kNoFit) ? out.rejected.at(kNoFit) : 0;
    if (no_fit == n) {
      // The states and activations of the leanest strategy spread over more GPUs shrink about
      // in proportion: a first guess of the GPU count, in whole nodes.
      const double capacity = static_cast<double>(base.cluster.gpu.hbm_capacity.count());
      const int gpn = std::max(1, base.cluster.gpus_per_node);
      const int64_t gpus = base.cluster.total_gpus();
      const double usable = std::max(
          0.5 * capacity, capacity - static_cast<double>(headroom_of(base, options).count()));
      const int64_t guess =
          (static_cast<int64_t>(std::ceil(gpus * least_peak / (0.9 * usable))) + gpn - 1) / gpn *
          gpn;
      return invalid_argument(
          "nothing fits: every one of the " + with_commas(n) + " valid strategies needs more " +
          "than the " + with_commas(base.cluster.gpu.hbm_capacity.count() >> 30) +
          " GiB of HBM per GPU less the " + gib_text(headroom_of(base, options)) +
          " --headroom (the least needs " +
          std::to_string(static_cast<int64_t>(least_peak / (1024.0 * 1024 * 1024) + 0.5)) +
          " GiB); try more GPUs (about --gpus " + with_commas(std::max(guess, gpus + gpn)) +
          " to start with), recompute, ZeRO or a smaller micro-batch (--space)");
    }
    return invalid_argument("no strategy simulates: " + top_reasons(out.rejected, 3));
  }
  rank_results(options.objective, out.results.begin(), out.results.end());

  // The best K again at the configured network.
  const std::string& network = base.simulation.network;
  if (network != kCheapNetwork) {
    const auto start = std::chrono::steady_clock::now();
    const int k = static_cast<int>(std::min<int64_t>(options.top_k, out.evaluated));
    std::vector<Outcome> again(k);
    // The candidates run side by side: a packet network's partitions take one thread each.
    Scenario one = base;
    if (options.jobs > 1) one.simulation.packet.threads = 1;
    parallel_for(k, options.jobs, [&](int64_t i) {
      again[i] = evaluate(one, out.results[i].strategy, network, /*check_memory=*/false,
                          headroom_of(one, options));
    });
    for (int i = 0; i < k; ++i) {
      if (again[i].kind != Outcome::kOk) continue;  // keeps its analytical figures
      out.results[i] =
          to_result(base, out.results[i].strategy, again[i], network, out.tokens_per_iteration);
    }
    rank_results(options.objective, out.results.begin(), out.results.begin() + k);
    out.reevaluated = k;
    out.final_network = network;
    out.reevaluate_seconds = seconds_since(start);
  }
  return out;
}

StatusOr<SearchResult> search(const Scenario& base, const SearchSpace& space,
                              const SearchOptions& options) {
  PREFLIGHT_RETURN_IF_ERROR(check_options(base, options));
  auto start = std::chrono::steady_clock::now();
  const Enumeration enumeration = enumerate_strategies(base, space);
  const double enumerate_seconds = seconds_since(start);
  if (enumeration.combinations == 0) {
    return invalid_argument(
        "empty search space: the --space axes leave no combination to try (vpp > 1 pairs "
        "only with the interleaved schedule, vpp 1 only with the others)");
  }
  if (enumeration.candidates.empty()) {
    return invalid_argument("no valid strategy: all " + with_commas(enumeration.combinations) +
                            " combinations were rejected: " + top_reasons(enumeration.rejected, 3));
  }
  start = std::chrono::steady_clock::now();
  std::unique_ptr<ProcessGroup> single;
  ProcessGroup* group = options.group;
  if (group == nullptr) {
    single = make_single_process_group();
    group = single.get();
  }
  const std::string mine =
      evaluate_share(base, enumeration.candidates, group->rank(), group->size(), options);
  const std::vector<std::string> shares = group->gather(mine);
  const double evaluate_seconds = seconds_since(start);
  if (group->rank() != 0) {
    SearchResult not_root;
    not_root.root = false;
    return not_root;
  }
  StatusOr<SearchResult> out = merge_shares(base, enumeration, shares, options);
  if (out.ok()) {
    out->enumerate_seconds = enumerate_seconds;
    out->evaluate_seconds = evaluate_seconds;
  }
  return out;
}

}  // namespace preflight
