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

bool any_starts(const std::vector<std::string>& lines, const std::string& prefix) {
  for (const std::string& l : lines) {
    if (l.rfind(prefix, 0) == 0) return true;
  }
  return false;
}

TEST(MemoryAdvice, NamesOnlyWhatApplies) {
  // LLaMA-3 70B on one DGX H100 at TP 8: the model states alone exceed HBM and DP is 1, so
  // sharding over DP is named as no help and the model must split further.
  const std::vector<std::string> base = {"model.preset=llama3-70b", "cluster.preset=dgx-h100",
                                         "cluster.nodes=1",         "parallelism.tp=8",
                                         "parallelism.pp=1",        "parallelism.dp=auto",
                                         "training.global_batch=8"};
  const Scenario s = load(base);
  const MemoryReport m = estimate_memory(s);
  ASSERT_FALSE(m.fits);
  const std::vector<std::string> a = memory_advice(s, m);
  EXPECT_TRUE(any_starts(a, "the model states alone need")) << a.front();
  EXPECT_TRUE(any_starts(a, "DP is 1: sharding"));
  EXPECT_FALSE(any_starts(a, "shard the optimizer states"));
  // Sequence parallelism is on (the default scenario's): never suggested.
  for (const std::string& l : a) EXPECT_EQ(l.find("sequence parallelism"), std::string::npos);
  // Over DP 2 without the distributed optimizer: sharding saves half the optimizer states.
  std::vector<std::string> dp2 = base;
  dp2[2] = "cluster.nodes=2";
  dp2.push_back("parallelism.distributed_optimizer=false");
  dp2.push_back("parallelism.overlap_param_gather=false");
  const Scenario s2 = load(dp2);
  const MemoryReport m2 = estimate_memory(s2);
  ASSERT_FALSE(m2.fits);
  const std::vector<std::string> a2 = memory_advice(s2, m2);
  ASSERT_TRUE(any_starts(a2, "shard the optimizer states over DP 2"));
  char saves[64];
  std::snprintf(saves, sizeof saves, "saves %.1f GiB",
                m2.stages[m2.limiting_stage].optimizer.to_gib() / 2);
  bool found = false;
  for (const std::string& l : a2) found |= l.find(saves) != std::string::npos;
  EXPECT_TRUE(found) << saves;
  // A strategy that fits gets no advice.
  const Scenario fits = load({});
  EXPECT_TRUE(memory_advice(fits, estimate_memory(fits)).empty());
}

}  // namespace
}  // namespace preflight
