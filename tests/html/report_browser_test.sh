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
python3 - "$dir/dom.html" <<'PY'
import re, sys

dom = open(sys.argv[1], encoding="utf-8").read()
svgs = re.findall(r"<svg\b[^>]*\bid=\"(\w+)\"[^>]*>(.*?)</svg>", dom, re.S)
ids = [i for i, _ in svgs]
for want in ("timeline", "breakdown", "memory", "network"):
    assert want in ids, f"DOM lacks the {want} chart: {ids}"
for i, body in svgs:
    assert "<rect" in body, f"chart {i} has no <rect>"
assert dom.count('class="stage-row"') == 2, "expected 2 stage rows"
print(f"report_browser_test: {len(svgs)} charts")
PY
python3 "$here/png_check.py" "$shot" report_browser_test
echo "report_browser_test: OK"
