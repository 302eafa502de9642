#!/usr/bin/env bash
# Browser check of `preflight search --report` and `preflight sweep --report`: headless Chromium
# loads each report offline; its DOM holds the table with a row per candidate (per point), the
# scatter <svg> with a <circle> per simulated candidate and the Pareto line, and (sweep) the bar
# charts; each screenshot is not blank.
# Usage: search_report_browser_test.sh PREFLIGHT_BINARY [SEARCH_SCREENSHOT.png]
set -euo pipefail
bin="$1"
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/browser.sh"
start_browser_test

# GPT-3 1.7B on 2 DGX A100 nodes: a few hundred candidates, well under a second.
base=(--set model.preset=gpt3-1.7b --set cluster.nodes=2 --set parallelism.tp=2
      --set parallelism.pp=2 --set parallelism.dp=4 --set training.global_batch=32)
"$bin" search -q "${base[@]}" --top 12 --csv "$dir/search.csv" --report "$dir/search.html"
"$bin" sweep -q "${base[@]}" --vary cluster.gpu=A100-SXM4-80GB,H100-SXM5-80GB \
  --vary cluster.nic_bandwidth=100Gbps,400Gbps --report "$dir/sweep.html"

search_shot="${2:-$dir/search.png}"
render "$dir/search.html" "$dir/search_dom.html" "$search_shot" 1400,1300
render "$dir/sweep.html" "$dir/sweep_dom.html" "$dir/sweep.png" 1400,2600

python3 - "$dir/search_dom.html" "$dir/search.csv" "$dir/sweep_dom.html" <<'PY'
import re, sys

def element(dom, tag, ident):
    m = re.search(rf"<{tag}\b[^>]*\bid=\"{ident}\"[^>]*>(.*?)</{tag}>", dom, re.S)
    assert m, f"DOM lacks <{tag} id={ident}>"
    return m.group(1)

def circles(svg, cls):
    return len(re.findall(rf"<circle\b[^>]*\bclass=\"{cls}\"", svg))

search = open(sys.argv[1], encoding="utf-8").read()
simulated = sum(1 for _ in open(sys.argv[2])) - 1
rows = len(re.findall(r"<tr class=\"cand", element(search, "table", "ranked")))
assert rows == min(12, simulated), f"ranked table: {rows} rows for {simulated} candidates"
scatter = element(search, "svg", "scatter")
drawn = circles(scatter, "point") + circles(scatter, "front")
assert drawn == simulated, f"scatter: {drawn} circles for {simulated} candidates"
assert circles(scatter, "front") >= 1 and circles(scatter, "best") == 1
assert 'class="pareto"' in scatter and "HBM" in scatter
print(f"search: {rows} rows, {drawn} candidates charted, {circles(scatter, 'front')} on the front")

sweep = open(sys.argv[3], encoding="utf-8").read()
rows = len(re.findall(r"<tr class=\"cand", element(sweep, "table", "points")))
assert rows == 4, f"sweep table: {rows} rows"
for chart in ("chart-iteration_time", "chart-tokens_per_s", "chart-mfu"):
    bars = len(re.findall(r"<rect\b[^>]*class=\"bar\"", element(sweep, "div", chart)))
    assert bars == 4, f"{chart}: {bars} bars"
scatter = element(sweep, "svg", "scatter")
drawn = circles(scatter, "point") + circles(scatter, "front")
assert drawn == 4 and circles(scatter, "best") == 1, f"sweep scatter: {drawn} circles"
print(f"sweep: {rows} rows, 3 bar charts, {drawn} points charted")
PY
python3 "$here/png_check.py" "$search_shot" "search report"
python3 "$here/png_check.py" "$dir/sweep.png" "sweep report"
echo "search_report_browser_test: OK"
