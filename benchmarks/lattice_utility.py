"""Utility under the lattice sampler against the float sampler, every private algorithm (issue 22).

The lattice sampler changes the noise law (a discrete Gaussian or Laplace on the grid ``γℤ``, the
release rounded to that grid and clamped far out in the tails) but should not change what a run
reaches. For every registered private algorithm and three channels, this runs the same setting
with ``sampler="lattice"`` (the default) and ``sampler="float"`` (independent draws) over S seeds
and compares the final ``objective`` and ``consensus_error``: the difference of the means over its
standard error (Welch's z). |z| < 3 everywhere is "within Monte-Carlo error"; a larger |z| names
an algorithm whose reproduction would move with the noise law.

Setting: paper 000's nonconvex logistic problem at N = 10 agents on a ring, d = 5, m = 50, float64,
default Params, 50 steps, 256 seeds (``--seeds``, ``--steps``); channels: DGD through clip(1) +
Gaussian(8) per message and broadcast, and ℓ1 clip(1) + Laplace(8); an algorithm that needs a
central trainer (DP-ADMM) runs on the complete graph.

Usage:
    python benchmarks/lattice_utility.py      # writes benchmarks/results/lattice_utility_cpu.json
    python benchmarks/lattice_utility.py --only ldp_admm --seeds 2048 --first-seed 100000 \
        --out benchmarks/results/lattice_utility_ldp_fresh_cpu.json   # fresh, independent seeds
"""
from __future__ import annotations

import argparse
import json
import warnings
from pathlib import Path

import numpy as np

from lattice_headlines import _float_variant

HERE = Path(__file__).resolve().parent
METRICS = ("objective", "consensus_error")


def welch_z(a: np.ndarray, b: np.ndarray) -> float:
    """(mean a − mean b) over its standard error; 0 when both samples are constant and equal."""
    se = np.sqrt(a.var(ddof=1) / a.size + b.var(ddof=1) / b.size)
    diff = a.mean() - b.mean()
    return float(diff / se) if se > 0 else (0.0 if diff == 0 else float("inf"))


def cases():
    from jaxdp import algorithms, channels

    out = {name: cls() for name, cls in sorted(algorithms.REGISTRY.items())}
    for spec in ("clip:1.0+gaussian:8.0", "clip:1.0+gaussian:8.0+broadcast",
                 "clip:1.0,norm=l1+laplace:8.0"):
        out[f"dgd+{spec}"] = channels.with_channel(algorithms.DGD(), channels.parse_channel(spec))
    return {name: alg for name, alg in out.items() if alg.sampler_of() is not None}


def seed_lists(seeds: int, first: int | None) -> dict:
    """The seeds of each sampler: ``0..S−1`` for both (``first`` None: shared initial points and
    aggregator draws, different noise draws), or disjoint fresh ones, ``first..first+S−1`` for
    the lattice and the next ``S`` for the float sampler (fully independent runs)."""
    if first is None:
        return {"lattice": seeds, "float": seeds}
    return {"lattice": list(range(first, first + seeds)),
            "float": list(range(first + seeds, first + 2 * seeds))}


def compare(alg, prob, net, steps: int, seeds: int, first: int | None = None) -> dict:
    """Final metrics of both samplers over ``seeds`` seeds each (:func:`seed_lists`), and
    Welch's z per metric."""
    import jaxdp

    finals, runs = {}, seed_lists(seeds, first)
    for sampler, variant in (("lattice", alg), ("float", _float_variant(alg))):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            trace = jaxdp.run(variant, prob, net, variant.default_params(), steps=steps,
                              seeds=runs[sampler], record_every=steps, progress=False)
        finals[sampler] = {m: np.asarray(trace.final(m), np.float64).reshape(-1)
                           for m in METRICS if m in trace.metrics}
    row = {}
    for m in finals["lattice"]:
        a, b = finals["lattice"][m], finals["float"][m]
        row[m] = {"lattice_mean": float(a.mean()), "float_mean": float(b.mean()),
                  "lattice_se": float(a.std(ddof=1) / np.sqrt(a.size)),
                  "float_se": float(b.std(ddof=1) / np.sqrt(b.size)), "z": welch_z(a, b)}
    return row


def first_accepted(alg, prob, graphs: dict, steps: int, seeds: int,
                   first: int | None = None) -> dict:
    """:func:`compare` on the first graph ``alg`` accepts (a central trainer, DP-ADMM, needs the
    complete graph); the last refusal when it accepts none (e.g. a loss it is not derived for)."""
    error = ""
    for label, graph in graphs.items():
        try:
            return {"network": label, **compare(alg, prob, graph, steps, seeds, first)}
        except ValueError as err:
            error = f"{type(err).__name__}: {str(err)[:200]}"
    return {"error": error}


def main() -> None:
    import jax

    from jaxdp import network, problems
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=256)
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--first-seed", type=int, default=None,
                    help="fresh, disjoint seeds per sampler from here (default: 0..S−1 for both)")
    ap.add_argument("--out", default=str(HERE / "results" / "lattice_utility_cpu.json"))
    args = ap.parse_args()
    jax.config.update("jax_enable_x64", True)  # a script, not a library import
    prob = problems.nonconvex_logistic(n_agents=10, m=50, d=5, seed=0)
    graphs = {"ring": network.make_network("ring", 10),
              "complete": network.make_network("complete", 10)}
    rows = []
    for name, alg in cases().items():
        if args.only and name not in args.only:
            continue
        row = {"algorithm": name, **first_accepted(alg, prob, graphs, args.steps, args.seeds,
                                                   args.first_seed)}
        print(json.dumps(row), flush=True)
        rows.append(row)
    meta = {"setting": __doc__.split("\n\n")[2], "seeds": args.seeds,
            "first_seed": args.first_seed, "steps": args.steps}
    Path(args.out).write_text(json.dumps(meta | {"rows": rows}, indent=1))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
