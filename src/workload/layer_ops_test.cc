#include "workload/layer_ops.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "config/loader.h"
#include "model/transformer.h"
#include "tests/load_scenario.h"
#include "tests/op_index.h"
#include "workload/csa_ops.h"

namespace preflight {
namespace {

// A GPT layer with h = 4096, a = 32, F = 4h on one DGX A100; b = 2, s = 2048.
const char* kGpt = R"(
model: {layers: 4, hidden: 4096, heads: 32, ffn_hidden: 16384, vocab: 50257}
cluster: {preset: dgx-a100, nodes: 1}
training: {seq_len: 2048, global_batch: 16, micro_batch: 2, flash_attention: false}
parallelism: {tp: 1, pp: 1}
)";

double gemm_flops(const std::vector<Op>& ops) {
  double f = 0;
  for (const Op& op : ops) {
    if (op.type == OpType::kGemm) f += op.flops.count();
  }
  return f;
}

double all_flops(const std::vector<Op>& ops) {
  double f = 0;
  for (const Op& op : ops) f += op.flops.count();
  return f;
}

std::vector<const Op*> collectives(const std::vector<Op>& ops) {
  std::vector<const Op*> out;
  for (const Op& op : ops) {
    if (op.type == OpType::kCollective) out.push_back(&op);
  }
  return out;
}

const Op* find(const std::vector<Op>& ops, const std::string& name) {
  for (const Op& op : ops) {
    if (op.name == name) return &op;
  }
  return nullptr;
}

TEST(GemmOp, FlopsAndBytesFollowTheShape) {
  // 2·m·n·k·batch = 2·128·256·64·3 = 12,582,912; bytes (m·k + k·n + m·n)·batch·e
  // = (8192 + 16384 + 32768)·3·2 = 344,064; accumulating adds m·n·batch·e = 196,608.
  const Op op = gemm_op("g", 128, 256, 64, 3, 2);
  EXPECT_EQ(op.type, OpType::kGemm);
  EXPECT_EQ(op.flops.count(), 12'582'912.0);
  EXPECT_EQ(op.bytes.count(), 344'064);
  EXPECT_EQ(gemm_op("g", 128, 256, 64, 3, 2, true).bytes.count(), 344'064 + 196'608);
  EXPECT_EQ(gemm_op("g", 128, 256, 64, 3, 1).bytes.count(), 344'064 / 2);  // fp8 operands
}

TEST(CollectiveOp, GroupSetsTheBreakdownCategory) {
  const Bytes b(1000);
  EXPECT_EQ(collective_op("x", CollectiveKind::kAllReduce, GroupKind::kTensor, b).category,
            Category::kTpComm);
  EXPECT_EQ(collective_op("x", CollectiveKind::kAllReduce, GroupKind::kData, b).category,
            Category::kDpComm);
  EXPECT_EQ(collective_op("x", CollectiveKind::kAllReduce, GroupKind::kEmbedding, b).category,
            Category::kDpComm);
  EXPECT_EQ(collective_op("x", CollectiveKind::kBroadcast, GroupKind::kPipeline, b).category,
            Category::kPpComm);
  EXPECT_EQ(collective_op("x", CollectiveKind::kAllGather, GroupKind::kData, b).comm_bytes, b);
}

TEST(LayerForwardOps, GptGemmFlopsAre24bsh2Plus4bs2h) {
  // Unfused attention, tp 1: QKV 6Th², proj 2Th², fc1 8Th², fc2 8Th² (24·b·s·h²) plus the
  // score and context batched GEMMs 2·b·s²·h each (4·b·s²·h), T = b·s. b = 2, s = 2048,
  // h = 4096: 1,649,267,441,664 + 137,438,953,472 = 1,786,706,395,136.
  const Scenario s = load(kGpt);
  const std::vector<Op> ops = layer_forward_ops(make_layer_shape(s));
  const double b = 2, seq = 2048, h = 4096;
  EXPECT_EQ(gemm_flops(ops), 24 * b * seq * h * h + 4 * b * seq * seq * h);
  EXPECT_EQ(gemm_flops(ops), 1'786'706'395'136.0);
  // Memory-bound kernels carry no FLOPs, so the whole layer matches too, and so does the model
  // formula.
  EXPECT_EQ(all_flops(ops), gemm_flops(ops));
  EXPECT_EQ(all_flops(ops), layer_forward_flops(s.model, 2 * 2048, 2048));
  EXPECT_TRUE(collectives(ops).empty());
}

TEST(LayerForwardOps, FlashAttentionSkipsTheMaskedHalf) {
  // The fused causal core does about 2·b·s²·h of the 4·b·s²·h score/context FLOPs: the tiles
  // above the diagonal are skipped, the 16 diagonal tiles of 128 x 128 computed whole, so
  // 2·b·s·(s + 128)·h.
  const Scenario s = load(kGpt, {"training.flash_attention=true"});
  const std::vector<Op> ops = layer_forward_ops(make_layer_shape(s));
  const double b = 2, seq = 2048, h = 4096;
  EXPECT_EQ(gemm_flops(ops), 24 * b * seq * h * h);
  const Op* core = find(ops, "attn.core.fwd");
  ASSERT_NE(core, nullptr);
  EXPECT_EQ(core->type, OpType::kAttention);
  EXPECT_EQ(core->flops.count(), 2 * b * seq * (seq + 128) * h);
  EXPECT_EQ(find(ops, "attn.softmax"), nullptr);
}

TEST(LayerOps, FusedAttentionCountsOneExponentialPerScoreElement) {
  // Causal, b = 2, 32 heads, s = 2,048 (head width 128): b·heads·s·(s + 128)/2 score elements
  // in whole tiles, each one exponential forward and one more backward (P recomputed), 4·d =
  // 512 forward FLOPs apiece.
  const Scenario s = load(kGpt, {"training.flash_attention=true"});
  const LayerShape x = make_layer_shape(s);
  const double elements = 2.0 * 32 * 2048 * (2048 + 128) / 2;
  const std::vector<Op> fwd_ops = layer_forward_ops(x);
  const Op* fwd = find(fwd_ops, "attn.core.fwd");
  ASSERT_NE(fwd, nullptr);
  EXPECT_EQ(fwd->exponentials, elements);
  EXPECT_EQ(fwd->flops.count() / fwd->exponentials, 4.0 * 128);
  const std::vector<Op> bwd_ops = layer_backward_ops(x);
  const Op* bwd = find(bwd_ops, "attn.core.bwd");
  ASSERT_NE(bwd, nullptr);
  EXPECT_EQ(bwd->exponentials, elements);
  // Context parallelism splits them over its ring steps as it splits the FLOPs.
  const Scenario cp = load(kGpt, {"training.flash_attention=true", "parallelism.cp=2",
                                  "cluster.gpus=2", "parallelism.dp=1"});
  double total = 0;
  for (const Op& op : layer_forward_ops(make_layer_shape(cp))) {
    if (op.type == OpType::kAttention) total += op.exponentials;
  }
  EXPECT_DOUBLE_EQ(total, elements / 2);  // each rank holds half the queries
}

TEST(LayerShape, FusedAttentionComputesWholeTiles) {
  // A causal sequence of n tiles: tiles 1 + 2 + … + n of 128 keys, (n + 1)·64 keys a query.
  EXPECT_DOUBLE_EQ(tiled_keys2(4096, 0), 4096 + 128);
  EXPECT_DOUBLE_EQ(tiled_keys2(128, 0), 256);
  // Shorter than a tile: one tile, whole.
  EXPECT_DOUBLE_EQ(tiled_keys2(100, 0), 256);
  // A window of 128 keys: from the second query tile on, its own diagonal tile and the one
  // before it (1 + 2·31 tiles over 32): 2·128·63/32 = 504, against 252 for the keys attended.
  EXPECT_DOUBLE_EQ(tiled_keys2(4096, 128), 504);
  // A window of 129 keys still fits its own tile and the one before (the first query of a
  // tile reaches back exactly one tile); 130 reaches a third.
  EXPECT_DOUBLE_EQ(tiled_keys2(4096, 129), 504);
  EXPECT_DOUBLE_EQ(tiled_keys2(4096, 130), 2.0 * 128 * (1 + 2 + 3 * 30) / 32);
  EXPECT_DOUBLE_EQ(tiled_keys2(4096, 8192), tiled_keys2(4096, 0));
  // gpt-oss: its windowed layers compute 504 keys2 a query, its full ones 4,224.
  const Scenario oss = load(
      "model: {preset: gpt-oss-120b}\ncluster: {preset: dgx-b200, gpus: 8}\n"
      "training: {seq_len: 4096, global_batch: 8}\n",
      {});
  EXPECT_DOUBLE_EQ(make_layer_shape(oss, 0).tile_keys2, 504);
  EXPECT_DOUBLE_EQ(make_layer_shape(oss, 1).tile_keys2, 4224);
  EXPECT_LT(make_layer_shape(oss, 0).keys2, 253);  // the keys attended stay the model's
}

TEST(LayerOps, AnUnpaddingStackGathersAndScattersAroundTheFusedKernel) {
  // llm-foundry's flash path on the GPT layer above (T = 4,096 tokens, h = 4,096, e = 2): the
  // forward gathers Q, K, V (read and write, 2·e·T·3h = 201 MB) before the kernel and zeroes and
  // scatters the output (3·e·T·h = 101 MB) after it; the backward gathers dO (2·e·T·h) before
  // and zeroes and scatters dQ, dK, dV (3·e·T·3h) after. Without the stack's flag, none.
  const double e = 2, t = 2 * 2048, h = 4096;
  const Scenario s =
      load(kGpt, {"training.flash_attention=true", "training.stack={preset: pytorch-fsdp}"});
  ASSERT_TRUE(s.training.stack.flash_attention_unpad);
  const LayerShape x = make_layer_shape(s);
  auto names = [](const std::vector<Op>& ops) {
    std::vector<std::string> out;
    for (const Op& op : ops) {
      if (op.name.rfind("attn.", 0) == 0) out.push_back(op.name);
    }
    return out;
  };
  const std::vector<Op> fwd = layer_forward_ops(x);
  const std::vector<Op> bwd = layer_backward_ops(x);
  EXPECT_EQ(names(fwd),
            (std::vector<std::string>{"attn.unpad", "attn.core.fwd", "attn.pad", "attn.residual"}));
  EXPECT_EQ(find(fwd, "attn.unpad")->bytes.count(), static_cast<int64_t>(2 * e * t * 3 * h));
  EXPECT_EQ(find(fwd, "attn.pad")->bytes.count(), static_cast<int64_t>(3 * e * t * h));
  EXPECT_EQ(find(bwd, "attn.pad.bwd")->bytes.count(), static_cast<int64_t>(2 * e * t * h));
  EXPECT_EQ(find(bwd, "attn.unpad.bwd")->bytes.count(), static_cast<int64_t>(3 * e * t * 3 * h));
  EXPECT_EQ(find(fwd, "attn.unpad")->launches, 3);
  const std::vector<Op> plain = layer_forward_ops(make_layer_shape(
      load(kGpt, {"training.flash_attention=true", "training.stack={preset: megatron-core}"})));
  EXPECT_EQ(find(plain, "attn.unpad"), nullptr);
  EXPECT_EQ(find(plain, "attn.pad"), nullptr);
}

TEST(LayerBackwardOps, GemmFlopsAreTwiceTheForward) {
  // Every forward GEMM has a data-gradient and a weight-gradient GEMM of the same size; the
  // unfused attention core has four batched GEMMs for its two.
  const LayerShape x = make_layer_shape(load(kGpt));
  EXPECT_EQ(gemm_flops(layer_backward_ops(x)), 2 * gemm_flops(layer_forward_ops(x)));
}

TEST(LayerForwardOps, TensorParallelShardsTheGemms) {
  const double tp1 = gemm_flops(layer_forward_ops(make_layer_shape(load(kGpt))));
  const Scenario s = load(kGpt, {"parallelism.tp=8"});
  const LayerShape x = make_layer_shape(s);
  const std::vector<Op> ops = layer_forward_ops(x);
  EXPECT_EQ(gemm_flops(ops) * 8, tp1);
  // Two all-reduces of the full activation e·T·h = 2·4096·4096 bytes per layer forward.
  const std::vector<const Op*> c = collectives(ops);
  ASSERT_EQ(c.size(), 2u);
  for (const Op* op : c) {
    EXPECT_EQ(op->collective, CollectiveKind::kAllReduce);
    EXPECT_EQ(op->group, GroupKind::kTensor);
    EXPECT_EQ(op->comm_bytes.count(), 2 * 4096 * 4096);
  }
}

TEST(LayerForwardOps, SequenceParallelGathersAndScattersAndShardsNorms) {
  const Scenario s = load(kGpt, {"parallelism.tp=8", "parallelism.sequence_parallel=true"});
  const LayerShape x = make_layer_shape(s);
  EXPECT_EQ(x.elementwise_tokens, 4096 / 8);
  const std::vector<Op> ops = layer_forward_ops(x);
  int gathers = 0, scatters = 0;
  for (const Op* op : collectives(ops)) {
    gathers += op->collective == CollectiveKind::kAllGather;
    scatters += op->collective == CollectiveKind::kReduceScatter;
    EXPECT_EQ(op->comm_bytes.count(), 2 * 4096 * 4096);  // full buffer, nccl-tests convention
  }
  EXPECT_EQ(gathers, 2);
  EXPECT_EQ(scatters, 2);
  // LayerNorm reads and writes its T/t tokens: 2·e·(T/t)·h = 2·2·512·4096.
  const Op* ln = find(ops, "ln1.fwd");
  ASSERT_NE(ln, nullptr);
  EXPECT_EQ(ln->bytes.count(), 2 * 2 * 512 * 4096);
}

TEST(LayerBackwardOps, TensorParallelGradAllReduceOverlapsTheWeightGradient) {
  const std::vector<Op> ops =
      layer_backward_ops(make_layer_shape(load(kGpt, {"parallelism.tp=8"})));
  int async = 0;
  for (const Op* op : collectives(ops)) async += op->async;
  EXPECT_EQ(async, 2);  // fc1 and qkv input gradients
  const Op* ln2 = find(ops, "ln2.bwd");
  ASSERT_NE(ln2, nullptr);
  EXPECT_TRUE(ln2->wait_comm);
  // Without TP nothing is asynchronous and nothing waits.
  for (const Op& op : layer_backward_ops(make_layer_shape(load(kGpt)))) {
    EXPECT_FALSE(op.async) << op.name;
    EXPECT_FALSE(op.wait_comm) << op.name;
  }
}

TEST(MakeLayerShape, GqaKvHeadsAreReplicatedBeyondTheirCount) {
  // LLaMA-3 70B at tp 8: 64/8 = 8 query heads and 8/8 = 1 KV head per rank;
  // QKV N = (8 + 2·1)·128 = 1280, SwiGLU fc1 N = 2·28672/8 = 7168,
  // vocab 128256 padded to 126·1024 = 129024, 16128 per rank.
  const Scenario s = load(R"(
model: {preset: llama3-70b}
cluster: {preset: dgx-h100, nodes: 1}
training: {seq_len: 4096, global_batch: 8}
parallelism: {tp: 8, pp: 1}
)");
  const LayerShape x = make_layer_shape(s);
  EXPECT_EQ(x.heads_per_rank, 8);
  EXPECT_EQ(x.kv_heads_per_rank, 1);
  EXPECT_EQ(x.head_dim, 128);
  EXPECT_EQ(x.qkv_out, 1280);
  EXPECT_EQ(x.ffn_per_rank, 3584);
  EXPECT_EQ(x.fc1_out, 7168);
  EXPECT_EQ(x.vocab_per_rank, 16128);
  EXPECT_TRUE(x.swiglu);
  EXPECT_TRUE(x.rope);
  EXPECT_FALSE(x.bias);
  EXPECT_FALSE(x.layernorm);
  const std::vector<Op> ops = layer_forward_ops(x);
  const Op* qkv = find(ops, "qkv.fwd");
  ASSERT_NE(qkv, nullptr);
  EXPECT_EQ(qkv->m, 4096);
  EXPECT_EQ(qkv->n, 1280);
  EXPECT_EQ(qkv->k, 8192);
  EXPECT_NE(find(ops, "rope.fwd"), nullptr);
  EXPECT_EQ(find(ops, "qkv.bias"), nullptr);
}

double bytes_starting(const std::vector<Op>& ops, const std::string& prefix) {
  double b = 0;
  for (const Op& op : ops) {
    if (op.name.rfind(prefix, 0) == 0) b += static_cast<double>(op.bytes.count());
  }
  return b;
}

int launches_starting(const std::vector<Op>& ops, const std::string& prefix) {
  int n = 0;
  for (const Op& op : ops) {
    if (op.name.rfind(prefix, 0) == 0) n += op.launches;
  }
  return n;
}

TEST(LayerOps, ScaledRopeRunsUnfusedOnMegatronCore) {
  // GPT-OSS-like attention: 64 query and 8 KV heads of width 64, b = 1, s = 4096 on one GPU:
  // N = 4096·(64 + 8)·64 = 18,874,368 elements of Q and K. The fused kernel reads and writes
  // them once (2·e·N); Megatron-Core's unfused fallback for a scaled RoPE (rope_utils.py)
  // makes 12·e·N forward in six kernels per tensor, plus the cos/sin of 4096 × 64 angles
  // (2·22 B each, per tensor), and 13·e·N backward in seven kernels per tensor.
  const char* kYarn = R"(
model: {layers: 2, hidden: 2880, heads: 64, kv_heads: 8, head_dim: 64, ffn_hidden: 2880,
        vocab: 201088, position_embedding: rope, norm: rmsnorm, activation: swiglu,
        rope_mscale: 1.3466}
cluster: {preset: dgx-h100, nodes: 1}
training: {seq_len: 4096, global_batch: 8, micro_batch: 1}
parallelism: {tp: 1, pp: 1}
)";
  const double n = 4096.0 * 72 * 64;
  const LayerShape scaled = make_layer_shape(load(kYarn));
  EXPECT_TRUE(scaled.rope_unfused);
  const std::vector<Op> fwd = layer_forward_ops(scaled);
  const std::vector<Op> bwd = layer_backward_ops(scaled);
  EXPECT_EQ(find(fwd, "rope.fwd"), nullptr);
  EXPECT_DOUBLE_EQ(bytes_starting(fwd, "rope.") - bytes_starting(fwd, "rope.cos_sin"), 12 * 2 * n);
  EXPECT_DOUBLE_EQ(bytes_starting(fwd, "rope.cos_sin"), 2 * (2 * 22 * 4096.0 * 64));
  EXPECT_EQ(launches_starting(fwd, "rope."), 2 * (6 + 6));
  EXPECT_DOUBLE_EQ(bytes_starting(bwd, "rope."), 13 * 2 * n);
  EXPECT_EQ(launches_starting(bwd, "rope."), 2 * 7);

  // The same model unscaled, or on a stack whose fused kernel takes the scale: one pass.
  for (const Scenario& s :
       {load(kYarn, {"model.rope_mscale=1"}), load(kYarn, {"training.stack.scaled_rope=fused"})}) {
    const LayerShape fused = make_layer_shape(s);
    EXPECT_FALSE(fused.rope_unfused);
    EXPECT_DOUBLE_EQ(bytes_starting(layer_forward_ops(fused), "rope."), 2 * 2 * n);
    EXPECT_DOUBLE_EQ(bytes_starting(layer_backward_ops(fused), "rope."), 2 * 2 * n);
  }
}

TEST(LayerOps, QkNormReadsAndWritesEachQueryAndKeyHeadBeforeRope) {
  // Qwen3-like attention: 32 query and 4 KV heads of 128 on TP 2 (16 and 2 per rank), b = 2,
  // s = 4096: N = 8192·(16 + 2)·128 = 18,874,368 elements of Q and K per rank. Megatron-Core's
  // q_layernorm and k_layernorm read and write them (2·e·N) in two kernels, after QKV and
  // before RoPE; backward reads the gradient and the input and writes the gradient (3·e·N).
  const char* kQwen = R"(
model: {layers: 2, hidden: 2048, heads: 32, kv_heads: 4, head_dim: 128, ffn_hidden: 6144,
        vocab: 151936, position_embedding: rope, norm: rmsnorm, activation: swiglu,
        linear_bias: false, qk_layernorm: true}
cluster: {preset: dgx-h100, nodes: 1}
training: {seq_len: 4096, global_batch: 8, micro_batch: 2}
parallelism: {tp: 2, pp: 1, sequence_parallel: true}
)";
  const double n = 8192.0 * 18 * 128;
  const LayerShape x = make_layer_shape(load(kQwen));
  EXPECT_TRUE(x.qk_norm);
  const std::vector<Op> fwd = attention_forward_ops(x);
  const std::vector<Op> bwd = attention_backward_ops(x);
  const Op* f = find(fwd, "attn.qk_norm.fwd");
  const Op* b = find(bwd, "attn.qk_norm.bwd");
  ASSERT_NE(f, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(f->type, OpType::kMemory);
  EXPECT_EQ(f->bytes.count(), static_cast<int64_t>(2 * 2 * n));
  EXPECT_EQ(b->bytes.count(), static_cast<int64_t>(3 * 2 * n));
  EXPECT_EQ(f->launches, 2);
  EXPECT_EQ(b->launches, 2);
  EXPECT_LT(op_index(fwd, "qkv.fwd"), op_index(fwd, "attn.qk_norm.fwd"));
  EXPECT_LT(op_index(fwd, "attn.qk_norm.fwd"), op_index(fwd, "rope.fwd"));
  EXPECT_LT(op_index(bwd, "rope.bwd"), op_index(bwd, "attn.qk_norm.bwd"));
  EXPECT_LT(op_index(bwd, "attn.qk_norm.bwd"), op_index(bwd, "qkv.dgrad"));
  // Without it, neither kernel; no FLOPs either way.
  const LayerShape plain = make_layer_shape(load(kQwen, {"model.qk_layernorm=false"}));
  EXPECT_EQ(find(attention_forward_ops(plain), "attn.qk_norm.fwd"), nullptr);
  EXPECT_DOUBLE_EQ(all_flops(fwd), all_flops(attention_forward_ops(plain)));
}

TEST(HeadForwardOps, LogitsGemmIsTokensByVocabShardByHidden) {
  const Scenario s = load(kGpt, {"parallelism.tp=8", "training.stack.cross_entropy=unfused"});
  const std::vector<Op> ops = head_forward_ops(make_layer_shape(s));
  const Op* logits = find(ops, "logits.fwd");
  ASSERT_NE(logits, nullptr);
  EXPECT_EQ(logits->m, 4096);
  EXPECT_EQ(logits->n, 51200 / 8);
  EXPECT_EQ(logits->k, 4096);
  // Vocab-parallel cross-entropy: two all-reduces of T floats (max: 4·T, sum and target: 8·T).
  const std::vector<const Op*> c = collectives(ops);
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[0]->comm_bytes.count(), 4 * 4096);
  EXPECT_EQ(c[1]->comm_bytes.count(), 8 * 4096);
}

TEST(HeadOps, TransformerEngineLossPassesOverHalfPrecisionLogitsThreeTimes) {
  // T = 4096 tokens, V/t = 51200/8 = 6400 logits per token on each of 8 TP ranks, bf16.
  // Megatron's fp32 loss: (e+4) + 4 + 8 + 8 forward, 12 + (4+e) + 4 backward = 48 B per logit.
  // Transformer Engine's: e for the online softmax (plus 12 B of row statistics per token,
  // all-gathered over TP and read back by the loss kernel, which writes 4 B of loss) and 2e for
  // the gradient written over the logits forward, 2e to scale it in place backward (reading the
  // 4 B per-token incoming gradient).
  const double t = 4096, logits = t * 6400;
  const auto loss_bytes = [](const std::vector<Op>& ops) {
    double b = 0;
    for (const Op& op : ops) {
      if (op.name.rfind("loss.", 0) == 0) b += static_cast<double>(op.bytes.count());
    }
    return b;
  };
  const LayerShape unfused =
      make_layer_shape(load(kGpt, {"parallelism.tp=8", "training.stack.cross_entropy=unfused"}));
  EXPECT_DOUBLE_EQ(loss_bytes(head_forward_ops(unfused)) + loss_bytes(head_backward_ops(unfused)),
                   48 * logits);
  const LayerShape te =
      make_layer_shape(load(kGpt, {"parallelism.tp=8", "training.stack.cross_entropy=te"}));
  const std::vector<Op> fwd = head_forward_ops(te);
  EXPECT_DOUBLE_EQ(loss_bytes(fwd), 2 * logits + 12 * t + 4 * logits + 12 * t * 8 + 4 * t);
  EXPECT_DOUBLE_EQ(loss_bytes(head_backward_ops(te)), 4 * logits + 4 * t);
  const std::vector<const Op*> c = collectives(fwd);
  ASSERT_EQ(c.size(), 1u);  // the row statistics, all-gathered
  EXPECT_EQ(c[0]->collective, CollectiveKind::kAllGather);
  EXPECT_EQ(c[0]->comm_bytes.count(), 12 * 4096 * 8);
}

TEST(AttentionRecomputeOps, ReplayTheCoreForward) {
  const LayerShape x = make_layer_shape(load(kGpt));
  const std::vector<Op> ops = attention_recompute_ops(x);
  ASSERT_FALSE(ops.empty());
  for (const Op& op : ops) {
    EXPECT_EQ(op.name.substr(op.name.size() - 10), ".recompute") << op.name;
  }
  // Only the core: the two batched GEMMs, 4·b·s²·h.
  EXPECT_EQ(gemm_flops(ops), 4.0 * 2 * 2048 * 2048 * 4096);
}

TEST(LayerOps, CompressedAttentionRunsItsIndexerOnlyWhereItsRatioSaysAndMatchesTheModelFlops) {
  // DeepSeek-V4-Flash at b = 1, s = 4096: a window-only layer (0), an indexed ratio-4 layer
  // (2) and a ratio-128 one (3). The forward ops' FLOPs (the MoE block aside) are the model's
  // causal count of the layer's attention plus mHC: the projections 2·T·weights, the core
  // 4·T·a·keys·d over each query's mean window and kept entries (the window in whole tiles of
  // 128 where the model counts the keys exactly), the indexer's scores.
  const std::string v4 = R"(
model: {preset: deepseek-v4-flash}
cluster: {preset: gb200-nvl72, gpus: 8}
training: {seq_len: 4096, global_batch: 8, micro_batch: 1}
parallelism: {tp: 1, pp: 1, ep: 8}
)";
  const Scenario s = load(v4);
  const int64_t t = 4096;
  for (const int layer : {0, 2, 3}) {
    const LayerShape x = make_layer_shape(s, layer);
    const std::vector<Op> ops = attention_forward_ops(x);
    EXPECT_EQ(find(ops, "csa.index.scores") != nullptr, layer == 2) << layer;
    EXPECT_EQ(find(ops, "csa.compress.fwd") != nullptr, layer >= 2) << layer;
    const Op* core = find(ops, "attn.core.fwd");
    ASSERT_NE(core, nullptr);
    // The window's 128 keys in whole tiles: tile_keys2 / 2 = 128·(2·32 − 1)/32 + kept entries.
    const double tiled_window = 128.0 * 63 / 32;
    const double keys = tiled_window + csa_compressed_keys(s.model, layer, 4096, true);
    EXPECT_NEAR(core->flops.count(), 4.0 * t * 64 * keys * 512, 1e3) << layer;
    const double window_extra =
        4.0 * t * 64 * (tiled_window - csa_window_keys(s.model, 4096, true)) * 512;
    EXPECT_NEAR(all_flops(ops) - window_extra,
                csa_attention_forward_flops(s.model, t, 4096, layer, true), 1e-9 * all_flops(ops))
        << layer;
    // The backward holds the indexer's training signal and gradients where the forward had it.
    const std::vector<Op> bwd = attention_backward_ops(x);
    EXPECT_EQ(find(bwd, "csa.index.loss") != nullptr, layer == 2) << layer;
    EXPECT_EQ(find(bwd, "csa.index.q.wgrad") != nullptr, layer == 2) << layer;
  }
  // Hyper-connections: before and after each sublayer, their GEMM 2·T·(n·h)·(n² + 2n) forward.
  LayerShape x = make_layer_shape(s, 0);
  std::vector<Op> hc;
  hyper_connection_ops(x, "attn", false, true, hc);
  hyper_connection_ops(x, "attn", false, false, hc);
  ASSERT_EQ(hc.size(), 3u);
  EXPECT_EQ(gemm_flops(hc), 2.0 * t * 4 * 4096 * 24);
  EXPECT_EQ(2 * gemm_flops(hc), hyper_connection_forward_flops(s.model, t));
  x.hc_streams = 0;
  hc.clear();
  hyper_connection_ops(x, "attn", false, true, hc);
  EXPECT_TRUE(hc.empty());
}

}  // namespace
}  // namespace preflight
