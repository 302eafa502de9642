// The scenario a test's YAML text (plus `--set`-style overrides) describes, for tests that build
// their cases from text. A loader error fails the calling test and yields the default scenario,
// so the test goes on and reports every failure. Header-only; include it inside no namespace.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "config/loader.h"

namespace preflight {

inline Scenario load(const std::string& yaml, const std::vector<std::string>& overrides = {}) {
  StatusOr<Scenario> s = load_scenario_text(yaml, "test.yaml", overrides);
  EXPECT_TRUE(s.ok()) << s.status().message();
  return s.ok() ? *s : Scenario{};
}

}  // namespace preflight
