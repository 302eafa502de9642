// GEMM rows through cuBLASLt (cublasLtMatmul; cuBLAS documentation, "Using the cuBLASLt API").
//
// A row is D[m x n] = A[m x k] . B[k x n] in row-major terms, `batch` independent products: for
// a linear layer's forward, A is the activations (m tokens by k input features) and B the
// transposed weight (the weight is stored n x k, out by in). Frameworks (PyTorch's linear layer,
// Transformer Engine) hand this to column-major cuBLAS as the "TN" product
//   D^T[n x m] = W[n x k] . X^T[k x m]:  cuBLAS M = n, N = m, K = k,
//   A = the weight, k x n column-major (lda = k), op(A) = A^T;
//   B = the activations, k x m column-major (ldb = k), op(B) = B;
//   C = D, n x m column-major (ldd = n).
// The profiler times exactly that layout (FP8 kernels on Hopper require it). Input-gradient and
// weight-gradient GEMMs of the same m, n, k use other layouts ("NN", "NT") whose speed may differ;
// a kernel table has one row per shape and the profiler measures the forward's.
//
// Formats (the row's dtype), all with fp32 accumulation (CUBLAS_COMPUTE_32F, fp32 scale type):
//   bf16, fp16      A, B, C, D in that format;
//   fp8             A, B E4M3 with per-tensor fp32 scales (A/B_SCALE_POINTER), C and D bf16,
//                   fast accumulation on (Transformer Engine's setting for forward GEMMs);
//                   compute capability 8.9 or newer;
//   fp8_blockwise   A, B E4M3 with fp32 block scales: 128x128 blocks for the weight, 1x128 for
//                   the activations (CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F / VEC128_32F, the
//                   DeepSeek-V3 recipe), C and D bf16; cuBLAS 12.9 or newer, where the GPU has it;
//   mxfp8           A, B E4M3 with a UE8M0 scale per 32 elements along k (VEC32_UE8M0), C and D
//                   bf16; compute capability 10.0 or newer;
//   nvfp4           A, B E2M1 with a UE4M3 scale per 16 elements along k (VEC16_UE4M3), C and D
//                   bf16; compute capability 10.0 or newer.
// The algorithm is cuBLASLt's heuristic first choice with a 32 MiB workspace
// (cublasLtMatmulAlgoGetHeuristic), as frameworks run it without autotuning.
#include <cublasLt.h>

#include <cmath>
#include <memory>

#include "kernels.h"
#include "profiler.h"

namespace preflight::kp {
namespace {

constexpr size_t kWorkspaceBytes = size_t{32} << 20;

void check_cublas(cublasStatus_t status, const char* call) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  throw Fatal{kExitLibraryError, std::string(call) + " failed: " + cublasLtGetStatusString(status)};
}
#define KP_CUBLAS(call) check_cublas((call), #call)

cublasLtHandle_t g_handle = nullptr;  // created on the first GEMM row

cublasLtHandle_t lt_handle() {
  if (g_handle == nullptr) KP_CUBLAS(cublasLtCreate(&g_handle));
  return g_handle;
}

// Owners for cuBLASLt's descriptors.
struct DescDeleter {
  void operator()(cublasLtMatmulDescOpaque_t* d) const { cublasLtMatmulDescDestroy(d); }
  void operator()(cublasLtMatrixLayoutOpaque_t* d) const { cublasLtMatrixLayoutDestroy(d); }
  void operator()(cublasLtMatmulPreferenceOpaque_t* d) const { cublasLtMatmulPreferenceDestroy(d); }
};
using MatmulDesc = std::unique_ptr<cublasLtMatmulDescOpaque_t, DescDeleter>;
using Layout = std::unique_ptr<cublasLtMatrixLayoutOpaque_t, DescDeleter>;
using Preference = std::unique_ptr<cublasLtMatmulPreferenceOpaque_t, DescDeleter>;

enum class Scaling { kNone, kTensor, kBlock128, kMx32, kNv16 };

struct Format {
  cudaDataType_t ab;  // A and B
  cudaDataType_t cd;  // C and D
  Elem fill;          // how A and B are initialized
  double ab_bits;     // storage bits per A/B element
  double cd_bytes;    // bytes per C/D element
  Scaling scaling;
  int min_cc;  // compute capability, major * 10 + minor
};

Format format_of(const Row& row) {
  const std::string& d = row.dtype;
  if (d == "bf16") return {CUDA_R_16BF, CUDA_R_16BF, Elem::kBf16, 16, 2, Scaling::kNone, 0};
  if (d == "fp16") return {CUDA_R_16F, CUDA_R_16F, Elem::kFp16, 16, 2, Scaling::kNone, 0};
  if (d == "fp8") return {CUDA_R_8F_E4M3, CUDA_R_16BF, Elem::kFp8E4m3, 8, 2, Scaling::kTensor, 89};
  if (d == "fp8_blockwise") {
#if CUBLAS_VERSION >= 120900
    return {CUDA_R_8F_E4M3, CUDA_R_16BF, Elem::kFp8E4m3, 8, 2, Scaling::kBlock128, 90};
#else
    throw Skip{"this cuBLASLt (built against " + std::to_string(CUBLAS_VERSION) +
               ") has no FP8 block scaling (cuBLAS 12.9 or newer)"};
#endif
  }
  if (d == "mxfp8" || d == "nvfp4") {
#if CUBLAS_VERSION >= 120800
    if (d == "mxfp8") {
      return {CUDA_R_8F_E4M3, CUDA_R_16BF, Elem::kFp8E4m3, 8, 2, Scaling::kMx32, 100};
    }
    return {CUDA_R_4F_E2M1, CUDA_R_16BF, Elem::kBytes, 4, 2, Scaling::kNv16, 100};
#else
    throw Skip{"this cuBLASLt (built against " + std::to_string(CUBLAS_VERSION) +
               ") has no microscaled formats (cuBLAS 12.8 or newer)"};
#endif
  }
  throw Skip{"unknown GEMM format " + d};
}

int64_t round_up(int64_t v, int64_t to) { return (v + to - 1) / to * to; }
int64_t ceil_div(int64_t v, int64_t by) { return (v + by - 1) / by; }

// Bytes of one operand's scale factors: `outer` rows (M or N) of `k` elements. Sized on the
// generous side of cuBLAS's layouts (its block-scaled layouts pad the outer dimension to 128
// and the scale columns to 4), so any layout cuBLAS reads lies inside the buffer.
double scale_bytes(Scaling s, int64_t outer, int64_t k, bool weight) {
  switch (s) {
    case Scaling::kNone:
      return 0;
    case Scaling::kTensor:
      return sizeof(float);
    case Scaling::kBlock128:
      if (weight) return 4.0 * round_up(ceil_div(outer, 128), 4) * round_up(ceil_div(k, 128), 4);
      return 4.0 * round_up(outer, 128) * round_up(ceil_div(k, 128), 4);
    case Scaling::kMx32:
      return 1.0 * round_up(outer, 128) * round_up(ceil_div(k, 32), 4);
    case Scaling::kNv16:
      return 1.0 * round_up(outer, 128) * round_up(ceil_div(k, 16), 4);
  }
  return 0;
}

Layout make_layout(cudaDataType_t type, int64_t rows, int64_t cols, int64_t ld, int64_t batch,
                   int64_t stride) {
  cublasLtMatrixLayout_t l = nullptr;
  KP_CUBLAS(cublasLtMatrixLayoutCreate(&l, type, static_cast<uint64_t>(rows),
                                       static_cast<uint64_t>(cols), ld));
  Layout owned(l);
  if (batch > 1) {
    const int32_t count = static_cast<int32_t>(batch);
    KP_CUBLAS(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count,
                                               sizeof count));
    KP_CUBLAS(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                               &stride, sizeof stride));
  }
  return owned;
}

template <class T>
void set_desc(cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t attr, const T& value) {
  KP_CUBLAS(cublasLtMatmulDescSetAttribute(d, attr, &value, sizeof value));
}

}  // namespace

std::string cublaslt_version() {
  const size_t v = cublasLtGetVersion();
  return std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." +
         std::to_string(v % 100) + " (built against " + std::to_string(CUBLAS_VER_MAJOR) + "." +
         std::to_string(CUBLAS_VER_MINOR) + "." + std::to_string(CUBLAS_VER_PATCH) + ")";
}

Measurement measure_gemm(const Context& ctx, const Row& row) {
  const Format f = format_of(row);
  const int cc = ctx.prop.major * 10 + ctx.prop.minor;
  if (cc < f.min_cc) {
    throw Skip{row.dtype + " GEMMs need compute capability " + std::to_string(f.min_cc / 10) + "." +
               std::to_string(f.min_cc % 10) + " or newer; this GPU has " +
               std::to_string(ctx.prop.major) + "." + std::to_string(ctx.prop.minor)};
  }
  if (row.batch > 0x7fffffff) throw Skip{"batch is past cuBLASLt's 32-bit batch count"};

  // cuBLAS's view (see the top of the file): M = n, N = m, K = k.
  const int64_t M = row.n, N = row.m, K = row.k, batch = row.batch;
  const double a_bytes = static_cast<double>(K) * M * batch * f.ab_bits / 8;  // the weight
  const double b_bytes = static_cast<double>(K) * N * batch * f.ab_bits / 8;  // the activations
  const double d_bytes = static_cast<double>(M) * N * batch * f.cd_bytes;
  const double a_scale = scale_bytes(f.scaling, M, K, /*weight=*/true) * batch;
  const double b_scale = scale_bytes(f.scaling, N, K, /*weight=*/false) * batch;
  require_device_memory(a_bytes + b_bytes + d_bytes + a_scale + b_scale + kWorkspaceBytes);
  if (f.ab_bits == 4 && (static_cast<int64_t>(K) * M % 2 != 0 || K * N % 2 != 0)) {
    throw Skip{"nvfp4 operands need an even number of elements"};
  }

  DeviceBuffer a(static_cast<size_t>(a_bytes)), b(static_cast<size_t>(b_bytes)),
      d(static_cast<size_t>(d_bytes)), workspace(kWorkspaceBytes);
  DeviceBuffer sa(static_cast<size_t>(a_scale)), sb(static_cast<size_t>(b_scale));
  const int64_t a_elems = K * M * batch, b_elems = K * N * batch;
  KP_CUDA(fill_random(a.get(), f.ab_bits == 4 ? a_elems / 2 : a_elems, f.fill, 1, ctx.stream));
  KP_CUDA(fill_random(b.get(), f.ab_bits == 4 ? b_elems / 2 : b_elems, f.fill, 2, ctx.stream));
  switch (f.scaling) {
    case Scaling::kNone:
      break;
    case Scaling::kTensor:
    case Scaling::kBlock128:  // fp32 scales of 1
      KP_CUDA(fill_f32(static_cast<float*>(sa.get()), static_cast<int64_t>(a_scale / 4), 1.0f,
                       ctx.stream));
      KP_CUDA(fill_f32(static_cast<float*>(sb.get()), static_cast<int64_t>(b_scale / 4), 1.0f,
                       ctx.stream));
      break;
    case Scaling::kMx32:  // UE8M0 0x7f = 2^0
      KP_CUDA(cudaMemsetAsync(sa.get(), 0x7f, sa.size(), ctx.stream));
      KP_CUDA(cudaMemsetAsync(sb.get(), 0x7f, sb.size(), ctx.stream));
      break;
    case Scaling::kNv16:  // UE4M3 0x38 = 1.0
      KP_CUDA(cudaMemsetAsync(sa.get(), 0x38, sa.size(), ctx.stream));
      KP_CUDA(cudaMemsetAsync(sb.get(), 0x38, sb.size(), ctx.stream));
      break;
  }

  cublasLtMatmulDesc_t op_raw = nullptr;
  KP_CUBLAS(cublasLtMatmulDescCreate(&op_raw, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  MatmulDesc op(op_raw);
  set_desc(op_raw, CUBLASLT_MATMUL_DESC_TRANSA, int32_t{CUBLAS_OP_T});
  set_desc(op_raw, CUBLASLT_MATMUL_DESC_TRANSB, int32_t{CUBLAS_OP_N});
  if (f.scaling != Scaling::kNone) {
    set_desc(op_raw, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, static_cast<const void*>(sa.get()));
    set_desc(op_raw, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, static_cast<const void*>(sb.get()));
  }
  if (f.scaling == Scaling::kTensor) set_desc(op_raw, CUBLASLT_MATMUL_DESC_FAST_ACCUM, int8_t{1});
#if CUBLAS_VERSION >= 120800
  if (f.scaling == Scaling::kMx32 || f.scaling == Scaling::kNv16) {
    const int32_t mode = f.scaling == Scaling::kMx32 ? CUBLASLT_MATMUL_MATRIX_SCALE_VEC32_UE8M0
                                                     : CUBLASLT_MATMUL_MATRIX_SCALE_VEC16_UE4M3;
    set_desc(op_raw, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, mode);
    set_desc(op_raw, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, mode);
  }
#endif
#if CUBLAS_VERSION >= 120900
  if (f.scaling == Scaling::kBlock128) {
    set_desc(op_raw, CUBLASLT_MATMUL_DESC_A_SCALE_MODE,
             int32_t{CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F});
    set_desc(op_raw, CUBLASLT_MATMUL_DESC_B_SCALE_MODE,
             int32_t{CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F});
  }
#endif

  const Layout la = make_layout(f.ab, K, M, K, batch, K * M);
  const Layout lb = make_layout(f.ab, K, N, K, batch, K * N);
  const Layout lc = make_layout(f.cd, M, N, M, batch, M * N);
  const Layout ld = make_layout(f.cd, M, N, M, batch, M * N);

  cublasLtMatmulPreference_t pref_raw = nullptr;
  KP_CUBLAS(cublasLtMatmulPreferenceCreate(&pref_raw));
  Preference pref(pref_raw);
  const uint64_t max_workspace = kWorkspaceBytes;
  KP_CUBLAS(cublasLtMatmulPreferenceSetAttribute(pref_raw, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                 &max_workspace, sizeof max_workspace));
  cublasLtMatmulHeuristicResult_t heuristic{};
  int found = 0;
  const cublasStatus_t hs = cublasLtMatmulAlgoGetHeuristic(
      lt_handle(), op_raw, la.get(), lb.get(), lc.get(), ld.get(), pref_raw, 1, &heuristic, &found);
  if (hs == CUBLAS_STATUS_NOT_SUPPORTED || (hs == CUBLAS_STATUS_SUCCESS && found == 0)) {
    throw Skip{"cuBLASLt has no algorithm for this format and shape on this GPU"};
  }
  check_cublas(hs, "cublasLtMatmulAlgoGetHeuristic");

  const float alpha = 1.0f, beta = 0.0f;
  auto launch = [&](int) {
    KP_CUBLAS(cublasLtMatmul(lt_handle(), op_raw, &alpha, a.get(), la.get(), b.get(), lb.get(),
                             &beta, d.get(), lc.get(), d.get(), ld.get(), &heuristic.algo,
                             workspace.get(), kWorkspaceBytes, ctx.stream));
  };
  return time_launches(ctx, launch);
}

void release_cublaslt() {
  if (g_handle != nullptr) cublasLtDestroy(g_handle);
  g_handle = nullptr;
}

}  // namespace preflight::kp
