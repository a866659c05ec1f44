"""Noise mechanisms and clipping, written for reparameterized use.

Every draw is a *standard* draw (Laplace with scale ``b = 1``, normal with ``σ = 1``); an
algorithm's ``noise`` method multiplies it by its scale, ``scale * laplace(key, shape)``, so a
metric is differentiable in the scale and the same standard draws can be shared across
hyperparameters (design page, §4). All functions are pure and jittable (``shape`` and ``dtype``
static).

References:
  Dwork & Roth, "The Algorithmic Foundations of Differential Privacy", 2014, §3.3 (Laplace) and
  App. A (Gaussian).
"""
from __future__ import annotations

import math

import jax
import jax.numpy as jnp
from jax.scipy.special import ndtri

from jaxdp._types import Array, PRNGKey
from jaxdp.privacy._bits import random_words
from jaxdp.privacy._lattice import lattice_draws, lattice_release
from jaxdp.privacy._sites import mechanism_site


def _signed_tail(words: Array, compute) -> tuple[Array, Array]:
    """A uniform random sign and an independent ``p`` uniform on ``(0, 1/2)`` per column of
    ``words`` ``(w, n)``: ``w = 1`` word per draw in float32, 2 in float64.

    ``p = (v + 1/2) 2^{-32w}`` with ``v`` the ``32w − 1`` bits left after the sign (bit 0 of the
    first word): ``p`` reaches ``2^{-33}`` (``2^{-65}``), so the tails of the draws built on it
    reach 6.3σ (9.2σ) for the Gaussian and 22.2b (44.4b) for the Laplace. A transform of one
    23-bit uniform, as ``jax.random.normal``'s in float32, stops near 5.2–5.4σ.

    Returns:
      ``(sign, p)``, each ``(n,)`` in ``compute``; ``sign`` in ``{−1, +1}``.
    """
    sign = jnp.where((words[0] & 1) == 1, 1.0, -1.0).astype(compute)
    p = (words[0] >> 1).astype(compute) * (2.0 ** -32)
    if words.shape[0] == 2:
        return sign, p + (words[1].astype(compute) + 0.5) * (2.0 ** -64)
    return sign, p + 2.0 ** -33


def _normal_from_tail(sign: Array, p: Array) -> Array:
    """``∓Φ⁻¹(p) = ±Φ⁻¹(1 − p)``: ``|Z|`` by inversion of ``P(|Z| > t) = 2Φ(−t)``."""
    return -sign * ndtri(p)


def _laplace_from_tail(sign: Array, p: Array) -> Array:
    """``±(−log 2p)``: ``2p`` is uniform on ``(0, 1)``, so ``−log 2p`` is exponential."""
    return -sign * jnp.log(2.0 * p)


def _draws(key: PRNGKey, shape: tuple[int, ...], dtype, from_tail) -> Array:
    """Draws of ``shape`` and ``dtype`` (``None``: JAX's default float) from ``key``:
    ``from_tail(sign, p)`` on :func:`_signed_tail`, in float32 (half precision) or float64.

    Computed on flat arrays, in two halves joined by a concatenation, and reshaped last. XLA's CPU
    backend otherwise fuses the transform into the consumer of the draws, and a loop over an
    ``(S, N, d)`` array with d = 10 (inside a transpose of a product, say) runs it several times
    slower: the concatenation keeps it in a flat loop of its own. One device, 256 seeds, DGD with
    Gaussian noise on every directed message: 7.0 ms per step (10.7 ms written on the shape);
    aggregated at the receiver 2.6 ms (3.9 ms without the halves); DP-DGD with 8 seeds 179 µs
    (285 µs).
    """
    dtype = jnp.dtype(dtype or jnp.zeros(0).dtype)
    compute = jnp.dtype(jnp.float64) if dtype == jnp.float64 else jnp.dtype(jnp.float32)
    per_draw = 2 if compute == jnp.float64 else 1
    size = math.prod(shape)
    words = random_words(key, per_draw * size).reshape(per_draw, size)
    halves = [from_tail(*_signed_tail(w, compute)) for w in jnp.split(words, [size // 2], axis=1)]
    return jnp.concatenate(halves).astype(dtype).reshape(shape)


def laplace(key: PRNGKey, shape: tuple[int, ...], dtype=None) -> Array:
    """Standard Laplace draws: density ``exp(-|x|) / 2``, mean 0, variance 2.

    ``±(−log 2p)``: with ``p`` uniform on ``(0, 1/2)``, ``2p`` is uniform on ``(0, 1)`` and
    ``−log 2p`` is exponential with mean 1 (inverse transform); an independent sign makes it
    Laplace. Exact, and the draws reach 22.2 (float32) or 44.4 (float64).

    Args:
      key: a PRNG key.
      shape: output shape, e.g. ``(N, d)``.
      dtype: float dtype; ``None`` gives JAX's default float (float64 under x64).

    Returns:
      An array of ``shape``; ``b * laplace(key, shape)`` is ``Lap(b)``.
    """
    return _draws(key, shape, dtype, _laplace_from_tail)


def gaussian(key: PRNGKey, shape: tuple[int, ...], dtype=None) -> Array:
    """Standard normal draws; ``sigma * gaussian(key, shape)`` is ``N(0, σ² I)``.

    ``±Φ⁻¹(1 − p) = ∓Φ⁻¹(p)`` with ``p`` uniform on ``(0, 1/2)`` (``jax.scipy.special.ndtri``):
    ``|Z|`` by inversion of its tail ``P(|Z| > t) = 2Φ(−t)``, and an independent sign. Exact up to
    the float ``ndtri`` and the grid of ``p`` (the draws reach 6.3σ in float32, 9.2σ in float64).
    It is what makes per-message noise affordable: on 2 CPU cores the 256 × 502 × 10 float32
    draws of one per-message step take 6.1 ms, against 10.5 ms for Box–Muller on
    ``jax.random.uniform`` and 19 ms for ``jax.random.normal`` (whose float32 draws stop near
    5.2–5.4σ; ``python benchmarks/bench_channels.py --samplers``).

    Args:
      key: a PRNG key.
      shape: output shape, e.g. ``(N, d)``.
      dtype: float dtype; ``None`` gives JAX's default float.

    Returns:
      An array of ``shape``.
    """
    return _draws(key, shape, dtype, _normal_from_tail)


def laplace_like(key: PRNGKey, x: Array) -> Array:
    """Standard Laplace draws with the shape and dtype of ``x``."""
    return laplace(key, jnp.shape(x), jnp.result_type(x))


def gaussian_like(key: PRNGKey, x: Array) -> Array:
    """Standard normal draws with the shape and dtype of ``x``."""
    return gaussian(key, jnp.shape(x), jnp.result_type(x))


def _power_of_two_scale(m: Array) -> tuple[Array, Array]:
    """``(2^e, 2^{−e})`` per row, constants for autodiff, with ``2^e ≤ m < 2^{e+1}`` for a finite
    ``m > 0``, ``e`` clamped so both are normal floats (XLA's CPU backend flushes subnormals to
    zero): ``g·2^{−e}`` and ``2^e·r`` are exact unless they leave the normal range.

    Dividing a row by its largest magnitude rounded down to a power of two puts that entry in
    ``[1, 2)``: squares and sums of the scaled row cannot overflow (``Σ u² < 16d``), and the
    scaling itself rounds nothing, so a norm computed on it has the rounding of the same norm
    computed without scaling (the ``C(1 + (d + 4)u)`` bound of
    :func:`~jaxdp.privacy.samplers.lattice_sensitivity` holds as before).
    """
    info = jnp.finfo(jnp.result_type(m))
    e = jnp.frexp(jax.lax.stop_gradient(m))[1] - 1  # m = f·2^{e+1}, f in [1/2, 1)
    e = jnp.clip(e, info.minexp, info.maxexp - 2)
    one = jnp.ones_like(m)
    return jnp.ldexp(one, e), jnp.ldexp(one, -e)


def _scaled_norm(g: Array, norm: str = "l2") -> tuple[Array, Array, Array]:
    """``(r, 2^e, 2^{−e})`` per row (last axis, keepdims): ``r`` the ``norm`` (``"l2"``,
    ``"linf"`` or ``"l1"``) of the row scaled by ``2^{−e}`` (:func:`_power_of_two_scale`), so
    ``‖g‖ = 2^e r``. ``r`` cannot overflow: it is finite exactly when the row is (an ``inf`` entry
    gives ``inf``, a NaN gives NaN). The ℓ2 norm has a zero (not NaN) gradient at ``g = 0``."""
    m = jnp.max(jnp.abs(g), axis=-1, keepdims=True)  # NaN-propagating: a NaN row gives NaN
    up, down = _power_of_two_scale(m)
    if norm == "linf":
        return m * down, up, down
    u = g * down
    if norm == "l1":
        return jnp.sum(jnp.abs(u), axis=-1, keepdims=True), up, down
    sq = jnp.sum(u * u, axis=-1, keepdims=True)
    zero = sq == 0  # NaN stays NaN
    return jnp.where(zero, 0.0, jnp.sqrt(jnp.where(zero, 1.0, sq))), up, down


def _safe_norm(g: Array, norm: str = "l2") -> Array:
    """The ``norm`` of each row (keepdims), overflow-safe (:func:`_scaled_norm`): ``inf`` only
    when the norm exceeds the largest float or the row has an ``inf`` entry, NaN for a NaN
    entry."""
    r, up, _ = _scaled_norm(g, norm)
    return up * r


def _row_value(c, g: Array) -> Array:
    """Align a scalar or ``g.shape[:-1]`` value with the rows of ``g`` (no rank promotion)."""
    c = jnp.asarray(c, dtype=jnp.result_type(g))
    return c if c.ndim == 0 else c[..., None]


def clip_rows(g: Array, c: Array, norm: str = "l2") -> Array:
    """``g · c / max(‖g‖, c)`` per row in ``norm`` (``c`` aligned with the rows, keepdims): the
    clip every clip site calls (:func:`clip_by_norm`, the channels' ``clip``).

    A clipped row is computed as ``(g 2^{−e}) · (c / r)`` (:func:`_scaled_norm`): the same
    roundings as ``g · fl(c/‖g‖)``, each scaled exactly, without the underflow of ``c/‖g‖`` for a
    huge row or the overflow of its norm. A row that is not finite (an ``inf`` or NaN entry)
    becomes the zero vector: a fixed public value.
    """
    r, up, down = _scaled_norm(g, norm)
    clipped = up * r > c  # ‖g‖ > c, also when ‖g‖ overflows
    factor = jnp.where(clipped, c / jnp.where(clipped, r, 1.0), 1.0)
    return jnp.where(jnp.isfinite(r), g * jnp.where(clipped, down, 1.0) * factor, 0.0)


def clip_by_norm(g: Array, c) -> Array:
    """Clip each row (last axis) of ``g`` to Euclidean norm at most ``c``, for every input.

    .. math:: \\mathrm{clip}(g) = g \\cdot \\min(1, c / \\|g\\|_2)

    Written as ``g * c / max(‖g‖, c)`` with an overflow-safe norm (the row scaled by a power of
    two, :func:`clip_rows`): exact, safe at ``g = 0`` (returns 0 with finite gradients) and
    differentiable in ``g`` and ``c`` almost everywhere. A row whose norm is not a finite float
    (an ``inf`` or NaN entry, e.g. an overflowed gradient of an extreme record, or a norm beyond
    the largest float) becomes the zero vector: a fixed public value, so the output is finite
    and of norm ``≤ c`` whatever the data (without it ``inf · 0`` released NaN, which no
    ordinary data set produces).

    Args:
      g: ``(..., d)`` rows to clip, e.g. per-agent gradients ``(N, d)``.
      c: clipping norm ``> 0``; a scalar or an array of shape ``g.shape[:-1]`` (e.g. ``(N,)``).

    Returns:
      An array like ``g`` whose rows are finite with norm ``≤ c``.
    """
    return clip_rows(g, _row_value(c, g))


def clip_factor_soft(g: Array, zeta) -> Array:
    """Smooth clipping ``g · ζ / (ζ + ‖g‖₂)`` of each row (paper 004, LT-ADMM-DP, eq. (7)).

    The result has norm ``ζ‖g‖/(ζ+‖g‖) < ζ``, and the map is smooth except at ``g = 0``, where the
    safe norm still gives finite gradients. The norm is overflow-safe and a row whose norm is not
    a finite float becomes the zero vector, as in :func:`clip_by_norm`.

    Args:
      g: ``(..., d)`` rows, e.g. minibatch gradients ``(N, d)``.
      zeta: ``ζ > 0``; a scalar or an array of shape ``g.shape[:-1]``.

    Returns:
      An array like ``g``, finite.
    """
    zeta = _row_value(zeta, g)
    r, up, down = _scaled_norm(g)
    big = up * r >= zeta  # then ζ 2^{−e} ≤ r: ζ/(ζ + ‖g‖) computed scaled, without underflow
    den = jnp.where(big, zeta * down + r, zeta + up * r)
    return jnp.where(jnp.isfinite(r), g * jnp.where(big, down, 1.0) * (zeta / den), 0.0)


SAMPLERS = ("lattice", "float")
"""Noise samplers. ``"lattice"`` (the default wherever a report gives a finite ε): the integer
lattice mechanism of :func:`~jaxdp.privacy.samplers.lattice_release`, whose released floats are
covered by the report. ``"float"``: :func:`gaussian` / :func:`laplace` added in floating point, fast
and exactly reparameterized, for utility studies; its report's guarantee is ``inf`` (the released
floats reveal the data through the sampler's grid) with the real-valued curves kept as ``ideal``."""


def check_sampler(sampler: str) -> str:
    """``sampler`` if it is one of :data:`SAMPLERS`, else a ValueError naming it."""
    if sampler not in SAMPLERS:
        raise ValueError(f"sampler must be one of {SAMPLERS}; got {sampler!r}")
    return sampler


def noise_draws(key: PRNGKey, shape: tuple[int, ...], dtype=None, *, law: str = "gaussian",
                sampler: str = "lattice") -> Array:
    """Standard draws of ``law`` (``"gaussian"`` or ``"laplace"``) for :func:`add_noise`.

    ``"float"``: :func:`gaussian` / :func:`laplace`; ``"lattice"``:
    :func:`~jaxdp.privacy.samplers.lattice_draws` (``K/R`` for an integer ``K``). Both have mean 0
    and the variance of the standard law (1, or 2 for Laplace) up to the lattice's ``O(R⁻²)``.
    """
    if check_sampler(sampler) == "float":
        return (gaussian if law == "gaussian" else laplace)(key, shape, dtype)
    return lattice_draws(key, shape, dtype, law=law)


@mechanism_site("add_noise", {"v": "v", "scale": "p", "z": "z"}, releases=True)
def add_noise(v: Array, scale, z: Array, *, law: str = "gaussian",
              sampler: str = "lattice") -> Array:
    """The release of ``v`` with noise of ``scale`` (σ or b) and standard draws ``z`` of
    :func:`noise_draws`: ``v + scale·z`` for ``"float"``; the lattice release
    ``γ(round(v/γ) + zR)``, ``γ = scale/R``, for ``"lattice"`` (its tangent is that of
    ``v + scale·z``). A marked mechanism site (:mod:`jaxdp.privacy._sites`): ``v`` its value,
    ``scale`` its public parameter, ``z`` its draws."""
    if check_sampler(sampler) == "float":
        return v + scale * z
    dtype = jnp.result_type(v)
    return lattice_release(v, jnp.broadcast_to(jnp.asarray(scale, dtype), jnp.shape(v)),
                           z.astype(dtype), law)
