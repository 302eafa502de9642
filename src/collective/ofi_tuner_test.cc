#include "collective/ofi_tuner.h"

#include <gtest/gtest.h>

#include <string>

namespace preflight::nccl {
namespace {

OfferedPairs everything() {
  OfferedPairs o{};
  for (auto& row : o) row.fill(true);
  return o;
}

std::string pick(Coll c, int64_t bytes, int ranks, int nodes,
                 const OfferedPairs& offered = everything()) {
  const auto p = tuner_choice("aws-ofi-p6", c, bytes, ranks, nodes, offered);
  if (!p) return "nccl";
  return std::string(to_string(p->algo)) + "/" + to_string(p->proto);
}

constexpr int64_t kMiB = 1 << 20;

TEST(RegionContains, InsideOnTheEdgeAndOutsideOfASquare) {
  const TunerPoint sq[] = {{0, 0}, {10, 0}, {10, 10}, {0, 10}};
  EXPECT_EQ(region_contains(sq, 4, {5, 5}), 1);
  EXPECT_EQ(region_contains(sq, 4, {10, 5}), 0);
  EXPECT_EQ(region_contains(sq, 4, {0, 0}), 0);
  EXPECT_EQ(region_contains(sq, 4, {11, 5}), -1);
  EXPECT_EQ(region_contains(sq, 4, {5, -1}), -1);
  // A region that wraps a hole through a slit (the plugin's NVLS-tree regions wrap the ring
  // LL128 region that way): the hole is outside by the even-odd rule.
  const TunerPoint ring[] = {{0, 0}, {10, 0}, {10, 10}, {0, 10}, {0, 4},
                             {4, 4}, {4, 6},  {6, 6},   {6, 4},  {0, 4}};
  EXPECT_EQ(region_contains(ring, 10, {5, 5}), -1);
  EXPECT_EQ(region_contains(ring, 10, {8, 8}), 1);
  EXPECT_EQ(region_contains(ring, 10, {2, 8}), 1);
}

TEST(AwsOfiP6Tuner, AllReduceOn4NodesFollowsItsRegions) {
  // aws-ofi-nccl's region_init_internal_p6 at 32 ranks: tree LL to 384 KiB, tree LL128 to
  // 17.5 MiB, ring LL128 to 127.5 MiB, the NVLS tree to 415 MiB, ring Simple above.
  EXPECT_EQ(pick(Coll::kAllReduce, 64 << 10, 32, 4), "Tree/LL");
  EXPECT_EQ(pick(Coll::kAllReduce, 384 << 10, 32, 4), "Tree/LL");
  EXPECT_EQ(pick(Coll::kAllReduce, 512 << 10, 32, 4), "Tree/LL128");
  EXPECT_EQ(pick(Coll::kAllReduce, 16 * kMiB, 32, 4), "Tree/LL128");
  EXPECT_EQ(pick(Coll::kAllReduce, 32 * kMiB, 32, 4), "Ring/LL128");
  EXPECT_EQ(pick(Coll::kAllReduce, 64 * kMiB, 32, 4), "Ring/LL128");
  EXPECT_EQ(pick(Coll::kAllReduce, 128 * kMiB, 32, 4), "NVLSTree/Simple");
  EXPECT_EQ(pick(Coll::kAllReduce, 256 * kMiB, 32, 4), "NVLSTree/Simple");
  EXPECT_EQ(pick(Coll::kAllReduce, 512 * kMiB, 32, 4), "Ring/Simple");
  EXPECT_EQ(pick(Coll::kAllReduce, 4096 * kMiB, 32, 4), "Ring/Simple");
  // 8 nodes (64 ranks): ring LL128 from 48.5 to 114.5 MiB, the NVLS tree to 1023 MiB.
  EXPECT_EQ(pick(Coll::kAllReduce, 64 * kMiB, 64, 8), "Ring/LL128");
  EXPECT_EQ(pick(Coll::kAllReduce, 512 * kMiB, 64, 8), "NVLSTree/Simple");
  EXPECT_EQ(pick(Coll::kAllReduce, 2048 * kMiB, 64, 8), "Ring/Simple");
}

TEST(AwsOfiP6Tuner, AllGatherAndReduceScatter) {
  EXPECT_EQ(pick(Coll::kAllGather, 512 << 10, 32, 4), "Ring/LL");
  EXPECT_EQ(pick(Coll::kAllGather, 64 * kMiB, 32, 4), "Ring/LL128");
  EXPECT_EQ(pick(Coll::kAllGather, 1024 * kMiB, 32, 4), "Ring/Simple");
  EXPECT_EQ(pick(Coll::kReduceScatter, 512 << 10, 32, 4), "Ring/LL");
  EXPECT_EQ(pick(Coll::kReduceScatter, 64 * kMiB, 32, 4), "Ring/LL128");
  EXPECT_EQ(pick(Coll::kReduceScatter, 1024 * kMiB, 32, 4), "Ring/Simple");
}

TEST(AwsOfiP6Tuner, LeavesTheChoiceToNcclWhereItHasNone) {
  // Two nodes or fewer, another rank layout, a collective without regions, another tuner.
  EXPECT_EQ(pick(Coll::kAllReduce, 64 * kMiB, 16, 2), "nccl");
  EXPECT_EQ(pick(Coll::kAllReduce, 64 * kMiB, 16, 4), "nccl");
  EXPECT_EQ(pick(Coll::kBroadcast, 64 * kMiB, 32, 4), "nccl");
  EXPECT_FALSE(tuner_choice("", Coll::kAllReduce, 64 * kMiB, 32, 4, everything()).has_value());
  // A pair NCCL does not offer is passed over: without NVLS the 256 MiB point falls to the next
  // region that holds it, or to NCCL.
  OfferedPairs no_nvls = everything();
  no_nvls[static_cast<int>(Algo::kNvlsTree)].fill(false);
  EXPECT_NE(pick(Coll::kAllReduce, 256 * kMiB, 32, 4, no_nvls), "NVLSTree/Simple");
  EXPECT_TRUE(is_known_tuner("aws-ofi-p6"));
  EXPECT_FALSE(is_known_tuner("aws-ofi-p5"));
}

}  // namespace
}  // namespace preflight::nccl
