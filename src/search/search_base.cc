#include "search/search_base.h"

#include <cstdio>
#include <numeric>

namespace preflight {

StatusOr<Scenario> load_search_base(const ScenarioLoader& load, std::vector<std::string> overrides,
                                    double gpu_hour_price, int gpus) {
  if (gpu_hour_price >= 0) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "cluster.gpu_hour_price=%.17g", gpu_hour_price);
    overrides.push_back(buf);
  }
  PREFLIGHT_ASSIGN_OR_RETURN(Scenario base, load(overrides));
  if (gpus == 0 || gpus == base.cluster.total_gpus()) return base;
  const int per_node = base.cluster.gpus_per_node;
  if (gpus < 0 || gpus % per_node != 0) {
    return invalid_argument("--gpus " + std::to_string(gpus) +
                            ": expected a positive multiple of cluster.gpus_per_node (" +
                            std::to_string(per_node) + ")");
  }
  const int dp = std::gcd(gpus, base.training.global_batch);
  const int pp = gpus / dp;
  const int layers = base.model.layers;
  if (pp > layers) {
    return invalid_argument("--gpus " + std::to_string(gpus) + ": training.global_batch " +
                            std::to_string(base.training.global_batch) +
                            " leaves too few data-parallel replicas for " + std::to_string(layers) +
                            " layers; expected a global batch with more factors in common");
  }
  const int first = pp > 1 && layers % pp != 0 ? layers - (pp - 1) : 0;
  for (const std::string& o :
       {"cluster.nodes=" + std::to_string(gpus / per_node), "cluster.gpus=" + std::to_string(gpus),
        std::string("parallelism.tp=1"), std::string("parallelism.cp=1"),
        std::string("parallelism.ep=1"), std::string("parallelism.etp=0"),
        std::string("parallelism.vpp=1"), std::string("parallelism.schedule=1f1b"),
        std::string("parallelism.sequence_parallel=false"),
        std::string("parallelism.overlap_p2p=false"),
        std::string("parallelism.tp_comm_overlap=false"), "parallelism.dp=" + std::to_string(dp),
        "parallelism.pp=" + std::to_string(pp),
        "parallelism.first_stage_layers=" + std::to_string(first),
        std::string("parallelism.last_stage_layers=0"), std::string("training.micro_batch=1")}) {
    overrides.push_back(o);
  }
  StatusOr<Scenario> resized = load(overrides);
  if (!resized.ok()) return resized.status().with_prefix("--gpus " + std::to_string(gpus) + ": ");
  base.cluster = resized->cluster;
  return base;
}

}  // namespace preflight
