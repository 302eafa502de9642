#include "base/units.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

namespace preflight {
namespace {

using ::testing::HasSubstr;

// ---------------------------------------------------------------------------------------------
// SimTime

TEST(SimTime, NamedConstructorsRoundToThePicosecond) {
  EXPECT_EQ(SimTime::picoseconds(7).ps(), 7);
  EXPECT_EQ(SimTime::microseconds(1.5).ps(), 1'500'000);
  EXPECT_EQ(SimTime::seconds(2e-3).ps(), 2'000'000'000);
  // 0.4 ps rounds down, 0.6 ps rounds up (nearest, not truncation).
  EXPECT_EQ(SimTime::seconds(0.4e-12).ps(), 0);
  EXPECT_EQ(SimTime::seconds(0.6e-12).ps(), 1);
  EXPECT_EQ(SimTime::zero().ps(), 0);
  EXPECT_EQ(SimTime().ps(), 0);
  EXPECT_EQ(SimTime::max().ps(), INT64_MAX);
}

TEST(SimTime, ConvertsToSecondsMillisecondsMicroseconds) {
  const SimTime t = SimTime::picoseconds(2'500'000'000);  // 2.5 ms
  EXPECT_DOUBLE_EQ(t.to_seconds(), 2.5e-3);
  EXPECT_DOUBLE_EQ(t.to_milliseconds(), 2.5);
  EXPECT_DOUBLE_EQ(t.to_microseconds(), 2500.0);
}

TEST(SimTime, ArithmeticIsExactInPicoseconds) {
  const SimTime a = SimTime::picoseconds(1'000);
  const SimTime b = SimTime::picoseconds(250);
  EXPECT_EQ((a + b).ps(), 1'250);
  EXPECT_EQ((a - b).ps(), 750);
  EXPECT_EQ((b - a).ps(), -750);
  EXPECT_EQ((a * 3).ps(), 3'000);
  SimTime c = a;
  c += b;
  EXPECT_EQ(c.ps(), 1'250);
  c -= a;
  EXPECT_EQ(c.ps(), 250);
  // 0.1 ps is not representable in double, yet a million of them sum exactly in integer ps.
  SimTime sum;
  for (int i = 0; i < 1'000'000; ++i) sum += SimTime::picoseconds(1);
  EXPECT_EQ(sum, SimTime::microseconds(1));
}

TEST(SimTime, ScaledRoundsToNearestPicosecond) {
  EXPECT_EQ(SimTime::picoseconds(10).scaled(0.5).ps(), 5);
  EXPECT_EQ(SimTime::picoseconds(10).scaled(0.33).ps(), 3);  // 3.3 -> 3
  EXPECT_EQ(SimTime::picoseconds(10).scaled(0.37).ps(), 4);  // 3.7 -> 4
  EXPECT_EQ(SimTime::microseconds(1).scaled(2.5).ps(), 2'500'000);
}

TEST(SimTime, OrdersByPicoseconds) {
  const SimTime a = SimTime::picoseconds(1);
  const SimTime b = SimTime::picoseconds(2);
  EXPECT_LT(a, b);
  EXPECT_LE(a, a);
  EXPECT_GT(b, a);
  EXPECT_NE(a, b);
  EXPECT_EQ(a, SimTime::picoseconds(1));
  EXPECT_EQ(max(a, b), b);
  EXPECT_EQ(max(b, a), b);
  EXPECT_EQ(min(a, b), a);
  EXPECT_EQ(min(b, a), a);
  EXPECT_LT(SimTime::zero(), a);
  EXPECT_LT(b, SimTime::max());
}

// ---------------------------------------------------------------------------------------------
// Bytes, Bandwidth, Flops, FlopRate

TEST(Bytes, BinaryConstructorsAndArithmetic) {
  EXPECT_EQ(Bytes::kib(1).count(), 1024);
  EXPECT_EQ(Bytes::mib(1).count(), 1'048'576);
  EXPECT_EQ(Bytes::gib(80).count(), 85'899'345'920);  // 80 · 2^30
  EXPECT_DOUBLE_EQ(Bytes::gib(80).to_gib(), 80.0);
  EXPECT_EQ((Bytes(10) + Bytes(5)).count(), 15);
  EXPECT_EQ((Bytes(10) - Bytes(5)).count(), 5);
  EXPECT_EQ((Bytes(10) * 3).count(), 30);
  Bytes b(1);
  b += Bytes(2);
  EXPECT_EQ(b.count(), 3);
  EXPECT_LT(Bytes(1), Bytes(2));
  EXPECT_EQ(Bytes(), Bytes(0));
}

TEST(Bandwidth, GigabitsAreAnEighthOfGigabytes) {
  // 400 Gb/s = 400e9 / 8 B/s = 50e9 B/s.
  EXPECT_DOUBLE_EQ(Bandwidth::gigabits_per_second(400).bytes_per_second(), 50e9);
  EXPECT_DOUBLE_EQ(Bandwidth::gigabytes_per_second(900).bytes_per_second(), 900e9);
  EXPECT_DOUBLE_EQ(Bandwidth::bytes_per_second(1e9).gigabytes_per_second(), 1.0);
  EXPECT_DOUBLE_EQ((Bandwidth::gigabytes_per_second(100) * 0.5).gigabytes_per_second(), 50.0);
  EXPECT_DOUBLE_EQ((Bandwidth::gigabytes_per_second(100) / 4).gigabytes_per_second(), 25.0);
  EXPECT_LT(Bandwidth::gigabits_per_second(400), Bandwidth::gigabytes_per_second(51));
}

TEST(Flops, AddAndScale) {
  Flops f(1e12);
  f += Flops(2e12);
  EXPECT_DOUBLE_EQ(f.count(), 3e12);
  EXPECT_DOUBLE_EQ((Flops(1e12) + Flops(1e12)).count(), 2e12);
  EXPECT_DOUBLE_EQ((Flops(1e12) * 6).count(), 6e12);
  EXPECT_LT(Flops(1), Flops(2));
}

TEST(FlopRate, TeraflopsRoundTrip) {
  EXPECT_DOUBLE_EQ(FlopRate::teraflops(312).flops_per_second(), 312e12);
  EXPECT_DOUBLE_EQ(FlopRate::flops_per_second(989e12).teraflops(), 989.0);
  EXPECT_DOUBLE_EQ((FlopRate::teraflops(312) * 0.5).teraflops(), 156.0);
}

TEST(BytesOverBandwidth, GivesExactTransferTime) {
  // 1 GB / 100 GB/s = 10 ms = 1e10 ps exactly.
  EXPECT_EQ((Bytes(1'000'000'000) / Bandwidth::gigabytes_per_second(100)).ps(), 10'000'000'000);
  // 80 GiB / 2039 GB/s = 85899345920 / 2.039e12 s = 42.128173575 ms.
  EXPECT_EQ((Bytes::gib(80) / Bandwidth::gigabytes_per_second(2039)).ps(), 42'128'173'575);
  EXPECT_EQ((Bytes(0) / Bandwidth::gigabytes_per_second(1)).ps(), 0);
}

TEST(BytesOverBandwidth, RoundsToNearestPicosecond) {
  // 1 B at 3 B/s = 333333333333.33 ps -> ...333; 2 B = 666666666666.67 ps -> ...667.
  EXPECT_EQ((Bytes(1) / Bandwidth::bytes_per_second(3)).ps(), 333'333'333'333);
  EXPECT_EQ((Bytes(2) / Bandwidth::bytes_per_second(3)).ps(), 666'666'666'667);
}

TEST(FlopsOverFlopRate, GivesComputeTime) {
  // 2 TFLOP at 1000 TFLOPS = 2 ms.
  EXPECT_EQ((Flops(2e12) / FlopRate::teraflops(1000)).ps(), 2'000'000'000);
  // 1 FLOP at 3 FLOP/s = 1/3 s, rounded to the nearest ps.
  EXPECT_EQ((Flops(1) / FlopRate::flops_per_second(3)).ps(), 333'333'333'333);
}

TEST(BytesOverBandwidthDeathTest, ZeroBandwidthIsAProgrammerError) {
  EXPECT_DEATH((void)(Bytes(1) / Bandwidth()), "internal check failed");
}

// ---------------------------------------------------------------------------------------------
// Parsers: accepted forms

TEST(ParseBandwidth, AcceptsBitAndByteRates) {
  // 400 Gb/s = 400e9 / 8 = 50e9 B/s.
  StatusOr<Bandwidth> gbps = parse_bandwidth("400Gbps");
  ASSERT_TRUE(gbps.ok()) << gbps.status().message();
  EXPECT_DOUBLE_EQ(gbps->bytes_per_second(), 50e9);
  StatusOr<Bandwidth> gbs = parse_bandwidth("900GB/s");
  ASSERT_TRUE(gbs.ok()) << gbs.status().message();
  EXPECT_DOUBLE_EQ(gbs->bytes_per_second(), 900e9);
  StatusOr<Bandwidth> gib = parse_bandwidth("1GiB/s");
  ASSERT_TRUE(gib.ok());
  EXPECT_DOUBLE_EQ(gib->bytes_per_second(), 1073741824.0);
  StatusOr<Bandwidth> spaced = parse_bandwidth("200 Gbps");
  ASSERT_TRUE(spaced.ok());
  EXPECT_DOUBLE_EQ(spaced->bytes_per_second(), 25e9);
  StatusOr<Bandwidth> tb = parse_bandwidth("1.5TB/s");
  ASSERT_TRUE(tb.ok());
  EXPECT_DOUBLE_EQ(tb->bytes_per_second(), 1.5e12);
}

TEST(ParseBytes, AcceptsDecimalAndBinaryUnits) {
  StatusOr<Bytes> gib = parse_bytes("80GiB");
  ASSERT_TRUE(gib.ok()) << gib.status().message();
  EXPECT_EQ(gib->count(), 85'899'345'920);  // 80 · 2^30
  StatusOr<Bytes> gb = parse_bytes("80GB");
  ASSERT_TRUE(gb.ok());
  EXPECT_EQ(gb->count(), 80'000'000'000);
  StatusOr<Bytes> b = parse_bytes("512 B");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->count(), 512);
  StatusOr<Bytes> kib = parse_bytes("1.5KiB");
  ASSERT_TRUE(kib.ok());
  EXPECT_EQ(kib->count(), 1536);
  StatusOr<Bytes> tib = parse_bytes("1TiB");
  ASSERT_TRUE(tib.ok());
  EXPECT_EQ(tib->count(), int64_t{1} << 40);
}

TEST(ParseTime, AcceptsEveryUnit) {
  struct Case {
    const char* text;
    int64_t ps;
  };
  const Case cases[] = {
      {"1.5us", 1'500'000}, {"1.5 us", 1'500'000},   {"7ps", 7},
      {"250ns", 250'000},   {"2 ms", 2'000'000'000}, {"1s", 1'000'000'000'000},
  };
  for (const Case& c : cases) {
    StatusOr<SimTime> t = parse_time(c.text);
    ASSERT_TRUE(t.ok()) << c.text << ": " << t.status().message();
    EXPECT_EQ(t->ps(), c.ps) << c.text;
  }
  StatusOr<SimTime> micro = parse_time("3\xC2\xB5s");  // "3µs"
  ASSERT_TRUE(micro.ok()) << micro.status().message();
  EXPECT_EQ(micro->ps(), 3'000'000);
}

TEST(ParseTime, TrimsSurroundingWhitespace) {
  StatusOr<SimTime> t = parse_time("  2 ms\t ");
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->ps(), 2'000'000'000);
}

TEST(ParseTime, AcceptsZero) {
  StatusOr<SimTime> t = parse_time("0us");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(*t, SimTime::zero());
}

TEST(ParseFlopRate, AcceptsFlopsAndFlopPerSecond) {
  StatusOr<FlopRate> tf = parse_flop_rate("989TFLOPS");
  ASSERT_TRUE(tf.ok()) << tf.status().message();
  EXPECT_DOUBLE_EQ(tf->flops_per_second(), 989e12);
  StatusOr<FlopRate> slash = parse_flop_rate("19.5 TFLOP/s");
  ASSERT_TRUE(slash.ok()) << slash.status().message();
  EXPECT_DOUBLE_EQ(slash->teraflops(), 19.5);
  StatusOr<FlopRate> pf = parse_flop_rate("2PFLOPS");
  ASSERT_TRUE(pf.ok());
  EXPECT_DOUBLE_EQ(pf->flops_per_second(), 2e15);
  StatusOr<FlopRate> zero = parse_flop_rate("0TFLOPS");  // "no FP8" in the A100 preset
  ASSERT_TRUE(zero.ok());
  EXPECT_DOUBLE_EQ(zero->flops_per_second(), 0.0);
}

TEST(ParseFlops, AcceptsFlopCounts) {
  StatusOr<Flops> f = parse_flops("3.5TFLOP");
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_DOUBLE_EQ(f->count(), 3.5e12);
  StatusOr<Flops> g = parse_flops("10 GFLOP");
  ASSERT_TRUE(g.ok());
  EXPECT_DOUBLE_EQ(g->count(), 1e10);
}

// ---------------------------------------------------------------------------------------------
// Parsers: rejected forms. Every message says what was expected.

TEST(ParseBytes, RejectsBareNumber) {
  StatusOr<Bytes> b = parse_bytes("80");
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(b.status().message(), HasSubstr("'80' has no unit"));
  EXPECT_THAT(b.status().message(), HasSubstr("expected a size with a unit"));
  EXPECT_THAT(b.status().message(), HasSubstr("GiB"));
}

TEST(ParseBytes, RejectsUnknownUnit) {
  StatusOr<Bytes> b = parse_bytes("80GiG");
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(b.status().message(), HasSubstr("unknown unit 'GiG'"));
  EXPECT_THAT(b.status().message(), HasSubstr("expected a size with a unit (B, KB"));
}

TEST(ParseBytes, RejectsTooLarge) {
  StatusOr<Bytes> b = parse_bytes("10000000TB");  // 1e19 B > INT64_MAX
  ASSERT_FALSE(b.ok());
  EXPECT_THAT(b.status().message(), HasSubstr("too large"));
}

TEST(ParseTime, RejectsNegative) {
  StatusOr<SimTime> t = parse_time("-1us");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(t.status().message(), HasSubstr("'-1us' is negative"));
  EXPECT_THAT(t.status().message(), HasSubstr("expected a duration with a unit (ps, ns, us"));
}

TEST(ParseTime, RejectsEmptyAndBlank) {
  for (const char* text : {"", "   "}) {
    StatusOr<SimTime> t = parse_time(text);
    ASSERT_FALSE(t.ok()) << "'" << text << "'";
    EXPECT_THAT(t.status().message(), HasSubstr("empty value"));
    EXPECT_THAT(t.status().message(), HasSubstr("expected a duration"));
  }
}

TEST(ParseTime, RejectsTrailingJunk) {
  StatusOr<SimTime> t = parse_time("1.5usx");
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(t.status().message(), HasSubstr("'1.5usx' has unknown unit 'usx'"));
  EXPECT_THAT(t.status().message(), HasSubstr("expected a duration"));
}

TEST(ParseTime, RejectsNonNumber) {
  StatusOr<SimTime> t = parse_time("fast");
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(t.status().message(), HasSubstr("'fast' is not a number"));
  StatusOr<SimTime> nan = parse_time("nan us");
  ASSERT_FALSE(nan.ok());
  EXPECT_THAT(nan.status().message(), HasSubstr("not finite"));
}

TEST(ParseTime, RejectsDurationsBeyondInt64Picoseconds) {
  StatusOr<SimTime> t = parse_time("1e7s");  // 1e19 ps > INT64_MAX
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(t.status().message(), HasSubstr("too long"));
}

TEST(ParseTime, UnitsAreCaseSensitive) {
  // "MS" is neither ms nor megaseconds: refuse rather than guess.
  EXPECT_FALSE(parse_time("1MS").ok());
  EXPECT_FALSE(parse_time("1US").ok());
}

TEST(ParseBandwidth, RejectsBareNumberAndSizeUnit) {
  StatusOr<Bandwidth> bare = parse_bandwidth("400");
  ASSERT_FALSE(bare.ok());
  EXPECT_THAT(bare.status().message(), HasSubstr("expected a bandwidth with a unit"));
  EXPECT_THAT(bare.status().message(), HasSubstr("Gbps"));
  // A size is not a rate.
  StatusOr<Bandwidth> size = parse_bandwidth("400GB");
  ASSERT_FALSE(size.ok());
  EXPECT_THAT(size.status().message(), HasSubstr("unknown unit 'GB'"));
}

TEST(ParseFlopRate, RejectsFlopCountAndBareNumber) {
  StatusOr<FlopRate> count = parse_flop_rate("989TFLOP");
  ASSERT_FALSE(count.ok());
  EXPECT_THAT(count.status().message(), HasSubstr("expected a FLOP rate with a unit"));
  StatusOr<FlopRate> bare = parse_flop_rate("989");
  ASSERT_FALSE(bare.ok());
  EXPECT_THAT(bare.status().message(), HasSubstr("has no unit"));
}

TEST(ParseFlops, RejectsRateAndNegative) {
  StatusOr<Flops> rate = parse_flops("1TFLOPS");
  ASSERT_FALSE(rate.ok());
  EXPECT_THAT(rate.status().message(), HasSubstr("expected a FLOP count with a unit"));
  StatusOr<Flops> neg = parse_flops("-1TFLOP");
  ASSERT_FALSE(neg.ok());
  EXPECT_THAT(neg.status().message(), HasSubstr("negative"));
}

TEST(ParseBytes, MessagesAreOneLine) {
  for (const char* text : {"", "80", "80GiG", "-1GB", "x", "1e30TB"}) {
    StatusOr<Bytes> b = parse_bytes(text);
    ASSERT_FALSE(b.ok()) << text;
    EXPECT_EQ(b.status().message().find('\n'), std::string::npos) << b.status().message();
  }
}

// ---------------------------------------------------------------------------------------------
// Formatting

TEST(FormatTime, PicksMicroMilliOrSeconds) {
  EXPECT_EQ(format_time(SimTime::microseconds(1.5)), "1.50 us");
  EXPECT_EQ(format_time(SimTime::zero()), "0.00 us");
  EXPECT_EQ(format_time(SimTime::picoseconds(2'000'000'000)), "2.00 ms");
  EXPECT_EQ(format_time(SimTime::picoseconds(999'990'000)), "999.99 us");
  EXPECT_EQ(format_time(SimTime::seconds(1.5)), "1.500 s");
}

TEST(FormatBytes, PicksBinaryUnit) {
  EXPECT_EQ(format_bytes(Bytes(512)), "512 B");
  EXPECT_EQ(format_bytes(Bytes(1536)), "1.50 KiB");
  EXPECT_EQ(format_bytes(Bytes::mib(3)), "3.00 MiB");
  EXPECT_EQ(format_bytes(Bytes::gib(80)), "80.00 GiB");
}

TEST(FormatBandwidth, PrintsGigabytesPerSecond) {
  // 400 Gb/s = 50 GB/s.
  EXPECT_EQ(format_bandwidth(Bandwidth::gigabits_per_second(400)), "50.0 GB/s");
  EXPECT_EQ(format_bandwidth(Bandwidth::gigabytes_per_second(2039)), "2039.0 GB/s");
}

}  // namespace
}  // namespace preflight
