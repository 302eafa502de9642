// The MLP half of a mixture-of-experts layer on one rank, Megatron-Core style (Shoeybi et al.;
// "MoE" in Megatron-Core's docs): router, token permutation, dispatch to the expert-parallel
// (EP) ranks, expert-TP gather, grouped expert GEMMs, and the mirror image back; plus shared
// experts, which run as a dense TP MLP on every token.
//
// Tokens per rank entering the MoE block: T_r = T/tp with sequence parallelism (Megatron-Core
// requires it for MoE with TP > 1), else T. Each rank routes T_r·k token copies; the EP group
// routes ep·T_r·k, of which the busiest EP rank receives the share ρ_max (expert_routing.h),
// ep·T_r·k·ρ_max tokens (ρ_max = 1/ep when balanced). All ranks of a stage are modelled as that
// busiest one, since the combine all-to-all makes every rank wait for it. With expert TP the
// etp ranks holding shards of the same experts all-gather their tokens (×etp) and each computes
// its F/etp shard. Grouped GEMMs are E/ep GEMMs of the mean per-expert token count on that rank.
//
// Communication (per rank, bytes e per element, h hidden):
//   dispatch, combine (all-to-all, EP group): max(sent, received by the busiest rank)
//       = e·h·T_r·k·max((1 − dropped), ep·ρ_max)
//   allgather dispatcher: all-gather of the tokens of the EP group (ep·e·h·T_r), and a
//       reduce-scatter of the same size at the combine
//   expert TP: all-gather / reduce-scatter of the received tokens over etp ranks.
//
// Latent MoE (moe.latent_size = w; Nemotron 3 Super and Ultra): a GEMM h → w on the T_r tokens
// after the router and one w → h after the combine; the routed tokens are w wide, in the
// dispatch, the combine and the experts' GEMMs (h replaced by w above). The router and the
// shared experts stay at h.
#pragma once

#include <vector>

#include "workload/expert_routing.h"
#include "workload/layer_ops.h"
#include "workload/workload.h"

namespace preflight {

// REQUIRES: x.experts > 0 (make_layer_shape of a MoE model).
std::vector<Op> moe_forward_ops(const LayerShape& x, const ExpertLoad& load);
// Weight-gradient GEMMs are named "*.wgrad", as in layer_backward_ops.
std::vector<Op> moe_backward_ops(const LayerShape& x, const ExpertLoad& load);

// Tokens the busiest EP rank's experts compute per micro-batch (after the expert-TP gather).
double moe_rank_tokens(const LayerShape& x, const ExpertLoad& load);

}  // namespace preflight
