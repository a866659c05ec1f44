"""Dense vs edge-list mixing on CPU: the measurements behind ``backend="auto"``.

One ``network.mix`` of an ``(N, d)`` array and of an ``(S, N, d)`` batch (``jax.vmap`` over seeds,
as the engine runs seeds) with the dense backend (a GEMM with the ``(N, N)`` W) and the edge backend
(slot gathers plus ``segment_sum`` for the overflow, no ``(N, N)`` array), for N in
{16, 50, 200, 1000, 5000, 10000} and mean degrees {4, 10, N/2}, float32, d = 10, S = 16.

Graphs: a ring (for connectivity) plus uniformly random extra edges up to ``N * degree / 2`` edges,
built in numpy and assembled with jaxdp's own edge-form operators (Metropolis W, P = I - W):
networkx would take minutes and gigabytes for the dense-ish graphs. Edge-backend cells whose largest
intermediate (the overflow edges' ``(2E, S d)`` float32 array) would pass ``--max-edge-gib`` are
skipped and recorded as such: there the dense backend is the only one that fits.

Each (N, degree) cell runs in its own subprocess; a time is the minimum over at least
``--repeats`` calls after a warm-up (more for fast calls; the minimum is the least disturbed by
other processes on a shared machine).
The script then checks ``jaxdp.network.choose_backend`` on every cell: the chosen backend must be
at most 1.5x slower than the faster one, for both batch shapes.

Usage:
    python benchmarks/bench_mixing.py    # all cells, writes benchmarks/results/mixing_cpu.json
    python benchmarks/bench_mixing.py --n 1000 5000 --degrees 10
    python benchmarks/bench_mixing.py --layouts   # slots vs segment_sum; mixing_layouts_cpu.json
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
D, SEEDS, TOLERANCE = 10, 16, 1.5
SIZES = [16, 50, 200, 1000, 5000, 10_000]
DEGREES = ["4", "10", "half"]


def target_edges(n: int, degree: str) -> int:
    """Number of undirected edges for a mean degree (``"half"``: N / 2), at least the ring's."""
    mean = n / 2 if degree == "half" else float(degree)
    return int(min(max(round(n * mean / 2), n), n * (n - 1) // 2))


def random_edges(n: int, m: int, seed: int = 0):
    """``(m, 2)`` sorted undirected edges ``i < j``: the ring plus random distinct extra edges."""
    import numpy as np

    rng = np.random.default_rng(seed)
    ring = np.sort(np.stack([np.arange(n), (np.arange(n) + 1) % n], axis=1), axis=1)
    keys = np.unique(ring[:, 0] * n + ring[:, 1])
    while len(keys) < m:
        draw = rng.integers(0, n, size=(2 * (m - len(keys)) + 16, 2))
        draw = np.sort(draw[draw[:, 0] != draw[:, 1]], axis=1)
        new = np.setdiff1d(np.unique(draw[:, 0] * n + draw[:, 1]), keys)
        keys = np.concatenate([keys, rng.permutation(new)[: m - len(keys)]])
    keys = np.sort(keys)
    return np.stack([keys // n, keys % n], axis=1)


def build(n: int, edges, backend: str):
    """A Metropolis network (P = I - W) on ``edges`` with ``backend``, without networkx."""
    from jaxdp.network import _matrices
    from jaxdp.network._network import assemble

    L = _matrices.laplacian(n, edges)
    W = _matrices.mixing_matrix(n, edges, "metropolis")
    P = _matrices.laplacian_like("I-W", n, edges, W, L)
    return assemble(n, edges, {"w": W, "p": P, "l": L}, backend)


def time_mix(net, X, repeats: int, budget_s: float = 0.5) -> float:
    """Minimum seconds of one jitted ``mix`` (over the leading axis when ``X`` is batched).

    Calls it at least ``repeats`` times, and more (up to 50 x ``repeats``) while the calls so far
    took less than ``budget_s``: microsecond calls need many samples for a stable minimum.
    """
    import jax

    fn = jax.jit(lambda net, X: jax.vmap(net.mix)(X) if X.ndim == 3 else net.mix(X))
    fn(net, X).block_until_ready()
    times = []
    while len(times) < repeats or (sum(times) < budget_s and len(times) < 50 * repeats):
        start = time.perf_counter()
        fn(net, X).block_until_ready()
        times.append(time.perf_counter() - start)
    return min(times)


def cell(n: int, degree: str, repeats: int, max_edge_gib: float) -> dict:
    """Time both backends on one graph; the record of one (N, degree) cell."""
    import jax.numpy as jnp
    import numpy as np

    from jaxdp.network._layout import MAX_SLOTS

    edges = random_edges(n, target_edges(n, degree))
    E = len(edges)
    record = {"n": n, "degree": degree, "n_edges": E, "density": 2 * E / (n * (n - 1)),
              "mean_degree": 2 * E / n}
    rng = np.random.default_rng(1)
    batches = {"single": jnp.asarray(rng.standard_normal((n, D)), jnp.float32),
               "seeds": jnp.asarray(rng.standard_normal((SEEDS, n, D)), jnp.float32)}
    for backend in ("dense", "edges"):
        for shape in batches:
            record[f"{backend}_{shape}_ms"] = None
        widths = [D * (SEEDS if shape == "seeds" else 1) for shape in batches]
        least_overflow = max(2 * E - n * MAX_SLOTS, 0)  # known before building the layout
        if backend == "edges" and 4 * least_overflow * min(widths) / 2**30 > max_edge_gib:
            record.update(slots=MAX_SLOTS, overflow=least_overflow)
            continue
        net = build(n, edges, backend)
        if backend == "edges":
            record.update(slots=int(net.slot_edge.shape[1]), overflow=int(net.overflow.shape[0]))
        for (shape, X), width in zip(batches.items(), widths):
            gib = 4 * net.overflow.shape[0] * width / 2**30
            if backend == "dense" or gib <= max_edge_gib:
                record[f"{backend}_{shape}_ms"] = 1e3 * time_mix(net, X, repeats)
        del net
    return record


def layouts(n: int, degree: str, repeats: int) -> dict:
    """Edge-backend times with the default slot layout, with no slots (every edge through
    ``segment_sum``) and with as many slots as the largest degree (no overflow, up to 32)."""
    import jax.numpy as jnp
    import numpy as np

    from jaxdp.network import _layout

    edges = random_edges(n, target_edges(n, degree))
    rng = np.random.default_rng(1)
    batches = {"single": jnp.asarray(rng.standard_normal((n, D)), jnp.float32),
               "seeds": jnp.asarray(rng.standard_normal((SEEDS, n, D)), jnp.float32)}
    record = {"n": n, "degree": degree}
    default = _layout.SLOT_COST
    for name, cost in (("default", default), ("segment_sum", 1), ("all_slots", 10**9)):
        _layout.SLOT_COST = cost  # n_slots reads it when the layout is built
        net = build(n, edges, "edges")
        record[name] = {"slots": int(net.slot_edge.shape[1]),
                        "overflow": int(net.overflow.shape[0]),
                        **{f"{shape}_ms": 1e3 * time_mix(net, X, repeats)
                           for shape, X in batches.items()}}
    _layout.SLOT_COST = default
    return record


def check_rule(records: list) -> list:
    """Add the automatic choice and its slowdown over the faster backend to every record."""
    from jaxdp.network import choose_backend

    for r in records:
        r["auto"] = choose_backend(r["n"], r["n_edges"])
        for shape in ("single", "seeds"):
            dense, edges = r[f"dense_{shape}_ms"], r[f"edges_{shape}_ms"]
            times = {"dense": dense, "edges": edges if edges is not None else float("inf")}
            r[f"auto_{shape}_slowdown"] = times[r["auto"]] / min(times.values())
    return records


def table(records: list) -> str:
    head = ("| N | degree | E | density | slots / overflow | dense (N,d) ms | edges (N,d) ms "
            f"| dense (S,N,d) ms | edges (S,N,d) ms | auto | auto / best |")
    lines = [head, "|" + "---:|" * 4 + "---|" + "---:|" * 4 + "---|---:|"]
    fmt = lambda v: "skipped" if v is None else f"{v:.3g}"  # noqa: E731
    for r in records:
        worst = max(r["auto_single_slowdown"], r["auto_seeds_slowdown"])
        lines.append(
            f"| {r['n']} | {r['degree']} | {r['n_edges']} | {r['density']:.3g} | "
            f"{r['slots']} / {r['overflow']} | {fmt(r['dense_single_ms'])} | "
            f"{fmt(r['edges_single_ms'])} | {fmt(r['dense_seeds_ms'])} | "
            f"{fmt(r['edges_seeds_ms'])} | {r['auto']} | {worst:.2f} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, nargs="+", default=SIZES)
    parser.add_argument("--degrees", nargs="+", default=DEGREES)
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--max-edge-gib", type=float, default=1.0)
    parser.add_argument("--out", default=str(HERE / "results" / "mixing_cpu.json"))
    parser.add_argument("--layouts", action="store_true",
                        help="only compare edge layouts (slots vs segment_sum) at N = 1000, 10^4")
    parser.add_argument("--cell", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.cell:
        record = cell(int(args.cell[0]), args.cell[1], args.repeats, args.max_edge_gib)
        print(json.dumps(record))
        return
    if args.layouts:
        rows = [layouts(n, "10", args.repeats) for n in (1000, 10_000)]
        import jax

        out = Path(args.out).with_name(f"mixing_layouts_{jax.default_backend()}.json")
        out.write_text(json.dumps({"command": "python benchmarks/bench_mixing.py --layouts",
                                   "d": D, "seeds": SEEDS, "rows": rows}, indent=1))
        for r in rows:
            print(r)
        return
    records = []
    for n in args.n:
        for degree in args.degrees:
            cmd = [sys.executable, __file__, "--cell", str(n), degree, "--repeats",
                   str(args.repeats), "--max-edge-gib", str(args.max_edge_gib)]
            env = {**os.environ, "JAX_PLATFORMS": "cpu"}
            out = subprocess.run(cmd, capture_output=True, text=True, env=env, check=True)
            records.append(json.loads(out.stdout.strip().splitlines()[-1]))
            print(f"N={n} degree={degree}: {records[-1]}", flush=True)
    records = check_rule(records)
    import jax

    result = {
        "command": "python benchmarks/bench_mixing.py " + " ".join(sys.argv[1:]),
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(),
                    "python": platform.python_version(), "jax": jax.__version__,
                    "backend": "cpu"},
        "d": D, "seeds": SEEDS, "dtype": "float32", "tolerance": TOLERANCE,
        "records": records,
        "rule_holds": all(max(r["auto_single_slowdown"], r["auto_seeds_slowdown"]) <= TOLERANCE
                          for r in records),
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=1))
    print(table(records))
    print(f"rule never more than {TOLERANCE}x slower than the faster backend: "
          f"{result['rule_holds']}")


if __name__ == "__main__":
    main()
