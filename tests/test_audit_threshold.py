"""The audit's threshold sweeps: one vectorized Clopper–Pearson call, the same result as the loop.

``jaxdp.attacks.audit._choose_threshold`` scores the 999 quantile thresholds of the selection half
in both directions, and ``jaxdp.experiments.audit.ideal_gaussian_audit`` 2001 thresholds of the
exact Gaussian test (every audit case of the soundness gate calls the first five times: the
report's δ and the four of the privacy profile, and the second once). Both compute every
threshold's upper limits with one elementwise ``beta.ppf`` call per rate
(:func:`~jaxdp.attacks.audit.clopper_pearson_upper` of an array of counts); the results must be
those of the plain loops below, which call it once per rate and threshold.
"""
import numpy as np
import pytest

from jaxdp.attacks import audit
from jaxdp.experiments import audit as table


def _loop_threshold(s0, s1, delta):
    """The definition: the first threshold (direction +1 before −1, increasing thresholds) with
    the largest ε from the two upper limits at level 0.975."""
    best = (-1.0, 0.0, 1)
    candidates = np.quantile(np.concatenate([s0, s1]), np.linspace(0.001, 0.999, 999))
    for direction in (1, -1):
        a, b = np.sort(direction * s0), np.sort(direction * s1)
        for t in np.unique(direction * candidates):
            fp = a.size - np.searchsorted(a, t, side="right")
            fn = np.searchsorted(b, t, side="right")
            eps = audit.epsilon_from_rates(audit.clopper_pearson_upper(int(fp), a.size, 0.025),
                                           audit.clopper_pearson_upper(int(fn), b.size, 0.025),
                                           delta)
            if eps > best[0]:
                best = (eps, direction * t, direction)
    return best[1], best[2]


@pytest.mark.parametrize("shift, ties, delta", [(1.0, False, 1e-5), (-2.0, False, 1e-2),
                                                (0.3, True, 0.0), (50.0, False, 1e-5)],
                         ids=["apart", "reversed", "ties", "separated"])
def test_the_sweep_chooses_what_the_loop_chooses(shift, ties, delta):
    """Bit for bit: threshold and direction (ties of ε keep the first candidate, a direction −1
    only wins when strictly better, rounded scores give repeated quantiles)."""
    rng = np.random.default_rng(7)
    s0, s1 = rng.normal(size=300), rng.normal(size=260) + shift
    if ties:
        s0, s1 = np.round(s0), np.round(s1)
    assert audit._choose_threshold(s0, s1, delta) == _loop_threshold(s0, s1, delta)


def test_the_sweep_calls_the_beta_quantile_once_per_direction_and_rate(monkeypatch):
    """Four ``beta.ppf`` calls for the whole sweep (not two per threshold: ~4000 calls, 0.2 s of
    CPU per bound, five bounds per audit case of the soundness gate)."""
    from scipy import stats

    calls = []
    ppf = stats.beta.ppf
    monkeypatch.setattr(stats.beta, "ppf", lambda *a, **k: calls.append(1) or ppf(*a, **k))
    rng = np.random.default_rng(0)
    audit._choose_threshold(rng.normal(size=200), rng.normal(size=200) + 1.0, 1e-5)
    assert len(calls) == 4


def test_an_array_of_counts_gives_the_scalar_limits():
    counts = np.array([0, 1, 7, 99, 100, 120])  # k >= n: the limit is 1
    got = audit.clopper_pearson_upper(counts, 100, 0.025)
    assert got.tolist() == [audit.clopper_pearson_upper(int(k), 100, 0.025) for k in counts]


def _loop_ideal(mu, n, delta):
    """The definition of :func:`~jaxdp.experiments.audit.ideal_gaussian_audit`: expected counts
    of the exact test, rounded, through the audit's limits, maximised over 2001 thresholds."""
    from scipy import stats

    alpha, best = (1 - table.CONFIDENCE) / 2, 0.0
    for t in np.linspace(-2.0, mu + 8.0, 2001):
        fp, fn = stats.norm.sf(t) * n, stats.norm.cdf(t - mu) * n
        best = max(best, audit.epsilon_from_rates(
            audit.clopper_pearson_upper(round(float(fp)), n, alpha),
            audit.clopper_pearson_upper(round(float(fn)), n, alpha), delta))
    return best


@pytest.mark.parametrize("mu, n, delta", [(2.0, 50_000, 1e-5), (0.01, 100, 0.0)])
def test_the_ideal_audit_is_the_loops_bound(mu, n, delta):
    assert table.ideal_gaussian_audit(mu, n, delta) == _loop_ideal(mu, n, delta)
