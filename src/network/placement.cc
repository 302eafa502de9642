#include "network/placement.h"

#include <algorithm>

#include "base/check.h"

namespace preflight {

GroupPlacement place_group(int size, int stride, int gpus_per_node) {
  PREFLIGHT_CHECK(size >= 1 && stride >= 1 && gpus_per_node >= 1);
  GroupPlacement g;
  g.size = size;
  if (stride >= gpus_per_node || gpus_per_node % stride != 0) {
    g.per_node = 1;
  } else {
    g.per_node = std::min(size, gpus_per_node / stride);
  }
  g.nodes = (size + g.per_node - 1) / g.per_node;
  g.sharing_nic = std::max(1, gpus_per_node / g.per_node);
  return g;
}

}  // namespace preflight
