#include "config/scenario.h"

#include <algorithm>

namespace preflight {
namespace {

std::string str(int64_t v) { return std::to_string(v); }

}  // namespace

FlopRate GpuConfig::peak_for(Precision p) const {
  switch (p) {
    case Precision::kFp16:
      return peak_fp16.flops_per_second() > 0 ? peak_fp16 : peak_bf16;
    case Precision::kBf16:
      return peak_bf16.flops_per_second() > 0 ? peak_bf16 : peak_fp16;
    case Precision::kFp8:
      if (peak_fp8.flops_per_second() > 0) return peak_fp8;
      return peak_bf16.flops_per_second() > 0 ? peak_bf16 : peak_fp16;
  }
  return peak_bf16;
}

namespace {

// Hardware figures far outside any real part are typos (a unit off by 10^9) and would make
// simulated times overflow; reject them with the plausible range.
Status check_hardware_ranges(const ClusterConfig& c) {
  const GpuConfig& g = c.gpu;
  const GpuCalibration& k = g.calibration;
  auto too_small = [](const std::string& key, const std::string& what) {
    return invalid_argument(key + ": " + what);
  };
  if (std::max(g.peak_fp16.flops_per_second(), g.peak_bf16.flops_per_second()) < 1e12) {
    return too_small("cluster.gpu.peak", "expected an fp16 or bf16 peak of at least 1TFLOPS");
  }
  if (g.hbm_bandwidth.bytes_per_second() < 1e9) {
    return too_small("cluster.gpu.hbm_bandwidth", "expected at least 1GB/s");
  }
  if (c.nvlink_bandwidth.bytes_per_second() < 1e9) {
    return too_small("cluster.nvlink_bandwidth", "expected at least 1GB/s");
  }
  if (c.nodes > 1 && c.nic_bandwidth.bytes_per_second() < 1e8 / 8) {
    return too_small("cluster.nic_bandwidth", "expected at least 100Mbps");
  }
  const SimTime one_second = SimTime::seconds(1);
  if (k.launch_overhead > one_second || k.kernel_gap > one_second ||
      k.collective_latency > one_second || k.collective_step_latency > one_second ||
      c.network_latency > one_second) {
    return invalid_argument(
        "cluster.gpu.calibration: launch_overhead, kernel_gap, collective latencies and "
        "cluster.network_latency: expected at most 1s each");
  }
  return Status();
}

}  // namespace

std::vector<int> stage_layers(const Scenario& s) {
  const ParallelismConfig& p = s.parallelism;
  const int fixed = (p.first_stage_layers > 0) + (p.last_stage_layers > 0);
  if (fixed == 0) return std::vector<int>(p.pp, s.model.layers / p.pp);
  const int rest = s.model.layers - p.first_stage_layers - p.last_stage_layers;
  const int middle = p.pp - fixed;
  std::vector<int> out(p.pp, middle > 0 ? rest / middle : 0);
  if (p.first_stage_layers > 0) out.front() = p.first_stage_layers;
  if (p.last_stage_layers > 0) out.back() = p.last_stage_layers;
  return out;
}

Status validate_scenario(const Scenario& s) {
  PREFLIGHT_RETURN_IF_ERROR(check_hardware_ranges(s.cluster));
  const ModelConfig& m = s.model;
  const ParallelismConfig& p = s.parallelism;
  const TrainingConfig& t = s.training;
  const int gpus = s.cluster.total_gpus();
  // Products of the int fields are taken in int64; one of three may still overflow.
  const int64_t tp_pp = int64_t{p.tp} * p.pp;
  int64_t tp_pp_dp = 0;
  const bool overflow = __builtin_mul_overflow(tp_pp, p.dp, &tp_pp_dp);
  if (overflow || tp_pp_dp != gpus) {
    return invalid_argument(
        "parallelism: tp·pp·dp = " + str(p.tp) + "·" + str(p.pp) + "·" + str(p.dp) + " = " +
        (overflow ? "over 2^63" : str(tp_pp_dp)) + ": expected the cluster's GPU count, " +
        str(gpus) + " (" + str(s.cluster.nodes) + " nodes × " + str(s.cluster.gpus_per_node) + ")");
  }
  if (m.heads % p.tp != 0) {
    return invalid_argument("parallelism.tp: " + str(p.tp) + ": expected a divisor of " +
                            "model.heads (" + str(m.heads) + ")");
  }
  if (m.kv_heads % p.tp != 0 && p.tp % m.kv_heads != 0) {
    return invalid_argument("parallelism.tp: " + str(p.tp) + ": expected a divisor or multiple " +
                            "of model.kv_heads (" + str(m.kv_heads) + ")");
  }
  if (m.ffn_hidden % p.tp != 0) {
    return invalid_argument("parallelism.tp: " + str(p.tp) + ": expected a divisor of " +
                            "model.ffn_hidden (" + str(m.ffn_hidden) + ")");
  }
  const bool uneven = p.first_stage_layers > 0 || p.last_stage_layers > 0;
  if (uneven) {
    const int fixed = (p.first_stage_layers > 0) + (p.last_stage_layers > 0);
    const int rest = m.layers - p.first_stage_layers - p.last_stage_layers;
    const int middle = p.pp - fixed;
    if (p.vpp > 1) {
      return invalid_argument("parallelism.first_stage_layers: uneven stages need vpp 1 (vpp " +
                              str(p.vpp) + ")");
    }
    if (p.pp < 2 || (fixed == 2 && p.pp == 2 && rest != 0) || rest < middle ||
        (middle > 0 && rest % middle != 0) || (middle == 0 && rest != 0)) {
      return invalid_argument(
          "parallelism.first_stage_layers/last_stage_layers: " + str(p.first_stage_layers) + "/" +
          str(p.last_stage_layers) + " of model.layers " + str(m.layers) + " on pp " + str(p.pp) +
          ": expected the remaining layers to split evenly over the other stages, "
          "at least one each");
    }
  } else if (m.layers % (int64_t{p.pp} * p.vpp) != 0) {
    return invalid_argument("parallelism.pp: " + str(p.pp) + " stages × vpp " + str(p.vpp) +
                            ": expected to divide model.layers (" + str(m.layers) +
                            "), or set parallelism.first_stage_layers / last_stage_layers");
  }
  // Past this check micro_batch·dp <= global_batch, so num_microbatches() cannot overflow.
  if (t.global_batch % (int64_t{t.micro_batch} * p.dp) != 0) {
    return invalid_argument("training.global_batch: " + str(t.global_batch) +
                            ": expected a multiple of micro_batch × dp = " + str(t.micro_batch) +
                            " × " + str(p.dp) + " = " + str(int64_t{t.micro_batch} * p.dp));
  }
  if (s.num_microbatches() > 100000) {
    return invalid_argument("training.global_batch: " + str(t.global_batch) + " gives " +
                            str(s.num_microbatches()) +
                            " micro-batches per pipeline: expected at most 100000 (raise "
                            "training.micro_batch or parallelism.dp)");
  }
  if (p.vpp > 1 && p.schedule != Schedule::kInterleaved) {
    return invalid_argument("parallelism.vpp: " + str(p.vpp) +
                            ": virtual stages need schedule: interleaved");
  }
  if (p.schedule == Schedule::kInterleaved) {
    if (p.pp < 2) {
      return invalid_argument("parallelism.schedule: interleaved: expected pp >= 2");
    }
    if (s.num_microbatches() % p.pp != 0) {
      return invalid_argument("parallelism.schedule: interleaved: the number of micro-batches (" +
                              str(s.num_microbatches()) + ") must be a multiple of pp (" +
                              str(p.pp) + ") as in Megatron");
    }
  }
  if (p.sequence_parallel && p.tp == 1) {
    return invalid_argument("parallelism.sequence_parallel: true: expected tp > 1");
  }
  if (p.sequence_parallel && t.seq_len % p.tp != 0) {
    return invalid_argument("training.seq_len: " + str(t.seq_len) +
                            ": expected a multiple of tp with sequence parallelism");
  }
  if (t.precision == Precision::kFp8 && s.cluster.gpu.peak_fp8.flops_per_second() <= 0) {
    return invalid_argument("training.precision: fp8: " + s.cluster.gpu.name +
                            " has no FP8 tensor cores; expected fp16 or bf16");
  }
  return Status();
}

const char* to_string(Activation a) { return a == Activation::kGelu ? "gelu" : "swiglu"; }
const char* to_string(Norm n) { return n == Norm::kLayerNorm ? "layernorm" : "rmsnorm"; }
const char* to_string(PositionEmbedding p) {
  switch (p) {
    case PositionEmbedding::kLearned:
      return "learned";
    case PositionEmbedding::kRope:
      return "rope";
    case PositionEmbedding::kAlibi:
      return "alibi";
  }
  return "?";
}
const char* to_string(Precision p) {
  switch (p) {
    case Precision::kFp16:
      return "fp16";
    case Precision::kBf16:
      return "bf16";
    case Precision::kFp8:
      return "fp8";
  }
  return "?";
}
const char* to_string(Recompute r) {
  switch (r) {
    case Recompute::kNone:
      return "none";
    case Recompute::kSelective:
      return "selective";
    case Recompute::kFull:
      return "full";
  }
  return "?";
}
const char* to_string(Schedule s) {
  switch (s) {
    case Schedule::kGpipe:
      return "gpipe";
    case Schedule::kOneFOneB:
      return "1f1b";
    case Schedule::kInterleaved:
      return "interleaved";
  }
  return "?";
}

}  // namespace preflight
