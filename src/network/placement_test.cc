#include "network/placement.h"

#include <gtest/gtest.h>

#include "tests/placement_checks.h"

namespace preflight {
namespace {

TEST(PlaceGroup, TensorParallel8OnAn8GpuNodeIsOneNode) {
  // Consecutive ranks (stride 1): all 8 on one node, no NIC traffic.
  expect_placement(place_group(8, 1, 8), 8, 1, 8, 1);
  expect_placement(place_group(4, 1, 8), 4, 1, 4, 2);
}

TEST(PlaceGroup, DataParallelWithTp2Has4MembersPerNode) {
  // Ranks 2 apart: 8/2 = 4 DP peers per node, and the node's 2 TP ranks each lead a DP group
  // through the same NICs. DP 16 spans 16/4 = 4 nodes.
  expect_placement(place_group(16, 2, 8), 16, 4, 4, 2);
}

TEST(PlaceGroup, DataParallelWithTp8HasOneMemberPerNode) {
  // Ranks 8 apart: one per node, and all 8 GPUs of a node run their own DP group at once.
  expect_placement(place_group(8, 8, 8), 8, 8, 1, 8);
  expect_placement(place_group(4, 16, 8), 4, 4, 1, 8);  // stride beyond a node
}

TEST(PlaceGroup, StrideThatDoesNotDivideTheNodeSpreadsOnePerNode) {
  expect_placement(place_group(4, 3, 8), 4, 4, 1, 8);
}

TEST(PlaceGroup, SmallGroupStaysInsideTheNode) {
  // DP 2 with TP 2: ranks {0, 2} share a node; min(size, 8/2) = 2 members.
  expect_placement(place_group(2, 2, 8), 2, 1, 2, 4);
  expect_placement(place_group(1, 1, 8), 1, 1, 1, 8);
}

TEST(PlaceGroup, PartialLastNodeRoundsUp) {
  // 6 members, 4 per node: 2 nodes.
  expect_placement(place_group(6, 2, 8), 6, 2, 4, 2);
}

TEST(PlaceGroupDeathTest, ZeroSizeIsACheck) { EXPECT_DEATH(place_group(0, 1, 8), "size >= 1"); }

}  // namespace
}  // namespace preflight
