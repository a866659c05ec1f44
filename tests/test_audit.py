"""Empirical privacy audits: sound on known mechanisms, and they catch a leak."""
import math

import jax.numpy as jnp
import numpy as np
import pytest

from jaxdp import algorithms, network, problems
from jaxdp.attacks.audit import (
    audit,
    clopper_pearson_upper,
    epsilon_from_rates,
    epsilon_lower_bound,
    gaussian_mechanism_epsilon,
)


def test_clopper_pearson_and_rate_bound_by_hand():
    assert clopper_pearson_upper(0, 100, 0.05) == pytest.approx(1 - 0.05 ** (1 / 100))
    # max(log((1 - 0.1)/0.2), log((1 - 0.2)/0.1)) = log 8
    assert epsilon_from_rates(0.1, 0.2, 0.0) == pytest.approx(math.log(0.8 / 0.1))
    assert epsilon_from_rates(0.5, 0.5, 0.0) == 0.0


def test_gaussian_scores_give_a_sound_and_useful_bound():
    """N(0,1) vs N(μ,1): the bound is below the exact ε and a sizable fraction of it."""
    rng = np.random.default_rng(0)
    mu, delta = 2.0, 1e-5
    res = epsilon_lower_bound(rng.normal(0, 1, 200_000), rng.normal(mu, 1, 200_000), delta=delta)
    exact = gaussian_mechanism_epsilon(mu, delta)
    assert 0.4 * exact < res.epsilon_lower < exact, (res, exact)
    assert res.direction == 1


def test_identical_inputs_give_no_bound():
    rng = np.random.default_rng(1)
    res = epsilon_lower_bound(rng.normal(size=50_000), rng.normal(size=50_000), delta=1e-5)
    assert res.epsilon_lower < 0.05


def test_bad_scores_are_rejected():
    with pytest.raises(ValueError, match="at least 20 scores"):
        epsilon_lower_bound(np.zeros(5), np.zeros(30), delta=1e-5)
    with pytest.raises(ValueError, match="finite"):
        epsilon_lower_bound(np.r_[np.zeros(30), np.nan], np.zeros(30), delta=1e-5)


def _neighbours():
    """Two logistic problems that differ only in agent 0's labels (flipped)."""
    base = problems.logistic(n_agents=4, m=8, d=2, lam=0.0, seed=2, reference=False)
    flipped = base.labels.at[0].multiply(-1.0)
    other = problems.from_arrays(np.asarray(base.features), np.asarray(flipped), loss="logistic",
                                 reg={"lam": 0.0}, reference=False)
    return base, other


def test_dp_dgd_audit_stays_below_its_accountant_and_catches_a_leak():
    """One DP-DGD step: the bound is below the exact Gaussian ε; with tiny noise it is large."""
    p0, p1 = _neighbours()
    net = network.make_network("ring", 4)
    g0, g1 = (np.asarray(p.local_grads(jnp.zeros((4, 2))))[0] for p in (p0, p1))
    clip = 0.5 * min(np.linalg.norm(g0), np.linalg.norm(g1))  # both clipped: Δ = ‖c0 − c1‖ = 2C
    u = jnp.asarray((g1 - g0) / np.linalg.norm(g1 - g0))

    def statistic(observed):  # agent 0's model after one step, projected on the difference
        return -observed["models"][0, 0] @ u

    alg = algorithms.DPDGD()
    params = algorithms.DPDGDParams(alpha=0.1, clip=float(clip), sigma=2.0)
    res = audit(alg, p0, p1, net, params, statistic, steps=1, seeds=20_000, delta=1e-5)
    exact = gaussian_mechanism_epsilon(2.0 / 2.0, 1e-5)  # μ = Δ/(σC) = 2C/(2C) = 1
    assert 0 < res.epsilon_lower < exact
    report = alg.privacy(p0, net, params, steps=1)
    assert res.epsilon_lower < float(report.final("rdp").max())

    leaky = params.replace(sigma=1e-3)
    assert audit(alg, p0, p1, net, leaky, statistic, steps=1, seeds=2_000,
                 delta=1e-5).epsilon_lower > 5.0
