"""Tests for jaxdp.privacy: mechanisms, events, closed forms, dp-accounting, report, calibration."""
import json
import math
import warnings

import dp_accounting as dpa
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from dp_accounting.rdp.rdp_privacy_accountant import DEFAULT_RDP_ORDERS

from jaxdp import privacy as jdp

DELTA = 1e-5


def _gaussian_decaying(n_agents=2, steps=30):
    """Gaussian releases with Δ = 1 and σ_k = 5·0.97^k."""
    return jdp.PrivacyEvents.from_schedule("gaussian", 1.0, 5.0 * 0.97 ** np.arange(steps),
                                         n_agents, steps)


def _laplace_decaying(n_agents=2, steps=20):
    """Laplace releases with Δ = 1 and b_k = 10·0.9^k (per-step ε from 0.1 to 0.74)."""
    return jdp.PrivacyEvents.from_schedule("laplace", 1.0, 10.0 * 0.9 ** np.arange(steps),
                                         n_agents, steps)


def _accountant_epsilon(accountant, events_list, delta=DELTA):
    accountant.compose(dpa.ComposedDpEvent(list(events_list)))
    return accountant.get_epsilon(delta)


# ----------------------------------------------------------------------------------- mechanisms


def test_standard_draws_have_unit_scale_moments():
    """Standard Laplace has mean 0 and variance 2; standard normal mean 0 and variance 1."""
    key_l, key_g = jax.random.split(jax.random.PRNGKey(0))
    lap = jax.jit(jdp.samplers.laplace, static_argnums=(1,))(key_l, (400_000,))
    gau = jdp.samplers.gaussian(key_g, (400_000,))
    assert lap.dtype == gau.dtype == jnp.float64
    np.testing.assert_allclose([lap.mean(), lap.var()], [0.0, 2.0], atol=0.02)
    np.testing.assert_allclose([gau.mean(), gau.var()], [0.0, 1.0], atol=0.01)


def test_like_draws_follow_shape_and_dtype():
    """``laplace_like`` / ``gaussian_like`` copy the shape and dtype of their template."""
    x = jnp.zeros((3, 4), dtype=jnp.float32)
    key = jax.random.PRNGKey(1)
    for draw in (jdp.samplers.laplace_like(key, x), jdp.samplers.gaussian_like(key, x)):
        assert draw.shape == (3, 4) and draw.dtype == jnp.float32
    assert jdp.samplers.laplace(key, (2,), jnp.float32).dtype == jnp.float32


def test_gradient_of_scaled_draws_wrt_scale_is_sum_of_draws():
    """Reparameterized draws: d/ds Σ s·ξ = Σ ξ."""
    key = jax.random.PRNGKey(2)
    for draw in (jdp.samplers.laplace, jdp.samplers.gaussian):
        xi = draw(key, (5, 3))
        grad = jax.grad(lambda s, draw=draw: jnp.sum(s * draw(key, (5, 3))))(0.7)
        np.testing.assert_allclose(grad, jnp.sum(xi), rtol=1e-12)


def test_clip_by_norm_bounds_rows_and_is_safe_at_zero():
    """Rows above c are scaled to norm c, others untouched, the zero row has finite gradients."""
    g = jnp.array([[3.0, 4.0], [0.3, 0.4], [0.0, 0.0]])
    clipped = jdp.clip_by_norm(g, 1.0)
    np.testing.assert_allclose(jnp.linalg.norm(clipped, axis=-1), [1.0, 0.5, 0.0], atol=1e-15)
    np.testing.assert_allclose(clipped[0], [0.6, 0.8], rtol=1e-15)
    np.testing.assert_array_equal(clipped[1:], g[1:])
    grad = jax.grad(lambda g: jnp.sum(jdp.clip_by_norm(g, 1.0) ** 2))(g)
    assert bool(jnp.all(jnp.isfinite(grad)))
    per_row = jdp.clip_by_norm(g, jnp.array([2.0, 0.1, 1.0]))
    np.testing.assert_allclose(jnp.linalg.norm(per_row, axis=-1), [2.0, 0.1, 0.0], atol=1e-15)


def test_clip_factor_soft_matches_formula():
    """g·ζ/(ζ+‖g‖): norm ζ‖g‖/(ζ+‖g‖) < ζ, zero stays zero with finite gradients."""
    g = jnp.array([[3.0, 4.0], [0.0, 0.0]])
    out = jdp.clip_factor_soft(g, 2.0)
    np.testing.assert_allclose(out[0], g[0] * 2.0 / 7.0, rtol=1e-15)
    np.testing.assert_array_equal(out[1], 0.0)
    grad = jax.grad(lambda g: jnp.sum(jdp.clip_factor_soft(g, 2.0)))(g)
    assert bool(jnp.all(jnp.isfinite(grad)))


# ------------------------------------------------------------------------------------- events


def test_from_schedule_broadcasts_scalars_agents_and_steps():
    """Scalars, (N,), (K,) and (N, K) all become (N, K) float64 arrays."""
    ev = jdp.PrivacyEvents.from_schedule("laplace", np.array([1.0, 2.0, 3.0]),
                                       0.5 * np.arange(1, 5), 3, 4, description="x")
    assert ev.sensitivity.shape == ev.scale.shape == ev.sampling_rate.shape == (3, 4)
    np.testing.assert_array_equal(ev.sensitivity[:, 0], [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(ev.scale[1], [0.5, 1.0, 1.5, 2.0])
    np.testing.assert_array_equal(ev.sampling_rate, 1.0)
    np.testing.assert_allclose(ev.log_scale, np.log(ev.scale), rtol=1e-15)
    assert (ev.n_agents, ev.steps, len(ev.streams)) == (3, 4, 1)


def test_log_scale_represents_scales_below_float64():
    """``log_scale`` keeps scales such as 0.1^500 that underflow to 0."""
    ev = jdp.PrivacyEvents.from_schedule("laplace", 1.0, None, 1, 500,
                                       log_scale=np.log(0.1) * np.arange(500))
    assert ev.scale[0, -1] == 0.0 and np.isfinite(ev.log_scale[0, -1])


@pytest.mark.parametrize("kwargs, match", [
    ({"sensitivity": -1.0}, r"sensitivity must be finite and >= 0; got -1.0 at agent 0, step 0"),
    ({"scale": np.array([1.0, 0.0, 1.0])}, r"scale must be > 0 .*got 0.0 at agent 0, step 1"),
    ({"scale": np.ones(5)}, r"1-D schedule must have length N=2 .* or K=3"),
    ({"mechanism": "gauss"}, r"mechanism must be one of .*'gauss'"),
    ({"sampling_rate": 1.5}, r"sampling_rate must be in \[0, 1\]; got 1.5"),
    ({"n_agents": 3}, r"ambiguous when n_agents == steps == 3"),
], ids=["negative-sensitivity", "zero-scale", "shape", "mechanism", "sampling-rate", "ambiguous"])
def test_invalid_events_raise(kwargs, match):
    """Bad inputs name the bad value and where it is."""
    args = {"mechanism": "laplace", "sensitivity": 1.0, "scale": np.ones(3), "n_agents": 2,
            "steps": 3}
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        jdp.PrivacyEvents.from_schedule(args.pop("mechanism"), args.pop("sensitivity"),
                                      args.pop("scale"), **args)


def test_direct_construction_checks_shapes():
    """The dataclass itself rejects mismatched (N, K) shapes."""
    with pytest.raises(ValueError, match=r"scale has shape \(2, 4\); expected \(2, 3\)"):
        jdp.PrivacyEvents(mechanism="gaussian", sensitivity=np.ones((2, 3)), scale=np.ones((2, 4)))


def test_concat_holds_every_stream():
    """concat flattens streams; every stream keeps its mechanism; shapes must match."""
    a, b = _laplace_decaying(), _gaussian_decaying(steps=20)
    ab = jdp.contract.concat([a, jdp.contract.concat([b, a])])
    assert [s.mechanism for s in ab.streams] == ["laplace", "gaussian", "laplace"]
    with pytest.raises(ValueError, match="extra_streams must be single streams of shape"):
        jdp.contract.concat([a, _gaussian_decaying(steps=30)])
    with pytest.raises(ValueError, match="empty list"):
        jdp.contract.concat([])


# ------------------------------------------------------------------------------- closed forms


def test_laplace_constant_scale_composes_linearly():
    """Δ = 1, b = 2 for 10 steps: ε_k = k/2, final 5."""
    curve = jdp.closed_forms.laplace_epsilon_curve(jnp.ones(10), 2.0 * jnp.ones(10))
    np.testing.assert_allclose(curve, 0.5 * np.arange(1, 11), rtol=1e-15)


def test_laplace_geometric_scales_match_geometric_sum():
    """b_k = u r^k, k = 0..K-1: ε_K = Δ/u · (r^{-K} − 1)/(1/r − 1), in linear and log space."""
    delta_, u, r, K = 0.3, 2.0, 0.9, 40
    k = jnp.arange(K)
    expected = delta_ / u * (r ** -K - 1) / (1 / r - 1)
    linear = jdp.closed_forms.laplace_epsilon_curve(delta_ * jnp.ones(K), u * r ** k)
    logs = jdp.closed_forms.log_laplace_epsilon_curve(jnp.log(delta_) * jnp.ones(K),
                                                      jnp.log(u) + k * jnp.log(r))
    np.testing.assert_allclose(linear[-1], expected, rtol=1e-12)
    np.testing.assert_allclose(jnp.exp(logs), linear, rtol=1e-12)


def test_log_laplace_curve_stays_finite_beyond_float64():
    """r = 0.1, K = 500 (paper 000): log10 ε = log10((10^500 − 1)/9) ≈ 499.0458, not inf."""
    k = jnp.arange(500)
    logs = jdp.closed_forms.log_laplace_epsilon_curve(jnp.zeros(500), k * jnp.log(0.1))
    assert bool(jnp.all(jnp.isfinite(logs)))
    np.testing.assert_allclose(logs[-1] / np.log(10), 500 - np.log10(9), rtol=1e-12)
    assert np.isinf(jdp.closed_forms.laplace_epsilon_curve(jnp.ones(500), 0.1 ** k)[-1])


def test_closed_forms_vmap_and_differentiate():
    """Closed forms batch over agents with vmap and have exact gradients."""
    sens, scale = jnp.ones((3, 5)), jnp.arange(1.0, 16.0).reshape(3, 5)
    batched = jax.vmap(jdp.closed_forms.laplace_epsilon_curve)(sens, scale)
    np.testing.assert_allclose(batched, jdp.closed_forms.laplace_epsilon_curve(sens, scale),
                               rtol=1e-15)
    grad = jax.grad(lambda b: jdp.closed_forms.laplace_epsilon_curve(jnp.ones(5), b)[-1])(scale[0])
    np.testing.assert_allclose(grad, -1.0 / scale[0] ** 2, rtol=1e-12)
    grad = jax.grad(lambda s: jdp.closed_forms.zcdp_to_dp(
        jdp.closed_forms.gaussian_zcdp(jnp.ones(4), s)[-1], DELTA))(3.0)
    assert bool(jnp.isfinite(grad)) and grad < 0


def test_gaussian_zcdp_and_conversion_by_hand():
    """ρ_t = Δ²/(2σ²) accumulates; ε = ρ + 2√(ρ ln 1/δ); zcdp_for_epsilon inverts it."""
    rho = jdp.closed_forms.gaussian_zcdp(jnp.array([1.0, 2.0]), jnp.array([2.0, 2.0]))
    np.testing.assert_allclose(rho, [0.125, 0.625], rtol=1e-15)
    eps = jdp.closed_forms.zcdp_to_dp(0.625, DELTA)
    np.testing.assert_allclose(eps, 0.625 + 2 * math.sqrt(0.625 * math.log(1 / DELTA)), rtol=1e-15)
    np.testing.assert_allclose(jdp.closed_forms.zcdp_for_epsilon(eps, DELTA), 0.625, rtol=1e-12)


def test_default_orders_refine_dp_accounting():
    """DEFAULT_ORDERS holds every order of dp-accounting 0.6's DEFAULT_RDP_ORDERS, increasing, and
    orders in (1, 1.1)."""
    ours, theirs = jdp.closed_forms.DEFAULT_ORDERS, np.asarray(DEFAULT_RDP_ORDERS, dtype=float)
    assert np.all(np.diff(ours) > 0)
    assert np.all(np.min(np.abs(ours[:, None] - theirs[None, :]), axis=0) < 1e-12)
    assert np.sum((ours > 1) & (ours < 1.1)) >= 9


def test_gaussian_rdp_matches_rdp_accountant_on_decaying_noise():
    """Σ α Δ²/(2σ_k²) and the improved conversion equal RdpAccountant at the same orders."""
    sigma = 5.0 * 0.97 ** np.arange(30)
    rdp = jdp.closed_forms.gaussian_rdp(jdp.closed_forms.DEFAULT_ORDERS, jnp.ones(30),
                                        jnp.asarray(sigma))
    accountant = dpa.rdp.RdpAccountant(orders=jdp.closed_forms.DEFAULT_ORDERS)
    expected = _accountant_epsilon(accountant, [dpa.GaussianDpEvent(s) for s in sigma])
    np.testing.assert_allclose(rdp, accountant.rdp, rtol=1e-12)
    np.testing.assert_allclose(jdp.closed_forms.rdp_to_dp(jdp.closed_forms.DEFAULT_ORDERS, rdp,
                                                          DELTA), expected, rtol=1e-6)
    for delta in (1e-3, 1e-8):  # dp-accounting's compute_epsilon, directly
        ref, _ = dpa.rdp.rdp_privacy_accountant.compute_epsilon(jdp.closed_forms.DEFAULT_ORDERS,
                                                                rdp, delta)
        np.testing.assert_allclose(jdp.closed_forms.rdp_to_dp(jdp.closed_forms.DEFAULT_ORDERS, rdp,
                                                              delta), ref, rtol=1e-12)


def test_standard_rdp_conversion_is_mironovs_and_looser():
    """method="standard" is min_α rdp + log(1/δ)/(α−1), never below the improved conversion."""
    orders = jnp.asarray(jdp.closed_forms.DEFAULT_ORDERS)
    rdp = jdp.closed_forms.gaussian_rdp(orders, jnp.ones((2, 10)),
                                        jnp.array([[3.0] * 10, [8.0] * 10]))
    standard = jdp.closed_forms.rdp_to_dp(orders, rdp, DELTA, method="standard")
    manual = np.min(np.asarray(rdp) + np.log(1 / DELTA) / (jdp.closed_forms.DEFAULT_ORDERS - 1),
                    axis=-1)
    np.testing.assert_allclose(standard, manual, rtol=1e-12)
    assert np.all(standard >= jdp.closed_forms.rdp_to_dp(orders, rdp, DELTA))
    with pytest.raises(ValueError, match="method must be 'improved' or 'standard'; got 'x'"):
        jdp.closed_forms.rdp_to_dp(orders, rdp, DELTA, method="x")


# ------------------------------------------------------------------------ dp-accounting bridge


def test_pld_of_laplace_sequence_is_below_pure_dp_sum():
    """Decaying Laplace noise: ε_PLD(δ) ≤ ε_RDP(δ) ≤ Σ Δ/b_k, within a factor 2 of the sum."""
    ev = _laplace_decaying()
    pure = jdp.closed_form_curve(ev, DELTA)[1][:, -1]
    np.testing.assert_allclose(pure, np.sum(1 / (10 * 0.9 ** np.arange(20))), rtol=1e-12)
    pld, rdp = jdp.pld_epsilon(ev, DELTA), jdp.rdp_epsilon(ev, DELTA)
    assert pld.shape == rdp.shape == (2,)
    assert np.all(pld <= rdp) and np.all(rdp <= pure) and np.all(pld >= 0.5 * pure)


def test_gaussian_sequence_orders_pld_rdp_zcdp():
    """Decaying σ: ε_PLD ≤ ε_RDP ≤ ε_zCDP; rdp_epsilon equals the JAX closed form."""
    ev = _gaussian_decaying()
    rdp = jdp.rdp_epsilon(ev, DELTA)
    closed = jdp.closed_forms.rdp_to_dp(jdp.closed_forms.DEFAULT_ORDERS,
                                        jdp.closed_forms.gaussian_rdp(jdp.closed_forms.DEFAULT_ORDERS,
                                                                      jnp.asarray(ev.sensitivity),
                                                                      jnp.asarray(ev.scale)), DELTA)
    np.testing.assert_allclose(rdp, closed, rtol=1e-6)
    zcdp = jdp.closed_forms.zcdp_to_dp(jdp.closed_forms.gaussian_zcdp(ev.sensitivity,
                                                                      ev.scale)[:, -1], DELTA)
    assert np.all(jdp.pld_epsilon(ev, DELTA) <= rdp) and np.all(rdp <= zcdp)


def test_curves_are_per_agent_and_end_at_the_final_value():
    """Agents with equal schedules agree, curves grow, and their last point is the final ε."""
    scale = np.array([[2.0] * 8, [4.0] * 8, [2.0] * 8])
    ev = jdp.PrivacyEvents.from_schedule("gaussian", 1.0, scale, 3, 8)
    for accountant in (jdp.rdp_epsilon, jdp.pld_epsilon):
        final, curve = accountant(ev, DELTA), accountant(ev, DELTA, at_steps=[1, 4, 8])
        assert curve.shape == (3, 3)
        assert final[0] == final[2] and final[1] < final[0]
        assert np.all(np.diff(curve, axis=1) > 0)
        np.testing.assert_allclose(curve[:, -1], final, rtol=1e-4)


def test_poisson_subsampling_matches_dp_accounting_and_amplifies():
    """q < 1 is a PoissonSampledDpEvent: ε as dp-accounting's, smaller than without sampling."""
    ev = jdp.PrivacyEvents.from_schedule("gaussian", 2.0, 2.0, 1, 100, sampling_rate=0.01)
    event = dpa.SelfComposedDpEvent(dpa.PoissonSampledDpEvent(0.01, dpa.GaussianDpEvent(1.0)), 100)
    np.testing.assert_allclose(jdp.rdp_epsilon(ev, DELTA),
                               _accountant_epsilon(dpa.rdp.RdpAccountant(
                                   orders=jdp.closed_forms.DEFAULT_ORDERS), [event]), rtol=1e-12)
    full = jdp.PrivacyEvents.from_schedule("gaussian", 2.0, 2.0, 1, 100)
    assert jdp.pld_epsilon(ev, DELTA)[0] < 0.2 * jdp.pld_epsilon(full, DELTA)[0]


def test_sampling_without_replacement_is_accounted_under_replace_one():
    """A fixed-size batch (b of m, replace-one sensitivity) is dp-accounting's
    SampledWithoutReplacementDpEvent with a REPLACE_ONE RdpAccountant; the PLD is that of its
    dominating pairs, dp-accounting's Poisson-subsampled Gaussian of rate b/m (Zhu, Dong & Wang
    2022), below the RDP curve."""
    ev = jdp.PrivacyEvents.from_schedule("gaussian", 2.0, 2.0, 2, 50, sampling_rate=8 / 100,
                                         sampling="without_replacement", dataset_size=100)
    assert np.all(ev.batch_sizes() == 8)
    acc = dpa.rdp.RdpAccountant(orders=jdp.closed_forms.DEFAULT_ORDERS,
                                neighboring_relation=dpa.NeighboringRelation.REPLACE_ONE)
    acc.compose(dpa.SelfComposedDpEvent(dpa.SampledWithoutReplacementDpEvent(
        100, 8, dpa.GaussianDpEvent(1.0)), 50))
    np.testing.assert_allclose(jdp.rdp_epsilon(ev, DELTA), acc.get_epsilon(DELTA), rtol=1e-12)
    pairs = {}
    for interval in (1e-3, 1e-5):  # the report's grid, refined where that lowers ε by > 1 %
        pairs[interval] = dpa.pld.PLDAccountant(value_discretization_interval=interval)
        pairs[interval].compose(dpa.SelfComposedDpEvent(dpa.PoissonSampledDpEvent(
            0.08, dpa.GaussianDpEvent(1.0)), 50))
    pld = jdp.pld_epsilon(ev, DELTA)
    assert np.all(pairs[1e-5].get_epsilon(DELTA) - 1e-9 <= pld)
    assert np.all(pld <= pairs[1e-3].get_epsilon(DELTA) + 1e-12)
    assert np.all(pld < jdp.rdp_epsilon(ev, DELTA))


@pytest.mark.parametrize("kwargs, match", [
    ({"sampling": "shuffle"}, r"sampling must be one of"),
    ({"sampling": "without_replacement"}, r"needs dataset_size"),
    ({"dataset_size": 100}, r"dataset_size is for sampling='without_replacement'"),
    ({"sampling": "without_replacement", "dataset_size": 99}, r"integer batch size"),
], ids=["unknown", "no-size", "size-with-poisson", "fractional-batch"])
def test_sampling_schemes_are_checked(kwargs, match):
    with pytest.raises(ValueError, match=match):
        jdp.PrivacyEvents.from_schedule("gaussian", 1.0, 1.0, 1, 3, sampling_rate=0.08, **kwargs)


def test_schemes_cannot_be_mixed_in_one_accountant():
    wor = jdp.PrivacyEvents.from_schedule("gaussian", 1.0, 1.0, 1, 3, sampling_rate=0.5,
                                          sampling="without_replacement", dataset_size=4)
    poisson = jdp.PrivacyEvents.from_schedule("gaussian", 1.0, 1.0, 1, 3, sampling_rate=0.5)
    with pytest.raises(ValueError, match="mix subsampled releases of schemes"):
        jdp.rdp_epsilon(jdp.contract.concat([wor, poisson]), DELTA)


def test_streams_compose_like_merged_noise():
    """Two Gaussian streams equal one with 1/z² = 1/z₁² + 1/z₂²; Laplace pure-DP sums streams."""
    a = jdp.PrivacyEvents.from_schedule("gaussian", 1.0, 3.0, 1, 10)
    b = jdp.PrivacyEvents.from_schedule("gaussian", 1.0, 4.0, 1, 10)
    merged = jdp.PrivacyEvents.from_schedule("gaussian", 1.0, 2.4, 1, 10)  # 1/9 + 1/16 = 1/2.4²
    np.testing.assert_allclose(jdp.rdp_epsilon(jdp.contract.concat([a, b]), DELTA),
                               jdp.rdp_epsilon(merged, DELTA), rtol=1e-9)
    lap = _laplace_decaying()
    np.testing.assert_allclose(jdp.closed_form_curve(jdp.contract.concat([lap, lap]), DELTA)[1],
                               2 * jdp.closed_form_curve(lap, DELTA)[1], rtol=1e-12)
    assert np.all(jdp.pld_epsilon(jdp.contract.concat([lap, lap]), DELTA)
                  < 2 * jdp.pld_epsilon(lap, DELTA))


def test_pld_falls_back_to_closed_form_for_huge_ratios():
    """A release with Δ/scale > max_step_ratio skips the PLD grid: a warning and the closed form."""
    ev = jdp.PrivacyEvents.from_schedule("laplace", np.array([1.0, 100.0]), 1.0, 2, 3)
    with pytest.warns(UserWarning, match=r"agent\(s\) \[1\] .* max_step_ratio=50.0"):
        eps = jdp.pld_epsilon(ev, DELTA)
    np.testing.assert_allclose(eps[1], 300.0, rtol=1e-12)
    assert eps[0] < 3.0


def test_zero_sensitivity_releases_cost_nothing():
    """Δ = 0 (a message independent of the agent's data) adds no privacy loss in any accountant."""
    sens = np.array([[0.0, 1.0, 1.0], [0.0, 0.0, 0.0]])
    ev = jdp.PrivacyEvents.from_schedule("gaussian", sens, 2.0, 2, 3)
    ref = jdp.PrivacyEvents.from_schedule("gaussian", 1.0, 2.0, 1, 2)
    for accountant in (jdp.rdp_epsilon, jdp.pld_epsilon):
        eps = accountant(ev, DELTA)
        np.testing.assert_allclose(eps[0], accountant(ref, DELTA)[0], rtol=1e-12)
        assert eps[1] == 0.0
    assert jdp.closed_form_curve(ev, DELTA)[1][1, -1] == 0.0


def test_host_closed_form_is_float64_without_x64():
    """closed_form_curve computes in float64 even when the caller has x64 off."""
    ev = jdp.PrivacyEvents.from_schedule("laplace", 1.0, None, 1, 500,
                                         log_scale=np.log(0.1) * np.arange(500))
    with jax.enable_x64(False):
        _, eps, log10 = jdp.closed_form_curve(ev, DELTA)
    assert eps.dtype == log10.dtype == np.float64
    np.testing.assert_allclose(log10[0, -1], 500 - np.log10(9), rtol=1e-12)


def test_bridge_rejects_bad_inputs():
    """Bad δ, bad at_steps and subsampled Laplace under RDP raise clear errors."""
    ev = _laplace_decaying()
    with pytest.raises(ValueError, match=r"delta must be in \(0, 1\); got 0"):
        jdp.pld_epsilon(ev, 0)
    with pytest.raises(ValueError, match=r"strictly increasing step counts in \[1, 20\]"):
        jdp.rdp_epsilon(ev, DELTA, at_steps=[5, 21])
    sub = jdp.PrivacyEvents.from_schedule("laplace", 1.0, 1.0, 1, 3, sampling_rate=0.5)
    with pytest.raises(ValueError, match=r"Poisson-subsampled Laplace .* use pld_epsilon"):
        jdp.rdp_epsilon(sub, DELTA)


# ------------------------------------------------------------------------------------- report


def test_report_from_events_serialises_tabulates_and_plots():
    """Standard curves exist per agent, to_dict is JSON, table names each method, plot draws."""
    from matplotlib.figure import Figure

    events = _gaussian_decaying(n_agents=3)
    report = jdp.PrivacyReport.from_events(events, DELTA, at_steps=[1, 15, 30])
    assert report.methods == ("zcdp", "rdp", "pld")
    assert report.final("pld").shape == (3,) and report.worst("rdp") == report.final("rdp").max()
    json.dumps(report.to_dict())
    table = report.table()
    assert all(name in table for name in report.methods)
    ax = report.plot(ax=Figure().subplots())
    assert len(ax.get_lines()) == 1 + len(report.methods) and ax.get_yscale() == "log"  # + guarantee
    with pytest.raises(ValueError, match=r"no privacy curve 'theorem'; this report has"):
        report.final("theorem")
    with pytest.raises(ValueError, match=r"unknown privacy method\(s\) \['exact'\]"):
        jdp.PrivacyReport.from_events(_gaussian_decaying(), DELTA, methods=("exact",))


def test_report_keeps_log10_of_budgets_beyond_float64():
    """r = 0.1, K = 500: ε is inf in float64 but log10 ε ≈ 499.05 in the dict, table and plot."""
    from matplotlib.figure import Figure

    ev = jdp.PrivacyEvents.from_schedule("laplace", 1.0, None, 2, 500,
                                       log_scale=np.log(0.1) * np.arange(500))
    report = jdp.PrivacyReport.from_events(ev, DELTA, methods=("closed_form",))
    assert np.isinf(report.worst("pure_dp"))
    log10 = report.to_dict()["methods"]["pure_dp"]["log10_epsilon"]
    np.testing.assert_allclose(log10[0][-1], 500 - np.log10(9), rtol=1e-12)
    assert "10^499.05" in report.table()
    assert report.plot(ax=Figure().subplots()).get_ylabel() == "log10 ε"
    json.dumps(report.to_dict())


def test_with_curve_adds_a_theorem_curve():
    """with_curve adds a named curve and note; a wrong shape is rejected."""
    report = jdp.PrivacyReport.from_events(_laplace_decaying(), DELTA, methods=("closed_form",))
    theorem = 2 * report.curves["pure_dp"]
    report2 = report.with_curve("theorem", theorem, note="Thm 3, as printed")
    np.testing.assert_array_equal(report2.final("theorem"), theorem[:, -1])
    assert report2.notes["theorem"] == "Thm 3, as printed" and "theorem" not in report.curves
    with pytest.raises(ValueError, match=r"curves must all be \(N, 20\)"):
        report.with_curve("theorem", theorem[:, :3])


# -------------------------------------------------------------------------------- calibration


@pytest.mark.parametrize("method, q, rtol", [
    ("zcdp", 1.0, 1e-6), ("rdp", 1.0, 1e-6), ("rdp", 0.05, 1e-6), ("pld", 1.0, 1e-3),
])
def test_calibrated_sigma_round_trips(method, q, rtol):
    """The calibrated σ gives the target ε back under the same accountant, never above it."""
    target, delta, sens, steps = 2.0, 1e-5, 0.5, 50
    sigma = jdp.calibrate_gaussian_sigma(target, delta, sens, steps, sampling_rate=q, method=method)
    ev = jdp.PrivacyEvents.from_schedule("gaussian", sens, sigma, 1, steps, sampling_rate=q)
    eps = {
        "zcdp": lambda: jdp.closed_forms.zcdp_to_dp(
            jdp.closed_forms.gaussian_zcdp(ev.sensitivity, ev.scale)[0, -1], delta),
        "rdp": lambda: jdp.rdp_epsilon(ev, delta)[0],
        "pld": lambda: jdp.pld_epsilon(ev, delta, 1e-4)[0],
    }[method]()
    np.testing.assert_allclose(eps, target, rtol=rtol)
    assert eps <= target * (1 + 1e-12)


def test_calibrated_laplace_scale_round_trips_with_decay():
    """b with scales b·r^k meets the pure-DP target exactly."""
    b = jdp.calibrate_laplace_scale(3.0, 0.7, 40, decay=0.95)
    k = jnp.arange(40)
    eps = jdp.closed_forms.laplace_epsilon_curve(0.7 * jnp.ones(40), b * 0.95 ** k)
    np.testing.assert_allclose(eps[-1], 3.0, rtol=1e-12)


def test_gaussian_sigma_for_zcdp_is_differentiable():
    """σ(ε) from the analytic zCDP inverse matches central differences and the host calibration."""
    def f(eps):
        return jdp.closed_forms.gaussian_sigma_for_zcdp(eps, DELTA, 1.0, 100)

    grad, h = jax.grad(f)(1.0), 1e-6
    np.testing.assert_allclose(grad, (f(1.0 + h) - f(1.0 - h)) / (2 * h), rtol=1e-6)
    host = jdp.calibrate_gaussian_sigma(1.0, DELTA, 1.0, 100)
    np.testing.assert_allclose(f(1.0), host, rtol=1e-12)
    sigmas = jax.vmap(f)(jnp.array([0.5, 1.0, 2.0]))
    assert bool(jnp.all(jnp.diff(sigmas) < 0))


@pytest.mark.parametrize("call, match", [
    (lambda: jdp.calibrate_gaussian_sigma(0.0, DELTA, 1.0, 10), r"target_epsilon .* got 0.0"),
    (lambda: jdp.calibrate_gaussian_sigma(1.0, 1.5, 1.0, 10), r"delta must be in .* got 1.5"),
    (lambda: jdp.calibrate_gaussian_sigma(1.0, DELTA, 1.0, 0), r"steps must be an integer >= 1"),
    (lambda: jdp.calibrate_gaussian_sigma(1.0, DELTA, 1.0, 10, sampling_rate=0.1),
     r"method='zcdp' has no subsampling amplification"),
    (lambda: jdp.calibrate_gaussian_sigma(1.0, DELTA, 1.0, 10, method="gdp"), r"got 'gdp'"),
    (lambda: jdp.calibrate_laplace_scale(-1.0, 1.0, 10), r"target_epsilon must be .* got -1.0"),
    (lambda: jdp.calibrate_laplace_scale(1.0, 1.0, 500, decay=0.1), r"10\^499.05, beyond float64"),
], ids=["eps0", "delta", "steps", "zcdp-q", "method", "laplace-eps", "laplace-overflow"])
def test_calibration_errors_name_the_value(call, match):
    """Unmeetable or invalid targets raise a ValueError naming the value."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match=match):
            call()


@pytest.mark.parametrize("name, law", [("gaussian", "norm"), ("laplace", "laplace")])
def test_noise_draws_pass_a_kolmogorov_smirnov_test(name, law):
    """The inverse-transform samplers are standard normal / standard Laplace (KS test, float32
    and float64; variance 1 / 2), for typed and raw threefry keys and another implementation."""
    import jax.numpy as jnp
    from scipy import stats

    draw = getattr(jdp.samplers, name)
    keys = (jax.random.key(7), jax.random.PRNGKey(8), jax.random.key(9, impl="rbg"))
    for dtype, key in zip((jnp.float32, jnp.float64, jnp.float32), keys):
        with jax.enable_x64(dtype == jnp.float64):
            z = np.asarray(draw(key, (301, 333), dtype))
        assert z.dtype == dtype and z.shape == (301, 333)
        assert stats.kstest(z.ravel(), law).pvalue > 1e-3
        var, var_of_square = (1.0, 2.0) if law == "norm" else (2.0, 20.0)
        assert abs(z.var() - var) < 5 * math.sqrt(var_of_square / z.size)  # 5 standard errors
        if law == "norm":
            assert abs(stats.kurtosis(z.ravel())) < 0.05


def test_noise_draws_reach_their_far_tails():
    """The extreme words give the extreme draws: 6.34σ (float32) and 9.16σ (float64) for the
    Gaussian, 22.2 and 44.4 for the Laplace — past the 5.2–5.4σ where a transform of one 23-bit
    uniform stops; and the sign bit alone flips the sign."""
    import jax.numpy as jnp
    from scipy import stats

    from jaxdp.privacy._mechanisms import (_laplace_from_tail, _normal_from_tail,
                                           _signed_tail)

    for words_per_draw, dtype in ((1, jnp.float32), (2, jnp.float64)):
        with jax.enable_x64(dtype == jnp.float64):
            extreme = jnp.zeros((words_per_draw, 2), jnp.uint32).at[0, 1].set(1)  # sign bit
            tail = _signed_tail(extreme, dtype)
            z, lap = np.asarray(_normal_from_tail(*tail)), np.asarray(_laplace_from_tail(*tail))
        bits = 32 * words_per_draw
        np.testing.assert_allclose(z, np.array([-1, 1]) * stats.norm.isf(2.0 ** -(bits + 1)),
                                   rtol=1e-5)
        np.testing.assert_allclose(lap, np.array([-1, 1]) * bits * math.log(2), rtol=1e-6)
    assert stats.norm.isf(2.0 ** -33) > 6.3 and stats.norm.isf(2.0 ** -65) > 9.1


# -- log-space Gaussian closed forms ---------------------------------------------------------------
@pytest.mark.parametrize("log_ratio", [-3.0, 0.0, 5.0, 200.0, 800.0])
def test_log_space_gaussian_closed_forms_match_and_stay_finite(log_ratio):
    """log_gaussian_zcdp / log_zcdp_to_dp / log_rdp_to_dp equal the linear forms where those are
    finite (1e-12) and stay finite (and exact to first order) where Δ/σ = e^800 overflows them."""
    with jax.enable_x64(True):
        log_rho = jdp.closed_forms.log_gaussian_zcdp(jnp.full(3, log_ratio), jnp.zeros(3))
        orders = jnp.asarray(jdp.closed_forms.DEFAULT_ORDERS)
        log_rdp = log_rho[-1] + jnp.log(orders)
        log_eps_z = float(jdp.closed_forms.log_zcdp_to_dp(log_rho[-1], DELTA))
        log_eps_r = float(jdp.closed_forms.log_rdp_to_dp(orders, log_rdp, DELTA))
        expected = math.log(3.0) + 2 * log_ratio - math.log(2.0)  # ln(3 (Δ/σ)²/2)
        np.testing.assert_allclose(float(log_rho[-1]), expected, rtol=1e-12)
        if 2 * log_ratio < 700:
            rho = jdp.closed_forms.gaussian_zcdp(jnp.full(3, math.exp(log_ratio)), jnp.ones(3))
            np.testing.assert_allclose(log_eps_z,
                                       math.log(float(jdp.closed_forms.zcdp_to_dp(rho[-1], DELTA))),
                                       rtol=1e-12)
            lin = float(jdp.closed_forms.rdp_to_dp(orders, jnp.exp(log_rdp), DELTA))
            np.testing.assert_allclose(log_eps_r, math.log(lin), rtol=1e-12)
        else:
            assert np.isinf(float(jdp.closed_forms.zcdp_to_dp(jnp.exp(log_rho[-1]), DELTA)))
            # ε = ρ (1 + 2√(ln(1/δ)/ρ)) and min_α ε(α) ≈ α_min ρ (the smallest usable order)
            np.testing.assert_allclose(log_eps_z, expected, rtol=1e-12)
            a_min = float(np.min(
                jdp.closed_forms.DEFAULT_ORDERS[jdp.closed_forms.DEFAULT_ORDERS > 1.01]))
            np.testing.assert_allclose(log_eps_r, expected + math.log(a_min), rtol=1e-12)


def test_closed_form_curve_of_huge_gaussian_ratios_is_exact_in_log10():
    """Δ/σ = 1e200: zCDP ρ = 1e400/2 overflows float64; the curve's log10 stays exact."""
    ev = jdp.PrivacyEvents.from_schedule("gaussian", 1.0, 1e-200, 2, 3)
    name, eps, log10 = jdp.closed_form_curve(ev, DELTA)
    assert name == "zcdp" and np.all(np.isinf(eps))
    np.testing.assert_allclose(log10[0], 400 + np.log10(np.arange(1, 4) / 2), rtol=1e-12)
    report = jdp.PrivacyReport.from_events(ev, DELTA, methods=("closed_form",))
    assert np.isinf(report.epsilon_max) and report.epsilon_log10_curve()[0, -1] > 400


def test_zero_noise_scale_says_the_release_is_in_the_clear():
    with pytest.raises(ValueError, match=r"scale must be > 0 for a private release .*in the clear"):
        jdp.PrivacyEvents.from_schedule("gaussian", 1.0, 0.0, 1, 2)
