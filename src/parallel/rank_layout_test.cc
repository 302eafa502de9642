#include "parallel/rank_layout.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "config/loader.h"
#include "tests/load_scenario.h"
#include "tests/placement_checks.h"

namespace preflight {
namespace {

using Groups = std::vector<std::vector<int>>;

TEST(RankLayout, GroupsOfEachKindFollowMegatronsOrder) {
  // TP 2, CP 2, DP 2, PP 2: rank = t + 2·(c + 2·(d + 2·stage)), 8 ranks a stage.
  const RankLayout l(2, 2, 2, 2, 1, 4);
  EXPECT_EQ(l.stage_ranks(), 8);
  EXPECT_EQ(l.groups(GroupKind::kTensor, 1), (Groups{{8, 9}, {10, 11}, {12, 13}, {14, 15}}));
  EXPECT_EQ(l.groups(GroupKind::kContext, 0), (Groups{{0, 2}, {1, 3}, {4, 6}, {5, 7}}));
  // Gradients: the DP ranks of both CP ranks, stride tp.
  EXPECT_EQ(l.groups(GroupKind::kData, 0), (Groups{{0, 2, 4, 6}, {1, 3, 5, 7}}));
  // Experts refold the stage's 8 ranks as etp 1 × ep 4 × edp 2.
  EXPECT_EQ(l.groups(GroupKind::kExpert, 0), (Groups{{0, 1, 2, 3}, {4, 5, 6, 7}}));
  EXPECT_EQ(l.groups(GroupKind::kExpertData, 1), (Groups{{8, 12}, {9, 13}, {10, 14}, {11, 15}}));
  EXPECT_EQ(l.groups(GroupKind::kEmbedding, 0).front(), (std::vector<int>{0, 8}));
  EXPECT_EQ(l.groups(GroupKind::kEmbedding, 0).size(), 8u);
  EXPECT_TRUE(RankLayout(2, 1, 1, 1, 1, 1).groups(GroupKind::kEmbedding, 0).empty());
}

TEST(RankLayout, MembersOfARankAreTheGroupThatHoldsIt) {
  // Every rank of every kind finds exactly the group groups() lists it in.
  const RankLayout l(2, 2, 3, 3, 2, 3);
  for (GroupKind g : {GroupKind::kTensor, GroupKind::kContext, GroupKind::kData, GroupKind::kExpert,
                      GroupKind::kExpertTensor, GroupKind::kExpertData}) {
    for (int stage = 0; stage < l.pp(); ++stage) {
      int seen = 0;
      for (const std::vector<int>& group : l.groups(g, stage)) {
        EXPECT_EQ(static_cast<int>(group.size()), l.shape(g).size);
        for (int gpu : group) {
          EXPECT_EQ(l.members(g, stage, gpu - l.rank(stage, 0)), group);
          ++seen;
        }
      }
      EXPECT_EQ(seen, l.stage_ranks()) << static_cast<int>(g);
    }
  }
}

TEST(PlaceJobGroups, DefaultScenarioTp8Pp16Dp8) {
  const JobGroups j = place_job_groups(load(""));
  expect_placement(j.tp, 8, 1, 8, 1);
  expect_placement(j.dp, 8, 8, 1, 8);         // stride tp = 8
  expect_placement(j.pp, 2, 2, 1, 8);         // stride tp·dp = 64
  expect_placement(j.embedding, 2, 2, 1, 8);  // first and last stage, 64·15 apart
}

TEST(PlaceJobGroups, PipelineInsideOneNode) {
  // TP 2, PP 4, DP 1 on 8 GPUs: stage neighbours are 2 ranks apart on the same node, and so are
  // the first and last stage ({0, 6} and {1, 7}), although their stride 6 does not divide 8.
  const JobGroups j = place_job_groups(load(R"(
model: {preset: gpt3-1.7b}
cluster: {preset: dgx-a100, nodes: 1}
training: {seq_len: 2048, global_batch: 8}
parallelism: {tp: 2, pp: 4}
)"));
  expect_placement(j.tp, 2, 1, 2, 4);
  expect_placement(j.dp, 1, 1, 1, 8);
  expect_placement(j.pp, 2, 1, 2, 4);
  EXPECT_EQ(j.embedding.size, 2);
  EXPECT_EQ(j.embedding.nodes, 1);
  EXPECT_FALSE(j.embedding.crosses_nodes());
}

TEST(PlaceJobGroups, EmbeddingPairCrossesNodesWhenTheJobDoes) {
  // TP 2, PP 4, DP 2 on two 8-GPU nodes: the first stage holds ranks 0–3, the last 12–15.
  const JobGroups j = place_job_groups(load(R"(
model: {preset: gpt3-1.7b}
cluster: {preset: dgx-a100, nodes: 2}
training: {seq_len: 2048, global_batch: 8}
parallelism: {tp: 2, pp: 4}
)"));
  expect_placement(j.dp, 2, 1, 2, 4);
  expect_placement(j.embedding, 2, 2, 1, 8);
}

}  // namespace
}  // namespace preflight
