// Every scenario key fed its edge values (issue 14): 0, tiny, huge, NaN, infinite, negative,
// absurdly long numbers, and for strings empty, non-UTF-8, terminal control sequences, newlines
// and 10 MB. Each run either loads and simulates to finite, physically possible figures, or
// fails with one clean line (no control bytes, valid UTF-8, under 2,000 bytes). The keys come
// from a KeyRecorder (config/yaml_reader.h) around loading a few small scenarios, so a key added
// to the loader is covered without editing this file.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "base/text.h"
#include "config/loader.h"
#include "config/yaml_reader.h"
#include "report/report.h"
#include "simulate/simulate.h"

namespace preflight {
namespace {

// Small scenarios (a few milliseconds each) that between them make the loader read every key:
// the sections read only when present (model.moe, model.mamba, training.lora, cluster.gpus,
// the topology's oversubscription, collectives.nvls, model.moe.loads) are given in one.
struct Base {
  const char* name;
  std::vector<std::string> overrides;
};

const std::vector<std::string> kDense = {"model.preset=gpt3-1.7b", "cluster.nodes=2",
                                         "parallelism.tp=2",       "parallelism.pp=2",
                                         "parallelism.dp=auto",    "training.global_batch=16",
                                         "training.seq_len=1024",  "simulation.network=analytical"};

std::vector<std::string> with(std::vector<std::string> base, const std::vector<std::string>& more) {
  base.insert(base.end(), more.begin(), more.end());
  return base;
}

const std::vector<Base>& bases() {
  static const std::vector<Base> kBases = {
      {"dense", kDense},
      {"moe", with(kDense, {"model.preset=mixtral-8x7b", "model.layers=4", "parallelism.tp=1",
                            "parallelism.ep=4"})},
      {"hybrid",
       with(kDense, {"model.preset=nemotron-h-8b", "model.layers=4", "model.hybrid_pattern=M*M-"})},
      {"optional",
       with(kDense, {"cluster.gpus=16", "training.lora.rank=16",
                     "cluster.topology.oversubscription=2:1", "collectives.nvls=auto"})},
      {"csa", with(kDense, {"model.preset=deepseek-v4-flash", "model.layers=4", "parallelism.tp=1",
                            "parallelism.ep=4", "training.seq_len=1024"})},
      {"moe-loads", with(kDense, {"model.preset=mixtral-8x7b", "model.layers=4", "parallelism.tp=1",
                                  "parallelism.ep=4", "model.moe.routing=loads",
                                  "model.moe.loads=[4, 1, 1, 1, 1, 1, 1, 1]"})},
  };
  return kBases;
}

// Where a precision other than the bases' bf16 reads a peak of its own.
const std::vector<Base>& precision_bases() {
  static const std::vector<Base> kBases = {
      {"h100-fp8", with(kDense, {"cluster.preset=dgx-h100", "training.precision=fp8"})},
      {"b200-nvfp4", with(kDense, {"cluster.preset=dgx-b200", "training.precision=nvfp4"})},
  };
  return kBases;
}

struct Key {
  RecordedKey key;
  const Base* base;  // the first base scenario that reads it
};

// Every key the loader reads under the bases, each with the first base that reads it.
StatusOr<std::vector<Key>> record_keys() {
  std::vector<Key> out;
  std::map<std::string, size_t> index;
  for (const Base& b : bases()) {
    KeyRecorder recorder;
    StatusOr<Scenario> s = load_scenario("", b.overrides);
    if (!s.ok()) {
      return Status(s.status().code(), std::string(b.name) + ": " + s.status().message());
    }
    for (const RecordedKey& k : recorder.keys()) {
      auto [it, fresh] = index.emplace(k.path, out.size());
      if (fresh) out.push_back({k, &b});
    }
  }
  return out;
}

// The edge values of a key of one kind: `every` key of the kind gets each, `some` are dealt two
// to a key in turn, and the long ones (yaml-cpp reads 100 KB in about 20 ms) go to the first
// kLongKeys keys of each kind, each of which reads them through the same getter.
struct EdgeValues {
  std::vector<std::string> every;
  std::vector<std::string> some;
  std::vector<std::string> long_values;
};

constexpr int kLongKeys = 2;

EdgeValues edge_values(KeyKind kind, const std::vector<std::string>& choices) {
  static const std::string kHugeInteger = [] {  // 100,000 digits
    std::string n(100'000, '0');
    n[0] = '1';
    return n;
  }();
  static const std::vector<std::string> kNumbers = {"0",   "-1",  "1e-300", "1e-9", "1e300",
                                                    "nan", "inf", "-0",     "1e999"};
  auto suffixed = [](const std::vector<std::string>& numbers, const std::string& unit) {
    std::vector<std::string> v;
    for (const std::string& n : numbers) v.push_back(n + unit);
    return v;
  };
  auto plus = [](std::vector<std::string> a, const std::vector<std::string>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
  };
  // Finite once parsed, absurd or overflowing once scaled by the unit.
  static const std::vector<std::string> kUnitNumbers =
      plus(kNumbers, {"1e30", "1e200", "1e308", "1e-30", "-inf"});
  switch (kind) {
    case KeyKind::kInt:
    case KeyKind::kIntOrAuto:
    case KeyKind::kUint64:
    case KeyKind::kDouble:
      return {plus(kNumbers, {"1000000000"}),  // get_int's largest
              {"-inf", "2147483647", "2147483648", "1e18", "18446744073709551616", "0x10", "",
               "\xff", "[1]"},
              {kHugeInteger}};
    case KeyKind::kDoubleList:
      return {{"[0]", "[-1]", "[1e-300]", "[1e300]", "[nan]", "[inf]", "[]", "0"},
              {"[1e999]", "[-0]", "[1e-9]", "[[1]]", "{a: 1}", "[\"\\e\"]"},
              {"[" + kHugeInteger + "]"}};
    case KeyKind::kBytes:
      return {plus(suffixed(kUnitNumbers, "GiB"), {"9e18B", "4e18B", "1e18B"}),
              {"0", "1e300B", "-1B", "1e6TiB"},
              {kHugeInteger + "B"}};
    case KeyKind::kBandwidth:
      return {suffixed(kUnitNumbers, "GB/s"),
              {"0", "1e-300bps", "1e300TB/s", "1e6TB/s", "1Gbps"},
              {kHugeInteger + "B/s"}};
    case KeyKind::kTime:
      return {plus(suffixed(kUnitNumbers, "us"), {"9e6s", "1e6s", "2s"}),
              {"0", "1e-300ps", "1e300s"},
              {kHugeInteger + "ps"}};
    case KeyKind::kFlopRate:
      return {suffixed(kUnitNumbers, "TFLOPS"),
              {"0", "1e-300FLOPS", "1e300PFLOPS", "1e6PFLOPS", "0.5TFLOPS"},
              {kHugeInteger + "FLOPS"}};
    case KeyKind::kChoiceList: {
      std::vector<std::string> lists;
      for (const std::string& c : choices) lists.push_back("[" + c + "]");
      std::string all = "[";
      for (const std::string& c : choices) all += (all.size() > 1 ? ", " : "") + c;
      return {plus(lists, {all + "]", "[]", "", ",", "a,,b", "[\"\xff\"]", "\x1b[2J"}),
              {"[[1]]", "{a: 1}", "[~]", "0", "nan", "[" + std::string(1000, 'x') + "]"},
              {"[" + std::string(100'000, 'x') + "]", std::string(100'000, ',')}};
    }
    case KeyKind::kBool:
    case KeyKind::kString:
    case KeyKind::kChoice:
    case KeyKind::kSkipped:
      // A choice's valid values too: one may reach code the bases do not.
      return {plus(choices,
                   {
                       "",                             // --set key=
                       "\xff",                         // not UTF-8
                       "\x1b[2J",                      // clears the terminal
                       "\"line one\\nline two\"",      // a newline, through a YAML escape
                       "\"\\u202e\\u009b2J\\u0000\"",  // a bidi override, C1's CSI and a NUL
                   }),
              {"\"\\e[2J\\a\"", "|\n  block\n  scalar\n", "0", "nan", "[1, 2]", "{a: 1}", "~",
               "\"\\u0085\"", "\"\\u2066x\""},
              {std::string(100'000, 'x'), std::string(100'000, '\x1b')}};
  }
  return {};
}

// Keys that must reject an absurd value of their kind: every rate, size and time in a scenario
// has a physical bound.
std::string absurd_value(KeyKind kind) {
  switch (kind) {
    case KeyKind::kBandwidth:
      return "1e6TB/s";  // 1 EB/s
    case KeyKind::kFlopRate:
      return "1e6PFLOPS";  // 1 ZFLOP/s
    case KeyKind::kBytes:
      return "1e6TiB";
    case KeyKind::kTime:
      return "1e6s";  // 11.6 days of latency
    default:
      return "";
  }
}

// What is wrong with an error message shown to a user, or "".
std::string bad_message(const std::string& m) {
  if (m.empty()) return "empty message";
  if (m.size() >= 2000) return "message of " + std::to_string(m.size()) + " bytes";
  if (invalid_utf8_at(m) != std::string::npos) return "message not UTF-8";
  for (unsigned char c : m) {
    if (c < 0x20 || c == 0x7F) return "control byte in message";
  }
  // C1 controls (U+0080..U+009F; U+009B is a CSI to some terminals) and the bidi controls
  // (U+202A..U+202E, U+2066..U+2069), which reorder what a terminal shows after them.
  for (size_t i = 0; i + 1 < m.size(); ++i) {
    const unsigned char a = m[i], b = m[i + 1];
    if (a == 0xC2 && b >= 0x80 && b <= 0x9F) return "C1 control in message";
    if (i + 2 < m.size() && a == 0xE2) {
      const unsigned char c = m[i + 2];
      if ((b == 0x80 && c >= 0xAA && c <= 0xAE) || (b == 0x81 && c >= 0xA6 && c <= 0xA9)) {
        return "bidi control in message";
      }
    }
  }
  return "";
}

bool finite_positive(double v) { return std::isfinite(v) && v > 0; }

// What is physically impossible in a report, or "".
std::string bad_report(const SimulationReport& r) {
  if (!finite_positive(r.iteration_time_s)) return "iteration time not finite and positive";
  if (!finite_positive(r.tokens_per_s)) return "tokens/s not finite and positive";
  if (!(r.mfu > 0 && r.mfu <= 1)) return "MFU " + std::to_string(r.mfu) + " not in (0, 1]";
  if (!finite_positive(r.tflops_per_gpu)) return "TFLOP/s per GPU not finite and positive";
  if (!finite_positive(r.model_flops)) return "model FLOPs not finite and positive";
  if (r.memory.stages.empty()) return "no memory stages";
  for (const StageMemory& m : r.memory.stages) {
    for (Bytes b : {m.weights, m.gradients, m.optimizer, m.activations, m.layer_activations,
                    m.activations_per_microbatch, m.logits_and_loss, m.comm_buffers, m.framework,
                    m.transient, m.steady, m.capacity}) {
      if (b.count() < 0) return "negative memory figure";
    }
    if (m.peak.count() <= 0) return "memory peak not positive";
    if (!std::isfinite(m.layer_sets_in_flight)) return "layer sets in flight not finite";
  }
  try {
    (void)report_to_json(r).dump();
  } catch (const std::exception& e) {
    return std::string("report_to_json: ") + e.what();
  }
  return "";
}

// Loads `base` with `key=value` and simulates it; returns what went wrong, or "".
std::string run_case(const Base& base, const std::string& key, const std::string& value) {
  std::vector<std::string> overrides = base.overrides;
  overrides.push_back(key + "=" + value);
  StatusOr<Scenario> s = load_scenario("", overrides);
  if (!s.ok()) {
    const std::string bad = bad_message(s.status().message());
    return bad.empty() ? "" : "load: " + bad + ": " + escape_for_message(s.status().message(), 300);
  }
  StatusOr<SimulationReport> r = simulate(*s);
  if (!r.ok()) {
    const std::string bad = bad_message(r.status().message());
    return bad.empty() ? ""
                       : "simulate: " + bad + ": " + escape_for_message(r.status().message(), 300);
  }
  return bad_report(*r);
}

TEST(KeyRecorder, RecordsEveryKeyPathOnceWithItsKind) {
  StatusOr<std::vector<Key>> keys = record_keys();
  ASSERT_TRUE(keys.ok()) << keys.status().message();
  std::map<std::string, const RecordedKey*> by_path;
  for (const Key& k : *keys) by_path[k.key.path] = &k.key;
  EXPECT_EQ(by_path.size(), keys->size());
  auto kind = [&](const std::string& path) {
    auto it = by_path.find(path);
    return it == by_path.end() ? std::string("absent") : to_string(it->second->kind);
  };
  EXPECT_EQ(kind("model.layers"), "int");
  EXPECT_EQ(kind("model.preset"), "skipped");
  EXPECT_EQ(kind("model.moe.top_k"), "int");
  EXPECT_EQ(kind("model.moe.capacity_factor"), "double");
  EXPECT_EQ(kind("model.moe.loads"), "double_list");
  EXPECT_EQ(kind("model.mamba.state"), "int");
  EXPECT_EQ(kind("cluster.gpu.hbm_bandwidth"), "bandwidth");
  EXPECT_EQ(kind("cluster.gpu.peak.bf16"), "flop_rate");
  EXPECT_EQ(kind("cluster.gpu.calibration.gemm_efficiency"), "double");
  EXPECT_EQ(kind("cluster.gpu.calibration.kernel_gap"), "time");
  EXPECT_EQ(kind("cluster.gpus"), "int");
  EXPECT_EQ(kind("cluster.topology.oversubscription"), "string");
  EXPECT_EQ(kind("training.framework_overhead"), "bytes");
  EXPECT_EQ(kind("training.lora.rank"), "int");
  EXPECT_EQ(kind("training.stack.attention_kernel"), "choice");
  EXPECT_EQ(kind("parallelism.dp"), "int_or_auto");
  EXPECT_EQ(kind("parallelism.cp_kind"), "choice");
  EXPECT_EQ(kind("collectives.nvls"), "string");
  EXPECT_EQ(kind("simulation.seed"), "uint64");
  ASSERT_EQ(kind("parallelism.schedule"), "choice");
  EXPECT_EQ(by_path["parallelism.schedule"]->choices.size(), 6u);
}

TEST(KeyRecorder, TheBasesReadEveryKeyTheDefaultScenarioReads) {
  StatusOr<std::vector<Key>> keys = record_keys();
  ASSERT_TRUE(keys.ok()) << keys.status().message();
  std::map<std::string, int> recorded;
  for (const Key& k : *keys) recorded[k.key.path] = 1;
  KeyRecorder recorder;
  ASSERT_TRUE(load_scenario("", {}).ok());
  for (const RecordedKey& k : recorder.keys()) EXPECT_EQ(recorded.count(k.path), 1u) << k.path;
}

TEST(KeyRecorder, RecordsNothingOnceDestroyedAndNests) {
  KeyRecorder outer;
  {
    KeyRecorder inner;
    ASSERT_TRUE(load_scenario("", kDense).ok());
    EXPECT_GT(inner.keys().size(), 100u);
  }
  EXPECT_TRUE(outer.keys().empty());  // the inner recorder had them
  ASSERT_TRUE(load_scenario("", kDense).ok());
  const size_t n = outer.keys().size();
  EXPECT_GT(n, 100u);
  ASSERT_TRUE(load_scenario("", kDense).ok());
  EXPECT_EQ(outer.keys().size(), n);  // each path once
}

TEST(EdgeValues, EveryKeyLoadsToAPhysicalResultOrFailsWithOneCleanLine) {
  for (const Base& b : bases()) {
    StatusOr<Scenario> s = load_scenario("", b.overrides);
    ASSERT_TRUE(s.ok()) << b.name << ": " << s.status().message();
    StatusOr<SimulationReport> r = simulate(*s);
    ASSERT_TRUE(r.ok()) << b.name << ": " << r.status().message();
    ASSERT_EQ(bad_report(*r), "") << b.name;
  }
  StatusOr<std::vector<Key>> keys = record_keys();
  ASSERT_TRUE(keys.ok()) << keys.status().message();
  ASSERT_GT(keys->size(), 150u);
  // yaml-cpp reads a 10 MB value in about 2 s (more under ASan): one key gets it, a string the
  // report and its JSON keep; the 100 KB values of edge_values() cover the error paths.
#if defined(__SANITIZE_ADDRESS__)
  const std::string huge_string(1'000'000, 'x');  // 1 MB
  constexpr double kSlowCase = 20;                // seconds
#else
  const std::string huge_string(10'000'000, 'x');  // 10 MB
  constexpr double kSlowCase = 2;
#endif
  std::vector<std::string> failures;
  int cases = 0;
  const auto start = std::chrono::steady_clock::now();
  auto run = [&](const Base& base, const Key& k, const std::string& v) {
    ++cases;
    const auto t0 = std::chrono::steady_clock::now();
    std::string bad = run_case(base, k.key.path, v);
    const double took =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    // A value must not make a run take long (a billion layers took a minute): a case takes
    // milliseconds, 20 ms with a 100 KB value.
    if (bad.empty() && v.size() < huge_string.size() && took > kSlowCase) {
      bad = "took " + std::to_string(took) + " s";
    }
    if (!bad.empty()) {
      failures.push_back(k.key.path + "=" + escape_for_message(v, 40) + " (" + base.name + ", " +
                         to_string(k.key.kind) + "): " + bad);
    }
  };
  std::map<KeyKind, int> seen;  // keys of each kind so far
  for (const Key& k : *keys) {
    const int n = seen[k.key.kind]++;
    const EdgeValues e = edge_values(k.key.kind, k.key.choices);
    std::vector<std::string> values = e.every;
    for (int i = 0; i < 2 && !e.some.empty(); ++i) {
      values.push_back(e.some[(2 * n + i) % e.some.size()]);
    }
    if (n < kLongKeys) values.insert(values.end(), e.long_values.begin(), e.long_values.end());
    if (k.key.path == "model.name") values.push_back(huge_string);
    for (const std::string& v : values) run(*k.base, k, v);
    // A peak matters only at its precision: each is also fed on the precision bases.
    if (k.key.kind == KeyKind::kFlopRate) {
      for (const Base& b : precision_bases()) {
        for (const std::string& v : e.every) run(b, k, v);
      }
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("edge values: %zu keys, %d cases, %.2f s\n", keys->size(), cases, seconds);
  std::string list;
  for (size_t i = 0; i < failures.size() && i < 50; ++i) list += failures[i] + "\n";
  EXPECT_TRUE(failures.empty()) << failures.size() << " of " << cases << " cases failed:\n" << list;
}

TEST(EdgeValues, EveryRateSizeAndTimeHasAPhysicalBound) {
  StatusOr<std::vector<Key>> keys = record_keys();
  ASSERT_TRUE(keys.ok()) << keys.status().message();
  int checked = 0;
  for (const Key& k : *keys) {
    const std::string v = absurd_value(k.key.kind);
    if (v.empty()) continue;
    ++checked;
    std::vector<std::string> overrides = k.base->overrides;
    overrides.push_back(k.key.path + "=" + v);
    StatusOr<Scenario> s = load_scenario("", overrides);
    EXPECT_FALSE(s.ok()) << k.key.path << "=" << v << " loads";
    if (!s.ok()) {
      EXPECT_NE(s.status().message().find(k.key.path), std::string::npos) << s.status().message();
    }
  }
  EXPECT_GT(checked, 20);
}

}  // namespace
}  // namespace preflight
