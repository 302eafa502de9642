// A self-contained HTML report of a strategy search (`preflight search --report FILE.html`): the
// scenario, the space searched and the rejections by reason; the ranked table of the best
// candidates with the columns and order of the terminal table; and a scatter of every simulated
// candidate, tokens/s against memory per GPU, with the Pareto front (most tokens/s for the least
// memory), rank 1 marked and the HBM capacity as a line. Inline SVG and CSS only: the file opens
// offline. A pure function of its inputs.
#pragma once

#include <string>
#include <vector>

#include "config/scenario.h"
#include "search/search.h"

namespace preflight {

struct SearchHtmlOptions {
  std::string objective = "time";  // what ranked the results: time, cost or mfu
  int top = 10;                    // rows of the ranked table; the chart shows every result
  std::vector<std::string> space;  // the --space assignments, shown as given
};

// `base` is the scenario the candidates were built from (model, cluster resized to r.gpus,
// training). A result with no candidates (nothing fits or simulates) gives a page that says so
// above the rejection counts.
std::string search_to_html(const Scenario& base, const SearchResult& r,
                           const SearchHtmlOptions& options);

}  // namespace preflight
