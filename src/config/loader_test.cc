#include "config/loader.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "config/presets.h"

namespace preflight {
namespace {

// The GEMM efficiency written in presets/gpus/A100-SXM4-80GB.yaml.
double a100_preset_gemm_efficiency() {
  StatusOr<YAML::Node> n = find_preset("gpus", "A100-SXM4-80GB");
  return n.ok() ? (*n)["calibration"]["gemm_efficiency"].as<double>() : -1;
}

using ::testing::HasSubstr;

// GPT-3 175B on 32 DGX A100 nodes (256 GPUs), TP 8 · PP 16, dp left to the loader (256 / 128 = 2).
const char* const kSmall = R"(
model:
  preset: gpt3-175b
cluster:
  preset: dgx-a100
  nodes: 32
training:
  global_batch: 64
parallelism:
  tp: 8
  pp: 16
)";

StatusOr<Scenario> load(const std::string& text, const std::vector<std::string>& overrides = {}) {
  return load_scenario_text(text, "test.yaml", overrides);
}

// The error of loading `text` with `overrides`, or OK when it (wrongly) loads.
Status load_error(const std::string& text, const std::vector<std::string>& overrides = {}) {
  StatusOr<Scenario> s = load(text, overrides);
  return s.ok() ? Status() : s.status();
}

// Every user-facing load error: InvalidArgument, one line, each of `parts` in the message.
void expect_user_error(const Status& s, const std::vector<std::string>& parts) {
  ASSERT_FALSE(s.ok()) << "loaded without error; expected: " << ::testing::PrintToString(parts);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.message();
  EXPECT_EQ(s.message().find('\n'), std::string::npos) << "not one line: " << s.message();
  for (const std::string& p : parts) EXPECT_THAT(s.message(), HasSubstr(p));
}

// ---------------------------------------------------------------------------------------------
// What YAML parsers let through

TEST(LoadScenarioText, DuplicateKeysAreErrorsWithBothLines) {
  expect_user_error(load_error(std::string(kSmall) + "model:\n  preset: gpt3-13b\n"),
                    {"test.yaml: model: duplicate key at line 12 (first at line 2)"});
  expect_user_error(load_error("model:\n  preset: gpt3-13b\n  preset: gpt3-175b\n"),
                    {"model.preset: duplicate key at line 3 (first at line 2)"});
}

// An alias inside the node it names makes yaml-cpp build a cycle; every walk of the tree
// would recurse until the stack ends (found by the scenario fuzzer).
TEST(LoadScenarioText, AnAliasInsideItsOwnAnchorIsAnErrorNotARecursion) {
  expect_user_error(load_error("model: &m {preset: gpt3-13b, <<: *m}\n"),
                    {"test.yaml: model.<<: a YAML alias names a node that contains it"});
  expect_user_error(load_error("model: &s [1, *s]\n"),
                    {"test.yaml: model[1]: a YAML alias names a node that contains it"});
  expect_user_error(load_error(std::string(kSmall), {"model.extra=&x [*x]"}),
                    {"--set: model.extra[0]: a YAML alias names a node that contains it"});
  // An alias to a sibling is a tree, not a cycle, and passes this check.
  const std::string sibling = std::string(kSmall) + "x: &a {k: 1}\ny: *a\n";
  const Status st = load_error(sibling);
  EXPECT_EQ(st.message().find("alias names"), std::string::npos) << st.message();
}

TEST(LoadScenarioText, NestingPastSixtyFourLevelsIsAnError) {
  std::string deep = "model: ";
  for (int i = 0; i < 70; ++i) deep += "[";
  for (int i = 0; i < 70; ++i) deep += "]";
  expect_user_error(load_error(deep + "\n"), {"nested more than 64 levels deep"});
}

TEST(LoadScenarioText, TextThatIsNotUtf8IsRejectedWhereItIs) {
  expect_user_error(
      load_error(std::string(kSmall) + "simulation:\n  seed: 1\n", {"model.name=ab\xff"}),
      {"--set: model.name: not UTF-8 text (byte 0xFF at offset 2)"});
  expect_user_error(load_error("model:\n  name: \"\xc3\x28\"\n"),
                    {"test.yaml: model.name: not UTF-8 text (byte 0xC3 at offset 0)"});
  EXPECT_TRUE(load(kSmall, {"model.name=caf\xc3\xa9"}).ok());  // UTF-8 is fine
}

TEST(LoadScenarioText, ATabInTheIndentationIsNamed) {
  expect_user_error(load_error("model:\n\tpreset: gpt3-175b\n"),
                    {"malformed YAML at line 2",
                     "(a tab in the indentation of line 2: YAML indents with spaces)"});
  // A tab inside a value is not indentation.
  const Status s = load_error("model:\n  preset: [gpt3,\tx\n");
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), ::testing::Not(HasSubstr("tab")));
}

TEST(LoadScenarioText, ErrorsEscapeControlBytesAndShortenHugeValues) {
  const Status esc = load_error("model:\n  preset: \"gpt\x1b[2Jx\"\ncluster: {preset: dgx-a100}\n");
  expect_user_error(esc, {"unknown model preset 'gpt\\x1B[2Jx'"});
  EXPECT_EQ(esc.message().find('\x1b'), std::string::npos);
  const Status block =
      load_error("model:\n  preset: |\n    a\n    b\ncluster: {preset: dgx-a100}\n");
  expect_user_error(block, {"unknown model preset 'a\\nb\\n'"});
  const Status big = load_error("model:\n  preset: " + std::string(1'000'000, 'x') +
                                "\ncluster: {preset: dgx-a100}\n");
  expect_user_error(big, {"unknown model preset 'xxx", " bytes)..."});
  EXPECT_LT(big.message().size(), 2100u);
}

TEST(LoadScenarioText, UnknownNamesSuggestTheClosest) {
  expect_user_error(load_error(kSmall, {"parallelism.tpp=8"}),
                    {"parallelism.tpp: unknown key (did you mean 'tp' or 'pp' or 'vpp'?)"});
  expect_user_error(load_error(kSmall, {"model.preset=llama3-7b"}), {"(did you mean 'llama"});
  expect_user_error(load_error(kSmall, {"cluster.gpu=H100"}),
                    {"unknown gpu preset 'H100' (did you mean 'H100-SXM5-80GB'?)"});
  expect_user_error(load_error(kSmall, {"cluster.nic_bandwidth=400gbps"}),
                    {"unknown unit 'gbps' (did you mean 'Gbps'?)"});
  expect_user_error(load_error(kSmall, {"parallelism.schedule=interleavd"}),
                    {"(did you mean 'interleaved'?)"});
}

// ---------------------------------------------------------------------------------------------
// Scenarios that load

TEST(LoadScenarioText, EmptyTextIsTheDefaultScenario) {
  // presets/scenarios/default.yaml: GPT-3 175B on 128 DGX A100 nodes, TP 8 · PP 16 · DP 8.
  StatusOr<Scenario> s = load("");
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->source, "test.yaml");
  EXPECT_EQ(s->model.name, "gpt3-175b");
  EXPECT_EQ(s->model.layers, 96);
  EXPECT_EQ(s->model.hidden, 12288);
  EXPECT_EQ(s->cluster.name, "dgx-a100");
  EXPECT_EQ(s->cluster.gpu.name, "A100-SXM4-80GB");
  EXPECT_EQ(s->cluster.nodes, 128);
  EXPECT_EQ(s->cluster.total_gpus(), 1024);
  EXPECT_EQ(s->parallelism.tp, 8);
  EXPECT_EQ(s->parallelism.pp, 16);
  EXPECT_EQ(s->parallelism.dp, 8);
  EXPECT_TRUE(s->parallelism.sequence_parallel);
  EXPECT_EQ(s->parallelism.recompute, Recompute::kNone);
  EXPECT_EQ(s->parallelism.schedule, Schedule::kOneFOneB);
  EXPECT_TRUE(s->parallelism.distributed_optimizer);
  EXPECT_EQ(s->training.seq_len, 2048);
  EXPECT_EQ(s->training.global_batch, 1536);
  EXPECT_EQ(s->training.precision, Precision::kBf16);
  // 1536 / (micro-batch 1 · dp 8) = 192 micro-batches.
  EXPECT_EQ(s->num_microbatches(), 192);
  EXPECT_EQ(s->simulation.network, "analytical");
}

TEST(LoadScenario, EmptyPathIsTheDefaultScenario) {
  StatusOr<Scenario> s = load_scenario("", {});
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->source, "<default scenario>");
  EXPECT_EQ(s->cluster.total_gpus(), 1024);
}

TEST(LoadScenario, MissingFileIsNotFound) {
  StatusOr<Scenario> s = load_scenario("/nonexistent/scenario.yaml", {});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(s.status().message(), HasSubstr("/nonexistent/scenario.yaml"));
}

TEST(LoadScenario, EveryExampleLoads) {
  for (const char* name : {"gpt3-13b-one-node", "gpt3-175b-a100", "llama3-70b-h100"}) {
    const std::string path = std::string(PREFLIGHT_SOURCE_DIR) + "/examples/" + name + ".yaml";
    StatusOr<Scenario> s = load_scenario(path, {});
    ASSERT_TRUE(s.ok()) << path << ": " << s.status().message();
    EXPECT_EQ(s->source, path);
  }
}

TEST(LoadScenarioText, DerivesDpFromGpuCount) {
  // dp = GPUs / (tp · pp) = 256 / (8 · 16) = 2; 64 / (1 · 2) = 32 micro-batches.
  StatusOr<Scenario> s = load(kSmall);
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->parallelism.dp, 2);
  EXPECT_EQ(s->num_microbatches(), 32);
  // Defaults: seq_len from the model, micro-batch 1, bf16, 1F1B.
  EXPECT_EQ(s->training.seq_len, 2048);
  EXPECT_EQ(s->training.micro_batch, 1);
  EXPECT_EQ(s->training.precision, Precision::kBf16);
  EXPECT_EQ(s->parallelism.schedule, Schedule::kOneFOneB);
  EXPECT_EQ(s->parallelism.vpp, 1);
}

TEST(LoadScenarioText, DpUnderivableWhenTpPpDoNotDivideGpus) {
  // 256 GPUs, tp 8 · pp 12 = 96 does not divide 256.
  expect_user_error(load_error(kSmall, {"parallelism.pp=12"}),
                    {"test.yaml: parallelism.dp: auto: 256 GPUs is not a multiple of "
                     "tp·cp·pp = 96 (tp 8, cp 1, pp 12)"});
}

TEST(LoadScenarioText, DpAutoIsDpLeftOut) {
  // dp: auto = 256 GPUs / (tp 8 · pp 16) = 2, as when dp is absent.
  StatusOr<Scenario> s = load(kSmall, {"parallelism.dp=auto"});
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->parallelism.dp, 2);
  EXPECT_EQ(s->num_microbatches(), 32);  // 64 / (1 · 2)
}

TEST(LoadScenarioText, DpAutoFollowsNodesTpAndCp) {
  // 1024 GPUs / (tp 8 · pp 16) = 8; 2048 GPUs: 16; tp 4: 16; cp 2: 4.
  const char* const kAuto = R"(
model: {preset: gpt3-175b}
cluster: {preset: dgx-a100, nodes: 128}
training: {global_batch: 1536}
parallelism: {tp: 8, pp: 16, dp: auto}
)";
  const std::vector<std::pair<std::string, int>> cases = {{"cluster.nodes=128", 8},
                                                          {"cluster.nodes=256", 16},
                                                          {"parallelism.tp=4", 16},
                                                          {"parallelism.cp=2", 4}};
  for (const auto& [set, dp] : cases) {
    StatusOr<Scenario> s = load(kAuto, {set});
    ASSERT_TRUE(s.ok()) << set << ": " << s.status().message();
    EXPECT_EQ(s->parallelism.dp, dp) << set;
  }
}

TEST(LoadScenarioText, DpAutoNotDividingTheGpuCountNamesTheNumbers) {
  // 1024 GPUs over tp 8 · cp 1 · pp 6 = 48: 1024 / 48 is not whole. The file's own value and a
  // --set one read the same.
  const std::string file = std::string(kSmall) + "  dp: auto\n";
  expect_user_error(load_error(file, {"cluster.nodes=128", "parallelism.pp=6"}),
                    {"test.yaml: parallelism.dp: auto: 1024 GPUs is not a multiple of "
                     "tp·cp·pp = 48 (tp 8, cp 1, pp 6)"});
  expect_user_error(load_error("", {"parallelism.dp=auto", "parallelism.pp=6"}),
                    {"test.yaml: parallelism.dp: auto: 1024 GPUs is not a multiple of "
                     "tp·cp·pp = 48 (tp 8, cp 1, pp 6)"});
  // cp counts: 256 GPUs over tp 8 · cp 3 · pp 8 = 192.
  expect_user_error(load_error(kSmall, {"parallelism.pp=8", "parallelism.cp=3"}),
                    {"256 GPUs is not a multiple of tp·cp·pp = 192 (tp 8, cp 3, pp 8)"});
}

TEST(LoadScenarioText, DpAutoGlobalBatchErrorNamesTheResolvedDp) {
  // dp: auto = 256 / (tp 8 · pp 4) = 8; 60 is not a multiple of micro_batch 1 · dp 8.
  expect_user_error(
      load_error(kSmall, {"parallelism.dp=auto", "parallelism.pp=4", "training.global_batch=60"}),
      {"test.yaml: training.global_batch: 60", "micro_batch × dp = 1 × 8 = 8"});
}

TEST(LoadScenarioText, DpNeitherACountNorAuto) {
  for (const char* v : {"parallelism.dp=0", "parallelism.dp=Auto", "parallelism.dp=two"}) {
    expect_user_error(load_error(kSmall, {v}),
                      {"test.yaml: parallelism.dp: '", "': expected an integer >= 1 or auto"});
  }
}

TEST(LoadScenarioText, InlineFieldsOverrideModelPreset) {
  StatusOr<Scenario> s = load(R"(
model:
  preset: gpt3-175b
  layers: 48
cluster: {preset: dgx-a100, nodes: 32}
training: {global_batch: 64}
parallelism: {tp: 8, pp: 16}
)");
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->model.layers, 48);     // inline wins
  EXPECT_EQ(s->model.hidden, 12288);  // the rest from the preset
  EXPECT_EQ(s->model.heads, 96);
  EXPECT_EQ(s->model.name, "gpt3-175b");
}

TEST(LoadScenarioText, InlineModelWithoutPresetGetsDerivedDefaults) {
  StatusOr<Scenario> s = load(R"(
model: {layers: 4, hidden: 1024, heads: 16, vocab: 32000}
cluster: {preset: dgx-a100}
training: {global_batch: 8}
parallelism: {tp: 2, pp: 2}
)");
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->model.name, "custom");
  EXPECT_EQ(s->model.kv_heads, 16);      // = heads
  EXPECT_EQ(s->model.ffn_hidden, 4096);  // 4 · hidden
  EXPECT_EQ(s->parallelism.dp, 2);       // 8 / (2 · 2)
}

TEST(LoadScenarioText, GpuPresetNamedInCluster) {
  StatusOr<Scenario> s = load(R"(
model: {preset: gpt3-175b}
cluster: {preset: dgx-a100, nodes: 32, gpu: H100-SXM5-80GB}
training: {global_batch: 64, precision: fp8}
parallelism: {tp: 8, pp: 16}
)");
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->cluster.name, "dgx-a100");
  EXPECT_EQ(s->cluster.gpu.name, "H100-SXM5-80GB");
  EXPECT_EQ(s->training.precision, Precision::kFp8);
  // The cluster's NVLink bandwidth follows its GPU: 450 GB/s for H100.
  EXPECT_DOUBLE_EQ(s->cluster.nvlink_bandwidth.gigabytes_per_second(), 450.0);
}

TEST(LoadScenarioText, ClusterGpusGivesNodeCount) {
  // 256 GPUs / 8 per node = 32 nodes, overriding the preset's default of 1 node.
  StatusOr<Scenario> s = load(R"(
model: {preset: gpt3-175b}
cluster: {preset: dgx-a100, gpus: 256}
training: {global_batch: 64}
parallelism: {tp: 8, pp: 16}
)");
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->cluster.nodes, 32);
  EXPECT_EQ(s->cluster.total_gpus(), 256);
  EXPECT_EQ(s->parallelism.dp, 2);
}

TEST(LoadScenarioText, ClusterGpusAgreeingWithNodes) {
  StatusOr<Scenario> s = load(kSmall, {"cluster.gpus=256"});
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->cluster.nodes, 32);
}

TEST(LoadScenarioText, ClusterGpusContradictingNodes) {
  // In one file both are given and disagree: an error (a --set of one replaces the other).
  const std::string both = std::string(kSmall).replace(std::string(kSmall).find("  nodes: 32"), 11,
                                                       "  nodes: 32\n  gpus: 128");
  expect_user_error(load_error(both),
                    {"test.yaml: cluster.gpus: 128", "contradicts cluster.nodes (32"});
}

TEST(LoadScenarioText, SetGpusOrNodesReplacesTheOther) {
  // The file says 32 nodes; --set cluster.gpus=128 resizes it to 16 nodes, and the later of
  // the two --set keys wins.
  StatusOr<Scenario> s = load(kSmall, {"cluster.gpus=128", "parallelism.dp=auto"});
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->cluster.nodes, 16);
  s = load(kSmall, {"cluster.gpus=64", "cluster.nodes=16"});
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->cluster.total_gpus(), 128);
  // The default scenario's dp is auto, so resizing it keeps tp and pp.
  s = load("", {"cluster.gpus=2048"});
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->parallelism.dp, 16);
  expect_user_error(load_error("", {"cluster.gpus=32"}),
                    {"one model replica needs 128 GPUs; use more GPUs or a smaller tp·pp"});
}

TEST(LoadScenarioText, ClusterGpusNotAMultipleOfGpusPerNode) {
  expect_user_error(
      load_error(kSmall, {"cluster.gpus=12"}),
      {"test.yaml: cluster.gpus: 12", "expected a multiple of cluster.gpus_per_node (8)"});
}

// ---------------------------------------------------------------------------------------------
// --set overrides

TEST(LoadScenarioText, SetOverridesScalars) {
  // tp 4 · pp 16 · dp 16 = 1024.
  StatusOr<Scenario> s = load("", {"parallelism.tp=4", "parallelism.dp=16"});
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->parallelism.tp, 4);
  EXPECT_EQ(s->parallelism.dp, 16);
  EXPECT_EQ(s->parallelism.pp, 16);
}

TEST(LoadScenarioText, LaterSetWins) {
  StatusOr<Scenario> s = load(kSmall, {"parallelism.tp=4", "parallelism.tp=8"});
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->parallelism.tp, 8);
}

TEST(LoadScenarioText, SetCreatesAbsentSection) {
  StatusOr<Scenario> s = load(kSmall, {"simulation.seed=42"});
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->simulation.seed, 42u);
}

TEST(LoadScenarioText, SetReachesIntoGpuNamedByScalar) {
  // `gpu: A100-SXM4-80GB` becomes {preset: A100-SXM4-80GB, calibration: {launch_overhead: 33us}}.
  StatusOr<Scenario> s = load(R"(
model: {preset: gpt3-175b}
cluster: {preset: dgx-a100, nodes: 32, gpu: A100-SXM4-80GB}
training: {global_batch: 64}
parallelism: {tp: 8, pp: 16}
)",
                              {"cluster.gpu.calibration.launch_overhead=33us"});
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->cluster.gpu.name, "A100-SXM4-80GB");
  EXPECT_EQ(s->cluster.gpu.calibration.launch_overhead, SimTime::microseconds(33));
  // The rest of the GPU preset is kept.
  EXPECT_DOUBLE_EQ(s->cluster.gpu.calibration.gemm_efficiency, a100_preset_gemm_efficiency());
  EXPECT_EQ(s->cluster.gpu.sm_count, 108);
}

TEST(LoadScenarioText, SpecialFunctionUnitsAndClockOfAGpu) {
  // The architecture's 16 exponentials per SM and clock unless the GPU says otherwise (Blackwell
  // Ultra's 32), the clock derived from the peak unless given; each bounded.
  StatusOr<Scenario> a = load("");
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_EQ(a->cluster.gpu.sfu_exp_per_clock, 16);
  EXPECT_EQ(a->cluster.gpu.sm_clock_ghz, 0);
  StatusOr<Scenario> b =
      load("", {"cluster.gpu.sfu_exp_per_clock=32", "cluster.gpu.sm_clock_ghz=1.41"});
  ASSERT_TRUE(b.ok()) << b.status().message();
  EXPECT_DOUBLE_EQ(b->cluster.gpu.exp_per_second(), 108 * 32 * 1.41e9);
  for (const char* bad : {"cluster.gpu.sfu_exp_per_clock=0", "cluster.gpu.sfu_exp_per_clock=129",
                          "cluster.gpu.sm_clock_ghz=0.1", "cluster.gpu.sm_clock_ghz=9"}) {
    StatusOr<Scenario> c = load("", {bad});
    ASSERT_FALSE(c.ok()) << bad;
    const std::string key = std::string(bad).substr(12, std::string(bad).find('=') - 12);
    EXPECT_NE(c.status().message().find(key), std::string::npos) << c.status().message();
  }
}

TEST(LoadScenarioText, Nvfp4FractionIsACalibratedConstantInItsBounds) {
  StatusOr<Scenario> a = load("");
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_DOUBLE_EQ(a->cluster.gpu.calibration.nvfp4_efficiency, 0.90);
  StatusOr<Scenario> b = load("", {"cluster.gpu.calibration.nvfp4_efficiency=0.6"});
  ASSERT_TRUE(b.ok()) << b.status().message();
  EXPECT_DOUBLE_EQ(b->cluster.gpu.calibration.nvfp4_efficiency, 0.6);
  for (const char* bad : {"cluster.gpu.calibration.nvfp4_efficiency=0",
                          "cluster.gpu.calibration.nvfp4_efficiency=1.5"}) {
    StatusOr<Scenario> c = load("", {bad});
    ASSERT_FALSE(c.ok()) << bad;
    EXPECT_NE(c.status().message().find("nvfp4_efficiency"), std::string::npos)
        << c.status().message();
  }
}

TEST(LoadScenarioText, ScopedCudaGraphsNameTheirModules) {
  StatusOr<Scenario> s = load("", {"training.cuda_graphs=scoped",
                                   "training.cuda_graph_scope=[attn,moe_router,moe_preprocess]"});
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_FALSE(s->training.cuda_graphs);
  EXPECT_EQ(s->training.cuda_graph_scope, kGraphAttn | kGraphMoeRouter | kGraphMoePreprocess);
  const std::pair<std::vector<std::string>, const char*> bad[] = {
      {{"training.cuda_graphs=scoped"}, "missing key"},
      {{"training.cuda_graph_scope=[attn]"}, "expected only with training.cuda_graphs: scoped"},
      {{"training.cuda_graphs=full", "training.cuda_graph_scope=[attn]"}, "scoped"},
      {{"training.cuda_graphs=scoped", "training.cuda_graph_scope=[attn,mamba]"},
       "has no Mamba-2 layers"},
      {{"training.cuda_graphs=scoped", "training.cuda_graph_scope=[attn,moe]"}, "'moe'"},
      {{"training.cuda_graphs=scoped", "training.cuda_graph_scope=[]"}, "non-empty list"},
      {{"training.cuda_graphs=scoped", "training.cuda_graph_scope=attn"}, "non-empty list"},
  };
  for (const auto& [keys, want] : bad) {
    StatusOr<Scenario> b = load("", keys);
    ASSERT_FALSE(b.ok()) << keys.back();
    EXPECT_NE(b.status().message().find("training.cuda_graph_scope"), std::string::npos)
        << b.status().message();
    EXPECT_NE(b.status().message().find(want), std::string::npos) << b.status().message();
  }
  // A hybrid's Mamba-2 mixers may be captured (Megatron-Core's cuda_graph_scope mamba).
  StatusOr<Scenario> h = load("", {"model.preset=nemotron3-nano", "training.cuda_graphs=scoped",
                                   "training.cuda_graph_scope=[attn,mamba]"});
  ASSERT_TRUE(h.ok()) << h.status().message();
  EXPECT_EQ(h->training.cuda_graph_scope, kGraphAttn | kGraphMamba);
}

TEST(LoadScenarioText, NcclTunerPluginIsAClusterChoice) {
  StatusOr<Scenario> none = load("", {});
  ASSERT_TRUE(none.ok()) << none.status().message();
  EXPECT_EQ(none->cluster.nccl_tuner, "");
  StatusOr<Scenario> p6 = load("", {"cluster.preset=aws-p6-b200", "cluster.nodes=16"});
  ASSERT_TRUE(p6.ok()) << p6.status().message();
  EXPECT_EQ(p6->cluster.nccl_tuner, "aws-ofi-p6");
  StatusOr<Scenario> off =
      load("", {"cluster.preset=aws-p6-b200", "cluster.nodes=16", "cluster.nccl_tuner=none"});
  ASSERT_TRUE(off.ok()) << off.status().message();
  EXPECT_EQ(off->cluster.nccl_tuner, "");
  StatusOr<Scenario> bad = load("", {"cluster.nccl_tuner=aws-ofi-p5"});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("cluster.nccl_tuner: 'aws-ofi-p5': expected one of"),
            std::string::npos)
      << bad.status().message();
}

TEST(LoadScenarioText, SetReachesIntoGpuOfClusterPreset) {
  // The default scenario names only `cluster.preset: dgx-a100`; its GPU comes from the preset.
  StatusOr<Scenario> s = load("", {"cluster.gpu.calibration.launch_overhead=33us"});
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->cluster.gpu.name, "A100-SXM4-80GB");
  EXPECT_EQ(s->cluster.gpu.calibration.launch_overhead, SimTime::microseconds(33));
  EXPECT_DOUBLE_EQ(s->cluster.gpu.calibration.gemm_efficiency, a100_preset_gemm_efficiency());
  EXPECT_EQ(s->cluster.gpu.sm_count, 108);
}

TEST(LoadScenarioText, RemovedNvlinkBusbwNamesWhatReplacedIt) {
  // In-node bandwidth has one source, NCCL's topology model (network/nvlink.h): the old
  // measured all-reduce busBw is refused, and the message names the keys that set it now.
  expect_user_error(
      load_error("", {"cluster.gpu.calibration.nvlink_busbw=300GB/s"}),
      {"cluster.gpu.calibration.nvlink_busbw", "removed", "nvlinks", "cluster.nvlink_bandwidth"});
}

TEST(LoadScenarioText, SetReplacesGpuPreset) {
  StatusOr<Scenario> s = load("", {"cluster.gpu=H100-SXM5-80GB"});
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->cluster.gpu.name, "H100-SXM5-80GB");
  EXPECT_EQ(s->cluster.gpu.sm_count, 132);
}

TEST(LoadScenarioText, SetValueIsCheckedLikeFileValue) {
  expect_user_error(load_error(kSmall, {"parallelism.tp=abc"}),
                    {"test.yaml: parallelism.tp: 'abc': expected an integer"});
}

TEST(LoadScenarioText, SetWithoutEqualsIsAnError) {
  expect_user_error(load_error(kSmall, {"parallelism.tp"}),
                    {"--set parallelism.tp", "expected key.path=value"});
  expect_user_error(load_error(kSmall, {"=4"}), {"expected key.path=value"});
}

TEST(LoadScenarioText, SetWithEmptyKeyIsAnError) {
  expect_user_error(load_error(kSmall, {"parallelism..tp=4"}), {"--set", "empty key"});
}

// ---------------------------------------------------------------------------------------------
// Bad input: each error is one line naming the file, the key path and what was expected.

TEST(LoadScenarioText, UnknownModelPreset) {
  expect_user_error(load_error("model: {preset: gpt9}\ncluster: {preset: dgx-a100}\n"),
                    {"test.yaml: model.preset: unknown model preset 'gpt9'", "gpt3-175b"});
}

TEST(LoadScenarioText, UnknownPresetViaSet) {
  expect_user_error(load_error("", {"model.preset=gpt9"}),
                    {"test.yaml: model.preset", "'gpt9'", "known:"});
}

TEST(LoadScenarioText, UnknownGpuPreset) {
  expect_user_error(load_error(kSmall, {"cluster.gpu=A200"}),
                    {"test.yaml: cluster.gpu.preset: unknown gpu preset 'A200'", "A100-SXM4-80GB"});
}

TEST(LoadScenarioText, MissingGlobalBatch) {
  expect_user_error(load_error(R"(
model: {preset: gpt3-175b}
cluster: {preset: dgx-a100, nodes: 32}
training: {seq_len: 2048}
parallelism: {tp: 8, pp: 16}
)"),
                    {"test.yaml: training.global_batch: missing key", "expected an integer"});
}

TEST(LoadScenarioText, MissingSections) {
  expect_user_error(load_error("cluster: {preset: dgx-a100}\n"),
                    {"test.yaml: model: missing section", "expected a preset"});
  expect_user_error(load_error("model: {preset: gpt3-175b}\n"),
                    {"test.yaml: cluster: missing section", "expected a preset"});
}

TEST(LoadScenarioText, MissingModelField) {
  expect_user_error(load_error(R"(
model: {layers: 4, hidden: 1024, vocab: 32000}
cluster: {preset: dgx-a100}
training: {global_batch: 8}
)"),
                    {"test.yaml: model.heads: missing key"});
}

TEST(LoadScenarioText, UnitlessSize) {
  expect_user_error(load_error(kSmall, {"cluster.nic_bandwidth=400"}),
                    {"test.yaml: cluster.nic_bandwidth: '400' has no unit",
                     "expected a bandwidth with a unit", "Gbps"});
}

TEST(LoadScenarioText, HostOverheadFactorIsBounded) {
  // A host 10x faster than an x86 DGX host or 20x slower is no host Preflight knows.
  for (const char* bad : {"cluster.host_overhead_factor=0.05", "cluster.host_overhead_factor=25",
                          "cluster.host_overhead_factor=-1"}) {
    expect_user_error(load_error(kSmall, {bad}), {"cluster.host_overhead_factor"});
  }
  expect_user_error(load_error(kSmall, {"cluster.host_overhead_factor=fast"}),
                    {"cluster.host_overhead_factor"});
  StatusOr<Scenario> ok = load(kSmall, {"cluster.host_overhead_factor=2"});
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_EQ(ok->cluster.host_overhead_factor, 2.0);
}

TEST(LoadScenarioText, MoeRouterOpsAreAStackChoice) {
  StatusOr<Scenario> s = load(kSmall, {});
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->training.stack.moe_router, MoeRouterOps::kFused);  // the megatron-core preset
  s = load(kSmall, {"training.stack.moe_router=unfused"});
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->training.stack.moe_router, MoeRouterOps::kUnfused);
  s = load(kSmall, {"training.stack=pytorch-fsdp"});
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->training.stack.moe_router, MoeRouterOps::kNone);
  expect_user_error(load_error(kSmall, {"training.stack.moe_router=sometimes"}),
                    {"training.stack.moe_router", "fused"});
}

TEST(LoadScenarioText, UnitlessSizeInFile) {
  expect_user_error(load_error(R"(
model: {preset: gpt3-175b}
cluster: {preset: dgx-a100, nodes: 32, nic_bandwidth: 400}
training: {global_batch: 64}
parallelism: {tp: 8, pp: 16}
)"),
                    {"test.yaml: cluster.nic_bandwidth: '400' has no unit"});
}

TEST(LoadScenarioText, UnitlessGpuField) {
  expect_user_error(
      load_error(kSmall, {"cluster.gpu.hbm_capacity=80"}),
      {"test.yaml: cluster.gpu.hbm_capacity: '80' has no unit", "expected a size with a unit"});
}

TEST(LoadScenarioText, TpNotDividingHeads) {
  // 7 GPUs so that tp 7 · pp 1 · dp 1 matches the cluster; gpt3-175b has 96 heads.
  expect_user_error(load_error(R"(
model: {preset: gpt3-175b}
cluster: {preset: dgx-a100, gpus_per_node: 7}
training: {global_batch: 7}
parallelism: {tp: 7, pp: 1}
)"),
                    {"test.yaml: parallelism.tp: 7: expected a divisor of model.heads (96)"});
}

TEST(LoadScenarioText, GpusNotEqualToTpPpDp) {
  // Explicit dp 4: 8 · 16 · 4 = 512 ≠ 1024.
  expect_user_error(load_error("", {"parallelism.dp=4"}),
                    {"test.yaml: parallelism: tp·pp·dp = 8·16·4 = 512",
                     "expected the cluster's GPU count, 1024 (128 nodes × 8), or dp: auto"});
  // An explicit dp stays fixed when the GPU count changes: 8 · 16 · 8 = 1024 ≠ 2048.
  expect_user_error(load_error("", {"parallelism.dp=8", "cluster.nodes=256"}),
                    {"test.yaml: parallelism: tp·pp·dp = 8·16·8 = 1024",
                     "expected the cluster's GPU count, 2048"});
}

TEST(LoadScenarioText, GlobalBatchNotDivisibleByMicroBatchTimesDp) {
  // 1000 is not a multiple of micro_batch 2 · dp 8 = 16.
  expect_user_error(load_error("", {"training.global_batch=1000", "training.micro_batch=2"}),
                    {"test.yaml: training.global_batch: 1000",
                     "expected a multiple of micro_batch × dp = 2 × 8 = 16"});
}

TEST(LoadScenarioText, MalformedYaml) {
  expect_user_error(load_error("model: [unclosed"), {"test.yaml: malformed YAML at line 1"});
}

TEST(LoadScenarioText, MalformedYamlReportsLine) {
  expect_user_error(load_error("model:\n  preset: gpt3-175b\n cluster: x\n  - y\n"),
                    {"test.yaml: malformed YAML at line "});
}

TEST(LoadScenarioText, RootNotAMapping) {
  expect_user_error(load_error("- model\n- cluster\n"),
                    {"test.yaml: expected a mapping with sections model, cluster"});
}

TEST(LoadScenarioText, UnknownModelKey) {
  expect_user_error(load_error("model: {preset: gpt3-175b, hiddn: 1024}\n"
                               "cluster: {preset: dgx-a100}\n"),
                    {"test.yaml: model.hiddn: unknown key", "hidden"});
}

TEST(LoadScenarioText, UnknownGpuKey) {
  expect_user_error(load_error(kSmall, {"cluster.gpu.sm_cnt=100"}),
                    {"test.yaml: cluster.gpu.sm_cnt: unknown key", "sm_count"});
}

TEST(LoadScenarioText, UnknownSection) {
  expect_user_error(load_error(std::string(kSmall) + "modle: {layers: 4}\n"),
                    {"test.yaml: modle: unknown section", "expected model, cluster"});
}

TEST(LoadScenarioText, WrongTypes) {
  expect_user_error(load_error(kSmall, {"parallelism.tp=abc"}),
                    {"test.yaml: parallelism.tp: 'abc': expected an integer"});
  expect_user_error(load_error(kSmall, {"parallelism.tp=0"}),
                    {"test.yaml: parallelism.tp: '0': expected an integer >= 1"});
  expect_user_error(load_error(kSmall, {"parallelism.sequence_parallel=maybe"}),
                    {"test.yaml: parallelism.sequence_parallel: 'maybe': expected true or false"});
  expect_user_error(load_error(kSmall, {"parallelism.tp=[1, 2]"}),
                    {"test.yaml: parallelism.tp: expected a single value, found a list"});
}

TEST(LoadScenarioText, WrongTypeInFile) {
  expect_user_error(load_error(R"(
model: {preset: gpt3-175b}
cluster: {preset: dgx-a100, nodes: 32}
training: {global_batch: 64}
parallelism: {tp: abc, pp: 16}
)"),
                    {"test.yaml: parallelism.tp: 'abc': expected an integer"});
}

TEST(LoadScenarioText, SectionThatIsNotAMapping) {
  expect_user_error(load_error(kSmall, {"training=5"}),
                    {"test.yaml: training: expected a mapping"});
}

TEST(LoadScenarioText, BadChoice) {
  expect_user_error(
      load_error(kSmall, {"parallelism.schedule=zigzag"}),
      {"test.yaml: parallelism.schedule: 'zigzag'", "expected one of gpipe|1f1b|interleaved"});
  expect_user_error(load_error(kSmall, {"training.precision=fp4"}),
                    {"test.yaml: training.precision: 'fp4'", "expected one of fp16|bf16|fp8"});
}

TEST(LoadScenarioText, OutOfRangeEfficiency) {
  expect_user_error(load_error(kSmall, {"cluster.nic_efficiency=1.5"}),
                    {"test.yaml: cluster.nic_efficiency: '1.5'", "expected a number in [0.01, 1]"});
}

TEST(LoadScenarioText, VppWithoutInterleavedSchedule) {
  // The default scenario says `schedule: 1f1b`; 96 layers / (16 · 2) is whole, so only the
  // schedule rule is broken.
  expect_user_error(load_error("", {"parallelism.vpp=2"}),
                    {"test.yaml: parallelism.vpp: 2", "schedule: interleaved"});
}

TEST(LoadScenarioText, VppImpliesInterleavedWhenScheduleAbsent) {
  StatusOr<Scenario> s = load(kSmall, {"parallelism.vpp=2"});
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->parallelism.vpp, 2);
  EXPECT_EQ(s->parallelism.schedule, Schedule::kInterleaved);
}

TEST(LoadScenarioText, InterleavedNeedsMicroBatchesMultipleOfPp) {
  // 1000 / (1 · 8) = 125 micro-batches, not a multiple of pp 16.
  expect_user_error(load_error("", {"parallelism.schedule=interleaved", "parallelism.vpp=2",
                                    "training.global_batch=1000"}),
                    {"test.yaml: parallelism.schedule: interleaved", "micro-batches (125)",
                     "multiple of pp (16)"});
}

TEST(LoadScenarioText, InterleavedAcceptsMicroBatchesMultipleOfPp) {
  // 1536 / 8 = 192 = 12 · 16.
  StatusOr<Scenario> s = load("", {"parallelism.schedule=interleaved", "parallelism.vpp=2"});
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->parallelism.schedule, Schedule::kInterleaved);
}

TEST(LoadScenarioText, PpNotDividingLayersGetsTheDefaultSplit) {
  // 96 layers over pp 16 · vpp 4 = 64 chunks: (96 + 2) is no multiple of 64 and ⌈96/64⌉ = 2
  // leaves nothing for the last chunk, so every chunk gets 1 and chunks 1..32 one more.
  StatusOr<Scenario> s = load("", {"parallelism.schedule=interleaved", "parallelism.vpp=4"});
  ASSERT_TRUE(s.ok()) << s.status().message();
  const std::vector<int>& layout = s->parallelism.pipeline_layout;
  ASSERT_EQ(layout.size(), 64u);
  EXPECT_EQ(layout[0], 1);
  EXPECT_EQ(layout[1], 2);
  EXPECT_EQ(layout[32], 2);
  EXPECT_EQ(layout[33], 1);
  EXPECT_NE(s->parallelism.pipeline_split.find("does not divide 96 layers"), std::string::npos);
}

TEST(LoadScenarioText, Llama405bOnPp8Vpp8CountsEmbeddingAndLoss) {
  // Megatron-Bridge's LLaMA-3.1 405B recipe: 126 layers + embedding + loss = 128 units, two per
  // virtual stage; stage 0 holds 1 + 7·2 = 15 layers, the middle stages 16, the last 15.
  StatusOr<Scenario> s = load_scenario_text(R"(
model: {preset: llama3-405b}
cluster: {preset: dgx-h100, gpus: 1024}
training: {seq_len: 8192, global_batch: 512}
parallelism: {tp: 8, pp: 8, vpp: 8, cp: 2}
)",
                                            "test.yaml", {});
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(stage_layers(*s), (std::vector<int>{15, 16, 16, 16, 16, 16, 16, 15}));
  const std::vector<int> chunks = chunk_layers(*s);
  EXPECT_EQ(chunks.front(), 1);
  EXPECT_EQ(chunks.back(), 1);
  EXPECT_NE(s->parallelism.pipeline_split.find("account_for_embedding"), std::string::npos);
}

TEST(LoadScenarioText, DeepSeekV3OnPp16AndQwen3OnPp8GetMegatronBridgesSplits) {
  // DeepSeek-V3, 61 layers on 16 stages: 61 + 2 is no multiple of 16; ⌈61/16⌉ = 4 per stage,
  // the last 1 (with MTP and the loss), as Megatron-Bridge's (16, 1) layout map.
  StatusOr<Scenario> ds = load_scenario_text(R"(
model: {preset: deepseek-v3}
cluster: {preset: dgx-b200, gpus: 256}
training: {seq_len: 4096, global_batch: 2048}
parallelism: {tp: 1, pp: 16, ep: 8, etp: 1}
)",
                                             "test.yaml", {});
  ASSERT_TRUE(ds.ok()) << ds.status().message();
  std::vector<int> expected(15, 4);
  expected.push_back(1);
  EXPECT_EQ(stage_layers(*ds), expected);
  EXPECT_NE(ds->parallelism.pipeline_split.find("DeepSeek-V3"), std::string::npos);
  // Qwen3-235B, 94 layers on 8 stages: 94 + 2 = 96 = 8 · 12, the embedding and loss counted.
  StatusOr<Scenario> qw = load_scenario_text(R"(
model: {preset: qwen3-235b-a22b}
cluster: {preset: gb200-nvl72, gpus: 64}
training: {seq_len: 4096, global_batch: 1024}
parallelism: {tp: 1, pp: 8, ep: 8, etp: 1}
)",
                                             "test.yaml", {});
  ASSERT_TRUE(qw.ok()) << qw.status().message();
  EXPECT_EQ(stage_layers(*qw), (std::vector<int>{11, 12, 12, 12, 12, 12, 12, 11}));
  EXPECT_NE(qw->parallelism.pipeline_split.find("account_for_embedding"), std::string::npos);
}

TEST(LoadScenarioText, MegatronLayoutString) {
  // DeepSeek-V3 in Megatron-Bridge's H100 recipe: "Et|(tt|)*30mL" on pp 8 × vpp 4.
  StatusOr<Scenario> s = load_scenario_text(R"(
model: {preset: deepseek-v3}
cluster: {preset: dgx-h100, gpus: 1024}
training: {seq_len: 4096, global_batch: 8192}
parallelism: {tp: 2, pp: 8, vpp: 4, ep: 64, etp: 1, sequence_parallel: true,
              pipeline_layout: "Et|(tt|)*30mL"}
)",
                                            "test.yaml", {});
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(stage_layers(*s), (std::vector<int>{7, 8, 8, 8, 8, 8, 8, 6}));
  EXPECT_EQ(s->parallelism.pipeline_split, "");  // given, not chosen
}

TEST(LoadScenarioText, PipelineLayoutErrors) {
  expect_user_error(
      load_error(kSmall, {"parallelism.pipeline_layout=[6, 6]"}),
      {"test.yaml: parallelism.pipeline_layout: 2 virtual stages", "expected pp × vpp = 16"});
  expect_user_error(
      load_error(kSmall, {"parallelism.pipeline_layout=Et|tX|tL"}),
      {"test.yaml: parallelism.pipeline_layout: pipeline layout 'Et|tX|tL'", "unexpected 'X'"});
  expect_user_error(
      load_error(kSmall, {"parallelism.pipeline_layout=[6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, "
                          "6, 6, 7]"}),
      {"test.yaml: parallelism.pipeline_layout: 97 layers in all", "expected model.layers (96)"});
  expect_user_error(load_error(kSmall, {"parallelism.account_for_loss_in_pipeline_split=true"}),
                    {"test.yaml: parallelism.account_for_loss_in_pipeline_split", "97 units",
                     "expected a multiple of pp × vpp = 16"});
}

TEST(LoadScenarioText, JobUsesPartOfEachNvl72Rack) {
  // 128 GPUs on GB200 NVL72: two racks of 64 (16 trays each), one NIC per GPU.
  StatusOr<Scenario> s = load_scenario_text(R"(
model: {preset: llama3-70b}
cluster: {preset: gb200-nvl72, gpus: 128}
training: {seq_len: 8192, global_batch: 128}
parallelism: {tp: 4, pp: 4}
)",
                                            "test.yaml", {});
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->cluster.nodes, 2);
  EXPECT_EQ(s->cluster.gpus_per_node, 64);
  EXPECT_EQ(s->cluster.domain_gpus, 72);
  EXPECT_EQ(s->cluster.nics_per_node, 64);
  EXPECT_EQ(s->parallelism.dp, 8);
  // 1,024 GPUs do not fill 15 racks evenly: 16 racks of 64.
  StatusOr<Scenario> big = load_scenario_text(R"(
model: {preset: llama3-70b}
cluster: {preset: gb200-nvl72, gpus: 1024}
training: {seq_len: 8192, global_batch: 1024}
parallelism: {tp: 4, pp: 4}
)",
                                              "test.yaml", {});
  ASSERT_TRUE(big.ok()) << big.status().message();
  EXPECT_EQ(big->cluster.nodes, 16);
  EXPECT_EQ(big->cluster.gpus_per_node, 64);
  // Eight GPUs are two trays of one rack.
  StatusOr<Scenario> small = load_scenario_text(R"(
model: {preset: llama3-8b}
cluster: {preset: gb300-nvl72, gpus: 8}
training: {seq_len: 8192, global_batch: 128}
)",
                                                "test.yaml", {});
  ASSERT_TRUE(small.ok()) << small.status().message();
  EXPECT_EQ(small->cluster.nodes, 1);
  EXPECT_EQ(small->cluster.gpus_per_node, 8);
  // Not whole trays.
  expect_user_error(load_error(R"(
model: {preset: llama3-8b}
cluster: {preset: gb200-nvl72, gpus: 6}
training: {seq_len: 8192, global_batch: 128}
)",
                               {}),
                    {"test.yaml: cluster.gpus: 6", "4 GPUs of a tray"});
}

TEST(LoadScenarioText, TheStackBringsItsHostConstants) {
  // The default stack is megatron-core: 56.4 us per launch (fitted, presets/stacks/), NCCL's own
  // 6 us per collective call (the GPU preset). megatron-deepspeed-2022 (vTrain's): 58.9 us and
  // 6 + 99 us.
  StatusOr<Scenario> core = load(kSmall);
  ASSERT_TRUE(core.ok()) << core.status().message();
  EXPECT_EQ(core->training.stack.name, "megatron-core");
  EXPECT_EQ(core->cluster.gpu.calibration.launch_overhead, SimTime::microseconds(56.4));
  EXPECT_EQ(core->cluster.gpu.calibration.collective_latency, SimTime::microseconds(6));
  EXPECT_TRUE(core->training.flash_attention);
  StatusOr<Scenario> ds = load(kSmall, {"training.stack=megatron-deepspeed-2022"});
  ASSERT_TRUE(ds.ok()) << ds.status().message();
  EXPECT_EQ(ds->cluster.gpu.calibration.launch_overhead, SimTime::picoseconds(58'900'000));
  EXPECT_EQ(ds->cluster.gpu.calibration.collective_latency, SimTime::microseconds(105));
  EXPECT_FALSE(ds->training.flash_attention);  // its attention kernel is unfused
  EXPECT_EQ(ds->training.stack.attention_kernel, AttentionKernel::kUnfused);
  // A launch cost the GPU's YAML names wins over the stack's; inline stack keys over its preset.
  StatusOr<Scenario> own = load(kSmall, {"training.stack=megatron-deepspeed-2022",
                                         "cluster.gpu.calibration.launch_overhead=20us"});
  ASSERT_TRUE(own.ok()) << own.status().message();
  EXPECT_EQ(own->cluster.gpu.calibration.launch_overhead, SimTime::microseconds(20));
  StatusOr<Scenario> inline_key = load(kSmall, {"training.stack.launch_overhead=4us"});
  ASSERT_TRUE(inline_key.ok()) << inline_key.status().message();
  EXPECT_EQ(inline_key->cluster.gpu.calibration.launch_overhead, SimTime::microseconds(4));
  expect_user_error(load_error(kSmall, {"training.stack=megatron-cor"}),
                    {"test.yaml: training.stack.preset", "megatron-cor"});
  expect_user_error(load_error(kSmall, {"training.stack.attention_kernel=flash9"}),
                    {"test.yaml: training.stack.attention_kernel", "flash9"});
}

TEST(LoadScenarioText, TheStackSetsTheOptimizerTrafficDefaultAndTheTrainingKeyWins) {
  // A fused Adam moves 40 B per parameter; Composer's DecoupledAdamW (pytorch-fsdp) eight
  // in-place ops and FSDP's norm clipping, 96 B. training.optimizer_bytes_per_param overrides
  // either; an out-of-range stack figure is an error naming its key.
  StatusOr<Scenario> core = load(kSmall);
  ASSERT_TRUE(core.ok()) << core.status().message();
  EXPECT_EQ(core->training.optimizer_bytes_per_param, 40);
  StatusOr<Scenario> fsdp = load(kSmall, {"training.stack=pytorch-fsdp"});
  ASSERT_TRUE(fsdp.ok()) << fsdp.status().message();
  EXPECT_EQ(fsdp->training.optimizer_bytes_per_param, 96);
  StatusOr<Scenario> own =
      load(kSmall, {"training.stack=pytorch-fsdp", "training.optimizer_bytes_per_param=52"});
  ASSERT_TRUE(own.ok()) << own.status().message();
  EXPECT_EQ(own->training.optimizer_bytes_per_param, 52);
  expect_user_error(load_error(kSmall, {"training.stack.optimizer_bytes_per_param=5000"}),
                    {"test.yaml: training.stack.optimizer_bytes_per_param"});
}

TEST(LoadScenarioText, JobSmallerThanANode) {
  // Four GPUs of a DGX H100, with their four NICs.
  StatusOr<Scenario> s = load_scenario_text(R"(
model: {preset: llama2-7b}
cluster: {preset: dgx-h100, gpus: 4}
training: {seq_len: 4096, global_batch: 64}
)",
                                            "test.yaml", {});
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->cluster.nodes, 1);
  EXPECT_EQ(s->cluster.gpus_per_node, 4);
  EXPECT_EQ(s->cluster.nics_per_node, 4);
  EXPECT_EQ(s->cluster.domain_gpus, 8);
}

TEST(LoadScenarioText, Fp8OnA100) {
  expect_user_error(
      load_error("", {"training.precision=fp8"}),
      {"test.yaml: training.precision: fp8", "A100-SXM4-80GB has no FP8", "expected fp16 or bf16"});
}

TEST(LoadScenarioText, AZeroPeakIsNoTensorCoresNotAFallback) {
  // peak.bf16 0 used to fall back to fp16's 312 TFLOP/s silently; V100 has no BF16 at all.
  expect_user_error(load_error("", {"cluster.gpu.peak.bf16=0TFLOPS"}),
                    {"training.precision: bf16: A100-SXM4-80GB has no BF16 tensor cores"});
  expect_user_error(load_error(kSmall, {"cluster.gpu=V100-SXM2-32GB"}),
                    {"V100-SXM2-32GB has no BF16 tensor cores", "expected fp16"});
  EXPECT_TRUE(load(kSmall, {"cluster.gpu=V100-SXM2-32GB", "training.precision=fp16"}).ok());
}

TEST(LoadScenarioText, Nvfp4OnH100) {
  // Hopper has FP8 but no FP4 tensor cores; the CLI reports this with exit code 2.
  expect_user_error(load_error(kSmall, {"cluster.preset=dgx-h100", "training.precision=nvfp4"}),
                    {"test.yaml: training.precision: nvfp4", "H100-SXM5-80GB has no FP4",
                     "expected bf16 or an fp8 mode"});
}

TEST(LoadScenarioText, Mxfp8OnH100) {
  expect_user_error(load_error(kSmall, {"cluster.preset=dgx-h100", "training.precision=mxfp8"}),
                    {"test.yaml: training.precision: mxfp8", "H100-SXM5-80GB has no microscaling",
                     "expected fp8 or fp8_blockwise"});
}

TEST(LoadScenarioText, EveryPrecisionLoadsOnBlackwell) {
  for (const char* p : {"fp16", "bf16", "fp8", "fp8_blockwise", "mxfp8", "nvfp4"}) {
    StatusOr<Scenario> s =
        load(kSmall, {"cluster.preset=dgx-b200", std::string("training.precision=") + p});
    ASSERT_TRUE(s.ok()) << p << ": " << s.status().message();
    EXPECT_STREQ(to_string(s->training.precision), p);
  }
}

TEST(LoadScenarioText, SequenceParallelIsOffAtTp1AsInMegatron) {
  StatusOr<Scenario> s = load("", {"parallelism.tp=1"});
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_FALSE(s->parallelism.sequence_parallel);
  EXPECT_EQ(s->parallelism.dp, 64);
  ASSERT_FALSE(s->notes.empty());
  EXPECT_EQ(s->notes[0], "sequence parallelism is off at TP 1 (as Megatron turns it off)");
}

TEST(LoadScenarioText, AnotherModelOnTheDefaultScenarioBringsItsSequenceLength) {
  // The model's pre-training length (max_seq_len) unless --set gives one; the batch is kept and
  // the note says so.
  StatusOr<Scenario> s = load("", {"model.preset=llama3-8b", "parallelism.pp=1"});
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->training.seq_len, 8192);
  EXPECT_EQ(s->training.global_batch, 1536);
  ASSERT_EQ(s->notes.size(), 1u);
  EXPECT_EQ(s->notes[0],
            "training.seq_len 8192 is llama3-8b's pre-training length (model.max_seq_len); "
            "training.global_batch 1536 is the default scenario's (GPT-3 175B): set it for "
            "llama3-8b");
  s = load("", {"model.preset=llama3-8b", "parallelism.pp=1", "training.seq_len=4096",
                "training.global_batch=128"});
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->training.seq_len, 4096);
  EXPECT_TRUE(s->notes.empty());
  // The default scenario's own model keeps its 2,048 tokens, without a note.
  s = load("", {"model.dropout=false"});
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->training.seq_len, 2048);
  EXPECT_TRUE(s->notes.empty());
}

TEST(LoadScenarioText, DefaultsListTheJobKeysNotGiven) {
  StatusOr<Scenario> s = load(kSmall);
  ASSERT_TRUE(s.ok()) << s.status().message();
  auto value_of = [&](const std::string& key) -> std::string {
    for (const auto& [k, v] : s->defaults) {
      if (k == key) return v;
    }
    return "<given>";
  };
  // Set by the scenario: not listed.
  EXPECT_EQ(value_of("parallelism.tp"), "<given>");
  EXPECT_EQ(value_of("parallelism.pp"), "<given>");
  EXPECT_EQ(value_of("training.micro_batch"), "1");
  // Left out: listed with the value taken.
  EXPECT_EQ(value_of("parallelism.vpp"), "1");
  EXPECT_EQ(value_of("simulation.network"), "analytical");
  EXPECT_EQ(value_of("model.moe.routing"), "<given>");  // not a MoE model
  s = load(kSmall,
           {"parallelism.vpp=2", "model.preset=mixtral-8x7b", "parallelism.ep=8",
            "parallelism.etp=1", "training.seq_len=2048", "parallelism.sequence_parallel=true"});
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(value_of("parallelism.vpp"), "<given>");
  EXPECT_EQ(value_of("model.moe.routing"), "balanced");
  EXPECT_EQ(value_of("model.moe.flex_backend"), "<given>");  // the alltoall dispatcher
  const std::vector<std::string> mixtral = {
      "parallelism.vpp=2",        "model.preset=mixtral-8x7b", "parallelism.ep=8",
      "parallelism.etp=1",        "training.seq_len=2048",     "parallelism.sequence_parallel=true",
      "model.moe.dispatcher=flex"};
  s = load(kSmall, mixtral);
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(value_of("model.moe.flex_backend"), "deepep");
  std::vector<std::string> hybridep = mixtral;
  hybridep.push_back("model.moe.flex_backend=hybridep");
  s = load(kSmall, hybridep);
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(value_of("model.moe.flex_backend"), "<given>");
  EXPECT_EQ(s->model.moe.flex_dispatcher_sms(), 16);
}

TEST(LoadScenarioText, WarningsSayWhatFlattersTheResult) {
  // Past the model's max_seq_len; a balanced router left as the default; TP across nodes.
  StatusOr<Scenario> s = load(kSmall, {"training.seq_len=4096"});
  ASSERT_TRUE(s.ok()) << s.status().message();
  ASSERT_EQ(s->warnings.size(), 1u);
  EXPECT_EQ(s->warnings[0],
            "training.seq_len 4096 is longer than the model's max_seq_len 2048 "
            "(positions it was not built for)");
  s = load(kSmall, {"model.preset=mixtral-8x7b", "parallelism.ep=8", "parallelism.etp=1",
                    "training.seq_len=2048", "parallelism.sequence_parallel=true"});
  ASSERT_TRUE(s.ok()) << s.status().message();
  ASSERT_EQ(s->warnings.size(), 1u);
  EXPECT_EQ(
      s->warnings[0].rfind("model.moe.routing: balanced, a router balanced in expectation", 0), 0u);
  s = load(kSmall, {"model.preset=mixtral-8x7b", "parallelism.ep=8", "parallelism.etp=1",
                    "training.seq_len=2048", "parallelism.sequence_parallel=true",
                    "model.moe.routing=uniform"});
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(s->warnings.empty());  // chosen, not defaulted
  s = load(kSmall, {"parallelism.tp=16", "parallelism.pp=8", "model.heads=96"});
  ASSERT_TRUE(s.ok()) << s.status().message();
  ASSERT_EQ(s->warnings.size(), 1u);
  EXPECT_EQ(s->warnings[0], "TP 16 spans 2 nodes: its collectives cross the NICs");
  EXPECT_TRUE(s->notes.empty());
}

TEST(LoadScenarioText, GpuArchitectureIsOneOfFourNames) {
  // Parsed once: a capitalised or unknown name is an error with the closest name, not a
  // silent compute capability 8.0 without NVLS.
  expect_user_error(load_error(kSmall, {"cluster.gpu.architecture=Hopper"}),
                    {"test.yaml: cluster.gpu.architecture", "did you mean 'hopper'"});
  StatusOr<Scenario> s = load(kSmall, {"cluster.gpu.architecture=hopper"});
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->cluster.gpu.architecture, GpuArchitecture::kHopper);
  EXPECT_TRUE(s->cluster.gpu.nvls);  // derived from the generation
  // An inline GPU must name its generation.
  expect_user_error(
      load_error(R"(
model: {preset: gpt3-1.7b}
cluster:
  nodes: 1
  gpus_per_node: 8
  gpu: {sm_count: 108, hbm_capacity: 80GiB, hbm_bandwidth: 2039GB/s, peak: {bf16: 312TFLOPS}}
training: {global_batch: 8}
)"),
      {"cluster.gpu.architecture", "missing key", "volta, ampere, hopper or blackwell"});
}

TEST(LoadScenarioText, MultiNodeClusterNeedsNics) {
  expect_user_error(load_error(kSmall, {"cluster.nics_per_node=0"}),
                    {"test.yaml: cluster.nics_per_node", "32 nodes"});
}

TEST(LoadScenarioText, MemoryKeysDefaultAndLoad) {
  StatusOr<Scenario> s = load(kSmall);
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->parallelism.zero_stage, 0);
  EXPECT_EQ(s->training.framework_overhead, Bytes::gib(3));
  EXPECT_DOUBLE_EQ(s->training.allocator_fragmentation, 0.10);
  s = load(kSmall, {"parallelism.zero_stage=3", "training.framework_overhead=1.5GiB",
                    "training.allocator_fragmentation=0"});
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->parallelism.zero_stage, 3);
  EXPECT_EQ(s->training.framework_overhead, Bytes::mib(1536));
  EXPECT_DOUBLE_EQ(s->training.allocator_fragmentation, 0);
}

TEST(LoadScenarioText, BadMemoryKeys) {
  expect_user_error(load_error(kSmall, {"parallelism.zero_stage=4"}),
                    {"test.yaml: parallelism.zero_stage: '4': expected 0, 1, 2 or 3"});
  expect_user_error(load_error(kSmall, {"parallelism.zero_stage=-1"}),
                    {"test.yaml: parallelism.zero_stage: '-1': expected 0, 1, 2 or 3"});
  expect_user_error(load_error(kSmall, {"training.framework_overhead=-1GiB"}),
                    {"test.yaml: training.framework_overhead: '-1GiB' is negative"});
  expect_user_error(
      load_error(kSmall, {"training.allocator_fragmentation=-0.1"}),
      {"test.yaml: training.allocator_fragmentation: '-0.1'", "expected a number in [0, 1]"});
  expect_user_error(load_error(kSmall, {"parallelism.pp=0"}),
                    {"test.yaml: parallelism.pp: '0': expected an integer >= 1"});
}

TEST(LoadScenarioText, MultiLineValueGivesOneLineError) {
  expect_user_error(load_error(R"(
model: {preset: gpt3-175b}
cluster: {preset: dgx-a100, nodes: 32}
training: {global_batch: 64}
parallelism:
  tp: |
    eight
    sixteen
  pp: 16
)"),
                    {"test.yaml: parallelism.tp: 'eight\\nsixteen\\n': expected an integer"});
}

TEST(LoadScenarioText, QkLayernormIsForPlainAttentionAndMambaMixerAndMoeProbsAreStackChoices) {
  expect_user_error(
      load_error(kSmall, {"model.preset=deepseek-v2-lite", "model.qk_layernorm=true"}),
      {"test.yaml: model.qk_layernorm", "model.mla"});
  expect_user_error(load_error(kSmall, {"model.qk_layernorm=maybe"}), {"model.qk_layernorm"});
  expect_user_error(load_error(kSmall, {"training.stack.mamba_mixer=torch"}),
                    {"training.stack.mamba_mixer", "mamba_ssm", "megatron"});
  expect_user_error(load_error(kSmall, {"training.stack.moe_probs=maybe"}),
                    {"training.stack.moe_probs", "combine", "activation"});
  StatusOr<Scenario> s = load(kSmall, {"model.qk_layernorm=true"});
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_TRUE(s->model.qk_layernorm);
  EXPECT_EQ(s->training.stack.mamba_mixer, MambaMixer::kMegatron);  // megatron-core's preset
  EXPECT_TRUE(s->training.stack.moe_probs_in_activation);
  StatusOr<Scenario> fsdp = load(kSmall, {"training.stack=pytorch-fsdp"});
  ASSERT_TRUE(fsdp.ok()) << fsdp.status().message();
  EXPECT_EQ(fsdp->training.stack.mamba_mixer, MambaMixer::kMambaSsm);
}

TEST(LoadScenarioText, RopeMscaleIsBoundedAndNeedsRope) {
  // GPT-3's learned positions have no cos and sin to scale.
  expect_user_error(load_error(kSmall, {"model.rope_mscale=1.3"}),
                    {"test.yaml: model.rope_mscale", "expected model.position_embedding: rope"});
  expect_user_error(load_error(kSmall, {"model.position_embedding=rope", "model.rope_mscale=0"}),
                    {"model.rope_mscale"});
  expect_user_error(load_error(kSmall, {"model.position_embedding=rope", "model.rope_mscale=50"}),
                    {"model.rope_mscale"});
  expect_user_error(load_error(kSmall, {"training.stack.scaled_rope=sometimes"}),
                    {"training.stack.scaled_rope", "fused", "unfused"});
  StatusOr<Scenario> s = load(kSmall, {"model.position_embedding=rope", "model.rope_mscale=1.3"});
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_DOUBLE_EQ(s->model.rope_mscale, 1.3);
  EXPECT_FALSE(s->training.stack.fused_scaled_rope);  // megatron-core's preset: unfused
}

}  // namespace
TEST(LoadScenarioText, CompressedAttentionAndHyperConnectionsCheckTheirShapes) {
  // DeepSeek-V4-Flash loads (its preset: model.csa, hyper_connections 4).
  const std::vector<std::string> v4 = {"model.preset=deepseek-v4-flash",
                                       "cluster.nodes=2",
                                       "parallelism.tp=1",
                                       "parallelism.pp=1",
                                       "parallelism.ep=8",
                                       "training.seq_len=4096"};
  auto with = [&](std::vector<std::string> more) {
    std::vector<std::string> o = v4;
    o.insert(o.end(), more.begin(), more.end());
    return o;
  };
  StatusOr<Scenario> s = load(kSmall, v4);
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->model.csa.ratio(0), 0);
  EXPECT_EQ(s->model.csa.ratio(2), 4);
  EXPECT_TRUE(s->model.csa.indexed(2));
  EXPECT_EQ(s->model.csa.ratio(3), 128);
  EXPECT_FALSE(s->model.csa.indexed(3));
  EXPECT_EQ(s->model.csa.ratio(43), 0);  // the MTP module's entry
  EXPECT_EQ(s->model.hyper_connections, 4);
  // Shapes the attention cannot have.
  expect_user_error(load_error(kSmall, with({"model.csa.o_groups=7"})),
                    {"test.yaml: model.csa.o_groups: 7", "divisor of model.heads (64)"});
  expect_user_error(load_error(kSmall, with({"model.csa.rope_dim=1024"})),
                    {"model.csa.rope_dim: 1024", "model.head_dim (512)"});
  expect_user_error(load_error(kSmall, with({"model.csa.index_topk=0"})),
                    {"model.csa.csa_ratio: 4", "index_topk"});
  expect_user_error(load_error(kSmall, with({"model.sliding_window=0"})),
                    {"model.sliding_window", "window of raw tokens"});
  expect_user_error(load_error(kSmall, with({"model.csa.compress_ratios=[0, 4.5]"})),
                    {"model.csa.compress_ratios", "4.5", "whole numbers"});
  expect_user_error(load_error(kSmall, with({"model.csa.compress_ratios=[0, -4]"})),
                    {"model.csa.compress_ratios"});
  // Too few ratios for the layers and the MTP module: none is assumed for the rest.
  expect_user_error(load_error(kSmall, with({"model.csa.compress_ratios=[0, 0, 4, 128]"})),
                    {"test.yaml: model.csa.compress_ratios: 4 entries",
                     "one per layer (43) and per MTP module (1), 44 in all"});
  expect_user_error(
      load_error(kSmall, with({"model.mla.kv_lora_rank=512", "model.mla.qk_nope_head_dim=128",
                               "model.mla.qk_rope_head_dim=64", "model.mla.v_head_dim=128",
                               "model.kv_heads=64"})),
      {"model.csa", "model.mla, not both"});
  // Hyper-connections: a bounded stream count, Sinkhorn steps only with streams to mix.
  expect_user_error(load_error(kSmall, with({"model.hyper_connections=65"})),
                    {"model.hyper_connections: 65", "at most 64"});
  expect_user_error(load_error(kSmall, {"model.hc_sinkhorn_iterations=10"}),
                    {"model.hc_sinkhorn_iterations", "hyper_connections above 1"});
  // Parallelism the model does not cover, and what TP must divide.
  expect_user_error(load_error(kSmall, with({"parallelism.cp=2"})),
                    {"parallelism.cp: 2", "compressed attention", "cp 1"});
  expect_user_error(load_error(kSmall, with({"training.flash_attention=false"})),
                    {"training.flash_attention: false", "fused sparse attention"});
  expect_user_error(load_error(kSmall, with({"parallelism.tp=8", "parallelism.etp=1",
                                             "parallelism.sequence_parallel=true",
                                             "model.csa.o_groups=4", "cluster.nodes=16"})),
                    {"parallelism.tp: 8", "model.csa.o_groups (4)"});
  expect_user_error(load_error(kSmall, {"model.preset=nemotron-h-8b", "model.hyper_connections=4"}),
                    {"model.hyper_connections: 4", "hybrid_pattern"});
}

}  // namespace preflight
