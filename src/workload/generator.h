// The built-in Megatron-style workload generator: scenario -> Workload (blocks of kernels and
// one program per pipeline stage). Covers TP (all-reduce, or all-gather/reduce-scatter with
// sequence parallelism), PP send/recv of activations and gradients, DP gradient reduction
// (all-reduce, or reduce-scatter + all-gather with the distributed optimizer; bucketed and
// overlapped with the last backward when overlap_grad_reduce), recompute none/selective/full,
// GPipe/1F1B/interleaved/zero-bubble/DualPipe schedules, MoE layers with expert parallelism,
// tied-embedding gradient sync, and the optimizer step; ZeRO-3
// (per-layer parameter gathers and gradient reduce-scatters every micro-batch) and the overlap
// switches (docs/workload.md, "Overlap switches and sharded data parallelism").
#pragma once

#include <cstdint>
#include <vector>

#include "config/scenario.h"
#include "workload/workload.h"

namespace preflight {

// Parameters held by one GPU of pipeline stage `stage`: its layers' non-expert parameters / tp
// (attention, norms, dense MLPs, shared experts, routers), its routed experts / (ep·etp), the
// embedding on the first stage, the output layer / tied copy and any MTP modules on the last.
int64_t stage_parameters_per_gpu(const Scenario& s, int stage);

// The routed-expert part of stage_parameters_per_gpu: the stage's routed experts (and those of
// MTP modules on the last stage) / (ep·etp). Their gradients are reduced over the expert-DP
// group (Scenario::expert_dp() ranks), not over dp·cp.
int64_t stage_expert_parameters_per_gpu(const Scenario& s, int stage);

// What of those trains, and so has gradients and optimizer states: all of them, or with LoRA
// (training.lora) only the stage's adapters / tp (the frozen base weights, embedding, output
// layer and experts have none).
int64_t stage_trainable_parameters_per_gpu(const Scenario& s, int stage);
int64_t stage_trainable_expert_parameters_per_gpu(const Scenario& s, int stage);

// Bytes per gradient element in the DP reduction: parallelism.grad_reduce_in_fp32 where given,
// else fp32 for bf16/fp8 training (Megatron accumulates and all-reduces main grads in fp32) and
// fp16 for fp16 training.
int gradient_bytes_per_element(const Scenario& s);

// Parameters per DP gradient bucket (and per bucket of the overlapped parameter all-gather):
// parallelism.grad_bucket_size / gradient_bytes_per_element when given, else Megatron-Core's
// default, max(40,000,000, 1,000,000 · dp·cp) parameters (megatron/training get_model:
// "larger DP sizes need larger buckets" so that each ring chunk stays bandwidth-bound; the
// expert buffers take the same size). Model chunks after a rank's first (interleaved pipelines)
// are not bucketed at all: DistributedDataParallel(disable_bucketing = model_chunk_idx > 0),
// "since communication for these model chunks is overlapped with compute anyway".
int64_t grad_bucket_parameters(const Scenario& s);

// `offload_bytes`: with activation offloading (parallelism.offload_layers = N), the bytes each
// of the N offloaded layers moves to the host and back (memory/memory_model.h,
// offloaded_layer_bytes()); the generator knows the kernels, the memory model the tensors.
// REQUIRES: validate_scenario(s).ok(), offload_bytes.size() == N.
Workload generate_workload(const Scenario& s, const std::vector<Bytes>& offload_bytes = {});

}  // namespace preflight
