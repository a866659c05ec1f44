"""The CNN notebook's test accuracy at a target ε, and how much noise the sound accountant asks for
against the continuous ideal one (issue 37, "done when": the accuracy at ε = 1, 2, 4, 8 before and
after a change of accountant, at the same σ policy).

Setting — exactly ``notebooks/train_cnn.ipynb``: 16 agents,
``problems.digits_cnn(16, split="dirichlet:1.0", seed=0)`` (JAX's default float), a ring,
``algorithms.DPDSGD(batch_size=4)`` (Poisson minibatches, lattice noise: the defaults),
``DPSGDParams(alpha=0.5, clip=1.0)``, δ = 1e-5. For every target ε:

* σ from ``privacy.calibrate_params`` (timed) — the σ policy: the smallest σ whose sound report
  after ``steps`` steps is ε for the worst agent;
* the report's headline ε at that σ (checked ≤ the target) and its method;
* the ε the *continuous* ideal accountant gives for the same noise: dp-accounting's PLDAccountant
  on ``PoissonSampledDpEvent(q, GaussianDpEvent(σ/Δ))`` self-composed ``steps`` times, with q the
  sampler's own rate (``poisson_rate``: b/n, n the shard capacity ``problem.n_samples`` as no
  ``records`` is declared) and Δ the release's own add/remove-one sensitivity before any lattice
  slack (``release_sensitivity``: C/b, since (G) divides the clipped sum by b); the continuous RDP
  accountant's ε too, the headline's method without the lattice;
* the final test accuracy of the agents' average model, ``jaxdp.sweep`` over ``seeds`` seeds
  (common random numbers across ε), mean ± std and per seed;

plus the non-private reference σ = 0 (same minibatches and clipping) in the same sweep.

Usage:
    python benchmarks/cnn_epsilon_accuracy.py --epsilons 1,2,4,8 --seeds 4 --steps 200 \\
        --label before       # writes benchmarks/results/cnn_epsilon_accuracy_before.json
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
N_AGENTS, BATCH, ALPHA, CLIP, DELTA = 16, 4, 0.5, 1.0, 1e-5


def setting():
    """``(problem, network, algorithm, params)`` of the notebook (σ left at its default)."""
    from jaxdp import algorithms, network, problems
    problem = problems.digits_cnn(N_AGENTS, split="dirichlet:1.0", seed=0)
    net = network.build_network(network.ring(N_AGENTS))
    return problem, net, algorithms.DPDSGD(batch_size=BATCH), \
        algorithms.DPSGDParams(alpha=ALPHA, clip=CLIP)


def calibrated(alg, problem, net, params, steps: int, epsilon: float) -> dict:
    """σ of ``calibrate_params`` at ``epsilon`` (timed) and the sound report at that σ."""
    from jaxdp import privacy
    start = time.perf_counter()
    try:
        tuned = privacy.calibrate_params(alg, problem, net, params, steps, epsilon=epsilon,
                                         delta=DELTA)
    except ValueError as err:  # unreachable ε: recorded, not swept
        return {"target": epsilon, "error": str(err)}
    seconds = time.perf_counter() - start
    report = alg.privacy(problem, net, tuned, steps=steps, delta=DELTA)
    headline = float(report.epsilon_max)
    return {"target": epsilon, "sigma": float(tuned.sigma), "calibrate_s": seconds,
            "headline_epsilon": headline, "headline_method": report.headline,
            "headline_le_target": bool(headline <= epsilon)}


def mechanism(alg, problem, params) -> tuple[float, float]:
    """``(q, Δ)`` of the run's releases, from the library's own derivations: the sampler's rate
    (``poisson_rate``) and the release's add/remove-one ℓ2 sensitivity before any lattice slack
    (``release_sensitivity``, C/b)."""
    from jaxdp.algorithms._sampling import poisson_rate
    from jaxdp.algorithms.ltadmm.privacy import release_sensitivity
    n = problem.n_agents
    rate = poisson_rate(alg.batch_size, alg.records, problem.n_samples, n)
    sens = release_sensitivity(alg, params, n)
    if np.ptp(rate) or np.ptp(sens):  # one event for all agents: the notebook's case
        raise ValueError(f"agents differ in q {rate} or Δ {sens.ravel()}: one event per agent")
    return float(rate[0]), float(sens.ravel()[0])


def gaussian_event(q: float, multiplier: float, steps: int):
    """``steps`` Poisson-subsampled (rate q) continuous Gaussians of noise multiplier σ/Δ."""
    import dp_accounting as dpa
    return dpa.SelfComposedDpEvent(
        dpa.PoissonSampledDpEvent(q, dpa.GaussianDpEvent(multiplier)), steps)


def continuous_ideal(alg, problem, params, sigma: float, steps: int) -> dict:
    """ε of the continuous Poisson-subsampled Gaussian with the run's q, Δ and ``sigma``:
    dp-accounting's PLD (the tight ideal) and RDP accountants."""
    import dp_accounting as dpa
    from absl import logging
    q, delta_2 = mechanism(alg, problem, params)
    event = gaussian_event(q, sigma / delta_2, steps)
    logging.set_verbosity(logging.ERROR)  # RDP orders that fail to converge are dropped, quietly
    pld, rdp = dpa.pld.PLDAccountant(), dpa.rdp.RdpAccountant()
    pld.compose(event)
    rdp.compose(event)
    return {"q": q, "sensitivity": delta_2, "noise_multiplier": sigma / delta_2,
            "ideal_pld_epsilon": float(pld.get_epsilon(DELTA)),
            "ideal_rdp_epsilon": float(rdp.get_epsilon(DELTA))}


def ideal_sigma(alg, problem, params, steps: int, epsilon: float) -> dict:
    """The σ the continuous PLD accountant needs for ``epsilon`` (dp-accounting's
    ``calibrate_dp_mechanism``, multiplier to 1e-4), timed: the noise a tight sound accountant
    could at best ask for."""
    import dp_accounting as dpa
    q, delta_2 = mechanism(alg, problem, params)
    start = time.perf_counter()
    multiplier = dpa.calibrate_dp_mechanism(
        dpa.pld.PLDAccountant, lambda z: gaussian_event(q, z, steps), epsilon, DELTA, tol=1e-4)
    return {"ideal_sigma": float(multiplier) * delta_2,
            "ideal_calibrate_s": time.perf_counter() - start}


def accuracies(alg, problem, net, params, sigmas: list[float], steps: int, seeds: int):
    """``(seeds, len(sigmas))`` final test accuracies of one ``jaxdp.sweep`` over ``sigmas``,
    and its wall time."""
    import jaxdp
    start = time.perf_counter()
    trace = jaxdp.sweep(alg, problem, net, jaxdp.grid(params, sigma=sigmas), steps=steps,
                        seeds=seeds, record_every=max(1, steps // 20), progress=False)
    return np.asarray(trace.final("test_accuracy"), np.float64), time.perf_counter() - start


def accuracy_summary(final: np.ndarray) -> dict:
    return {"accuracy_mean": float(final.mean()), "accuracy_std": float(final.std(ddof=1))
            if final.size > 1 else 0.0, "accuracy_seeds": [float(a) for a in final]}


def machine() -> dict:
    from importlib.metadata import version

    import jax
    commit = subprocess.run(["git", "-C", str(HERE), "rev-parse", "HEAD"], check=False,
                            capture_output=True, text=True).stdout.strip()
    return {"cpus": os.cpu_count(), "platform": platform.platform(),
            "processor": platform.processor(), "devices": [str(d) for d in jax.devices()],
            "jax": jax.__version__, "dp_accounting": version("dp-accounting"),
            "commit": commit, "load_avg_at_start": os.getloadavg()}


def run(epsilons: list[float], seeds: int, steps: int, with_ideal: bool = False) -> dict:
    """Every row (calibration, report, ideal ε; ``with_ideal``: the ideal σ too), then one sweep
    over every row's σ (and ideal σ), and σ = 0 last."""
    info = machine()
    problem, net, alg, params = setting()
    rows = []
    for eps in epsilons:
        row = calibrated(alg, problem, net, params, steps, eps)
        if "sigma" in row:
            row.update(continuous_ideal(alg, problem, params, row["sigma"], steps))
            if with_ideal:
                row.update(ideal_sigma(alg, problem, params, steps, eps))
        rows.append(row)
        print(json.dumps(row), flush=True)
    swept = [r for r in rows if "sigma" in r]
    ideal = [r for r in swept if "ideal_sigma" in r]
    sigmas = [r["sigma"] for r in swept] + [r["ideal_sigma"] for r in ideal] + [0.0]
    final, seconds = accuracies(alg, problem, net, params, sigmas, steps, seeds)
    for g, row in enumerate(swept):
        row.update(accuracy_summary(final[:, g]))
    for g, row in enumerate(ideal, start=len(swept)):
        row.update({f"ideal_{k}": v for k, v in accuracy_summary(final[:, g]).items()})
    return {"setting": __doc__.split("\n\n")[1], "machine": info,
            "args": {"epsilons": epsilons, "seeds": seeds, "steps": steps, "delta": DELTA,
                     "ideal_sigma": with_ideal},
            "rows": rows, "non_private": {"sigma": 0.0, **accuracy_summary(final[:, -1])},
            "sweep_s": seconds, "load_avg_at_end": os.getloadavg()}


def table(result: dict) -> str:
    """The markdown table of ``result`` (as in benchmarks/README.md)."""
    header = ("| target ε | σ (calibrated) | calibrate s | headline ε (method) | continuous PLD ε "
              "| headline / PLD | continuous RDP ε | test accuracy (mean ± std) |")
    lines = [header, "|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in result["rows"]:
        if "sigma" not in r:
            lines.append(f"| {r['target']:g} | — | — | {r['error'][:60]} | | | | |")
            continue
        ok = "" if r["headline_le_target"] else " **> target**"
        lines.append(
            f"| {r['target']:g} | {r['sigma']:.4f} | {r['calibrate_s']:.1f} | "
            f"{r['headline_epsilon']:.4f} ({r['headline_method']}){ok} | "
            f"{r['ideal_pld_epsilon']:.3f} | {r['headline_epsilon'] / r['ideal_pld_epsilon']:.2f}× "
            f"| {r['ideal_rdp_epsilon']:.3f} | {r['accuracy_mean']:.3f} ± {r['accuracy_std']:.3f} |")
    ref = result["non_private"]
    lines.append(f"| ∞ (σ = 0) | 0 | | | | | | {ref['accuracy_mean']:.3f} ± "
                 f"{ref['accuracy_std']:.3f} |")
    ideal = [r for r in result["rows"] if "ideal_sigma" in r]
    if ideal:
        lines += ["", "| target ε | σ continuous PLD needs | sound σ / that | its test accuracy |",
                  "|---:|---:|---:|---|"]
        lines += [f"| {r['target']:g} | {r['ideal_sigma']:.4f} | "
                  f"{r['sigma'] / r['ideal_sigma']:.2f}× | {r['ideal_accuracy_mean']:.3f} ± "
                  f"{r['ideal_accuracy_std']:.3f} |" for r in ideal]
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--epsilons", default="1,2,4,8",
                        help="comma-separated target ε values (default 1,2,4,8)")
    parser.add_argument("--seeds", type=int, default=4, help="seeds per ε (default 4)")
    parser.add_argument("--steps", type=int, default=200, help="steps per run (default 200)")
    parser.add_argument("--label", required=True,
                        help="names the output: results/cnn_epsilon_accuracy_<label>.json")
    parser.add_argument("--cpu-cores", action="store_true",
                        help="jaxdp.use_cpu_cores() (one JAX device per core, seeds sharded); "
                             "slower on a loaded 2-core machine")
    parser.add_argument("--ideal-sigma", action="store_true",
                        help="also the σ the continuous PLD accountant needs for each ε, and the "
                             "accuracy at it (the best a tight accountant could reach)")
    args = parser.parse_args(argv)
    epsilons = [float(e) for e in args.epsilons.split(",")]
    if args.seeds < 1 or args.steps < 1 or not all(e > 0 for e in epsilons):
        parser.error(f"need seeds ≥ 1, steps ≥ 1, every ε > 0; got seeds={args.seeds}, "
                     f"steps={args.steps}, epsilons={epsilons}")
    if args.cpu_cores:
        import jaxdp
        jaxdp.use_cpu_cores()
    result = run(epsilons, args.seeds, args.steps, args.ideal_sigma)
    result["args"]["label"] = args.label
    out = HERE / "results" / f"cnn_epsilon_accuracy_{args.label}.json"
    out.write_text(json.dumps(result, indent=1))
    print(table(result))
    print(f"sweep {result['sweep_s']:.1f} s; wrote {out.relative_to(HERE.parent)}")


if __name__ == "__main__":
    main()
