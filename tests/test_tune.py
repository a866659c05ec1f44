"""Differentiable tuning under a fixed privacy budget (DP-DGD)."""
import jax
import numpy as np
import pytest

from jaxdp import algorithms, privacy
from jaxdp.tune import mean_utility, seed_keys, tune
from tests.harness import small_network, small_problem

EPS, DELTA, STEPS = 50.0, 1e-5, 40


DPDGD = algorithms.DPDGD(sampler="float")
"""The float sampler: exactly reparameterized, so the gradient in (α, C) matches finite
differences, and its real-valued zCDP curve ("ideal zcdp") is what ``budget`` holds fixed (its
report's guarantee is inf: the floats released are not covered)."""


def budget(p):
    """DP-DGD's σ from (ε, δ): the noise std σC must be std(Δ=2C), i.e. σ = std(Δ=2) for any C."""
    return p.replace(sigma=privacy.closed_forms.gaussian_sigma_for_zcdp(EPS, DELTA, 2.0, STEPS))


@pytest.fixture(scope="module")
def setup():
    return small_problem("logistic"), small_network()


def test_utility_gradient_matches_finite_differences(setup):
    prob, net = setup
    keys = seed_keys(range(8))
    f = lambda a: mean_utility(DPDGD, prob, net,  # noqa: E731
                               budget(algorithms.DPDGDParams(alpha=a, clip=0.5)), keys,
                               steps=STEPS, utility="objective", checkpoint_every=8)
    g = jax.grad(f)(0.05)
    fd = (f(0.05 + 1e-5) - f(0.05 - 1e-5)) / 2e-5
    np.testing.assert_allclose(g, fd, rtol=1e-5)


def test_tuning_improves_held_out_utility_at_the_same_budget(setup):
    prob, net = setup
    start = budget(algorithms.DPDGDParams(alpha=0.005, clip=0.1))
    res = tune(DPDGD, prob, net, start, fields=("alpha", "clip"), steps=STEPS,
               seeds=8, held_out_seeds=64, calibrate=budget, iterations=25)
    (m0, h0), (m1, h1) = res.held_out["initial"], res.held_out["tuned"]
    assert m1 + h1 < m0 - h0, res.held_out  # better beyond both confidence intervals
    assert res.history[-1]["utility"] < res.history[0]["utility"]
    spent = DPDGD.privacy(prob, net, res.params, STEPS).final("ideal zcdp")
    np.testing.assert_allclose(spent, EPS, rtol=1e-9)  # the budget is exactly the same


def test_a_diverging_iterate_stops_tuning_at_the_last_finite_one(setup):
    """An optimizer step into divergence ends the loop with a reason; nothing becomes NaN."""
    import optax

    prob, net = setup
    jump = optax.GradientTransformation(  # every update multiplies α by e^4 (log space)
        lambda _: optax.EmptyState(), lambda g, s, p=None: (jax.tree.map(lambda x: x * 0 + 4, g), s))
    res = tune(algorithms.DGD(), prob, net, algorithms.DGDParams(alpha=0.05), fields=("alpha",),
               steps=400, seeds=2, held_out_seeds=4, optimizer=jump, iterations=5)
    assert res.stopped is not None and "not finite" in res.stopped
    assert len(res.history) >= 1 and float(res.params.alpha) == res.history[-1]["alpha"]
    assert all(np.isfinite(h["utility"]) for h in res.history)


def test_held_out_seeds_that_diverge_are_counted_not_averaged(setup):
    prob, net = setup
    res = tune(algorithms.DGD(), prob, net, algorithms.DGDParams(alpha=1e3), fields=("alpha",),
               steps=400, seeds=2, held_out_seeds=4, iterations=0)
    assert res.held_out["diverged"] == {"initial": 4, "tuned": 4}
    assert np.isnan(res.held_out["tuned"][0])


def test_tune_rejects_unknown_or_nonpositive_fields(setup):
    prob, net = setup
    with pytest.raises(ValueError, match="'beta' is not a field of DPDGDParams"):
        tune(algorithms.DPDGD(), prob, net, algorithms.DPDGDParams(), fields=("beta",), steps=2)
    with pytest.raises(ValueError, match="gamma must be > 0"):
        tune(algorithms.DPDGD(), prob, net, algorithms.DPDGDParams(), fields=("gamma",), steps=2)
