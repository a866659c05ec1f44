"""Audit cases: the type each paper family declares its audit cases with, and the neighbouring
problems and observations those cases are built from.

A family package keeps its cases beside its algorithm, in ``jaxdp/algorithms/<family>/cases.py``:
``audit_cases()`` (one :class:`Case` per private algorithm of the family, with the family's positive
controls) and, optionally, ``audit_controls()`` (controls listed after every family's cases). The
audit engine, ``jaxdp reproduce audit-table`` (:mod:`jaxdp.experiments.audit`), collects them in
registry order, runs them and writes the table; this module needs only the lower layers
(``problems``), so a family's cases do not import the experiments above them.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Callable

import jax.numpy as jnp
import numpy as np

from jaxdp import problems

N_AGENTS = 10  # every family at N = 10 (the paper's topology kind): ε is per agent
OUTSIDE_OBSERVERS = ("eavesdropper", "trusted_server")
"""The threat models whose observer is no agent (a case names no observing agent for them)."""


@dataclasses.dataclass(frozen=True)
class Case:
    """One audited configuration.

    Attributes:
      id: row name (the registry name, or a control's name).
      paper: which paper (and where its adjacency comes from).
      algorithm, params, network: what runs.
      pair: the two neighbouring problems (differing at agent 0).
      steps: horizon K; the attacker sees the messages of steps 0..K−1.
      observed: the messages the attacker sees, in words.
      features: ``fn(observed) -> (D,)``, jittable: the observed numbers of one run.
      mechanism: ``"gaussian"`` or ``"laplace"``: which likelihood-ratio form scores them.
      control: ``""``, ``"positive"`` (must be caught) or ``"negative"`` (exact ε known).
      exact: the exact ε of a negative control.
      claimed: a claim given by hand (overrides the report's theorem curve), e.g. for DPP² u = 0.
      releases: the horizon the privacy report is asked for (default ``steps``); DP-DGD sends the
        model before its update, so K = 2 steps show one noisy gradient.
      ci_seeds: runs per input in the CI soundness gate (``tests/test_privacy_soundness.py``).
      threat: the threat model the claim is read under (``"eavesdropper"``, every message; or
        ``"neighbours"``, pairwise network DP: then ``observer`` is set).
      observer: the observing agent ``v`` of a pairwise case (``None``: the eavesdropper). Its
        ``features`` are ``v``'s view (:func:`link_view`) and its claim is
        ``report.pairwise[0, v]`` of ``privacy(..., threat="neighbours")``.
      delta: the δ the verdict is read at (``None``: the report's default). A positive control
        whose under-report shows only where a few thousand runs are strong (a large δ: the
        audit's tail rates cannot resolve δ = 1e-5) claims its ``claimed`` ε at this δ.

    An ordinary case is *sound* when the empirical lower bound stays at or below the report's
    guarantee for agent 0 (whose data differ). A positive control with a float ``claimed`` (an
    under-reported ε, built by the same accountant with a wrong sensitivity or sampling claim) is
    *caught* when the bound exceeds it; one without is caught when the bound reaches 90 % of what
    the seeds can show (:func:`jaxdp.experiments.audit.max_bound`).
    """

    id: str
    paper: str
    algorithm: Any
    params: Any
    network: Any
    pair: tuple
    steps: int
    observed: str
    features: Callable
    mechanism: str = "gaussian"
    control: str = ""
    exact: float | None = None
    claimed: Any = None
    releases: int | None = None
    ci_seeds: int = 20_000
    threat: str = "eavesdropper"
    observer: int | None = None
    delta: float | None = None

    def __post_init__(self):
        if (self.observer is None) != (self.threat in OUTSIDE_OBSERVERS):
            raise ValueError(f"case {self.id!r}: the eavesdropper sees every link and the trusted "
                             "server's observer its outputs (no observing agent), and another "
                             "threat model needs its observing agent; got "
                             f"threat={self.threat!r}, observer={self.observer!r}")


# -- neighbouring problems ----------------------------------------------------------------------
def random_data(n: int, m: int, d: int, seed: int):
    """Gaussian rows of norm ≈ 1 and Gaussian labels for every agent."""
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, m, d)) / np.sqrt(d), rng.normal(size=(n, m))


def problem_pair(features, label_sets, loss, reg, dtype) -> tuple:
    """One problem per label set, all on the same ``features`` (no reference solution)."""
    return tuple(problems.from_arrays(features, lab, loss=loss, reg=reg, reference=False,
                                      dtype=dtype) for lab in label_sets)


def with_agent0(labels, rows, values) -> list:
    """Copies of ``labels`` whose agent-0 entries ``rows`` are set to each of ``values``."""
    out = []
    for v in values:
        lab = labels.copy()
        lab[0, rows] = v
        out.append(lab)
    return out


def tilt(n: int, m: int, d: int, v: np.ndarray, *, loss="least_squares", reg=None, seed=0,
          dtype=np.float64):
    """Least squares: agent 0's gradient is ``+v/2`` at 0 in one problem, ``−v/2`` in the other.

    ``∇f_0(x) = Aᵀ(Ax − b)/m``: labels ``b = ∓(m/2) A (AᵀA)⁻¹ v`` give a gradient difference of
    exactly ``v`` at every x (a linear tilt of f_0).
    """
    feats, labels = random_data(n, m, d, seed)
    half = (m / 2) * feats[0] @ np.linalg.solve(feats[0].T @ feats[0], v)
    return problem_pair(feats, with_agent0(labels, slice(None), (-half, half)), loss,
                     {"ridge": 0.0} if reg is None else reg, dtype)


def sample(n: int, m: int, d: int, size: float, *, seed=0, dtype=np.float64):
    """Least squares: agent 0's first row is labelled ``+size`` in one problem, ``−size`` in the
    other."""
    feats, labels = random_data(n, m, d, seed)
    return problem_pair(feats, with_agent0(labels, 0, (size, -size)), "least_squares",
                     {"ridge": 0.0}, dtype)


def flip(n: int, m: int, d: int, *, lam: float, seed=0, dtype=np.float64):
    """Logistic, rows of norm 1 (‖ℓ'‖ ≤ 1): agent 0's first label flipped in the second problem."""
    feats, labels = random_data(n, m, d, seed)
    feats /= np.linalg.norm(feats, axis=-1, keepdims=True)
    labels = np.sign(labels) + (labels == 0)
    return problem_pair(feats, with_agent0(labels, 0, (labels[0, 0], -labels[0, 0])), "logistic",
                     {"lam": lam}, dtype)


def record_pair(n: int, m: int, d: int, size: float, *, seed: int = 0, dtype=np.float64):
    """Two least-squares problems that differ in one record of agent 0 (replace-one).

    Every label is 0 except agent 0's first row, ``+size`` in one problem and ``−size`` in the
    other: at x = 0 every other row has a zero gradient, and the record's gradient ∓size·a saturates
    any clip, in opposite directions — the pair that attains Δ = 2C/b (per-sample clip) or 2ζ
    (soft clip) whenever the record is in the batch.
    """
    rng = np.random.default_rng(seed)
    feats = rng.normal(size=(n, m, d)) / np.sqrt(d)
    pair = []
    for sign in (1.0, -1.0):
        labels = np.zeros((n, m))
        labels[0, 0] = sign * size
        pair.append(problems.from_arrays(feats, labels, loss="least_squares",
                                         reg={"ridge": 0.0}, reference=False, dtype=dtype))
    return tuple(pair)


def displace_pair(n: int, m: int, d: int, size: float, *, seed: int = 0, dtype=np.float64):
    """The worst replace-one pair of a per-sample clipped mean over a fixed-size batch drawn
    without replacement: every row of agent 0 has one feature a and label ``−size`` (each clipped
    to +C·â at x = 0) except record 0, labelled ``+size`` in the first problem (−C·â).

    The second problem's batch mean is C·â whatever the batch; the first's is C·â − 2C·â/b when
    record 0 is drawn (probability γ = b/m), else the same C·â. So the releases are
    ``(1 − γ)N(v) + γN(v − 2Câ/b)`` against ``N(v)``: exactly the dominating pair that sampling
    without replacement under substitution is accounted by (Zhu, Dong & Wang 2022;
    :mod:`jaxdp.privacy._dp_accounting`) — its ε is attained, not an over-charge. (The antipodal
    :func:`record_pair` keeps the batch without record 0 at 0, between the two worlds' clipped
    terms, and shows less.) Every other agent's labels are 0."""
    rng = np.random.default_rng(seed)
    feats = rng.normal(size=(n, m, d)) / np.sqrt(d)
    feats[0] = feats[0, :1]
    pair = []
    for first in (size, -size):
        labels = np.zeros((n, m))
        labels[0, :], labels[0, 0] = -size, first
        pair.append(problems.from_arrays(feats, labels, loss="least_squares",
                                         reg={"ridge": 0.0}, reference=False, dtype=dtype))
    return tuple(pair)


def add_remove_pair(n: int, m: int, d: int, size: float, *, seed: int = 0, dtype=np.float64):
    """Two least-squares problems on the same features whose agent-0 record 0 has label ``size``
    in the first and 0 in the second. Every other label is 0, so at x = 0 every other gradient is
    0: the second problem's record contributes nothing to any Poisson sum, as an absent record."""
    rng = np.random.default_rng(seed)
    feats = rng.normal(size=(n, m, d)) / np.sqrt(d)
    pair = []
    for label in (size, 0.0):
        labels = np.zeros((n, m))
        labels[0, 0] = label
        pair.append(problems.from_arrays(feats, labels, loss="least_squares",
                                         reg={"ridge": 0.0}, reference=False, dtype=dtype))
    return tuple(pair)


def l2(d: int, size: float) -> np.ndarray:
    """A vector of ℓ2 norm ``size`` along (1, …, 1): the worst case of an ℓ1 (Laplace) release."""
    return np.full(d, size / np.sqrt(d))




# -- what the attacker observes -----------------------------------------------------------------
def agent_rows(*keys, agent: int = 0):
    """Agent ``agent``'s row of each message in ``keys`` at every observed step."""
    return lambda obs: jnp.concatenate([obs["messages"][k][:, agent].ravel() for k in keys])


def all_rows(*keys):
    """Every entry of each message in ``keys`` at every observed step (e.g. per-edge messages)."""
    return lambda obs: jnp.concatenate([obs["messages"][k].ravel() for k in keys])




def first_activation(*keys, agent: int = 0):
    """Token methods: the baton ``keys`` sent by ``agent`` at its first activation (0 if none)."""
    def features(obs):
        msg = obs["messages"]
        mine = (msg["sender"] == agent) & msg["active"]
        k = jnp.argmax(mine)
        return jnp.concatenate([jnp.where(jnp.any(mine), msg[key][k], 0).ravel() for key in keys])
    return features


def sent_by(key: str, net, agent: int = 0):
    """Audit features: the per-edge messages ``key`` that ``agent`` sends, at every step."""
    mine = np.flatnonzero(np.asarray(net.senders) == agent)
    return lambda obs: obs["messages"][key][:, mine].ravel()


# -- what one observing agent sees (pairwise network DP) ----------------------------------------
def hops(net, source: int = 0) -> np.ndarray:
    """``(N,)`` graph distance of every agent from ``source`` over the network's links (breadth
    first on ``net.senders → net.receivers``; ``-1`` where unreachable)."""
    senders, receivers = np.asarray(net.senders), np.asarray(net.receivers)
    dist = np.full(net.n_agents, -1)
    dist[source], frontier, h = 0, [source], 0
    while frontier:
        h += 1
        nxt = np.unique(receivers[np.isin(senders, frontier)])
        nxt = nxt[dist[nxt] < 0]
        dist[nxt] = h
        frontier = nxt.tolist()
    return dist


def pair_class(h: int) -> str:
    """The class of a pair ``(u, v)`` at graph distance ``h``: ``"neighbour"``, ``"2 hops"`` or
    ``"≥3 hops"``."""
    if h < 1:
        raise ValueError(f"a pair class needs two distinct connected agents; got distance {h}")
    return {1: "neighbour", 2: "2 hops"}.get(h, "≥3 hops")


def link_view(net, observer: int):
    """Audit features: what agent ``observer`` sees on its own links, at every step, for every
    message the transcript holds.

    A message's second axis says how the network delivers it: one row per agent (a node-level
    broadcast: ``v`` receives the rows of its in-neighbours, ``net.senders`` of the links into
    ``v``) or one copy per directed link (a per-message channel: ``v`` receives the copies whose
    receiver is ``v``). Besides what it receives, the view holds what ``v`` sends (its own row, or
    its copies on the links out of ``v``): a function of ``v``'s own state and noise, which the
    ``"neighbours"`` threat model grants it — this is how the observer's knowledge of its own
    noise, e.g. the secret of a DECOR edge it shares with ``u``, enters a linear attack.
    """
    senders, receivers = np.asarray(net.senders), np.asarray(net.receivers)
    into = np.flatnonzero(receivers == observer)
    links = np.concatenate([into, np.flatnonzero(senders == observer)])
    rows = np.concatenate([senders[into], [observer]])
    if net.n_agents == senders.size:
        raise ValueError(f"a network of {net.n_agents} agents and as many directed links: node "
                         "and link messages cannot be told apart")

    def select(name, m):
        if m.shape[1] == net.n_agents:
            return m[:, rows]
        if m.shape[1] == senders.size:
            return m[:, links]
        raise ValueError(f"message {name!r} of shape {m.shape}: neither one row per agent "
                         f"({net.n_agents}) nor one copy per directed link ({senders.size})")
    return lambda obs: jnp.concatenate([select(k, m).ravel()
                                        for k, m in sorted(obs["messages"].items())])
