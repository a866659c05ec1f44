"""Loss transforms (role ``"loss"``): which directed messages arrive.

:func:`drop`, :func:`gilbert_elliott`, :func:`link_failures` and :func:`activation` decide per
directed edge whether the message arrives. A lost message is replaced at the receiver by the
receiver's own current row: ``M_ij X_i`` instead of ``M_ij T(X_j)``, which keeps W row-stochastic
and the zero row sums of P and L (the semantics of :meth:`jaxdp.network.Network.with_link_mask`
for W, P and L; for the adjacency ``A`` the same substitution is made, so ``deg_i X_i − (A X)_i``
stays the live-edge Laplacian). ``gather`` returns the receiver's own row on a lost edge. Where a
loss transform sits in the stack does not matter.

A loss's per-call draws come from the call's stream; a per-step loss (:attr:`Loss.per_step`:
link and Gilbert–Elliott states, shared by all calls of a step) draws its state once per step
(:meth:`Loss.link_state`) from the step's stream.
"""
from __future__ import annotations

import dataclasses
from typing import ClassVar

import jax
import jax.numpy as jnp

from jaxdp.channels._base import Transform, declare, per_edge, probability


@dataclasses.dataclass(frozen=True)
class Loss(Transform):
    """A transform that loses messages; :meth:`lost` says which, given this step's state.

    Class attributes:
      per_step: its state is drawn once per step (:meth:`link_state`), shared by every call.
    """

    role: ClassVar[str] = "loss"
    loss: ClassVar[bool] = True
    per_step: ClassVar[bool] = False

    def state_size(self, net) -> int:
        """The size of its per-step state (one entry per undirected edge unless overridden)."""
        return net.n_edges

    def link_state(self, p: dict, key, previous, net, k):
        """Its state at step ``k`` from the previous one (``None`` at the start): ``(E,)`` or
        ``(2E,)`` bool (per-step losses only)."""
        return None

    def initial_link_state(self, p: dict, key, net):
        """The state before step 0: a draw from the chain's stationary law (``None`` when the
        state is redrawn every step)."""
        if not self.stateful:
            return None
        a, b = (per_edge(p[f], net) for f in self.fields[:2])
        return jax.random.uniform(key, (self.state_size(net),), net.w_edge.dtype) < a / (a + b)

    def lost(self, p: dict, key, state, net):
        """``(2E,)`` bool: the directed messages of one product call that are lost.

        Args:
          p: its Params values.
          key: this call's key (``drop`` and Gilbert–Elliott draw per call).
          state: this step's :meth:`link_state` (``None`` unless :attr:`per_step`).
          net: the static network.
        """
        return state if state.shape[0] == 2 * net.n_edges else state[net.edge_id]


def _markov(previous, u, p_up_to_down, p_down_to_up):
    """One step of a two-state chain per entry: ``down' = down ? u ≥ q : u < p``."""
    return jnp.where(previous, u >= p_down_to_up, u < p_up_to_down)


def _probabilities(kind: str, values: dict) -> dict:
    """``values`` (``{label: probability}``), each checked in [0, 1]."""
    for label, v in values.items():
        probability(f"{kind} {label}", v)
    return values


def _probability(suffix: str, doc: str):
    """A declared field in [0, 1]."""
    return declare(suffix, domain="probability", doc=doc)


@dataclasses.dataclass(frozen=True)
class Drop(Loss):
    """Each directed message lost with probability ``p`` per call (:func:`drop`)."""

    kind: ClassVar[str] = "drop"
    declared: ClassVar = (_probability("p", "p, each directed message's loss probability per "
                                            "call"),)

    def lost(self, p: dict, key, state, net):
        n = 2 * net.n_edges
        return jax.random.uniform(key, (n,), net.w_edge.dtype) < per_edge(p[self.fields[0]], net)


def drop(p: float = 0.1, *, name: str = "drop") -> Drop:
    """Lose each directed message independently with probability ``p`` (field ``f"{name}_p"`` in
    [0, 1]; one uniform per directed edge and product call). A lost message is replaced by the
    receiver's own row (see the module docstring), so W stays row-stochastic. decent-bench's
    ``UniformDropRate`` loses messages at the same rate but its receivers then omit the term
    (the mixing weights no longer sum to one).

    The loss pattern is a step function of ``p``: ``jax.grad`` in ``p`` is zero; gradients in the
    other fields flow through a run with drops.

    Raises:
      ValueError: ``p`` outside [0, 1].
    """
    return Drop.build(name, _probabilities("drop", {"p": p}))


@dataclasses.dataclass(frozen=True)
class GilbertElliott(Loss):
    """A two-state chain per directed edge, stepped once per step (:func:`gilbert_elliott`)."""

    kind: ClassVar[str] = "gilbert_elliott"
    per_step: ClassVar[bool] = True
    declared: ClassVar = (_probability("p_gb", "p_gb, an edge's good → bad probability per step"),
                          _probability("p_bg", "p_bg, an edge's bad → good probability per step"),
                          _probability("loss_good", "a message's loss probability, good state"),
                          _probability("loss_bad", "a message's loss probability, bad state"))

    @property
    def stateful(self) -> bool:
        return True

    def state_size(self, net) -> int:
        return 2 * net.n_edges

    def link_state(self, p: dict, key, previous, net, k):
        """``(2E,)`` bool: the edges in the "bad" state."""
        u = jax.random.uniform(key, (2 * net.n_edges,), net.w_edge.dtype)
        return _markov(previous, u, *(per_edge(p[f], net) for f in self.fields[:2]))

    def lost(self, p: dict, key, state, net):
        rate = jnp.where(state, per_edge(p[self.fields[3]], net),
                         per_edge(p[self.fields[2]], net))
        return jax.random.uniform(key, (2 * net.n_edges,), net.w_edge.dtype) < rate


def gilbert_elliott(p_gb: float = 0.1, p_bg: float = 0.5, loss_good: float = 0.0,
                    loss_bad: float = 1.0, *, name: str = "ge") -> GilbertElliott:
    """Bursty losses (Gilbert 1960; Elliott 1963): each directed edge carries a two-state Markov
    chain (good → bad with probability ``p_gb``, bad → good with ``p_bg``), stepped once per
    step and shared by all product calls of the step; in a call a message is lost with
    probability ``loss_good`` or ``loss_bad`` given its edge's state. The chain starts from its
    stationary law ``π_bad = p_gb / (p_gb + p_bg)``, so the loss rate is
    ``π_good loss_good + π_bad loss_bad`` at every step. Fields ``f"{name}_p_gb"``,
    ``f"{name}_p_bg"``, ``f"{name}_loss_good"``, ``f"{name}_loss_bad"``, all in [0, 1].

    decent-bench's ``GilbertElliott`` keeps one chain per sender, stepped at every message, and
    starts uniformly; ours is per directed edge and per step (a link's burst spans a step).

    Raises:
      ValueError: a value outside [0, 1], or ``p_gb + p_bg == 0`` (no stationary law).
    """
    values = _probabilities("gilbert_elliott", {
        "p_gb": p_gb, "p_bg": p_bg, "loss_good": loss_good, "loss_bad": loss_bad})
    if not p_gb + p_bg > 0:
        raise ValueError("gilbert_elliott needs p_gb + p_bg > 0 (else the chain has no "
                         f"stationary law); got p_gb={p_gb}, p_bg={p_bg}")
    return GilbertElliott.build(name, values)


@dataclasses.dataclass(frozen=True)
class LinkFailures(Loss):
    """Undirected links down for a whole step, i.i.d. or Markov (:func:`link_failures`).

    Attributes:
      process: ``"iid"`` or ``"markov"``.
    """

    process: str = "iid"
    kind: ClassVar[str] = "link_failures"
    per_step: ClassVar[bool] = True
    undirected: ClassVar[bool] = True
    declared: ClassVar = (_probability("p", "p, a live link's failure probability per step"),
                          _probability("recover", "a failed link's recovery probability per "
                                                  "step (process='markov')"))

    @property
    def stateful(self) -> bool:
        return self.process == "markov"

    def link_state(self, p: dict, key, previous, net, k):
        """``(E,)`` bool: the links down."""
        u = jax.random.uniform(key, (net.n_edges,), net.w_edge.dtype)
        if self.process == "iid":
            return u < p[self.fields[0]]
        return _markov(previous, u, p[self.fields[0]], p[self.fields[1]])


def link_failures(p: float = 0.1, *, process: str = "iid", recover: float = 0.5,
                  name: str = "link") -> LinkFailures:
    """Each UNDIRECTED edge fails for a whole step (both directions, every product call):
    ``"iid"`` independently with probability ``p`` at every step (as
    :class:`jaxdp.network.RandomLinkFailures` with ``p_fail = p``), or ``"markov"``: a live link
    fails with probability ``p`` and a failed one recovers with probability ``recover``
    (starting from the stationary law). Fields ``f"{name}_p"`` (and ``f"{name}_recover"``), in
    [0, 1]. A failed link is the same product as ``Network.with_link_mask`` for W, P and L.

    Raises:
      ValueError: an unknown process, a probability outside [0, 1], or ``p + recover == 0``.
    """
    if process not in ("iid", "markov"):
        raise ValueError(f"link_failures process must be 'iid' or 'markov'; got {process!r}")
    values = {"p": p, "recover": recover} if process == "markov" else {"p": p}
    values = _probabilities("link_failures", values)
    if process == "markov" and not p + recover > 0:
        raise ValueError("link_failures('markov') needs p + recover > 0; got both 0")
    return LinkFailures.build(name, values, process=process)


@dataclasses.dataclass(frozen=True)
class Activation(Loss):
    """Links active only at some steps: cyclic, Poisson clocks or awake agents
    (:func:`activation`).

    Attributes:
      process: ``"cyclic"``, ``"poisson"`` or ``"agents"``.
      period: the cycle of ``"cyclic"``.
    """

    process: str = "poisson"
    period: int = 2
    kind: ClassVar[str] = "activation"
    per_step: ClassVar[bool] = True
    undirected: ClassVar[bool] = True
    declared: ClassVar = (declare("rate", domain="nonnegative",
                                  doc="λ, each edge's Poisson clock rate (process='poisson')"),
                          _probability("p", "p, each agent's wake probability per step "
                                            "(process='agents')"))

    def link_state(self, p: dict, key, previous, net, k):
        """``(E,)`` bool "down" (``(2E,)`` for agent activation)."""
        n_edges, dtype, process = net.n_edges, net.w_edge.dtype, self.process
        if process == "cyclic":
            return (k + jnp.arange(n_edges)) % self.period != 0
        if process == "poisson":
            u = jax.random.uniform(key, (n_edges,), dtype)
            return u >= -jnp.expm1(-jnp.asarray(p[self.fields[0]], dtype))
        u = jax.random.uniform(key, (net.n_agents,), dtype)  # "agents"
        awake = u < jnp.broadcast_to(jnp.asarray(p[self.fields[0]], dtype), (net.n_agents,))
        return ~(awake[net.senders] & awake[net.receivers])


def activation(process: str = "poisson", *, rate: float = 1.0, period: int = 2,
               p: float = 0.5, name: str = "act") -> Activation:
    """Links that are only active at some steps (an inactive link loses both directions):

    * ``"cyclic"``: undirected edge ``e`` is active at step ``k`` iff ``(k + e) % period == 0``
      (round-robin; ``period`` static, ≥ 1; no field).
    * ``"poisson"``: each edge's Poisson clock of rate ``λ`` (field ``f"{name}_rate"`` ≥ 0) ticks
      at least once in a unit step with probability ``1 − e^{−λ}``: then it is active.
    * ``"agents"``: each agent wakes with probability ``p`` (field ``f"{name}_p"`` in [0, 1]) and
      an edge is active iff both ends are awake: the network of
      :class:`jaxdp.network.RandomActivation` (which also freezes sleeping agents; the channel
      does not).

    Raises:
      ValueError: an unknown process, ``period < 1``, ``rate < 0`` or ``p`` outside [0, 1].
    """
    if process == "cyclic":
        if not isinstance(period, int) or period < 1:
            raise ValueError(f"activation period must be an integer >= 1; got {period!r}")
        return Activation(name, process="cyclic", period=period)
    if process == "poisson":
        if not float(rate) >= 0:
            raise ValueError(f"activation rate must be >= 0; got {rate!r}")
        return Activation.build(name, {"rate": rate}, process="poisson")
    if process == "agents":
        return Activation.build(name, _probabilities("activation", {"p": p}), process="agents")
    raise ValueError(f"activation process must be 'cyclic', 'poisson' or 'agents'; got {process!r}")
