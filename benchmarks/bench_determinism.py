"""CPU cost of the deterministic (order-fixed) sums of issue 26, against the scatter-add they replace.

Edge-backend products (``mix`` of an ``(N, d)`` array and of an ``(S, N, d)`` batch, d = 10,
S = 16, float32) summing the overflow edges with ``reduction="ordered"`` (the default: a segmented
scan in a fixed order, bit-reproducible on a GPU) and ``reduction="scatter"`` (``segment_sum``,
float atomics on a GPU), on the graphs of ``bench_mixing.py`` (ring plus random edges) with the
default slot layout and with no slots (``with_slots(0)``: every edge overflows, the worst case), and
whole runs of LT-ADMM-DP (edge form: ``scatter_sum`` every step) and of DGD under random link
failures (the dense matrices rebuilt every step), both reductions, on paper 000's setting.

Times are minima over repeated calls (``bench_mixing.time_mix``). Usage:
    python benchmarks/bench_determinism.py                 # writes benchmarks/results/determinism_cpu.json
    python benchmarks/bench_determinism.py --quick         # fewer cells
"""
from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from bench_mixing import D, SEEDS, build, random_edges, target_edges, time_mix  # noqa: E402


def products(n: int, degree: str, repeats: int) -> list:
    import jax.numpy as jnp
    import numpy as np

    edges = random_edges(n, target_edges(n, degree))
    rng = np.random.default_rng(1)
    batches = {"single": jnp.asarray(rng.standard_normal((n, D)), jnp.float32),
               "seeds": jnp.asarray(rng.standard_normal((SEEDS, n, D)), jnp.float32)}
    base = build(n, edges, "edges")
    rows = []
    for layout, net in (("default", base), ("no_slots", base.with_slots(0))):
        for reduction in ("scatter", "ordered"):
            alt = net.with_reduction(reduction)
            row = {"kind": "mix", "n": n, "degree": degree, "n_edges": len(edges),
                   "layout": layout, "slots": int(net.slot_edge.shape[1]),
                   "overflow": int(net.overflow.shape[0]), "reduction": reduction}
            row.update({f"{shape}_ms": 1e3 * time_mix(alt, X, repeats)
                        for shape, X in batches.items()})
            rows.append(row)
            print(json.dumps(row), flush=True)
    return rows


def runs(steps: int, seeds: int, repeats: int) -> list:
    import jax

    import jaxdp
    from jaxdp import algorithms, network, problems
    from jaxdp.network import RandomLinkFailures

    prob = problems.nonconvex_logistic(n_agents=50, m=200, d=10, seed=0)
    rows = []
    cases = [("lt_admm_dp", "edges", None), ("dgd", "dense", 0.2), ("lt_admm_dp", "dense", None)]
    for name, backend, p_fail in cases:
        for reduction in ("scatter", "ordered"):
            net = network.make_network("random_geometric", 50, radius=0.3, seed=1,
                                       backend=backend).with_reduction(reduction)
            if p_fail is not None:
                net = RandomLinkFailures(net, p_fail)
            alg = algorithms.get(name)
            params = alg.default_params()
            keys = jax.random.split(jax.random.key(0), seeds)
            fn = jax.jit(jax.vmap(lambda k: jaxdp.final_metrics(alg, prob, net, params, k,
                                                                steps=steps)["objective"]))
            fn(keys).block_until_ready()
            times = []
            for _ in range(repeats):
                start = time.perf_counter()
                fn(keys).block_until_ready()
                times.append(time.perf_counter() - start)
            row = {"kind": "run", "algorithm": name, "backend": backend, "p_fail": p_fail,
                   "reduction": reduction, "steps": steps, "seeds": seeds,
                   "overflow": int(network.make_network("random_geometric", 50, radius=0.3,
                                                        seed=1).overflow.shape[0]),
                   "ms": 1e3 * min(times)}
            rows.append(row)
            print(json.dumps(row), flush=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--out", default=str(HERE / "results" / "determinism_cpu.json"))
    args = parser.parse_args()
    cells = [(1000, "10"), (10_000, "10")] if args.quick else [
        (200, "10"), (1000, "10"), (5000, "10"), (10_000, "10"), (1000, "half")]
    rows = []
    for n, degree in cells:
        rows += products(n, degree, args.repeats)
    rows += runs(steps=200, seeds=64, repeats=max(3, args.repeats // 3))
    import jax

    out = {"machine": platform.processor() or platform.machine(), "jax": jax.__version__,
           "command": " ".join(sys.argv), "rows": rows}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=1))
    print("wrote", args.out)


if __name__ == "__main__":
    main()
