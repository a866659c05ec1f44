"""``with_channel(algorithm, channel)``: any algorithm, its messages sent through a channel.

The wrapped algorithm runs the inner ``step`` unchanged on a proxy network whose products
(``mix``, ``apply_P``, ``apply_L``, ``apply_A``, ``gather``) send every neighbour's contribution
through the channel before combining: for ``M ∈ {W, P, L, A}`` and a message ``X``,

.. math:: (M X)_i = M_{ii} X_i + \\sum_{j \\ne i} M_{ij}\\, T(X_j;\\ \\xi_{ij})

— the self term uses the agent's own clean value, as a real agent does. With per-message noise
(the default) receiver ``i`` gets its own draw ``ξ_ij`` on every directed edge ``j → i``; with
``broadcast=True`` sender ``j`` draws once per product call and every neighbour receives the same
``T(X_j; ξ_j)`` (cheaper, and one release instead of ``deg_j``).

Draws: ``noise`` returns the inner algorithm's draws unchanged (same key: common random numbers)
and a key of a separate stream; call ``c`` of the proxy (in trace order) draws transform ``t``'s
standard draw from ``fold_in(fold_in(channel_key, c), t)`` and scales it by its Params, so
``step`` stays deterministic given ``noise`` and metrics stay differentiable in the scales.

Params: one flat chex dataclass holding the inner algorithm's fields and the channel's
(``clip_norm``, ``gauss_sigma``, ...), so ``jaxdp.grid``/``sweep`` and the ε calibrator work on it
unchanged; the channel's first noise scale is the :attr:`noise_field`.

Losses: a lost message is replaced by the receiver's own row (``M_ij X_i``), i.e. the product runs
with the lost edge's weight moved to the receiver's diagonal. State: a channel without memory or
losses leaves the inner state unchanged; otherwise the state is a :class:`ChannelState` carrying
the error-feedback memories, the link chains and the message counts (:meth:`WithChannel.counters`).
"""
from __future__ import annotations

import dataclasses
import functools
import zlib
from typing import Any, ClassVar

import chex
import jax
import jax.numpy as jnp
import numpy as np

from jaxdp.algorithms._base import Algorithm, check_per_agent_value
from jaxdp._precision import tensordot
from jaxdp.privacy import check_sampler

try:  # jax >= 0.5: the public home of the trace state
    from jax.extend.core import get_opaque_trace_state as _get_trace_state
except ImportError:  # pragma: no cover
    from jax.core import get_opaque_trace_state as _get_trace_state
from jaxdp.channels._transforms import STEP_CALL, STEP_LOSSES, Channel, Transform

CHANNEL_STREAM = 0x6368616E
"""``fold_in`` constant of the channel's key stream (distinct from the inner algorithm's draws)."""
NESTED_STREAM = 0x6E657374
"""``fold_in`` constant of the key an inner algorithm with a channel of its own draws from."""
GIVEN_SUM_STREAM = 0x67697665
"""``fold_in`` constant of the key of per-message Gaussian draws given their receiver sums."""

PRODUCTS = {"mix": "W", "apply_P": "P", "apply_L": "L", "apply_A": "A"}
_DOMAINS = {"positive": (lambda v: v > 0, "> 0"), "nonnegative": (lambda v: v >= 0, ">= 0"),
            "probability": (lambda v: (v >= 0) & (v <= 1), "in [0, 1]")}

# ℓ_q bound of a vector clipped to norm C in ``norm``, over C (``d`` the flattened message size).
_L2_BOUND = {"l2": lambda d: 1.0, "linf": np.sqrt, "l1": lambda d: 1.0}
_L1_BOUND = {"l2": np.sqrt, "linf": lambda d: float(d), "l1": lambda d: 1.0}


@functools.lru_cache(maxsize=None)
def merged_params_type(inner_type: type, defaults: tuple[tuple[str, float], ...]) -> type:
    """The flat Params type: ``inner_type``'s fields then the channel's (cached: equal wrappers
    share one type, hence one compiled program).

    Raises:
      ValueError: a channel field that is also a field of ``inner_type``.
    """
    inner = [(f.name, Any, _copy_default(f)) for f in dataclasses.fields(inner_type)]
    clash = sorted({n for n, _, _ in inner} & {f for f, _ in defaults})
    if clash:
        raise ValueError(f"channel Params fields {clash} clash with {inner_type.__name__}'s; give "
                         "the transforms another name= prefix")
    fields = inner + [(f, Any, dataclasses.field(default=v)) for f, v in defaults]
    namespace = {"__annotations__": {n: t for n, t, _ in fields}, "__module__": __name__,
                 **{n: f for n, _, f in fields}}
    return chex.dataclass(frozen=True)(type(f"{inner_type.__name__}WithChannel", (), namespace))


def _copy_default(f: dataclasses.Field):
    if f.default is not dataclasses.MISSING:
        return dataclasses.field(default=f.default)
    if f.default_factory is not dataclasses.MISSING:
        return dataclasses.field(default_factory=f.default_factory)
    return dataclasses.field()


class ChannelNetwork:
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
    other than the one the proxy was built in) would draw the same noise in every round and be
    counted once, so it is refused with a ``ValueError`` at the first trace (before anything runs;
    :meth:`WithChannel.validate` traces one step). Python loops are fine: each call is traced.

    Nesting: when the wrapped network is itself a ``ChannelNetwork`` (an algorithm that already
    sends its messages through a channel, wrapped again), a broadcast channel without losses
    releases its rows and hands them to the outer network's product under the same name: every
    neighbour receives ``T_outer(T_inner(X_j))``.

    ``memory`` (the channel state's, or ``None`` for zeros) is read and the new memory is left in
    :attr:`memory`: error-feedback memories under ``"{label}{c}/t{i}"``, the per-step link or
    Gilbert–Elliott state of transform ``i`` under ``"t{i}"`` (``"{message}:t{i}"`` on a named
    route). Per call, ``routes`` (the route taken), ``sizes`` (message size ``D``),
    ``float_bits``, ``sent`` (messages sent: ``2E``, or ``N`` when broadcast), ``bits`` (bits
    sent) and ``dropped`` (traced count of lost directed messages) are recorded.
    """

    def __init__(self, network, channels, params, k, key, memory: dict | None = None,
                 owner: str | None = None):
        self._net, self._params, self._k, self._key = network, params, k, key
        self._owner = owner or "the algorithm"
        self._trace = _trace_state()
        self._routes = {"*": channels} if isinstance(channels, Channel) else dict(channels)
        self.calls = 0
        self.routes: list[str] = []
        self.sizes: list[int] = []  # flattened message size D of each call
        self.float_bits: list[int] = []
        self.sent: list[int] = []
        self.bits: list[int] = []
        self.draws: dict = {}  # released key → {transform index: standard draw}
        self.dropped: list = []
        self.released: dict = {}
        self.copies: list = []  # per call: the sender of every independent noisy copy it draws
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
        self._check_trace("gather", message)
        X = jnp.asarray(X)
        flat = X.reshape(X.shape[0], -1)
        route, channel = self._route(message)
        channel.check_sizes([flat.shape[1]])
        if self._nested:
            self._check_nestable(channel)
            rows = self._release(channel, route, "gather", message, flat)
            return self._net.gather(rows.reshape(X.shape), message=message)
        keep = self._keep(channel, route)
        rows = self._release(channel, route, "gather", message, flat)
        if self._per_sender(channel):
            rows = rows[self._net.senders]
        if keep is not None:
            rows = keep[:, None] * rows + (1 - keep[:, None]) * flat[self._net.receivers]
        return rows.reshape((rows.shape[0],) + X.shape[1:])

    def _check_trace(self, product: str, message) -> None:
        """Refuse a product traced in another trace than the step's (see the class docstring).

        Raises:
          ValueError: naming the algorithm, the product and the message.
        """
        if _trace_state() == self._trace:
            return
        what = f"{product}(message={message!r})" if message is not None else product
        raise ValueError(
            f"{self._owner} calls network.{what} inside a lax.scan, fori_loop, while_loop, "
            "lax.cond, vmap or jit within its step; a channel numbers product calls when the "
            "step is traced and keys each call's noise by that number, so every round of the loop "
            "(every vmapped row) would get the same noise and be accounted as one release. Call "
            "the product in a Python loop (one traced call per round) instead")

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

    # -- losses -----------------------------------------------------------------------------------
    def _step_states(self, route: str, channel: Channel) -> dict:
        """``{i: state}`` of a route's per-step loss transforms (drawn once, shared by every call)."""
        states = {}
        step_key = jax.random.fold_in(self._route_key(route), STEP_CALL)
        for i in channel.losses:
            t = channel.transforms[i]
            if t.kind not in STEP_LOSSES:
                continue
            name = link_key(route, i)
            previous = self.memory.get(name)
            if previous is None and t.stateful:
                size = 2 * self._net.n_edges if t.kind == "gilbert_elliott" else self._net.n_edges
                previous = jnp.zeros((size,), bool)
            states[i] = t.link_state(self._values(t), jax.random.fold_in(step_key, i), previous,
                                     self._net, self._k)
            if t.stateful:
                self.memory[name] = states[i]
        return states

    def _route_key(self, route: str):
        """The key of a route's per-step draws (the channel key for ``"*"``)."""
        return self._key if route == "*" else jax.random.fold_in(self._key, _name_hash(route))

    def _keep(self, channel: Channel, route: str):
        """``(2E,)`` 1/0 float: the directed messages of this call that arrive (``None`` without
        losses); records the call's lost count."""
        if not channel.losses:
            return None
        key = jax.random.fold_in(self._key, self.calls)
        lost = jnp.zeros((2 * self._net.n_edges,), bool)
        for i in channel.losses:
            t = channel.transforms[i]
            lost = lost | t.lost(self._values(t), jax.random.fold_in(key, i),
                                 self._links[route].get(i), self._net)
        self.dropped.append(jnp.sum(lost, dtype=jnp.int32))
        return (~lost).astype(self._net.w_edge.dtype)

    def _values(self, t: Transform) -> dict:
        return {f: self._params[f] for f in t.fields}

    # -- products ---------------------------------------------------------------------------------
    def _product(self, product: str, X, message):
        self._check_trace(product, message)
        X = jnp.asarray(X)
        flat = X.reshape(X.shape[0], -1)
        route, channel = self._route(message)
        channel.check_sizes([flat.shape[1]])
        name = PRODUCTS[product]
        if self._nested:
            return self._nested_product(channel, route, product, message, flat).reshape(X.shape)
        diag, edge = self._net._parts(name)
        keep = self._keep(channel, route)
        if keep is not None:  # a lost M_ij T(X_j) becomes M_ij X_i
            diag = diag + self._net.scatter_sum(edge * (1 - keep))
            edge = edge * keep
        if channel.additive_tail and not channel.broadcast:  # aggregate=True is one of these
            tail = channel.transforms[channel.rows[-1]]
            float_gaussian = tail.kind == "gaussian" and not tail.lattice
            noisy_product = self._aggregate if float_gaussian else self._additive
            return noisy_product(channel, route, product, message, flat, diag, edge,
                                 keep).reshape(X.shape)
        rows = self._release(channel, route, product, message, flat)
        if self._per_sender(channel):  # M R (+ diag (X − R): the self term stays clean)
            out = self._clean(name, rows, diag, edge, keep)
            if channel.self_term == "clean":
                out = out + diag[:, None] * (flat - rows)
        else:
            out = diag[:, None] * flat + self._net.scatter_sum(edge[:, None] * rows)
        return out.reshape(X.shape)

    def _nested_product(self, channel: Channel, route: str, product: str, message, flat):
        """The product of rows released by this (inner, broadcast) channel on the outer network
        (:meth:`_check_nestable` first)."""
        self._check_nestable(channel)
        rows = self._release(channel, route, product, message, flat)
        out = getattr(self._net, product)(rows, message=message)
        if channel.self_term == "clean":
            diag, _ = self._net._parts(PRODUCTS[product])
            out = out + diag[:, None] * (flat - rows)
        return out

    def _check_nestable(self, channel: Channel) -> None:
        """Refuse a per-message or lossy channel inside another (its releases are not one row
        per sender).

        Raises:
          ValueError: naming the channel.
        """
        if channel.losses or not self._per_sender(channel):
            raise ValueError(f"channel {channel.name!r} sends per-message draws or loses messages, "
                             "so it cannot run inside another channel; only a broadcast channel "
                             "without losses nests")

    @staticmethod
    def _per_sender(channel: Channel) -> bool:
        """Whether every neighbour of a sender receives the same row (broadcast, or no random
        transform): then products run on the ``(N, D)`` rows (a GEMM on the dense backend)."""
        return channel.broadcast or channel.first_random == len(channel.transforms)

    def _clean(self, name: str, v, diag, edge, keep):
        """``M v`` (``M`` with its lost edges moved to the diagonal when ``keep`` is given)."""
        if keep is None:
            return self._net._product(name, v)
        if self._net.backend == "dense":
            return tensordot(self._net._dense(diag, edge), v, axes=1)
        return diag[:, None] * v + self._net.scatter_sum(edge[:, None] * v[self._net.senders])

    def _pre_noise(self, channel: Channel, product: str, message, flat):
        """Sender rows through every row transform before the (last) noise, and that noise's
        index."""
        last = channel.rows[-1]
        pre = channel.apply(flat, self._params, jnp.arange(flat.shape[0]), self._k, {}, 0, last,
                            memory=self.memory, tag=self._tag(product, message))
        return pre, last

    def _additive(self, channel: Channel, route: str, product: str, message, flat, diag, edge,
                  keep):
        """Per-message noise added last, ``R_e = v_{s(e)} + s ξ_e``, by linearity:
        ``M v + diag (X − v) + Σ_e M_e s ξ_e`` (a GEMM for the clean part; the released rows
        are recorded and cost nothing when nobody reads them).

        On the lattice ``R_e = γ_s (a_s + K_e)``: the rounded row ``γ_s a_s`` depends on the
        sender only, so ``v`` is that row and ``s ξ_e = γ_s K_e`` the integer noise; the models
        are the same function of the integer releases (up to float summation order)."""
        call, senders = self.calls, self._net.senders
        pre, last = self._pre_noise(channel, product, message, flat)
        noise = channel.transforms[last]
        values = self._values(noise)
        z = channel.standard_draws(self._key, call, (senders.shape[0], flat.shape[1]),
                                   flat.dtype)[last]
        scaled = noise.scale(values, senders, z, self._k) * z
        label = self._label(product, message)
        released = noise.apply(pre[senders], values, senders, self._k, z)  # add_noise
        if noise.lattice:
            pre = noise.apply(pre, values, jnp.arange(flat.shape[0]), self._k, jnp.zeros_like(pre))
        self.released[label], self.draws[label] = released, {last: z}
        self._record(channel, route, flat)
        return (self._clean(PRODUCTS[product], pre, diag, edge, keep)
                + diag[:, None] * (flat - pre) + self._net.scatter_sum(edge[:, None] * scaled))

    def _aggregate(self, channel: Channel, route: str, product: str, message, flat, diag, edge,
                   keep):
        """Per-message Gaussian noise added last, by its receiver sums:
        ``M v + diag (X − v) + T`` with ``T_i = √V_i z_i``, ``V_i = Σ_e M_e² s_e²`` over the
        edges e into i (``s_e`` the sender's scale, ``z`` one ``(N, D)`` standard draw): the sum
        of independent ``N(0, s_e² I)`` message noises weighted by ``M_e`` has exactly this law.
        Unless the channel is ``aggregate``, the messages are then drawn from their law given
        the sums (:meth:`_given_sums`) and recorded: messages and models have the joint law of
        independent per-message draws, and a run that never reads the messages pays for the
        sums only (XLA drops the rest)."""
        n = flat.shape[0]
        pre, last = self._pre_noise(channel, product, message, flat)
        noise = channel.transforms[last]
        scale = noise.scale(self._values(noise), jnp.arange(n), flat, self._k)
        edge_scale = jnp.broadcast_to(scale, (n, 1))[self._net.senders]  # s_e
        weight = edge[:, None] * edge_scale  # M_e s_e
        var = self._net.scatter_sum(weight * weight)
        std = jnp.where(var > 0, jnp.sqrt(jnp.where(var > 0, var, 1.0)), 0.0)
        z = channel.standard_draws(self._key, self.calls, flat.shape, flat.dtype)[last]
        sums, label = std * z, self._label(product, message)
        if channel.aggregate:
            self.draws[label] = {last: z}
        else:
            xi = self._given_sums(channel, last, sums, weight, var, flat)
            self.released[label] = pre[self._net.senders] + edge_scale * xi
            self.draws[label] = {last: xi}
        self._record(channel, route, flat)
        return (self._clean(PRODUCTS[product], pre, diag, edge, keep)
                + diag[:, None] * (flat - pre) + sums)

    def _given_sums(self, channel: Channel, last: int, sums, weight, var, flat):
        """Standard per-message draws ``ξ`` ``(2E, D)`` given their receiver sums
        ``T_i = Σ_e M_e s_e ξ_e``: ``ξ_e = ζ_e + (M_e s_e / V_i)(T_i − Σ_f M_f s_f ζ_f)`` with
        ``ζ`` fresh standard draws. ``T − Σ M s ζ`` is independent of every ``ζ_e −
        E[ζ_e | Σ M s ζ]``, so ``ξ`` is i.i.d. ``N(0, 1)`` and sums to ``T`` (exact Gaussian
        conditioning); with ``V_i = 0`` (no noisy edge into i) ``ξ = ζ``."""
        net = self._net
        zeta = channel.standard_draws(jax.random.fold_in(self._key, GIVEN_SUM_STREAM),
                                      self.calls, (net.senders.shape[0], flat.shape[1]),
                                      flat.dtype)[last]
        residual = sums - net.scatter_sum(weight * zeta)
        coef = jnp.where(var > 0, 1.0 / jnp.where(var > 0, var, 1.0), 0.0)[net.receivers]
        return zeta + weight * coef * residual[net.receivers]

    def _release(self, channel: Channel, route: str, product: str, message, flat):
        """The rows of one call: ``(N, D)`` per sender when :meth:`_per_sender`, else
        ``(2E, D)`` per edge (recorded per edge unless broadcast)."""
        n, call = flat.shape[0], self.calls
        cut, tag, label = channel.first_random, self._tag(product, message), self._label(
            product, message)
        senders = jnp.arange(n) if channel.broadcast else self._net.senders
        pre = channel.apply(flat, self._params, jnp.arange(n), self._k, {}, 0, cut,
                            memory=self.memory, tag=tag)
        if self._per_sender(channel) and not channel.broadcast:  # deterministic: the same row
            self.released[label] = pre if self._nested else pre[senders]
            self._record(channel, route, flat)
            return pre
        rows = pre if channel.broadcast else pre[senders]
        draws = channel.standard_draws(self._key, call, rows.shape, rows.dtype)
        self.draws[label] = draws
        rows = channel.apply(rows, self._params, senders, self._k, draws, cut,
                             memory=self.memory, tag=tag)
        self.released[label] = rows
        self._record(channel, route, flat)
        return rows

    def _tag(self, product: str, message) -> str:
        """The error-feedback memory prefix of this call."""
        return f"{message or product}{self.calls}"

    def _label(self, product: str, message) -> str:
        """The :attr:`released` key of this call: the message name, unique within the step."""
        if message is not None and message not in self.released:
            return message
        return f"{message or product}{self.calls}"

    def _record(self, channel: Channel, route: str, flat) -> None:
        """Count one call: its route, message size, float width, messages and bits sent."""
        d, width = int(flat.shape[1]), 8 * jnp.dtype(flat.dtype).itemsize
        sent = flat.shape[0] if channel.broadcast else 2 * self._net.n_edges
        # one independent copy per sender (broadcast) or per directed edge of the proxy's network
        # (a time-varying network's union of edge sets, links that are down included: the proxy
        # draws and records a copy on each)
        self.copies.append(np.arange(flat.shape[0]) if channel.broadcast else self._net.senders)
        self.routes.append(route)
        self.sizes.append(d)
        self.float_bits.append(width)
        self.sent.append(sent)
        self.bits.append(sent * channel.message_bits(d, width))
        self.calls += 1


def _trace_state():
    """The current JAX trace, comparable with ``==`` (a product must run in its step's)."""
    return _get_trace_state()


def link_key(route: str, i: int) -> str:
    """The memory key of transform ``i``'s link state on ``route``."""
    return f"t{i}" if route == "*" else f"{route}:t{i}"


def _name_hash(name: str) -> int:
    """A stable 31-bit integer of a route name (its per-step key stream)."""
    return zlib.crc32(name.encode()) & 0x7FFFFFFE


@chex.dataclass(frozen=True)
class ChannelState:
    """The state of an algorithm behind a channel with memory or counts.

    Attributes:
      inner: the inner algorithm's state.
      memory: ``{name: array}``: error-feedback memories (``"{product}{c}/t{i}"``, ``(N, D)`` per
        sender or ``(2E, D)`` per directed edge) and per-step link states (``"t{i}"``).
      counts: cumulative ``messages_sent``, ``messages_received``, ``messages_dropped`` (int32)
        and ``bits_sent`` (float).
    """

    inner: Any
    memory: dict
    counts: dict


COUNTS = ("messages_sent", "messages_received", "messages_dropped", "bits_sent")


@dataclasses.dataclass(frozen=True)
class WithChannel(Algorithm):
    """``inner`` with every message sent through a channel (build with :func:`with_channel`).

    Attributes:
      inner: the algorithm (unchanged).
      routes: ``((message, Channel), ...)``: the channel of each named message (``"*"``: every
        other message, the only route of ``with_channel(alg, channel)``).
    """

    inner: Algorithm
    routes: tuple[tuple[str, Channel], ...]

    models_covered = False
    models_note = ("the final models are the agents' clean states, not a post-processing of the "
                   "channel's releases in general")

    @property
    def channels(self) -> dict[str, Channel]:
        """``{message: Channel}``."""
        return dict(self.routes)

    @property
    def channel(self) -> Channel:
        """The channel of every message (with a single ``"*"`` route).

        Raises:
          AttributeError: the messages have channels of their own (use :attr:`channels`).
        """
        if len(self.routes) == 1 and self.routes[0][0] == "*":
            return self.routes[0][1]
        raise AttributeError(f"{self.name} routes its messages through several channels; "
                             "read .channels")

    @property
    def transforms(self) -> tuple[Transform, ...]:
        """Every transform of every route."""
        return tuple(t for _, c in self.routes for t in c.transforms)

    @property
    def stateful(self) -> bool:
        """Whether the state carries channel memory and counts (:attr:`Channel.stateful`)."""
        return any(c.stateful for _, c in self.routes)

    @property
    def name(self) -> str:
        if len(self.routes) == 1 and self.routes[0][0] == "*":
            return f"{self.inner.name}+{self.routes[0][1].name}"
        return f"{self.inner.name}+[" + ",".join(f"{m}:{c.name}" for m, c in self.routes) + "]"

    @property
    def params_type(self) -> type:
        return merged_params_type(self.inner.params_type, self.channel_defaults)

    @property
    def channel_defaults(self) -> tuple[tuple[str, float], ...]:
        """Every channel Params field with its default, route after route."""
        return tuple(fd for _, c in self.routes for fd in c.defaults)

    @property
    def noise_field(self) -> str | None:
        """The first noise transform's scale field (ε decreases as it grows)."""
        return next((t.scale_field for t in self.transforms if t.random), None)

    # -- params -----------------------------------------------------------------------------------
    def default_params(self):
        return self.params(self.inner.default_params())

    def params(self, inner_params, **channel_values):
        """Flat Params from the inner Params and channel values (defaults where not given).

        Raises:
          ValueError: an unknown channel field.
        """
        known = dict(self.channel_defaults)
        unknown = sorted(set(channel_values) - set(known))
        if unknown:
            raise ValueError(f"{self.name}: unknown channel fields {unknown}; "
                             f"known: {sorted(known)}")
        return self.params_type(**dict(inner_params.items()), **{**known, **channel_values})

    def split(self, params):
        """``(inner Params, channel values dict)`` of flat Params."""
        channel_fields = dict(self.channel_defaults)
        inner = {f: v for f, v in params.items() if f not in channel_fields}
        return self.inner.params_type(**inner), {f: params[f] for f in channel_fields}

    def validate(self, params, problem, network) -> None:
        """The inner checks on the inner fields; every channel field finite, scalar or (N,) and in
        its transform's domain (> 0, ≥ 0 or in [0, 1]); message sizes a transform can handle.

        Raises:
          TypeError: params of another type.
          ValueError: a bad value, named.
        """
        if not isinstance(params, self.params_type):
            raise TypeError(f"{self.name}: params must be {self.params_type.__name__} (build them "
                            f"with .params(...) or .default_params()); got {type(params).__name__}")
        inner, values = self.split(params)
        self.inner.validate(inner, problem, network)
        domains = {f: t.domain(f) for t in self.transforms for f in t.fields}
        undirected = {f for t in self.transforms if t.kind in STEP_LOSSES[1:] for f in t.fields}
        for field, value in values.items():
            label = f"{self.params_type.__name__}.{field}"
            check_per_agent_value(label, value, network.n_agents)
            if field in undirected and np.ndim(value):
                raise ValueError(f"{label} must be a scalar (a link process is per undirected "
                                 f"edge, not per agent); got shape {np.shape(value)}")
            v = np.asarray(value, np.float64)
            ok, what = _DOMAINS[domains[field]]
            bad = ~ok(v)
            if np.any(bad):
                raise ValueError(f"{label} must be {what} for every agent; got "
                                 f"{v.flat[int(np.argmax(bad))]:g}")
        self.check_messages(problem, network, params)

    def check_messages(self, problem, network, params) -> None:
        """Refuse a message without a route, messages too small for a compressor's ``k`` and a
        product called inside a ``lax.scan``/``vmap``/... of the step (traces one step).

        Raises:
          ValueError: naming the message, or the transform, ``k`` and the message size, or the
            algorithm and the product.
        """
        channels = self.channels
        for route, d, _, _ in self.call_log(problem, network, params):
            channels[route].check_sizes([d])

    # -- contract ---------------------------------------------------------------------------------
    def init(self, key, problem, network, params):
        """The inner state; with memory or counts (:attr:`stateful`) a :class:`ChannelState`
        around it (memories zero, link chains from their stationary law)."""
        inner_params, values = self.split(params)
        state = self.inner.init(key, problem, network, inner_params)
        if not self.stateful:
            return state
        net = network.base
        shapes = jax.eval_shape(self._memory_after_one_step, key, state, params, problem, net)
        memory = {name: jnp.zeros(s.shape, s.dtype) for name, s in shapes.items()}
        chan_key = jax.random.fold_in(key, CHANNEL_STREAM)
        for route, channel in self.routes:
            route_key = chan_key if route == "*" else jax.random.fold_in(chan_key,
                                                                        _name_hash(route))
            for i in channel.losses:
                t = channel.transforms[i]
                if t.stateful:
                    memory[link_key(route, i)] = t.initial_link_state(
                        {f: values[f] for f in t.fields}, jax.random.fold_in(route_key, i), net)
        counts = {name: jnp.zeros((), jnp.int32) for name in COUNTS[:3]}
        counts["bits_sent"] = jnp.zeros((), jnp.result_type(float))
        return ChannelState(inner=state, memory=memory, counts=counts)

    def _memory_after_one_step(self, key, state, params, problem, network) -> dict:
        """The channel memory one step leaves (for its shapes)."""
        noise = self.noise(key, state, params, jnp.int32(0))
        _, proxy, _ = self.step_on_proxy(state, noise, problem, network, params, jnp.int32(0))
        return proxy.memory

    def noise(self, key, state, params, k):
        """The inner draws and the channel's key (a separate stream). The inner algorithm gets
        the same key (common random numbers), or, when it has a channel of its own, a key of
        another stream."""
        inner_state = state.inner if isinstance(state, ChannelState) else state
        inner_key = jax.random.fold_in(key, NESTED_STREAM) if isinstance(
            self.inner, WithChannel) else key
        return {"inner": self.inner.noise(inner_key, inner_state, self.split(params)[0], k),
                "channel": jax.random.fold_in(key, CHANNEL_STREAM)}

    def step(self, state, noise, problem, network, params, k):
        """The inner step on the proxy network; messages are what the channel released."""
        (state, released), _, _ = self.step_on_proxy(state, noise, problem, network, params, k)
        return state, released

    def step_on_proxy(self, state, noise, problem, network, params, k):
        """``((state, released), proxy, inner messages)``: the step with its proxy (tests)."""
        inner_params, values = self.split(params)
        stateful = isinstance(state, ChannelState)
        proxy = ChannelNetwork(network, self.channels, values, k, noise["channel"],
                               memory=state.memory if stateful else None, owner=self.name)
        inner, inner_messages = self.inner.step(state.inner if stateful else state,
                                                noise["inner"], problem, proxy, inner_params, k)
        if stateful:
            inner = ChannelState(inner=inner, memory=proxy.memory,
                                 counts=self._counted(state.counts, proxy))
        return (inner, proxy.released), proxy, inner_messages

    def channel_draws(self, state, noise, problem, network, params, k) -> dict:
        """The channel's standard draws of step ``k`` by released key, ``{key: {transform
        index: draw}}``: what a per-node reference needs to replay the step."""
        _, proxy, _ = self.step_on_proxy(state, noise, problem, network, params, k)
        return proxy.draws

    @staticmethod
    def _counted(counts: dict, proxy: ChannelNetwork) -> dict:
        """``counts`` plus one step's messages, drops and bits."""
        dropped = sum(proxy.dropped, jnp.zeros((), jnp.int32))
        directed = 2 * proxy.n_edges * proxy.calls
        return {"messages_sent": counts["messages_sent"] + sum(proxy.sent),
                "messages_received": counts["messages_received"] + directed - dropped,
                "messages_dropped": counts["messages_dropped"] + dropped,
                "bits_sent": counts["bits_sent"] + sum(proxy.bits)}

    def models(self, state):
        return self.inner.models(state.inner if isinstance(state, ChannelState) else state)

    def counters(self, state) -> dict:
        """Cumulative ``messages_sent`` (``2E`` per product call, ``N`` when broadcast),
        ``messages_received`` and ``messages_dropped`` (directed messages) and ``bits_sent``
        (:meth:`Channel.message_bits` per message) for a stateful channel; ``{}`` otherwise."""
        return dict(state.counts) if isinstance(state, ChannelState) else {}

    def costs_per_step(self, problem, network, params) -> dict:
        """The inner algorithm's static counts per step with ``messages`` and ``bits`` as the
        channel sends them: ``2E`` messages per product call (``N`` when broadcast), each of
        :meth:`Channel.message_bits` bits."""
        inner_costs = getattr(self.inner, "costs_per_step", None)
        costs = dict(inner_costs(problem, network, self.split(params)[0])) if inner_costs else {}
        log = self.call_log(problem, network, params)
        costs["messages"] = float(sum(sent for _, _, sent, _ in log))
        costs["bits"] = float(sum(bits for _, _, _, bits in log))
        return costs

    def calls_per_step(self, problem, network, params) -> list[int]:
        """The message size ``D`` of every product call in one traced step (each call is a
        release through the channel; both branches of a ``jnp.where`` count)."""
        return [d for _, d, _, _ in self.call_log(problem, network, params)]

    def call_log(self, problem, network, params) -> list[tuple[str, int, int, int]]:
        """``(route, message size D, messages sent, bits sent)`` of every product call of one
        traced step."""
        return [call[:4] for call in self.release_log(problem, network, params)]

    def release_log(self, problem, network, params) -> list[tuple[str, int, int, int, Any]]:
        """:meth:`call_log` with, per call, ``(N,)`` int: the independent noisy copies of each
        sender's row the call draws and records (``1`` broadcast, else one per directed edge of
        the network the proxy runs on: for a time-varying network the union of its edge sets,
        the same at every step). Counted from the proxy's record of one traced step.

        Raises:
          ValueError: a product called inside a ``lax.scan``/``vmap``/... of the step.
        """
        net = network.base
        logged = []

        def one_step(key):
            state = self.init(key, problem, net, params)
            noise = self.noise(key, state, params, jnp.int32(0))
            _, proxy, _ = self.step_on_proxy(state, noise, problem, net, params, jnp.int32(0))
            logged.append([(*call, np.bincount(np.asarray(senders, np.int64),
                                                minlength=net.n_agents))
                           for *call, senders in zip(proxy.routes, proxy.sizes, proxy.sent,
                                                     proxy.bits, proxy.copies)])
            return 0

        jax.eval_shape(one_step, jax.random.key(0))
        return logged[0]

    def sampler_of(self) -> str | None:
        """``"float"`` if a noise of a route is float-sampled, ``"lattice"`` if every noise is a
        lattice one, ``None`` without noise."""
        noises = [t for t in self.transforms if t.additive]
        if not noises:
            return None
        return "lattice" if all(t.lattice for t in noises) else "float"

    def with_sampler(self, sampler: str) -> WithChannel:
        """A copy whose every noise transform draws with ``sampler`` (``"lattice"`` or
        ``"float"``), e.g. ``DPNIDS().with_sampler("float")`` for a utility study at speed."""
        check_sampler(sampler)

        def resampled(t: Transform) -> Transform:
            if not t.additive:
                return t
            options = tuple((k, v) for k, v in t.options if k != "sampler")
            return dataclasses.replace(t, options=options + (("sampler", sampler),))
        routes = tuple((m, dataclasses.replace(c, transforms=tuple(map(resampled, c.transforms))))
                       for m, c in self.routes)
        return dataclasses.replace(self, routes=routes)

    def lattice_draw_count(self, problem, network, params, steps: int) -> int:
        """``D``: the lattice draws of a run, from the proxy's record of one traced step (each
        call's copies times its message size) times ``steps``."""
        lattice = {route for route, c in self.routes if any(t.lattice for t in c.transforms)}
        return steps * sum(d * int(np.sum(copies)) for route, d, _, _, copies
                           in self.release_log(problem, network, params) if route in lattice)

    def account(self, problem, network, params, steps, *, delta):
        """Privacy from the channel (see :mod:`jaxdp.channels._privacy`)."""
        from jaxdp.channels._privacy import channel_report

        return channel_report(self, problem, network, params, steps, delta=delta)


@dataclasses.dataclass(frozen=True)
class PrivateVariant(WithChannel):
    """A private algorithm that is a non-private one with its messages through channels, under
    its paper's own Params and accountant.

    The inner algorithm computes, sends and mixes; the channels add the noise; the subclass keeps
    what its paper adds: the Params as the paper names them (``params_type`` and its declared
    ranges), :attr:`field_map` from them to the channel fields, and :meth:`account` (a
    sensitivity the paper proves for this algorithm, tighter than a clip's 2C).

    Class attributes:
      field_map: ``((channel field, own Params field), ...)``; every other inner Params field
        is read from the own Params under the same name.
    """

    field_map: ClassVar[tuple[tuple[str, str], ...]] = ()
    noise_field: ClassVar[str | None] = None

    def default_params(self):
        return self.params_type()

    def split(self, params):
        """``(inner Params, channel values)`` read from the own Params."""
        inner_type = self.inner.params_type
        inner = inner_type(**{f.name: params[f.name] for f in dataclasses.fields(inner_type)})
        return inner, self.channel_values(params)

    def channel_values(self, params) -> dict:
        """The channel fields' values from the own Params (:attr:`field_map`; override for a
        schedule the paper writes in other terms, e.g. ``σ₁ R^{−(t−1)/2}``)."""
        return {channel_field: params[own] for channel_field, own in self.field_map}

    def validate(self, params, problem, network) -> None:
        """The declared ranges of the own Params, then the inner algorithm's checks.

        Raises:
          TypeError: params of another type.
          ValueError: a bad value, named.
        """
        Algorithm.validate(self, params, problem, network)
        self.inner.validate(self.split(params)[0], problem, network)
        self.check_messages(problem, network, params)

    def account(self, problem, network, params, steps, *, delta):
        raise NotImplementedError


def with_channel(algorithm: Algorithm, channel) -> WithChannel:
    """``algorithm`` with every message through ``channel`` (a :func:`chain` or one transform),
    or each named message through its own: ``{"x": chain(...), "y": chain(...)}`` routes the
    products the step calls with ``message="x"`` / ``"y"`` (key ``"*"``: every other message).

    Example:
      >>> alg = with_channel(DGD(), chain(clip(1.0), gaussian(0.5)))
      >>> params = alg.params(DGDParams(alpha=0.05), gauss_sigma=0.2)
      >>> tracked = with_channel(DIGing(), {"x": chain(clip(1.0), gaussian(0.5, name="gx")),
      ...                                   "y": chain(clip(2.0, name="cy"), gaussian(1.0))})

    Raises:
      ValueError: not an Algorithm, not a channel, an empty mapping, or channel fields clashing
        with each other or with the algorithm's Params.
    """
    if not isinstance(algorithm, Algorithm):
        raise ValueError(f"with_channel needs an Algorithm; got {type(algorithm).__name__}")
    routes = channel.items() if isinstance(channel, dict) else (("*", channel),)
    routes = tuple((str(m), _as_channel(c)) for m, c in routes)
    if not routes:
        raise ValueError("with_channel needs at least one channel")
    fields = [f for _, c in routes for f, _ in c.defaults]
    dup = sorted({f for f in fields if fields.count(f) > 1})
    if dup:
        raise ValueError(f"with_channel: Params fields {dup} appear in two channels; give the "
                         "transforms distinct name= prefixes")
    wrapped = WithChannel(algorithm, routes)
    wrapped.params_type  # noqa: B018  (raises on a field clash now, not at the first run)
    return wrapped


def _as_channel(channel) -> Channel:
    """A :class:`Channel` from a channel or one transform.

    Raises:
      ValueError: anything else.
    """
    from jaxdp.channels._transforms import chain

    if isinstance(channel, Transform):
        return chain(channel)
    if not isinstance(channel, Channel):
        raise ValueError(f"with_channel needs a Channel (jaxdp.channels.chain(...)); "
                         f"got {channel!r}")
    return channel
