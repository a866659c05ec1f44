"""Empirical privacy audits: a lower bound on ε from what an observer of the messages can tell apart.

Run an algorithm on two neighbouring inputs (problems that differ at one agent, as the paper's
adjacency says) over many seeds, reduce each run's observed messages to one score with a
``statistic``, and test "input 1" against "input 0" by thresholding the score. If the algorithm is
(ε, δ)-DP, every test's false-positive and false-negative rates satisfy (Kairouz, Oh & Viswanath
2015; Jagielski, Ullman & Oprea 2020)

.. math::  \\mathrm{FPR} + e^{\\varepsilon}\\,\\mathrm{FNR} \\ge 1 - \\delta,
           \\qquad \\mathrm{FNR} + e^{\\varepsilon}\\,\\mathrm{FPR} \\ge 1 - \\delta,

so rates measured over seeds give ``ε ≥ log((1 − δ − FPR)/FNR)`` (and the mirrored bound). The rates
are replaced by their one-sided Clopper–Pearson upper limits, so the bound holds with the stated
confidence. The threshold (and the test's direction) is chosen on one half of the seeds and the
bound is computed on the other half: choosing the best threshold on the same samples would inflate
the bound.

A lower bound above the ε a paper claims is a finding about the paper (or our code); a bound far
below it says only that this statistic is weak.
"""
from __future__ import annotations

import dataclasses
import math

import jax
import jax.numpy as jnp
import numpy as np

from jaxdp._compiler import jit
from jaxdp.engine import simulate


@dataclasses.dataclass(frozen=True)
class AuditResult:
    """The outcome of an audit.

    Attributes:
      epsilon_lower: ε lower bound holding with probability ``confidence`` (0 if none).
      epsilon_point: the same bound with the measured rates in place of their upper limits.
      threshold: the score threshold; ``direction`` +1 says "input 1" when score > threshold.
      fpr, fnr: measured rates on the evaluation half; ``fpr_upper``, ``fnr_upper`` their upper
        Clopper–Pearson limits.
      n0, n1: evaluation seeds per input. ``delta``, ``confidence``: as requested.
    """

    epsilon_lower: float
    epsilon_point: float
    threshold: float
    direction: int
    fpr: float
    fnr: float
    fpr_upper: float
    fnr_upper: float
    n0: int
    n1: int
    delta: float
    confidence: float

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def clopper_pearson_upper(k, n: int, alpha: float):
    """One-sided upper limit of a binomial proportion at level 1 − alpha (k successes of n): a
    float for an integer ``k``; for an array of counts, the array of limits from one elementwise
    ``beta.ppf`` call (a threshold sweep's limits at once, the same values)."""
    from scipy import stats  # here: scipy.stats costs 0.3 s of every `jaxdp list`

    if np.ndim(k) == 0:
        return 1.0 if k >= n else float(stats.beta.ppf(1 - alpha, k + 1, n - k))
    k = np.asarray(k, np.int64)
    inside = k < n
    out = np.ones(k.shape)
    out[inside] = stats.beta.ppf(1 - alpha, k[inside] + 1, n - k[inside])
    return out


def epsilon_from_rates(fpr: float, fnr: float, delta: float) -> float:
    """The largest ε that the two (ε, δ)-DP inequalities force for these rates (≥ 0)."""
    best = 0.0
    for a, b in ((fpr, fnr), (fnr, fpr)):
        if 1 - delta - a > 0:
            best = max(best, math.log((1 - delta - a) / b) if b > 0 else math.inf)
    return best


def gaussian_mechanism_epsilon(mu: float, delta: float) -> float:
    """Exact ε(δ) of a Gaussian mechanism with sensitivity/σ = ``mu`` (Balle & Wang 2018, Thm 8):
    :func:`jaxdp.privacy.pairwise.gaussian_epsilon` for one ``mu > 0``."""
    from jaxdp.privacy.pairwise import gaussian_epsilon
    if not (mu > 0 and 0 < delta < 1):
        raise ValueError(f"need mu > 0 and 0 < delta < 1; got mu={mu}, delta={delta}")
    return float(gaussian_epsilon(mu, delta))


def epsilon_lower_bound(scores_0, scores_1, *, delta: float, confidence: float = 0.95,
                        select_fraction: float = 0.5) -> AuditResult:
    """ε lower bound from scores of runs on input 0 and input 1.

    Args:
      scores_0, scores_1: ``(S0,)`` and ``(S1,)`` scores (one per seed).
      delta: the δ of the (ε, δ) claim being audited.
      confidence: joint confidence of the bound (each rate's limit at (1 + confidence)/2).
      select_fraction: share of each sample used to choose the threshold and direction.

    Raises:
      ValueError: too few scores, non-finite scores, or bad ``delta``/``confidence``.
    """
    s0, s1 = np.asarray(scores_0, np.float64), np.asarray(scores_1, np.float64)
    if not (0 <= delta < 1 and 0 < confidence < 1 and 0 < select_fraction < 1):
        raise ValueError(f"need 0 <= delta < 1, 0 < confidence < 1, 0 < select_fraction < 1; got "
                         f"{delta}, {confidence}, {select_fraction}")
    if min(s0.size, s1.size) < 20:
        raise ValueError(f"an audit needs at least 20 scores per input; got {s0.size}, {s1.size}")
    if not (np.all(np.isfinite(s0)) and np.all(np.isfinite(s1))):
        raise ValueError("scores must be finite (a diverged run cannot be scored)")
    k0, k1 = int(select_fraction * s0.size), int(select_fraction * s1.size)
    threshold, direction = _choose_threshold(s0[:k0], s1[:k1], delta)
    e0, e1 = direction * s0[k0:], direction * s1[k1:]
    t = direction * threshold
    false_pos, false_neg = int(np.sum(e0 > t)), int(np.sum(e1 <= t))
    alpha = (1 - confidence) / 2
    fpr_u = clopper_pearson_upper(false_pos, e0.size, alpha)
    fnr_u = clopper_pearson_upper(false_neg, e1.size, alpha)
    fpr, fnr = false_pos / e0.size, false_neg / e1.size
    return AuditResult(
        epsilon_lower=epsilon_from_rates(fpr_u, fnr_u, delta),
        epsilon_point=epsilon_from_rates(fpr, fnr, delta), threshold=float(threshold),
        direction=direction, fpr=fpr, fnr=fnr, fpr_upper=fpr_u, fnr_upper=fnr_u, n0=e0.size,
        n1=e1.size, delta=delta, confidence=confidence)


def _choose_threshold(s0: np.ndarray, s1: np.ndarray, delta: float) -> tuple[float, int]:
    """The threshold and direction with the best conservative bound on the selection half: the
    first of the largest :func:`epsilon_from_rates` over the 999 quantiles of the pooled scores,
    direction +1 before −1, thresholds in increasing order."""
    best = (-1.0, 0.0, 1)
    candidates = np.quantile(np.concatenate([s0, s1]), np.linspace(0.001, 0.999, 999))
    alpha = 0.025
    for direction in (1, -1):
        a, b = np.sort(direction * s0), np.sort(direction * s1)
        t = np.unique(direction * candidates)
        fpr = clopper_pearson_upper(a.size - np.searchsorted(a, t, side="right"), a.size, alpha)
        fnr = clopper_pearson_upper(np.searchsorted(b, t, side="right"), b.size, alpha)
        for i, (f0, f1) in enumerate(zip(fpr.tolist(), fnr.tolist())):
            eps = epsilon_from_rates(f0, f1, delta)
            if eps > best[0]:
                best = (eps, direction * t[i], direction)
    return best[1], best[2]


def audit_observations(algorithm, problems, network, params, statistic, *, steps: int, seeds,
                       batch: int = 8192) -> list[np.ndarray]:
    """``statistic(observed)`` of every run on each problem, from one compiled program.

    The problem is an argument of the jitted ``vmap`` over seeds, so neighbouring problems of the
    same shapes share one compilation.

    Args:
      problems: a sequence of problems (e.g. two neighbours).
      statistic: ``fn(observed) -> ()`` or ``-> (D,)`` where ``observed = {"messages": {...},
        "models": ...}`` holds one run's messages and models with a leading ``steps`` axis.
      seeds: one sequence of integer seeds per problem (runs are independent across seeds).
      batch: seeds per compiled call (memory: batch × steps × message size).

    Returns:
      One ``(S,)`` or ``(S, D)`` array per problem.
    """
    def one(problem, key):
        _, _, observed = simulate(algorithm, problem, network, params, key, steps=steps,
                                  record_every=steps, observe=True,
                                  metrics=lambda p, m: {})
        return statistic(observed)

    scores_of = jit(jax.vmap(one, in_axes=(None, 0)))
    out = []
    for problem, ids in zip(problems, seeds, strict=True):
        ids = np.asarray(list(ids), np.uint32)
        out.append(np.concatenate([
            np.asarray(scores_of(problem, jax.vmap(jax.random.key)(jnp.asarray(ids[i:i + batch]))))
            for i in range(0, ids.size, batch)]))
    return out


def audit_scores(algorithm, problem, network, params, statistic, *, steps: int, seeds,
                 batch: int = 8192) -> np.ndarray:
    """One score per seed: ``statistic(observed)`` of each run, computed inside one jitted vmap.

    Args:
      statistic: ``fn(observed) -> ()`` where ``observed = {"messages": {...}, "models": ...}``
        holds one run's messages and models with a leading ``steps`` axis.
      seeds: integer seeds (their runs are independent of other seeds').
      batch: seeds per compiled call (memory: batch × steps × message size).
    """
    return audit_observations(algorithm, (problem,), network, params, statistic, steps=steps,
                              seeds=(seeds,), batch=batch)[0]


def audit(algorithm, problem_0, problem_1, network, params, statistic, *, steps: int,
          seeds: int = 100_000, delta: float = 1e-5, confidence: float = 0.95,
          batch: int = 8192) -> AuditResult:
    """Audit ``algorithm`` on two neighbouring problems: ``seeds`` runs on each (disjoint seeds).

    Example:
      >>> result = audit(alg, prob, prob_neighbour, net, params, stat, steps=1, seeds=100_000)
      >>> result.epsilon_lower   # compare with the paper's ε
    """
    s0, s1 = audit_observations(algorithm, (problem_0, problem_1), network, params, statistic,
                                steps=steps, seeds=(range(seeds), range(seeds, 2 * seeds)),
                                batch=batch)
    return epsilon_lower_bound(s0, s1, delta=delta, confidence=confidence)
