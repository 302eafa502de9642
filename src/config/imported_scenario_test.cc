#include <gtest/gtest.h>

#include <string>

#include "config/loader.h"

namespace preflight {
namespace {

TEST(LoadImportedScenario, AScenarioThatLoadsKeepsItsStrategy) {
  StatusOr<Scenario> s = load_imported_scenario_text("", "", {}, ImportedCluster::kAsGiven);
  ASSERT_TRUE(s.ok()) << s.status().message();
  StatusOr<Scenario> plain = load_scenario_text("", "", {});
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(s->parallelism.tp, plain->parallelism.tp);
  EXPECT_EQ(s->parallelism.pp, plain->parallelism.pp);
  EXPECT_EQ(s->training.global_batch, plain->training.global_batch);
}

TEST(LoadImportedScenario, AStrategyThatDoesNotFitGivesWayToANeutralOne) {
  // The default job (TP 8 × PP 16 × DP 8) does not fit 2 nodes of 8 GPUs.
  ASSERT_FALSE(load_scenario_text("", "", {"cluster.nodes=2"}).ok());
  StatusOr<Scenario> s =
      load_imported_scenario_text("", "", {"cluster.nodes=2"}, ImportedCluster::kAsGiven);
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->cluster.nodes, 2);
  EXPECT_EQ(s->parallelism.tp, 1);
  EXPECT_EQ(s->parallelism.pp, 1);
  EXPECT_EQ(s->parallelism.vpp, 1);
  EXPECT_EQ(s->parallelism.dp, 16);
  EXPECT_EQ(s->training.global_batch, 16);
  EXPECT_EQ(s->training.micro_batch, 1);
  EXPECT_FALSE(s->parallelism.sequence_parallel);
}

TEST(LoadImportedScenario, OneNodeTakesOneNodesGpus) {
  StatusOr<Scenario> s =
      load_imported_scenario_text("", "", {"cluster.nodes=2"}, ImportedCluster::kOneNode);
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->cluster.nodes, 1);
  EXPECT_EQ(s->parallelism.dp, s->cluster.gpus_per_node);
}

TEST(LoadImportedScenario, AnErrorTheStrategyDoesNotCauseIsTheFirstError) {
  StatusOr<Scenario> first = load_scenario_text("", "", {"cluster.nodes=2", "model.layers=0"});
  ASSERT_FALSE(first.ok());
  StatusOr<Scenario> s = load_imported_scenario_text("", "", {"cluster.nodes=2", "model.layers=0"},
                                                     ImportedCluster::kAsGiven);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().message(), first.status().message());
  // A cluster that does not load either.
  StatusOr<Scenario> c =
      load_imported_scenario_text("", "", {"cluster.nodes=0"}, ImportedCluster::kAsGiven);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("cluster.nodes"), std::string::npos) << c.status().message();
}

TEST(LoadImportedScenario, AFileThatIsMissingOrEmptyIsAnError) {
  StatusOr<Scenario> s =
      load_imported_scenario("/nonexistent/scenario.yaml", {}, ImportedCluster::kAsGiven);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("cannot open"), std::string::npos);
}

TEST(LoadScenarioClusterText, ReadsTheClusterWithOverridesBeforeTheRestLoads) {
  StatusOr<ClusterConfig> c = load_scenario_cluster_text("", "", {"cluster.nodes=3"});
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->nodes, 3);
  EXPECT_GT(c->gpus_per_node, 0);
  EXPECT_FALSE(load_scenario_cluster_text("cluster: [", "x.yaml", {}).ok());
}

}  // namespace
}  // namespace preflight
