"""The secure (lattice) sampler's speed, alone and on the sampler-bound workload (issue 38, goal 4).

    PYTHONPATH=. python benchmarks/bench_sampler_speed.py --label after --out results/x.json
    PYTHONPATH=/path/to/old/tree python benchmarks/bench_sampler_speed.py --label before ...

``PYTHONPATH`` picks the jaxdp measured (an old tree: ``git archive <commit> jaxdp | tar -x``), so
before and after run from one command line, interleaved by the caller. Rows:

* ``draws``: ``lattice_draws`` of 256 vmapped keys × ``(502, 10)`` (one step of the workload's
  per-message noise at 256 seeds), Gaussian and Laplace, float32: draws/s by wall clock and by
  process CPU time (both cores; steadier on a shared machine), best of 7; compiled as jaxdp
  compiles a run (``jaxdp.compiler_options()``; the rows before stop 42 took XLA's defaults).
* ``workload``: ``bench_decentbench.py``'s ``dgd+gauss`` cell (DGD, per-message lattice Gaussian
  σ = 0.1, N = 50, d = 10, m = 200, 500 iterations, float32; least squares, or with ``--loss
  logistic`` its ℓ2-logistic workload), or the cells ``--algorithms`` names (``dgd``: the
  noise-free step), at 30 and 256 seeds, each in its own process; agent-iterations/s of the run
  (compile apart).

The 1-min load average and ``XLA_FLAGS`` (XLA's compiler options, read from the environment by
every process the script starts) are recorded with every number.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def load() -> float:
    return float(Path("/proc/loadavg").read_text().split()[0])


def draws(law: str, seeds: int = 256, shape=(502, 10)) -> dict:
    import jax
    import jax.numpy as jnp

    import jaxdp
    from jaxdp.privacy.samplers import lattice_draws
    keys = jax.random.split(jax.random.key(0), seeds)
    options = jaxdp.compiler_options() if hasattr(jaxdp, "compiler_options") else None
    f = jax.jit(jax.vmap(lambda k: lattice_draws(k, shape, jnp.float32, law=law)),
                compiler_options=options)  # as jaxdp compiles a run (a tree before stop 42: None)
    f(keys).block_until_ready()
    wall, cpu = [], []
    for _ in range(7):
        w, c = time.perf_counter(), time.process_time()
        f(keys).block_until_ready()
        wall.append(time.perf_counter() - w)
        cpu.append(time.process_time() - c)
    n = seeds * shape[0] * shape[1]
    return {"row": "draws", "law": law, "draws": n, "draws_per_s_wall": n / min(wall),
            "draws_per_s_cpu": n / min(cpu), "load1": load()}


def workload(trials: int, spec: Path, algorithm: str = "dgd+gauss") -> dict:
    out = subprocess.run([sys.executable, str(HERE / "bench_decentbench.py"), "--cell", str(spec),
                          algorithm, str(trials), "500"], check=True, capture_output=True,
                         text=True).stdout
    r = json.loads(out.strip().splitlines()[-1])
    return {"row": "workload", "algorithm": algorithm, "trials": trials,
            "run_seconds": r["run_seconds"],
            "compile_seconds": r["compile_seconds"],
            "agent_iterations_per_second": r["agent_iterations_per_second"], "load1": load()}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--label", required=True)
    ap.add_argument("--trials", type=int, nargs="*", default=[30, 256])
    ap.add_argument("--loss", choices=("least_squares", "logistic"), default="least_squares")
    ap.add_argument("--algorithms", nargs="+", default=["dgd+gauss"],
                    help="bench_decentbench.py rows to time (dgd: the noise-free step)")
    ap.add_argument("--no-draws", dest="draws", action="store_false")
    ap.add_argument("--out", required=True, help="a JSON file; rows are appended")
    args = ap.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        spec = Path(tmp) / "spec.npz"
        export = ("import sys; sys.path.insert(0, sys.argv[1]); import bench_decentbench as b; "
                  "from pathlib import Path; b.export_spec(Path(sys.argv[2]), sys.argv[3])")
        subprocess.run([sys.executable, "-c", export, str(HERE), str(spec), args.loss],
                       check=True)
        rows += [workload(t, spec, a) for a in args.algorithms for t in args.trials]
    if args.draws:
        rows += [draws(law) for law in ("gaussian", "laplace")]
    for r in rows:
        r["label"] = args.label  # which tree PYTHONPATH named (no local path in the results)
        r["loss"] = args.loss
        r["xla_flags"] = os.environ.get("XLA_FLAGS", "")
        print(json.dumps(r))
    append_rows(Path(args.out), rows)
    return 0


def append_rows(path: Path, rows: list[dict]) -> None:
    """Append ``rows`` to the ``{"rows": [...]}`` JSON file at ``path`` (created if missing)."""
    old = json.loads(path.read_text()) if path.exists() else {"rows": []}
    old["rows"] += rows
    path.write_text(json.dumps(old, indent=1) + "\n")


if __name__ == "__main__":
    raise SystemExit(main())
