// training.stack: the software stack a job runs (a part of Scenario, config/scenario.h;
// presets/stacks/).
#pragma once

#include <cstdint>
#include <string>

#include "base/units.h"

namespace preflight {

// Fused-attention kernel family a stack runs (compute/roofline.cc scales the GPU's attention
// efficiency by the family's measured ratio): cuDNN / FlashAttention-3 class (the GPU preset's
// own efficiency), FlashAttention-2, Megatron's unfused bmm + softmax + bmm, or the first
// FlashAttention (2022: the CUDA kernels and their Triton port, flash_attn_triton.py, that
// llm-foundry's `attn_impl: triton` ran before FlashAttention-2).
enum class AttentionKernel { kCudnn, kFlash2, kUnfused, kFlash1 };
const char* to_string(AttentionKernel k);

// The software stack a job runs (presets/stacks/): what it costs on the host and which kernels it
// brings. Host constants live here, not in the GPU presets: the same GPU runs very differently
// under Megatron-Core with Transformer Engine, PyTorch FSDP or a 2022 Megatron-DeepSpeed.
enum class MoeRouterOps : uint8_t { kNone, kFused, kUnfused };
const char* to_string(MoeRouterOps r);

// The Mamba-2 mixer a stack runs (workload/mamba_ops.h). Both call mamba_ssm's memory-efficient
// mamba_split_conv1d_scan_combined; they differ around it:
//   kMambaSsm  mamba_ssm's own Mamba2 module (and the Hugging Face port): batch-first tensors,
//              the gated RMSNorm inside the fused function (rmsnorm_weight passed), so the chunk
//              scan writes one output and the norm applies the gate;
//   kMegatron  Megatron-Core's MambaMixer (_ssm_training): sequence-first [s, b, ·] tensors, so
//              in_proj's output is copied to [b, s, ·] and the scan's output back when a
//              micro-batch holds several sequences; no rmsnorm_weight, so the chunk scan applies
//              the gate (reading z, writing the gated and the pre-gate output, which the
//              backward keeps) and ExtendedRMSNorm normalises the gated output after it.
enum class MambaMixer : uint8_t { kMambaSsm, kMegatron };
const char* to_string(MambaMixer m);

struct StackConfig {
  std::string name = "megatron-core";
  std::string description;
  SimTime launch_overhead = SimTime::microseconds(10);  // host dispatch per kernel launch
  // Host-side cost of one collective call on top of NCCL's own (the GPU's collective_latency).
  SimTime collective_call_overhead;
  AttentionKernel attention_kernel = AttentionKernel::kCudnn;
  // MoE expert GEMMs: Transformer Engine's GroupedLinear launches one cuBLAS GEMM per local
  // expert (per_expert); a fused grouped-GEMM kernel (CUTLASS / cuTe DSL) launches one.
  bool fused_grouped_gemm = false;
  // Host time per local expert of a per_expert grouped GEMM, when given: TE's C++ loop over the
  // experts (one cuBLAS launch, the output allocation, the quantizer and scale set-up each) in
  // place of a full launch_overhead per expert. TransformerEngine issue #2897 measures 1.2 ms
  // forward and 2.1 ms backward of host time for a 64-expert grouped MLP on GB200 (2 and 4
  // grouped GEMMs): 9.4 and 8.2 us per expert GEMM. Not given (the default): each expert GEMM
  // costs the host a whole launch_overhead, as the published set's releases fit best
  // (docs/calibration.md).
  SimTime expert_launch_overhead;
  bool expert_launch_overhead_given = false;
  // PyTorch FSDP (FSDP1's FlatParameter, ZeRO-3): after a layer's backward its gradients are
  // gathered into the unsharded flat gradient (autograd's backward of the parameter views),
  // cast to the reduce dtype and pre-divided by the pre-divide factor before the
  // reduce-scatter; three memory-bound passes over the layer's full, unsharded gradient that
  // Megatron's contiguous fp32 main-grad buffer (filled by the weight-gradient GEMMs) does not
  // need. torch.distributed.fsdp _runtime_utils.py (_reduce_grad, _div_if_needed).
  bool fsdp_gradient_staging = false;
  // llm-foundry's flash path (attn_impl: flash, llmfoundry/models/layers/attention.py
  // flash_attn_fn): FlashAttention's varlen kernel takes unpadded rows, so each layer gathers the
  // rows of Q, K and V (flash_attn.bert_padding.index_first_axis) and scatters the output back
  // into a zeroed padded tensor (pad_input), even when no token is padding; their backwards
  // gather dO and zero-fill and scatter dQ, dK, dV. Memory-bound passes that Megatron's fused
  // attention, fed [s, b, h, d] tensors as they are, does not make (workload/layer_ops.cc).
  bool flash_attention_unpad = false;
  // The optimizer step's HBM traffic per owned parameter, when the stack's optimizer is not the
  // fused mixed-precision Adam training.optimizer_bytes_per_param's default (40 B) stands for;
  // the default of that key when given (0: not given). Composer's DecoupledAdamW
  // (composer/optim/decoupled_weight_decay.py) updates each fp32 parameter with eight separate
  // in-place PyTorch ops, each a pass over its tensors: exp_avg.mul_ (8 B), .add_(grad) (12),
  // exp_avg_sq.mul_ (8), .addcmul_(grad, grad) (16), sqrt (8), the bias-correction divide (8),
  // + eps (8), param.addcdiv_ (16): 84 B; FSDP's gradient-norm clipping reads the gradient and
  // scales it in place (12 B): 96 B.
  double optimizer_bytes_per_param = 0;
  // Megatron-Core's MoE router and token dispatcher around the kernels Preflight times: the
  // framework ops of each MoE layer and micro-batch that launch no kernel of their own in the
  // model, each a launch_overhead of host time (docs/moe.md, "Host work of the MoE layer"):
  // kFused with moe_router_fusion (Transformer Engine's fused top-k and auxiliary-loss kernels,
  // as the Megatron-Bridge performance recipes set it), kUnfused with Megatron-Core's default
  // PyTorch router, kNone for a stack whose MoE layer is not Megatron-Core's.
  MoeRouterOps moe_router = MoeRouterOps::kNone;
  // Whether the stack's fused RoPE kernel applies a RoPE whose cos and sin are scaled
  // (model.rope_mscale != 1, YaRN). Megatron-Core does not: Transformer Engine's
  // fused_apply_rotary_pos_emb takes no scale, so apply_rotary_pos_emb falls back to its
  // unfused PyTorch implementation when mscale != 1 (megatron/core/models/common/embeddings/
  // rope_utils.py, Megatron-LM PR #2038, 2025-10): six element-wise kernels over Q and over K
  // forward, seven backward, where the fused kernel makes one pass (workload/layer_ops.cc).
  bool fused_scaled_rope = true;
  // The loss: Megatron-Core's vocab_parallel_cross_entropy (false: an fp32 copy of the logits,
  // max, exp and sum, normalise, the gradient in fp32 and its cast back, ~48 B per logit and
  // fp32 logits kept for backward), or Transformer Engine's Triton kernels
  // (cross_entropy_loss_fusion with cross_entropy_fusion_impl "te",
  // transformer_engine/pytorch/triton/cross_entropy.py): an online-softmax pass that reads the
  // half-precision logits once and keeps each row's max and sum, a pass that writes the
  // gradient over the logits, and a backward pass that scales it in place (10 B per logit,
  // nothing in fp32).
  bool te_cross_entropy = false;
  MambaMixer mamba_mixer = MambaMixer::kMambaSsm;
  // Where the MoE layer applies the router's probabilities: in the experts' activation
  // (Megatron-Core's TEGroupedMLP hands permuted_probs to weighted_bias_swiglu_impl, so the
  // probabilities' gradient comes from the activation's saved input), or at the combine (the
  // unpermute weights each expert output by its probability and keeps the expert outputs for
  // that gradient: 2 B per routed copy and hidden element; Megatron-Core before the weighted
  // activation, and the form most MoE code outside it takes). memory/layer_activations.cc.
  bool moe_probs_in_activation = false;
};

}  // namespace preflight
