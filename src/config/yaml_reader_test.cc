#include "config/yaml_reader.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <string>

namespace preflight {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

YamlReader reader(const std::string& yaml) {
  return YamlReader(YAML::Load(yaml), "test.yaml", "parallelism");
}

TEST(YamlReader, ReadsTypedValues) {
  YamlReader r = reader(
      "tp: 8\n"
      "ratio: 0.25\n"
      "flag: true\n"
      "off: no\n"
      "name: gpt\n"
      "schedule: interleaved\n"
      "seed: 18446744073709551615\n"
      "latency: 1.5us\n"
      "bucket: 40MB\n"
      "bw: 400Gbps\n"
      "peak: 989TFLOPS\n");
  EXPECT_EQ(r.get_int("tp", 1), 8);
  EXPECT_DOUBLE_EQ(r.get_double("ratio", 0, 0, 1), 0.25);
  EXPECT_TRUE(r.get_bool("flag", false));
  EXPECT_FALSE(r.get_bool("off", true));
  EXPECT_EQ(r.get_string("name", ""), "gpt");
  EXPECT_EQ(r.get_choice("schedule", 0, {"gpipe", "1f1b", "interleaved"}), 2);
  EXPECT_EQ(r.get_uint64("seed", 0), UINT64_MAX);
  EXPECT_EQ(r.get_time("latency", SimTime()).ps(), 1'500'000);
  EXPECT_EQ(r.get_bytes("bucket", Bytes()).count(), 40'000'000);
  EXPECT_DOUBLE_EQ(r.get_bandwidth("bw", Bandwidth()).bytes_per_second(), 50e9);
  EXPECT_DOUBLE_EQ(r.get_flop_rate("peak", FlopRate()).flops_per_second(), 989e12);
  EXPECT_TRUE(r.finish().ok()) << r.finish().message();
}

TEST(YamlReader, AbsentKeysReturnFallback) {
  YamlReader r = reader("{}");
  EXPECT_EQ(r.get_int("tp", 3), 3);
  EXPECT_DOUBLE_EQ(r.get_double("x", 0.5, 0, 1), 0.5);
  EXPECT_TRUE(r.get_bool("b", true));
  EXPECT_EQ(r.get_string("s", "dflt"), "dflt");
  EXPECT_EQ(r.get_choice("c", 1, {"a", "b"}), 1);
  EXPECT_EQ(r.get_time("t", SimTime::picoseconds(9)).ps(), 9);
  EXPECT_FALSE(r.has("tp"));
  EXPECT_TRUE(r.finish().ok());
}

TEST(YamlReader, NullValueCountsAsAbsent) {
  YamlReader r = reader("tp:\n");
  EXPECT_FALSE(r.has("tp"));
  EXPECT_EQ(r.get_int("tp", 4), 4);
  EXPECT_TRUE(r.finish().ok());
}

TEST(YamlReader, NullOrMissingSectionReadsAsEmpty) {
  YamlReader absent(YAML::Node(), "test.yaml", "simulation");
  EXPECT_EQ(absent.get_int("seed", 2), 2);
  EXPECT_TRUE(absent.finish().ok());
  YamlReader null_node(YAML::Load("~"), "test.yaml", "simulation");
  EXPECT_EQ(null_node.get_int("seed", 2), 2);
  EXPECT_TRUE(null_node.finish().ok());
}

TEST(YamlReader, RejectsNonMappingSection) {
  YamlReader r(YAML::Load("[1, 2]"), "test.yaml", "training");
  const Status s = r.finish();
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "test.yaml: training: expected a mapping of keys to values");
}

TEST(YamlReader, IntErrorsNameFileKeyValueAndExpectation) {
  {
    YamlReader r = reader("tp: abc\n");
    r.get_int("tp", 1);
    EXPECT_EQ(r.finish().message(), "test.yaml: parallelism.tp: 'abc': expected an integer");
  }
  {
    YamlReader r = reader("tp: 0\n");
    EXPECT_EQ(r.get_int("tp", 1), 1);  // fallback on error
    EXPECT_EQ(r.finish().message(), "test.yaml: parallelism.tp: '0': expected an integer >= 1");
  }
  {
    YamlReader r = reader("tp: 1.5\n");
    r.get_int("tp", 1);
    EXPECT_THAT(r.finish().message(), HasSubstr("'1.5': expected an integer"));
  }
  {
    YamlReader r = reader("tp: 99999999999\n");  // beyond int
    r.get_int("tp", 1);
    EXPECT_THAT(r.finish().message(), HasSubstr("expected an integer"));
  }
  {
    YamlReader r = reader("nics: 0\n");
    EXPECT_EQ(r.get_int("nics", 8, 0), 0);  // min_value 0 allows zero
    EXPECT_TRUE(r.finish().ok());
  }
}

TEST(YamlReader, IntOrAutoTakesACountOrTheWordAuto) {
  YamlReader r = reader("dp: 16\nauto_dp: auto\n");
  EXPECT_EQ(r.get_int_or_auto("dp", 0), 16);
  EXPECT_EQ(r.get_int_or_auto("auto_dp", 0), 0);
  EXPECT_EQ(r.get_int_or_auto("absent", 0), 0);
  EXPECT_TRUE(r.finish().ok());
  for (const char* bad : {"dp: 0\n", "dp: automatic\n", "dp: -4\n", "dp: 2.5\n"}) {
    YamlReader b = reader(bad);
    EXPECT_EQ(b.get_int_or_auto("dp", 0), 0) << bad;  // the auto value on error
    EXPECT_THAT(b.finish().message(), HasSubstr("': expected an integer >= 1 or auto")) << bad;
  }
}

TEST(YamlReader, RequiredIntReportsMissingKey) {
  YamlReader r(YAML::Load("seq_len: 2048\n"), "test.yaml", "training");
  r.get_int("seq_len", 1);
  r.required_int("global_batch");
  const Status s = r.finish();
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "test.yaml: training.global_batch: missing key: expected an integer >= 1");
}

TEST(YamlReader, DoubleOutOfRangeNamesTheRange) {
  YamlReader r = reader("eff: 1.5\n");
  EXPECT_DOUBLE_EQ(r.get_double("eff", 0.8, 0.01, 1.0), 0.8);
  EXPECT_EQ(r.finish().message(),
            "test.yaml: parallelism.eff: '1.5': expected a number in [0.01, 1]");
}

TEST(YamlReader, DoubleRejectsText) {
  YamlReader r = reader("eff: high\n");
  r.get_double("eff", 0.8, 0, 1);
  EXPECT_EQ(r.finish().message(), "test.yaml: parallelism.eff: 'high': expected a number");
}

TEST(YamlReader, BoolRejectsOtherWords) {
  YamlReader r = reader("sequence_parallel: maybe\n");
  r.get_bool("sequence_parallel", false);
  EXPECT_EQ(r.finish().message(),
            "test.yaml: parallelism.sequence_parallel: 'maybe': expected true or false");
}

TEST(YamlReader, ChoiceListsAlternatives) {
  YamlReader r = reader("schedule: zigzag\n");
  EXPECT_EQ(r.get_choice("schedule", 1, {"gpipe", "1f1b", "interleaved"}), 1);
  EXPECT_EQ(r.finish().message(),
            "test.yaml: parallelism.schedule: 'zigzag': expected one of gpipe|1f1b|interleaved");
}

TEST(YamlReader, Uint64RejectsNegative) {
  YamlReader r(YAML::Load("seed: -1\n"), "test.yaml", "simulation");
  EXPECT_EQ(r.get_uint64("seed", 7), 7u);
  EXPECT_EQ(r.finish().message(),
            "test.yaml: simulation.seed: '-1': expected a non-negative integer");
}

TEST(YamlReader, UnitErrorsCarryParserMessage) {
  YamlReader r(YAML::Load("nic_bandwidth: 400\n"), "test.yaml", "cluster");
  r.get_bandwidth("nic_bandwidth", Bandwidth());
  const Status s = r.finish();
  EXPECT_THAT(s.message(), HasSubstr("test.yaml: cluster.nic_bandwidth: '400' has no unit"));
  EXPECT_THAT(s.message(), HasSubstr("expected a bandwidth with a unit"));
}

TEST(YamlReader, ListOrMapWhereScalarExpected) {
  {
    YamlReader r = reader("tp: [1, 2]\n");
    EXPECT_EQ(r.get_int("tp", 1), 1);
    EXPECT_EQ(r.finish().message(),
              "test.yaml: parallelism.tp: expected a single value, found a list");
  }
  {
    YamlReader r = reader("tp: {a: 1}\n");
    r.get_int("tp", 1);
    EXPECT_EQ(r.finish().message(),
              "test.yaml: parallelism.tp: expected a single value, found a mapping");
  }
}

TEST(YamlReader, FinishRejectsUnknownKeyListingKnownOnes) {
  YamlReader r = reader("tp: 2\ntpp: 4\n");
  r.get_int("tp", 1);
  r.get_int("pp", 1);
  const Status s = r.finish();
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            "test.yaml: parallelism.tpp: unknown key (did you mean 'tp' or 'pp'?) (known keys: "
            "pp, tp)");
  // No suggestion when nothing is close.
  YamlReader far = reader("zzzzzz: 1\n");
  far.get_int("tp", 1);
  EXPECT_EQ(far.finish().message(), "test.yaml: parallelism.zzzzzz: unknown key (known keys: tp)");
}

TEST(YamlReader, SkipMarksKeyKnown) {
  YamlReader r = reader("preset: dgx-a100\n");
  r.skip("preset");
  EXPECT_TRUE(r.finish().ok());
}

TEST(YamlReader, KeepsFirstError) {
  YamlReader r = reader("tp: abc\npp: xyz\n");
  r.get_int("tp", 1);
  r.get_int("pp", 1);
  r.fail("dp", "later problem");
  EXPECT_THAT(r.status().message(), HasSubstr("parallelism.tp"));
  EXPECT_THAT(r.finish().message(), Not(HasSubstr("pp")));
}

TEST(YamlReader, FirstErrorBeatsUnknownKey) {
  YamlReader r = reader("tp: abc\nbogus: 1\n");
  r.get_int("tp", 1);
  EXPECT_THAT(r.finish().message(), HasSubstr("'abc': expected an integer"));
}

TEST(YamlReader, FailRecordsMessageAtKey) {
  YamlReader r = reader("{}");
  EXPECT_TRUE(r.status().ok());
  r.fail("dp", "4: expected 8");
  EXPECT_EQ(r.status().message(), "test.yaml: parallelism.dp: 4: expected 8");
  EXPECT_EQ(r.finish().message(), "test.yaml: parallelism.dp: 4: expected 8");
}

TEST(YamlReader, KeyPathJoinsSectionAndKey) {
  EXPECT_EQ(reader("{}").key_path("tp"), "parallelism.tp");
  EXPECT_EQ(YamlReader(YAML::Node(), "f", "").key_path("tp"), "tp");
  EXPECT_EQ(YamlReader(YAML::Node(), "f", "cluster.gpu.peak").key_path("fp8"),
            "cluster.gpu.peak.fp8");
}

TEST(YamlReader, MultiLineValueGivesOneLineMessage) {
  // A block scalar holds newlines; the message must still be one line.
  YamlReader r = reader("tp: |\n  8\n  16\n");
  r.get_int("tp", 1);
  const Status s = r.finish();
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), "test.yaml: parallelism.tp: '8\\n16\\n': expected an integer");
}

}  // namespace
}  // namespace preflight
