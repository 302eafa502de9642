#include "workload/generator.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "config/loader.h"
#include "model/transformer.h"
#include "tests/load_scenario.h"
#include "workload/layer_ops.h"
#include "workload/schedule.h"

namespace preflight {
namespace {

// GPT-3 1.7B (24 layers) on one DGX A100: TP 2, PP 4, DP 1, 8 micro-batches of 1.
const char* kPipeline = R"(
model: {preset: gpt3-1.7b}
cluster: {preset: dgx-a100, nodes: 1}
training: {seq_len: 2048, global_batch: 8, micro_batch: 1}
parallelism: {tp: 2, pp: 4}
)";

// The same model on two DGX A100 nodes: TP 2, PP 2, DP 4.
const char* kDataParallel = R"(
model: {preset: gpt3-1.7b}
cluster: {preset: dgx-a100, nodes: 2}
training: {seq_len: 2048, global_batch: 16, micro_batch: 1}
parallelism: {tp: 2, pp: 2}
)";

int block_id(const Workload& w, const std::string& name) {
  for (size_t i = 0; i < w.blocks.size(); ++i) {
    if (w.blocks[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

// Sum of `repeat` over the kRun steps of `block` in `p`.
int runs(const Program& p, int block) {
  int n = 0;
  for (const Step& s : p.steps) {
    if (s.kind == StepKind::kRun && s.block == block) n += s.repeat;
  }
  return n;
}

std::vector<const Step*> steps_of(const Program& p, StepKind kind) {
  std::vector<const Step*> out;
  for (const Step& s : p.steps) {
    if (s.kind == kind) out.push_back(&s);
  }
  return out;
}

// Total bytes of the DP gradient reduction of one stage (blocking and overlapped).
int64_t dp_reduction_bytes(const Program& p) {
  int64_t b = 0;
  for (const Step& s : p.steps) {
    if ((s.kind == StepKind::kCollective || s.kind == StepKind::kCommAsync) &&
        s.op.group == GroupKind::kData && s.op.collective != CollectiveKind::kAllGather) {
      b += s.op.comm_bytes.count();
    }
  }
  return b;
}

TEST(GenerateWorkload, OneProgramPerStageEndingInAHostSync) {
  const Scenario s = load(kPipeline);
  const Workload w = generate_workload(s);
  ASSERT_EQ(w.stages.size(), 4u);
  EXPECT_EQ(w.microbatches, 8);
  EXPECT_EQ(w.layers_per_chunk, 6);
  for (size_t i = 0; i < w.stages.size(); ++i) {
    EXPECT_EQ(w.stages[i].stage, static_cast<int>(i));
    ASSERT_FALSE(w.stages[i].steps.empty());
    EXPECT_EQ(w.stages[i].steps.back().kind, StepKind::kHostSync);
    for (const Step& st : w.stages[i].steps) {
      if (st.kind == StepKind::kRun) {
        ASSERT_GE(st.block, 0);
        ASSERT_LT(st.block, static_cast<int>(w.blocks.size()));
      }
    }
  }
}

TEST(GenerateWorkload, EveryStageRunsItsLayersForEveryMicrobatch) {
  const Scenario s = load(kPipeline);
  const Workload w = generate_workload(s);
  const int fwd = block_id(w, "layer.fwd"), bwd = block_id(w, "layer.bwd");
  const int emb_f = block_id(w, "embedding.fwd"), emb_b = block_id(w, "embedding.bwd");
  const int head_f = block_id(w, "head.fwd"), head_b = block_id(w, "head.bwd");
  for (int st = 0; st < 4; ++st) {
    SCOPED_TRACE(st);
    const Program& p = w.stages[st];
    // 24 layers / 4 stages = 6 layers, 8 micro-batches each way.
    EXPECT_EQ(runs(p, fwd), 6 * 8);
    EXPECT_EQ(runs(p, bwd), 6 * 8);
    EXPECT_EQ(runs(p, emb_f), st == 0 ? 8 : 0);
    EXPECT_EQ(runs(p, emb_b), st == 0 ? 8 : 0);
    EXPECT_EQ(runs(p, head_f), st == 3 ? 8 : 0);
    EXPECT_EQ(runs(p, head_b), st == 3 ? 8 : 0);
    // One optimizer step per stage.
    EXPECT_EQ(runs(p, block_id(w, "optimizer.stage" + std::to_string(st))), 1);
  }
}

TEST(GenerateWorkload, LayerRunsFollowThePipelineOrder) {
  for (const char* schedule : {"gpipe", "1f1b"}) {
    SCOPED_TRACE(schedule);
    const Scenario s = load(kPipeline, {std::string("parallelism.schedule=") + schedule});
    const Workload w = generate_workload(s);
    const int fwd = block_id(w, "layer.fwd"), bwd = block_id(w, "layer.bwd");
    for (int st = 0; st < 4; ++st) {
      const std::vector<PipelineTask> order = pipeline_order(s.parallelism.schedule, st, 4, 8, 1);
      size_t k = 0;
      for (const Step& step : w.stages[st].steps) {
        if (step.kind != StepKind::kRun || (step.block != fwd && step.block != bwd)) continue;
        ASSERT_LT(k, order.size());
        EXPECT_EQ(step.block == bwd, order[k].backward) << "stage " << st << " task " << k;
        EXPECT_EQ(step.microbatch, order[k].microbatch) << "stage " << st << " task " << k;
        ++k;
      }
      EXPECT_EQ(k, order.size());
    }
  }
}

// Every send has exactly one receive on its peer with the same tag, bytes and direction, and
// the peer is the neighbouring stage.
void expect_sends_match_receives(const Workload& w, int expected_messages) {
  const int p = static_cast<int>(w.stages.size());
  std::map<std::tuple<int, int64_t>, const Step*> sends;  // (receiver, tag)
  std::map<std::tuple<int, int64_t>, int> sender;
  for (int st = 0; st < p; ++st) {
    for (const Step* s : steps_of(w.stages[st], StepKind::kSend)) {
      EXPECT_TRUE(s->peer == (st + 1) % p || s->peer == (st - 1 + p) % p);
      EXPECT_TRUE(sends.emplace(std::make_tuple(s->peer, s->tag), s).second)
          << "two sends with tag " << s->tag << " to stage " << s->peer;
      sender[std::make_tuple(s->peer, s->tag)] = st;
    }
  }
  EXPECT_EQ(static_cast<int>(sends.size()), expected_messages);
  int receives = 0;
  for (int st = 0; st < p; ++st) {
    for (const Step* r : steps_of(w.stages[st], StepKind::kRecv)) {
      ++receives;
      auto it = sends.find({st, r->tag});
      ASSERT_NE(it, sends.end()) << "stage " << st << " receives tag " << r->tag << " never sent";
      EXPECT_EQ(sender[std::make_tuple(st, r->tag)], r->peer);
      EXPECT_EQ(it->second->bytes, r->bytes);
      EXPECT_EQ(it->second->backward, r->backward);
      EXPECT_EQ(it->second->microbatch, r->microbatch);
    }
  }
  EXPECT_EQ(receives, expected_messages);
}

TEST(GenerateWorkload, SendsMatchReceives) {
  // Activations forward and gradients backward over p−1 boundaries per micro-batch:
  // 2·(p−1)·m = 2·3·8 = 48 messages of e·T·h = 2·2048·2304 bytes.
  const Workload w = generate_workload(load(kPipeline));
  expect_sends_match_receives(w, 48);
  EXPECT_EQ(steps_of(w.stages[1], StepKind::kSend)[0]->bytes.count(), 2 * 2048 * 2304);
}

TEST(GenerateWorkload, InterleavedSendsMatchReceivesAcrossChunks) {
  // p = 4, v = 2: 8 model chunks, 7 boundaries, including the wrap from the last stage back to
  // the first: 2·7·8 = 112 messages.
  const Scenario s = load(kPipeline, {"parallelism.schedule=interleaved", "parallelism.vpp=2"});
  const Workload w = generate_workload(s);
  EXPECT_EQ(w.layers_per_chunk, 3);
  expect_sends_match_receives(w, 112);
  // Stage 3 sends chunk 0's activations on to stage 0's chunk 1.
  bool wraps = false;
  for (const Step* snd : steps_of(w.stages[3], StepKind::kSend)) wraps |= snd->peer == 0;
  EXPECT_TRUE(wraps);
}

TEST(GenerateWorkload, SequenceParallelSendsAShardOfTheActivation) {
  const Scenario s = load(kPipeline, {"parallelism.sequence_parallel=true"});
  const Workload w = generate_workload(s);
  EXPECT_EQ(steps_of(w.stages[0], StepKind::kSend)[0]->bytes.count(), 2 * 2048 * 2304 / 2);
}

TEST(GenerateWorkload, CombinedOneFOneBPairsRunTheirLayersInLockstep) {
  // Mixtral 8x7B (32 layers) on 8 GPUs with PP 2, EP 4 (DP 4: 8 micro-batches a replica) and
  // the combined 1F1B schedule (overlap_moe_comm): in each pair the forward of layer i runs beside
  // the backward of layer n−1−i (Megatron-Core's TransformerModelChunkSchedulePlan), so the pair's
  // block runs alternate between the two micro-batches, one layer at a time, where two whole passes
  // would switch once.
  Scenario s = load(R"(
model: {preset: mixtral-8x7b}
cluster: {preset: dgx-h100, nodes: 1}
training: {seq_len: 4096, global_batch: 32, micro_batch: 1}
parallelism: {tp: 1, pp: 2, ep: 4, overlap_moe_comm: true}
)");
  const Workload w = generate_workload(s);
  const Program& p = w.stages[0];
  int switches = 0, pairs = 0;
  const Step* prev = nullptr;
  for (const Step& st : p.steps) {
    if (st.kind != StepKind::kRun || w.blocks[st.block].name == "dualpipe.pair.wait") continue;
    if (prev && (prev->microbatch != st.microbatch || prev->backward != st.backward)) ++switches;
    if (prev && prev->backward != st.backward && !prev->backward) ++pairs;
    prev = &st;
  }
  // 16 layers a stage, six pairs on stage 0 (the combined schedule warms up with one forward
  // more than 1F1B, so two forwards run alone first and two backwards last): each pair
  // switches at least 2 × 16 − 1 times, not once.
  EXPECT_GE(switches, 6 * (2 * 16 - 1));
  EXPECT_GE(pairs, 6 * 16);
}

TEST(StageParameters, SumToTheModelPlusTheTiedCopy) {
  // tp 1: the stages hold every parameter once, plus the last stage's copy of the tied word
  // embedding (padded 50304 × 2304) when pp > 1.
  const Scenario s = load(R"(
model: {preset: gpt3-1.7b}
cluster: {preset: dgx-a100, nodes: 1}
training: {seq_len: 2048, global_batch: 8}
parallelism: {tp: 1, pp: 4}
)");
  int64_t sum = 0;
  for (int st = 0; st < 4; ++st) sum += stage_parameters_per_gpu(s, st);
  EXPECT_EQ(sum, total_parameters(s.model, 1, 2048) + 50304 * 2304);
}

TEST(StageParameters, TensorParallelShardsLayersAndVocabulary) {
  const Scenario s = load(kPipeline);  // tp 2, pp 4
  const int64_t layers = layer_parameters(s.model) * 6 / 2;
  const int64_t vocab_shard = padded_vocab(s.model, 2) / 2 * 2304;
  EXPECT_EQ(stage_parameters_per_gpu(s, 1), layers);
  EXPECT_EQ(stage_parameters_per_gpu(s, 0), layers + vocab_shard + 2048 * 2304);
  EXPECT_EQ(stage_parameters_per_gpu(s, 3), layers + 2 * 2304 + vocab_shard);
}

TEST(GradientBytes, Fp32ForBf16AndFp16ForFp16) {
  EXPECT_EQ(gradient_bytes_per_element(load(kPipeline)), 4);
  EXPECT_EQ(gradient_bytes_per_element(load(kPipeline, {"training.precision=fp16"})), 2);
}

TEST(GradientBytes, GradReduceInFp32OverridesThePrecisionRule) {
  EXPECT_EQ(gradient_bytes_per_element(load(kPipeline, {"parallelism.grad_reduce_in_fp32=false"})),
            2);
  EXPECT_EQ(gradient_bytes_per_element(load(
                kPipeline, {"training.precision=fp16", "parallelism.grad_reduce_in_fp32=true"})),
            4);
}

// PyTorch FSDP's FlatParameter gradient path under ZeRO-3: after each layer's backward, the
// copy into the flat gradient (2 + 2 bytes per bf16 gradient element), the cast to the fp32
// reduce dtype (2 + 4) and the in-place pre-divide (4 + 4): 18 bytes per parameter of the layer
// on this GPU (TP 2 splits it); with a bf16 reduce dtype no cast and a bf16 divide: 8.
TEST(GenerateWorkload, FsdpStagesEachLayersGradientsBeforeItsReduceScatter) {
  const std::vector<std::string> fsdp = {"parallelism.zero_stage=3",
                                         "training.stack.preset=pytorch-fsdp"};
  auto stage_bytes = [](const Scenario& s) {
    const Workload w = generate_workload(s);
    const int bwd = block_id(w, "layer.bwd");
    int64_t bytes = -1;
    for (const Op& op : w.blocks[bwd].ops) {
      if (op.name == "fsdp.grad_stage") bytes = op.bytes.count();
    }
    return bytes;
  };
  const Scenario s = load(kDataParallel, fsdp);
  ASSERT_TRUE(s.training.stack.fsdp_gradient_staging);
  const int64_t layer = layer_parameters(s.model) / 2;
  EXPECT_EQ(stage_bytes(s), 18 * layer);
  std::vector<std::string> pure = fsdp;
  pure.push_back("parallelism.grad_reduce_in_fp32=false");
  EXPECT_EQ(stage_bytes(load(kDataParallel, pure)), 8 * layer);
  // Megatron-Core's contiguous main-grad buffer needs no staging, nor does ZeRO-3 on one rank.
  EXPECT_EQ(stage_bytes(load(kDataParallel, {"parallelism.zero_stage=3"})), -1);
  EXPECT_EQ(stage_bytes(load(kPipeline, fsdp)), -1);
}

TEST(GenerateWorkload, DataParallelAllReducesStageGradients) {
  const Scenario s = load(kDataParallel);
  ASSERT_EQ(s.parallelism.dp, 4);
  const Workload w = generate_workload(s);
  for (int st = 0; st < 2; ++st) {
    const std::vector<const Step*> c = steps_of(w.stages[st], StepKind::kCollective);
    int dp = 0;
    for (const Step* step : c) {
      if (step->op.group != GroupKind::kData) continue;
      ++dp;
      EXPECT_EQ(step->op.collective, CollectiveKind::kAllReduce);
      // fp32 gradients of every parameter on this GPU.
      EXPECT_EQ(step->op.comm_bytes.count(), 4 * stage_parameters_per_gpu(s, st));
    }
    EXPECT_EQ(dp, 1);
    EXPECT_TRUE(steps_of(w.stages[st], StepKind::kCommAsync).empty());
  }
}

TEST(GenerateWorkload, DistributedOptimizerReduceScattersThenGathersParams) {
  const Scenario s = load(kDataParallel, {"parallelism.distributed_optimizer=true"});
  const Workload w = generate_workload(s);
  const Program& p = w.stages[1];
  const int64_t params = stage_parameters_per_gpu(s, 1);
  std::vector<const Step*> dp;
  for (const Step* step : steps_of(p, StepKind::kCollective)) {
    if (step->op.group == GroupKind::kData) dp.push_back(step);
  }
  ASSERT_EQ(dp.size(), 2u);
  EXPECT_EQ(dp[0]->op.collective, CollectiveKind::kReduceScatter);
  EXPECT_EQ(dp[0]->op.comm_bytes.count(), 4 * params);
  EXPECT_EQ(dp[1]->op.collective, CollectiveKind::kAllGather);
  EXPECT_EQ(dp[1]->op.comm_bytes.count(), 2 * params);  // bf16 weights
  // The optimizer only updates this rank's 1/dp shard: 40 B per parameter of ⌈params/4⌉.
  const Block& opt = w.blocks[block_id(w, "optimizer.stage1")];
  ASSERT_EQ(opt.ops.size(), 1u);
  EXPECT_EQ(opt.ops[0].category, Category::kOptimizer);
  EXPECT_EQ(opt.ops[0].bytes.count(), 40 * ((params + 3) / 4));
}

TEST(GenerateWorkload, OverlappedBucketsReduceTheSameGradientsAsOneAllReduce) {
  const Scenario plain = load(kDataParallel);
  const Scenario overlap = load(kDataParallel, {"parallelism.overlap_grad_reduce=true"});
  const Workload a = generate_workload(plain);
  const Workload b = generate_workload(overlap);
  for (int st = 0; st < 2; ++st) {
    SCOPED_TRACE(st);
    EXPECT_EQ(dp_reduction_bytes(b.stages[st]), dp_reduction_bytes(a.stages[st]));
    EXPECT_FALSE(steps_of(b.stages[st], StepKind::kCommAsync).empty());
    // The iteration waits for the buckets before the optimizer.
    EXPECT_EQ(steps_of(b.stages[st], StepKind::kWaitComm).size(), 1u);
  }
}

TEST(GenerateWorkload, OverlappedBucketsCloseWhenABucketIsFull) {
  // GPT-3 1.7B layers have 12h² + 13h = 63,730,944 parameters, 31,865,472 per TP rank. A
  // 200 MB bucket holds 50M fp32 gradients, so it closes after two layers: 12 layers per stage
  // → 6 buckets of 2·31,865,472·4 = 254,923,776 bytes. On the last stage a seventh bucket holds
  // the final norm (2h) and the tied word-embedding copy (50432/2·h): 58,102,272 params.
  const Scenario s = load(kDataParallel, {"parallelism.overlap_grad_reduce=true",
                                          "parallelism.grad_bucket_size=200MB"});
  const Workload w = generate_workload(s);
  ASSERT_EQ(layer_parameters(s.model), 63'730'944);
  const std::vector<const Step*> buckets = steps_of(w.stages[1], StepKind::kCommAsync);
  ASSERT_EQ(buckets.size(), 7u);
  for (size_t i = 0; i < buckets.size(); ++i) {
    EXPECT_EQ(buckets[i]->op.group, GroupKind::kData);
    EXPECT_EQ(buckets[i]->op.collective, CollectiveKind::kAllReduce);
    EXPECT_EQ(buckets[i]->op.comm_bytes.count(), i < 6 ? 254'923'776 : 4 * 58'102'272) << i;
  }
}

TEST(GenerateWorkload, MegatronsDefaultBucketHoldsFortyMillionParametersOrOneMillionPerDpRank) {
  // Megatron-Core's default: max(40M, 1M·dp·cp) parameters, at the gradient's width. DP 4 (two
  // DGX A100s, TP 2, PP 2): 40M parameters, 160 MB in fp32 and 80 MB reduced in bf16. DP 64:
  // 64M. Layers of 31,865,472 parameters per TP rank: 40M closes a bucket every 2 layers (12
  // layers per stage: 6 buckets of 63,730,944), 64M every 3 (4 of 95,596,416); the first stage's
  // word and position embeddings (62,816,256) follow in a last bucket of their own.
  const Scenario fp32 = load(kDataParallel, {"parallelism.overlap_grad_reduce=true"});
  EXPECT_EQ(grad_bucket_parameters(fp32), 40'000'000);
  const Scenario bf16 = load(kDataParallel, {"parallelism.overlap_grad_reduce=true",
                                             "parallelism.grad_reduce_in_fp32=false"});
  EXPECT_EQ(grad_bucket_parameters(bf16), 40'000'000);
  const Workload w40 = generate_workload(bf16);
  const std::vector<const Step*> b40 = steps_of(w40.stages[0], StepKind::kCommAsync);
  ASSERT_EQ(b40.size(), 7u);
  for (size_t i = 0; i < 6; ++i) EXPECT_EQ(b40[i]->op.comm_bytes.count(), 2 * 63'730'944);
  EXPECT_EQ(b40[6]->op.comm_bytes.count(), 2 * 62'816'256);
  const Scenario dp64 = load(kDataParallel, {"parallelism.overlap_grad_reduce=true",
                                             "cluster.nodes=32", "training.global_batch=128"});
  ASSERT_EQ(dp64.parallelism.dp, 64);
  EXPECT_EQ(grad_bucket_parameters(dp64), 64'000'000);
  const Workload w64 = generate_workload(dp64);
  const std::vector<const Step*> b64 = steps_of(w64.stages[0], StepKind::kCommAsync);
  ASSERT_EQ(b64.size(), 5u);
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(b64[i]->op.comm_bytes.count(), 4 * 95'596'416);
}

TEST(GenerateWorkload, AnInterleavedRanksLaterChunksAreOneBucketEach) {
  // Megatron-Core buckets only a rank's first model chunk (disable_bucketing = model_chunk_idx
  // > 0): with 2 virtual stages of 6 layers each, chunk 0's gradients go out in 3 buckets of 2
  // layers (and the embeddings' bucket at the end), chunk 1's in one of 6.
  const Scenario s = load(kDataParallel, {"parallelism.overlap_grad_reduce=true",
                                          "parallelism.vpp=2", "training.global_batch=32"});
  const Workload w = generate_workload(s);
  const std::vector<const Step*> b = steps_of(w.stages[0], StepKind::kCommAsync);
  std::map<int, std::vector<int64_t>> per_chunk;
  for (const Step* st : b) per_chunk[st->chunk].push_back(st->op.comm_bytes.count());
  ASSERT_EQ(per_chunk.size(), 2u);
  EXPECT_EQ(per_chunk[0],
            (std::vector<int64_t>{4 * 63'730'944, 4 * 63'730'944, 4 * 63'730'944, 4 * 62'816'256}));
  EXPECT_EQ(per_chunk[1], (std::vector<int64_t>{4 * 6 * 31'865'472}));
}

// Per-group totals of one stage's gradient reduce-scatters (blocking and overlapped).
int64_t reduce_bytes(const Program& p, GroupKind group) {
  int64_t b = 0;
  for (const Step& s : p.steps) {
    if ((s.kind == StepKind::kCollective || s.kind == StepKind::kCommAsync) &&
        s.op.group == group && s.op.collective == CollectiveKind::kReduceScatter) {
      b += s.op.comm_bytes.count();
    }
  }
  return b;
}

TEST(GenerateWorkload, OverlappedExpertGradientsGoOutInBucketsDuringTheBackward) {
  // DeepSeek-V2-Lite on two DGX H100s, EP 8: DP 16, expert-DP 2. Megatron-Core buckets the
  // routed experts' gradients in a buffer of their own and reduce-scatters each bucket over
  // the expert-DP group as the last backward finishes its layers, as it does the dense ones.
  const char* moe = R"(
model: {preset: deepseek-v2-lite}
cluster: {preset: dgx-h100, nodes: 2}
training: {seq_len: 1024, global_batch: 32, micro_batch: 1}
parallelism: {tp: 1, pp: 1, ep: 8, distributed_optimizer: true}
)";
  const Scenario blocking = load(moe, {"parallelism.overlap_grad_reduce=false"});
  const Scenario overlap = load(moe, {"parallelism.overlap_grad_reduce=true"});
  ASSERT_EQ(overlap.expert_dp(), 2);
  const Workload wa = generate_workload(blocking);
  const Workload wb = generate_workload(overlap);
  const Program& a = wa.stages[0];
  const Program& b = wb.stages[0];
  // The same gradients are reduced either way, over the same groups.
  EXPECT_GT(reduce_bytes(a, GroupKind::kExpertData), 0);
  EXPECT_EQ(reduce_bytes(b, GroupKind::kExpertData), reduce_bytes(a, GroupKind::kExpertData));
  EXPECT_EQ(reduce_bytes(b, GroupKind::kData), reduce_bytes(a, GroupKind::kData));
  // Overlapped: several expert buckets, the first issued while the backward still has layers
  // to run (kRun steps between it and the wait for the buckets before the optimizer).
  int expert_buckets = 0, runs_after_first = 0;
  for (const Step& st : b.steps) {
    if (st.kind == StepKind::kWaitComm && expert_buckets > 0) break;
    if (st.kind == StepKind::kRun && expert_buckets > 0) ++runs_after_first;
    if (st.kind == StepKind::kCommAsync && st.op.group == GroupKind::kExpertData &&
        st.op.collective == CollectiveKind::kReduceScatter) {
      ++expert_buckets;
    }
  }
  EXPECT_GT(expert_buckets, 1);
  EXPECT_GT(runs_after_first, 0);
}

TEST(GenerateWorkload, TiedEmbeddingsAreSyncedBetweenFirstAndLastStage) {
  const Scenario s = load(kPipeline);
  const Workload w = generate_workload(s);
  const int64_t shard_bytes = padded_vocab(s.model, 2) / 2 * 2304 * 4;
  for (int st = 0; st < 4; ++st) {
    int n = 0;
    for (const Step* c : steps_of(w.stages[st], StepKind::kCollective)) {
      if (c->op.group != GroupKind::kEmbedding) continue;
      ++n;
      EXPECT_EQ(c->op.collective, CollectiveKind::kAllReduce);
      EXPECT_EQ(c->op.comm_bytes.count(), shard_bytes);
    }
    EXPECT_EQ(n, st == 0 || st == 3 ? 1 : 0) << "stage " << st;
  }
  // Untied embeddings need no sync.
  const Workload untied = generate_workload(load(kPipeline, {"model.tied_embeddings=false"}));
  for (const Program& p : untied.stages) {
    for (const Step* c : steps_of(p, StepKind::kCollective)) {
      EXPECT_NE(c->op.group, GroupKind::kEmbedding);
    }
  }
}

TEST(GenerateWorkload, FullRecomputeReplaysTheForwardBeforeTheBackward) {
  const Scenario s = load(kPipeline, {"parallelism.recompute=full"});
  const Workload w = generate_workload(s);
  const Block& bwd = w.blocks[block_id(w, "layer.bwd")];
  const std::vector<Op> fwd = layer_forward_ops(make_layer_shape(s));
  const std::vector<Op> back = layer_backward_ops(make_layer_shape(s));
  ASSERT_EQ(bwd.ops.size(), fwd.size() + back.size());
  for (size_t i = 0; i < fwd.size(); ++i) EXPECT_EQ(bwd.ops[i].name, fwd[i].name + ".recompute");
  for (size_t i = 0; i < back.size(); ++i) EXPECT_EQ(bwd.ops[fwd.size() + i].name, back[i].name);
}

TEST(GenerateWorkload, SelectiveRecomputeReplaysTheAttentionCore) {
  const Scenario unfused =
      load(kPipeline, {"parallelism.recompute=selective", "training.flash_attention=false"});
  const Workload a = generate_workload(unfused);
  const size_t core = attention_recompute_ops(make_layer_shape(unfused)).size();
  EXPECT_EQ(a.blocks[block_id(a, "layer.bwd")].ops.size(),
            core + layer_backward_ops(make_layer_shape(unfused)).size());
  // FlashAttention keeps no score matrix, but Megatron-Core's checkpointed core attention runs
  // its one fused forward kernel again before the backward.
  const Scenario flash = load(kPipeline, {"parallelism.recompute=selective"});
  const Workload b = generate_workload(flash);
  const std::vector<Op>& ops = b.blocks[block_id(b, "layer.bwd")].ops;
  ASSERT_EQ(ops.size(), 1 + layer_backward_ops(make_layer_shape(flash)).size());
  EXPECT_EQ(ops[0].name, "attn.core.fwd.recompute");
}

// Layer forwards each stage runs for micro-batch 0.
std::vector<int> forward_layers_of_microbatch0(const Workload& w) {
  std::vector<int> out;
  for (const Program& p : w.stages) {
    int layers = 0;
    for (const Step& st : p.steps) {
      if (st.kind == StepKind::kRun && w.blocks[st.block].name == "layer.fwd" &&
          st.microbatch == 0) {
        layers += st.repeat;
      }
    }
    out.push_back(layers);
  }
  return out;
}

TEST(GenerateWorkload, UnevenStagesRunTheirOwnLayerCounts) {
  // LLaMA-3 405B: 126 layers on PP 16 as Meta ran it, 7 on the first and last stage and
  // (126 − 14)/14 = 8 on each of the others (Megatron's --decoder-first/last-pipeline-num-layers).
  StatusOr<Scenario> s = load_scenario_text(
      "", "",
      {"model.preset=llama3-405b", "cluster.preset=dgx-h100", "cluster.nodes=32",
       "parallelism.tp=8", "parallelism.pp=16", "parallelism.dp=2", "training.global_batch=32",
       "parallelism.first_stage_layers=7", "parallelism.last_stage_layers=7"});
  ASSERT_TRUE(s.ok()) << s.status().message();
  const std::vector<int> layers = stage_layers(*s);
  ASSERT_EQ(layers.size(), 16u);
  EXPECT_EQ(layers.front(), 7);
  EXPECT_EQ(layers.back(), 7);
  for (size_t i = 1; i + 1 < layers.size(); ++i) EXPECT_EQ(layers[i], 8);
  const std::vector<int> ran = forward_layers_of_microbatch0(generate_workload(*s));
  EXPECT_EQ(ran, layers);
}

TEST(GenerateWorkload, UnevenInterleavedStagesLightenTheEmbeddingAndLossChunks) {
  // LLaMA-3 405B as Meta ran it with interleaving: 16 stages × 8 chunks of one layer, one layer
  // fewer on the first and the last stage, taken from the chunk holding the embedding (chunk 0)
  // and the one holding the loss (chunk 127).
  StatusOr<Scenario> s = load_scenario_text(
      "", "",
      {"model.preset=llama3-405b", "cluster.preset=dgx-h100", "cluster.nodes=32",
       "parallelism.tp=8", "parallelism.pp=16", "parallelism.dp=2", "training.global_batch=32",
       "parallelism.first_stage_layers=7", "parallelism.last_stage_layers=7", "parallelism.vpp=8",
       "parallelism.schedule=interleaved"});
  ASSERT_TRUE(s.ok()) << s.status().message();
  const std::vector<int> chunks = chunk_layers(*s);
  ASSERT_EQ(chunks.size(), 128u);
  EXPECT_EQ(chunks.front(), 0);
  EXPECT_EQ(chunks.back(), 0);
  for (size_t k = 1; k + 1 < chunks.size(); ++k) EXPECT_EQ(chunks[k], 1) << "chunk " << k;
  // Stage 0 holds layers 15, 31, ..., 111 (chunk c·16 holds layer c·16 − 1 for c ≥ 1).
  const std::vector<int> ids = stage_layer_ids(*s, 0);
  ASSERT_EQ(ids.size(), 7u);
  EXPECT_EQ(ids.front(), 15);
  EXPECT_EQ(ids.back(), 111);
  EXPECT_EQ(stage_layer_ids(*s, 15).back(), 110);  // chunk 126; chunk 127 holds only the head
  const std::vector<int> ran = forward_layers_of_microbatch0(generate_workload(*s));
  EXPECT_EQ(ran, stage_layers(*s));
  EXPECT_EQ(ran.front(), 7);
  EXPECT_EQ(ran[1], 8);
  // A 6-layer first stage cannot give 7 of its 8 chunks a layer each.
  StatusOr<Scenario> few = load_scenario_text(
      "", "",
      {"model.preset=llama3-405b", "cluster.preset=dgx-h100", "cluster.nodes=32",
       "parallelism.tp=8", "parallelism.pp=16", "parallelism.dp=2", "training.global_batch=32",
       "parallelism.first_stage_layers=6", "parallelism.last_stage_layers=8", "parallelism.vpp=8",
       "parallelism.schedule=interleaved"});
  ASSERT_FALSE(few.ok());
  EXPECT_NE(few.status().message().find("expected at least vpp layers per stage"),
            std::string::npos)
      << few.status().message();
}

TEST(GenerateWorkload, UnevenStagesThatDoNotSplitAreRejected) {
  // (126 − 10)/14 is not a whole number of layers.
  StatusOr<Scenario> a = load_scenario_text(
      "", "",
      {"model.preset=llama3-405b", "cluster.preset=dgx-h100", "cluster.nodes=32",
       "parallelism.tp=8", "parallelism.pp=16", "parallelism.dp=2", "training.global_batch=32",
       "parallelism.first_stage_layers=5", "parallelism.last_stage_layers=5"});
  EXPECT_FALSE(a.ok());
  StatusOr<Scenario> b =
      load_scenario_text("", "",
                         {"parallelism.first_stage_layers=4", "parallelism.vpp=2",
                          "parallelism.schedule=interleaved"});
  EXPECT_FALSE(b.ok());
}

// Host launches of a layer block's kernels, and whether any of them makes the host wait.
std::pair<int, bool> launches(const Workload& w, const std::string& block) {
  const int b = block_id(w, block);
  EXPECT_GE(b, 0) << block;
  int n = 0;
  bool sync = false;
  if (b < 0) return {0, false};
  for (const Op& op : w.blocks[b].ops) {
    n += op.launches;
    sync = sync || op.host_sync;
  }
  return {n, sync};
}

TEST(Generator, ScopedCudaGraphsLaunchEachCapturedRunOnce) {
  // A MoE layer (Mixtral's, EP 8 over two DGX H100s; the alltoall dispatcher, unfused router)
  // eager, then under Transformer Engine's scoped graphs. Attention captured: its kernels
  // launch as one graph forward and one backward. Router and preprocessing captured too: the
  // run grows to the dispatcher's sync (which stays), its framework ops launching with it.
  auto scenario = [](const std::string& scope) {
    std::vector<std::string> keys = {"model.preset=mixtral-8x7b", "model.layers=2",
                                     "cluster.preset=dgx-h100",   "cluster.nodes=2",
                                     "parallelism.tp=1",          "parallelism.pp=1",
                                     "parallelism.ep=8",          "parallelism.dp=16",
                                     "training.global_batch=16",  "training.seq_len=4096",
                                     "model.moe.routing=balanced"};
    if (!scope.empty()) {
      keys.push_back("training.cuda_graphs=scoped");
      keys.push_back("training.cuda_graph_scope=" + scope);
    }
    StatusOr<Scenario> s = load_scenario_text("", "", keys);
    EXPECT_TRUE(s.ok()) << s.status().message();
    return *s;
  };
  const Scenario base = scenario("");
  const Workload eager = generate_workload(base);
  const Workload attn = generate_workload(scenario("[attn]"));
  const Workload all = generate_workload(scenario("[attn,moe_router,moe_preprocess]"));
  const LayerShape x = make_layer_shape(base, 0);
  int attn_kernels = 0;
  for (const Op& op : attention_forward_ops(x)) attn_kernels += op.launches;
  const auto [e, e_sync] = launches(eager, "layer.fwd");
  const auto [a, a_sync] = launches(attn, "layer.fwd");
  const auto [r, r_sync] = launches(all, "layer.fwd");
  EXPECT_EQ(a, e - attn_kernels + 1);
  // ln2, the router GEMM and its top-k (with the router's and the dispatcher's framework ops)
  // join the attention's graph.
  EXPECT_GT(x.moe_ops_preprocess, 0);
  EXPECT_EQ(r, a - (3 + x.moe_ops_router + x.moe_ops_preprocess));
  EXPECT_TRUE(e_sync && a_sync && r_sync);
  // Backward: the attention block's kernels, then also the router's and ln2's, as one graph.
  EXPECT_LT(launches(all, "layer.bwd").first, launches(attn, "layer.bwd").first);
  EXPECT_LT(launches(attn, "layer.bwd").first, launches(eager, "layer.bwd").first);
}

TEST(Generator, ScopedCudaGraphsCaptureAHybridsMambaMixers) {
  // Nemotron 3 Nano cut to two layers (a Mamba-2 mixer, then a MoE layer): with the mamba scope
  // the mixer's kernels launch as one graph forward and one backward, with no framework host
  // time, and time the same on the GPU; the MoE layer is not in the scope.
  auto workload = [](bool mamba) {
    std::vector<std::string> keys = {"model.preset=nemotron3-nano",
                                     "model.layers=2",
                                     "model.hybrid_pattern=ME",
                                     "model.mtp_layers=0",
                                     "cluster.preset=dgx-h100",
                                     "parallelism.ep=8",
                                     "parallelism.pp=1",
                                     "parallelism.tp=1",
                                     "parallelism.dp=8",
                                     "cluster.nodes=1",
                                     "training.global_batch=8",
                                     "training.seq_len=4096",
                                     "model.moe.routing=balanced"};
    if (mamba) {
      keys.push_back("training.cuda_graphs=scoped");
      keys.push_back("training.cuda_graph_scope=[mamba]");
    }
    StatusOr<Scenario> s = load_scenario_text("", "", keys);
    EXPECT_TRUE(s.ok()) << s.status().message();
    return generate_workload(*s);
  };
  // Launches, host time and op count of the layer blocks whose ops are the mixer's (or not).
  struct Tally {
    int launches = 0, ops = 0;
    SimTime host;
  };
  auto tally = [](const Workload& w, bool mixer) {
    Tally t;
    for (const Block& b : w.blocks) {
      if (b.name != "layer.fwd" && b.name != "layer.bwd") continue;
      if (b.ops.empty() || (b.ops.front().name.rfind("mamba.", 0) == 0) != mixer) continue;
      for (const Op& op : b.ops) {
        t.launches += op.launches;
        t.host += op.host_time;
        ++t.ops;
      }
    }
    return t;
  };
  const Workload eager = workload(false);
  const Workload graphed = workload(true);
  const Tally e = tally(eager, true), g = tally(graphed, true);
  ASSERT_GT(e.ops, 4);
  EXPECT_EQ(g.ops, e.ops);
  EXPECT_GT(e.launches, 4);
  EXPECT_EQ(g.launches, 2);  // one graph forward, one backward
  EXPECT_EQ(g.host, SimTime());
  const Tally me = tally(eager, false), mg = tally(graphed, false);
  EXPECT_GT(me.launches, 0);
  EXPECT_EQ(mg.launches, me.launches);
}

}  // namespace
}  // namespace preflight
