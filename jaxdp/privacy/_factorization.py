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
:func:`jaxdp.privacy.pairwise.linear_gossip_epsilon`'s quantity when the noise is independent.

**What it is not.** The IDEAL continuous-Gaussian mechanism with NON-ADAPTIVE contributions
(fixed before the run). It is not a bound for the library's lattice noise (a discrete Gaussian
mixed by real matrices is not Gaussian) nor for gradients evaluated at models that depend on
other agents' messages; a report may show it only as a curve named "ideal". The sound report of a
run is :mod:`jaxdp.algorithms.catalogue.mafalda`'s.

**Correlated noise over time** (:func:`~jaxdp.privacy.pairwise.gossip_release`): each agent's local
noise is ``σ_ℓ L ξ_i`` with ``L`` a ``T × T`` lower-triangular *noise decoder* (MFDL's ``C^+``:
``L = I`` is DP-DGD / Muffliato, ``L = C^{-1}`` an encoder ``C``), optional per-message noise
``σ_m`` and pairwise-cancelling secrets ``σ_p`` (DECOR: Allouah et al., ICML 2024: agent ``i`` adds
``σ_p Σ_{j∼i} ±z_{ij}^s``, the sign ``+`` for ``i < j``) and zero-sum message noise ``σ_z``
(Zip-DL: Biswas et al., PoPETs 2025; two constructions, jaxdp's channel's ring and the paper's
closed neighbourhood: :func:`~jaxdp.privacy.pairwise.gossip_release`).

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
        averaging, ``x^1 … x^T`` (time-major; :func:`~jaxdp.privacy.pairwise.gossip_release` records
        it for :func:`model_noise`).
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
      A :class:`~jaxdp.privacy.pairwise.PairwiseResult` (``(N, N)`` under ``"neighbours"``, else
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
