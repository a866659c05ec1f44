"""DECOR as printed (``pairwise_cancelling(..., independent="per_sender")``, Allouah et al. ICML
2024 Eq. (3): one independent draw per sender and call): the messages, the eavesdropper report
(the broadcast Gaussian's), the SecLDP fallback (a curious neighbour recovers the release), and
the outsider-only factor against a dense least-norm solve, exact Rényi divergences and a
likelihood-ratio audit, each with a positive control."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import special

from jaxdp import algorithms, channels, network
from jaxdp.attacks.audit import epsilon_lower_bound
from jaxdp.channels._correlated import printed_outsider_factor, secret_pairs_factor
from jaxdp.privacy.closed_forms import DEFAULT_ORDERS, rdp_to_dp
from jaxdp.privacy.samplers import GAUSSIAN_RESOLUTION as R
from jaxdp.privacy.samplers import lattice_draws
from tests.harness import gossip_setup

N, D, C = 6, 3, 0.7


@pytest.fixture(scope="module")
def setup():
    return gossip_setup(N, D)


def _dgd(noise, broadcast=False):
    alg = channels.with_channel(algorithms.DGD(), channels.chain(channels.clip(C), noise,
                                                                 broadcast=broadcast))
    return alg, alg.params(algorithms.DGDParams(alpha=0.1))


def _printed(sigma=4.0, sigma_cor=16.0):
    return channels.pairwise_cancelling(sigma, sigma_cor, independent="per_sender")


def test_bad_independent_is_refused():
    with pytest.raises(ValueError, match="per_sender.*'both'"):
        channels.pairwise_cancelling(1.0, 1.0, independent="both")


def test_spec_name_round_trips():
    noise = _printed()
    assert noise.spec_name == "pairwise_cancelling:independent=per_sender"
    assert channels.parse_channel("clip:1.0+" + noise.spec_name).transforms[1].per_sender
    assert channels.pairwise_cancelling().spec_name == "pairwise_cancelling"


def test_each_sender_sends_one_draw_plus_cancelling_pairs(setup):
    """σ = 0.3, σ_cor = 0.9 (ρ = 3): every message is fl(γ n), n = round(x_j/γ) + K_j + 3K'_e,
    with K_j the same on every message of sender j, and c_{j→i} = −c_{i→j}."""
    prob, net = setup
    with jax.enable_x64(True):
        alg, params = _dgd(channels.pairwise_cancelling(0.3, 0.9, independent="per_sender"))
        x = np.random.default_rng(5).normal(size=(N, D)) * 0.1
        state = algorithms.catalogue.classic.DGDState(x=jnp.asarray(x))
        noise = alg.noise(jax.random.key(3), state, params, jnp.int32(0))
        _, messages = alg.step(state, noise, prob, net, params, jnp.int32(0))
        draws = np.asarray(alg.channel_draws(state, noise, prob, net, params, 0)["mix0"][1])
    gamma, senders = 0.3 / R, np.asarray(net.senders)
    for j in range(N):  # one independent draw per sender, distinct across senders
        np.testing.assert_array_equal(draws[0][senders == j], draws[0][senders == j][:1].repeat(
            np.sum(senders == j), 0))
    assert len({tuple(draws[0][senders == j][0]) for j in range(N)}) == N
    n = (np.round(x[senders] / gamma).astype(np.int64) + (draws[0] * R).astype(np.int64)
         + 3 * (draws[1] * R).astype(np.int64))
    np.testing.assert_array_equal(np.asarray(messages["mix0"]), n * gamma)
    edge = np.asarray(net.edge_id)
    for e in range(net.n_edges):
        both = np.flatnonzero(edge == e)
        assert np.all(draws[1][both[0]] + draws[1][both[1]] == 0)


def test_eavesdropper_report_is_the_broadcast_gaussians(setup):
    """One release per sender and call: ε equals clip + gaussian(σ) broadcast; the per-message
    DECOR (deg_j releases) is larger (positive control: the count is what differs)."""
    prob, net = setup
    with jax.enable_x64(True):
        printed = _dgd(_printed())[0].privacy(prob, net, _dgd(_printed())[1], 20)
        bcast_alg, bcast_params = _dgd(channels.gaussian(4.0), broadcast=True)
        bcast = bcast_alg.privacy(prob, net, bcast_params, 20)
        per_msg_alg, per_msg_params = _dgd(channels.pairwise_cancelling(4.0, 16.0))
        per_msg = per_msg_alg.privacy(prob, net, per_msg_params, 20)
    np.testing.assert_allclose(printed.epsilon, bcast.epsilon, rtol=1e-12)
    assert np.all(per_msg.epsilon > printed.epsilon * 1.2)


@pytest.mark.parametrize("threat", ["secret_pairs", "neighbours"])
def test_secret_pairs_falls_back_with_the_curious_reason(setup, threat):
    prob, net = setup
    with jax.enable_x64(True):
        alg, params = _dgd(_printed())
        eav = alg.privacy(prob, net, params, 5)
        sec = alg.privacy(prob, net, params, 5, threat=threat)
    assert sec.threat_fallback
    if threat == "secret_pairs":
        assert "curious neighbour" in sec.threat_note
    np.testing.assert_array_equal(sec.epsilon, eav.epsilon)


# -- the outsider-only factor ---------------------------------------------------------------------
def _least_norm(senders, receivers, n, rho, u):
    """The real least-norm ``‖w‖² + ‖t‖²`` of ``w_j + s_e ρ t_{edge(e)} = [j = u]`` over every
    directed edge (a dense solve; ``inf`` when inconsistent)."""
    pairs = sorted({(min(a, b), max(a, b)) for a, b in zip(senders, receivers, strict=True)})
    index = {p: k for k, p in enumerate(pairs)}
    a = np.zeros((len(senders), n + len(pairs)))
    for row, (j, i) in enumerate(zip(senders, receivers, strict=True)):
        a[row, j] = 1.0
        a[row, n + index[(min(i, j), max(i, j))]] = rho * (1.0 if j < i else -1.0)
    b = (np.asarray(senders) == u).astype(float)
    sol = np.linalg.lstsq(a, b, rcond=None)[0]
    return float(sol @ sol) if np.allclose(a @ sol, b, atol=1e-9) else np.inf


@pytest.mark.parametrize("graph,kw", [("ring", {}), ("gnm", {"m": 8}), ("ring7", {}),
                                      ("path", {})])
@pytest.mark.parametrize("rho", [1, 3])
def test_outsider_factor_is_the_least_norm_solution(graph, kw, rho):
    """Without the rounding term (Δ_L ≫ γ) the factor is the dense least-norm value of the
    coupling system for every agent: 1 − 1/M on a bipartite graph, 1 with an odd cycle."""
    if graph == "path":
        senders, receivers, n = np.array([0, 1, 1, 2]), np.array([1, 0, 2, 1]), 3
    else:
        n = 7 if graph == "ring7" else 8
        net = network.make_network("ring" if graph == "ring7" else graph, n, seed=2, **kw)
        senders, receivers = np.asarray(net.senders), np.asarray(net.receivers)
    phi = printed_outsider_factor(senders, receivers, n, rho, 1e9, 1.0, 1)
    exact = [_least_norm(senders, receivers, n, rho, u) for u in range(n)]
    np.testing.assert_allclose(phi, exact, rtol=1e-6)
    if graph == "ring7":
        assert np.all(phi == 1.0)
    if graph == "ring":
        assert np.all(phi < 1.0)


def _path_view_logpmf(r, s, rho, box):
    """The exact log-pmf of the outsider's integer view of the path u – a – b (one coordinate;
    agents' draws K_u, K_a, K_b, pair draws K'_1, K'_2, all N_ℤ(0, r²)):
    (s + K_u + ρK'_1, K_a − ρK'_1, K_a + ρK'_2, K_b − ρK'_2), on the views
    (v1, v2, v2 + ρm, v4) with v1, v2, m, v4 in [−box, box]: given the view and K'_1 every draw
    is determined (K_a = v2 + ρK'_1, K'_2 = m − K'_1), so the pmf is a sum over K'_1 (|K'_1| ≤
    12r: the omitted terms are below e^{-72} relative)."""
    z = special.logsumexp(-np.arange(-60 * r, 60 * r + 1) ** 2 / (2.0 * r * r))

    def log_phi(k):
        return -np.asarray(k, float) ** 2 / (2.0 * r * r) - z
    v1, v2, m, v4 = np.meshgrid(*(np.arange(-box, box + 1),) * 4, indexing="ij", sparse=True)
    out = np.full((2 * box + 1,) * 4, -np.inf)
    for k1 in range(-12 * r, 12 * r + 1):
        out = np.logaddexp(out, log_phi(k1) + log_phi(v2 + rho * k1) + log_phi(m - k1)
                           + log_phi(v1 - s - rho * k1) + log_phi(v4 + rho * (m - k1)))
    return out


def _renyi2_on_box(s, rho, box, r=1):
    lp, lq = _path_view_logpmf(r, s, rho, box), _path_view_logpmf(r, 0, rho, box)
    return float(special.logsumexp(2.0 * lp - lq)), float(np.exp(special.logsumexp(lq)))


@pytest.mark.parametrize("rho,s", [(1, 4), (2, 3)])
def test_outsider_bound_holds_against_the_exact_divergence(rho, s):
    """Path of 3 agents (bipartite, M = 3 + 2/ρ²), r = 1: the exact Rényi divergence of order 2
    of the outsider's view (summed over the integer views; a larger box changes it by < 1e-5,
    so the box holds the sum) is at most the bound. Positive control (ρ = 1, s = 4): the
    per-message channel's factor (1 + ρ²)/(1 + 2ρ²) (with its rounding term) claimed for this
    view is exceeded."""
    exact, mass = _renyi2_on_box(s, rho, 16)
    wider, _ = _renyi2_on_box(s, rho, 20)
    assert mass > 1 - 1e-6 and abs(wider - exact) < 1e-5 * wider
    phi = printed_outsider_factor([0, 1, 1, 2], [1, 0, 2, 1], 3, rho, float(s), 1.0, 1)[0]
    assert wider <= 2.0 * phi * s * s / 2 * (1 + 1e-9)
    if rho == 1:
        assert wider > 2.0 * float(secret_pairs_factor(rho, float(s), 1.0, 1)) * s * s / 2 * 1.05


def test_audit_odd_cycle_outsider_recovers_the_release():
    """Triangle u, a, b, ρ = 4, library draws: the outsider's (n_ua + n_au) + (n_ub + n_bu) −
    (n_ab + n_ba) = 2(a_u + K_u) + known terms. Its LR-audit lower bound stays below the
    printed channel's claim (the eavesdropper's, φ = 1) and exceeds what the per-message
    channel's SecLDP factor would claim (positive control)."""
    rho, s, delta, n = 4, int(1.5 * R), 1e-2, 300_000
    with jax.enable_x64(True):
        z = np.asarray(lattice_draws(jax.random.key(7), (2, 6, n), jnp.float64)) * R
    scores = []
    for side, shift in ((0, 0), (1, s)):
        ku, ka, kb, k1, k2, k3 = z[side]  # pairs (u,a) = k1, (u,b) = k2, (a,b) = k3
        n_ua, n_au = shift + ku + rho * k1, ka - rho * k1
        n_ub, n_bu = shift + ku + rho * k2, kb - rho * k2
        n_ab, n_ba = ka + rho * k3, kb - rho * k3
        scores.append((n_ua + n_au) + (n_ub + n_bu) - (n_ab + n_ba))
    orders = np.asarray(DEFAULT_ORDERS)

    def claim(phi):
        return float(rdp_to_dp(orders, orders * phi * s * s / (2 * R * R), delta))
    audit = epsilon_lower_bound(scores[0], scores[1], delta=delta)
    assert audit.epsilon_lower <= claim(1.0)
    assert audit.epsilon_lower > claim(float(secret_pairs_factor(rho, s / R, 1 / R, 1)))


def test_time_varying_network_is_one_release_per_sender_and_step():
    """On a network sequence (path, then star: the proxy draws on the union of the edges) the
    printed channel's report equals the broadcast Gaussian's; the per-message one counts more."""
    from jaxdp.network import NetworkSequence
    prob, _ = gossip_setup(N, D)
    seq = NetworkSequence([network.make_network("path", N), network.make_network("star", N)])
    with jax.enable_x64(True):
        alg, params = _dgd(_printed())
        bcast_alg, bcast_params = _dgd(channels.gaussian(4.0), broadcast=True)
        per_msg_alg, per_msg_params = _dgd(channels.pairwise_cancelling(4.0, 16.0))
        printed = alg.privacy(prob, seq, params, 4)
        bcast = bcast_alg.privacy(prob, seq, bcast_params, 4)
        per_msg = per_msg_alg.privacy(prob, seq, per_msg_params, 4)
    np.testing.assert_allclose(printed.epsilon, bcast.epsilon, rtol=1e-12)
    assert per_msg.epsilon[0] > printed.epsilon[0] * 1.2
