r"""The federated round on the engine's network: a data-less server as the average of K_N.

**Design.** The clients are the N agents of the :class:`~jaxdp.problems.Problem` (each holds its
shard); the server holds no data and is *not* an agent row. Its aggregate of the uploads
``U`` (N, d) is ``N·(W U)_0`` on the complete graph K_N with Metropolis weights, where
``W = 11ᵀ/N`` (:func:`~jaxdp.network.check_averaging`; the same structure as DP-ADMM's trainer,
:mod:`jaxdp.algorithms.dpadmm`), and its broadcast model is kept as N equal rows (what each client
receives). Why not a star whose hub is the server: the hub would be an agent of the Problem — with
data, a row of every ``(N, d)`` state and a per-agent ε — and a star's W does not average; a
dedicated round type outside ``Network`` would bypass the channels, the cost counter and the
release counting, which all see the products. Here every upload goes through ``network.mix(...,
message="update")``, so a channel (:func:`jaxdp.channels.with_channel`) acts on the uploads, the
costs count the products, and the privacy reports are per client (agent) unchanged. The server's
sum is row 0 of that product, broadcast to every client (:attr:`Federated.broadcasts_product_row`):
a channel must release that row's self term too (``chain(..., broadcast=True,
self_term="released")``), else client 0's upload would reach every client clean and the
channel's report is ``inf`` (:meth:`jaxdp.channels.ChannelAccounting.bypass`); so is one behind
``weighting="data"``, whose server divides by the clients' data sizes.

A round ``t`` (one engine step), with ``x^t`` the server model:

1. Client selection ``S_t`` from the step's uniform draws ``u ∈ [0, 1)^N`` (:func:`select`):
   ``"uniform"`` — the ``clients`` smallest ``u`` (a uniformly random subset of fixed size, as in
   McMahan et al. 2017, Algorithm 1, ``S_t`` = random set of ``m`` clients); ``"poisson"`` — each
   client independently with probability ``rate`` (``u_i < rate``; the sampling DP-FedAvg's
   amplification assumes, McMahan et al. 2018, Algorithm 1); ``"data_size"`` — ``m`` clients
   without replacement with probability ∝ ``n_k`` (successive sampling, as numpy's
   ``choice(replace=False, p=n/Σn)``), drawn as the top ``m`` of ``log n_k − log(−log u_k)``
   (Gumbel top-k; Efraimidis & Spirakis 2006); ``"fair"`` — the ``m`` clients selected least
   often so far, ties to the lower index (decent-bench's ``FairSelection``, deterministic);
   ``"high_loss"`` — the ``m`` clients whose local loss ``F_k(x_k)`` at their current local model
   ``x_k`` is highest, ties broken at random by ``u`` (decent-bench's ``HighLossSelection``, after
   Power-of-Choice, Cho, Wang & Joshi, AISTATS 2022, without its extra round of loss queries at
   the server model: ``x_k`` is the model client k last trained, ``x⁰`` before its first
   selection). The cumulative selection counts are kept in the state, and under ``"high_loss"``
   the losses ``F_k(x_k)`` too (:class:`FedLossState`, or :func:`with_loss` of an algorithm's
   state; updated when client k trains). The
   high-loss and data-size selections read the clients' data
   (:meth:`Federated.selection_reads_data`): who is selected then depends on every client's data,
   so DP-FedAvg and LDP-FedAvg refuse them, and a channel's report on such a round is ``inf``.
2. Every client runs ``local_steps`` (E) full-batch gradient steps of its local objective from
   ``x^t`` (a fixed-count inner ``lax.scan``, :func:`local_descent`); only the selected upload.
3. The server aggregates the selected uploads (:func:`server_sum`) and updates ``x^{t+1}``.

Who computes step 2 (:class:`Rows`): under a selection of a fixed count K < N (every selection
but ``"poisson"``, with ``clients`` set) and ``gather=True`` (the default), the round gathers the K
selected clients' rows (their models and states, their data shards through
:meth:`~jaxdp.problems.Problem.take_agents`, their per-agent parameters and noise draws), runs the
local steps on the ``(K, d)`` stack and scatters the results back: K/N of the masked round's local
work. Otherwise (Poisson sampling, whose count varies; every client; or ``gather=False``) all N
clients compute step 2 (stacked, one program) and the unselected clients' results are masked out.
Both give the same values: each client's row is computed from its own rows alone, and every
random draw is indexed by the client (drawn for all N, then gathered), never by its position in
the gathered stack. Either way the unselected clients' results never leave the client (zero rows
in the messages), so the messages, the products and the privacy reports are the same.
"""
from __future__ import annotations

import dataclasses
import functools
from typing import ClassVar

import chex
import jax
import jax.numpy as jnp

from jaxdp._types import AgentArray, Array, per_agent
from jaxdp.core import Algorithm, param, zeros_like_models
from jaxdp.network import check_averaging
from jaxdp.privacy.contract import mechanism_site

SELECTIONS = ("uniform", "poisson", "data_size", "fair", "high_loss")
"""Client selection schemes (see the module)."""
DATA_SELECTIONS = {"high_loss": "their local losses, a function of their data",
                   "data_size": "their data sizes, which replacing a client's data set may change"}
"""The selections that read the clients' data, and what they read."""
WEIGHTINGS = ("data", "uniform")
"""Server weights of the selected uploads: by data size ``n_k`` (McMahan et al. 2017, eq. of
Algorithm 1: ``Σ_{k∈S} n_k/n_S``) or uniform (``1/|S|``)."""


@chex.dataclass(frozen=True)
class FedParams:
    alpha: float = param(0.05, domain="positive", doc="η (η_l), client learning rate")
    server_lr: float = param(1.0, domain="positive", per_agent=False,
                             doc="η_g, server step on the averaged update (1: FedAvg's average)")


@chex.dataclass(frozen=True)
class FedState:
    x: AgentArray  # (N, d) x^t, the server model as each client receives it (equal rows)
    counts: Array  # (N,) int, how many rounds selected each client so far


@chex.dataclass(frozen=True)
class FedLossState(FedState):
    loss: Array  # (N,) F_k(x_k), each client's loss at the local model it last trained


@mechanism_site("selection", {"u": "z", "sizes": "p", "counts": "p", "loss": "p"},
                releases=False)
def select(u: Array, selection: str, clients: int, rate: float, sizes: Array,
           counts: Array, loss: Array | None = None) -> Array:
    """``(N,)`` bool selection mask from uniform draws ``u`` (see the module): ``sizes`` are the
    clients' data sizes (``"data_size"``), ``counts`` their past selections (``"fair"``), ``loss``
    their current local losses (``"high_loss"``)."""
    if selection == "poisson":
        return u < rate
    if selection == "high_loss":  # highest loss first, ties in the order of u (random)
        return rank_of_order(jnp.lexsort((u, -loss))) < clients
    if selection == "fair":
        return rank_of(counts) < clients  # stable: ties keep the lower index first
    if selection == "data_size":
        return rank_of(-(jnp.log(sizes) - jnp.log(-jnp.log(u)))) < clients  # Gumbel top-k
    return rank_of(u) < clients  # ties have probability 0


def rank_of(v: Array) -> Array:
    """Each entry's rank in ``v`` ascending (a stable sort)."""
    return rank_of_order(jnp.argsort(v, stable=True))


def rank_of_order(order: Array) -> Array:
    """Each entry's rank from the permutation ``order`` that sorts the entries."""
    return jnp.argsort(order, stable=True)


def server_sum(network, values: AgentArray, message: str) -> Array:
    """``(d,)`` the server's sum ``Σ_i values_i`` of the uploads, ``N·(W values)_0`` with
    ``W = 11ᵀ/N`` (one product, so a channel sees every upload under ``message``)."""
    return network.n_agents * network.mix(values, message=message)[0]


@dataclasses.dataclass(frozen=True)
class Rows:
    """The clients whose local work a round computes, and how it returns to the ``(N, ...)``
    stack: with ``idx`` ``None`` every client (the unselected masked out by :meth:`put`); with
    ``idx`` the ``(K,)`` selected clients in increasing order, gathered by :meth:`take` and
    scattered back by :meth:`put` (see the module). Built inside the traced step."""

    mask: Array  # (N,) bool, the round's selection S_t
    idx: Array | None = None  # (K,) int, the selected clients, or None: every client

    def take(self, a):
        """A per-agent value ``(N, ...)`` on the computed rows (a scalar as it is)."""
        return a if self.idx is None or jnp.ndim(a) == 0 else jnp.asarray(a)[self.idx]

    def put(self, rows: Array, fill=0) -> Array:
        """The computed ``rows`` back on the ``(N, ...)`` stack: the selected clients' rows, and
        ``fill`` (a scalar or an ``(N, ...)`` array) for the others."""
        if self.idx is None:
            return jnp.where(self.mask.reshape(self.mask.shape + (1,) * (rows.ndim - 1)), rows,
                             fill)
        full = jnp.broadcast_to(jnp.asarray(fill, rows.dtype), self.mask.shape + rows.shape[1:])
        return full.at[self.idx].set(rows)

    def problem(self, problem):
        """The problem of the computed clients (:meth:`~jaxdp.problems.Problem.take_agents`)."""
        return problem if self.idx is None else problem.take_agents(self.idx)


def local_descent(x: AgentArray, problem, alpha, steps, correction,
                  rows: Rows | None = None) -> AgentArray:
    """E = ``steps`` local steps ``φ ← φ − α(∇F(φ) + correction(φ))`` from ``φ = x``, every
    client at once (``alpha`` scalar or ``(N,)``; a fixed-count ``lax.scan``). ``steps`` is one
    count for all or a tuple ``(τ_1, ..., τ_N)`` (heterogeneous local work, as FedNova studies):
    the scan runs ``max τ_i`` steps and client i stops after its τ_i. With ``rows``
    (:class:`Rows`) only its clients: ``x`` ``(N, d)``, ``alpha``, the counts and the problem are
    taken to them, and ``correction`` maps their rows, as the result is (``(K, d)`` gathered)."""
    rows = Rows(jnp.ones(x.shape[:1], bool)) if rows is None else rows
    x, problem = rows.take(x), rows.problem(problem)
    a = per_agent(rows.take(alpha), x)
    taus = rows.take(jnp.asarray(steps))[:, None] if isinstance(steps, tuple) else None

    def body(phi, k):
        moved = phi - a * (problem.local_grads(phi) + correction(phi))
        return (moved if taus is None else jnp.where(k < taus, moved, phi)), None
    length = max(steps) if isinstance(steps, tuple) else steps
    return jax.lax.scan(body, x, jnp.arange(length))[0]


def step_counts(steps, like: Array) -> Array:
    """``τ`` broadcast against ``like`` ``(N, d)``: the scalar count or the ``(N, 1)`` counts."""
    return jnp.asarray(steps, like.dtype)[:, None] if isinstance(steps, tuple) else steps


def broadcast(v: Array, n: int) -> AgentArray:
    """The server's ``(d,)`` vector as the ``(N, d)`` rows its clients receive."""
    return jnp.broadcast_to(v, (n,) + v.shape)


def check_config(who: str, selection: str, clients, rate: float, local_steps: int,
                 weighting: str) -> None:
    """Static configuration, before any run (naming the bad value)."""
    if selection not in SELECTIONS:
        raise ValueError(f"{who}: selection must be one of {SELECTIONS}; got {selection!r}")
    if weighting not in WEIGHTINGS:
        raise ValueError(f"{who}: weighting must be one of {WEIGHTINGS}; got {weighting!r}")
    counts = local_steps if isinstance(local_steps, tuple) and local_steps else (local_steps,)
    for field, value in tuple(("local_steps", c) for c in counts) + (
            (("clients", clients),) if clients is not None else ()):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{who}: {field} must be an int >= 1; got {value!r}")
    if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not 0 < rate <= 1:
        raise ValueError(f"{who}: rate (Poisson client sampling q) must be in (0, 1]; got "
                         f"{rate!r}")


@functools.cache
def with_loss(state_cls: type) -> type:
    """``state_cls`` plus the clients' losses ``loss`` (N,), the state of an algorithm run with
    ``selection="high_loss"`` (one class per state class, so the pytree type is stable)."""
    if state_cls is FedState:
        return FedLossState

    @chex.dataclass(frozen=True)
    class WithLoss(state_cls):
        loss: Array  # (N,) F_k(x_k), each client's loss at the local model it last trained

    WithLoss.__name__ = WithLoss.__qualname__ = state_cls.__name__.replace("State", "LossState")
    return WithLoss


@dataclasses.dataclass(frozen=True)
class Federated(Algorithm):
    """A federated round (module docstring). Subclasses give the client update and the server rule.

    Static configuration: ``local_steps`` (E, or a tuple of one count per client), ``selection``
    (:data:`SELECTIONS`), ``clients`` (the fixed count of ``"uniform"``, ``"data_size"`` and
    ``"fair"``; ``None``: every client), ``rate`` (q of ``"poisson"``), ``weighting``
    (:data:`WEIGHTINGS`), ``gather`` (compute only the selected clients where their count is
    fixed, :meth:`gathers`; ``False``: every client, masked; the same values either way). The
    gathered round does K/N of the local work, but under many vmapped seeds each seed gathers its
    own clients' shards, where the masked round shares one copy of the data among the seeds; and
    least squares' masked round computes its normal equations once a run, the gathered one each
    round for its K clients (:meth:`~jaxdp.problems.Problem.local_grads`). For least squares
    (d = 10, m = 200) at K/N = 0.2 the masked round was 2–3× faster on CPU (1 and 30 seeds), for
    an MLP the gathered one ~4× (``benchmarks/README.md``, the gathered federated round).
    ``"high_loss"`` needs an algorithm whose round updates the clients' losses (``tracks_loss``,
    through :meth:`advance`).
    """

    params_type = FedParams
    server_average = True
    broadcasts_product_row: ClassVar[bool] = True
    """The server's sum is row 0 of a product (:func:`server_sum`) and reaches every client in
    the broadcast: behind a channel that keeps a sender's own row clean (``self_term="clean"``)
    that row holds client 0's upload outside the channel, so the channel's report is ``inf``
    (:meth:`jaxdp.channels.ChannelAccounting.bypass`) unless its self term is released too."""
    tracks_loss: ClassVar[bool] = False  # its rounds keep FedLossState under "high_loss"
    local_steps: int | tuple[int, ...] = 5
    selection: str = "uniform"
    clients: int | None = None
    rate: float = 1.0
    weighting: str = "data"
    gather: bool = True

    def __post_init__(self):
        check_config(self.name, self.selection, self.clients, self.rate, self.local_steps,
                     self.weighting)
        if not isinstance(self.gather, bool):
            raise ValueError(f"{self.name}: gather must be True or False; got {self.gather!r}")
        if self.selection == "high_loss" and not self.tracks_loss:
            raise ValueError(f"{self.name}: selection='high_loss' is not available: its state "
                             "does not keep the clients' local losses (tracks_loss is False)")

    def validate(self, params, problem, network) -> None:
        super().validate(params, problem, network)
        check_averaging(network, self.name)
        if isinstance(self.local_steps, tuple) and len(self.local_steps) != network.n_agents:
            raise ValueError(f"{self.name}: local_steps must have one count per client "
                             f"({network.n_agents}); got {len(self.local_steps)}")
        if self.clients is not None and self.clients > network.n_agents:
            raise ValueError(f"{self.name}: clients must be <= the N = {network.n_agents} "
                             f"clients of the network; got {self.clients}")

    def init(self, key, problem, network, params):
        del key, params
        x0 = zeros_like_models(problem, network)
        counts = jnp.zeros(network.n_agents, jnp.int32)
        if self.selection == "high_loss":
            return FedLossState(x=x0, counts=counts, loss=problem.local_losses(x0))
        return FedState(x=x0, counts=counts)

    def extend(self, base, state_cls: type, **fields):
        """``state_cls`` with ``base``'s selection fields (``x``, ``counts`` and, under
        ``"high_loss"``, ``loss``) and ``fields``: a subclass's :meth:`init` from the base one."""
        if self.selection == "high_loss":
            return with_loss(state_cls)(x=base.x, counts=base.counts, loss=base.loss, **fields)
        return state_cls(x=base.x, counts=base.counts, **fields)

    def noise(self, key, state, params, k):
        del params, k
        return {"u": jax.random.uniform(key, state.counts.shape, state.x.dtype)}

    def select_clients(self, noise, state, problem) -> Array:
        """The round's selection mask ``S_t`` from its draws (and the state, for ``"fair"``)."""
        n = state.counts.shape[0]
        return select(noise["u"], self.selection, n if self.clients is None else self.clients,
                      self.rate, problem.mask.sum(axis=1), state.counts,
                      getattr(state, "loss", None))

    def gathers(self, n: int) -> bool:
        """Whether a round of N = ``n`` clients computes only the selected ones (:class:`Rows`):
        ``gather`` on and a fixed count ``clients`` < N (every selection but ``"poisson"``,
        whose count varies)."""
        return (self.gather and self.selection != "poisson" and self.clients is not None
                and self.clients < n)

    def rows(self, noise, state, problem) -> Rows:
        """The round's selection (:meth:`select_clients`) and the clients it computes
        (:class:`Rows`): the ``clients`` selected ones in increasing order where :meth:`gathers`,
        else every client, the unselected masked out."""
        mask = self.select_clients(noise, state, problem)
        if not self.gathers(mask.shape[0]):
            return Rows(mask)
        return Rows(mask, jnp.flatnonzero(mask, size=self.clients))

    def selection_reads_data(self) -> str:
        """``""``, or why the selection depends on the clients' data (:data:`DATA_SELECTIONS`):
        who is selected, and so what every other client uploads, then depends on one client's
        data, which an accounting of each client's own releases does not cover."""
        if self.selection not in DATA_SELECTIONS:
            return ""
        return (f"{self.name} selects the clients by {DATA_SELECTIONS[self.selection]}: who is "
                "selected, and so what the other clients upload, depends on the data the "
                "relation replaces, which is not accounted by a report of each client's own "
                "releases")

    def server_reads_data(self) -> str:
        """``""``, or why the server's computation reads the clients' data beyond their uploads:
        under ``weighting="data"`` it weighs and divides by the data sizes ``n_k``, which the
        relation (a client's whole data set replaced) may change, so the broadcast moves with
        client k's size whatever a channel does to its upload."""
        if self.weighting != "data":
            return ""
        return (f"{self.name} weighs the uploads by the clients' data sizes n_k "
                "(weighting='data') and its server divides by Σ_S n_k: a client's size, which "
                "replacing its data set may change, reaches every client in the broadcast "
                "outside any channel; use weighting='uniform'")

    def advance(self, state, rows: Rows, local: AgentArray, problem, **fields):
        """The next state: ``fields`` replaced, the selection counts advanced by ``rows.mask``,
        and under ``"high_loss"`` each selected client's loss at its new local model ``local``
        (the computed rows of :class:`Rows`)."""
        new = state.replace(counts=state.counts + rows.mask, **fields)
        if self.selection != "high_loss":
            return new
        return new.replace(loss=rows.put(rows.problem(problem).local_losses(local), state.loss))

    def counters(self, state):
        return {"client_selections": jnp.sum(state.counts)}

    def weights(self, problem, mask: Array, dtype) -> Array:
        """``(N,)`` server weights of the selected clients (``n_k`` or 1; 0 off ``S_t``)."""
        w = problem.mask.sum(axis=1) if self.weighting == "data" else jnp.ones(mask.shape)
        return jnp.where(mask, w, 0).astype(dtype)

    def participation(self, n: int) -> float:
        """The expected fraction of clients selected per round: ``clients/N`` or q."""
        if self.selection == "poisson":
            return float(self.rate)
        return 1.0 if self.clients is None else self.clients / n

    def costs_per_step(self, problem, network, params) -> dict[str, float]:
        """The traced costs (:meth:`Algorithm.costs_per_step`) as the method spends them: the
        selected clients' local work only (a masked round computes every client's, stacked; a
        gathered one, :meth:`gathers`, the selected ones, as traced), and per server product one
        upload per selected client plus one broadcast per client, instead of the ``2E`` directed
        messages of a K_N product."""
        costs = super().costs_per_step(problem, network, params)
        n, frac = network.n_agents, self.participation(network.n_agents)
        per_round = n * (frac + 1.0)
        scale = per_round / max(costs["messages"] / max(costs["rounds"], 1.0), 1.0)
        work = 1.0 if self.gathers(n) else frac
        return {**costs, "grad_calls": costs["grad_calls"] * work,
                "sample_grads": costs["sample_grads"] * work,
                "messages": costs["messages"] * scale, "bits": costs["bits"] * scale}

    def average(self, network, uploads: AgentArray, weights: Array, message: str):
        """``((d,) Σ_{k∈S} w_k U_k / Σ_{k∈S} w_k, (N, d) w_k U_k)``: the average (0 when nobody
        is selected) and what the product carries, the step's message: each selected client
        sends ``w_k U_k`` (``n_k U_k`` under ``weighting="data"``, ``U_k`` under ``"uniform"``;
        the server divides by ``Σ w_k``)."""
        total = jnp.sum(weights)
        sent = weights[:, None] * uploads
        summed = server_sum(network, sent, message)
        return jnp.where(total > 0, summed / jnp.where(total > 0, total, 1), 0), sent


__all__ = ["DATA_SELECTIONS", "FedLossState", "FedParams", "FedState", "Federated", "Rows",
           "SELECTIONS", "WEIGHTINGS", "broadcast", "local_descent", "rank_of", "rank_of_order",
           "select", "server_sum", "step_counts", "with_loss"]
