"""Zip-DL's zero-sum message noise in the MF accountant (``gossip_release(sigma_zero_sum=)``,
issue 24): equal to a per-node construction, equal in covariance to the runnable channel
``jaxdp.channels.zero_sum``, ``inf`` against an observer of all of a sender's messages, and a
closed form under PNDP; and the singular-view logic it needs (range test, pseudo-inverse)."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxdp import algorithms, channels
from jaxdp.privacy.pairwise import factorization_epsilon, gossip_release, model_noise
from tests.harness import gossip_setup

SIG = {"local": 0.8, "msg": 0.3, "zero_sum": 1.3}


def _graph():
    """5 agents: a 4-ring with a chord (0–2) and a pendant 4 on agent 0 (degrees 4, 2, 3, 2, 1),
    Metropolis–Hastings weights, the directed edges in a shuffled order (the ring follows the
    edge order, not the agent order)."""
    adj = np.zeros((5, 5))
    for a, b in [(0, 1), (1, 2), (2, 3), (3, 0), (0, 2), (0, 4)]:
        adj[a, b] = adj[b, a] = 1
    deg = adj.sum(1)
    W = np.where(adj > 0, 1 / (1 + np.maximum(deg[:, None], deg[None, :])), 0.0)
    W += np.diag(1 - W.sum(1))
    senders, receivers = np.nonzero(adj)
    order = np.random.default_rng(5).permutation(len(senders))
    return W, senders[order], receivers[order]


def _per_node(W, s, r, T, c, xi, z_msg, K):
    """The protocol with explicit loops over steps, senders and their outgoing edges: messages
    ``(T, E)`` and models after averaging ``x^1 … x^T`` ``(T, N)``; sender ``j``'s zero-sum noise on its ``i``-th outgoing edge (edge order) is
    ``σ_z (K_i − K_{i+1 mod deg})``."""
    n, E = W.shape[0], len(s)
    x, out, models = np.zeros(n), np.zeros((T, E)), np.zeros((T, n))
    for k in range(T):
        p = np.array([x[i] + c[i, k] + SIG["local"] * xi[i, k] for i in range(n)])
        new = np.array([W[i, i] * p[i] for i in range(n)])
        for j in range(n):
            mine = [e for e in range(E) if s[e] == j]
            for pos, e in enumerate(mine):
                following = mine[(pos + 1) % len(mine)]
                out[k, e] = (p[j] + SIG["msg"] * z_msg[e, k]
                             + SIG["zero_sum"] * (K[e, k] - K[following, k]))
                new[r[e]] += W[r[e], j] * out[k, e]
        x = models[k] = new
    return out, models


def impulse_columns(per_node, shapes):
    """``{input: [outputs]}``: ``per_node(**inputs)`` (a linear map of the named arrays of
    ``shapes``) at every unit impulse, its outputs flattened — a reference's matrix columns."""
    cols = {}
    for name, shape in shapes.items():
        cols[name] = []
        for idx in np.ndindex(*shape):
            args = {key: np.zeros(v) for key, v in shapes.items()}
            args[name][idx] = 1.0
            cols[name].append([a.reshape(-1) for a in per_node(**args)])
    return cols


def _impulses(W, s, r, T):
    """``(A (rows, N·T), B (rows, seeds), models (T·N, seeds))`` of :func:`_per_node`, column by
    unit impulse."""
    n, E = W.shape[0], len(s)
    shapes = {"c": (n, T), "xi": (n, T), "z_msg": (E, T), "K": (E, T)}
    cols = impulse_columns(lambda **a: _per_node(W, s, r, T, **a), shapes)
    A = np.array([m for m, _ in cols["c"]]).T
    seeds = cols["xi"] + cols["z_msg"] + cols["K"]
    return A, np.array([m for m, _ in seeds]).T, np.array([x for _, x in seeds]).T


def test_equals_a_per_node_construction():
    """A and the full message covariance ``B Bᵀ`` at 1e-10, and PNDP's μ² from the per-node
    matrices (every observer's unknown seeds) at 1e-8."""
    W, s, r = _graph()
    T, n, E = 3, 5, len(s)
    A_ref, B_ref, _ = _impulses(W, s, r, T)
    with jax.enable_x64(True):
        rel = gossip_release(jnp.asarray(W), (s, r), T, SIG["local"], SIG["msg"],
                             sigma_zero_sum=SIG["zero_sum"])
        got = factorization_epsilon(rel, 1e-5, "neighbours")
    A = np.asarray(rel.A).reshape(T * E, n * T)  # columns (agent, step), as A_ref
    np.testing.assert_allclose(A, A_ref, rtol=0, atol=1e-10)
    B = np.asarray(rel.B)
    np.testing.assert_allclose(B @ B.T, B_ref @ B_ref.T, rtol=0, atol=1e-10)
    for v in range(n):  # the observer knows its own seeds: local, message and zero-sum
        rows = [k * E + e for k in range(T) for e in range(E) if r[e] == v]
        known = np.concatenate([np.arange(n * T).reshape(n, T)[v],
                                n * T + np.flatnonzero(np.repeat(s == v, T)),
                                n * T + E * T + np.flatnonzero(np.repeat(s == v, T))])
        Bv = np.delete(B_ref[rows], known, axis=1)
        sigma_inv = np.linalg.inv(Bv @ Bv.T)
        for u in set(range(n)) - {v}:
            Au = A_ref[rows][:, u * T:(u + 1) * T]
            np.testing.assert_allclose(got.mu[u, v] ** 2, np.abs(Au.T @ sigma_inv @ Au).sum(),
                                       rtol=1e-8)


def _channel_messages(draws: int, sigma: float):
    """``(draws·D, 2E)`` message noise of one DGD step through ``clip + zero_sum`` (lattice),
    centred, and the network."""
    prob, net = gossip_setup(6, 3)
    alg = channels.with_channel(algorithms.DGD(),
                                channels.chain(channels.clip(0.7), channels.zero_sum(sigma)))
    params = alg.params(algorithms.DGDParams(alpha=0.1))
    state = algorithms.catalogue.classic.DGDState(
        x=jnp.asarray(np.random.default_rng(3).normal(size=(6, 3))))

    def messages(key):
        noise = alg.noise(key, state, params, jnp.int32(0))
        return alg.step(state, noise, prob, net, params, jnp.int32(0))[1]["mix0"]

    out = np.asarray(jax.jit(jax.vmap(messages))(jax.random.split(jax.random.key(0), draws)))
    noise = (out - out.mean(0)).transpose(0, 2, 1)  # each coordinate is an independent draw
    return noise.reshape(-1, out.shape[1]), net


def test_covariance_equals_the_runnable_channels():
    """The sample covariance of every directed message's noise (3000 draws × 3 coordinates) is the
    accountant's ``B Bᵀ`` at step 0 within 0.15σ² (each entry's standard error is at most
    ``σ²√(8/9000) ≈ 0.03σ²``; the fixed seed's largest gap is 0.06σ²): the ring's ``−σ²`` beside
    ``2σ²`` and zeros elsewhere. Independent message noise (of either variance) misses by 2σ²."""
    sigma = 0.5
    with jax.enable_x64(True):
        noise, net = _channel_messages(3000, sigma)
        W = net.dense("W")
        rel = gossip_release(jnp.asarray(W), (np.asarray(net.senders), np.asarray(net.receivers)),
                             1, sigma_local=0.0, sigma_zero_sum=sigma)
    model = np.asarray(rel.B) @ np.asarray(rel.B).T
    assert np.sum(np.abs(model - np.diag(np.diag(model))) > 0.5 * sigma ** 2) >= 8  # correlated
    sample = noise.T @ noise / len(noise)
    np.testing.assert_allclose(sample / sigma ** 2, model / sigma ** 2, rtol=0, atol=0.15)


def _path(sigma_local: float, sigma_z: float):
    """The 3-path 0–1–2, one step, MH weights (1/3 on the links)."""
    W = np.array([[2 / 3, 1 / 3, 0], [1 / 3, 1 / 3, 1 / 3], [0, 1 / 3, 2 / 3]])
    s, r = np.array([0, 1, 1, 2]), np.array([1, 0, 2, 1])
    return gossip_release(jnp.asarray(W), (s, r), 1, sigma_local, sigma_zero_sum=sigma_z)


@pytest.mark.parametrize("sigma_local", [0.0, 0.7])
def test_three_path_closed_form(sigma_local):
    """One step on the path 0–1–2, zero-sum noise σ_z. Agent 1 (degree 2) sends
    ``c₁ + ℓ₁ ± σ_z(K_a − K_b)``; agents 0 and 2 (degree 1) send ``c + ℓ`` (ℓ local noise of scale
    σ_ℓ). PNDP, observer 0: its view of 1 is one row of variance ``σ_ℓ² + 2σ_z²`` (μ² = 1/that);
    observer 1 sees ``c₀ + ℓ₀`` (μ² = 1/σ_ℓ², ∞ without local noise); observer 0 never sees c₂ in
    one step (μ = 0). Eavesdropper, agent 1: ``d = (1, 1)`` on its two rows,
    ``Σ = σ_ℓ² 11ᵀ + 2σ_z² (1, −1)(1, −1)ᵀ``: ``dᵀΣ⁺d = 1/σ_ℓ²`` (the zero-sum part adds nothing)
    and ``d`` leaves the range when σ_ℓ = 0 (∞)."""
    sz = 1.3
    with jax.enable_x64(True):
        rel = _path(sigma_local, sz)
        pndp = factorization_epsilon(rel, 1e-5, "neighbours").mu ** 2
        eaves = factorization_epsilon(rel, 1e-5, "eavesdropper").mu[:, 0] ** 2
        secret = factorization_epsilon(rel, 1e-5, "secret_pairs").mu[:, 0] ** 2
    inv = np.inf if sigma_local == 0 else 1 / sigma_local ** 2
    np.testing.assert_allclose(pndp[1, 0], 1 / (sigma_local ** 2 + 2 * sz ** 2), rtol=1e-10)
    assert pndp[2, 0] == 0.0
    np.testing.assert_allclose([pndp[0, 1], pndp[2, 1]], [inv, inv], rtol=1e-10)
    d = np.ones(2)
    sigma = sigma_local ** 2 * np.outer(d, d) + 2 * sz ** 2 * np.outer([1, -1], [1, -1])
    by_hand = d @ np.linalg.pinv(sigma) @ d if sigma_local > 0 else np.inf
    in_range = np.allclose(sigma @ np.linalg.pinv(sigma) @ d, d)
    assert in_range == (sigma_local > 0)
    np.testing.assert_allclose(eaves[1], by_hand, rtol=1e-10)
    np.testing.assert_allclose(eaves, [inv] * 3, rtol=1e-10)
    np.testing.assert_allclose(secret, eaves, rtol=1e-10)  # SecLDP's outsider sees every row


def test_infinite_against_an_observer_of_all_messages_finite_for_pndp():
    """Zero-sum noise alone (Zip-DL): every agent's ε is ∞ for the eavesdropper and for SecLDP
    (its outsider), over several steps; under PNDP every pair whose sender has degree ≥ 2 is
    finite and exactly the neighbours of a degree-1 sender get ∞."""
    W, s, r = _graph()
    with jax.enable_x64(True):
        rel = gossip_release(jnp.asarray(W), (s, r), 3, 0.0, sigma_zero_sum=1.0)
        for threat in ("eavesdropper", "secret_pairs"):
            assert np.all(np.isinf(factorization_epsilon(rel, 1e-5, threat).epsilon))
        pndp = factorization_epsilon(rel, 1e-5, "neighbours").mu
    degree = np.bincount(s, minlength=5)
    neighbour = np.zeros((5, 5), bool)
    neighbour[s, r] = True
    leaked = neighbour & (degree[:, None] == 1)
    off = ~np.eye(5, dtype=bool)
    np.testing.assert_array_equal(np.isinf(pndp) & off, leaked)
    assert np.all(pndp[off & ~leaked] > 0)


def test_zero_sum_noise_adds_nothing_for_the_eavesdropper():
    """With local noise too, an observer of every message gets each sender's ``p^k`` exactly from
    the mean of its messages, and the rest is independent of the data: its value is the
    broadcast release's without the zero-sum noise (a non-trivial range computation)."""
    W, s, r = _graph()
    with jax.enable_x64(True):
        mixed = gossip_release(jnp.asarray(W), (s, r), 3, 0.9, sigma_zero_sum=2.0)
        local = gossip_release(jnp.asarray(W), (s, r), 3, 0.9, broadcast=True)
        got = factorization_epsilon(mixed, 1e-5, "eavesdropper").mu
        ref = factorization_epsilon(local, 1e-5, "eavesdropper").mu
    np.testing.assert_allclose(got, ref, rtol=1e-9)


def test_duplicated_rows_use_the_pseudo_inverse():
    """Per-message rows without message noise repeat each broadcast row: the view's covariance is
    singular but every shift lies in its range, and the value is the broadcast release's."""
    W, s, r = _graph()
    with jax.enable_x64(True):
        per_message = gossip_release(jnp.asarray(W), (s, r), 3, 0.9)
        broadcast = gossip_release(jnp.asarray(W), (s, r), 3, 0.9, broadcast=True)
        for threat in ("eavesdropper", "neighbours"):
            got = factorization_epsilon(per_message, 1e-5, threat).mu
            ref = factorization_epsilon(broadcast, 1e-5, threat).mu
            assert np.array_equal(np.isinf(got), np.isinf(ref))
            np.testing.assert_allclose(got[np.isfinite(ref)], ref[np.isfinite(ref)], rtol=1e-8)
        np.testing.assert_allclose(model_noise(per_message), model_noise(broadcast, W),
                                   rtol=1e-12)


def test_model_noise_counts_the_message_noise_into_the_models():
    """``model_noise`` of a per-message release is ``Σ_k Σ_i Var(x_i^{k+1})`` of the per-node
    models (local, message and zero-sum noise), which differs from the local-only value."""
    W, s, r = _graph()
    _, _, models = _impulses(W, s, r, 2)
    with jax.enable_x64(True):
        rel = gossip_release(jnp.asarray(W), (s, r), 2, SIG["local"], SIG["msg"],
                             sigma_zero_sum=SIG["zero_sum"])
        local_only = gossip_release(jnp.asarray(W), (s, r), 2, SIG["local"])
        got, base = float(model_noise(rel)), float(model_noise(local_only))
    np.testing.assert_allclose(got, np.sum(models ** 2), rtol=1e-10)
    assert got > 1.1 * base


def test_bad_input_is_refused_naming_the_value():
    W, s, r = _graph()
    with pytest.raises(ValueError, match="sigma_zero_sum must be 0; got 1.0"):
        gossip_release(jnp.asarray(W), (s, r), 2, sigma_zero_sum=1.0, broadcast=True)
