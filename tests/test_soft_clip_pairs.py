"""LT-ADMM-DP's soft clip (7) on Poisson batches: its worst neighbouring pairs, the declared
Δ = 2ζ they attain, and the replace-one pair it is charged.

The soft clip acts on the minibatch *mean*: a record's effect on the release is not bounded by ζ
(the other records can hold the mean at −ζ·â while the record pulls it to +ζ·â), so Δ = 2ζ under
add/remove as under replace-one, approached by :func:`soft_clip_pair` and never exceeded (every
release lies in the ζ-ball). Replacing, the same ball bounds the distance of the two worlds'
releases by 2ζ as well, so the report charges the pair of sampling without replacement under
substitution at 2ζ (dp-accounting's Poisson PLD), not the REPLACE_ONE pair ±2ζ (4ζ apart).
"""
from __future__ import annotations

import dataclasses
import itertools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxdp.privacy as jdp
from jaxdp import algorithms
from jaxdp.algorithms.ltadmm import privacy as lp
from jaxdp.algorithms.ltadmm.cases import soft_clip_pair

ZETA, SIGMA, M, B = 1.0, 2.0, 16, 8
POISSON = {"local_steps": 1, "sampling": "poisson", "records": M, "batch_size": B,
           "sampler": "float"}


def _release(problem, weights) -> np.ndarray:
    """Agent 0's soft-clipped minibatch mean at x = 0 (the release without its noise) for Poisson
    inclusion weights ``(N, M)``."""
    alg = algorithms.LTADMMDP(**POISSON)
    params = algorithms.LTADMMDPParams(zeta=ZETA, sigma_e=0.0)
    phi = jnp.zeros((problem.n_agents, problem.dim), problem.features.dtype)
    weights = jnp.asarray(weights, problem.features.dtype)
    return np.asarray(alg._perturbed_gradient(phi, weights, jnp.zeros_like(phi), problem,
                                              params)[0])


def _batch(rows) -> np.ndarray:
    weights = np.zeros((10, M))
    weights[0, list(rows)] = 1.0
    return weights


@pytest.mark.parametrize("replace", [False, True])
def test_the_worst_pair_moves_the_release_by_the_declared_two_zeta(replace):
    """Record 0 sampled with seven others: the two worlds' releases are 2ζ apart to 1e-3
    (the declared Δ, a supremum of the open ball: approached, not reached); replacing, the batch
    without record 0 is released where the replacement's is, so the two worlds are
    ``(1 − q)N(c) + qN(a)`` against ``N(c)``, ‖a − c‖ → 2ζ: the bounded pair, attained."""
    with jax.enable_x64(True):
        first, second = soft_clip_pair(10, M, 5, replace=replace)
        a, a_other = _release(first, _batch(range(B))), _release(second, _batch(range(B)))
        without = _release(first, _batch(range(1, B + 1)))
    assert 2 * ZETA * (1 - 1e-3) < np.linalg.norm(a - a_other) < 2 * ZETA
    declared = lp.release_sensitivity(algorithms.LTADMMDP(**POISSON),
                                      algorithms.LTADMMDPParams(zeta=ZETA), 10)
    np.testing.assert_array_equal(declared, 2 * ZETA)
    if replace:
        assert np.linalg.norm(without - a_other) < 1e-3 * ZETA


def test_no_batch_of_any_data_leaves_the_zeta_ball():
    """Labels over fifteen orders of magnitude, random Poisson batches: every release (either
    world, any batch) has norm < ζ, so no two are more than 2ζ apart (nothing above Δ)."""
    rng = np.random.default_rng(1)
    with jax.enable_x64(True):
        first, _ = soft_clip_pair(10, M, 5, replace=True)
        for _ in range(20):
            labels = np.asarray(first.labels).copy()
            labels[0] = rng.choice([-1, 1], M) * 10.0 ** rng.uniform(-3, 12, M)
            problem = dataclasses.replace(first, labels=jnp.asarray(labels))
            norm = np.linalg.norm(_release(problem, _batch(np.flatnonzero(rng.random(M) < 0.5))))
            assert norm < ZETA, norm


def test_replace_one_is_charged_the_bounded_pair_not_the_antipodal_one():
    """Poisson replace-one with the soft clip: events ``"poisson_replace_bounded"``, whose PLD is
    dp-accounting's Poisson-subsampled Gaussian at 2ζ under add/remove (3.54 at q = ½, σ = 2ζ,
    δ = 1e-5; the REPLACE_ONE pair ±2ζ gave 4.23), no RDP, and zCDP at 2ζ (not 4ζ). The
    per-sample clip keeps the REPLACE_ONE pair (its terms are ±ζ/b around the rest's mean)."""
    problem, _ = soft_clip_pair(10, M, 5, replace=True)
    alg = algorithms.LTADMMDP(relation="replace_record", **POISSON)
    params = algorithms.LTADMMDPParams(zeta=ZETA, sigma_e=SIGMA)
    assert lp.privacy_events(alg, problem, params, 1).sampling == "poisson_replace_bounded"
    pld = lp.epsilon(alg, problem, params, 1, "pld", delta=1e-5)
    bounded = jdp.poisson_gaussian_epsilon(2 * ZETA / SIGMA, B / M, [1], 1e-5)[0]
    antipodal = jdp.poisson_gaussian_epsilon(2 * ZETA / SIGMA, B / M, [1], 1e-5, replace=True)[0]
    np.testing.assert_allclose(pld, bounded, rtol=1e-3)
    assert bounded < 0.9 * antipodal
    add_remove = dataclasses.replace(alg, relation=None)
    for method in ("zcdp", "pld"):
        np.testing.assert_allclose(lp.epsilon(alg, problem, params, 1, method, delta=1e-5),
                                   lp.epsilon(add_remove, problem, params, 1, method,
                                              delta=1e-5), rtol=1e-3)
    per_sample = dataclasses.replace(alg, clip="per_sample")
    assert lp.privacy_events(per_sample, problem, params, 1).sampling == "poisson_replace_one"


def _profile(p: np.ndarray, q: np.ndarray, eps: np.ndarray, cell: float) -> np.ndarray:
    """``δ(ε) = ∫ max(0, p − e^ε q)`` on a grid (``p``, ``q``: densities on the same cells)."""
    return np.stack([np.sum(np.maximum(p - np.exp(e) * q, 0.0), axis=-1) * cell for e in eps],
                    axis=-1)


def test_every_three_points_within_delta_stay_below_the_charged_pairs():
    """The charge of ``"poisson_replace_bounded"`` checked, not only argued: on the line, every
    ``(1 − q)N(c) + qN(a)`` against ``(1 − q)N(c) + qN(a')`` with c, a, a' pairwise within Δ (a
    9-point grid of each in [−Δ/2, Δ/2], which holds the attained C = A' and the REPLACE_ONE
    configuration c = 0, a = −a') has δ(ε) at most the larger of the Poisson pairs'
    ``((1 − q)N(0) + qN(Δ), N(0))`` and its reverse, at q ∈ {0.1, 0.5, 0.9}, Δ/σ ∈ {0.5, 2, 4},
    ε ∈ [0, 4] (σ = 1, the same quadrature for both)."""
    x = np.linspace(-14.0, 18.0, 6401)
    cell, eps = x[1] - x[0], np.array([0.0, 0.25, 0.5, 1.0, 2.0, 4.0])

    def pdf(mean):
        return np.exp(-0.5 * (x - np.asarray(mean)[..., None]) ** 2) / np.sqrt(2 * np.pi)

    for q, mu in itertools.product((0.1, 0.5, 0.9), (0.5, 2.0, 4.0)):
        top, base = (1 - q) * pdf(0.0) + q * pdf(mu), pdf(0.0)
        charged = np.maximum(_profile(top, base, eps, cell), _profile(base, top, eps, cell))
        grid = np.linspace(-mu / 2, mu / 2, 9)
        c, a, a2 = (g.ravel() for g in np.meshgrid(grid, grid, grid, indexing="ij"))
        worlds = [(1 - q) * pdf(c) + q * pdf(point) for point in (a, a2)]
        worst = np.max(_profile(*worlds, eps, cell), axis=0)
        assert np.all(worst <= charged * (1 + 1e-6) + 1e-9), (q, mu, worst - charged)  # quadrature
        attained = _profile((1 - q) * pdf(mu / 2) + q * pdf(-mu / 2), pdf(mu / 2), eps, cell)
        np.testing.assert_allclose(attained, _profile(top, base, eps, cell), rtol=1e-5, atol=1e-9)
