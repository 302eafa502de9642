#include "report/chakra_report.h"

#include <cstdio>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "report/report.h"

namespace preflight {
namespace {

double us(SimTime t) { return static_cast<double>(t.ps()) * 1e-6; }

}  // namespace

std::string format_chakra_summary(const ChakraReplayResult& r, const ChakraWorkload& w,
                                  const Scenario& s) {
  char buf[512];
  std::string out;
  std::snprintf(buf, sizeof buf,
                "Chakra workload  %s.<rank>.et: %zu ranks, %lld nodes, %zu "
                "communicator groups\n",
                w.prefix.c_str(), w.ranks.size(), static_cast<long long>(r.nodes), w.groups.size());
  out += buf;
  std::snprintf(buf, sizeof buf, "Cluster          %s: %d nodes x %d %s (%s network)\n",
                s.cluster.name.c_str(), s.cluster.nodes, s.cluster.gpus_per_node,
                s.cluster.gpu.name.c_str(), r.has_network_stats ? "flow-level" : "analytical");
  out += buf;
  std::snprintf(buf, sizeof buf, "Iteration time   %.6f s (rank %d finishes last)\n",
                r.iteration_time.to_seconds(), r.critical_rank);
  out += buf;
  std::snprintf(buf, sizeof buf,
                "Replayed         %lld collectives, %lld point-to-point "
                "transfers\n",
                static_cast<long long>(r.collectives), static_cast<long long>(r.messages));
  out += buf;
  for (const SlowRank& x : s.simulation.slow_ranks) {
    std::snprintf(buf, sizeof buf, "Slow rank        rank %d: GPU nodes x%.2f%s\n", x.rank,
                  x.factor, window_text(x.from, x.until).c_str());
    out += buf;
  }
  if (r.has_network_stats) {
    std::snprintf(buf, sizeof buf,
                  "Network          %lld flows, %lld rate solves; link tiers "
                  "(mean / peak utilization):",
                  static_cast<long long>(r.network.flows),
                  static_cast<long long>(r.network.solves));
    out += buf;
    for (const TierSeries& t : r.network.tiers) {
      std::snprintf(buf, sizeof buf, " %s %.1f%% / %.1f%%", t.tier.c_str(), 100 * t.mean,
                    100 * t.peak);
      out += buf;
    }
    out += "\n";
  }
  const ChakraRankResult& c = r.ranks[static_cast<size_t>(r.critical_rank)];
  const Breakdown& b = c.breakdown;
  out += "\nWhere rank " + std::to_string(r.critical_rank) + "'s time goes (ms)\n";
  const std::pair<const char*, SimTime> rows[] = {{"compute", b.compute},
                                                  {"optimizer", b.optimizer},
                                                  {"exposed TP comm", b.tp_comm},
                                                  {"exposed PP comm", b.pp_comm},
                                                  {"exposed DP comm", b.dp_comm},
                                                  {"exposed EP comm", b.ep_comm},
                                                  {"exposed CP comm", b.cp_comm},
                                                  {"exposed comm (no category)", b.other_comm},
                                                  {"exposed offload", b.offload},
                                                  {"CPU only", b.host_overhead},
                                                  {"idle (waiting for other ranks)", b.bubble}};
  for (const auto& [name, t] : rows) {
    if (t.ps() == 0 && std::string(name) != "compute") continue;
    std::snprintf(buf, sizeof buf, "  %-32s %12.3f  %5.1f%%\n", name, us(t) * 1e-3,
                  100.0 * static_cast<double>(t.ps()) /
                      static_cast<double>(std::max<int64_t>(1, c.end.ps())));
    out += buf;
  }
  // ASTRA-sim's per-rank figures: wall, GPU time, communication time, exposed communication
  // (wall − GPU time).
  out += "\nPer rank (ms): wall, GPU busy, communication busy, exposed communication\n";
  const size_t shown = std::min<size_t>(r.ranks.size(), 16);
  for (size_t i = 0; i < shown; ++i) {
    const ChakraRankResult& k = r.ranks[i];
    std::snprintf(buf, sizeof buf, "  rank %-5zu %12.3f %12.3f %12.3f %12.3f\n", i,
                  us(k.end) * 1e-3, us(k.gpu_busy) * 1e-3, us(k.comm_busy) * 1e-3,
                  us(k.end - k.gpu_busy) * 1e-3);
    out += buf;
  }
  if (shown < r.ranks.size()) {
    out += "  ... " + std::to_string(r.ranks.size() - shown) + " more ranks in --json\n";
  }
  return out;
}

std::string chakra_result_json(const ChakraReplayResult& r, const ChakraWorkload& w,
                               const Scenario& s) {
  using nlohmann::json;
  auto sec = [](SimTime t) { return t.to_seconds(); };
  auto breakdown = [&](const Breakdown& b) {
    json j{{"compute_s", sec(b.compute)},   {"optimizer_s", sec(b.optimizer)},
           {"tp_comm_s", sec(b.tp_comm)},   {"pp_comm_s", sec(b.pp_comm)},
           {"dp_comm_s", sec(b.dp_comm)},   {"ep_comm_s", sec(b.ep_comm)},
           {"cp_comm_s", sec(b.cp_comm)},   {"other_comm_s", sec(b.other_comm)},
           {"cpu_s", sec(b.host_overhead)}, {"idle_s", sec(b.bubble)}};
    // Host copies of activation offloading (category offload), only in traces that have them.
    if (b.offload.ps() > 0) j["offload_s"] = sec(b.offload);
    return j;
  };
  json ranks = json::array();
  for (size_t i = 0; i < r.ranks.size(); ++i) {
    const ChakraRankResult& k = r.ranks[i];
    ranks.push_back(json{{"rank", i},
                         {"end_s", sec(k.end)},
                         {"gpu_busy_s", sec(k.gpu_busy)},
                         {"comm_busy_s", sec(k.comm_busy)},
                         {"exposed_comm_s", sec(k.end - k.gpu_busy)},
                         {"nodes", k.nodes},
                         {"breakdown", breakdown(k.breakdown)}});
  }
  json j{{"workload", "chakra:" + w.prefix},
         {"ranks", w.ranks.size()},
         {"nodes", r.nodes},
         {"groups", w.groups.size()},
         {"iteration_time_s", sec(r.iteration_time)},
         {"critical_rank", r.critical_rank},
         {"collectives", r.collectives},
         {"messages", r.messages},
         {"events", r.events},
         {"cluster",
          {{"name", s.cluster.name},
           {"nodes", s.cluster.nodes},
           {"gpus_per_node", s.cluster.gpus_per_node},
           {"gpu", s.cluster.gpu.name}}},
         {"breakdown", breakdown(r.ranks[static_cast<size_t>(r.critical_rank)].breakdown)},
         {"per_rank", ranks}};
  j["network"] = {{"backend", r.has_network_stats ? "flow" : "analytical"}};
  if (r.has_network_stats) {
    json tiers = json::array();
    for (const TierSeries& t : r.network.tiers) {
      tiers.push_back(
          json{{"tier", t.tier}, {"mean_utilization", t.mean}, {"peak_utilization", t.peak}});
    }
    j["network"]["flows"] = r.network.flows;
    j["network"]["rate_solves"] = r.network.solves;
    j["network"]["tiers"] = tiers;
  }
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::string chakra_trace_events(const ChakraReplayResult& r) {
  using nlohmann::json;
  json events = json::array();
  std::set<std::pair<int, int>> threads;
  for (size_t rank = 0; rank < r.ranks.size(); ++rank) {
    events.push_back(json{{"ph", "M"},
                          {"name", "process_name"},
                          {"pid", rank},
                          {"args", {{"name", "rank " + std::to_string(rank)}}}});
  }
  for (const TraceInterval& t : r.trace) {
    const int tid = t.stream + 2;  // 0 sends/receives, 1 CPU, 2.. GPU streams
    if (threads.emplace(t.stage, tid).second) {
      const std::string name = t.stream == -2   ? "send/recv"
                               : t.stream == -1 ? "CPU"
                                                : "stream " + std::to_string(t.stream);
      events.push_back(json{{"ph", "M"},
                            {"name", "thread_name"},
                            {"pid", t.stage},
                            {"tid", tid},
                            {"args", {{"name", name}}}});
    }
    events.push_back(json{{"ph", "X"},
                          {"name", t.name},
                          {"pid", t.stage},
                          {"tid", tid},
                          {"ts", us(t.start)},
                          {"dur", us(t.end - t.start)}});
  }
  return json{{"traceEvents", events}, {"displayTimeUnit", "ms"}}.dump(
             -1, ' ', false, nlohmann::json::error_handler_t::replace) +
         "\n";
}

}  // namespace preflight
