"""Tests of the Python module `preflight` (run by `make python-test` and `make test`).

The module is imported from build/python (PYTHONPATH); the CLI beside it, build/preflight, is the
oracle for keys and error messages.
"""
import json
import os
import subprocess
import sys
import threading

import pytest

import preflight

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLE = os.path.join(ROOT, "examples", "gpt3-13b-one-node.yaml")
SMALL = {"model": {"preset": "llama3-8b"}, "cluster": {"preset": "dgx-h100", "gpus": 8}}


def cli_path():
    # build/python/preflight*.so -> build/preflight
    return os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(preflight.__file__))),
                        "preflight")


def run_cli(*args):
    cli = cli_path()
    if not os.path.exists(cli):
        pytest.skip("the preflight CLI is not built beside the module")
    return subprocess.run([cli, *args], capture_output=True, text=True, cwd=ROOT)


def keys(value, prefix=""):
    """Every key path of a JSON value (list items collapsed to [])."""
    out = set()
    if isinstance(value, dict):
        for k, v in value.items():
            out.add(prefix + k)
            out |= keys(v, prefix + k + ".")
    elif isinstance(value, list):
        for v in value:
            out |= keys(v, prefix + "[].")
    return out


def test_simulate_dict_gives_a_positive_iteration_time():
    r = preflight.simulate(SMALL)
    assert r["iteration_time_s"] > 0
    assert r["scenario"]["model"]["name"].lower().startswith("llama")


def test_simulate_dict_takes_omitted_sections_from_the_default_scenario():
    r = preflight.simulate(SMALL)
    # training comes from the default scenario; parallelism is the loader's (DP over 8 GPUs).
    assert r["scenario"]["training"]["global_batch"] == 1536
    # ... but the model brings its own pre-training sequence length, named among the defaults.
    assert r["scenario"]["training"]["seq_len"] == 8192
    assert r["defaults"]["training.seq_len"] == "8192"
    p = r["scenario"]["parallelism"]
    assert (p["tp"], p["pp"], p["dp"]) == (1, 1, 8)


def test_simulate_path_matches_the_cli_json_exactly_in_keys_and_figures():
    r = preflight.simulate(EXAMPLE)
    cli = run_cli("simulate", EXAMPLE, "--json", "-")
    assert cli.returncode == 0, cli.stderr
    expected = json.loads(cli.stdout)
    expected.pop("wall_seconds", None)
    got = dict(r)
    got.pop("wall_seconds", None)
    assert keys(got) == keys(expected)
    assert got["iteration_time_s"] == expected["iteration_time_s"]


def test_simulate_default_scenario_is_the_cli_default():
    r = preflight.simulate()
    cli = run_cli("simulate", "--json", "-")
    assert cli.returncode == 0, cli.stderr
    assert r["iteration_time_s"] == json.loads(cli.stdout)["iteration_time_s"]


def test_simulate_set_overrides_like_the_cli():
    r = preflight.simulate(EXAMPLE, set=["training.global_batch=64"])
    assert r["scenario"]["training"]["global_batch"] == 64


def test_dict_dp_auto_resolves_from_the_gpu_count():
    # 64 DGX A100 nodes = 512 GPUs over tp 8 · pp 16: dp 4.
    scenario = {"cluster": {"preset": "dgx-a100", "nodes": 64},
                "parallelism": {"tp": 8, "pp": 16, "dp": "auto"}}
    assert preflight.memory(scenario)["scenario"]["parallelism"]["dp"] == 4
    r = preflight.memory(None, set=["parallelism.dp=auto", "cluster.nodes=32"])
    assert r["scenario"]["parallelism"]["dp"] == 2
    with pytest.raises(preflight.Error, match=r"^<dict>: parallelism\.dp: auto: 512 GPUs is not a "
                                              r"multiple of tp·cp·pp = 48 \(tp 8, cp 1, pp 6\)$"):
        preflight.memory(dict(scenario, parallelism={"tp": 8, "pp": 6, "dp": "auto"}))


def test_activation_offloading_from_a_dict():
    # The offload example's job from a dict: the exposed copies are a breakdown part, the host
    # link is the cluster's, and a slower link exposes more of them.
    job = {"model": {"preset": "llama3-70b"},
           "cluster": {"preset": "gb200-nvl72", "gpus": 64},
           "training": {"seq_len": 8192, "global_batch": 256, "micro_batch": 2,
                        "precision": "fp8"},
           "parallelism": {"tp": 1, "pp": 1, "dp": "auto", "zero_stage": 3,
                           "distributed_optimizer": True, "offload_layers": 46}}
    fast = preflight.simulate(job)
    slow = preflight.simulate(job, set=["cluster.host_bandwidth=25GB/s"])
    assert fast["scenario"]["parallelism"]["offload_layers"] == 46
    assert fast["scenario"]["cluster"]["host_bandwidth_bps"] == 225e9
    assert fast["memory"]["stages"][0]["offloaded_bytes"] > 0
    assert slow["breakdown"]["offload_s"] > fast["breakdown"]["offload_s"]
    assert slow["iteration_time_s"] > fast["iteration_time_s"]
    with pytest.raises(preflight.Error, match=r"parallelism\.offload_layers: 46: expected pp 1"):
        preflight.simulate(job, set=["parallelism.pp=2"])


def test_measured_kernels_from_a_profiler_trace(tmp_path):
    # The trace fixture becomes a kernel table through the CLI; a job whose QKV and output
    # GEMMs and attention are in it takes their measured times, the rest the roofline's.
    table = tmp_path / "step.csv"
    out = run_cli("kernels", "--from-trace", os.path.join(ROOT, "tests", "data", "kineto_step.json"),
                  "--out", str(table))
    assert out.returncode == 0, out.stderr
    job = {"model": {"preset": "llama3-8b"},
           "cluster": {"preset": "dgx-h100", "nodes": 1},
           "training": {"global_batch": 32, "micro_batch": 1, "seq_len": 8192},
           "parallelism": {"tp": 1},
           "compute": {"model": "measured", "kernel_table": str(table)}}
    r = preflight.simulate(job)
    c = r["compute_coverage"]
    assert 0 < c["measured_share"] < 1 and c["roofline_share"] > 0
    assert abs(c["measured_share"] + c["interpolated_share"] + c["roofline_share"] - 1) < 1e-12
    assert r["scenario"]["compute"]["kernels"] == 5
    roofline = preflight.simulate(job, set=["compute.model=roofline", "compute.kernel_table="])
    assert "compute_coverage" not in roofline
    assert roofline["iteration_time_s"] != r["iteration_time_s"]
    with pytest.raises(preflight.Error, match=r"compute\.kernel_table: missing key"):
        preflight.simulate(job, set=["compute.kernel_table="])


def test_memory_matches_the_cli_keys():
    m = preflight.memory(EXAMPLE)
    cli = run_cli("memory", EXAMPLE, "--json", "-")
    assert cli.returncode == 0, cli.stderr
    assert keys(m) == keys(json.loads(cli.stdout))
    assert m["stages"] and "fits" in m


def test_collective_matches_the_cli_json():
    c = preflight.collective("dgx-h100", op="all_gather", sizes="1MiB,1GiB")
    cli = run_cli("collective", "--cluster", "dgx-h100", "--op", "all_gather", "--sizes",
                  "1MiB,1GiB", "--json", "-")
    assert cli.returncode == 0, cli.stderr
    assert c == json.loads(cli.stdout)
    assert [row["bytes"] for row in c["rows"]] == [1 << 20, 1 << 30]
    assert c["network"] == "analytical"


def test_collective_on_the_packet_network_matches_the_cli_json():
    args = dict(op="all_reduce", sizes="64MiB", nodes=2, set=["collectives.algo=ring"])
    c = preflight.collective("dgx-a100", network="packet", **args)
    cli = run_cli("collective", "--cluster", "dgx-a100", "--nodes", "2", "--sizes", "64MiB",
                  "--set", "collectives.algo=ring", "--network", "packet", "--json", "-")
    assert cli.returncode == 0, cli.stderr
    assert c == json.loads(cli.stdout)
    assert c["network"] == "packet"
    flow = preflight.collective("dgx-a100", network="flow", **args)
    assert abs(c["rows"][0]["time_us"] / flow["rows"][0]["time_us"] - 1) < 0.01


def test_presets_lists_every_kind():
    presets = preflight.presets()
    kinds = {p["kind"] for p in presets}
    assert kinds == {"gpus", "clusters", "models", "scenarios", "stacks"}
    assert any(p["name"] == "llama3-8b" for p in preflight.presets("models"))
    assert "hidden" in preflight.preset_text("llama3-8b")


def test_search_on_a_tiny_space():
    r = preflight.search(SMALL, space=["tp=1,2", "pp=1", "micro_batch=1",
                                       "recompute=full"], top=2)
    assert r["results"]
    assert r["objective"] == "time"
    best = r["results"][0]
    assert best["iteration_time_s"] > 0


def test_search_matches_the_cli_keys(tmp_path):
    path = tmp_path / "small.yaml"
    path.write_text(json.dumps(SMALL | {"training": {"global_batch": 64}}))
    args = ["--space", "tp=1,2", "--space", "pp=1", "--top", "2", "--jobs", "1"]
    r = preflight.search(str(path), space=["tp=1,2", "pp=1"], top=2, jobs=1)
    cli = run_cli("search", str(path), *args, "--json", "-")
    assert cli.returncode == 0, cli.stderr
    expected = json.loads(cli.stdout)
    assert keys(r) == keys(expected)
    assert r["results"] == expected["results"]


def test_search_on_another_gpu_count_matches_the_cli(tmp_path):
    path = tmp_path / "small.yaml"
    path.write_text(json.dumps(SMALL | {"training": {"global_batch": 64}}))
    r = preflight.search(str(path), gpus=16, space=["tp=1,2", "pp=1,2"], top=2, jobs=1)
    cli = run_cli("search", str(path), "--gpus", "16", "--space", "tp=1,2", "--space", "pp=1,2",
                  "--top", "2", "--jobs", "1", "--json", "-")
    assert cli.returncode == 0, cli.stderr
    expected = json.loads(cli.stdout)
    assert r["gpus"] == 16 == expected["gpus"]
    assert r["results"] == expected["results"]


@pytest.mark.parametrize("call, cli_args", [
    (lambda: preflight.simulate("no/such.yaml"), ["simulate", "no/such.yaml"]),
    (lambda: preflight.simulate(None, set=["parallelism.tp=3"]),
     ["simulate", "--set", "parallelism.tp=3"]),
    (lambda: preflight.memory(None, set=["nonsense"]), ["memory", "--set", "nonsense"]),
    (lambda: preflight.collective("no-such-cluster"),
     ["collective", "--cluster", "no-such-cluster"]),
    (lambda: preflight.collective("dgx-h100", op="gather"),
     ["collective", "--op", "gather"]),
    (lambda: preflight.search(None, space=["tp=banana"]), ["search", "--space", "tp=banana"]),
    (lambda: preflight.search(None, gpus=12), ["search", "--gpus", "12"]),
])
def test_errors_raise_preflight_error_with_the_cli_message(call, cli_args):
    with pytest.raises(preflight.Error) as e:
        call()
    cli = run_cli(*cli_args)
    assert cli.returncode == 2
    assert cli.stderr.strip() == "preflight: error: " + str(e.value)


def test_dict_errors_name_the_dict():
    with pytest.raises(preflight.Error, match=r"^<dict>: .*model"):
        preflight.simulate({"model": {"preset": "no-such-model"}, "cluster": {"preset": "dgx-h100"}})
    with pytest.raises(preflight.Error, match="unknown section"):
        preflight.simulate({"modle": {}})


def test_error_is_an_exception_and_bad_types_raise_type_error():
    assert issubclass(preflight.Error, Exception)
    with pytest.raises(TypeError):
        preflight.simulate(42)


def test_two_threads_simulate_at_once_and_agree():
    expected = preflight.simulate(EXAMPLE)["iteration_time_s"]
    results, errors = [], []

    def work():
        try:
            results.append(preflight.simulate(EXAMPLE)["iteration_time_s"])
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert results == [expected, expected]


def test_the_nic_sweep_example_writes_a_png_headless(tmp_path):
    pytest.importorskip("matplotlib")
    out = tmp_path / "sweep.png"
    module_dir = os.path.dirname(os.path.abspath(preflight.__file__))
    env = dict(os.environ, MPLBACKEND="Agg", DISPLAY="", PYTHONPATH=module_dir)
    r = subprocess.run([sys.executable, os.path.join(ROOT, "examples", "python", "sweep_nics.py"),
                        str(out)], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


CHAKRA_JOB = ["model.preset=gpt3-1.7b", "model.layers=4", "cluster.nodes=2",
              "parallelism.tp=2", "parallelism.pp=2", "parallelism.dp=4",
              "training.global_batch=16",
              # The replay does not yet slow compute under overlapped collectives
              # (docs/interop.md), so the comparison turns that off on both sides.
              "cluster.gpu.calibration.comm_sm_interference=0"]


def test_chakra_export_then_replay_gives_the_simulated_time(tmp_path):
    prefix = str(tmp_path / "job")
    written = preflight.export_chakra(set=CHAKRA_JOB, prefix=prefix)
    assert written["ranks"] == 16 and written["nodes"] > 1000
    assert os.path.exists(prefix + ".15.et") and os.path.exists(prefix + ".comm_group.json")
    replayed = preflight.replay_chakra(prefix, set=CHAKRA_JOB)
    assert replayed["iteration_time_s"] == preflight.simulate(set=CHAKRA_JOB)["iteration_time_s"]
    assert len(replayed["per_rank"]) == 16
    assert replayed["network"]["backend"] == "analytical"


def test_chakra_errors_raise_preflight_error(tmp_path):
    with pytest.raises(preflight.Error, match=r"none\.0\.et: cannot open"):
        preflight.replay_chakra(str(tmp_path / "none"))
    with pytest.raises(preflight.Error, match=r"over the limit of 10 \(--max-nodes\)"):
        preflight.export_chakra(set=CHAKRA_JOB, prefix=str(tmp_path / "big"), max_nodes=10)


# GPT-3 1.7B on one DGX A100 node: a sweep point simulates in milliseconds.
SWEEP_SET = ["model.preset=gpt3-1.7b", "cluster.preset=dgx-a100", "cluster.nodes=1",
             "parallelism.tp=1", "parallelism.pp=1", "parallelism.dp=auto",
             "training.global_batch=16"]


def test_simulate_writes_the_trace_and_report_the_cli_writes(tmp_path):
    trace, report = tmp_path / "py.trace.json", tmp_path / "py.html"
    r = preflight.simulate(EXAMPLE, trace=str(trace), report=str(report))
    assert r["iteration_time_s"] > 0
    cli_trace, cli_report = tmp_path / "cli.trace.json", tmp_path / "cli.html"
    cli = run_cli("simulate", EXAMPLE, "-q", "--trace", str(cli_trace), "--report",
                  str(cli_report))
    assert cli.returncode == 0, cli.stderr
    assert trace.read_bytes() == cli_trace.read_bytes()
    assert report.read_bytes() == cli_report.read_bytes()
    assert json.loads(trace.read_text())["traceEvents"]
    assert report.read_text().startswith("<!DOCTYPE html>")


def test_simulate_report_alone_and_kernel_traces_match_the_cli(tmp_path):
    report = tmp_path / "alone.html"
    preflight.simulate(EXAMPLE, report=str(report))
    cli = run_cli("simulate", EXAMPLE, "-q", "--report", str(tmp_path / "cli.html"))
    assert cli.returncode == 0, cli.stderr
    assert report.read_bytes() == (tmp_path / "cli.html").read_bytes()
    blocks, kernels = tmp_path / "blocks.json", tmp_path / "kernels.json"
    preflight.simulate(EXAMPLE, trace=str(blocks))
    preflight.simulate(EXAMPLE, trace=str(kernels), trace_level="kernels")
    assert len(kernels.read_bytes()) > len(blocks.read_bytes())
    with pytest.raises(preflight.Error, match=r"^trace_level x: expected blocks or kernels$"):
        preflight.simulate(EXAMPLE, trace=str(blocks), trace_level="x")
    with pytest.raises(preflight.Error, match="cannot open for writing"):
        preflight.simulate(EXAMPLE, trace=str(tmp_path / "no" / "such" / "dir.json"))


def test_sweep_rows_are_the_cli_json_rows(tmp_path):
    vary = ["cluster.nic_bandwidth=25Gbps,400Gbps", "training.micro_batch=1,2"]
    rows = preflight.sweep(set=SWEEP_SET, vary=vary, jobs=1)
    assert [(r["cluster.nic_bandwidth"], r["training.micro_batch"]) for r in rows] == [
        ("25Gbps", 1), ("25Gbps", 2), ("400Gbps", 1), ("400Gbps", 2)]
    assert rows[0]["speedup"] == 1.0 and rows[0]["error"] is None
    assert all(r["fits"] and r["iteration_time_s"] > 0 for r in rows)
    args = [a for v in vary for a in ("--vary", v)] + [a for s in SWEEP_SET for a in ("--set", s)]
    out = tmp_path / "sweep.json"
    cli = run_cli("sweep", *args, "--json", str(out))
    assert cli.returncode == 0, cli.stderr
    assert f"json written to {out}" in cli.stdout
    assert rows == json.loads(out.read_text())
    # Every field of the CSV, in its order.
    csv = run_cli("sweep", *args, "--csv", "-")
    assert list(rows[0]) == csv.stdout.splitlines()[0].split(",")


def test_sweep_takes_a_dict_of_axes_and_a_path(tmp_path):
    path = tmp_path / "small.yaml"
    path.write_text("model: {preset: gpt3-1.7b}\ncluster: {preset: dgx-a100, nodes: 1}\n"
                    "training: {global_batch: 16}\n")
    rows = preflight.sweep(str(path), vary={"parallelism.tp": [1, 2],
                                            "parallelism.sequence_parallel": [False]})
    assert [(r["tp"], r["dp"]) for r in rows] == [(1, 8), (2, 4)]
    assert rows[0]["parallelism.sequence_parallel"] == "false"


def test_sweep_with_search_gives_each_point_its_best_strategy():
    rows = preflight.sweep(set=SWEEP_SET, vary=["cluster.nic_bandwidth=100Gbps"], search=True,
                           space=["tp=1,2", "pp=1", "micro_batch=1,2", "recompute=selective"],
                           top=1, jobs=2)
    assert len(rows) == 1 and rows[0]["error"] is None
    assert rows[0]["tp"] in (1, 2) and rows[0]["micro_batch"] in (1, 2)


def test_sweep_errors_raise_preflight_error():
    with pytest.raises(preflight.Error, match=r"--vary cluster\.nic_bw=100Gbps"):
        preflight.sweep(set=SWEEP_SET, vary=["cluster.nic_bw=100Gbps"])
    with pytest.raises(preflight.Error, match=r"^space tp=1: only with search=True$"):
        preflight.sweep(set=SWEEP_SET, vary=["cluster.nodes=1"], space=["tp=1"])
    with pytest.raises(TypeError):
        preflight.sweep({"model": {}}, vary=["cluster.nodes=1"])
    with pytest.raises(TypeError):
        preflight.sweep(vary=[1])
