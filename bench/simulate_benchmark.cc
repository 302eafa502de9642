// Whole-run timing: the issue-2 benchmark scenario, GPT-3 175B on 1,024 A100s (TP 8, PP 16,
// DP 8, 1F1B, global batch 1,536). Target: <= 2 s per simulation on a 2-core machine.
#include <benchmark/benchmark.h>

#include <chrono>
#include <string>
#include <vector>

#include "config/loader.h"
#include "simulate/simulate.h"

namespace preflight {
namespace {

void BM_SimulateGpt3_175B_1024xA100(benchmark::State& state) {
  StatusOr<Scenario> s = load_scenario("", {});
  if (!s.ok()) {
    state.SkipWithError(s.status().message().c_str());
    return;
  }
  for (auto _ : state) {
    StatusOr<SimulationReport> r = simulate(*s);
    benchmark::DoNotOptimize(r.ok());
  }
  state.SetLabel("target: <= 2 s per run");
}
BENCHMARK(BM_SimulateGpt3_175B_1024xA100)->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace
}  // namespace preflight

namespace preflight {
namespace {

// The same scenario on the flow-level network (issue 5 target: <= 2 s, goal <= 1 s), and
// LLaMA-3 405B on 16,384 H100s with TP 8, PP 16, DP 128 (target <= 60 s): its 126 layers run
// as Meta's did, 7 on the first and last stage and 8 on the others. Counters: flows and max-min
// rate recomputations.
void run_flow(benchmark::State& state, const std::vector<std::string>& overrides) {
  StatusOr<Scenario> s = load_scenario("", overrides);
  if (!s.ok()) {
    state.SkipWithError(s.status().message().c_str());
    return;
  }
  for (auto _ : state) {
    StatusOr<SimulationReport> r = simulate(*s);
    if (!r.ok()) {
      state.SkipWithError(r.status().message().c_str());
      return;
    }
    state.counters["flows"] = static_cast<double>(r->execution.network.flows);
    state.counters["rate_solves"] = static_cast<double>(r->execution.network.solves);
  }
}

void BM_SimulateGpt3_175B_1024xA100_Flow(benchmark::State& state) {
  run_flow(state, {"simulation.network=flow"});
  state.SetLabel("target: <= 2 s per run (goal <= 1 s)");
}
BENCHMARK(BM_SimulateGpt3_175B_1024xA100_Flow)->Unit(benchmark::kMillisecond)->Iterations(2);

void BM_SimulateLlama3_405B_16384xH100_Flow(benchmark::State& state) {
  run_flow(state,
           {"model.preset=llama3-405b", "parallelism.first_stage_layers=7",
            "parallelism.last_stage_layers=7", "cluster.preset=dgx-h100", "cluster.nodes=2048",
            "parallelism.tp=8", "parallelism.pp=16", "parallelism.dp=128", "training.seq_len=8192",
            "training.global_batch=2048", "parallelism.recompute=none", "simulation.network=flow"});
  state.SetLabel("target: <= 60 s per run");
}
BENCHMARK(BM_SimulateLlama3_405B_16384xH100_Flow)->Unit(benchmark::kMillisecond)->Iterations(1);

// The packet-level network (issue 16) on GPT-3 13B over 4 DGX A100 nodes (TP 4, PP 4, DP 2), with
// the flow network's time for the same job beside it. The target case, GPT-3 13B on 128
// H100s (<= 10 min), is measured by hand (docs/packet_network.md "Speed"): about 34 s, too long
// for `make bench`.
const std::vector<std::string> kGpt13bPacket = {"model.preset=gpt3-13b",
                                                "cluster.preset=dgx-a100",
                                                "cluster.nodes=4",
                                                "parallelism.tp=4",
                                                "parallelism.pp=4",
                                                "parallelism.dp=auto",
                                                "training.seq_len=2048",
                                                "training.global_batch=32",
                                                "parallelism.sequence_parallel=true",
                                                "parallelism.recompute=selective",
                                                "parallelism.distributed_optimizer=true",
                                                "parallelism.overlap_grad_reduce=true"};

// Runs `job` on the packet network (with `packet_keys` besides), timed, with the flow network's
// run time and iteration time for the same job beside it.
void run_packet(benchmark::State& state, const std::vector<std::string>& job,
                const std::vector<std::string>& packet_keys = {}) {
  std::vector<std::string> flow = job;
  flow.push_back("simulation.network=flow");
  std::vector<std::string> packet = job;
  packet.push_back("simulation.network=packet");
  packet.insert(packet.end(), packet_keys.begin(), packet_keys.end());
  StatusOr<Scenario> f = load_scenario("", flow);
  StatusOr<Scenario> p = load_scenario("", packet);
  if (!f.ok() || !p.ok()) {
    state.SkipWithError("the scenario does not load");
    return;
  }
  const auto t0 = std::chrono::steady_clock::now();
  StatusOr<SimulationReport> fr = simulate(*f);
  const double flow_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (auto _ : state) {
    StatusOr<SimulationReport> r = simulate(*p);
    if (!r.ok() || !fr.ok()) {
      state.SkipWithError("the simulation failed");
      return;
    }
    state.counters["packets"] = static_cast<double>(r->execution.network.packet.packets);
    state.counters["events"] = static_cast<double>(r->execution.network.packet.events);
    state.counters["skipped_packets"] =
        static_cast<double>(r->execution.network.packet.skipped_packets);
    state.counters["iteration_s"] = r->iteration_time_s;
    state.counters["flow_iteration_s"] = fr->iteration_time_s;
    state.counters["flow_run_s"] = flow_s;
  }
}

void BM_SimulateGpt3_13B_32xA100_Packet(benchmark::State& state) {
  run_packet(state, kGpt13bPacket);
  state.SetLabel("target (issue 16): GPT-3 13B on 128 H100s <= 10 min; flow network time beside");
}
BENCHMARK(BM_SimulateGpt3_13B_32xA100_Packet)->Unit(benchmark::kMillisecond)->Iterations(1);

// The target case itself with the fast-forward of steady states
// (simulation.packet.fast_forward): GPT-3 13B on 128 H100s (16 DGX nodes, rail-optimized; TP 8,
// DP 16, global batch 256) on the preset's InfiniBand, 284 M packets of which about 97 % are
// credited across jumps. The exact run, measured by hand (docs/packet_network.md "Speed"), takes
// about 34 s for an iteration time within 0.00002 % of this one.
void BM_SimulateGpt3_13B_128xH100_PacketFastForward(benchmark::State& state) {
  run_packet(
      state,
      {"model.preset=gpt3-13b", "cluster.preset=dgx-h100", "cluster.nodes=16", "parallelism.tp=8",
       "parallelism.pp=1", "parallelism.dp=16", "training.global_batch=256"},
      {"simulation.packet.fast_forward=true"});
  state.SetLabel(
      "target (issue 16): <= 10 min on 2 cores (exact: about 34 s); flow network time beside");
}
BENCHMARK(BM_SimulateGpt3_13B_128xH100_PacketFastForward)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);

// The same iteration simulated exactly, its fabric in partitions (simulation.packet.partitions:
// auto, one per rail's leaf: 8) on 1 and 2 threads (the argument): the outputs are identical
// for any thread count; the time is what the second core brings (docs/packet_network.md
// "Partitions": 35.0 s and 21.5 s on this machine when measured).
void BM_SimulateGpt3_13B_128xH100_PacketPartitions(benchmark::State& state) {
  run_packet(
      state,
      {"model.preset=gpt3-13b", "cluster.preset=dgx-h100", "cluster.nodes=16", "parallelism.tp=8",
       "parallelism.pp=1", "parallelism.dp=16", "training.global_batch=256"},
      {"simulation.packet.partitions=auto",
       "simulation.packet.threads=" + std::to_string(state.range(0))});
  state.SetLabel(
      "target (issue 16): use both cores where it helps; outputs the same on any "
      "thread count (argument: threads)");
}
BENCHMARK(BM_SimulateGpt3_13B_128xH100_PacketPartitions)
    ->Arg(1)
    ->Arg(2)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);

// The same on RoCE (PFC, ECN, DCQCN; simulation.packet.link_layer: roce), 8 partitions on 2
// threads: PAUSE frames, CNPs and go-back-N's NACKs cross partitions as messages
// (docs/packet_network.md "Partitions": 37.2 s on one queue, 22.7 s here when measured, the
// iteration the same to the last bit).
void BM_SimulateGpt3_13B_128xH100_RocePacketPartitions(benchmark::State& state) {
  run_packet(
      state,
      {"model.preset=gpt3-13b", "cluster.preset=dgx-h100", "cluster.nodes=16", "parallelism.tp=8",
       "parallelism.pp=1", "parallelism.dp=16", "training.global_batch=256"},
      {"simulation.packet.link_layer=roce", "simulation.packet.partitions=auto",
       "simulation.packet.threads=2"});
  state.SetLabel(
      "target (issue 16): use both cores where it helps, on RoCE too (one queue: "
      "about 37 s)");
}
BENCHMARK(BM_SimulateGpt3_13B_128xH100_RocePacketPartitions)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);

// The all-to-all-heavy case (issue 16): Mixtral 8x7B on 2 DGX H100 nodes, TP 2 and EP 8, so each
// MoE layer's dispatch and combine cross the NICs (about 26 M packets, 16,672 flows), balanced
// routing.
void BM_SimulateMixtral_16xH100_Packet(benchmark::State& state) {
  run_packet(state, {"model.preset=mixtral-8x7b", "cluster.preset=dgx-h100", "cluster.nodes=2",
                     "parallelism.tp=2", "parallelism.pp=1", "parallelism.ep=8", "parallelism.dp=8",
                     "training.seq_len=4096", "training.global_batch=16", "training.micro_batch=1",
                     "model.moe.routing=balanced"});
  state.SetLabel("MoE all-to-all across nodes on the packet network; flow network time beside");
}
BENCHMARK(BM_SimulateMixtral_16xH100_Packet)->Unit(benchmark::kMillisecond)->Iterations(1);

// Congestion the fast-forward carries (issue 16): Mixtral 8x7B cut to 4 layers on 4 DGX H100
// nodes, EP 8 across them, on a leaf-spine 4:1 oversubscribed with 16-port leaves, so the
// all-to-alls' uplinks are held by InfiniBand's credits for most of the iteration (31 M credit
// stalls). The exact run, measured by hand (docs/packet_network.md "Fast-forward"), takes about
// 16.5 s (216 M events) for an iteration 0.05 % shorter than this one.
void BM_SimulateMixtral_32xH100_Oversubscribed_PacketFastForward(benchmark::State& state) {
  run_packet(state,
             {"model.preset=mixtral-8x7b", "model.layers=4", "model.moe.routing=balanced",
              "cluster.preset=dgx-h100", "cluster.nodes=4", "cluster.topology.kind=spine_leaf",
              "cluster.topology.oversubscription=4:1", "cluster.topology.leaf_radix=16",
              "parallelism.tp=1", "parallelism.pp=1", "parallelism.ep=8", "parallelism.dp=32",
              "training.seq_len=4096", "training.global_batch=32", "training.micro_batch=1"},
             {"simulation.packet.fast_forward=true"});
  state.SetLabel("credit-bound uplinks fast-forwarded (exact: about 16.5 s); flow network beside");
}
BENCHMARK(BM_SimulateMixtral_32xH100_Oversubscribed_PacketFastForward)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);

}  // namespace
}  // namespace preflight
