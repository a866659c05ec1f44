"""How fast and how accurately ``calibrate_params`` reaches a target ε (issue 37).

Two runs, each calibrated at ε ∈ {0.01, 0.05, 0.5, 2, 8}, δ = 1e-5, 100 steps, 8 agents on a ring,
``problems.logistic(n_agents=8, m=50, d=10)`` in float32 (the default dtype):

* ``dp_dsgd``: ``algorithms.DPDSGD()`` at its defaults (Poisson batches of b = 8 of the declared
  shard capacity, a lattice Gaussian per step and agent), solving for σ (its noise field);
* ``dgd+laplace``: DGD through the channel ``clip:1.0,norm=l1+laplace:8.0`` (ℓ1 clip, lattice
  Laplace per directed message), solving for the Laplace scale b.

Per target: wall time of ``calibrate_params`` (``rtol`` 1e-6, its default), the number of reports
it computed, the ε the returned Params reach (their own report) and ``|ε_reached − ε|/ε``, or the
``ValueError`` it raised (e.g. "unreachable" where the guarantee jumps over the target); and the
*ideal* ε of the same Params (the float sampler's report keeps the real-valued mechanism's curves,
``ideal …``: the smallest of them), i.e. how much noise the sound calibration adds beyond what the
continuous accountant would ask for.

Usage:
    python benchmarks/calibration_accuracy.py --label before            # both runs, 5 targets
    python benchmarks/calibration_accuracy.py --label before --quick    # ε ∈ {0.5, 2}

Writes ``benchmarks/results/calibration_accuracy_<label>.json`` and prints a summary table.
"""
from __future__ import annotations

import argparse
import json
import time
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
DELTA = 1e-5
STEPS = 100
TARGETS = (0.01, 0.05, 0.5, 2.0, 8.0)
QUICK_TARGETS = (0.5, 2.0)
LAPLACE_CHANNEL = "clip:1.0,norm=l1+laplace:8.0"


def cases() -> dict:
    """name → (algorithm, problem, network, params)."""
    from jaxdp import algorithms, channels, network, problems

    problem = problems.logistic(n_agents=8, m=50, d=10, seed=0)
    ring = network.make_network("ring", 8)
    dsgd = algorithms.DPDSGD()
    laplace = channels.with_channel(algorithms.DGD(), channels.parse_channel(LAPLACE_CHANNEL))
    return {"dp_dsgd": (dsgd, problem, ring, dsgd.default_params()),
            "dgd+laplace": (laplace, problem, ring, laplace.default_params())}


def ideal_epsilon(alg, problem, net, params) -> float:
    """The smallest ``ideal …`` curve of the float sampler's report at ``params``: the continuous
    mechanism's ε (not a guarantee for the floats released)."""
    import dataclasses

    from jaxdp import channels

    float_alg = (alg.with_sampler("float") if isinstance(alg, channels.WithChannel)
                 else dataclasses.replace(alg, sampler="float"))
    report = float_alg.privacy(problem, net, params, STEPS, delta=DELTA)
    ideal = [float(c[:, -1].max()) for m, c in report.curves.items() if m.startswith("ideal ")]
    return min(ideal, default=float("inf"))


def calibrate(alg, problem, net, params, epsilon: float) -> dict:
    """One calibration: time, probes, the ε reached and its relative error (or the error)."""
    from jaxdp.privacy import calibrate_params

    probes = []
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            tuned = calibrate_params(alg, problem, net, params, STEPS, epsilon=epsilon,
                                     delta=DELTA, on_probe=lambda v, e: probes.append((v, e)))
        except ValueError as error:
            return {"target": epsilon, "seconds": time.perf_counter() - start,
                    "probes": len(probes), "error": str(error)}
        seconds = time.perf_counter() - start
        reached = alg.privacy(problem, net, tuned, STEPS, delta=DELTA).epsilon_max
        ideal = ideal_epsilon(alg, problem, net, tuned)
    field = alg.noise_field
    return {"target": epsilon, "seconds": seconds, "probes": len(probes),
            "field": field, "value": float(tuned[field]), "reached": reached,
            "rel_error": abs(reached - epsilon) / epsilon, "ideal_at_value": ideal}


def table(rows: list[dict]) -> str:
    """The rows as a Markdown table."""
    lines = [("| run | target ε | s | reports | noise value | ε reached | rel. error "
              "| ideal ε there |"), "|---|---:|---:|---:|---:|---:|---|---:|"]
    for r in rows:
        if "error" in r:
            tail = f"— | — | ValueError: {r['error'][:110]}… | — |"
        else:
            tail = (f"{r['value']:.6g} | {r['reached']:.6g} | {r['rel_error']:.2e} | "
                    f"{r['ideal_at_value']:.4g} |")
        lines.append(f"| {r['run']} | {r['target']:g} | {r['seconds']:.1f} | {r['probes']} | "
                     + tail)
    return "\n".join(lines)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--label", required=True, help="results file suffix (before, after, ...)")
    parser.add_argument("--quick", action="store_true", help="two targets only")
    args = parser.parse_args(argv)
    targets = QUICK_TARGETS if args.quick else TARGETS
    rows = []
    for name, (alg, problem, net, params) in cases().items():
        for epsilon in targets:
            rows.append({"run": name, **calibrate(alg, problem, net, params, epsilon)})
            print(table(rows[-1:]).splitlines()[-1], flush=True)
    out = HERE / "results" / f"calibration_accuracy_{args.label}.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps({"label": args.label, "delta": DELTA, "steps": STEPS,
                               "laplace_channel": LAPLACE_CHANNEL, "rows": rows}, indent=1))
    print(table(rows))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
