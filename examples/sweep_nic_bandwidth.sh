#!/usr/bin/env bash
# SimAI's production question (Wang et al., NSDI '25): for a 1,024-GPU cluster, how much does
# the network bandwidth per GPU buy? GPT-3 175B on 128 DGX H100 nodes (rail-optimized fat tree,
# flow-level network) at 100, 200 and 400 Gb/s per GPU, and the same cluster with H20 GPUs; each
# point's best strategy is re-searched (`--search`: the fastest of every TP/PP/VPP/micro-batch/
# recompute/... combination that fits, the best 10 simulated again on the flow network).
# Writes the table to stdout, and CSV and SVG next to the binary (or into OUT_DIR).
# Usage: examples/sweep_nic_bandwidth.sh [path/to/preflight] [OUT_DIR]
set -euo pipefail
bin=${1:-build/preflight}
out=${2:-$(dirname "$bin")}
"$bin" sweep --set model.preset=gpt3-175b --set cluster.preset=dgx-h100 --set cluster.nodes=128 \
  --set training.global_batch=1536 --set training.seq_len=2048 --set simulation.network=flow \
  --vary cluster.gpu=H100-SXM5-80GB,H20 --vary cluster.nic_bandwidth=100Gbps,200Gbps,400Gbps \
  --search --csv "$out/sweep_nic_bandwidth.csv" --plot "$out/sweep_nic_bandwidth.svg" \
  --title "GPT-3 175B on 1,024 GPUs: iteration time by NIC bandwidth per GPU"
# The decision: what each doubling of the bandwidth buys on each GPU.
python3 - "$out/sweep_nic_bandwidth.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
tps = {(r["cluster.gpu"], r["cluster.nic_bandwidth"]): float(r["tokens_per_s"]) for r in rows}
print()
for gpu in dict.fromkeys(r["cluster.gpu"] for r in rows):
    gains = []
    for lo, hi in (("100Gbps", "200Gbps"), ("200Gbps", "400Gbps")):
        gain = (tps[gpu, hi] / tps[gpu, lo] - 1) * 100
        gains.append("%s -> %s Gb/s %+.1f %%" % (lo[:-4], hi[:-4], gain))
    print("%-15s tokens/s from %s" % (gpu, ", ".join(gains)))
PY
echo "chart: $out/sweep_nic_bandwidth.svg  table: $out/sweep_nic_bandwidth.csv"
