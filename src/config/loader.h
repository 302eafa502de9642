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

// The text of the scenario file at `path`: an error when it cannot be read or holds nothing.
StatusOr<std::string> read_scenario_file(const std::string& path);

// The cluster section alone of `text` (as load_scenario_text reads it, overrides applied): for
// callers that need the GPUs before the rest of the scenario can load.
StatusOr<ClusterConfig> load_scenario_cluster_text(const std::string& text,
                                                   const std::string& source,
                                                   const std::vector<std::string>& overrides);

// The simulation section alone of `text` (the cluster section read first, for its fabric), without
// checking it against the job: a straggler's rank against GPUs not yet known.
StatusOr<SimulationConfig> load_scenario_simulation_text(const std::string& text,
                                                         const std::string& source,
                                                         const std::vector<std::string>& overrides);

// Scenarios for a workload imported from a trace (a SimAI or Chakra file), whose ranks fix the
// strategy, so the scenario's own parallelism only has to not stand in the way.
enum class ImportedCluster {
  kAsGiven,  // the scenario's cluster as it is
  kOneNode,  // one node of it: the trace's rank count then sets the GPUs (interop/)
};
// As load_scenario_text when that loads. Otherwise the scenario is loaded again with a neutral
// strategy — tp = pp = cp = ep = 1, no expert TP, no interleaving, 1F1B, even stages, no
// sequence parallelism, TP comm or param-gather or p2p overlap, no ZeRO, one micro-batch —
// and dp = global batch = the cluster's GPUs (`overrides` win over the rest). When that fails too,
// or the cluster itself does not load, the first error is returned. The stragglers
// (simulation.slow_ranks) are read but not checked against the cluster's GPUs: the trace's rank
// count bounds them, and the importer checks that.
StatusOr<Scenario> load_imported_scenario_text(const std::string& text, const std::string& source,
                                               const std::vector<std::string>& overrides,
                                               ImportedCluster cluster);
// The same for the file at `path` (empty: the default scenario).
StatusOr<Scenario> load_imported_scenario(const std::string& path,
                                          const std::vector<std::string>& overrides,
                                          ImportedCluster cluster);

// Resolves a model/GPU/cluster from a preset name alone (for tools such as `collective`).
StatusOr<ModelConfig> load_model_preset(const std::string& name);
StatusOr<ClusterConfig> load_cluster_preset(const std::string& name,
                                            const std::vector<std::string>& overrides);

// A cluster preset with `cluster.*`, `collectives.*`, `simulation.packet.*` and
// `simulation.flow.*` overrides (for `preflight collective`).
struct CollectiveSetup {
  ClusterConfig cluster;
  CollectivesConfig collectives;
  PacketNetworkConfig packet;                     // simulation.packet.* (the packet network's keys)
  bool has_packet = false;                        // some simulation.packet.* key was given
  FlowRouting flow_routing = FlowRouting::kEcmp;  // simulation.flow.routing, or the fabric's
  bool has_flow = false;                          // some simulation.flow.* key was given
};
StatusOr<CollectiveSetup> load_collective_setup(const std::string& cluster_preset,
                                                const std::vector<std::string>& overrides);

}  // namespace preflight
