// validate_scenario and validate_hybrid_model (config/scenario.h): the rules a scenario must
// keep, each error naming the key at fault and what was expected.
#include <algorithm>
#include <string>

#include "config/scenario.h"

namespace preflight {
namespace {

std::string str(int64_t v) { return std::to_string(v); }

// " (e.g. 1000 or 1008)": the multiples of `unit` nearest `value`, for an error's fix.
std::string nearest_multiples(int64_t value, int64_t unit) {
  if (unit <= 0) return "";
  const int64_t below = value / unit * unit;
  const int64_t above = below + unit;
  if (below <= 0) return " (e.g. " + str(above) + ")";
  return " (e.g. " + str(below) + " or " + str(above) + ")";
}

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
  // PCIe Gen1 x1 moved 250 MB/s: a host link slower than 100 MB/s is a unit typo.
  if (c.host_bandwidth.bytes_per_second() < 1e8) {
    return too_small("cluster.host_bandwidth", "expected at least 100MB/s");
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

// Every module selective recompute is asked to replay exists in the model: a choice that
// matches no layer would change nothing, and an accepted input is never ignored.
Status validate_recompute_modules(const Scenario& s) {
  const ModelConfig& m = s.model;
  const ParallelismConfig& p = s.parallelism;
  if (p.recompute != Recompute::kSelective) return Status();
  bool dense_mlp = false, attention = false;
  for (int i = 0; i < m.layers; ++i) {
    dense_mlp = dense_mlp || (m.has_mlp(i) && !m.is_moe_layer(i));
    attention = attention || m.has_attention(i);
  }
  auto missing = [&](RecomputeModule module, const std::string& what) {
    return invalid_argument(std::string("parallelism.recompute_modules: ") + to_string(module) +
                            ": model " + m.name + " has no " + what +
                            "; expected modules the model has");
  };
  if (p.recomputes(RecomputeModule::kCoreAttn) && !attention) {
    return missing(RecomputeModule::kCoreAttn, "attention layer");
  }
  if (p.recomputes(RecomputeModule::kMoeAct) && !m.moe.enabled()) {
    return missing(RecomputeModule::kMoeAct, "MoE layers");
  }
  if (p.recomputes(RecomputeModule::kMoe) && !m.moe.enabled()) {
    return missing(RecomputeModule::kMoe, "MoE layers");
  }
  if (p.recomputes(RecomputeModule::kSharedExperts) &&
      (!m.moe.enabled() || m.moe.shared_experts == 0)) {
    return missing(RecomputeModule::kSharedExperts, "shared experts");
  }
  if (p.recomputes(RecomputeModule::kMlp) && !dense_mlp) {
    return missing(RecomputeModule::kMlp, "dense MLP layer (moe recomputes a MoE layer)");
  }
  if (p.recomputes(RecomputeModule::kMlaUpProj) && !m.mla.enabled() && !m.csa.enabled()) {
    return missing(RecomputeModule::kMlaUpProj,
                   "multi-head latent attention or compressed attention (model.mla, model.csa)");
  }
  return Status();
}

// Activation offloading (parallelism.offload_layers) under Megatron-Core's own rules
// (TransformerConfig.__post_init__): fewer layers than the model's, no pipeline parallelism, no
// recompute of any granularity; and no CUDA graphs (Megatron rejects cpu_offloading with them).
Status validate_offload(const Scenario& s) {
  const ParallelismConfig& p = s.parallelism;
  const int n = p.offload_layers;
  if (n == 0) return Status();
  const std::string key = "parallelism.offload_layers: " + str(n);
  if (n >= s.model.layers) {
    return invalid_argument(key + ": expected fewer than model.layers (" + str(s.model.layers) +
                            "), as Megatron's cpu_offloading_num_layers");
  }
  if (p.pp > 1) {
    return invalid_argument(key + ": expected pp 1 (Megatron has no CPU offloading with " +
                            "pipeline parallelism; pp is " + str(p.pp) + ")");
  }
  if (p.schedule != Schedule::kOneFOneB) {
    return invalid_argument(key + std::string(": expected schedule: 1f1b (with pp 1, each ") +
                            "micro-batch's forward then its backward, as Megatron runs it; " +
                            "schedule " + to_string(p.schedule) + ")");
  }
  if (p.recompute != Recompute::kNone) {
    return invalid_argument(key + std::string(": expected recompute: none (Megatron's CPU ") +
                            "offloading does not work with activation recomputation; recompute " +
                            to_string(p.recompute) + ")");
  }
  if (p.overlap_moe_comm) {
    return invalid_argument(
        key + ": with parallelism.overlap_moe_comm: the combined 1F1B " +
        "schedule's offloading is not modelled; expected overlap_moe_comm: " + "false");
  }
  if (s.training.cuda_graphs) {
    return invalid_argument(key + ": expected training.cuda_graphs: none (Megatron does not " +
                            "capture CPU offloading in CUDA graphs)");
  }
  return Status();
}

// Expert, context-parallel and attention-variant rules.
Status validate_moe_and_cp(const Scenario& s) {
  const ModelConfig& m = s.model;
  const ParallelismConfig& p = s.parallelism;
  const TrainingConfig& t = s.training;
  if (p.ep > 1 && !m.moe.enabled()) {
    return invalid_argument("parallelism.ep: " + str(p.ep) + ": model " + m.name +
                            " has no experts (model.moe.experts); expected ep 1");
  }
  if (m.moe.enabled()) {
    if (m.moe.experts % p.ep != 0) {
      return invalid_argument("parallelism.ep: " + str(p.ep) + ": expected a divisor of " +
                              "model.moe.experts (" + str(m.moe.experts) + ")");
    }
    const int64_t folded = int64_t{p.tp} * p.cp * p.dp;
    const int64_t expert_ranks = int64_t{p.ep} * s.expert_tp();
    if (folded % expert_ranks != 0) {
      return invalid_argument("parallelism.ep: ep·etp = " + str(p.ep) + "·" + str(s.expert_tp()) +
                              " = " + str(expert_ranks) + ": expected a divisor of tp·cp·dp = " +
                              str(folded) + " (the ranks of one pipeline stage)");
    }
    if (m.moe.expert_ffn_hidden % s.expert_tp() != 0) {
      return invalid_argument("parallelism.etp: " + str(s.expert_tp()) +
                              ": expected a divisor of " + "model.moe.expert_ffn_hidden (" +
                              str(m.moe.expert_ffn_hidden) + ")");
    }
    if (p.tp > 1 && !p.sequence_parallel) {
      return invalid_argument("parallelism.sequence_parallel: false: MoE layers with tp " +
                              str(p.tp) +
                              " need sequence parallelism (as Megatron-Core requires); "
                              "expected sequence_parallel: true or tp 1");
    }
    if (m.moe.routing == MoeRouting::kLoads &&
        static_cast<int>(m.moe.loads.size()) != m.moe.experts) {
      return invalid_argument("model.moe.loads: " + str(static_cast<int64_t>(m.moe.loads.size())) +
                              " values: expected one per expert (" + str(m.moe.experts) +
                              ") with model.moe.routing: loads");
    }
  }
  if (p.cp > 1 && !t.flash_attention) {
    return invalid_argument("parallelism.cp: " + str(p.cp) +
                            ": context parallelism runs fused attention; expected "
                            "training.flash_attention: true");
  }
  if (p.cp > 1) {
    // Ring attention with causal load balancing splits each sequence into 2·cp chunks.
    const int64_t chunks = p.cp_kind == ContextParallelKind::kAllToAll ? p.cp : 2 * int64_t{p.cp};
    if (t.seq_len % chunks != 0) {
      return invalid_argument("parallelism.cp: " + str(p.cp) + ": expected training.seq_len (" +
                              str(t.seq_len) + ") to be a multiple of " +
                              (p.cp_kind == ContextParallelKind::kAllToAll
                                   ? std::string("cp")
                                   : std::string("2·cp (causal load balancing)")) +
                              " = " + str(chunks));
    }
    if (p.cp_kind == ContextParallelKind::kAllToAll && (m.heads / p.tp) % p.cp != 0) {
      return invalid_argument("parallelism.cp: " + str(p.cp) + ": all-to-all context parallelism " +
                              "scatters heads: expected cp to divide heads/tp (" +
                              str(m.heads / p.tp) + ")");
    }
  }
  if (m.mla.enabled()) {
    if (m.mla.qk_nope_head_dim <= 0 || m.mla.qk_rope_head_dim <= 0 || m.mla.v_head_dim <= 0) {
      return invalid_argument(
          "model.mla: kv_lora_rank " + str(m.mla.kv_lora_rank) +
          ": expected positive qk_nope_head_dim, qk_rope_head_dim and v_head_dim");
    }
    if (m.mla.kv_lora_rank >= int64_t{m.heads} * (m.mla.qk_nope_head_dim + m.mla.v_head_dim)) {
      return invalid_argument("model.mla.kv_lora_rank: " + str(m.mla.kv_lora_rank) +
                              ": expected a latent smaller than the keys and values it compresses "
                              "(heads·(qk_nope_head_dim + v_head_dim) = " +
                              str(int64_t{m.heads} * (m.mla.qk_nope_head_dim + m.mla.v_head_dim)) +
                              ")");
    }
  }
  if (m.csa.enabled()) {
    const CsaConfig& a = m.csa;
    if (p.cp > 1) {
      return invalid_argument("parallelism.cp: " + str(p.cp) +
                              ": context parallelism of compressed attention (model.csa) is not "
                              "modelled; expected cp 1");
    }
    if (!t.flash_attention) {
      return invalid_argument(
          "training.flash_attention: false: compressed attention (model.csa) runs fused sparse "
          "attention kernels; expected true");
    }
    if (a.o_groups % p.tp != 0) {
      return invalid_argument("parallelism.tp: " + str(p.tp) +
                              ": expected a divisor of model.csa.o_groups (" + str(a.o_groups) +
                              "), whose groups TP splits");
    }
    if (a.index_heads > 0 && a.index_heads % p.tp != 0) {
      return invalid_argument("parallelism.tp: " + str(p.tp) +
                              ": expected a divisor of model.csa.index_heads (" +
                              str(a.index_heads) + "), which TP splits");
    }
  }
  if (m.hyper_connections > 1 && m.is_hybrid()) {
    return invalid_argument("model.hyper_connections: " + str(m.hyper_connections) +
                            ": hyper-connections are modelled around a transformer's attention "
                            "and MLP; expected none with model.hybrid_pattern");
  }
  const bool zb = p.schedule == Schedule::kZeroBubbleH1 || p.schedule == Schedule::kZeroBubbleH2;
  if ((zb || p.schedule == Schedule::kDualPipe) && p.vpp > 1) {
    return invalid_argument(std::string("parallelism.schedule: ") + to_string(p.schedule) +
                            ": expected vpp 1");
  }
  if (p.schedule == Schedule::kDualPipe) {
    if (p.pp < 2 || p.pp % 2 != 0) {
      return invalid_argument("parallelism.schedule: dualpipe: expected an even pp >= 2 (pp " +
                              str(p.pp) + ")");
    }
    if (s.num_microbatches() < 2 * p.pp || s.num_microbatches() % 2 != 0) {
      return invalid_argument(
          "parallelism.schedule: dualpipe: " + str(s.num_microbatches()) +
          " micro-batches: expected an even number, at least 2·pp = " + str(2 * p.pp));
    }
  }
  return Status();
}

// Context- and tensor-parallel rules of hybrid models.
Status validate_hybrid_parallelism(const Scenario& s) {
  const ModelConfig& m = s.model;
  const ParallelismConfig& p = s.parallelism;
  if (!m.is_hybrid()) return Status();
  if (p.cp > 1) {
    return invalid_argument("parallelism.cp: " + str(p.cp) +
                            ": context parallelism of hybrid (Mamba-2) models is not modelled; "
                            "expected cp 1 with model.hybrid_pattern");
  }
  if (m.mamba.enabled()) {
    // Megatron-Core's MambaMixer splits heads and groups over TP (mamba_mixer.py asserts both).
    if (m.mamba.heads % p.tp != 0) {
      return invalid_argument("parallelism.tp: " + str(p.tp) + ": expected a divisor of " +
                              "model.mamba.heads (" + str(m.mamba.heads) + ")");
    }
    if (m.mamba.groups % p.tp != 0) {
      return invalid_argument("parallelism.tp: " + str(p.tp) + ": expected a divisor of " +
                              "model.mamba.groups (" + str(m.mamba.groups) +
                              "): Mamba-2 groups are split over TP");
    }
  }
  return Status();
}

}  // namespace

Status validate_hybrid_model(const ModelConfig& m) {
  const std::string& pattern = m.hybrid_pattern;
  const bool hybrid = m.is_hybrid();
  if (hybrid) {
    for (size_t i = 0; i < pattern.size(); ++i) {
      const char c = pattern[i];
      if (c == 'M' || c == '*' || c == '-' || c == 'E') continue;
      std::string hint = "expected M (Mamba-2), * (attention), - (MLP) or E (MoE)";
      if (c == '/') hint += "; multi-token prediction depths are model.mtp_layers";
      if (c == '|') hint += "; pipeline splits are parallelism.pipeline_layout";
      return invalid_argument("model.hybrid_pattern: '" + std::string(1, c) + "' at position " +
                              str(static_cast<int64_t>(i)) + " (0-based): " + hint);
    }
    if (static_cast<int64_t>(pattern.size()) != m.layers) {
      return invalid_argument("model.hybrid_pattern: " + str(static_cast<int64_t>(pattern.size())) +
                              " characters: expected one per layer, model.layers (" +
                              str(m.layers) + ")");
    }
  }
  const bool mamba_layers = pattern.find('M') != std::string::npos;
  const bool moe_layers = pattern.find('E') != std::string::npos;
  if (mamba_layers && !m.mamba.enabled()) {
    return invalid_argument(
        "model.mamba: missing: model.hybrid_pattern has M layers; expected heads, head_dim, "
        "state, groups, conv_kernel and chunk");
  }
  if (!mamba_layers && m.mamba.enabled()) {
    return invalid_argument("model.mamba: given, but " +
                            std::string(hybrid ? "model.hybrid_pattern has no M layer"
                                               : "the model has no model.hybrid_pattern") +
                            ": expected an M in the pattern, or no model.mamba");
  }
  if (m.mamba.enabled() && m.mamba.heads % m.mamba.groups != 0) {
    return invalid_argument("model.mamba.groups: " + str(m.mamba.groups) +
                            ": expected a divisor of model.mamba.heads (" + str(m.mamba.heads) +
                            ")");
  }
  if (!hybrid) return Status();
  if (moe_layers && !m.moe.enabled()) {
    return invalid_argument(
        "model.hybrid_pattern: E layers need model.moe (experts, top_k, expert_ffn_hidden)");
  }
  if (!moe_layers && m.moe.enabled()) {
    return invalid_argument("model.moe.experts: " + str(m.moe.experts) +
                            ": model.hybrid_pattern has no E layer; expected an E in the pattern, "
                            "or no model.moe");
  }
  if (m.mtp_layers > 0 && !moe_layers && pattern.find('-') == std::string::npos) {
    return invalid_argument("model.mtp_layers: " + str(m.mtp_layers) +
                            ": a hybrid's MTP block is attention + the pattern's MLP (\"*E\" or "
                            "\"*-\"); expected an E or - layer in model.hybrid_pattern");
  }
  if (m.moe.enabled() && (m.moe.dense_layers != 0 || m.moe.layer_interval != 1)) {
    return invalid_argument(
        "model.moe.dense_layers/layer_interval: the hybrid pattern places the MoE layers (E); "
        "expected neither with model.hybrid_pattern");
  }
  return Status();
}

Status validate_scenario(const Scenario& s) {
  PREFLIGHT_RETURN_IF_ERROR(check_hardware_ranges(s.cluster));
  const ModelConfig& m = s.model;
  const ParallelismConfig& p = s.parallelism;
  const TrainingConfig& t = s.training;
  const int gpus = s.cluster.total_gpus();
  // Products of the int fields are taken in int64; the last may still overflow.
  const int64_t tp_cp_pp = int64_t{p.tp} * p.cp * p.pp;
  int64_t all = 0;
  const bool overflow = __builtin_mul_overflow(tp_cp_pp, p.dp, &all);
  if (overflow || all != gpus) {
    const std::string cp = p.cp > 1 ? "cp·" : "";
    const std::string cp_value = p.cp > 1 ? str(p.cp) + "·" : "";
    return invalid_argument(
        "parallelism: tp·" + cp + "pp·dp = " + str(p.tp) + "·" + cp_value + str(p.pp) + "·" +
        str(p.dp) + " = " + (overflow ? "over 2^63" : str(all)) +
        ": expected the cluster's GPU count, " + str(gpus) + " (" + str(s.cluster.nodes) +
        " nodes × " + str(s.cluster.gpus_per_node) + "), or dp: auto" +
        (overflow ? std::string()
                  : " (--set parallelism.dp=auto, or --set cluster.gpus=" + str(all) +
                        " for this strategy)"));
  }
  if (m.heads % p.tp != 0) {
    return invalid_argument("parallelism.tp: " + str(p.tp) + ": expected a divisor of " +
                            "model.heads (" + str(m.heads) + ")");
  }
  if (m.kv_heads % p.tp != 0 && p.tp % m.kv_heads != 0) {
    return invalid_argument("parallelism.tp: " + str(p.tp) + ": expected a divisor or multiple " +
                            "of model.kv_heads (" + str(m.kv_heads) + ")");
  }
  PREFLIGHT_RETURN_IF_ERROR(validate_hybrid_model(m));
  PREFLIGHT_RETURN_IF_ERROR(validate_hybrid_parallelism(s));
  PREFLIGHT_RETURN_IF_ERROR(validate_moe_and_cp(s));
  PREFLIGHT_RETURN_IF_ERROR(validate_recompute_modules(s));
  if (m.ffn_hidden % p.tp != 0) {
    return invalid_argument("parallelism.tp: " + str(p.tp) + ": expected a divisor of " +
                            "model.ffn_hidden (" + str(m.ffn_hidden) + ")");
  }
  const bool uneven = p.first_stage_layers > 0 || p.last_stage_layers > 0;
  if (!p.pipeline_layout.empty()) {
    const int64_t chunks = int64_t{p.pp} * p.vpp;
    if (static_cast<int64_t>(p.pipeline_layout.size()) != chunks) {
      return invalid_argument(
          "parallelism.pipeline_layout: " + str(static_cast<int64_t>(p.pipeline_layout.size())) +
          " virtual stages: expected pp × vpp = " + str(chunks));
    }
    int64_t sum = 0;
    for (size_t k = 0; k < p.pipeline_layout.size(); ++k) {
      const int n = p.pipeline_layout[k];
      const bool end = k == 0 || k + 1 == p.pipeline_layout.size();
      if (n < 0 || (n == 0 && !end)) {
        return invalid_argument("parallelism.pipeline_layout: virtual stage " + str(k) + ": " +
                                str(n) +
                                " layers: expected at least 1 (0 only on the first, "
                                "with the embedding, or the last, with the loss)");
      }
      sum += n;
    }
    if (sum != m.layers) {
      return invalid_argument("parallelism.pipeline_layout: " + str(sum) +
                              " layers in all: expected model.layers (" + str(m.layers) + ")");
    }
    if (uneven) {
      return invalid_argument(
          "parallelism.first_stage_layers/last_stage_layers: give these or "
          "pipeline_layout, not both");
    }
    for (int stage = 0; stage < p.pp; ++stage) {
      if (stage_layers(s)[stage] < 1) {
        return invalid_argument("parallelism.pipeline_layout: stage " + str(stage) +
                                " holds no layer: expected at least one per pipeline stage");
      }
    }
  } else if (uneven) {
    const int fixed = (p.first_stage_layers > 0) + (p.last_stage_layers > 0);
    const int rest = m.layers - p.first_stage_layers - p.last_stage_layers;
    const int middle = p.pp - fixed;
    if (p.pp < 2 || (fixed == 2 && p.pp == 2 && rest != 0) || rest < middle ||
        (middle > 0 && rest % middle != 0) || (middle == 0 && rest != 0)) {
      return invalid_argument(
          "parallelism.first_stage_layers/last_stage_layers: " + str(p.first_stage_layers) + "/" +
          str(p.last_stage_layers) + " of model.layers " + str(m.layers) + " on pp " + str(p.pp) +
          ": expected the remaining layers to split evenly over the other stages, "
          "at least one each");
    }
    // Interleaved: every chunk holds a layer, except that the first stage's first chunk (with
    // the embedding) and the last stage's last chunk (with the loss head) may hold none.
    if (p.vpp > 1) {
      const int first = p.first_stage_layers > 0 ? p.first_stage_layers : rest / middle;
      const int last = p.last_stage_layers > 0 ? p.last_stage_layers : rest / middle;
      if (first < p.vpp - 1 || last < p.vpp - 1 || (middle > 0 && rest / middle < p.vpp)) {
        return invalid_argument(
            "parallelism.vpp: " + str(p.vpp) + " chunks per stage with " + str(first) + " / " +
            str(middle > 0 ? rest / middle : 0) + " / " + str(last) +
            " layers on the first / middle / last stages: expected at least vpp layers per "
            "stage (vpp − 1 on the first and last)");
      }
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
                            " × " + str(p.dp) + " = " + str(int64_t{t.micro_batch} * p.dp) +
                            nearest_multiples(t.global_batch, int64_t{t.micro_batch} * p.dp));
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
  if (t.lora.enabled() && p.zero_stage == 3) {
    return invalid_argument(
        "training.lora: with parallelism.zero_stage 3: the frozen weights "
        "would still be gathered per layer; not modelled (expected "
        "zero_stage 0 to 2)");
  }
  if (p.sequence_parallel && p.tp == 1) {  // the loader turns it off; a scenario built in code
    return invalid_argument("parallelism.sequence_parallel: true: expected tp > 1");
  }
  if (p.sequence_parallel && t.seq_len % p.tp != 0) {
    return invalid_argument("training.seq_len: " + str(t.seq_len) +
                            ": expected a multiple of tp with sequence parallelism");
  }
  // Overlap switches (docs/workload.md, "Overlap switches and sharded data parallelism").
  if (p.tp_comm_overlap && p.tp > 1 && !p.sequence_parallel) {
    return invalid_argument(
        "parallelism.tp_comm_overlap: true needs sequence_parallel: true "
        "(Transformer Engine overlaps its all-gathers and reduce-scatters)");
  }
  if (p.overlap_param_gather && !p.distributed_optimizer) {
    return invalid_argument(
        "parallelism.overlap_param_gather: true needs "
        "distributed_optimizer: true (as Megatron)");
  }
  if (p.overlap_param_gather && !p.overlap_grad_reduce) {
    return invalid_argument(
        "parallelism.overlap_param_gather: true needs "
        "overlap_grad_reduce: true (as Megatron)");
  }
  if (p.overlap_p2p && p.schedule != Schedule::kInterleaved) {
    return invalid_argument(std::string("parallelism.overlap_p2p: true needs schedule: "
                                        "interleaved (Megatron turns --overlap-p2p-comm off "
                                        "with the others; schedule ") +
                            to_string(p.schedule) + ")");
  }
  if (p.overlap_moe_comm) {
    if (!s.model.moe.enabled() || p.ep <= 1) {
      return invalid_argument(
          "parallelism.overlap_moe_comm: true needs a MoE model with ep > 1 (it overlaps the "
          "expert all-to-alls)");
    }
    if (p.schedule != Schedule::kOneFOneB && p.schedule != Schedule::kInterleaved) {
      return invalid_argument(std::string("parallelism.overlap_moe_comm: true needs schedule: "
                                          "1f1b or interleaved (Megatron's combined 1F1B; "
                                          "dualpipe overlaps by construction); schedule ") +
                              to_string(p.schedule));
    }
  }
  PREFLIGHT_RETURN_IF_ERROR(validate_offload(s));
  const GpuConfig& g = s.cluster.gpu;
  const bool fp8_family = t.precision == Precision::kFp8 ||
                          t.precision == Precision::kFp8Blockwise ||
                          t.precision == Precision::kMxfp8;
  // A zero (or omitted) peak is a GPU without those tensor cores, never a rate to fall back
  // from silently.
  if (t.precision == Precision::kBf16 && g.peak_bf16.flops_per_second() <= 0) {
    return invalid_argument("training.precision: bf16: " + g.name +
                            " has no BF16 tensor cores (cluster.gpu.peak.bf16 is 0 or absent); "
                            "expected fp16, or a positive peak.bf16");
  }
  if (t.precision == Precision::kFp16 && g.peak_fp16.flops_per_second() <= 0) {
    return invalid_argument("training.precision: fp16: " + g.name +
                            " has no FP16 tensor cores (cluster.gpu.peak.fp16 is 0 or absent); "
                            "expected bf16, or a positive peak.fp16");
  }
  if (fp8_family && g.peak_fp8.flops_per_second() <= 0) {
    return invalid_argument(std::string("training.precision: ") + to_string(t.precision) + ": " +
                            g.name + " has no FP8 tensor cores; expected fp16 or bf16");
  }
  if (t.precision == Precision::kMxfp8 && !g.mxfp8) {
    return invalid_argument("training.precision: mxfp8: " + g.name +
                            " has no microscaling (MX) tensor cores (Blackwell and later); "
                            "expected fp8 or fp8_blockwise");
  }
  if (t.precision == Precision::kNvfp4 && g.peak_fp4.flops_per_second() <= 0) {
    return invalid_argument("training.precision: nvfp4: " + g.name +
                            " has no FP4 tensor cores (Blackwell and later); expected bf16 or an "
                            "fp8 mode");
  }
  for (size_t i = 0; i < s.simulation.slow_ranks.size(); ++i) {
    const int rank = s.simulation.slow_ranks[i].rank;
    if (rank >= gpus) {
      return invalid_argument("simulation.slow_ranks[" + str(static_cast<int64_t>(i)) +
                              "].rank: " + str(rank) + ": expected a rank below the job's " +
                              str(gpus) + " GPUs");
    }
  }
  return Status();
}

}  // namespace preflight
