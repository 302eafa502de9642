// Ring attention (context parallelism) through the executor: the K/V transfer of each ring step
// hides behind the attention of the block at hand exactly when compute >= transfer.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "config/loader.h"
#include "exec/executor.h"
#include "tests/fakes.h"
#include "workload/layer_ops.h"

namespace preflight {
namespace {

SimTime us(double v) { return SimTime::microseconds(v); }

LayerShape ring_shape(int cp, const char* kind = "ring") {
  StatusOr<Scenario> s = load_scenario_text(
      "model: {preset: llama3-8b}\ncluster: {preset: dgx-h100, nodes: 1}\n"
      "training: {seq_len: 8192, global_batch: 8}\n",
      "t", {"parallelism.cp=" + std::to_string(cp), std::string("parallelism.cp_kind=") + kind});
  EXPECT_TRUE(s.ok()) << s.status().message();
  return make_layer_shape(*s, 0);
}

// The ring part of the attention forward of a cp-way ring: sends and core steps, in order.
std::vector<Op> ring_ops(const LayerShape& x) {
  std::vector<Op> ring;
  for (const Op& op : attention_forward_ops(x)) {
    if (op.name.rfind("cp.", 0) == 0 || op.name.rfind("attn.core", 0) == 0) ring.push_back(op);
  }
  return ring;
}

// Runs `ops` as one block on one stage: every core step costs `step`, and the K/V block moves
// at the p2p bandwidth that makes its transfer take `transfer`.
SimTime run_ring(const std::vector<Op>& ops, SimTime step, SimTime transfer, int cp) {
  Workload w;
  w.blocks.push_back(Block{"ring", ops});
  Program prog;
  Step s;
  s.kind = StepKind::kRun;
  s.block = 0;
  prog.steps.push_back(s);
  w.stages.push_back(prog);
  FakeComputeModel compute(step);
  Bytes block;
  for (const Op& op : ops) {
    if (op.type == OpType::kCollective) block = op.comm_bytes;
  }
  const double bw = static_cast<double>(block.count()) / transfer.to_seconds();
  const FakeNetwork network(Bandwidth::bytes_per_second(1e30), Bandwidth::bytes_per_second(bw),
                            SimTime::zero());
  const CollectiveModel collectives(free_collectives_cluster(), network);
  JobGroups groups;
  groups.cp = place_group(cp, 1, 8);
  return execute(w, compute, collectives, groups, ExecutorOptions{}).iteration_time;
}

TEST(RingAttention, OpsAreCpStepsAndCpMinusOneTransfers) {
  const LayerShape x = ring_shape(4);
  const std::vector<Op> ops = ring_ops(x);
  int steps = 0, sends = 0;
  double flops = 0;
  for (const Op& op : ops) {
    if (op.type == OpType::kCollective) {
      ++sends;
      EXPECT_EQ(op.collective, CollectiveKind::kSendRecv);
      EXPECT_EQ(op.category, Category::kCpComm);
      EXPECT_TRUE(op.async);
      // K and V of the rank's 8192/4 tokens, 8 KV heads of 128 in bf16.
      EXPECT_EQ(op.comm_bytes.count(), 2048LL * 2 * 8 * 128 * 2);
    } else {
      ++steps;
      flops += op.flops.count();
    }
  }
  EXPECT_EQ(steps, 4);
  EXPECT_EQ(sends, 3);
  // The steps add up to 1/cp of the causal attention in whole 128-key tiles:
  // 2·heads·(s/cp)·(s + 128)·d (the diagonal tiles computed in full).
  EXPECT_DOUBLE_EQ(flops, 2.0 * 32 * (8192.0 / 4) * (8192 + 128) * 128);
}

TEST(RingAttention, TransferHidesExactlyWhenComputeIsAtLeastTransfer) {
  const int cp = 4;
  const std::vector<Op> ops = ring_ops(ring_shape(cp));
  // Compute >= transfer: cp steps back to back.
  EXPECT_EQ(run_ring(ops, us(100), us(100), cp), us(400));
  EXPECT_EQ(run_ring(ops, us(100), us(60), cp), us(400));
  // Transfer-bound: (cp − 1) transfers in a chain, then the last step.
  EXPECT_EQ(run_ring(ops, us(100), us(150), cp), us(3 * 150 + 100));
}

TEST(RingAttention, UlyssesUsesAllToAllsAroundTheCore) {
  const LayerShape x = ring_shape(2, "a2a");
  int a2a = 0;
  for (const Op& op : attention_forward_ops(x)) {
    if (op.collective == CollectiveKind::kAllToAll && op.type == OpType::kCollective) ++a2a;
  }
  EXPECT_EQ(a2a, 2);
  EXPECT_EQ(x.q_len, 8192);  // the full sequence, heads / cp
}

}  // namespace
}  // namespace preflight
