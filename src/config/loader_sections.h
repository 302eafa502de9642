// The scenario loader's pieces shared by its files (loader.cc reads the whole scenario;
// model_section.cc, cluster_section.cc and job_sections.cc read one section each). Internal to
// config/: callers outside use config/loader.h.
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

// `training` (with its stack over the stack preset, and LoRA against model `m`).
Status read_training(const YAML::Node& node, const std::string& source, const ModelConfig& m,
                     TrainingConfig* t);

// `parallelism`, except the pipeline split (resolve_pipeline_split) and dp: auto (build()).
Status read_parallelism(const YAML::Node& node, const std::string& source, ParallelismConfig* p);

// The layers of each virtual stage from parallelism.pipeline_layout, the account_for_* flags,
// or Megatron-Bridge's uneven split (config/pipeline_layout.h), against s->model.
Status resolve_pipeline_split(const YAML::Node& node, const std::string& source, Scenario* s);

// `collectives`: NCCL's algorithm, protocol and channel overrides, the model, NVLS and PXN.
Status read_collectives(const YAML::Node& node, const std::string& source, CollectivesConfig* c);

// `compute`: the compute model and its kernel table (read here, relative to the scenario file's
// folder when `source` is a file).
Status read_compute(const YAML::Node& node, const std::string& source, ComputeConfig* c);

// `simulation`: the network backend and the seed; `fabric` is the cluster's (cluster.fabric),
// the packet network's default link layer.
Status read_simulation(const YAML::Node& node, const std::string& source, LinkLayer fabric,
                       SimulationConfig* s);
// simulation.packet (its keys only; the caller checks that the network is the packet one);
// link_layer defaults to `fabric`. A null node gives the defaults.
Status read_packet(const YAML::Node& node, const std::string& source, LinkLayer fabric,
                   PacketNetworkConfig* p);

}  // namespace loader_internal
}  // namespace preflight
