"""Headline ε of every private algorithm before and after the lattice sampler (issue 22).

"before" is what the float sampler's report now keeps as its smallest ``ideal …`` curve — the
real-valued mechanism, which is what every report put in ``epsilon`` before the lattice sampler;
"after" is the default (lattice) report's guarantee: the discrete mechanism, its rounding slack in
the sensitivities, only the accountants valid for it, and the sampler's distance to its ideal law
in δ. Setting: paper 000's nonconvex logistic problem at N = 10 agents on a ring, d = 5, m = 50,
float64, every algorithm at its default Params, δ = 1e-5, K = 1, 5 and 20 steps; channels: DGD
through clip(1) + Gaussian(8) per message and broadcast, and ℓ1 clip(1) + Laplace(8).

Usage:
    python benchmarks/lattice_headlines.py     # writes benchmarks/results/lattice_headlines.json
"""
from __future__ import annotations

import dataclasses
import json
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
STEPS = (1, 5, 20)


def _float_variant(alg):
    from jaxdp import channels
    if isinstance(alg, channels.WithChannel):
        return alg.with_sampler("float")
    return dataclasses.replace(alg, sampler="float")


def _ideal(report) -> float:
    ideal = [float(np.max(c[:, -1])) for m, c in report.curves.items()
             if m.startswith("ideal ") and "paper" not in m]
    return min(ideal) if ideal else float("inf")


def _finite(x: float):
    return x if np.isfinite(x) else "inf"


def rows():
    import jax

    from jaxdp import algorithms, channels, network, problems
    jax.config.update("jax_enable_x64", True)  # a script, not a library import
    prob = problems.nonconvex_logistic(n_agents=10, m=50, d=5, seed=0)
    net = network.make_network("ring", 10)
    cases = {name: cls() for name, cls in sorted(algorithms.REGISTRY.items())}
    for spec in ("clip:1.0+gaussian:8.0", "clip:1.0+gaussian:8.0+broadcast",
                 "clip:1.0,norm=l1+laplace:8.0"):
        cases[f"dgd+{spec}"] = channels.with_channel(algorithms.DGD(),
                                                     channels.parse_channel(spec))
    out = []
    for name, alg in cases.items():
        if alg.sampler_of() is None:
            continue
        params = alg.default_params()
        row = {"algorithm": name}
        for k in STEPS:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                lattice = alg.privacy(prob, net, params, k, delta=1e-5)
                ideal = _float_variant(alg).privacy(prob, net, params, k, delta=1e-5)
            if lattice is None:  # a non-private algorithm with a sampler field
                break
            row[f"K={k}"] = {"before_ideal": _finite(_ideal(ideal)),
                             "after_lattice": _finite(lattice.epsilon_max),
                             "after_method": lattice.headline or lattice.reason[:60]}
        if len(row) > 1:
            print(json.dumps(row), flush=True)
            out.append(row)
    return out


def main():
    path = HERE / "results" / "lattice_headlines.json"
    path.write_text(json.dumps({"setting": __doc__.split("\n\n")[1], "rows": rows()}, indent=1))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
