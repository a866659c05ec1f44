"""Closed-form privacy accounting in JAX: pure jnp, vmappable, differentiable.

These are the fast, differentiable accountants of the design page, §8 item 3, used for curves and to
calibrate noise inside a tuning loop. Schedules run along the **last axis** (steps ``K``, or RDP
orders ``A``); leading axes (agents ``N``, grid points ``G``) are batch axes. Inputs of different
rank must be broadcast by the caller (the tests run with rank promotion set to "raise"). Run in
float64 (x64) for budgets beyond ~1e38; for budgets beyond float64 (paper 000 reaches 1e500) use the
log-space :func:`log_laplace_epsilon_curve` (Laplace) and :func:`log_gaussian_zcdp`,
:func:`log_zcdp_to_dp`, :func:`log_rdp_to_dp` (Gaussian); :func:`closed_form_curve` computes in log
space throughout.

Conversions to (ε, δ)-DP:

* zCDP: ``ε = ρ + 2√(ρ ln(1/δ))`` (Bun & Steinke 2016, Prop. 1.3).
* RDP: the default is the improved conversion that dp-accounting 0.6 uses
  (``rdp_privacy_accountant.compute_epsilon``; Canonne, Kamath & Steinke 2020, Prop. 12; Asoodeh
  et al. 2020, eq. 20), so our values equal ``RdpAccountant``'s at the same orders. The standard one
  (Mironov 2017, Prop. 3) is ``method="standard"``.

References:
  Dwork & Roth, "The Algorithmic Foundations of Differential Privacy", 2014, Thm 3.6 (Laplace
  mechanism) and Thm 3.14 (basic composition).
  Bun & Steinke, "Concentrated Differential Privacy: Simplifications, Extensions, and Lower Bounds",
  TCC 2016, arXiv:1605.02065.
  Mironov, "Rényi Differential Privacy", CSF 2017, arXiv:1702.07476.
  Canonne, Kamath & Steinke, "The Discrete Gaussian for Differential Privacy", 2020,
  arXiv:2004.00010.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jaxdp._types import Array

#: Rényi orders: 1.01, 1.02, ..., 1.99 (step 0.01: a subsampled Gaussian's optimal order for a
#: budget composed over thousands of steps lies close to 1), 2.0, 2.1, ..., 10.9, 11, ..., 63,
#: 64, 72, ..., 248, 256, 512, 1024 — dp-accounting 0.6's ``DEFAULT_RDP_ORDERS`` refined.
DEFAULT_ORDERS = np.unique(np.concatenate(
    [1 + np.arange(1, 100) / 100.0, 2 + np.arange(0, 90) / 10.0, np.arange(11, 64),
     np.arange(64, 257, 8), [512, 1024]]
)).astype(np.float64)


def _cumulative(x: Array) -> Array:
    """Cumulative sum along the last axis (identity for a scalar)."""
    return x if x.ndim == 0 else jnp.cumsum(x, axis=-1)


def _along_orders(x: Array, orders: Array) -> Array:
    """``x[..., None] * orders`` without rank promotion: ``(...)``, ``(A,)`` → ``(..., A)``."""
    return x[..., None] * orders.reshape((1,) * x.ndim + orders.shape)


def laplace_epsilon_curve(sensitivity, scale) -> Array:
    """Cumulative pure-DP ε of a sequence of Laplace releases.

    .. math:: \\varepsilon_k = \\sum_{t \\le k} \\Delta_t / b_t

    Each release is ``(Δ_t/b_t)``-DP (Dwork–Roth Thm 3.6, ``Δ`` the ℓ1 sensitivity) and pure DP
    composes additively (Dwork–Roth Thm 3.14, also under adaptive composition).

    Args:
      sensitivity: ``(..., K)`` ℓ1 sensitivities ``Δ_t ≥ 0``.
      scale: ``(..., K)`` Laplace scales ``b_t > 0``.

    Returns:
      ``(..., K)`` ε after each step (δ = 0).

    Example:
      >>> float(laplace_epsilon_curve(jnp.ones(10), 2 * jnp.ones(10))[-1])
      5.0
    """
    return _cumulative(jnp.asarray(sensitivity) / jnp.asarray(scale))


def log_laplace_epsilon_curve(log_sensitivity, log_scale) -> Array:
    """``log`` of :func:`laplace_epsilon_curve`, computed in log space (cumulative log-sum-exp).

    Stays finite where ε overflows float64, e.g. ``b_t = u·r^t`` with ``r = 0.1`` and ``K = 500``
    (paper 000, §4.3: ``ε ≈ 10^500``). ``log_sensitivity = -inf`` (``Δ = 0``) is allowed.

    Args:
      log_sensitivity: ``(..., K)`` ``log Δ_t``.
      log_scale: ``(..., K)`` ``log b_t``.

    Returns:
      ``(..., K)`` ``log ε_k``; divide by ``ln 10`` for ``log10``.
    """
    log_eps_t = jnp.asarray(log_sensitivity) - jnp.asarray(log_scale)
    if log_eps_t.ndim == 0:
        return log_eps_t
    return jax.lax.cumlogsumexp(log_eps_t, axis=log_eps_t.ndim - 1)


def gaussian_zcdp(sensitivity, sigma) -> Array:
    """Cumulative zCDP of a sequence of Gaussian releases.

    .. math:: \\rho_k = \\sum_{t \\le k} \\Delta_t^2 / (2\\sigma_t^2)

    The Gaussian mechanism with ℓ2 sensitivity ``Δ`` is ``Δ²/(2σ²)``-zCDP (Bun–Steinke Prop. 1.6)
    and zCDP composes additively (Lemma 1.7). With ``sigma = b`` and ``Δ`` an ℓ1 sensitivity this is
    also the zCDP of Laplace releases, since ε-DP implies ``ε²/2``-zCDP (Prop. 1.4).

    Args:
      sensitivity: ``(..., K)`` ℓ2 sensitivities.
      sigma: ``(..., K)`` noise standard deviations.

    Returns:
      ``(..., K)`` ρ after each step (a scalar for scalar inputs).
    """
    ratio = jnp.asarray(sensitivity) / jnp.asarray(sigma)
    return _cumulative(0.5 * ratio * ratio)


def zcdp_to_dp(rho, delta) -> Array:
    """(ε, δ)-DP implied by ρ-zCDP: ``ε = ρ + 2√(ρ ln(1/δ))`` (Bun–Steinke Prop. 1.3).

    Args:
      rho: ρ ``≥ 0``, any shape.
      delta: δ in ``(0, 1)``, broadcastable with ``rho`` (a scalar, or the same rank).

    Returns:
      ε with the shape of ``rho``.
    """
    rho = jnp.asarray(rho)
    return rho + 2.0 * jnp.sqrt(rho * jnp.log(1.0 / jnp.asarray(delta)))


def log_gaussian_zcdp(log_sensitivity, log_sigma) -> Array:
    """``log`` of :func:`gaussian_zcdp`, in log space (cumulative log-sum-exp along the last axis).

    ``log ρ_k = logsumexp_{t ≤ k} (2 log(Δ_t/σ_t) − ln 2)``: finite where ``Δ/σ`` exceeds 1e154
    and ρ overflows float64. ``log_sensitivity = -inf`` (``Δ = 0``) gives ``-inf``.

    Args:
      log_sensitivity: ``(..., K)`` ``log Δ_t``.
      log_sigma: ``(..., K)`` ``log σ_t``.

    Returns:
      ``(..., K)`` ``log ρ_k`` (a scalar for scalar inputs).
    """
    terms = 2.0 * (jnp.asarray(log_sensitivity) - jnp.asarray(log_sigma)) - jnp.log(2.0)
    if terms.ndim == 0:
        return terms
    return jax.lax.cumlogsumexp(terms, axis=terms.ndim - 1)


def log_zcdp_to_dp(log_rho, delta) -> Array:
    """``log`` of :func:`zcdp_to_dp`: ``log(ρ + 2√(ρ ln(1/δ)))`` from ``log ρ``, without overflow.

    ``= logaddexp(log ρ, ln 2 + (log ρ + log ln(1/δ))/2)``; ``log ρ = -inf`` gives ``-inf``.
    """
    log_rho = jnp.asarray(log_rho)
    log_l = jnp.log(jnp.log(1.0 / jnp.asarray(delta, dtype=log_rho.dtype)))
    return jnp.logaddexp(log_rho, jnp.log(2.0) + 0.5 * (log_rho + log_l))


def zcdp_for_epsilon(epsilon, delta) -> Array:
    """The largest ρ whose :func:`zcdp_to_dp` is ε: ``ρ = (√(ε + ln(1/δ)) − √(ln(1/δ)))²``.

    Args:
      epsilon: target ε ``> 0``.
      delta: δ in ``(0, 1)``.

    Returns:
      ρ with the broadcast shape of the inputs.
    """
    log_inv_delta = jnp.log(1.0 / jnp.asarray(delta))
    return (jnp.sqrt(jnp.asarray(epsilon) + log_inv_delta) - jnp.sqrt(log_inv_delta)) ** 2


def gaussian_rdp(orders, sensitivity, sigma) -> Array:
    """RDP of a composed sequence of Gaussian releases, summed over the steps (last axis).

    .. math:: \\mathrm{RDP}(\\alpha) = \\alpha \\sum_t \\Delta_t^2 / (2\\sigma_t^2)

    (Mironov 2017, Prop. 7 for one release, Prop. 1 for composition.) For a curve, use
    ``gaussian_zcdp(...)[..., None] * orders``.

    Args:
      orders: ``(A,)`` Rényi orders ``α > 1``, e.g. :data:`DEFAULT_ORDERS`.
      sensitivity: ``(..., K)`` ℓ2 sensitivities (a scalar for one release).
      sigma: ``(..., K)`` noise standard deviations.

    Returns:
      ``(..., A)`` RDP at each order.
    """
    ratio = jnp.asarray(sensitivity) / jnp.asarray(sigma)
    rho = 0.5 * ratio * ratio
    rho = rho if rho.ndim == 0 else jnp.sum(rho, axis=-1)
    return _along_orders(rho, jnp.asarray(orders, dtype=rho.dtype))


def rdp_to_dp(orders, rdp, delta, method: str = "improved") -> Array:
    """(ε, δ)-DP from RDP values at several orders, minimised over the orders (last axis).

    * ``"improved"`` (default, as dp-accounting 0.6): for ``α > 1.01``,
      ``ε(α) = rdp + log((α−1)/α) − (log δ + log α)/(α−1)`` (Canonne–Kamath–Steinke 2020, Prop. 12);
      ``ε(α) = 0`` where ``δ² + expm1(−rdp) > 0`` (the KL bound); orders ``≤ 1.01`` are skipped; the
      result is clipped at 0. This matches ``dp_accounting.rdp.compute_epsilon``.
    * ``"standard"``: ``ε(α) = rdp + log(1/δ)/(α−1)`` for ``α > 1`` (Mironov 2017, Prop. 3).

    Args:
      orders: ``(A,)`` orders.
      rdp: ``(..., A)`` RDP at each order.
      delta: δ in ``(0, 1)``, a scalar.
      method: ``"improved"`` or ``"standard"`` (static).

    Returns:
      ``(...)`` the smallest ε over the orders.

    Raises:
      ValueError: an unknown ``method``.
    """
    rdp = jnp.asarray(rdp)
    alpha = jnp.broadcast_to(jnp.asarray(orders, dtype=rdp.dtype), rdp.shape)
    delta = jnp.asarray(delta, dtype=rdp.dtype)
    if method == "improved":
        usable = alpha > 1.01
        a = jnp.where(usable, alpha, 2.0)
        eps = rdp + jnp.log1p(-1.0 / a) - jnp.log(delta * a) / (a - 1.0)
        eps = jnp.where(usable, eps, jnp.inf)
        eps = jnp.where(delta * delta + jnp.expm1(-rdp) > 0, 0.0, eps)
        return jnp.maximum(jnp.min(eps, axis=-1), 0.0)
    if method == "standard":
        usable = alpha > 1.0
        a = jnp.where(usable, alpha, 2.0)
        eps = jnp.where(usable, rdp - jnp.log(delta) / (a - 1.0), jnp.inf)
        return jnp.min(eps, axis=-1)
    raise ValueError(f"rdp_to_dp method must be 'improved' or 'standard'; got {method!r}")


def log_rdp_to_dp(orders, log_rdp, delta, method: str = "improved") -> Array:
    """``log`` of :func:`rdp_to_dp` from ``log RDP``: finite where RDP exceeds float64.

    ``ε(α) = rdp + c(α)`` with ``c(α)`` the conversion's order term, so
    ``log ε(α) = log rdp + log1p(c(α)/rdp)`` (exact; used where ``rdp > e^30``, the linear form
    below). Minimised over the orders (last axis); ``-inf`` where ε = 0.

    Args:
      orders: ``(A,)`` orders.
      log_rdp: ``(..., A)`` ``log`` RDP at each order.
      delta: δ in ``(0, 1)``, a scalar.
      method: ``"improved"`` or ``"standard"`` (see :func:`rdp_to_dp`).

    Returns:
      ``(...)`` ``log`` of the smallest ε over the orders.
    """
    log_rdp = jnp.asarray(log_rdp)
    c = _order_term(orders, delta, method, log_rdp.dtype)  # (A,)
    big = log_rdp > 30.0
    usable = jnp.isfinite(c)
    huge = jnp.where(usable, log_rdp + jnp.log1p(jnp.where(usable, c, 0.0)
                                                 * jnp.exp(-jnp.maximum(log_rdp, 30.0))), jnp.inf)
    rdp = jnp.exp(jnp.minimum(log_rdp, 30.0))
    eps = rdp + c
    if method == "improved":  # the KL bound, as rdp_to_dp
        eps = jnp.where(jnp.asarray(delta) ** 2 + jnp.expm1(-rdp) > 0, 0.0, eps)
    linear = jnp.log(jnp.maximum(eps, 0.0))
    return jnp.min(jnp.where(big, huge, linear), axis=-1)


def _order_term(orders, delta, method: str, dtype) -> Array:
    """``c(α)`` of :func:`rdp_to_dp`: ``ε(α) − rdp`` (``inf`` at unusable orders)."""
    alpha = jnp.asarray(orders, dtype=dtype)
    delta = jnp.asarray(delta, dtype=dtype)
    if method == "improved":
        a = jnp.where(alpha > 1.01, alpha, 2.0)
        return jnp.where(alpha > 1.01, jnp.log1p(-1.0 / a) - jnp.log(delta * a) / (a - 1.0),
                         jnp.inf)
    a = jnp.where(alpha > 1.0, alpha, 2.0)
    return jnp.where(alpha > 1.0, -jnp.log(delta) / (a - 1.0), jnp.inf)


def closed_form_curve(events, delta: float) -> tuple[str, np.ndarray, np.ndarray]:
    """The closed-form ε curve of :class:`~jaxdp.privacy.PrivacyEvents`, on the host in float64.

    * Only Laplace streams: ``"pure_dp"``, the pure-DP sum over streams and steps (δ = 0), computed
      in log space so its ``log10`` stays exact beyond float64.
    * Any Gaussian stream: ``"zcdp"``, every release's ``Δ²/(2·scale²)`` summed (a Laplace release
      counts as ``(Δ/b)²/2``-zCDP) and converted with :func:`zcdp_to_dp` at ``delta``.

    Both ignore subsampling, so they are valid upper bounds whatever ``sampling_rate`` is; a
    ``"poisson_replace_one"`` stream is charged its pair distance ``2Δ``
    (:attr:`~jaxdp.privacy.PrivacyEvents.log_pair_ratio`).

    Args:
      events: a ``PrivacyEvents`` (all streams are composed).
      delta: δ for the zCDP conversion (unused for ``"pure_dp"``).

    Returns:
      ``(name, epsilon, log10_epsilon)``, both arrays ``(N, K)``; ``epsilon`` may be ``inf`` where
      ``log10_epsilon`` is finite.
    """
    streams = events.streams
    with jax.enable_x64(True), np.errstate(over="ignore", divide="ignore"):
        if all(s.mechanism == "laplace" for s in streams):
            logs = jnp.stack([log_laplace_epsilon_curve(s.log_ratio, 0.0) for s in streams])
            log_eps = np.asarray(jax.nn.logsumexp(logs, axis=0))
            return "pure_dp", np.exp(log_eps), log_eps / np.log(10.0)
        log_rho = jax.nn.logsumexp(jnp.stack([log_gaussian_zcdp(s.log_pair_ratio, 0.0)
                                              for s in streams]), axis=0)
        log_eps = np.asarray(log_zcdp_to_dp(log_rho, delta))
        return "zcdp", np.exp(log_eps), log_eps / np.log(10.0)
