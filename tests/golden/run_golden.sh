#!/usr/bin/env bash
# Golden scenarios: every examples/*.yaml runs through the CLI (`simulate --json -`) and must
# match tests/golden/<name>.json byte for byte. Rewrite the expectations on purpose only:
#   tests/golden/run_golden.sh build/preflight --update   (and explain the diff in the commit)
# Then the bad-input contract: each malformed input exits 2 with one line on stderr.
set -uo pipefail
cd "$(dirname "$0")/../.."
bin=${1:-build/preflight}
update=${2:-}
passed=0
failed=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for scenario in examples/*.yaml; do
  name=$(basename "$scenario" .yaml)
  expected=tests/golden/$name.json
  if ! "$bin" simulate "$scenario" --json - >"$tmp/$name.json" 2>"$tmp/$name.err"; then
    echo "FAIL golden $name: simulate exited non-zero: $(cat "$tmp/$name.err")"
    failed=$((failed + 1))
    continue
  fi
  if [ "$update" = "--update" ]; then
    cp "$tmp/$name.json" "$expected"
    echo "updated $expected"
  fi
  if cmp -s "$tmp/$name.json" "$expected"; then
    passed=$((passed + 1))
  else
    echo "FAIL golden $name: output differs from $expected:"
    diff <(head -c 200000 "$expected") "$tmp/$name.json" | head -20
    failed=$((failed + 1))
  fi
done

# Determinism: two runs of the default scenario give identical bytes.
"$bin" simulate --json "$tmp/a.json" -q && "$bin" simulate --json "$tmp/b.json" -q
if cmp -s "$tmp/a.json" "$tmp/b.json"; then passed=$((passed + 1)); else
  echo "FAIL determinism: two runs of the default scenario differ"; failed=$((failed + 1)); fi

# Bad input: exit code 2 and exactly one line on stderr that names what was wrong.
expect_bad() {
  local label=$1 needle=$2
  shift 2
  "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  local lines
  lines=$(wc -l <"$tmp/err")
  if [ "$rc" -ne 2 ] || [ "$lines" -ne 1 ] || ! grep -q -- "$needle" "$tmp/err"; then
    echo "FAIL bad-input $label: exit $rc, $lines stderr lines, expected '$needle' in: $(cat "$tmp/err")"
    failed=$((failed + 1))
  else
    passed=$((passed + 1))
  fi
}
printf 'model:\n  preset: gpt9-1t\ncluster:\n  preset: dgx-a100\ntraining:\n  global_batch: 8\n' >"$tmp/unknown_preset.yaml"
printf 'model:\n  preset: gpt3-1.7b\ncluster:\n  preset: dgx-a100\ntraining:\n  seq_len: 2048\n' >"$tmp/missing_key.yaml"
printf 'model: [unclosed\n' >"$tmp/malformed.yaml"
expect_bad unknown-preset "model.preset" "$bin" simulate "$tmp/unknown_preset.yaml"
expect_bad missing-key "training.global_batch" "$bin" simulate "$tmp/missing_key.yaml"
expect_bad malformed-yaml "malformed YAML" "$bin" simulate "$tmp/malformed.yaml"
expect_bad unitless-size "cluster.nic_bandwidth" "$bin" simulate --set cluster.nic_bandwidth=400
expect_bad ssd-memory-range "calibration.ssd_memory_efficiency" "$bin" simulate --set cluster.gpu.calibration.ssd_memory_efficiency=2
expect_bad tp-not-dividing-heads "parallelism.tp" "$bin" simulate --set parallelism.tp=5 --set parallelism.pp=1 --set parallelism.dp=1 --set cluster.nodes=1 --set cluster.gpus_per_node=5
expect_bad gpus-not-tp-pp-dp "tp·pp·dp" "$bin" simulate --set parallelism.dp=4
expect_bad batch-not-divisible "training.global_batch" "$bin" simulate --set training.global_batch=1001
expect_bad missing-file "cannot open" "$bin" simulate does-not-exist.yaml
expect_bad unknown-flag "--bogus" "$bin" simulate --bogus
expect_bad bad-set "key.path=value" "$bin" simulate --set parallelism.tp
expect_bad unknown-key "model.hiddn" "$bin" simulate --set model.hiddn=4
expect_bad unknown-key-suggests "did you mean 'hidden'" "$bin" simulate --set model.hiddn=4
expect_bad unknown-command "unknown command 'simulat' (did you mean 'simulate'?)" "$bin" simulat
expect_bad unknown-flag-suggests "(did you mean '--json'?) (see \`preflight simulate --help\`)" "$bin" simulate --jsn out.json
expect_bad headroom-bounded "--headroom: 90GiB: expected auto or a size below the GPU's HBM" "$bin" search --headroom 90GiB
expect_bad gpus-bounded "--gpus" "$bin" simulate --gpus 0
# Warnings on stderr (a balanced router left as the default), exit 0; --allow-oom exits 0.
"$bin" simulate --set model.preset=mixtral-8x7b --set cluster.preset=dgx-h100 --set cluster.nodes=8 \
  --set parallelism.tp=2 --set parallelism.pp=1 --set parallelism.ep=8 --set parallelism.etp=1 \
  --set training.seq_len=2048 --set training.global_batch=256 --json "$tmp/moe.json" >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ "$rc" -eq 0 ] && grep -q "^preflight: warning: model.moe.routing: balanced, a router balanced in expectation" "$tmp/err" &&
  grep -q '"warnings": \[' "$tmp/moe.json" && grep -q '"model.moe.routing": "balanced"' "$tmp/moe.json"; then
  passed=$((passed + 1)); else echo "FAIL warnings: exit $rc, $(cat "$tmp/err")"; failed=$((failed + 1)); fi
"$bin" simulate --set cluster.nodes=1 --set parallelism.tp=1 --set parallelism.pp=1 \
  --set parallelism.dp=8 --set training.global_batch=8 --allow-oom >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ "$rc" -eq 0 ] && grep -q "warning: does not fit" "$tmp/err"; then passed=$((passed + 1)); else
  echo "FAIL --allow-oom: exit $rc"; failed=$((failed + 1)); fi
# simulate --csv: a header, then a row per run.
rm -f "$tmp/runs.csv"
for tp in 4 8; do "$bin" simulate --set parallelism.tp=$tp -q --csv "$tmp/runs.csv"; done
if [ "$(wc -l <"$tmp/runs.csv")" -eq 3 ] && head -1 "$tmp/runs.csv" | grep -q "^scenario,model,gpu,gpus"; then
  passed=$((passed + 1)); else echo "FAIL simulate --csv: $(cat "$tmp/runs.csv")"; failed=$((failed + 1)); fi
printf 'model:\n\tpreset: gpt3-175b\n' >"$tmp/tab.yaml"
expect_bad tab-indent "a tab in the indentation of line 2" "$bin" simulate "$tmp/tab.yaml"
printf 'model:\n  preset: gpt3-1.7b\nmodel:\n  preset: gpt3-13b\n' >"$tmp/dup.yaml"
expect_bad duplicate-key "duplicate key at line 3 (first at line 1)" "$bin" simulate "$tmp/dup.yaml"
printf 'model:\n  name: "\xff"\n  preset: gpt3-1.7b\n' >"$tmp/utf8.yaml"
expect_bad not-utf8 "model.name: not UTF-8 text" "$bin" simulate "$tmp/utf8.yaml"
printf 'model:\n  preset: "a\x1b[2Jb"\ncluster: {preset: dgx-a100}\n' >"$tmp/esc.yaml"
expect_bad control-bytes-escaped 'a\\x1B\[2Jb' "$bin" simulate "$tmp/esc.yaml"

# simulation.degraded_links: the flow or packet network, a link the fabric has, a bounded capacity.
expect_bad degraded-link-analytical "simulation.degraded_links: expected simulation.network: flow or packet" "$bin" simulate --set "simulation.degraded_links=[{link: nic0.0, capacity: 0.5}]"
expect_bad degraded-link-unknown "simulation.degraded_links\\[0\\].link: 'nic999.0': no such node" "$bin" simulate --set simulation.network=flow --set "simulation.degraded_links=[{link: nic999.0, capacity: 0.5}]"
expect_bad degraded-link-capacity "simulation.degraded_links\\[0\\].capacity" "$bin" simulate --set simulation.network=flow --set "simulation.degraded_links=[{link: nic0.0, capacity: 0}]"

# parallelism.offload_layers: Megatron's rules (PP 1 here: the default scenario has PP 16).
expect_bad offload-pipeline "parallelism.offload_layers: 4: expected pp 1" "$bin" simulate --set parallelism.offload_layers=4
expect_bad offload-all-layers "parallelism.offload_layers: 96: expected fewer than model.layers" "$bin" simulate --set parallelism.pp=1 --set parallelism.dp=auto --set parallelism.offload_layers=96
expect_bad offload-negative "parallelism.offload_layers" "$bin" memory --set parallelism.offload_layers=-1
expect_bad host-bandwidth-zero "cluster.host_bandwidth" "$bin" simulate --set cluster.host_bandwidth=0GB/s

expect_bad compute-measured-no-table "compute.kernel_table: missing key" "$bin" simulate --set compute.model=measured
expect_bad compute-table-missing "compute.kernel_table: /nonexistent/t.csv: cannot read" "$bin" simulate --set compute.model=measured --set compute.kernel_table=/nonexistent/t.csv
expect_bad compute-bad-table "fuzz/corpus/kernel_table/huge:2: time_us" "$bin" simulate --set compute.model=measured --set compute.kernel_table=fuzz/corpus/kernel_table/huge
expect_bad kernels-no-mode "expected exactly one of --shapes" "$bin" kernels
expect_bad kernels-bad-trace "expected a JSON Chrome trace" "$bin" kernels --from-trace fuzz/corpus/kineto/truncated
expect_bad kernels-bad-table "bad-utf8:1: gpu: expected a name" "$bin" kernels --table fuzz/corpus/kernel_table/bad-utf8

# The kernel profiler (built where nvcc is found) reads what `preflight kernels --shapes` writes:
# the list parses (without a GPU the run then stops at CUDA's device query, exit 1), and a bad
# list is one line and exit 2.
profiler="$(dirname "$bin")/preflight-kernel-profiler"
if [ -x "$profiler" ]; then
  "$bin" kernels --shapes examples/llama3-70b-h100.yaml --out "$tmp/shapes.csv" 2>/dev/null
  "$profiler" --shapes "$tmp/shapes.csv" --out "$tmp/table.csv" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  if [ "$rc" -eq 0 ] || { [ "$rc" -eq 1 ] && grep -q "cuda" "$tmp/err"; }; then
    passed=$((passed + 1))
  else
    echo "FAIL kernel profiler on a shapes list: exit $rc: $(cat "$tmp/err")"
    failed=$((failed + 1))
  fi
  expect_bad profiler-bad-shapes "bad-utf8:2: 'kind,name': expected the header" "$profiler" --shapes fuzz/corpus/kernel_table/bad-utf8 --out "$tmp/table.csv"
fi

expect_bad zero-stage-4 "parallelism.zero_stage" "$bin" memory --set parallelism.zero_stage=4
expect_bad zero-pipeline-stages "parallelism.pp" "$bin" memory --set parallelism.pp=0
expect_bad negative-overhead "training.framework_overhead" "$bin" memory --set training.framework_overhead=-1GiB

# The memory model flags the obviously impossible: GPT-3 175B with TP 1, PP 1 on 8 GPUs.
# (Outputs go to files first: `cmd | grep -q` can kill cmd with SIGPIPE under pipefail.)
"$bin" memory --set cluster.nodes=1 --set parallelism.tp=1 --set parallelism.pp=1 \
  --set parallelism.dp=8 --set training.global_batch=8 --set parallelism.sequence_parallel=false \
  >"$tmp/oom.txt"
oom_rc=$?
if grep -q "fits: NO" "$tmp/oom.txt" && grep -q "try: .* peak, fits (--set " "$tmp/oom.txt" &&
  [ "$oom_rc" -eq 3 ]; then passed=$((passed + 1)); else
  echo "FAIL memory: GPT-3 175B on 8 GPUs without model parallelism was not flagged (exit $oom_rc)"; failed=$((failed + 1)); fi
"$bin" simulate --set cluster.nodes=1 --set parallelism.tp=1 --set parallelism.pp=1 \
  --set parallelism.dp=8 --set training.global_batch=8 --set parallelism.sequence_parallel=false \
  -q 2>"$tmp/oom.err"
oom_rc=$?
if [ "$oom_rc" -eq 3 ] && grep -q "does not fit: stage 0" "$tmp/oom.err"; then passed=$((passed + 1)); else
  echo "FAIL simulate: a strategy that does not fit exits $oom_rc, expected 3"; failed=$((failed + 1)); fi
"$bin" memory --json - >"$tmp/mem.json"
if grep -q '"peak_bytes"' "$tmp/mem.json"; then passed=$((passed + 1)); else
  echo "FAIL memory --json: no peak_bytes"; failed=$((failed + 1)); fi

# preflight collective: the nccl-tests table, and its bad inputs.
expect_bad collective-unknown-op "--op" "$bin" collective --op all_reduce_x
expect_bad collective-bad-sizes "--sizes" "$bin" collective --sizes 8:16GiB
expect_bad collective-unknown-algo "zigzag" "$bin" collective --set collectives.algo=zigzag
expect_bad collective-nvls-on-a100 "collectives" "$bin" collective --cluster dgx-a100 --set collectives.nvls=true
expect_bad collective-one-gpu "at least 2 GPUs" "$bin" collective --nodes 1 --gpus-per-node 1
expect_bad collective-scenario-key "cluster.*, collectives.*, simulation.packet.* or simulation.flow.*" "$bin" collective --set model.layers=2
"$bin" collective --cluster dgx-h100 --sizes 1MiB,1GiB --json - >"$tmp/coll.json"
if grep -q '"busbw_gbps"' "$tmp/coll.json" && grep -q '"algorithm": "nvls"' "$tmp/coll.json"; then
  passed=$((passed + 1)); else echo "FAIL collective --json: expected busbw_gbps and an NVLS row"; failed=$((failed + 1)); fi

# preflight topology: counts as JSON, and invalid fabrics exit 2.
expect_bad topology-zero-radix "cluster.topology" "$bin" topology dgx-h100 --nodes 4 --set cluster.topology.leaf_radix=0
expect_bad topology-bad-ratio "oversubscription" "$bin" topology dgx-h100 --nodes 4 --set cluster.topology.oversubscription=0:1
expect_bad packet-without-network "simulation.packet" "$bin" simulate --set simulation.packet.mtu=1024
expect_bad packet-bad-mtu "simulation.packet.mtu" "$bin" simulate --set simulation.network=packet --set simulation.packet.mtu=64
expect_bad packet-bad-cc "simulation.packet.cc" "$bin" simulate --set simulation.network=packet --set simulation.packet.cc=bbr
expect_bad packet-degraded-unknown "simulation.degraded_links\\[0\\].link: 'nic999.0': no such node" "$bin" simulate --set simulation.network=packet --set "simulation.degraded_links=[{link: nic999.0, capacity: 0.5}]"
expect_bad packet-ib-pfc "simulation.packet.pfc: expected link_layer: roce" "$bin" simulate --set simulation.network=packet --set simulation.packet.link_layer=infiniband --set simulation.packet.pfc=true
expect_bad packet-fabric-pfc "simulation.packet.pfc: expected link_layer: roce (cluster.fabric is infiniband" "$bin" simulate --set simulation.network=packet --set simulation.packet.pfc=false
expect_bad packet-ff-spray "simulation.packet.fast_forward: expected routing: ecmp" "$bin" simulate --set simulation.network=packet --set simulation.packet.routing=spray --set simulation.packet.fast_forward=true
expect_bad packet-spray-lossy "simulation.packet.routing: spray: expected a lossless fabric" "$bin" simulate --set simulation.network=packet --set simulation.packet.link_layer=roce --set simulation.packet.pfc=false --set simulation.packet.routing=spray
expect_bad collective-bad-network "--network" "$bin" collective --cluster dgx-a100 --nodes 2 --network ns3
expect_bad collective-packet-alltoall "use --network analytical" "$bin" collective --cluster dgx-a100 --nodes 2 --op all_to_all --network packet
expect_bad topology-too-big "cluster.topology" "$bin" topology dgx-h100 --nodes 257 --set cluster.topology.kind=spine_leaf --set cluster.topology.tiers=2
"$bin" topology dgx-h100 --nodes 16 --json - >"$tmp/topo.json"
if grep -q '"bisection_bandwidth_bps"' "$tmp/topo.json" && grep -q '"switches"' "$tmp/topo.json"; then
  passed=$((passed + 1)); else echo "FAIL topology --json: missing keys"; failed=$((failed + 1)); fi

# validate --row: a published row's scenario simulates as printed, and a line with no data row,
# or one the set cannot simulate, exits 2 with one line (the repository's sample of the set, so
# the check needs no data beside the checkout).
sample=tests/data/published_sample.csv
"$bin" validate --dataset "$sample" --row 6 >"$tmp/row6.yaml"
"$bin" simulate "$tmp/row6.yaml" -q --json /dev/null
row_rc=$?
if grep -q '^# measured iteration time 13920.136 ms; family nemotron3, hybrid' "$tmp/row6.yaml" &&
  [ "$row_rc" -eq 0 ]; then passed=$((passed + 1)); else
  echo "FAIL validate --row 6: $(head -3 "$tmp/row6.yaml")"; failed=$((failed + 1)); fi
expect_bad validate-row-past-end "no data row" "$bin" validate --dataset "$sample" --row 99999
expect_bad validate-row-not-simulated "not simulated" "$bin" validate --dataset "$sample" --row 5

# The scenario shown in README.md stays valid.
python3 - "$tmp/readme.yaml" <<'PY'
import sys
text = open("README.md").read()
start = text.index("```yaml\nmodel:") + len("```yaml\n")
open(sys.argv[1], "w").write(text[start:text.index("```", start)])
PY
if "$bin" simulate "$tmp/readme.yaml" -q --json /dev/null; then passed=$((passed + 1)); else
  echo "FAIL README scenario no longer loads"; failed=$((failed + 1)); fi

# The what-if example runs end to end on the flow-level network (3 × 3 table).
if examples/whatif_nic_oversubscription.sh "$bin" >"$tmp/whatif.txt" 2>&1 && [ "$(grep -c ' s' "$tmp/whatif.txt")" -eq 3 ]; then
  passed=$((passed + 1)); else echo "FAIL whatif example: $(cat "$tmp/whatif.txt")"; failed=$((failed + 1)); fi

echo "golden: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
