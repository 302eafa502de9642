// The profiler's CUDA kernels: operand initialization and the representative memory-bound
// kernels of memory.cc. They are plain, vectorized (16-byte loads and stores: eight 16-bit
// elements per thread) and compute in fp32, as the framework kernels they stand for do; the
// point is to move the row's bytes through HBM at the rate a well-written kernel of the family
// reaches, not to reproduce a particular library's kernel.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <algorithm>

#include "kernels.h"

namespace preflight::kp {
namespace {

constexpr int kThreads = 256;
constexpr int kVec = 8;  // 16-bit elements per 16-byte access

// A 64-bit mixing function (a finalizer of the splitmix family): index -> uniform 32 bits.
__device__ uint32_t mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  x ^= x >> 33;
  return static_cast<uint32_t>(x);
}

__global__ void fill_random_kernel(void* data, int64_t count, Elem elem, uint32_t seed) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += stride) {
    const uint32_t bits = mix(static_cast<uint64_t>(i) + 0x9e3779b97f4a7c15ull * (seed + 1));
    const float u = static_cast<float>(bits >> 8) * (2.0f / 16777216.0f) - 1.0f;  // [-1, 1)
    switch (elem) {
      case Elem::kBf16:
        static_cast<__nv_bfloat16*>(data)[i] = __float2bfloat16(u);
        break;
      case Elem::kFp16:
        static_cast<__half*>(data)[i] = __float2half(u);
        break;
      case Elem::kFp8E4m3:
        static_cast<__nv_fp8_e4m3*>(data)[i] = __nv_fp8_e4m3(u);
        break;
      case Elem::kFp32:
        static_cast<float*>(data)[i] = u;
        break;
      case Elem::kBytes:
        static_cast<unsigned char*>(data)[i] = static_cast<unsigned char>(bits);
        break;
    }
  }
}

__global__ void fill_f32_kernel(float* data, int64_t count, float value) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += stride) {
    data[i] = value;
  }
}

// Element conversions for the two 16-bit formats.
struct Bf16 {
  using T = __nv_bfloat16;
  static __device__ float load(T v) { return __bfloat162float(v); }
  static __device__ T store(float f) { return __float2bfloat16(f); }
};
struct Fp16 {
  using T = __half;
  static __device__ float load(T v) { return __half2float(v); }
  static __device__ T store(float f) { return __float2half(f); }
};

template <class F>
struct alignas(16) Vec {
  typename F::T v[kVec];
};

__device__ float silu_mul(float a, float b) { return a / (1.0f + __expf(-a)) * b; }

// One thread per 16-byte vector; the first threads also take the elements past the last whole
// vector (buffers come from cudaMalloc, so vector accesses are aligned).
template <class F>
__global__ void swiglu_kernel(const typename F::T* __restrict__ a,
                              const typename F::T* __restrict__ b, typename F::T* __restrict__ y,
                              int64_t count) {
  const int64_t vecs = count / kVec;
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i < vecs) {
    const Vec<F> va = reinterpret_cast<const Vec<F>*>(a)[i];
    const Vec<F> vb = reinterpret_cast<const Vec<F>*>(b)[i];
    Vec<F> vy;
#pragma unroll
    for (int j = 0; j < kVec; ++j) vy.v[j] = F::store(silu_mul(F::load(va.v[j]), F::load(vb.v[j])));
    reinterpret_cast<Vec<F>*>(y)[i] = vy;
  }
  if (i < count - vecs * kVec) {
    const int64_t e = vecs * kVec + i;
    y[e] = F::store(silu_mul(F::load(a[e]), F::load(b[e])));
  }
}

template <class F>
__global__ void scale_copy_kernel(const typename F::T* __restrict__ x,
                                  typename F::T* __restrict__ y, int64_t count) {
  const int64_t vecs = count / kVec;
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i < vecs) {
    const Vec<F> vx = reinterpret_cast<const Vec<F>*>(x)[i];
    Vec<F> vy;
#pragma unroll
    for (int j = 0; j < kVec; ++j) vy.v[j] = F::store(0.5f * F::load(vx.v[j]));
    reinterpret_cast<Vec<F>*>(y)[i] = vy;
  }
  if (i < count - vecs * kVec) {
    const int64_t e = vecs * kVec + i;
    y[e] = F::store(0.5f * F::load(x[e]));
  }
}

// Sum over the block (kThreads threads); every thread gets the result.
__device__ float block_sum(float v) {
  __shared__ float partial[kThreads / 32];
  __shared__ float total;
  for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
  if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = v;
  __syncthreads();
  if (threadIdx.x < 32) {
    float s = threadIdx.x < kThreads / 32 ? partial[threadIdx.x] : 0.0f;
    for (int o = 16; o > 0; o /= 2) s += __shfl_xor_sync(0xffffffffu, s, o);
    if (threadIdx.x == 0) total = s;
  }
  __syncthreads();
  const float result = total;
  __syncthreads();  // `partial` and `total` are reused by the next row
  return result;
}

// RMSNorm over rows of `hidden`: a first pass sums the squares, a second normalizes and scales.
// The second pass re-reads the row from cache (a row of 4096 bf16 is 8 KiB), so HBM sees the row
// read once and written once, as in a fused norm kernel.
template <class F>
__global__ void rmsnorm_kernel(const typename F::T* __restrict__ x,
                               const typename F::T* __restrict__ w, typename F::T* __restrict__ y,
                               int64_t rows, int64_t hidden) {
  const bool vectorized = hidden % kVec == 0;
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const typename F::T* xr = x + r * hidden;
    typename F::T* yr = y + r * hidden;
    float sq = 0.0f;
    if (vectorized) {
      for (int64_t i = threadIdx.x; i < hidden / kVec; i += blockDim.x) {
        const Vec<F> v = reinterpret_cast<const Vec<F>*>(xr)[i];
#pragma unroll
        for (int j = 0; j < kVec; ++j) sq += F::load(v.v[j]) * F::load(v.v[j]);
      }
    } else {
      for (int64_t i = threadIdx.x; i < hidden; i += blockDim.x) {
        sq += F::load(xr[i]) * F::load(xr[i]);
      }
    }
    const float inv = rsqrtf(block_sum(sq) / static_cast<float>(hidden) + 1e-5f);
    if (vectorized) {
      for (int64_t i = threadIdx.x; i < hidden / kVec; i += blockDim.x) {
        const Vec<F> v = reinterpret_cast<const Vec<F>*>(xr)[i];
        const Vec<F> g = reinterpret_cast<const Vec<F>*>(w)[i];
        Vec<F> o;
#pragma unroll
        for (int j = 0; j < kVec; ++j) o.v[j] = F::store(F::load(v.v[j]) * inv * F::load(g.v[j]));
        reinterpret_cast<Vec<F>*>(yr)[i] = o;
      }
    } else {
      for (int64_t i = threadIdx.x; i < hidden; i += blockDim.x) {
        yr[i] = F::store(F::load(xr[i]) * inv * F::load(w[i]));
      }
    }
  }
}

unsigned grid_for(int64_t threads_needed) {
  const int64_t blocks = (std::max<int64_t>(threads_needed, 1) + kThreads - 1) / kThreads;
  return static_cast<unsigned>(std::min<int64_t>(blocks, 0x7fffffff));
}

// Grid-stride fills: a fixed grid large enough to fill any GPU.
constexpr unsigned kFillBlocks = 4096;

}  // namespace

cudaError_t kernels_runnable() {
  cudaFuncAttributes attributes;
  return cudaFuncGetAttributes(&attributes, fill_f32_kernel);
}

cudaError_t fill_random(void* data, int64_t count, Elem elem, uint32_t seed, cudaStream_t stream) {
  if (count <= 0) return cudaSuccess;
  fill_random_kernel<<<kFillBlocks, kThreads, 0, stream>>>(data, count, elem, seed);
  return cudaGetLastError();
}

cudaError_t fill_f32(float* data, int64_t count, float value, cudaStream_t stream) {
  if (count <= 0) return cudaSuccess;
  fill_f32_kernel<<<kFillBlocks, kThreads, 0, stream>>>(data, count, value);
  return cudaGetLastError();
}

cudaError_t launch_rmsnorm(const void* x, const void* w, void* y, int64_t rows, int64_t hidden,
                           bool half, cudaStream_t stream) {
  const unsigned grid =
      static_cast<unsigned>(std::min<int64_t>(std::max<int64_t>(rows, 1), 1 << 20));
  if (half) {
    rmsnorm_kernel<Fp16><<<grid, kThreads, 0, stream>>>(static_cast<const __half*>(x),
                                                        static_cast<const __half*>(w),
                                                        static_cast<__half*>(y), rows, hidden);
  } else {
    rmsnorm_kernel<Bf16><<<grid, kThreads, 0, stream>>>(
        static_cast<const __nv_bfloat16*>(x), static_cast<const __nv_bfloat16*>(w),
        static_cast<__nv_bfloat16*>(y), rows, hidden);
  }
  return cudaGetLastError();
}

cudaError_t launch_swiglu(const void* a, const void* b, void* y, int64_t count, bool half,
                          cudaStream_t stream) {
  const unsigned grid = grid_for(std::max<int64_t>(count / kVec, count % kVec));
  if (half) {
    swiglu_kernel<Fp16><<<grid, kThreads, 0, stream>>>(static_cast<const __half*>(a),
                                                       static_cast<const __half*>(b),
                                                       static_cast<__half*>(y), count);
  } else {
    swiglu_kernel<Bf16><<<grid, kThreads, 0, stream>>>(static_cast<const __nv_bfloat16*>(a),
                                                       static_cast<const __nv_bfloat16*>(b),
                                                       static_cast<__nv_bfloat16*>(y), count);
  }
  return cudaGetLastError();
}

cudaError_t launch_scale_copy(const void* x, void* y, int64_t count, bool half,
                              cudaStream_t stream) {
  const unsigned grid = grid_for(std::max<int64_t>(count / kVec, count % kVec));
  if (half) {
    scale_copy_kernel<Fp16><<<grid, kThreads, 0, stream>>>(static_cast<const __half*>(x),
                                                           static_cast<__half*>(y), count);
  } else {
    scale_copy_kernel<Bf16><<<grid, kThreads, 0, stream>>>(static_cast<const __nv_bfloat16*>(x),
                                                           static_cast<__nv_bfloat16*>(y), count);
  }
  return cudaGetLastError();
}

}  // namespace preflight::kp
