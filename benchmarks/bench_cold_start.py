"""Cold start on CPU (issue 38): import, the command's ``--help`` and ``list``, the compile time and
compiled-program size of DPP²'s headline run against the seed count, and a first and a repeated
``jaxdp run`` with the persistent compilation cache (and one without it).

Every timing is wall-clock from a fresh process's spawn (or, for compile, of ``lower`` +
``compile`` of the run's programs, jaxdp's own ``compile_seconds``), repeated ``--repeats`` times
(best kept: the machine is shared). The compile cells run with JAX's persistent cache off, one CPU
device, DPP²'s paper setting (N = 50, m = 200, d = 10, the radius-0.3 geometric graph) and few
steps: the program is one ``lax.scan`` whatever the steps. ``--tiny`` shrinks everything for the
test (``tests/test_bench_cold_start.py``) and the GPU driver's rehearsal.

    python benchmarks/bench_cold_start.py                  # -> results/cold_start_cpu.json
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
ROOT = HERE.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

COMPILE_SEEDS = (1, 64, 4096)
#: ``jaxdp run`` timed with the cache: the brief's example, and its tiny version for the test.
CLI_RUN = ["run", "dgd", "--agents", "50", "--seeds", "100", "--steps", "500", "--no-progress"]
CLI_RUN_TINY = ["run", "dgd", "--agents", "4", "--seeds", "2", "--steps", "5", "--no-progress"]


def _env(**extra) -> dict:
    """This checkout first on the path; no JAX cache or XLA flags inherited from the caller."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("JAX_COMPILATION_CACHE_DIR", "XLA_FLAGS", "JAXDP_CACHE_DIR")}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])])
    return {**env, **extra}


def wall(argv: list[str], env: dict | None = None) -> tuple[float, str]:
    """Seconds from spawning ``python argv`` to its exit, and its stderr; raises if it failed.
    A ``jaxdp run``'s summary line (its ``compile_seconds``) is kept in :data:`LAST_SUMMARY`."""
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, *argv], capture_output=True, text=True, cwd=ROOT,
                          env=env or _env(), timeout=600, check=False)
    seconds = time.perf_counter() - t0
    if done.returncode != 0:
        raise RuntimeError(f"{argv}: exit {done.returncode}: {done.stderr[-2000:]}")
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    LAST_SUMMARY.clear()
    LAST_SUMMARY.update(json.loads(lines[-1]) if lines else {})
    return seconds, done.stderr


LAST_SUMMARY: dict = {}


def best_wall(argv: list[str], repeats: int, env: dict | None = None) -> float:
    return round(min(wall(argv, env)[0] for _ in range(repeats)), 3)


def imports(repeats: int) -> dict:
    """``import jaxdp`` against ``import jax``, and whether the former pulls in the latter."""
    probe = "import sys, jaxdp; print('jax' in sys.modules)"
    pulls = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                           cwd=ROOT, env=_env(), check=True).stdout.strip() == "True"
    return {"import_jaxdp_s": best_wall(["-c", "import jaxdp"], repeats),
            "import_jax_s": best_wall(["-c", "import jax"], repeats),
            "import_jaxdp_then_run_s": best_wall(["-c", "import jaxdp; jaxdp.run"], repeats),
            "import_jaxdp_imports_jax": pulls}


def command(repeats: int) -> dict:
    """``jaxdp --help`` and ``jaxdp list``: wall, and the programs ``list`` compiles (none)."""
    cli = ["-m", "jaxdp.cli"]
    lists = [wall([*cli, "list"], _env(JAX_LOG_COMPILES="1")) for _ in range(repeats)]
    return {"help_s": best_wall([*cli, "--help"], repeats),
            "list_s": round(min(seconds for seconds, _ in lists), 3),
            "list_compiles": max(log.count("Compiling") for _, log in lists)}


def compile_cell(seeds: int, steps: int, tiny: bool) -> dict:
    """Lower + compile the run's programs (start and one chunk) for DPP²'s headline at ``seeds``
    seeds on one CPU device; seconds and the optimized HLO's size."""
    import jax
    import numpy as np
    from jax.sharding import Mesh

    from jaxdp import algorithms, network, problems
    from jaxdp.engine._run import SEED_AXIS, _Program
    from jaxdp.experiments.dpp2 import paper_network, paper_problem

    if tiny:
        prob = problems.nonconvex_logistic(n_agents=8, m=10, d=3, seed=0)
        net = network.make_network("random_geometric", 8, radius=0.5, seed=1)
    else:
        prob, net = paper_problem(), paper_network()
    program = _Program(algorithms.DPP2(), prob, net, algorithms.DPP2Params(), None, steps, None,
                       False, Mesh(np.array(jax.devices()[:1]), (SEED_AXIS,)))
    t0 = time.perf_counter()
    compiled = program.compile(seeds, [1])
    seconds = time.perf_counter() - t0
    return {"seeds": seeds, "steps": steps, "compile_s": round(seconds, 3),
            "hlo_chars": sum(len(c.as_text()) for c in compiled.values())}


def compiles(seed_counts, steps: int, repeats: int, tiny: bool) -> list[dict]:
    """:func:`compile_cell` at each seed count, best of ``repeats`` (a fresh program each time:
    nothing is reused in memory, and the persistent cache is off)."""
    import jax

    jax.config.update("jax_enable_compilation_cache", False)
    rows = []
    for seeds in seed_counts:
        cells = [compile_cell(seeds, steps, tiny) for _ in range(repeats)]
        rows.append(min(cells, key=lambda c: c["compile_s"]))
        print(json.dumps(rows[-1]), flush=True)
    return rows


def cached_runs(argv: list[str], repeats: int, without: bool = True) -> dict:
    """``jaxdp ARGV``: first in a fresh cache directory, then again on the cache it wrote (and,
    if ``without``, with ``--no-compile-cache``); wall from spawn, best of ``repeats`` fresh
    directories."""
    cli = ["-m", "jaxdp.cli", *argv]
    times = {"first": [], "repeat": [], "no_cache": []}  # (wall, the run's compile_seconds)

    def timed(kind, *flags, env):
        seconds = wall([*cli, *flags, "--out", f"{tmp}/{kind}{i}"], env)[0]
        times[kind].append((seconds, LAST_SUMMARY.get("compile_seconds")))

    with tempfile.TemporaryDirectory() as tmp:
        for i in range(repeats):
            env = _env(JAXDP_CACHE_DIR=str(Path(tmp) / f"cache{i}"))
            timed("first", env=env)
            timed("repeat", env=env)
            if without:
                timed("no_cache", "--no-compile-cache", env=env)
        entries = len(list((Path(tmp) / "cache0").iterdir()))
    row = {"argv": argv, "cache_entries": entries}
    for kind, pairs in times.items():
        if pairs:
            row[f"{kind}_s"] = round(min(w for w, _ in pairs), 3)
            row[f"{kind}_compile_s"] = round(min(c for _, c in pairs), 3)
    return row


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(HERE / "results" / "cold_start_cpu.json"))
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--seeds", type=int, nargs="+", default=list(COMPILE_SEEDS))
    ap.add_argument("--steps", type=int, default=10, help="steps of the compiled run")
    ap.add_argument("--tiny", action="store_true", help="tiny sizes (the test, the rehearsal)")
    args = ap.parse_args(argv)
    import jax

    result = {"machine": os.uname().nodename, "cpus": os.cpu_count(), "device":
              jax.devices()[0].device_kind, "jax": jax.__version__, "repeats": args.repeats,
              **imports(args.repeats), **command(args.repeats),
              "compile": compiles(args.seeds, args.steps, args.repeats, args.tiny),
              "cli_run": (cached_runs(CLI_RUN_TINY, args.repeats, without=False) if args.tiny
                          else cached_runs(CLI_RUN, args.repeats))}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result))
    return result


if __name__ == "__main__":
    main()
