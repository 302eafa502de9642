// The profiler's own CUDA kernels (kernels.cu): operand initialization and the representative
// memory-bound kernels. Each launcher returns the launch's status; callers check it.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace preflight::kp {

enum class Elem {
  kBf16,     // bfloat16
  kFp16,     // IEEE half
  kFp8E4m3,  // OCP FP8 E4M3
  kFp32,
  kBytes,  // raw bytes (NVFP4 data: every 4-bit E2M1 code is a finite value)
};

// Fills `count` elements with pseudo-random values in [-1, 1] (a hash of the index and `seed`):
// realistic operands, since all-zero data lets tensor cores draw less power and run faster.
cudaError_t fill_random(void* data, int64_t count, Elem elem, uint32_t seed, cudaStream_t stream);

// cudaSuccess when this build has GPU code the current device can run (checked once at start).
cudaError_t kernels_runnable();

// Fills `count` floats with `value` (per-block FP32 scale factors).
cudaError_t fill_f32(float* data, int64_t count, float value, cudaStream_t stream);

// The memory-bound families (memory.cc explains what they stand for). `half` selects fp16
// elements, else bf16; compute is in fp32 as in the framework kernels they represent.

// y[r, :] = x[r, :] * rsqrt(mean(x[r, :]^2) + eps) * w[:], one block per row of `hidden`.
cudaError_t launch_rmsnorm(const void* x, const void* w, void* y, int64_t rows, int64_t hidden,
                           bool half, cudaStream_t stream);

// y = silu(a) * b over `count` elements (a SwiGLU activation: two inputs, one output).
cudaError_t launch_swiglu(const void* a, const void* b, void* y, int64_t count, bool half,
                          cudaStream_t stream);

// y = 0.5 * x over `count` elements (a copy with a scale: one input, one output).
cudaError_t launch_scale_copy(const void* x, void* y, int64_t count, bool half,
                              cudaStream_t stream);

}  // namespace preflight::kp
