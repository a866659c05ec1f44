"""Privacy accounting of paper 000 (DPP², Ou, Wang, Liu & Lu, arXiv 2511.02283).

Theorem 3 as printed and corrected, in log space; Corollary 1 as printed and corrected; solvers for
r or u given ε; the same releases as :class:`~jaxdp.privacy.PrivacyEvents` for dp-accounting; and
the sensitivities of the baselines DiaDSP and PPDC under the same adjacency.

Adjacency (Def. 1): two objective sets differ only at agent i₀ and
``sup_x ‖∇f⁽¹⁾_{i₀}(x) − ∇f⁽²⁾_{i₀}(x)‖ ≤ δ``. Every ε here is proportional to δ; this δ is *not*
the δ of (ε, δ)-DP. ``d`` is the model dimension, ``M`` the smoothness M̄ = max_i M_i.

Proof mechanics (App. A-A). The same observations {y^k, z^k} force the same d, q, so
``Δw^k = −Δx^k`` and ``Δe^k = −Δg^k``, and (18) gives ``Δx^{k+1} = −αΔg^k`` with
``‖Δg^k‖ ≤ δ + M‖Δx^k‖``. Hence ``‖Δx^k‖ ≤ αδS_k`` and ``‖Δg^k‖ ≤ δS_{k+1}`` with
``S_k = (1 − (αM)^k)/(1 − αM)`` (``S_0 = 0``). Each release is a d-dimensional Laplace mechanism
with ℓ1 sensitivity ``√d × ℓ2``, so

* ``variant="paper"`` — Theorem 3 verbatim: ``ε = c̃ Σ_{k=1}^{K} r^{−k}``,
  ``c̃ = √d δ (1/u_e + α/u_w)/(1 − αM)`` (needs αM < 1). [ERRATUM] it omits the k = 0 release:
  Algorithm 1 runs k = 0..K and z⁰ depends on ∇f_{i₀}(x⁰) (sensitivity δ).
* ``variant="corrected"`` — the same bound with the k = 0 release: ``c̃ Σ_{k=0}^{K} r^{−k}``.
* ``variant="tight"`` — the exact per-step sensitivities of the proof:
  ``ε = √d δ Σ_{k=0}^{K} r^{−k} (S_{k+1}/u_e + α S_k/u_w)``; valid for any α (also αM ≥ 1). It
  equals the pure-DP composition of :func:`dpp2_events`.

A run of ``s`` steps releases k = 0..s−1, i.e. Theorem 3 with horizon ``K = s − 1``.

Corollary 1 (parameter selection) is wrong twice: δ and M̄ are swapped in its
conditions on u_e and α, and its range ``r > (c̃/ε)^{1/(K−1)}`` is necessary, not sufficient
(K = 10, ε/c̃ = 100 allows r = 0.5995, where Σ_{k=1}^{10} r^{−k} = 414 > 100). :func:`corollary1`
gives both versions; :func:`solve_r` and :func:`solve_u` solve Theorem 3 exactly instead.

Baselines (``[OURS]``: their papers' own theorems use other adjacency notions and are not
reproduced). The same matched-observation argument gives per-step ℓ2 sensitivities:

* DiaDSP (x̃ = x + ξ, ỹ = y + ζ): ``Δx^{k+1} = −αΔy^k``, ``Δy^{k+1} = Δg^{k+1} − Δg^k``,
  ``Δy⁰ = Δg⁰``.
* PPDC (x̃ = x + ξ): ``Δv = 0``, ``Δx^{k+1} = Δx^k − ηΔg^k``.
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from jaxdp.privacy import PrivacyEvents
from jaxdp.privacy.contract import concat

LN10 = math.log(10.0)


# -- Theorem 3 ----------------------------------------------------------------------------------
def c_tilde(*, d: int, delta: float, alpha: float, M: float, u_e, u_w):
    """``c̃ = √d δ (1/u_e + α/u_w)/(1 − αM)`` of Theorem 3; ``inf`` where αM ≥ 1 or u = 0."""
    u_e, u_w = np.asarray(u_e, np.float64), np.asarray(u_w, np.float64)
    with np.errstate(divide="ignore"):
        c = math.sqrt(d) * delta * (1.0 / u_e + alpha / u_w)
        return np.where(alpha * M < 1, c / max(1.0 - alpha * M, 1e-300), np.inf)


def log_s_factor(k: np.ndarray, a: float) -> np.ndarray:
    """``log S_k`` with ``S_k = Σ_{t<k} a^t = (1 − a^k)/(1 − a)``, for any a ≥ 0 (−inf at k=0)."""
    k = np.asarray(k, np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        if a == 1.0:
            return np.log(k)
        if a == 0.0:
            return np.where(k > 0, 0.0, -np.inf)
        if a < 1.0:
            return np.log(-np.expm1(k * math.log(a))) - math.log1p(-a)
        return k * math.log(a) + np.log(-np.expm1(-k * math.log(a))) - math.log(a - 1.0)


def _log_r_power(k: np.ndarray, r: np.ndarray) -> np.ndarray:
    """``log r^{−k}``: ``(N,)`` × ``(K,)`` → ``(N, K)``, with 0^0 = 1 and 0^{−k} = inf."""
    with np.errstate(divide="ignore", invalid="ignore"):
        out = -k[None, :] * np.log(r)[:, None]
    return np.where(k[None, :] == 0, 0.0, out)


def theorem3_log_terms(steps: int, *, d: int, delta: float, alpha: float, M: float, u_e, u_w, r,
                       variant: str = "corrected") -> np.ndarray:
    """``(N, steps)`` natural log of the ε spent by the release at k = 0..steps−1 (−inf: none).

    ``u_e``, ``u_w``, ``r`` are scalars or ``(N,)`` (a scalar gives N = 1). See the module
    docstring for the variants.

    Raises:
      ValueError: unknown ``variant``.
    """
    if variant not in ("paper", "corrected", "tight"):
        raise ValueError(f"variant must be 'paper', 'corrected' or 'tight'; got {variant!r}")
    u_e, u_w, r = (np.atleast_1d(np.asarray(v, np.float64)) for v in (u_e, u_w, r))
    u_e, u_w, r = np.broadcast_arrays(u_e, u_w, r)
    k = np.arange(steps, dtype=np.float64)
    decay = _log_r_power(k, r)  # (N, K): log r^{-k}
    with np.errstate(divide="ignore", invalid="ignore"):
        if variant == "tight":
            return dpp2_log_terms(steps, d=d, delta=delta, alpha=alpha, M=M, u_e=u_e, u_w=u_w,
                                  r=r)
        log_c = np.log(c_tilde(d=d, delta=delta, alpha=alpha, M=M, u_e=u_e, u_w=u_w))[:, None]
        terms = log_c + decay
        return np.where(k[None, :] == 0, -np.inf, terms) if variant == "paper" else terms


def theorem3_log_epsilon_curve(steps: int, **kw) -> np.ndarray:
    """``(N, steps)`` log ε after s = 1..steps releases (Theorem 3 with K = s − 1), log space.

    Keyword arguments as :func:`theorem3_log_terms`.
    """
    terms = theorem3_log_terms(steps, **kw)
    with np.errstate(invalid="ignore"):
        return np.logaddexp.accumulate(terms, axis=1)


def theorem3_log_epsilon(K: int, **kw):
    """log ε of Theorem 3 for horizon K (releases k = 0..K), per agent: ``(N,)``.

    Example (Fig. 3 DPP²: log10(ε/δ) ≈ 500.9):
      >>> theorem3_log_epsilon(500, d=10, delta=1.0, alpha=0.0994, M=5.03, u_e=1.0, u_w=0.994,
      ...                      r=0.1, variant="paper")[0] / LN10   # doctest: +ELLIPSIS
      500.8...
    """
    return theorem3_log_epsilon_curve(K + 1, **kw)[:, -1]


# -- the sound accountant (one implementation, numpy or JAX) ------------------------------------
def dpp2_log_epsilon(steps: int, *, d: int, delta: float, alpha: float, M: float, u_e, u_w, r,
                     xp=np):
    """``(N, steps)`` natural log of DPP²'s sound pure-DP ε after s = 1..steps steps.

    The pure-DP composition of the Laplace releases y^k (scale u_w r^k, ℓ1 sensitivity
    ``√d α δ S_k``) and z^k (scale u_e r^k, ``√d δ S_{k+1}``), k = 0..s−1, with
    ``S_k = (1 − (αM)^k)/(1 − αM)`` (:func:`dpp2_sensitivities`):
    ``log ε_s = logsumexp_{k<s} [log(√d δ) + log(S_{k+1}/u_e + α S_k/u_w) − k log r]``.
    Valid for any αM (no αM < 1 condition) and exact in log space (budgets reach 1e500).

    Every data-dependent part of a release is accounted with the state it carries: given the
    transcript, d^k, q^k are public and ``x^{k+1} = T^k(transcript) − α∇f_i(x^k)`` (from (16)–(18)),
    so ``Δx^{k+1} = −αΔg^k`` and ``‖Δg^k‖₂ ≤ δ + M‖Δx^k‖₂``: the sensitivities grow with k
    (App. A-A's matched-observation argument), none is taken "with the history fixed".

    Args:
      steps: number of steps s ≥ 1.
      d, delta, alpha, M: dimension, δ of Def. 1, α and the smoothness M̄ (host floats).
      u_e, u_w, r: scalars or ``(N,)`` arrays of ``xp`` (traced, differentiable under JAX);
        each must be > 0 (a zero scale has no finite ε).
      xp: ``numpy`` (default) or ``jax.numpy``.

    Returns:
      ``(N, steps)`` log ε (N = 1 for scalar inputs).
    """
    terms = dpp2_log_terms(steps, d=d, delta=delta, alpha=alpha, M=M, u_e=u_e, u_w=u_w, r=r, xp=xp)
    if xp is np:
        return np.logaddexp.accumulate(terms, axis=1)
    import jax

    return jax.lax.cumlogsumexp(terms, axis=1)


def dpp2_log_terms(steps: int, *, d: int, delta: float, alpha: float, M: float, u_e, u_w, r,
                   xp=np):
    """``(N, steps)`` log of the pure ε spent by the releases of step k = 0..steps−1
    (:func:`dpp2_log_epsilon` sums them; same arguments)."""
    u_e, u_w, r = (xp.atleast_1d(xp.asarray(v, dtype=xp.float64 if xp is np else None))
                   for v in (u_e, u_w, r))
    if xp is not np:
        return _dpp2_log_terms_traced(steps, d=d, delta=delta, alpha=alpha, M=M, u_e=u_e,
                                      u_w=u_w, r=r)
    k = np.arange(steps, dtype=np.float64)
    log_s_next = np.asarray(log_s_factor(k + 1, alpha * M))  # log S_{k+1} (> −inf)
    log_s_now = np.asarray(log_s_factor(k, alpha * M))  # log S_k (−inf at k = 0)
    log_y = (math.log(alpha) if alpha > 0 else -np.inf) + log_s_now  # (K,)
    terms = xp.logaddexp(log_s_next[None, :] - xp.log(u_e)[:, None],
                         xp.where(np.isfinite(log_y)[None, :],
                                  np.where(np.isfinite(log_y), log_y, 0.0)[None, :]
                                  - xp.log(u_w)[:, None], -np.inf))
    decay = xp.where(k[None, :] == 0, 0.0, -k[None, :] * xp.log(r)[:, None])  # log r^{−k}, 0⁰ = 1
    return terms + math.log(math.sqrt(d) * delta) + decay


def _dpp2_log_terms_traced(steps: int, *, d, delta, alpha, M, u_e, u_w, r):
    """:func:`dpp2_log_terms` in JAX, differentiable in α too (α > 0): ``log S_k`` as a
    cumulative logsumexp of ``t log(αM)``, the k = 0 release (z only, S_1 = 1) kept apart so no
    ``−inf`` enters a gradient."""
    import jax
    import jax.numpy as jnp

    u_e, u_w, r = jnp.broadcast_arrays(u_e, u_w, r)  # (N,) each
    alpha = jnp.asarray(alpha, u_e.dtype)
    t = jnp.arange(steps, dtype=u_e.dtype)
    log_s = jax.lax.cumlogsumexp(t * (jnp.log(alpha) + math.log(M)))  # log S_1 .. log S_steps
    first = -jnp.log(u_e)[:, None]  # k = 0: z⁰ with S_1 = 1
    k = t[1:]
    later = jnp.logaddexp(log_s[None, 1:] - jnp.log(u_e)[:, None],
                          jnp.log(alpha) + log_s[None, :-1] - jnp.log(u_w)[:, None])
    later = later - k[None, :] * jnp.log(r)[:, None]
    return jnp.concatenate([first, later], axis=1) + math.log(math.sqrt(d) * delta)


# -- solvers and Corollary 1 ----------------------------------------------------------------------
def solve_r(epsilon: float, K: int, *, d: int, delta: float, alpha: float, M: float, u_e: float,
            u_w: float, variant: str = "corrected", rtol: float = 1e-12) -> float:
    """The smallest decay rate r ∈ (0, 1] whose Theorem-3 ε (horizon K) is at most ``epsilon``.

    ε is decreasing in r; bisection on r with ε evaluated in log space. Replaces Corollary 1.

    Raises:
      ValueError: ``epsilon ≤ 0``, or not reachable even at r = 1 (ε ≥ c̃·K is necessary).
    """
    if not epsilon > 0:
        raise ValueError(f"solve_r: epsilon must be > 0; got {epsilon!r}")
    kw = dict(d=d, delta=delta, alpha=alpha, M=M, u_e=u_e, u_w=u_w, variant=variant)
    target = math.log(epsilon)

    def log_eps(r):
        return float(theorem3_log_epsilon(K, r=r, **kw)[0])

    floor = log_eps(1.0)
    if floor > target:
        raise ValueError(f"solve_r: epsilon={epsilon:g} is below the budget at r = 1 "
                         f"({math.exp(floor):.6g}; variant={variant!r}, K={K}): no r < 1 meets it")
    lo, hi = 0.0, 1.0  # log_eps(lo) > target >= log_eps(hi)
    while hi - lo > rtol * hi:
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if log_eps(mid) <= target else (mid, hi)
    return hi


def solve_u(epsilon: float, K: int, *, d: int, delta: float, alpha: float, M: float, r: float,
            ratio: float = 1.0, variant: str = "corrected") -> tuple[float, float]:
    """``(u_e, u_w)`` with ``u_w = ratio·u_e`` whose Theorem-3 ε (horizon K) equals ``epsilon``.

    ε is proportional to 1/u at fixed ratio, so ``u = ε(u=1)/ε`` (computed in log space).

    Raises:
      ValueError: ``epsilon ≤ 0`` or ``ratio ≤ 0``, or a u beyond float64.
    """
    if not (epsilon > 0 and ratio > 0):
        raise ValueError(f"solve_u: epsilon and ratio must be > 0; got {epsilon!r}, {ratio!r}")
    log_u = float(theorem3_log_epsilon(K, d=d, delta=delta, alpha=alpha, M=M, u_e=1.0,
                                       u_w=ratio, r=r, variant=variant)[0]) - math.log(epsilon)
    if not log_u < math.log(np.finfo(np.float64).max):
        raise ValueError(f"solve_u: the noise scale u = 10^{log_u / LN10:.2f} is beyond float64")
    u = math.exp(log_u)
    return u, ratio * u


class Corollary1(NamedTuple):
    """Corollary 1's parameter conditions: ``u_e > u_e_min``, ``α < alpha_max``, ``r > r_min``."""

    u_e_min: float
    alpha_max: float
    r_min: float


def corollary1(epsilon: float, K: int, *, d: int, delta: float, M: float, u_e: float, u_w: float,
               alpha: float, variant: str = "corrected") -> Corollary1:
    """Corollary 1 as printed (``variant="paper"``) or corrected.

    * paper: ``u_e > √d M̄/ε``; ``α < min{1/M̄, (ε − √d M̄/u_e)/(δ(√d/u_w + ε))}``;
      ``r > (c̃/ε)^{1/(K−1)}`` — not sufficient.
    * corrected: ``u_e > √d δ/ε``; ``α < min{1/M̄, (ε − √d δ/u_e)/(√d δ/u_w + ε M̄)}`` (which is
      c̃ < ε); ``r ≥`` :func:`solve_r` with the printed Theorem 3 (``variant="paper"``).

    Raises:
      ValueError: unknown variant; for "corrected", ε not reachable (see :func:`solve_r`).
    """
    sd = math.sqrt(d)
    if variant == "paper":
        c = float(c_tilde(d=d, delta=delta, alpha=alpha, M=M, u_e=u_e, u_w=u_w))
        alpha_max = min(1 / M, (epsilon - sd * M / u_e) / (delta * (sd / u_w + epsilon)))
        return Corollary1(sd * M / epsilon, alpha_max, (c / epsilon) ** (1.0 / (K - 1)))
    if variant != "corrected":
        raise ValueError(f"variant must be 'paper' or 'corrected'; got {variant!r}")
    alpha_max = min(1 / M if M > 0 else math.inf,
                    (epsilon - sd * delta / u_e) / (sd * delta / u_w + epsilon * M))
    r_min = solve_r(epsilon, K, d=d, delta=delta, alpha=alpha, M=M, u_e=u_e, u_w=u_w,
                    variant="paper")
    return Corollary1(sd * delta / epsilon, alpha_max, r_min)


# -- PrivacyEvents (for dp-accounting) -------------------------------------------------------------
def laplace_decay_events(sensitivity: np.ndarray, u, r, steps: int, description: str
                         ) -> PrivacyEvents:
    """One Laplace stream: ℓ1 sensitivity ``(N, K)`` or ``(K,)``, scales ``u_i r_i^k`` in log space.

    Raises:
      ValueError: a zero u or r (a scale of 0 is no privacy: there is nothing to account).
    """
    u, r = (np.atleast_1d(np.asarray(v, np.float64)) for v in (u, r))
    if np.any(u <= 0) or np.any(r <= 0):
        raise ValueError(f"{description}: Laplace scales u·r^k need u > 0 and r > 0; got "
                         f"min u = {u.min():g}, min r = {r.min():g} (ε is infinite)")
    sens = np.atleast_2d(np.asarray(sensitivity, np.float64))
    n = max(u.size, r.size, sens.shape[0])
    log_scale = np.log(u)[:, None] - _log_r_power(np.arange(steps, dtype=np.float64), r)
    return PrivacyEvents.from_schedule(
        "laplace", np.broadcast_to(sens, (n, steps)), None, n, steps,
        log_scale=np.broadcast_to(log_scale, (n, steps)), description=description)


def dpp2_sensitivities(steps: int, *, d: int, delta: float, alpha: float, M: float):
    """ℓ1 sensitivities ``(K,)`` of the y-release (w) and z-release (e) at k = 0..K−1 (App. A-A).

    ``y``: ``√d α δ S_k`` (0 at k = 0); ``z``: ``√d δ S_{k+1}``.
    """
    k = np.arange(steps, dtype=np.float64)
    s = lambda kk: np.exp(log_s_factor(kk, alpha * M))  # noqa: E731
    return math.sqrt(d) * alpha * delta * s(k), math.sqrt(d) * delta * s(k + 1)


def dpp2_events(steps: int, *, d: int, delta: float, alpha: float, M: float, u_e, u_w, r
                ) -> PrivacyEvents:
    """DPP²'s releases as two Laplace streams per agent (y with w, z with e), k = 0..steps−1."""
    sens_y, sens_z = dpp2_sensitivities(steps, d=d, delta=delta, alpha=alpha, M=M)
    return concat([laplace_decay_events(sens_y, u_w, r, steps, "y = x + (1-η)d + w  (16)"),
                   laplace_decay_events(sens_z, u_e, r, steps, "z = ∇f + ηq + ρPy + e  (17)")])


def diadsp_sensitivities(steps: int, *, d: int, delta: float, alpha: float, M: float):
    """[OURS] ℓ1 sensitivities ``(K,)`` of DiaDSP's x̃ and ỹ releases under δ-adjacency.

    ``a_0 = 0``, ``b_0 = δ``; ``a_{k+1} = α b_k``; ``b_{k+1} = 2δ + M(a_{k+1} + a_k)`` (ℓ2), × √d.
    """
    a, b = np.zeros(steps), np.zeros(steps)
    b[0] = delta
    for k in range(steps - 1):
        a[k + 1] = alpha * b[k]
        b[k + 1] = 2 * delta + M * (a[k + 1] + a[k])
    return math.sqrt(d) * a, math.sqrt(d) * b


def ppdc_sensitivities(steps: int, *, d: int, delta: float, eta: float, M: float) -> np.ndarray:
    """[OURS] ℓ1 sensitivity ``(K,)`` of PPDC's x̃: ``a_{k+1} = (1 + ηM)a_k + ηδ``, a_0 = 0, ×√d."""
    a = np.zeros(steps)
    for k in range(steps - 1):
        a[k + 1] = (1 + eta * M) * a[k] + eta * delta
    return math.sqrt(d) * a


def log10_pure_dp(events: PrivacyEvents) -> np.ndarray:
    """``(N,)`` log10 of the pure-DP sum Σ Δ/b over every stream and step (exact in log space)."""
    logs = [np.logaddexp.reduce(s.log_ratio, axis=1) for s in events.streams]
    return np.logaddexp.reduce(np.stack(logs), axis=0) / LN10


__all__ = [
    "Corollary1", "c_tilde", "corollary1", "diadsp_sensitivities", "dpp2_events",
    "dpp2_log_epsilon", "dpp2_log_terms",
    "dpp2_sensitivities", "laplace_decay_events", "log10_pure_dp", "log_s_factor",
    "ppdc_sensitivities", "solve_r", "solve_u", "theorem3_log_epsilon",
    "theorem3_log_epsilon_curve", "theorem3_log_terms",
]
