// How the published sources count FLOPs, so a TFLOP/s, MFU or PFLOP/s figure turns back into the
// iteration time that was measured: time = FLOPs per iteration (the source's formula) /
// (rate · GPUs). B = global batch, s = sequence, l = layers, h = hidden, V = vocabulary.
//
// * Narayanan et al. 2021 (SC'21) Eq. 3, full recompute counted (4 passes):
//     F = 96·B·s·l·h²·(1 + s/(6h) + V/(16·l·h)).
// * Korthikanti et al. 2022, model FLOPs (MFU; no recompute, 3 passes):
//     F = 72·B·s·l·h²·(1 + s/(6h) + V/(12·l·h));
//   hardware FLOPs (HFU) with selective recompute count the attention core once more:
//     F = 72·B·s·l·h²·(1 + s/(3h) + V/(12·l·h))   (reproduces Table 5's HFU/MFU ratios: 22B
//     43.7/41.5 = 1.053, 175B 52.8/51.4 = 1.027, 530B 57.0/56.0 = 1.018 within rounding).
// * Megatron-Core's num_floating_point_operations (Megatron-LM megatron/training/training.py),
//   used by the Megatron-LM README's H100 tables, NeMo's and Megatron-Bridge's "Model TFLOP/s":
//     F = 12·B·s·l·h²·[(1 + g/a + s/h·c)·(a·d/h) + (f/h)·k·γ + (f_sh/h)·γ + V/(2·l·h)]
//   with g KV heads, a heads of width d, f the (expert) FFN width, k experts per token, γ 3/2
//   for gated MLPs, c = 1 (NeMo ≤ 25.07 and Megatron-Core 0.8: attention counted as if every
//   query saw every key) or 1/2 (Megatron-Bridge 25.09 on: causal). MLA uses the same
//   structure with its own projection terms.
// * The same function's hybrid branch (is_hybrid_model; Nemotron-H, Nemotron 3), per layer kind
//   of the pattern, with p = a·d/h:
//     Mamba  2·B·s·h·(2·d_in + 2·G·N + H) + 7·B·s·d_in·N + 2·B·s·d_in·h,   d_in = 2h always
//     attention  4·B·s·h·p·(h + h·g/a + s·c)        (its published form has s/2: c = 1/2)
//     MLP  4·B·s·h·f·γ;   MoE  4·B·s·k·f_e·γ·w + 4·B·s·h·f_sh·γ (+ 4·B·s·h·w with latent w;
//     w = h otherwise; no router term)
//     F = 3·(Σ layers + 2·B·s·h·V·(1 + MTP depths)), each MTP depth's "*E" block as two layers.
#pragma once

#include "config/scenario.h"

namespace preflight {

double narayanan_eq3_flops(double batch, double seq, double layers, double hidden, double vocab);
double korthikanti_model_flops(double batch, double seq, double layers, double hidden,
                               double vocab);
double korthikanti_selective_hfu_flops(double batch, double seq, double layers, double hidden,
                                       double vocab);

// Megatron-Core's model FLOPs of one iteration of `s` (global batch × sequence tokens), with the
// attention core counted at `causal_factor` (1 or 1/2) of the full s² term. Dense, GQA, gated
// MLPs, MoE (top-k routed + shared experts), MLA, hybrid Mamba-2 models (their own branch,
// above); vocabulary unpadded.
double megatron_model_flops(const Scenario& s, double causal_factor);

}  // namespace preflight
