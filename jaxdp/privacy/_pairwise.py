"""Exact privacy of linear gossip with Gaussian noise against a given observer (issue 24).

**The mechanism** (:class:`LinearGossip`; one coordinate, the others are independent copies).
Agents ``i = 1..N`` on a static network with mixing matrix ``W`` (the one the simulation uses:
:meth:`jaxdp.network.Network.dense`) run ``T`` steps from the public ``x⁰ = 0``; at step ``k``

.. math::
    p_i^k = x_i^k + c_i^k + σ_ℓ ξ_i^k,\\qquad m_{i→j}^k = p_i^k + σ_m z_{i→j}^k,\\qquad
    x_i^{k+1} = W_{ii}\\, p_i^k + \\sum_{j} W_{ij}\\, m_{j→i}^k,

with ``ξ, z`` independent standard Gaussians: ``σ_ℓ`` local noise (DP-DGD, Muffliato: Cyffers
et al., NeurIPS 2022) and ``σ_m`` per-message noise (a ``clip + gaussian`` channel). ``c_i^k`` is
agent ``i``'s contribution at step ``k`` (every step, or only ``k = 0`` with the noise still
fresh at every step: ``"first_step_fresh_noise"``, NOT Muffliato's gossip averaging, whose noise
is drawn once: :class:`LinearGossip`), with ``‖c_u^k − c_u'^k‖₂ ≤ Δ`` between neighbouring data sets of agent ``u``.

**What an observer sees.** Under :class:`~jaxdp.privacy.Neighbours`, agent ``v`` sees the
messages ``m_{j→v}^k`` it receives (``k < T``) and knows its own contributions, ``ξ_v`` and the
noise ``z_{v→·}`` it added to what it sent (its own state is a function of these); a
:class:`~jaxdp.privacy.Coalition` ``S`` sees the messages into ``S`` from outside and knows the
same of every member; the :class:`~jaxdp.privacy.Eavesdropper` sees every message and knows no
noise. Removing what the observer knows, its view is ``y = A c_u + n`` with ``n ~ N(0, Σ)``,
``Σ`` and ``A`` built from the powers ``W^m`` (the matrix view of Cyffers et al. 2022 and of
Bellet et al., MFDL, ICLR 2026): with ``P_l = Cov(p^l)`` (a recursion on diagonal noise),

.. math::
    \\mathrm{Cov}(y_e^k, y_f^l) = (W^{k-l} P_l)_{s(e)s(f)} + [k>l]\\,(W^{k-l-1})_{s(e)r(f)}
    W_{r(f)s(f)}σ_m^2 + [k=l][e=f]σ_m^2,\\qquad A_{(e,k),s} = (W^{k-s})_{s(e)u}\\,[k ≥ s].

Two Gaussians of covariance ``Σ`` whose means differ by ``A δ`` are a Gaussian mechanism of
sensitivity ``‖Σ^{-1/2} A δ‖`` (pseudo-inverse on the range of ``Σ``; ``ε = inf`` when ``Aδ``
leaves it). With ``d`` coordinates and a per-step bound ``‖δ^s‖₂ ≤ Δ``, the squared sensitivity
is ``sup tr(Q G)`` over Gram matrices ``G`` with diagonal ``≤ Δ²``, ``Q = AᵀΣ⁺A``, and
``≤ Δ² Σ_{k,s} |Q_{ks}|`` (as ``|G_{ks}| ≤ Δ²``), attained (``exact``) when ``Q ≥ 0``
entrywise (``δ^s`` the same vector at every step), and ``≤ Δ² T_c λ_max(Q)`` (``tr G ≤ T_c Δ²``,
``G ⪰ 0``), the tighter one where ``Q`` has negative entries: the smaller is used. ``ε(δ)`` is the exact Gaussian
mechanism's (Balle & Wang, ICML 2018, Thm 8: :func:`gaussian_epsilon`).

**Assumptions.** The contributions are fixed before the run (non-adaptive: a function of each
agent's own data only, as in gossip averaging or a sum of fixed per-step vectors). Gradients at
the current models are not: they depend on the protected agent's messages through the other
agents' states, which the observer does not see, and no theorem this module relies on covers that
(adaptive DGD keeps the eavesdropper bound). The noise is real-valued Gaussian: the ε is the
ideal mechanism's, not a bound for the library's lattice or float samplers (a discrete Gaussian
through ``W^m`` is not Gaussian; a report that uses this module for a run must say so or give
``inf``).

**Cost and limits.** The powers ``W^m`` are computed once (``T N²`` floats); per observer,
``P_l Hᵀ`` for every ``l`` costs ``T N² |O|`` (``|O|`` the observed edges), ``Σ`` (side ``T|O|``)
``T² |O|² N`` and its Cholesky factor ``(T|O|)³/3``, and whitening ``A`` for every agent
``(T|O|)² N T_c`` (``T_c`` contribution steps: ``T`` or 1): the last dominates. Measured on one
core: a 100-agent ring, every agent observing, ``T = 100`` every step about 9 s; ``T = 300``
first step about 9 s. The accountant refuses ``N > 100``, a view larger than :data:`MAX_VIEW`
and more than :data:`MAX_WORK` multiply-adds over all observers, naming the sizes.
"""
from __future__ import annotations

import dataclasses
import warnings

import numpy as np
from scipy import linalg, special

from jaxdp.privacy._pairwise_scan import structured_mu
from jaxdp.privacy._threat import as_threat
from jaxdp.privacy._views import ObserverView, members_view, views

MAX_AGENTS = 100
MAX_VIEW = 4000
"""The largest observer view ``T·|O|`` (``Σ`` is ``MAX_VIEW²`` float64: 128 MB)."""
MAX_WORK = 1e11
"""The largest number of multiply-adds of one call (about a minute on one core)."""
CONTRIBUTIONS = ("every_step", "first_step_fresh_noise")
DEPRECATED_CONTRIBUTIONS = {"first_step": "first_step_fresh_noise"}
"""Old option values and their names now. ``"first_step"`` was renamed because it read as
Muffliato's gossip averaging, which it is not: its noise is fresh at every step."""


def gaussian_epsilon(mu, delta: float) -> np.ndarray:
    """Exact ``ε(δ)`` of Gaussian mechanisms of sensitivity/σ ``mu`` (any shape; Balle & Wang,
    ICML 2018, Thm 8): the root of ``Φ(μ/2 − ε/μ) − e^ε Φ(−μ/2 − ε/μ) = δ`` by bisection in
    float64 (200 halvings, the upper end kept: never below the root); ``0`` for ``μ = 0`` and
    ``inf`` for ``μ = inf``."""
    mu = np.asarray(mu, np.float64)
    finite = np.isfinite(mu) & (mu > 0)
    m = np.where(finite, mu, 1.0)

    def delta_of(eps):
        return (special.ndtr(m / 2 - eps / m)
                - np.exp(np.minimum(eps + special.log_ndtr(-m / 2 - eps / m), 700.0)))

    lo = np.zeros_like(m)
    hi = m * m / 2 + m * np.sqrt(2 * np.log(1 / delta)) + 1.0
    for _ in range(200):
        mid = (lo + hi) / 2
        above = delta_of(mid) > delta
        lo, hi = np.where(above, mid, lo), np.where(above, hi, mid)
    eps = np.where(delta_of(np.zeros_like(m)) <= delta, 0.0, hi)
    return np.where(finite, eps, np.where(mu > 0, np.inf, 0.0))


@dataclasses.dataclass(frozen=True)
class LinearGossip:
    """The linear gossip mechanism of the module docstring, on a static network.

    Attributes:
      W: ``(N, N)`` the mixing matrix the run uses.
      senders, receivers: ``(2E,)`` the directed edges (each message ``senders[e] → receivers[e]``).
      steps: ``T``, the steps run (messages at ``k = 0..T−1``).
      sensitivity: ``Δ``, the ℓ2 bound on the change of one contribution (``2C`` for a
        contribution clipped to ``C`` whose agent's data set is replaced).
      sigma_local: ``σ_ℓ ≥ 0``, scalar or ``(N,)``.
      sigma_message: ``σ_m ≥ 0``, the per-message noise.
      contributions: ``"every_step"`` or ``"first_step_fresh_noise"`` (only ``c⁰``, and the
        noise ``σ_ℓ ξ^k, σ_m z^k`` still fresh at every step). That is **not** Muffliato's
        gossip averaging (one noisy value ``x + σ η`` drawn once, then ``T`` noiseless gossip
        rounds), whose later messages carry no new noise: accounted with this option it would be
        about 5× under on a 16-ring. Muffliato's averaging is a :class:`LinearRelease` with the
        noise at step 0 only (:func:`~jaxdp.privacy.pairwise.gossip_release` with the decoder
        ``L = e₀e₀ᵀ`` and ``participation="first_step"``). The old value ``"first_step"`` is
        a deprecated alias (a ``FutureWarning``).
    """

    W: np.ndarray
    senders: np.ndarray
    receivers: np.ndarray
    steps: int
    sensitivity: float
    sigma_local: float | np.ndarray = 0.0
    sigma_message: float = 0.0
    contributions: str = "every_step"

    def __post_init__(self):
        n = np.shape(self.W)[0]
        if n > MAX_AGENTS:
            raise ValueError(f"LinearGossip: N = {n} agents > {MAX_AGENTS}, beyond what the dense "
                             "pairwise accountant is built for")
        if self.contributions in DEPRECATED_CONTRIBUTIONS:
            new = DEPRECATED_CONTRIBUTIONS[self.contributions]
            warnings.warn(f"LinearGossip(contributions={self.contributions!r}) is deprecated: it "
                          f"is {new!r} (one contribution, FRESH noise at every step), not "
                          "Muffliato's gossip averaging (noise drawn once); use "
                          f"contributions={new!r}", FutureWarning, stacklevel=3)
            object.__setattr__(self, "contributions", new)
        if self.contributions not in CONTRIBUTIONS:
            raise ValueError(f"contributions must be one of {CONTRIBUTIONS}; got "
                             f"{self.contributions!r}")
        if int(self.steps) < 1 or not self.sensitivity > 0:
            raise ValueError(f"need steps >= 1 and sensitivity > 0; got {self.steps}, "
                             f"{self.sensitivity}")
        local = np.broadcast_to(np.asarray(self.sigma_local, np.float64), (n,))
        if np.any(local < 0) or not self.sigma_message >= 0:
            raise ValueError("noise scales must be >= 0")
        for name, value in (("W", np.asarray(self.W, np.float64)), ("sigma_local", local),
                            ("senders", np.asarray(self.senders, np.int64)),
                            ("receivers", np.asarray(self.receivers, np.int64)),
                            ("steps", int(self.steps))):
            object.__setattr__(self, name, value)

    @classmethod
    def from_network(cls, network, steps: int, sensitivity: float, **noise) -> LinearGossip:
        """The mechanism on ``network``'s own ``W`` and edges (a static single network).

        Raises:
          ValueError: a time-varying, random or stacked network.
        """
        senders = np.asarray(getattr(network, "senders", None))
        if getattr(network, "base", None) is not network or senders.ndim != 1:
            raise ValueError("the pairwise accountant needs one static Network (W fixed over the "
                             f"run); got {type(network).__name__}")
        return cls(network.dense("W", max_agents=MAX_AGENTS), senders,
                   np.asarray(network.receivers), steps, sensitivity, **noise)

    @classmethod
    def from_matrix(cls, W, steps: int, sensitivity: float, **noise) -> LinearGossip:
        """The mechanism on an explicit ``W`` (row-stochastic or not): a message ``s → r`` for
        every off-diagonal ``W_{rs} > 0`` (MFDL's gossip, Bellet et al., ICLR 2026, builds
        ``W`` this way from a graph with self-loops).

        Raises:
          ValueError: ``W`` not square, not finite or with a negative entry.
        """
        W = np.asarray(W, np.float64)
        if W.ndim != 2 or W.shape[0] != W.shape[1] or not np.all(np.isfinite(W)) or np.any(W < 0):
            raise ValueError(f"W must be a finite (N, N) matrix with entries >= 0; got shape "
                             f"{W.shape}")
        receivers, senders = np.nonzero((W > 0) & ~np.eye(W.shape[0], dtype=bool))
        return cls(W, senders, receivers, steps, sensitivity, **noise)

    @property
    def n_agents(self) -> int:
        return self.W.shape[0]

    def powers(self) -> np.ndarray:
        """``(T+1, N, N)``: ``W^0 .. W^T``."""
        out = np.empty((self.steps + 1,) + self.W.shape)
        out[0] = np.eye(self.n_agents)
        for m in range(self.steps):
            out[m + 1] = out[m] @ self.W
        return out


def _covariance(form: LinearGossip, F: np.ndarray, view: ObserverView) -> np.ndarray:
    """``Σ``: ``(T|O|, T|O|)`` covariance of the unknown noise in the view, time-major."""
    n, T, O = form.n_agents, form.steps, view.edges
    s, r = form.senders[O], form.receivers[O]
    local = np.where(np.isin(np.arange(n), view.members), 0.0, form.sigma_local ** 2)
    unknown_edge = ~np.isin(form.senders, view.members)
    edge_var = form.sigma_message ** 2 * unknown_edge * form.W[form.receivers, form.senders] ** 2
    rho = local + np.bincount(form.receivers, edge_var, minlength=n)  # diag of Cov(p^k | p^{k-1})
    HF = F[:, s, :]  # (T+1, |O|, N): rows s(e) of W^m
    HFt = HF[:T].transpose(0, 2, 1)  # (T, N, |O|)
    # P_l H^T = Σ_{m<l} W^m diag(ρ) (H W^m)^T + W^l diag(local) (H W^l)^T
    terms = np.matmul(F[:T] * rho, HFt)
    PH = np.cumsum(terms, axis=0) - terms + np.matmul(F[:T] * local, HFt)  # (T, N, |O|)
    # Cov(p^k, p^l) = W^{k-l} P_l: M[m, l] = H W^m P_l H^T
    M = np.matmul(HF[:T, None], PH[None])  # (T, T, |O|, |O|)
    # the message noise of observed edge f enters x_{r(f)} one step later
    J = form.sigma_message ** 2 * form.W[r, s] * unknown_edge[O]  # (|O|,)
    HFJ = HF[:T, :, r] * J  # (T, |O|, |O|)
    k = len(O)
    sigma = np.zeros((T, T, k, k))
    kk, ll = np.tril_indices(T, -1)
    sigma[kk, ll] = M[kk - ll, ll] + HFJ[kk - ll - 1]
    sigma[ll, kk] = np.transpose(sigma[kk, ll], (0, 2, 1))
    diag = np.arange(T)
    sigma[diag, diag] = M[0, diag] + form.sigma_message ** 2 * np.eye(k)
    sigma = sigma.transpose(0, 2, 1, 3)
    return sigma.reshape(T * k, T * k)


def _shifts(form: LinearGossip, F: np.ndarray, view: ObserverView) -> np.ndarray:
    """``A``: ``(T|O|, N, T_c)``, the view's mean shift per unit contribution of each agent at
    each contribution step."""
    T, s = form.steps, form.senders[view.edges]
    t_c = T if form.contributions == "every_step" else 1
    A = np.zeros((T, len(view.edges), form.n_agents, t_c))
    for c in range(t_c):
        A[c:, :, :, c] = F[:T - c][:, s, :]
    return A.reshape(T * len(view.edges), form.n_agents, t_c)


RANGE_TOL = 1e-8
"""A shift whose relative component outside the numerical range of ``Σ`` is at most this is in
the range (:func:`range_whiten`)."""
CLEAR_LEAK = 1e-3
"""A relative component outside the range above this is a leak (``μ = ∞``) beyond rounding."""
GRAY = 1e-6
"""Eigenvalues of ``Σ`` at most ``GRAY·λ_max`` are known to a relative accuracy no better than
``M·eps/GRAY``, and their eigenvectors mix with the numerical kernel (:func:`range_whiten`)."""
GRAY_SHARE = 1e-6
"""The largest share of ``μ²`` the gray eigenvalues may carry before the value is ambiguous."""
AMBIGUOUS = ("the float rank decision on the observer's noise covariance is ambiguous (eigenvalues "
             "between M·eps·λ_max and 1e-6·λ_max carry the shift, or a component outside its "
             "numerical range between rounding and a clear leak): the value is the worst "
             "observer's (every agent but u), which bounds every observer")


def range_whiten(sigma: np.ndarray, A: np.ndarray):
    """``(white, outside, ambiguous)`` of ``A`` ``(M, cols)`` against ``Σ`` ``(M, M)`` PSD:
    ``white = Λ^{-1/2} Uᵀ A`` on the numerical range (``λ > M·eps·λ_max``, numpy's rank rule),
    ``outside`` ``(cols,)`` the columns with a component outside it above :data:`CLEAR_LEAK`
    (``μ = ∞``: a shift along a direction without noise), and ``ambiguous`` ``(cols,)`` the
    columns whose value float64 cannot decide: a component outside the range between
    :data:`RANGE_TOL` and :data:`CLEAR_LEAK`, or more than :data:`GRAY_SHARE` of ``‖white‖²``
    on eigenvalues at most :data:`GRAY` ``·λ_max`` (their eigenvectors carry errors of order
    ``eps·λ_max/λ``: on Krylov views such as Muffliato's gossip averaging at ``T ≥ 12`` the value
    drifts below the exact one, or a column in the exact range appears to leave it). The caller
    replaces an ambiguous value by a sound one (:func:`cap_pairwise`)."""
    lam, U = np.linalg.eigh(sigma)
    top = max(float(lam[-1]), 0.0)
    keep = lam > top * len(lam) * np.finfo(np.float64).eps
    coords = U[:, keep].T @ A
    white = coords / np.sqrt(lam[keep])[:, None]
    norm = np.maximum(np.linalg.norm(A, axis=0), np.finfo(np.float64).tiny)
    residual = np.linalg.norm(A - U[:, keep] @ coords, axis=0) / norm
    gray = lam[keep] <= GRAY * top
    total = np.maximum(np.sum(white ** 2, axis=0), np.finfo(np.float64).tiny)
    share = np.sum(white[gray] ** 2, axis=0) / total
    outside = residual > CLEAR_LEAK
    ambiguous = ~outside & ((residual > RANGE_TOL) | (share > GRAY_SHARE))
    return white, outside, ambiguous


def _whitened(sigma: np.ndarray, A: np.ndarray):
    """``(Σ^{-1/2}A, in range, ambiguous)``: Cholesky when ``Σ`` is well conditioned (LAPACK's
    reciprocal condition estimate above :data:`GRAY`), else :func:`range_whiten`; the flags are
    per agent (any of its contribution steps)."""
    flat = A.reshape(A.shape[0], -1)
    try:
        chol = linalg.cholesky(sigma, lower=True)
        rcond, _ = linalg.lapack.dpocon(chol, np.abs(sigma).sum(axis=0).max(), uplo="L")
        if rcond > GRAY:
            white = linalg.solve_triangular(chol, flat, lower=True)
            none = np.zeros(A.shape[1], bool)
            return white.reshape(A.shape), ~none, none
    except linalg.LinAlgError:
        pass
    white, outside, ambiguous = range_whiten(sigma, flat)
    per_agent = A.shape[1:]
    return (white.reshape((-1,) + per_agent), ~outside.reshape(per_agent).any(axis=-1),
            ambiguous.reshape(per_agent).any(axis=-1))


def observer_mu(form: LinearGossip, view: ObserverView, F: np.ndarray | None = None):
    """``(μ, exact)``: ``(N,)`` the Gaussian-mechanism sensitivity (in noise units) of each
    agent's contributions in ``view`` (``inf`` for a member, or a shift outside the range of
    ``Σ``), and whether the bound ``Δ² min(Σ|Q|, T_c λ_max(Q))`` is attained (``Q ≥ 0``)."""
    F = form.powers() if F is None else F
    if len(view.edges) == 0:
        return (np.where(np.isin(np.arange(form.n_agents), view.members), np.inf, 0.0),
                np.ones(form.n_agents, bool))
    white, inside, ambiguous = _whitened(_covariance(form, F, view), _shifts(form, F, view))
    per_agent = np.ascontiguousarray(white.transpose(1, 0, 2))  # (N, T|O|, T_c)
    Q = np.matmul(per_agent.transpose(0, 2, 1), per_agent)  # (N, T_c, T_c): AᵀΣ⁺A
    spectral = Q.shape[-1] * np.linalg.eigvalsh(Q)[:, -1]  # T_c λ_max(Q): module docstring
    mu = form.sensitivity * np.sqrt(np.minimum(np.abs(Q).sum(axis=(1, 2)), spectral))
    exact = (Q >= -1e-12 * np.abs(Q).max(axis=(1, 2), keepdims=True)).all(axis=(1, 2))
    out = ~inside | np.isin(np.arange(form.n_agents), view.members)
    return np.where(out, np.inf, np.where(ambiguous, np.nan, mu)), exact & ~ambiguous


def _check_work(form: LinearGossip, obs: list[ObserverView]) -> None:
    """Refuse a computation beyond :data:`MAX_VIEW` or :data:`MAX_WORK`, naming the sizes."""
    t_c = form.steps if form.contributions == "every_step" else 1
    sizes = [form.steps * len(o.edges) for o in obs]
    work = sum(m * m * (m / 3 + form.n_agents * t_c) for m in sizes)
    if max(sizes) > MAX_VIEW or work > MAX_WORK:
        raise ValueError(f"the pairwise accountant would need a view of {max(sizes)} values "
                         f"(limit {MAX_VIEW}) and {work:.2g} multiply-adds (limit {MAX_WORK:g}) "
                         f"for N = {form.n_agents}, T = {form.steps}, {len(obs)} observer(s): "
                         "lower T, or use contributions='first_step_fresh_noise' where it "
                         "applies")


@dataclasses.dataclass(frozen=True)
class PairwiseResult:
    """The linear-gossip accountant's answer.

    Attributes:
      threat: the threat model's name.
      epsilon: ``(N, N)`` ``ε_{u→v}`` under ``"neighbours"`` (``inf`` on the diagonal), else
        ``(N, 1)``: each agent against the one observer (``inf`` for a coalition's members).
      mu: the Gaussian-mechanism sensitivities, shaped like ``epsilon``.
      exact: where the sensitivity bound is attained (else it is an upper bound).
      delta: δ.
      capped: shaped like ``epsilon``: where the value is the worst observer's
        (:func:`cap_pairwise`: the accountant's was larger, or float64 could not decide it).
      reason: why some values were capped, when the rank decision was ambiguous.
    """

    threat: str
    epsilon: np.ndarray
    mu: np.ndarray
    exact: np.ndarray
    delta: float
    capped: np.ndarray | None = None
    reason: str = ""

    @property
    def per_agent(self) -> np.ndarray:
        """``(N,)`` the headline: each agent's worst observer (``max_v ε_{u→v}``, ``v ≠ u``)."""
        return _worst_other(self.epsilon)

    @property
    def worst_mu(self) -> np.ndarray:
        """``(N,)`` each agent's largest ``μ`` over its observers other than itself."""
        return _worst_other(self.mu)


def _worst_other(values: np.ndarray) -> np.ndarray:
    """Row maxima of ``(N, N)`` values without the diagonal (an agent observing itself is not a
    pair), or the one column of ``(N, 1)`` values."""
    values = np.array(values, np.float64)
    if values.shape[1] > 1:
        np.fill_diagonal(values, -np.inf)
    return values.max(axis=1)


def cap_pairwise(mu, exact, worst, members):
    """``(μ, exact, capped)`` with every ``μ_{u→o}`` at most ``worst[u]``: the one place every
    pairwise accountant caps its values (issue 36).

    ``worst[u]`` is ``u``'s value against the coalition of every other agent: it sees every
    message ``u`` sends (all the eavesdropper sees of ``u``) and knows every seed but ``u``'s, so
    the view of any observer that does not contain ``u`` (one agent, a coalition, the eavesdropper,
    a curious agent) is a function of its view, and by post-processing ``μ_{u→o} ≤ worst[u]``.
    A ``NaN`` (a value float64 could not decide: :func:`range_whiten`) becomes ``worst[u]``, and
    a ``NaN`` worst ``inf``; a member of the observer keeps ``inf``.

    Args:
      mu, exact: ``(N, V)``; worst: ``(N,)``; members: ``(N, V)`` bool, ``u`` in observer ``o``.
    """
    worst = np.where(np.isnan(worst), np.inf, np.asarray(worst, np.float64))[:, None]
    over = ~members & (np.isnan(mu) | (mu > worst * (1 + 1e-9)))  # beyond rounding: capped
    capped = np.where(over, worst, np.minimum(mu, worst))
    return np.where(members, np.inf, capped), np.where(over, False, exact), over


def _others(n: int, u: int) -> np.ndarray:
    return np.delete(np.arange(n), u)


def worst_observer_mu(form: LinearGossip, method: str, band: int = 1, etas=()) -> np.ndarray:
    """``(N,)``: each agent's ``μ`` against every other agent together (:func:`cap_pairwise`),
    dense where its limits allow, else by ``method``."""
    n = form.n_agents
    worst = [members_view(form, _others(n, u)) for u in range(n)]
    try:  # the dense value where it fits: these views are small (the rows u sends)
        _check_work(form, worst)
        method = "dense"
    except ValueError:
        pass
    if method == "structured":
        return np.diagonal(structured_mu(form, worst, band, etas)[0]).copy()
    F = form.powers()
    return np.array([observer_mu(form, view, F)[0][u] for u, view in enumerate(worst)])


def _members_matrix(n: int, obs) -> np.ndarray:
    """``(N, V)`` bool: agent ``u`` is a member of observer ``o``."""
    return np.stack([np.isin(np.arange(n), o.members) for o in obs], axis=1)


METHODS = ("auto", "dense", "structured")


def linear_gossip_epsilon(form: LinearGossip, delta: float, threat="neighbours",
                          method: str = "auto", band: int = 1, etas=()):
    """ε of ``form`` against ``threat``'s observer(s) (module docstring: the model, the formula,
    its assumptions and limits).

    Args:
      method: ``"dense"`` (this module: ``Δ²Σ|Q|`` from ``Σ``), ``"structured"``
        (:mod:`jaxdp.privacy._pairwise_scan`: a Kalman recursion, the same value for one
        contribution, a proven upper bound on it for every step, exact entries ``Q_{ks}`` for
        ``0 < s − k ≤ band``) or ``"auto"``: dense within its limits, else structured.
      etas: every step, structured: the split ratios of the per-agent certificate
        (:mod:`jaxdp.privacy._pairwise_scan`, Proposition 2: a diagonal ``D ⪰ Q``), e.g.
        ``(0.5, 4, 32)``; the smallest bound is used. Empty: not computed (it costs ``N``
        times the rest).

    Returns:
      A :class:`PairwiseResult`.

    Raises:
      ValueError: an unsupported threat or method, or sizes beyond the limits.
    """
    from jaxdp.privacy._dp_accounting import check_delta
    delta, threat = check_delta(delta), as_threat(threat)
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}; got {method!r}")
    obs = views(form, threat)
    if method == "auto":
        try:
            _check_work(form, obs)
            method = "dense"
        except ValueError:
            method = "structured"
    if method == "structured":
        mu, exact, _ = structured_mu(form, obs, band, etas)
    else:
        _check_work(form, obs)
        F = form.powers()
        mus, exact = zip(*(observer_mu(form, view, F) for view in obs), strict=True)
        mu, exact = np.stack(mus, axis=1), np.stack(exact, axis=1)
    undecided = bool(np.any(np.isnan(mu)))
    mu, exact, capped = cap_pairwise(mu, exact, worst_observer_mu(form, method, band, etas),
                                     _members_matrix(form.n_agents, obs))
    return PairwiseResult(threat=threat.name, epsilon=gaussian_epsilon(mu, delta), mu=mu,
                          exact=exact, delta=delta, capped=capped,
                          reason=AMBIGUOUS if undecided else "")

