// The workload IR: what every rank class (one pipeline stage; all TP and DP peers of a stage run
// the same program) executes in one training iteration. Ops are grouped in Blocks (one layer's
// forward, one layer's backward, the loss head, the optimizer step, ...) that the stage Programs
// refer to by index, so a 96-layer, 192-micro-batch iteration does not store millions of ops.
// Plain copyable values; the generator fills them, the executor only reads them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/units.h"
#include "config/scenario.h"
#include "parallel/rank_layout.h"

namespace preflight {

enum class OpType : uint8_t {
  kGemm,        // C[m×n] = A[m×k]·B[k×n], `batch` independent products
  kAttention,   // fused attention core (FlashAttention), `flops` and `bytes` given
  kMemory,      // memory-bound kernel (norm, softmax, dropout, element-wise, optimizer)
  kCollective,  // a collective in the stream (TP comm blocks the compute stream)
};

enum class CollectiveKind : uint8_t {
  kAllReduce,
  kAllGather,
  kReduceScatter,
  kBroadcast,
  kAllToAll,  // comm_bytes: the largest per-rank send or receive buffer of the group
  kSendRecv,  // one ring step of ring attention: every rank sends comm_bytes to its successor
};

// What an op's time counts as in the breakdown.
enum class Category : uint8_t {
  kCompute,
  kTpComm,
  kPpComm,
  kDpComm,
  kOptimizer,
  kEpComm,   // expert-parallel token dispatch/combine (all-to-all)
  kCpComm,   // context-parallel K/V exchange (ring) or all-to-all (Ulysses)
  kOffload,  // activation copies to and from host memory (parallelism.offload_layers)
};

struct Op {
  std::string name;  // "qkv.fwd", "fc1.wgrad", "tp.allreduce"
  OpType type = OpType::kMemory;
  Category category = Category::kCompute;
  // kGemm: dimensions; flops = 2·m·n·k·batch.
  int64_t m = 0, n = 0, k = 0, batch = 1;
  int bytes_per_element = 2;  // GEMM operand width (2 = fp16/bf16, 1 = fp8)
  Flops flops;
  Bytes bytes;  // HBM traffic (kGemm: A + B + C; kMemory/kAttention: read + write)
  // kAttention, FlashAttention-style kernels: the softmax exponentials evaluated, one per score
  // element the kernel computes (the backward recomputes them once); 0 where none are modelled.
  double exponentials = 0;
  // kAttention, fused attention kernels of the cuDNN class: the mean key tiles each work unit (a
  // tile of queries of one head) computes; each unit also pays the GPU's fixed cost of a unit
  // (GpuCalibration::attention_unit_overhead, in such tiles). 0 where no such kernel runs.
  double attention_tiles_per_unit = 0;
  // kCollective
  CollectiveKind collective = CollectiveKind::kAllReduce;
  GroupKind group = GroupKind::kTensor;
  Bytes comm_bytes;  // nccl-tests size convention (all-gather / reduce-scatter: the full buffer)
  // SMs the collective's kernels hold while it runs, where a library other than NCCL runs it
  // (the flex dispatcher's DeepEP / HybridEP kernels); 0: NCCL's channels, one block each.
  int comm_sms = 0;
  // Stream placement. An `async` collective runs on the communication stream, overlapping the
  // ops after it (Megatron's asynchronous TP all-reduce of input gradients); an op with
  // `wait_comm` first waits for the communication stream to drain.
  bool async = false;
  bool wait_comm = false;
  // Async only: starts when the communication stream is free, without waiting for the compute
  // stream, because what it sends arrived by the previous communication (ring attention
  // forwarding the K/V block it just received).
  bool comm_chain = false;
  // A backward-pass kernel (FlashAttention's dQ/dK/dV pass runs at its own efficiency).
  bool backward = false;
  // A GEMM of `batch` independent matrices launched as one kernel each, at most `gemm_streams`
  // at a time on as many streams (Transformer Engine's per-expert grouped GEMM); 0: one
  // batched kernel over all of them.
  int gemm_streams = 0;
  // A Mamba-2 SSD chunked scan (kAttention-typed: FLOPs and bytes given), timed at the scan
  // kernels' own efficiency (compute_model.h).
  bool ssd_scan = false;
  // kAttention, FlashAttention-style fused kernels: the shape on this rank, the key of a measured
  // kernel table (config/kernel_table.h). heads 0 where the op has no such shape: Mamba scans,
  // ring-attention steps, windowed or packed attention, query and value heads of two widths.
  struct AttentionShape {
    int64_t batch = 0, heads = 0, kv_heads = 0, head_dim = 0, seq_q = 0, seq_kv = 0;
    bool causal = true;
  };
  AttentionShape attention;
  // Host side: kernels the host launches for this op (a grouped GEMM that runs one cuBLAS GEMM
  // per local expert launches that many; 0 for a kernel a library's C++ loop launches, whose
  // cost is host_time: the chunks of TE's comm-GEMM overlap), and whether the host then waits
  // for the GPU to finish it (a device-to-host copy such as the MoE dispatcher's token counts).
  int launches = 1;
  bool host_sync = false;
  // Device side: element-wise kernels the op runs back to back on the compute stream (a Python
  // loop over the local experts launches one set per expert), each with the GPU's kernel_gap;
  // GEMMs count their separately launched groups instead (Op::gemm_streams).
  int device_kernels = 1;
  // Low-precision GEMMs: the A operand arrives quantized from the previous GEMM's epilogue (the
  // fused grouped MLP of a MoE layer), so no cast of it precedes this GEMM (precision_ops.h).
  bool quantized_input = false;
  // Host work of the op beyond its `launches` × launch_overhead: a per_expert grouped GEMM's
  // loop over the local experts in library code (StackConfig::expert_launch_overhead each).
  // Zero under CUDA graphs, which replay the launches without the host.
  SimTime host_time;
  // Compute ops: a duration already measured (an imported SimAI workload, interop/); zero lets
  // the ComputeModel time the op.
  SimTime fixed_time;
};

struct Block {
  std::string name;  // "layer.fwd", "layer.bwd", "head.fwd", "optimizer"
  std::vector<Op> ops;
  // A layer kept in bf16 under a low-precision training.precision
  // (training.num_layers_at_start/end_in_bf16): its GEMMs are not quantized.
  bool high_precision = false;
};

enum class StepKind : uint8_t {
  kRun,         // run `block` `repeat` times on the compute stream
  kSend,        // send `bytes` to `peer` (a stage); the host waits for completion (Megatron)
                // unless `async_p2p`
  kRecv,        // wait for the matching send from `peer`, then synchronise the host (unless
                // `async_p2p`: only the compute stream waits for the data)
  kCollective,  // a blocking collective on the compute stream (`op`)
  kCommAsync,   // a DP collective on the DP stream, overlapping compute (`op`)
  kWaitComm,    // the compute stream waits for the DP stream
  kHostSync,    // the host waits for the GPU (e.g. loss-scale check at the iteration end)
  // Activation offloading (parallelism.offload_layers): a copy of `bytes` between the GPU and
  // host memory on the copy stream, once the compute stream has produced what it copies; to the
  // host in the forward, back in the backward (`backward`). `tag` names it for its wait.
  kHostCopy,
  kWaitHostCopy,  // the compute stream waits for the copy `tag` to finish
};

struct Step {
  StepKind kind = StepKind::kRun;
  int block = -1;
  int repeat = 1;
  int peer = -1;    // stage index for kSend/kRecv
  int64_t tag = 0;  // matches a kSend with its kRecv (a kHostCopy with its wait); names a
                    // cross-stage collective
  Bytes bytes;      // kSend/kRecv/kHostCopy
  // kSend/kRecv on their own stream (parallelism.overlap_p2p, Megatron --overlap-p2p-comm):
  // the host does not wait for the send, nor synchronise after the receive.
  bool async_p2p = false;
  Op op;                // kCollective/kCommAsync
  int microbatch = -1;  // for the trace
  int chunk = 0;        // model chunk (virtual stage) for the trace
  bool backward = false;
};

// The program of one pipeline stage (rank class).
struct Program {
  int stage = 0;
  std::vector<Step> steps;
};

// Routing outcome of one MoE layer (workload/expert_routing.h), for reports and the trace.
struct MoeLayerStats {
  int layer = 0;
  double imbalance = 1;         // busiest EP rank's tokens / mean
  double max_expert_share = 0;  // of the T·k token copies
  double dropped = 0;           // fraction dropped by the capacity factor
  double rank_tokens = 0;       // tokens the busiest rank's experts compute per micro-batch
};

struct Workload {
  std::vector<Block> blocks;
  std::vector<MoeLayerStats> moe_layers;  // MoE models: one per MoE layer, in layer order
  std::vector<Program> stages;            // one per pipeline stage, in order
  int microbatches = 0;
  // Which blocks are layer blocks (for per-layer accounting in reports).
  int layers_per_chunk = 0;
};

}  // namespace preflight
