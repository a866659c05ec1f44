"""Calibrate a run to a target ε: solve for the Params field that scales the noise.

The guarantee of a private algorithm (:meth:`jaxdp.algorithms.Algorithm.privacy`, its
``epsilon_max``) decreases as the noise grows. :func:`calibrate_params` finds the value of the
algorithm's :attr:`~jaxdp.algorithms.Algorithm.noise_field` at which ``epsilon_max`` equals the
target, by bisection on the logarithm of that field, and returns the Params with it set.
"""
from __future__ import annotations

import functools
import math
import warnings

import numpy as np

_LOW, _HIGH = 1e-6, 1e8  # the noise-field values searched (a scale: ε is monotone in it)


def calibrate_params(algorithm, problem, network, params, steps: int, *, epsilon: float,
                     delta: float, field: str | None = None, rtol: float = 1e-6):
    """Params whose guarantee after ``steps`` steps is ``epsilon`` (max over agents) at ``delta``.

    Args:
      algorithm: a private :class:`~jaxdp.algorithms.Algorithm`.
      problem, network, params: the run; every field but ``field`` is kept.
      steps: the number of steps run.
      epsilon: the target ε, ``> 0`` and finite.
      delta: the δ of the guarantee, in ``(0, 1)``.
      field: the Params field to solve for; ``None`` uses ``algorithm.noise_field``. A field
        named ``log_*`` holds the natural log of the noise scale and is solved for as such.
      rtol: relative tolerance on ε.

    Returns:
      ``params`` with ``field`` set (a scalar) so that ``epsilon_max`` is within ``rtol`` of
      ``epsilon`` (not above it).

    Raises:
      ValueError: a bad ``epsilon``; an algorithm without a noise field; a field whose ε does not
        decrease as it grows; or ε out of the range reachable in ``[1e-6, 1e8]`` (named).
    """
    name = algorithm.name
    if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float, np.floating, np.integer)):
        raise ValueError(f"epsilon must be a number; got {epsilon!r}")
    if not (math.isfinite(epsilon) and epsilon > 0):
        raise ValueError(f"epsilon must be finite and > 0; got {epsilon!r}")
    field = field or algorithm.noise_field
    if field is None:
        raise ValueError(f"{name} does not support --epsilon: it declares no noise_field (the "
                         "Params field that scales its noise)")
    if field not in params.keys():
        raise ValueError(f"{name}: {field!r} is not a field of {type(params).__name__}; "
                         f"fields: {', '.join(sorted(params.keys()))}")

    logged = field.startswith("log_")
    as_field = math.log if logged else float  # the noise scale → the field's value

    @functools.lru_cache(maxsize=None)
    def eps_at(value: float) -> float:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # assumption warnings: reported once by the caller
            report = algorithm.privacy(problem, network,
                                       params.replace(**{field: as_field(value)}),
                                       steps, delta=delta)
        if report is None:
            raise ValueError(f"{name} does not support --epsilon: it is not private "
                             "(privacy() returns None)")
        return report.epsilon_max

    start = float(np.max(params[field]))
    lo, hi, eps_hi = _bracket(eps_at, math.exp(start) if logged else start, epsilon, name,
                              field, delta, steps)
    for _ in range(200):  # bisection in log space; keep eps(hi) <= epsilon
        mid = math.sqrt(lo * hi)
        eps_mid = eps_at(mid)
        if eps_mid > epsilon:
            lo = mid
        else:
            hi, eps_hi = mid, eps_mid
        if abs(eps_hi - epsilon) <= rtol * epsilon or hi / lo - 1 < 1e-12:
            break
    if abs(eps_hi - epsilon) > rtol * epsilon:  # ε jumps over the target (a capped guarantee)
        raise ValueError(
            f"{name}: ε = {epsilon:g} is unreachable by {field} at δ = {delta:g} after {steps} "
            f"steps: reachable ε lies in [{eps_at(_HIGH):.4g}, {eps_hi:.4g}] (the guarantee "
            f"jumps from {eps_hi:.4g} to {eps_at(lo):.4g} as {field} falls below {hi:.6g}; see "
            "the report's reason there)")
    return params.replace(**{field: as_field(hi)})


def _bracket(eps_at, start: float, epsilon: float, name, field, delta, steps):
    """``(lo, hi, eps(hi))`` with ``eps(lo) > epsilon >= eps(hi)``: decades out from ``start``
    within ``[1e-6, 1e8]``; a clear error when ε is unreachable or does not decrease."""
    start = min(max(start, _LOW), _HIGH) if np.isfinite(start) and start > 0 else 1.0
    eps_start = eps_at(start)
    value, eps_value, step = start, eps_start, 10.0 if eps_start > epsilon else 0.1
    while (eps_value > epsilon) == (step > 1):  # walk until the target is crossed
        nxt = min(max(value * step, _LOW), _HIGH)
        if nxt == value:
            _unreachable(eps_at, epsilon, name, field, delta, steps)
        previous, value, eps_value = value, nxt, eps_at(nxt)
        if step > 1 and eps_value > eps_at(previous) * (1 + 1e-9) or \
                step < 1 and eps_value < eps_at(previous) * (1 - 1e-9):
            break  # not decreasing: reported below
    lo, hi = (previous, value) if step > 1 else (value, previous)
    eps_lo, eps_hi = eps_at(lo), eps_at(hi)
    if not eps_hi < eps_lo:
        raise ValueError(f"{name}: ε does not decrease as {field} grows (ε = {eps_lo:.4g} at "
                         f"{field}={lo:g}, {eps_hi:.4g} at {field}={hi:g}); cannot calibrate")
    if not eps_hi <= epsilon < eps_lo:
        _unreachable(eps_at, epsilon, name, field, delta, steps)
    return lo, hi, eps_hi


def _unreachable(eps_at, epsilon, name, field, delta, steps):
    eps_min, eps_max = eps_at(_HIGH), eps_at(_LOW)
    if not eps_min < eps_max:
        raise ValueError(f"{name}: ε does not decrease as {field} grows (ε = {eps_max:.4g} at "
                         f"{field}={_LOW:g}, {eps_min:.4g} at {field}={_HIGH:g}); cannot calibrate")
    raise ValueError(f"{name}: ε = {epsilon:g} is unreachable by {field} in [{_LOW:g}, {_HIGH:g}] "
                     f"at δ = {delta:g} after {steps} steps: reachable ε lies in "
                     f"[{eps_min:.4g}, {eps_max:.4g}]")
