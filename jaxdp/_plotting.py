"""Figure helpers shared by the reproductions and the command line (matplotlib, Agg backend).

A bottom layer (it imports nothing from jaxdp): :meth:`jaxdp.engine.Trace.plot`, ``jaxdp.cli``,
``jaxdp.compare`` and ``jaxdp.experiments`` all draw with it.

* :data:`METRIC_LABELS`: metric key → axis label with its math (declared once, used everywhere).
* :func:`choose_log`: a log axis only when the positive data span more than a decade.
* :func:`figure`, :func:`finish` (one legend per figure, off the data; a title naming the setting),
  :func:`setting_title`, :func:`save`.
* :func:`set_yscale`, :func:`plot_band` (log or linear from the data; nothing drawn at 0 on a log
  axis), :func:`style_key` (a legend entry for a line style).
* :func:`recording`, :func:`figure_problems`: the Figures :func:`save` wrote, and what keeps one
  from the standard above (for the tests).
"""
from __future__ import annotations

import contextlib
import textwrap
from pathlib import Path

import numpy as np

METRIC_LABELS = {
    "objective": r"objective $f(\bar x)$",
    "grad_norm_sq": r"$\|\nabla f(\bar x)\|^2$",
    "grad_norm": r"$\|\nabla f(\bar x)\|$",
    "consensus_error": r"consensus error $\|X - \mathbf{1}\bar x^\top\|_F^2$",
    "stationarity": r"stationarity $\frac{1}{N}\|\sum_i \nabla f_i(x_i)\|^2$",
    "dist_to_opt": r"$\|\bar x - x^\star\|^2$",
    "suboptimality": r"suboptimality $f(\bar x) - f^\star$",
    "test_accuracy": "test accuracy (fraction)",
    "accuracy": "accuracy (fraction)",
    "W_hat": r"$\hat W = \|x - \bar x\|^2 + \frac{1}{N}\|\sum_i \nabla f_i(x_i)\|^2$",
    "mean_grad_sq": r"$\|\frac{1}{N}\sum_i \nabla f_i(x_i)\|^2$",
    "re": r"relative error $\|\bar x - x^\star\| / \|x^0 - x^\star\|$",
    "error": r"mean error $\frac{1}{N}\sum_i\|x_i - x^\star\|$",
    "step": "iteration $k$",
    "rounds": "communication rounds",
    "messages": "messages sent (directed, all agents)",
    "bits": "bits sent (all agents)",
    "grad_calls": r"local gradient evaluations $\nabla f_i$ (all agents)",
    "sample_grads": r"sample gradients $\nabla f_{i,h}$ (all agents)",
    "prox_calls": "proximal evaluations (all agents)",
    "hessian_calls": r"local Hessians $\nabla^2 f_i$ (all agents)",
    "error_per_dim": r"$\|x_i - x^\star\| / d$, mean over agents $i$",
    "augmented_objective": r"augmented objective $\hat L(w^t)$",
    "empirical_loss": r"empirical loss $\frac{1}{m}\sum_j \ell(w^t; z_j)$",
    "privacy_loss": "privacy loss per coordinate",
}
"""Metric key → axis label (matplotlib mathtext). Unknown keys are shown as they are."""


def metric_label(name: str) -> str:
    """The axis label of a metric key (the key itself when it is not in :data:`METRIC_LABELS`)."""
    return METRIC_LABELS.get(name, name)


def choose_log(values, decades: float = 1.0) -> bool:
    """Log scale when the finite positive ``values`` span more than ``decades`` decades and no
    value is negative (zeros are allowed: they are left off a log axis)."""
    v = np.asarray(values, dtype=np.float64)
    v = v[np.isfinite(v)]
    if v.size == 0 or np.any(v < 0):
        return False
    positive = v[v > 0]
    if positive.size < 2:
        return False
    return bool(np.log10(positive.max() / positive.min()) > decades)


def setting_title(problem: str, network: str, n_agents: int | str, seeds: int | str,
                  epsilon: float | str | None = None) -> str:
    """``"nonconvex_logistic on random_geometric, N = 50, 16 seeds, ε = 1"``; ``epsilon`` may be a
    phrase (``"non-private"``, ``"ε per curve in the legend"``), shown as it is."""
    eps = ("" if epsilon is None else f", {epsilon}" if isinstance(epsilon, str)
           else f", ε = {epsilon:.3g}")
    return f"{problem} on {network}, N = {n_agents}, {seeds} seed{'s' * (seeds != 1)}{eps}"


def figure(ncols: int = 1, width: float = 5.0, height: float = 3.6):
    """A figure with ``ncols`` axes side by side, drawn off-screen."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, ncols, figsize=(width * ncols, height), squeeze=False)
    return fig, list(axes[0])


def finish(fig, axes, title: str | None = None):
    """One legend for the whole figure, below the axes (off the data), from the labelled lines of
    every axis (each label once); the setting as the figure's title."""
    handles, labels = {}, []
    for ax in axes:
        legend = ax.get_legend()
        if legend is not None:
            legend.remove()
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if lab not in handles and not lab.startswith("_"):
                handles[lab] = h
                labels.append(lab)
    longest = max((len(lab) for lab in labels), default=1) + 5  # characters of one entry
    ncol = max(1, min(len(labels), 4, int(15 * fig.get_figwidth() / longest)))  # fits the width
    if labels:
        fig.legend([handles[lab] for lab in labels], labels, loc="lower center",
                   ncol=ncol, frameon=False, bbox_to_anchor=(0.5, 0.0))
    if title:  # wrapped to the figure's width (about 15 characters an inch at 10 pt)
        width = max(40, int(15 * fig.get_figwidth()))
        fig.suptitle("\n".join(  # never between the sides of "N = 50"
            textwrap.fill(part.replace(" = ", "\xa0=\xa0"), width).replace("\xa0", " ")
            for part in title.split("\n")), fontsize=10)
    rows = -(-len(labels) // ncol)  # a legend row is about 0.22 inch high
    fig.tight_layout(rect=(0, min(0.5, 0.22 * rows / fig.get_figheight()), 1, 1))
    return fig


def set_yscale(ax, *series, log: bool | None = None) -> bool:
    """Log or linear y axis for the data ``series`` (:func:`choose_log` over all of them) unless
    ``log`` forces it; returns whether the axis is log."""
    values = np.concatenate([np.ravel(np.asarray(v, dtype=np.float64)) for v in series] or [[]])
    log = choose_log(values) if log is None else bool(log)
    ax.set_yscale("log" if log else "linear")
    return log


def plot_band(ax, x, mean, lo=None, hi=None, *, log: bool = False, alpha: float = 0.15, **kw):
    """The line ``mean`` against ``x`` with the band ``[lo, hi]`` in its colour. On a log axis
    (``log=True``) non-positive values are left out (never drawn at 0) and the band is clipped at
    1e-3 × the smallest positive mean. Returns the line."""
    mean = np.asarray(mean, dtype=np.float64)
    if log:
        positive = mean > 0
        floor = np.nanmin(mean[positive]) * 1e-3 if np.any(positive) else 1.0
        mean = np.where(positive, mean, np.nan)
        if lo is not None:
            lo = np.where(positive, np.maximum(np.asarray(lo, np.float64), floor), np.nan)
            hi = np.where(positive, hi, np.nan)
    (line,) = ax.plot(x, mean, **kw)
    if lo is not None:
        ax.fill_between(x, lo, hi, color=line.get_color(), alpha=alpha, linewidth=0)
    return line


def style_key(ax, label: str, **kw) -> None:
    """A legend entry for a line style that has no data of its own (``"dashed: ε = 1"``)."""
    ax.plot([], [], color=kw.pop("color", "0.4"), label=label, **kw)


_RECORDING: list = []


@contextlib.contextmanager
def recording():
    """Collect every Figure :func:`save` writes while the block runs (yields the list): tests
    inspect the Figure objects (legends, labels, title) instead of the PNG."""
    figures: list = []
    _RECORDING.append(figures)
    try:
        yield figures
    finally:
        _RECORDING.remove(figures)


def figure_problems(fig, *, setting: bool = True) -> list[str]:
    """What keeps ``fig`` from the paper standard, as sentences (``[]`` when it meets it): more
    than one legend, or none while lines are labelled, or one inside an axes; an axes with data
    and a missing or raw axis label (a metric key, an underscore outside math); a value <= 0
    drawn on a log axis; no title; with ``setting``, a title that does not name N, the seeds and
    ε (or "non-private")."""
    problems = []
    legends = list(fig.legends) + [ax.get_legend() for ax in fig.axes if ax.get_legend()]
    labelled = any(not lab.startswith("_") for ax in fig.axes
                   for lab in ax.get_legend_handles_labels()[1])
    if len(legends) > 1 or (labelled and not fig.legends):
        problems.append(f"{len(fig.legends)} figure legend(s) and "
                        f"{len(legends) - len(fig.legends)} inside axes; want one figure legend")
    for i, ax in enumerate(fig.axes):
        if hasattr(ax, "_colorbar") or not (ax.lines or ax.collections or ax.patches):
            continue
        for which, text in (("x", ax.get_xlabel()), ("y", ax.get_ylabel())):
            if which == "x" and not text and ax.get_xticklabels() and _tick_names(ax):
                continue  # categorical x axis (bars): the tick labels name it
            outside_math = "".join(text.split("$")[0::2])
            if not text.strip() or text in METRIC_LABELS or "_" in outside_math:
                problems.append(f"axes {i}: {which} label {text!r} is missing or raw")
        if ax.get_yscale() == "log" and any(
                np.any(np.asarray(line.get_ydata(), np.float64) <= 0) for line in ax.lines):
            problems.append(f"axes {i}: a value <= 0 drawn on a log axis")
    title = " ".join(fig.get_suptitle().split())
    if not title:
        problems.append("no figure title")
    elif setting and not ("N = " in title and "seed" in title
                          and ("ε" in title or "non-private" in title)):
        problems.append(f"title {title!r} does not name N, the seeds and ε")
    return problems


def _tick_names(ax) -> bool:
    return any(not t.get_text().replace(".", "").replace("−", "").isdigit()
               for t in ax.get_xticklabels() if t.get_text())


def save(fig, path) -> str:
    """Save as PNG (150 dpi) and close; returns the path as a string."""
    import matplotlib.pyplot as plt

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if not fig.get_layout_engine() and not fig.legends:
        fig.tight_layout()
    fig.savefig(path, dpi=150, bbox_inches="tight")
    plt.close(fig)
    for figures in _RECORDING:
        figures.append(fig)
    return str(path)
