"""``jaxdp reproduce dpadmm-loss | dpadmm-accuracy | dpadmm-table3``: paper 002's Sec. VI.

Huang et al., "DP-ADMM" (arXiv:1808.10101), experiments on UCI Adult (Sec. VI): N = 100
providers × m_i = 210 rows, d = 14, logistic regression with an ℓ1 (Sec. VI-A) or ℓ2 (Sec. VI-B)
regularizer, λ = 0.17 (λ/N per provider), ρ = 1, T = 100, ε ∈ {0.01, 0.02, 0.05, 0.07, 0.1, 0.2},
δ ∈ {1e-3, …, 1e-6}, 10 runs. Each run redraws the split of Table II (162 pre-training rows that
give D_w, 21000 training rows, 9000 test rows) and the noise; all grid points and algorithms of a
run share its noise draws (common random numbers).

Data: ``adult=PATH`` reads the user's ``adult.data`` (:func:`jaxdp.problems.load_adult`); without
it, the synthetic stand-in of the same shape (:func:`jaxdp.problems.adult_synthetic`) is used and the
report says so. Rows are min–max scaled and normalized to ‖a‖ = 1 (``normalize_adult``).

Metrics (Sec. VI): the augmented objective ``Σ_i f_i(w̄_i^t) + ‖w̄_i^t − w̄^t‖`` at the ergodic
averages (Thm 3's convention ``k = 0..t−1`` for ℓ1, Thm 4's ``k = 1..t`` for ℓ2), the empirical loss
``Σ_i (1/m_i) Σ_j ℓ(w^t)`` at the broadcast w^t, and the test accuracy of the final w^T. The engine's
metric hook sees the models only, so the runs keep every step's messages (``observe=True``) and the
metrics are computed from them (:func:`paper_metrics`). The engine's ``run`` takes one Problem for all
seeds, so the 10 random splits are 10 jitted ``simulate`` calls (one compilation), vmapped over the
(ε, δ) grid.

This module holds ``dpadmm-loss`` and ``dpadmm-accuracy``; ``dpadmm-table3`` is in
:mod:`~jaxdp.experiments.dpadmm_table3` and the setting, data, runs and metrics they share in
:mod:`~jaxdp.experiments.dpadmm_common` (both re-exported here).
"""
from __future__ import annotations

from pathlib import Path

import jax
import numpy as np

from jaxdp.algorithms.dpadmm.privacy import moments_accountant
from jaxdp._plotting import (choose_log, figure, finish, metric_label, plot_band, save,
                             set_yscale, style_key)
from jaxdp.experiments._report import Report
from jaxdp.experiments.dpadmm_common import (  # noqa: F401 (re-exported: their path was here)
    ALG2_SETTINGS, CONVENTION, LAMBDA, M_ROWS, MUCH_BETTER, N_PRETRAIN, N_PROVIDERS, N_TEST, NEAR,
    RHO, STEPS, KIND, Setup, mean_se, paper_data, paper_metrics, paper_split, run_family, save_npz,
    title_setting, viridis_colors,
)
from jaxdp.experiments.dpadmm_table3 import (  # noqa: F401 (re-exported: their path was here)
    COLOR, TABLE3_EPS, TABLE3_PAPER, TIMED, dpadmm_table3,
)


# -- public entry points -----------------------------------------------------------------------
def dpadmm_loss(out_dir="out/dpadmm-loss", *, seeds: int = 10, progress: bool = False,
                adult=None, **setting) -> Report:
    """Figs. 1, 3, 4, 5: augmented objective and empirical loss versus iterations (float64).

    ``setting``: other :class:`Setup` fields (``steps``, ``eps_grid``, ``delta_grid``,
    ``providers``, ``rows``).
    """
    with jax.enable_x64(True):
        return _loss(Path(out_dir), Setup(seeds=seeds, progress=progress, adult=adult,
                                          **setting))


def dpadmm_accuracy(out_dir="out/dpadmm-accuracy", *, seeds: int = 10, progress: bool = False,
                    adult=None, **setting) -> Report:
    """Figs. 2 and 6: test accuracy versus the total ε̄ per δ, against Algorithms 1 and 2."""
    with jax.enable_x64(True):
        return _accuracy(Path(out_dir), Setup(seeds=seeds, progress=progress, adult=adult,
                                              **setting))


# -- dpadmm-loss --------------------------------------------------------------------------------
def _loss(out, setup: Setup) -> Report:
    data = paper_data(setup)
    results, dws = {}, {}
    for kind in ("l1", "l2"):
        results[kind], dws[kind] = run_family(setup, data, kind, ALG2_SETTINGS,
                                           ("paper", "corrected"))
    report = Report("dpadmm-loss", "DP-ADMM (paper 002) Figs. 1, 3, 4, 5: convergence on Adult")
    report.notes += [
        (f"data: {data[2]}; {setup.seeds} runs, T = {setup.steps}, N = {setup.providers}, "
         f"m_i = {setup.rows}"),
        "D_w per run (mean): " + ", ".join(f"{k}: {v.mean():.3f}" for k, v in dws.items()),
        ("alg2_corrected: Algorithm 2 with the subproblem's (ρ + λ/N)-strong-convexity "
         "sensitivity (not in the paper; shown in dpadmm_loss_alg2.png)")]
    for kind in ("l1", "l2"):
        _loss_claims(report, setup, kind, results[kind])
    _alg2_claims(report, setup, results["l2"])
    report.notes += _corrected_alg2_notes(setup, results["l2"])
    report.files.append(_plot_loss(out, setup, results))
    report.files.append(_plot_alg2(out, setup, results["l2"]))
    report.files.append(save_npz(out / "curves.npz", results,
                                  grid_delta_eps=np.array(setup.points),
                                  alg2_settings=np.array(ALG2_SETTINGS),
                                  D_w_l1=dws["l1"], D_w_l2=dws["l2"]))
    report.write(out)
    return report


def _loss_claims(report, setup, kind, res):
    aug = res["dp_admm"]["augmented_objective"]  # (R, G, T)
    mean = aug[:, :, -1].mean(0)
    first = aug[:, :, 0].mean(0)
    fig = "Fig. 1" if kind == "l1" else "Fig. 3"
    bad = [setup.points[g] for g in range(len(mean)) if not mean[g] < first[g]]
    report.claim(f"{kind}-convergent", f"{fig} ({kind}): DP-ADMM is noise-resistant and "
                 "convergent for every (ε, δ): the mean augmented objective at T is below its "
                 "value at t = 1", paper="convergent under every (ε, δ) of the grid",
                 ours=f"final {mean.min():.2f}..{mean.max():.2f} vs t=1 {first.min():.2f}.."
                 f"{first.max():.2f}; not decreasing at {bad or 'none'}", reproduced=not bad)
    runs = aug[:, :, -1].reshape((-1,) + setup.shape)
    for axis, name in ((1, "ε"), (0, "δ")):
        viol = _violations(runs, axis, setup, increasing=False)
        report.claim(f"{kind}-faster-larger-{'eps' if axis else 'delta'}", f"{fig} ({kind}): "
                     f"convergence is faster under a larger {name}: the final augmented "
                     "objective does not rise with it beyond 2 paired standard errors",
                     paper="faster convergence under a larger ε or a larger δ",
                     ours=_table_text(runs.mean(0), setup) + f"; violations: {viol or 'none'}",
                     reproduced=not viol)
    nonpriv = res["nonprivate"]["augmented_objective"][:, 0, -1].mean()
    report.claim(f"{kind}-nonprivate-envelope", f"{fig} ({kind}): the non-private Algorithm 1 "
                 "reaches a lower augmented objective than DP-ADMM at every (ε, δ)",
                 paper="non-private curve below the DP-ADMM curves (figure)",
                 ours=f"Algorithm 1 {nonpriv:.3f}; DP-ADMM best {mean.min():.3f}",
                 reproduced=bool(nonpriv <= mean.min()))


def _paired_steps(runs, axis, setup):
    """Per-run differences between neighbouring grid values along ``axis`` (0: δ, 1: ε), the
    parameter growing. ``runs`` is (R, nδ, nε); grid points of a run share its split and noise,
    so a difference's standard error is that of the per-run differences (a paired comparison).

    Returns:
      (mean, se, lo, hi): (n_other, n_axis − 1) means and SEs of the differences, and the grid
      values at each pair's two ends.
    """
    values = np.asarray((setup.delta_grid, setup.eps_grid)[axis])
    order = np.argsort(values)
    x = np.take(np.moveaxis(runs, axis + 1, -1), order, axis=-1)  # (R, n_other, n_axis)
    diff = np.diff(x, axis=-1)
    mean, se = mean_se(diff)
    return mean, se, values[order][:-1], values[order][1:]


def _violations(runs, axis, setup, increasing):
    """Where the mean moves the wrong way by more than 2 paired SEs as the parameter of ``axis``
    grows (``runs`` (R, nδ, nε)); readable strings."""
    mean, se, lo, hi = _paired_steps(runs, axis, setup)
    wrong = (mean if increasing else -mean) < -2 * se
    other, names = (setup.delta_grid, setup.eps_grid)[1 - axis], ("δ", "ε")
    return [f"{names[1 - axis]}={other[o]:g}: {names[axis]} {lo[j]:g}→{hi[j]:g}"
            for o, j in np.argwhere(wrong)]


def _significant_rise(runs, axis, setup):
    """(n_other,) whether the largest grid value beats the smallest by more than 2 paired SEs."""
    values = (setup.delta_grid, setup.eps_grid)[axis]
    x = np.moveaxis(runs, axis + 1, -1)
    mean, se = mean_se(x[..., int(np.argmax(values))] - x[..., int(np.argmin(values))])
    return mean > 2 * se


def _table_text(m, setup):
    return "; ".join(f"δ={dl:g}: " + ", ".join(f"{v:.3g}" for v in row)
                     for dl, row in zip(setup.delta_grid, m)) \
        + f" (ε = {', '.join(map(str, setup.eps_grid))})"


def _eps_bar(setup, eps, delta) -> float:
    return float(moments_accountant(setup.steps, eps, delta)[0])


def _alg2_claims(report, setup, res):
    start = setup.providers * np.log(2.0)  # Σ_i mean ℓ at w = 0
    for s, (eps, delta) in enumerate(ALG2_SETTINGS):
        if (delta, eps) not in setup.points:
            continue
        g = setup.points.index((delta, eps))
        final = {(name, k): res[name][k][:, s if name != "dp_admm" else g, -1].mean()
                 for name in ("alg2_paper", "dp_admm")
                 for k in ("augmented_objective", "empirical_loss")}
        a2, dp = final[("alg2_paper", "empirical_loss")], final[("dp_admm", "empirical_loss")]
        report.claim(f"alg2-disrupted-eps{eps:g}", f"Figs. 4–5 (ℓ2, ε = {eps:g}, ε̄ = "
                     f"{_eps_bar(setup, eps, delta):.4f}, δ = {delta:g}): Algorithm 2's training "
                     "is disrupted by its noise (final empirical loss above the zero model's "
                     "N ln 2) while DP-ADMM's decreases below it",
                     paper="Algorithm 2 disrupted seriously; DP-ADMM stable",
                     ours=f"empirical loss at T: Alg. 2 {a2:.4g}, DP-ADMM {dp:.4g} "
                     f"(start {start:.2f}); augmented objective: Alg. 2 "
                     f"{final[('alg2_paper', 'augmented_objective')]:.4g}, DP-ADMM "
                     f"{final[('dp_admm', 'augmented_objective')]:.4g}",
                     reproduced=bool(a2 > start > dp))


def _corrected_alg2_notes(setup, res) -> list[str]:
    """Algorithm 2 with the corrected sensitivity beside DP-ADMM at the same (ε, δ) (not a claim of
    the paper: it shows how much of Figs. 4–6's gap comes from the printed σ)."""
    lines = []
    for s, (eps, delta) in enumerate(ALG2_SETTINGS):
        if (delta, eps) not in setup.points:
            continue
        g = setup.points.index((delta, eps))
        at_t = {name: {k: res[name][k][:, idx, -1].mean() for k in ("empirical_loss",
                                                                    "test_accuracy")}
                for name, idx in (("alg2_paper", s), ("alg2_corrected", s), ("dp_admm", g))}
        lines.append(f"ε = {eps:g}, δ = {delta:g} at T: empirical loss / test accuracy — "
                     + "; ".join(f"{n} {v['empirical_loss']:.4g} / {v['test_accuracy']:.3f}"
                                 for n, v in at_t.items()))
    return lines


def _plot_loss(out, setup, results):
    fig, axes = figure(2)
    t = np.arange(1, setup.steps + 1)
    colors = viridis_colors(len(setup.eps_grid))
    for ax, kind in zip(axes, ("l1", "l2")):
        res = results[kind]
        curves = [(style, c, delta, eps,
                   res["dp_admm"]["augmented_objective"][:, setup.points.index((delta, eps))])
                  for style, delta in (("-", setup.delta_grid[0]), ("--", setup.delta_grid[-1]))
                  for c, eps in zip(colors, setup.eps_grid)]
        nonprivate = res["nonprivate"]["augmented_objective"][:, 0].mean(0)
        log = set_yscale(ax, nonprivate, *(y.mean(0) for *_, y in curves))
        for style, c, delta, eps, y in curves:
            label = f"ε = {eps:g} (ε̄ = {_eps_bar(setup, eps, delta):.2f} at δ = {delta:g})"
            plot_band(ax, t, y.mean(0), log=log, linestyle=style, color=c, lw=1,
                      label=label if style == "-" else None)
        plot_band(ax, t, nonprivate, log=log, color="k", lw=2, label="non-private (Alg. 1)")
        ax.set(title=KIND[kind], xlabel="iteration $t$",
               ylabel=metric_label("augmented_objective"))
    style_key(axes[0], f"solid: δ = {setup.delta_grid[0]:g}")
    style_key(axes[0], f"dashed: δ = {setup.delta_grid[-1]:g}", linestyle="--")
    finish(fig, axes, "DP-ADMM Figs. 1, 3 (mean over runs): " + title_setting(setup, "ℓ1 and ℓ2"))
    return save(fig, out / "dpadmm_loss.png")


def _plot_alg2(out, setup, res):
    fig, axes = figure(2)
    t = np.arange(1, setup.steps + 1)
    names = {"alg2_paper": ("Alg. 2 (printed σ)", "--"), "alg2_corrected": ("Alg. 2 (corrected σ)",
                                                                             ":")}
    for ax, metric in zip(axes, ("augmented_objective", "empirical_loss")):
        curves = []
        for s, (eps, delta) in enumerate(ALG2_SETTINGS):
            for name, (label, style) in names.items():
                curves.append((res[name][metric][:, s].mean(0), style, f"{label}, ε = {eps:g}"))
            if (delta, eps) in setup.points:
                g = setup.points.index((delta, eps))
                curves.append((res["dp_admm"][metric][:, g].mean(0), "-",
                               f"DP-ADMM, ε = {eps:g}"))
        log = set_yscale(ax, *(y for y, _, _ in curves))
        for y, style, label in curves:
            plot_band(ax, t, y, log=log, linestyle=style, label=label)
        ax.set(title="ℓ2-regularized, δ = 1e-3", xlabel="iteration $t$",
               ylabel=metric_label(metric))
    finish(fig, axes, "DP-ADMM Figs. 4, 5 (mean over runs): " + title_setting(
        setup, "ℓ2", "per-iteration ε in the legend, δ = 1e-3"))
    return save(fig, out / "dpadmm_loss_alg2.png")


# -- dpadmm-accuracy ----------------------------------------------------------------------------
def _accuracy(out, setup: Setup) -> Report:
    data = paper_data(setup)
    delta0 = setup.delta_grid[0]
    alg2 = tuple((e, delta0) for e in setup.eps_grid)  # Fig. 6 at Figs. 4–5's δ = 1e-3
    results = {"l1": run_family(setup, data, "l1")[0], "l2": run_family(setup, data, "l2", alg2)[0]}
    report = Report("dpadmm-accuracy", "DP-ADMM (paper 002) Figs. 2 and 6: test accuracy")
    report.notes.append(f"data: {data[2]}; {setup.seeds} runs, T = {setup.steps}, N = "
                        f"{setup.providers}, m_i = {setup.rows}; accuracy of the final broadcast "
                        "w^T on the test rows")
    for kind in ("l1", "l2"):
        _accuracy_claims(report, setup, kind, results[kind])
        curve = results[kind]["nonprivate"]["test_accuracy"][:, 0].mean(0)
        half = setup.steps // 2
        report.notes.append(f"{kind}: non-private accuracy at t = {half}: {curve[half - 1]:.3f}, "
                            f"at t = {setup.steps}: {curve[-1]:.3f}")
    acc2 = results["l2"]["alg2_paper"]["test_accuracy"][:, :, -1].mean(0)
    same = [setup.points.index((dl, e)) for e, dl in alg2]
    gap = results["l2"]["dp_admm"]["test_accuracy"][:, same, -1].mean(0) - acc2
    report.claim("l2-better-than-alg2", "Fig. 6 (ℓ2): at the same privacy level DP-ADMM is much "
                 f"more accurate than Algorithm 2 (by more than {MUCH_BETTER:.0%} at every ε, "
                 f"δ = {delta0:g})", paper="much better accuracy than the intuitive algorithm",
                 ours=f"Alg. 2 accuracy {acc2.min():.3f}..{acc2.max():.3f}; "
                 f"DP-ADMM − Alg. 2: {gap.min():.3f}..{gap.max():.3f}",
                 reproduced=bool(gap.min() > MUCH_BETTER))
    report.files.append(_plot_accuracy(out, setup, results))
    report.files.append(save_npz(out / "accuracy.npz", results,
                                  grid_delta_eps=np.array(setup.points)))
    report.write(out)
    return report


def _accuracy_claims(report, setup, kind, res):
    runs = res["dp_admm"]["test_accuracy"][:, :, -1].reshape((-1,) + setup.shape)
    mean = runs.mean(0)
    nonpriv = res["nonprivate"]["test_accuracy"][:, 0, -1].mean()
    fig = "Fig. 2" if kind == "l1" else "Fig. 6"
    text = _table_text(mean, setup) + f"; non-private {nonpriv:.3f}"
    small = int(np.argmin(setup.eps_grid))
    poor = mean[:, small]
    report.claim(f"{kind}-poor-at-small-eps", f"{fig} ({kind}): accuracy is bad when ε̄ is very "
                 f"small (ε = {setup.eps_grid[small]:g}): more than {NEAR:.0%} below "
                 "non-private at every δ", paper="bad performance when ε̄ is very small",
                 ours=f"ε={setup.eps_grid[small]:g}: " + ", ".join(f"{v:.3f}" for v in poor)
                 + f"; non-private {nonpriv:.3f}", reproduced=bool(np.all(poor < nonpriv - NEAR)))
    for axis, name in ((1, "eps"), (0, "delta")):
        viol = _violations(runs, axis, setup, increasing=True)
        significant = _significant_rise(runs, axis, setup)
        grows = bool(np.all(significant)) if axis == 1 else bool(np.any(significant))
        report.claim(f"{kind}-accuracy-increases-with-{name}", f"{fig} ({kind}): accuracy "
                     f"increases with {'ε̄' if axis else 'δ'} (no drop beyond 2 paired SEs; "
                     + ("the largest ε beats the smallest by 2 paired SEs at every δ)" if axis
                        else "the largest δ beats the smallest by 2 paired SEs at some ε)"),
                     paper="accuracy increases with ε̄ and δ",
                     ours=text + f"; violations {viol or 'none'}", reproduced=grows and not viol)
    high = np.array([[_eps_bar(setup, e, dl) > 0.5 for e in setup.eps_grid]
                     for dl in setup.delta_grid])
    worst = float((nonpriv - mean)[high].max()) if high.any() else np.nan
    report.claim(f"{kind}-near-nonprivate", f"{fig} ({kind}): for ε̄ > 0.5 and δ ≥ 1e-6 DP-ADMM "
                 f"is nearly as accurate as non-private (within {NEAR:.0%})",
                 paper="nearly as good as / as accurate as the non-private algorithm",
                 ours=f"largest gap to non-private over the {int(high.sum())} grid points with "
                 f"ε̄ > 0.5: {worst:.3f}", reproduced=bool(worst <= NEAR))


def _plot_accuracy(out, setup, results):
    fig, axes = figure(2)
    for ax, kind in zip(axes, ("l1", "l2")):
        res = results[kind]
        for dl in setup.delta_grid:
            gs = [setup.points.index((dl, e)) for e in setup.eps_grid]
            bars = [_eps_bar(setup, e, dl) for e in setup.eps_grid]
            ax.plot(bars, res["dp_admm"]["test_accuracy"][:, gs, -1].mean(0), "o-",
                    label=f"DP-ADMM, δ = {dl:g}")
            if "alg2_paper" in res and dl == setup.delta_grid[0]:
                ax.plot(bars, res["alg2_paper"]["test_accuracy"][:, :, -1].mean(0), "x--",
                        color="r", label=f"Alg. 2 (printed σ), δ = {dl:g}")
        ax.axhline(res["nonprivate"]["test_accuracy"][:, 0, -1].mean(), color="k",
                   label="non-private")
        eps_bars = [_eps_bar(setup, e, dl) for e in setup.eps_grid for dl in setup.delta_grid]
        ax.set_xscale("log" if choose_log(eps_bars) else "linear")
        ax.set(xlabel=r"total $\bar\varepsilon$ after $T$ steps (moments accountant)",
               ylabel=metric_label("test_accuracy"), title=KIND[kind])
    finish(fig, axes, "DP-ADMM Figs. 2, 6 (mean over runs, final $w^T$): " + title_setting(
        setup, "ℓ1 and ℓ2", "total ε̄ on the x axis"))
    return save(fig, out / "dpadmm_accuracy.png")


__all__ = ["Setup", "dpadmm_accuracy", "dpadmm_loss", "dpadmm_table3", "paper_metrics"]
