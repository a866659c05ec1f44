"""What recording metrics costs, and what the gradient's ``(S, N, m)`` intermediate costs (issue 26).

DPP² on paper 000's setting (``bench_suite.py``'s ``dpp2`` workload: N = 50, m = 200, d = 10,
nonconvex logistic), S seeds x K = 500 steps, float32, one CPU device:

* ``record_every`` = 500 (the final record only), 50 (10 records) and 5 (100 records: the
  default's ~100 records); the difference is the cost of ``problem.metrics`` (f(x̄), ∇f(x̄), the
  local gradients at every agent's model, distances): each record evaluates the loss and two
  gradients over all N·m samples of every seed;
* the pieces of one record and of one step's gradient, alone (jitted, vmapped over the S seeds):
  ``local_grads`` (the step's gradient: margins Zx, then Zᵀ(ℓ'(margins))), ``objective`` (f(x̄)),
  ``global_grad`` (∇f(x̄)) and the whole ``metrics``;
* the same local gradients computed in blocks of B seeds (``lax.map(..., batch_size=B)``): the
  ``(B, N, m)`` intermediate between the two products then fits in cache.

Runs alternate between settings and the minimum over ``--repeats`` is kept (the machine may be
shared). Usage:
    python benchmarks/bench_metrics.py                  # writes benchmarks/results/metrics_cpu.json
    python benchmarks/bench_metrics.py --seeds 64 --repeats 1 --piece-seeds   # a quick look
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from bench_suite import machine  # noqa: E402

STEPS = 500
RECORD_EVERY = (500, 50, 5)
BLOCKS = (16, 64, 256)


def _best(fn, repeats: int) -> float:
    fn()  # compile
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def whole_runs(seeds: int, repeats: int) -> list[dict]:
    import jaxdp
    from jaxdp import algorithms
    from jaxdp.experiments.dpp2 import paper_network, paper_problem

    prob, net = paper_problem(), paper_network()
    alg, params = algorithms.DPP2(), algorithms.DPP2Params()
    best = {every: float("inf") for every in RECORD_EVERY}
    for _ in range(repeats):
        for every in RECORD_EVERY:  # alternate, so a load change hits every setting alike
            trace = jaxdp.run(alg, prob, net, params, steps=STEPS, seeds=seeds,
                              record_every=every, progress=False, devices=jaxdp_devices())
            best[every] = min(best[every], trace.meta["run_seconds"])
    return [{"kind": "run", "seeds": seeds, "steps": STEPS, "record_every": every,
             "records": STEPS // every, "run_s": best[every],
             "metrics_share": 1.0 - best[RECORD_EVERY[0]] / best[every]} for every in RECORD_EVERY]


def jaxdp_devices():
    import jax

    return jax.devices()[:1]


def pieces(seeds: int, repeats: int) -> list[dict]:
    import jax

    from jaxdp.experiments.dpp2 import paper_problem

    prob = paper_problem()
    X = jax.random.normal(jax.random.key(0), (seeds, prob.n_agents, prob.dim), prob.features.dtype)
    x_bar = X.mean(axis=1)
    fns = {"local_grads": (jax.vmap(prob.local_grads), X),
           "objective": (jax.vmap(prob.objective), x_bar),
           "global_grad": (jax.vmap(prob.global_grad), x_bar),
           "metrics": (jax.vmap(prob.metrics), X)}
    for block in BLOCKS:
        fns[f"local_grads_blocks_{block}"] = (
            lambda X, b=block: jax.lax.map(prob.local_grads, X, batch_size=b), X)
    rows = []
    for name, (fn, arg) in fns.items():
        jitted = jax.jit(fn)
        ms = 1e3 * _best(lambda: jax.block_until_ready(jitted(arg)), repeats)
        rows.append({"kind": "piece", "name": name, "seeds": seeds, "ms": ms})
        print(json.dumps(rows[-1]), flush=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=256)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--piece-seeds", type=int, nargs="*", default=[4096],
                        help="further seed counts for the pieces alone (no whole runs)")
    parser.add_argument("--out", default=str(HERE / "results" / "metrics_cpu.json"))
    args = parser.parse_args()
    rows = pieces(args.seeds, 3 * args.repeats)
    for seeds in args.piece_seeds:
        rows += pieces(seeds, 3 * args.repeats)
    for row in whole_runs(args.seeds, args.repeats):
        print(json.dumps(row), flush=True)
        rows.append(row)
    Path(args.out).write_text(json.dumps({"machine": machine(), "rows": rows}, indent=1) + "\n")


if __name__ == "__main__":
    main()
