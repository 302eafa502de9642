// Expert routing: how the tokens of one MoE layer spread over its experts and over the
// expert-parallel (EP) ranks that hold them. A balanced gate (`uniform`, what SimAI assumes)
// gives every expert T·k/E tokens; real routers are skewed, and since every EP rank waits for
// the slowest one at the combine all-to-all, the most loaded EP rank sets the layer's time.
//
// Shares are drawn per MoE layer, deterministically from simulation.seed and the layer index:
//   balanced   a router balanced in expectation (the default). Even then each micro-batch's N
//              token copies fall on the ep ranks as a multinomial draw, and the all-to-all waits
//              for the busiest: its count is about N/ep + z·sqrt(N/ep·(1 − 1/ep)), z the
//              expected maximum of ep standard normals (Blom's Φ⁻¹((ep − 0.375)/(ep + 0.25))).
//              That rank's experts share its load evenly, the others the rest; the same for
//              every layer (the expectation, not a draw). N = ep_group_token_copies().
//   uniform    s_e = 1/E, the exact ideal
//   zipf       s_e ∝ r_e^(−α), r = a seeded random permutation of 1..E (which expert is hot
//              differs per layer); α = model.moe.zipf_exponent
//   dirichlet  s ~ Dir(α·1), α = model.moe.dirichlet_alpha (Marsaglia–Tsang gamma draws)
//   loads      the user's list, normalised (the same for every layer)
// A token picks k distinct experts, so no expert can receive more than 1/k of the T·k token
// copies: shares above 1/k are capped and the excess is given to the others in proportion to
// their shares (water-filling). With a capacity factor c > 0 an expert keeps at most
// c·T·k/E tokens and drops the rest (Switch Transformer, Fedus et al. 2021); c = 0 is dropless.
// Experts sit on EP ranks in contiguous blocks of E/ep (Megatron-Core's layout).
// Pure functions of their inputs; the generator is the only caller.
#pragma once

#include <cstdint>
#include <vector>

#include "config/scenario.h"

namespace preflight {

struct ExpertLoad {
  int layer = 0;
  std::vector<double> expert_share;  // kept tokens of each expert / (T·k), after the cap
  std::vector<double> rank_share;    // Σ of each EP rank's experts
  double dropped = 0;                // fraction of the T·k token copies dropped (capacity)
  double max_rank_share = 0;         // the busiest EP rank
  double max_expert_share = 0;
  // Busiest EP rank / mean EP rank (1 = balanced); what the trace and reports call imbalance.
  double imbalance() const;
  // Tokens the busiest EP rank computes, as a multiple of the balanced T·k/ep.
  double max_rank_factor() const { return max_rank_share * static_cast<double>(rank_share.size()); }
};

// The token copies one micro-batch routes through an EP group: ep ranks, each routing its
// sequence-parallel shard gathered over expert TP (mbs·seq·etp/(tp·cp) tokens), k copies each.
double ep_group_token_copies(const Scenario& s);

// The per-expert token shares of MoE layer `layer` (0-based layer index of the model);
// `token_copies` (balanced routing: N above; 0 makes it uniform).
// REQUIRES: m.moe.enabled(), 1 <= ep, m.moe.experts % ep == 0.
ExpertLoad draw_expert_load(const MoeConfig& m, int ep, int layer, uint64_t seed,
                            double token_copies = 0);

// Shares `s` (non-negative, sum 1) with none above `cap` (1/k), excess redistributed in
// proportion to the uncapped shares. REQUIRES: cap·s.size() >= 1.
std::vector<double> cap_shares(std::vector<double> s, double cap);

}  // namespace preflight
