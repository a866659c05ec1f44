"""``jaxdp reproduce baselines``: the non-private baselines against their papers' convergence claims.

Strongly convex least squares (N=20 agents on a ring, d=5, m=50, ridge 0.1), float64:
* EXTRA (Shi et al. 2015, Thm 3.7), NIDS (Li et al. 2019, Thm 1), DIGing (Nedić et al. 2017, Thm 3.14)
  and relaxed ADMM (Bastianello et al. 2021) converge linearly to the exact minimizer;
* DGD with a constant step converges only to a neighbourhood whose radius is O(α) (Yuan, Ling & Yin,
  "On the convergence of decentralized gradient descent", SIAM J. Optim. 2016, Thm 4): halving α
  the squared distance scales like α² as α → 0 (measured as a log-log slope).
"""
from __future__ import annotations

from pathlib import Path

import jax
import numpy as np

from jaxdp import algorithms, network, problems
from jaxdp.engine import run
from jaxdp._plotting import figure, finish, save, setting_title
from jaxdp.experiments._report import Report

EXACT = {"extra": 0.1, "nids": 0.1, "diging": 0.05, "admm": None}
DGD_ALPHAS = (0.02, 0.01, 0.005, 0.0025)


def baselines_convergence(out_dir="out/baselines", *, seeds: int = 1, steps: int = 3000,
                          progress: bool = False) -> Report:
    """Run every baseline on a strongly convex problem; write a figure, data and a report.

    Runs in float64 (``jax.enable_x64`` as a context: the global configuration is left as it was).
    """
    with jax.enable_x64(True):
        return _baselines_convergence(Path(out_dir), seeds, steps, progress)


def _baselines_convergence(out: Path, seeds: int, steps: int, progress: bool) -> Report:
    prob = problems.least_squares(n_agents=20, m=50, d=5, ridge=0.1, seed=0)
    net = network.make_network("ring", 20)
    report = Report("baselines", "Non-private baselines on strongly convex least squares")
    fig, (ax, ax_dgd) = figure(2)
    finals = {}
    for name, alpha in EXACT.items():
        alg = algorithms.get(name)
        params = alg.default_params() if alpha is None else alg.default_params().replace(alpha=alpha)
        tr = run(alg, prob, net, params, steps=steps, seeds=seeds, record_every=10,
                 progress=progress)
        tr.plot("dist_to_opt", ax=ax, label=name)
        report.files.append(str(tr.save(out / f"trace_{name}.npz")))
        finals[name] = float(tr.final("dist_to_opt").mean())
        report.claim(f"{name}-exact", f"{name} converges linearly to the exact minimizer",
                     paper="linear rate, exact limit", ours=f"‖x̄−x*‖² = {finals[name]:.2e} "
                     f"after {steps} steps", reproduced=finals[name] < 1e-20)
    dgd = {}
    for i, alpha in enumerate(DGD_ALPHAS):  # DGD's fixed point takes longer to reach than x*
        tr = run(algorithms.DGD(), prob, net, algorithms.DGDParams(alpha=alpha), steps=20 * steps,
                 seeds=seeds, record_every=100, progress=progress)
        tr.plot("dist_to_opt", ax=ax_dgd, label=f"dgd α={alpha}",
                color=f"C{len(EXACT) + i}")  # one figure legend: no colour shared by two lines
        dgd[alpha] = float(tr.final("dist_to_opt").mean())
    a, d = np.log(DGD_ALPHAS), np.log([dgd[x] for x in DGD_ALPHAS])
    slopes = np.diff(d) / np.diff(a)
    report.claim("dgd-neighbourhood", "DGD with constant α stalls at an O(α) neighbourhood: the "
                 "squared distance ‖x̄−x*‖² scales like α² as α → 0",
                 paper="‖x−x*‖ = O(α) (Yuan et al. 2016, Thm 4)",
                 ours="‖x̄−x*‖² = " + ", ".join(f"{dgd[x]:.2e} (α={x})" for x in DGD_ALPHAS)
                 + "; log-log slopes " + ", ".join(f"{v:.2f}" for v in slopes),
                 reproduced=abs(slopes[-1] - 2) < 0.25 and min(dgd.values()) > 1e-14)
    ax.set_title("exact methods", fontsize=9)
    ax_dgd.set_title("DGD, constant step: an O(α) neighbourhood", fontsize=9)
    finish(fig, [ax, ax_dgd], setting_title("least_squares (ridge 0.1, float64)", "ring", 20,
                                            seeds, "non-private"))
    report.files.append(save(fig, out / "baselines.png"))
    np.savez(out / "final_dist_to_opt.npz", **{k: v for k, v in finals.items()},
             **{f"dgd_alpha_{a}": v for a, v in dgd.items()})
    report.files.append(str(out / "final_dist_to_opt.npz"))
    report.write(out)
    return report
