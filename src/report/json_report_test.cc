#include <gtest/gtest.h>

#include <string>

#include "config/loader.h"
#include "report/report.h"

namespace preflight {
namespace {

nlohmann::json network_json(const std::string& network) {
  StatusOr<Scenario> s =
      load_scenario_text("", "",
                         {"model.preset=gpt3-13b", "cluster.preset=dgx-h100", "cluster.nodes=4",
                          "parallelism.tp=8", "parallelism.pp=2", "parallelism.dp=2",
                          "training.global_batch=16", "simulation.network=" + network});
  EXPECT_TRUE(s.ok()) << s.status().message();
  StatusOr<SimulationReport> r = simulate(*s);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return report_to_json(*r)["network"];
}

TEST(JsonReport, FlowNetworkReportsLoadPerTier) {
  const nlohmann::json n = network_json("flow");
  for (const char* key : {"backend", "flows", "rate_solves", "tiers", "hottest_links"}) {
    EXPECT_TRUE(n.contains(key)) << key;
  }
  ASSERT_TRUE(n.contains("tier_load"));
  ASSERT_TRUE(n["tier_load"].contains("nic_leaf"));
  const nlohmann::json& t = n["tier_load"]["nic_leaf"];
  // 4 nodes × 8 NICs, each link 50 GB/s per direction, both directions.
  EXPECT_DOUBLE_EQ(t["capacity_gbps"].get<double>(), 4 * 8 * 50 * 2);
  EXPECT_GT(t["mean_utilization"].get<double>(), 0);
  EXPECT_GE(t["peak_utilization"].get<double>(), t["mean_utilization"].get<double>());
  EXPECT_GT(t["trace_points"].get<int>(), 1);
}

TEST(JsonReport, AnalyticalNetworkNamesOnlyTheBackend) {
  const nlohmann::json n = network_json("analytical");
  EXPECT_EQ(n, (nlohmann::json{{"backend", "analytical"}}));
}

}  // namespace
}  // namespace preflight
