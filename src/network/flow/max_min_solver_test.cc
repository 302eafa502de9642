#include "network/flow/max_min_solver.h"

#include <gtest/gtest.h>

#include <vector>

namespace preflight::flow {
namespace {

TEST(MaxMinSolver, SharesOneResourceEqually) {
  // n flows on one link of capacity C: C/n each.
  MaxMinSolver s;
  s.clear();
  const int r = s.add_resource(90);
  for (int i = 0; i < 3; ++i) s.add_flow(MaxMinSolver::kNoCap, std::vector<int>{r});
  s.solve();
  for (int f = 0; f < 3; ++f) EXPECT_DOUBLE_EQ(s.rate(f), 30);
  EXPECT_DOUBLE_EQ(s.load(r), 90);
}

TEST(MaxMinSolver, ParkingLotGivesHalfToEveryFlow) {
  // Three links of capacity C in a row, one long flow over all, one short flow per link:
  // every link carries two flows, so max-min gives C/2 to each (Bertsekas & Gallager §6.5).
  MaxMinSolver s;
  s.clear();
  const int a = s.add_resource(10), b = s.add_resource(10), c = s.add_resource(10);
  s.add_flow(MaxMinSolver::kNoCap, std::vector<int>{a, b, c});
  s.add_flow(MaxMinSolver::kNoCap, std::vector<int>{a});
  s.add_flow(MaxMinSolver::kNoCap, std::vector<int>{b});
  s.add_flow(MaxMinSolver::kNoCap, std::vector<int>{c});
  s.solve();
  for (int f = 0; f < 4; ++f) EXPECT_DOUBLE_EQ(s.rate(f), 5);
}

TEST(MaxMinSolver, HeterogeneousBottlenecks) {
  // Link A = 10, link B = 4; flow X crosses A and B, flow Y only A: X is held to 4 by B and Y
  // takes the rest of A, 6.
  MaxMinSolver s;
  s.clear();
  const int a = s.add_resource(10), b = s.add_resource(4);
  s.add_flow(MaxMinSolver::kNoCap, std::vector<int>{a, b});
  s.add_flow(MaxMinSolver::kNoCap, std::vector<int>{a});
  s.solve();
  EXPECT_DOUBLE_EQ(s.rate(0), 4);
  EXPECT_DOUBLE_EQ(s.rate(1), 6);
  EXPECT_DOUBLE_EQ(s.load(a), 10);
  EXPECT_DOUBLE_EQ(s.load(b), 4);
}

TEST(MaxMinSolver, CapsFreezeFirstAndReleaseCapacity) {
  // Link 100 shared by caps 10, 30 and an uncapped flow: 10, 30, 60 (the fair share 33.3 exceeds
  // the first cap, then 45 exceeds the second).
  MaxMinSolver s;
  s.clear();
  const int r = s.add_resource(100);
  s.add_flow(30, std::vector<int>{r});
  s.add_flow(MaxMinSolver::kNoCap, std::vector<int>{r});
  s.add_flow(10, std::vector<int>{r});
  s.solve();
  EXPECT_DOUBLE_EQ(s.rate(0), 30);
  EXPECT_DOUBLE_EQ(s.rate(1), 60);
  EXPECT_DOUBLE_EQ(s.rate(2), 10);
}

TEST(MaxMinSolver, CapAboveFairShareIsIgnored) {
  MaxMinSolver s;
  s.clear();
  const int r = s.add_resource(100);
  s.add_flow(80, std::vector<int>{r});
  s.add_flow(80, std::vector<int>{r});
  s.solve();
  EXPECT_DOUBLE_EQ(s.rate(0), 50);
  EXPECT_DOUBLE_EQ(s.rate(1), 50);
}

TEST(MaxMinSolver, FlowWithoutResourcesGetsItsCapOrInfinity) {
  MaxMinSolver s;
  s.clear();
  s.add_flow(7, {});
  s.add_flow(MaxMinSolver::kNoCap, {});
  s.solve();
  EXPECT_DOUBLE_EQ(s.rate(0), 7);
  EXPECT_EQ(s.rate(1), MaxMinSolver::kNoCap);
}

TEST(MaxMinSolver, ChainedBottlenecksFillInRounds) {
  // Textbook three-round example: L1 = 1 carries f0, f1, f2; L2 = 3 carries f2, f3; L3 = 10
  // carries f3, f4. Round 1: L1 saturates at 1/3 (f0, f1, f2). Round 2: L2 has 3 - 1/3 for f3
  // alone: 8/3. Round 3: L3 gives f4 10 - 8/3 = 22/3.
  MaxMinSolver s;
  s.clear();
  const int l1 = s.add_resource(1), l2 = s.add_resource(3), l3 = s.add_resource(10);
  s.add_flow(MaxMinSolver::kNoCap, std::vector<int>{l1});
  s.add_flow(MaxMinSolver::kNoCap, std::vector<int>{l1});
  s.add_flow(MaxMinSolver::kNoCap, std::vector<int>{l1, l2});
  s.add_flow(MaxMinSolver::kNoCap, std::vector<int>{l2, l3});
  s.add_flow(MaxMinSolver::kNoCap, std::vector<int>{l3});
  s.solve();
  EXPECT_DOUBLE_EQ(s.rate(0), 1.0 / 3);
  EXPECT_DOUBLE_EQ(s.rate(1), 1.0 / 3);
  EXPECT_DOUBLE_EQ(s.rate(2), 1.0 / 3);
  EXPECT_DOUBLE_EQ(s.rate(3), 8.0 / 3);
  EXPECT_DOUBLE_EQ(s.rate(4), 22.0 / 3);
}

TEST(MaxMinSolver, ClearReusesTheSolver) {
  MaxMinSolver s;
  s.clear();
  s.add_resource(10);
  s.add_flow(MaxMinSolver::kNoCap, std::vector<int>{0});
  s.solve();
  s.clear();
  const int r = s.add_resource(8);
  s.add_flow(MaxMinSolver::kNoCap, std::vector<int>{r});
  s.add_flow(MaxMinSolver::kNoCap, std::vector<int>{r});
  s.solve();
  EXPECT_EQ(s.num_flows(), 2);
  EXPECT_DOUBLE_EQ(s.rate(1), 4);
}

}  // namespace
}  // namespace preflight::flow
