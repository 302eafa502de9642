#!/usr/bin/env bash
# SimAI workloads through the CLI: the fixtures run, export → import works, and every truncated
# or corrupted fixture either runs or exits 2 with one line naming FILE:LINE; never a crash.
# Usage: tests/simai/simai_cli_test.sh path/to/preflight
set -uo pipefail
bin=$(realpath "${1:-build/preflight}")
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0
failed=0
ok() { passed=$((passed + 1)); }
bad() { echo "FAIL $*"; failed=$((failed + 1)); }

for f in tests/simai/*.txt; do
  "$bin" simulate --workload "simai:$f" --set cluster.preset=dgx-h100 --set cluster.nodes=2 \
    >"$tmp/out" 2>"$tmp/err" && grep -q "Expose DP comm" "$tmp/out" && ok ||
    bad "$f: $(cat "$tmp/err")"
done
"$bin" simulate --workload simai:tests/simai/analytical_9216.txt --json - -q >"$tmp/j" &&
  python3 -c 'import json,sys; j=json.load(open(sys.argv[1]))["simai"]; assert j["total_us"] > 0' \
    "$tmp/j" && ok || bad "json simai object"

# A modern stack at 10 us per launch: the round trip compares the format (a SimAI line merges a
# stretch of kernels, so a host-bound native run would not match).
base=(--set model.preset=llama3-8b --set cluster.preset=dgx-h100 --set cluster.nodes=2
      --set parallelism.tp=1 --set parallelism.pp=1 --set parallelism.dp=16
      --set parallelism.sequence_parallel=false --set parallelism.overlap_grad_reduce=false
      --set training.global_batch=32 --set training.stack.launch_overhead=10us)
"$bin" export simai "${base[@]}" -o "$tmp/x.txt" && ok || bad "export exited $?"
a=$("$bin" simulate "${base[@]}" --json - -q | python3 -c 'import json,sys; print(json.load(sys.stdin)["iteration_time_s"])')
b=$("$bin" simulate "${base[@]}" --workload "simai:$tmp/x.txt" --json - -q |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["iteration_time_s"])')
python3 -c "import sys; a, b = float('$a'), float('$b'); sys.exit(abs(b - a) / a > 1e-6)" && ok ||
  bad "round trip: native $a s, imported $b s"

# A straggler slows the file's compute on its GPU as it slows the native run; one past the file's
# GPUs exits 2.
slow=(--set "simulation.slow_ranks=[{rank: 3, factor: 1.5}]")
a=$("$bin" simulate "${base[@]}" "${slow[@]}" --json - -q | python3 -c 'import json,sys; print(json.load(sys.stdin)["iteration_time_s"])')
c=$("$bin" simulate "${base[@]}" "${slow[@]}" --workload "simai:$tmp/x.txt" --json - -q |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["iteration_time_s"])')
python3 -c "import sys; a, b, c = float('$a'), float('$b'), float('$c'); sys.exit(abs(c - a) / a > 1e-6 or c <= b * 1.1)" &&
  ok || bad "straggler: native $a s, imported $c s, imported without it $b s"
"$bin" simulate "${base[@]}" --set "simulation.slow_ranks=[{rank: 16, factor: 1.5}]" \
  --workload "simai:$tmp/x.txt" -q >"$tmp/out" 2>"$tmp/err"
[ $? -eq 2 ] && grep -q "slow_ranks\[0\].rank: 16: the SimAI workload has ranks 0-15" "$tmp/err" &&
  [ "$(wc -l <"$tmp/err")" -eq 1 ] && ok || bad "straggler past the file's GPUs: $(cat "$tmp/err")"

# Every example scenario exports and reads back.
for ex in examples/*.yaml; do
  "$bin" export simai "$ex" -o "$tmp/ex.txt" 2>"$tmp/err" &&
    "$bin" simulate "$ex" --workload "simai:$tmp/ex.txt" -q 2>>"$tmp/err" && ok ||
    bad "$ex: $(cat "$tmp/err")"
done

# Truncations and corruptions of the MoE fixture: each line cut in two, and bytes replaced.
src=tests/simai/analytical_9216.txt
size=$(wc -c <"$src")
for n in $(seq 0 97 "$size"); do
  head -c "$n" "$src" >"$tmp/t.txt"
  python3 - "$src" "$n" "$tmp/c.txt" <<'PY'
import sys
data = bytearray(open(sys.argv[1], "rb").read())
n = int(sys.argv[2]) % len(data)
data[n] = b"x\xff:-9\n\0 "[n % 8]
open(sys.argv[3], "wb").write(bytes(data))
PY
  for f in "$tmp/t.txt" "$tmp/c.txt"; do
    "$bin" simulate --workload "simai:$f" -q >/dev/null 2>"$tmp/err"
    rc=$?
    if [ $rc -eq 0 ]; then
      ok
    elif [ $rc -eq 2 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] &&
         grep -qE "^preflight: (error: )?(${tmp}/.\.txt:[0-9]+: |SimAI)" "$tmp/err"; then
      ok
    else
      bad "cut/corrupt at $n: exit $rc: $(cat "$tmp/err")"
    fi
  done
done

echo "simai cli: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
