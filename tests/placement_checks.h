// A group's placement on nodes (network/placement.h) checked field by field, for the tests of
// the placement itself and of the rank layout that feeds it. Header-only; include it inside no
// namespace.
#pragma once

#include <gtest/gtest.h>

#include "network/placement.h"

namespace preflight {

inline void expect_placement(const GroupPlacement& g, int size, int nodes, int per_node,
                             int sharing) {
  EXPECT_EQ(g.size, size);
  EXPECT_EQ(g.nodes, nodes);
  EXPECT_EQ(g.per_node, per_node);
  EXPECT_EQ(g.sharing_nic, sharing);
  EXPECT_EQ(g.crosses_nodes(), nodes > 1);
}

}  // namespace preflight
