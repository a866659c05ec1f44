"""Linear gossip with time-correlated, pairwise and zero-sum noise, as a matrix-factorization
release (MFDL, ICLR 2026; :mod:`jaxdp.privacy._factorization` gives its ε): :func:`gossip_release`
builds the :class:`~jaxdp.privacy.pairwise.LinearRelease` ``y = A c + B z`` of one run.

**Zero-sum message noise, ``zero_sum="ring"``** (the default) is exactly
:func:`jaxdp.channels.zero_sum`'s construction: ``N_e = K_e − K_{next(e)}``, one seed
``K_e^k`` per directed edge and step (known to its sender) and ``next(e)`` the sender's next
outgoing edge in edge order, cyclically (:func:`out_edge_ring`, which the channel uses too),
so a sender's noise sums to zero over the messages it sends in a step; the kept copy
``W_ii p_i`` is not a message and gets none (``N_{i→i} = 0``); a sender of degree 1 sends its
value. Each message has variance ``2σ_z²`` (degree ≥ 2), covariance ``−σ_z²`` with its ring
neighbours (``−2σ_z²`` at degree 2). Against an observer of all of a sender's messages their
sum is noise-free: ``ε = ∞`` (the range test of the module docstring).

**Zip-DL's own construction, ``zero_sum="closed"``** (Biswas et al., PoPETs 2025, Alg. 1 and
Lemma 3.1): sender ``i`` draws ``Ñ_{i→v}`` iid ``N(0, 1)`` (times ``σ_z``, the paper's
``γσ_i``) for every ``v`` of its **closed** neighbourhood ``N̄(i) = N(i) ∪ {i}`` and sets
``N_{i→v} = Ñ_{i→v} − (d_i W_{iv})^{-1} Σ_{j∈N̄(i)} W_{ij} Ñ_{i→j}`` with
``d_i = |N̄(i)|`` (out-degree plus one) and ``W_{iv}`` the sender's own row, as printed. This
normalisation makes ``Σ_{v∈N̄(i)} W_{iv} N_{i→v} = Σ_v W_{iv} Ñ_{i→v} − (|N̄(i)|/d_i)
Σ_j W_{ij} Ñ_{i→j} = 0`` exactly. The seeds are known to ``i`` only; the message ``i→v``
carries ``N_{i→v}``, and ``N_{i→i}`` enters ``x_i^{k+1}`` (and every later step) through
``W_ii``: the messages ``i`` sends do not sum to zero, so an eavesdropper is not given
``ε = ∞`` structurally. For a symmetric ``W`` (the paper's) ``W_{iv} = W_{vi}`` is the weight
with which copy ``v`` enters ``x_v^{k+1}``, so the noise never changes ``Σ_v x_v``: with a
doubly stochastic ``W`` it never reaches the network average. For any row-stochastic ``W``
the identity gives ``x_i^{k+1} = p_i^k + (a linear function of the messages)``, so an
eavesdropper (no local noise) sees each agent's stream through a gain of 1: given the past
messages, sender ``i``'s messages at step ``k`` are ``p_i^k 1 + N_E`` with ``p_i^k`` shifted
by ``Σ_{s≤k} δ_s`` and ``N_E`` its edges' noise (covariance ``σ_z² Σ_i``, full rank), the
other senders' conditional laws free of ``c_i``, so by the chain rule ``μ_i² = Σ_k
(Σ_{s≤k} δ_s)² 1ᵀΣ_i⁻¹1/σ_z²`` (tested; ``1ᵀΣ_i⁻¹1 = d_i(d_i − 1)`` with equal row weights:
the mean of a sender's messages carries only ``−N_{i→i}/(d_i − 1)``). Weighting by the
receivers' ``W_{vi}`` instead would put the column sum ``Σ_v W_{vi}`` in that gain, which
exceeds 1 for some agent of a non-doubly-stochastic ``W`` and amplifies its contribution
geometrically over the steps. Needs ``W_ii > 0`` and ``W_{iv} > 0`` on every edge (a concrete
``W`` is checked). The authors' public implementation centres ``d`` draws on their
unweighted mean over the open neighbourhood (the self copy only as an option); that variant
is not built. MFDL's public code (Bellet et al., ICLR 2026) models no Zip-DL. Both options
are the IDEAL continuous-Gaussian mechanism's release (module docstring), not a bound for
any lattice implementation; jaxdp's runnable channel is the ring.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jaxdp._precision import matmul
from jaxdp.privacy._factorization import MAX_CONTRIBUTIONS, LinearRelease


def block_powers(W, steps: int, first_power: int = 0):
    """``(T·N, T·N)`` time-major block lower-triangular matrix with block ``(k, s)`` equal to
    ``W^{k−s+first_power}`` for ``k ≥ s`` (MFDL's workload ``W̃``; ``first_power = 1``: after the
    averaging step, their optimization workload)."""
    n = W.shape[0]
    powers = [jnp.linalg.matrix_power(W, first_power) if first_power else jnp.eye(n)]
    for _ in range(steps - 1):
        powers.append(matmul(powers[-1], W))
    powers = jnp.stack(powers)  # (T, N, N)
    k, s = np.tril_indices(steps)
    blocks = jnp.zeros((steps, steps, n, n)).at[k, s].set(powers[k - s])
    return blocks.transpose(0, 2, 1, 3).reshape(steps * n, steps * n)


def gossip_release(W, edges, steps: int, sigma_local=1.0, sigma_message=0.0, decoder=None,
                   sigma_pair=0.0, broadcast: bool = False,
                   sigma_zero_sum=0.0, zero_sum: str = "ring") -> LinearRelease:
    """Linear gossip with time-correlated local noise, in MF form (the MFDL form of
    :mod:`jaxdp.privacy._factorization`; the zero-sum constructions: this module's docstring).

    The mechanism of :class:`~jaxdp.privacy.pairwise.LinearGossip` (same ``W``, edges,
    ``x⁰ = 0``), with ``p^k = x^k + c^k + n^k``, ``n_i = σ_ℓ L ξ_i + σ_p Σ_{j∼i} ±z_{ij}``,
    ``m_{e}^k = p_{s(e)}^k + σ_m z_e^k + σ_z N_e^k``,
    ``x^{k+1}_i = W_ii (p_i^k + σ_z N_{i→i}^k) + Σ_{e: r(e)=i} W_{i s(e)} m_e^k``, with the
    zero-sum noise ``N`` of ``zero_sum`` (one step's map: :func:`_zero_sum_noise`).

    Args:
      W: ``(N, N)`` mixing matrix (jnp for gradients).
      edges: ``(senders, receivers)``: the directed edges (both directions of each link).
      decoder: ``L``: ``(T, T)`` lower triangular (``None``: the identity).
      broadcast: one row per agent and step (``p_i^k``, seen by every out-neighbour: MFDL's
        model, ``σ_m`` and ``σ_z`` must be 0) instead of one per message.
      sigma_zero_sum: ``σ_z`` (above).
      zero_sum: ``"ring"`` (jaxdp's channel) or ``"closed"`` (Zip-DL's Alg. 1), above.

    Raises:
      ValueError: bad sizes, edges, decoder, a per-message scale with ``broadcast``, an unknown
        ``zero_sum``, or (``"closed"``) a self-edge or a non-positive copy weight.
    """
    senders, receivers = (np.asarray(e, np.int64) for e in edges)
    n, T = W.shape[0], steps
    _check_gossip(n, T, senders, receivers, decoder, broadcast, sigma_message, sigma_zero_sum)
    _check_zero_sum(W, senders, receivers, zero_sum)
    msg_noise, self_noise, zs_owners = _message_noise(W, senders, receivers, sigma_message,
                                                      sigma_zero_sum, zero_sum)
    local = _local_noise(W, T, sigma_local, decoder)
    pair_secrets, pair_known = _pair_secrets(senders, receivers, n, T, sigma_pair)
    Wt = block_powers(W, T)
    B_state, models = _state_noise(W, Wt, (senders, receivers), local, pair_secrets,
                                   msg_noise, self_noise)
    own = np.repeat(np.eye(n, dtype=bool)[None], T, axis=0).reshape(T * n, n)
    own_msg = np.tile(np.eye(n, dtype=bool)[np.concatenate([senders, zs_owners])], (T, 1))
    knowers = np.concatenate([own, pair_known, own_msg])
    A_state = Wt.reshape(T * n, T, n).transpose(0, 2, 1)  # (T·N, N, T)
    if broadcast:
        audience = np.zeros((n, n), bool)
        audience[senders, receivers] = True
        return LinearRelease(A_state, B_state, np.tile(audience, (T, 1)),
                             np.tile(np.arange(n), T), knowers, models)
    return _message_release(A_state, B_state, (senders, receivers), msg_noise, knowers, models)


def _message_noise(W, senders, receivers, sigma_message, sigma_zero_sum, zero_sum: str):
    """One step's message noise at its scales: ``(msg (E, S'), self (N, S'), owners)``, message
    ``e``'s noise from its own seeds (``σ_m z_e``, then the zero-sum seeds of
    :func:`_zero_sum_noise`), the noise on each agent's kept copy ``W_ii p_i`` (zero-sum seeds
    only; none with the ring), and each zero-sum seed's sender."""
    n, E = W.shape[0], len(senders)
    zs_msg, zs_self, zs_owners = _zero_sum_noise(W, senders, receivers, zero_sum)
    msg_noise = jnp.concatenate([sigma_message * jnp.eye(E), sigma_zero_sum * zs_msg], 1)
    self_noise = jnp.concatenate([jnp.zeros((n, E)), sigma_zero_sum * zs_self], 1)
    return msg_noise, self_noise, zs_owners


def _local_noise(W, T: int, sigma_local, decoder):
    """``(T·N, T·N)``: the local noise ``σ_ℓ L ξ_i`` of every agent, time-major (``L`` the
    decoder, the identity by default)."""
    n = W.shape[0]
    L = jnp.eye(T) if decoder is None else jnp.tril(jnp.asarray(decoder))
    local = jnp.broadcast_to(jnp.asarray(sigma_local, W.dtype), (n,))
    return jnp.kron(L, jnp.eye(n)) * jnp.tile(local, T)[None, :]


def _state_noise(W, Wt, edges, local, pair_secrets, msg_noise, self_noise):
    """``(B_state, models)``: the noise of ``p = Wt (c + n) + Wt_shift (I ⊗ J) z_msg`` over the
    seeds (local, pairwise, then each step's message seeds), and of the models ``x^{k+1}``.
    Message noise of edge ``e`` at step ``s`` enters ``x_{r(e)}^{s+1}`` with weight
    ``W_{r(e)s(e)}``, the kept copy's with ``W_ii``."""
    senders, receivers = edges
    n, E, T = W.shape[0], len(senders), Wt.shape[0] // W.shape[0]
    J = matmul(jnp.zeros((n, E)).at[receivers, np.arange(E)].set(W[receivers, senders]),
               msg_noise) + jnp.diag(W)[:, None] * self_noise
    shift = jnp.concatenate([jnp.zeros((n, T * n)), Wt[:-n]], axis=0)  # block (k, s) = W^{k-1-s}
    msg_into_models = jnp.kron(jnp.eye(T), J)
    B_state = jnp.concatenate([matmul(Wt, local), matmul(Wt, pair_secrets),
                               matmul(shift, msg_into_models)], axis=1)
    n_msg = msg_into_models.shape[1]
    models = matmul(jnp.kron(jnp.eye(T), W), B_state) + jnp.concatenate(
        [jnp.zeros((T * n, B_state.shape[1] - n_msg)), msg_into_models], axis=1)
    return B_state, models


def _message_release(A_state, B_state, edges, msg_noise, knowers, models) -> LinearRelease:
    """One row per message: ``m_e^k = p_{s(e)}^k`` plus its own noise, seen by ``r(e)``."""
    senders, receivers = edges
    n, E = knowers.shape[1], len(senders)
    T = A_state.shape[0] // n
    n_msg = T * msg_noise.shape[1]
    rows = (np.arange(T)[:, None] * n + senders[None, :]).reshape(-1)
    B_msg = jnp.concatenate([jnp.zeros((T * E, B_state.shape[1] - n_msg)),
                             jnp.kron(jnp.eye(T), msg_noise)], axis=1)
    audience = np.tile(np.eye(n, dtype=bool)[receivers], (T, 1))
    return LinearRelease(A_state[rows], B_state[rows] + B_msg, audience, np.tile(senders, T),
                         knowers, models)


def _zero_sum_noise(W, senders, receivers, kind: str):
    """One step's zero-sum noise of :func:`gossip_release` at unit scale: ``(msg (E, S), self
    (N, S), owners (S,))``, the map from the step's ``S`` zero-sum seeds to the noise of each
    message and of each agent's kept copy, and each seed's sender (its only knower).

    ``"ring"``: :func:`jaxdp.channels.zero_sum`'s ``K_e − K_{next(e)}`` (:func:`out_edge_ring`),
    ``S = E``, no noise on the kept copy. ``"closed"``: Zip-DL's Alg. 1 (Biswas et al., PoPETs
    2025): one seed ``Ñ_{i→v}`` per copy ``v ∈ N̄(i) = N(i) ∪ {i}`` of sender ``i`` (the ``E``
    edges, then the ``N`` kept copies: ``S = E + N``) and ``N_{i→v} = Ñ_{i→v} − (d_i W_{iv})^{-1}
    Σ_{j ∈ N̄(i)} W_{ij} Ñ_{i→j}`` with ``d_i = |N̄(i)|``, so ``Σ_{v ∈ N̄(i)} W_{iv} N_{i→v} =
    0``."""
    E, n = len(senders), W.shape[0]
    if kind == "ring":
        with jax.ensure_compile_time_eval():  # concrete indices, also under jit
            ring = np.asarray(out_edge_ring(senders, n))
        return jnp.asarray(np.eye(E) - np.eye(E)[ring]), jnp.zeros((n, E)), senders
    owners = np.concatenate([senders, np.arange(n)])
    weights = jnp.concatenate([W[senders, receivers], jnp.diag(W)])  # ω_v = W_{iv}: i's row
    same = jnp.asarray(owners[:, None] == owners[None, :], W.dtype)
    size = np.bincount(owners, minlength=n)[owners]  # d_i of each copy's sender
    G = jnp.eye(E + n) - same * weights[None, :] / (size * weights)[:, None]
    return G[:E], G[E:], owners


def _check_zero_sum(W, senders, receivers, kind):
    """The closed construction divides by each copy's weight: no self-edge (the kept copy is not
    a message) and, for a concrete ``W``, ``W_ii > 0`` and ``W_{s(e)r(e)} > 0`` on every edge."""
    if kind not in ("ring", "closed"):
        raise ValueError(f"gossip_release: zero_sum must be 'ring' (jaxdp's zero_sum channel) or "
                         f"'closed' (Zip-DL's Alg. 1); got {kind!r}")
    if kind == "ring":
        return
    if np.any(senders == receivers):
        bad = int(np.argmax(senders == receivers))
        raise ValueError(f"gossip_release(zero_sum='closed'): edge {bad} is a self-edge; the "
                         "kept copy is the closed neighbourhood's own member")
    if isinstance(W, jax.core.Tracer):
        return
    weights = np.concatenate([np.asarray(W)[senders, receivers], np.diag(np.asarray(W))])
    if np.any(weights <= 0):
        bad = int(np.argmax(weights <= 0))
        where = f"edge {bad} (W[{senders[bad]}, {receivers[bad]}])" if bad < len(senders) else \
            f"the kept copy of agent {bad - len(senders)} (W_ii)"
        raise ValueError(f"gossip_release(zero_sum='closed') divides by each copy's weight: "
                         f"{where} is {float(weights[bad])!r}, must be > 0")


def _check_gossip(n, T, senders, receivers, decoder, broadcast, sigma_message, sigma_zero_sum):
    """:func:`gossip_release`'s input checks (each error names the value)."""
    if n * T > MAX_CONTRIBUTIONS:
        raise ValueError(f"gossip_release: N·T = {n}·{T} > {MAX_CONTRIBUTIONS}: lower T")
    for name, value in (("sigma_message", sigma_message), ("sigma_zero_sum", sigma_zero_sum)):
        if broadcast and not np.all(np.asarray(value) == 0):
            raise ValueError(f"broadcast rows carry no per-message noise: {name} must be 0; got "
                             f"{value!r}")
    if decoder is not None and np.shape(decoder) != (T, T):
        raise ValueError(f"gossip_release: the decoder must be (T, T) = ({T}, {T}); got shape "
                         f"{np.shape(decoder)}")
    if len(senders) != len(receivers) or np.any(np.concatenate([senders, receivers]) >= n) or \
            np.any(np.concatenate([senders, receivers]) < 0):
        raise ValueError(f"gossip_release: edges must be two equal-length lists of agents in "
                         f"0..{n - 1}; got {len(senders)} senders, {len(receivers)} receivers")


def out_edge_ring(senders, n_agents: int):
    """``(E,)``: for each directed edge, the next edge (cyclically, in edge order) with the same
    sender (itself for a sender of degree 1): the ring of Zip-DL's zero-sum noise
    (:func:`jaxdp.channels.zero_sum` draws ``K_e − K_{next(e)}``; :func:`gossip_release`)."""
    senders = jnp.asarray(senders)
    n_edges = senders.shape[0]
    order = jnp.argsort(senders, stable=True)
    first = jnp.searchsorted(senders[order], jnp.arange(n_agents))
    degree = jnp.bincount(senders, length=n_agents)
    s = senders[order]
    position = jnp.arange(n_edges) - first[s]
    following = order[first[s] + (position + 1) % jnp.maximum(degree[s], 1)]
    return jnp.zeros(n_edges, order.dtype).at[order].set(following)


def _pair_secrets(senders, receivers, n: int, T: int, sigma_pair):
    """``(T·N, T·L)`` the pairwise secrets' map into ``n`` (one seed per link and step, ``+`` at
    the smaller end) and ``(T·L, N)`` their knowers (both ends)."""
    links = np.unique(np.sort(np.stack([senders, receivers], 1), axis=1), axis=0)
    links = links[links[:, 0] != links[:, 1]]
    signs = np.zeros((n, len(links)))
    signs[links[:, 0], np.arange(len(links))] = 1.0
    signs[links[:, 1], np.arange(len(links))] = -1.0
    known = np.zeros((len(links), n), bool)
    known[np.arange(len(links)), links[:, 0]] = known[np.arange(len(links)), links[:, 1]] = True
    return (jnp.kron(jnp.eye(T), jnp.asarray(signs)) * sigma_pair, np.tile(known, (T, 1)))
