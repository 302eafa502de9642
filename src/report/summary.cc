#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <string>

#include "base/text.h"
#include "memory/memory_advice.h"
#include "report/report.h"

namespace preflight {
namespace {

std::string line(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string line(const char* fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  return std::string(buf) + "\n";
}

// "16 nodes", "1 node", or, where the job uses part of each NVLink domain, "2 NVLink domains x 64
// of 72 GPUs".
std::string placement_text(const ClusterConfig& c) {
  if (c.domain_gpus > c.gpus_per_node) {
    return std::to_string(c.nodes) + (c.nodes == 1 ? " NVLink domain" : " NVLink domains") + " x " +
           std::to_string(c.gpus_per_node) + " of " + std::to_string(c.domain_gpus) + " GPUs";
  }
  return std::to_string(c.nodes) + (c.nodes == 1 ? " node" : " nodes");
}

}  // namespace

std::string window_text(SimTime from, SimTime until) {
  if (from <= SimTime() && until == SimTime::max()) return "";
  char w[96];
  std::snprintf(w, sizeof w, " from %.3f s", from.to_seconds());
  std::string text = w;
  if (until != SimTime::max()) {
    std::snprintf(w, sizeof w, " until %.3f s", until.to_seconds());
    text += w;
  }
  return text;
}

std::string format_summary(const SimulationReport& r) {
  const Scenario& s = r.scenario;
  const ParallelismConfig& p = s.parallelism;
  std::string out;
  if (s.model.moe.enabled()) {
    out +=
        line("Preflight: %s (%.1fB parameters, %.1fB active) on %d x %s (%s, %s)",
             s.model.name.c_str(), static_cast<double>(r.parameters) * 1e-9,
             static_cast<double>(r.active_parameters) * 1e-9, s.cluster.total_gpus(),
             s.cluster.gpu.name.c_str(), placement_text(s.cluster).c_str(), s.cluster.name.c_str());
  } else {
    out +=
        line("Preflight: %s (%.1fB parameters) on %d x %s (%s, %s)", s.model.name.c_str(),
             static_cast<double>(r.parameters) * 1e-9, s.cluster.total_gpus(),
             s.cluster.gpu.name.c_str(), placement_text(s.cluster).c_str(), s.cluster.name.c_str());
  }
  std::string strategy = "TP " + std::to_string(p.tp) + ", PP " + std::to_string(p.pp) + ", DP " +
                         std::to_string(p.dp);
  if (p.cp > 1) strategy += ", CP " + std::to_string(p.cp) + " (" + to_string(p.cp_kind) + ")";
  if (s.model.moe.enabled()) {
    strategy += ", EP " + std::to_string(p.ep);
    if (s.expert_tp() != p.tp) strategy += ", ETP " + std::to_string(s.expert_tp());
  }
  if (p.vpp > 1) strategy += ", VPP " + std::to_string(p.vpp);
  strategy += std::string(", ") + to_string(p.schedule) + ", micro-batch " +
              std::to_string(s.training.micro_batch) + " x " + std::to_string(r.microbatches) +
              " per replica, global batch " + std::to_string(s.training.global_batch) + ", seq " +
              std::to_string(s.training.seq_len);
  out += line("strategy         %s", strategy.c_str());
  if (!p.pipeline_layout.empty()) {
    std::string layout;
    for (size_t k = 0; k < p.pipeline_layout.size(); ++k) {
      layout += (k > 0 ? "," : "") + std::to_string(p.pipeline_layout[k]);
    }
    out += line("pipeline split   layers per virtual stage %s%s%s", layout.c_str(),
                p.pipeline_split.empty() ? "" : "\n                 ", p.pipeline_split.c_str());
  }
  const bool current_fp8 =
      s.training.precision == Precision::kFp8 && s.training.fp8_recipe == Fp8Recipe::kCurrent;
  out += line("                 %s%s on %s, recompute %s%s%s%s", to_string(s.training.precision),
              current_fp8 ? " (current scaling)" : "", s.training.stack.name.c_str(),
              recompute_description(p).c_str(), p.sequence_parallel ? ", sequence parallel" : "",
              p.distributed_optimizer ? ", distributed optimizer" : "",
              p.overlap_grad_reduce ? ", overlapped grad reduce" : "");
  for (const std::string& n : s.notes) out += line("note             %s", n.c_str());
  if (!s.defaults.empty()) {
    // "defaults         training.micro_batch 1, training.precision bf16, ...", wrapped.
    std::string text = "defaults         ";
    size_t width = text.size();
    for (size_t k = 0; k < s.defaults.size(); ++k) {
      const std::string item =
          s.defaults[k].first + " " + s.defaults[k].second + (k + 1 < s.defaults.size() ? "," : "");
      if (width + item.size() + 1 > 100 && width > 17) {
        text += "\n                 ";
        width = 17;
      } else if (width > 17) {
        text += " ";
        ++width;
      }
      text += item;
      width += item.size();
    }
    out += text + "\n";
  }
  if (s.model.is_hybrid()) {
    const std::string& pattern = s.model.hybrid_pattern;
    auto count = [&](char c) {
      return static_cast<int>(std::count(pattern.begin(), pattern.end(), c));
    };
    out += line("layers           hybrid: %d Mamba-2 (M), %d attention (*), %d MLP (-), %d MoE (E)",
                count('M'), count('*'), count('-'), count('E'));
  }
  out += "\n";
  out += line("iteration time   %.3f s", r.iteration_time_s);
  out += line("throughput       %s tokens/s", with_commas(std::llround(r.tokens_per_s)).c_str());
  out += line(
      "MFU              %.1f %%  (model FLOPs = 3 x forward incl. causal attention as run and "
      "logits; peak %.0f TFLOP/s %s dense)",
      r.mfu * 100, r.peak_tflops, to_string(s.training.precision));
  out += line("                 %.1f %% by Megatron's 2021 count (attention non-causal)",
              r.mfu_2021 * 100);
  out += line("TFLOP/s per GPU  %.1f  (%.1f by the 2021 count)", r.tflops_per_gpu,
              r.tflops_per_gpu_2021);
  if (s.compute.model == ComputeModelKind::kMeasured) {
    const ComputeCoverage& c = r.compute_coverage;
    out += line(
        "kernels          %.1f %% of compute time measured, %.1f %% interpolated, %.1f %% roofline "
        "(%s, %zu kernels%s%s)",
        c.share(c.measured) * 100, c.share(c.interpolated) * 100, c.share(c.roofline) * 100,
        escape_for_message(s.compute.kernel_table, 200).c_str(),
        s.compute.table ? s.compute.table->rows.size() : 0,
        s.compute.table && !s.compute.table->gpu.empty() ? " on " : "",
        s.compute.table ? escape_for_message(s.compute.table->gpu, 100).c_str() : "");
  }
  if (!r.moe_layers.empty()) {
    double sum = 0, max = 0;
    for (const MoeLayerStats& l : r.moe_layers) {
      sum += l.imbalance;
      max = std::max(max, l.imbalance);
    }
    out += line(
        "expert routing   %s: busiest EP rank %.2fx the mean (mean over %zu MoE layers, "
        "worst %.2fx)",
        to_string(s.model.moe.routing), sum / static_cast<double>(r.moe_layers.size()),
        r.moe_layers.size(), max);
  }
  {
    const StageMemory& lim = r.memory.stages[r.memory.limiting_stage];
    if (r.memory.fits) {
      out += line("memory per GPU   %.1f GiB peak of %.0f GiB HBM (stage %d; %.1f GiB headroom)",
                  lim.peak.to_gib(), lim.capacity.to_gib(), lim.stage, lim.headroom.to_gib());
    } else {
      out += line(
          "memory per GPU   DOES NOT FIT: stage %d needs %.1f GiB of %.0f GiB HBM "
          "(short by %.1f GiB); the time below assumes it ran",
          lim.stage, lim.peak.to_gib(), lim.capacity.to_gib(), -lim.headroom.to_gib());
      for (const std::string& a : memory_advice(r.scenario, r.memory)) {
        out += line("                 try: %s", a.c_str());
      }
    }
  }
  if (s.parallelism.offload_layers > 0 && !r.memory.stages.empty()) {
    out += line(
        "offload          activations of layers 0-%d of %d to the host: %.1f GiB per GPU and "
        "micro-batch, at %.1f GB/s each way (cluster.host_bandwidth)",
        s.parallelism.offload_layers - 1, s.model.layers, r.memory.stages[0].offloaded.to_gib(),
        s.cluster.host_bandwidth.gigabytes_per_second());
  }
  const ExecutionResult& e = r.execution;
  for (const DegradedLink& x : s.simulation.degraded_links) {
    out += line("degraded link    %s at %.1f %% of its rate%s", x.link.c_str(), x.capacity * 100,
                window_text(x.from, x.until).c_str());
  }
  if (!s.simulation.slow_ranks.empty()) {
    const RankLayout l = RankLayout::of(s);
    for (const SlowRank& x : s.simulation.slow_ranks) {
      const int local = x.rank % l.stage_ranks();
      const std::string window = window_text(x.from, x.until);
      out += line("slow rank        GPU %d (stage %d, DP replica %d): kernels x%.2f%s", x.rank,
                  x.rank / l.stage_ranks(), local / (l.tp() * l.cp()), x.factor, window.c_str());
    }
    // The replicas simulated apart, then the class of the others (simulated once).
    // Replicas apart that follow one another and end together are one range ("replicas 0-3
    // end at ..."), so that an EP group's worth of them stays one line.
    std::string classes;
    for (int rest = 0; rest < 2; ++rest) {
      for (size_t i = 0; i < e.replicas.size(); ++i) {
        const ReplicaResult& c = e.replicas[i];
        if ((c.count > 1 || e.replicas.size() == 1) != (rest == 1)) continue;
        char buf[128];
        if (rest == 0) {
          size_t j = i;
          while (j + 1 < e.replicas.size() && e.replicas[j + 1].count == 1 &&
                 e.replicas[j + 1].first == e.replicas[j].first + 1 &&
                 e.replicas[j + 1].end == c.end) {
            ++j;
          }
          if (j > i) {
            std::snprintf(buf, sizeof buf, "%sreplicas %d-%d end at %.3f s",
                          classes.empty() ? "" : "; ", c.first, e.replicas[j].first,
                          c.end.to_seconds());
          } else {
            std::snprintf(buf, sizeof buf, "%sreplica %d ends at %.3f s",
                          classes.empty() ? "" : "; ", c.first, c.end.to_seconds());
          }
          i = j;
        } else {
          std::snprintf(buf, sizeof buf, "%sthe other %d at %.3f s", classes.empty() ? "" : "; ",
                        c.count, c.end.to_seconds());
        }
        classes += buf;
      }
    }
    out += line("replicas         %s", classes.c_str());
  }
  out += "\n";
  const StageResult& crit = e.stages[e.critical_stage];
  const Breakdown& b = crit.breakdown;
  if (e.replicas.size() > 1) {
    out += line("where the time goes (pipeline stage %d of DP replica %d, the last to finish):",
                e.critical_stage, e.critical_replica);
  } else {
    out += line("where the time goes (pipeline stage %d, the last to finish):", e.critical_stage);
  }
  const double total = r.iteration_time_s;
  auto row = [&](const char* name, SimTime t) {
    out += line("  %-22s %9.3f s  %5.1f %%", name, t.to_seconds(),
                total > 0 ? t.to_seconds() / total * 100 : 0.0);
  };
  row("compute", b.compute);
  row("host/launch overhead", b.host_overhead);
  row("exposed TP comm", b.tp_comm);
  row("exposed PP comm", b.pp_comm);
  row("exposed DP comm", b.dp_comm);
  const ParallelismConfig& par = r.scenario.parallelism;
  if (par.ep > 1 || b.ep_comm > SimTime()) row("exposed EP comm", b.ep_comm);
  if (par.cp > 1 || b.cp_comm > SimTime()) row("exposed CP comm", b.cp_comm);
  row("optimizer", b.optimizer);
  if (par.offload_layers > 0) row("exposed offload", b.offload);
  row("pipeline bubble", b.bubble);
  if (r.execution.has_network_stats) {
    const NetworkStats& n = r.execution.network;
    double max_util = 0;
    std::string hottest, hottest_tier;
    for (const LinkLoad& l : n.links) {
      if (l.utilization > max_util || (l.utilization == max_util && l.name < hottest)) {
        max_util = l.utilization;
        hottest = l.name;
        hottest_tier = l.tier;
      }
    }
    if (!hottest.empty()) hottest += " (" + hottest_tier + ")";
    out += "\n";
    if (n.packet_level) {
      const PacketCounters& p = n.packet;
      char control[64];
      if (p.infiniband) {
        std::snprintf(control, sizeof control, "%lld credit stalls",
                      static_cast<long long>(p.credit_stalls));
      } else {
        std::snprintf(control, sizeof control, "%lld PFC pauses", static_cast<long long>(p.pauses));
      }
      out += line(
          "packet-level network (%s): %lld flows, %lld packets, %lld ECN marks, %lld CNPs, %s, "
          "%lld drops, %lld resent; hottest link %s at %.1f %% of the iteration",
          p.infiniband ? "InfiniBand" : "RoCEv2", static_cast<long long>(n.flows),
          static_cast<long long>(p.packets), static_cast<long long>(p.ecn_marks),
          static_cast<long long>(p.cnps), control, static_cast<long long>(p.drops),
          static_cast<long long>(p.retransmitted), hottest.empty() ? "-" : hottest.c_str(),
          max_util * 100);
      if (p.max_queue > 0) {
        out += line("                 longest queue %.1f KiB at %s; longest %s %.3f ms at %s",
                    static_cast<double>(p.max_queue) / 1024, p.max_queue_port.c_str(),
                    p.infiniband ? "wait for credits" : "PFC pause", p.max_paused_s * 1e3,
                    p.max_paused_port.empty() ? "-" : p.max_paused_port.c_str());
      }
      if (p.completed > 0) {
        out += line(
            "                 flow completion p50 %.1f us, p99 %.1f us, max %.1f us; slowdown "
            "over an idle path p50 %.2fx, p99 %.2fx, max %.2fx",
            p.fct_p50_s * 1e6, p.fct_p99_s * 1e6, p.fct_max_s * 1e6, p.slowdown_p50, p.slowdown_p99,
            p.slowdown_max);
      }
      if (p.partitions > 1) {
        out += line(
            "                 %d partitions run side by side in %lld windows of simulated time",
            p.partitions, static_cast<long long>(p.windows));
      }
      if (p.fast_forwards > 0) {
        out += line(
            "                 fast-forward: %lld jumps over %.3f ms of steady state, %lld packets "
            "(%.1f %%) credited without simulating them",
            static_cast<long long>(p.fast_forwards), p.skipped_s * 1e3,
            static_cast<long long>(p.skipped_packets),
            p.packets > 0
                ? 100.0 * static_cast<double>(p.skipped_packets) / static_cast<double>(p.packets)
                : 0.0);
      }
    } else {
      const bool adaptive = r.scenario.simulation.flow_routing == FlowRouting::kAdaptive;
      out += line(
          "flow-level network: %lld flows, %lld rate solves, %s; hottest link %s at %.1f %% of "
          "the iteration",
          static_cast<long long>(n.flows), static_cast<long long>(n.solves),
          adaptive ? "adaptive routing" : "ECMP", hottest.empty() ? "-" : hottest.c_str(),
          max_util * 100);
    }
  }
  bool any = false;
  for (const CollectiveStats& c : crit.collectives) any |= c.count > 0;
  if (any) {
    out += "\n";
    out += line("collectives per GPU of stage %d (NCCL's choice: algorithm/protocol x channels):",
                r.execution.critical_stage);
    // The name column is as wide as the longest name (at least 24), so long names stay aligned.
    int width = 24;
    for (const CollectiveStats& c : crit.collectives) {
      if (c.count > 0)
        width = std::max(width, static_cast<int>(std::min<size_t>(c.name.size(), 64)));
    }
    // On the flow and packet networks the time is as executed, under contention: the achieved
    // busBw (the planned busBw scaled by planned over executed time) follows it.
    const bool fabric = r.execution.has_network_stats;
    if (fabric) {
      out += line("  %-*s %-15s %-16s %8s %10s %10s %10s", width, "name", "kind", "algorithm",
                  "count", "time (s)", "busBw GB/s", "achieved");
    } else {
      out += line("  %-*s %-15s %-16s %8s %10s %10s", width, "name", "kind", "algorithm", "count",
                  "time (s)", "busBw GB/s");
    }
    for (const CollectiveStats& c : crit.collectives) {
      if (c.count == 0) continue;
      const std::string algo = c.algorithm + (c.protocol.empty() ? "" : "/" + c.protocol) +
                               (c.channels > 0 ? " x" + std::to_string(c.channels) : "");
      if (fabric) {
        out += line("  %-*s %-15s %-16s %8lld %10.3f %10.1f %10.1f", width, c.name.c_str(),
                    c.kind.c_str(), algo.c_str(), static_cast<long long>(c.count),
                    c.time.to_seconds(), c.busbw_gbps, c.achieved_busbw_gbps());
      } else {
        out +=
            line("  %-*s %-15s %-16s %8lld %10.3f %10.1f", width, c.name.c_str(), c.kind.c_str(),
                 algo.c_str(), static_cast<long long>(c.count), c.time.to_seconds(), c.busbw_gbps);
      }
    }
  }
  return out;
}

}  // namespace preflight
