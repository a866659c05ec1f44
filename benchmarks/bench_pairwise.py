"""The pairwise linear-gossip accountant (issue 24): structured (Kalman) vs dense, wall time and
peak memory.

Cells: N = 100 agents on a ring and on a connected Erdős–Rényi graph (p = 0.05, Metropolis W),
every agent observing (``"neighbours"``), σ_ℓ = 0.5, σ_m = 1, Δ = 2, δ = 1e-5, T = 1000 with one
contribution (``first_step_fresh_noise``) and with one every step (``every_step``, band 1); and,
where the
dense accountant fits its limits, the same problem at a smaller T with both methods (their
ratio of headline ε is recorded: equal for one contribution, the structured one an upper bound
on the dense one for every step).

Each cell runs in its own subprocess under ``/usr/bin/time -v`` (peak resident memory of the
whole process, Python and JAX included); the wall and CPU times are of the accounting call only
(the first call: it includes JAX's compilation). Everything is float64 on CPU with
``OMP_NUM_THREADS=1``.

For every-step cells of the structured method, ``attained_headline_epsilon`` is the ε of the
signed ``1ᵀQ1`` (a second, untimed pass): the ideal mechanism's ε for the change ``δ^s`` the same
at every step, a *lower* end for its true ε (the reported bound is the upper end).

**Certificate** (``--certificate``): the structured accountant with and without the per-agent
certificate (``etas`` = :data:`CERTIFICATE_ETAS`, Proposition 2 of
``jaxdp.privacy._pairwise_scan``), every step, on rings and connected Erdős–Rényi graphs
(``p = 2 ln N / N`` below N = 100) of :data:`CERTIFICATE_CELLS`' sizes; written to
``results/pairwise_certificate_cpu.json``, the two methods of a size run one after the other.

Usage:
    python benchmarks/bench_pairwise.py            # every cell; writes results/pairwise_cpu.json
    python benchmarks/bench_pairwise.py --cell ring 1000 first_step_fresh_noise structured
    python benchmarks/bench_pairwise.py --only ring 1000 every_step structured   # rerun, merge
    python benchmarks/bench_pairwise.py --certificate   # writes results/pairwise_certificate_cpu.json
    python benchmarks/bench_pairwise.py --device --out DIR --budget 240
        # on a GPU machine: GPU_CELLS, each in a fresh process, to DIR/pairwise_<device>.json

**On a GPU** (``--device``): :data:`GPU_CELLS` — the issue's N = 100, T = 1000 cells, every step
with and without the certificate — each in its own process, in the order given, until
``--budget`` seconds are spent (a cell that would start later, or outruns what is left, is
recorded as not run). The accountant plans with half a GPU's memory (``planning_limit``);
``--max-bytes`` sets the floor ``_pairwise_scan.MAX_BYTES`` (1.5 GB, the CPU target) instead;
the row records it, the peak device memory (``memory_stats``) and the device.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import re
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
FRESH = "first_step_fresh_noise"
CELLS = [("ring", 1000, FRESH, "structured"), ("erdos_renyi", 1000, FRESH, "structured"),
         ("ring", 1000, "every_step", "structured"), ("erdos_renyi", 1000, "every_step", "structured"),
         ("ring", 100, "every_step", "dense"), ("ring", 100, "every_step", "structured"),
         ("ring", 300, FRESH, "dense"), ("ring", 300, FRESH, "structured")]

CERTIFICATE_ETAS = (0.5, 4.0, 32.0)
"""The ``η`` grid of the ``certificate`` method (three: the memory limit at N = 100 on a ring)."""
CERTIFICATE_CELLS = [(graph, steps, "every_step", method, n)
                     for n, steps in ((32, 100), (100, 100), (32, 1000))
                     for graph in ("ring", "erdos_renyi") for method in ("structured", "certificate")
                     if (n, graph) != (100, "erdos_renyi")]

GPU_CELLS = [("ring", 1000, "first_step_fresh_noise", "structured", 100),
             ("ring", 1000, "every_step", "structured", 100),
             ("ring", 1000, "every_step", "certificate", 100),
             ("erdos_renyi", 1000, "every_step", "structured", 100),
             ("erdos_renyi", 1000, "every_step", "certificate", 100),
             ("ring", 100, "every_step", "certificate", 100),
             ("erdos_renyi", 1000, "first_step_fresh_noise", "structured", 100),
             ("erdos_renyi", 100, "every_step", "certificate", 100)]
"""The GPU run's cells in priority order (the every-step certificate at the issue's size first)."""
REHEARSAL_CELLS = [("ring", 20, "every_step", "structured", 12),
                   ("erdos_renyi", 20, "every_step", "certificate", 12)]


def one_cell(graph: str, steps: int, contributions: str, method: str, n: int = 100,
             etas=CERTIFICATE_ETAS) -> dict:
    """Run one accounting in this process; return its timings and headline (``method``
    ``"certificate"``: structured with ``etas``)."""
    import numpy as np

    from jaxdp.network import make_network
    from jaxdp.privacy._pairwise import views
    from jaxdp.privacy._pairwise_scan import structured_mu
    from jaxdp.privacy.pairwise import LinearGossip, gaussian_epsilon, linear_gossip_epsilon
    kw = {"p": 0.05 if n == 100 else 2 * np.log(n) / n} if graph == "erdos_renyi" else {}
    form = LinearGossip.from_network(make_network(graph, n, seed=0, **kw), steps, 2.0,
                                     sigma_local=0.5, sigma_message=1.0,
                                     contributions=contributions)
    certificate = method == "certificate"
    wall, cpu = time.perf_counter(), time.process_time()
    result = linear_gossip_epsilon(form, 1e-5, "neighbours",
                                   method="structured" if certificate else method,
                                   etas=tuple(etas) if certificate else ())
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    attained = None
    if method != "dense" and contributions == "every_step":  # a second, untimed pass
        _, _, signed = structured_mu(form, views(form, "neighbours"))
        eps = gaussian_epsilon(np.sqrt(np.maximum(signed, 0.0)), 1e-5)
        np.fill_diagonal(eps, -np.inf)
        attained = eps.max(axis=1).tolist()
    return {"graph": graph, "n": n, "steps": steps, "contributions": contributions,
            "method": method, "etas": list(etas) if certificate else None,
            "wall_s": wall, "cpu_s": cpu,
            "max_degree": int((form.W != 0).sum(axis=1).max() - 1),
            "headline_epsilon": result.per_agent.tolist(),
            "attained_headline_epsilon": attained,
            "exact_fraction": float(result.exact[np.isfinite(result.mu)].mean()),
            **device_memory()}


def device_memory() -> dict:
    """The default device's kind and, where it reports one (GPUs), its peak memory in MiB."""
    import jax
    device = jax.devices()[0]
    peak = (device.memory_stats() or {}).get("peak_bytes_in_use")
    return {"device": device.device_kind,
            "peak_device_mib": None if peak is None else peak / 2 ** 20}


def measured(script, *args, timeout=None) -> dict:
    """Run ``python script *args`` in a fresh subprocess under ``/usr/bin/time -v`` (one thread);
    return the JSON row it prints last, with ``peak_rss_mb`` (the whole process's maximum
    resident set: Python, numpy and XLA buffers included)."""
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    timed = Path("/usr/bin/time").exists()  # GNU time; absent on some GPU images
    cmd = [*(["/usr/bin/time", "-v"] if timed else []), sys.executable, str(script),
           *map(str, args)]
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False,
                         timeout=timeout)
    if out.returncode:
        raise RuntimeError(f"{args}: exit {out.returncode}\n{out.stderr[-3000:]}")
    row = json.loads(out.stdout.strip().splitlines()[-1])
    peak = re.search(r"Maximum resident set size \(kbytes\): (\d+)", out.stderr) if timed else None
    row["peak_rss_mb"] = int(peak.group(1)) / 1024 if peak else None
    return row


def run_cell(cell, max_bytes=None, timeout=None, etas=None) -> dict:
    """``one_cell`` in a subprocess under ``/usr/bin/time -v``."""
    extra = (*(("--max-bytes", max_bytes) if max_bytes else ()),
             *(("--etas", *etas) if etas else ()))
    return measured(__file__, "--cell", *cell, *extra, timeout=timeout)


def device_run(out: Path, budget: float, max_bytes: float | None, rehearse: bool,
               cell_s: float, select=None, etas=None) -> None:
    """:data:`GPU_CELLS` (or the tiny :data:`REHEARSAL_CELLS`) in order, each in a fresh
    process of at most ``cell_s`` seconds, until ``budget`` seconds are spent; every row written
    the moment it is measured; ``select``: indices into the cells, ``etas``: the certificate's
    grid instead of :data:`CERTIFICATE_ETAS`."""
    import jax
    from gpu_driver import _kind  # this script's folder is on sys.path
    end = time.time() + budget
    cells = REHEARSAL_CELLS if rehearse else GPU_CELLS
    path = out / f"pairwise_{_kind(jax.devices()[0])}.json"
    rows = []
    for cell in [cells[i] for i in select] if select else cells:
        graph, steps, contributions, method, n = cell
        left = min(end - time.time(), cell_s)
        row = {"graph": graph, "n": n, "steps": steps, "contributions": contributions,
               "method": method, "max_bytes": max_bytes}
        try:
            row |= (run_cell(cell, max_bytes, left, etas) if left > 5
                    else {"not_run": "budget"})
        except subprocess.TimeoutExpired:
            row["not_run"] = f"timed out after {left:.0f} s"
        except RuntimeError as err:
            row["not_run"] = str(err)[-1500:]
        rows.append(row)
        path.write_text(json.dumps({"machine": {"platform": platform.platform(),
                                                "jax": jax.__version__}, "cells": rows},
                                   indent=1) + "\n")
        print({k: v for k, v in row.items() if "headline" not in k}, flush=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cell", nargs="+", help="graph steps contributions method [n]")
    parser.add_argument("--certificate", action="store_true",
                        help="the certificate cells (CERTIFICATE_CELLS)")
    parser.add_argument("--only", nargs=4, action="append",
                        help="rerun these cells and replace them in the existing JSON")
    parser.add_argument("--device", action="store_true", help="GPU_CELLS, to --out")
    parser.add_argument("--out", type=Path, default=HERE / "results")
    parser.add_argument("--budget", type=float, default=240.0, help="seconds (--device)")
    parser.add_argument("--max-bytes", type=float, help="the accountant's planning limit")
    parser.add_argument("--rehearse", action="store_true", help="--device with tiny cells")
    parser.add_argument("--cell-s", type=float, default=150.0, help="seconds per cell (--device)")
    parser.add_argument("--select", type=int, nargs="+", help="indices into GPU_CELLS (--device)")
    parser.add_argument("--etas", type=float, nargs="+", help="the certificate's grid")
    args = parser.parse_args()
    if args.device:
        args.out.mkdir(parents=True, exist_ok=True)
        device_run(args.out, args.budget, args.max_bytes, args.rehearse, args.cell_s,
                   args.select, args.etas)
        return
    if args.cell:
        import jax
        jax.config.update("jax_enable_x64", True)  # this script's own process
        if args.max_bytes:
            from jaxdp.privacy import _pairwise_scan
            _pairwise_scan.MAX_BYTES = args.max_bytes
        graph, steps, contributions, method, *n = args.cell
        print(json.dumps(one_cell(graph, int(steps), contributions, method, *map(int, n),
                                  **({"etas": args.etas} if args.etas else {}))))
        return
    import jax
    name = "pairwise_certificate_cpu.json" if args.certificate else "pairwise_cpu.json"
    path = HERE / "results" / name
    todo = ([tuple(c) for c in args.only] if args.only
            else CERTIFICATE_CELLS if args.certificate else CELLS)
    rows = json.loads(path.read_text())["cells"] if args.only else []

    def key(r):
        return (r["graph"], str(r["steps"]), r["contributions"], r["method"], str(r["n"]))
    for cell in todo:
        row = run_cell(cell)
        rows = [r for r in rows if key(r) != key(row)] + [row]
        path.write_text(json.dumps({"cells": rows}, indent=1) + "\n")  # partial results kept
        print({k: v for k, v in row.items() if "headline" not in k}, flush=True)
    payload = {"machine": {"cpus": os.cpu_count(), "platform": platform.platform(),
                           "python": platform.python_version(), "jax": jax.__version__,
                           "note": "shared machine (about 7 users on 2 cores): wall times are "
                                   "inflated by load; cpu_s is the process's own CPU time"},
               "cells": rows}
    path.write_text(json.dumps(payload, indent=1) + "\n")


if __name__ == "__main__":
    main()
