"""The audit's threshold search: one vectorized Clopper–Pearson sweep, the same choice as the loop.

``jaxdp.attacks.audit._choose_threshold`` scores the 999 quantile thresholds of the selection half
in both directions. It computes every threshold's two upper limits with one ``beta.ppf`` call per
direction and rate (every audit case of the soundness gate calls it five times: the report's δ
and the four of the privacy profile); the choice must be the one of the plain loop below, which
calls :func:`~jaxdp.attacks.audit.clopper_pearson_upper` once per rate and threshold.
"""
import numpy as np
import pytest

from jaxdp.attacks import audit


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


@pytest.mark.parametrize("shift, ties, delta", [(0.0, False, 1e-5), (1.0, False, 1e-5),
                                                (-2.0, False, 1e-2), (1.0, True, 0.0),
                                                (50.0, False, 1e-5), (0.3, True, 1e-5)],
                         ids=["same", "apart", "reversed", "ties", "separated", "ties_close"])
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
