"""The GPU entry point (benchmarks/gpu_driver.py) rehearsed end to end on CPU with tiny sizes, so
that the first GPU session cannot lose its call to a broken script (issue 26)."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _rehearse(tmp_path, *flags, timeout: float) -> list[dict]:
    """``gpu_driver.py --rehearse FLAGS`` on CPU in a fresh process; its JSON rows."""
    env = {k: v for k, v in os.environ.items() if k not in ("XLA_FLAGS", "PYTHONPATH")}
    env.update(JAX_PLATFORMS="cpu")
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "gpu_driver.py"), "--rehearse",
                           "--out", str(tmp_path), *flags], capture_output=True, text=True,
                          timeout=timeout, cwd=tmp_path, env=env, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    files = list(tmp_path.glob("gpu_rows_*.jsonl"))
    assert len(files) == 1, files
    return [json.loads(line) for line in files[0].read_text().splitlines()]


def test_gpu_driver_rehearsal_writes_every_stage(tmp_path):
    # stages 1-3 here; stages 4 and 5 (models, scale) are rehearsed alone below
    rows = _rehearse(tmp_path, "--budget", "170", "--stages", "1", "2", "3", timeout=240)
    env_row = rows[0]
    assert env_row["stage"] == "env" and len(env_row["commit"]) == 40
    for key in ("device_kind", "XLA_FLAGS", "jax", "packages", "jax_default_matmul_precision",
                "jaxdp_precision_policy", "nvidia_smi"):
        assert key in env_row, key
    assert env_row["jaxdp_precision_policy"] == "HIGHEST"
    correct = [r for r in rows if r["stage"] == "correctness"]
    names = {(r["name"], r["policy"]) for r in correct}
    assert {("dpp2", "HIGHEST"), ("lt_admm_dp", "HIGHEST"), ("dgd_channel", "HIGHEST"),
            ("grad_dpp2", "HIGHEST"), ("dpp2", "DEFAULT")} <= names, names
    for r in correct:
        assert "error" not in r, r
        assert r["deterministic"] and r["finite"] and r["max_abs_diff"] == 0.0, r
    headline = [r for r in rows if r["name"] == "headline_dpp2"]
    assert headline and headline[0]["returncode"] == 0, headline
    assert headline[0]["result"]["seeds"] == 2
    cold = [r for r in rows if r["name"] == "cold_start"]
    assert cold and cold[0]["returncode"] == 0, cold
    assert cold[0]["result"]["import_jaxdp_imports_jax"] is False
    assert {r["name"] for r in rows if r["stage"] == "reserve"} >= {"cost_analysis_dpp2"}
    assert rows[-1]["stage"] == "done"
    assert not [r for r in rows if r["name"] == "error"], rows


@pytest.mark.slow  # ~10 s of CPU in fresh processes (--runslow)
def test_gpu_driver_model_stage_alone_on_cpu(tmp_path):
    """Stage 4 (issue 25's model workloads: digits MLP and CNN with DP-DSGD), rehearsed alone:
    the rehearsal runs one fresh-process CNN cell with its rate, timings and memory; both
    workloads' problems are built here."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("gpu_driver",
                                                  ROOT / "benchmarks" / "gpu_driver.py")
    driver = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(driver)
    assert [driver.model_problem(w, 16).dim for w in driver.MODEL_WORKLOADS] == [2410, 1370]

    rows = _rehearse(tmp_path, "--stages", "4", "--budget", "400", "--models-s", "390",
                     timeout=500)
    assert [(r["stage"], r["name"]) for r in rows] == [
        ("env", "environment"), ("models", "digits_cnn_dp_dsgd"), ("done", "done")], rows
    row = rows[1]
    assert row["returncode"] == 0, row
    result = row["result"]
    assert (result["workload"], result["agents"], result["seeds"]) == ("digits_cnn", 16, 2)
    assert (result["dim"], result["n_diverged"]) == (1370, 0), result
    assert result["agent_steps_per_second"] > 0 and result["max_rss_mib"] > 0, result
    assert result["compile_s"] > 0 and result["run_s"] > 0, result


def test_pairwise_gpu_cells_rehearsal_writes_a_row_per_cell(tmp_path):
    # benchmarks/bench_pairwise.py --device (issue 24's GPU cells) with tiny cells on CPU
    env = {k: v for k, v in os.environ.items() if k not in ("XLA_FLAGS", "PYTHONPATH")}
    env.update(JAX_PLATFORMS="cpu")
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_pairwise.py"),
                           "--device", "--rehearse", "--select", "1", "--etas", "0.5", "8",
                           "--out", str(tmp_path), "--budget", "150", "--max-bytes", "2e9"],
                          capture_output=True, text=True, timeout=200, cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    (row,) = json.loads((tmp_path / "pairwise_cpu.json").read_text())["cells"]
    assert row["method"] == "certificate" and row["etas"] == [0.5, 8.0], row
    assert row["max_bytes"] == 2e9 and "not_run" not in row, row
    assert len(row["headline_epsilon"]) == row["n"]
    for bound, attained in zip(row["headline_epsilon"], row["attained_headline_epsilon"],
                               strict=True):  # the bound never below its attained lower end
        assert bound >= attained * (1 - 1e-9), (bound, attained)


@pytest.mark.slow  # two fresh-process cells (--runslow)
def test_gpu_driver_scale_stage_alone_on_cpu(tmp_path):
    """Stage 5 (issue 38 goal 3's device cells), rehearsed alone: one row per bench_scale cell,
    each the cell's own JSON."""
    rows = _rehearse(tmp_path, "--stages", "5", "--budget", "200", "--scale-s", "190",
                     timeout=300)
    assert [(r["stage"], r["name"]) for r in rows] == [
        ("env", "environment"), ("scale", "dgd_200"), ("scale", "dgd+channel_200"),
        ("done", "done")], rows
    for row in rows[1:3]:
        assert row["returncode"] == 0, row
        result = row["result"]
        assert result["n_agents"] == 200 and result["steps"] == 2, result
        assert result["agent_steps_per_second"] > 0 and result["device_mib"] > 0, result
