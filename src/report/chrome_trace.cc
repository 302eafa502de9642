#include "report/report.h"

namespace preflight {

using nlohmann::json;

namespace {

const char* category_name(Category c) {
  switch (c) {
    case Category::kCompute:
      return "compute";
    case Category::kTpComm:
      return "tp_comm";
    case Category::kPpComm:
      return "pp_comm";
    case Category::kDpComm:
      return "dp_comm";
    case Category::kEpComm:
      return "ep_comm";
    case Category::kCpComm:
      return "cp_comm";
    case Category::kOptimizer:
      return "optimizer";
    case Category::kOffload:
      return "offload";
  }
  return "?";
}

}  // namespace

// Trace-event format: "X" complete events with ts/dur in microseconds; "M" metadata events name
// processes (pipeline stages; each stands for its tp·dp symmetric ranks) and threads (streams);
// "C" counters: memory per stage and, when the flow-level network ran, each link tier's
// utilization in a "network" process after the stages.
json trace_to_json(const SimulationReport& r) {
  json events = json::array();
  const Scenario& s = r.scenario;
  const int ranks_per_stage = s.parallelism.tp * s.parallelism.dp;
  for (size_t st = 0; st < r.execution.stages.size(); ++st) {
    const int first = static_cast<int>(st) * ranks_per_stage;
    events.push_back(
        json{{"ph", "M"},
             {"name", "process_name"},
             {"pid", st},
             {"args",
              {{"name", "stage " + std::to_string(st) + " (ranks " + std::to_string(first) + "-" +
                            std::to_string(first + ranks_per_stage - 1) + ")"}}}});
    events.push_back(json{
        {"ph", "M"}, {"name", "process_sort_index"}, {"pid", st}, {"args", {{"sort_index", st}}}});
    events.push_back(json{{"ph", "M"},
                          {"name", "thread_name"},
                          {"pid", st},
                          {"tid", 0},
                          {"args", {{"name", "compute stream"}}}});
    events.push_back(json{{"ph", "M"},
                          {"name", "thread_name"},
                          {"pid", st},
                          {"tid", 1},
                          {"args", {{"name", "TP communication"}}}});
    events.push_back(json{{"ph", "M"},
                          {"name", "thread_name"},
                          {"pid", st},
                          {"tid", 2},
                          {"args", {{"name", "DP communication"}}}});
    if (s.parallelism.offload_layers > 0) {
      events.push_back(json{{"ph", "M"},
                            {"name", "thread_name"},
                            {"pid", st},
                            {"tid", 3},
                            {"args", {{"name", "host copies (activation offloading)"}}}});
    }
  }
  for (const TraceInterval& t : r.execution.trace) {
    json e{{"ph", "X"},
           {"name", t.name},
           {"cat", category_name(t.category)},
           {"pid", t.stage},
           {"tid", t.stream},
           {"ts", static_cast<double>(t.start.ps()) * 1e-6},
           {"dur", static_cast<double>((t.end - t.start).ps()) * 1e-6}};
    if (t.microbatch >= 0) e["args"] = json{{"microbatch", t.microbatch}};
    events.push_back(std::move(e));
  }
  // Memory counter track per stage: allocated GiB over the iteration.
  for (const MemorySample& m : r.execution.memory_trace) {
    events.push_back(json{{"ph", "C"},
                          {"name", "memory (GiB)"},
                          {"pid", m.stage},
                          {"ts", static_cast<double>(m.time.ps()) * 1e-6},
                          {"args", {{"allocated", m.bytes.to_gib()}}}});
  }
  // Flow-level network: one counter track per link tier, its aggregate utilization over time.
  if (r.execution.has_network_stats && !r.execution.network.tiers.empty()) {
    const size_t pid = r.execution.stages.size();
    events.push_back(json{{"ph", "M"},
                          {"name", "process_name"},
                          {"pid", pid},
                          {"args", {{"name", "network (utilization per link tier)"}}}});
    events.push_back(json{{"ph", "M"},
                          {"name", "process_sort_index"},
                          {"pid", pid},
                          {"args", {{"sort_index", pid}}}});
    for (const TierSeries& t : r.execution.network.tiers) {
      for (const auto& [time, utilization] : t.points) {
        events.push_back(json{{"ph", "C"},
                              {"name", t.tier},
                              {"pid", pid},
                              {"ts", static_cast<double>(time.ps()) * 1e-6},
                              {"args", {{"utilization", utilization}}}});
      }
    }
  }
  // Packet-level network: the hottest ports' queues (KiB: slice mean and longest) and the
  // fraction of each slice flow control held them.
  if (r.execution.has_network_stats && !r.execution.network.packet.hot_ports.empty()) {
    const size_t pid = r.execution.stages.size() + 1;
    events.push_back(json{{"ph", "M"},
                          {"name", "process_name"},
                          {"pid", pid},
                          {"args", {{"name", "network (packet: hottest ports)"}}}});
    events.push_back(json{{"ph", "M"},
                          {"name", "process_sort_index"},
                          {"pid", pid},
                          {"args", {{"sort_index", pid}}}});
    for (const PortSeries& h : r.execution.network.packet.hot_ports) {
      for (const PortSeries::Point& x : h.points) {
        const double ts = static_cast<double>(x.from.ps()) * 1e-6;
        events.push_back(json{
            {"ph", "C"},
            {"name", "queue KiB " + h.port},
            {"pid", pid},
            {"ts", ts},
            {"args",
             {{"mean", x.mean_queue / 1024}, {"max", static_cast<double>(x.max_queue) / 1024}}}});
        events.push_back(json{{"ph", "C"},
                              {"name", "held " + h.port},
                              {"pid", pid},
                              {"ts", ts},
                              {"args", {{"fraction", x.held}}}});
      }
    }
  }
  json other{{"generator", "preflight"}, {"model", s.model.name}};
  // Link utilization of the flow-level network over the iteration (per tier and hottest links).
  const json report = report_to_json(r);
  if (report["network"].contains("tiers")) other["network"] = report["network"];
  return json{{"traceEvents", events}, {"displayTimeUnit", "ms"}, {"otherData", other}};
}

}  // namespace preflight
