"""Correlated-noise channels (issue 24): DECOR's pairwise-cancelling noise and Zip-DL's zero-sum
noise, against per-node references, their cancellation, and their privacy reports."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxdp import algorithms, channels
from jaxdp.privacy.samplers import GAUSSIAN_RESOLUTION as R
from tests.harness import gossip_setup

N, D = 6, 3
C, SIGMA, SIGMA_COR = 0.7, 0.5, 2.0  # dyadic σ: the lattice step γ = σ/R is a power of two


@pytest.fixture(scope="module")
def setup():
    return gossip_setup(N, D)


def _dgd(noise, **overrides):
    alg = channels.with_channel(algorithms.DGD(), channels.chain(channels.clip(C), noise))
    return alg, alg.params(algorithms.DGDParams(alpha=0.1)).replace(**overrides)


def _step(alg, params, prob, net, x, seed=7):
    """One step from models ``x``: (new models, messages, the channel's standard draws)."""
    state = algorithms.catalogue.classic.DGDState(x=jnp.asarray(x))
    noise = alg.noise(jax.random.key(seed), state, params, jnp.int32(0))
    new, messages = alg.step(state, noise, prob, net, params, jnp.int32(0))
    draws = np.asarray(alg.channel_draws(state, noise, prob, net, params, 0)["mix0"][1])
    return np.asarray(new.x), np.asarray(messages["mix0"]), draws


def _release(value, sigma, z, lattice):
    """The Gaussian release of one message, per coordinate: ``γ(round(v/γ) + zR)``."""
    if not lattice:
        return value + sigma * z
    gamma = sigma / R
    return gamma * (np.round(value / gamma) + z * R)


def _coupled(value, sigma, lattice):
    """The coupled term ``σ_cor ξ'`` on the release's lattice."""
    gamma = sigma / R
    return gamma * np.round(value / gamma) if lattice else value


def _reference(x, prob, net, coupled_of, lattice):
    """Per node and edge: ``x_i⁺ = W_ii x_i − α∇f_i + Σ_{j ∈ N(i)} W_ij m_{j→i}`` with
    ``m_{j→i} = release(clip(x_j)) + coupled term``; ``coupled_of(e)`` gives edge e's coupled
    value (before rounding), built from the draws by explicit loops."""
    W, grads = net.dense("W"), np.asarray(prob.local_grads(jnp.asarray(x)))
    senders, receivers = np.asarray(net.senders), np.asarray(net.receivers)
    out, messages = np.zeros_like(x), np.zeros((len(senders), D))
    for e in range(len(senders)):
        j = senders[e]
        clipped = x[j] * min(1.0, C / np.linalg.norm(x[j]))
        messages[e] = (_release(clipped, SIGMA, coupled_of.own[e], lattice)
                       + _coupled(coupled_of(e), SIGMA, lattice))
    for i in range(N):
        out[i] = W[i, i] * x[i] - 0.1 * grads[i]
        for e in np.flatnonzero(receivers == i):
            out[i] += W[i, senders[e]] * messages[e]
    return out, messages


class _Decor:
    """Edge e's DECOR term: ``σ_cor`` times the undirected edge's draw, ``+`` from the lower
    agent, ``−`` from the other (the draw read on the lower agent's edge)."""

    def __init__(self, net, draws):
        self.own, self.cor = draws
        self.s, self.r = np.asarray(net.senders), np.asarray(net.receivers)

    def __call__(self, e):
        lower = next(f for f in range(len(self.s)) if {self.s[f], self.r[f]} == {
            self.s[e], self.r[e]} and self.s[f] < self.r[f])
        return SIGMA_COR * (1.0 if self.s[e] < self.r[e] else -1.0) * self.cor[lower]


class _ZeroSum:
    """Edge e's Zip-DL term: minus the independent draw of the sender's next outgoing edge in
    edge order (cyclically): a ring over the sender's out-edges."""

    def __init__(self, net, draws):
        self.own = draws[0]
        self.s = np.asarray(net.senders)

    def __call__(self, e):
        out = [f for f in range(len(self.s)) if self.s[f] == self.s[e]]
        return -SIGMA * self.own[out[(out.index(e) + 1) % len(out)]]


CHANNELS = {"decor": (lambda s: channels.pairwise_cancelling(SIGMA, SIGMA_COR, sampler=s), _Decor),
            "zero_sum": (lambda s: channels.zero_sum(SIGMA, sampler=s), _ZeroSum)}


@pytest.mark.parametrize("sampler", ["lattice", "float"])
@pytest.mark.parametrize("kind", sorted(CHANNELS))
@pytest.mark.parametrize("backend", ["dense", "edges"])
def test_step_matches_per_node_reference(setup, kind, sampler, backend):
    prob, net = setup
    make, term = CHANNELS[kind]
    with jax.enable_x64(True):
        net = net.with_backend(backend)
        alg, params = _dgd(make(sampler))
        x = np.random.default_rng(3).normal(size=(N, D))
        new, messages, draws = _step(alg, params, prob, net, x)
        assert draws.shape == (2, 2 * net.n_edges, D)
        ref, ref_messages = _reference(x, prob, net, term(net, draws), sampler == "lattice")
        np.testing.assert_allclose(messages, ref_messages, rtol=0, atol=1e-10)
        np.testing.assert_allclose(new, ref, rtol=0, atol=1e-10)


def test_decor_terms_cancel_exactly_in_the_symmetric_gossip_sum(setup):
    """The coupled terms are antisymmetric integers on the lattice, so ``W_ij c_{j→i} +
    W_ji c_{i→j} = 0`` exactly for every edge (W symmetric): the network average of a DGD step is
    the one without the pairwise part (to rounding) while each agent's model moves by O(σ_cor)."""
    prob, net = setup
    with jax.enable_x64(True):
        x = np.random.default_rng(3).normal(size=(N, D))
        alg, params = _dgd(channels.pairwise_cancelling(SIGMA, SIGMA_COR))
        new, messages, draws = _step(alg, params, prob, net, x)
        base, base_messages, base_draws = _step(alg, params.replace(decor_sigma_cor=0.0), prob,
                                                net, x)
        np.testing.assert_array_equal(draws[0], base_draws[0])  # the same independent draws
        rev, w = np.asarray(net.reverse), np.asarray(net.w_edge)
        integers = draws[1] * R
        np.testing.assert_array_equal(integers, np.round(integers))
        np.testing.assert_array_equal(draws[1], -draws[1][rev])
        coupled = messages - base_messages  # exact: dyadic γ, small integers
        np.testing.assert_array_equal(coupled, -coupled[rev])
        np.testing.assert_array_equal(w, w[rev])
        weighted = w[:, None] * coupled
        lower = np.asarray(net.senders) < np.asarray(net.receivers)
        np.testing.assert_array_equal(weighted[lower] + weighted[rev][lower], 0.0)
        assert np.abs(new - base).max() > 0.1 * SIGMA_COR  # each agent moves ...
        np.testing.assert_allclose(new.mean(0), base.mean(0), rtol=0, atol=1e-12)  # the mean not


def test_zero_sum_noise_sums_to_zero_over_each_senders_messages(setup):
    prob, net = setup
    with jax.enable_x64(True):
        x = np.random.default_rng(3).normal(size=(N, D))
        alg, params = _dgd(channels.zero_sum(SIGMA))
        _, messages, draws = _step(alg, params, prob, net, x)
        senders = np.asarray(net.senders)
        gamma = SIGMA / R
        for j in range(N):
            out = senders == j
            np.testing.assert_array_equal((draws[0] + draws[1])[out].sum(0), 0.0)
            clipped = x[j] * min(1.0, C / np.linalg.norm(x[j]))
            # the sum of j's messages is deg_j times its rounded value, exactly: in the clear
            np.testing.assert_array_equal(messages[out].sum(0),
                                          out.sum() * gamma * np.round(clipped / gamma))


def test_decor_is_accounted_with_the_independent_part_only(setup):
    """Under the eavesdropper DECOR's report is the plain per-message Gaussian's at σ_ind
    (the pairwise part is post-processing); under neighbours the same bound, marked as the
    fallback (secret_pairs: tests/test_decor_secldp.py)."""
    prob, net = setup
    with jax.enable_x64(True):
        decor, p = _dgd(channels.pairwise_cancelling(4.0, 16.0))
        plain, q = _dgd(channels.gaussian(4.0))
        ours, theirs = decor.privacy(prob, net, p, 20), plain.privacy(prob, net, q, 20)
        assert np.isfinite(ours.epsilon_max)
        np.testing.assert_allclose(ours.epsilon, theirs.epsilon, rtol=1e-12)
        assert "post-processing" in str(ours.events.description)
        r = decor.privacy(prob, net, p, 20, threat="neighbours")
        assert r.threat_fallback and r.threat == "neighbours"
        np.testing.assert_allclose(r.epsilon, theirs.epsilon, rtol=1e-12)


@pytest.mark.parametrize("threat", ["eavesdropper", "neighbours", "secret_pairs"])
def test_zero_sum_report_is_infinite_with_the_reason(setup, threat):
    prob, net = setup
    with jax.enable_x64(True):
        alg, p = _dgd(channels.zero_sum(4.0))
        report = alg.privacy(prob, net, p, 5, threat=threat)
    assert np.isinf(report.epsilon_max)
    assert "sums to zero" in report.reason and "in the clear" in report.reason


def test_configuration_errors_and_spec(setup):
    prob, net = setup
    with pytest.raises(ValueError, match="broadcast"):
        channels.chain(channels.clip(1.0), channels.pairwise_cancelling(1.0, 1.0), broadcast=True)
    with pytest.raises(ValueError, match="sigma_cor"):
        channels.pairwise_cancelling(1.0, -1.0)
    with pytest.raises(ValueError, match="sigma"):
        channels.zero_sum(0.0)
    with jax.enable_x64(True):
        alg, p = _dgd(channels.pairwise_cancelling(1.0, 1.0))
        with pytest.raises(ValueError, match="scalar"):
            alg.validate(p.replace(decor_sigma=jnp.ones(N)), prob, net)
    parsed = channels.parse_channel("clip:0.7+pairwise_cancelling:4,8")
    assert parsed.name == "clip+pairwise_cancelling"
    assert dict(parsed.defaults)["decor_sigma_cor"] == 8.0
    assert channels.parse_channel("clip+zero_sum:sampler=float").name == \
        "clip+zero_sum:sampler=float"


def test_gradient_in_the_pairwise_scale_is_its_draw(setup):
    """The tangent of the coupled term in σ_cor is its draw (straight-through for the rounding):
    d(Σ x⁺)/dσ_cor = Σ_e W_e ξ'_e."""
    prob, net = setup
    with jax.enable_x64(True):
        alg, params = _dgd(channels.pairwise_cancelling(SIGMA, SIGMA_COR))
        x = np.random.default_rng(3).normal(size=(N, D))
        state = algorithms.catalogue.classic.DGDState(x=jnp.asarray(x))
        noise = alg.noise(jax.random.key(7), state, params, jnp.int32(0))

        def total(s):
            new, _ = alg.step(state, noise, prob, net, params.replace(decor_sigma_cor=s),
                              jnp.int32(0))
            return jnp.sum(new.x)

        g = jax.grad(total)(jnp.float64(SIGMA_COR))
        draws = np.asarray(alg.channel_draws(state, noise, prob, net, params, 0)["mix0"][1])
        assert float(g) == pytest.approx(np.sum(np.asarray(net.w_edge)[:, None] * draws[1]),
                                         abs=1e-10)


@pytest.mark.parametrize("field", ["decor_sigma", "decor_sigma_cor", "decor_decay"])
@pytest.mark.parametrize("threat", ["eavesdropper", "secret_pairs"])
def test_privacy_refuses_a_per_agent_pairwise_field(setup, field, threat):
    """DECOR's fields act per undirected edge (one lattice for both ends): ``privacy`` refuses a
    per-agent value as ``validate`` does, naming the field, instead of reporting on it."""
    prob, net = setup
    with jax.enable_x64(True):
        alg, p = _dgd(channels.pairwise_cancelling(1.0, 1.0))
        with pytest.raises(ValueError, match=f"{field} must be a scalar"):
            alg.privacy(prob, net, p.replace(**{field: jnp.linspace(1.0, 2.0, N)}), 3,
                        threat=threat)
