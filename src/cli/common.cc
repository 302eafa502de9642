#include "cli/common.h"

#include <cstdio>

#include "base/text.h"

namespace preflight::cli {

int fail(const Status& s) {
  // One line whatever the input was: control bytes escaped, huge values shortened.
  std::fprintf(stderr, "preflight: error: %s\n", escape_for_message(s.message()).c_str());
  return s.code() == StatusCode::kInternal ? kExitInternal : kExitBadInput;
}

}  // namespace preflight::cli
