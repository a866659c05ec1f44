"""Figure helpers shared by the reproductions and the command line (matplotlib, Agg backend).

* :data:`METRIC_LABELS`: metric key → axis label with its math (declared once, used everywhere).
* :func:`choose_log`: a log axis only when the positive data span more than a decade.
* :func:`figure`, :func:`finish` (one legend per figure, off the data; a title naming the setting),
  :func:`setting_title`, :func:`save`.
"""
from __future__ import annotations

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


def setting_title(problem: str, network: str, n_agents: int, seeds: int,
                  epsilon: float | None = None) -> str:
    """``"nonconvex_logistic on random_geometric, N = 50, 16 seeds, ε = 1"``."""
    eps = "" if epsilon is None else f", ε = {epsilon:.3g}"
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
    if labels:
        fig.legend([handles[lab] for lab in labels], labels, loc="lower center",
                   ncol=min(len(labels), 4), frameon=False, bbox_to_anchor=(0.5, 0.0))
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout(rect=(0, 0.06 * ((len(labels) + 3) // 4) if labels else 0, 1, 1))
    return fig


def save(fig, path) -> str:
    """Save as PNG (150 dpi) and close; returns the path as a string."""
    import matplotlib.pyplot as plt

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if not fig.get_layout_engine() and not fig.legends:
        fig.tight_layout()
    fig.savefig(path, dpi=150, bbox_inches="tight")
    plt.close(fig)
    return str(path)
