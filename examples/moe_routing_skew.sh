#!/usr/bin/env bash
# Expert-routing skew: DeepSeek-V2-Lite (64 experts, top-6) on 64 H100s with EP 8, the gate
# balanced (uniform, what SimAI assumes), drawn from Dirichlet(1) or Zipf(1.2, 2.0) per layer.
# The busiest EP rank sets each MoE layer's expert GEMMs and all-to-alls, so skew slows the step.
# Usage: examples/moe_routing_skew.sh [path/to/preflight]
set -euo pipefail
bin=${1:-build/preflight}
printf '%-18s %12s %14s %12s %10s\n' "routing" "iteration" "exposed EP" "imbalance" "vs uniform"
base=""
for r in "uniform" "dirichlet 1" "zipf 1.2" "zipf 2.0"; do
  set -- $r
  extra=()
  [ "$1" = zipf ] && extra=(--set model.moe.zipf_exponent=$2)
  [ "$1" = dirichlet ] && extra=(--set model.moe.dirichlet_alpha=$2)
  "$bin" simulate examples/deepseek-v2-lite-ep8.yaml --set model.moe.routing=$1 "${extra[@]}" \
      -q --json - | python3 -c '
import json, sys
r = json.load(sys.stdin)
base = float(sys.argv[2]) if sys.argv[2] else r["iteration_time_s"]
print("%-18s %10.3f s %12.3f s %11.2fx %9.2fx" % (sys.argv[1], r["iteration_time_s"],
      r["breakdown"]["ep_comm_s"], r["moe"]["mean_imbalance"], r["iteration_time_s"] / base))
' "$r" "$base"
  if [ -z "$base" ]; then
    base=$("$bin" simulate examples/deepseek-v2-lite-ep8.yaml --set model.moe.routing=uniform \
           -q --json - | python3 -c 'import json,sys; print(json.load(sys.stdin)["iteration_time_s"])')
  fi
done
