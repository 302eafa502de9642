#include "report/html_page.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace preflight::html {

namespace {

constexpr const char* kSvgNs = "http://www.w3.org/2000/svg";

constexpr const char* kCss =
    "body{font:13px/1.4 sans-serif;margin:20px;color:#222;background:#fff}\n"
    "h1{font-size:20px;margin:0 0 8px}h2{font-size:16px;margin:22px 0 6px}\n"
    "dl{display:grid;grid-template-columns:max-content auto;gap:2px 14px;margin:0}\n"
    "dt{color:#666}dd{margin:0;font-weight:600}\n"
    "svg{display:block;font:11px sans-serif}svg text{fill:#333}\n"
    ".legend span{margin-right:14px}.legend i,td i{display:inline-block;width:10px;"
    "height:10px;margin-right:4px}\n"
    "table{border-collapse:collapse;margin-top:6px}td,th{padding:1px 10px;text-align:right}"
    "td:first-child,th:first-child{text-align:left}\n"
    "table.ranked td,table.ranked th{padding:1px 7px}"
    "table.ranked th{border-bottom:1px solid #999;white-space:nowrap}"
    "table.ranked td{border-bottom:1px solid #eee;white-space:nowrap}"
    "table.ranked tr.best td{background:#fff3cd;font-weight:600}"
    "table.ranked td.text{text-align:left}table.ranked td.error{text-align:left;color:#b00}\n"
    ".note{color:#666;font-style:italic}\n";

}  // namespace

std::string esc(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), format, v);
  return buf;
}

std::string num(double v) { return fmt("%.2f", v); }

std::string tick_label(double v) {
  const double a = std::fabs(v);
  if (a >= 1e9) return fmt("%gG", v / 1e9);
  if (a >= 1e6) return fmt("%gM", v / 1e6);
  if (a >= 1e4) return fmt("%gk", v / 1e3);
  return fmt("%g", v);
}

double tick_step(double max, int target) {
  if (max <= 0) return 1;
  const double raw = max / target;
  double p = 1;
  while (p * 10 <= raw) p *= 10;
  while (p > raw) p /= 10;
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (p * m >= raw) return p * m;
  }
  return p * 10;
}

std::string page_open(const std::string& title, const std::string& heading) {
  return "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>" +
         esc(title) + "</title>\n<style>\n" + kCss + "</style>\n</head>\n<body>\n<h1>" +
         esc(heading) + "</h1>\n";
}

std::string page_close() { return "</body>\n</html>\n"; }

std::string item(const std::string& key, const std::string& value) {
  return "<dt>" + esc(key) + "</dt><dd>" + esc(value) + "</dd>\n";
}

std::string td(const std::string& v, bool text) {
  return std::string(text ? "<td class=\"text\">" : "<td>") + esc(v) + "</td>";
}

std::string header_row(const std::vector<std::string>& names) {
  std::string out = "<tr>";
  for (const std::string& n : names) out += "<th>" + esc(n) + "</th>";
  return out + "</tr>\n";
}

std::string svg_open(int width, int height, const char* id) {
  return std::string("<svg xmlns=\"") + kSvgNs + "\" id=\"" + id + "\" width=\"" +
         std::to_string(width) + "\" height=\"" + std::to_string(height) + "\" viewBox=\"0 0 " +
         std::to_string(width) + " " + std::to_string(height) + "\">\n";
}

std::string rect(double x, double y, double w, double h, const char* fill,
                 const std::string& title) {
  std::string s = "<rect x=\"" + num(x) + "\" y=\"" + num(y) + "\" width=\"" +
                  num(std::max(w, 0.5)) + "\" height=\"" + num(h) + "\" fill=\"" + fill + "\"";
  if (title.empty()) return s + "/>\n";
  return s + "><title>" + esc(title) + "</title></rect>\n";
}

std::string text(double x, double y, const std::string& t, const char* anchor) {
  return "<text x=\"" + num(x) + "\" y=\"" + num(y) + "\" text-anchor=\"" + anchor + "\">" +
         esc(t) + "</text>\n";
}

std::string line(double x1, double y1, double x2, double y2, const char* stroke,
                 const char* extra) {
  return "<line x1=\"" + num(x1) + "\" y1=\"" + num(y1) + "\" x2=\"" + num(x2) + "\" y2=\"" +
         num(y2) + "\" stroke=\"" + stroke + "\"" + extra + "/>\n";
}

}  // namespace preflight::html
