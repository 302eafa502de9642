#!/usr/bin/env bash
# What-if: GPT-3 175B on 1,024 H100s (128 DGX H100 nodes, rail-optimized fat tree) with 100, 200
# and 400 Gb/s per GPU and 1:1, 2:1 and 4:1 leaf-to-spine oversubscription, on the flow-level
# network (every pipeline transfer and every collective whose group spans nodes shares the
# fabric, as the transfers of the algorithm NCCL chose).
# Usage: examples/whatif_nic_oversubscription.sh [path/to/preflight]
set -euo pipefail
bin=${1:-build/preflight}
common=(--set model.preset=gpt3-175b --set cluster.preset=dgx-h100 --set cluster.nodes=128
        --set parallelism.tp=8 --set parallelism.pp=16 --set parallelism.dp=8
        --set training.global_batch=1536 --set training.micro_batch=1 --set training.seq_len=2048
        --set simulation.network=flow -q --json -)
printf '%-12s %12s %12s %12s\n' "NIC per GPU" "1:1" "2:1" "4:1"
for nic in 100Gbps 200Gbps 400Gbps; do
  row=$(printf '%-12s' "$nic")
  for ratio in 1:1 2:1 4:1; do
    t=$("$bin" simulate "${common[@]}" --set cluster.nic_bandwidth=$nic \
          --set cluster.topology.oversubscription=$ratio |
        python3 -c 'import json,sys; print("%.3f s" % json.load(sys.stdin)["iteration_time_s"])')
    row+=$(printf ' %12s' "$t")
  done
  echo "$row"
done
