// Measured kernels: the kernel table format, the measured compute model's lookup and
// interpolation, its coverage, the `compute` section, and PyTorch profiler traces as a source.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "compute/measured_model.h"
#include "config/kernel_table.h"
#include "config/loader.h"
#include "interop/kineto_trace.h"
#include "memory/memory_model.h"
#include "simulate/simulate.h"
#include "tests/load_scenario.h"
#include "workload/generator.h"
#include "workload/layer_ops.h"

namespace preflight {
namespace {

const char kHeader[] =
    "kind,name,dtype,m,n,k,batch,heads,kv_heads,head_dim,seq_q,seq_kv,causal,pass,bytes,"
    "time_us,reps,sm_clock_mhz,power_w\n";

KernelTable parse(const std::string& rows, bool times = true) {
  StatusOr<KernelTable> t = parse_kernel_table(std::string(kHeader) + rows, "t.csv", times);
  EXPECT_TRUE(t.ok()) << t.status().message();
  return t.ok() ? *t : KernelTable{};
}

std::string parse_error(const std::string& text, bool times = true) {
  StatusOr<KernelTable> t = parse_kernel_table(text, "t.csv", times);
  EXPECT_FALSE(t.ok());
  return t.ok() ? "" : t.status().message();
}

// The H100 of the presets, through the loader.
GpuConfig h100() {
  return load(
             "model: {preset: gpt3-13b}\ncluster: {preset: dgx-h100, nodes: 1}\n"
             "training: {global_batch: 16, micro_batch: 1, seq_len: 2048}\nparallelism: {tp: 8}\n")
      .cluster.gpu;
}

MeasuredModel model_of(const KernelTable& t, const GpuConfig& gpu = h100()) {
  return MeasuredModel(std::make_shared<const KernelTable>(t), gpu, Precision::kBf16,
                       AttentionKernel::kCudnn);
}

TEST(KernelTable, RoundTripsThroughItsCsv) {
  KernelTable t = parse(
      "gemm,fc1.fwd,bf16,8192,28672,4096,1,0,0,0,0,0,,,0,1234.5,50,1980,690\n"
      "attention,attn.core.bwd,bf16,0,0,0,2,32,8,128,8192,8192,1,bwd,0,8000.25,20,0,0\n"
      "memory,ln.fwd,bf16,0,0,0,0,0,0,0,0,0,,,67108864,40,10,0,0\n");
  t.gpu = "NVIDIA H100 80GB HBM3";
  ASSERT_EQ(t.rows.size(), 3u);
  EXPECT_EQ(t.rows[1].shape.kind, KernelKind::kAttention);
  EXPECT_TRUE(t.rows[1].shape.backward);
  EXPECT_TRUE(t.rows[1].shape.causal);
  EXPECT_EQ(t.rows[1].shape.kv_heads, 8);
  StatusOr<KernelTable> back = parse_kernel_table(write_kernel_table(t, true), "again.csv", true);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->gpu, t.gpu);
  ASSERT_EQ(back->rows.size(), t.rows.size());
  for (size_t i = 0; i < t.rows.size(); ++i) {
    EXPECT_TRUE(back->rows[i].shape.same_as(t.rows[i].shape)) << i;
    EXPECT_EQ(back->rows[i].time_us, t.rows[i].time_us) << i;
    EXPECT_EQ(back->rows[i].reps, t.rows[i].reps) << i;
  }
  // A shapes list has empty times and parses without require_times.
  StatusOr<KernelTable> list = parse_kernel_table(write_kernel_table(t, false), "s.csv", false);
  ASSERT_TRUE(list.ok()) << list.status().message();
  EXPECT_EQ(list->rows[0].time_us, 0);
  EXPECT_FALSE(parse_kernel_table(write_kernel_table(t, false), "s.csv", true).ok());
}

TEST(KernelTable, ErrorsNameTheLineTheColumnAndWhatWasExpected) {
  const std::string h = kHeader;
  EXPECT_NE(parse_error("kind,name\n").find("t.csv:1: 'kind,name': expected the header kind, name"),
            std::string::npos);
  EXPECT_NE(parse_error("# only a comment\n").find("t.csv: expected the header"),
            std::string::npos);
  EXPECT_NE(parse_error(h + "conv,x,bf16,1,1,1,1,0,0,0,0,0,,,0,1,0,0,0\n")
                .find("t.csv:2: kind: 'conv': expected gemm, attention or memory"),
            std::string::npos);
  EXPECT_NE(parse_error(h + "gemm,x,bf16,-4,1,1,1,0,0,0,0,0,,,0,1,0,0,0\n")
                .find("t.csv:2: m: '-4': expected a whole number from 1"),
            std::string::npos);
  EXPECT_NE(parse_error(h + "gemm,x,int8,4,1,1,1,0,0,0,0,0,,,0,1,0,0,0\n").find("dtype: 'int8'"),
            std::string::npos);
  EXPECT_NE(parse_error(h + "gemm,x,bf16,4,1,1,1,0,0,0,0,0,,,0,,0,0,0\n").find("time_us"),
            std::string::npos);
  EXPECT_NE(parse_error(h + "gemm,x,bf16,4,1,1,1,0,0,0,0,0,,,0,nan,0,0,0\n").find("time_us"),
            std::string::npos);
  EXPECT_NE(parse_error(h + "attention,a,bf16,0,0,0,1,32,5,128,64,64,1,fwd,0,1,0,0,0\n")
                .find("kv_heads: '5': expected a divisor of heads (32)"),
            std::string::npos);
  EXPECT_NE(parse_error(h + "attention,a,bf16,0,0,0,1,32,8,128,64,64,yes,fwd,0,1,0,0,0\n")
                .find("causal: 'yes': expected 0 or 1"),
            std::string::npos);
  EXPECT_NE(parse_error(h + "memory,,bf16,0,0,0,0,0,0,0,0,0,,,64,1,0,0,0\n").find("name"),
            std::string::npos);
  EXPECT_NE(parse_error(h + "gemm,x,bf16,4,1,1,1,0,0,0,0,0,,,0,1,0,0\n")
                .find("t.csv:2: expected 19 comma-separated columns, got 18"),
            std::string::npos);
  EXPECT_NE(parse_error(h + "gemm,a,bf16,4,1,1,1,0,0,0,0,0,,,0,1,0,0,0\n" +
                        "gemm,b,bf16,4,1,1,1,0,0,0,0,0,,,0,2,0,0,0\n")
                .find("t.csv:3: the same kernel and shape is listed twice"),
            std::string::npos);
  // Control bytes are escaped in the message.
  const std::string e = parse_error(h + "gemm,x,bf16,4\x01,1,1,1,0,0,0,0,0,,,0,1,0,0,0\n");
  EXPECT_EQ(e.find('\x01'), std::string::npos) << e;
}

TEST(MeasuredModel, MeasuredShapesTakeTheirTimeExactly) {
  const GpuConfig gpu = h100();
  const MeasuredModel m =
      model_of(parse("gemm,g,bf16,8192,1280,8192,1,0,0,0,0,0,,,0,1234.567,10,0,0\n"
                     "attention,a,bf16,0,0,0,1,8,1,128,8192,8192,1,fwd,0,2345.5,10,0,0\n"
                     "memory,ln1.fwd,bf16,0,0,0,0,0,0,0,0,0,,,33554432,40.25,10,0,0\n"),
               gpu);
  const SimTime gap = gpu.calibration.kernel_gap;
  const Op gemm = gemm_op("qkv.fwd", 8192, 1280, 8192, 1, 2);
  EXPECT_EQ(m.duration(gemm), SimTime::seconds(1234.567e-6) + gap);
  EXPECT_EQ(m.source(gemm), KernelSource::kMeasured);
  Op attention;
  attention.name = "attn.core.fwd";
  attention.type = OpType::kAttention;
  attention.flops = Flops(1e12);
  attention.attention = {1, 8, 1, 128, 8192, 8192, true};
  EXPECT_EQ(m.duration(attention), SimTime::seconds(2345.5e-6) + gap);
  EXPECT_EQ(m.source(attention), KernelSource::kMeasured);
  const Op ln = memory_op("ln1.fwd", 33554432);
  EXPECT_EQ(m.duration(ln), SimTime::seconds(40.25e-6) + gap);
  // Another memory kernel of the same size has no row of its own: roofline.
  const Op other = memory_op("ln2.fwd", 33554432);
  const std::unique_ptr<ComputeModel> roofline = make_roofline_model(gpu, Precision::kBf16);
  EXPECT_EQ(m.duration(other), roofline->duration(other));
  EXPECT_EQ(m.source(other), KernelSource::kRoofline);
  // The backward pass is another kernel; a Mamba scan has no key.
  attention.backward = true;
  EXPECT_EQ(m.source(attention), KernelSource::kRoofline);
  attention.backward = false;
  attention.ssd_scan = true;
  EXPECT_EQ(m.source(attention), KernelSource::kRoofline);
}

TEST(MeasuredModel, InterpolatesMonotonicallyInsideTheMeasuredBox) {
  // M = 1024 in 100 us, M = 8192 in 500 us: in between, times rise with M and stay between
  // the two measured ones, on the power law through them; outside, the roofline.
  const GpuConfig gpu = h100();
  const std::unique_ptr<ComputeModel> roofline = make_roofline_model(gpu, Precision::kBf16);
  const SimTime gap = gpu.calibration.kernel_gap;
  const MeasuredModel m = model_of(parse("gemm,g,bf16,1024,4096,4096,1,0,0,0,0,0,,,0,100,10,0,0\n"
                                         "gemm,g,bf16,8192,4096,4096,1,0,0,0,0,0,,,0,500,10,0,0\n"),
                                   gpu);
  SimTime previous = m.duration(gemm_op("g", 1024, 4096, 4096, 1, 2));
  EXPECT_EQ(previous, SimTime::microseconds(100) + gap);
  const SimTime last = m.duration(gemm_op("g", 8192, 4096, 4096, 1, 2));
  for (int64_t mm = 1024 + 128; mm < 8192; mm += 128) {
    const Op op = gemm_op("g", mm, 4096, 4096, 1, 2);
    const SimTime t = m.duration(op);
    EXPECT_EQ(m.source(op), KernelSource::kInterpolated) << mm;
    EXPECT_GT(t, previous) << mm;
    EXPECT_LT(t, last) << mm;
    // t = 100 us · (M / 1024)^(log 5 / log 8).
    const double want = 100e-6 * std::pow(mm / 1024.0, std::log(5.0) / std::log(8.0));
    // To SimTime's picosecond: 1 ps in 10^8.
    EXPECT_NEAR((t - gap).to_seconds() / want, 1.0, 1e-8) << mm;
    previous = t;
  }
  // Past the measured range, and another N: the roofline.
  for (const Op& op : {gemm_op("g", 16384, 4096, 4096, 1, 2), gemm_op("g", 512, 4096, 4096, 1, 2),
                       gemm_op("g", 2048, 5120, 4096, 1, 2)}) {
    EXPECT_EQ(m.source(op), KernelSource::kRoofline);
    EXPECT_EQ(m.duration(op), roofline->duration(op));
  }
  // fp8 operands are another kernel.
  EXPECT_EQ(m.source(gemm_op("g", 2048, 4096, 4096, 1, 1)), KernelSource::kRoofline);
}

TEST(MeasuredModel, NeedsEveryCornerOfTheBox) {
  // Three corners of an (m, n) square measured: the fourth missing leaves the inside to the
  // roofline; with all four, the centre's log time is the mean of the corners'.
  const GpuConfig gpu = h100();
  const std::string three =
      "gemm,g,bf16,1024,1024,4096,1,0,0,0,0,0,,,0,20,1,0,0\n"
      "gemm,g,bf16,4096,1024,4096,1,0,0,0,0,0,,,0,60,1,0,0\n"
      "gemm,g,bf16,1024,4096,4096,1,0,0,0,0,0,,,0,70,1,0,0\n";
  const Op inside = gemm_op("g", 2048, 2048, 4096, 1, 2);
  EXPECT_EQ(model_of(parse(three), gpu).source(inside), KernelSource::kRoofline);
  const MeasuredModel four =
      model_of(parse(three + "gemm,g,bf16,4096,4096,4096,1,0,0,0,0,0,,,0,200,1,0,0\n"), gpu);
  EXPECT_EQ(four.source(inside), KernelSource::kInterpolated);
  const double want = std::pow(20.0 * 60.0 * 70.0 * 200.0, 0.25) * 1e-6;
  EXPECT_NEAR((four.duration(inside) - gpu.calibration.kernel_gap).to_seconds() / want, 1.0, 1e-8);
}

TEST(MeasuredModel, AWildcardMemoryRowCoversKernelsWithoutRowsOfTheirOwn) {
  const GpuConfig gpu = h100();
  const MeasuredModel m =
      model_of(parse("memory,*,bf16,0,0,0,0,0,0,0,0,0,,,1048576,2,1,0,0\n"
                     "memory,*,bf16,0,0,0,0,0,0,0,0,0,,,1073741824,400,1,0,0\n"
                     "memory,ln.fwd,bf16,0,0,0,0,0,0,0,0,0,,,1048576,5,1,0,0\n"),
               gpu);
  EXPECT_EQ(m.duration(memory_op("act.fwd", 1048576)),
            SimTime::seconds(2e-6) + gpu.calibration.kernel_gap);
  EXPECT_EQ(m.duration(memory_op("ln.fwd", 1048576)),
            SimTime::seconds(5e-6) + gpu.calibration.kernel_gap);
  EXPECT_EQ(m.source(memory_op("act.fwd", 33554432)), KernelSource::kInterpolated);
}

// A scenario small enough for tests: GPT-3 13B on one DGX H100, TP 8.
const char kScenario[] =
    "model: {preset: gpt3-13b}\n"
    "cluster: {preset: dgx-h100, nodes: 1}\n"
    "training: {global_batch: 16, micro_batch: 1, seq_len: 2048}\n"
    "parallelism: {tp: 8, pp: 1}\n";

// The table of every kernel `s` runs, each at `scale` × its roofline time.
KernelTable table_for(const Scenario& s, double scale) {
  const Workload w = generate_workload(s, offloaded_layer_bytes(s));
  const std::unique_ptr<ComputeModel> roofline = make_compute_model(s);
  KernelTable t;
  for (const KernelShape& k : workload_kernel_shapes(w, s.training.precision)) {
    // The roofline time of a workload op of that shape.
    for (const Block& b : w.blocks) {
      for (const Op& op : b.ops) {
        const std::optional<KernelShape> ks = kernel_shape(op, s.training.precision);
        if (!ks || !ks->same_as(k) || op.gemm_streams > 0) continue;
        const double us =
            (roofline->duration(op) - s.cluster.gpu.calibration.kernel_gap).to_seconds() * 1e6;
        t.rows.push_back({k, std::max(us * scale, 0.001), 1, 0, 0});
        goto next;
      }
    }
  next:;
  }
  return t;
}

TEST(MeasuredModel, CoverageOfAWholeIterationAndItsTime) {
  Scenario s = load(kScenario);
  const StatusOr<SimulationReport> base = simulate(s);
  ASSERT_TRUE(base.ok()) << base.status().message();
  EXPECT_EQ(base->compute_coverage.share(base->compute_coverage.roofline), 1.0);
  // Every kernel measured at 1.5 × the roofline: all of compute is measured, and slower.
  KernelTable t = table_for(s, 1.5);
  ASSERT_GT(t.rows.size(), 10u);
  s.compute.model = ComputeModelKind::kMeasured;
  s.compute.table = std::make_shared<const KernelTable>(t);
  const StatusOr<SimulationReport> slow = simulate(s);
  ASSERT_TRUE(slow.ok()) << slow.status().message();
  const ComputeCoverage& c = slow->compute_coverage;
  EXPECT_NEAR(c.share(c.measured), 1.0, 1e-12);
  // The GPU's kernel time grows by 1.5 (less the kernel gaps, which stay); the iteration less,
  // as this small job waits on the host's launches too.
  const double busy = slow->execution.stages[0].busy_compute.to_seconds() /
                      base->execution.stages[0].busy_compute.to_seconds();
  EXPECT_GT(busy, 1.4);
  EXPECT_LT(busy, 1.5);
  EXPECT_GT(slow->iteration_time_s, base->iteration_time_s);
  // Without the attention rows, their time is the roofline's and the shares still add up.
  KernelTable partial;
  for (const KernelMeasurement& km : t.rows) {
    if (km.shape.kind != KernelKind::kAttention) partial.rows.push_back(km);
  }
  ASSERT_LT(partial.rows.size(), t.rows.size());
  s.compute.table = std::make_shared<const KernelTable>(partial);
  const StatusOr<SimulationReport> part = simulate(s);
  ASSERT_TRUE(part.ok());
  const ComputeCoverage& p = part->compute_coverage;
  EXPECT_GT(p.share(p.roofline), 0.0);
  EXPECT_LT(p.share(p.roofline), 0.5);
  EXPECT_NEAR(p.share(p.measured) + p.share(p.interpolated) + p.share(p.roofline), 1.0, 1e-12);
}

// A file in a fresh temporary folder.
std::string write_temp(const std::string& name, const std::string& text) {
  char dir[] = "/tmp/preflight-kernels-XXXXXX";
  const char* d = mkdtemp(dir);
  EXPECT_NE(d, nullptr);
  const std::string path = std::string(d ? d : "/tmp") + "/" + name;
  std::ofstream(path) << text;
  return path;
}

TEST(ComputeSection, ReadsTheTableRelativeToTheScenarioAndChecksItsKeys) {
  const std::string table =
      write_temp("h100.csv", "# gpu: NVIDIA H100 80GB HBM3\n" + std::string(kHeader) +
                                 "gemm,g,bf16,8192,1280,8192,1,0,0,0,0,0,,,0,1234.5,10,0,0\n");
  const std::string dir = table.substr(0, table.rfind('/'));
  std::ofstream(dir + "/s.yaml") << kScenario
                                 << "compute: {model: measured, kernel_table: h100.csv}\n";
  StatusOr<Scenario> s = load_scenario(dir + "/s.yaml", {});
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->compute.model, ComputeModelKind::kMeasured);
  EXPECT_EQ(s->compute.kernel_table, table);
  ASSERT_NE(s->compute.table, nullptr);
  EXPECT_EQ(s->compute.table->rows.size(), 1u);
  EXPECT_TRUE(s->warnings.empty() || s->warnings[0].find("kernel_table") == std::string::npos);
  // Measured on another GPU: a warning.
  StatusOr<Scenario> b200 = load_scenario(dir + "/s.yaml", {"cluster.preset=dgx-b200"});
  ASSERT_TRUE(b200.ok()) << b200.status().message();
  bool warned = false;
  for (const std::string& w : b200->warnings) {
    warned |= w.find("compute.kernel_table was measured on NVIDIA H100") != std::string::npos;
  }
  EXPECT_TRUE(warned);

  auto error = [](const std::string& yaml) {
    StatusOr<Scenario> bad = load_scenario_text(std::string(kScenario) + yaml, "x.yaml", {});
    EXPECT_FALSE(bad.ok()) << yaml;
    return bad.ok() ? std::string() : bad.status().message();
  };
  EXPECT_NE(error("compute: {model: measured}\n").find("x.yaml: compute.kernel_table: missing key"),
            std::string::npos);
  EXPECT_NE(error("compute: {kernel_table: t.csv}\n")
                .find("compute.kernel_table: only used with compute.model: measured"),
            std::string::npos);
  EXPECT_NE(error("compute: {model: exact}\n").find("compute.model"), std::string::npos);
  EXPECT_NE(error("compute: {model: measured, kernel_table: /nonexistent/t.csv}\n")
                .find("compute.kernel_table: /nonexistent/t.csv: cannot read the kernel table"),
            std::string::npos);
  EXPECT_NE(error("compute: {model: measured, kernel_table: " + table + ", extra: 1}\n")
                .find("compute.extra"),
            std::string::npos);
}

std::string fixture(const std::string& name) {
  std::ifstream in(std::string(PREFLIGHT_SOURCE_DIR) + "/tests/data/" + name);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(KinetoTrace, KernelsOfAProfiledStepBecomeTableRows) {
  StatusOr<KinetoConversion> c = kineto_to_kernel_table(fixture("kineto_step.json"), "step.json");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->table.gpu, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(c->kernels, 9);
  EXPECT_EQ(c->unmatched_kernels, 1);
  EXPECT_EQ(c->shapeless_ops, 1);
  ASSERT_EQ(c->table.rows.size(), 5u);
  // Two aten::mm instances of one shape, one of them a GEMM and its split-K reduction: the
  // mean of 600 and (580 + 10).
  const KernelMeasurement& mm = c->table.rows[0];
  EXPECT_EQ(mm.shape.kind, KernelKind::kGemm);
  EXPECT_EQ(mm.shape.m, 8192);
  EXPECT_EQ(mm.shape.n, 6144);
  EXPECT_EQ(mm.shape.k, 4096);
  EXPECT_EQ(mm.shape.dtype, "bf16");
  EXPECT_DOUBLE_EQ(mm.time_us, 595);
  EXPECT_EQ(mm.reps, 2);
  // aten::addmm found through the launch's correlation: bias, [m,k], [k,n].
  const KernelMeasurement& addmm = c->table.rows[1];
  EXPECT_EQ(addmm.shape.m, 8192);
  EXPECT_EQ(addmm.shape.n, 4096);
  EXPECT_EQ(addmm.shape.k, 4096);
  EXPECT_DOUBLE_EQ(addmm.time_us, 400);
  // Flash attention forward and backward, causal, GQA 32/8.
  const KernelMeasurement& fwd = c->table.rows[2];
  EXPECT_EQ(fwd.shape.kind, KernelKind::kAttention);
  EXPECT_EQ(fwd.shape.heads, 32);
  EXPECT_EQ(fwd.shape.kv_heads, 8);
  EXPECT_EQ(fwd.shape.seq_q, 8192);
  EXPECT_EQ(fwd.shape.head_dim, 128);
  EXPECT_TRUE(fwd.shape.causal);
  EXPECT_FALSE(fwd.shape.backward);
  EXPECT_DOUBLE_EQ(fwd.time_us, 1400);
  EXPECT_TRUE(c->table.rows[3].shape.backward);
  EXPECT_DOUBLE_EQ(c->table.rows[3].time_us, 3600);
  // aten::add_ of two bf16 [8192, 4096] tensors: 2 inputs + 1 output of 64 MiB.
  const KernelMeasurement& add = c->table.rows[4];
  EXPECT_EQ(add.shape.kind, KernelKind::kMemory);
  EXPECT_EQ(add.shape.name, "aten::add_");
  EXPECT_EQ(add.shape.bytes, 3 * 8192 * 4096 * 2);

  // The table it writes reads back, and the measured model reproduces the profiled kernels.
  StatusOr<KernelTable> t = parse_kernel_table(write_kernel_table(c->table, true), "t.csv", true);
  ASSERT_TRUE(t.ok()) << t.status().message();
  const GpuConfig gpu = h100();
  const MeasuredModel m = model_of(*t, gpu);
  EXPECT_EQ(m.duration(gemm_op("qkv.fwd", 8192, 6144, 4096, 1, 2)),
            SimTime::seconds(595e-6) + gpu.calibration.kernel_gap);
  Op attention;
  attention.type = OpType::kAttention;
  attention.backward = true;
  attention.attention = {1, 32, 8, 128, 8192, 8192, true};
  EXPECT_EQ(m.duration(attention), SimTime::seconds(3600e-6) + gpu.calibration.kernel_gap);
}

TEST(KinetoTrace, BadTracesAreClearErrors) {
  auto error = [](const std::string& text) {
    StatusOr<KinetoConversion> c = kineto_to_kernel_table(text, "t.json");
    EXPECT_FALSE(c.ok()) << text;
    return c.ok() ? std::string() : c.status().message();
  };
  EXPECT_NE(error("{not json").find("t.json: expected a JSON Chrome trace"), std::string::npos);
  EXPECT_NE(error("[]").find("traceEvents"), std::string::npos);
  EXPECT_NE(error("{\"traceEvents\": 3}").find("traceEvents"), std::string::npos);
  EXPECT_NE(
      error("{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\"}]}")
          .find("expected GPU kernel events"),
      std::string::npos);
  // A kernel longer than a table may hold is a broken trace, named by its event; it once reached
  // the table and failed its own bounds when read back (fuzz/corpus/kineto/huge_dur.json).
  EXPECT_NE(error("{\"traceEvents\": [7, {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", "
                  "\"dur\": 1.7e90}]}")
                .find("t.json: traceEvents[1].dur: expected a kernel's duration in microseconds, "
                      "at most 3.6e+09"),
            std::string::npos);
  // One aten::mm op with `args` (and an odd start time) and its kernel, then odd events:
  // converted without error, it leaves no row and one shapeless op.
  auto shapeless = [](const std::string& args, const std::string& name) {
    StatusOr<KinetoConversion> c = kineto_to_kernel_table(
        "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\", "
        "\"ts\": \"x\", \"dur\": 10, \"args\": {\"External id\": 1, " +
            args +
            "}}, {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"dur\": 5, \"args\": "
            "{\"External id\": 1}}, 7, null]}",
        name);
    ASSERT_TRUE(c.ok()) << name << ": " << c.status().message();
    EXPECT_EQ(c->table.rows.size(), 0u) << name;
    EXPECT_EQ(c->shapeless_ops, 1) << name;
  };
  // A GEMM whose dimension passes the table's 2^40 bound is left shapeless, not written as a row
  // the table would refuse.
  shapeless(
      "\"Input Dims\": [[2199023255553, 64], [64, 64]], \"Input type\": [\"c10::BFloat16\", "
      "\"c10::BFloat16\"]",
      "huge.json");
  // Odd values inside events are skipped, never a crash.
  shapeless("\"Input Dims\": [[-1, 2], \"no\"]", "odd.json");
}

}  // namespace
}  // namespace preflight

namespace preflight {
namespace {

// The profiler's example list is a shapes list in the table format.
TEST(KernelTable, TheProfilersExampleShapesParse) {
  StatusOr<KernelTable> t = read_kernel_table(
      std::string(PREFLIGHT_SOURCE_DIR) + "/tools/kernel-profiler/example_shapes.csv", false);
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->rows.size(), 12u);
  for (const KernelMeasurement& km : t->rows) EXPECT_EQ(km.time_us, 0);
}

}  // namespace
}  // namespace preflight
