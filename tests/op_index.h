// Where an op of a given name stands in a list of ops, for tests that check the order in which
// the workload generator emits kernels. Header-only; include it inside no namespace.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "workload/workload.h"

namespace preflight {

// The index of the first op named `name` in `ops`. An absent op fails the calling test (an
// ordering check must not pass on a missing kernel) and yields -1.
inline int op_index(const std::vector<Op>& ops, const std::string& name) {
  for (size_t i = 0; i < ops.size(); ++i) {
    if (ops[i].name == name) return static_cast<int>(i);
  }
  ADD_FAILURE() << "no op named " << name;
  return -1;
}

}  // namespace preflight
