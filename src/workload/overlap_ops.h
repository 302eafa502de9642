// TP communication overlapped with its GEMMs (parallelism.tp_comm_overlap; Megatron
// --tp-comm-overlap, Transformer Engine's userbuffers): a pure rewrite of one block's ops that
// splits the sequence-parallel all-gather before a column-parallel GEMM, and the reduce-scatter
// (or all-reduce) after a row-parallel GEMM, into chunks pipelined with the GEMM on the TP
// communication stream (docs/workload.md, "Overlap switches and sharded data parallelism").
//
// Which pairs: the layers Transformer Engine builds with userbuffers, by GEMM name (a
// ".recompute" suffix and an "mtp<d>." prefix are ignored). TE's default methods:
//   * ring exchange (all-gather; qkv.fwd, fc1.fwd, mamba.in_proj.fwd, and in backward
//     proj.dgrad, fc2.dgrad and mamba.out_proj.dgrad after the gather of the output gradient;
//     Megatron-Core builds Mamba's in_proj and out_proj with the "fc1"/"fc2" userbuffers):
//     t = tp GEMM chunks of m/t rows; chunk 0 uses the
//     rank's own shard while the ring's first block travels, chunk i waits for block i, and
//     block i+1 is forwarded meanwhile. Ops: transfer 1 (async, after the producer), GEMM 0,
//     then GEMM i (wait_comm) and transfer i+1 (async, comm_chain). Each transfer is a TP
//     send/recv of S/t bytes (S: the gathered buffer), so the t−1 transfers together take C,
//     the ring all-gather's time. Exposed: time = max(G, C + G/t) for a GEMM of time G.
//   * pipeline (reduce-scatter or all-reduce; proj.fwd, fc2.fwd and mamba.out_proj.fwd):
//     n = 4 GEMM chunks (TE's
//     default num_splits); after GEMM chunk i, the collective of its rows (S/n bytes) runs async
//     while chunk i+1 computes; the op after the GEMM waits (wait_comm).
//     time = max(G + C/n, C + G/n) = max(G, C) + min(G, C)/n.
// The rest stays as it is: the backward's bulk overlaps (layer_ops.h), the output layer (a
// Megatron ColumnParallelLinear, outside TE), MoE and MLA projections. Not modelled: the SMs the
// communication kernels take from the GEMM, and the chunks' lower GEMM efficiency beyond what
// the compute model gives for m/n rows.
#pragma once

#include <vector>

#include "config/scenario.h"
#include "workload/workload.h"

namespace preflight {

// Chunks of the pipelined (reduce-scatter) overlap: Transformer Engine's default num_splits.
inline constexpr int kTpOverlapPipelineSplits = 4;

// Rewrites the pairs above in `ops` (one block, in order) when s.parallelism.tp_comm_overlap and
// tp > 1; otherwise leaves them. GEMM chunks keep the GEMM's name and split its M rows (FLOPs
// and activation traffic in proportion; every chunk reads the whole weight); collective chunks
// are named "<collective>.overlap" and split its bytes. Apply after apply_precision, which
// looks for a blocking all-gather right before its GEMM.
// REQUIRES: ops != nullptr.
void apply_tp_comm_overlap(const Scenario& s, std::vector<Op>* ops);

}  // namespace preflight
