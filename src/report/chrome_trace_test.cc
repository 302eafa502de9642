#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "config/loader.h"
#include "report/report.h"

namespace preflight {
namespace {

SimulationReport run(const std::string& network) {
  StatusOr<Scenario> s =
      load_scenario_text("", "",
                         {"model.preset=gpt3-13b", "cluster.preset=dgx-h100", "cluster.nodes=4",
                          "parallelism.tp=8", "parallelism.pp=2", "parallelism.dp=2",
                          "training.global_batch=16", "simulation.network=" + network});
  EXPECT_TRUE(s.ok()) << s.status().message();
  SimulateOptions options;
  options.trace = TraceLevel::kBlocks;
  StatusOr<SimulationReport> r = simulate(*s, options);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return *r;
}

// Counter events of the process named "network ...", by counter name.
std::set<std::string> network_counters(const nlohmann::json& trace, int* events) {
  int pid = -1;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "process_name" &&
        e["args"]["name"].get<std::string>().rfind("network", 0) == 0) {
      pid = e["pid"].get<int>();
    }
  }
  std::set<std::string> names;
  *events = 0;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] != "C" || e["pid"].get<int>() != pid) continue;
    names.insert(e["name"].get<std::string>());
    ++*events;
  }
  return names;
}

TEST(ChromeTrace, FlowNetworkRunHasLinkTierCounterTracks) {
  const SimulationReport r = run("flow");
  int events = 0;
  const std::set<std::string> names = network_counters(trace_to_json(r), &events);
  EXPECT_TRUE(names.count("nic_leaf")) << events;
  EXPECT_TRUE(names.count("host_nic"));
  EXPECT_GT(events, 10);
  EXPECT_LE(events, 501 * 5);
}

TEST(ChromeTrace, PacketNetworkRunHasHotPortCounterTracks) {
  const SimulationReport r = run("packet");
  const nlohmann::json trace = trace_to_json(r);
  int events = 0;
  const std::set<std::string> names = network_counters(trace, &events);
  ASSERT_FALSE(names.empty());
  size_t queues = 0, held = 0;
  for (const std::string& n : names) {
    queues += n.rfind("queue KiB ", 0) == 0;
    held += n.rfind("held ", 0) == 0;
  }
  EXPECT_GE(queues, 1u);
  EXPECT_EQ(queues, held);
  EXPECT_LE(events, 6 * 2 * 256);  // at most six ports, 256 slices each
  // The JSON holds the same ports, each series' columns of one length.
  const nlohmann::json ports = report_to_json(r)["network"]["packet"]["hot_ports"];
  ASSERT_FALSE(ports.empty());
  for (const auto& p : ports) {
    const size_t n = p["series"]["from_s"].size();
    EXPECT_GT(n, 0u);
    EXPECT_LE(n, 256u);
    EXPECT_EQ(p["series"]["mean_queue_bytes"].size(), n);
    EXPECT_EQ(p["series"]["max_queue_bytes"].size(), n);
    EXPECT_EQ(p["series"]["held_fraction"].size(), n);
  }
}

// The summary's collective table: on a fabric it adds each collective's achieved busBw (the
// planned figure scaled by planned over executed time: below it under contention, above it
// where the fabric moves the bytes faster than the collective model's calibrated time); the
// analytical network, which executes the plan, has no such column.
TEST(Summary, FabricRunsShowTheAchievedBusBwOfEachCollective) {
  const SimulationReport r = run("flow");
  const std::string flow = format_summary(r);
  EXPECT_NE(flow.find("busBw GB/s   achieved"), std::string::npos) << flow;
  for (const CollectiveStats& c : r.execution.stages[r.execution.critical_stage].collectives) {
    if (c.count == 0) continue;
    EXPECT_GT(c.achieved_busbw_gbps(), 0) << c.name;
    EXPECT_NEAR(c.achieved_busbw_gbps() * c.time.to_seconds(),
                c.busbw_gbps * c.planned_time.to_seconds(), 1e-9 * c.busbw_gbps)
        << c.name;
  }
  EXPECT_EQ(format_summary(run("analytical")).find("achieved"), std::string::npos);
}

TEST(ChromeTrace, AnalyticalRunHasNoNetworkProcess) {
  const SimulationReport r = run("analytical");
  const nlohmann::json trace = trace_to_json(r);
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "process_name") {
      EXPECT_NE(e["args"]["name"].get<std::string>().rfind("network", 0), 0u);
    }
  }
  EXPECT_FALSE(trace["otherData"].contains("network"));
}

}  // namespace
}  // namespace preflight
