// A self-contained HTML report of one simulation (`preflight simulate --report FILE.html`): the
// iteration timeline per pipeline stage, the critical stage's time breakdown, memory per stage
// against HBM and, when the flow-level network ran, link utilization per tier over time. Inline
// SVG and CSS only: the file opens offline in any browser.
#pragma once

#include <string>

#include "simulate/simulate.h"

namespace preflight {

// The timeline reads r.execution.trace (run the simulation with TraceLevel::kBlocks or finer);
// without intervals it says so instead of drawing spans.
std::string report_to_html(const SimulationReport& r);

}  // namespace preflight
