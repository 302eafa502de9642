#include "report/chakra_html.h"

#include <algorithm>
#include <array>
#include <climits>
#include <cmath>
#include <set>
#include <utility>

#include "report/html_charts.h"
#include "report/html_page.h"

namespace preflight {

namespace {

constexpr size_t kMaxRects = 5000;  // timeline spans drawn at most
constexpr const char* kCpuColor = "#9c755f";
constexpr const char* kIdleColor = "#bab0ac";
constexpr const char* kOtherCommColor = "#ff9da7";

using html::esc;
using html::fmt;
using html::line;
using html::rect;
using html::svg_open;
using html::text;

std::string stream_name(int stream) {
  return stream == -2 ? "send/recv" : stream == -1 ? "CPU" : "stream " + std::to_string(stream);
}

// GPU streams ascending, then the CPU thread, then sends and receives.
int lane_order(int stream) { return stream >= 0 ? stream : INT_MAX - 2 - stream; }

std::string shown_note(const std::vector<int>& shown, size_t ranks, const char* what) {
  if (shown.size() >= ranks) return "";
  std::string list;
  for (int r : shown) list += (list.empty() ? "" : ", ") + std::to_string(r);
  return "<p class=\"note\">" + std::string(what) + " " + std::to_string(shown.size()) + " of " +
         std::to_string(ranks) +
         " ranks (rank 0, the critical rank and evenly spaced others): " + list + ".</p>\n";
}

// `lane` (ascending, non-overlapping spans) in columns 1 / `per_s` seconds wide: each column with
// any span becomes one span of the category that covers most of it, from its first covered
// instant to its last; neighbouring columns of one category merge.
std::vector<html::LaneSpan> by_columns(const std::vector<html::LaneSpan>& lane, double per_s) {
  std::vector<html::LaneSpan> out;
  size_t i = 0;
  double from = 0;      // lane[i] before this was drawn in earlier columns
  int64_t min_col = 0;  // the first column not drawn yet
  while (i < lane.size()) {
    const double s0 = std::max(from, lane[i].start);
    const int64_t col = std::max(min_col, static_cast<int64_t>(std::floor(s0 * per_s)));
    const double col_end = static_cast<double>(col + 1) / per_s;
    std::array<double, 8> time{};
    html::LaneSpan c{s0, s0, lane[i].category, lane[i].name, 0};
    do {
      const double s = std::max(from, lane[i].start), e = std::min(lane[i].end, col_end);
      time[static_cast<size_t>(lane[i].category)] += std::max(0.0, e - s);
      c.end = std::max(c.end, e);
      if (lane[i].end > col_end) {
        from = col_end;
        break;
      }
      c.merged += lane[i].merged;
      ++i;
    } while (i < lane.size() && lane[i].start < col_end);
    min_col = col + 1;
    c.category = static_cast<Category>(std::max_element(time.begin(), time.end()) - time.begin());
    if (!out.empty() && out.back().category == c.category && c.start - out.back().end < 1 / per_s) {
      out.back().end = c.end;
      out.back().merged += c.merged;
    } else {
      out.push_back(c);
    }
  }
  return out;
}

// 1. Timeline: a group of lanes per shown rank, a lane per stream it used.
std::string timeline(const ChakraReplayResult& r, const std::vector<int>& shown) {
  const double total = std::max(r.iteration_time.to_seconds(), 1e-12);
  const int left = 150, plot_w = 1100, lane_h = 12, gap = 6, top = 10;
  const double px = plot_w / total;
  std::vector<int> slot(r.ranks.size(), -1);
  for (size_t i = 0; i < shown.size(); ++i)
    slot[static_cast<size_t>(shown[i])] = static_cast<int>(i);
  std::vector<std::vector<const TraceInterval*>> per_slot(shown.size());
  for (const TraceInterval& t : r.trace) {
    if (t.stage < 0 || static_cast<size_t>(t.stage) >= slot.size()) continue;
    const int k = slot[static_cast<size_t>(t.stage)];
    if (k >= 0) per_slot[static_cast<size_t>(k)].push_back(&t);
  }
  // Per slot: (stream, merged spans) lanes in lane order. Spans of one category less than `gap_px`
  // pixels apart merge: 1, doubled while the rank has more than its share of kMaxRects.
  std::vector<std::vector<std::pair<int, std::vector<html::LaneSpan>>>> lanes(shown.size());
  const size_t budget = std::max<size_t>(kMaxRects / std::max<size_t>(shown.size(), 1), 50);
  int rows = 0, widest_column = 1;
  for (size_t k = 0; k < shown.size(); ++k) {
    std::vector<const TraceInterval*>& v = per_slot[k];
    std::stable_sort(v.begin(), v.end(), [](const TraceInterval* a, const TraceInterval* b) {
      const int la = lane_order(a->stream), lb = lane_order(b->stream);
      return la != lb ? la < lb : a->start < b->start;
    });
    size_t spans = 0;
    for (const TraceInterval* t : v) {
      if (lanes[k].empty() || lanes[k].back().first != t->stream)
        lanes[k].push_back({t->stream, {}});
      html::add_to_lane(lanes[k].back().second, *t, px);
    }
    for (const auto& lane : lanes[k]) spans += lane.second.size();
    // Still too many (categories alternating faster than a pixel): columns of `column_px`.
    for (int column_px = 2; spans > budget && column_px <= 64; column_px *= 2) {
      spans = 0;
      for (auto& lane : lanes[k]) {
        lane.second = by_columns(lane.second, px / column_px);
        spans += lane.second.size();
      }
      widest_column = std::max(widest_column, column_px);
    }
    rows += std::max<int>(1, static_cast<int>(lanes[k].size()));
  }
  const int height = top + rows * lane_h + static_cast<int>(shown.size()) * gap + 44;
  std::string out = svg_open(left + plot_w + 20, height, "timeline");
  size_t drawn = 0, skipped = 0;
  double y = top;
  for (size_t k = 0; k < shown.size(); ++k) {
    const int rank = shown[k];
    const int n = std::max<int>(1, static_cast<int>(lanes[k].size()));
    out += "<g class=\"rank-row\">\n";
    out += text(4, y + 10, "rank " + std::to_string(rank) + (rank == r.critical_rank ? " *" : ""));
    out += rect(left, y, plot_w, n * lane_h, "#ffffff");
    for (size_t l = 0; l < lanes[k].size(); ++l) {
      const double ly = y + static_cast<double>(l) * lane_h;
      const int stream = lanes[k][l].first;
      out += text(left - 4, ly + 10, stream_name(stream), "end");
      for (const html::LaneSpan& sp : lanes[k][l].second) {
        if (drawn >= kMaxRects) {
          ++skipped;
          continue;
        }
        out += html::lane_rect(sp, left, px, ly, lane_h - 1,
                               stream == -1 ? kCpuColor : html::category_color(sp.category));
        ++drawn;
      }
    }
    out += "</g>\n";
    y += n * lane_h + gap;
  }
  out += html::time_axis(left, plot_w, y, total) + "</svg>\n";
  std::string note = shown_note(shown, r.ranks.size(), "Showing");
  if (r.trace.empty()) note += "<p class=\"note\">No trace intervals were recorded.</p>\n";
  if (widest_column > 1) {
    note +=
        "<p class=\"note\">Where categories alternate faster than the pixels can show, a "
        "lane is drawn in columns of up to " +
        std::to_string(widest_column) +
        " pixels, each in the category that ran longest in it.</p>\n";
  }
  if (skipped > 0) {
    note += "<p class=\"note\">Timeline capped at " + std::to_string(kMaxRects) + " spans (" +
            std::to_string(skipped) + " more not drawn).</p>\n";
  }
  return out + note;
}

// 2. The critical rank's breakdown (the parts add up to its end time).
std::string breakdown(const ChakraReplayResult& r) {
  if (r.ranks.empty()) return "<p class=\"note\">No ranks.</p>\n";
  const Breakdown& b = r.ranks[static_cast<size_t>(r.critical_rank)].breakdown;
  using html::category_color;
  std::vector<html::BreakdownPart> parts = {
      {"compute", b.compute, category_color(Category::kCompute)},
      {"optimizer", b.optimizer, category_color(Category::kOptimizer)},
      {"exposed TP comm", b.tp_comm, category_color(Category::kTpComm)},
      {"exposed PP comm", b.pp_comm, category_color(Category::kPpComm)},
      {"exposed DP comm", b.dp_comm, category_color(Category::kDpComm)},
      {"exposed EP comm", b.ep_comm, category_color(Category::kEpComm)},
      {"exposed CP comm", b.cp_comm, category_color(Category::kCpComm)},
      {"exposed comm (no category)", b.other_comm, kOtherCommColor}};
  // Host copies of activation offloading, a part only in traces that have them.
  if (b.offload.ps() > 0) {
    parts.push_back({"exposed offload", b.offload, category_color(Category::kOffload)});
  }
  parts.push_back({"CPU only", b.host_overhead, kCpuColor});
  parts.push_back({"idle (waiting for other ranks)", b.bubble, kIdleColor});
  return html::breakdown_chart("rank " + std::to_string(r.critical_rank), parts);
}

// 3. Per rank: end time stacked as GPU busy, exposed communication and other (CPU only, idle).
std::string per_rank(const ChakraReplayResult& r, const std::vector<int>& shown) {
  const double max_ms = std::max(r.iteration_time.to_seconds() * 1e3 * 1.05, 1e-9);
  const int left = 60, plot_h = 240, top = 14, bar_w = 14, pitch = 18;
  const int plot_w = static_cast<int>(shown.size()) * pitch + 10;
  const int width = std::max(left + plot_w + 200, 500), height = top + plot_h + 44;
  const double py = plot_h / max_ms, base = top + plot_h;
  const std::array<const char*, 3> names = {"GPU busy", "exposed comm", "other (CPU, idle)"};
  const std::array<const char*, 3> colors = {html::category_color(Category::kCompute),
                                             html::category_color(Category::kDpComm), kIdleColor};
  std::string out = svg_open(width, height, "ranks");
  out += line(left, base, left + plot_w, base, "#333");
  out += line(left, top, left, base, "#333");
  const double step = html::tick_step(max_ms, 6);
  for (double v = 0; v <= max_ms; v += step) {
    out += text(left - 4, base - v * py + 4, fmt("%g", v), "end");
  }
  out += text(4, top - 2, "ms");
  for (size_t i = 0; i < shown.size(); ++i) {
    const ChakraRankResult& k = r.ranks[static_cast<size_t>(shown[i])];
    const Breakdown& b = k.breakdown;
    const std::array<double, 3> v = {(b.compute + b.optimizer).to_seconds() * 1e3,
                                     b.exposed_comm().to_seconds() * 1e3,
                                     (b.host_overhead + b.bubble).to_seconds() * 1e3};
    const double x = left + 8 + static_cast<double>(i) * pitch;
    double y = base;
    const std::string who = "rank " + std::to_string(shown[i]);
    for (size_t c = 0; c < v.size(); ++c) {
      const double h = v[c] * py;
      if (h <= 0) continue;
      y -= h;
      out += rect(x, y, bar_w, h, colors[c],
                  who + " " + names[c] + ": " + fmt("%.3f", v[c]) + " ms (end " +
                      fmt("%.3f", k.end.to_seconds() * 1e3) + " ms, communication busy " +
                      fmt("%.3f", k.comm_busy.to_seconds() * 1e3) + " ms)");
    }
    if (shown.size() <= 16 || i % 4 == 0) {
      out += text(x + bar_w / 2.0, base + 14, std::to_string(shown[i]), "middle");
    }
  }
  out += text(left + plot_w / 2.0, base + 32, "rank", "middle");
  for (size_t c = 0; c < names.size(); ++c) {
    out += rect(left + plot_w + 20, top + 20 + 16.0 * c, 10, 10, colors[c]);
    out += text(left + plot_w + 34, top + 29 + 16.0 * c, names[c]);
  }
  return out + "</svg>\n" + shown_note(shown, r.ranks.size(), "Showing");
}

}  // namespace

std::vector<int> sample_ranks(int n, int critical, int max) {
  std::vector<int> out;
  if (n <= max) {
    for (int i = 0; i < n; ++i) out.push_back(i);
    return out;
  }
  // max − 1 evenly spaced from 0 to n − 1, then the critical rank, then any gaps filled.
  std::set<int> s = {critical};
  for (int k = 0; k < max - 1; ++k) {
    s.insert(static_cast<int>(static_cast<int64_t>(k) * (n - 1) / (max - 2)));
  }
  for (int i = 1; i < n && static_cast<int>(s.size()) < max; ++i) s.insert(i);
  return {s.begin(), s.end()};
}

std::string chakra_report_to_html(const ChakraReplayResult& r, const ChakraWorkload& w,
                                  const Scenario& s) {
  const int n = static_cast<int>(r.ranks.size());
  std::string out =
      html::page_open("Preflight: Chakra replay of " + w.prefix, "Preflight Chakra replay report") +
      "<dl>\n";
  auto item = [&](const std::string& k, const std::string& v) { out += html::item(k, v); };
  item("workload", w.prefix + ".<rank>.et");
  item("ranks", std::to_string(n));
  item("trace nodes", std::to_string(r.nodes));
  item("communicator groups", std::to_string(w.groups.size()));
  item("cluster", std::to_string(s.cluster.total_gpus()) + " x " + s.cluster.gpu.name + " (" +
                      std::to_string(s.cluster.nodes) +
                      (s.cluster.nodes == 1 ? " node, " : " nodes, ") + s.cluster.name + ")");
  item("network", r.has_network_stats ? "flow-level" : "analytical");
  item("iteration time", fmt("%.6f", r.iteration_time.to_seconds()) + " s");
  item("critical rank", std::to_string(r.critical_rank) + " (finishes last)");
  item("replayed", std::to_string(r.collectives) + " collectives, " + std::to_string(r.messages) +
                       " point-to-point transfers");
  out += "</dl>\n";
  if (n == 0) return out + "<p class=\"note\">No ranks.</p>\n" + html::page_close();
  out += "<h2>Timeline per rank</h2>\n" +
         html::category_legend(std::string("<span><i style=\"background:") + kCpuColor +
                               "\"></i>CPU op</span><span><i style=\"background:#fff;border:1px "
                               "solid #999\"></i>idle</span>") +
         "<p class=\"note\">Lanes per rank: each GPU stream it used, its CPU thread, its sends and "
         "receives; communication without a category is drawn as DP comm. * marks the critical "
         "rank.</p>\n" +
         timeline(r, sample_ranks(n, r.critical_rank, kChakraTimelineRanks));
  out += "<h2>Time breakdown of the critical rank</h2>\n" + breakdown(r);
  out += "<h2>End time per rank</h2>\n" +
         per_rank(r, sample_ranks(n, r.critical_rank, kChakraBarRanks));
  out += "<h2>Link utilization per tier</h2>\n" +
         html::link_utilization(r.has_network_stats, r.network);
  return out + html::page_close();
}

}  // namespace preflight
