"""Reproductions of paper 001 (Xiao, Ye & Devadas, arXiv 1902.06101): Fig. 1, Fig. 2, Figs. C and D.

``jaxdp reproduce ldp-fig1 | ldp-fig2 | ldp-figC | ldp-figD``. Everything runs in float64
(``jax.enable_x64`` as a context).

Setting of App. E: regularized logistic regression ½‖x‖² + mean log(1 + e^{−y zᵀx}) on UCI Adult
(d = 14, rows normalized, ‖z‖ ≤ 1), b_i = 100 rows per agent, B_∞ = 1/b_i = 0.01, β_k = 1.02^k,
K = 100, D = 10, ζ = 0.5, 10 runs; each run draws its own random connected graph with the given N
and |E| (``gnm``, by rejection) and its own rows. Adult is read from ``adult=PATH`` (the user's
``adult.data``; nothing is downloaded); without it the synthetic stand-in of the same shape
(``problems.adult_synthetic``) is used and the report says so. x* is the centralized optimum
(Newton, float64). Accuracy: the paper's "accuracy logarithm log‖x_i^k − x*‖/d" is read as
log10(mean_i ‖x_i^k − x*‖ / d) (base and averaging unspecified). Privacy: per
coordinate, averaged over agents and runs: realized Σ Θ (Thm 2.2), expected Σ γβT (Thm 2.3),
the worst case Σ α_{k+1}β_{k+1}B_∞ (the paper's line, without the factor d) and, in Fig. 2(b), the
own bounds of [42] and [43] (**[RECONSTRUCTED]**, ``ldp.baselines``: Laplace density term plus
log(1 + J), J = 2.8/(D_eff b_i)). The paper's objective (½‖x‖², rows of norm ≤ 1) shrinks x* so
much that it classifies like the majority class (the Fig. 2 report says by how much); the paper
measures ‖x_i − x*‖, not accuracy.

Thresholds of the claims were fixed before the runs: "≈ 30 %" is read as 30 ± 10 percentage points;
"almost the same accuracy" as within half a decade (a factor 10^0.5) at K; "almost the same utility"
(Fig. C) as within a factor 2; "no accuracy loss" (Fig. D) as the randomized method's final error
at most twice the fixed-parameter one.
"""
from __future__ import annotations

import dataclasses
import functools
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

from jaxdp import algorithms, network, problems
from jaxdp._compiler import jit
from jaxdp.algorithms.ldp import privacy as ldp_privacy
from jaxdp.engine import simulate
from jaxdp._plotting import (figure, finish, metric_label, plot_band, save,
                             set_yscale, setting_title, style_key)
from jaxdp.experiments._report import Report, progress_bar

ROWS_PER_AGENT = 100  # b_i, App. E
STEPS = 100  # K
SENS = 0.01  # B_∞ = 1/b_i
DIM = 14  # d: Adult's 14 attributes


# -- Fig. 1 -------------------------------------------------------------------------------------
def ldp_fig1(out_dir="out/ldp-fig1", *, seeds: int = 10, samples: int = 100_000,
             progress: bool = False) -> Report:
    """Fig. 1: the amplification factor γ of Thm 2.3 over ω ∈ [0.1, 1], β ∈ [2, 10], αB_∞ = 0.001.

    γ three ways: the closed form of (11), the exact E[Θ]/(αβB_∞) by quadrature, and Monte Carlo
    (``seeds`` keys × ``samples`` outputs) at five grid points.
    """
    with jax.enable_x64(True):
        return _fig1(Path(out_dir), seeds, samples, progress)


def _fig1(out: Path, seeds: int, samples: int, progress: bool = False) -> Report:
    report = Report("ldp-fig1", "Paper 001, Fig. 1: amplification factor γ of Theorem 2.3")
    alpha_b = 0.001
    omegas, betas = np.linspace(0.1, 1.0, 10), np.linspace(2.0, 10.0, 9)
    W, B = np.meshgrid(omegas, betas, indexing="ij")
    closed = np.asarray(ldp_privacy.gamma_bound(jnp.asarray(W * B), jnp.asarray(alpha_b * B)))
    exact = ldp_privacy.gamma_exact(W * B, alpha_b * B)
    mc_points = [(0.1, 2.0), (0.5, 6.0), (1.0, 10.0), (0.3, 4.0), (0.8, 8.0)]
    mc = jit(ldp_privacy.gamma_monte_carlo, static_argnums=3)
    mc_rows = []
    for omega, beta in progress_bar(mc_points, progress, "Monte Carlo points"):
        est = np.array([mc(jax.random.key(s), omega * beta, alpha_b * beta, samples)[0]
                        for s in range(seeds)])
        mc_rows.append((omega, beta, est.mean(), est.std(ddof=1) / np.sqrt(seeds),
                        float(ldp_privacy.gamma_exact(omega * beta, alpha_b * beta))))
    mc_arr = np.array(mc_rows)

    fig, (ax, ax_gap) = figure(2)
    log = set_yscale(ax, closed, exact)
    for j in range(0, len(betas), 2):
        line = plot_band(ax, omegas, closed[:, j], log=log, label=f"β = {betas[j]:g}")
        plot_band(ax, omegas, exact[:, j], log=log, linestyle=":", color=line.get_color())
    ax.errorbar(mc_arr[:, 0], mc_arr[:, 2], yerr=3 * mc_arr[:, 3], fmt="k.",
                label="Monte Carlo (± 3 s.e.)")
    style_key(ax, "solid: closed form (11)")
    style_key(ax, "dotted: quadrature", linestyle=":")
    ax.set(xlabel="interval length ω", ylabel="amplification factor γ",
           title="γ against ω for several β")
    rel = (exact - closed) / exact
    vmax = 100 * np.abs(rel).max()
    im = ax_gap.imshow(100 * rel.T, origin="lower", aspect="auto", cmap="coolwarm",
                       vmin=-vmax, vmax=vmax,
                       extent=(omegas[0], omegas[-1], betas[0], betas[-1]))
    fig.colorbar(im, ax=ax_gap, label="(exact − (11)) / exact, %")
    ax_gap.set(xlabel="interval length ω", ylabel="noise parameter β",
               title="App. D erratum: (11) is not an upper bound")
    finish(fig, [ax, ax_gap], f"Paper 001 Fig. 1: Theorem 2.3's γ (α_b = {alpha_b:g}); Monte "
           f"Carlo: {seeds} seeds × {samples} outputs at {len(mc_points)} points")
    report.files.append(save(fig, out / "ldp_fig1.png"))
    np.savez(out / "ldp_fig1.npz", omega=omegas, beta=betas, gamma_closed=closed,
             gamma_exact=exact, monte_carlo=mc_arr)
    report.files.append(str(out / "ldp_fig1.npz"))

    mono = bool(np.all(np.diff(closed, axis=0) < 0) and np.all(np.diff(closed, axis=1) < 0))
    report.claim("fig1-monotone", "γ decreases in ω and in β: a longer interval or less noise "
                 "amplifies more (Fig. 1, Thm 2.3)", paper="monotone decreasing in both (plot)",
                 ours=f"closed form strictly decreasing along both axes: {mono}; γ = "
                 f"{closed[0, 0]:.4f} at (ω, β) = (0.1, 2), {closed[-1, -1]:.4f} at (1, 10)",
                 reproduced=mono)
    report.claim("fig1-bound", "(11) upper-bounds the expected privacy-loss ratio γ (Thm 2.3)",
                 paper="γ ≤ (11)", ours=f"exact E[Θ]/(αβB) exceeds (11) at {np.mean(rel > 0):.0%} "
                 f"of the grid, by up to {100 * rel.max():.2f} % (App. D takes the ratio at t = −T "
                 "where the maximum is at t = +T)", reproduced=bool(np.all(rel <= 1e-12)))
    worst_mc = np.max(np.abs(mc_arr[:, 2] - mc_arr[:, 4]) / mc_arr[:, 3])
    report.notes.append(f"Monte Carlo ({seeds} seeds × {samples} outputs) vs quadrature at "
                        f"{len(mc_points)} points: largest gap {worst_mc:.2f} standard errors.")
    report.write(out)
    return report


# -- Fig. 2 (and Fig. B) ------------------------------------------------------------------------
def ldp_fig2(out_dir="out/ldp-fig2", *, seeds: int = 10, adult=None, large: bool = True,
             steps: int = STEPS, progress: bool = False) -> Report:
    """Fig. 2 (a)/(b): Alg. 1 vs [42], [43], [48] (reconstructed), N = 10, |E| = 20, K = 100.

    Args:
      out_dir: output folder.
      seeds: runs (a graph, a data draw and a noise key each).
      adult: path of the user's ``adult.data``; ``None`` uses the synthetic stand-in.
      large: also run Fig. (B), N = 100, |E| = 200 (same setting, default).
      steps: K.
      progress: print one line per algorithm and size.
    """
    with jax.enable_x64(True):
        return _fig2(Path(out_dir), seeds, adult, large, steps, progress)


def fig2_methods() -> dict:
    """Fig. 2's methods, ``{label: algorithm}`` (each at its default Params)."""
    return {"Alg. 1": algorithms.LDPADMM(), "[43]": algorithms.IncreasingPenaltyADMM(),
            "[42]": algorithms.DualPerturbedADMM(), "[48]": algorithms.OutputPerturbedADMM()}


def figC_methods() -> dict:
    """Fig. (C)'s methods, ``{label: algorithm}`` (each at its default Params)."""
    return {"Alg. 2*": algorithms.LDPDGDStar(), "[45]": algorithms.HuangDGD(),
            "Alg. 1": algorithms.LDPADMM()}


def _fig2(out, seeds, adult, large, steps, progress) -> Report:
    report = Report("ldp-fig2", "Paper 001, Fig. 2: Algorithm 1 vs private ADMM baselines")
    pool = _pool(adult, report)
    algs = fig2_methods()
    sizes = [(10, 20)] + ([(100, 200)] if large else [])
    fig, axes = figure(2 * len(sizes))
    data = {}
    for s, (n, e) in enumerate(sizes):
        inst = _instances(pool, n, e, seeds)
        curves = {name: _curves(alg, alg.default_params(), inst, steps, progress,
                                f"{name} N={n}") for name, alg in algs.items()}
        _accuracy_panel(axes[2 * s], curves, f"accuracy, N = {n}, |E| = {e}")
        worst = ldp_privacy.worst_case_curve(0.1, 1.02 ** np.arange(1, steps + 1), SENS)
        real = curves["Alg. 1"]["eps_real"].mean(axis=0)
        expected = curves["Alg. 1"]["eps_expected"].mean(axis=0)
        own = {name: _own_bound(algs[name], inst, steps) for name in ("[42]", "[43]")}
        ax = axes[2 * s + 1]
        color = {name: f"C{i}" for i, name in enumerate(algs)}  # a method keeps its colour
        lines = (("worst case Σ α β_k B", worst, {"color": "k"}),
                 ("Alg. 1 realized (Thm 2.2)", real, {"color": color["Alg. 1"]}),
                 ("Alg. 1 expected (Thm 2.3)", expected,
                  {"color": color["Alg. 1"], "linestyle": "--"}),
                 *((f"{name} own bound (reconstructed)", y,
                    {"color": color[name], "linestyle": ":"}) for name, y in own.items()))
        log = set_yscale(ax, *(y for _, y, _ in lines))
        for label, y, style in lines:
            plot_band(ax, np.arange(1, steps + 1), y, log=log, label=label, **style)
        ax.set(xlabel="iteration $k$", ylabel=metric_label("privacy_loss"),
               title=f"privacy, N = {n}, |E| = {e}")
        tag = "" if n == 10 else "-B"
        _same_accuracy_claim(report, f"fig2a{tag}", curves, n, e)
        ratio = real[-1] / worst[-1]
        report.claim(
            f"fig2b{tag}", f"Alg. 1's privacy loss is on average ≈ 30 % below the worst case "
            f"Σ α β_k B_∞ (N={n}, |E|={e}, K={steps})", paper="≈ 30 % reduction",
            ours=f"realized {real[-1]:.4f} vs worst {worst[-1]:.4f} per coordinate: "
            f"{100 * (1 - ratio):.1f} % reduction (expected via (11): "
            f"{100 * (1 - expected[-1] / worst[-1]):.1f} %; mean over k of the ratio: "
            f"{100 * (1 - np.mean(real / worst)):.1f} %)",
            reproduced=abs((1 - ratio) - 0.30) <= 0.10)
        _baseline_privacy_claim(report, f"fig2b-baselines{tag}", real, own, n, e, steps)
        data.update({f"N{n}_{_key(k)}_own_bound": v for k, v in own.items()})
        data.update({f"N{n}_{_key(k)}_{m}": v for k, c in curves.items() for m, v in c.items()})
        data[f"N{n}_worst"] = worst
    report.notes.append(_optimum_accuracy(pool, inst[0][0]))
    report.notes.append("[42], [43], [48] are reconstructions in the paper's (Γ, ρ) notation "
                        "(ldp/baselines.py). The own bounds of [42] and [43] in Fig. 2(b) are "
                        "[RECONSTRUCTED] (the paper does not print them): per step d·β_{k+1}B_∞/"
                        "D_eff + log(1 + J), J = 2.8/(D_eff b_i), with the paper's B_i read as "
                        "b_i = 100 and D as the step's penalty sum D_eff (10 for [42], "
                        "1.02^{k+1}|N_i| for [43]), shown per coordinate (÷ d). [48]'s bound is "
                        "omitted, as in the paper ('too loose').")
    finish(fig, axes, "Paper 001 Fig. 2 (mean, min–max band over runs): " + setting_title(
        _problem_name(adult), "a random G(N, |E|) per run", " and ".join(str(n) for n, _ in sizes),
        seeds, "ε: the privacy loss in the right panel(s)"))
    return _finish(report, fig, out, "ldp_fig2", data)


# -- Fig. C -------------------------------------------------------------------------------------
def ldp_figC(out_dir="out/ldp-figC", *, seeds: int = 10, adult=None, steps: int = STEPS,
             progress: bool = False) -> Report:
    """Fig. (C): Alg. 2* (η_k = 0.93^k) vs [45] (η_k = 0.9^k) and Alg. 1, N = 10, |E| = 40.

    Arguments as :func:`ldp_fig2`.
    """
    with jax.enable_x64(True):
        return _figC(Path(out_dir), seeds, adult, steps, progress)


def _figC(out, seeds, adult, steps, progress) -> Report:
    report = Report("ldp-figC", "Paper 001, Fig. (C): Algorithm 2* vs [45]")
    pool = _pool(adult, report)
    inst = _instances(pool, 10, 40, seeds)
    algs = figC_methods()
    curves = {name: _curves(alg, alg.default_params(), inst, steps, progress, name)
              for name, alg in algs.items()}
    k = np.arange(1, steps + 1)
    beta = 1.02**k
    worst = {"Alg. 2*": ldp_privacy.worst_case_curve(0.93**k, beta, SENS),
             "[45]": ldp_privacy.worst_case_curve(0.9**k, beta, SENS),
             "Alg. 1": ldp_privacy.worst_case_curve(0.1, beta, SENS)}
    real = {name: c["eps_real"].mean(axis=0) for name, c in curves.items()}
    fig, (ax_acc, ax_priv) = figure(2)
    _accuracy_panel(ax_acc, curves, "accuracy, N = 10, |E| = 40")
    log = set_yscale(ax_priv, *real.values(), *worst.values())
    for name in algs:
        line = plot_band(ax_priv, k, real[name], log=log)
        plot_band(ax_priv, k, worst[name], log=log, linestyle="--", color=line.get_color())
    style_key(ax_priv, "solid: realized (Thm 2.2)")
    style_key(ax_priv, "dashed: worst case", linestyle="--")
    ax_priv.set(xlabel="iteration $k$", ylabel=metric_label("privacy_loss"), title="privacy")
    finish(fig, [ax_acc, ax_priv], "Paper 001 Fig. (C) (mean, min–max band over runs): "
           + setting_title(_problem_name(adult), "a random G(10, 40) per run", 10, seeds,
                           "ε: the privacy loss in the right panel"))

    share = real["Alg. 2*"][-1] / worst["[45]"][-1]
    report.claim("figC-privacy", "Alg. 2*'s privacy loss is only ≈ 30 % of [45]'s",
                 paper="≈ 30 %", ours=f"Alg. 2* realized {real['Alg. 2*'][-1]:.4f} vs [45] "
                 f"{worst['[45]'][-1]:.4f} per coordinate at K={steps}: {100 * share:.1f} % "
                 f"(Alg. 2*'s own worst case {worst['Alg. 2*'][-1]:.4f})",
                 reproduced=abs(share - 0.30) <= 0.10)
    err = {name: c["error"].mean(axis=0) for name, c in curves.items()}
    ratio = err["Alg. 2*"][-1] / err["[45]"][-1]
    report.claim("figC-utility", "Alg. 2* and [45] finally reach almost the same utility",
                 paper="almost the same final accuracy",
                 ours=f"mean ‖x_i − x*‖ at K: Alg. 2* {err['Alg. 2*'][-1]:.3g}, [45] "
                 f"{err['[45]'][-1]:.3g} (ratio {ratio:.2f})", reproduced=0.5 <= ratio <= 2.0)
    early = min(10, steps) - 1
    report.claim("figC-early", "Alg. 2* converges worse at the beginning",
                 paper="worse early accuracy", ours=f"mean ‖x_i − x*‖ at k = {early + 1}: Alg. 2* "
                 f"{err['Alg. 2*'][early]:.3g}, [45] {err['[45]'][early]:.3g}",
                 reproduced=err["Alg. 2*"][early] > err["[45]"][early])
    better = err["Alg. 1"][-1] < min(err["Alg. 2*"][-1], err["[45]"][-1])
    costlier = real["Alg. 1"][-1] > max(real["Alg. 2*"][-1], worst["[45]"][-1])
    report.claim("figC-alg1", "Alg. 1 (constant step) has better accuracy but worse privacy loss",
                 paper="better accuracy, worse privacy",
                 ours=f"Alg. 1: error {err['Alg. 1'][-1]:.3g}"
                 f", realized loss {real['Alg. 1'][-1]:.4f} per coordinate",
                 reproduced=better and costlier)
    report.notes.append("Alg. 2* and [45] end far from x* (‖x*‖ ≈ 0.2): their steps η_k sum to "
                        "a finite 13.3 and 9 while the noise keeps entering, so both are "
                        "noise-dominated at K; 'almost the same utility' is read on that scale.")
    data = {f"{_key(n)}_{m}": v for n, c in curves.items() for m, v in c.items()}
    data.update({f"{_key(n)}_worst": v for n, v in worst.items()})
    return _finish(report, fig, out, "ldp_figC", data)


# -- Fig. D -------------------------------------------------------------------------------------
def ldp_figD(out_dir="out/ldp-figD", *, seeds: int = 10, adult=None, steps: int = STEPS,
             sizes=((10, 20), (100, 200)), progress: bool = False) -> Report:
    """Fig. (D-1)/(D-2): randomization costs no accuracy (non-private), N=10/|E|=20, N=100/|E|=200.

    Randomized exact ADMM (12) vs conventional ADMM (θ = ½: Γ = D/2, ρ = D/(2|N_i|)); Alg. 2
    (η_k = 0.95^k; ``scope="local"`` on these sparse graphs, our variant) vs the same with w = ½.
    Arguments as :func:`ldp_fig2`; ``sizes`` lists the (N, |E|) panels.
    """
    with jax.enable_x64(True):
        return _figD(Path(out_dir), seeds, adult, steps, tuple(sizes), progress)


def _figD(out, seeds, adult, steps, sizes, progress) -> Report:
    report = Report("ldp-figD", "Paper 001, Fig. (D): randomization costs no accuracy")
    pool = _pool(adult, report)
    pairs = {
        "ADMM": (algorithms.LDPADMM(primal="exact", private=False),
                 algorithms.LDPADMM(primal="exact", private=False, randomize=False)),
        "DGD": (algorithms.LDPDGD(scope="local", private=False),
                algorithms.LDPDGD(scope="local", private=False, randomize=False)),
    }
    fig, axes = figure(len(sizes))
    data = {}
    for ax, (n, e) in zip(axes, sizes):
        inst = _instances(pool, n, e, seeds)
        for family, (rand, fixed) in pairs.items():
            c_rand = _curves(rand, rand.default_params(), inst, steps, progress,
                             f"{family} random N={n}")
            c_fix = _curves(fixed, fixed.default_params(), inst, steps, progress,
                            f"{family} fixed N={n}")
            label = "Alg. 1 (exact, random)" if family == "ADMM" else "Alg. 2 (random)"
            conv = "conventional ADMM" if family == "ADMM" else "DGD (w = ½)"
            _accuracy_panel(ax, {label: c_rand, conv: c_fix}, f"N = {n}, |E| = {e}")
            final_r, final_f = c_rand["error"].mean(axis=0)[-1], c_fix["error"].mean(axis=0)[-1]
            report.claim(
                f"figD-{family.lower()}-N{n}", f"{label.split(' (')[0]}'s randomization costs no "
                f"accuracy against {conv} (N={n}, |E|={e})", paper="no accuracy loss (Fig. D)",
                ours=f"mean ‖x_i − x*‖ at K={steps}: random {final_r:.3g}, fixed {final_f:.3g} "
                f"(ratio {final_r / final_f:.2f})", reproduced=final_r <= 2.0 * final_f)
            data.update({f"N{n}_{family}_random_error": c_rand["error"],
                         f"N{n}_{family}_fixed_error": c_fix["error"]})
        if (n, e) == sizes[0]:
            report.notes.append(_dgd_diagnosis(pairs["DGD"], inst, steps))
    report.notes.append("Alg. 2 is stated for K_N; on these sparse graphs it runs as "
                        "LDPDGD(scope='local') (closed neighbourhoods with Metropolis weights), "
                        "an inferred variant (the paper does not say how), and 'conventional "
                        "DGD' is the same update with w = ½ (gradient at the mixed point). The "
                        "random split gives the pair weights W_ia ± (w − ½)c, which can be "
                        "negative: it slows consensus most on small sparse graphs.")
    finish(fig, axes, "Paper 001 Fig. (D) (mean, min–max band over runs): " + setting_title(
        _problem_name(adult), "a random G(N, |E|) per run",
        " and ".join(str(n) for n, _ in sizes), seeds, "non-private"))
    return _finish(report, fig, out, "ldp_figD", data)


def _dgd_diagnosis(pair, instances, steps) -> str:
    """Why Alg. 2's error ratio at K depends on the horizon and the step size (a figD note).

    Random over fixed mean error: the printed Alg. 2 on K_N (same rows) at K and 2K, and the
    local pair with the non-summable step η_k = 0.99^k at K.
    """
    n = instances[0][1].n_agents
    complete = [(prob, _slotless(network.make_network("complete", n)))
                for prob, _ in instances]
    printed = tuple(dataclasses.replace(alg, scope="complete") for alg in pair)
    default, slow = pair[0].default_params(), algorithms.LDPDGDParams(eta_decay=0.99)

    def ratio(algs, inst, params, k):
        rand, fixed = (_curves(a, params, inst, k, False, "")["error"].mean(axis=0)
                       for a in algs)
        return rand / fixed

    on_complete = ratio(printed, complete, default, 2 * steps)
    return (f"Alg. 2 diagnosis (N={n}, random/fixed mean error): printed Alg. 2 on K_{n} "
            f"{on_complete[steps - 1]:.2f} at K={steps} and {on_complete[-1]:.3g} at "
            f"K={2 * steps}; local variant with η_k = 0.99^k "
            f"{ratio(pair, instances, slow, steps)[-1]:.2f} at K={steps}. With η_k = 0.95^k the "
            "steps sum to 19: once they die out the fixed method keeps contracting to x* while "
            "the random split keeps moving the network average (zero-mean, ∝ the disagreement) "
            "with no gradient left to pull it back, so the ratio grows with the horizon, on K_N "
            "as on sparse graphs; with non-vanishing steps it stays near 1.")


# -- shared pieces ------------------------------------------------------------------------------
def _pool(adult, report: Report) -> tuple[np.ndarray, np.ndarray]:
    """The pooled, normalized Adult rows (the user's file, or the synthetic stand-in)."""
    if adult is None:
        features, labels = problems.adult_synthetic(seed=0)
        report.notes.append("Data: synthetic Adult stand-in (problems.adult_synthetic, 30162 × 14)"
                            "; pass adult=PATH (CLI --adult) for the UCI file.")
    else:
        features, labels = problems.load_adult(adult)
        report.notes.append(f"Data: UCI Adult from {adult} ({len(labels)} complete rows).")
    return problems.normalize_adult(features), labels


def _instances(pool, n_agents: int, edges: int, runs: int, first: int = 0) -> list:
    """One (problem, network) per run ``first .. first + runs − 1``: b_i = 100 fresh rows per
    agent, a fresh G(N, |E|)."""
    features, labels = pool
    out = []
    for r in range(first, first + runs):
        rows = np.random.default_rng(r).choice(len(labels), ROWS_PER_AGENT * n_agents,
                                               replace=False)
        prob = problems.from_arrays(
            *problems.partition(features[rows], labels[rows], n_agents, seed=r),
            loss="logistic", reg={"lam": 1.0}, name="adult")
        out.append((prob, _slotless(network.make_network("gnm", n_agents, m=edges, seed=r))))
    return out


def _slotless(net):
    """The same network with the zero-slot edge layout (every directed edge in ``overflow``).

    The default layout's array shapes depend on the degree sequence, so every random graph would
    compile its own program; with K = 0 slots all graphs with the same N and |E| share one shape
    (products are unchanged: the dense backend uses its matrices, the edge backend sums the
    overflow edges), and the runs can be stacked and vmapped.
    """
    return net.with_slots(0)


def _metrics(problem, models, state):
    """Mean ‖x_i − x*‖ and the agents' mean cumulative privacy losses per coordinate."""
    d = models.shape[1]
    return {"error": jnp.mean(jnp.linalg.norm(models - problem.x_star[None, :], axis=1)),
            "eps_real": jnp.mean(state.eps_real) / d,
            "eps_expected": jnp.mean(state.eps_expected) / d}


@functools.partial(jax.jit, static_argnames=("algorithm", "steps"))
def _simulate(algorithm, problems_, nets, params, keys, steps):
    """Every run's records ``(runs, steps)``: vmapped over stacked problems, networks and keys."""
    def one(problem, net, key):
        return simulate(algorithm, problem, net, params, key, steps=steps, metrics=_metrics)[1]

    return jax.vmap(one)(problems_, nets, keys)


def _curves(alg, params, instances, steps, progress, label, first_key: int = 0) -> dict:
    """Records of every run: metric -> ``(runs, K)``; run r uses noise key ``first_key + r``."""
    for prob, net in instances:
        alg.validate(params, prob, net)
    stacked = [jax.tree.map(lambda *a: jnp.stack(a), *part) for part in zip(*instances)]
    keys = jax.vmap(jax.random.key)(first_key + jnp.arange(len(instances)))
    out = jax.tree.map(np.asarray, _simulate(alg, *stacked[:1], stacked[1], params, keys, steps))
    if progress:
        print(f"  {label}: {len(instances)} runs done")
    return out


def _accuracy_panel(ax, curves, title):
    """The paper's accuracy, mean_i ‖x_i − x*‖ / d (mean over runs, min–max band), against k."""
    log = set_yscale(ax, *(c["error"].mean(axis=0) / DIM for c in curves.values()))
    for name, c in curves.items():
        k = np.arange(1, c["error"].shape[1] + 1)
        err = c["error"] / DIM
        plot_band(ax, k, err.mean(axis=0), err.min(axis=0), err.max(axis=0), log=log,
                  label=name)
    ax.set(xlabel="iteration $k$", ylabel=metric_label("error_per_dim"), title=title)


def _problem_name(adult) -> str:
    data = "synthetic Adult stand-in" if adult is None else "UCI Adult"
    return f"ℓ2-regularized logistic regression on {data}"


def _same_accuracy_claim(report, cid, curves, n, e):
    final = {name: c["error"].mean(axis=0)[-1] for name, c in curves.items()}
    gaps = {name: abs(np.log10(final["Alg. 1"] / v)) for name, v in final.items()
            if name != "Alg. 1"}
    report.claim(cid, f"even with the first-order approximation, Alg. 1 performs almost the "
                 f"same as [42], [43], [48] (N={n}, |E|={e})", paper="almost the same accuracy",
                 ours="mean ‖x_i − x*‖ at K: " + ", ".join(f"{k} {v:.3g}" for k, v in
                                                            final.items()),
                 reproduced=max(gaps.values()) <= 0.5)


def _optimum_accuracy(pool, problem) -> str:
    """How x* (run 0) classifies every pooled row, against the majority class."""
    features, labels = pool
    x_star = np.asarray(problem.x_star)
    accuracy = np.mean(np.where(features @ x_star >= 0, 1.0, -1.0) == labels)
    majority = max(np.mean(labels > 0), np.mean(labels < 0))
    return (f"Classification by x* (run 0, ‖x*‖ = {np.linalg.norm(x_star):.3f}) over all "
            f"{len(labels)} rows: accuracy {accuracy:.3f} vs majority class {majority:.3f}. The "
            "paper's metric is ‖x_i − x*‖, not accuracy; with ½‖x‖² and rows of norm ≤ 1 the "
            "optimum is strongly shrunk, so x* is close to the majority classifier whatever the "
            "encoding.")


def _own_bound(alg, instances, steps) -> np.ndarray:
    """A baseline's own privacy bound per coordinate, ``(K,)``, averaged over agents and runs."""
    return np.mean([alg.theorem_curve(prob, net, alg.default_params(), steps).mean(axis=0)
                    for prob, net in instances], axis=0)


def _baseline_privacy_claim(report, cid, real, own, n, e, steps):
    """Fig. 2(b): Alg. 1's realized loss against [42]'s and [43]'s own bounds at K."""
    cut = {name: 1 - real[-1] / y[-1] for name, y in own.items()}
    average = float(np.mean(list(cut.values())))
    report.claim(
        cid, f"Alg. 1's realized privacy loss is on average ≈ 30 % below the bounds of [42] and "
        f"[43] (N={n}, |E|={e}, K={steps}; [48] omitted as too loose)",
        paper="≈ 30 % reduction (Fig. 2(b))",
        ours=f"Alg. 1 realized {real[-1]:.4f} per coordinate vs " + ", ".join(
            f"{name} {y[-1]:.4f} ({100 * cut[name]:.1f} % lower)" for name, y in own.items())
        + f"; average {100 * average:.1f} % (baseline bounds [RECONSTRUCTED])",
        reproduced=abs(average - 0.30) <= 0.10)


def _key(name: str) -> str:
    return name.replace(". ", "").replace("*", "star").replace("[", "ref").replace("]", "")


def _finish(report, fig, out: Path, stem: str, data: dict) -> Report:
    report.files.append(save(fig, out / f"{stem}.png"))
    np.savez(out / f"{stem}.npz", **data)
    report.files.append(str(out / f"{stem}.npz"))
    diverged = [k for k, v in data.items() if not np.all(np.isfinite(v))]
    if diverged:
        report.notes.append(f"non-finite values in: {', '.join(diverged)}")
    report.write(out)
    return report


__all__ = ["fig2_methods", "figC_methods", "ldp_fig1", "ldp_fig2", "ldp_figC", "ldp_figD"]
