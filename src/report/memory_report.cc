#include <cstdio>
#include <string>

#include "memory/memory_advice.h"
#include "report/report.h"

namespace preflight {

using nlohmann::json;

json memory_to_json(const Scenario& scenario, const MemoryReport& m) {
  json stages = json::array();
  json peaks = json::array();
  for (const StageMemory& s : m.stages) {
    peaks.push_back(s.peak.count());
    stages.push_back(
        json{{"stage", s.stage},
             {"weights_bytes", s.weights.count()},
             {"gradients_bytes", s.gradients.count()},
             {"optimizer_bytes", s.optimizer.count()},
             {"activations_bytes", s.activations.count()},
             {"layer_activations_bytes", s.layer_activations.count()},
             {"activations_per_microbatch_bytes", s.activations_per_microbatch.count()},
             {"microbatches_in_flight", s.microbatches_in_flight},
             {"logits_and_loss_bytes", s.logits_and_loss.count()},
             {"comm_buffers_bytes", s.comm_buffers.count()},
             {"framework_bytes", s.framework.count()},
             {"transient_bytes", s.transient.count()},
             {"steady_bytes", s.steady.count()},
             {"peak_bytes", s.peak.count()},
             {"capacity_bytes", s.capacity.count()},
             {"headroom_bytes", s.headroom.count()},
             {"fits", s.fits}});
    if (scenario.parallelism.offload_layers > 0) {
      stages.back()["offloaded_bytes"] = s.offloaded.count();
    }
  }
  return json{{"fits", m.fits},
              {"limiting_stage", m.limiting_stage},
              {"peak_bytes_per_stage", peaks},
              {"stages", stages},
              {"advice", memory_advice(scenario, m)}};
}

std::string format_memory_table(const MemoryReport& m) {
  std::string out;
  char buf[256];
  std::snprintf(buf, sizeof buf, "%-5s %8s %8s %8s %8s %8s %8s %8s %8s %8s %8s %9s  %s\n", "stage",
                "weights", "grads", "optim", "activ", "in-fl", "buffers", "framewk", "transnt",
                "peak", "HBM", "headroom", "fits");
  out += buf;
  for (const StageMemory& s : m.stages) {
    std::snprintf(buf, sizeof buf,
                  "%-5d %8.2f %8.2f %8.2f %8.2f %8d %8.2f %8.2f %8.2f %8.2f %8.2f %9.2f  %s\n",
                  s.stage, s.weights.to_gib(), s.gradients.to_gib(), s.optimizer.to_gib(),
                  s.activations.to_gib(), s.microbatches_in_flight,
                  (s.comm_buffers + s.logits_and_loss).to_gib(), s.framework.to_gib(),
                  s.transient.to_gib(), s.peak.to_gib(), s.capacity.to_gib(), s.headroom.to_gib(),
                  s.fits ? "yes" : "NO");
    out += buf;
  }
  // Activation offloading: what leaves HBM for the host (not part of the peak above).
  for (const StageMemory& s : m.stages) {
    if (s.offloaded.count() == 0) continue;
    std::snprintf(buf, sizeof buf,
                  "stage %d offloads %.2f GiB of activations per micro-batch to host memory "
                  "(parallelism.offload_layers)\n",
                  s.stage, s.offloaded.to_gib());
    out += buf;
  }
  return out;
}

}  // namespace preflight
