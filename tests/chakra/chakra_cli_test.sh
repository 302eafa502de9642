#!/usr/bin/env bash
# Chakra execution traces through the CLI: ASTRA-sim's all-reduce microbenchmark runs, export →
# import gives the simulated iteration time, and truncated or corrupted traces exit 2 with one
# line naming the file and the byte offset or node; never a crash.
# Usage: tests/chakra/chakra_cli_test.sh path/to/preflight
set -uo pipefail
bin=$(realpath "${1:-build/preflight}")
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0
failed=0
ok() { passed=$((passed + 1)); }
bad() { echo "FAIL $*"; failed=$((failed + 1)); }
time_of() { python3 -c 'import json,sys; print(json.load(sys.stdin)["iteration_time_s"])'; }

# ASTRA-sim's examples/workload/microbenchmarks/all_reduce/4npus_1MB: one 1 MiB all-reduce per
# rank over all ranks (the fuzz corpus holds rank 0's 81-byte file).
for r in 0 1 2 3; do cp fuzz/corpus/chakra/astra_all_reduce.0.et "$tmp/ar.$r.et"; done
"$bin" simulate --workload "chakra:$tmp/ar" --set cluster.preset=dgx-h100 >"$tmp/out" 2>"$tmp/err" &&
  grep -q "4 ranks, 4 nodes" "$tmp/out" && grep -q "1 collectives" "$tmp/out" && ok ||
  bad "all-reduce microbenchmark: $(cat "$tmp/out" "$tmp/err")"

# The replay does not slow compute under overlapped collectives by their SM share (docs/
# interop.md), so the round trip turns that off.
base=(--set model.preset=gpt3-1.7b --set model.layers=8 --set cluster.nodes=2
      --set parallelism.tp=2 --set parallelism.pp=2 --set parallelism.dp=4
      --set training.global_batch=32 --set cluster.gpu.calibration.comm_sm_interference=0)
"$bin" export chakra "${base[@]}" -o "$tmp/gpt" >"$tmp/out" && grep -q "16 ranks" "$tmp/out" &&
  [ -f "$tmp/gpt.15.et" ] && [ -f "$tmp/gpt.comm_group.json" ] && ok || bad "export: $(cat "$tmp/out")"
a=$("$bin" simulate "${base[@]}" --json - -q | time_of)
b=$("$bin" simulate "${base[@]}" --workload "chakra:$tmp/gpt" --json - -q | time_of)
[ -n "$a" ] && [ "$a" = "$b" ] && ok || bad "round trip: simulate $a, replay $b"
# On the flow-level network too: every cross-node collective and send shares the fabric.
a=$("$bin" simulate "${base[@]}" --set simulation.network=flow --json - -q | time_of)
b=$("$bin" simulate "${base[@]}" --set simulation.network=flow --workload "chakra:$tmp/gpt" \
  --json - -q | time_of)
[ -n "$a" ] && [ "$a" = "$b" ] && ok || bad "round trip on the flow network: simulate $a, replay $b"
# A straggler inside a TP group: its trace holds its slowed kernels, and the replay of every rank
# apart meets the simulation, which moves the group at the straggler's pace; a window is refused.
slow=(--set "simulation.slow_ranks=[{rank: 5, factor: 1.5}]")
"$bin" export chakra "${base[@]}" "${slow[@]}" -o "$tmp/slow" >/dev/null || bad "export with a straggler"
a=$("$bin" simulate "${base[@]}" "${slow[@]}" --json - -q | time_of)
b=$("$bin" simulate "${base[@]}" --workload "chakra:$tmp/slow" --json - -q | time_of)
[ -n "$a" ] && [ "$a" = "$b" ] && [ "$a" != "$("$bin" simulate "${base[@]}" --json - -q | time_of)" ] &&
  ok || bad "round trip with a straggler: simulate $a, replay $b"
# The other way: the plain traces replayed with the straggler meet the simulation with it, for a
# GPU past the first node's too; a straggler past the trace's ranks is an error.
for r in 5 12; do
  slowr=(--set "simulation.slow_ranks=[{rank: $r, factor: 1.5}]")
  a=$("$bin" simulate "${base[@]}" "${slowr[@]}" --json - -q | time_of)
  b=$("$bin" simulate "${base[@]}" "${slowr[@]}" --workload "chakra:$tmp/gpt" --json - -q | time_of)
  [ -n "$a" ] && [ "$a" = "$b" ] && ok || bad "replay with straggler $r: simulate $a, replay $b"
done
"$bin" simulate "${base[@]}" --set "simulation.slow_ranks=[{rank: 16, factor: 1.5}]" \
  --workload "chakra:$tmp/gpt" >"$tmp/out" 2>"$tmp/err"
[ $? -eq 2 ] && grep -q "slow_ranks\[0\].rank: 16: the workload has ranks 0-15" "$tmp/err" && ok ||
  bad "straggler past the trace's ranks: $(cat "$tmp/err")"
"$bin" export chakra "${base[@]}" --set "simulation.slow_ranks=[{rank: 5, factor: 1.5, until: 5ms}]" \
  -o "$tmp/win" >"$tmp/out" 2>"$tmp/err"
[ $? -eq 2 ] && grep -q "slow_ranks\[0\]: a trace holds one duration" "$tmp/err" &&
  [ "$(wc -l <"$tmp/err")" -eq 1 ] && [ ! -f "$tmp/win.0.et" ] && ok ||
  bad "export with a straggler window: $(cat "$tmp/err")"
"$bin" simulate "${base[@]}" --workload "chakra:$tmp/gpt" --trace "$tmp/t.json" -q &&
  python3 -c 'import json,sys; e=json.load(open(sys.argv[1]))["traceEvents"]; assert sum(x["ph"]=="X" for x in e) > 1000' \
    "$tmp/t.json" && ok || bad "trace"
"$bin" simulate "${base[@]}" --workload "chakra:$tmp/gpt" --report "$tmp/r.html" -q &&
  grep -q "<svg" "$tmp/r.html" && grep -q 'id="timeline"' "$tmp/r.html" && ok ||
  bad "report: $(head -c 300 "$tmp/r.html" 2>&1)"

# Errors: exit 2, one line, naming what is wrong.
expect_error() {  # WANT ARGS...
  local want="$1"
  shift
  "$bin" simulate "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  [ "$rc" -eq 2 ] && grep -q -- "$want" "$tmp/err" && [ "$(wc -l <"$tmp/err")" -eq 1 ] && ok ||
    bad "expected exit 2 and '$want', got $rc: $(cat "$tmp/err")"
}
expect_error "none.0.et: cannot open" --workload "chakra:$tmp/none"
expect_error "expected simai:FILE or chakra:PREFIX" --workload "astra:$tmp/gpt"
cp "$tmp"/gpt.* "$tmp/keep" 2>/dev/null
mkdir -p "$tmp/c"
for r in $(seq 0 15); do cp "$tmp/gpt.$r.et" "$tmp/c/x.$r.et"; done
cp "$tmp/gpt.comm_group.json" "$tmp/c/x.comm_group.json"
head -c 5000 "$tmp/gpt.3.et" >"$tmp/c/x.3.et"
expect_error "x.3.et: byte offset [0-9]*: message length" --workload "chakra:$tmp/c/x"
# Flip bytes all over one rank's file: every run either succeeds or exits 2 with one line.
python3 - "$tmp/gpt.5.et" "$tmp/c" <<'PY'
import random, sys
data = open(sys.argv[1], "rb").read()
rng = random.Random(7)
for k in range(12):
    b = bytearray(data)
    for _ in range(1 + k):
        b[rng.randrange(len(b))] = rng.randrange(256)
    open(f"{sys.argv[2]}/f{k}.et", "wb").write(bytes(b))
PY
for k in $(seq 0 11); do
  cp "$tmp/c/f$k.et" "$tmp/c/x.5.et"
  cp "$tmp/gpt.3.et" "$tmp/c/x.3.et"
  "$bin" simulate "${base[@]}" --workload "chakra:$tmp/c/x" -q >"$tmp/out" 2>"$tmp/err"
  rc=$?
  if [ "$rc" -eq 0 ] || { [ "$rc" -eq 2 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] &&
    grep -q "x.5.et\|preflight: error" "$tmp/err"; }; then ok; else
    bad "corrupted trace $k: exit $rc: $(head -c 300 "$tmp/err")"; fi
done
"$bin" export chakra "${base[@]}" --max-nodes 100 -o "$tmp/big" 2>"$tmp/err"
[ $? -eq 2 ] && grep -q "over the limit of 100" "$tmp/err" && ok || bad "max-nodes: $(cat "$tmp/err")"

echo "chakra_cli_test: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
