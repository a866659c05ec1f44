"""The paper reproductions' headline numbers under the lattice sampler against the float sampler
(issue 22: "reproductions keep their numbers within Monte-Carlo error").

Every reproduction whose runs draw private noise at the default sampler (the lattice) is rerun
here twice through its own functions (``jaxdp.experiments``), once with ``sampler="lattice"`` and
once with ``sampler="float"`` (the real-valued law the papers state), same settings, **independent
runs** (disjoint seeds: the float runs take the next ``S`` seeds, so data splits, graphs and
noise keys are fresh). For each quantity its report's claims print, the per-run values give a
mean and standard error per sampler and Welch's z of the difference; |z| < 3 is "within
Monte-Carlo error". Reproductions whose private runs already use the float sampler (DPP² in
``dpp2-fig1/-fig2/-fig3``) or draw no private noise are listed with that reason.

Settings are the reproductions' own, reduced where a full run does not fit a few minutes on a
loaded 2-core machine (each case's ``setting`` says what was reduced):

- ``ldp-fig2`` / ``ldp-figC``: paper 001 at N = 10 (Fig. 2's N = 100 panel omitted), K = 100.
- ``ltadmm-fig1``: paper 004 at the stated noise, the time budget of ``--ltadmm-rounds`` rounds.
- ``dpadmm-accuracy`` / ``dpadmm-loss``: paper 002, its (ε, δ) grid, T = 100, N = 100.
- ``recal-eps``: paper 003 on the synthetic set, PLF ``--recal-plf``.
- ``dpp2-fig3``: DiaDSP and PPDC at r̄ ∈ {0.1, 0.5, 0.9} (DPP² itself always ran the float
  sampler). Their "lattice" column is what the reproduction ran until this comparison (their
  default); it now runs them with the float sampler, as DPP².

Usage:
    python benchmarks/lattice_reproductions.py            # every case; or --only ldp-fig2 ...
    # writes (updates) benchmarks/results/lattice_reproductions_cpu.json
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import time
import warnings
from pathlib import Path

import numpy as np

from lattice_utility import welch_z

HERE = Path(__file__).resolve().parent
SAMPLERS = ("lattice", "float")
NOT_RUN = {
    "dpp2-fig1": "DPP² runs sampler='float' by design (experiments.dpp2.UTILITY): law unchanged",
    "dpp2-fig2": "DPP² runs sampler='float' by design (experiments.dpp2.UTILITY): law unchanged",
    "ldp-fig1": "Monte Carlo of Thm 2.2's loss over continuous draws; no algorithm run",
    "ldp-figD": "non-private runs (Fig. D compares randomized and fixed aggregation)",
    "dpadmm-table3": "wall time and privacy arithmetic; the noise law does not enter its claims",
    "ltadmm-table1": "the same runs as ltadmm-fig1 read at other levels (time to a target)",
    "recal-table4": "not rerun (time): the baselines of recal-eps's family at one ε; see recal-eps",
    "recal-table5": "not rerun (time): as recal-table4 for logistic regression",
}


def _se(x: np.ndarray) -> float:
    return float(x.std(ddof=1) / np.sqrt(x.size))


def row(reproduction: str, quantity: str, lattice, float_, paper: str = "") -> dict:
    """One table row from per-run values of each sampler."""
    a, b = (np.asarray(v, np.float64).reshape(-1) for v in (lattice, float_))
    return {"reproduction": reproduction, "quantity": quantity,
            "lattice": float(a.mean()), "lattice_se": _se(a), "float": float(b.mean()),
            "float_se": _se(b), "z": welch_z(a, b), "runs": [a.size, b.size], "paper": paper}


def variants(alg):
    """``{sampler: algorithm}``: ``alg`` drawing with each sampler (a channel-built algorithm
    through ``with_sampler``, any other by its ``sampler`` field)."""
    from jaxdp import channels

    def to(sampler):
        if isinstance(alg, channels.WithChannel):
            return alg.with_sampler(sampler)
        return dataclasses.replace(alg, sampler=sampler)

    return {sampler: to(sampler) for sampler in SAMPLERS}


# -- paper 001 ----------------------------------------------------------------------------------
def _ldp_runs(methods: dict, n: int, e: int, seeds: int, steps: int) -> dict:
    """``{sampler: {label: curves}}`` of ``ldp._curves``; the float runs are runs S..2S−1."""
    from jaxdp.experiments import Report, ldp
    pool = ldp._pool(None, Report("x", "x"))
    out = {}
    for i, sampler in enumerate(SAMPLERS):
        inst = ldp._instances(pool, n, e, seeds, first=i * seeds)
        out[sampler] = {label: ldp._curves(variants(alg)[sampler], alg.default_params(), inst,
                                           steps, False, label, first_key=i * seeds)
                        for label, alg in methods.items()}
    return out


def ldp_fig2(seeds: int, args) -> list:
    from jaxdp.experiments import ldp
    steps = ldp.STEPS
    runs = _ldp_runs(ldp.fig2_methods(), 10, 20, seeds, steps)
    worst = ldp.ldp_privacy.worst_case_curve(0.1, 1.02 ** np.arange(1, steps + 1), ldp.SENS)
    rows = [row("ldp-fig2", f"{label}: mean ‖x_i − x*‖ at K (fig2a)",
                runs["lattice"][label]["error"][:, -1], runs["float"][label]["error"][:, -1],
                "almost the same accuracy (no number)") for label in ldp.fig2_methods()]
    real = {s: runs[s]["Alg. 1"]["eps_real"][:, -1] for s in SAMPLERS}
    rows.append(row("ldp-fig2", "Alg. 1: realized loss per coordinate at K (fig2b)",
                    real["lattice"], real["float"], f"≈ 30 % below worst case {worst[-1]:.4f}"))
    rows.append(row("ldp-fig2", "Alg. 1: reduction 1 − realized/worst (fig2b)",
                    1 - real["lattice"] / worst[-1], 1 - real["float"] / worst[-1], "≈ 0.30"))
    return rows


def ldp_figC(seeds: int, args) -> list:
    from jaxdp.experiments import ldp
    runs = _ldp_runs(ldp.figC_methods(), 10, 40, seeds, ldp.STEPS)
    rows = []
    for label in ldp.figC_methods():
        pick = {s: runs[s][label]["error"] for s in SAMPLERS}
        rows.append(row("ldp-figC", f"{label}: mean ‖x_i − x*‖ at K (figC-utility)",
                        pick["lattice"][:, -1], pick["float"][:, -1], "almost the same (no number)"))
        rows.append(row("ldp-figC", f"{label}: mean ‖x_i − x*‖ at k = 10 (figC-early)",
                        pick["lattice"][:, 9], pick["float"][:, 9], "Alg. 2* worse early"))
    real = {s: runs[s]["Alg. 2*"]["eps_real"][:, -1] for s in SAMPLERS}
    rows.append(row("ldp-figC", "Alg. 2*: realized loss per coordinate at K (figC-privacy)",
                    real["lattice"], real["float"], "≈ 30 % of [45]'s"))
    return rows


# -- paper 004 ----------------------------------------------------------------------------------
def ltadmm_fig1(seeds: int, args) -> list:
    from jaxdp.engine import run
    from jaxdp.experiments import ltadmm
    rounds, every = args.ltadmm_rounds, 20
    prob, net = ltadmm.paper_setup()
    cost = ltadmm.CostModel()
    budget = rounds * cost.time_per_step(ltadmm.algorithms.LTADMMDP())
    rows = []
    for name, (alg, params) in ltadmm.paper_methods().items():
        steps = ltadmm.budget_steps(alg, rounds, every, cost)
        finals = {}
        for i, sampler in enumerate(SAMPLERS):
            tr = run(variants(alg)[sampler], prob, net, params, steps=steps,
                     seeds=list(range(i * seeds, (i + 1) * seeds)), record_every=every,
                     metrics=ltadmm.paper_metrics, progress=False)
            times = cost.time_axis(alg, tr.steps)
            finals[sampler] = {m: ltadmm._window(tr, times, m, budget, 0.05 * budget)
                               for m in ("grad_norm", "accuracy")}
        for m, claim in (("grad_norm", "fig1a-grad"), ("accuracy", "fig1b-accuracy")):
            rows.append(row("ltadmm-fig1", f"{ltadmm.LABELS[name]}: {m} at the budget ({claim})",
                            finals["lattice"][m], finals["float"][m],
                            "LT-ADMM-DP " + ("below" if m == "grad_norm" else "above")
                            + " both (figure)"))
    return rows


# -- paper 002 ----------------------------------------------------------------------------------
def dpadmm(seeds: int, args) -> list:
    from jaxdp.experiments import dpadmm_common as dc
    rows = []
    for kind in ("l1", "l2"):
        res = {}
        for i, sampler in enumerate(SAMPLERS):
            setup = dc.Setup(seeds=seeds, sampler=sampler, first_run=i * seeds)
            delta0 = setup.delta_grid[0]
            alg2 = tuple((e, delta0) for e in setup.eps_grid) if kind == "l2" else ()
            res[sampler] = dc.run_family(setup, dc.paper_data(setup), kind, alg2)[0]
        points = setup.points
        small, large = min(setup.eps_grid), max(setup.eps_grid)
        for eps in (small, large):
            g = points.index((delta0, eps))
            acc = {s: res[s]["dp_admm"]["test_accuracy"][:, g, -1] for s in SAMPLERS}
            rows.append(row("dpadmm-accuracy", f"{kind}: DP-ADMM test accuracy at T, ε = {eps:g}, "
                            f"δ = {delta0:g}", acc["lattice"], acc["float"],
                            "bad at small ε" if eps == small else "near non-private"))
            aug = {s: res[s]["dp_admm"]["augmented_objective"][:, g, -1] for s in SAMPLERS}
            rows.append(row("dpadmm-loss", f"{kind}: DP-ADMM augmented objective at T, "
                            f"ε = {eps:g}, δ = {delta0:g}", aug["lattice"], aug["float"],
                            "convergent; falls with ε"))
        if kind == "l2":
            for j in (0, len(setup.eps_grid) - 1):
                acc = {s: res[s]["alg2_paper"]["test_accuracy"][:, j, -1] for s in SAMPLERS}
                rows.append(row("dpadmm-accuracy", f"l2: Alg. 2 test accuracy at T, "
                                f"ε = {setup.eps_grid[j]:g}", acc["lattice"], acc["float"],
                                "much worse than DP-ADMM"))
    return rows


# -- paper 003 ----------------------------------------------------------------------------------
def recal_eps(seeds: int, args) -> list:
    import jax

    from jaxdp import algorithms, network
    from jaxdp.experiments import recal_common as rc
    net = network.make_network("ring", rc.N_AGENTS)
    plf = args.recal_plf
    steps = rc.N_AGENTS * int(np.ceil(plf * 1.5))
    Z, y = rc.synthetic_data(4000)
    rows = []
    for model in ("linear", "logistic"):
        prob = rc.recal_problem(Z, y, model)
        c = rc.gradient_bound(prob, net, rc.N_AGENTS * int(plf))
        for eps in (1.0, 5.0, 10.0):
            params = rc.dp_recal_params(prob, net, eps, c, plf)
            final = {}
            for i, sampler in enumerate(SAMPLERS):
                alg = variants(algorithms.DPRECAL())[sampler]
                keys = jax.random.split(jax.random.key(i), seeds)
                _, rec = rc.relative_errors(alg, prob, net, params, keys, steps=steps,
                                            record_every=rc.N_AGENTS)
                final[sampler] = np.asarray(rec["re"])[:, -1]
            rows.append(row("recal-eps", f"{model}/synthetic: RE at the PLF, ε = {eps:g}",
                            final["lattice"], final["float"],
                            "RE ordered ε=1 > 5 > 10 > RECAL (curves)"))
    return rows


# -- DPP² paper, Fig. 3 -------------------------------------------------------------------------
def dpp2_fig3(seeds: int, args) -> list:
    from jaxdp.engine import grid, sweep
    from jaxdp.experiments import dpp2
    prob, net = dpp2.paper_problem(), dpp2.paper_network()
    r_values = (0.1, 0.5, 0.9)
    rows = []
    for label, (alg, params) in dpp2.fig3_methods().items():
        if alg is dpp2.UTILITY:  # DPP² ran the float sampler before and after issue 22
            continue
        finals = {}
        for i, sampler in enumerate(SAMPLERS):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # the lattice clamp warning: the point here
                tr = sweep(variants(alg)[sampler], prob, net, grid(params, r=list(r_values)),
                           steps=args.dpp2_steps, seeds=list(range(i * seeds, (i + 1) * seeds)),
                           record_every=args.dpp2_steps, metrics=dpp2.mean_gradient_sq,
                           progress=False)
            finals[sampler] = np.asarray(tr.metrics["mean_grad_sq"])[:, :, -1]  # (S, G)
        for g, r in enumerate(r_values):
            rows.append(row("dpp2-fig3", f"{label}: log10 ‖(1/N)Σ∇f_i‖² at K, r̄ = {r:g} (R6)",
                            np.log10(finals["lattice"][:, g]), np.log10(finals["float"][:, g]),
                            "DPP² lowest; rises with r̄"))
    return rows


def markdown(result: dict) -> str:
    """The README table: one line per quantity, then the reproductions not rerun."""
    lines = ["| reproduction | quantity | lattice | float | z | paper |", "|---|---|---:|---:|---:|---|"]
    for case in result["cases"].values():
        for r in case["rows"]:
            lines.append(f"| `{r['reproduction']}` | {r['quantity']} | {r['lattice']:.4g} ± "
                         f"{r['lattice_se']:.2g} | {r['float']:.4g} ± {r['float_se']:.2g} | "
                         f"{r['z']:+.1f} | {r['paper']} |")
    return "\n".join(lines)


CASES = {"ldp-fig2": ldp_fig2, "ldp-figC": ldp_figC, "ltadmm-fig1": ltadmm_fig1,
         "dpadmm": dpadmm, "recal-eps": recal_eps, "dpp2-fig3": dpp2_fig3}


def main() -> None:
    import jax
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=32, help="runs per sampler")
    ap.add_argument("--seeds-for", nargs="*", default=[], metavar="CASE=S",
                    help="a case's own runs per sampler, e.g. dpadmm=6")
    ap.add_argument("--only", nargs="*", choices=sorted(CASES))
    ap.add_argument("--ltadmm-rounds", type=int, default=1000)
    ap.add_argument("--recal-plf", type=float, default=100.0)
    ap.add_argument("--dpp2-steps", type=int, default=500)
    ap.add_argument("--out", default=str(HERE / "results" / "lattice_reproductions_cpu.json"))
    ap.add_argument("--markdown", action="store_true", help="print the table of --out; run nothing")
    args = ap.parse_args()
    if args.markdown:
        print(markdown(json.loads(Path(args.out).read_text())))
        return
    jax.config.update("jax_enable_x64", True)  # a script, not a library import
    own = {k: int(v) for k, v in (s.split("=") for s in args.seeds_for)}
    path = Path(args.out)
    result = json.loads(path.read_text()) if path.exists() else {"cases": {}}
    for name in args.only or CASES:
        seeds = own.get(name, args.seeds)
        t0 = time.perf_counter()
        rows = CASES[name](seeds, args)
        setting = {k: v for k, v in vars(args).items() if k not in ("only", "out", "seeds_for")}
        result["cases"][name] = {"seeds_per_sampler": seeds, "seconds": time.perf_counter() - t0,
                                 "args": setting | {"seeds": seeds}, "rows": rows}
        for r in rows:
            print(json.dumps(r), flush=True)
        path.write_text(json.dumps(result | {"not_run": NOT_RUN, "doc": __doc__.split("\n\n")[1]},
                                   indent=1))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
