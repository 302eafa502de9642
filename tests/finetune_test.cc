// Fine-tuning shapes: SFT on packed samples attends within each document.
#include <gtest/gtest.h>

#include <string>

#include "config/loader.h"
#include "workload/layer_ops.h"

namespace preflight {
namespace {

Op attention_core(const std::string& packed) {
  std::vector<std::string> sets;
  if (!packed.empty()) sets.push_back("training.packed_sequence_length=" + packed);
  StatusOr<Scenario> s = load_scenario_text(
      "model: {preset: llama3-8b}\ncluster: {preset: dgx-h100, gpus: 8}\n"
      "training: {seq_len: 4096, global_batch: 8}\n",
      "t", sets);
  EXPECT_TRUE(s.ok()) << s.status().message();
  for (const Op& op : attention_forward_ops(make_layer_shape(*s, 0))) {
    if (op.name == "attn.core.fwd") return op;
  }
  ADD_FAILURE() << "no attention core";
  return Op();
}

TEST(PackedSequences, AttentionWorkScalesWithTheDocumentLength) {
  // Causal attention over one 4,096-token sequence does 4,096²/2 query-key products per head;
  // documents with Σs²/Σs = 206 packed into it do 4,096·206/2: the ratio is 206/4,096.
  const Op full = attention_core("");
  const Op packed = attention_core("206");
  EXPECT_NEAR(packed.flops.count() / full.flops.count(), 206.0 / 4096.0, 1e-12);
  EXPECT_EQ(packed.bytes, full.bytes);  // the same Q, K, V and O pass through
}

TEST(PackedSequences, LongerThanTheSampleIsAnError) {
  StatusOr<Scenario> s = load_scenario_text(
      "model: {preset: llama3-8b}\ncluster: {preset: dgx-h100, gpus: 8}\n"
      "training: {seq_len: 4096, global_batch: 8, packed_sequence_length: 8192}\n",
      "t", {});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("training.packed_sequence_length: 8192: expected at most "
                                      "training.seq_len (4096)"),
            std::string::npos)
      << s.status().message();
}

}  // namespace
}  // namespace preflight
