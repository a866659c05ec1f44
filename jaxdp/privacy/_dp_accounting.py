"""Tight accountants for :class:`PrivacyEvents` through Google's ``dp-accounting`` (host, numpy).

Each agent's releases become a ``ComposedDpEvent`` of ``LaplaceDpEvent`` / ``GaussianDpEvent``
(wrapped in ``PoissonSampledDpEvent`` when ``sampling_rate < 1`` and ``sampling == "poisson"``, in
``SampledWithoutReplacementDpEvent`` when ``sampling == "without_replacement"``), composed by a
``PLDAccountant``
(privacy loss distributions; Meiser & Mohammadi 2018, Koskela et al. 2020, Doroshenko et al.
2022) or an ``RdpAccountant`` (Mironov 2017). dp-accounting's ``noise_multiplier`` is the noise
scale relative to a sensitivity of 1 (ℓ1 for Laplace, ℓ2 for Gaussian), so a release is passed with
``noise_multiplier = scale / Δ``. The neighbouring relation only matters for subsampled releases:
Poisson sampling is accounted under add-or-remove-one, fixed-size sampling without replacement under
replace-one (dp-accounting's ``RdpAccountant`` only: Wang, Balle & Kasiviswanathan 2019, Thm 27;
its PLD accountant has no such event, and :func:`pld_epsilon` rejects those events). The two schemes
cannot be mixed in one accountant.

Work is shared where it is exact: agents with identical schedules are accounted once; releases with
equal ``(scale/Δ, q)`` inside a stretch between two reported steps are one ``SelfComposedDpEvent``
(equal up to 1e-10 relative, grouped at the larger ``Δ/scale``); and full-batch Gaussian releases
there are merged into one Gaussian with ``μ = √(Σ μ_t²)``, ``μ_t = Δ_t/σ_t`` — exact, because
Gaussian mechanisms compose into a Gaussian mechanism (Dong, Roth & Su 2019, Cor. 3.3).
"""
from __future__ import annotations

import contextlib
import logging
import warnings
from collections.abc import Callable, Sequence

import numpy as np

from jaxdp.privacy._closed_form import DEFAULT_ORDERS, closed_form_curve
from jaxdp.privacy._events import PrivacyEvents

_MAX_LOG_MU = 350.0
_Row = list[tuple[str, np.ndarray, np.ndarray, int]]  # per stream: (mechanism, log(Δ/scale), q,
#                                                       m_i for sampling without replacement or 0)


def check_delta(delta: float) -> float:
    """Return ``delta`` as a float after checking ``0 < δ < 1``."""
    if not 0.0 < delta < 1.0:
        raise ValueError(f"delta must be in (0, 1); got {delta!r}")
    return float(delta)


def check_steps(at_steps: Sequence[int] | None, steps: int) -> np.ndarray:
    """Step counts ``1 ≤ s ≤ K`` to report ε at, strictly increasing; ``None`` gives ``[K]``."""
    if at_steps is None:
        return np.array([steps])
    at = np.asarray(at_steps)
    if at.ndim != 1 or at.size == 0 or not np.issubdtype(at.dtype, np.integer):
        raise ValueError(f"at_steps must be a non-empty 1-D list of ints; got {at_steps!r}")
    if at[0] < 1 or at[-1] > steps or np.any(np.diff(at) <= 0):
        raise ValueError(
            f"at_steps must be strictly increasing step counts in [1, {steps}]; got {at.tolist()}"
        )
    return at


def _sizes(stream: PrivacyEvents) -> np.ndarray:
    """``(N,)`` dataset sizes of a without-replacement stream, zeros for a Poisson one."""
    if stream.sampling == "without_replacement":
        return stream.dataset_size.astype(np.float64)
    return np.zeros(stream.n_agents)


def _subsampled(stream: PrivacyEvents) -> bool:
    """Whether some release of ``stream`` is subsampled (``0 < q < 1`` with ``Δ > 0``)."""
    return bool(np.any((stream.sampling_rate < 1) & (stream.sampling_rate > 0)
                       & (stream.sensitivity > 0)))


def relation_of(events: PrivacyEvents) -> str:
    """The dp-accounting relation the subsampled streams of ``events`` need: ``"add_remove"``
    (Poisson, or no subsampling) or ``"replace_one"`` (sampling without replacement).

    Raises:
      ValueError: subsampled streams of both schemes (no single relation covers them).
    """
    schemes = {s.sampling for s in events.streams if _subsampled(s)}
    if len(schemes) > 1:
        raise ValueError("events mix Poisson-subsampled (add/remove-one) and without-replacement "
                         "(replace-one) releases; no accountant composes them under one relation")
    return "replace_one" if schemes == {"without_replacement"} else "add_remove"


def _unique_rows(table) -> tuple[np.ndarray, np.ndarray]:
    """Indices of agents with distinct schedules, and each agent's index into them."""
    key = np.concatenate([np.concatenate([log_mu, q, m[:, None]], axis=1)
                          for _, log_mu, q, m in table], axis=1)
    _, first, inverse = np.unique(key, axis=0, return_index=True, return_inverse=True)
    return first, inverse.reshape(-1)


def _release(dpa, mechanism: str, log_mu: float, q: float, size: int = 0):
    """One release as a DpEvent: ``noise_multiplier = scale/Δ = exp(-log μ)``; ``size`` > 0 is the
    dataset size m of a batch of ``q·m`` drawn without replacement (0: Poisson sampling).

    ``μ = Δ/scale > e^350`` (a budget beyond 1e150, whose noise multiplier would underflow inside
    dp-accounting) is a ``NonPrivateDpEvent``: ε = inf.
    """
    if not log_mu <= _MAX_LOG_MU:
        return dpa.NonPrivateDpEvent()
    z = float(np.exp(-log_mu))
    if mechanism == DISCRETE_LAPLACE:
        return _discrete_laplace(log_mu)
    event = dpa.LaplaceDpEvent(z) if mechanism == "laplace" else dpa.GaussianDpEvent(z)
    if q == 1.0:
        return event
    if size:
        return dpa.SampledWithoutReplacementDpEvent(int(size), int(round(q * size)), event)
    return dpa.PoissonSampledDpEvent(float(q), event)


DISCRETE_LAPLACE = "discrete_laplace"
"""A lattice Laplace release in a PLD row (see :func:`_discrete_laplace`)."""


def _discrete_laplace(log_mu: float):
    """A lattice Laplace release of ``μ = Δ/b`` as dp-accounting's discrete Laplace: noise
    parameter ``1/R`` per lattice step and the integer sensitivity ``⌈μR⌉`` (the integer shift's ℓ1
    norm is at most ``μR``; one coordinate carrying it all, as for the continuous Laplace)."""
    from dp_accounting import dp_event

    from jaxdp.privacy._lattice import LAPLACE_RESOLUTION
    r = LAPLACE_RESOLUTION
    sensitivity = int(np.ceil(np.exp(log_mu) * r * (1.0 + 1e-12)))
    return dp_event.DiscreteLaplaceDpEvent(noise_parameter=1.0 / r, sensitivity=sensitivity)


def _discrete_interval(events: PrivacyEvents, interval: float) -> float:
    """The PLD grid step for events with lattice Laplace streams: a tenth of their smallest
    per-release ε (at least 1e-5). Their privacy losses are multiples of ``1/R``, and the
    pessimistic rounding of each release's losses up to the grid adds up to one grid step per
    release, which at the default 1e-3 doubles the ε of releases of ε ≈ 1e-3."""
    mus = [np.exp(s.log_ratio[np.isfinite(s.log_ratio)]) for s in events.streams
           if s.lattice and s.mechanism == "laplace"]
    mus = np.concatenate(mus) if mus else np.zeros(0)
    mus = mus[mus > 0]
    return interval if mus.size == 0 else float(max(1e-5, min(interval, 0.1 * mus.min())))


def _grouped(dpa, mechanism: str, log_mu: np.ndarray, q: np.ndarray, size: int = 0) -> list:
    """Releases with equal ``(μ, q)`` (to 1e-10 relative) as SelfComposedDpEvents, at the max μ."""
    if log_mu.size == 0:
        return []
    keys = np.stack([np.round(log_mu, 10), q], axis=1)
    uniq, inverse, counts = np.unique(keys, axis=0, return_inverse=True, return_counts=True)
    worst = np.full(len(uniq), -np.inf)
    np.maximum.at(worst, inverse.reshape(-1), log_mu)
    return [dpa.SelfComposedDpEvent(_release(dpa, mechanism, m, qq, size), int(c))
            for m, qq, c in zip(worst, uniq[:, 1], counts, strict=True)]


def _merged_gaussian(dpa, log_mu: np.ndarray) -> list:
    """Full-batch Gaussian releases as one Gaussian with ``μ² = Σ μ_t²`` (exact)."""
    if log_mu.size == 0:
        return []
    log_mu2 = np.logaddexp.reduce(2.0 * log_mu)
    return [_release(dpa, "gaussian", 0.5 * log_mu2, 1.0)]


def _segment_events(dpa, row: _Row, start: int, stop: int) -> list:
    """DpEvents for the releases of steps ``start .. stop-1`` of one agent, all streams."""
    events = []
    for mechanism, log_mu, q, size in row:
        log_mu, q = log_mu[start:stop], q[start:stop]
        live = (log_mu > -np.inf) & (q > 0)
        if mechanism == "gaussian":
            full = live & (q == 1.0)
            events += _merged_gaussian(dpa, log_mu[full])
            live &= ~full
        events += _grouped(dpa, mechanism, log_mu[live], q[live], size)
    return events


def _curve(dpa, make_accountant: Callable, row: _Row, checkpoints: np.ndarray,
           delta: float) -> np.ndarray:
    """ε after each checkpoint, composing one agent's releases incrementally.

    dp-accounting logs (through absl) every fractional Rényi order whose series does not converge
    (small orders at noise multipliers below 1) and drops that order, which keeps ε a valid bound;
    those messages are silenced here.
    """
    with _quiet_absl():
        return _compose(dpa, make_accountant, row, checkpoints, delta)


@contextlib.contextmanager
def _quiet_absl():
    logger = logging.getLogger("absl")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)


def _compose(dpa, make_accountant: Callable, row: _Row, checkpoints: np.ndarray,
             delta: float) -> np.ndarray:
    accountant, out, start = make_accountant(), [], 0
    for stop in checkpoints:
        events = _segment_events(dpa, row, start, stop)
        if events:
            accountant.compose(dpa.ComposedDpEvent(events))
        out.append(accountant.get_epsilon(delta))
        start = stop
    return np.asarray(out, dtype=np.float64)


def _per_agent(events: PrivacyEvents, at_steps, row_curve: Callable) -> np.ndarray:
    """Apply ``row_curve(i, row, checkpoints)`` per distinct schedule: ``(N,)`` or ``(N, S)``."""
    checkpoints = check_steps(at_steps, events.steps)
    table = [(DISCRETE_LAPLACE if s.lattice and s.mechanism == "laplace" else s.mechanism,
              s.log_ratio, s.sampling_rate, _sizes(s)) for s in events.streams]
    first, inverse = _unique_rows(table)
    values = np.stack([row_curve(int(i), [(m, log_mu[i], q[i], int(size[i]))
                                          for m, log_mu, q, size in table],
                                 checkpoints) for i in first])
    return values[inverse, -1] if at_steps is None else values[inverse]


def _pld_too_wide(row: _Row, max_step_ratio: float) -> bool:
    """Whether a PLD grid for this agent would be too large (see :func:`pld_epsilon`)."""
    log_cap = np.log(max_step_ratio)
    for mechanism, log_mu, q, _ in row:
        live = (log_mu > -np.inf) & (q > 0)
        if np.any(log_mu[live] > log_cap):
            return True
        full = live & (q == 1.0)
        if mechanism == "gaussian" and full.any() and (
                0.5 * np.logaddexp.reduce(2.0 * log_mu[full]) > log_cap):
            return True
    return False


def pld_epsilon(events: PrivacyEvents, delta: float, value_discretization_interval: float = 1e-3,
                *, at_steps: Sequence[int] | None = None,
                max_step_ratio: float = 50.0) -> np.ndarray:
    """Per-agent (ε, δ)-DP by privacy-loss-distribution composition (dp-accounting PLDAccountant).

    The PLD is a pessimistic discretisation, so ε is an upper bound; a coarser
    ``value_discretization_interval`` is faster and looser. The cost grows with ``Δ/scale`` (a
    Laplace release's loss lies in ``[-Δ/b, Δ/b]``, the grid needs ``2Δ/(b·interval)`` points): an
    agent with a release of ``Δ/scale > max_step_ratio`` (or full-batch Gaussian releases with
    combined ``√Σ(Δ/σ)² > max_step_ratio``) is not sent to dp-accounting and gets the closed-form
    bound of :func:`~jaxdp.privacy.closed_form_curve` instead (pure-DP sum or zCDP; valid, looser),
    with a warning. Such agents have ε in the hundreds at least.

    Args:
      events: the releases; all streams are composed.
      delta: δ in ``(0, 1)``.
      value_discretization_interval: PLD grid step.
      at_steps: step counts ``1..K`` at which to report ε (each extra point costs one
        ``get_epsilon``); ``None`` reports the final ε only.
      max_step_ratio: the largest ``Δ/scale`` sent to dp-accounting.

    Returns:
      ``(N,)`` final ε, or ``(N, S)`` ε after each of the ``S`` entries of ``at_steps``.

    Raises:
      ValueError: ``delta`` outside ``(0, 1)``, bad ``at_steps``, or a stream sampled without
        replacement (no PLD event for it in dp-accounting).
    """
    import dp_accounting as dpa

    delta = check_delta(delta)
    if relation_of(events) == "replace_one":
        raise ValueError("pld_epsilon: dp-accounting's PLDAccountant has no event for sampling "
                         "without replacement (sampling='without_replacement' with q < 1); use "
                         "rdp_epsilon, or the 'closed_form' curve (no amplification)")
    fallback_rows, closed = [], []
    value_discretization_interval = _discrete_interval(events, value_discretization_interval)

    def make_accountant():
        return dpa.pld.PLDAccountant(value_discretization_interval=value_discretization_interval)

    def row_curve(i, row, checkpoints):
        if not _pld_too_wide(row, max_step_ratio):
            return _curve(dpa, make_accountant, row, checkpoints, delta)
        fallback_rows.append(i)
        if not closed:
            closed.append(closed_form_curve(events, delta)[1])
        return closed[0][i, checkpoints - 1]

    values = _per_agent(events, at_steps, row_curve)
    if fallback_rows:
        warnings.warn(
            f"pld_epsilon: agent(s) {fallback_rows} (and agents with the same schedule) have a "
            f"release with Δ/scale > max_step_ratio={max_step_ratio}; reporting the closed-form "
            "bound for them",
            stacklevel=2)
    return values


def rdp_epsilon(events: PrivacyEvents, delta: float, orders: Sequence[float] | None = None, *,
                at_steps: Sequence[int] | None = None) -> np.ndarray:
    """Per-agent (ε, δ)-DP by Rényi-DP composition (dp-accounting ``RdpAccountant``).

    Uses dp-accounting's RDP of the Gaussian, Poisson-subsampled (add/remove-one) or sampled without
    replacement (replace-one; Wang, Balle & Kasiviswanathan 2019, Thm 27), the exact RDP of the
    Laplace mechanism (Mironov 2017, Prop. 6), and its improved RDP-to-DP conversion (see
    :func:`~jaxdp.privacy.rdp_to_dp`).

    Args:
      events: the releases; all streams are composed.
      delta: δ in ``(0, 1)``.
      orders: Rényi orders; ``None`` gives :data:`~jaxdp.privacy.DEFAULT_ORDERS` (dp-accounting's).
      at_steps: step counts ``1..K`` at which to report ε; ``None`` reports the final ε only.

    Returns:
      ``(N,)`` final ε, or ``(N, S)`` ε after each of the ``S`` entries of ``at_steps``.

    Raises:
      ValueError: ``delta`` outside ``(0, 1)``, bad ``at_steps``, a subsampled Laplace release
        (dp-accounting has no RDP for it; use :func:`pld_epsilon`), or subsampled streams of both
        sampling schemes.
    """
    import dp_accounting as dpa

    delta = check_delta(delta)
    for n, s in enumerate(events.streams):
        if s.mechanism == "laplace" and np.any((s.sampling_rate < 1) & (s.sensitivity > 0)):
            raise ValueError(
                f"rdp_epsilon: stream {n} is a Poisson-subsampled Laplace release, which "
                "dp-accounting's RdpAccountant does not support; use pld_epsilon"
            )
    orders = DEFAULT_ORDERS if orders is None else np.asarray(orders, dtype=np.float64)
    relation = (dpa.NeighboringRelation.REPLACE_ONE if relation_of(events) == "replace_one"
                else dpa.NeighboringRelation.ADD_OR_REMOVE_ONE)

    def make_accountant():
        return dpa.rdp.RdpAccountant(orders=orders, neighboring_relation=relation)

    return _per_agent(events, at_steps,
                      lambda i, row, cps: _curve(dpa, make_accountant, row, cps, delta))
