// Chart pieces shared by the HTML reports of a simulation (html_report.h) and of a Chakra replay
// (chakra_html.h): the colours of the breakdown categories and their legend, timeline lanes whose
// spans of one category closer than a pixel merge into one rectangle, a time axis, and link
// utilization per network tier over time. Pure functions over plain values.
#pragma once

#include <string>
#include <vector>

#include "base/units.h"
#include "exec/executor.h"
#include "exec/transport.h"
#include "workload/workload.h"

namespace preflight::html {

// The category's fill colour ("#4e79a7" for compute) and legend name ("TP comm").
const char* category_color(Category c);
const char* category_name(Category c);

// A <div class="legend"> of every category, in the order compute, TP, PP, DP, EP, CP comm,
// optimizer (then offload, for a run with activation offloading), then `tail` (raw HTML
// <span>s, e.g. an idle swatch).
std::string category_legend(const std::string& tail, bool offload = false);

// One drawn rectangle of a timeline lane: `merged` trace intervals of one category.
struct LaneSpan {
  double start, end;  // seconds
  Category category;
  std::string name;  // the first interval's
  int merged;
};

// Appends `t` to `lane` (REQUIRES: intervals come in ascending start order), merging it into the
// last span when that has its category and ends less than a pixel before it (`px` pixels per
// second).
void add_to_lane(std::vector<LaneSpan>& lane, const TraceInterval& t, double px);

// The span's rectangle at x = left + start·px, with a tooltip naming it (or its category and the
// number of merged intervals) and its milliseconds.
std::string lane_rect(const LaneSpan& s, double left, double px, double y, double h,
                      const char* fill);

// One part of a breakdown: its name, time and fill colour.
struct BreakdownPart {
  std::string name;
  SimTime time;
  const char* color;
};

// <svg id="breakdown">: one bar labelled `label`, the parts stacked in order with widths in
// proportion to their times; then a table of every part's seconds and % of the parts' sum.
std::string breakdown_chart(const std::string& label, const std::vector<BreakdownPart>& parts);

// A horizontal time axis at `y` from `left` over `plot_w` pixels for [0, total_s] seconds: a
// line, about ten ticks with labels, and "time (s)".
std::string time_axis(double left, double plot_w, double y, double total_s);

// <svg id="network">: each tier's utilization (0–100%) as a step line over the run, with a
// legend of tiers and their means; a note instead when `has_stats` is false or no tier carried
// bytes (the analytical network).
std::string link_utilization(bool has_stats, const NetworkStats& n);

// <svg id="ports">: the packet network's hottest ports, each port's longest queue per slice of
// the run (KiB) as a step line, with a legend of ports, their longest queue and the time flow
// control held them; empty unless the packet network ran and some port queued.
std::string hot_ports(bool has_stats, const NetworkStats& n);

}  // namespace preflight::html
