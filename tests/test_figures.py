"""Every reproduction's figure meets the paper standard of ``jaxdp._plotting``.

One legend per figure, off the data; readable axis labels (no metric key, no underscore outside
math); nothing drawn at or below 0 on a log axis; a title naming the problem, network, N, the
seeds and ε. The Figure objects are inspected as :func:`save` writes them (``recording``), from
one cheap run of each family (tiny settings: the figures' form, not the papers' numbers).
"""
import numpy as np
import pytest

from jaxdp.experiments import REPRODUCTIONS, demo
from jaxdp._plotting import (figure, figure_problems, finish, plot_band, recording,
                                         save, set_yscale, setting_title)

CHEAP = {  # family -> (reproduction, settings, figures it writes)
    "dpp2": ("dpp2-fig2", {"seeds": 2, "steps": 20, "attack_steps": 12}, 2),
    "ldp": ("ldp-figC", {"seeds": 2, "steps": 3}, 1),
    "dpadmm": ("dpadmm-accuracy", {"seeds": 2, "steps": 4, "eps_grid": (0.05, 0.2),
                                   "delta_grid": (1e-3, 1e-6), "providers": 4, "rows": 10}, 1),
    "recal": ("recal-eps", {"seeds": 1, "plf": 3.0, "models": ("logistic",),
                            "synthetic_samples": 48, "data": ("synthetic",)}, 1),
    "ltadmm": ("ltadmm-table1", {"seeds": 2, "rounds": 40, "record_every": 4}, 1),
    "baselines": ("baselines", {"steps": 200}, 1),
}


def _figures(fn, out, **kw) -> list:
    with recording() as figures:
        report = fn(out, **kw)
    assert len(figures) == sum(str(f).endswith(".png") for f in report.files)
    return figures


@pytest.mark.parametrize("family", sorted(CHEAP))
def test_reproduction_figures_meet_the_standard(family, tmp_path):
    name, kw, count = CHEAP[family]
    figures = _figures(REPRODUCTIONS[name], tmp_path, **kw)
    assert len(figures) == count
    for fig in figures:
        assert figure_problems(fig) == [], fig.get_suptitle()
        # one legend below the axes; none for bars named by their ticks (ltadmm-table1)
        assert len(fig.legends) <= 1 and not any(ax.get_legend() for ax in fig.axes)


def test_analytic_figure_meets_the_standard(tmp_path):
    """ldp-fig1 plots a closed form (no network): one legend, labels and a title naming it."""
    (fig,) = _figures(REPRODUCTIONS["ldp-fig1"], tmp_path, seeds=2, samples=500)
    assert figure_problems(fig, setting=False) == []
    assert "Monte Carlo: 2 seeds" in fig.get_suptitle()


def test_demo_figure_meets_the_standard(tmp_path):
    (fig,) = _figures(demo, tmp_path, seeds=4, steps=20, n_agents=10, progress=False)
    assert figure_problems(fig) == []


def test_the_check_catches_each_fault():
    """A figure with two legends in axes, a raw label, a 0 on a log axis and no title fails on
    each count; the same data drawn with the helpers passes."""
    x, y = np.arange(4), np.array([0.0, 1.0, 1e-2, 1e-4])
    fig, axes = figure(2)
    for ax in axes:
        ax.plot(x, y, label="a")
        ax.set(yscale="log", xlabel="iteration", ylabel="consensus_error")
        ax.legend()
    problems = figure_problems(fig)
    assert any("legend" in p for p in problems)
    assert any("'consensus_error' is missing or raw" in p for p in problems)
    assert any("<= 0 drawn on a log axis" in p for p in problems)
    assert "no figure title" in problems

    fig, axes = figure(2)
    for ax in axes:
        plot_band(ax, x, y, y / 2, y * 2, log=set_yscale(ax, y), label="a")
        ax.set(xlabel="iteration $k$", ylabel="consensus error")
    assert axes[0].get_yscale() == "log" and np.isnan(axes[0].lines[0].get_ydata()[0])
    finish(fig, axes, setting_title("least_squares", "ring", 6, 2, "non-private"))
    assert figure_problems(fig) == []
    fig, (ax,) = figure()
    assert not set_yscale(ax, [3.1, 3.4, 3.9]) and ax.get_yscale() == "linear"  # < a decade
    assert set_yscale(ax, [3.1, 3.4], log=True)  # overridable


def test_long_titles_wrap_without_splitting_a_setting(tmp_path):
    fig, (ax,) = figure()
    ax.plot([0, 1], [1, 2], label="a")
    ax.set(xlabel="iteration $k$", ylabel=r"objective $f(\bar x)$")
    title = "A long prefix naming the figure and its paper: " + setting_title(
        "nonconvex logistic regression", "a random geometric graph", 50, 20, 1.0)
    finish(fig, [ax], title)
    text = fig.get_suptitle()
    assert "\n" in text and " ".join(text.split()) == title
    assert all(not line.endswith(("N =", "ε =")) for line in text.split("\n"))
    assert figure_problems(fig) == []
    save(fig, tmp_path / "f.png")
