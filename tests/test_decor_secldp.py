"""DECOR's SecLDP bound (threat="secret_pairs", jaxdp.channels._correlated): the coupling bound
against exact Rényi divergences by summation on a small lattice, the exact integer release, the
report's wiring and fallbacks, and a likelihood-ratio audit of the outsider's view, each with a
positive control that a wrong claim is caught."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import special

from jaxdp import algorithms, channels
from jaxdp.attacks.audit import epsilon_lower_bound
from jaxdp.channels._correlated import (
    add_coupled,
    lattice_integer,
    max_exact_ratio,
    secret_pairs_factor,
)
from jaxdp.privacy import add_noise
from jaxdp.privacy.closed_forms import DEFAULT_ORDERS, rdp_to_dp
from jaxdp.privacy.samplers import GAUSSIAN_RESOLUTION as R
from jaxdp.privacy.samplers import lattice_draws
from tests.harness import gossip_setup

N, D, C = 6, 3, 0.7


# -- the bound against exact divergences on a small lattice ---------------------------------------
def _dgauss(r: int, top: int):
    k = np.arange(-top, top + 1)
    logw = -k.astype(float) ** 2 / (2 * r * r)
    return k, logw - special.logsumexp(logw)


def _log_view(r, s, coupled, knows_seed=False, top=None):
    """Log-pmf of the outsider's integer view of one undirected edge ``{u, i}`` (one coordinate):
    ``(s + K₁ + c(K'), K₂ − c(K'))``, ``K₁, K₂, K' ~ N_ℤ(0, r²)``, by summation over ``K'``;
    with ``knows_seed`` the observer subtracts ``c(K')`` (a curious ``i``, who also knows
    ``K₂``): its view is ``s + K₁``."""
    top = top or 14 * r
    k, logp = _dgauss(r, top)
    if knows_seed:
        out = np.full(2 * top + 1 + 2 * 20, -np.inf)
        out[k + s + top + 20] = logp
        return out
    cs = np.array([coupled(x) for x in k])
    m = int(np.abs(cs).max()) + top + 20
    out = np.full((2 * m + 1, 2 * m + 1), -np.inf)
    for kp, lp, c in zip(k, logp, cs, strict=True):
        block = lp + logp[:, None] + logp[None, :]
        rows, cols = k + s + c + m, k - c + m
        out[np.ix_(rows, cols)] = np.logaddexp(out[np.ix_(rows, cols)], block)
    return out


def _renyi(logp, logq, alpha):
    """``D_α(P‖Q)`` from log-pmfs on one grid (the common support; tails below e^{-90})."""
    both = np.isfinite(logp) & np.isfinite(logq)
    return special.logsumexp(alpha * logp[both] + (1 - alpha) * logq[both]) / (alpha - 1)


def _secldp_rdp(rho, s, alpha, r):
    """The library's per-message SecLDP Rényi bound ``α φ s²/(2r²)`` (shift ``s`` steps)."""
    return alpha * float(secret_pairs_factor(rho, float(s), 1.0, 1)) * s * s / (2 * r * r)


@pytest.mark.parametrize("rho", [1, 2, 3])
@pytest.mark.parametrize("s", [1, 2, 5])
def test_coupling_bound_holds_against_the_exact_divergence(rho, s):
    """Integer ρ, one coordinate, R = 2: the exact Rényi divergence of the outsider's view of
    the edge (summed over the integer support) is at most the bound at α = 2 and 5."""
    r = 2
    p = _log_view(r, s, lambda x: rho * x)
    q = _log_view(r, 0, lambda x: rho * x)
    for alpha in (2.0, 5.0):
        exact = _renyi(p, q, alpha)
        assert exact <= _secldp_rdp(rho, s, alpha, r) * (1 + 1e-9)
        assert exact > 0.9 * alpha * (1 + rho ** 2) / (1 + 2 * rho ** 2) * s * s / (2 * r * r)


def test_wrong_claims_are_caught_by_the_exact_divergence():
    """Positive controls: (1) an observer who knows the edge's seed (a curious neighbour) has the
    plain Gaussian divergence α s²/(2r²), above the SecLDP bound — the report charges such an
    edge in full; (2) the real-valued optimum f s² without the rounding term is exceeded on the
    lattice (ρ = 3, s = 1), and (3) for a non-integer ρ = 1.5 with c = round(ρK')."""
    r, alpha = 2, 2.0
    knows = _renyi(_log_view(r, 5, None, knows_seed=True), _log_view(r, 0, None, knows_seed=True),
                   alpha)
    assert knows == pytest.approx(alpha * 25 / (2 * r * r), rel=1e-9)
    assert knows > 1.2 * _secldp_rdp(2, 5, alpha, r)
    for rho, coupled in ((3, lambda x: 3 * x), (1.5, lambda x: int(np.round(1.5 * x)))):
        exact = _renyi(_log_view(r, 1, coupled), _log_view(r, 0, coupled), alpha)
        real_valued = alpha * (1 + rho ** 2) / (1 + 2 * rho ** 2) / (2 * r * r)
        assert exact > real_valued * (1 + 1e-3)


# -- the exact integer release ---------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_lattice_integer_inverts_the_release_exactly(dtype):
    """``lattice_integer(fl(γn)) = n`` for every integer the release can carry, the clamp's
    extremes included, at several scales."""
    top = 2 ** 22 + 13 * R if dtype == np.float32 else 2 ** 50 + 13 * R
    rng = np.random.default_rng(0)
    n = np.concatenate([rng.integers(-top, top, 4000), [top, -top, top - 1, 0, 1, -1]])
    for scale in (0.3, 1.0, 7.77, 1e-3, 123.456):
        gamma = jnp.asarray(scale, dtype) * (1.0 / R)
        released = jnp.asarray(n.astype(dtype)) * gamma
        back = np.asarray(lattice_integer(released, jnp.asarray(scale, dtype)))
        np.testing.assert_array_equal(back.astype(np.int64), n)


@pytest.fixture(scope="module")
def setup():
    return gossip_setup(N, D)


def _dgd(sigma, sigma_cor, sampler="lattice"):
    alg = channels.with_channel(algorithms.DGD(), channels.chain(
        channels.clip(C), channels.pairwise_cancelling(sigma, sigma_cor, sampler=sampler)))
    return alg, alg.params(algorithms.DGDParams(alpha=0.1))


def test_each_message_is_gamma_times_one_exact_integer(setup):
    """σ = 0.3 (not dyadic), σ_cor = 0.9 (0.9/0.3 is not 3 in floats: snapped): every message is
    exactly fl(γ·n), n = round(v/γ) + K + 3 K'_signed computed in int64, and the pairwise parts
    still cancel exactly in the symmetric gossip sum."""
    prob, net = setup
    with jax.enable_x64(True):
        alg, params = _dgd(0.3, 0.9)
        x = np.random.default_rng(5).normal(size=(N, D)) * 0.1  # norms < C: the clip is identity
        state = algorithms.catalogue.classic.DGDState(x=jnp.asarray(x))
        noise = alg.noise(jax.random.key(3), state, params, jnp.int32(0))
        _, messages = alg.step(state, noise, prob, net, params, jnp.int32(0))
        draws = np.asarray(alg.channel_draws(state, noise, prob, net, params, 0)["mix0"][1])
    gamma = 0.3 / R
    senders = np.asarray(net.senders)
    n = (np.round(x[senders] / gamma).astype(np.int64) + (draws[0] * R).astype(np.int64)
         + 3 * (draws[1] * R).astype(np.int64))
    np.testing.assert_array_equal(np.asarray(messages["mix0"]), n * gamma)
    edge = np.asarray(net.edge_id)
    for e in range(net.n_edges):  # c_{j→i} = −c_{i→j}: the integers cancel per undirected edge
        both = np.flatnonzero(edge == e)
        assert len(both) == 2 and np.all((draws[1][both[0]] + draws[1][both[1]]) == 0)


# -- the report -----------------------------------------------------------------------------------
def test_secret_pairs_report_uses_the_coupling_bound(setup):
    """ρ = 4: not the fallback, below the eavesdropper's ε, with the seeds assumption; each
    agent's squared sensitivity is the eavesdropper's times (1 + (deg − 1)φ)/deg (one curious
    neighbour's edge in full), φ from the formula written out here."""
    prob, net = setup
    with jax.enable_x64(True):
        alg, params = _dgd(4.0, 16.0)
        eav = alg.privacy(prob, net, params, 20)
        sec = alg.privacy(prob, net, params, 20, threat="secret_pairs")
    assert sec.threat == "secret_pairs" and not sec.threat_fallback
    assert np.all(sec.epsilon < eav.epsilon) and np.isfinite(sec.epsilon_max)
    assert any("pairwise seeds" in a.statement for a in sec.assumptions)
    rho, deg = 4, np.bincount(np.asarray(net.senders), minlength=N)
    sens = eav.events.sensitivity  # (N, K): lattice Δ_L per message
    gamma = 4.0 / R
    phi = np.minimum(1.0, (1 + rho ** 2) / (1 + 2 * rho ** 2)
                     + gamma ** 2 * D * (1 + 2 * rho ** 2) / 4 / sens ** 2)
    expected = sens ** 2 * (1 + (deg[:, None] - 1) * phi) / deg[:, None]
    np.testing.assert_allclose(sec.events.sensitivity ** 2, expected, rtol=1e-12)


@pytest.mark.parametrize("sigma_cor,sampler,why", [
    (10.0, "lattice", "not an integer"),  # ρ = 2.5
    (0.0, "lattice", "zero"),
    (16.0, "float", "float sampler"),
])
def test_secret_pairs_falls_back_with_the_reason(setup, sigma_cor, sampler, why):
    prob, net = setup
    with jax.enable_x64(True):
        alg, params = _dgd(4.0, sigma_cor, sampler)
        eav = alg.privacy(prob, net, params, 5)
        sec = alg.privacy(prob, net, params, 5, threat="secret_pairs")
    assert sec.threat_fallback and why in sec.threat_note
    np.testing.assert_array_equal(sec.epsilon, eav.epsilon)


def test_the_exactness_range_of_the_ratio():
    """ρ ≤ max_exact_ratio keeps L + 13R(1 + ρ) within the dtype's integers, ρ + 1 does not;
    beyond it the report falls back."""
    for dtype, bits in ((np.float32, 24), (np.float64, 53)):
        top, clamp = max_exact_ratio(dtype), 2 ** 22 if dtype == np.float32 else 2 ** 50
        assert clamp + 13 * R * (1 + top) <= 2 ** bits < clamp + 13 * R * (2 + top)
    top = max_exact_ratio(np.float32)  # 28 with R = 2^15 (235 with R = 2^12)
    noise = channels.pairwise_cancelling(1.0, top + 1.0)
    values = dict(noise.defaults)
    rho, why = noise.secret_pairs_ratio(values, np.float32)
    assert rho == 0 and f"exceeds {top}" in why
    assert noise.secret_pairs_ratio(values, np.float64) == (top + 1, "")
    assert channels.pairwise_cancelling(1.0, float(top)).secret_pairs_ratio(
        dict(channels.pairwise_cancelling(1.0, float(top)).defaults), np.float32) == (top, "")
    per_agent = {**values, "decor_sigma_cor": np.full(4, top + 1.0)}
    assert "scalars" in noise.secret_pairs_ratio(per_agent, np.float64)[1]


# -- the audit of the outsider's view -------------------------------------------------------------
def test_audit_of_the_outsider_view_stays_below_the_bound():
    """One edge {u, i}, ρ = 4, shift s = 1.5R on u's message, the library's sampler and release:
    a likelihood-ratio test (Σ⁻¹s direction) on 3·10⁵ views per input; its Clopper–Pearson lower
    bound stays below the SecLDP ε at δ = 10⁻² (RDP conversion of α φ s²/(2R²)). Positive
    control: the same claim against an observer who knows the seed is caught."""
    rho, sigma, s, delta, n = 4, 1.0, int(1.5 * R), 1e-2, 300_000
    gamma = sigma / R
    with jax.enable_x64(True):
        z = lattice_draws(jax.random.key(11), (2, 3, n), jnp.float64)

        def view(side, shift):
            z1, z2, zc = z[side]
            m1 = add_coupled(add_noise(jnp.full(n, shift * gamma), sigma, z1), sigma,
                             rho * sigma, zc, float(rho))
            m2 = add_coupled(add_noise(jnp.zeros(n), sigma, z2), sigma, rho * sigma, -zc,
                             float(rho))
            return np.asarray(m1) / gamma, np.asarray(m2) / gamma, np.asarray(zc) * R
        (a1, b1, k1), (a0, b0, k0) = view(0, s), view(1, 0)
    orders = np.asarray(DEFAULT_ORDERS)
    phi = float(secret_pairs_factor(rho, s * gamma, gamma, 1))
    claim = float(rdp_to_dp(orders, orders * phi * s * s / (2 * R * R), delta))
    outsider = epsilon_lower_bound((1 + rho ** 2) * a0 + rho ** 2 * b0,
                                   (1 + rho ** 2) * a1 + rho ** 2 * b1, delta=delta)
    assert 0.5 * claim < outsider.epsilon_lower <= claim
    knows = epsilon_lower_bound(a0 - rho * k0, a1 - rho * k1, delta=delta)
    assert knows.epsilon_lower > claim
