"""``with_channel(algorithm, channel)``: any algorithm, its messages sent through a channel.

The wrapped algorithm runs the inner ``step`` unchanged on a proxy network whose products
(``mix``, ``apply_P``, ``apply_L``, ``apply_A``, ``gather``) send every neighbour's contribution
through the channel before combining: for ``M ∈ {W, P, L, A}`` and a message ``X``,

.. math:: (M X)_i = M_{ii} X_i + \\sum_{j \\ne i} M_{ij}\\, T(X_j;\\ \\xi_{ij})

— the self term uses the agent's own clean value, as a real agent does (sound only while row i
stays with agent i: a row given to others, such as a federated server's sum, makes the report
``inf`` unless the channel releases the self term too, :meth:`ChannelAccounting.bypass`). With
per-message noise (the default) receiver ``i`` gets its own draw ``ξ_ij`` on every directed edge
``j → i``; with
``broadcast=True`` sender ``j`` draws once per product call and every neighbour receives the same
``T(X_j; ξ_j)`` (cheaper, and one release instead of ``deg_j``).

Draws: ``noise`` returns the inner algorithm's draws unchanged (same key: common random numbers)
and a key of a separate stream; call ``c`` of the proxy (in trace order) draws transform ``t``'s
standard draw from ``fold_in(fold_in(channel_key, c), t)`` and scales it by its Params, so
``step`` stays deterministic given ``noise`` and metrics stay differentiable in the scales.

Params: one flat chex dataclass holding the inner algorithm's fields and the channel's
(``clip_norm``, ``gauss_sigma``, ...), so ``jaxdp.grid``/``sweep`` and the ε calibrator work on it
unchanged; each channel field carries its transform's declared spec (default, domain, meaning:
``param_specs``, validation, ``jaxdp run ALG --channel SPEC --help``), and the scale field of the
channel's (first) transform of role ``"noise"`` is the :attr:`noise_field`, wherever it sits.

Losses: a lost message is replaced by the receiver's own row (``M_ij X_i``), i.e. the product runs
with the lost edge's weight moved to the receiver's diagonal. State: a channel without memory or
losses leaves the inner state unchanged; otherwise the state is a :class:`ChannelState` carrying
the error-feedback memories, the link chains and the message counts (:meth:`WithChannel.counters`).

Layers (each imports only those before it): the transform contract (``_base``), the transforms
(``_transforms``, ``_noise``, ``_losses``), the stack (``_chain``), the spec strings (``_spec``),
the privacy stage (``_privacy``), the product paths (``_products``), the proxy network
(``_proxy``), the report helpers (``_accounting``), and this module, the only one that imports the
algorithm contract.
"""
from __future__ import annotations

import dataclasses
import functools
from typing import Any, ClassVar

import chex
import jax
import jax.numpy as jnp
import numpy as np

from jaxdp.core import Algorithm, check_value
from jaxdp.core._params import METADATA_KEY
from jaxdp.channels._accounting import ChannelAccounting
from jaxdp.channels._base import Transform
from jaxdp.channels._chain import Channel, chain
from jaxdp.channels._privacy import channel_report, secret_pairs_report
from jaxdp.channels._proxy import ChannelNetwork, link_key, route_key
from jaxdp.privacy import SecretPairs
from jaxdp.privacy.contract import marking
from jaxdp.privacy.samplers import check_sampler

CHANNEL_STREAM = 0x6368616E
"""``fold_in`` constant of the channel's key stream (distinct from the inner algorithm's draws)."""
NESTED_STREAM = 0x6E657374
"""``fold_in`` constant of the key an inner algorithm with a channel of its own draws from."""


@functools.lru_cache(maxsize=None)
def merged_params_type(inner_type: type, specs: tuple) -> type:
    """The flat Params type: ``inner_type``'s fields then the channel's, ``specs``
    (``((field, default, ParamSpec), ...)``, :attr:`Channel.specs`), each declared as
    :func:`jaxdp.param` declares a field (cached: equal wrappers share one type, hence one
    compiled program).

    Raises:
      ValueError: a channel field that is also a field of ``inner_type``.
    """
    inner = [(f.name, Any, _copy_default(f)) for f in dataclasses.fields(inner_type)]
    clash = sorted({n for n, _, _ in inner} & {f for f, _, _ in specs})
    if clash:
        raise ValueError(f"channel Params fields {clash} clash with {inner_type.__name__}'s; give "
                         "the transforms another name= prefix")
    fields = inner + [(f, Any, dataclasses.field(default=v, metadata={METADATA_KEY: spec}))
                      for f, v, spec in specs]
    namespace = {"__annotations__": {n: t for n, t, _ in fields}, "__module__": __name__,
                 **{n: f for n, _, f in fields}}
    return chex.dataclass(frozen=True)(type(f"{inner_type.__name__}WithChannel", (), namespace))


def _copy_default(f: dataclasses.Field):
    """``f``'s default and its declared metadata (meaning, domain, shape: ``jaxdp.param``)."""
    if f.default is not dataclasses.MISSING:
        return dataclasses.field(default=f.default, metadata=f.metadata)
    if f.default_factory is not dataclasses.MISSING:
        return dataclasses.field(default_factory=f.default_factory, metadata=f.metadata)
    return dataclasses.field(metadata=f.metadata)


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

    # jaxdp.privacy.contract.NOISE_OWNERS: each agent's releases carry its own fresh noise only
    noise_owner = "sender"
    inner: Algorithm
    routes: tuple[tuple[str, Channel], ...]

    models_covered = False
    models_note = ("the final models are the agents' clean states, not a post-processing of the "
                   "channel's releases in general")

    @property
    def server_average(self) -> bool:
        """The wrapped algorithm's: a channel does not change where the server is."""
        return self.inner.server_average

    @property
    def broadcasts_product_row(self) -> bool:
        """The wrapped algorithm's declaration: a row of a product reaches every agent (a
        federated server's sum, :attr:`Federated.broadcasts_product_row
        <jaxdp.algorithms.federated.Federated.broadcasts_product_row>`)."""
        return getattr(self.inner, "broadcasts_product_row", False)

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
        return merged_params_type(self.inner.params_type, self.channel_specs)

    @property
    def channel_specs(self) -> tuple:
        """``((field, default, ParamSpec), ...)``: every channel Params field as its transform
        declares it, route after route."""
        return tuple(fs for _, c in self.routes for fs in c.specs)

    @property
    def channel_defaults(self) -> tuple[tuple[str, float], ...]:
        """Every channel Params field with its default, route after route."""
        return tuple((f, v) for f, v, _ in self.channel_specs)

    @property
    def noise_field(self) -> str | None:
        """The scale field of the first transform whose role is ``"noise"`` (ε decreases as it
        grows), wherever it sits in its chain: a random compressor or a user's transform before
        it does not hide it."""
        return next((t.scale_field for t in self.transforms if t.role == "noise"), None)

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
        its transform's declared domain (> 0, ≥ 0 or in [0, 1]); message sizes a transform can
        handle.

        Raises:
          TypeError: params of another type.
          ValueError: a bad value, named.
        """
        if not isinstance(params, self.params_type):
            raise TypeError(f"{self.name}: params must be {self.params_type.__name__} (build them "
                            f"with .params(...) or .default_params()); got {type(params).__name__}")
        inner, values = self.split(params)
        self.inner.validate(inner, problem, network)
        self._check_undirected_scalars(values)
        for field, _, spec in self.channel_specs:
            check_value(f"{self.params_type.__name__}.{field}", spec, values[field],
                        network.n_agents)
        self._check_messages(problem, network, params)

    def _check_undirected_scalars(self, values: dict) -> None:
        """Refuse a per-agent value of a field its transform declares scalar (every field of one
        acting per undirected edge, one lattice for both ends: :mod:`jaxdp.channels._correlated`,
        e.g. DECOR's ``σ``; :meth:`Transform.spec`).

        Raises:
          ValueError: naming the field and the value's shape.
        """
        scalar = {f for f, _, spec in self.channel_specs if not spec.per_agent}
        for field in sorted(scalar & set(values)):
            if np.ndim(values[field]):
                raise ValueError(f"{self.params_type.__name__}.{field} must be a scalar (its "
                                 "transform declares one value for every agent, e.g. one per "
                                 "undirected edge); got shape "
                                 f"{np.shape(values[field])}")

    def _check_messages(self, problem, network, params) -> None:
        """Refuse a message without a route, messages too small for a compressor's ``k`` and a
        product called inside a ``lax.scan``/``vmap``/... of the step (traces one step).

        Raises:
          ValueError: naming the message, or the transform, ``k`` and the message size, or the
            algorithm and the product.
        """
        channels = self.channels
        for route, d, _, _ in self.accounting.call_log(problem, network, params):
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
            for i in channel.losses:
                t = channel.transforms[i]
                if t.stateful:
                    memory[link_key(route, i)] = t.initial_link_state(
                        {f: values[f] for f in t.fields},
                        jax.random.fold_in(route_key(chan_key, route), i), net)
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
        with marking(False):  # the channel's report charges its own sites only
            inner = self.inner.noise(inner_key, inner_state, self.split(params)[0], k)
        return {"inner": inner, "channel": jax.random.fold_in(key, CHANNEL_STREAM)}

    def noise_agent_axes(self, noise):
        """The inner algorithm's layout of its draws; the channel's key has none."""
        return {"inner": self.inner.noise_agent_axes(noise["inner"]), "channel": 0}

    def step(self, state, noise, problem, network, params, k):
        """The inner step on the proxy network; messages are what the channel released."""
        (state, released), _, _ = self.step_on_proxy(state, noise, problem, network, params, k)
        return state, released

    def step_on_proxy(self, state, noise, problem, network, params, k, probe=None):
        """``((state, released), proxy, inner messages)``: the step with its proxy (tests; a
        ``probe`` records or replays its product operands, :func:`self_term_flow`)."""
        inner_params, values = self.split(params)
        stateful = isinstance(state, ChannelState)
        proxy = ChannelNetwork(network, self.channels, values, k, noise["channel"],
                               memory=state.memory if stateful else None, owner=self.name,
                               probe=probe)
        with marking(False):  # the proxy marks the channel's own noise (marking(True))
            inner, inner_messages = self.inner.step(state.inner if stateful else state,
                                                    noise["inner"], problem, proxy, inner_params,
                                                    k)
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
        tally = proxy.tally
        directed = 2 * proxy.n_edges * proxy.calls
        return {"messages_sent": counts["messages_sent"] + tally["sent"],
                "messages_received": counts["messages_received"] + directed - tally["dropped"],
                "messages_dropped": counts["messages_dropped"] + tally["dropped"],
                "bits_sent": counts["bits_sent"] + tally["bits"]}

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
        log = self.accounting.call_log(problem, network, params)
        costs["messages"] = float(sum(sent for _, _, sent, _ in log))
        costs["bits"] = float(sum(bits for _, _, _, bits in log))
        return costs

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
        routes = tuple((m, c.with_sampler(sampler)) for m, c in self.routes)
        return dataclasses.replace(self, routes=routes)

    @property
    def accounting(self) -> ChannelAccounting:
        """The report helpers (:class:`~jaxdp.channels._accounting.ChannelAccounting`): the
        step's product calls, their lattice draws, what bypasses the channel."""
        return ChannelAccounting(self)

    def account(self, problem, network, params, steps, *, delta):
        """Privacy from the channel (see :mod:`jaxdp.channels._privacy`); ``inf`` where a value
        reaches other agents without passing through the channel
        (:meth:`ChannelAccounting.bypass <jaxdp.channels._accounting.ChannelAccounting.bypass>`),
        which the channel's per-sender accounting does not cover."""
        self._check_undirected_scalars(self.split(params)[1])
        why = self.accounting.bypass(problem, network, params)
        if why:
            from jaxdp.privacy import PrivacyReport

            return PrivacyReport.infinite(network.n_agents, steps, delta, why,
                                          released=f"every message of {self.inner.name}")
        return channel_report(self, problem, network, params, steps, delta=delta)

    def account_under(self, threat, problem, network, params, steps, *, delta):
        """Under :class:`~jaxdp.privacy.SecretPairs`, DECOR's SecLDP bound where the channel has
        one (:mod:`jaxdp.channels._correlated`); every other case falls back."""
        self._check_undirected_scalars(self.split(params)[1])
        if not isinstance(threat, SecretPairs):
            return None, ""
        report, why = secret_pairs_report(self, problem, network, params, steps, delta=delta)
        if report is None:
            return None, why
        note = (f"{threat.describe()}. SecLDP coupling bound of the pairwise-cancelling noise "
                "(jaxdp.channels._correlated): the outsider or any one curious agent")
        return report.with_contract(threat=threat.name, threat_note=note), ""


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
        self._check_messages(problem, network, params)

    def account(self, problem, network, params, steps, *, delta):
        raise NotImplementedError

    def account_under(self, threat, problem, network, params, steps, *, delta):
        """No tighter analysis than the paper's own accountant: the fallback."""
        del threat, problem, network, params, steps, delta
        return None, ""


def with_channel(algorithm: Algorithm, channel) -> WithChannel:
    """``algorithm`` with every message through ``channel`` (a :func:`chain` or one transform),
    or each named message through its own: ``{"x": chain(...), "y": chain(...)}`` routes the
    products the step calls with ``message="x"`` / ``"y"`` (key ``"*"``: every other message).

    Example:
      >>> alg = with_channel(DGD(), chain(clip(0.1), gaussian(15.0)))  # σ/C = 150
      >>> params = alg.params(DGDParams(alpha=0.05), gauss_sigma=20.0)
      >>> tracked = with_channel(DIGing(), {"x": chain(clip(0.1), gaussian(15.0, name="gx")),
      ...                                   "y": chain(clip(0.2, name="cy"), gaussian(30.0))})

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
    if isinstance(channel, Transform):
        return chain(channel)
    if not isinstance(channel, Channel):
        raise ValueError(f"with_channel needs a Channel (jaxdp.channels.chain(...)); "
                         f"got {channel!r}")
    return channel
