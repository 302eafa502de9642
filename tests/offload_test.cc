// Activation offloading (parallelism.offload_layers): Megatron's rules, the memory it saves, the
// copies and waits of the stage program, and their time on the copy stream.

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "config/loader.h"
#include "memory/memory_advice.h"
#include "memory/memory_model.h"
#include "simulate/simulate.h"
#include "workload/generator.h"

namespace preflight {
namespace {

// LLaMA-3 8B (32 dense layers) on one DGX H100 node with TP 8: PP 1, as offloading needs.
std::vector<std::string> base(std::vector<std::string> more = {}) {
  std::vector<std::string> all = {"model.preset=llama3-8b",
                                  "cluster.preset=dgx-h100",
                                  "cluster.nodes=1",
                                  "parallelism.tp=8",
                                  "parallelism.pp=1",
                                  "parallelism.dp=auto",
                                  "parallelism.sequence_parallel=true",
                                  "training.global_batch=4",
                                  "training.seq_len=8192",
                                  "training.precision=bf16"};
  all.insert(all.end(), more.begin(), more.end());
  return all;
}

Scenario scenario(std::vector<std::string> more = {}) {
  StatusOr<Scenario> s = load_scenario_text("", "", base(std::move(more)));
  EXPECT_TRUE(s.ok()) << s.status().message();
  return s.ok() ? *s : Scenario{};
}

std::string load_error(std::vector<std::string> more) {
  StatusOr<Scenario> s = load_scenario_text("", "", base(std::move(more)));
  return s.ok() ? "" : s.status().message();
}

SimulationReport run(const Scenario& s) {
  StatusOr<SimulationReport> r = simulate(s, {});
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? *r : SimulationReport{};
}

TEST(Offload, MegatronRulesAreChecked) {
  EXPECT_EQ(load_error({"parallelism.offload_layers=31"}), "");
  EXPECT_NE(load_error({"parallelism.offload_layers=32"}).find("expected fewer than model.layers"),
            std::string::npos);
  EXPECT_NE(load_error({"parallelism.offload_layers=-1"}).find("parallelism.offload_layers"),
            std::string::npos);
  EXPECT_NE(load_error({"parallelism.offload_layers=4", "parallelism.tp=4", "parallelism.pp=2"})
                .find("expected pp 1"),
            std::string::npos);
  EXPECT_NE(load_error({"parallelism.offload_layers=4", "parallelism.recompute=selective"})
                .find("expected recompute: none"),
            std::string::npos);
  EXPECT_NE(load_error({"parallelism.offload_layers=4", "training.cuda_graphs=full"})
                .find("training.cuda_graphs"),
            std::string::npos);
  EXPECT_NE(load_error({"parallelism.offload_layers=4", "parallelism.schedule=gpipe"})
                .find("expected schedule: 1f1b"),
            std::string::npos);
  EXPECT_NE(load_error({"cluster.host_bandwidth=0GB/s"}).find("cluster.host_bandwidth"),
            std::string::npos);
}

TEST(Offload, HostBandwidthComesFromThePcieGenerationOrThePreset) {
  // DGX H100: PCIe Gen5 x16 at 0.8 of 64 GB/s; GB200: its NVLink-C2C share.
  EXPECT_DOUBLE_EQ(scenario().cluster.host_bandwidth.gigabytes_per_second(), 51.2);
  EXPECT_DOUBLE_EQ(scenario({"cluster.pcie_gen=4"}).cluster.host_bandwidth.gigabytes_per_second(),
                   25.6);
  EXPECT_DOUBLE_EQ(scenario({"cluster.preset=gb200-nvl72", "cluster.gpus=8", "parallelism.dp=auto"})
                       .cluster.host_bandwidth.gigabytes_per_second(),
                   225);
  EXPECT_DOUBLE_EQ(
      scenario({"cluster.host_bandwidth=100GB/s"}).cluster.host_bandwidth.gigabytes_per_second(),
      100);
}

TEST(Offload, MemoryHoldsTheLayersNotOffloaded) {
  // Layers of one size T: Transformer Engine's schedule holds (L − N)·T at most (its own
  // comment), and the host holds N·T per micro-batch.
  const Scenario plain = scenario();
  const Scenario off = scenario({"parallelism.offload_layers=24"});
  const StageMemory a = estimate_memory(plain).stages[0];
  const StageMemory b = estimate_memory(off).stages[0];
  const Bytes layer = layer_activation_bytes(plain, 0);
  EXPECT_EQ(a.layer_activations.count(), layer.count() * 32);
  EXPECT_NEAR(static_cast<double>(b.layer_activations.count()),
              static_cast<double>(layer.count() * 8), 8.0);
  EXPECT_EQ(b.offloaded.count(), layer.count() * 24);
  EXPECT_EQ(a.offloaded.count(), 0);
  EXPECT_EQ(b.activations_per_microbatch, a.activations_per_microbatch);
  EXPECT_LT(b.peak, a.peak);
  EXPECT_EQ(offloaded_layer_bytes(off).size(), 24u);
  EXPECT_TRUE(offloaded_layer_bytes(plain).empty());
}

TEST(Offload, EveryCopyIsWaitedForOnceAfterItIsIssued) {
  const Scenario s = scenario({"parallelism.offload_layers=6"});
  const Workload w = generate_workload(s, offloaded_layer_bytes(s));
  ASSERT_EQ(w.stages.size(), 1u);
  std::map<int64_t, int> issued;  // tag -> copies issued, minus waits
  int copies = 0, waits = 0, reloads = 0;
  for (const Step& st : w.stages[0].steps) {
    if (st.kind == StepKind::kHostCopy) {
      EXPECT_EQ(issued[st.tag]++, 0) << "copy " << st.tag << " issued twice";
      EXPECT_GT(st.bytes.count(), 0);
      ++copies;
      reloads += st.backward ? 1 : 0;
    } else if (st.kind == StepKind::kWaitHostCopy) {
      EXPECT_EQ(issued[st.tag]--, 1) << "wait for copy " << st.tag << " before it was issued";
      ++waits;
    }
  }
  // Each micro-batch offloads and reloads each of the 6 layers.
  const int m = s.num_microbatches();
  EXPECT_EQ(copies, 2 * 6 * m);
  EXPECT_EQ(reloads, 6 * m);
  EXPECT_EQ(waits, copies);
}

TEST(Offload, CopiesHiddenBehindComputeCostNothing) {
  // A host link so fast that every copy ends before it is waited for: the same iteration, to
  // the picosecond, and no exposed offload.
  const SimulationReport plain = run(scenario());
  const SimulationReport fast =
      run(scenario({"parallelism.offload_layers=16", "cluster.host_bandwidth=10TB/s"}));
  EXPECT_EQ(fast.execution.iteration_time, plain.execution.iteration_time);
  EXPECT_EQ(fast.execution.stages[0].breakdown.offload.ps(), 0);
}

TEST(Offload, ASlowHostLinkIsExposed) {
  // Two layers, the first offloaded: its copy must end before the second layer's forward
  // (L − N + 0 = 1), and its reload starts before its own backward (L − 1 − N + 0 = 0), which
  // waits for it. Nothing overlaps either copy, so each micro-batch exposes both in full.
  const std::vector<std::string> two = {"model.layers=2", "cluster.host_bandwidth=1GB/s"};
  std::vector<std::string> with = two;
  with.push_back("parallelism.offload_layers=1");
  const Scenario s = scenario(with);
  const SimulationReport plain = run(scenario(two));
  const SimulationReport off = run(s);
  const SimTime copy = offloaded_layer_bytes(s)[0] / s.cluster.host_bandwidth;
  const SimTime exposed = copy * (2 * s.num_microbatches());
  EXPECT_EQ(off.execution.stages[0].breakdown.offload, exposed);
  EXPECT_EQ(off.execution.iteration_time - plain.execution.iteration_time, exposed);
  EXPECT_EQ(off.execution.stages[0].breakdown.total(), off.execution.stages[0].end);
}

TEST(Offload, MemoryAdviceNamesTheFewestLayersThatFit) {
  // LLaMA-3 70B with TP 1 on 64 GB200s under ZeRO-3 (the Megatron-FSDP recipe's layout) does
  // not fit without offloading; the advice names the fewest offloaded layers that do.
  const Scenario s =
      scenario({"model.preset=llama3-70b", "cluster.preset=gb200-nvl72", "cluster.gpus=64",
                "parallelism.tp=1", "parallelism.dp=auto", "parallelism.sequence_parallel=false",
                "parallelism.zero_stage=3", "parallelism.distributed_optimizer=true",
                "training.micro_batch=2", "training.global_batch=256", "training.precision=fp8"});
  const MemoryReport m = estimate_memory(s);
  ASSERT_FALSE(m.fits);
  int n = 0;
  for (const std::string& a : memory_advice(s, m)) {
    const std::string what = "offloading the activations of ";
    if (a.rfind(what, 0) == 0) n = std::stoi(a.substr(what.size()));
  }
  ASSERT_GT(n, 0) << "no offloading advice";
  Scenario fewer = s, enough = s;
  fewer.parallelism.offload_layers = n - 1;
  enough.parallelism.offload_layers = n;
  EXPECT_TRUE(estimate_memory(enough).fits);
  EXPECT_FALSE(estimate_memory(fewer).fits);
}

}  // namespace
}  // namespace preflight
