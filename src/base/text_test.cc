#include "base/text.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace preflight {
namespace {

TEST(EscapeForMessage, ControlBytesAndBadUtf8BecomeEscapes) {
  EXPECT_EQ(escape_for_message("a\nb\rc\td"), "a\\nb\\rc\\td");
  EXPECT_EQ(escape_for_message("x\x1b[2Jy"), "x\\x1B[2Jy");  // no terminal escape survives
  EXPECT_EQ(escape_for_message(std::string("a\0b", 3)), "a\\x00b");
  EXPECT_EQ(escape_for_message("\x7f"), "\\x7F");
  EXPECT_EQ(escape_for_message("\xff\xfe"), "\\xFF\\xFE");
  EXPECT_EQ(escape_for_message("caf\xc3\xa9 \xe2\x86\x92 GB/s"), "caf\xc3\xa9 \xe2\x86\x92 GB/s");
  EXPECT_EQ(escape_for_message("\xc3"), "\\xC3");  // truncated sequence
}

TEST(EscapeForMessage, LongValuesKeepTheirEnds) {
  const std::string big = "start" + std::string(10'000'000, 'x') + "end";
  const std::string e = escape_for_message(big, 2000);
  EXPECT_LT(e.size(), 2100u);
  EXPECT_EQ(e.rfind("start", 0), 0u);
  EXPECT_EQ(e.substr(e.size() - 3), "end");
  EXPECT_NE(e.find(" bytes)..."), std::string::npos);
  EXPECT_EQ(escape_for_message(std::string(100, 'y'), 2000), std::string(100, 'y'));
}

TEST(EscapeForMessage, C1AndBidiControlsBecomeEscapes) {
  EXPECT_EQ(escape_for_message("a\xC2\x9B"
                               "2J"),
            "a\\u009B2J");                                       // C1's one-byte CSI
  EXPECT_EQ(escape_for_message("x\xE2\x80\xAEy"), "x\\u202Ey");  // right-to-left override
  EXPECT_EQ(escape_for_message("\xE2\x81\xA6"), "\\u2066");      // left-to-right isolate
}

TEST(EscapeForMessage, TheEscapedTextIsBounded) {
  // 100,000 ESC bytes are 400,000 bytes escaped.
  std::string e = escape_for_message(std::string(100'000, '\x1b'), 2000);
  EXPECT_LT(e.size(), 2000u);
  EXPECT_NE(e.find(" bytes)..."), std::string::npos);
  EXPECT_EQ(escape_for_message(std::string(400, '\x01'), 2000).size(), 1600u);  // all of it
  std::string arrows;
  for (int i = 0; i < 5000; ++i) arrows += "\xe2\x86\x92";
  e = escape_for_message(arrows, 2000);
  EXPECT_EQ(invalid_utf8_at(e), std::string::npos);  // no cut splits a character
  EXPECT_LT(e.size(), 2000u);
  e = escape_for_message(std::string(3000, 'a') + "\x80\x80\x80\x80\x80", 2000);
  EXPECT_EQ(e.substr(e.size() - 20), "\\x80\\x80\\x80\\x80\\x80");  // stray bytes
}

TEST(InvalidUtf8At, FindsTheFirstBadByte) {
  EXPECT_EQ(invalid_utf8_at("plain ascii"), std::string::npos);
  EXPECT_EQ(invalid_utf8_at("\xe2\x86\x92 ok"), std::string::npos);
  EXPECT_EQ(invalid_utf8_at("ab\xff"), 2u);
  EXPECT_EQ(invalid_utf8_at("\xc0\xaf"), 0u);          // overlong '/'
  EXPECT_EQ(invalid_utf8_at("\xed\xa0\x80"), 0u);      // a UTF-16 surrogate
  EXPECT_EQ(invalid_utf8_at("\xf4\x90\x80\x80"), 0u);  // above U+10FFFF
}

TEST(ClosestMatch, SuggestsLikelyTyposOnly) {
  const std::vector<std::string> keys = {"tp", "pp", "dp", "cp", "ep", "etp", "vpp", "schedule"};
  EXPECT_EQ(closest_match("tpp", keys), "tp");
  EXPECT_EQ(closest_match("shedule", keys), "schedule");
  EXPECT_EQ(closest_match("xyzzy", keys), "");
  const std::vector<std::string> gpus = {"A100-SXM4-80GB", "H100-SXM5-80GB", "B200"};
  EXPECT_EQ(closest_match("h100-sxm5-80gb", gpus), "H100-SXM5-80GB");  // case only
  EXPECT_EQ(closest_match("b20", gpus), "B200");
  EXPECT_EQ(closest_match("H100", gpus), "H100-SXM5-80GB");  // the one it begins
  EXPECT_EQ(closest_match("zzz", gpus), "");
  EXPECT_EQ(closest_match("A", {"A100-SXM4-40GB", "A100-SXM4-80GB"}), "");  // not unique
  EXPECT_EQ(did_you_mean("llama3-7b", {"llama3-8b", "llama3-70b", "llama-7b"}),
            " (did you mean 'llama3-8b' or 'llama3-70b' or 'llama-7b'?)");
  EXPECT_EQ(did_you_mean("simulat", {"simulate", "memory"}), " (did you mean 'simulate'?)");
  // Ties go to the candidate with the same first letter.
  EXPECT_EQ(closest_match("tpp", {"pp", "tp"}), "tp");
  EXPECT_EQ(did_you_mean("qqqqqqqq", {"llama3-8b"}), "");
}

}  // namespace
}  // namespace preflight
