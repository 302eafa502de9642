#include "cli/common.h"

#include <cstdio>

namespace preflight::cli {

int fail(const Status& s) {
  std::fprintf(stderr, "preflight: error: %s\n", s.message().c_str());
  return s.code() == StatusCode::kInternal ? kExitInternal : kExitBadInput;
}

}  // namespace preflight::cli
