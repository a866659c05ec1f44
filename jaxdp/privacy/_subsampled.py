r"""RDP of the Poisson-subsampled discrete Gaussian (host, numpy float64), for lattice reports.

The lattice mechanism (:mod:`jaxdp.privacy._lattice`) releases ``a(v) + K`` with
``K ~ Q = N_ℤ(0, σ²)^d`` (σ in lattice steps). A Poisson-subsampled release — each record enters the
batch independently with probability ``q`` — compares, for one record added or removed, the mixture
``P = (1 − q)·Q + q·Q_μ`` with ``Q`` (after conditioning on the rest of the batch), where ``Q_μ`` is
``Q`` shifted by the integer vector ``μ = a(v(S ∪ {x})) − a(v(S))`` of ℓ2 norm at most
``Δ_lat = Δ/γ`` (:func:`~jaxdp.privacy.lattice_sensitivity` bounds it in value units, so
``‖μ‖/σ ≤ Δ/scale`` — the ``μ`` of :attr:`~jaxdp.privacy.PrivacyEvents.log_ratio`; below,
``c = ‖μ‖²/(2σ²) ≤ (Δ/scale)²/2``). dp-accounting's subsampled-Gaussian RDP (Mironov, Talwar &
Zhang 2019) is proven for the continuous Gaussian; here is what holds for the discrete one.

**Fact 1 (direction P‖Q, exact at integer α).** For an integer ``k ≥ 0`` and ``x ∈ ℤ^d``,
``Q(x)^{1−k} Q_μ(x)^k ∝ exp(−‖x − kμ‖²/(2σ²) + k(k − 1)‖μ‖²/(2σ²))`` (complete the square), and
``Σ_{x∈ℤ^d} exp(−‖x − kμ‖²/(2σ²))`` is the normalizer of ``Q`` because ``kμ`` is an integer vector
(the sum is invariant under an integer translation). Hence ``E_Q[(Q_μ/Q)^k] = e^{k(k−1)c}`` exactly,
as for the continuous Gaussian, and for integer ``α ≥ 2`` the binomial expansion of
``E_Q[((1 − q) + q·Q_μ/Q)^α]`` gives

.. math:: e^{(α−1) D_α(P\|Q)} = A_α = \sum_{k=0}^{α} \binom{α}{k} (1−q)^{α−k} q^k e^{k(k−1)c},

the integer-order value of the continuous sampled Gaussian (MTZ 2019, §3.3; dp-accounting's
``_compute_log_a_int`` with noise multiplier ``1/√(2c)``), increasing in ``c``.

**Fact 2 (both directions, any base mechanism).** The reverse direction ``Q‖P`` is dominated by
``P‖Q`` for the continuous Gaussian (MTZ 2019), by an argument that uses the Gaussian's continuous
rotation invariance and has not been carried over to ``N_ℤ``. We use instead the *general upper
bound* of Zhu & Wang, "Poisson Subsampled Rényi Differential Privacy", ICML 2019 (PMLR 97),
Theorem 5 (the bound "for general M", tight up to ``log 3/(α − 1)`` and a ``1 + O(q)`` factor): if a
mechanism ``M`` is ``(ℓ, ε(ℓ))``-RDP for every integer ``2 ≤ ℓ ≤ α`` under add/remove-one adjacency,
``M ∘ PoissonSample_q`` is ``(α, ε'(α))``-RDP with

.. math:: ε'(α) ≤ \frac{1}{α−1}\log\Big\{(1−q)^{α−1}(αq − q + 1)
          + \binom{α}{2} q^2 (1−q)^{α−2} e^{ε(2)}
          + 3\sum_{ℓ=3}^{α} \binom{α}{ℓ} (1−q)^{α−ℓ} q^ℓ e^{(ℓ−1)ε(ℓ)}\Big\}.

RDP there is a bound over every ordered pair of neighbours, so ``ε'`` bounds both ``D_α(P‖Q)`` and
``D_α(Q‖P)``. Hypotheses, and why they hold: (i) integer ``α ≥ 2``: the orders used are the integer
orders 2..256 of :data:`~jaxdp.privacy.DEFAULT_ORDERS`; (ii) add/remove-one adjacency with each
record kept independently with probability ``q``: the ``"poisson"`` sampling of
:class:`~jaxdp.privacy.PrivacyEvents`, whose sensitivity is for one record added or removed; (iii)
the base mechanism's RDP ``ε(ℓ)`` must hold in both orders of every neighbouring pair: the discrete
Gaussian with an integer shift ``μ`` has ``D_ℓ(Q_μ‖Q) = D_ℓ(Q‖Q_μ) = ℓ‖μ‖²/(2σ²)`` (Fact 1 at
``k = ℓ``, and the law is symmetric under ``μ → −μ``; CKS 2020, Prop. 5), so
``ε(ℓ) = ℓc`` with ``c = (Δ/scale)²/2``. With that ``ε``, ``(ℓ − 1)ε(ℓ) = ℓ(ℓ − 1)c`` and the
bound is ``A_α`` with its terms ``ℓ ≥ 3`` tripled: it dominates Fact 1 termwise, so the maximum over
both directions is the bound itself (:func:`log_subsampled_moment` computes both;
:func:`log_zhu_wang` is the theorem for any base curve). The test suite checks the order, both
divergences by direct summation over ℤ, and the theorem as implemented on random pairs of laws.

**Fact 3 (fixed-size batches, replace-one).** A batch of ``b`` of the ``n`` records drawn without
replacement (``γ = b/n``) under replace-one adjacency is covered by the general theorem of Wang,
Balle & Kasiviswanathan, "Subsampled Rényi Differential Privacy and Analytical Moments
Accountant", AISTATS 2019, Theorem 9: if ``M`` is ``(ℓ, ε(ℓ))``-RDP under replace-one adjacency for
every integer ``2 ≤ ℓ ≤ α``, ``M ∘ Sample_{b/n}`` is ``(α, ε'(α))``-RDP with

.. math:: ε'(α) ≤ \frac{1}{α−1}\log\Big\{1 + γ^2\binom{α}{2}\min\big(4(e^{ε(2)} − 1),
          2e^{ε(2)}\big) + 2\sum_{ℓ=3}^{α} γ^ℓ\binom{α}{ℓ} e^{(ℓ−1)ε(ℓ)}\Big\}

(the theorem's ``min{2, (e^{ε(∞)} − 1)^ℓ}`` is 2, since a Gaussian has ``ε(∞) = ∞``). Hypotheses:
integer orders as above; the ``"without_replacement"`` sampling of
:class:`~jaxdp.privacy.PrivacyEvents`, whose sensitivity is for one record replaced (the
integer shift between the two batches' lattice points, bounded as for Poisson batches); and the
discrete Gaussian's ``ε(ℓ) = ℓc`` in both orders (Fact 2, iii). The test suite checks the bound
against direct summation over ℤ of the worst replace-one pair, ``(1−γ)Q + γQ_μ`` against
``(1−γ)Q + γQ``, and of the symmetric pair ``(1−γ)Q + γQ_{±μ/2}`` (even μ).

Releases compose by adding RDP at each order (Mironov 2017, Prop. 1), per agent over every stream
and step; (ε, δ) follows from dp-accounting's own conversion (``compute_epsilon``, the one
:func:`~jaxdp.privacy.rdp_epsilon` uses). A release with ``q = 1`` has ``ε(α) = α(Δ/scale)²/2``
(no subsampling), one with ``Δ = 0`` or ``q = 0`` nothing.
"""
from __future__ import annotations

import numpy as np
from scipy import special

from jaxdp.privacy._closed_form import DEFAULT_ORDERS
from jaxdp.privacy._dp_accounting import _MAX_LOG_MU, check_delta, check_steps, rdp_epsilon
from jaxdp.privacy._events import PrivacyEvents

ORDERS = DEFAULT_ORDERS[(DEFAULT_ORDERS == np.round(DEFAULT_ORDERS)) & (DEFAULT_ORDERS >= 2)
                        & (DEFAULT_ORDERS <= 256)].astype(np.int64)
"""The integer orders 2..256 of :data:`~jaxdp.privacy.DEFAULT_ORDERS` (Theorem 5 needs integers)."""

NOTE = ("Rényi DP of the Poisson-subsampled discrete Gaussian (add/remove-one): Zhu & Wang, ICML "
        "2019, Thm 5 (general upper bound, both directions) with the discrete Gaussian's RDP "
        "α(Δ/σ)²/2 (Canonne, Kamath & Steinke 2020, Prop. 5), at the integer orders 2..256, "
        "composed over every release, converted by dp-accounting's compute_epsilon; the smaller of "
        "that and the full-batch (unamplified) RDP curve")


NOTE_WITHOUT_REPLACEMENT = (
    "Rényi DP of the discrete Gaussian on fixed-size batches drawn without replacement "
    "(replace-one): Wang, Balle & Kasiviswanathan, AISTATS 2019, Thm 9 (general upper bound) with "
    "the discrete Gaussian's RDP α(Δ/σ)²/2 (Canonne, Kamath & Steinke 2020, Prop. 5), at the "
    "integer orders 2..256, composed over every release, converted by dp-accounting's "
    "compute_epsilon; the smaller of that and the full-batch (unamplified) RDP curve")


def _log_comb(alpha: int, k: np.ndarray) -> np.ndarray:
    """``log C(α, k)``."""
    return special.gammaln(alpha + 1.0) - special.gammaln(k + 1.0) - special.gammaln(
        alpha - k + 1.0)


def log_wang_balle_kasiviswanathan(gamma: float, alpha: int, cgf: np.ndarray) -> float:
    """``(α−1)ε'(α)``, the log of Wang, Balle & Kasiviswanathan's Theorem 9 bound (sampling ``γ``
    of the records without replacement, replace-one), for any base mechanism with
    ``ε(∞) = ∞``; ``cgf[ℓ] = (ℓ−1)ε(ℓ)`` for ``ℓ = 0..α`` (entries 0 and 1 unused); integer
    ``α ≥ 2``, ``0 < γ < 1``."""
    k = np.arange(alpha + 1, dtype=np.float64)
    weights = _log_comb(alpha, k) + k * np.log(gamma)
    eps2 = cgf[2]  # (2 − 1)ε(2)
    second = weights[2] + min(np.log(4.0) + np.log(np.expm1(eps2)), np.log(2.0) + eps2)
    rest = np.log(2.0) + weights[3:] + cgf[3:]
    return float(special.logsumexp(np.concatenate([[0.0, second], rest])))


def _log_binomial_weights(q: float, alpha: int) -> np.ndarray:
    """``log[C(α,k)(1−q)^{α−k} q^k]`` for ``k = 0..α`` (``0 < q < 1``)."""
    k = np.arange(alpha + 1, dtype=np.float64)
    return _log_comb(alpha, k) + k * np.log(q) + (alpha - k) * np.log1p(-q)


def log_zhu_wang(q: float, alpha: int, cgf: np.ndarray) -> float:
    """``(α−1)ε'(α)``, the log of Zhu & Wang's Theorem 5 bound, for any base mechanism whose RDP
    ``ε(ℓ)`` holds in both orders of every add/remove pair; ``cgf[ℓ] = (ℓ−1)ε(ℓ)`` for
    ``ℓ = 0..α`` (entries 0 and 1 are unused); integer ``α ≥ 2``, ``0 < q < 1``."""
    terms = _log_binomial_weights(q, alpha) + cgf
    head = (alpha - 1) * np.log1p(-q) + np.log1p((alpha - 1) * q)  # ℓ = 0, 1 together
    return float(special.logsumexp(np.concatenate([[head, terms[2]], np.log(3.0) + terms[3:]])))


def log_subsampled_moment(q: float, c: float, alpha: int) -> tuple[float, float]:
    """``(log A_α, log B_α)`` for ``0 < q < 1``: Fact 1's exact ``e^{(α−1)D_α(P‖Q)}`` and Zhu &
    Wang's Theorem 5 bound on ``e^{(α−1)ε'(α)}`` (both directions), for base RDP ``ε(ℓ) = ℓc``."""
    cgf = _cgf(c, alpha)
    exact = float(special.logsumexp(_log_binomial_weights(q, alpha) + cgf))
    return exact, log_zhu_wang(q, alpha, cgf)


def release_rdp(log_mu: float, q: float, orders: np.ndarray = ORDERS,
                sampling: str = "poisson") -> np.ndarray:
    """``(A,)`` RDP at integer ``orders`` of one release of ``μ = Δ/scale = e^{log_mu}`` sampled
    with rate ``q``: Poisson (both directions, Theorem 5's bound) or ``"without_replacement"``
    (Theorem 9 of Wang et al.); ``αμ²/2`` at ``q = 1`` and wherever that is smaller, 0 without
    data (``μ = 0`` or ``q = 0``)."""
    orders = np.asarray(orders, dtype=np.int64)
    if q == 0.0 or log_mu == -np.inf:
        return np.zeros(orders.size)
    if not log_mu <= _MAX_LOG_MU:
        return np.full(orders.size, np.inf)
    c = 0.5 * np.exp(2.0 * log_mu)
    full = orders * c
    if q == 1.0:
        return full
    if sampling == "without_replacement":
        log_bound = [log_wang_balle_kasiviswanathan(q, int(a), _cgf(c, int(a))) for a in orders]
    else:
        log_bound = [max(log_subsampled_moment(q, c, int(a))) for a in orders]
    return np.minimum(np.array(log_bound) / (orders - 1), full)


def _cgf(c: float, alpha: int) -> np.ndarray:
    """``(ℓ−1)ε(ℓ) = ℓ(ℓ−1)c`` for ``ℓ = 0..α``: the discrete Gaussian's RDP curve ``ε(ℓ) = ℓc``."""
    k = np.arange(alpha + 1, dtype=np.float64)
    return k * (k - 1.0) * c


def _sampling_scheme(events: PrivacyEvents) -> str | None:
    """``"poisson"`` or ``"without_replacement"`` when every stream is a lattice Gaussian with
    that one sampling scheme (the relation of the amplified bound: add/remove-one or replace-one);
    ``None`` otherwise."""
    schemes = {s.sampling for s in events.streams}
    lattice_gaussians = all(s.lattice and s.mechanism == "gaussian" for s in events.streams)
    return schemes.pop() if lattice_gaussians and len(schemes) == 1 else None


def amplified(events: PrivacyEvents) -> bool:
    """Whether the lattice report's ``"rdp"`` curve may claim amplification by subsampling: every
    stream is a lattice Gaussian, all with ``sampling="poisson"`` or all
    ``"without_replacement"``, and some release is subsampled."""
    return _sampling_scheme(events) is not None and any(
        np.any((s.sampling_rate < 1) & (s.sensitivity > 0)) for s in events.streams)


def _stream_table(stream: PrivacyEvents, cache: dict) -> tuple[np.ndarray, np.ndarray]:
    """``(U, A)`` RDP of the distinct releases of one stream and ``(N, K)`` indices into it;
    releases of equal ``(Δ/scale, q)`` (to 1e-10 in ``log(Δ/scale)``) share one evaluation, at the
    group's largest ``Δ/scale`` (the bound increases with it)."""
    log_mu, q = stream.log_ratio, stream.sampling_rate
    keys = np.stack([np.round(np.where(np.isfinite(log_mu), log_mu, -1e300), 10), q], axis=-1)
    uniq, inverse = np.unique(keys.reshape(-1, 2), axis=0, return_inverse=True)
    worst = np.full(len(uniq), -np.inf)
    np.maximum.at(worst, inverse.reshape(-1), log_mu.reshape(-1))
    table = np.stack([cache.setdefault((m, qq, stream.sampling),
                                       release_rdp(m, qq, sampling=stream.sampling))
                      for m, qq in zip(worst, uniq[:, 1], strict=True)])
    return table, inverse.reshape(log_mu.shape)


def _agent_rdp(tables: list, agent: int, checkpoints: np.ndarray) -> np.ndarray:
    """``(S, A)`` composed RDP of one agent after each checkpoint, every stream."""
    starts = np.concatenate([[0], checkpoints[:-1]])
    segments = sum(np.add.reduceat(table[index[agent]], starts, axis=0)
                   for table, index in tables)
    return np.cumsum(segments, axis=0)


def subsampled_rdp_epsilon(events: PrivacyEvents, delta: float, *,
                           at_steps=None) -> np.ndarray:
    """Per-agent (ε, δ)-DP of lattice Gaussian releases with amplification by subsampling: Poisson
    (add/remove-one, Fact 2) or fixed-size batches without replacement (replace-one, Fact 3).

    Args:
      events: lattice Gaussian streams, all with ``sampling="poisson"`` or all
        ``"without_replacement"`` (:func:`amplified`).
      delta: δ in ``(0, 1)``.
      at_steps: step counts ``1..K`` at which to report ε; ``None`` reports the final ε only.

    Returns:
      ``(N,)`` final ε, or ``(N, S)`` ε after each of the ``S`` entries of ``at_steps``.

    Raises:
      ValueError: bad ``delta`` or ``at_steps``, or streams that are not Poisson-sampled lattice
        Gaussians.
    """
    from dp_accounting.rdp.rdp_privacy_accountant import compute_epsilon

    delta = check_delta(delta)
    if _sampling_scheme(events) is None:
        raise ValueError("subsampled_rdp_epsilon: every stream must be a lattice Gaussian, all "
                         "with sampling='poisson' or all with sampling='without_replacement'")
    checkpoints = check_steps(at_steps, events.steps)
    cache: dict = {}
    tables = [_stream_table(s, cache) for s in events.streams]
    eps = np.array([[compute_epsilon(ORDERS, rdp, delta)[0]
                     for rdp in _agent_rdp(tables, i, checkpoints)]
                    for i in range(events.n_agents)], dtype=np.float64)
    return eps[:, -1] if at_steps is None else eps


def lattice_rdp_epsilon(events: PrivacyEvents, delta: float, at_steps: np.ndarray,
                        plain_note: str) -> tuple[np.ndarray, str]:
    """The ``"rdp"`` curve of a lattice report and its note: dp-accounting's RDP of the releases
    without amplification (:meth:`~jaxdp.privacy.PrivacyEvents.without_amplification`), and, when
    :func:`amplified`, the smaller of that and :func:`subsampled_rdp_epsilon` (both are sound)."""
    plain = rdp_epsilon(events.without_amplification(), delta, at_steps=at_steps)
    if not amplified(events):
        return plain, plain_note
    note = NOTE if _sampling_scheme(events) == "poisson" else NOTE_WITHOUT_REPLACEMENT
    return np.minimum(plain, subsampled_rdp_epsilon(events, delta, at_steps=at_steps)), note
