#include "validation/csv.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace preflight {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(ParseCsv, QuotedCellsHoldCommasQuotesAndLineBreaks) {
  StatusOr<std::vector<CsvRecord>> r =
      parse_csv("a,b,c\r\n1,\"x, y\",\"say \"\"hi\"\"\"\n2,\"two\nlines\",\n\n3,,z", "t.csv");
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->size(), 4u);
  EXPECT_THAT((*r)[0].cells, ElementsAre("a", "b", "c"));
  EXPECT_THAT((*r)[1].cells, ElementsAre("1", "x, y", "say \"hi\""));
  EXPECT_THAT((*r)[2].cells, ElementsAre("2", "two\nlines", ""));
  EXPECT_EQ((*r)[2].line, 3);
  EXPECT_THAT((*r)[3].cells, ElementsAre("3", "", "z"));
  EXPECT_EQ((*r)[3].line, 6);  // the blank line 5 is skipped
}

TEST(ParseCsv, Errors) {
  EXPECT_THAT(parse_csv("a\n\"open", "t.csv").status().message(),
              HasSubstr("t.csv:2: unterminated quoted cell"));
  EXPECT_THAT(parse_csv("a\nx\"y", "t.csv").status().message(),
              HasSubstr("t.csv:2: a quote inside an unquoted cell"));
  EXPECT_THAT(parse_csv("a\n\"x\"y", "t.csv").status().message(),
              HasSubstr("t.csv:2: text after a closing quote"));
  EXPECT_EQ(read_csv_file("/nonexistent/file.csv").status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace preflight
