// A self-contained HTML report of a sweep (`preflight sweep --report FILE.html`): the varied keys,
// a table of every point (the keys, its strategy and the figures of the CSV, a failed point's
// error in place of figures), the bar chart of `--plot` for iteration time, tokens/s and MFU, and
// a scatter of tokens/s against the cluster's cost per hour (against the GPU count when a point
// has no price) with the Pareto front and the point of most tokens/s marked. Inline SVG and CSS
// only: the file opens offline. A pure function of its inputs.
#pragma once

#include <string>

#include "sweep/sweep.h"

namespace preflight {

// `title` heads the page and the bar charts (e.g. "GPT-3 175B on 1,024 GPUs (dgx-a100)"). A
// sweep whose points all failed gives a page that says so above the table of errors.
std::string sweep_to_html(const SweepResult& r, const std::string& title);

}  // namespace preflight
