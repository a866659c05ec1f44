"""Every finite guarantee is a guarantee on the floats released: the lattice sampler is the default
of every private algorithm of the registry, and the float sampler's reports are ``inf``.

The support attack itself (tests/test_float_support_attack.py) shows why: a float-sampled release
can be impossible under the neighbouring data set, a lattice release never is.
"""
import dataclasses
import warnings

import jax
import numpy as np
import pytest

from jaxdp import algorithms, channels, network, privacy, problems


def _setting():
    rng = np.random.default_rng(0)
    prob = problems.from_arrays(rng.normal(size=(4, 40, 2)), rng.normal(size=(4, 40)),
                                loss="least_squares", reg={"ridge": 0.0}, reference=False)
    return prob, network.make_network("ring", 4)


def _report(alg, prob, net):
    with warnings.catch_warnings():  # least-squares data fail some papers' assumptions
        warnings.simplefilter("ignore")
        return alg.privacy(prob, net, alg.default_params(), 1)


def _as_float(alg):
    if isinstance(alg, channels.WithChannel):
        return alg.with_sampler("float")
    return dataclasses.replace(alg, sampler="float")


@pytest.mark.parametrize("name", sorted(algorithms.REGISTRY))
def test_a_finite_guarantee_is_on_the_lattice_and_the_float_sampler_is_inf(name):
    prob, net = _setting()
    alg = algorithms.REGISTRY[name]()
    with jax.enable_x64(True):
        report = _report(alg, prob, net)
        if report is None or not np.isfinite(report.epsilon_max):
            return
        assert alg.sampler_of() == "lattice", f"{name} gives a finite ε without lattice noise"
        assert report.events is None or report.events.lattice_streams, name
        ideal = _report(_as_float(alg), prob, net)
        assert np.isinf(ideal.epsilon_max) and "float sampler" in ideal.reason
        assert any(m.startswith("ideal ") for m in ideal.curves), list(ideal.curves)
        assert not any(m.startswith("ideal ") for m in ideal.sound)


def test_the_sampler_is_checked():
    with pytest.raises(ValueError, match="sampler must be one of"):
        channels.gaussian(1.0, sampler="exact")
    prob, net = _setting()
    with pytest.raises(ValueError, match="sampler must be one of"):
        algorithms.DPDGD(sampler="exact").validate(algorithms.DPDGDParams(), prob, net)


def test_lattice_draws_have_the_ideal_moments_and_sit_on_the_grid():
    """K = zR is an integer; mean 0 and variance 1 (Gaussian) or 2 (Laplace) within 5 standard
    errors over 2e5 draws, and P(K = 0) matches the ideal law."""
    for law, var, res in (("gaussian", 1.0, privacy.samplers.GAUSSIAN_RESOLUTION),
                          ("laplace", 2.0, privacy.samplers.LAPLACE_RESOLUTION)):
        z = np.asarray(privacy.samplers.lattice_draws(jax.random.key(0), (200_000,), np.float32,
                                                      law=law),
                       np.float64)
        k = z * res
        np.testing.assert_array_equal(k, np.round(k))
        se = np.sqrt(var / z.size)
        assert abs(z.mean()) < 5 * se
        assert abs(z.var() - var) < 5 * np.sqrt((3 if law == "gaussian" else 24) / z.size)
    # the alias table's law is exact: its bucket weights reproduce the pmf to its TV bound
    assert privacy.samplers.sampler_tv("gaussian") < 1e-19 and privacy.samplers.sampler_tv(
        "laplace") < 1e-19


def test_lattice_release_is_the_rounded_value_plus_the_integer_draw():
    """``add_noise`` on the lattice: r = fl(nγ) for an integer n (a function of the integer
    release only), and n = round(v/γ) + zR exactly."""
    with jax.enable_x64(True):
        v = np.random.default_rng(1).normal(size=(64,)) * 3.0
        z = privacy.samplers.lattice_draws(jax.random.key(2), (64,), np.float64)
        s = 0.37
        r = np.asarray(privacy.add_noise(v, s, z))
        gamma = s / privacy.samplers.GAUSSIAN_RESOLUTION
        n = np.round(r / gamma)
        np.testing.assert_array_equal(n * gamma, r)
        np.testing.assert_array_equal(n, np.round(v / gamma) + np.asarray(z) * privacy.samplers.GAUSSIAN_RESOLUTION)
        # the rounding moves each coordinate by at most γ/2: the sensitivity's slack
        assert np.max(np.abs(r - (v + s * np.asarray(z)))) <= gamma / 2 * (1 + 1e-9)
        g = jax.grad(lambda s: privacy.add_noise(v, s, z).sum())(s)
        assert float(g) == pytest.approx(float(np.sum(z)))  # d r / d s = z (straight through)


def test_sampler_error_goes_into_delta_and_caps_epsilon():
    """A lattice report at δ keeps (1 + e^ε)Dη ≤ 2⁻⁶δ: with a δ so small that the sampler's
    error dominates, the guarantee is inf with the reason."""
    prob, net = _setting()
    alg, params = algorithms.DPDGD(), algorithms.DPDGDParams(clip=1.0, sigma=5.0)
    with jax.enable_x64(True):
        ok = alg.privacy(prob, net, params, 10, delta=1e-5)
        draws = alg.accounting.lattice_draw_count(prob, net, params, 10)
        assert draws == 10 * 4 * 2  # (N, d) per step
        tau = draws * privacy.samplers.sampler_tv("gaussian")
        assert np.isfinite(ok.epsilon_max)
        assert (1 + np.exp(ok.epsilon_max)) * tau <= 2.0 ** -6 * 1e-5
        tiny = alg.privacy(prob, net, params, 10, delta=1e-22)
        assert np.isinf(tiny.epsilon_max) and "cannot be absorbed in δ" in tiny.reason


def test_a_clamp_of_order_one_warns_before_the_run():
    """DiaDSP's Laplace scale u·0.5^k reaches the clamp of values of order 1 at k = 36 in float64
    (2⁵⁰·u·0.5^k/65536 < 1); the report warns, naming the step. DP-DGD's constant σ does not."""
    net = network.make_network("ring", 10)
    with jax.enable_x64(True):
        prob = problems.nonconvex_logistic(n_agents=10, m=50, d=5, seed=0)
        with pytest.warns(privacy.samplers.LatticeClampWarning, match="from step 36 on"):
            algorithms.DiaDSP().privacy(prob, net, algorithms.DiaDSP().default_params(), 50)
        with warnings.catch_warnings():
            warnings.simplefilter("error", privacy.samplers.LatticeClampWarning)
            algorithms.DPDGD().privacy(prob, net, algorithms.DPDGD().default_params(), 50)
    # float32: the clamp is 1024σ, so σ = 1e-4 clamps values beyond ±0.1 from the first step
    assert "from step 0 on" in privacy.samplers.clamp_warning(np.full((2, 3), 1e-4), np.float32,
                                                              "gaussian")
    assert privacy.samplers.clamp_warning(np.full((2, 3), 1e-2), np.float32, "gaussian") == ""
