"""Calibrate a run to a target ε: solve for the Params field that scales the noise.

The guarantee of a private algorithm (:meth:`jaxdp.algorithms.Algorithm.privacy`, its
``epsilon_max``) decreases as the noise grows. :func:`calibrate_params` finds the value of the
algorithm's :attr:`~jaxdp.algorithms.Algorithm.noise_field` at which ``epsilon_max`` equals the
target and returns the Params with it set: a bracket walked out from the field's value (by decades
where ε is infinite, by the guess ε ∝ 1/value where it is finite), then regula falsi (the Illinois
variant) on ``log ε`` against ``log field`` — ε of a noise scale is close to a power law, so a
handful of probes reach ``rtol`` (the README's channel example: 9 reports instead of the 26 of a
bisection) — with a bisection step whenever the bracket fails to halve. Each probe is one whole
report; ``on_probe`` sees every one (the command line prints them).
"""
from __future__ import annotations

import functools
import math
import warnings

import numpy as np

_LOW, _HIGH = 1e-6, 1e8  # the noise-field values searched (a scale: ε is monotone in it)
# The largest relative jump of ε across the target accepted as the accountant's resolution: a PLD
# on a grid is a step function of the noise scale (steps ~1e-5 relative on the 1e-5 grid), so an
# ε within ``rtol`` may not exist; a jump above this is a capped guarantee (the sampler's limit).
_RESOLUTION = 1e-3


def calibrate_params(algorithm, problem, network, params, steps: int, *, epsilon: float,
                     delta: float, field: str | None = None, rtol: float = 1e-6,
                     on_probe=None):
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
      on_probe: ``None`` or ``fn(value, epsilon)``, called after each report computed (the
        noise scale probed and its ``epsilon_max``): progress for a slow accountant.

    Returns:
      ``params`` with ``field`` set (a scalar) so that ``epsilon_max`` is within ``rtol`` of
      ``epsilon`` (not above it) — or, where the accountant's ε steps over the target (a PLD
      grid: steps of ~1e-5 relative), the value just above the step, whose ε is below the target
      by less than 0.1 %.

    Raises:
      ValueError: a bad ``epsilon``; a network whose agent count differs from the problem's; an
        algorithm without a noise field; a field whose ε does not decrease as it grows; or ε
        out of the range reachable in ``[1e-6, 1e8]`` (named).
    """
    name = algorithm.name
    if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float, np.floating, np.integer)):
        raise ValueError(f"epsilon must be a number; got {epsilon!r}")
    if not (math.isfinite(epsilon) and epsilon > 0):
        raise ValueError(f"epsilon must be finite and > 0; got {epsilon!r}")
    if network.n_agents != problem.n_agents:
        raise ValueError(f"{name}: the network has {network.n_agents} agents but the problem has "
                         f"data for {problem.n_agents}; build both with the same count")
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
        epsilon_max = _report_epsilon(value)
        if on_probe is not None:
            on_probe(value, epsilon_max)
        return epsilon_max

    def _report_epsilon(value: float) -> float:
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
    lo, hi, eps_hi = _refine(eps_at, lo, hi, epsilon, rtol)
    if epsilon - eps_hi > max(rtol, _RESOLUTION) * epsilon:  # ε jumps over the target: capped
        raise ValueError(
            f"{name}: ε = {epsilon:g} is unreachable by {field} at δ = {delta:g} after {steps} "
            f"steps: reachable ε lies in [{eps_at(_HIGH):.4g}, {eps_hi:.4g}] (the guarantee "
            f"jumps from {eps_hi:.4g} to {eps_at(lo):.4g} as {field} falls below {hi:.6g}; see "
            "the report's reason there)")
    return params.replace(**{field: as_field(hi)})


def _refine(eps_at, lo: float, hi: float, epsilon: float, rtol: float):
    """Shrink ``eps(lo) > epsilon >= eps(hi)`` until ``eps(hi)`` is within ``rtol`` of
    ``epsilon``, or the bracket holds a step of ε (:func:`_a_step`), or it is ``rtol/4`` wide:
    Illinois regula
    falsi on ``g = log(ε/target)`` over ``log value``, a bisection step (in log) where ``eps(lo)`` is infinite or the bracket
    did not halve over the last two steps. Returns ``(lo, hi, eps(hi))``."""
    aim = epsilon * (1 - rtol / 4)  # aim just below the target: the iterates land feasible
    g = lambda e: math.log(e / aim) if 0 < e < math.inf else math.nan  # noqa: E731
    g_lo, g_hi = g(eps_at(lo)), g(eps_at(hi))
    eps_hi, bisect, last = eps_at(hi), False, 0
    widths = [math.log(hi / lo)]
    for _ in range(200):
        if abs(eps_hi - epsilon) <= rtol * epsilon or hi / lo - 1 < rtol / 4 or \
                _a_step(eps_at(lo), eps_hi, lo, hi):
            break
        t_lo, t_hi = math.log(lo), math.log(hi)
        secant = math.isfinite(g_lo) and math.isfinite(g_hi) and g_lo > g_hi and not bisect
        t = t_lo + (t_hi - t_lo) * g_lo / (g_lo - g_hi) if secant else 0.5 * (t_lo + t_hi)
        mid = math.exp(min(max(t, t_lo), t_hi))
        if not lo < mid < hi:
            mid = math.sqrt(lo * hi)
        eps_mid = eps_at(mid)
        if eps_mid > epsilon:
            lo, g_lo = mid, g(eps_mid)
            g_hi = g_hi / 2 if last == -1 else g_hi  # Illinois: the same end moved twice
            last = -1
        else:
            hi, eps_hi, g_hi = mid, eps_mid, g(eps_mid)
            g_lo = g_lo / 2 if last == 1 else g_lo
            last = 1
        widths.append(math.log(hi / lo))
        bisect = len(widths) > 2 and widths[-1] > 0.5 * widths[-3]
    return lo, hi, eps_hi


def _a_step(eps_lo: float, eps_hi: float, lo: float, hi: float) -> bool:
    """Whether ``eps(lo) > eps(hi)`` across ``[lo, hi]`` is a step of the accountant's ε rather
    than its slope: a gap below :data:`_RESOLUTION` (relative) steeper than slope −4 in log–log
    (ε of a Gaussian or Laplace noise scale falls with slope −1 to −2)."""
    gap = math.log(eps_lo / eps_hi) if 0 < eps_hi < eps_lo < math.inf else math.inf
    return gap < _RESOLUTION and gap > 4 * math.log(hi / lo)


def _bracket(eps_at, start: float, epsilon: float, name, field, delta, steps):
    """``(lo, hi, eps(hi))`` with ``eps(lo) > epsilon >= eps(hi)``: out from ``start`` within
    ``[1e-6, 1e8]`` by decades, or by :func:`_stride`'s guess where ε is finite; a clear error
    when ε is unreachable or does not decrease."""
    start = min(max(start, _LOW), _HIGH) if np.isfinite(start) and start > 0 else 1.0
    eps_start = eps_at(start)
    value, eps_value, step = start, eps_start, 10.0 if eps_start > epsilon else 0.1
    while (eps_value > epsilon) == (step > 1):  # walk until the target is crossed
        nxt = min(max(value * _stride(step, eps_value, epsilon), _LOW), _HIGH)
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


def _stride(step: float, eps_value: float, epsilon: float) -> float:
    """The factor to the next value of the bracket walk: a decade (``step``) where ε is
    infinite; else the guess ``ε ∝ 1/value`` (Gaussian and Laplace noise at small ε), overshot by
    25 % so that it crosses the target, kept between 1.25x and a decade."""
    if not 0 < eps_value < math.inf:
        return step
    guess = min(max((eps_value / epsilon) ** (1 if step > 1 else -1) * 1.25, 1.25), 10.0)
    return guess if step > 1 else 1 / guess


def _unreachable(eps_at, epsilon, name, field, delta, steps):
    eps_min, eps_max = eps_at(_HIGH), eps_at(_LOW)
    if not eps_min < eps_max:
        raise ValueError(f"{name}: ε does not decrease as {field} grows (ε = {eps_max:.4g} at "
                         f"{field}={_LOW:g}, {eps_min:.4g} at {field}={_HIGH:g}); cannot calibrate")
    raise ValueError(f"{name}: ε = {epsilon:g} is unreachable by {field} in [{_LOW:g}, {_HIGH:g}] "
                     f"at δ = {delta:g} after {steps} steps: reachable ε lies in "
                     f"[{eps_min:.4g}, {eps_max:.4g}]")
