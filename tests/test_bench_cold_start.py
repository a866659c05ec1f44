"""benchmarks/bench_cold_start.py at tiny sizes: every row is written, ``import jaxdp`` pulls in no
JAX, ``jaxdp list`` compiles nothing, and the compiled program does not grow with the seeds."""
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_bench_cold_start_tiny(tmp_path):
    out = tmp_path / "cold.json"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "JAX_PLATFORMS": "cpu"}
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_cold_start.py"),
                           "--tiny", "--repeats", "1", "--seeds", "1", "64", "--steps", "2",
                           "--out", str(out)], capture_output=True, text=True, env=env,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(out.read_text())
    assert result["import_jaxdp_imports_jax"] is False
    assert result["list_compiles"] == 0
    for key in ("import_jaxdp_s", "import_jax_s", "help_s", "list_s"):
        assert result[key] > 0, key
    small, large = result["compile"]
    assert (small["seeds"], large["seeds"]) == (1, 64)
    assert large["hlo_chars"] < 1.2 * small["hlo_chars"]  # the seed axis is not unrolled
    run = result["cli_run"]
    assert run["cache_entries"] > 0 and min(run["first_s"], run["repeat_s"]) > 0
    assert run["repeat_compile_s"] < run["first_compile_s"]  # the repeat read the cache
