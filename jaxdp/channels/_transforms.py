"""Row transforms other than noise: the clip and the compressors.

**Row transforms** map the rows ``v`` ``(R, D)`` of one product call (one row per sender for a
broadcast, or before the first random transform; one per directed edge otherwise) to what is
released:

* :func:`clip`: ``v · min(1, C / ‖v‖)`` in the ℓ2, ℓ∞ or ℓ1 norm, per message (role ``"clip"``).
* :func:`top_k`, :func:`random_k`, :func:`quantize`: compression (optionally with error feedback).

The noises are in :mod:`jaxdp.channels._noise`, the losses in :mod:`jaxdp.channels._losses`, the
contract every transform follows in :mod:`jaxdp.channels._base`.
"""
from __future__ import annotations

import dataclasses
import math
from typing import ClassVar

import jax
import jax.numpy as jnp
import numpy as np

from jaxdp.channels._base import Transform, declare, per_row, positive, row_norm, size
from jaxdp.privacy._mechanisms import clip_rows

NORMS = ("l2", "linf", "l1")

# ℓ_q bound of a vector clipped to norm C in ``norm``, over C (``d`` the flattened message size).
_L2_BOUND = {"l2": lambda d: 1.0, "linf": np.sqrt, "l1": lambda d: 1.0}
_L1_BOUND = {"l2": np.sqrt, "linf": lambda d: float(d), "l1": lambda d: 1.0}


@dataclasses.dataclass(frozen=True)
class Clip(Transform):
    """``v · min(1, C / ‖v‖)`` (:func:`clip`): every released row has norm ≤ C and is finite
    (:func:`jaxdp.privacy._mechanisms.clip_rows`: an overflow-safe norm, a row with an ``inf``
    or NaN entry sent as the zero vector)."""

    kind: ClassVar[str] = "clip"
    role: ClassVar[str] = "clip"
    declared: ClassVar = (declare("norm", doc="C, the clip bound of every message's norm"),)

    @property
    def bound_field(self) -> str:
        """The Params field holding ``C``."""
        return self.fields[0]

    def bound(self, d: int, q: int) -> float:
        """The ℓq (``q`` 2 or 1) norm bound of a clipped message of ``d`` coordinates, over C (an
        ℓ∞ clip bounds the ℓ2 norm by ``C√d`` and the ℓ1 norm by ``C d``; an ℓ2 clip the ℓ1 norm
        by ``C√d``)."""
        return (_L2_BOUND if q == 2 else _L1_BOUND)[self.norm](d)

    def apply(self, v, p: dict, who, k, z=None):
        return clip_rows(v, per_row(p[self.fields[0]], who, v), self.norm)


def clip(c: float = 1.0, *, norm: str = "l2", name: str = "clip") -> Clip:
    """Clip every message to norm at most ``c`` (Params field ``f"{name}_norm"``, > 0).

    Raises:
      ValueError: an unknown ``norm`` or ``c <= 0``.
    """
    if norm not in NORMS:
        raise ValueError(f"clip norm must be one of {NORMS}; got {norm!r}")
    positive("clip c", c)
    return Clip.build(name, {"norm": c}, norm=norm)


_EF_DOC = """
    With ``error_feedback=True`` the sender keeps a memory ``e`` per product call and row (zero at
    the start), sends ``c = C(v + e)`` and sets ``e ← v + e − c`` (Seide et al. 2014, 1-bit SGD;
    Karimireddy et al. 2019, EF-SGD, Algorithm 2): the compression error is re-sent later
    instead of lost. The memory is channel state (:class:`~jaxdp.channels.ChannelState`)."""
_K_RAISES = """

    Raises:
      ValueError: ``k < 1`` (``k > D`` is refused where the message size ``D`` is known).
    """


def _sparse_bits(k: int, d: int, float_bits: int) -> int:
    """``k`` (value, index) pairs: ``float_bits + ⌈log₂ d⌉`` each."""
    return k * (float_bits + max(1, math.ceil(math.log2(d))))


@dataclasses.dataclass(frozen=True)
class Sparse(Transform):
    """``k`` coordinates of each row kept (:class:`TopK`, :class:`RandomK`): ``k`` (static) and
    optional error feedback."""

    k: int = 1
    error_feedback: bool = False

    def message_bits(self, d: int, float_bits: int, bits_in: int) -> int:
        return _sparse_bits(self.k, d, float_bits)

    def check_size(self, d: int) -> None:
        """Refuse ``k > d``.

        Raises:
          ValueError: naming the transform, ``k`` and ``d``.
        """
        if self.k > d:
            raise ValueError(f"{self.kind}(k={self.k}) needs messages of at least k coordinates; "
                             f"this algorithm sends messages of size D = {d}")


@dataclasses.dataclass(frozen=True)
class TopK(Sparse):
    """The ``k`` largest-magnitude coordinates of each row (:func:`top_k`)."""

    kind: ClassVar[str] = "top_k"

    @property
    def role(self) -> str:
        return "post" if self.error_feedback else "contraction"

    def apply(self, v, p: dict, who, k, z=None):
        return v * _keep_largest(jnp.abs(v), self.k)


def top_k(k: int, *, error_feedback: bool = False, name: str = "topk") -> TopK:
    """Keep the ``k`` largest-magnitude coordinates of each message, zero the rest (ties: the
    lowest index). No Params fields; ``k`` is static. Unlike decent-bench's ``TopK`` (which
    compresses once per sender), the compression applies to each row the channel sends.
    """
    size("top_k k", k)
    return TopK(name, k=int(k), error_feedback=bool(error_feedback))


top_k.__doc__ += _EF_DOC + _K_RAISES


@dataclasses.dataclass(frozen=True)
class RandomK(Sparse):
    """``k`` uniformly chosen coordinates of each row, scaled by ``D/k`` if unbiased
    (:func:`random_k`)."""

    unbiased: bool = True
    kind: ClassVar[str] = "random_k"
    raises_norm: ClassVar[str] = "D/k scaling"
    random: ClassVar[bool] = True

    @property
    def role(self) -> str:
        return "post" if self.error_feedback or self.unbiased else "contraction"

    def apply(self, v, p: dict, who, k, z=None):
        scale = v.shape[-1] / self.k if self.unbiased else 1.0
        return v * _keep_largest(z, self.k) * scale


def random_k(k: int, *, unbiased: bool = True, error_feedback: bool = False,
             name: str = "randk") -> RandomK:
    """Keep ``k`` coordinates chosen uniformly at random (without replacement) per message, zero
    the rest, and scale by ``D/k`` when ``unbiased`` (then ``E[C(v)] = v``; Stich et al. 2018).
    A random draw (``D`` uniforms per row, the ``k`` largest kept), so per directed message like
    the noise unless the channel broadcasts.
    """
    size("random_k k", k)
    return RandomK(name, k=int(k), unbiased=bool(unbiased), error_feedback=bool(error_feedback))


random_k.__doc__ += _EF_DOC + _K_RAISES


@dataclasses.dataclass(frozen=True)
class Quantize(Transform):
    """QSGD levels of each row (:func:`quantize`)."""

    bits: int = 1
    stochastic: bool = False
    error_feedback: bool = False
    kind: ClassVar[str] = "quantize"
    role: ClassVar[str] = "post"
    raises_norm: ClassVar[str] = "rounding that can raise the norm"

    @property
    def random(self) -> bool:
        return self.stochastic

    def apply(self, v, p: dict, who, k, z=None):
        return _quantize(v, self.bits, self.norm, z)

    def message_bits(self, d: int, float_bits: int, bits_in: int) -> int:
        """The norm as a float and, per coordinate, a sign bit and a ``bits``-bit level."""
        return float_bits + d * (1 + self.bits)


def quantize(bits: int, *, stochastic: bool = False, norm: str = "l2",
             error_feedback: bool = False, name: str = "quant") -> Quantize:
    """QSGD-style quantization (Alistarh et al. 2017): ``s = 2^bits − 1`` levels of
    ``|v_j| / ‖v‖`` (``‖·‖`` the ℓ2 norm by default, or ``"linf"``), rounded to the nearest level
    (deterministic, biased) or stochastically (up with probability the fractional part: unbiased,
    a per-row random draw); the sign and the norm are sent in full. decent-bench's
    ``StochasticQuantization(n_levels=s)`` is the stochastic ℓ2 case; its ``Quantization`` rounds
    to a fixed step instead.
    """
    if not isinstance(bits, int) or not 1 <= bits <= 24:
        raise ValueError(f"quantize bits must be an integer in [1, 24]; got {bits!r}")
    if norm not in ("l2", "linf"):
        raise ValueError(f"quantize norm must be 'l2' or 'linf'; got {norm!r}")
    return Quantize(name, norm=norm, bits=bits, stochastic=bool(stochastic),
                    error_feedback=bool(error_feedback))


quantize.__doc__ += _EF_DOC + """

    Raises:
      ValueError: ``bits`` not an integer in [1, 24], or an unknown norm.
    """


def _keep_largest(score, k: int):
    """0/1 mask of the ``k`` largest entries of each row of ``score`` (ties: lowest index)."""
    idx = jax.lax.top_k(score, k)[1]
    rows = jnp.arange(score.shape[0])[:, None]
    return jnp.zeros(score.shape, score.dtype).at[rows, idx].set(1.0)


def _quantize(v, bits: int, norm: str, z):
    """QSGD (Alistarh et al. 2017, Eq. (1) with ``s = 2^bits − 1``): ``‖v‖ sign(v_j) ℓ_j / s`` with
    ``ℓ_j`` the level of ``s |v_j| / ‖v‖`` rounded to nearest (``z is None``) or stochastically
    (up with probability its fractional part, given the uniforms ``z``: unbiased)."""
    s = 2.0 ** bits - 1.0
    n = row_norm(v, norm)
    safe = jnp.where(n > 0, n, 1.0)
    a = s * jnp.abs(v) / safe
    if z is None:
        level = jnp.round(a)
    else:
        low = jnp.floor(a)
        level = low + (z < a - low).astype(v.dtype)
    level = jax.lax.stop_gradient(level)
    return jnp.where(n > 0, jnp.sign(v) * n * level / s, 0.0)
