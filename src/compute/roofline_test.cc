#include <gtest/gtest.h>

#include "compute/compute_model.h"
#include "config/loader.h"
#include "workload/layer_ops.h"
#include "workload/layer_shape.h"

namespace preflight {
namespace {

// A round-numbered GPU: 100 SMs, 400 TFLOP/s bf16, 800 TFLOP/s fp8, 2 TB/s HBM;
// η_gemm 0.75, η_mem 0.5, η_attn 0.5, kernel gap 3 us.
GpuConfig test_gpu() {
  GpuConfig g;
  g.name = "test";
  g.sm_count = 100;
  g.hbm_bandwidth = Bandwidth::gigabytes_per_second(2000);
  g.peak_bf16 = FlopRate::teraflops(400);
  g.peak_fp16 = FlopRate::teraflops(400);
  g.peak_fp8 = FlopRate::teraflops(800);
  g.calibration.gemm_efficiency = 0.75;
  g.calibration.memory_efficiency = 0.5;
  g.calibration.attention_efficiency = 0.5;
  g.calibration.kernel_gap = SimTime::microseconds(3);
  return g;
}

// A fused-attention-typed kernel of `flops` FLOPs over 1000 bytes: compute-bound.
Op attention_kernel(double flops) {
  Op op;
  op.type = OpType::kAttention;
  op.flops = Flops(flops);
  op.bytes = Bytes(1000);
  return op;
}

GpuConfig a100() {
  StatusOr<Scenario> s = load_scenario_text("", "", {});  // the default runs on DGX A100
  EXPECT_TRUE(s.ok()) << s.status().message();
  return s->cluster.gpu;
}

TEST(RooflineModel, LargeSquareGemmRunsAtCalibratedPeak) {
  // 8192³ on A100: 2·8192³ = 1.0995e12 FLOP at 312 TFLOP/s · 0.869 = 271.1 TFLOP/s = 4.056 ms.
  // With 256×128 tiles: 2048 tiles in ⌈2048/108⌉ = 19 waves (2052 tile slots) and 64 K of
  // pipeline fill per tile: 1.0098 × that, well inside 5%.
  const GpuConfig gpu = a100();
  const std::unique_ptr<ComputeModel> model = make_roofline_model(gpu, Precision::kBf16);
  const Op op = gemm_op("gemm", 8192, 8192, 8192, 1, 2);
  const double ideal =
      op.flops.count() / (gpu.peak_bf16.flops_per_second() * gpu.calibration.gemm_efficiency);
  const double t = model->duration(op).to_seconds();
  EXPECT_NEAR(t / ideal, 1.0, 0.05);
  EXPECT_GE(t, ideal);  // never faster than the calibrated peak
}

TEST(RooflineModel, MemoryBoundOpIsBytesOverBandwidthPlusGap) {
  // 1e9 B / (2 TB/s · 0.5) = 1 ms, + 3 us gap = 1.003 ms exactly.
  const std::unique_ptr<ComputeModel> model = make_roofline_model(test_gpu(), Precision::kBf16);
  EXPECT_EQ(model->duration(memory_op("ew", 1e9)), SimTime::microseconds(1003));
  // 3 MB: 3 us + 3 us.
  EXPECT_EQ(model->duration(memory_op("ew", 3e6)), SimTime::microseconds(6));
}

TEST(RooflineModel, MemoryBoundOpOnA100) {
  // bytes / (HBM · η_mem) + kernel_gap with the A100 preset's own numbers.
  const GpuConfig gpu = a100();
  const std::unique_ptr<ComputeModel> model = make_roofline_model(gpu, Precision::kBf16);
  const double bytes = 536'870'912;  // 512 MiB
  const SimTime want = SimTime::seconds(bytes / (gpu.hbm_bandwidth.bytes_per_second() *
                                                 gpu.calibration.memory_efficiency)) +
                       gpu.calibration.kernel_gap;
  EXPECT_EQ(model->duration(memory_op("ew", bytes)), want);
}

TEST(RooflineModel, EmptyKernelCostsTheGap) {
  const std::unique_ptr<ComputeModel> model = make_roofline_model(test_gpu(), Precision::kBf16);
  EXPECT_EQ(model->duration(memory_op("nothing", 0)), SimTime::microseconds(3));
}

TEST(RooflineModel, AttentionIsTheSlowerOfFlopsAndBytes) {
  const std::unique_ptr<ComputeModel> model = make_roofline_model(test_gpu(), Precision::kBf16);
  Op op;
  op.type = OpType::kAttention;
  // 2e11 FLOP at 400 TF · 0.5 = 1 ms, against 1e8 B at 1 TB/s = 0.1 ms: compute-bound.
  op.flops = Flops(2e11);
  op.bytes = Bytes(100'000'000);
  EXPECT_EQ(model->duration(op), SimTime::microseconds(1003));
  // 1e10 B at 1 TB/s = 10 ms: memory-bound.
  op.bytes = Bytes(10'000'000'000);
  EXPECT_EQ(model->duration(op), SimTime::microseconds(10003));
}

TEST(RooflineModel, AttentionBackwardRunsAtItsOwnRatio) {
  // 2e11 FLOP backward at 400 TF · 0.5 · 0.87 = 174 TF: 1.1494 ms (+ the 3 us gap).
  GpuConfig gpu = test_gpu();
  gpu.calibration.attention_backward_ratio = 0.87;
  const std::unique_ptr<ComputeModel> model = make_roofline_model(gpu, Precision::kBf16);
  Op op = attention_kernel(2e11);
  op.backward = true;
  EXPECT_NEAR(model->duration(op).to_seconds(), 2e11 / (400e12 * 0.5 * 0.87) + 3e-6, 1e-9);
}

TEST(RooflineModel, SsdScansRunAtTheirOwnEfficiency) {
  // A compute-bound Mamba-2 scan: 2e11 FLOP at 400 TF · 0.09 = 36 TF: 5.556 ms (+ the 3 us gap),
  // forward and backward alike; FlashAttention with the same FLOPs runs at η_attn 0.5.
  GpuConfig gpu = test_gpu();
  gpu.calibration.ssd_efficiency = 0.09;
  gpu.calibration.attention_backward_ratio = 0.87;
  const std::unique_ptr<ComputeModel> model = make_roofline_model(gpu, Precision::kBf16);
  Op op = attention_kernel(2e11);
  op.ssd_scan = true;
  EXPECT_NEAR(model->duration(op).to_seconds(), 2e11 / (400e12 * 0.09) + 3e-6, 1e-9);
  op.backward = true;
  EXPECT_NEAR(model->duration(op).to_seconds(), 2e11 / (400e12 * 0.09) + 3e-6, 1e-9);
  op.ssd_scan = false;
  op.backward = false;
  EXPECT_NEAR(model->duration(op).to_seconds(), 2e11 / (400e12 * 0.5) + 3e-6, 1e-9);
}

TEST(RooflineModel, SsdScansMoveTheirBytesAtTheirOwnFraction) {
  // A memory-bound scan: 1 GB at 2 TB/s · 0.5 = 1 ms by default (the memory-bound kernels'
  // fraction); with ssd_memory_efficiency 0.2, 2.5 ms. Other kernels keep 0.5.
  GpuConfig gpu = test_gpu();
  Op op = attention_kernel(1e6);
  op.bytes = Bytes(1000000000);
  op.ssd_scan = true;
  EXPECT_NEAR(make_roofline_model(gpu, Precision::kBf16)->duration(op).to_seconds(),
              1e9 / (2000e9 * 0.5) + 3e-6, 1e-9);
  gpu.calibration.ssd_memory_efficiency = 0.2;
  const std::unique_ptr<ComputeModel> model = make_roofline_model(gpu, Precision::kBf16);
  EXPECT_NEAR(model->duration(op).to_seconds(), 1e9 / (2000e9 * 0.2) + 3e-6, 1e-9);
  op.ssd_scan = false;
  EXPECT_NEAR(model->duration(op).to_seconds(), 1e9 / (2000e9 * 0.5) + 3e-6, 1e-9);
}

TEST(RooflineModel, SoftmaxExponentialsAddTheirSpecialFunctionUnitTime) {
  // The test GPU as a Hopper part: 400 TF/s bf16 over 4,096 tensor FLOPs and 16 exponentials per
  // SM and clock: 1.5625e12 exponentials/s. A forward tile of head dim 128 does 4·128 = 512 FLOPs
  // per exponential: 2e11 FLOP take 1 ms at 400 TF · 0.5, their 3.90625e8 exponentials 0.25 ms
  // more. At head dim 64 (twice the exponentials per FLOP) 0.5 ms more.
  GpuConfig gpu = test_gpu();
  gpu.architecture = GpuArchitecture::kHopper;
  EXPECT_DOUBLE_EQ(gpu.exp_per_second(), 400e12 * 16 / 4096);
  const std::unique_ptr<ComputeModel> model = make_roofline_model(gpu, Precision::kBf16);
  Op op = attention_kernel(2e11);
  op.exponentials = 2e11 / 512;
  EXPECT_NEAR(model->duration(op).to_seconds(), 1e-3 + 0.25e-3 + 3e-6, 1e-12);
  op.exponentials = 2e11 / 256;
  EXPECT_NEAR(model->duration(op).to_seconds(), 1e-3 + 0.5e-3 + 3e-6, 1e-12);
  // Blackwell's tensor cores do twice the FLOPs per SM and clock with the same 16 units: at the
  // same peak the exponentials take twice as long; Blackwell Ultra's doubled units halve that.
  gpu.architecture = GpuArchitecture::kBlackwell;
  EXPECT_NEAR(make_roofline_model(gpu, Precision::kBf16)->duration(op).to_seconds(),
              1e-3 + 1e-3 + 3e-6, 1e-12);
  gpu.sfu_exp_per_clock = 32;
  EXPECT_NEAR(make_roofline_model(gpu, Precision::kBf16)->duration(op).to_seconds(),
              1e-3 + 0.5e-3 + 3e-6, 1e-12);
  // A memory-bound kernel stays at its bytes; a Mamba scan has no softmax.
  op.bytes = Bytes(10'000'000'000);
  EXPECT_NEAR(make_roofline_model(gpu, Precision::kBf16)->duration(op).to_seconds(),
              1e10 / 1e12 + 3e-6, 1e-12);
}

TEST(RooflineModel, ExponentialRatesOfThePresetsFollowTheirSmsAndClocks) {
  // H100 SXM: 132 SMs x 16 x 1.83 GHz (the clock of its 989 TF/s dense bf16 peak) = 3.87e12/s.
  // GB300's doubled units (NVIDIA, "Making Softmax More Efficient with Blackwell Ultra"): twice
  // GB200's rate at the same 2,500 TF/s peak.
  auto gpu_of = [](const char* preset) {
    StatusOr<Scenario> s =
        load_scenario_text("", "", {std::string("cluster.gpu.preset=") + preset});
    EXPECT_TRUE(s.ok()) << s.status().message();
    return s->cluster.gpu;
  };
  EXPECT_NEAR(gpu_of("H100-SXM5-80GB").exp_per_second(), 132 * 16 * 1.83e9, 0.01e12);
  EXPECT_DOUBLE_EQ(gpu_of("GB300").exp_per_second(), 2 * gpu_of("GB200").exp_per_second());
}

// A compute-bound fused-attention kernel of 2·10¹¹ FLOPs, and its time less the kernel gap on
// the test GPU of architecture `a` with the attention family `k`.
Op attention_op(bool backward) {
  Op op;
  op.type = OpType::kAttention;
  op.flops = Flops(2e11);
  op.bytes = Bytes(1000);
  op.backward = backward;
  return op;
}

double attention_seconds(GpuArchitecture a, AttentionKernel k, const Op& op) {
  GpuConfig g = test_gpu();
  g.architecture = a;
  return (make_roofline_model(g, Precision::kBf16, k)->duration(op) - SimTime::microseconds(3))
      .to_seconds();
}

TEST(RooflineModel, FlashAttention2OnHopperRunsAtItsMeasuredShareOfCudnn) {
  // FlashAttention-3 paper, H100, head dim 128, 8K: FA2 335 vs cuDNN ~605 TFLOP/s forward, 318
  // vs 518 backward. On Ampere FA2 is the reference kernel: unchanged.
  using A = GpuArchitecture;
  using K = AttentionKernel;
  const Op fwd = attention_op(false);
  const Op bwd = attention_op(true);
  EXPECT_NEAR(attention_seconds(A::kHopper, K::kFlash2, fwd) /
                  attention_seconds(A::kHopper, K::kCudnn, fwd),
              605.0 / 335.0, 1e-6);
  EXPECT_NEAR(attention_seconds(A::kHopper, K::kFlash2, bwd) /
                  attention_seconds(A::kHopper, K::kCudnn, bwd),
              518.0 / 318.0, 1e-6);
  EXPECT_DOUBLE_EQ(attention_seconds(A::kAmpere, K::kFlash2, fwd),
                   attention_seconds(A::kAmpere, K::kCudnn, fwd));
}

TEST(RooflineModel, AttentionWorkUnitsPayTheirFixedCostInTiles) {
  // A unit computing 4 key tiles with a fixed cost of 2 tiles takes 6 tiles' time: 1.5x the
  // compute; an op without units (no tile count) and FlashAttention-2's kernels pay nothing.
  GpuConfig g = test_gpu();
  g.architecture = GpuArchitecture::kHopper;
  g.calibration.attention_unit_overhead = 2;
  Op op = attention_op(false);
  const auto seconds = [&](const Op& o, AttentionKernel k) {
    return (make_roofline_model(g, Precision::kBf16, k)->duration(o) - SimTime::microseconds(3))
        .to_seconds();
  };
  const double plain = seconds(op, AttentionKernel::kCudnn);
  op.attention_tiles_per_unit = 4;
  EXPECT_NEAR(seconds(op, AttentionKernel::kCudnn), 1.5 * plain, 1e-12);
  EXPECT_DOUBLE_EQ(seconds(op, AttentionKernel::kFlash2),
                   seconds(attention_op(false), AttentionKernel::kFlash2));
}

// cuDNN's forward on the shape of GPT-OSS's attention (64 query heads, 8 KV heads, width 64, one
// sequence), causal, full or with a window of `window` keys, as the workload counts it
// (workload/layer_ops.cc flash_forward).
Op gpt_oss_attention(int64_t seq, int64_t window) {
  const double heads = 64, kv_heads = 8, d = 64, s = static_cast<double>(seq);
  const double keys2 = tiled_keys2(seq, window);
  Op op;
  op.type = OpType::kAttention;
  op.flops = Flops(2.0 * heads * s * keys2 * d);
  op.exponentials = heads * s * keys2 / 2;
  op.attention_tiles_per_unit = keys2 / (2.0 * static_cast<double>(kAttentionTile));
  op.bytes =
      Bytes(static_cast<int64_t>(2 * s * (2 * heads * d + 2 * kv_heads * d) + 4 * heads * s));
  return op;
}

TEST(RooflineModel, CudnnAttentionMatchesItsBenchmarkAcrossWindowsAndLengths) {
  // Oracle: cudnn-frontend's attention benchmark (benchmark/attention_inference, cuDNN 9.27,
  // GPT-OSS context phase): on a B200 the 128-key window at 8K tokens takes 0.113 ms against
  // 0.594 for the full causal 8K (0.191) and the full 2K 0.0543 (0.0914); on an H200 0.135 and
  // 0.0987 against 1.202 (0.113, 0.0821). The work of a unit (a tile of queries of one head)
  // alone would give 0.061 and 0.065 on either GPU: the unit's fixed cost makes the rest.
  const auto ratios = [](const char* preset) {
    StatusOr<Scenario> sc =
        load_scenario_text("", "", {std::string("cluster.gpu.preset=") + preset});
    EXPECT_TRUE(sc.ok()) << sc.status().message();
    const auto model =
        make_roofline_model(sc->cluster.gpu, Precision::kBf16, AttentionKernel::kCudnn);
    const double full = model->duration(gpt_oss_attention(8192, 0)).to_seconds();
    return std::make_pair(model->duration(gpt_oss_attention(8192, 128)).to_seconds() / full,
                          model->duration(gpt_oss_attention(2048, 0)).to_seconds() / full);
  };
  const auto [b200_window, b200_short] = ratios("B200");
  EXPECT_NEAR(b200_window, 0.191, 0.2 * 0.191);
  EXPECT_NEAR(b200_short, 0.0914, 0.2 * 0.0914);
  const auto [h200_window, h200_short] = ratios("H200-SXM-141GB");
  EXPECT_NEAR(h200_window, 0.113, 0.2 * 0.113);
  EXPECT_NEAR(h200_short, 0.0821, 0.2 * 0.0821);
}

TEST(RooflineModel, TheFirstFlashAttentionRunsAtItsPublishedShareOfFlashAttention2) {
  // FlashAttention-2 paper (Dao 2023), A100: FlashAttention 25-40 % of peak, FlashAttention-2
  // 50-73 %: the first one takes 61.5 / 32.5 of FlashAttention-2's time, forward and backward,
  // on Ampere (where FlashAttention-2 is the reference) and on Hopper (against FA2's rate there).
  for (GpuArchitecture a : {GpuArchitecture::kAmpere, GpuArchitecture::kHopper}) {
    for (const Op& op : {attention_op(false), attention_op(true)}) {
      EXPECT_NEAR(attention_seconds(a, AttentionKernel::kFlash1, op) /
                      attention_seconds(a, AttentionKernel::kFlash2, op),
                  61.5 / 32.5, 1e-6);
    }
  }
}

TEST(RooflineModel, TileQuantizationMakesM129CostlierPerFlopThanM128) {
  // With HBM fast enough to keep both GEMMs compute-bound, m = 128 fills one row of 128-high
  // tiles; m = 129 needs a second row (or 64-high tiles), nearly doubling the tile work for
  // 0.8% more FLOPs. 100 SMs: m = 128 → 128×256 tiles, 32 tiles, split-K 3:
  // 100·2·128·256·(2731 + 64) = 1.83e10 FLOP of tile work; m = 129 → 64×128 tiles at η 0.8,
  // 192 tiles in 2 waves: 200·2·64·128·(8192 + 64)/0.8 = 3.38e10.
  GpuConfig gpu = test_gpu();
  gpu.hbm_bandwidth = Bandwidth::gigabytes_per_second(1e6);
  gpu.calibration.kernel_gap = SimTime::zero();
  const std::unique_ptr<ComputeModel> model = make_roofline_model(gpu, Precision::kBf16);
  const Op a = gemm_op("m128", 128, 8192, 8192, 1, 2);
  const Op b = gemm_op("m129", 129, 8192, 8192, 1, 2);
  const double per_flop_a = model->duration(a).to_seconds() / a.flops.count();
  const double per_flop_b = model->duration(b).to_seconds() / b.flops.count();
  EXPECT_GT(per_flop_b, per_flop_a);
  EXPECT_GT(per_flop_b / per_flop_a, 1.5);
  const double rate = 400e12 * 0.75;
  EXPECT_NEAR(model->duration(a).to_seconds(), 100.0 * 2 * 128 * 256 * (2731 + 64) / rate, 1e-12);
  EXPECT_NEAR(model->duration(b).to_seconds(), 200.0 * 2 * 64 * 128 * (8192 + 64) / 0.8 / rate,
              1e-12);
}

TEST(RooflineModel, SeparatelyLaunchedExpertGemmsFillTheirOwnWaves) {
  // 64 experts of 256×1024×256 (TE's per-expert GEMMs on 4 streams; K too short to split):
  // 4 experts at a time, 16 groups of 4·8 = 32 tiles of 128×256, each group one wave on the
  // 100 SMs and its own kernel gap: 16 waves; as one batched kernel the 512 tiles share 6.
  GpuConfig gpu = test_gpu();
  gpu.hbm_bandwidth = Bandwidth::gigabytes_per_second(1e6);
  const std::unique_ptr<ComputeModel> model = make_roofline_model(gpu, Precision::kBf16);
  Op batched = gemm_op("experts", 256, 1024, 256, 64, 2);
  Op separate = batched;
  separate.gemm_streams = 4;
  Op four = gemm_op("experts", 256, 1024, 256, 4, 2);
  four.gemm_streams = 4;
  const double t_batched = model->duration(batched).to_seconds();
  const double t_separate = model->duration(separate).to_seconds();
  const double t_four = model->duration(four).to_seconds();
  EXPECT_GT(t_separate, 2 * t_batched);
  // 16 groups of four: 16 × (one group's time without its gap) + 16 gaps (to the picosecond
  // each duration is rounded to, 16 of them).
  const double gap = 3e-6;
  EXPECT_NEAR(t_separate, 16 * (t_four - gap) + 16 * gap, 16e-12);
  // One matrix, or no streams, is the batched kernel.
  Op one = gemm_op("one", 256, 1024, 256, 1, 2);
  Op one_streams = one;
  one_streams.gemm_streams = 4;
  EXPECT_EQ(model->duration(one).ps(), model->duration(one_streams).ps());
}

TEST(RooflineModel, SmallGemmIsMemoryBound) {
  // A 128 × 8192 × 8192 GEMM moves (128·8192·2 + 8192²)·2 = 138,412,032 B: at 1 TB/s that is
  // 138.4 us, more than its tile work at 300 TFLOP/s (61 us).
  const std::unique_ptr<ComputeModel> model = make_roofline_model(test_gpu(), Precision::kBf16);
  const Op op = gemm_op("gemv-like", 128, 8192, 8192, 1, 2);
  EXPECT_EQ(op.bytes.count(), 138'412'032);
  EXPECT_EQ(model->duration(op), SimTime::seconds(138'412'032 / 1e12) + SimTime::microseconds(3));
}

TEST(RooflineModel, Fp8OperandsUseTheFp8Peak) {
  // A compute-bound GEMM with 1-byte operands runs at twice the rate on an 800 TF fp8 peak.
  GpuConfig gpu = test_gpu();
  gpu.calibration.kernel_gap = SimTime::zero();
  const std::unique_ptr<ComputeModel> model = make_roofline_model(gpu, Precision::kFp8);
  const SimTime half = model->duration(gemm_op("bf16", 8192, 8192, 8192, 1, 2));
  const SimTime fp8 = model->duration(gemm_op("fp8", 8192, 8192, 8192, 1, 1));
  EXPECT_NEAR(static_cast<double>(half.ps()) / static_cast<double>(fp8.ps()), 2.0, 1e-6);
}

GpuConfig preset_gpu(const std::string& name) {
  StatusOr<ClusterConfig> c = load_cluster_preset("dgx-a100", {"cluster.gpu=" + name});
  EXPECT_TRUE(c.ok()) << c.status().message();
  return c.ok() ? c->gpu : GpuConfig{};
}

// Seconds of an 8192³ GEMM (compute-bound on every GPU here) with operands of `e` bytes, without
// the kernel gap.
double big_gemm_seconds(GpuConfig gpu, Precision p, int e) {
  gpu.calibration.kernel_gap = SimTime::zero();
  return make_roofline_model(gpu, p)
      ->duration(gemm_op("gemm", 8192, 8192, 8192, 1, e))
      .to_seconds();
}

TEST(GemmRate, IsPeakTimesEfficiencyTimesTheFormatFactors) {
  // H100 (η_gemm = the preset's): bf16 989 TF · η; fp8 1979 TF · η · 0.90 (MAMF FP8/BF16 on
  // Hopper); blockwise · 0.90 more. B200: nvfp4 9000 TF · η · 0.97 · the preset's
  // nvfp4_efficiency; mxfp8 4500 TF · η · 0.97 · 0.95.
  const GpuConfig h100 = preset_gpu("H100-SXM5-80GB");
  const double eh = h100.calibration.gemm_efficiency;
  EXPECT_DOUBLE_EQ(gemm_rate(h100, Precision::kBf16), 989e12 * eh);
  EXPECT_DOUBLE_EQ(gemm_rate(h100, Precision::kFp8), 1979e12 * eh * 0.90);
  EXPECT_DOUBLE_EQ(gemm_rate(h100, Precision::kFp8Blockwise), 1979e12 * eh * 0.90 * 0.90);
  const GpuConfig b200 = preset_gpu("B200");
  const double eb = b200.calibration.gemm_efficiency;
  const double f4 = b200.calibration.nvfp4_efficiency;
  EXPECT_DOUBLE_EQ(gemm_rate(b200, Precision::kNvfp4), 9000e12 * eb * 0.97 * f4);
  GpuConfig other = b200;
  other.calibration.nvfp4_efficiency = 0.5;
  EXPECT_DOUBLE_EQ(gemm_rate(other, Precision::kNvfp4), 9000e12 * eb * 0.97 * 0.5);
  EXPECT_DOUBLE_EQ(gemm_rate(other, Precision::kMxfp8), gemm_rate(b200, Precision::kMxfp8));
  EXPECT_DOUBLE_EQ(gemm_rate(b200, Precision::kMxfp8), 4500e12 * eb * 0.97 * 0.95);
  // No measurement for other architectures: the format factors alone.
  EXPECT_DOUBLE_EQ(gemm_rate(test_gpu(), Precision::kFp8), 800e12 * 0.75);
}

TEST(RooflineModel, Fp8IsNearlyTwiceBf16OnH100) {
  // Twice the peak, at the measured FP8/BF16 efficiency ratio of Hopper (0.90): 1.8×.
  const GpuConfig h100 = preset_gpu("H100-SXM5-80GB");
  const double ratio =
      big_gemm_seconds(h100, Precision::kBf16, 2) / big_gemm_seconds(h100, Precision::kFp8, 1);
  EXPECT_NEAR(ratio, 2 * 0.90, 0.001);
}

TEST(RooflineModel, Nvfp4IsTwiceFp8OnB200AtItsFraction) {
  // 9 vs 4.5 PFLOPS dense, at nvfp4's fraction against per-tensor fp8's 1.
  const GpuConfig b200 = preset_gpu("B200");
  const double ratio =
      big_gemm_seconds(b200, Precision::kFp8, 1) / big_gemm_seconds(b200, Precision::kNvfp4, 1);
  EXPECT_NEAR(ratio, 2 * b200.calibration.nvfp4_efficiency, 0.002);
}

TEST(RooflineModel, BlockScaledFormatsAreSlowerThanPerTensorFp8) {
  const GpuConfig h100 = preset_gpu("H100-SXM5-80GB");
  const double per_tensor = big_gemm_seconds(h100, Precision::kFp8, 1);
  const double blockwise = big_gemm_seconds(h100, Precision::kFp8Blockwise, 1);
  EXPECT_GT(blockwise, per_tensor);
  EXPECT_NEAR(blockwise / per_tensor, 1 / 0.90, 0.001);
  const GpuConfig b200 = preset_gpu("B200");
  EXPECT_GT(big_gemm_seconds(b200, Precision::kMxfp8, 1),
            big_gemm_seconds(b200, Precision::kFp8, 1));
  EXPECT_LT(big_gemm_seconds(b200, Precision::kMxfp8, 1),
            big_gemm_seconds(b200, Precision::kFp8Blockwise, 1));
}

TEST(RooflineModel, TwoByteGemmsAndAttentionKeepTheBf16RateInEveryMode) {
  // The attention core and the bf16 GEMMs (logits, unfused attention) do not change with the
  // training precision.
  const GpuConfig b200 = preset_gpu("B200");
  Op attention;
  attention.type = OpType::kAttention;
  attention.flops = Flops(2e12);
  attention.bytes = Bytes(1'000'000);
  const Op half = gemm_op("logits.fwd", 8192, 8192, 8192, 1, 2);
  const std::unique_ptr<ComputeModel> bf16 = make_roofline_model(b200, Precision::kBf16);
  for (Precision p :
       {Precision::kFp8, Precision::kFp8Blockwise, Precision::kMxfp8, Precision::kNvfp4}) {
    const std::unique_ptr<ComputeModel> model = make_roofline_model(b200, p);
    EXPECT_EQ(model->duration(attention), bf16->duration(attention)) << to_string(p);
    EXPECT_EQ(model->duration(half), bf16->duration(half)) << to_string(p);
  }
}

TEST(RooflineModelDeathTest, CollectivesAreNotComputeOps) {
  const std::unique_ptr<ComputeModel> model = make_roofline_model(test_gpu(), Precision::kBf16);
  const Op op = collective_op("ar", CollectiveKind::kAllReduce, GroupKind::kTensor, Bytes(1));
  EXPECT_DEATH(model->duration(op), "collective model");
}

}  // namespace
}  // namespace preflight
