// The built-in Megatron-style workload generator: scenario -> Workload (blocks of kernels and
// one program per pipeline stage). Covers TP (all-reduce, or all-gather/reduce-scatter with
// sequence parallelism), PP send/recv of activations and gradients, DP gradient reduction
// (all-reduce, or reduce-scatter + all-gather with the distributed optimizer; bucketed and
// overlapped with the last backward when overlap_grad_reduce), recompute none/selective/full,
// GPipe/1F1B/interleaved schedules, tied-embedding gradient sync, and the optimizer step.
#pragma once

#include <cstdint>

#include "config/scenario.h"
#include "workload/workload.h"

namespace preflight {

// Parameters held by one GPU of pipeline stage `stage` (its TP shard of its layers, plus the
// embedding on the first stage and the output layer / tied copy on the last).
int64_t stage_parameters_per_gpu(const Scenario& s, int stage);

// Bytes per gradient element in the DP reduction: fp32 for bf16/fp8 training (Megatron
// accumulates and all-reduces main grads in fp32), fp16 for fp16 training.
int gradient_bytes_per_element(const Scenario& s);

// REQUIRES: validate_scenario(s).ok().
Workload generate_workload(const Scenario& s);

}  // namespace preflight
