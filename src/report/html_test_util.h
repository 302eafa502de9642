// Checks shared by the HTML report tests (html_report_test.cc, search_html_test.cc,
// sweep_html_test.cc): counting, balanced tags, no outside resources. Test-only, header-only.
#pragma once

#include <gtest/gtest.h>

#include <initializer_list>
#include <regex>
#include <string>
#include <utility>

namespace preflight::html_test {

// Occurrences of `needle` in `hay` (overlapping ones too).
inline size_t count(const std::string& hay, const std::string& needle) {
  size_t n = 0;
  for (size_t p = hay.find(needle); p != std::string::npos; p = hay.find(needle, p + 1)) ++n;
  return n;
}

// Each needle occurs in `html` exactly the given number of times.
inline void expect_counts(const std::string& html,
                          std::initializer_list<std::pair<std::string, size_t>> want) {
  for (const auto& [needle, n] : want) EXPECT_EQ(count(html, needle), n) << needle;
}

// Each needle occurs in `html` (expect_has) or none does (expect_lacks).
inline void expect_has(const std::string& html, std::initializer_list<std::string> needles) {
  for (const std::string& n : needles) EXPECT_NE(html.find(n), std::string::npos) << n;
}
inline void expect_lacks(const std::string& html, std::initializer_list<std::string> needles) {
  for (const std::string& n : needles) EXPECT_EQ(html.find(n), std::string::npos) << n;
}

// Every opened element of these kinds is closed (self-closing ones count as both).
inline void expect_balanced(const std::string& html) {
  for (const char* tag : {"html", "head", "body",  "svg",   "g",   "table", "tr",     "td",
                          "th",   "dl",   "dt",    "dd",    "p",   "rect",  "circle", "polyline",
                          "line", "text", "title", "style", "div", "h1",    "h2"}) {
    const std::regex open(std::string("<") + tag + "[ >/]");
    const std::regex self(std::string("<") + tag + "(\\s[^<>]*)?/>");
    const auto opens = std::distance(std::sregex_iterator(html.begin(), html.end(), open), {});
    const auto selfs = std::distance(std::sregex_iterator(html.begin(), html.end(), self), {});
    const auto closes = static_cast<std::ptrdiff_t>(count(html, std::string("</") + tag + ">"));
    EXPECT_EQ(opens, selfs + closes) << tag;
  }
}

// The page opens offline: the only URL is the SVG namespace, no scripts or stylesheets fetched.
inline void expect_offline(const std::string& html) {
  std::string rest = html;
  const std::string ns = "xmlns=\"http://www.w3.org/2000/svg\"";
  for (size_t p = rest.find(ns); p != std::string::npos; p = rest.find(ns))
    rest.erase(p, ns.size());
  EXPECT_EQ(rest.find("http"), std::string::npos);
  EXPECT_EQ(rest.find("<script src"), std::string::npos);
  EXPECT_EQ(rest.find("<link"), std::string::npos);
}

}  // namespace preflight::html_test
