# Shared by the HTML report browser tests (source it): headless Chromium, found on the PATH, and
# a function that renders one page to its DOM and a screenshot.
# Usage: source tests/html/browser.sh; start_browser_test; render PAGE.html DOM.html SHOT.png W,H

# Sets $browser, or exits 77 (ctest's skip) when no chromium is installed; then makes $dir, a
# scratch folder removed on exit.
start_browser_test() {
  browser=""
  for b in chromium chromium-browser google-chrome; do
    if command -v "$b" >/dev/null 2>&1; then browser="$b"; break; fi
  done
  if [ -z "$browser" ]; then
    echo "$(basename "$0"): no chromium (scripts/install-deps installs it); skipping"
    exit 77
  fi
  dir="$(mktemp -d)"
  trap 'rm -rf "$dir"' EXIT
}

# Loads PAGE offline and writes the DOM after parsing and a WIDTH,HEIGHT screenshot (PNG).
render() {
  local page=$1 dom=$2 shot=$3 size=$4
  local flags=(--headless --no-sandbox --disable-gpu --no-first-run --user-data-dir="$dir/profile")
  timeout 120 "$browser" "${flags[@]}" --dump-dom "file://$page" >"$dom" 2>/dev/null
  timeout 120 "$browser" "${flags[@]}" --hide-scrollbars --window-size="$size" \
    --screenshot="$shot" "file://$page" >/dev/null 2>&1
}

# Checks a rendered DOM: each named chart (<svg id=ID>) is there, every chart has a <rect>, and
# exactly ROWS elements have class ROW_CLASS. Usage: check_charts DOM LABEL ROW_CLASS ROWS ID...
check_charts() {
  python3 - "$@" <<'PY'
import re, sys

path, label, row_class, rows = sys.argv[1:5]
dom = open(path, encoding="utf-8").read()
svgs = re.findall(r"<svg\b[^>]*\bid=\"(\w+)\"[^>]*>(.*?)</svg>", dom, re.S)
ids = [i for i, _ in svgs]
for want in sys.argv[5:]:
    assert want in ids, f"DOM lacks the {want} chart: {ids}"
for i, body in svgs:
    assert "<rect" in body, f"chart {i} has no <rect>"
n = dom.count(f'class="{row_class}"')
assert n == int(rows), f"expected {rows} {row_class} rows, got {n}"
print(f"{label}: {len(svgs)} charts, {n} {row_class} rows")
PY
}
