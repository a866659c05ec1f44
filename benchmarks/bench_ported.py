"""Cost of a ported private algorithm against its non-private core (issue 16).

DiaDSP is DIGing with Laplace noise on its two messages, PPDC is ``yi_pd`` with Laplace noise on
one, DP-NIDS and DP-EXTRA are NIDS and EXTRA with broadcast Gaussian noise on one
(``channels.PrivateVariant``). Each pair runs on ``bench_channels.py``'s workload (paper 000's
problem, N = 50, d = 10, m = 200, random geometric r = 0.3, float32, 500 steps, 256 seeds) with
the private algorithm's default Params and the core's matching step size; a row's
``ratio_to_core`` is its run time over its core's.

Usage:
    python benchmarks/bench_ported.py          # writes benchmarks/results/ported_cpu.json
"""
from __future__ import annotations

import argparse
import json
import platform
from pathlib import Path

from bench_channels import D, HERE, M, N, time_rows

PAIRS = {"diadsp": "diging", "ppdc": "yi_pd", "dp_nids": "nids", "dp_extra": "extra"}


def variants() -> dict:
    """``{row: (algorithm, params)}``: every ported algorithm and its core."""
    from jaxdp import algorithms

    rows = {}
    for name in PAIRS:
        alg = algorithms.get(name)
        params = alg.default_params()
        rows[name] = (alg, params)
        rows[PAIRS[name]] = (alg.inner, alg.split(params)[0])
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=256)
    ap.add_argument("--steps", type=int, default=500)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", default=str(HERE / "results" / "ported_cpu.json"))
    args = ap.parse_args()

    import jax

    import jaxdp
    from jaxdp import network, problems

    jaxdp.use_cpu_cores()
    net = network.make_network("random_geometric", N, radius=0.3, seed=1)
    prob = problems.nonconvex_logistic(n_agents=N, m=M, d=D, seed=0)
    rows = time_rows(variants(), prob, net, args.steps, args.seeds, args.repeats)
    seconds = {r["variant"]: r["run_seconds"] for r in rows}
    for r in rows:
        core = PAIRS.get(r["variant"])
        r["ratio_to_core"] = seconds[r["variant"]] / seconds[core] if core else 1.0
    out = {"workload": {"n_agents": N, "d": D, "m": M, "steps": args.steps, "seeds": args.seeds,
                        "dtype": "float32", "graph": "random_geometric r=0.3 seed=1"},
           "machine": {"platform": platform.platform(), "processor": platform.processor(),
                       "jax": jax.__version__, "devices": len(jax.devices())},
           "rows": rows}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=1))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
