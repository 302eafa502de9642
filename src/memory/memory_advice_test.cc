#include "memory/memory_advice.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "config/loader.h"

namespace preflight {
namespace {

Scenario load(const std::vector<std::string>& overrides) {
  StatusOr<Scenario> s = load_scenario_text("", "test.yaml", overrides);
  EXPECT_TRUE(s.ok()) << s.status().message();
  return s.ok() ? *s : Scenario{};
}

// The peak the memory model gives `base` with `overrides` on top.
double peak_gib(std::vector<std::string> base, const std::vector<std::string>& overrides) {
  base.insert(base.end(), overrides.begin(), overrides.end());
  const Scenario s = load(base);
  const MemoryReport m = estimate_memory(s);
  return m.stages[m.limiting_stage].peak.to_gib();
}

// The --set overrides of an advice line ("... (--set a=1 --set b=2)").
std::vector<std::string> sets_of(const std::string& line) {
  std::vector<std::string> out;
  size_t at = 0;
  while ((at = line.find("--set ", at)) != std::string::npos) {
    at += 6;
    const size_t end = line.find_first_of(" )", at);
    out.push_back(line.substr(at, end - at));
  }
  return out;
}

TEST(MemoryAdvice, EachChangeIsComputedAndFitsAsStated) {
  // LLaMA-3 70B on one DGX H100 at TP 8: the model states alone exceed HBM and DP is 1, so no
  // sharding is offered; the changes that fit take more GPUs, and each line's peak is what the
  // memory model gives with that line's overrides.
  const std::vector<std::string> base = {"model.preset=llama3-70b", "cluster.preset=dgx-h100",
                                         "cluster.nodes=1",         "parallelism.tp=8",
                                         "parallelism.pp=1",        "parallelism.dp=auto",
                                         "training.global_batch=8"};
  const Scenario s = load(base);
  const MemoryReport m = estimate_memory(s);
  ASSERT_FALSE(m.fits);
  const std::vector<std::string> a = memory_advice(s, m);
  ASSERT_FALSE(a.empty());
  EXPECT_LE(a.size(), 4u);
  for (const std::string& l : a) {
    EXPECT_EQ(l.find("ZeRO"), std::string::npos) << l;  // DP 1: sharding cannot help
    EXPECT_EQ(l.find("distributed optimizer"), std::string::npos) << l;
    const std::vector<std::string> sets = sets_of(l);
    ASSERT_FALSE(sets.empty()) << l;
    const double peak = peak_gib(base, sets);
    char stated[64];
    std::snprintf(stated, sizeof stated, "-> %.1f GiB peak, fits", peak);
    EXPECT_NE(l.find(stated), std::string::npos) << l << " vs " << stated;
    EXPECT_LT(peak, 80.0);
  }
  // The fewest GPUs first.
  EXPECT_NE(a.front().find("16 GPUs"), std::string::npos) << a.front();
}

TEST(MemoryAdvice, ASavingInPlaceComesBeforeMoreGpus) {
  // GPT-3 13B on 8 A100-40GB at DP 8 with a replicated optimizer: sharding the optimizer over DP
  // fits on the same GPUs, so it leads.
  const std::vector<std::string> base = {"model.preset=gpt3-13b",
                                         "cluster.preset=dgx-a100",
                                         "cluster.gpu.preset=A100-SXM4-40GB",
                                         "cluster.nodes=1",
                                         "parallelism.tp=1",
                                         "parallelism.pp=1",
                                         "parallelism.dp=auto",
                                         "training.global_batch=8",
                                         "parallelism.distributed_optimizer=false",
                                         "parallelism.overlap_param_gather=false"};
  const Scenario s = load(base);
  const MemoryReport m = estimate_memory(s);
  ASSERT_FALSE(m.fits);
  const std::vector<std::string> a = memory_advice(s, m);
  ASSERT_FALSE(a.empty());
  const std::vector<std::string> sets = sets_of(a.front());
  for (const std::string& x : sets) EXPECT_EQ(x.rfind("cluster.gpus=", 0), std::string::npos);
  EXPECT_LT(peak_gib(base, sets), s.cluster.gpu.hbm_capacity.to_gib());
  // A strategy that fits gets no advice.
  const Scenario fits = load({});
  EXPECT_TRUE(memory_advice(fits, estimate_memory(fits)).empty());
}

}  // namespace
}  // namespace preflight
