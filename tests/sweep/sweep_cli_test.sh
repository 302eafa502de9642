#!/usr/bin/env bash
# `preflight sweep` through the CLI: the table, CSV and SVG it writes, the same bytes for any
# thread count, and each bad input exiting 2 with one line on stderr naming what was wrong.
# Usage: tests/sweep/sweep_cli_test.sh path/to/preflight
set -uo pipefail
bin=$(realpath "${1:-build/preflight}")
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0
failed=0
ok() { passed=$((passed + 1)); }
bad() { echo "FAIL $*"; failed=$((failed + 1)); }

# A small, fast scenario: GPT-3 1.7B on 2 DGX A100 nodes.
base=(--set model.preset=gpt3-1.7b --set cluster.nodes=2 --set parallelism.tp=2
      --set parallelism.pp=2 --set parallelism.dp=4 --set training.global_batch=32)

"$bin" sweep "${base[@]}" --vary cluster.gpu=A100-SXM4-80GB,H100-SXM5-80GB \
  --vary cluster.nic_bandwidth=100Gbps,200Gbps,400Gbps -j 1 \
  --csv "$tmp/a.csv" --plot "$tmp/a.svg" >"$tmp/a.txt" 2>"$tmp/a.err" || bad "sweep exited $?: $(cat "$tmp/a.err")"
[ "$(wc -l <"$tmp/a.txt")" -eq 7 ] && grep -q "speedup" "$tmp/a.txt" && ok || bad "table: $(cat "$tmp/a.txt")"
[ "$(wc -l <"$tmp/a.csv")" -eq 7 ] && head -1 "$tmp/a.csv" | grep -q "^cluster.gpu,cluster.nic_bandwidth,tp," && ok ||
  bad "csv: $(cat "$tmp/a.csv")"
[ "$(grep -c 'class="bar"' "$tmp/a.svg")" -eq 6 ] && grep -q 'class="legend"' "$tmp/a.svg" && ok ||
  bad "svg: expected 6 bars and a legend"
python3 -c 'import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])' "$tmp/a.svg" && ok ||
  bad "svg is not well-formed XML"

# The same bytes on 3 threads.
"$bin" sweep "${base[@]}" --vary cluster.gpu=A100-SXM4-80GB,H100-SXM5-80GB \
  --vary cluster.nic_bandwidth=100Gbps,200Gbps,400Gbps -j 3 --csv "$tmp/b.csv" >"$tmp/b.txt"
cmp -s "$tmp/a.txt" "$tmp/b.txt" && cmp -s "$tmp/a.csv" "$tmp/b.csv" && ok || bad "-j 3 differs from -j 1"

# --csv - prints only the CSV.
"$bin" sweep "${base[@]}" --vary training.micro_batch=1,2 --csv - >"$tmp/c.csv"
[ "$(wc -l <"$tmp/c.csv")" -eq 3 ] && ok || bad "--csv -: $(cat "$tmp/c.csv")"

# A scenario file may follow --vary and --set (each takes one value).
"$bin" sweep --vary parallelism.pp=2,4 --set training.micro_batch=1 examples/llama3-70b-h100.yaml \
  --csv - >"$tmp/d.csv" 2>"$tmp/d.err"
[ "$(wc -l <"$tmp/d.csv")" -eq 3 ] && grep -q "^4,8,4," "$tmp/d.csv" && ok ||
  bad "scenario after --set: $(cat "$tmp/d.csv" "$tmp/d.err")"

# A scenario with dp: auto sweeps the node count and tp: dp = GPUs / (tp·pp), one row per point.
cat >"$tmp/auto.yaml" <<'EOF'
model: {preset: gpt3-1.7b}
cluster: {preset: dgx-a100, nodes: 2}
training: {global_batch: 32}
parallelism: {tp: 2, pp: 2, dp: auto}
EOF
"$bin" sweep "$tmp/auto.yaml" --vary cluster.nodes=1,2,4 --csv - >"$tmp/e.csv" 2>"$tmp/e.err"
[ "$(wc -l <"$tmp/e.csv")" -eq 4 ] && [ "$(cut -d, -f1,4 "$tmp/e.csv" | tail -3 | tr '\n' ' ')" = "1,2 2,4 4,8 " ] &&
  ok || bad "dp: auto over cluster.nodes: $(cat "$tmp/e.csv" "$tmp/e.err")"
"$bin" sweep "$tmp/auto.yaml" --vary parallelism.tp=1,2,4 --csv - >"$tmp/f.csv" 2>"$tmp/f.err"
[ "$(cut -d, -f1,4 "$tmp/f.csv" | tail -n +2 | tr '\n' ' ')" = "1,8 2,4 4,2 " ] && ok ||
  bad "dp: auto over parallelism.tp: $(cat "$tmp/f.csv" "$tmp/f.err")"

expect_bad() {
  local label=$1 needle=$2
  shift 2
  "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  if [ "$rc" -ne 2 ] || [ "$(wc -l <"$tmp/err")" -ne 1 ] || ! grep -qF -- "$needle" "$tmp/err"; then
    bad "bad-input $label: exit $rc, expected one line with '$needle' in: $(cat "$tmp/err")"
  else
    ok
  fi
}
expect_bad unknown-key "--vary cluster.nic_bw=100Gbps" "$bin" sweep "${base[@]}" --vary cluster.nic_bw=100Gbps
expect_bad unitless-value "--vary cluster.nic_bandwidth=400:" "$bin" sweep "${base[@]}" \
  --vary cluster.nic_bandwidth=100Gbps,400
expect_bad no-equals "--vary cluster.gpu" "$bin" sweep "${base[@]}" --vary cluster.gpu
expect_bad empty-value "empty value" "$bin" sweep "${base[@]}" --vary parallelism.tp=1,,2
expect_bad key-twice "varied twice" "$bin" sweep "${base[@]}" --vary training.micro_batch=1 \
  --vary training.micro_batch=2
expect_bad no-vary "--vary" "$bin" sweep "${base[@]}"
expect_bad explicit-dp "--vary cluster.nodes=4: " "$bin" sweep "${base[@]}" --vary cluster.nodes=2,4
expect_bad explicit-dp-hint "or dp: auto" "$bin" sweep "${base[@]}" --vary cluster.nodes=2,4
expect_bad auto-not-dividing \
  "--vary parallelism.pp=3: $tmp/auto.yaml: parallelism.dp: auto: 16 GPUs is not a multiple of tp·cp·pp = 6 (tp 2, cp 1, pp 3)" \
  "$bin" sweep "$tmp/auto.yaml" --vary parallelism.pp=2,3
expect_bad space-without-search "only with --search" "$bin" sweep "${base[@]}" \
  --vary training.micro_batch=1,2 --space tp=2
expect_bad bad-metric "--plot-metric" "$bin" sweep "${base[@]}" --vary training.micro_batch=1 \
  --plot-metric speed

echo "sweep cli: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
