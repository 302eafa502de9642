#include "base/check.h"

#include <cstdio>
#include <cstdlib>

namespace preflight::internal {

void check_failed(const char* file, int line, const char* condition, const char* message) {
  std::fprintf(stderr, "preflight: internal check failed at %s:%d: %s %s\n", file, line, condition,
               message);
  std::fflush(stderr);
  std::abort();
}

}  // namespace preflight::internal
