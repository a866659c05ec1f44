"""The GPU entry point (benchmarks/gpu_driver.py) rehearsed end to end on CPU with tiny sizes, so
that the first GPU session cannot lose its call to a broken script (issue 26)."""
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_gpu_driver_rehearsal_writes_every_stage(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("XLA_FLAGS", "PYTHONPATH")}
    env.update(JAX_PLATFORMS="cpu")
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "gpu_driver.py"), "--rehearse",
                           "--out", str(tmp_path), "--budget", "170"], capture_output=True,
                          text=True, timeout=240, cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    files = list(tmp_path.glob("gpu_rows_*.jsonl"))
    assert len(files) == 1, files
    rows = [json.loads(line) for line in files[0].read_text().splitlines()]
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
    assert {r["name"] for r in rows if r["stage"] == "reserve"} >= {"cost_analysis_dpp2"}
    assert rows[-1]["stage"] == "done"
    assert not [r for r in rows if r["name"] == "error"], rows
