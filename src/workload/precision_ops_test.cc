#include "workload/precision_ops.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "config/loader.h"
#include "workload/generator.h"
#include "workload/layer_ops.h"

namespace preflight {
namespace {

// A GPT layer with h = 4096, a = 32, F = 4h, b = 2, s = 2048 (T = 4096 tokens) on one DGX B200
// (which has FP8, MXFP8 and FP4 tensor cores), tp 1, fused attention.
const char* kGpt = R"(
model: {layers: 4, hidden: 4096, heads: 32, ffn_hidden: 16384, vocab: 50257}
cluster: {preset: dgx-b200, nodes: 1}
training: {seq_len: 2048, global_batch: 16, micro_batch: 2}
parallelism: {tp: 1, pp: 1}
)";

Scenario load(const std::string& precision, const std::vector<std::string>& more = {}) {
  std::vector<std::string> overrides = {"training.precision=" + precision};
  overrides.insert(overrides.end(), more.begin(), more.end());
  StatusOr<Scenario> s = load_scenario_text(kGpt, "test.yaml", overrides);
  EXPECT_TRUE(s.ok()) << s.status().message();
  return s.ok() ? *s : Scenario{};
}

bool is_quantize(const Op& op) {
  return op.name.size() > 9 && op.name.compare(op.name.size() - 9, 9, ".quantize") == 0;
}

int count_quantize(const std::vector<Op>& ops) {
  int n = 0;
  for (const Op& op : ops) n += is_quantize(op) ? 1 : 0;
  return n;
}

const Op* find(const std::vector<Op>& ops, const std::string& name) {
  for (const Op& op : ops) {
    if (op.name == name) return &op;
  }
  return nullptr;
}

// One GEMM through apply_precision.
std::vector<Op> applied(const std::string& precision, Op gemm) {
  std::vector<Op> ops = {std::move(gemm)};
  apply_precision(load(precision), &ops);
  return ops;
}

// FC1 of the layer above: T = 4096 tokens, k = h = 4096, n = F = 16384.
// m·k = 16,777,216 activation elements, k·n = 67,108,864 weight elements, m·n = 67,108,864.
constexpr int64_t kT = 4096, kH = 4096, kF = 16384;

TEST(GemmOperandBytes, WidthPlusScaleBytesPerElement) {
  EXPECT_EQ(gemm_operand_bytes(Precision::kBf16), 2);
  EXPECT_EQ(gemm_operand_bytes(Precision::kFp16), 2);
  EXPECT_EQ(gemm_operand_bytes(Precision::kFp8), 1);
  EXPECT_EQ(gemm_operand_bytes(Precision::kFp8Blockwise), 1 + 4.0 / 128);  // FP32 per 128
  EXPECT_EQ(gemm_operand_bytes(Precision::kMxfp8), 1 + 1.0 / 32);          // E8M0 per 32
  EXPECT_EQ(gemm_operand_bytes(Precision::kNvfp4), 0.5 + 1.0 / 16);        // E4M3 per 16
  EXPECT_FALSE(is_low_precision(Precision::kBf16));
  EXPECT_FALSE(is_low_precision(Precision::kFp16));
  EXPECT_TRUE(is_low_precision(Precision::kFp8));
  EXPECT_TRUE(is_low_precision(Precision::kNvfp4));
}

TEST(ApplyPrecision, Bf16AndFp16LeaveTheOpsUnchanged) {
  for (const char* p : {"bf16", "fp16"}) {
    const Scenario s = load(p);
    const std::vector<Op> before = layer_forward_ops(make_layer_shape(s));
    std::vector<Op> after = before;
    apply_precision(s, &after);
    ASSERT_EQ(after.size(), before.size()) << p;
    for (size_t i = 0; i < before.size(); ++i) {
      EXPECT_EQ(after[i].name, before[i].name) << p;
      EXPECT_EQ(after[i].bytes, before[i].bytes) << p << " " << before[i].name;
      EXPECT_EQ(after[i].bytes_per_element, before[i].bytes_per_element) << p;
    }
  }
}

TEST(ApplyPrecision, Fp8ForwardQuantizesActivationAndWeight) {
  // Cast-transpose of the bf16 input and weight: read 2 B, write two 1 B copies, plus a 4 B amax
  // per tensor: (16,777,216 + 67,108,864) · 4 + 2 · 4 = 335,544,328 B. The GEMM reads 1 B
  // operands and writes its bf16 output: 83,886,080 · 1 + 67,108,864 · 2 = 218,103,808 B.
  const std::vector<Op> ops = applied("fp8", gemm_op("fc1.fwd", kT, kF, kH, 1, 2));
  ASSERT_EQ(ops.size(), 2u);
  EXPECT_EQ(ops[0].name, "fc1.fwd.quantize");
  EXPECT_EQ(ops[0].type, OpType::kMemory);
  EXPECT_EQ(ops[0].bytes.count(), 335'544'328);
  EXPECT_EQ(ops[1].name, "fc1.fwd");
  EXPECT_EQ(ops[1].bytes_per_element, 1);
  EXPECT_EQ(ops[1].bytes.count(), 218'103'808);
  EXPECT_EQ(ops[1].flops, gemm_op("fc1.fwd", kT, kF, kH, 1, 2).flops);
}

TEST(ApplyPrecision, Nvfp4ReadsTwiceAndWritesHalfBytesWithE4m3Scales) {
  // nvfp4: amax pass + cast read 2 · 2 B, two copies of 0.5 + 1/16 B: 5.125 B per element,
  // 83,886,080 · 5.125 + 8 = 429,916,168 B. GEMM: 83,886,080 · 0.5625 + 67,108,864 · 2
  // = 181,403,648 B.
  const std::vector<Op> ops = applied("nvfp4", gemm_op("fc1.fwd", kT, kF, kH, 1, 2));
  ASSERT_EQ(ops.size(), 3u);  // quantize, the scales' swizzle, the GEMM
  EXPECT_EQ(ops[0].bytes.count(), 429'916'168);
  EXPECT_EQ(ops[2].bytes.count(), 181'403'648);
  EXPECT_EQ(ops[2].bytes_per_element, 1);
}

TEST(ApplyPrecision, MicroscaledFormatsCarryTheirScaleBytes) {
  // mxfp8 and fp8_blockwise both carry 1/32 B of scale per element (E8M0 per 32, FP32 per 128)
  // and no amax: quantize 83,886,080 · (2 + 2 · 1.03125) = 340,787,200 B; GEMM 83,886,080 ·
  // 1.03125 + 134,217,728 = 220,725,248 B.
  for (const char* p : {"mxfp8", "fp8_blockwise"}) {
    const std::vector<Op> ops = applied(p, gemm_op("fc1.fwd", kT, kF, kH, 1, 2));
    ASSERT_EQ(ops.size(), std::string(p) == "mxfp8" ? 3u : 2u) << p;
    EXPECT_EQ(ops[0].bytes.count(), 340'787'200) << p;
    EXPECT_EQ(ops.back().bytes.count(), 220'725'248) << p;
  }
}

TEST(ApplyPrecision, BlockScaledGemmsSwizzleTheirOperandsScalesFirst) {
  // Transformer Engine's GEMM call swizzles the block scales of A and of B into cuBLAS's layout
  // with a kernel each (te_general_gemm's swizzle_scaling_factors), launched from its C++ call.
  // FC1: (m·k + k·n) = 83,886,080 elements, 1/32 B of E8M0 scale each (1/16 of E4M3 for
  // nvfp4), read and written: 5,242,880 B (10,485,760 B).
  const std::vector<Op> mx = applied("mxfp8", gemm_op("fc1.fwd", kT, kF, kH, 1, 2));
  ASSERT_EQ(mx.size(), 3u);
  EXPECT_EQ(mx[1].name, "fc1.fwd.swizzle");
  EXPECT_EQ(mx[1].type, OpType::kMemory);
  EXPECT_EQ(mx[1].bytes.count(), 5'242'880);
  EXPECT_EQ(mx[1].device_kernels, 2);
  EXPECT_EQ(mx[1].launches, 0);
  EXPECT_EQ(applied("nvfp4", gemm_op("fc1.wgrad", kH, kF, kT, 1, 2))[0].bytes.count(), 10'485'760);
  // Per-tensor and blockwise FP8 apply their scales as they are: no swizzle.
  EXPECT_EQ(applied("fp8", gemm_op("fc1.fwd", kT, kF, kH, 1, 2)).size(), 2u);
  EXPECT_EQ(applied("fp8", gemm_op("fc1.wgrad", kH, kF, kT, 1, 2)).size(), 1u);
  // A grouped GEMM's experts are swizzled together (the multi-tensor swizzle).
  Op experts = gemm_op("moe.experts.fc1.fwd", 512, 1536, 4096, 16, 2);
  experts.gemm_streams = 4;
  EXPECT_EQ(applied("mxfp8", experts)[1].device_kernels, 2);
}

TEST(ApplyPrecision, InputGradientQuantizesTheOutputGradientOnly) {
  // fc1.dgrad: m = T, n = h, k = F: the bf16 output gradient is m·k = 67,108,864 elements:
  // 67,108,864 · 4 + 4 = 268,435,460 B; the weight's transposed copy came from the forward.
  const std::vector<Op> ops = applied("fp8", gemm_op("fc1.dgrad", kT, kH, kF, 1, 2));
  ASSERT_EQ(ops.size(), 2u);
  EXPECT_EQ(ops[0].name, "fc1.dgrad.quantize");
  EXPECT_EQ(ops[0].bytes.count(), 268'435'460);
}

TEST(ApplyPrecision, WeightGradientReusesTheQuantizedOperands) {
  // fc1.wgrad (m = h, n = F, k = T, accumulating): no quantize op; 1 B operands
  // (16,777,216 + 67,108,864) and the gradient read and written at 2 B (2 · 67,108,864 · 2):
  // 83,886,080 + 268,435,456 = 352,321,536 B.
  const std::vector<Op> ops = applied("fp8", gemm_op("fc1.wgrad", kH, kF, kT, 1, 2, true));
  ASSERT_EQ(ops.size(), 1u);
  EXPECT_EQ(ops[0].bytes.count(), 352'321'536);
  EXPECT_EQ(ops[0].bytes_per_element, 1);
}

TEST(ApplyPrecision, ALayerGetsOneQuantizeBeforeEachForwardAndInputGradientGemm) {
  // Forward: QKV, proj, FC1, FC2. Backward: their four dgrads (the wgrads reuse the casts).
  const Scenario s = load("fp8");
  const LayerShape x = make_layer_shape(s);
  std::vector<Op> fwd = layer_forward_ops(x);
  std::vector<Op> bwd = layer_backward_ops(x);
  const size_t fwd_size = fwd.size(), bwd_size = bwd.size();
  apply_precision(s, &fwd);
  apply_precision(s, &bwd);
  EXPECT_EQ(count_quantize(fwd), 4);
  EXPECT_EQ(count_quantize(bwd), 4);
  EXPECT_EQ(fwd.size(), fwd_size + 4);
  EXPECT_EQ(bwd.size(), bwd_size + 4);
  for (const std::vector<Op>* ops : {&fwd, &bwd}) {
    for (size_t i = 0; i < ops->size(); ++i) {
      const Op& op = (*ops)[i];
      if (is_quantize(op)) {
        ASSERT_LT(i + 1, ops->size());
        EXPECT_EQ(op.name, (*ops)[i + 1].name + ".quantize");  // right before its GEMM
        EXPECT_EQ((*ops)[i + 1].type, OpType::kGemm);
      }
      if (op.type == OpType::kGemm) {
        EXPECT_EQ(op.bytes_per_element, 1) << op.name;
      }
    }
  }
  for (const char* name : {"qkv.fwd", "proj.fwd", "fc1.fwd", "fc2.fwd"}) {
    EXPECT_NE(find(fwd, std::string(name) + ".quantize"), nullptr) << name;
  }
  for (const char* name : {"qkv.dgrad", "proj.dgrad", "fc1.dgrad", "fc2.dgrad"}) {
    EXPECT_NE(find(bwd, std::string(name) + ".quantize"), nullptr) << name;
  }
}

TEST(ApplyPrecision, AttentionCoreAndOutputLayerStayInBf16) {
  // Unfused attention: the score/context batched GEMMs keep 2 B operands and get no quantize op;
  // the logits GEMM (1 B in fp8 before, from layer_ops) goes back to 2 B.
  const Scenario s = load("fp8", {"training.flash_attention=false"});
  const LayerShape x = make_layer_shape(s);
  std::vector<Op> fwd = layer_forward_ops(x);
  std::vector<Op> head = head_forward_ops(x);
  apply_precision(s, &fwd);
  apply_precision(s, &head);
  const Op* scores = find(fwd, "attn.scores");
  ASSERT_NE(scores, nullptr);
  EXPECT_EQ(scores->bytes_per_element, 2);
  EXPECT_EQ(find(fwd, "attn.scores.quantize"), nullptr);
  EXPECT_EQ(count_quantize(fwd), 4);
  const Op* logits = find(head, "logits.fwd");
  ASSERT_NE(logits, nullptr);
  EXPECT_EQ(logits->bytes_per_element, 2);
  EXPECT_EQ(logits->bytes, gemm_op("logits.fwd", logits->m, logits->n, logits->k, 1, 2).bytes);
  EXPECT_EQ(count_quantize(head), 0);
}

TEST(ApplyPrecision, WeightCastIsSpreadOverTheIterationsMicrobatches) {
  // Global batch 64 over dp 8 at micro-batch 2: 4 micro-batches share one weight cast.
  // (16,777,216 + 67,108,864 / 4) · 4 + 8 = 134,217,736 B.
  std::vector<Op> ops = {gemm_op("fc1.fwd", kT, kF, kH, 1, 2)};
  apply_precision(load("fp8", {"training.global_batch=64"}), &ops);
  ASSERT_EQ(ops.size(), 2u);
  EXPECT_EQ(ops[0].bytes.count(), 134'217'736);
}

TEST(ApplyPrecision, SequenceParallelCastsTheShardAndGathersLowPrecision) {
  // TP 8 with sequence parallelism (8 micro-batches): QKV's input is cast on the local shard
  // before the all-gather, which then moves 1 B per element instead of 2. QKV: m = 4096,
  // k = 4096, n = (4 + 2·4)·128 = 1536: (4096·4096 / 8 + 4096·1536 / 8) · 4 + 8 = 11,534,344 B.
  // The head's all-gather feeds the bf16 logits GEMM and keeps its size.
  const std::vector<std::string> sp = {"parallelism.tp=8", "parallelism.sequence_parallel=true"};
  const Scenario bf16 = load("bf16", sp);
  const Scenario fp8 = load("fp8", sp);
  const LayerShape x = make_layer_shape(fp8);
  std::vector<Op> fwd = layer_forward_ops(x);
  std::vector<Op> head = head_forward_ops(x);
  apply_precision(fp8, &fwd);
  apply_precision(fp8, &head);
  const std::vector<Op> fwd_bf16 = layer_forward_ops(make_layer_shape(bf16));
  const std::vector<Op> head_bf16 = head_forward_ops(make_layer_shape(bf16));
  int gathers = 0;
  for (size_t i = 0; i + 1 < fwd.size(); ++i) {
    if (fwd[i].name != "tp.allgather") continue;
    ++gathers;
    ASSERT_GT(i, 0u);
    EXPECT_EQ(fwd[i - 1].name, fwd[i + 1].name + ".quantize");  // cast, gather, GEMM
    EXPECT_EQ(fwd[i].comm_bytes.count() * 2, find(fwd_bf16, "tp.allgather")->comm_bytes.count());
  }
  EXPECT_EQ(gathers, 2);  // QKV and FC1
  const Op* qkv = find(fwd, "qkv.fwd.quantize");
  ASSERT_NE(qkv, nullptr);
  EXPECT_EQ(qkv->bytes.count(), 11'534'344);
  const Op* head_gather = find(head, "tp.allgather");
  ASSERT_NE(head_gather, nullptr);
  EXPECT_EQ(head_gather->comm_bytes, find(head_bf16, "tp.allgather")->comm_bytes);
}

TEST(ApplyPrecision, Fp8CurrentScalingReadsEachInputForItsAmaxInThreeKernels) {
  // Current scaling reads a bf16 tensor once for its amax, then casts it (Transformer Engine's
  // Float8CurrentScalingQuantizer: amax, scale, cast): 2 · 2 + 2 · 1 = 6 B per element where
  // delayed scaling's cast moves 4 (Fp8ForwardQuantizesActivationAndWeight). FC2's input comes
  // from Megatron-Core's own SwiGLU and its weight from the optimizer: both read twice,
  // (67,108,864 + 67,108,864) · 6 + 8 = 805,306,376 B. FC1's input comes from TE's
  // LayerNormLinear, whose norm kernel computes the amax of what it writes: only its weight is
  // read twice, 16,777,216 · 4 + 67,108,864 · 6 + 8 = 469,762,056 B.
  const Scenario current = load("fp8", {"training.fp8_recipe=current"});
  auto cast = [&](const Scenario& s, Op gemm) {
    std::vector<Op> ops = {std::move(gemm)};
    apply_precision(s, &ops);
    EXPECT_EQ(ops.size(), 2u);
    return ops;
  };
  const std::vector<Op> fc2 = cast(current, gemm_op("fc2.fwd", kT, kH, kF, 1, 2));
  EXPECT_EQ(fc2[0].bytes.count(), 805'306'376);
  const std::vector<Op> fc1 = cast(current, gemm_op("fc1.fwd", kT, kF, kH, 1, 2));
  EXPECT_EQ(fc1[0].bytes.count(), 469'762'056);
  EXPECT_EQ(fc1[0].launches, 1);  // one call into TE's C++ quantizer
  EXPECT_EQ(fc1[0].device_kernels, 3);
  const std::vector<Op> delayed = applied("fp8", gemm_op("fc1.fwd", kT, kF, kH, 1, 2));
  EXPECT_EQ(delayed[0].device_kernels, 1);
  EXPECT_EQ(fc1[1].bytes, delayed[1].bytes);  // the GEMM is the same
  // The output gradient of an input-gradient GEMM is read twice: 67,108,864 · 6 + 4.
  const std::vector<Op> dgrad = cast(current, gemm_op("fc1.dgrad", kT, kH, kF, 1, 2));
  EXPECT_EQ(dgrad[0].bytes.count(), static_cast<int64_t>(kT) * kF * 6 + 4);
}

TEST(ApplyPrecision, PerExpertGroupedGemmsQuantizeEachExpertsSplitWithItsOwnKernel) {
  // Transformer Engine's GroupedLinear (16 local experts, their cuBLAS GEMMs on 4 streams)
  // quantizes the expert splits one by one for MXFP8, blockwise and current-scaling FP8
  // (tex.split_quantize -> multi_tensor_quantize_impl, whose only fused kernel is delayed
  // scaling's multi-tensor cast-transpose); NVFP4 has one grouped kernel (TransformerEngine PR
  // #2411). The bytes stay those of the whole tensors; only the kernel count moves.
  auto experts = [](const char* name) {
    Op op = gemm_op(name, 512, 1536, 4096, 16, 2);
    op.gemm_streams = 4;
    return op;
  };
  const std::vector<Op> mx = applied("mxfp8", experts("moe.experts.fc1.fwd"));
  ASSERT_EQ(mx.size(), 3u);  // quantize, swizzle, GEMM
  EXPECT_EQ(mx[0].device_kernels, 16);
  EXPECT_EQ(mx[0].launches, 1);  // one call into TE's C++ split_quantize
  EXPECT_EQ(applied("mxfp8", experts("moe.experts.fc2.dgrad"))[0].device_kernels, 16);
  EXPECT_EQ(applied("fp8_blockwise", experts("moe.experts.fc1.fwd"))[0].device_kernels, 16);
  EXPECT_EQ(applied("fp8", experts("moe.experts.fc1.fwd"))[0].device_kernels, 1);
  EXPECT_EQ(applied("nvfp4", experts("moe.experts.fc1.fwd"))[0].device_kernels, 1);
  std::vector<Op> current = {experts("moe.experts.fc1.fwd")};
  apply_precision(load("fp8", {"training.fp8_recipe=current"}), &current);
  EXPECT_EQ(current[0].device_kernels, 48);  // amax, scale and cast per expert
  // One batched kernel (the fused grouped MLP, gemm_streams 0) quantizes once.
  Op fused = gemm_op("moe.experts.fc1.fwd", 512, 1536, 4096, 16, 2);
  EXPECT_EQ(applied("mxfp8", fused)[0].device_kernels, 1);
  EXPECT_EQ(mx[0].bytes, applied("mxfp8", fused)[0].bytes);
}

TEST(ApplyPrecision, CurrentScalingReducesTheShardsAmaxOverTheTensorGroup) {
  // With sequence parallelism each rank casts its shard before the all-gather, at one scale for
  // all: the amax of QKV's and FC1's inputs forward, and of the output gradients of the
  // projection and FC2 backward, is all-reduced over the TP group (one float, blocking) between
  // the amax and the cast. Delayed scaling and TP without sequence parallelism have none.
  auto amax_reductions = [](const std::vector<std::string>& more, bool backward) {
    std::vector<std::string> o = {"training.fp8_recipe=current"};
    o.insert(o.end(), more.begin(), more.end());
    const Scenario s = load("fp8", o);
    const LayerShape x = make_layer_shape(s);
    std::vector<Op> ops = backward ? layer_backward_ops(x) : layer_forward_ops(x);
    apply_precision(s, &ops);
    int n = 0;
    for (size_t i = 0; i < ops.size(); ++i) {
      if (ops[i].name != "tp.allreduce.amax") continue;
      ++n;
      EXPECT_EQ(ops[i].type, OpType::kCollective);
      EXPECT_EQ(ops[i].collective, CollectiveKind::kAllReduce);
      EXPECT_EQ(ops[i].group, GroupKind::kTensor);
      EXPECT_EQ(ops[i].comm_bytes.count(), 4);
      EXPECT_FALSE(ops[i].async);
      // amax reduction, cast, all-gather, GEMM.
      EXPECT_TRUE(i + 3 < ops.size() && is_quantize(ops[i + 1]) &&
                  ops[i + 2].name.rfind("tp.allgather", 0) == 0 &&
                  ops[i + 1].name == ops[i + 3].name + ".quantize")
          << ops[i + 1].name;
    }
    return n;
  };
  const std::vector<std::string> sp = {"parallelism.tp=8", "parallelism.sequence_parallel=true"};
  EXPECT_EQ(amax_reductions(sp, false), 2);  // QKV and FC1
  EXPECT_EQ(amax_reductions(sp, true), 2);   // the projection's and FC2's input gradients
  EXPECT_EQ(amax_reductions({"parallelism.tp=8"}, false), 0);
  EXPECT_EQ(amax_reductions({}, false), 0);
  const Scenario delayed = load("fp8", sp);
  std::vector<Op> ops = layer_forward_ops(make_layer_shape(delayed));
  apply_precision(delayed, &ops);
  EXPECT_EQ(find(ops, "tp.allreduce.amax"), nullptr);
}

TEST(ApplyPrecision, Fp8RecipeIsAnFp8Setting) {
  StatusOr<Scenario> s = load_scenario_text(
      kGpt, "test.yaml", {"training.precision=mxfp8", "training.fp8_recipe=current"});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("training.fp8_recipe: expected training.precision: fp8"),
            std::string::npos)
      << s.status().message();
  s = load_scenario_text(kGpt, "test.yaml",
                         {"training.precision=fp8", "training.fp8_recipe=dynamic"});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("training.fp8_recipe"), std::string::npos);
  s = load_scenario_text(kGpt, "test.yaml", {"training.precision=fp8"});
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->training.fp8_recipe, Fp8Recipe::kDelayed);  // Megatron-Core's default
}

TEST(ApplyPrecision, ApplyingTwiceChangesNothing) {
  const Scenario s = load("nvfp4");
  std::vector<Op> once = layer_forward_ops(make_layer_shape(s));
  apply_precision(s, &once);
  std::vector<Op> twice = once;
  apply_precision(s, &twice);
  ASSERT_EQ(twice.size(), once.size());
  for (size_t i = 0; i < once.size(); ++i) {
    EXPECT_EQ(twice[i].name, once[i].name);
    EXPECT_EQ(twice[i].bytes, once[i].bytes);
  }
}

TEST(GenerateWorkload, LowPrecisionLayersCarryTheirQuantizeKernels) {
  // The generator applies the precision to every block: bf16 has no quantize op, nvfp4 four in
  // each layer's forward and four in its backward.
  auto quantize_ops = [](const Workload& w, const std::string& block) {
    for (const Block& b : w.blocks) {
      if (b.name == block) return count_quantize(b.ops);
    }
    return -1;
  };
  const Workload bf16 = generate_workload(load("bf16"));
  const Workload fp4 = generate_workload(load("nvfp4"));
  EXPECT_EQ(quantize_ops(bf16, "layer.fwd"), 0);
  EXPECT_EQ(quantize_ops(fp4, "layer.fwd"), 4);
  EXPECT_EQ(quantize_ops(fp4, "layer.bwd"), 4);
  EXPECT_EQ(quantize_ops(fp4, "head.fwd"), 0);
}

}  // namespace
}  // namespace preflight

namespace preflight {
namespace {

// Megatron's first_last_layers_bf16: the layers named stay in bf16 (no quantize kernels, 2-byte
// GEMM operands), the others are cast; all of them in bf16 is the bf16 run exactly.
TEST(Bf16Layers, TheFirstAndLastLayersNamedStayInBf16) {
  for (const char* precision : {"fp8", "mxfp8", "nvfp4"}) {
    const Scenario s = load(precision, {"training.num_layers_at_start_in_bf16=1",
                                        "training.num_layers_at_end_in_bf16=2"});
    const Workload w = generate_workload(s, {});
    // Layer 0 and layers 2, 3 in bf16, layer 1 not: one forward block of each kind.
    int high = 0, low = 0;
    for (const Block& b : w.blocks) {
      if (b.name != "layer.fwd" && b.name != "layer.bwd") continue;
      (b.high_precision ? high : low) += 1;
      int narrow = 0;
      for (const Op& op : b.ops) narrow += op.type == OpType::kGemm && op.bytes_per_element < 2;
      if (b.high_precision) {
        EXPECT_EQ(count_quantize(b.ops), 0) << precision << " " << b.name;
        EXPECT_EQ(narrow, 0) << precision << " " << b.name;
      } else {
        EXPECT_GT(count_quantize(b.ops), 0) << precision << " " << b.name;
        EXPECT_GT(narrow, 0) << precision << " " << b.name;
      }
    }
    EXPECT_EQ(high, 2) << precision;
    EXPECT_EQ(low, 2) << precision;
  }
}

TEST(Bf16Layers, EveryLayerInBf16IsTheBf16Workload) {
  const Workload all =
      generate_workload(load("mxfp8", {"training.num_layers_at_end_in_bf16=4"}), {});
  const Workload bf16 = generate_workload(load("bf16"), {});
  auto gemm_bytes = [](const Workload& w) {
    int64_t sum = 0;
    for (const Block& b : w.blocks) {
      for (const Op& op : b.ops) sum += op.type == OpType::kGemm ? op.bytes.count() : 0;
    }
    return sum;
  };
  EXPECT_EQ(gemm_bytes(all), gemm_bytes(bf16));
  int quantize = 0;
  for (const Block& b : all.blocks) quantize += count_quantize(b.ops);
  EXPECT_EQ(quantize, 0);
}

TEST(Bf16Layers, AreCheckedAgainstThePrecisionAndTheLayers) {
  auto error = [](const std::string& precision, const std::string& key, int n) {
    StatusOr<Scenario> s = load_scenario_text(
        kGpt, "test.yaml",
        {"training.precision=" + precision, "training." + key + "=" + std::to_string(n)});
    EXPECT_FALSE(s.ok()) << precision << " " << key << " " << n;
    return s.ok() ? std::string() : s.status().message();
  };
  EXPECT_NE(error("bf16", "num_layers_at_end_in_bf16", 2)
                .find("training.num_layers_at_end_in_bf16: expected a low-precision"),
            std::string::npos);
  EXPECT_NE(error("fp8", "num_layers_at_start_in_bf16", 5)
                .find("training.num_layers_at_start_in_bf16: 5 + 0 layers: expected at most "
                      "model.layers (4)"),
            std::string::npos);
  EXPECT_NE(error("fp8", "num_layers_at_end_in_bf16", -1).find("num_layers_at_end_in_bf16"),
            std::string::npos);
}

}  // namespace
}  // namespace preflight
