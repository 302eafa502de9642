// Attention rows: cuDNN's fused flash attention, forward or backward, through the cuDNN backend
// graph API (cudnnBackend*; cuDNN documentation, "Graph API" and "Backend Descriptor Types").
//
// cuDNN fuses scaled dot-product attention when an operation graph has the pattern its
// specialized runtime-fusion engines recognize ("Fused Flash Attention fprop / bprop"). The cuDNN
// frontend's C++ API builds that graph from its SDPA node; the profiler builds the same pattern
// with backend descriptors, so it needs only cudnn.h. cuDNN 9.13 added single SDPA operations
// (CUDNN_BACKEND_OPERATION_SDPA_FWD/BWD_DESCRIPTOR), but causal masking on them needs the
// score-modifier subgraph of cuDNN 9.21, so the composed graph below serves every version from 9.
//
// Shapes and layout: Q [b, h_q, s_q, d], K and V [b, h_kv, s_kv, d] (grouped-query attention when
// h_kv < h_q; cuDNN broadcasts the KV heads), stored token-major ("BSHD", as Megatron-LM and
// Transformer Engine hold them), bf16 or fp16 with fp32 softmax statistics, scale 1/sqrt(d), no
// dropout, top-left causal mask when the row is causal.
//
// Forward (training: it writes the softmax statistics the backward pass reads):
//   S = Q K^T * scale; [causal: S = row >= col ? S : lowest]; M = max_row(S); E = exp(S - M);
//   L = sum_row(E); Stats = M + log(L); O = (E / L) V
// Backward (given O, dO and Stats from the forward pass):
//   D = sum_row(dO * O); P = exp(Q K^T * scale [masked] - Stats); dV = P^T dO;
//   dS = P * (dO V^T - D) * scale; dK = dS^T Q; dQ = dS K (accumulated in fp32)
// For GQA the dK and dV of the h_q query heads are summed onto the h_kv heads by a reduction.
// A backward row runs the forward graph once first, so O and Stats are real.
#include <algorithm>
#include <cmath>
#include <limits>

#include "profiler.h"

#ifdef PREFLIGHT_KP_HAVE_CUDNN
#include <cudnn.h>
#if CUDNN_MAJOR < 9
#undef PREFLIGHT_KP_HAVE_CUDNN  // the graph below needs cuDNN 9 (CMake checks this as well)
#endif
#endif

#ifdef PREFLIGHT_KP_HAVE_CUDNN
#include <array>

#include "kernels.h"
#endif

namespace preflight::kp {

#ifndef PREFLIGHT_KP_HAVE_CUDNN

std::string cudnn_version() { return "not built in (cuDNN 9 headers and library not found)"; }
void release_cudnn() {}

Measurement measure_attention(const Context&, const Row&) {
  // TODO: rebuild with cuDNN 9 (cudnn.h and libcudnn where CMake finds them) to time attention.
  throw Skip{"the profiler was built without cuDNN, which attention rows need"};
}

#else

namespace {

cudnnHandle_t g_handle = nullptr;  // created on the first attention row

// cuDNN status families (cudnn_graph.h): 3xxx is "not supported".
bool not_supported(cudnnStatus_t s) { return s / 1000 == CUDNN_STATUS_NOT_SUPPORTED / 1000; }

std::string status_text(cudnnStatus_t s, const char* call) {
  std::string msg = std::string(call) + " failed: " + cudnnGetErrorString(s);
  char last[512] = {0};
  cudnnGetLastErrorString(last, sizeof last);
  if (last[0] != '\0') msg += " (" + std::string(last) + ")";
  return msg;
}

// While the graph is built, "not supported" means this cuDNN has no engine for the row's shape
// on this GPU: the row is skipped. Any other failure, and every failure while running, ends the
// run.
void check_building(cudnnStatus_t s, const char* call) {
  if (s == CUDNN_STATUS_SUCCESS) return;
  if (not_supported(s)) {
    throw Skip{"cuDNN does not support this attention graph: " + status_text(s, call)};
  }
  throw Fatal{kExitLibraryError, status_text(s, call)};
}

void check_running(cudnnStatus_t s, const char* call) {
  if (s != CUDNN_STATUS_SUCCESS) throw Fatal{kExitLibraryError, status_text(s, call)};
}

cudnnHandle_t handle(cudaStream_t stream) {
  if (g_handle == nullptr) check_running(cudnnCreate(&g_handle), "cudnnCreate");
  check_running(cudnnSetStream(g_handle, stream), "cudnnSetStream");
  return g_handle;
}

using Dims = std::array<int64_t, 4>;

// Tensor uids (the variant pack binds device pointers to them).
enum Uid : int64_t {
  kQ = 1,
  kK,
  kV,
  kO,
  kStats,
  kScale,
  kLowest,
  kOne,
  kDO,
  kDQ,
  kDK,
  kDV,
  kDQAccum,
  kSoftmaxSum,
  kFirstVirtual = 100,
};

// One operation graph and its execution plan; owns every descriptor it creates.
class Graph {
 public:
  using Desc = cudnnBackendDescriptor_t;

  explicit Graph(cudnnHandle_t h) : handle_(h) {}
  ~Graph() {
    for (auto it = owned_.rbegin(); it != owned_.rend(); ++it) cudnnBackendDestroyDescriptor(*it);
  }
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  Desc create(cudnnBackendDescriptorType_t type) {
    Desc d = nullptr;
    check_building(cudnnBackendCreateDescriptor(type, &d), "cudnnBackendCreateDescriptor");
    owned_.push_back(d);
    return d;
  }

  void set(Desc d, cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type,
           int64_t count, const void* value) {
    check_building(cudnnBackendSetAttribute(d, name, type, count, value),
                   "cudnnBackendSetAttribute");
  }
  void set_desc(Desc d, cudnnBackendAttributeName_t name, Desc value) {
    set(d, name, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &value);
  }
  void set_type(Desc d, cudnnBackendAttributeName_t name, cudnnDataType_t value) {
    set(d, name, CUDNN_TYPE_DATA_TYPE, 1, &value);
  }
  void finalize(Desc d, const char* what) { check_building(cudnnBackendFinalize(d), what); }

  // A tensor in device memory (or host memory when `by_value`: a scalar passed by value).
  Desc tensor(int64_t uid, cudnnDataType_t type, const Dims& dims, const Dims& strides,
              bool is_virtual = false, bool by_value = false) {
    Desc t = create(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
    const int64_t alignment = 16;
    set_type(t, CUDNN_ATTR_TENSOR_DATA_TYPE, type);
    set(t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, dims.data());
    set(t, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, strides.data());
    set(t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid);
    set(t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &alignment);
    set(t, CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1, &is_virtual);
    if (by_value) set(t, CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, 1, &by_value);
    finalize(t, "cudnnBackendFinalize(tensor)");
    return t;
  }
  Desc scalar(int64_t uid) {
    const Dims one = {1, 1, 1, 1};
    return tensor(uid, CUDNN_DATA_FLOAT, one, one, false, true);
  }
  // An intermediate the fused kernel keeps on chip.
  Desc virt(cudnnDataType_t type, const Dims& dims, const Dims& strides) {
    return tensor(next_virtual_++, type, dims, strides, true);
  }

  void matmul(Desc a, Desc b, Desc c) {
    Desc m = create(CUDNN_BACKEND_MATMUL_DESCRIPTOR);
    set_type(m, CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_DATA_FLOAT);
    finalize(m, "cudnnBackendFinalize(matmul descriptor)");
    Desc op = create(CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR);
    set_desc(op, CUDNN_ATTR_OPERATION_MATMUL_ADESC, a);
    set_desc(op, CUDNN_ATTR_OPERATION_MATMUL_BDESC, b);
    set_desc(op, CUDNN_ATTR_OPERATION_MATMUL_CDESC, c);
    set_desc(op, CUDNN_ATTR_OPERATION_MATMUL_DESC, m);
    finalize(op, "cudnnBackendFinalize(matmul)");
    ops_.push_back(op);
  }

  // y = mode(x[, b]) ; BINARY_SELECT: y = t ? x : b. GEN_INDEX: y = the index along `axis`.
  void pointwise(cudnnPointwiseMode_t mode, Desc x, Desc b, Desc y, Desc t = nullptr,
                 cudnnDataType_t precision = CUDNN_DATA_FLOAT, int64_t axis = -1) {
    Desc pw = create(CUDNN_BACKEND_POINTWISE_DESCRIPTOR);
    set(pw, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode);
    set_type(pw, CUDNN_ATTR_POINTWISE_MATH_PREC, precision);
    if (axis >= 0) set(pw, CUDNN_ATTR_POINTWISE_AXIS, CUDNN_TYPE_INT64, 1, &axis);
    finalize(pw, "cudnnBackendFinalize(pointwise descriptor)");
    Desc op = create(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
    set_desc(op, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, pw);
    set_desc(op, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, x);
    if (b != nullptr) set_desc(op, CUDNN_ATTR_OPERATION_POINTWISE_BDESC, b);
    if (t != nullptr) set_desc(op, CUDNN_ATTR_OPERATION_POINTWISE_TDESC, t);
    set_desc(op, CUDNN_ATTR_OPERATION_POINTWISE_YDESC, y);
    finalize(op, "cudnnBackendFinalize(pointwise)");
    ops_.push_back(op);
  }

  // Reduces x onto y's shape (the dimensions where y is 1, or grouped heads).
  void reduction(cudnnReduceTensorOp_t op_type, Desc x, Desc y) {
    Desc r = create(CUDNN_BACKEND_REDUCTION_DESCRIPTOR);
    set(r, CUDNN_ATTR_REDUCTION_OPERATOR, CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, 1, &op_type);
    set_type(r, CUDNN_ATTR_REDUCTION_COMP_TYPE, CUDNN_DATA_FLOAT);
    finalize(r, "cudnnBackendFinalize(reduction descriptor)");
    Desc op = create(CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR);
    set_desc(op, CUDNN_ATTR_OPERATION_REDUCTION_XDESC, x);
    set_desc(op, CUDNN_ATTR_OPERATION_REDUCTION_YDESC, y);
    set_desc(op, CUDNN_ATTR_OPERATION_REDUCTION_DESC, r);
    finalize(op, "cudnnBackendFinalize(reduction)");
    ops_.push_back(op);
  }

  // The same elements under other dimensions and strides (a transposed view).
  void reshape(Desc x, Desc y) {
    Desc op = create(CUDNN_BACKEND_OPERATION_RESHAPE_DESCRIPTOR);
    set_desc(op, CUDNN_ATTR_OPERATION_RESHAPE_XDESC, x);
    set_desc(op, CUDNN_ATTR_OPERATION_RESHAPE_YDESC, y);
    finalize(op, "cudnnBackendFinalize(reshape)");
    ops_.push_back(op);
  }

  // Finalizes the operation graph and takes the first engine configuration, in the order of
  // cuDNN's heuristics (mode A, then the fallback list), that makes an execution plan. The
  // fused-attention engines compile their kernel at run time on first use (NVRTC), which is
  // why this can take seconds; it is not timed.
  void build() {
// cuDNN 9's headers mark the handle attributes deprecated (device-property descriptors are to
// replace them); they still bind the graph and the plan to the handle's device and stream.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    graph_ = create(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
    set(graph_, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle_);
    set(graph_, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR,
        static_cast<int64_t>(ops_.size()), ops_.data());
    finalize(graph_, "cudnnBackendFinalize(operation graph)");
    cudnnStatus_t last = CUDNN_STATUS_NOT_SUPPORTED;
    for (cudnnBackendHeurMode_t mode : {CUDNN_HEUR_MODE_A, CUDNN_HEUR_MODE_FALLBACK}) {
      Desc heur = create(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
      set_desc(heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, graph_);
      set(heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode);
      if (cudnnBackendFinalize(heur) != CUDNN_STATUS_SUCCESS) continue;
      int64_t count = 0;
      if (cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                   CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count,
                                   nullptr) != CUDNN_STATUS_SUCCESS ||
          count <= 0) {
        continue;
      }
      std::vector<Desc> configs;
      for (int64_t i = 0; i < count; ++i) {
        configs.push_back(create(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR));
      }
      int64_t returned = 0;
      check_building(
          cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                   CUDNN_TYPE_BACKEND_DESCRIPTOR, count, &returned, configs.data()),
          "cudnnBackendGetAttribute(CUDNN_ATTR_ENGINEHEUR_RESULTS)");
      for (int64_t i = 0; i < returned; ++i) {
        Desc plan = create(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
        set(plan, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle_);
        set_desc(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, configs[i]);
        last = cudnnBackendFinalize(plan);
        if (last == CUDNN_STATUS_SUCCESS) {
          plan_ = plan;
          int64_t n = 0;
          check_building(cudnnBackendGetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
                                                  CUDNN_TYPE_INT64, 1, &n, &workspace_),
                         "cudnnBackendGetAttribute(CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE)");
          return;
        }
      }
    }
#pragma GCC diagnostic pop
    throw Skip{"cuDNN found no engine for this attention graph on this GPU (last: " +
               std::string(cudnnGetErrorString(last)) + ")"};
  }

  int64_t workspace_bytes() const { return workspace_; }

  // A variant pack binding uids to pointers; run() executes the plan with it.
  void bind(const std::vector<int64_t>& uids, const std::vector<void*>& pointers, void* workspace) {
    pack_ = create(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
    set(pack_, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64,
        static_cast<int64_t>(uids.size()), uids.data());
    set(pack_, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR,
        static_cast<int64_t>(pointers.size()), pointers.data());
    set(pack_, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &workspace);
    finalize(pack_, "cudnnBackendFinalize(variant pack)");
  }

  void run() const {
    check_running(cudnnBackendExecute(handle_, plan_, pack_), "cudnnBackendExecute");
  }

 private:
  cudnnHandle_t handle_;
  std::vector<Desc> owned_;
  std::vector<Desc> ops_;
  Desc graph_ = nullptr;
  Desc plan_ = nullptr;
  Desc pack_ = nullptr;
  int64_t workspace_ = 0;
  int64_t next_virtual_ = kFirstVirtual;
};

struct Shape {
  int64_t b, hq, hkv, sq, skv, d;
  cudnnDataType_t io;
  bool causal;
};

// Logical [b, h, s, d] over token-major storage [b, s, h, d].
Dims bshd_strides(int64_t h, int64_t s, int64_t d) { return {s * h * d, d, h * d, 1}; }
// The same storage seen as [b, h, d, s] (K^T, V^T).
Dims bshd_transposed_strides(int64_t h, int64_t s, int64_t d) { return {s * h * d, d, 1, h * d}; }
Dims packed(const Dims& dims) {
  return {dims[1] * dims[2] * dims[3], dims[2] * dims[3], dims[3], 1};
}

// The causal mask on scores x: keep x where row >= column, else the lowest float.
Graph::Desc causal_mask(Graph& g, Graph::Desc x, Graph::Desc lowest, const Dims& scores) {
  const Dims st = packed(scores);
  Graph::Desc row = g.virt(CUDNN_DATA_INT32, scores, st);
  Graph::Desc col = g.virt(CUDNN_DATA_INT32, scores, st);
  Graph::Desc keep = g.virt(CUDNN_DATA_BOOLEAN, scores, st);
  Graph::Desc y = g.virt(CUDNN_DATA_FLOAT, scores, st);
  g.pointwise(CUDNN_POINTWISE_GEN_INDEX, x, nullptr, row, nullptr, CUDNN_DATA_FLOAT, 2);
  g.pointwise(CUDNN_POINTWISE_GEN_INDEX, x, nullptr, col, nullptr, CUDNN_DATA_FLOAT, 3);
  g.pointwise(CUDNN_POINTWISE_CMP_GE, row, col, keep, nullptr, CUDNN_DATA_BOOLEAN);
  g.pointwise(CUDNN_POINTWISE_BINARY_SELECT, x, lowest, y, keep);
  return y;
}

void build_forward(Graph& g, const Shape& s) {
  const Dims qd = {s.b, s.hq, s.sq, s.d}, kvd = {s.b, s.hkv, s.skv, s.d};
  const Dims ktd = {s.b, s.hkv, s.d, s.skv};
  const Dims scores = {s.b, s.hq, s.sq, s.skv}, rowd = {s.b, s.hq, s.sq, 1};
  const Dims sst = packed(scores), rst = packed(rowd);
  Graph::Desc q = g.tensor(kQ, s.io, qd, bshd_strides(s.hq, s.sq, s.d));
  Graph::Desc kt = g.tensor(kK, s.io, ktd, bshd_transposed_strides(s.hkv, s.skv, s.d));
  Graph::Desc v = g.tensor(kV, s.io, kvd, bshd_strides(s.hkv, s.skv, s.d));
  Graph::Desc o = g.tensor(kO, s.io, qd, bshd_strides(s.hq, s.sq, s.d));
  Graph::Desc stats = g.tensor(kStats, CUDNN_DATA_FLOAT, rowd, rst);
  Graph::Desc scale = g.scalar(kScale);

  Graph::Desc qk = g.virt(CUDNN_DATA_FLOAT, scores, sst);
  g.matmul(q, kt, qk);
  Graph::Desc scaled = g.virt(CUDNN_DATA_FLOAT, scores, sst);
  g.pointwise(CUDNN_POINTWISE_MUL, qk, scale, scaled);
  Graph::Desc masked = s.causal ? causal_mask(g, scaled, g.scalar(kLowest), scores) : scaled;
  // Softmax with its statistics, Stats = max + log(sum(exp(x - max))).
  Graph::Desc mx = g.virt(CUDNN_DATA_FLOAT, rowd, rst);
  g.reduction(CUDNN_REDUCE_TENSOR_MAX, masked, mx);
  Graph::Desc shifted = g.virt(CUDNN_DATA_FLOAT, scores, sst);
  g.pointwise(CUDNN_POINTWISE_SUB, masked, mx, shifted);
  Graph::Desc ex = g.virt(CUDNN_DATA_FLOAT, scores, sst);
  g.pointwise(CUDNN_POINTWISE_EXP, shifted, nullptr, ex);
  Graph::Desc sum = g.virt(CUDNN_DATA_FLOAT, rowd, rst);
  g.reduction(CUDNN_REDUCE_TENSOR_ADD, ex, sum);
  Graph::Desc log_sum = g.virt(CUDNN_DATA_FLOAT, rowd, rst);
  g.pointwise(CUDNN_POINTWISE_LOG, sum, nullptr, log_sum);
  g.pointwise(CUDNN_POINTWISE_ADD, mx, log_sum, stats);
  // The probabilities enter the second matmul in the I/O format, as cuDNN's engine expects.
  Graph::Desc p = g.virt(s.io, scores, sst);
  g.pointwise(CUDNN_POINTWISE_DIV, ex, sum, p);
  g.matmul(p, v, o);
}

void build_backward(Graph& g, const Shape& s) {
  const Dims qd = {s.b, s.hq, s.sq, s.d}, kvd = {s.b, s.hkv, s.skv, s.d};
  const Dims ktd = {s.b, s.hkv, s.d, s.skv};
  const Dims scores = {s.b, s.hq, s.sq, s.skv}, scores_t = {s.b, s.hq, s.skv, s.sq};
  const Dims rowd = {s.b, s.hq, s.sq, 1};
  const Dims sst = packed(scores), rst = packed(rowd);
  // The transposed scores are the scores' storage read column-wise.
  const Dims sst_t = {sst[0], sst[1], 1, s.skv};
  const Dims qst = bshd_strides(s.hq, s.sq, s.d), kvst = bshd_strides(s.hkv, s.skv, s.d);
  const Dims kvst_t = bshd_transposed_strides(s.hkv, s.skv, s.d);
  Graph::Desc q = g.tensor(kQ, s.io, qd, qst);
  Graph::Desc kt = g.tensor(kK, s.io, ktd, kvst_t);
  Graph::Desc vt = g.tensor(kV, s.io, ktd, kvst_t);
  Graph::Desc o = g.tensor(kO, s.io, qd, qst);
  Graph::Desc d_o = g.tensor(kDO, s.io, qd, qst);
  Graph::Desc stats = g.tensor(kStats, CUDNN_DATA_FLOAT, rowd, rst);
  Graph::Desc dq = g.tensor(kDQ, s.io, qd, qst);
  Graph::Desc dk = g.tensor(kDK, s.io, kvd, kvst);
  Graph::Desc dv = g.tensor(kDV, s.io, kvd, kvst);
  Graph::Desc scale = g.scalar(kScale);
  // fp32 buffers of the fused kernel: the row sums D and dQ's accumulator.
  Graph::Desc softmax_sum = g.tensor(kSoftmaxSum, CUDNN_DATA_FLOAT, rowd, rst);
  Graph::Desc dq_accum = g.tensor(kDQAccum, CUDNN_DATA_FLOAT, qd, packed(qd));

  // D = sum_row(dO * O) (times 1: the place of the inverse dropout scale).
  Graph::Desc do_o = g.virt(CUDNN_DATA_FLOAT, qd, packed(qd));
  g.pointwise(CUDNN_POINTWISE_MUL, d_o, o, do_o);
  Graph::Desc row_sum = g.virt(CUDNN_DATA_FLOAT, rowd, rst);
  g.reduction(CUDNN_REDUCE_TENSOR_ADD, do_o, row_sum);
  g.pointwise(CUDNN_POINTWISE_MUL, row_sum, g.scalar(kOne), softmax_sum);

  // P = exp(Q K^T * scale [masked] - Stats).
  Graph::Desc qk = g.virt(CUDNN_DATA_FLOAT, scores, sst);
  g.matmul(q, kt, qk);
  Graph::Desc scaled = g.virt(CUDNN_DATA_FLOAT, scores, sst);
  g.pointwise(CUDNN_POINTWISE_MUL, qk, scale, scaled);
  Graph::Desc centered = g.virt(CUDNN_DATA_FLOAT, scores, sst);
  g.pointwise(CUDNN_POINTWISE_SUB, scaled, stats, centered);
  Graph::Desc masked = s.causal ? causal_mask(g, centered, g.scalar(kLowest), scores) : centered;
  Graph::Desc p = g.virt(CUDNN_DATA_FLOAT, scores, sst);
  g.pointwise(CUDNN_POINTWISE_EXP, masked, nullptr, p);

  const bool gqa = s.hkv != s.hq;
  const Dims full_kv = {s.b, s.hq, s.skv, s.d};  // dK, dV per query head before the GQA sum

  // dV = P^T dO.
  Graph::Desc p_t = g.virt(s.io, scores_t, sst_t);
  g.reshape(p, p_t);
  if (gqa) {
    Graph::Desc dv_full = g.virt(s.io, full_kv, packed(full_kv));
    g.matmul(p_t, d_o, dv_full);
    g.reduction(CUDNN_REDUCE_TENSOR_ADD, dv_full, dv);
  } else {
    g.matmul(p_t, d_o, dv);
  }

  // dS = P * (dO V^T - D) * scale.
  Graph::Desc dp = g.virt(CUDNN_DATA_FLOAT, scores, sst);
  g.matmul(d_o, vt, dp);
  Graph::Desc dp_centered = g.virt(CUDNN_DATA_FLOAT, scores, sst);
  g.pointwise(CUDNN_POINTWISE_SUB, dp, softmax_sum, dp_centered);
  Graph::Desc ds_unscaled = g.virt(CUDNN_DATA_FLOAT, scores, sst);
  g.pointwise(CUDNN_POINTWISE_MUL, dp_centered, p, ds_unscaled);
  Graph::Desc ds = g.virt(CUDNN_DATA_FLOAT, scores, sst);
  g.pointwise(CUDNN_POINTWISE_MUL, ds_unscaled, scale, ds);

  // dK = dS^T Q.
  Graph::Desc ds_t = g.virt(s.io, scores_t, sst_t);
  g.reshape(ds, ds_t);
  if (gqa) {
    Graph::Desc dk_full = g.virt(s.io, full_kv, packed(full_kv));
    g.matmul(ds_t, q, dk_full);
    g.reduction(CUDNN_REDUCE_TENSOR_ADD, dk_full, dk);
  } else {
    g.matmul(ds_t, q, dk);
  }

  // dQ = dS K, accumulated in fp32 and converted.
  Graph::Desc k = g.virt(s.io, kvd, kvst);
  g.reshape(kt, k);
  g.matmul(ds, k, dq_accum);
  g.pointwise(CUDNN_POINTWISE_IDENTITY, dq_accum, nullptr, dq);
}

std::string version_text(size_t v) {
  return std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." +
         std::to_string(v % 100);
}

}  // namespace

std::string cudnn_version() {
  return version_text(cudnnGetVersion()) + " (built against " + version_text(CUDNN_VERSION) + ")";
}

void release_cudnn() {
  if (g_handle != nullptr) cudnnDestroy(g_handle);
  g_handle = nullptr;
}

Measurement measure_attention(const Context& ctx, const Row& row) {
  // The support surface of cuDNN's fused attention (cuDNN frontend documentation, "Attention"):
  // Ampere or newer, head width a multiple of 8 up to 256 (128 for Ampere's backward pass).
  const int cc = ctx.prop.major * 10 + ctx.prop.minor;
  if (cc < 80) throw Skip{"cuDNN's fused attention needs compute capability 8.0 or newer"};
  if (cudnnGetVersion() < 90000) {
    throw Skip{"cuDNN " + version_text(cudnnGetVersion()) + " is loaded; attention needs cuDNN 9"};
  }
  const int64_t max_d = row.backward && ctx.prop.major < 9 ? 128 : 256;
  if (row.head_dim % 8 != 0 || row.head_dim > max_d) {
    throw Skip{"cuDNN's fused attention needs a head width that is a multiple of 8 up to " +
               std::to_string(max_d)};
  }
  const Shape s{row.batch,
                row.heads,
                row.kv_heads,
                row.seq_q,
                row.seq_kv,
                row.head_dim,
                row.dtype == "fp16" ? CUDNN_DATA_HALF : CUDNN_DATA_BFLOAT16,
                row.causal};

  // Q, K, V, O, Stats; backward adds dO, dQ, dK, dV, dQ's fp32 accumulator and the row sums.
  const double q_elems = 1.0 * s.b * s.hq * s.sq * s.d, kv_elems = 1.0 * s.b * s.hkv * s.skv * s.d;
  const double rows = 1.0 * s.b * s.hq * s.sq;
  double bytes = 2 * (2 * q_elems + 2 * kv_elems) + 4 * rows;
  if (row.backward) bytes += 2 * (2 * q_elems + 2 * kv_elems) + 4 * q_elems + 4 * rows;
  require_device_memory(bytes);  // before the sizes below are formed (no overflow)
  const size_t q_bytes = static_cast<size_t>(2 * q_elems),
               kv_bytes = static_cast<size_t>(2 * kv_elems);
  const size_t stats_bytes = static_cast<size_t>(4 * rows);
  const size_t bwd = row.backward ? 1 : 0;

  cudnnHandle_t h = handle(ctx.stream);
  Graph forward(h);
  build_forward(forward, s);
  Graph backward(h);
  if (row.backward) build_backward(backward, s);
  const int64_t workspace_bytes =
      std::max(forward.workspace_bytes(), row.backward ? backward.workspace_bytes() : 0);
  require_device_memory(bytes + static_cast<double>(workspace_bytes));

  DeviceBuffer q(q_bytes), k(kv_bytes), v(kv_bytes), o(q_bytes), stats(stats_bytes);
  DeviceBuffer d_o(bwd * q_bytes), dq(bwd * q_bytes), dk(bwd * kv_bytes), dv(bwd * kv_bytes);
  DeviceBuffer dq_accum(bwd * 2 * q_bytes), softmax_sum(bwd * stats_bytes);
  DeviceBuffer workspace(static_cast<size_t>(workspace_bytes));
  const Elem elem = row.dtype == "fp16" ? Elem::kFp16 : Elem::kBf16;
  KP_CUDA(fill_random(q.get(), q.size() / 2, elem, 5, ctx.stream));
  KP_CUDA(fill_random(k.get(), k.size() / 2, elem, 6, ctx.stream));
  KP_CUDA(fill_random(v.get(), v.size() / 2, elem, 7, ctx.stream));
  if (row.backward) {
    KP_CUDA(fill_random(d_o.get(), d_o.size() / 2, elem, 8, ctx.stream));
    KP_CUDA(cudaMemsetAsync(dq_accum.get(), 0, dq_accum.size(), ctx.stream));
  }

  // Scalars passed by value: the variant pack points at host memory.
  float scale = 1.0f / std::sqrt(static_cast<float>(s.d));
  float lowest = std::numeric_limits<float>::lowest();
  float one = 1.0f;
  // Each graph's variant pack names exactly the tensors of that graph.
  std::vector<int64_t> uids;
  std::vector<void*> pointers;
  uids.reserve(16);
  pointers.reserve(16);
  const auto add = [&](int64_t uid, void* pointer) {
    uids.push_back(uid);
    pointers.push_back(pointer);
  };
  add(kQ, q.get());
  add(kK, k.get());
  add(kV, v.get());
  add(kO, o.get());
  add(kStats, stats.get());
  add(kScale, &scale);
  if (s.causal) add(kLowest, &lowest);
  forward.bind(uids, pointers, workspace.get());
  if (!row.backward) {
    return time_launches(ctx, [&](int) { forward.run(); });
  }

  forward.run();  // O and Stats for the backward pass
  add(kOne, &one);
  add(kDO, d_o.get());
  add(kDQ, dq.get());
  add(kDK, dk.get());
  add(kDV, dv.get());
  add(kDQAccum, dq_accum.get());
  add(kSoftmaxSum, softmax_sum.get());
  backward.bind(uids, pointers, workspace.get());
  return time_launches(ctx, [&](int) { backward.run(); });
}

#endif  // PREFLIGHT_KP_HAVE_CUDNN

}  // namespace preflight::kp
