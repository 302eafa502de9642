#include "sweep/sweep.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <string>
#include <vector>

#include "report/sweep_report.h"

namespace preflight {
namespace {

// A small, fast base: GPT-3 1.7B on 2 DGX A100 nodes (TP 2, PP 2, DP 4).
const std::vector<std::string> kBase = {
    "model.preset=gpt3-1.7b", "cluster.preset=dgx-a100",   "cluster.nodes=2",
    "parallelism.tp=2",       "parallelism.pp=2",          "parallelism.dp=4",
    "parallelism.vpp=1",      "parallelism.schedule=1f1b", "training.global_batch=32",
    "training.seq_len=2048",  "training.micro_batch=1"};

SweepAxis axis(const std::string& spec) {
  StatusOr<SweepAxis> a = parse_sweep_axis(spec);
  EXPECT_TRUE(a.ok()) << a.status().message();
  return a.ok() ? *a : SweepAxis{};
}

TEST(ParseSweepAxis, SplitsValuesOnCommas) {
  const SweepAxis a = axis("cluster.nic_bandwidth=100Gbps,200Gbps,400Gbps");
  EXPECT_EQ(a.key, "cluster.nic_bandwidth");
  EXPECT_EQ(a.values, (std::vector<std::string>{"100Gbps", "200Gbps", "400Gbps"}));
  EXPECT_EQ(axis("cluster.gpu=H20").values, std::vector<std::string>{"H20"});
}

TEST(ParseSweepAxis, RejectsMalformedSpecsNamingThem) {
  for (const char* bad : {"cluster.gpu", "=H20", "cluster.gpu=", "parallelism.tp=1,,2",
                          "parallelism.tp=2,", "parallelism.tp=2,4,2"}) {
    StatusOr<SweepAxis> a = parse_sweep_axis(bad);
    ASSERT_FALSE(a.ok()) << bad;
    EXPECT_NE(a.status().message().find(bad), std::string::npos) << a.status().message();
  }
}

TEST(SweepPoints, IsTheCrossProductWithTheLastAxisFastest) {
  const std::vector<SweepAxis> axes = {{"a", {"1", "2"}}, {"b", {"x", "y", "z"}}};
  const std::vector<std::vector<int>> p = sweep_points(axes);
  ASSERT_EQ(p.size(), 6u);
  EXPECT_EQ(p[0], (std::vector<int>{0, 0}));
  EXPECT_EQ(p[1], (std::vector<int>{0, 1}));
  EXPECT_EQ(p[3], (std::vector<int>{1, 0}));
  EXPECT_EQ(p[5], (std::vector<int>{1, 2}));
  EXPECT_EQ(sweep_points({}).size(), 1u);
}

TEST(RunSweep, FasterNicsGiveSpeedupsOverTheFirstPoint) {
  SweepOptions o;
  StatusOr<SweepResult> r =
      run_sweep("", kBase, {axis("cluster.nic_bandwidth=25Gbps,100Gbps,400Gbps")}, o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->points.size(), 3u);
  for (const SweepPoint& p : r->points) {
    ASSERT_TRUE(p.status.ok()) << p.status.message();
    EXPECT_GT(p.iteration_time_s, 0);
    EXPECT_GT(p.tokens_per_s, 0);
    EXPECT_GT(p.peak_bytes, 0);
    EXPECT_TRUE(p.fits);
  }
  EXPECT_EQ(r->points[0].speedup, 1.0);
  // DP all-reduces cross the NICs: more bandwidth, never slower, and faster from 25 Gb/s.
  EXPECT_GT(r->points[1].speedup, 1.0);
  EXPECT_GE(r->points[2].speedup, r->points[1].speedup);
  EXPECT_EQ(r->points[2].values, std::vector<std::string>{"400Gbps"});
  EXPECT_DOUBLE_EQ(r->points[2].speedup,
                   r->points[0].iteration_time_s / r->points[2].iteration_time_s);
  // One strategy at every point: the table has no strategy column.
  EXPECT_EQ(format_sweep_table(*r).find("strategy"), std::string::npos);
}

TEST(RunSweep, IsIdenticalForAnyThreadCount) {
  const std::vector<SweepAxis> axes = {axis("cluster.gpu=A100-SXM4-80GB,H100-SXM5-80GB"),
                                       axis("training.micro_batch=1,2,4")};
  SweepOptions one, four;
  four.jobs = 4;
  StatusOr<SweepResult> a = run_sweep("", kBase, axes, one);
  StatusOr<SweepResult> b = run_sweep("", kBase, axes, four);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(sweep_to_csv(*a), sweep_to_csv(*b));
  EXPECT_EQ(format_sweep_table(*a), format_sweep_table(*b));
}

TEST(RunSweep, ABadKeyOrValueIsAnErrorNamingIt) {
  SweepOptions o;
  StatusOr<SweepResult> r = run_sweep("", kBase, {axis("cluster.nic_bw=100Gbps")}, o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("--vary cluster.nic_bw=100Gbps"), std::string::npos)
      << r.status().message();
  EXPECT_NE(r.status().message().find("unknown key"), std::string::npos);

  r = run_sweep("", kBase, {axis("cluster.nic_bandwidth=100Gbps,100")}, o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("--vary cluster.nic_bandwidth=100:"), std::string::npos)
      << r.status().message();

  r = run_sweep("", kBase, {axis("a.b=1"), axis("a.b=2")}, o);
  EXPECT_FALSE(r.ok());  // the same key twice
}

TEST(RunSweep, APointThatFailsAloneKeepsItsErrorAndTheOthersRun) {
  // TP 2 · PP 2 · DP 4 = 16 GPUs: valid on 2 nodes of 8, not on 2 nodes of 4.
  SweepOptions o;
  StatusOr<SweepResult> r = run_sweep(
      "", kBase, {axis("cluster.gpus_per_node=8,4"), axis("training.micro_batch=1,2")}, o);
  ASSERT_FALSE(r.ok());  // gpus_per_node=4 fails at every point: a bad value for this scenario

  r = run_sweep("", kBase, {axis("parallelism.tp=2,4"), axis("parallelism.dp=4,2")}, o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->points.size(), 4u);
  EXPECT_TRUE(r->points[0].status.ok());   // TP 2 DP 4
  EXPECT_FALSE(r->points[1].status.ok());  // TP 2 DP 2: 8 GPUs of 16
  EXPECT_FALSE(r->points[2].status.ok());  // TP 4 DP 4: 32 GPUs
  EXPECT_TRUE(r->points[3].status.ok());   // TP 4 DP 2
  EXPECT_TRUE(std::isnan(r->points[1].speedup));
  const std::string table = format_sweep_table(*r);
  EXPECT_NE(table.find("error: "), std::string::npos) << table;
  const std::string csv = sweep_to_csv(*r);
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 5);
}

TEST(SweepJson, RowsHaveTheCsvFieldsWithNumbersAsNumbers) {
  SweepOptions o;
  StatusOr<SweepResult> r = run_sweep("", kBase,
                                      {axis("parallelism.tp=2,4"), axis("parallelism.dp=4,2"),
                                       axis("cluster.nic_bandwidth=100Gbps,400Gbps")},
                                      o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const nlohmann::ordered_json j = sweep_to_json(*r);
  ASSERT_TRUE(j.is_array());
  ASSERT_EQ(j.size(), 8u);
  // The fields of the CSV header, in its order.
  std::string fields;
  for (const auto& [k, v] : j[0].items()) fields += (fields.empty() ? "" : ",") + k;
  const std::string csv = sweep_to_csv(*r);
  EXPECT_EQ(fields, csv.substr(0, csv.find('\n')));
  // TP 2 · PP 2 · DP 4 runs on the 16 GPUs; TP 2 · DP 2 needs 8 and fails with its error.
  const auto& ok = j[1];
  EXPECT_EQ(ok["parallelism.tp"], 2);  // all values are numbers: a number
  EXPECT_EQ(ok["cluster.nic_bandwidth"], "400Gbps");
  EXPECT_EQ(ok["tp"], 2);
  EXPECT_EQ(ok["dp"], 4);
  EXPECT_EQ(ok["recompute"], to_string(r->points[1].scenario.parallelism.recompute));
  EXPECT_EQ(ok["iteration_time_s"].get<double>(), r->points[1].iteration_time_s);
  EXPECT_EQ(ok["speedup"].get<double>(), r->points[1].speedup);
  EXPECT_TRUE(ok["peak_memory_bytes"].is_number_integer());
  EXPECT_EQ(ok["peak_memory_bytes"], r->points[1].peak_bytes);
  EXPECT_EQ(ok["fits"], true);
  EXPECT_TRUE(ok["error"].is_null());
  const auto& failed = j[2];
  EXPECT_EQ(failed["parallelism.dp"], 2);
  ASSERT_FALSE(r->points[2].status.ok());
  EXPECT_TRUE(failed["iteration_time_s"].is_null());
  EXPECT_TRUE(failed["speedup"].is_null());
  EXPECT_TRUE(failed["tp"].is_null());
  EXPECT_EQ(failed["error"], r->points[2].status.message());
  EXPECT_EQ(failed.size(), ok.size());
}

TEST(RunSweep, DpAutoScalesWithTheNodeCountAndTp) {
  // dp: auto = GPUs / (tp · pp): 1, 2, 4 nodes of 8 at TP 2 · PP 2 give DP 2, 4, 8; an explicit
  // dp (kBase's 4) loads on 2 nodes only.
  std::vector<std::string> base = kBase;
  base.push_back("parallelism.dp=auto");
  SweepOptions o;
  StatusOr<SweepResult> r = run_sweep("", base, {axis("cluster.nodes=1,2,4")}, o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->points.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    const SweepPoint& p = r->points[i];
    ASSERT_TRUE(p.status.ok()) << p.values[0] << ": " << p.status.message();
    EXPECT_EQ(p.scenario.parallelism.dp, 2 << i) << p.values[0];
    EXPECT_GT(p.tokens_per_s, 0);
  }
  // More replicas of the same global batch: each iteration is shorter.
  EXPECT_GT(r->points[2].speedup, r->points[1].speedup);
  EXPECT_GT(r->points[1].speedup, 1.0);
  const std::string csv = sweep_to_csv(*r);
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 4);  // the header and a row per point
  // The strategies differ, so the table shows them.
  const std::string table = format_sweep_table(*r);
  EXPECT_NE(table.find("strategy"), std::string::npos) << table;
  EXPECT_NE(table.find("TP2 PP2 DP8 mb1"), std::string::npos) << table;

  // TP 2, 4, 8 on 2 nodes: DP 4, 2, 1.
  r = run_sweep("", base, {axis("parallelism.tp=2,4,8")}, o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->points.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    ASSERT_TRUE(r->points[i].status.ok()) << r->points[i].status.message();
    EXPECT_EQ(r->points[i].scenario.parallelism.dp, 4 >> i);
  }

  // With kBase's dp 4, 1 node fails at every point, an error that suggests dp: auto.
  r = run_sweep("", kBase, {axis("cluster.nodes=1,2,4")}, o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("--vary cluster.nodes=1: "), std::string::npos)
      << r.status().message();
  EXPECT_NE(r.status().message().find("or dp: auto"), std::string::npos) << r.status().message();
}

TEST(RunSweep, CallsTheStrategyFinderOncePerPointAndSimulatesItsChoice) {
  std::atomic<int> calls{0};
  SweepOptions o;
  o.jobs = 2;
  o.find_strategy = [&calls](const Scenario& s) -> StatusOr<Scenario> {
    ++calls;
    Scenario best = s;
    best.training.micro_batch = 2;  // the "best" strategy: micro-batch 2
    return best;
  };
  StatusOr<SweepResult> r =
      run_sweep("", kBase, {axis("cluster.nic_bandwidth=100Gbps,200Gbps,400Gbps")}, o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(calls.load(), 3);
  EXPECT_TRUE(r->searched);
  for (const SweepPoint& p : r->points) EXPECT_EQ(p.scenario.training.micro_batch, 2);
  EXPECT_NE(format_sweep_table(*r).find("TP2 PP2 DP4 mb2"), std::string::npos);
}

TEST(RunSweep, AFailedSearchIsThePointsError) {
  SweepOptions o;
  o.find_strategy = [](const Scenario&) -> StatusOr<Scenario> {
    return invalid_argument("search: nothing fits");
  };
  StatusOr<SweepResult> r = run_sweep("", kBase, {axis("cluster.nic_bandwidth=100Gbps")}, o);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->points[0].status.message(), "search: nothing fits");
}

TEST(SweepChart, TheLastKeyIsTheLegend) {
  SweepResult r;
  r.axes = {{"cluster.gpu", {"H100", "H20"}}, {"cluster.nic_bandwidth", {"200Gbps", "400Gbps"}}};
  for (const auto& [gpu, nic, t] :
       std::vector<std::tuple<std::string, std::string, double>>{{"H100", "200Gbps", 8},
                                                                 {"H100", "400Gbps", 7},
                                                                 {"H20", "200Gbps", 20},
                                                                 {"H20", "400Gbps", 19}}) {
    SweepPoint p;
    p.values = {gpu, nic};
    p.iteration_time_s = t;
    p.tokens_per_s = 1000 / t;
    r.points.push_back(p);
  }
  const BarChart c = sweep_chart(r, SweepMetric::kIterationTime, "t");
  EXPECT_EQ(c.categories, (std::vector<std::string>{"H100", "H20"}));
  ASSERT_EQ(c.series.size(), 2u);
  EXPECT_EQ(c.series[1].name, "400Gbps");
  EXPECT_EQ(c.series[1].values, (std::vector<double>{7, 19}));
  EXPECT_EQ(c.legend_title, "cluster.nic_bandwidth");
  EXPECT_EQ(c.x_label, "cluster.gpu");
  EXPECT_EQ(sweep_chart(r, SweepMetric::kTokensPerSecond, "t").series[0].values[0], 125);
}

}  // namespace
}  // namespace preflight
