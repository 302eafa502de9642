#include "config/scenario.h"

#include <algorithm>

namespace preflight {

FlopRate GpuConfig::peak_for(Precision p) const {
  switch (p) {
    case Precision::kFp16:
      return peak_fp16.flops_per_second() > 0 ? peak_fp16 : peak_bf16;
    case Precision::kBf16:
      return peak_bf16.flops_per_second() > 0 ? peak_bf16 : peak_fp16;
    case Precision::kFp8:
    case Precision::kFp8Blockwise:
    case Precision::kMxfp8:
      if (peak_fp8.flops_per_second() > 0) return peak_fp8;
      return peak_bf16.flops_per_second() > 0 ? peak_bf16 : peak_fp16;
    case Precision::kNvfp4:
      if (peak_fp4.flops_per_second() > 0) return peak_fp4;
      return peak_for(Precision::kFp8);
  }
  return peak_bf16;
}

std::vector<int> stage_layers(const Scenario& s) {
  const ParallelismConfig& p = s.parallelism;
  if (!p.pipeline_layout.empty()) {
    std::vector<int> out(p.pp, 0);
    for (size_t k = 0; k < p.pipeline_layout.size(); ++k) out[k % p.pp] += p.pipeline_layout[k];
    return out;
  }
  const int fixed = (p.first_stage_layers > 0) + (p.last_stage_layers > 0);
  if (fixed == 0) return std::vector<int>(p.pp, s.model.layers / p.pp);
  const int rest = s.model.layers - p.first_stage_layers - p.last_stage_layers;
  const int middle = p.pp - fixed;
  std::vector<int> out(p.pp, middle > 0 ? rest / middle : 0);
  if (p.first_stage_layers > 0) out.front() = p.first_stage_layers;
  if (p.last_stage_layers > 0) out.back() = p.last_stage_layers;
  return out;
}

std::vector<int> chunk_layers(const Scenario& s) {
  if (!s.parallelism.pipeline_layout.empty()) return s.parallelism.pipeline_layout;
  const int p = s.parallelism.pp;
  const int v = std::max(1, s.parallelism.vpp);
  const std::vector<int> stages = stage_layers(s);
  std::vector<int> out(static_cast<size_t>(p) * v, 0);
  for (int stage = 0; stage < p; ++stage) {
    const int base = stages[stage] / v;
    const int extra = stages[stage] % v;
    for (int c = 0; c < v; ++c) {
      const bool gets_extra = stage == 0 ? c >= v - extra : c < extra;
      out[static_cast<size_t>(c) * p + stage] = base + (gets_extra ? 1 : 0);
    }
  }
  return out;
}

const char* to_string(NetworkKind kind) {
  switch (kind) {
    case NetworkKind::kAnalytical:
      return "analytical";
    case NetworkKind::kFlow:
      return "flow";
    case NetworkKind::kPacket:
      return "packet";
  }
  return "?";
}

const char* to_string(AttentionKernel k) {
  switch (k) {
    case AttentionKernel::kCudnn:
      return "cudnn";
    case AttentionKernel::kFlash2:
      return "flash2";
    case AttentionKernel::kUnfused:
      return "unfused";
    case AttentionKernel::kFlash1:
      return "flash1";
  }
  return "cudnn";
}

const char* to_string(MoeRouterOps r) {
  switch (r) {
    case MoeRouterOps::kNone:
      return "none";
    case MoeRouterOps::kFused:
      return "fused";
    case MoeRouterOps::kUnfused:
      return "unfused";
  }
  return "none";
}

const char* to_string(MambaMixer m) {
  return m == MambaMixer::kMegatron ? "megatron" : "mamba_ssm";
}

const char* to_string(Activation a) {
  switch (a) {
    case Activation::kGelu:
      return "gelu";
    case Activation::kSwiglu:
      return "swiglu";
    case Activation::kSquaredRelu:
      return "relu2";
  }
  return "?";
}
const char* to_string(Norm n) { return n == Norm::kLayerNorm ? "layernorm" : "rmsnorm"; }
const char* to_string(PositionEmbedding p) {
  switch (p) {
    case PositionEmbedding::kLearned:
      return "learned";
    case PositionEmbedding::kRope:
      return "rope";
    case PositionEmbedding::kAlibi:
      return "alibi";
    case PositionEmbedding::kNone:
      return "none";
  }
  return "?";
}
const char* to_string(ComputeModelKind k) {
  return k == ComputeModelKind::kMeasured ? "measured" : "roofline";
}

const char* to_string(Fp8Recipe r) { return r == Fp8Recipe::kCurrent ? "current" : "delayed"; }

const char* to_string(Precision p) {
  switch (p) {
    case Precision::kFp16:
      return "fp16";
    case Precision::kBf16:
      return "bf16";
    case Precision::kFp8:
      return "fp8";
    case Precision::kFp8Blockwise:
      return "fp8_blockwise";
    case Precision::kMxfp8:
      return "mxfp8";
    case Precision::kNvfp4:
      return "nvfp4";
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
const char* to_string(RecomputeModule m) {
  switch (m) {
    case RecomputeModule::kCoreAttn:
      return "core_attn";
    case RecomputeModule::kLayerNorm:
      return "layernorm";
    case RecomputeModule::kMoeAct:
      return "moe_act";
    case RecomputeModule::kMlp:
      return "mlp";
    case RecomputeModule::kMoe:
      return "moe";
    case RecomputeModule::kSharedExperts:
      return "shared_experts";
    case RecomputeModule::kMlaUpProj:
      return "mla_up_proj";
  }
  return "?";
}
std::string recompute_modules_string(const ParallelismConfig& p) {
  const unsigned chosen = p.recompute_modules != 0 ? p.recompute_modules : 1u;
  std::string out;
  for (int i = 0; i < kRecomputeModuleCount; ++i) {
    if (((chosen >> i) & 1u) == 0) continue;
    if (!out.empty()) out += ",";
    out += to_string(static_cast<RecomputeModule>(i));
  }
  return out;
}
std::string recompute_description(const ParallelismConfig& p) {
  if (p.recompute != Recompute::kSelective) return to_string(p.recompute);
  return "selective (" + recompute_modules_string(p) + ")";
}
const char* to_string(Schedule s) {
  switch (s) {
    case Schedule::kGpipe:
      return "gpipe";
    case Schedule::kOneFOneB:
      return "1f1b";
    case Schedule::kInterleaved:
      return "interleaved";
    case Schedule::kZeroBubbleH1:
      return "zb_h1";
    case Schedule::kZeroBubbleH2:
      return "zb_h2";
    case Schedule::kDualPipe:
      return "dualpipe";
  }
  return "?";
}
const std::vector<ArchitectureTraits>& architecture_table() {
  // Compute capabilities: CUDA's (sm_70, sm_80, sm_90, sm_100). Link speeds: NVIDIA's NVLink
  // generations. NVLS: NVSwitch 3 (Hopper) and later. FP8: Hopper's and Blackwell's tensor
  // cores; MXFP8/NVFP4: Blackwell's block-scaled MMA (docs/precision.md).
  static const std::vector<ArchitectureTraits> table = {
      {GpuArchitecture::kVolta, "volta", 70, 25e9, false, false, false, 3, 1024, 16},
      {GpuArchitecture::kAmpere, "ampere", 80, 25e9, false, false, false, 4, 2048, 16},
      {GpuArchitecture::kHopper, "hopper", 90, 25e9, true, true, false, 5, 4096, 16},
      {GpuArchitecture::kBlackwell, "blackwell", 100, 50e9, true, true, true, 5, 8192, 16},
  };
  return table;
}

double GpuConfig::exp_per_second() const {
  if (sm_clock_ghz > 0) return sm_count * sfu_exp_per_clock * sm_clock_ghz * 1e9;
  // SMs x clock = the half-precision peak over the tensor FLOPs per SM and clock.
  const double half = peak_bf16.flops_per_second() > 0 ? peak_bf16.flops_per_second()
                                                       : peak_fp16.flops_per_second();
  return half * sfu_exp_per_clock / architecture_traits(architecture).tensor_flops_per_clock;
}

const ArchitectureTraits& architecture_traits(GpuArchitecture a) {
  return architecture_table()[static_cast<size_t>(a)];
}

const char* to_string(GpuArchitecture a) { return architecture_traits(a).name; }
const char* to_string(MoeRouting r) {
  switch (r) {
    case MoeRouting::kUniform:
      return "uniform";
    case MoeRouting::kZipf:
      return "zipf";
    case MoeRouting::kDirichlet:
      return "dirichlet";
    case MoeRouting::kLoads:
      return "loads";
    case MoeRouting::kBalanced:
      return "balanced";
  }
  return "?";
}
const char* to_string(ContextParallelKind k) {
  switch (k) {
    case ContextParallelKind::kRing:
      return "ring";
    case ContextParallelKind::kAllToAll:
      return "a2a";
  }
  return "?";
}

}  // namespace preflight
