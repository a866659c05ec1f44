"""Zip-DL's own construction (Biswas et al., PoPETs 2025, Alg. 1 and Lemma 3.1: zero-sum noise
over the sender's CLOSED neighbourhood, its kept copy included) in the MF accountant,
``gossip_release(zero_sum="closed")`` (issue 24): equal to a per-node construction, the weighted
zero-sum identity, no noise on the network average, closed forms on a 3-path, an empirical lower
bound under the headline, and the ring construction (jaxdp's channel) as the ∞ control."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxdp.privacy.pairwise import factorization_epsilon, gossip_release, model_noise
from tests.test_factorization_zero_sum import _graph, impulse_columns

SIG = {"local": 0.8, "msg": 0.3, "zip": 1.3}
PATH_W = np.array([[2 / 3, 1 / 3, 0], [1 / 3, 1 / 3, 1 / 3], [0, 1 / 3, 2 / 3]])
PATH_EDGES = (np.array([0, 1, 1, 2]), np.array([1, 0, 2, 1]))


def _zip_noise(W, s, r, i, draws_edge, draw_self):
    """Sender ``i``'s noises ``{copy: N_{i→v}}`` (copy: an edge index, or ``"self"``) from its
    draws ``Ñ``, by Alg. 1's formula ``N_v = Ñ_v − (d ω_v)^{-1} Σ_j ω_j Ñ_j`` over the closed
    neighbourhood, ``ω_v = W_{iv}`` (the sender's own row, as printed)."""
    copies = {e: (W[i, r[e]], draws_edge[e]) for e in range(len(s)) if s[e] == i}
    copies["self"] = (W[i, i], draw_self)
    total = sum(w * d for w, d in copies.values())
    return {key: d - total / (len(copies) * w) for key, (w, d) in copies.items()}


def _per_node(W, s, r, T, c, xi, z_msg, zip_edge, zip_self):
    """The protocol with explicit loops over steps, senders and their outgoing edges: messages
    ``(T, E)`` and models after averaging ``x^1 … x^T`` ``(T, N)``."""
    n, E = W.shape[0], len(s)
    x, out, models = np.zeros(n), np.zeros((T, E)), np.zeros((T, n))
    for k in range(T):
        p = [x[i] + c[i, k] + SIG["local"] * xi[i, k] for i in range(n)]
        new = np.zeros(n)
        for i in range(n):
            noise = _zip_noise(W, s, r, i, zip_edge[:, k], zip_self[i, k])
            new[i] += W[i, i] * (p[i] + SIG["zip"] * noise["self"])
            for e in range(E):
                if s[e] == i:
                    out[k, e] = p[i] + SIG["msg"] * z_msg[e, k] + SIG["zip"] * noise[e]
                    new[r[e]] += W[r[e], i] * out[k, e]
        x = models[k] = new
    return out, models


def _impulses(W, s, r, T):
    """``(A, B, models, knowers)`` of :func:`_per_node` by unit impulses: ``A (rows, N·T)``,
    ``B (rows, seeds)``, ``models (T·N, seeds)`` and ``knowers (seeds, N)``."""
    n, E = W.shape[0], len(s)
    shapes = {"c": (n, T), "xi": (n, T), "z_msg": (E, T), "zip_edge": (E, T),
              "zip_self": (n, T)}
    owner = {"xi": np.arange(n), "z_msg": s, "zip_edge": s, "zip_self": np.arange(n)}
    cols = impulse_columns(lambda **a: _per_node(W, s, r, T, **a), shapes)
    knowers = [np.arange(n) == owner[name][idx[0]] for name, shape in shapes.items()
               if name != "c" for idx in np.ndindex(*shape)]
    A = np.array([m for m, _ in cols["c"]]).T
    seeds = [col for name in shapes if name != "c" for col in cols[name]]
    return (A, np.array([m for m, _ in seeds]).T, np.array([x for _, x in seeds]).T,
            np.array(knowers))


def _row_normalised():
    """:func:`_graph`'s edges with MFDL's ``(A + I)`` row-normalised weights: row-stochastic,
    not symmetric (the receiver's weight differs from the sender's)."""
    W, s, r = _graph()
    adj = (W > 0).astype(float)
    return adj / adj.sum(1, keepdims=True), s, r


GRAPHS = {"metropolis": _graph, "row-normalised": _row_normalised}


def _closed(W, edges, T, sigma_local=SIG["local"], sigma_message=SIG["msg"], **kw):
    return gossip_release(jnp.asarray(W), edges, T, sigma_local, sigma_message,
                          sigma_zero_sum=SIG["zip"], **kw)


def _mu2_by_hand(A, B, rows, known, u, T):
    """``Σ|Q|`` of agent ``u``'s view (rows ``rows``, seeds ``known`` subtracted)."""
    Bv = np.delete(B[rows], known, axis=1)
    Au = A[rows][:, u * T:(u + 1) * T]
    return np.abs(Au.T @ np.linalg.pinv(Bv @ Bv.T) @ Au).sum()


@pytest.mark.parametrize("graph", GRAPHS)
def test_equals_a_per_node_construction(graph):
    """``A``, the message covariance ``B Bᵀ``, the models' covariance and their cross covariance
    with the messages at 1e-10; the eavesdropper's and PNDP's μ² from the per-node matrices
    (each observer's unknown seeds) at 1e-8. A symmetric and a non-symmetric ``W``."""
    W, s, r = GRAPHS[graph]()
    assert np.allclose(W, W.T) == (graph == "metropolis")
    T, n, E = 3, 5, len(s)
    A_ref, B_ref, M_ref, know_ref = _impulses(W, s, r, T)
    with jax.enable_x64(True):
        rel = _closed(W, (s, r), T, zero_sum="closed")
        eaves = factorization_epsilon(rel, 1e-5, "eavesdropper").mu[:, 0] ** 2
        pndp = factorization_epsilon(rel, 1e-5, "neighbours").mu ** 2
    B, M = np.asarray(rel.B), np.asarray(rel.models)
    np.testing.assert_allclose(np.asarray(rel.A).reshape(T * E, n * T), A_ref, rtol=0, atol=1e-10)
    for got, ref in ((B @ B.T, B_ref @ B_ref.T), (M @ M.T, M_ref @ M_ref.T),
                     (M @ B.T, M_ref @ B_ref.T)):
        np.testing.assert_allclose(got, ref, rtol=0, atol=1e-10)
    for u in range(n):
        np.testing.assert_allclose(eaves[u], _mu2_by_hand(A_ref, B_ref, np.arange(T * E), [], u,
                                                          T), rtol=1e-8)
    for v in range(n):
        rows = [k * E + e for k in range(T) for e in range(E) if r[e] == v]
        for u in set(range(n)) - {v}:
            by_hand = _mu2_by_hand(A_ref, B_ref, rows, np.flatnonzero(know_ref[:, v]), u, T)
            np.testing.assert_allclose(pndp[u, v], by_hand, rtol=1e-8)


def test_weighted_zero_sum_identity():
    """``Σ_{v∈N̄(i)} W_{iv} N_{i→v} = 0`` with the kept copy, for random draws: in the per-node
    formula, and in the release's rows (one step, only sender ``i``'s seeds: its messages' noise
    and its kept copy's, read from ``x_i^1``); without the kept copy the messages do not sum to
    zero (weighted or not). Non-symmetric ``W``: the sender's own row weights."""
    W, s, r = _row_normalised()
    rng = np.random.default_rng(0)
    E = len(s)
    for _ in range(20):
        draws_edge, draws_self = rng.normal(size=E), rng.normal(size=5)
        for i in range(5):
            noise = _zip_noise(W, s, r, i, draws_edge, draws_self[i])
            total = W[i, i] * noise["self"] + sum(W[i, r[e]] * noise[e] for e in noise
                                                   if e != "self")
            assert abs(total) < 1e-12
    with jax.enable_x64(True):
        rel = _closed(W, (s, r), 1, sigma_local=0.0, sigma_message=0.0, zero_sum="closed")
    B, M = np.asarray(rel.B), np.asarray(rel.models)
    z = rng.normal(size=(B.shape[1], 100))
    for i in range(5):
        mine = np.where(rel.knowers[:, i], 1.0, 0.0)[:, None] * z  # only i's seeds drawn
        out = np.flatnonzero(s == i)
        messages = (W[i, r[out]] @ B[out]) @ mine
        np.testing.assert_allclose(messages + M[i] @ mine, 0.0, rtol=0, atol=1e-12)
        assert np.min(np.abs(messages)) > 1e-6 and np.min(np.abs(B[out].sum(0) @ mine)) > 1e-6


def test_zip_noise_never_reaches_the_network_average():
    """Symmetric doubly stochastic ``W``: the average of the models after every step carries no
    Zip-DL noise (only the local noise's), though each model does. Control: the ring
    construction (jaxdp's channel) does reach the average when a sender's weights differ."""
    W, s, r = _graph()
    assert np.allclose(W, W.T) and np.allclose(W.sum(0), 1)
    T = 3
    with jax.enable_x64(True):
        closed = _closed(W, (s, r), T, sigma_local=0.0, sigma_message=0.0, zero_sum="closed")
        ring = _closed(W, (s, r), T, sigma_local=0.0, sigma_message=0.0)
        mixed = _closed(W, (s, r), T, sigma_message=0.0, zero_sum="closed")
        local = gossip_release(jnp.asarray(W), (s, r), T, SIG["local"])
    average = np.kron(np.eye(T), np.full((1, 5), 0.2))  # (T, T·N)
    np.testing.assert_allclose(average @ np.asarray(closed.models), 0.0, rtol=0, atol=1e-12)
    assert float(model_noise(closed)) > 1.0
    assert np.max(np.abs(average @ np.asarray(ring.models))) > 1e-3
    np.testing.assert_allclose(np.sum((average @ np.asarray(mixed.models)) ** 2),
                               np.sum((average @ np.asarray(local.models)) ** 2), rtol=1e-12)


@pytest.mark.parametrize("graph", GRAPHS)
def test_eavesdropper_by_the_chain_rule(graph):
    """No local noise, row-stochastic ``W``, one participation (``gossip_release``'s docstring):
    the eavesdropper's ``μ_i² = T · 1ᵀΣ_i⁻¹1 / σ_z²`` (a change at step 0 shifts ``p_i^k`` by 1
    at every step), ``Σ_i`` the covariance of sender ``i``'s message noises from the per-node
    formula; with equal row weights (row-normalised) ``1ᵀΣ_i⁻¹1 = d_i(d_i − 1)``."""
    W, s, r = GRAPHS[graph]()
    T = 3
    with jax.enable_x64(True):
        rel = _closed(W, (s, r), T, sigma_local=0.0, sigma_message=0.0, zero_sum="closed")
        got = factorization_epsilon(rel, 1e-5, "eavesdropper", participation=T).mu[:, 0] ** 2
    for i in range(5):
        out = np.flatnonzero(s == i)
        unit = np.eye(len(s) + 1)  # Ñ on each edge copy of i, then on its kept copy (last)
        impulses = [_zip_noise(W, s, r, i, unit[j, :-1], unit[j, -1]) for j in [*out, len(s)]]
        G = np.array([[noise[e] for noise in impulses] for e in out])  # (edges, copies)
        ones = np.ones(len(out))
        per_step = ones @ np.linalg.solve(G @ G.T, ones)
        np.testing.assert_allclose(got[i], T * per_step / SIG["zip"] ** 2, rtol=1e-8)
        if graph == "row-normalised":
            np.testing.assert_allclose(per_step, (len(out) + 1) * len(out), rtol=1e-10)


@pytest.mark.parametrize("sigma_local", [0.0, 0.7])
def test_three_path_closed_forms(sigma_local):
    """One step on the path 0–1–2 (MH weights, 1/3 on the links, σ_z = 1.3, no message noise).
    Agent 1: ``d = 3``, equal weights: ``N_v = Ñ_v − mean(Ñ)``, so its two messages have
    covariance ``σ_z²/3 [[2, −1], [−1, 2]]`` (plus ``σ_ℓ² 11ᵀ``), whose eigenvector ``d = (1, 1)``
    has eigenvalue ``2σ_ℓ² + σ_z²/3``: the eavesdropper's ``μ² = dᵀΣ⁻¹d = 6/(6σ_ℓ² + σ_z²)``.
    Agent 0: ``d = 2``, ``ω = (2/3 self, 1/3 message)``: ``N_msg = Ñ_m/2 − Ñ_self``, variance
    ``5σ_z²/4``, so ``μ² = 1/(σ_ℓ² + 5σ_z²/4)`` (agent 2 alike). PNDP, observer 0 about agent 1:
    one row, ``μ² = 1/(σ_ℓ² + 2σ_z²/3)``; observer 1 about 0: ``1/(σ_ℓ² + 5σ_z²/4)``."""
    sz = SIG["zip"]
    with jax.enable_x64(True):
        rel = _closed(PATH_W, PATH_EDGES, 1, sigma_local=sigma_local, sigma_message=0.0,
                      zero_sum="closed")
        eaves = factorization_epsilon(rel, 1e-5, "eavesdropper").mu[:, 0] ** 2
        secret = factorization_epsilon(rel, 1e-5, "secret_pairs").mu[:, 0] ** 2
        pndp = factorization_epsilon(rel, 1e-5, "neighbours").mu ** 2
    leaf = 1 / (sigma_local ** 2 + 5 * sz ** 2 / 4)
    np.testing.assert_allclose(eaves, [leaf, 6 / (6 * sigma_local ** 2 + sz ** 2), leaf],
                               rtol=1e-10)
    np.testing.assert_allclose(secret, eaves, rtol=1e-10)  # a curious agent sees less
    np.testing.assert_allclose([pndp[1, 0], pndp[0, 1], pndp[2, 1]],
                               [1 / (sigma_local ** 2 + 2 * sz ** 2 / 3), leaf, leaf], rtol=1e-10)
    assert pndp[2, 0] == 0.0


def test_ring_is_infinite_where_closed_is_finite():
    """Positive control (no local noise, 3 steps): the ring construction gives every agent
    ``μ = ∞`` against the eavesdropper and under SecLDP, and ∞ under PNDP for the neighbours of
    a degree-1 sender; the closed construction on the same graph is finite for every pair."""
    W, s, r = _graph()
    with jax.enable_x64(True):
        for threat in ("eavesdropper", "secret_pairs", "neighbours"):
            ring = factorization_epsilon(_closed(W, (s, r), 3, 0.0, 0.0), 1e-5, threat).mu
            closed = factorization_epsilon(_closed(W, (s, r), 3, 0.0, 0.0, zero_sum="closed"),
                                           1e-5, threat).mu
            off = ~np.eye(5, dtype=bool) if threat == "neighbours" else np.ones_like(ring, bool)
            assert np.any(np.isinf(ring[off]))
            assert np.all(np.isfinite(closed[off])) and np.all(closed[off] > 0), (threat, closed)
            if threat != "neighbours":
                assert np.all(np.isinf(ring))


def test_empirical_lower_bound_stays_below_the_headline():
    """Adversarial check of the eavesdropper's value for agent 1 on the 3-path over 2 steps
    (``SIG``'s local, message and zip noise; every-step participation): transcripts sampled from
    the per-node construction (40 000 per neighbouring data set, independent of
    ``gossip_release``) under the worst-case pairs ``δ = (1, ±1)``; the attacker's linear test (weights fitted on one half,
    evaluated on the other) gives ``μ̂²`` that must stay below the headline (up to 4 standard
    errors) and come within 10 % of it. Positive control: the per-message claim
    ``1/Var(one message)`` (ignoring that the attacker sees both) falls below the lower bound."""
    T, u = 2, 1
    A, B, _, _ = _impulses(PATH_W, *PATH_EDGES, T)
    with jax.enable_x64(True):
        rel = _closed(PATH_W, PATH_EDGES, T, zero_sum="closed")
        headline = factorization_epsilon(rel, 1e-5, "eavesdropper").mu[u, 0] ** 2
    rng = np.random.default_rng(1)
    lower = 0.0
    for sign in (1.0, -1.0):
        delta = np.zeros(A.shape[1])
        delta[u * T:(u + 1) * T] = [1.0, sign]
        y0 = (B @ rng.normal(size=(B.shape[1], 40000))).T
        y1 = ((A @ delta)[:, None] + B @ rng.normal(size=(B.shape[1], 40000))).T
        half = 20000
        shift = y1[:half].mean(0) - y0[:half].mean(0)
        cov = np.cov(np.concatenate([y0[:half], y1[:half] - shift]).T)
        w = np.linalg.pinv(cov) @ shift
        t0, t1 = y0[half:] @ w, y1[half:] @ w
        lower = max(lower, (t1.mean() - t0.mean()) ** 2 / np.var(np.concatenate([t0, t1 - (
            t1.mean() - t0.mean())])))
    standard_error = 2 * np.sqrt(headline / half) + headline / half  # of μ̂² around μ²
    assert lower <= headline + 4 * standard_error, (lower, headline)
    assert lower >= 0.9 * headline, (lower, headline)
    single = 1 / (SIG["local"] ** 2 + SIG["msg"] ** 2 + 2 * SIG["zip"] ** 2 / 3)  # one message
    assert single < lower, (single, lower)


def test_bad_input_is_refused_naming_the_value():
    W, s, r = _graph()
    with pytest.raises(ValueError, match="zero_sum must be 'ring'.*got 'open'"):
        _closed(W, (s, r), 2, zero_sum="open")
    hollow = W.copy()
    hollow[3, 3] = 0.0
    with pytest.raises(ValueError, match=r"kept copy of agent 3 \(W_ii\) is 0.0"):
        _closed(hollow, (s, r), 2, zero_sum="closed")
    with pytest.raises(ValueError, match="edge 12 is a self-edge"):
        _closed(W, (np.append(s, 2), np.append(r, 2)), 2, zero_sum="closed")
    with pytest.raises(ValueError, match="sigma_zero_sum must be 0; got 1.3"):
        _closed(W, (s, r), 2, sigma_message=0.0, zero_sum="closed", broadcast=True)
