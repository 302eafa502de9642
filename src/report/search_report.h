// The outputs of a strategy search: the ranked table for the terminal, CSV and JSON. Pure
// functions of a SearchResult: the same result gives the same bytes.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "base/text.h"
#include "config/scenario.h"
#include "search/search.h"

namespace preflight {

// "distributed", "zero-2", "distributed+zero-3" or "replicated": how optimizer states are held.
std::string optimizer_label(const Strategy& s);

// The ranked table of the first `top` results: rank, the strategy's keys, iteration time,
// tokens/s, MFU, peak memory per GPU and $ per million tokens ("-" without a price).
std::string format_search_table(const SearchResult& r, int top);

// Every result, ranked, one row each: rank, the strategy's keys, network, iteration_time_s,
// tokens_per_s, mfu, peak_bytes, gpu_hours_per_iteration, usd_per_iteration, cost_per_mtok.
// Numbers are written with 17 significant digits, so equal results give equal bytes.
std::string search_to_csv(const SearchResult& r);

// {gpus, tokens_per_iteration, combinations, candidates, evaluated, rejected: {reason: count},
//  reevaluated, network, results: [{rank, strategy: {tp, pp, dp, cp, ep, vpp, micro_batch,
//  recompute, sequence_parallel, distributed_optimizer, zero_stage, schedule}, network,
//  iteration_time_s, tokens_per_s, mfu, peak_bytes, gpu_hours_per_iteration, usd_per_iteration,
//  cost_per_mtok (null without a price)}]}
nlohmann::json search_to_json(const SearchResult& r);

// The strategy's keys as the scenario's parallelism section names them.
nlohmann::json strategy_to_json(const Strategy& s);

}  // namespace preflight
