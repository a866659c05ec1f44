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
"""
from __future__ import annotations

import dataclasses
import functools
from typing import Any

import chex
import jax
import jax.numpy as jnp
import numpy as np

from jaxdp.algorithms._base import Algorithm, check_per_agent_value
from jaxdp.channels._transforms import Channel, Transform

CHANNEL_STREAM = 0x6368616E
"""``fold_in`` constant of the channel's key stream (distinct from the inner algorithm's draws)."""

PRODUCTS = {"mix": "W", "apply_P": "P", "apply_L": "L", "apply_A": "A"}

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

    Every product call counts (``calls``) and records what it released in ``released``:
    ``"{product}{c}"`` → ``(2E, ...)`` per directed edge, or ``(N, ...)`` per sender when
    broadcast (product calls record nothing with ``aggregate``). Dense matrices (``W``, ``P``,
    ``L``) are refused: a product on them would bypass the channel. Other attributes are the
    wrapped network's. Products must not be called under ``vmap``, ``lax.cond`` or ``lax.scan``
    inside ``step`` (their releases could not be recorded).
    """

    def __init__(self, network, channel: Channel, params, k, key):
        self._net, self._channel, self._params, self._k, self._key = (
            network, channel, params, k, key)
        self.calls = 0
        self.sizes: list[int] = []  # flattened message size D of each call
        self.released: dict = {}

    def __getattr__(self, name):
        if name in ("W", "P", "L", "dense_matrices"):
            raise AttributeError(
                f"a channel-wrapped algorithm cannot read network.{name}: products on it would "
                "bypass the channel; use mix / apply_P / apply_L / apply_A / gather")
        return getattr(self._net, name)

    def mix(self, X):
        """``W X`` with neighbours' rows through the channel."""
        return self._product("mix", X)

    def apply_P(self, X):
        """``P X`` with neighbours' rows through the channel."""
        return self._product("apply_P", X)

    def apply_L(self, X):
        """``L X`` with neighbours' rows through the channel."""
        return self._product("apply_L", X)

    def apply_A(self, X):
        """``A X`` with neighbours' rows through the channel."""
        return self._product("apply_A", X)

    def gather(self, X):
        """Each directed edge's received ``T(X_{senders[e]})``: ``(N, ...)`` → ``(2E, ...)``."""
        X = jnp.asarray(X)
        rows = self._release("gather", X.reshape(X.shape[0], -1))
        if self._channel.broadcast:
            rows = rows[self._net.senders]
        return rows.reshape((rows.shape[0],) + X.shape[1:])

    def _product(self, product: str, X):
        X = jnp.asarray(X)
        flat = X.reshape(X.shape[0], -1)
        diag, edge = self._net._parts(PRODUCTS[product])
        if self._channel.aggregate:
            return self._aggregate(product, flat, diag, edge).reshape(X.shape)
        if self._channel.additive_tail and not self._channel.broadcast:
            return self._additive(product, flat, diag, edge).reshape(X.shape)
        rows = self._release(product, flat)
        if self._channel.broadcast:  # M R + diag (X − R): the self term stays clean
            out = self._net._product(PRODUCTS[product], rows) + diag[:, None] * (flat - rows)
        else:
            out = diag[:, None] * flat + self._net.scatter_sum(edge[:, None] * rows)
        return out.reshape(X.shape)

    def _additive(self, product: str, flat, diag, edge):
        """Per-message noise added last, ``R_e = v_{s(e)} + s ξ_e``, by linearity:
        ``M v + diag (X − v) + Σ_e M_e s ξ_e`` (a GEMM for the clean part; the released rows
        are recorded and cost nothing when nobody reads them)."""
        channel, n, call = self._channel, flat.shape[0], self.calls
        senders, last = self._net.senders, len(channel.transforms) - 1
        pre = channel.apply(flat, self._params, jnp.arange(n), self._k, {}, 0, -1)
        noise = channel.transforms[-1]
        z = channel.standard_draws(self._key, call, (senders.shape[0], flat.shape[1]),
                                   flat.dtype)[last]
        scaled = noise.scale({f: self._params[f] for f in noise.fields}, senders, z, self._k) * z
        self.released[f"{product}{call}"] = pre[senders] + scaled
        self.sizes.append(int(flat.shape[1]))
        self.calls += 1
        return (self._net._product(PRODUCTS[product], pre) + diag[:, None] * (flat - pre)
                + self._net.scatter_sum(edge[:, None] * scaled))

    def _aggregate(self, product: str, flat, diag, edge):
        """``M v + diag (X − v) + √(Σ_j M_ij² s_j²) z``: the per-message Gaussian summed exactly
        (``v`` the rows before the noise, ``z`` one ``(N, D)`` standard draw)."""
        channel, n, call = self._channel, flat.shape[0], self.calls
        agents = jnp.arange(n)
        pre = channel.apply(flat, self._params, agents, self._k, {}, 0, -1)
        noise = channel.transforms[-1]
        scale = noise.scale({f: self._params[f] for f in noise.fields}, agents, flat, self._k)
        s2 = jnp.broadcast_to(scale * scale, (n, 1))
        var = self._net.scatter_sum(edge[:, None] ** 2 * s2[self._net.senders])
        std = jnp.where(var > 0, jnp.sqrt(jnp.where(var > 0, var, 1.0)), 0.0)
        last = len(channel.transforms) - 1
        z = channel.standard_draws(self._key, call, flat.shape, flat.dtype)[last]
        self.sizes.append(int(flat.shape[1]))
        self.calls += 1
        return (self._net._product(PRODUCTS[product], pre) + diag[:, None] * (flat - pre)
                + std * z)

    def _release(self, product: str, flat):
        """The released rows of one call: ``(N, D)`` per sender or ``(2E, D)`` per edge."""
        channel, n, call = self._channel, flat.shape[0], self.calls
        cut = channel.first_random
        senders = jnp.arange(n) if channel.broadcast else self._net.senders
        pre = channel.apply(flat, self._params, jnp.arange(n), self._k, {}, 0, cut)
        rows = pre if channel.broadcast else pre[senders]
        draws = channel.standard_draws(self._key, call, rows.shape, rows.dtype)
        rows = channel.apply(rows, self._params, senders, self._k, draws, cut)
        self.released[f"{product}{call}"] = rows
        self.sizes.append(int(flat.shape[1]))
        self.calls += 1
        return rows


@dataclasses.dataclass(frozen=True)
class WithChannel(Algorithm):
    """``inner`` with every message sent through ``channel`` (build with :func:`with_channel`).

    Attributes:
      inner: the algorithm (unchanged).
      channel: the transform stack.
    """

    inner: Algorithm
    channel: Channel

    models_covered = False
    models_note = ("the final models are the agents' clean states, not a post-processing of the "
                   "channel's releases in general")

    @property
    def name(self) -> str:
        return f"{self.inner.name}+{self.channel.name}"

    @property
    def params_type(self) -> type:
        return merged_params_type(self.inner.params_type, self.channel.defaults)

    @property
    def noise_field(self) -> str | None:
        """The first noise transform's scale field (ε decreases as it grows)."""
        return next((t.scale_field for t in self.channel.transforms if t.random), None)

    # -- params -----------------------------------------------------------------------------------
    def default_params(self):
        return self.params(self.inner.default_params())

    def params(self, inner_params, **channel_values):
        """Flat Params from the inner Params and channel values (defaults where not given).

        Raises:
          ValueError: an unknown channel field.
        """
        known = dict(self.channel.defaults)
        unknown = sorted(set(channel_values) - set(known))
        if unknown:
            raise ValueError(f"{self.name}: unknown channel fields {unknown}; "
                             f"known: {sorted(known)}")
        return self.params_type(**dict(inner_params.items()), **{**known, **channel_values})

    def split(self, params):
        """``(inner Params, channel values dict)`` of flat Params."""
        channel_fields = dict(self.channel.defaults)
        inner = {f: v for f, v in params.items() if f not in channel_fields}
        return self.inner.params_type(**inner), {f: params[f] for f in channel_fields}

    def validate(self, params, problem, network) -> None:
        """The inner checks on the inner fields; every channel field finite, > 0, scalar or (N,).

        Raises:
          TypeError: params of another type.
          ValueError: a bad value, named.
        """
        if not isinstance(params, self.params_type):
            raise TypeError(f"{self.name}: params must be {self.params_type.__name__} (build them "
                            f"with .params(...) or .default_params()); got {type(params).__name__}")
        inner, values = self.split(params)
        self.inner.validate(inner, problem, network)
        for field, value in values.items():
            label = f"{self.params_type.__name__}.{field}"
            check_per_agent_value(label, value, network.n_agents)
            bad = ~(np.asarray(value, np.float64) > 0)
            if np.any(bad):
                raise ValueError(f"{label} must be > 0 for every agent; got "
                                 f"{np.asarray(value, np.float64).flat[int(np.argmax(bad))]:g}")

    # -- contract ---------------------------------------------------------------------------------
    def init(self, key, problem, network, params):
        return self.inner.init(key, problem, network, self.split(params)[0])

    def noise(self, key, state, params, k):
        """The inner draws (same key) and the channel's key (a separate stream)."""
        return {"inner": self.inner.noise(key, state, self.split(params)[0], k),
                "channel": jax.random.fold_in(key, CHANNEL_STREAM)}

    def step(self, state, noise, problem, network, params, k):
        """The inner step on the proxy network; messages are what the channel released."""
        (state, released), _, _ = self.step_on_proxy(state, noise, problem, network, params, k)
        return state, released

    def step_on_proxy(self, state, noise, problem, network, params, k):
        """``((state, released), proxy, inner messages)``: the step with its proxy (tests)."""
        inner_params, values = self.split(params)
        proxy = ChannelNetwork(network, self.channel, values, k, noise["channel"])
        state, inner_messages = self.inner.step(state, noise["inner"], problem, proxy,
                                                inner_params, k)
        return (state, proxy.released), proxy, inner_messages

    def models(self, state):
        return self.inner.models(state)

    def calls_per_step(self, problem, network, params) -> list[int]:
        """The message size ``D`` of every product call in one traced step (each call is a
        release through the channel; both branches of a ``jnp.where`` count)."""
        inner_params = self.split(params)[0]
        net = network.base
        counted = []

        def one_step(key):
            state = self.inner.init(key, problem, net, inner_params)
            noise = self.noise(key, state, params, jnp.int32(0))
            proxy = ChannelNetwork(net, self.channel, self.split(params)[1], jnp.int32(0),
                                   noise["channel"])
            self.inner.step(state, noise["inner"], problem, proxy, inner_params, jnp.int32(0))
            counted.append(list(proxy.sizes))
            return 0

        jax.eval_shape(one_step, jax.random.key(0))
        return counted[0]

    def account(self, problem, network, params, steps, *, delta):
        """Privacy from the channel (see :mod:`jaxdp.channels._privacy`)."""
        from jaxdp.channels._privacy import channel_report

        return channel_report(self, problem, network, params, steps, delta=delta)


def with_channel(algorithm: Algorithm, channel: Channel | Transform) -> WithChannel:
    """``algorithm`` with every message through ``channel`` (a :func:`chain` or one transform).

    Example:
      >>> alg = with_channel(DGD(), chain(clip(1.0), gaussian(0.5)))
      >>> params = alg.params(DGDParams(alpha=0.05), gauss_sigma=0.2)

    Raises:
      ValueError: not an Algorithm, or channel fields clashing with the algorithm's Params.
    """
    from jaxdp.channels._transforms import chain

    if not isinstance(algorithm, Algorithm):
        raise ValueError(f"with_channel needs an Algorithm; got {type(algorithm).__name__}")
    if isinstance(channel, Transform):
        channel = chain(channel)
    if not isinstance(channel, Channel):
        raise ValueError(f"with_channel needs a Channel (jaxdp.channels.chain(...)); "
                         f"got {channel!r}")
    wrapped = WithChannel(algorithm, channel)
    wrapped.params_type  # noqa: B018  (raises on a field clash now, not at the first run)
    return wrapped
