// Scenarios for imported workloads (loader.h: load_imported_scenario_text).
#include <string>
#include <vector>

#include "config/loader.h"

namespace preflight {

StatusOr<Scenario> load_imported_scenario_text(const std::string& text, const std::string& source,
                                               const std::vector<std::string>& overrides,
                                               ImportedCluster cluster) {
  // Stragglers are read apart: the trace's ranks bound them (the importer checks), not the GPUs
  // of the cluster this loads, which the trace resizes.
  StatusOr<SimulationConfig> simulation = load_scenario_simulation_text(text, source, overrides);
  if (!simulation.ok()) return simulation.status();
  std::vector<std::string> own = overrides;
  own.push_back("simulation.slow_ranks=[]");
  auto with_stragglers = [&](StatusOr<Scenario> s) {
    if (s.ok()) s->simulation.slow_ranks = simulation->slow_ranks;
    return s;
  };
  StatusOr<Scenario> first = load_scenario_text(text, source, own);
  if (first.ok()) return with_stragglers(std::move(first));
  std::vector<std::string> o = {"parallelism.tp=1",
                                "parallelism.pp=1",
                                "parallelism.cp=1",
                                "parallelism.ep=1",
                                "parallelism.etp=0",
                                "parallelism.vpp=1",
                                "parallelism.schedule=1f1b",
                                "parallelism.first_stage_layers=0",
                                "parallelism.last_stage_layers=0",
                                "parallelism.sequence_parallel=false",
                                "parallelism.tp_comm_overlap=false",
                                "parallelism.overlap_param_gather=false",
                                "parallelism.overlap_p2p=false",
                                "parallelism.zero_stage=0",
                                "training.micro_batch=1"};
  o.insert(o.end(), own.begin(), own.end());
  if (cluster == ImportedCluster::kOneNode) o.push_back("cluster.nodes=1");
  StatusOr<ClusterConfig> c = load_scenario_cluster_text(text, source, o);
  if (!c.ok()) return first;
  const std::string gpus = std::to_string(c->total_gpus());
  // After the user's overrides, so that a dp or global batch among them that does not fit
  // gives way, as the file's own does.
  o.push_back("parallelism.dp=" + gpus);
  o.push_back("training.global_batch=" + gpus);
  StatusOr<Scenario> s = load_scenario_text(text, source, o);
  return s.ok() ? with_stragglers(std::move(s)) : first;
}

StatusOr<Scenario> load_imported_scenario(const std::string& path,
                                          const std::vector<std::string>& overrides,
                                          ImportedCluster cluster) {
  if (path.empty()) return load_imported_scenario_text("", "", overrides, cluster);
  PREFLIGHT_ASSIGN_OR_RETURN(std::string text, read_scenario_file(path));
  return load_imported_scenario_text(text, path, overrides, cluster);
}

}  // namespace preflight
