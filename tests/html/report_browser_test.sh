#!/usr/bin/env bash
# Browser check of `preflight simulate --report`: headless Chromium loads the report offline, its
# DOM holds the chart <svg> elements with <rect> children, and a screenshot is not blank.
# Usage: report_browser_test.sh PREFLIGHT_BINARY [SCREENSHOT.png]
set -euo pipefail
bin="$1"
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/browser.sh"
start_browser_test
report="$dir/report.html"
"$bin" simulate -q --set model.preset=gpt3-1.7b --set cluster.nodes=2 --set parallelism.tp=2 \
  --set parallelism.pp=2 --set parallelism.dp=4 --set training.global_batch=32 \
  --set simulation.network=flow --report "$report"
shot="${2:-$dir/report.png}"
render "$report" "$dir/dom.html" "$shot" 1400,1800
check_charts "$dir/dom.html" report_browser_test stage-row 2 timeline breakdown memory network
python3 "$here/png_check.py" "$shot" report_browser_test
echo "report_browser_test: OK"
