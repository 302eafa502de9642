// A self-contained HTML report of one Chakra replay (`preflight simulate --workload chakra:PREFIX
// --report FILE.html`): the header (workload, ranks, trace nodes, groups, cluster, network,
// iteration time, critical rank), a timeline per rank with a lane per GPU stream, the CPU thread
// and sends/receives, the critical rank's time breakdown, a per-rank bar of end time split into
// GPU busy, exposed communication and other time, and, when the flow-level network ran, link
// utilization per tier over time. Inline SVG and CSS only: the file opens offline.
#pragma once

#include <string>
#include <vector>

#include "config/scenario.h"
#include "interop/chakra_replay.h"
#include "interop/chakra_trace.h"

namespace preflight {

// At most this many ranks get timeline lanes, and at most this many bars in the per-rank chart.
constexpr int kChakraTimelineRanks = 32;
constexpr int kChakraBarRanks = 64;

// The ranks of `n` a chart with room for `max` shows, ascending: all when n <= max, else rank 0,
// `critical` and evenly spaced others, `max` in all. REQUIRES: 0 <= critical < n, max >= 3.
std::vector<int> sample_ranks(int n, int critical, int max);

// `r` replayed `w` on `s`'s cluster. The timeline reads r.trace (replay with options.trace);
// without intervals it says so instead of drawing spans. O(n log n) in r.trace's size. Spans of
// one category less than a pixel apart merge; a rank with more than its share of 5,000 spans
// left is drawn in columns of 2–64 pixels, each in the category that ran longest in it.
std::string chakra_report_to_html(const ChakraReplayResult& r, const ChakraWorkload& w,
                                  const Scenario& s);

}  // namespace preflight
