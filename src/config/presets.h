// The preset registry: YAML files under presets/ (gpus/, clusters/, models/, scenarios/),
// compiled into the binary at build time, so `preflight` needs no files at run time.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

#include "base/status.h"

namespace preflight {

struct PresetInfo {
  std::string kind;  // "gpus", "clusters", "models", "scenarios"
  std::string name;
  std::string description;
};

// The parsed preset `name` of `kind`, or NotFound naming the known presets of that kind.
StatusOr<YAML::Node> find_preset(const std::string& kind, const std::string& name);

// The raw YAML text of a preset, or NotFound.
StatusOr<std::string> preset_text(const std::string& kind, const std::string& name);

// Every preset, ordered by kind then name.
std::vector<PresetInfo> list_presets();

}  // namespace preflight
