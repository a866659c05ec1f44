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
replace-one. dp-accounting's ``RdpAccountant`` has the Gaussian's RDP under sampling without
replacement (Wang, Balle & Kasiviswanathan 2019, Thm 27); its PLD accountant has no such event,
and :func:`pld_epsilon` uses the dominating pairs of Zhu, Dong & Wang, "Optimal Accounting of
Differential Privacy via Characteristic Function", AISTATS 2022 (subsampling without replacement
under substitution): a batch of ``b`` of the
``m`` records drawn without replacement, one record replaced, with a base mechanism whose
replace-one pair is ``(N(Δ, σ²), N(0, σ²))``, is dominated by ``((1 − γ)N(0, σ²) + γN(Δ, σ²),
N(0, σ²))`` and its reverse, ``γ = b/m`` — the two pairs of dp-accounting's Poisson-subsampled
Gaussian (Laplace) of rate ``γ`` and sensitivity ``Δ`` under add-or-remove-one, whose ε is the
larger of the two. (For ``ε ≥ 0`` the first pair's profile is ``γ·δ_{P‖Q}(log(1 + (e^ε −
1)/γ))``, the bound of Balle, Barthe & Gaboardi, NeurIPS 2018, for sampling without replacement
under substitution, by their advanced joint convexity; the test suite checks both pairs against exact
summation of the worst replace-one pairs on the lattice.) The two schemes cannot be mixed in one
accountant.

Poisson sampling under replace-one (``sampling == "poisson_replace_one"``, Gaussian): the replaced
record is in the batch with probability ``q`` in both worlds; given the rest of the batch ``S``, the
two releases are ``(1 − q)N(f(S), σ²) + qN(f(S) + a, σ²)`` and the same with ``a'``, ``‖a‖, ‖a'‖ ≤
Δ`` (the stream's sensitivity: one record's contribution, as under add/remove). dp-accounting's
``REPLACE_ONE`` PLD of the Poisson-subsampled Gaussian of sensitivity ``Δ`` is the pair
``(qN(−Δ, σ²) + (1 − q)N(0, σ²), qN(Δ, σ²) + (1 − q)N(0, σ²))`` (its ``AdjacencyType.REPLACE``:
the contributions antipodal, ``2Δ`` apart), so it is passed ``noise_multiplier = σ/Δ``, not
``σ/(2Δ)`` (which would charge the pair ``±Δ/2``, too small); unsubsampled (``q = 1``) such a
release is the Gaussian of sensitivity ``2Δ``. dp-accounting's ``RdpAccountant`` refuses this
event, so :func:`rdp_epsilon` does too: the PLD and the closed form (no amplification, ``2Δ``) are
the accountants of this relation.

Poisson sampling under replace-one with a release clipped *after* the batch is summed
(``sampling == "poisson_replace_bounded"``: LT-ADMM-DP's soft clip of the minibatch mean): given
the rest of the batch ``S``, the releases ``f(S)``, ``f(S ∪ {x})`` and ``f(S ∪ {x'})`` all lie in
the ζ-ball, pairwise within ``Δ = 2ζ``, so the two worlds are ``(1 − q)C + qA`` and
``(1 − q)C + qA'`` with every two of ``A, A', C`` within ``Δ`` — the mixture that sampling without
replacement under substitution gives (the batch without the record's slot playing ``C``), bounded
by the same argument (Balle, Barthe & Gaboardi's advanced joint convexity, then joint convexity
over ``S``: ``H_{e^ε'}`` at most ``q·H_{e^ε}(N(Δ, σ²) ‖ N(0, σ²))``, ``e^ε' = 1 + q(e^ε − 1)``,
in either order) and accounted by the same pairs: dp-accounting's Poisson-subsampled Gaussian of
rate ``q`` and sensitivity ``Δ`` under add-or-remove-one. The pair is attained (the rest of the
batch clipped to ``+ζ`` with the record ``x'``, ``x`` to ``−ζ``). dp-accounting's ``REPLACE_ONE``
pair of a contribution ``Δ`` would put the two releases ``2Δ = 4ζ`` apart, which the ζ-ball
excludes. No RDP is claimed for it (:func:`rdp_epsilon` refuses it); unamplified it is the
Gaussian of sensitivity ``Δ``.

Work is shared where it is exact: agents with identical schedules are accounted once; releases with
equal ``(scale/Δ, q)`` inside a stretch between two reported steps are one release composed
``count`` times, each distinct release evaluated once (its RDP curve, its PLD)
(equal up to 1e-10 relative, grouped at the larger ``Δ/scale``); and full-batch Gaussian releases
there are merged into one Gaussian with ``μ = √(Σ μ_t²)``, ``μ_t = Δ_t/σ_t`` — exact, because
Gaussian mechanisms compose into a Gaussian mechanism (Dong, Roth & Su 2019, Cor. 3.3).
"""
from __future__ import annotations

import contextlib
import dataclasses
import logging
import warnings
from collections.abc import Callable, Sequence

import numpy as np

from jaxdp.privacy._closed_form import DEFAULT_ORDERS, closed_form_curve
from jaxdp.privacy._events import REPLACE_BOUNDED_POISSON, REPLACE_ONE_POISSON, PrivacyEvents

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


_RELATION_OF = {"poisson": "add_remove", "without_replacement": "replace_one",
                REPLACE_ONE_POISSON: "replace_one_poisson",
                REPLACE_BOUNDED_POISSON: "replace_one_bounded"}
NO_RDP = ("replace_one_poisson", "replace_one_bounded")
"""Relations of :func:`relation_of` that :func:`rdp_epsilon` refuses (Poisson under replace-one)."""


def relation_of(events: PrivacyEvents) -> str:
    """The relation the subsampled streams of ``events`` need: ``"add_remove"`` (Poisson, or no
    subsampling), ``"replace_one"`` (sampling without replacement), ``"replace_one_poisson"``
    (Poisson under replace-one) or ``"replace_one_bounded"`` (the same with the two worlds'
    releases within Δ; both PLD only, module docstring).

    Raises:
      ValueError: subsampled streams of several schemes (no single relation covers them).
    """
    schemes = {s.sampling for s in events.streams if _subsampled(s)}
    if len(schemes) > 1:
        raise ValueError(f"events mix subsampled releases of schemes {sorted(schemes)} (each its "
                         "own neighbouring relation); no accountant composes them under one")
    return _RELATION_OF[schemes.pop()] if schemes else "add_remove"


def _row_mechanism(stream: PrivacyEvents) -> str:
    """The mechanism as the rows carry it: ``"gaussian_replace"`` for a ``"poisson_replace_one"``
    stream (its subsampled releases take the REPLACE_ONE pair, its full ones ``2Δ``)."""
    return "gaussian_replace" if stream.sampling == REPLACE_ONE_POISSON else stream.mechanism


@dataclasses.dataclass(frozen=True)
class _PoissonReplace:
    """A Poisson-subsampled Gaussian under dp-accounting's REPLACE_ONE (module docstring):
    ``noise_multiplier = σ/Δ``, ``Δ`` the norm bound of one record's contribution."""

    sampling_probability: float
    noise_multiplier: float


def _unique_rows(table) -> tuple[np.ndarray, np.ndarray]:
    """Indices of agents with distinct schedules, and each agent's index into them."""
    key = np.concatenate([np.concatenate([log_mu, q, m[:, None]], axis=1)
                          for _, log_mu, q, m in table], axis=1)
    _, first, inverse = np.unique(key, axis=0, return_index=True, return_inverse=True)
    return first, inverse.reshape(-1)


def _release(dpa, mechanism: str, log_mu: float, q: float, size: int = 0, *,
             pairs: bool = False):
    """One release as a DpEvent: ``noise_multiplier = scale/Δ = exp(-log μ)``; ``size`` > 0 is the
    dataset size m of a batch of ``q·m`` drawn without replacement (0: Poisson sampling), as
    dp-accounting's ``SampledWithoutReplacementDpEvent`` or, with ``pairs`` (the PLD accountant),
    as the Poisson-subsampled event of rate ``q`` whose pairs dominate it (module docstring).

    ``μ = Δ/scale > e^350`` (a budget beyond 1e150, whose noise multiplier would underflow inside
    dp-accounting) is a ``NonPrivateDpEvent``: ε = inf.
    """
    if not log_mu <= _MAX_LOG_MU:
        return dpa.NonPrivateDpEvent()
    z = float(np.exp(-log_mu))
    if mechanism == "gaussian_replace" and q < 1.0:
        return _PoissonReplace(float(q), z)
    event = dpa.LaplaceDpEvent(z) if mechanism == "laplace" else dpa.GaussianDpEvent(z)
    if q == 1.0:
        return event
    if size and not pairs:
        return dpa.SampledWithoutReplacementDpEvent(int(size), int(round(q * size)), event)
    return dpa.PoissonSampledDpEvent(float(q), event)


def _pld_interval(events: PrivacyEvents, interval: float) -> float:
    """The PLD grid step: ``interval``, or a tenth of the smallest per-release ε of a Laplace
    stream (at least 1e-5) when that is smaller: the pessimistic rounding of each release's losses
    up to the grid adds up to one grid step per release, which at the default 1e-3 doubles the ε
    of releases of ε ≈ 1e-3."""
    mus = [np.exp(s.log_ratio[np.isfinite(s.log_ratio)]) for s in events.streams
           if s.mechanism == "laplace"]
    mus = np.concatenate(mus) if mus else np.zeros(0)
    mus = mus[mus > 0]
    return interval if mus.size == 0 else float(max(1e-5, min(interval, 0.1 * mus.min())))


def _grouped(dpa, mechanism: str, log_mu: np.ndarray, q: np.ndarray, size: int = 0,
             pairs: bool = False) -> list:
    """Releases with equal ``(μ, q)`` (to 1e-10 relative) as ``(event, count)``, at the max μ."""
    if log_mu.size == 0:
        return []
    keys = np.stack([np.round(log_mu, 10), q], axis=1)
    uniq, inverse, counts = np.unique(keys, axis=0, return_inverse=True, return_counts=True)
    worst = np.full(len(uniq), -np.inf)
    np.maximum.at(worst, inverse.reshape(-1), log_mu)
    return [(_release(dpa, mechanism, m, qq, size, pairs=pairs), int(c))
            for m, qq, c in zip(worst, uniq[:, 1], counts, strict=True)]


def _merged_gaussian(dpa, log_mu: np.ndarray) -> list:
    """Full-batch Gaussian releases as one Gaussian with ``μ² = Σ μ_t²`` (exact)."""
    if log_mu.size == 0:
        return []
    log_mu2 = np.logaddexp.reduce(2.0 * log_mu)
    return [(_release(dpa, "gaussian", 0.5 * log_mu2, 1.0), 1)]


def _segment_events(dpa, row: _Row, start: int, stop: int, pairs: bool) -> list:
    """``(DpEvent, count)`` for the releases of steps ``start .. stop-1`` of one agent, all
    streams."""
    events = []
    for mechanism, log_mu, q, size in row:
        log_mu, q = log_mu[start:stop], q[start:stop]
        live = (log_mu > -np.inf) & (q > 0)
        if mechanism == "gaussian_replace":  # unsubsampled: the Gaussian of sensitivity 2Δ
            log_mu = np.where(q == 1.0, log_mu + np.log(2.0), log_mu)
        if mechanism in ("gaussian", "gaussian_replace"):
            full = live & (q == 1.0)
            events += _merged_gaussian(dpa, log_mu[full])
            live &= ~full
        events += _grouped(dpa, mechanism, log_mu[live], q[live], size, pairs)
    return events


def _curve(dpa, curve, row: _Row, checkpoints: np.ndarray, delta: float,
           pairs: bool = False) -> np.ndarray:
    """ε after each checkpoint, composing one agent's releases incrementally (``curve``:
    :class:`_RdpCurve` or :class:`_PldCurve`, which evaluate each distinct release once).

    dp-accounting logs (through absl) every fractional Rényi order whose series does not converge
    (small orders at noise multipliers below 1) and drops that order, which keeps ε a valid bound;
    those messages are silenced here.
    """
    with _quiet_absl():
        state, out, start = curve.empty(), [], 0
        for stop in checkpoints:
            for event, count in _segment_events(dpa, row, start, stop, pairs):
                state = curve.compose(state, event, count)
            out.append(curve.epsilon(state, delta))
            start = stop
        return np.asarray(out, dtype=np.float64)


@contextlib.contextmanager
def _quiet_absl():
    logger = logging.getLogger("absl")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)


class _RdpCurve:
    """RDP composition by adding each distinct release's curve (dp-accounting's
    ``RdpAccountant`` on the release alone, computed once) times its count; ε by dp-accounting's
    ``compute_epsilon`` (the conversion its accountant uses)."""

    def __init__(self, dpa, orders: np.ndarray, relation):
        self._dpa, self._orders, self._relation, self._cache = dpa, orders, relation, {}

    def empty(self) -> np.ndarray:
        return np.zeros(len(self._orders))

    def _rdp(self, event) -> np.ndarray:
        key = repr(event)
        if key not in self._cache:
            accountant = self._dpa.rdp.RdpAccountant(orders=self._orders,
                                                     neighboring_relation=self._relation)
            accountant.compose(event)
            self._cache[key] = np.asarray(accountant._rdp, np.float64)  # its composed curve
        return self._cache[key]

    def compose(self, state: np.ndarray, event, count: int) -> np.ndarray:
        return state + count * self._rdp(event)

    def epsilon(self, state: np.ndarray, delta: float) -> float:
        from dp_accounting.rdp.rdp_privacy_accountant import compute_epsilon
        return float(compute_epsilon(self._orders, state, delta)[0])


class _PldCurve:
    """PLD composition with each distinct release's PLD built once (dp-accounting's
    ``from_gaussian_mechanism`` / ``from_laplace_mechanism``, pessimistic, as its
    ``PLDAccountant`` builds them) and self-composed by FFT for its count."""

    def __init__(self, dpa, interval: float, relation=None):
        self._dpa, self._interval, self._cache = dpa, interval, {}
        self._relation = relation or dpa.NeighboringRelation.ADD_OR_REMOVE_ONE

    def empty(self):
        return None

    def _pld(self, event):
        key = repr(event)
        if key not in self._cache:
            self._cache[key] = self._build(event)
        return self._cache[key]

    def _build(self, event):
        pld, dpa = self._dpa.pld.privacy_loss_distribution, self._dpa
        if isinstance(event, dpa.NonPrivateDpEvent):
            return None
        if isinstance(event, _PoissonReplace):
            return pld.from_gaussian_mechanism(
                event.noise_multiplier, sampling_prob=event.sampling_probability,
                value_discretization_interval=self._interval,
                neighboring_relation=dpa.NeighboringRelation.REPLACE_ONE)
        q = 1.0
        if isinstance(event, dpa.PoissonSampledDpEvent):
            q, event = event.sampling_probability, event.event
        if isinstance(event, dpa.GaussianDpEvent):
            return pld.from_gaussian_mechanism(
                event.noise_multiplier, sampling_prob=q,
                value_discretization_interval=self._interval,
                neighboring_relation=self._relation)
        return pld.from_laplace_mechanism(event.noise_multiplier, sampling_prob=q,
                                          value_discretization_interval=self._interval)

    def compose(self, state, event, count: int):
        base = self._pld(event)
        if base is None or state is _NON_PRIVATE:
            return _NON_PRIVATE
        part = base if count == 1 else base.self_compose(count)
        return part if state is None else state.compose(part)

    def epsilon(self, state, delta: float) -> float:
        if state is None:
            return 0.0
        return np.inf if state is _NON_PRIVATE else float(state.get_epsilon_for_delta(delta))


_NON_PRIVATE = object()  # a composition that holds a NonPrivateDpEvent: ε = inf


def _per_agent(events: PrivacyEvents, at_steps, row_curve: Callable) -> np.ndarray:
    """Apply ``row_curve(i, row, checkpoints)`` per distinct schedule: ``(N,)`` or ``(N, S)``."""
    checkpoints = check_steps(at_steps, events.steps)
    table = [(_row_mechanism(s), s.log_ratio, s.sampling_rate, _sizes(s)) for s in events.streams]
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
        twice = np.log(2.0) if mechanism == "gaussian_replace" else 0.0
        if mechanism != "laplace" and full.any() and (
                0.5 * np.logaddexp.reduce(2.0 * log_mu[full]) + twice > log_cap):
            return True
    return False


def _refined_final(final_epsilon: Callable[[float], float], eps: float, interval: float,
                   releases: int) -> float:
    """The final ε on a PLD grid made ten times finer (down to 1e-5) while ε (``eps`` on the grid
    ``interval``) is below 5, the grid's rounding could matter (``releases·interval`` above 1 % of
    ε: the pessimistic rounding moves each release's losses up by at most one step, so ε by at
    most ``releases·interval``) and each refinement lowers ε by more than 1 %. Every grid gives an
    upper bound; at small sampling rates and many steps the 1e-3 grid can double a small ε
    (q = 1e-3, noise multiplier 10, 10⁴ steps: 0.11 against 0.027)."""
    while (interval >= 1e-4 and np.isfinite(eps) and 0.0 < eps < 5.0
           and releases * interval > 0.01 * eps):
        interval /= 10.0
        eps_finer = final_epsilon(interval)
        if not eps_finer < 0.99 * eps:
            return min(eps, eps_finer)
        eps = eps_finer
    return eps


def pld_epsilon(events: PrivacyEvents, delta: float, value_discretization_interval: float = 1e-3,
                *, at_steps: Sequence[int] | None = None,
                max_step_ratio: float = 50.0) -> np.ndarray:
    """Per-agent (ε, δ)-DP by privacy-loss-distribution composition (dp-accounting PLDAccountant).

    The PLD is a pessimistic discretisation, so ε is an upper bound; a coarser
    ``value_discretization_interval`` is faster and looser; each agent's final ε is recomputed on
    finer grids (to 1e-5) while that lowers an ε below 5 by more than 1 % (:func:`_refined_final`;
    it bounds the earlier points too), so small budgets and small sampling rates are not dominated
    by the grid. The cost grows with ``Δ/scale`` (a
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

    Sampling without replacement (replace-one) is accounted through its dominating pairs (module
    docstring).

    Raises:
      ValueError: ``delta`` outside ``(0, 1)``, bad ``at_steps``, or subsampled streams of both
        sampling schemes.
    """
    import dp_accounting as dpa

    delta = check_delta(delta)
    relation_of(events)  # refuses Poisson and without-replacement streams together
    fallback_rows, closed = [], []
    value_discretization_interval = _pld_interval(events, value_discretization_interval)

    curves = {}

    def pld_curve(interval):
        return curves.setdefault(interval, _PldCurve(dpa, interval))

    def row_curve(i, row, checkpoints):
        if not _pld_too_wide(row, max_step_ratio):
            eps = _curve(dpa, pld_curve(value_discretization_interval), row, checkpoints, delta,
                         pairs=True)
            final = checkpoints[-1:]
            releases = sum(int(np.sum((log_mu[:final[0]] > -np.inf) & (q[:final[0]] > 0)))
                           for _, log_mu, q, _ in row)
            refined = _refined_final(
                lambda step: _curve(dpa, pld_curve(step), row, final, delta, pairs=True)[-1],
                float(eps[-1]), value_discretization_interval, releases)
            # ε after fewer steps is at most ε after all of them: the refined final value bounds
            # every earlier point too
            return np.minimum(eps, refined)
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
    :func:`~jaxdp.privacy.closed_forms.rdp_to_dp`).

    Args:
      events: the releases; all streams are composed.
      delta: δ in ``(0, 1)``.
      orders: Rényi orders; ``None`` gives :data:`~jaxdp.privacy.closed_forms.DEFAULT_ORDERS`
        (dp-accounting's).
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
    if relation_of(events) in NO_RDP:
        raise ValueError("rdp_epsilon: Poisson-subsampled releases under replace-one "
                         f"(sampling={events.sampling!r}): dp-accounting's RdpAccountant has no "
                         "REPLACE_ONE Poisson event; use pld_epsilon (or closed_form_curve)")
    for n, s in enumerate(events.streams):
        if s.mechanism == "laplace" and np.any((s.sampling_rate < 1) & (s.sensitivity > 0)):
            raise ValueError(
                f"rdp_epsilon: stream {n} is a Poisson-subsampled Laplace release, which "
                "dp-accounting's RdpAccountant does not support; use pld_epsilon"
            )
    orders = DEFAULT_ORDERS if orders is None else np.asarray(orders, dtype=np.float64)
    relation = (dpa.NeighboringRelation.REPLACE_ONE if relation_of(events) == "replace_one"
                else dpa.NeighboringRelation.ADD_OR_REMOVE_ONE)

    curve = _RdpCurve(dpa, orders, relation)
    return _per_agent(events, at_steps, lambda i, row, cps: _curve(dpa, curve, row, cps, delta))


def poisson_gaussian_epsilon(mu: float, q: float, at_steps: Sequence[int], delta: float, *,
                             replace: bool = False,
                             value_discretization_interval: float = 1e-3) -> np.ndarray:
    """``(S,)`` ε after each of ``at_steps`` rounds of one Poisson-subsampled Gaussian release of
    ``μ = Δ/σ`` per round, by dp-accounting's PLD. ``replace=False``: one record (client) added
    or removed, ``Δ`` its largest contribution. ``replace=True``: one record replaced by another,
    each contribution of norm at most ``Δ``, by dp-accounting's ``REPLACE_ONE`` pair
    ``((1 − q)N(0, σ²) + qN(−Δ, σ²), (1 − q)N(0, σ²) + qN(Δ, σ²))`` (the replaced record is in
    the batch with probability ``q`` in both worlds, its contribution ``±Δ`` apart at most).
    At ``q = 1`` the pairs are those of the Gaussian of sensitivity ``Δ`` (``2Δ`` replacing)."""
    import dp_accounting as dpa

    delta = check_delta(delta)
    relation = (dpa.NeighboringRelation.REPLACE_ONE if replace
                else dpa.NeighboringRelation.ADD_OR_REMOVE_ONE)
    curve = _PldCurve(dpa, value_discretization_interval, relation)
    event = dpa.GaussianDpEvent(1.0 / mu)
    if q < 1.0:
        event = dpa.PoissonSampledDpEvent(q, event)
    state, out, done = curve.empty(), [], 0
    with _quiet_absl():
        for t in np.asarray(at_steps, np.int64):
            if t > done:
                state = curve.compose(state, event, int(t - done))
            done = int(t)
            out.append(curve.epsilon(state, delta))
    return np.asarray(out, np.float64)
