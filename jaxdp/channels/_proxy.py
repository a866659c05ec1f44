"""The proxy network an inner ``step`` runs on: its products send rows through the channels.

The proxy routes each product call to its channel, draws the per-step loss states, refuses a
product traced outside the step's trace and marks every call in the traced program
(:func:`~jaxdp.channels._program.mark`: what a step releases is read from there, by
:func:`~jaxdp.channels._program.program_releases`); the paths a call's rows take through a
channel are :class:`~jaxdp.channels._products.ProductPaths`.
"""
from __future__ import annotations

import zlib

import jax
import jax.numpy as jnp
import numpy as np

from jaxdp.channels._base import Transform
from jaxdp.channels._chain import STEP_CALL, Channel
from jaxdp.channels._products import PRODUCTS, ProductPaths
from jaxdp.channels._program import is_analysing, mark, nested_call

try:  # jax >= 0.5: the public home of the trace state
    from jax.extend.core import get_opaque_trace_state as _get_trace_state
except ImportError:  # pragma: no cover
    from jax.core import get_opaque_trace_state as _get_trace_state


class ChannelNetwork(ProductPaths):
    """The network an inner ``step`` sees: products send neighbours' rows through the channel.

    ``channels`` is one :class:`Channel` for every message, or ``{message: Channel}`` routing
    each product call by the ``message=`` name the step gives it (``"*"``: every other message).
    Every product call counts (``calls``) and records what it released in ``released``, under
    the message's name (``"{message}{c}"`` when a step sends the same name twice) or
    ``"{product}{c}"`` for an unnamed call: ``(2E, ...)`` per directed edge, or ``(N, ...)`` per
    sender when broadcast (product calls record nothing with ``aggregate``); a lost message is
    recorded as sent. Dense matrices (``W``, ``P``, ``L``) are refused: a product on them would
    bypass the channel. Other attributes are the wrapped network's.

    Products are numbered at trace time, and each call's noise is keyed by its number, so a
    product must be traced exactly once per time it runs: one called inside a ``lax.scan``,
    ``fori_loop``, ``while_loop``, ``lax.cond``, ``vmap`` or inner ``jit`` of ``step`` (any trace
    other than the one the proxy was built in) would draw the same noise in every round, so it is
    refused with a ``ValueError`` before anything runs: by the reading of the step's program
    (:meth:`ChannelAccounting.program`, which names the construct and its rounds), or, for a step
    traced without it, by the proxy when the call is traced. Python loops are fine: each call is
    traced.

    Nesting: when the wrapped network is itself a ``ChannelNetwork`` (an algorithm that already
    sends its messages through a channel, wrapped again), a broadcast channel without losses
    releases its rows and hands them to the outer network's product under the same name: every
    neighbour receives ``T_outer(T_inner(X_j))``.

    ``memory`` (the channel state's, or ``None`` for zeros) is read and the new memory is left in
    :attr:`memory`: error-feedback memories under ``"{label}{c}/t{i}"``, the per-step link or
    Gilbert–Elliott state of transform ``i`` under ``"t{i}"`` (``"{message}:t{i}"`` on a named
    route). Each call is marked in the traced program (:func:`~jaxdp.channels._program.mark`),
    where the report and the cost counters read what a step releases; the proxy itself keeps only
    the call number (:attr:`calls`, the next call's noise key) and the step's running message
    counts (:attr:`tally`: messages and bits sent, the traced count of lost directed messages).
    """

    def __init__(self, network, channels, params, k, key, memory: dict | None = None,
                 owner: str | None = None, probe: Probe | None = None):
        self._net, self._params, self._k, self._key = network, params, k, key
        self._probe = probe  # records or replays the operands (self_term_flow)
        self._owner = owner or "the algorithm"
        self._trace = _trace_state()
        self._routes = {"*": channels} if isinstance(channels, Channel) else dict(channels)
        self.calls = 0  # the next call's number: its noise key
        self.tally = {"sent": 0, "bits": 0, "dropped": jnp.zeros((), jnp.int32)}
        self.draws: dict = {}  # released key → {transform index: standard draw}
        self.released: dict = {}
        self.memory: dict = dict(memory or {})
        self._links = {route: self._step_states(route, ch) for route, ch in self._routes.items()}

    def __getattr__(self, name):
        if name in ("W", "P", "L", "dense_matrices"):
            raise AttributeError(
                f"a channel-wrapped algorithm cannot read network.{name}: products on it would "
                "bypass the channel; use mix / apply_P / apply_L / apply_A / gather")
        return getattr(self._net, name)

    def mix(self, X, *, message: str | None = None):
        """``W X`` with neighbours' rows through the channel."""
        return self._product("mix", X, message)

    def apply_P(self, X, *, message: str | None = None):
        """``P X`` with neighbours' rows through the channel."""
        return self._product("apply_P", X, message)

    def apply_L(self, X, *, message: str | None = None):
        """``L X`` with neighbours' rows through the channel."""
        return self._product("apply_L", X, message)

    def apply_A(self, X, *, message: str | None = None):
        """``A X`` with neighbours' rows through the channel."""
        return self._product("apply_A", X, message)

    def gather(self, X, *, message: str | None = None):
        """Each directed edge's received ``T(X_{senders[e]})``: ``(N, ...)`` → ``(2E, ...)``; the
        receiver's own row where the message is lost."""
        X, flat, route, channel = self._begin("gather", X, message)
        flat = flat if self._probe is None else self._probe.operand(flat)
        if self._nested:
            self._check_nestable(channel)
            rows = self._release(channel, "gather", message, flat)
            self._count(channel, flat)
            return self._net.gather(rows.reshape(X.shape), message=message)
        keep, dropped = self._keep(channel, route)
        rows = self._gathered(channel, message, flat, keep)
        self._count(channel, flat, dropped)
        return rows.reshape((rows.shape[0],) + X.shape[1:])

    def _product(self, product: str, X, message):
        X, own, route, channel = self._begin(product, X, message)
        flat = own if self._probe is None else self._probe.operand(own)
        if self._nested:
            out = self._nested_product(channel, product, message, flat)
            self._count(channel, flat)
            return self._probed(channel, product, out, own, flat, None).reshape(X.shape)
        keep, dropped = self._keep(channel, route)
        out = self._combine(channel, product, message, flat, keep)
        self._count(channel, flat, dropped)
        return self._probed(channel, product, out, own, flat, keep).reshape(X.shape)

    def _probed(self, channel: Channel, product: str, out, own, sent, keep):
        """``out``, computed from the operand ``sent`` (the recorded one under a replaying
        :class:`Probe`), with each agent's clean self term ``M_ii X_i`` taken from its ``own``
        row instead, and the probe's agent u's moved by the probe's shift: every release is the
        recording run's, and what changed is what agent i alone holds (a channel with
        ``self_term="released"`` mixes its released row: nothing to move)."""
        if self._probe is None or channel.self_term != "clean":
            return out
        diag, edge = self._net._parts(PRODUCTS[product])
        if keep is not None:  # a lost M_ij T(X_j) became M_ij X_i: part of i's self term
            diag = diag + self._net.scatter_sum(edge * (1 - keep))
        out = out + diag[:, None] * (own - sent)
        u = self._probe.agent
        return out if u is None else out.at[u].add(diag[u] * self._probe.shift)

    def _begin(self, product: str, X, message):
        """``(X, X as (N, D) rows, route, Channel)`` of a call, after its checks."""
        self._check_trace(product, message)
        X = jnp.asarray(X)
        flat = X.reshape(X.shape[0], -1)
        route, channel = self._route(message)
        channel.check_sizes([flat.shape[1]])
        return X, mark(flat, product, route, self.calls, self.level), route, channel

    def _check_trace(self, product: str, message) -> None:
        """Refuse a product traced in another trace than the step's (see the class docstring):
        the backstop for a step traced without its program being read first (e.g. ``jax.jit``
        of ``final_metrics`` without ``validate``); while the program is read
        (:func:`~jaxdp.channels._program.analysing`) the call is let through, to be found and
        refused there with the construct it sits in.

        Raises:
          ValueError: naming the algorithm, the product and the message.
        """
        if _trace_state() == self._trace or is_analysing():
            return
        what = f"{product}(message={message!r})" if message is not None else product
        raise ValueError(nested_call(self._owner, what, "a lax.scan, fori_loop, while_loop, "
                                     "lax.cond, vmap or jit"))

    # -- routes -----------------------------------------------------------------------------------
    def _route(self, message):
        """``(route name, Channel)`` of a product call sending ``message``.

        Raises:
          ValueError: no route for the message and no ``"*"`` route.
        """
        if message in self._routes:
            return message, self._routes[message]
        if "*" in self._routes:
            return "*", self._routes["*"]
        raise ValueError(f"no channel for message {message!r}: the channels are for "
                         f"{sorted(self._routes)}; add a '*' entry for every other message")

    @property
    def _nested(self) -> bool:
        return isinstance(self._net, ChannelNetwork)

    @property
    def level(self) -> int:
        """How many channel proxies this one runs on (0: it runs on the network itself)."""
        return self._net.level + 1 if self._nested else 0

    # -- losses -----------------------------------------------------------------------------------
    def _step_states(self, route: str, channel: Channel) -> dict:
        """``{i: state}`` of a route's per-step loss transforms (drawn once, shared by every
        call)."""
        states = {}
        step_key = jax.random.fold_in(self._route_key(route), STEP_CALL)
        for i in channel.losses:
            t = channel.transforms[i]
            if not t.per_step:
                continue
            name = link_key(route, i)
            previous = self.memory.get(name)
            if previous is None and t.stateful:
                previous = jnp.zeros((t.state_size(self._net),), bool)
            states[i] = t.link_state(self._values(t), jax.random.fold_in(step_key, i), previous,
                                     self._net, self._k)
            if t.stateful:
                self.memory[name] = states[i]
        return states

    def _route_key(self, route: str):
        """The key of a route's per-step draws (the channel key for ``"*"``)."""
        return route_key(self._key, route)

    def _keep(self, channel: Channel, route: str):
        """``((2E,) 1/0 float, lost count)``: the directed messages of this call that arrive and
        how many are lost (``(None, None)`` without losses)."""
        if not channel.losses:
            return None, None
        key = jax.random.fold_in(self._key, self.calls)
        lost = jnp.zeros((2 * self._net.n_edges,), bool)
        for i in channel.losses:
            t = channel.transforms[i]
            lost = lost | t.lost(self._values(t), jax.random.fold_in(key, i),
                                 self._links[route].get(i), self._net)
        dropped = jnp.sum(lost, dtype=jnp.int32)
        return (~lost).astype(self._net.w_edge.dtype), dropped

    def _values(self, t: Transform) -> dict:
        return {f: self._params[f] for f in t.fields}

    def _count(self, channel: Channel, flat, dropped=None) -> None:
        """Count one call: its number, its messages and bits sent and its lost messages."""
        sent, bits, _ = call_costs(channel, self._net, flat.shape[0], flat.shape[1],
                                   8 * jnp.dtype(flat.dtype).itemsize)
        self.calls += 1
        self.tally["sent"] += sent
        self.tally["bits"] += bits
        if dropped is not None:
            self.tally["dropped"] = self.tally["dropped"] + dropped


class Probe:
    """What :func:`~jaxdp.channels._wrap.self_term_flow` gives a proxy: in a recording run
    (``replay`` ``None``) each product call's operand rows are kept in :attr:`operands`; in a
    replaying run every call sends the recorded operand instead of its own (so every release
    is the recording run's, same draws), the agents' clean self terms are their own rows, and
    agent ``agent``'s self term is moved by ``shift``."""

    def __init__(self, agent: int | None = None, shift: float = 0.0, replay=None):
        self.agent, self.shift, self.replay = agent, shift, replay
        self.operands: list = []

    def operand(self, flat):
        """The rows call number ``len(operands)`` sends: ``flat`` recorded, or the recording
        run's."""
        sent = flat if self.replay is None else self.replay[len(self.operands)]
        self.operands.append(flat)
        return sent


def call_costs(channel: Channel, network, rows: int, d: int, float_bits: int):
    """``(messages sent, bits sent, copies)`` of one product call of ``rows`` rows of ``d``
    floats: ``rows`` messages when broadcast, else ``2E``, each of :meth:`Channel.message_bits`
    bits; ``copies`` the sender of every independent noisy copy the call draws (one per sender
    when :attr:`Channel.per_sender_copies`, else one per directed edge of ``network``: a time-varying network's union of
    edge sets, links that are down included, since the proxy draws a copy on each)."""
    sent = rows if channel.broadcast else 2 * network.n_edges
    copies = np.arange(rows) if channel.per_sender_copies else network.senders
    return sent, sent * channel.message_bits(d, float_bits), copies


def _trace_state():
    """The current JAX trace, comparable with ``==`` (a product must run in its step's)."""
    return _get_trace_state()


def link_key(route: str, i: int) -> str:
    """The memory key of transform ``i``'s link state on ``route``."""
    return f"t{i}" if route == "*" else f"{route}:t{i}"


def route_key(key, route: str):
    """The key of a route's per-step draws from the channel key (itself for ``"*"``; else folded
    with a stable 31-bit hash of the route name)."""
    if route == "*":
        return key
    return jax.random.fold_in(key, zlib.crc32(route.encode()) & 0x7FFFFFFE)
