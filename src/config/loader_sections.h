// The scenario loader's pieces shared by its files (loader.cc reads the whole scenario;
// model_section.cc and cluster_section.cc read one section each). Internal to config/: callers
// outside use config/loader.h.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>

#include "base/status.h"
#include "config/scenario.h"

namespace preflight {
namespace loader_internal {

// Writes `over` into `base`: mappings merge key by key (recursively), anything else replaces.
void deep_merge(YAML::Node base, const YAML::Node& over);

// Merges section `node` over its preset (`kind`: models, clusters, gpus, stacks), if it names
// one. Inline keys win; nested mappings (e.g. a cluster's `gpu.calibration`) merge key by key.
// `path` is the section's key path for errors.
StatusOr<YAML::Node> resolve_preset(const YAML::Node& node, const std::string& kind,
                                    const std::string& source, const std::string& path);

// `model` (already merged over its preset): the transformer, model.moe, model.mla, model.mamba.
Status read_model(const YAML::Node& node, const std::string& source, ModelConfig* m);

// The cluster section over its preset. An inline `gpus` without `nodes` sets the node count, so
// the preset's default `nodes` is dropped rather than reported as a contradiction.
StatusOr<YAML::Node> resolve_cluster(const YAML::Node& node, const std::string& source);

// `cluster` (resolved): nodes, the GPU (over its preset) and its calibration, NICs, topology.
Status read_cluster(const YAML::Node& node, const std::string& source, ClusterConfig* c);

}  // namespace loader_internal
}  // namespace preflight
