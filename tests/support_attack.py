"""The float-grid support attack (Mironov, CCS 2012) as a reusable test helper.

A release ``r = post(fl(v + s·z))`` of the float sampler takes ``z`` from a finite, data-independent
set of floats: ``z = ∓ndtri(p)`` (Gaussian) or ``±(−log 2p)`` (Laplace) with ``p`` on the grid of
:func:`jaxdp.privacy._mechanisms._signed_tail` (``p = (i + 1/2)·2^{−32w}``, ``i`` a ``32w − 1``-bit
index, ``w = 1`` word per float32 draw and 2 per float64 draw, then rounded to the dtype). The
attacker knows the neighbouring pre-noise value ``v'``, the scale, the dtype and the code, and
decides whether ``r`` is in the SUPPORT of the release under ``v'``: whether some grid index gives
``post(fl(v' + s·z(i))) == r`` bit for bit. It inverts ``z_c = (post⁻¹(r) − v')/s``, finds the
candidate index from the tail ``p = Φ(−|z_c|)`` or ``e^{−|z_c|}/2`` (float64), scans a window of
grid indices around it (with a stride of half an ulp of ``p`` in index units, so no float ``p``
is skipped) for both signs, recomputes ``z`` with the library's own ``_signed_tail`` /
``_normal_from_tail`` / ``_laplace_from_tail`` and the release with its ``add_noise``, all jitted
as the library's draws are (XLA fuses ``v + s·z`` into an FMA and ``ndtri`` differs from its
op-by-op evaluation by a few ulps: the attacker compiles what the library compiles), and compares.

Soundness of "impossible": the release is monotone in the index for each sign (up to a few ulps
of ``ndtri``'s float error), so a window whose end releases lie strictly beyond ``r`` (by a margin
of several ulps) on both sides, or reach the end of the grid, covers every index that could give
``r``; when a window does not bracket ``r`` the coordinate is *undecided* and counted as possible.

The lattice sampler's analogue (:func:`lattice_in_support`): ``r`` is in the support under ``v'``
iff ``r = post(fl(n·γ))`` for an integer ``n`` with ``|n − a(v')| ≤ K_max``, ``γ = s/R`` and
``a(v') = round(clamp(v')/γ)`` computed as :func:`jaxdp.privacy.samplers.lattice_release` does.
"""
from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
from scipy.special import ndtr

from jaxdp.privacy import _lattice
from jaxdp.privacy._mechanisms import (
    _laplace_from_tail,
    _normal_from_tail,
    _signed_tail,
    add_noise,
)

MARGIN_ULPS = 8
"""How far (in ulps of the release) a window's end releases must lie beyond ``r``."""


def _words_per_draw(dtype) -> int:
    return 2 if jnp.dtype(dtype) == jnp.float64 else 1


def _tail(z_abs: np.ndarray, law: str) -> np.ndarray:
    """``p`` with ``|z(p)| = z_abs``: ``Φ(−|z|)`` or ``e^{−|z|}/2`` (float64)."""
    return ndtr(-z_abs) if law == "gaussian" else 0.5 * np.exp(-z_abs)


@functools.partial(jax.jit, static_argnames=("law", "dtype", "post"))
def _candidate_releases(words, v, s, *, law, dtype, post):
    """``post(add_noise(v, s, z(words), sampler="float"))`` with ``z`` from the library's own tail
    transforms on the grid words ``(w, n)`` (the library computes in the draw's dtype)."""
    from_tail = _normal_from_tail if law == "gaussian" else _laplace_from_tail
    z = from_tail(*_signed_tail(words, jnp.dtype(dtype))).astype(dtype)
    r = add_noise(v, s, z, law=law, sampler="float")
    return r if post is None else post(r)


def _padded(words, v, s, **static) -> np.ndarray:
    """:func:`_candidate_releases` on arrays padded to a power-of-two length (few compilations)."""
    m = v.size
    size = 1 << max(10, (m - 1).bit_length())
    pad = size - m
    words = np.pad(words, ((0, 0), (0, pad)))
    v, s = np.pad(v, (0, pad)), np.pad(s, (0, pad), constant_values=1)
    out = _candidate_releases(jnp.asarray(words), jnp.asarray(v), jnp.asarray(s), **static)
    return np.asarray(out)[:m]


def _words_of(index: np.ndarray, sign_bit: np.ndarray, w: int) -> np.ndarray:
    """The threefry words ``(w, n)`` whose draw has grid index ``index`` (uint64) and sign bit."""
    if w == 1:
        return ((index.astype(np.uint64) << np.uint64(1)) | sign_bit).astype(np.uint32)[None]
    hi = (index >> np.uint64(32)).astype(np.uint64)
    lo = (index & np.uint64(0xFFFFFFFF)).astype(np.uint32)
    return np.stack([((hi << np.uint64(1)) | sign_bit).astype(np.uint32), lo])


def float_in_support(r, v_prime, scale, *, law: str, dtype, post=None, post_inverse=None,
                     window: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Whether each released coordinate ``r`` is in the float sampler's support under ``v'``.

    Args:
      r: observed release coordinates ``(n,)`` (any shape, flattened), in ``dtype``.
      v_prime: the neighbour's pre-noise values, broadcastable to ``r``.
      scale: the noise scale ``s`` as the library computed it (in ``dtype``), broadcastable.
      law: ``"gaussian"`` or ``"laplace"``.
      dtype: float32 or float64.
      post: a jittable, elementwise, monotone public post-processing of the noisy value (e.g.
        ``lambda g: 0 - alpha * g``), hashable (static); ``None``: the identity.
      post_inverse: its approximate inverse in float64 (numpy); ``None``: the identity.
      window: grid strides scanned on each side of the candidate; ``None``: enough to pass
        ``r`` by the margin at every coordinate (16 to 4096).

    Returns:
      ``(possible, undecided)``: boolean ``(n,)`` arrays. ``~possible`` is certain: no index of
      the grid gives ``r`` under ``v'``; ``undecided`` coordinates are counted as possible.
    """
    dtype = jnp.dtype(dtype)
    np_dtype = np.dtype(dtype.name)
    r = np.asarray(r, np_dtype).ravel()
    n = r.size
    v_prime = np.broadcast_to(np.asarray(v_prime, np_dtype), np.shape(r)).ravel()
    scale = np.broadcast_to(np.asarray(scale, np_dtype), np.shape(r)).ravel()
    w = _words_per_draw(dtype)
    bits = 32 * w
    i_max = (1 << (bits - 1)) - 1

    y = r.astype(np.float64) if post_inverse is None else post_inverse(r.astype(np.float64))
    z_c = (y - v_prime.astype(np.float64)) / scale.astype(np.float64)
    p_c = np.clip(_tail(np.abs(z_c), law), 0.0, 0.5)
    # stride: half an ulp of p (in the dtype) in index units, at least one index
    ulp = np.spacing(p_c.astype(np_dtype)).astype(np.float64)
    stride = np.maximum(1.0, np.exp2(np.floor(np.log2(np.ldexp(ulp, bits) / 2))))
    stride = stride.astype(np.uint64)
    centre = np.clip(np.floor(np.ldexp(p_c, bits) - 0.5), 0, float(i_max)).astype(np.uint64)

    # the margin (release units) by which a window's ends must pass r, and the window (strides
    # per side) that reaches it: dr/di = slope · s · |dz/dp| · 2^{-bits}
    slope = 1.0
    if post is not None:
        one, zero = (np.asarray(post(jnp.asarray(np.full(1, x, np_dtype))), np.float64)
                     for x in (1.0, 0.0))
        slope = float(np.abs(one - zero)[0])
    z_ulp = np.spacing(np.abs(z_c).astype(np_dtype)).astype(np.float64)
    s64 = scale.astype(np.float64)
    margin = MARGIN_ULPS * np.maximum(np.spacing(np.abs(r)).astype(np.float64),
                                      slope * s64 * z_ulp)
    dz_dp = (np.sqrt(2 * np.pi) * np.exp(0.5 * z_c ** 2) if law == "gaussian"
             else 1.0 / np.maximum(p_c, 1e-300))
    dr_di = slope * s64 * dz_dp * np.ldexp(stride.astype(np.float64), -bits)
    needed = np.ceil(2 * (margin + np.spacing(np.abs(r)).astype(np.float64)) / dr_di) + 8
    if window is None:
        window = int(np.clip(np.max(needed, initial=16), 16, 4096))
    offsets = np.arange(-window, window + 1, dtype=np.int64)
    steps = offsets[None, :] * stride.astype(np.int64)[:, None]
    centre_i = centre.astype(np.int64)[:, None]
    lo_room, hi_room = centre_i, i_max - centre_i  # int64 (i_max < 2^63)
    steps = np.clip(steps, -lo_room, hi_room)
    # per coordinate: the window, then the grid's two ends (index 0 and i_max)
    width = 2 * window + 3
    index = np.concatenate([centre[:, None] + steps.astype(np.uint64),
                            np.zeros((n, 1), np.uint64), np.full((n, 1), i_max, np.uint64)],
                           axis=1).ravel()
    m = index.size
    words = np.concatenate([_words_of(index, np.full(m, b, np.uint64), w) for b in (1, 0)],
                           axis=1)
    v_rep = np.tile(np.repeat(v_prime, width), 2)
    s_rep = np.tile(np.repeat(scale, width), 2)
    rel = _padded(words, v_rep, s_rep, law=law, dtype=dtype.name, post=post)
    rel = rel.reshape(2, n, width).astype(np.float64)
    hit = np.any(rel == r.astype(np.float64)[None, :, None], axis=(0, 2))

    # coverage, per sign: the indices below the window release between rel(0) and rel(first),
    # those above between rel(last) and rel(i_max) (monotone in the index up to ndtri's float
    # error, absorbed by the margin); r must lie outside both ranges, or the window must reach
    # the grid's end on that side
    rr = r.astype(np.float64)[None]
    first, last = rel[:, :, 0], rel[:, :, 2 * window]
    end0, end1 = rel[:, :, 2 * window + 1], rel[:, :, 2 * window + 2]

    def outside(a, b):
        return (rr < np.minimum(a, b) - margin) | (rr > np.maximum(a, b) + margin)

    at_low_end = (steps[:, 0] == -lo_room[:, 0])[None]
    at_high_end = (steps[:, -1] == hi_room[:, 0])[None]
    covered = np.all((at_low_end | outside(end0, first)) & (at_high_end | outside(last, end1)),
                     axis=0)
    undecided = ~hit & ~covered
    return hit | undecided, undecided


def kmax(law: str) -> int:
    """The largest ``|K|`` the lattice tables can draw."""
    if law == "gaussian":
        return _lattice._GAUSSIAN_TAIL * _lattice.GAUSSIAN_RESOLUTION
    return _lattice._LAPLACE_HIGH * _lattice.LAPLACE_RESOLUTION  # 1 + R(H_max) + (R − 1)


@functools.partial(jax.jit, static_argnames=("law", "dtype", "post"))
def _lattice_parts(v, s, n, *, law, dtype, post):
    """``(a(v), post(fl(n·γ)))`` computed as :func:`jaxdp.privacy.samplers.lattice_release` does."""
    res = _lattice.resolution(law)
    gamma = jnp.asarray(s, dtype) * (1.0 / res)
    bound = _lattice.clamp_bound(dtype) * gamma
    a = jnp.round(jnp.clip(v, -bound, bound) / gamma)
    out = n.astype(dtype) * gamma
    return a, (out if post is None else post(out))


def lattice_gamma(scale, law: str, dtype) -> np.ndarray:
    """``γ = s/R`` in ``dtype``, as the library computes it."""
    return np.asarray(jnp.asarray(scale, dtype) * (1.0 / _lattice.resolution(law)))


def lattice_in_support(r, v_prime, scale, *, law: str, dtype, post=None,
                       post_inverse=None) -> np.ndarray:
    """Whether each ``r`` is ``post(fl(n·γ))`` for an integer ``n`` with ``|n − a(v')| ≤ K_max``:
    the lattice release's support under ``v'`` (``v_prime=None``: any integer ``n``, i.e. ``r``
    lies on the lattice image ``post(fl(γℤ))``)."""
    dtype = jnp.dtype(dtype)
    np_dtype = np.dtype(dtype.name)
    r = np.asarray(r, np_dtype).ravel()
    scale = np.broadcast_to(np.asarray(scale, np_dtype), r.shape)
    vp = np.zeros_like(r) if v_prime is None else np.broadcast_to(
        np.asarray(v_prime, np_dtype), np.shape(r)).ravel()
    gamma = lattice_gamma(scale, law, dtype).astype(np.float64)
    y = r.astype(np.float64) if post_inverse is None else post_inverse(r.astype(np.float64))
    n_c = np.round(y / gamma)
    found = np.zeros(r.shape, bool)
    for off in (-2, -1, 0, 1, 2):
        n = n_c + off
        a, rel = _lattice_parts(jnp.asarray(vp), jnp.asarray(scale), jnp.asarray(n), law=law,
                                dtype=dtype.name, post=post)
        ok = np.asarray(rel) == r
        if v_prime is not None:
            ok &= np.abs(n - np.asarray(a, np.float64)) <= kmax(law)
        found |= ok
    return found


def identify(possible_under_v, possible_under_vprime, rng) -> np.ndarray:
    """The attacker's guess per release (rows: releases, columns: coordinates): ``0`` ("v") when
    some coordinate is impossible under ``v'``, ``1`` ("v'") when some is impossible under ``v``,
    else a fair coin."""
    not_v_prime = ~np.all(possible_under_vprime, axis=-1)
    not_v = ~np.all(possible_under_v, axis=-1)
    coin = rng.integers(0, 2, size=not_v.shape)
    return np.where(not_v_prime & ~not_v, 0, np.where(not_v & ~not_v_prime, 1, coin))
