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
# The default scenario (1,024 GPUs, 16 stages, every kernel recorded): each stage's lanes are
# drawn to that stage's end, as the JSON gives it (the timeline is 1,100 px from x = 90 for the
# iteration; a drawn column is 2 px wide, so within 4 px).
big="$dir/default.html"
"$bin" simulate -q --report "$big" --json "$dir/default.json"
render "$big" "$dir/default_dom.html" "$dir/default.png" 1400,1800
check_charts "$dir/default_dom.html" report_browser_test_default stage-row 16 timeline
python3 - "$dir/default_dom.html" "$dir/default.json" <<'PY'
import json, re, sys
dom = open(sys.argv[1], encoding="utf-8").read()
report = json.load(open(sys.argv[2]))
total = report["iteration_time_s"]
timeline = re.search(r'<svg\b[^>]*\bid="timeline"[^>]*>(.*?)</svg>', dom, re.S).group(1)
rows = re.findall(r'<g class="stage-row">(.*?)</g>', timeline, re.S)
assert len(rows) == len(report["stages"]) == 16, (len(rows), len(report["stages"]))
for i, (row, stage) in enumerate(zip(rows, report["stages"])):
    ends = []
    for rect in re.findall(r"<rect\b[^>]*>", row):
        if 'fill="#ffffff"' in rect:
            continue  # the lane's background
        x = float(re.search(r'\bx="([-0-9.e]+)"', rect).group(1))
        w = float(re.search(r'\bwidth="([-0-9.e]+)"', rect).group(1))
        ends.append(x + w)
    want = 90 + stage["end_s"] / total * 1100
    assert ends, f"stage {i} has no spans"
    assert abs(max(ends) - want) <= 4, f"stage {i} drawn to x={max(ends):.1f}, ends at {want:.1f}"
print("report_browser_test: all 16 stages of the default scenario drawn to their ends")
PY
echo "report_browser_test: OK"
