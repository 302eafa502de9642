// Scenario loading: YAML text (a file, or the built-in default) plus `--set key.path=value`
// overrides, with presets resolved per section (a section may name a `preset`, give fields
// inline, or both; inline fields override the preset's). Every error is one line naming the
// source, the key path, the value and what was expected.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "config/scenario.h"

namespace preflight {

// Parses `text` (from `source`, used in messages), applies `overrides` ("a.b=c"), resolves presets
// and validates. Empty `text` means the built-in default scenario. `parallelism.dp: auto` (or no
// dp) resolves to GPUs / (tp·cp·pp), an error when that does not divide; the Scenario holds the
// resolved count.
StatusOr<Scenario> load_scenario_text(const std::string& text, const std::string& source,
                                      const std::vector<std::string>& overrides);

// Reads the file at `path` (or the default scenario when `path` is empty) then as above.
StatusOr<Scenario> load_scenario(const std::string& path,
                                 const std::vector<std::string>& overrides);

// Resolves a model/GPU/cluster from a preset name alone (for tools such as `collective`).
StatusOr<ModelConfig> load_model_preset(const std::string& name);
StatusOr<ClusterConfig> load_cluster_preset(const std::string& name,
                                            const std::vector<std::string>& overrides);

// A cluster preset with `cluster.*` and `collectives.*` overrides (for `preflight collective`).
struct CollectiveSetup {
  ClusterConfig cluster;
  CollectivesConfig collectives;
};
StatusOr<CollectiveSetup> load_collective_setup(const std::string& cluster_preset,
                                                const std::vector<std::string>& overrides);

}  // namespace preflight
