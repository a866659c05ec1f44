"""The causal cone: which of agent ``u``'s releases can reach observer ``v`` by the horizon.

A sound pairwise matrix ``ε_{u→v}`` for any noise and any adaptivity, from the report's own
(eavesdropper) curve and the communication graph alone (issue 36, break 7 (e)).

**Reach.** A run of ``T`` steps has ``R`` communication rounds per step (product calls on the
network, in sequence: round ``kR + r`` of step ``k``). A message sent in a round is received in
that round; whatever its receiver sends depends on it from the next round on. So a release of
``u`` in round ``ρ`` can move a message ``v`` receives only through a time-respecting path
``u → w₁ → … → v`` with one hop per round, and the first of those messages arrives in round
``ρ + d − 1`` (``d = d(u, v)`` the hop distance on the union of every step's edge set). ``v``'s
view (the messages it receives in rounds ``0..TR − 1``, its own state, data and noise) is then
moved by ``u``'s releases of step ``k`` only if ``kR + d − 1 ≤ TR − 1`` (the earliest round of step
``k`` is ``kR``), i.e. for the steps ``k = 0..k* − 1`` with::

    k*(u, v) = clip(T − ⌈d/R⌉ + 1, 0, T)      (0 where v is unreachable; T for a neighbour)

a prefix: if a release of step ``k`` reaches ``v``, so does one of any earlier step (``u`` keeps
its own state, so the path waits at ``u``). Ring of 100, ``T = 50``, ``R = 1``, ``d = 40``:
``k* = 11`` (steps ``0..10``: ``10 + 40 − 1 = 49``, the last round).

**Why ε_{u→v} ≤ ε_u(k*), the report's curve after k* steps.** Simulate the run from ``v``'s past
cone: every message ``v`` receives and ``v``'s state are a function of (i) ``u``'s releases of
steps ``< k*`` and (ii) the data and randomness of the agents other than ``u``, which are
independent of ``u``'s data. The releases of ``u`` at steps ``≥ k*`` enter no message of the cone,
so they are not needed. The eavesdropper accountant bounds (i) given (ii): each release of ``u``
is a mechanism given the whole past transcript (the adaptive composition of ``u``'s first ``k*``
steps), and an observer holding the others' data and noise learns nothing more when the noise
it charges is noise the observer does not know (the declared noise owner:
:func:`~jaxdp.privacy.contract.fallback_refusal`). ``v``'s view is a randomized post-processing of
that pair, so it is ``ε_u(k*)``-DP at the report's δ — whatever the noise law and however the
contributions adapt to the messages received. ``k* = 0``: ``v``'s view does not depend on ``u``'s
data at all (``ε = 0``). The curve is read at the smallest reported step count ``≥ k*`` (sound:
fewer steps are a post-processing of more). A coalition's reach is that of its nearest member.

**Time-varying networks.** A channel may draw and record a message on a link that is down at a
step (the proxy runs on the union of the edge sets), so the distance is taken on the union of
every step's edges (``network.base``'s senders and receivers: a
:class:`~jaxdp.network.NetworkSequence` is re-expressed on the union; a random one keeps its full
base graph): sound, never tighter than one step's graph.

**What is assumed.** ``R`` bounds the sequential rounds of one step: the traced product calls on
the network (:meth:`Algorithm.costs_per_step <jaxdp.algorithms.Algorithm.costs_per_step>`'s
``"rounds"``; a call in a ``lax.while_loop`` counts once and a product through the dense
matrices or by indexing is not counted, so an algorithm that communicates so declares
:attr:`~jaxdp.algorithms.Algorithm.rounds_declared`). The tests check it on the catalogue: a
shift of one agent's noise moves no agent beyond ``R`` hops per step. Only the messages are
covered (``release="messages"``): a released final model is seen by everyone.
"""
from __future__ import annotations

import dataclasses

import numpy as np

CONE = "causal cone"
"""The report's sound curve under a threat model with a causal cone (:func:`within_cone`)."""

CONE_NOTE = ("the report's own guarantee after only the k* steps of agent u whose releases can "
             "reach the observer by the horizon (k* = T − ⌈d/R⌉ + 1 at hop distance d on the "
             "union of the edge sets, R = {rounds} round(s) per step): the observer's view is a "
             "post-processing of that prefix and of other agents' data and noise, for any noise "
             "and any adaptivity (jaxdp.privacy._cone)")


def hop_distances(senders, receivers, n_agents: int) -> np.ndarray:
    """``(N, N)`` hop distance ``d[u, v]`` along directed edges ``senders[e] → receivers[e]``
    (``0`` on the diagonal, ``inf`` where ``v`` is unreachable from ``u``)."""
    step = np.zeros((n_agents, n_agents), bool)
    step[np.asarray(senders, np.int64), np.asarray(receivers, np.int64)] = True
    dist = np.where(np.eye(n_agents, dtype=bool), 0.0, np.inf)
    frontier = np.eye(n_agents, dtype=bool)
    for hops in range(1, n_agents):
        frontier = (frontier.astype(np.int64) @ step.astype(np.int64)) > 0
        new = frontier & np.isinf(dist)
        if not new.any():
            break
        dist[new] = hops
    return dist


def cone_steps(dist, steps, rounds: int) -> np.ndarray:
    """``k*``: how many of ``u``'s steps (a prefix) can reach an observer at hop distance
    ``dist`` within ``steps`` steps of ``rounds`` rounds each (module docstring)."""
    if isinstance(rounds, bool) or int(rounds) != rounds or rounds < 1:
        raise ValueError(f"rounds per step must be an int >= 1; got {rounds!r}")
    dist, steps = np.asarray(dist, np.float64), np.asarray(steps, np.int64)
    with np.errstate(invalid="ignore"):
        k = steps - np.ceil(dist / rounds) + 1
    return np.clip(np.where(np.isinf(dist), 0, k), 0, steps).astype(np.int64)


def _at_steps(log10_curve: np.ndarray, reported: np.ndarray, k: np.ndarray) -> np.ndarray:
    """``log10 ε_u`` after ``k[u, ...]`` steps: the curve at the smallest reported step count
    ``≥ k`` (``-inf``, ε = 0, at ``k = 0``)."""
    col = np.searchsorted(reported, np.maximum(k, 1))
    rows = np.arange(log10_curve.shape[0]).reshape((-1,) + (1,) * (k.ndim - 1))
    return np.where(k == 0, -np.inf, log10_curve[rows, np.minimum(col, len(reported) - 1)])


def cone_pairwise(report, dist: np.ndarray, rounds: int) -> np.ndarray:
    """``(N, N)`` final ``ε_{u→v}`` of ``report`` (the eavesdropper's guarantee) from the causal
    cone: ``ε_u`` after ``k*(u, v)`` steps (``inf`` on the diagonal)."""
    k = cone_steps(dist, int(report.steps[-1]), rounds)
    with np.errstate(over="ignore"):
        out = 10.0 ** _at_steps(report.epsilon_log10_curve(), report.steps, k)
    np.fill_diagonal(out, np.inf)
    return out


def cone_curve(report, dist_to_observer: np.ndarray, rounds: int) -> np.ndarray:
    """``(N, K')`` ``log10 ε_u`` at each reported step ``K`` against an observer at hop distance
    ``dist_to_observer[u]``: the guarantee after ``k*(u, K)`` steps."""
    k = cone_steps(np.asarray(dist_to_observer)[:, None], report.steps[None, :], rounds)
    return _at_steps(report.epsilon_log10_curve(), report.steps, k)


def within_cone(report, threat, senders, receivers, rounds: int):
    """``report`` (the eavesdropper bound moved to ``threat`` by the fallback) tightened by the
    causal cone: under :class:`~jaxdp.privacy.Neighbours` :attr:`pairwise` is
    :func:`cone_pairwise` and each agent's curve the max over ``v ≠ u`` (the eavesdropper's
    wherever ``u`` has a neighbour); under a :class:`~jaxdp.privacy.Coalition` the distance is to
    its nearest member. Added as the sound curve :data:`CONE`; other threat models unchanged."""
    from jaxdp.privacy._threat import Coalition, Neighbours

    n = report.epsilon.shape[0]
    dist = hop_distances(senders, receivers, n)
    if isinstance(threat, Neighbours):
        to_observer = np.min(np.where(np.eye(n, dtype=bool), np.inf, dist), axis=1)
    elif isinstance(threat, Coalition):
        to_observer = np.min(dist[:, list(threat.agents)], axis=1)
    else:
        return report
    log10 = cone_curve(report, to_observer, rounds)
    members = np.asarray(threat.unprotected(n), bool)
    log10 = np.where(members[:, None], np.inf, log10)
    with np.errstate(over="ignore"):
        curve = 10.0 ** log10
    out = report.with_curve(CONE, curve, CONE_NOTE.format(rounds=rounds), log10=log10, sound=True)
    if isinstance(threat, Neighbours):
        out = dataclasses.replace(out, pairwise=np.minimum(report.pairwise, cone_pairwise(
            report, dist, rounds)) if report.pairwise is not None else cone_pairwise(
            report, dist, rounds))
    return out
