#!/usr/bin/env python3
"""How much does NIC bandwidth buy? LLaMA-3 70B on 64 DGX H100 nodes (512 GPUs), simulated with
the Python module at 50 to 800 Gb/s per NIC, plotted with matplotlib (headless, Agg backend).

Run after `make build`:
    PYTHONPATH=build/python python3 examples/python/sweep_nics.py [OUT.png]

Each point is one `preflight.simulate` call; the calls run on a thread pool, and since the module
releases the GIL while it simulates, they run in parallel.
"""
import os
import sys
from concurrent.futures import ThreadPoolExecutor

try:
    import matplotlib
except ImportError:
    sys.exit("sweep_nics.py: matplotlib is not installed (Debian: apt-get install "
             "python3-matplotlib); the simulations need only the preflight module")

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

try:
    import preflight  # noqa: E402
except ImportError:
    sys.exit("sweep_nics.py: the preflight module is not on the path: build it (make build) and "
             "run with PYTHONPATH=build/python")

HERE = os.path.dirname(os.path.abspath(__file__))
SCENARIO = os.path.join(HERE, "..", "llama3-70b-h100.yaml")
GBPS = [50, 100, 200, 400, 800]


def simulate(gbps):
    # The scenario file with one key changed: the same as `--set cluster.nic_bandwidth=...`.
    return preflight.simulate(SCENARIO, set=["cluster.nic_bandwidth=%dGbps" % gbps])


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "sweep_nics.png"
    with ThreadPoolExecutor(max_workers=os.cpu_count()) as pool:
        reports = list(pool.map(simulate, GBPS))

    times = [r["iteration_time_s"] for r in reports]
    mfu = [100 * r["mfu"] for r in reports]
    print("%10s %12s %8s %12s" % ("NIC Gb/s", "iteration s", "MFU %", "tokens/s"))
    for gbps, r, m in zip(GBPS, reports, mfu):
        print("%10d %12.3f %8.1f %12.0f" % (gbps, r["iteration_time_s"], m, r["tokens_per_s"]))

    fig, ax = plt.subplots(figsize=(7, 4))
    ax.plot(GBPS, times, marker="o", color="tab:blue")
    ax.set_xscale("log", base=2)
    ax.set_xticks(GBPS)
    ax.set_xticklabels([str(g) for g in GBPS])
    ax.set_xlabel("NIC bandwidth (Gb/s per NIC, 8 NICs per node)")
    ax.set_ylabel("iteration time (s)", color="tab:blue")
    twin = ax.twinx()
    twin.plot(GBPS, mfu, marker="s", linestyle="--", color="tab:orange")
    twin.set_ylabel("MFU (%)", color="tab:orange")
    ax.set_title("LLaMA-3 70B on 512 H100s: iteration time by NIC bandwidth")
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    print("chart: %s" % out)


if __name__ == "__main__":
    main()
