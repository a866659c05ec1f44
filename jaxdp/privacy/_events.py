"""Privacy events: what each agent releases at each step, as data the accountants read.

An algorithm declares, per agent ``i`` and step ``k``, one release through a Laplace or Gaussian
mechanism with a sensitivity ``Δ[i, k]`` and a noise scale ``scale[i, k]``, derived analytically
from its params. Every accountant in :mod:`jaxdp.privacy` reads this declaration.

Conventions:

* ``sensitivity`` is in the mechanism's own norm: the **ℓ1** sensitivity for Laplace (a
  per-coordinate bound times ``d``, or an ℓ2 bound times ``√d`` as paper 000 does, is the caller's
  business), the **ℓ2** sensitivity for Gaussian. ``Δ = 0`` means the release leaks nothing about
  the agent (e.g. a message that does not depend on its data yet).
* ``scale`` is the Laplace ``b`` (density ``exp(-|x|/b)/(2b)``) or the Gaussian ``σ``; ``+inf``
  means nothing is released. For scales that underflow float64 (``u·r^k`` with ``r = 0.1``,
  ``k = 500``), pass ``log_scale`` instead: the closed forms then stay exact in log space.
* ``sampling_rate`` is the probability ``q`` that a given record enters the release (``q = 1``: no
  subsampling); ``sampling`` says how the batch is drawn, which fixes the amplification the
  accountants may claim: ``"poisson"`` (each record independently with probability ``q``; the
  sensitivity is for one record added or removed) or ``"without_replacement"`` (a fixed-size batch
  of ``b = q·m`` of the agent's ``m = dataset_size`` records; the sensitivity is for one record
  *replaced*, e.g. ``2C/b`` for a per-sample clipped mean of b: an added record displaces another)
  or ``"poisson_replace_one"`` (Poisson batches, one record *replaced*; Gaussian only). Under
  ``"poisson_replace_one"`` the sensitivity is the one of ``"poisson"``: the largest norm ``s`` of
  one record's contribution ``f(S ∪ {x}) − f(S)`` (``C/b`` for a per-sample clipped sum over b).
  The replaced record is in the batch with probability ``q`` in both worlds, its contribution ``a``
  or ``a'`` (norms ≤ s, at most ``2s`` apart: :attr:`PrivacyEvents.log_pair_ratio`), and the
  PLD accountant charges dp-accounting's ``REPLACE_ONE`` pair of sensitivity ``s``
  (:func:`~jaxdp.privacy.pld_epsilon`).
  ``"poisson_replace_bounded"`` is Poisson batches under replace-one where the sensitivity ``Δ``
  bounds *every* distance among the three releases given the rest ``S`` of the batch —
  ``f(S)``, ``f(S ∪ {x})`` and ``f(S ∪ {x'})`` — as for a clip applied after the batch is summed
  (LT-ADMM-DP's soft clip of the mean: all three lie in the ζ-ball, ``Δ = 2ζ``; Gaussian only).
  Its releases are ``(1 − q)C + qA`` against ``(1 − q)C + qA'`` with ``A, A', C`` pairwise within
  ``Δ``: the structure of sampling without replacement under substitution, dominated by the same
  pairs (:func:`~jaxdp.privacy.pld_epsilon`), and charged ``Δ``, not ``2Δ``, unamplified.
* Several releases per step (paper 000 releases ``y`` and ``z``) are several *streams*:
  :func:`concat` returns a :class:`PrivacyEvents` whose top-level fields are the first stream and
  whose ``extra_streams`` hold the others. Accountants always iterate :attr:`PrivacyEvents.streams`.

``PrivacyEvents`` is a host-side value (numpy float64), not a pytree: it is validated once, in
``__post_init__``, where values are concrete (the trap of validating in ``__post_init__`` of a pytree, which reruns on tracers, does not
apply to it).
"""
from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

MECHANISMS = ("laplace", "gaussian")
SAMPLINGS = ("poisson", "without_replacement", "poisson_replace_one", "poisson_replace_bounded")
REPLACE_ONE_POISSON = "poisson_replace_one"
REPLACE_BOUNDED_POISSON = "poisson_replace_bounded"
"""Poisson replace-one whose Δ bounds the distance of the two worlds' releases too (module)."""


def _first_bad(name: str, values: np.ndarray, bad: np.ndarray, requirement: str) -> None:
    """Raise a ValueError naming the first ``(agent, step)`` where ``bad`` holds."""
    if bad.any():
        i, k = np.argwhere(bad)[0]
        raise ValueError(f"PrivacyEvents.{name} must be {requirement}; "
                         f"got {float(values[i, k])!r} at agent {i}, step {k}")


def _as_grid(name: str, value, shape: tuple[int, int]) -> np.ndarray:
    """A float64 ``(N, K)`` array from a value that numpy-broadcasts to ``shape``."""
    value = np.asarray(value, dtype=np.float64)
    try:
        return np.array(np.broadcast_to(value, shape))
    except ValueError:
        raise ValueError(
            f"PrivacyEvents.{name} has shape {value.shape}; expected {shape} (N agents, K steps)"
        ) from None


def _schedule(name: str, value, n_agents: int, steps: int) -> np.ndarray:
    """Broadcast a scalar, ``(N,)``, ``(K,)``, ``(N, 1)``, ``(1, K)`` or ``(N, K)`` value."""
    value = np.asarray(value, dtype=np.float64)
    if value.ndim == 1:
        if n_agents == steps and value.shape[0] == steps:
            raise ValueError(
                f"{name} of shape {value.shape} is ambiguous when n_agents == steps == {steps}; "
                "pass it as (N, 1) for per-agent values or (1, K) for per-step values"
            )
        if value.shape[0] == n_agents:
            value = value[:, None]
        elif value.shape[0] == steps:
            value = value[None, :]
        else:
            raise ValueError(
                f"{name} has shape {value.shape}; a 1-D schedule must have length N={n_agents} "
                f"(per agent) or K={steps} (per step)"
            )
    if value.ndim > 2:
        raise ValueError(f"{name} must have at most 2 dimensions (N, K); got shape {value.shape}")
    return _as_grid(name, value, (n_agents, steps))


@dataclasses.dataclass(frozen=True, eq=False)
class PrivacyEvents:
    """Per-agent, per-step releases through one mechanism (plus optional further streams).

    Attributes:
      mechanism: ``"laplace"`` or ``"gaussian"``.
      sensitivity: ``(N, K)`` sensitivity ``Δ ≥ 0`` in the mechanism's norm (ℓ1 for Laplace, ℓ2 for
        Gaussian).
      scale: ``(N, K)`` noise scale (Laplace ``b`` or Gaussian ``σ``), ``> 0``, ``+inf`` allowed.
        May be ``None`` when ``log_scale`` is given; it is then ``exp(log_scale)``.
      sampling_rate: the probability ``q`` in ``[0, 1]`` that a record enters a release; a scalar or
        ``(N, K)``, stored as ``(N, K)``.
      sampling: ``"poisson"`` (default), ``"without_replacement"``, ``"poisson_replace_one"`` or
        ``"poisson_replace_bounded"`` (:data:`SAMPLINGS`; see the module).
      dataset_size: ``(N,)`` int ``m_i``, each agent's number of records; required for
        ``"without_replacement"``, where ``q·m_i`` must be the (integer) batch size.
      description: what is released, for reports.
      log_scale: ``(N, K)`` natural log of ``scale``; derived from ``scale`` when ``None``. Give it
        directly when the scale underflows float64.
      extra_streams: further single-stream ``PrivacyEvents`` released at the same steps (see
        :func:`concat`).
      lattice: the release is the lattice mechanism
        (:func:`~jaxdp.privacy.samplers.lattice_release`): the continuous Gaussian or Laplace
        mechanism on the lattice-rounded value, its output rounded to the lattice (a
        post-processing), and ``sensitivity`` already bounds the rounded values' distance (see
        :func:`~jaxdp.privacy.samplers.lattice_sensitivity`). Every accountant applies; a report
        adds the sampler's distance to its ideal law to δ.

    Raises:
      ValueError: unknown mechanism, shapes that are not ``(N, K)`` or do not match, a negative or
        non-finite sensitivity, a non-positive or NaN scale, a sampling rate outside ``[0, 1]``.
    """

    mechanism: str
    sensitivity: np.ndarray
    scale: np.ndarray | None
    sampling_rate: np.ndarray | float = 1.0
    description: str = ""
    log_scale: np.ndarray | None = None
    extra_streams: tuple[PrivacyEvents, ...] = ()
    sampling: str = "poisson"
    dataset_size: np.ndarray | None = None
    lattice: bool = False

    def __post_init__(self):
        if self.mechanism not in MECHANISMS:
            raise ValueError(
                f"PrivacyEvents.mechanism must be one of {MECHANISMS}; got {self.mechanism!r}"
            )
        sensitivity = np.asarray(self.sensitivity, dtype=np.float64)
        if sensitivity.ndim != 2:
            raise ValueError(
                f"PrivacyEvents.sensitivity must be (N, K); got shape {sensitivity.shape} "
                "(use PrivacyEvents.from_schedule to broadcast scalars and 1-D schedules)"
            )
        shape = sensitivity.shape
        _first_bad("sensitivity", sensitivity, ~np.isfinite(sensitivity) | (sensitivity < 0),
                   "finite and >= 0")
        scale, log_scale = self._validated_scales(shape)
        sampling_rate = _as_grid("sampling_rate", self.sampling_rate, shape)
        _first_bad("sampling_rate", sampling_rate, ~((sampling_rate >= 0) & (sampling_rate <= 1)),
                   "in [0, 1]")
        dataset_size = self._validated_sampling(sampling_rate)
        for extra in self.extra_streams:
            if extra.extra_streams or (extra.n_agents, extra.steps) != shape:
                raise ValueError(
                    f"extra_streams must be single streams of shape {shape}; got one of shape "
                    f"({extra.n_agents}, {extra.steps}) with {len(extra.extra_streams)} extra "
                    "streams"
                )
        set_ = object.__setattr__
        set_(self, "sensitivity", sensitivity)
        set_(self, "log_scale", log_scale)
        set_(self, "scale", scale)
        set_(self, "sampling_rate", sampling_rate)
        set_(self, "dataset_size", dataset_size)
        set_(self, "extra_streams", tuple(self.extra_streams))

    def _validated_sampling(self, sampling_rate: np.ndarray) -> np.ndarray | None:
        """``dataset_size`` as ``(N,)`` int64 after checking it against ``sampling``."""
        if self.sampling not in SAMPLINGS:
            raise ValueError(f"PrivacyEvents.sampling must be one of {SAMPLINGS}; "
                             f"got {self.sampling!r}")
        if self.sampling in (REPLACE_ONE_POISSON, REPLACE_BOUNDED_POISSON) and (
                self.mechanism != "gaussian"):
            raise ValueError(f"PrivacyEvents with sampling={self.sampling!r} must be Gaussian "
                             f"(the pairs accounted are Gaussian); got "
                             f"mechanism={self.mechanism!r}")
        if self.sampling != "without_replacement":
            if self.dataset_size is not None:
                raise ValueError("PrivacyEvents.dataset_size is for sampling='without_replacement'"
                                 f"; got one with sampling={self.sampling!r}")
            return None
        if self.dataset_size is None:
            raise ValueError("PrivacyEvents with sampling='without_replacement' needs "
                             "dataset_size (each agent's number of records m_i)")
        size = np.asarray(self.dataset_size)
        n = sampling_rate.shape[0]
        if size.shape not in ((), (n,)) or not np.all(size == np.round(size)) or np.any(size < 1):
            raise ValueError(f"PrivacyEvents.dataset_size must be integers >= 1, a scalar or "
                             f"({n},); got {self.dataset_size!r}")
        size = np.broadcast_to(size, (n,)).astype(np.int64)
        batch = sampling_rate * size[:, None]
        _first_bad("sampling_rate", sampling_rate, np.abs(batch - np.round(batch)) > 1e-9 * size[
            :, None], "b/m_i with an integer batch size b for sampling='without_replacement'")
        return size

    def batch_sizes(self) -> np.ndarray:
        """``(N, K)`` int batch sizes ``b = q·m_i`` of a ``"without_replacement"`` stream."""
        if self.sampling != "without_replacement":
            raise ValueError(f"batch_sizes is defined for sampling='without_replacement'; this "
                             f"stream is {self.sampling!r}")
        return np.round(self.sampling_rate * self.dataset_size[:, None]).astype(np.int64)

    def _validated_scales(self, shape: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
        """``(scale, log_scale)`` as ``(N, K)`` arrays, from either or both (which must agree)."""
        scale = None if self.scale is None else _as_grid("scale", self.scale, shape)
        if self.log_scale is None:
            if scale is None:
                raise ValueError("PrivacyEvents needs scale or log_scale; got neither")
            _first_bad("scale", scale, ~(scale > 0),
                       "> 0 for a private release (σ or b = 0 releases the value in the clear: "
                       "ε = inf; pass log_scale when a positive scale underflows float64)")
            return scale, np.log(scale)
        log_scale = _as_grid("log_scale", self.log_scale, shape)
        _first_bad("log_scale", log_scale, np.isnan(log_scale) | (log_scale == -np.inf),
                   "> -inf (scale > 0)")
        derived = np.exp(log_scale)
        if scale is None:
            return derived, log_scale
        _first_bad("scale", scale, ~np.isclose(scale, derived, rtol=1e-12, atol=0),
                   "exp(log_scale) when both are given")
        return scale, log_scale

    @classmethod
    def from_schedule(cls, mechanism: str, sensitivity, scale, n_agents: int, steps: int, *,
                      sampling_rate=1.0, description: str = "", log_scale=None,
                      sampling: str = "poisson", dataset_size=None,
                      lattice: bool = False) -> PrivacyEvents:
        """Build events from scalars or schedules broadcast to ``(N, K)``.

        Each of ``sensitivity``, ``scale``, ``log_scale`` and ``sampling_rate`` may be a scalar, an
        ``(N,)`` per-agent value, a ``(K,)`` per-step value, ``(N, 1)``, ``(1, K)`` or ``(N, K)``.
        When ``N == K`` a 1-D value is ambiguous and must be given as ``(N, 1)`` or ``(1, K)``.

        Args:
          mechanism: ``"laplace"`` or ``"gaussian"``.
          sensitivity: ``Δ`` in the mechanism's norm (ℓ1 Laplace, ℓ2 Gaussian).
          scale: Laplace ``b`` or Gaussian ``σ``; ``None`` when ``log_scale`` is given.
          n_agents: ``N``.
          steps: ``K``, the number of releases per agent.
          sampling_rate: the probability q that a record enters a release.
          description: what is released.
          log_scale: natural log of the scale, for scales that underflow float64.
          sampling: one of :data:`SAMPLINGS` (see the class).
          dataset_size: ``(N,)`` or scalar ``m_i`` for ``"without_replacement"``.
          lattice: the discrete (lattice) mechanism (see the class).

        Returns:
          A single-stream :class:`PrivacyEvents`.

        Raises:
          ValueError: ambiguous or mismatched shapes, or invalid values (see the class).

        Example:
          >>> ev = PrivacyEvents.from_schedule("laplace", 1.0, 2.0 * 0.9 ** np.arange(5), 3, 5)
          >>> ev.scale.shape
          (3, 5)
        """
        if (scale is None) == (log_scale is None):
            raise ValueError("from_schedule needs exactly one of scale and log_scale")
        if n_agents < 1 or steps < 1:
            raise ValueError(f"n_agents and steps must be >= 1; got n_agents={n_agents}, "
                             f"steps={steps}")
        def grid(name, v):
            return None if v is None else _schedule(name, v, n_agents, steps)

        return cls(mechanism=mechanism, sensitivity=grid("sensitivity", sensitivity),
                   scale=grid("scale", scale), sampling_rate=grid("sampling_rate", sampling_rate),
                   description=description, log_scale=grid("log_scale", log_scale),
                   sampling=sampling, dataset_size=dataset_size, lattice=lattice)

    @property
    def lattice_streams(self) -> tuple[PrivacyEvents, ...]:
        """The streams released by the lattice mechanism."""
        return tuple(s for s in self.streams if s.lattice)

    @property
    def n_agents(self) -> int:
        """``N``."""
        return self.sensitivity.shape[0]

    @property
    def steps(self) -> int:
        """``K``."""
        return self.sensitivity.shape[1]

    @property
    def streams(self) -> tuple[PrivacyEvents, ...]:
        """Every stream as a single-stream ``PrivacyEvents``: this one, then ``extra_streams``."""
        return (dataclasses.replace(self, extra_streams=()), *self.extra_streams)

    @property
    def log_ratio(self) -> np.ndarray:
        """``(N, K)`` ``log(Δ / scale)`` of this (first) stream; ``-inf`` where ``Δ = 0``.

        ``Δ/b`` is the per-step pure-DP ε of a Laplace release; ``Δ/σ`` is the ``μ`` of a Gaussian
        release (the inverse of dp-accounting's noise multiplier).
        """
        with np.errstate(divide="ignore"):
            return np.log(self.sensitivity) - self.log_scale

    @property
    def log_pair_ratio(self) -> np.ndarray:
        """``(N, K)`` log of the largest distance between the two worlds' releases given the
        batch, over ``scale``: :attr:`log_ratio`, plus ``log 2`` under ``"poisson_replace_one"``
        (two contributions of norm ≤ Δ each, e.g. antipodal). What an accountant that claims no
        subsampling amplification (or a release with ``q = 1``) charges."""
        twice = np.log(2.0) if self.sampling == REPLACE_ONE_POISSON else 0.0
        return self.log_ratio + twice


def concat(events_list: Sequence[PrivacyEvents], description: str | None = None) -> PrivacyEvents:
    """Combine several releases per step into one multi-stream :class:`PrivacyEvents`.

    The result's top-level fields are the first stream; all other streams (flattened) go to
    ``extra_streams``. All accountants compose every stream at every step.

    Args:
      events_list: events of equal ``(N, K)``.
      description: the combined description; default joins the parts with ``" + "``.

    Returns:
      A :class:`PrivacyEvents` whose :attr:`~PrivacyEvents.streams` are all the inputs' streams.

    Raises:
      ValueError: an empty list or mismatched ``(N, K)``.
    """
    streams = [s for events in events_list for s in events.streams]
    if not streams:
        raise ValueError("concat needs at least one PrivacyEvents; got an empty list")
    if description is None:
        description = " + ".join(s.description for s in streams if s.description)
    first = dataclasses.replace(streams[0], description=description)
    return dataclasses.replace(first, extra_streams=tuple(streams[1:]))
