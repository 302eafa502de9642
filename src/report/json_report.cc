#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <tuple>

#include "report/report.h"
#include "workload/generator.h"

namespace preflight {
namespace {

// The modules selective recompute replays, in RecomputeModule order; empty without it.
nlohmann::json recompute_module_names(const ParallelismConfig& p) {
  nlohmann::json names = nlohmann::json::array();
  for (int i = 0; i < kRecomputeModuleCount; ++i) {
    const RecomputeModule m = static_cast<RecomputeModule>(i);
    if (p.recomputes(m)) names.push_back(to_string(m));
  }
  return names;
}

using nlohmann::json;

// `offload`: the run offloads activations, so the parts include the exposed copies.
json breakdown_json(const Breakdown& b, bool offload) {
  json j{{"compute_s", b.compute.to_seconds()}, {"host_overhead_s", b.host_overhead.to_seconds()},
         {"tp_comm_s", b.tp_comm.to_seconds()}, {"pp_comm_s", b.pp_comm.to_seconds()},
         {"dp_comm_s", b.dp_comm.to_seconds()}, {"ep_comm_s", b.ep_comm.to_seconds()},
         {"cp_comm_s", b.cp_comm.to_seconds()}, {"optimizer_s", b.optimizer.to_seconds()},
         {"bubble_s", b.bubble.to_seconds()}};
  if (offload) j["offload_s"] = b.offload.to_seconds();
  return j;
}

}  // namespace

json scenario_to_json(const Scenario& s) {
  const ModelConfig& m = s.model;
  const ClusterConfig& c = s.cluster;
  const GpuConfig& g = c.gpu;
  const GpuCalibration& k = g.calibration;
  json model{{"name", m.name},
             {"layers", m.layers},
             {"hidden", m.hidden},
             {"heads", m.heads},
             {"kv_heads", m.kv_heads},
             {"ffn_hidden", m.ffn_hidden},
             {"vocab", m.vocab},
             {"activation", to_string(m.activation)},
             {"norm", to_string(m.norm)},
             {"position_embedding", to_string(m.position_embedding)},
             {"tied_embeddings", m.tied_embeddings},
             {"linear_bias", m.linear_bias},
             {"dropout", m.dropout},
             {"max_seq_len", m.max_seq_len},
             {"head_dim", m.head_dim()},
             {"sliding_window", m.sliding_window},
             {"sliding_window_pattern", m.sliding_window_pattern},
             {"attention_sinks", m.attention_sinks},
             {"qk_layernorm", m.qk_layernorm},
             {"rope_mscale", m.rope_mscale},
             {"activation_clamp", m.activation_clamp},
             {"mtp_layers", m.mtp_layers}};
  if (m.moe.enabled()) {
    const MoeConfig& e = m.moe;
    model["moe"] = json{{"experts", e.experts},
                        {"top_k", e.top_k},
                        {"expert_ffn_hidden", e.expert_ffn_hidden},
                        {"shared_experts", e.shared_experts},
                        {"shared_expert_ffn_hidden", e.shared_expert_ffn_hidden},
                        {"dense_layers", e.dense_layers},
                        {"layer_interval", e.layer_interval},
                        {"capacity_factor", e.capacity_factor},
                        {"routing", to_string(e.routing)},
                        {"zipf_exponent", e.zipf_exponent},
                        {"dirichlet_alpha", e.dirichlet_alpha},
                        {"loads", e.loads},
                        {"dispatcher", e.allgather_dispatcher ? "allgather" : "alltoall"},
                        {"group_topk", e.group_topk},
                        {"dispatch_precision", e.fp8_dispatch ? "fp8" : "bf16"}};
  }
  if (m.moe.latent_size > 0) model["moe"]["latent_size"] = m.moe.latent_size;
  if (m.mtp_repeated_layer) model["mtp_repeated_layer"] = true;
  if (m.is_hybrid()) model["hybrid_pattern"] = m.hybrid_pattern;
  if (m.mamba.enabled()) {
    const MambaConfig& a = m.mamba;
    model["mamba"] = json{{"heads", a.heads},   {"head_dim", a.head_dim},       {"state", a.state},
                          {"groups", a.groups}, {"conv_kernel", a.conv_kernel}, {"chunk", a.chunk}};
  }
  if (m.mla.enabled()) {
    const MlaConfig& a = m.mla;
    model["mla"] = json{{"q_lora_rank", a.q_lora_rank},
                        {"kv_lora_rank", a.kv_lora_rank},
                        {"qk_nope_head_dim", a.qk_nope_head_dim},
                        {"qk_rope_head_dim", a.qk_rope_head_dim},
                        {"v_head_dim", a.v_head_dim}};
  }
  json gpu{{"name", g.name},
           {"architecture", to_string(g.architecture)},
           {"sm_count", g.sm_count},
           {"hbm_capacity_bytes", g.hbm_capacity.count()},
           {"hbm_bandwidth_bps", g.hbm_bandwidth.bytes_per_second()},
           {"nvlink_bandwidth_bps", g.nvlink_bandwidth.bytes_per_second()},
           {"nvlinks", g.nvlinks},
           {"nvls", g.nvls},
           {"peak_flops",
            {{"fp32", g.peak_fp32.flops_per_second()},
             {"tf32", g.peak_tf32.flops_per_second()},
             {"fp16", g.peak_fp16.flops_per_second()},
             {"bf16", g.peak_bf16.flops_per_second()},
             {"fp8", g.peak_fp8.flops_per_second()},
             {"fp4", g.peak_fp4.flops_per_second()}}},
           {"calibration",
            {{"gemm_efficiency", k.gemm_efficiency},
             {"gemm_k_overhead", k.gemm_k_overhead},
             {"memory_efficiency", k.memory_efficiency},
             {"attention_efficiency", k.attention_efficiency},
             {"attention_unit_overhead", k.attention_unit_overhead},
             {"nvfp4_efficiency", k.nvfp4_efficiency},
             {"launch_overhead_s", k.launch_overhead.to_seconds()},
             {"kernel_gap_s", k.kernel_gap.to_seconds()},
             {"collective_latency_s", k.collective_latency.to_seconds()},
             {"collective_step_latency_s", k.collective_step_latency.to_seconds()},
             {"collective_midsize_penalty", k.collective_midsize_penalty},
             {"collective_midsize_bytes", k.collective_midsize_bytes.count()}}}};
  json cluster{{"name", c.name},
               {"gpu", gpu},
               {"nodes", c.nodes},
               {"gpus_per_node", c.gpus_per_node},
               {"gpus", c.total_gpus()},
               {"nvlink_bandwidth_bps", c.nvlink_bandwidth.bytes_per_second()},
               {"nics_per_node", c.nics_per_node},
               {"nic_bandwidth_bps", c.nic_bandwidth.bytes_per_second()},
               {"nic_efficiency", c.nic_efficiency},
               {"network_latency_s", c.network_latency.to_seconds()},
               {"nccl_tuner", c.nccl_tuner.empty() ? "none" : c.nccl_tuner},
               {"gpu_hour_price", c.gpu_hour_price},
               {"cpu_vendor", c.cpu_vendor},
               {"host_overhead_factor", c.host_overhead_factor},
               {"pcie_gen", c.pcie_gen}};
  const TrainingConfig& t = s.training;
  json stack{
      {"name", t.stack.name},
      {"launch_overhead_us", t.stack.launch_overhead.to_microseconds()},
      {"collective_call_overhead_us", t.stack.collective_call_overhead.to_microseconds()},
      {"attention_kernel", to_string(t.stack.attention_kernel)},
      {"grouped_gemm", t.stack.fused_grouped_gemm ? "fused" : "per_expert"},
      {"expert_launch_overhead_us", t.stack.expert_launch_overhead_given
                                        ? json(t.stack.expert_launch_overhead.to_microseconds())
                                        : json(nullptr)},
      {"fsdp_gradient_staging", t.stack.fsdp_gradient_staging},
      {"flash_attention_unpad", t.stack.flash_attention_unpad},
      {"optimizer_bytes_per_param", t.stack.optimizer_bytes_per_param > 0
                                        ? json(t.stack.optimizer_bytes_per_param)
                                        : json(nullptr)},
      {"moe_router", to_string(t.stack.moe_router)},
      {"scaled_rope", t.stack.fused_scaled_rope ? "fused" : "unfused"},
      {"cross_entropy", t.stack.te_cross_entropy ? "te" : "unfused"},
      {"mamba_mixer", to_string(t.stack.mamba_mixer)},
      {"moe_probs", t.stack.moe_probs_in_activation ? "activation" : "combine"}};
  json training{{"stack", stack},
                {"seq_len", t.seq_len},
                {"global_batch", t.global_batch},
                {"micro_batch", t.micro_batch},
                {"precision", to_string(t.precision)},
                {"fp8_recipe",
                 t.precision == Precision::kFp8 ? json(to_string(t.fp8_recipe)) : json(nullptr)},
                {"flash_attention", t.flash_attention},
                {"optimizer_bytes_per_param", t.optimizer_bytes_per_param},
                {"framework_overhead_bytes", t.framework_overhead.count()},
                {"allocator_fragmentation", t.allocator_fragmentation}};
  const ParallelismConfig& p = s.parallelism;
  json par{{"tp", p.tp},
           {"pp", p.pp},
           {"dp", p.dp},
           {"vpp", p.vpp},
           {"first_stage_layers", p.first_stage_layers},
           {"last_stage_layers", p.last_stage_layers},
           {"pipeline_layout", p.pipeline_layout},
           {"pipeline_split", p.pipeline_split},
           {"sequence_parallel", p.sequence_parallel},
           {"recompute", to_string(p.recompute)},
           {"recompute_modules", recompute_module_names(p)},
           {"distributed_optimizer", p.distributed_optimizer},
           {"zero_stage", p.zero_stage},
           {"schedule", to_string(p.schedule)},
           {"ep", p.ep},
           {"etp", s.expert_tp()},
           {"cp", p.cp},
           {"cp_kind", to_string(p.cp_kind)},
           {"tp_comm_overlap", p.tp_comm_overlap},
           {"overlap_param_gather", p.overlap_param_gather},
           {"overlap_p2p", p.overlap_p2p},
           {"overlap_grad_reduce", p.overlap_grad_reduce},
           {"grad_bucket_size_bytes",
            grad_bucket_parameters(s) * int64_t{gradient_bytes_per_element(s)}}};
  // Activation offloading, and the host link its copies use, only where it is on.
  if (p.offload_layers > 0) {
    par["offload_layers"] = p.offload_layers;
    cluster["host_bandwidth_bps"] = c.host_bandwidth.bytes_per_second();
  }
  const CollectivesConfig& k2 = s.collectives;
  json coll{{"nccl_version", k2.nccl_version},
            {"algo", k2.algo},
            {"proto", k2.proto},
            {"min_channels", k2.min_channels},
            {"max_channels", k2.max_channels},
            {"pxn", k2.pxn},
            {"nvls", k2.nvls},
            {"model", k2.model}};
  json sim{{"network", s.simulation.network}, {"seed", s.simulation.seed}};
  if (s.simulation.network == "flow") {
    sim["flow"] = {
        {"routing", s.simulation.flow_routing == FlowRouting::kAdaptive ? "adaptive" : "ecmp"}};
  }
  // The windowed lists, only where set: {fields..., from_s, until_s (when it ends)} each.
  auto windowed = [](json e, SimTime from, SimTime until) {
    e["from_s"] = from.to_seconds();
    if (until != SimTime::max()) e["until_s"] = until.to_seconds();
    return e;
  };
  for (const SlowRank& x : s.simulation.slow_ranks) {
    sim["slow_ranks"].push_back(
        windowed({{"rank", x.rank}, {"factor", x.factor}}, x.from, x.until));
  }
  for (const DegradedLink& x : s.simulation.degraded_links) {
    sim["degraded_links"].push_back(
        windowed({{"link", x.link}, {"capacity", x.capacity}}, x.from, x.until));
  }
  json out{{"source", s.source},   {"model", model},     {"cluster", cluster},
           {"training", training}, {"parallelism", par}, {"collectives", coll},
           {"simulation", sim}};
  // Only with a kernel table: the roofline's scenarios keep their JSON.
  if (s.compute.model == ComputeModelKind::kMeasured) {
    out["compute"] = json{{"model", to_string(s.compute.model)},
                          {"kernel_table", s.compute.kernel_table},
                          {"kernel_table_gpu", s.compute.table ? s.compute.table->gpu : ""},
                          {"kernels", s.compute.table ? s.compute.table->rows.size() : 0}};
  }
  return out;
}

json report_to_json(const SimulationReport& r) {
  const ExecutionResult& e = r.execution;
  const StageResult& crit = e.stages[e.critical_stage];
  const bool offload = r.scenario.parallelism.offload_layers > 0;
  json stages = json::array();
  for (size_t i = 0; i < e.stages.size(); ++i) {
    const StageResult& s = e.stages[i];
    json colls = json::array();
    for (const CollectiveStats& c : s.collectives) {
      if (c.count == 0) continue;
      colls.push_back(json{{"name", c.name},
                           {"kind", c.kind},
                           {"algorithm", c.algorithm},
                           {"protocol", c.protocol},
                           {"channels", c.channels},
                           {"count", c.count},
                           {"time_s", c.time.to_seconds()},
                           {"busbw_gbps", c.busbw_gbps},
                           {"achieved_busbw_gbps", c.achieved_busbw_gbps()}});
    }
    stages.push_back(json{{"stage", i},
                          {"end_s", s.end.to_seconds()},
                          {"breakdown", breakdown_json(s.breakdown, offload)},
                          {"compute_busy_s", s.busy_compute.to_seconds()},
                          {"collectives", colls}});
  }
  // Per collective kind on the critical stage: calls, time, the algorithm/protocol mix (calls per
  // choice) and the time-weighted achieved bus bandwidth.
  json by_kind = json::object();
  {
    std::map<std::string, std::tuple<int64_t, double, double, std::map<std::string, int64_t>>> acc;
    for (const CollectiveStats& c : crit.collectives) {
      if (c.count == 0) continue;
      auto& [count, time_s, weighted_busbw, mix] = acc[c.kind];
      count += c.count;
      time_s += c.time.to_seconds();
      weighted_busbw += c.achieved_busbw_gbps() * c.time.to_seconds();
      mix[c.algorithm + (c.protocol.empty() ? "" : "/" + c.protocol)] += c.count;
    }
    for (const auto& [kind, v] : acc) {
      const auto& [count, time_s, weighted_busbw, mix] = v;
      by_kind[kind] = json{{"count", count},
                           {"time_s", time_s},
                           {"busbw_gbps", time_s > 0 ? weighted_busbw / time_s : 0.0},
                           {"algorithm_mix", mix}};
    }
  }
  // Flow-level network: flows, re-solves, per-tier link utilization and the hottest links.
  json network{{"backend", r.network}};
  if (e.has_network_stats) {
    const NetworkStats& n = e.network;
    network["flows"] = n.flows;
    network["rate_solves"] = n.solves;
    if (n.packet_level) {
      const PacketCounters& p = n.packet;
      network["packet"] = json{{"link_layer", p.infiniband ? "infiniband" : "roce"},
                               {"packets", p.packets},
                               {"ecn_marks", p.ecn_marks},
                               {"cnps", p.cnps},
                               {"pfc_pauses", p.pauses},
                               {"credit_stalls", p.credit_stalls},
                               {"drops", p.drops},
                               {"retransmitted", p.retransmitted},
                               {"events", p.events},
                               {"partitions", p.partitions},
                               {"windows", p.windows},
                               {"fast_forward",
                                {{"jumps", p.fast_forwards},
                                 {"skipped_s", p.skipped_s},
                                 {"skipped_packets", p.skipped_packets}}},
                               {"max_queue_bytes", p.max_queue},
                               {"max_queue_port", p.max_queue_port},
                               {"max_paused_s", p.max_paused_s},
                               {"max_paused_port", p.max_paused_port},
                               {"flow_completion",
                                {{"flows", p.completed},
                                 {"p50_s", p.fct_p50_s},
                                 {"p99_s", p.fct_p99_s},
                                 {"max_s", p.fct_max_s},
                                 {"slowdown_p50", p.slowdown_p50},
                                 {"slowdown_p99", p.slowdown_p99},
                                 {"slowdown_max", p.slowdown_max}}}};
      // The hottest ports over the run (the trace's counter tracks and the HTML chart).
      json ports = json::array();
      for (const PortSeries& h : p.hot_ports) {
        json from = json::array(), mean = json::array(), longest = json::array(),
             held = json::array();
        for (const PortSeries::Point& x : h.points) {
          from.push_back(x.from.to_seconds());
          mean.push_back(x.mean_queue);
          longest.push_back(x.max_queue);
          held.push_back(x.held);
        }
        ports.push_back(json{{"port", h.port},
                             {"max_queue_bytes", h.max_queue},
                             {"held_s", h.held_s},
                             {"series",
                              {{"from_s", from},
                               {"mean_queue_bytes", mean},
                               {"max_queue_bytes", longest},
                               {"held_fraction", held}}}});
      }
      network["packet"]["hot_ports"] = ports;
    }
    std::map<std::string, std::tuple<int, double, double>> tiers;  // links, sum, max utilization
    for (const LinkLoad& l : n.links) {
      auto& [count, sum, max] = tiers[l.tier];
      ++count;
      sum += l.utilization;
      max = std::max(max, l.utilization);
    }
    json by_tier = json::object();
    for (const auto& [tier, v] : tiers) {
      const auto& [count, sum, max] = v;
      by_tier[tier] = json{{"busy_links", count},
                           {"mean_utilization", count > 0 ? sum / count : 0.0},
                           {"max_utilization", max}};
    }
    network["tiers"] = by_tier;
    std::vector<LinkLoad> hottest = n.links;
    std::sort(hottest.begin(), hottest.end(), [](const LinkLoad& a, const LinkLoad& b) {
      return a.utilization != b.utilization ? a.utilization > b.utilization : a.name < b.name;
    });
    if (hottest.size() > 10) hottest.resize(10);
    json hot = json::array();
    for (const LinkLoad& l : hottest) {
      hot.push_back(json{
          {"link", l.name}, {"tier", l.tier}, {"bytes", l.bytes}, {"utilization", l.utilization}});
    }
    network["hottest_links"] = hot;
    // Aggregate load per tier over time (the trace's counter tracks): Σ flow rates on the tier's
    // channels / their line rate, both directions; mean over the run and the highest instant.
    json tier_load = json::object();
    for (const TierSeries& t : n.tiers) {
      tier_load[t.tier] = json{{"capacity_gbps", t.capacity * 1e-9},
                               {"mean_utilization", t.mean},
                               {"peak_utilization", t.peak},
                               {"trace_points", t.points.size()}};
    }
    network["tier_load"] = tier_load;
  }
  json defaults = json::object();
  for (const auto& [key, value] : r.scenario.defaults) defaults[key] = value;
  json out{{"iteration_time_s", r.iteration_time_s},
           {"network", network},
           {"collectives_by_kind", by_kind},
           {"tokens_per_s", r.tokens_per_s},
           {"mfu", r.mfu},
           {"mfu_convention",
            "model FLOPs = 3 x forward (GEMMs, attention counted causally as the kernels run "
            "it, logits); divided by the dense peak of the training precision"},
           {"mfu_2021", r.mfu_2021},
           {"mfu_2021_convention",
            "model FLOPs = 3 x forward (GEMMs, non-causal attention, logits), Megatron-LM 2021"},
           {"tflops_per_gpu", r.tflops_per_gpu},
           {"tflops_per_gpu_2021", r.tflops_per_gpu_2021},
           {"model_flops_per_iteration", r.model_flops},
           {"model_flops_per_iteration_2021", r.model_flops_2021},
           {"peak_tflops_per_gpu", r.peak_tflops},
           {"parameters", r.parameters},
           {"microbatches", r.microbatches},
           {"critical_stage", e.critical_stage},
           {"breakdown", breakdown_json(crit.breakdown, offload)},
           {"stages", stages},
           {"memory", memory_to_json(r.scenario, r.memory)},
           {"notes", r.scenario.notes},
           {"warnings", r.warnings},
           {"defaults", defaults},
           {"scenario", scenario_to_json(r.scenario)}};
  if (r.scenario.compute.model == ComputeModelKind::kMeasured) {
    const ComputeCoverage& c = r.compute_coverage;
    out["compute_coverage"] =
        json{{"measured_share", c.share(c.measured)},
             {"interpolated_share", c.share(c.interpolated)},
             {"roofline_share", c.share(c.roofline)},
             {"compute_time_s", c.total().to_seconds()},
             {"convention",
              "shares of the iteration's compute-kernel time (every stage's program) timed from "
              "the kernel table's measured shapes, interpolated between them, or by the roofline"}};
  }
  if (e.replicas.size() > 1) {
    // DP replicas simulated apart (a slowed rank): each class, the replica it simulated and how
    // many it stands for, and its end; the breakdown and stages above are the critical replica's.
    json classes = json::array();
    for (const ReplicaResult& c : e.replicas) {
      classes.push_back(
          json{{"first", c.first}, {"count", c.count}, {"end_s", c.end.to_seconds()}});
    }
    out["critical_replica"] = e.critical_replica;
    out["replica_classes"] = classes;
  }
  if (!r.moe_layers.empty()) {
    // Expert routing per MoE layer: the busiest EP rank's tokens over the mean (what sets the
    // layer's expert GEMMs and all-to-alls), the most popular expert's share of the T·k token
    // copies, and the fraction dropped by the capacity factor.
    json layers = json::array();
    double sum = 0, max = 0;
    for (const MoeLayerStats& l : r.moe_layers) {
      layers.push_back(json{{"layer", l.layer},
                            {"imbalance", l.imbalance},
                            {"max_expert_share", l.max_expert_share},
                            {"dropped", l.dropped},
                            {"busiest_rank_tokens", l.rank_tokens}});
      sum += l.imbalance;
      max = std::max(max, l.imbalance);
    }
    out["moe"] = json{{"routing", to_string(r.scenario.model.moe.routing)},
                      {"active_parameters", r.active_parameters},
                      {"mean_imbalance", sum / static_cast<double>(r.moe_layers.size())},
                      {"max_imbalance", max},
                      {"layers", layers}};
  }
  return out;
}

Status write_output(const std::string& path, const std::string& text) {
  if (path == "-") {
    std::cout << text;
    std::cout.flush();
    return Status();
  }
  std::ofstream out(path, std::ios::binary);
  if (!out) return invalid_argument(path + ": cannot open for writing");
  out << text;
  out.close();
  if (!out) return invalid_argument(path + ": write failed");
  return Status();
}

}  // namespace preflight
