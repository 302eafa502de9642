#!/usr/bin/env bash
# Browser check of `preflight simulate --workload chakra:PREFIX --report`: a small exported
# workload replayed on the flow-level network; headless Chromium loads the report offline, its DOM
# holds the chart <svg> elements with <rect> children, and a screenshot is not blank.
# Usage: chakra_report_browser_test.sh PREFLIGHT_BINARY [SCREENSHOT.png]
set -euo pipefail
bin="$1"
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/browser.sh"
start_browser_test
set_args=(--set model.preset=gpt3-1.7b --set model.layers=4 --set cluster.nodes=2
          --set parallelism.tp=2 --set parallelism.pp=2 --set parallelism.dp=4
          --set training.global_batch=16)
"$bin" export chakra "${set_args[@]}" -o "$dir/gpt" >/dev/null
report="$dir/chakra.html"
"$bin" simulate -q "${set_args[@]}" --set simulation.network=flow --workload "chakra:$dir/gpt" \
  --report "$report"
shot="${2:-$dir/chakra.png}"
render "$report" "$dir/dom.html" "$shot" 1400,1800
check_charts "$dir/dom.html" chakra_report_browser_test rank-row 16 timeline breakdown ranks network
python3 "$here/png_check.py" "$shot" chakra_report_browser_test
echo "chakra_report_browser_test: OK"
