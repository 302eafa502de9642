// Pipeline schedules: the order in which one pipeline stage (rank) runs the passes of its
// micro-batches and model chunks. Forward F; backward either whole (input and weight gradients
// together) or split, as the zero-bubble schedules do, into B (the input gradient, which the
// previous stage waits for) and W (the weight gradient, which nobody waits for).
// Bubbles below are per stage with equal stages and free communication, T_F, T_B, T_W the
// times of one F, B and W pass of one stage (a whole backward takes T_B + T_W):
//   GPipe: all forwards, then all backwards (Huang et al. 2019).
//   1F1B: p−i−1 warm-up forwards on stage i, then alternate one forward and one backward, then
//         drain (PipeDream-Flush, Narayanan et al. 2021). Bubble (p−1)(T_F + T_B + T_W).
//   Interleaved 1F1B: v model chunks per stage, (p−i−1)·2 + (v−1)·p warm-up forwards, chunk of
//         the k-th forward = (k mod p·v) / p, as in Megatron-LM (Narayanan et al. 2021, §2.2).
//   ZB-H1 (Qi et al., "Zero Bubble Pipeline Parallelism", ICLR 2024, §2.1 and Table 2): 1F1B's
//         warm-up, each backward split into B and W, and stage i keeps up to i W passes pending,
//         which run after its last B to fill the drain. Every stage holds at most p micro-batches
//         (F done, W not), 1F1B's peak. Bubble (p−1)(T_F + T_B − T_W) when T_W <= T_F, T_B: a
//         third of 1F1B's when T_F = T_B = T_W.
//   ZB-H2 (same paper, §2.2): 2(p−1−i) warm-up forwards and up to 2i pending W passes on stage
//         i; every stage holds up to 2p−1 micro-batches. Bubble (p−1)(T_F + T_B − 2T_W) (zero
//         when T_F = T_B = T_W) between a stage's first and last pass, when m >= 2p−1 and
//         T_W <= T_F, T_B. The
//         stages form a parallelogram: stage i starts i·T_F late and ends i·T_F late, which the
//         paper hides across iterations by validating the optimizer step after the fact; one
//         isolated iteration still spans m(T_F + T_B + T_W) + (p−1)·max(T_F, T_F + T_B − 2T_W).
//   DualPipe (DeepSeek-AI, "DeepSeek-V3 Technical Report", 2024, §3.2.1 and Table 2; the
//         reference schedule of github.com/deepseek-ai/DualPipe): p even, each rank i holds two
//         chunks, chunk 0 = model stage i and chunk 1 = model stage p−1−i; micro-batches
//         0 … m/2−1 enter at rank 0 and run through the chunks 0, micro-batches m/2 … m−1
//         enter at rank p−1 and run through the chunks 1. In the steady state a forward of one
//         direction and a whole backward of the other run as an overlapped pair (`paired`);
//         some backwards near the ends are split into B and W to fill bubbles. Bubble
//         (p/2−1)(F&B + B − 3W) in the report's notation, B a whole backward (T_B + T_W) and
//         F&B an overlapped pair (T_F + T_B + T_W when nothing overlaps, as in Preflight's one
//         compute stream): exact when T_F = T_B = T_W, at most that otherwise. Parameters ×2,
//         p+1 micro-batches in flight on every rank.
#pragma once

#include <cstdint>
#include <vector>

#include "config/scenario.h"

namespace preflight {

enum class Pass : uint8_t {
  kForward,
  kBackward,    // input and weight gradients in one pass
  kInputGrad,   // B: the gradient of the chunk's input (and of its activations)
  kWeightGrad,  // W: the gradients of the chunk's weights; any time after its B
};

struct PipelineTask {
  // Any pass but the forward; always pass != Pass::kForward (callers of the schedules without
  // split passes read only this).
  bool backward = false;
  int microbatch = 0;
  int chunk = 0;  // model chunk on this stage, 0 .. v−1; DualPipe: 0 or 1 (see above)
  Pass pass = Pass::kForward;
  // DualPipe (or the combined 1F1B schedule): this forward and the next task (a backward of the
  // other direction, or of an earlier micro-batch) run as one overlapped pair: both inputs are
  // received before either runs, both outputs sent after.
  bool paired = false;
};

PipelineTask make_task(Pass pass, int microbatch, int chunk, bool paired = false);

// True for the schedules that split backwards into B and W passes.
bool splits_backward(Schedule schedule);

// DualPipe: the model stage that chunk `chunk` (0 or 1) of rank `rank` holds.
int dualpipe_model_stage(int rank, int chunk, int p);

// The passes of stage `stage` in order: every (micro-batch, chunk) has one forward, then
// either one kBackward or one kInputGrad followed (later) by one kWeightGrad.
// REQUIRES: 0 <= stage < p, m >= 1, v >= 1; interleaved requires m % p == 0; zb_h1, zb_h2 and
// dualpipe require v == 1; dualpipe requires an even p >= 2 and an even m >= 2p.
// `overlap_pairs` (1F1B and interleaved only): Megatron-Core's combined 1F1B schedule
// (--overlap-moe-expert-parallel-comm, pipeline_parallel/combined_1f1b.py): one more warm-up
// forward, then each steady-state forward is `paired` with the backward after it (of an earlier
// micro-batch), so that each one's EP all-to-alls run behind the other's compute.
std::vector<PipelineTask> pipeline_order(Schedule schedule, int stage, int p, int m, int v,
                                         bool overlap_pairs = false);

}  // namespace preflight
