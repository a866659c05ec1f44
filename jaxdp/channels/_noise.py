"""Noise transforms: the mechanism of a channel (role ``"noise"``).

* :func:`gaussian`: ``v + σ_k z``, ``z ~ N(0, I)``, ``σ_k = σ r^k`` (absolute scale, geometric
  schedule with decay ``r``; ``r = 1`` is constant).
* :func:`laplace`: ``v + b_k z``, ``z`` standard Laplace (density ``exp(−|z|)/2``), ``b_k = b r^k``.

Each draws with its ``sampler`` option (``"lattice"``, the default, or ``"float"``:
:func:`jaxdp.privacy.noise_draws`) and declares its own privacy events
(:meth:`Noise.events`): a new noise law is one subclass here.
"""
from __future__ import annotations

import dataclasses
import warnings
from typing import ClassVar

import numpy as np

from jaxdp.channels._base import Transform, declare, per_row, positive
from jaxdp.privacy import PrivacyEvents, add_noise, noise_draws
from jaxdp.privacy.contract import concat, marking
from jaxdp.privacy.samplers import (
    LatticeClampWarning,
    check_sampler,
    clamp_warning,
    lattice_sensitivity,
)


@dataclasses.dataclass(frozen=True)
class Noise(Transform):
    """An additive noise ``v + s_k z`` with ``s_k = s r^k`` (declared fields: the scale, then
    its decay).

    Attributes:
      sampler: ``"lattice"`` (the default: private as floats) or ``"float"``.

    Class attributes:
      sensitivity_norm: the norm (2 or 1) its mechanism needs the sensitivity in.
    """

    sampler: str = "lattice"
    role: ClassVar[str] = "noise"
    random: ClassVar[bool] = True
    sensitivity_norm: ClassVar[int] = 2

    def __post_init__(self):
        super().__post_init__()
        want = tuple(self.field(d.suffix) for d in self.declared[:2])
        if len(want) < 2 or self.fields[:2] != want:
            raise ValueError(f"{self.kind} noise {self.name!r} must declare its scale then its "
                             f"decay first and hold both; declares {want}, holds {self.fields}")

    @property
    def lattice(self) -> bool:
        return self.sampler == "lattice"

    @property
    def law(self) -> str:
        """Its law (``"gaussian"`` or ``"laplace"``) for the samplers and the accountants."""
        return self.kind

    @property
    def scale_field(self) -> str:
        """Its first declared field, the scale ``s`` (ε decreases as it grows)."""
        return self.field(self.declared[0].suffix)

    @property
    def spec_name(self) -> str:
        return self.kind + ("" if self.lattice else ":sampler=float")

    def with_sampler(self, sampler: str) -> Noise:
        return dataclasses.replace(self, sampler=check_sampler(sampler))

    def draw(self, key, shape, dtype):
        return noise_draws(key, shape, dtype, law=self.law, sampler=self.sampler)

    def apply(self, v, p: dict, who, k, z=None):
        with marking(True):  # the channel's release: a marked site even inside its inner step
            return add_noise(v, self.scale(p, who, v, k), z, law=self.law, sampler=self.sampler)

    def scale(self, p: dict, who, like, k):
        """Its scale at step ``k``, ``s r^k`` (a scalar or ``(R, 1)``)."""
        return per_row(p[self.fields[0]], who, like) * per_row(p[self.fields[1]], who, like) ** k

    def message_bits(self, d: int, float_bits: int, bits_in: int) -> int:
        """A noisy message is dense: ``d`` floats."""
        return d * float_bits

    # -- accounting -------------------------------------------------------------------------------
    def log_scales(self, values: dict, n: int, steps: int):
        """``(N, steps)`` float64: ``log(s r^k)`` of each sender at steps ``0..steps−1``."""
        scale, decay = (np.broadcast_to(np.asarray(values[f], np.float64), (n,))
                        for f in self.fields[:2])
        return np.log(scale)[:, None] + np.arange(steps)[None, :] * np.log(decay)[:, None]

    def sensitivity(self, sens, d: int, log_scale, dtype):
        """The sensitivity the report declares for real-valued ``sens`` (``(N, 1)``) on messages
        of ``d`` coordinates: on the lattice ``γ_k ℤ^d``, ``γ_k = scale_k / R``, the rounding's
        (:func:`jaxdp.privacy.samplers.lattice_sensitivity`)."""
        if not self.lattice:
            return sens
        scale = np.exp(np.minimum(log_scale, 700.0))
        clamped = clamp_warning(scale, dtype, self.law)
        if clamped:
            warnings.warn(f"channel noise {self.fields[0]!r}: {clamped}", LatticeClampWarning,
                          stacklevel=2)
        return lattice_sensitivity(sens, d, scale, dtype, law=self.law)

    def events(self, sens, n: int, steps: int, log_scale, releases, what: str) -> PrivacyEvents:
        """The privacy events of ``releases`` ``(N,)`` independent copies per step of each
        sender's row, with sensitivity ``sens`` and ``log_scale`` ``(N, steps)``."""
        raise NotImplementedError


@dataclasses.dataclass(frozen=True)
class Gaussian(Noise):
    """``v + σ r^k z``, ``z ~ N(0, I)`` (:func:`gaussian`)."""

    kind: ClassVar[str] = "gaussian"
    declared: ClassVar = (declare("sigma", doc="σ, the Gaussian noise's standard deviation"),
                          declare("decay", doc="r, the noise's decay per step (σ r^k)"))

    @property
    def sums_exactly(self) -> bool:
        return not self.lattice

    def events(self, sens, n, steps, log_scale, releases, what) -> PrivacyEvents:
        """``m`` Gaussian releases of scale ``σ`` compose exactly as one of scale ``σ/√m``
        (μ-GDP composes as ``√(Σ μ²)``, Dong, Roth & Su 2022, Cor. 2)."""
        return PrivacyEvents.from_schedule(
            "gaussian", sens, None, n, steps, log_scale=log_scale - 0.5 * np.log(releases)[:, None],
            description=f"{what}, {releases.max()} release(s) per step (as one of σ/√m)",
            lattice=self.lattice)


@dataclasses.dataclass(frozen=True)
class Laplace(Noise):
    """``v + b r^k z``, ``z`` standard Laplace (:func:`laplace`)."""

    kind: ClassVar[str] = "laplace"
    declared: ClassVar = (declare("b", doc="b, the Laplace noise's scale"),
                          declare("decay", doc="r, the noise's decay per step (b r^k)"))
    sensitivity_norm: ClassVar[int] = 1

    def events(self, sens, n, steps, log_scale, releases, what) -> PrivacyEvents:
        """``m`` Laplace releases: ``m`` streams."""
        return concat([PrivacyEvents.from_schedule(
            "laplace", sens, None, n, steps,
            log_scale=np.where((releases > t)[:, None], log_scale, np.inf), description=what,
            lattice=self.lattice)
            for t in range(int(releases.max()))])


def gaussian(sigma: float = 1.0, *, decay: float = 1.0, name: str = "gauss",
             sampler: str = "lattice") -> Gaussian:
    """Add ``σ r^k z``, ``z ~ N(0, I)`` (fields ``f"{name}_sigma"`` > 0, ``f"{name}_decay"`` > 0).

    ``sampler="lattice"`` (default) releases ``γ(round(v/γ) + K)``, ``K = round(R·z)``,
    ``γ = σr^k/R`` (``R`` = :data:`~jaxdp.privacy.samplers.GAUSSIAN_RESOLUTION`): private as floats (:func:`jaxdp.privacy.samplers.lattice_release`);
    ``sampler="float"`` adds float draws (faster, aggregatable; the report's guarantee is ``inf``).

    Raises:
      ValueError: ``sigma <= 0``, ``decay <= 0`` or an unknown sampler.
    """
    return _noise(Gaussian, sigma, decay, name, sampler)


def laplace(b: float = 1.0, *, decay: float = 1.0, name: str = "laplace",
            sampler: str = "lattice") -> Laplace:
    """Add ``b r^k z``, ``z`` standard Laplace (fields ``f"{name}_b"``, ``f"{name}_decay"``, > 0).

    ``sampler="lattice"`` (default): the rounded Laplace on ``γℤ``, ``γ = br^k/65536``, private
    as floats; ``sampler="float"``: float draws (the report's guarantee is ``inf``).

    Raises:
      ValueError: ``b <= 0``, ``decay <= 0`` or an unknown sampler.
    """
    return _noise(Laplace, b, decay, name, sampler)


def _noise(cls: type[Noise], scale, decay, name: str, sampler: str) -> Noise:
    """A ``cls`` with its declared fields, the scale and its decay, both checked > 0, and its
    sampler checked."""
    label, decay_label = (d.suffix for d in cls.declared[:2])
    positive(f"{cls.kind} {label}", scale)
    positive(f"{cls.kind} {decay_label}", decay)
    return cls.build(name, {label: scale, decay_label: decay}, sampler=check_sampler(sampler))
