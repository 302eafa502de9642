#include "interop/simai_format.h"

#include <gtest/gtest.h>

#include <cctype>
#include <fstream>
#include <sstream>

namespace preflight {
namespace {

std::string fixture(const std::string& name) {
  return std::string(PREFLIGHT_SOURCE_DIR) + "/tests/simai/" + name;
}

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(SimaiFormat, ParsesHeaderAndLayerFields) {
  StatusOr<SimaiWorkload> w = load_simai_workload(fixture("analytical_9216.txt"));
  ASSERT_TRUE(w.ok()) << w.status().message();
  EXPECT_EQ(w->policy, "HYBRID_TRANSFORMER_FWD_IN_BCKWD");
  EXPECT_EQ(w->tp, 2);
  EXPECT_EQ(w->ep, 16);
  EXPECT_EQ(w->pp, 12);
  EXPECT_EQ(w->ga, 24);
  EXPECT_EQ(w->all_gpus, 9216);
  EXPECT_EQ(w->pp_comm, 50331648);  // "pp_comm" without a colon
  ASSERT_EQ(w->layers.size(), 51u);
  const SimaiLayer& moe = w->layers[2];
  EXPECT_EQ(moe.name, "moe_grad_norm1");
  EXPECT_EQ(moe.wg.kind, CollectiveKind::kAllGather);
  EXPECT_EQ(moe.wg.group, SimaiGroup::kDataExpert);
  EXPECT_EQ(moe.wg.bytes, 19327352832);
  const SimaiLayer& attn = w->layers[3];
  EXPECT_EQ(attn.fwd_ns, 1750840);
  EXPECT_EQ(attn.fwd.kind, CollectiveKind::kAllGather);
  EXPECT_EQ(attn.fwd.group, SimaiGroup::kDefault);
  EXPECT_EQ(attn.ig.kind, CollectiveKind::kReduceScatter);
  EXPECT_EQ(w->layers[4].fwd.group, SimaiGroup::kExpert);
}

TEST(SimaiFormat, WriterOutputParsesToTheSameWorkload) {
  StatusOr<SimaiWorkload> w = load_simai_workload(fixture("analytical_9216.txt"));
  ASSERT_TRUE(w.ok());
  const std::string text = write_simai_workload(*w);
  StatusOr<SimaiWorkload> again = parse_simai_workload(text, "again.txt");
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(write_simai_workload(*again), text);
}

// Every truncation of a valid file, and every byte replaced by a character of each class,
// parses or fails with "FILE:LINE: ..."; never crashes.
TEST(SimaiFormat, TruncatedAndCorruptFilesGiveLineNumberedErrors) {
  const std::string text = read(fixture("analytical_9216.txt")).substr(0, 1200);
  const std::string file = "f.txt";
  int errors = 0;
  auto check = [&](const std::string& t) {
    StatusOr<SimaiWorkload> w = parse_simai_workload(t, file);
    if (w.ok()) return;
    ++errors;
    const std::string& m = w.status().message();
    ASSERT_EQ(m.rfind(file + ":", 0), 0u) << m;
    ASSERT_TRUE(std::isdigit(static_cast<unsigned char>(m[file.size() + 1]))) << m;
    ASSERT_EQ(m.find('\n'), std::string::npos) << m;
  };
  for (size_t n = 0; n < text.size(); ++n) check(text.substr(0, n));
  for (size_t i = 0; i < text.size(); i += 3) {
    for (char c : {'x', '-', '9', ' ', '\n', ':', '\0', '\xff'}) {
      std::string t = text;
      t[i] = c;
      check(t);
    }
  }
  EXPECT_GT(errors, 100);
  size_t cut = 0;
  for (int lines = 0; lines < 6; ++lines) cut = text.find('\n', cut) + 1;
  StatusOr<SimaiWorkload> w = parse_simai_workload(text.substr(0, cut), file);
  ASSERT_FALSE(w.ok());
  EXPECT_NE(w.status().message().find("ends early"), std::string::npos) << w.status().message();
}

TEST(SimaiFormat, NamesTheBadField) {
  StatusOr<SimaiWorkload> w =
      parse_simai_workload("MICRO\n1\nx\t-1\t1\tNONE\t0\t1\tGATHER\t0\t1\tNONE\t0\t1\n", "a.txt");
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.status().message().rfind("a.txt:3: field 7 'GATHER': expected a comm type", 0), 0u)
      << w.status().message();
}

TEST(SimaiFormat, ALayerNameThatIsNotUtf8IsAnError) {
  // Names reach the JSON report; invalid UTF-8 there used to throw from the JSON writer.
  StatusOr<SimaiWorkload> w = parse_simai_workload(
      "MICRO\n1\nla\xffyer\t-1\t1\tNONE\t0\t1\tNONE\t0\t1\tNONE\t0\t1\n", "a.txt");
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.status().message(),
            "a.txt:3: field 1 (the layer name): not UTF-8 text (byte 0xFF at offset 2): expected "
            "UTF-8");
}

}  // namespace
}  // namespace preflight
