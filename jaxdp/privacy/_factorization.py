"""Ideal-Gaussian accounting of decentralized learning in matrix-factorization form (issue 24).

**The form** (Bellet, Cyffers, Frey, Gaudel, Lerévérend & Taïani, "Unified Privacy Guarantees for
Decentralized Learning via Matrix Factorization", ICLR 2026, arXiv:2510.17480 — *MFDL* below —
every linear DP-DL algorithm releases ``A c + B z``). One coordinate (the others are
independent copies); agents ``i = 1..N``, steps ``s = 0..T−1``; ``c_{u,s}`` agent ``u``'s
contribution at step ``s``; ``z`` iid standard Gaussians (the noise *seeds*). The transcript is a
:class:`LinearRelease`: rows ``m`` (messages) with

.. math::  y_m = \\sum_{u,s} A_{m,u,s}\\, c_{u,s} + \\sum_k B_{m,k}\\, z_k ,

who sees each row (``audience``), who knows each seed (``knowers``: an agent's own local and
message seeds; both ends of an edge know their pairwise secret). An observer sees rows ``O``
and subtracts the seeds ``K`` it knows and the contributions of other agents (which do not change
between the neighbouring data sets of ``u``): its view of ``u`` is ``A_O c_u + B_{O,∖K} z``, a
Gaussian mechanism with covariance ``Σ = B_{O,∖K} B_{O,∖K}ᵀ``. With ``Q = A_{O,u}ᵀ Σ⁻¹ A_{O,u}``
(``T × T``) and contributions that may change by ``‖δ_s‖₂ ≤ Δ`` at the steps ``P`` of one
participation class, the squared sensitivity (in noise units) is
``sup_δ Σ_{s,t∈P} Q_{st} δ_sᵀ δ_t ≤ Δ² min(Σ_{s,t∈P} |Q_{st}|, |P| λ_max(Q_P))`` (the first
attained when ``Q_P ≥ 0``: the same vector at every step; the second because the Gram matrix
``G_{st} = δ_sᵀδ_t ⪰ 0`` has trace ``≤ |P|Δ²``, so ``tr(Q_P G) ≤ λ_max(Q_P) |P| Δ²`` — the
tighter one where ``Q`` has negative entries, e.g. an observer that differences messages),
``μ² = max_P`` of it; ``ε(δ)`` is the exact Gaussian mechanism's (Balle &
Wang, ICML 2018, Thm 8). This is MFDL's Theorem-style sensitivity ``‖C_O e‖`` generalised to any
``B`` (MFDL's ``A = B C`` with ``B_O`` not square: here ``Σ⁻¹`` replaces ``B_O^+``), and exactly
:func:`jaxdp.privacy.linear_gossip_epsilon`'s quantity when the noise is independent.

**What it is not.** The IDEAL continuous-Gaussian mechanism with NON-ADAPTIVE contributions
(fixed before the run). It is not a bound for the library's lattice noise (a discrete Gaussian
mixed by real matrices is not Gaussian) nor for gradients evaluated at models that depend on
other agents' messages; a report may show it only as a curve named "ideal". The sound report of a
run is :mod:`jaxdp.algorithms.catalogue.mafalda`'s.

**Correlated noise over time** (:func:`gossip_release`): each agent's local noise is
``σ_ℓ L ξ_i`` with ``L`` a ``T × T`` lower-triangular *noise decoder* (MFDL's ``C^+``: ``L = I``
is DP-DGD / Muffliato, ``L = C^{-1}`` an encoder ``C``), optional per-message noise ``σ_m`` and
pairwise-cancelling secrets ``σ_p`` (DECOR: Allouah et al., ICML 2024: agent ``i`` adds
``σ_p Σ_{j∼i} ±z_{ij}^s``, the sign ``+`` for ``i < j``) and zero-sum message noise ``σ_z``
(Zip-DL: Biswas et al., PoPETs 2025; two constructions, jaxdp's channel's ring and the paper's
closed neighbourhood: :func:`gossip_release`).

**Singular views.** ``Σ`` need not be invertible (duplicated rows, or Zip-DL's zero-sum noise in
jaxdp's ring construction: the sum of a sender's messages carries none). On the host path
(``xp=np``, what :func:`factorization_epsilon` uses) ``Σ = U Λ Uᵀ`` is split into its numerical
range (``λ > M·eps·λ_max``, numpy's rank rule) and kernel
(:func:`~jaxdp.privacy._pairwise.range_whiten`): a contribution column ``A_{·,u,s}`` with a
component in the kernel above :data:`~jaxdp.privacy._pairwise.CLEAR_LEAK` of its norm moves the
view's mean along a direction with no noise, the two Gaussians are mutually singular and
``μ = ∞``; one below :data:`RANGE_TOL` is in the range and ``Q = A_uᵀ Σ⁺ A_u``. **Ambiguous
rank decisions** (issue 36): a kernel component between the two, or a value carried by
eigenvalues below ``10⁻⁶ λ_max`` (known to a few digits at best, their eigenvectors mixed with
the kernel: Muffliato's gossip averaging on the Florentine families at ``T = 20`` gave
``μ = 0.46`` for an exact 1) are not decided in float64: the agent gets the worst observer's
value (:func:`~jaxdp.privacy._pairwise.cap_pairwise`, the coalition of every other agent, which
bounds every observer) and the result says why (``reason``). Every value is also capped there:
an observer never learns more than the coalition that contains it. The ``jnp`` path
(differentiable) keeps the Cholesky solve and needs ``Σ`` positive definite (NaN otherwise).

Everything here is ``jnp`` and differentiable in ``W``, the noise scales and ``L``
(:func:`release_mu2`). Sizes are bounded: ``N·T ≤`` :data:`MAX_CONTRIBUTIONS` and a view of at
most :data:`MAX_ROWS` rows, refused beyond with the sizes named.
"""
from __future__ import annotations

import dataclasses
import functools

import jax
import jax.numpy as jnp
import numpy as np

from jaxdp._precision import einsum, matmul
from jaxdp.privacy._pairwise import (
    AMBIGUOUS,
    PairwiseResult,
    cap_pairwise,
    gaussian_epsilon,
    range_whiten,
)
from jaxdp.privacy._threat import Coalition, Eavesdropper, Neighbours, SecretPairs, as_threat

MAX_CONTRIBUTIONS = 3000
"""The largest ``N·T`` (contribution columns of ``A``)."""
MAX_ROWS = 4000
"""The largest number of released rows (``Σ`` is ``MAX_ROWS²`` float64: 128 MB)."""


@dataclasses.dataclass(frozen=True)
class LinearRelease:
    """A linear Gaussian transcript ``y = A c + B z`` (module docstring).

    Attributes:
      A: ``(M, N, T)``: row ``m``'s coefficient of agent ``u``'s contribution at step ``s``.
      B: ``(M, K)``: row ``m``'s coefficient of seed ``k``.
      audience: ``(M, N)`` bool: the agents that receive row ``m``.
      senders: ``(M,)``: the agent that sends row ``m``.
      knowers: ``(K, N)`` bool: the agents that know seed ``k``.
      models: ``(T·N, K)`` or ``None``: the seeds' map into the models after each step's
        averaging, ``x^1 … x^T`` (time-major; :func:`gossip_release` records it for
        :func:`model_noise`).
    """

    A: jax.Array
    B: jax.Array
    audience: np.ndarray
    senders: np.ndarray
    knowers: np.ndarray
    models: jax.Array | None = None

    def __post_init__(self):
        m, n, t = np.shape(self.A)
        if n * t > MAX_CONTRIBUTIONS or m > MAX_ROWS:
            raise ValueError(f"LinearRelease: N·T = {n * t} contributions (limit "
                             f"{MAX_CONTRIBUTIONS}) and {m} rows (limit {MAX_ROWS}): beyond the "
                             "dense accountant; lower T")
        if np.shape(self.B)[0] != m or np.shape(self.audience) != (m, n) or \
                np.shape(self.senders) != (m,) or np.shape(self.knowers) != (np.shape(self.B)[1], n):
            raise ValueError("LinearRelease: A (M, N, T), B (M, K), audience (M, N), senders (M,) "
                             f"and knowers (K, N) disagree: A {np.shape(self.A)}, B "
                             f"{np.shape(self.B)}, audience {np.shape(self.audience)}, senders "
                             f"{np.shape(self.senders)}, knowers {np.shape(self.knowers)}")

    @property
    def n_agents(self) -> int:
        return np.shape(self.A)[1]

    @property
    def steps(self) -> int:
        return np.shape(self.A)[2]


@dataclasses.dataclass(frozen=True)
class Observer:
    """What one observer sees (``rows``) and knows (``known`` seeds; its ``members``)."""

    rows: np.ndarray
    known: np.ndarray
    members: np.ndarray


def observers(release: LinearRelease, threat) -> list[Observer]:
    """The observers of ``threat``: one per agent under ``"neighbours"``, else one.

    ``"eavesdropper"`` (MFDL's LDP observer) sees every row and knows no seed; ``"secret_pairs"``
    (SecLDP) is that outsider and each curious agent ``c`` (every row, its own seeds: its local
    and message noise and the secrets of its edges), :func:`factorization_epsilon` keeping the
    worst for each protected agent; ``"neighbours"`` (PNDP) and a coalition see the rows sent to
    them by others and know their own seeds (and, for a pairwise secret, its other end's)."""
    n = release.n_agents
    threat = as_threat(threat).check(n)
    everything = Observer(np.arange(len(release.senders)), np.zeros(0, np.int64),
                          np.zeros(0, np.int64))
    if isinstance(threat, Neighbours):
        return [_members_observer(release, np.array([v])) for v in range(n)]
    if isinstance(threat, Coalition):
        return [_members_observer(release, np.array(threat.agents))]
    if isinstance(threat, Eavesdropper):
        return [everything]
    if isinstance(threat, SecretPairs):
        return [everything] + [Observer(np.flatnonzero(release.senders != c),
                                        np.flatnonzero(release.knowers[:, c]), np.array([c]))
                               for c in range(n)]  # its own rows: functions of what it knows
    raise ValueError(f"the factorization accountant has no analysis for threat {threat.name!r}")


def _members_observer(release: LinearRelease, members: np.ndarray) -> Observer:
    sees = release.audience[:, members].any(axis=1) & ~np.isin(release.senders, members)
    known = np.flatnonzero(release.knowers[:, members].any(axis=1))
    return Observer(np.flatnonzero(sees), known, members)


def participation_classes(participation, steps: int) -> np.ndarray:
    """``(P, T)`` 0/1: the steps at which one protected unit's contribution may change, per class.

    ``"every_step"`` (an agent's data set enters every step: user-level), ``"first_step"`` (gossip
    averaging of a private value) or an int ``b`` (a record enters steps ``j, j+b, …``: MFDL's
    multi-participation with ``T/b`` epochs; ``b = T`` is single participation)."""
    if participation == "every_step":
        return np.ones((1, steps))
    if participation == "first_step":
        return np.eye(1, steps)
    b = participation
    if isinstance(b, (bool, np.bool_)) or not isinstance(b, (int, np.integer)) or not \
            1 <= b <= steps or steps % b:
        raise ValueError(f"participation must be 'every_step', 'first_step' or an int b dividing "
                         f"T = {steps}; got {participation!r}")
    return (np.arange(steps)[None, :] % b == np.arange(b)[:, None]).astype(float)


def release_mu2(A_view, B_view, classes, xp=jnp) -> tuple[jax.Array, jax.Array]:
    """``(μ²/Δ², exact)`` per agent: ``(N,)`` of the view ``A_view c + B_view z`` (module docstring).

    With ``xp=np`` a singular ``Σ = B_view B_viewᵀ`` is handled exactly (module docstring,
    *Singular views*: ``inf`` for an agent whose shift leaves the range, else the
    pseudo-inverse); with ``jnp`` it must be positive definite (else NaN).

    Args:
      A_view: ``(M, N, T)``; B_view: ``(M, K)``; classes: ``(P, T)`` participation classes.
      xp: ``jnp`` (differentiable, traced products at :data:`jaxdp._precision.PRECISION`) or
        ``np`` (host float64, nothing compiled: :func:`factorization_epsilon`'s path).
    """
    mm, es = (matmul, einsum) if xp is jnp else (np.matmul, np.einsum)
    m, n, t = A_view.shape
    white, outside, ambiguous = _whiten(mm(B_view, B_view.T), A_view.reshape(m, n * t), xp)
    white = white.reshape(-1, n, t)
    per_agent = white.transpose(1, 2, 0)  # (N, T, M)
    Q = mm(per_agent, per_agent.transpose(0, 2, 1))  # (N, T, T): A_uᵀ Σ⁺ A_u
    classes = xp.asarray(classes)
    per_class = xp.minimum(es("ps,ust,pt->up", classes, xp.abs(Q), classes),
                           _spectral_bound(Q, classes, xp))
    signed = es("ps,ust,pt->up", classes, Q, classes)
    leaks = es("us,ps->up", outside.reshape(n, t).astype(per_class.dtype), classes) > 0
    undecided = es("us,ps->up", ambiguous.reshape(n, t).astype(per_class.dtype), classes) > 0
    per_class = xp.where(leaks, xp.inf, xp.where(undecided, xp.nan, per_class))
    best = xp.argmax(per_class, axis=1)
    exact = xp.take_along_axis(signed - per_class, best[:, None], axis=1)[:, 0] >= \
        -1e-10 * xp.max(per_class, axis=1)
    worst = xp.where(xp.any(leaks, axis=1), xp.inf, xp.max(per_class, axis=1))  # NaN: undecided
    return worst, exact | xp.any(leaks, axis=1)


def _spectral_bound(Q, classes, xp):
    """``(N, P)``: ``|P| λ_max(Q_P)`` per agent and participation class (module docstring)."""
    masked = classes[None, :, :, None] * Q[:, None] * classes[None, :, None, :]
    return xp.sum(classes, axis=1)[None, :] * xp.linalg.eigvalsh(masked)[..., -1]


def _whiten(sigma, A, xp):
    """``(W, outside, ambiguous)``: ``W = Σ^{+1/2} A`` restricted to the range of ``Σ``,
    ``outside`` ``(columns,)`` bool, the columns of ``A`` with a component in its kernel, and
    ``ambiguous`` those float64 cannot decide (module docstring, *Singular views*;
    :func:`~jaxdp.privacy._pairwise.range_whiten`). ``jnp``: the Cholesky solve (NaN when ``Σ``
    is not PD; nothing outside or ambiguous)."""
    if xp is jnp:
        chol = jnp.linalg.cholesky(sigma)
        white = jax.scipy.linalg.solve_triangular(chol, A, lower=True)
        none = jnp.zeros(A.shape[1], bool)
        return white, none, none
    return range_whiten(sigma, A)


def observer_mu2(release: LinearRelease, obs: Observer, classes,
                 xp=jnp) -> tuple[jax.Array, jax.Array]:
    """``(μ²/Δ², exact)``: ``(N,)`` for one observer (``inf`` for its members; ``0`` with no rows);
    ``xp`` as in :func:`release_mu2`."""
    n = release.n_agents
    member = np.isin(np.arange(n), obs.members)
    if len(obs.rows) == 0:
        return xp.where(member, xp.inf, 0.0), xp.ones(n, bool)
    unknown = np.setdiff1d(np.arange(np.shape(release.B)[1]), obs.known)
    B_view = xp.asarray(release.B)[obs.rows][:, unknown]
    mu2, exact = release_mu2(xp.asarray(release.A)[obs.rows], B_view, classes, xp)
    return xp.where(member, xp.inf, mu2), exact


def factorization_epsilon(release: LinearRelease, delta: float, threat="neighbours",
                          sensitivity: float = 1.0, participation="every_step") -> PairwiseResult:
    """The IDEAL Gaussian mechanism's ``ε_{u→observer}`` of ``release`` (module docstring).

    Returns:
      A :class:`~jaxdp.privacy.PairwiseResult` (``(N, N)`` under ``"neighbours"``, else
      ``(N, 1)``: under ``"secret_pairs"`` the worst of the outsider and the curious agents).

    A singular view covariance is handled exactly (module docstring, *Singular views*): ``inf``
    where the protected agent's shift leaves its range (e.g. the ring zero-sum noise against an
    observer of all of a sender's messages), the pseudo-inverse value otherwise.

    Raises:
      ValueError: bad δ, sensitivity, participation or threat.
    """
    from jaxdp.privacy._dp_accounting import check_delta
    delta, threat = check_delta(delta), as_threat(threat)
    if not sensitivity > 0:
        raise ValueError(f"sensitivity must be > 0; got {sensitivity!r}")
    classes = participation_classes(participation, release.steps)
    mus, exacts, members = [], [], []
    for obs in observers(release, threat):
        mu2, exact = observer_mu2(release, obs, classes, np)
        mus.append(sensitivity * np.sqrt(np.asarray(mu2)))
        exacts.append(np.asarray(exact))
        members.append(np.isin(np.arange(release.n_agents), obs.members))
    mu, exact = np.stack(mus, axis=1), np.stack(exacts, axis=1)
    undecided = bool(np.any(np.isnan(mu)))
    mu, exact, capped = cap_pairwise(mu, exact, worst_observer_mu2(release, classes) ** 0.5
                                     * sensitivity, np.stack(members, axis=1))
    if isinstance(threat, SecretPairs):  # the worst observer that is not the agent itself
        mu = np.max(np.where(np.stack(members, axis=1), 0.0, mu), axis=1, keepdims=True)
        exact = np.all(exact, axis=1, keepdims=True)
        capped = np.any(capped, axis=1, keepdims=True)
    return PairwiseResult(threat=threat.name, epsilon=gaussian_epsilon(mu, delta), mu=mu,
                          exact=exact, delta=delta, capped=capped,
                          reason=AMBIGUOUS if undecided else "")


def worst_observer_mu2(release: LinearRelease, classes) -> np.ndarray:
    """``(N,)`` host ``μ²/Δ²`` of each agent ``u`` against every other agent together (the rows
    ``u`` sends, every seed but ``u``'s own known): the cap of
    :func:`~jaxdp.privacy._pairwise.cap_pairwise`, which bounds every observer without ``u``."""
    n = release.n_agents
    return np.array([observer_mu2(release, _members_observer(release, np.delete(np.arange(n), u)),
                                  classes, np)[0][u] for u in range(n)])


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
    """Linear gossip with time-correlated local noise, in MF form (module docstring).

    The mechanism of :class:`jaxdp.privacy.LinearGossip` (same ``W``, edges, ``x⁰ = 0``), with
    ``p^k = x^k + c^k + n^k``, ``n_i = σ_ℓ L ξ_i + σ_p Σ_{j∼i} ±z_{ij}``,
    ``m_{e}^k = p_{s(e)}^k + σ_m z_e^k + σ_z N_e^k``,
    ``x^{k+1}_i = W_ii (p_i^k + σ_z N_{i→i}^k) + Σ_{e: r(e)=i} W_{i s(e)} m_e^k``, with the
    zero-sum noise ``N`` of ``zero_sum`` (one step's map: :func:`_zero_sum_noise`).

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
    n, T, E = W.shape[0], steps, len(senders)
    _check_gossip(n, T, senders, receivers, decoder, broadcast, sigma_message, sigma_zero_sum)
    _check_zero_sum(W, senders, receivers, zero_sum)
    L = jnp.eye(T) if decoder is None else jnp.tril(jnp.asarray(decoder))
    local = jnp.broadcast_to(jnp.asarray(sigma_local, W.dtype), (n,))
    Wt = block_powers(W, T)  # p = Wt (c + n) + Wt_shift (I ⊗ J) z_msg
    noise_local = jnp.kron(L, jnp.eye(n)) * jnp.tile(local, T)[None, :]
    pair_secrets, pair_known = _pair_secrets(senders, receivers, n, T, sigma_pair)
    zs_msg, zs_self, zs_owners = _zero_sum_noise(W, senders, receivers, zero_sum)
    # per step: message e's noise from its own seeds (σ_m z_e, then the zero-sum seeds), and the
    # noise on each agent's kept copy W_ii p_i (zero-sum seeds only; none with the ring)
    msg_noise = jnp.concatenate([sigma_message * jnp.eye(E), sigma_zero_sum * zs_msg], 1)
    self_noise = jnp.concatenate([jnp.zeros((n, E)), sigma_zero_sum * zs_self], 1)
    # message noise of edge e at step s enters x_{r(e)}^{s+1} with weight W_{r(e)s(e)}, the kept
    # copy's with W_ii
    J = matmul(jnp.zeros((n, E)).at[receivers, np.arange(E)].set(W[receivers, senders]),
               msg_noise) + jnp.diag(W)[:, None] * self_noise
    shift = jnp.concatenate([jnp.zeros((n, T * n)), Wt[:-n]], axis=0)  # block (k, s) = W^{k-1-s}
    msg_into_models = jnp.kron(jnp.eye(T), J)
    B_state = jnp.concatenate([matmul(Wt, noise_local), matmul(Wt, pair_secrets),
                               matmul(shift, msg_into_models)], axis=1)
    n_msg = msg_into_models.shape[1]
    models = matmul(jnp.kron(jnp.eye(T), W), B_state) + jnp.concatenate(
        [jnp.zeros((T * n, B_state.shape[1] - n_msg)), msg_into_models], axis=1)
    own = np.repeat(np.eye(n, dtype=bool)[None], T, axis=0).reshape(T * n, n)
    own_msg = np.tile(np.eye(n, dtype=bool)[np.concatenate([senders, zs_owners])], (T, 1))
    knowers = np.concatenate([own, pair_known, own_msg])
    A_state = Wt.reshape(T * n, T, n).transpose(0, 2, 1)  # (T·N, N, T)
    if broadcast:
        audience = np.zeros((n, n), bool)
        audience[senders, receivers] = True
        return LinearRelease(A_state, B_state, np.tile(audience, (T, 1)),
                             np.tile(np.arange(n), T), knowers, models)
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


# --- MAFALDA-SGD's correlation (MFDL) ---------------------------------------------------------

def workload_gram(W, steps: int, first_power: int = 1):
    """``(T, T)``: ``G = Σ_i A_iᵀ A_i``, ``A = W̃`` (:func:`block_powers`, first power 1: the
    models after averaging) and ``A_i`` its ``T`` columns of agent ``i``. With one encoder ``C``
    shared by the agents (noise ``C^{-1} z_i``), the noise's total variance on the models is
    ``‖A (I_N ⊗ C^{-1})‖_F² = tr(G (CᵀC)^{-1})`` (MFDL, the surrogate MAFALDA minimises)."""
    n = W.shape[0]
    A = block_powers(W, steps, first_power).reshape(steps * n, steps, n)
    return einsum("msi,mti->st", A, A)


def encoder_sensitivity2(C, classes):
    """``max_P Σ_{s,t∈P} |(CᵀC)_{st}|``: the squared sensitivity of ``C c`` for contributions that
    may change (``‖δ_s‖ ≤ 1``) at the steps of one participation class (MFDL's ``sens(C)²``, which
    needs ``CᵀC ≥ 0``; this bound needs nothing)."""
    X = jnp.abs(matmul(C.T, C))
    return jnp.max(einsum("ps,st,pt->p", jnp.asarray(classes), X, jnp.asarray(classes)))


def surrogate_loss(C, gram, classes):
    """MFDL's utility surrogate at a fixed LDP budget: ``sens(C)² · tr(G (CᵀC)^{-1})`` (scale
    free: the noise variance on the models when the noise multiplier gives ``μ = Δ/σ_z``
    for the release ``C c + σ_z z``). ``C`` lower triangular, invertible."""
    inv = jax.scipy.linalg.solve_triangular(C, jnp.eye(C.shape[0]), lower=True)
    return encoder_sensitivity2(C, classes) * jnp.trace(matmul(matmul(inv.T, gram), inv))


def _feasible(theta, same):
    """The Gram ``X = CᵀC`` from free parameters: ``X₀ = I/epochs`` plus the projection of
    ``theta`` onto MFDL's constraints (zero between two steps of one class, the diagonal's sum over
    each class unchanged), so that ``sens(C) = 1`` exactly (MFDL, after Choquette-Choo et al.,
    NeurIPS 2023, multi-participation): an affine map, so the loss stays convex. ``same``:
    ``(T, T)``, 1 where two steps share a participation class."""
    sym = (theta + theta.T) / 2
    epochs = jnp.sum(same, axis=1)
    diag = jnp.diag(sym) - matmul(same, jnp.diag(sym)) / epochs
    return jnp.diag(1 / epochs + diag) + sym * (1 - same)


def encoder_from_gram(X):
    """The lower-triangular ``C`` with ``CᵀC = X`` (``X`` positive definite): the Cholesky factor
    of the reversed matrix, reversed (``C = J chol(J X J)ᵀ J``, ``J`` the anti-identity)."""
    flip = jnp.flip(jnp.flip(X, 0), 1)
    return jnp.flip(jnp.flip(jnp.linalg.cholesky(flip).T, 0), 1)


def _gram_loss(theta, gram, same):
    """``tr(G X^{-1})`` at the feasible ``X`` of ``theta`` (``inf`` outside the PD cone)."""
    chol = jnp.linalg.cholesky(_feasible(theta, same))
    value = jnp.trace(jax.scipy.linalg.cho_solve((chol, True), gram))
    return jnp.where(jnp.isfinite(value), value, jnp.inf)


@functools.cache
def _lbfgs():
    """optax's L-BFGS (imported on first use: optax is not needed to import jaxdp)."""
    import optax
    return optax, optax.lbfgs()


@jax.jit
def _lbfgs_step(carry, gram, same):
    """One L-BFGS step of :func:`mafalda_encoder` (compiled once per ``T``)."""
    optax, lbfgs = _lbfgs()
    theta, state = carry

    def loss(theta):
        return _gram_loss(theta, gram, same)

    value, grad = optax.value_and_grad_from_state(loss)(theta, state=state)
    updates, state = lbfgs.update(grad, state, theta, value=value, grad=grad, value_fn=loss)
    return optax.apply_updates(theta, updates), state


def mafalda_encoder(W, steps: int, participation=None, iterations: int = 200):
    """MAFALDA-SGD's encoder: argmin of :func:`surrogate_loss` (MFDL, their "OPTIMAL_DL_POSTAVG": one
    encoder for every agent, the post-averaging workload) over MFDL's feasible set (``X = CᵀC``
    with no correlation between two steps of one participation class and ``sens(C) = 1``), by
    L-BFGS (optax) on ``tr(G X^{-1})`` through ``jax.grad``, from ``X = I/epochs`` (DP-SGD's
    independent noise). A convex program: single participation has the dual certificate
    ``max_{v ≥ 0, Σv = 1} (tr (V^{1/2} G V^{1/2})^{1/2})²`` (tested).

    Args:
      participation: an int ``b`` (:func:`participation_classes`; default ``T``: single
        participation).

    Returns:
      ``(C, loss)``: ``C`` lower triangular with sensitivity 1, and its surrogate loss.
    """
    b = steps if participation is None else participation
    if not isinstance(b, (int, np.integer)):
        raise TypeError(f"mafalda_encoder needs an int participation interval; got {b!r}")
    classes = jnp.asarray(participation_classes(b, steps))
    same = matmul(classes.T, classes)
    gram = workload_gram(jnp.asarray(W), steps)
    theta = jnp.zeros((steps, steps))
    carry = (theta, _lbfgs()[1].init(theta))
    for _ in range(iterations):
        carry = _lbfgs_step(carry, gram, same)
    C = encoder_from_gram(_feasible(carry[0], same))
    return C, surrogate_loss(C, gram, classes)


# --- correlated noise optimised at a fixed pairwise budget -------------------------------------

def model_noise(release: LinearRelease, W=None):
    """The models' total noise variance ``Σ_k E‖n(x^{k+1})‖²``, ``jnp``: ``‖models‖_F²`` of the
    map :func:`gossip_release` records (message noise included), else, for a hand-built
    ``broadcast`` release (rows ``p^k``; MFDL's post-averaging workload), ``‖(I_T ⊗ W) B‖_F²``."""
    if release.models is not None:
        return jnp.sum(jnp.asarray(release.models) ** 2)
    models = matmul(jnp.kron(jnp.eye(release.steps), jnp.asarray(W)), jnp.asarray(release.B))
    return jnp.sum(models ** 2)


def worst_pair_mu2(release: LinearRelease, obs: list[Observer], classes):
    """``max`` over observers and the agents outside them of ``μ²/Δ²`` (``jnp``, differentiable
    almost everywhere)."""
    worst = [jnp.max(jnp.where(np.isin(np.arange(release.n_agents), o.members), 0.0,
                               observer_mu2(release, o, classes)[0])) for o in obs]
    return jnp.max(jnp.stack(worst))


def pairwise_decoder(W, edges, steps: int, threat="neighbours", participation=None, start=None,
                     iterations: int = 300, learning_rate: float = 0.02):
    """A noise decoder ``L`` (lower triangular, one for every agent) minimising the models' noise
    at a fixed worst pairwise ``μ`` under ``threat``: ``max_{u,v} μ²_{u→v}(L) · ‖(I ⊗ W) B(L)‖²``
    (scale free: :func:`model_noise` at the noise scale that gives the budget), by Adam (optax)
    on ``jax.grad`` through :func:`release_mu2`, from ``start`` (default ``I``; e.g. the inverse
    of :func:`mafalda_encoder`'s encoder, MFDL's optimum for the LDP observer), keeping the best
    iterate. Ideal Gaussian mechanism (module docstring); broadcast rows, local noise only.

    Returns:
      ``(L, objective at L, objective at start)``.
    """
    import optax
    W = jnp.asarray(W)
    classes = participation_classes(steps if participation is None else participation, steps)
    obs = observers(gossip_release(W, edges, steps, 1.0, broadcast=True), threat)

    def objective(theta):
        release = gossip_release(W, edges, steps, 1.0, decoder=jnp.tril(theta), broadcast=True)
        return worst_pair_mu2(release, obs, classes) * model_noise(release, W)

    step_fn = jax.jit(jax.value_and_grad(objective))
    opt = optax.adam(learning_rate)
    theta = jnp.eye(steps) if start is None else jnp.tril(jnp.asarray(start))
    state = opt.init(theta)
    first, _ = step_fn(theta)
    best = (first, theta)
    for _ in range(iterations):
        value, grad = step_fn(theta)
        best = min(best, (value, theta), key=lambda b: float(b[0]))
        updates, state = opt.update(grad, state)
        theta = optax.apply_updates(theta, updates)
    return jnp.tril(best[1]), best[0], first
