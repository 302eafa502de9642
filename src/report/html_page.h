// Building blocks of Preflight's self-contained HTML reports (`simulate`, `search` and `sweep`
// --report) and of the sweep's SVG chart: escaping, number formatting, the page head with its
// inline CSS, and the inline-SVG primitives the charts are drawn with. Pure functions: the same
// inputs give the same bytes, and nothing refers to a resource outside the page (the only URL is
// the SVG namespace).
#pragma once

#include <string>
#include <vector>

namespace preflight::html {

// `s` with &, <, > and " written as entities: safe in element text and in "-quoted attributes.
std::string esc(const std::string& s);

// printf of one double, e.g. fmt("%.3f", 1.5) = "1.500".
std::string fmt(const char* format, double v);

// A coordinate: two decimals.
std::string num(double v);

// An axis tick label: %g below 10,000, then 12k, 1.5M, 2G.
std::string tick_label(double v);

// Ticks at 1/2/5 × 10^k, about `target` of them over [0, max]; 1 when max <= 0.
double tick_step(double max, int target);

// "<!DOCTYPE html>" through "<body>" and an <h1>: `title` is the browser tab's, `heading` the
// page's. Both are escaped. The CSS styles <dl> headers, tables (class "ranked": a row per
// candidate, "best" highlighted), SVG text, legends and notes (class "note").
std::string page_open(const std::string& title, const std::string& heading);
// "</body></html>".
std::string page_close();

// A <dt>/<dd> pair of the header's <dl>, both escaped.
std::string item(const std::string& key, const std::string& value);

// A table cell, escaped: "<td>v</td>", or "<td class=\"text\">" (left-aligned) for words.
std::string td(const std::string& v, bool text = false);
// A header row, escaped: "<tr><th>a</th><th>b</th></tr>\n".
std::string header_row(const std::vector<std::string>& names);

// `<svg xmlns=... id=... width height viewBox>`; the caller closes it with "</svg>\n".
std::string svg_open(int width, int height, const char* id);
// A filled rectangle at least 0.5 px wide, with a <title> tooltip when `title` is not empty.
std::string rect(double x, double y, double w, double h, const char* fill,
                 const std::string& title = "");
// Escaped text; anchor is start, middle or end.
std::string text(double x, double y, const std::string& t, const char* anchor = "start");
// A line; `extra` is raw attributes (e.g. " stroke-dasharray=\"4 2\""), starting with a space.
std::string line(double x1, double y1, double x2, double y2, const char* stroke,
                 const char* extra = "");

}  // namespace preflight::html
