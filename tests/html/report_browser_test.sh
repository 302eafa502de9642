#!/usr/bin/env bash
# Browser check of `preflight simulate --report`: headless Chromium loads the report offline, its
# DOM holds the chart <svg> elements with <rect> children, and a screenshot is not blank.
# Usage: report_browser_test.sh PREFLIGHT_BINARY [SCREENSHOT.png]
set -euo pipefail
bin="$1"
browser=""
for b in chromium chromium-browser google-chrome; do
  if command -v "$b" >/dev/null 2>&1; then browser="$b"; break; fi
done
if [ -z "$browser" ]; then
  echo "report_browser_test: no chromium (scripts/install-deps installs it); skipping"
  exit 77
fi
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
report="$dir/report.html"
"$bin" simulate -q --set model.preset=gpt3-1.7b --set cluster.nodes=2 --set parallelism.tp=2 \
  --set parallelism.pp=2 --set parallelism.dp=4 --set training.global_batch=32 \
  --set simulation.network=flow --report "$report"
flags=(--headless --no-sandbox --disable-gpu --no-first-run --user-data-dir="$dir/profile")
timeout 120 "$browser" "${flags[@]}" --dump-dom "file://$report" >"$dir/dom.html" 2>/dev/null
shot="${2:-$dir/report.png}"
timeout 120 "$browser" "${flags[@]}" --hide-scrollbars --window-size=1400,1800 \
  --screenshot="$shot" "file://$report" >/dev/null 2>&1
python3 - "$dir/dom.html" "$shot" <<'PY'
import re, struct, sys, zlib

dom = open(sys.argv[1], encoding="utf-8").read()
svgs = re.findall(r"<svg\b[^>]*\bid=\"(\w+)\"[^>]*>(.*?)</svg>", dom, re.S)
ids = [i for i, _ in svgs]
for want in ("timeline", "breakdown", "memory", "network"):
    assert want in ids, f"DOM lacks the {want} chart: {ids}"
for i, body in svgs:
    assert "<rect" in body, f"chart {i} has no <rect>"
assert dom.count('class="stage-row"') == 2, "expected 2 stage rows"

# Decode the PNG (8-bit RGB/RGBA, non-interlaced) and count non-white pixels.
data = open(sys.argv[2], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
pos, idat = 8, b""
while pos < len(data):
    n, kind = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + n]
    if kind == b"IHDR":
        w, h, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", body)
    elif kind == b"IDAT":
        idat += body
    pos += 12 + n
assert depth == 8 and color in (2, 6) and interlace == 0, (depth, color, interlace)
bpp = 3 if color == 2 else 4
raw = zlib.decompress(idat)
stride = w * bpp
prev = bytearray(stride)
nonwhite = 0
for y in range(h):
    f = raw[y * (stride + 1)]
    line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    for x in range(stride):
        a = line[x - bpp] if x >= bpp else 0
        b = prev[x]
        c = prev[x - bpp] if x >= bpp else 0
        if f == 1:
            line[x] = (line[x] + a) & 255
        elif f == 2:
            line[x] = (line[x] + b) & 255
        elif f == 3:
            line[x] = (line[x] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    for x in range(0, stride, bpp):
        if line[x] < 240 or line[x + 1] < 240 or line[x + 2] < 240:
            nonwhite += 1
    prev = line
share = nonwhite / (w * h)
print(f"report_browser_test: {len(svgs)} charts, screenshot {w}x{h}, {100 * share:.1f}% non-white")
assert share > 0.01, "screenshot is blank"
PY
echo "report_browser_test: OK"
