#include "report/search_report.h"

#include <cstdio>

namespace preflight {
namespace {

std::string fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

std::string exact(double v) { return fmt("%.17g", v); }

std::string pad_left(const std::string& s, size_t width) {
  return s.size() >= width ? s : std::string(width - s.size(), ' ') + s;
}
std::string pad_right(const std::string& s, size_t width) {
  return s.size() >= width ? s : s + std::string(width - s.size(), ' ');
}

}  // namespace

std::string optimizer_label(const Strategy& s) {
  const std::string zero = s.zero_stage > 0 ? "zero-" + std::to_string(s.zero_stage) : "";
  if (s.distributed_optimizer)
    return zero.empty() || s.zero_stage == 1 ? "distributed" : "distributed+" + zero;
  return zero.empty() ? "replicated" : zero;
}

std::string format_search_table(const SearchResult& r, int top) {
  const int n = std::min<int>(top, static_cast<int>(r.results.size()));
  // An offload column only where some shown strategy offloads activations.
  bool offload = false;
  for (int i = 0; i < n; ++i) offload = offload || r.results[i].strategy.offload_layers > 0;
  std::string out =
      "rank  tp  pp    dp  cp  ep vpp  mb  recompute  sp  optimizer    schedule      "
      "iter (s)     tokens/s     MFU  peak GiB    $/Mtok" +
      std::string(offload ? "  offload" : "") + "\n";
  for (int i = 0; i < n; ++i) {
    const StrategyResult& x = r.results[i];
    const Strategy& s = x.strategy;
    out += pad_left(std::to_string(i + 1), 4) + pad_left(std::to_string(s.tp), 4) +
           pad_left(std::to_string(s.pp), 4) + pad_left(std::to_string(s.dp), 6) +
           pad_left(std::to_string(s.cp), 4) + pad_left(std::to_string(s.ep), 4) +
           pad_left(std::to_string(s.vpp), 4) + pad_left(std::to_string(s.micro_batch), 4) + "  " +
           pad_right(to_string(s.recompute), 11) +
           pad_right(s.sequence_parallel ? "on" : "off", 4) + pad_right(optimizer_label(s), 12) +
           " " + pad_right(to_string(s.schedule), 12) +
           pad_left(fmt("%.3f", x.iteration_time_s), 10) +
           pad_left(with_commas(static_cast<int64_t>(x.tokens_per_s + 0.5)), 13) +
           pad_left(fmt("%.1f %%", x.mfu * 100), 8) +
           pad_left(fmt("%.1f", static_cast<double>(x.peak_bytes) / (1024.0 * 1024 * 1024)), 10) +
           pad_left(x.cost.usd > 0 ? fmt(x.cost.usd_per_million_tokens < 1 ? "%.3f" : "%.2f",
                                         x.cost.usd_per_million_tokens)
                                   : "-",
                    10) +
           (offload ? pad_left(std::to_string(s.offload_layers), 9) : "") + "\n";
  }
  return out;
}

nlohmann::json strategy_to_json(const Strategy& s) {
  return {{"tp", s.tp},
          {"pp", s.pp},
          {"dp", s.dp},
          {"cp", s.cp},
          {"ep", s.ep},
          {"vpp", s.vpp},
          {"micro_batch", s.micro_batch},
          {"recompute", to_string(s.recompute)},
          {"sequence_parallel", s.sequence_parallel},
          {"distributed_optimizer", s.distributed_optimizer},
          {"zero_stage", s.zero_stage},
          {"schedule", to_string(s.schedule)},
          {"offload_layers", s.offload_layers}};
}

std::string search_to_csv(const SearchResult& r) {
  std::string out =
      "rank,tp,pp,dp,cp,ep,vpp,micro_batch,recompute,sequence_parallel,distributed_optimizer,"
      "zero_stage,schedule,network,iteration_time_s,tokens_per_s,mfu,peak_bytes,"
      "gpu_hours_per_iteration,usd_per_iteration,cost_per_mtok,offload_layers\n";
  for (size_t i = 0; i < r.results.size(); ++i) {
    const StrategyResult& x = r.results[i];
    const Strategy& s = x.strategy;
    out += std::to_string(i + 1) + "," + std::to_string(s.tp) + "," + std::to_string(s.pp) + "," +
           std::to_string(s.dp) + "," + std::to_string(s.cp) + "," + std::to_string(s.ep) + "," +
           std::to_string(s.vpp) + "," + std::to_string(s.micro_batch) + "," +
           to_string(s.recompute) + "," + (s.sequence_parallel ? "true" : "false") + "," +
           (s.distributed_optimizer ? "true" : "false") + "," + std::to_string(s.zero_stage) + "," +
           to_string(s.schedule) + "," + x.network + "," + exact(x.iteration_time_s) + "," +
           exact(x.tokens_per_s) + "," + exact(x.mfu) + "," + std::to_string(x.peak_bytes) + "," +
           exact(x.cost.gpu_hours) + "," + exact(x.cost.usd) + "," +
           (x.cost.usd > 0 ? exact(x.cost.usd_per_million_tokens) : "") + "," +
           std::to_string(s.offload_layers) + "\n";
  }
  return out;
}

nlohmann::json search_to_json(const SearchResult& r) {
  nlohmann::json rejected = nlohmann::json::object();
  for (const auto& [reason, count] : r.rejected) rejected[reason] = count;
  nlohmann::json results = nlohmann::json::array();
  for (size_t i = 0; i < r.results.size(); ++i) {
    const StrategyResult& x = r.results[i];
    results.push_back(
        {{"rank", i + 1},
         {"strategy", strategy_to_json(x.strategy)},
         {"network", x.network},
         {"iteration_time_s", x.iteration_time_s},
         {"tokens_per_s", x.tokens_per_s},
         {"mfu", x.mfu},
         {"peak_bytes", x.peak_bytes},
         {"gpu_hours_per_iteration", x.cost.gpu_hours},
         {"usd_per_iteration", x.cost.usd},
         {"cost_per_mtok", x.cost.usd > 0 ? nlohmann::json(x.cost.usd_per_million_tokens)
                                          : nlohmann::json(nullptr)}});
  }
  return {{"gpus", r.gpus},
          {"tokens_per_iteration", r.tokens_per_iteration},
          {"combinations", r.combinations},
          {"candidates", r.candidates},
          {"evaluated", r.evaluated},
          {"rejected", rejected},
          {"reevaluated", r.reevaluated},
          {"network", r.final_network},
          {"results", results}};
}

}  // namespace preflight
