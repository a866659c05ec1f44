"""The transform contract: one small object per stage of a channel.

A transform is a frozen, hashable dataclass (its Params fields' values, its typed static options
such as ``k`` or ``bits``); the numbers live in the wrapped algorithm's Params, so they can
be vmapped over a grid and differentiated. A subclass of :class:`Transform` owns everything about
one kind of stage, and the channel, the proxy network and the privacy report only ask it:

* how it acts on rows: :meth:`Transform.apply` (``v`` ``(R, D)`` sent by agents ``who``);
* what it draws: :attr:`Transform.random` and :meth:`Transform.draw` (uniforms unless overridden);
* whether its draws couple the directed messages of a call: :attr:`Transform.pairwise`, drawn by
  :meth:`Transform.edge_draw` from the network's edge structure (DECOR's and Zip-DL's noises,
  :mod:`jaxdp.channels._correlated`);
* its state: :attr:`Transform.error_feedback` (a sender memory the channel keeps) and, for a
  loss, its per-step link state;
* its bits per message: :meth:`Transform.message_bits`;
* its privacy role, :attr:`Transform.role`, read by the report (:mod:`jaxdp.channels._privacy`):

  - ``"clip"``: bounds the norm of every row it outputs (as :meth:`jaxdp.channels.Clip.bound`
    says);
  - ``"noise"``: the mechanism (:class:`jaxdp.channels._noise.Noise`: its law, sampler,
    scale and privacy events);
  - ``"contraction"``: ``‖T(v)‖ ≤ ‖v‖`` in every ℓp norm whatever its draws and memory;
  - ``"post"``: a function of the rows it receives, its own draws and memory only (it may raise
    norms: allowed after the noise, or before the clip);
  - ``"loss"``: decides which directed messages arrive (releases nothing);
  - ``None`` (the default of a subclass that declares nothing): unknown, so a channel holding
    it has no private stage and its report is ``inf``, naming the transform.

  and, whatever its role, :attr:`Transform.leak`: why its messages leak whatever the scales (the
  report is then ``inf`` with that reason).

Its Params fields are declared once, on the class: :attr:`Transform.declared`, a tuple of
:func:`declare` (the field's suffix, its domain, its meaning), from which the wrapped algorithm's
merged Params carry each field's :class:`~jaxdp.algorithms.ParamSpec` (``param_specs``, ``jaxdp
run ALG --channel SPEC --help``, validation) and a noise's scale field (the calibrator's
:attr:`~jaxdp.channels.WithChannel.noise_field`) are read. An instance holds the values
(:attr:`Transform.defaults`, ``((f"{name}_{suffix}", value), ...)``); its static options are
typed dataclass fields (``k``, ``bits``, ``sampler``, ...).

Example: a user's transform is one class (and, to read it from a spec string, a constructor
registered in :data:`jaxdp.channels.TRANSFORMS` or declared under the ``jaxdp.transforms``
entry-point group)::

    @dataclasses.dataclass(frozen=True)
    class Flip(Transform):
        kind: ClassVar[str] = "flip"
        role: ClassVar[str] = "contraction"     # ‖−v‖ = ‖v‖

        def apply(self, v, p, who, k, z=None):
            return -v

    @dataclasses.dataclass(frozen=True)
    class Shrink(Transform):
        kind: ClassVar[str] = "shrink"
        role: ClassVar[str] = "contraction"     # ‖f v‖ ≤ ‖v‖ for f in [0, 1]
        declared: ClassVar = (declare("f", domain="probability", doc="shrink factor"),)

        def apply(self, v, p, who, k, z=None):   # f: a scalar or one value per sender
            return v * per_row(p[self.fields[0]], who, v)

    chain(clip(1.0), Flip("flip"), Shrink.build("shrink", {"f": 0.5}), gaussian(0.5))
"""
from __future__ import annotations

import dataclasses
from typing import ClassVar

import jax
import jax.numpy as jnp

from jaxdp.core._params import ParamSpec, param_spec

ROLES = ("clip", "noise", "contraction", "post", "loss")
"""The privacy roles a transform declares (see the module docstring)."""
CONTRACTIONS = ("clip", "contraction", "loss")
"""Roles that never raise a released norm (allowed between the clip and the noise)."""


@dataclasses.dataclass(frozen=True)
class Declared:
    """One Params field a transform declares: the field ``f"{name}_{suffix}"`` of an instance
    named ``name``, and its :class:`~jaxdp.algorithms.ParamSpec` (build with :func:`declare`)."""

    suffix: str
    spec: ParamSpec


def declare(suffix: str, *, domain="positive", doc: str, per_agent: bool = True,
            unit: str | None = None) -> Declared:
    """A transform's Params field, declared once (as :func:`jaxdp.param` declares an algorithm's):
    its suffix, its domain (a name of :data:`jaxdp.algorithms.DOMAINS` or a ``Domain``;
    ``"positive"`` unless given), its meaning and unit. A transform acting per undirected edge
    (:attr:`Transform.undirected`) makes every field a scalar.

    Raises:
      ValueError: an unknown domain or an empty ``doc``.
    """
    return Declared(suffix, param_spec(domain=domain, per_agent=per_agent, doc=doc, unit=unit))


@dataclasses.dataclass(frozen=True)
class Transform:
    """One stage of a channel (subclass it: see the module docstring).

    Attributes:
      name: prefix of its Params fields (unique within a channel).
      defaults: ``((field, value), ...)``: the values of its Params fields, full names
        ``f"{name}_{suffix}"``, each suffix one of :attr:`declared` (build with :meth:`build`).
      norm: the clip's or the quantizer's norm; ``""`` otherwise.

    Class attributes:
      kind: its name in channel names and spec strings (``"clip"``, ``"gaussian"``, ...).
      role: its privacy role (:data:`ROLES`, or ``None``: undeclared).
      declared: its Params fields (:func:`declare`); an instance holds some or all of them.

    Raises:
      ValueError: a field in ``defaults`` that the class does not declare.
    """

    name: str
    defaults: tuple[tuple[str, float], ...] = ()
    norm: str = ""

    kind: ClassVar[str] = "transform"
    role: ClassVar[str | None] = None
    declared: ClassVar[tuple[Declared, ...]] = ()
    loss: ClassVar[bool] = False
    """Whether it loses messages (acts on the directed edges, not on the rows)."""
    undirected: ClassVar[bool] = False
    """Whether its fields are per undirected edge (then scalars, never per agent)."""
    pairwise: ClassVar[bool] = False
    """Whether its per-message draws are coupled across directed edges (:meth:`edge_draw` reads
    the network's edge structure): products then draw every directed message (never by
    linearity, never broadcast)."""
    raises_norm: ClassVar[str] = "it may raise the norm"
    """How it may raise a norm (its :attr:`norm_note` without error feedback)."""

    def __post_init__(self):
        known = {f"{self.name}_{d.suffix}" for d in self.declared}
        for field, _ in self.defaults:
            if field not in known:
                raise ValueError(
                    f"{self.kind} transform {self.name!r}: field {field!r} is not one it declares "
                    f"(its class declares {sorted(known) or 'no field'}: add a "
                    "jaxdp.channels.declare(...) to its `declared`)")

    @classmethod
    def build(cls, name: str, values: dict, **static) -> Transform:
        """An instance named ``name`` with Params values ``{suffix: value}`` and static
        options ``static`` (its dataclass fields)."""
        return cls(name, tuple((f"{name}_{s}", float(v)) for s, v in values.items()), **static)

    @property
    def fields(self) -> tuple[str, ...]:
        """Its Params field names."""
        return tuple(f for f, _ in self.defaults)

    def field(self, suffix: str) -> str:
        """The Params field name of a declared ``suffix``."""
        return f"{self.name}_{suffix}"

    def spec(self, field: str) -> ParamSpec:
        """The declared :class:`~jaxdp.algorithms.ParamSpec` of a field (one scalar for every
        agent if it acts per undirected edge)."""
        spec = next(d.spec for d in self.declared if self.field(d.suffix) == field)
        return dataclasses.replace(spec, per_agent=False) if self.undirected else spec

    @property
    def specs(self) -> tuple[tuple[str, float, ParamSpec], ...]:
        """``((field, value, ParamSpec), ...)``: its fields as the merged Params declare them."""
        return tuple((f, v, self.spec(f)) for f, v in self.defaults)

    @property
    def spec_name(self) -> str:
        """Its part of :attr:`Channel.name <jaxdp.channels.Channel.name>` (parses back to it with
        default arguments)."""
        return self.kind

    # -- privacy ----------------------------------------------------------------------------------
    @property
    def additive(self) -> bool:
        """Whether it adds noise (its role is ``"noise"``)."""
        return self.role == "noise"

    @property
    def lattice(self) -> bool:
        """Whether it is a noise drawn by the lattice sampler (private as floats)."""
        return False

    @property
    def scale_field(self) -> str | None:
        """The field that scales its noise (``None`` unless a noise)."""
        return None

    @property
    def norm_non_increasing(self) -> bool:
        """Whether ``‖T(v)‖ ≤ ‖v‖`` in every ℓp norm, whatever the draws and memory."""
        return self.role in CONTRACTIONS

    @property
    def norm_note(self) -> str:
        """Why it may raise a norm (the report's reason when it sits between clip and noise)."""
        if self.role is None:
            return "declares no privacy role"
        return "error feedback" if self.error_feedback else self.raises_norm

    @property
    def leak(self) -> str:
        """Why its releases have no finite guarantee whatever its scales (``""`` when none): the
        report is then ``inf`` with this reason."""
        return ""

    @property
    def sums_exactly(self) -> bool:
        """Whether a weighted sum of its per-message draws is one draw of the same law (a float
        Gaussian): products may then draw the receivers' sums (``aggregate``)."""
        return False

    def with_sampler(self, sampler: str) -> Transform:
        """A copy drawing with ``sampler`` (itself unless a noise)."""
        return self

    # -- draws and state --------------------------------------------------------------------------
    @property
    def random(self) -> bool:
        """Whether it draws per released row: rows from this transform on are per directed
        message unless the channel broadcasts (a subclass may say ``random: ClassVar[bool] =
        True``)."""
        return False

    @property
    def error_feedback(self) -> bool:
        """Whether the sender keeps an error-feedback memory (the channel keeps it; a compressor
        declares it as a dataclass field)."""
        return False

    @property
    def stateful(self) -> bool:
        """Whether it needs memory across steps (error feedback, Markov link states)."""
        return self.error_feedback

    def draw(self, key, shape, dtype):
        """Its standard draw for rows of ``shape`` (uniforms on [0, 1) unless overridden)."""
        return jax.random.uniform(key, shape, dtype)

    def edge_draw(self, key, shape, dtype, net):
        """Its standard draw for rows sent one per directed edge of ``net`` (``shape[0] = 2E``):
        :meth:`draw` unless it is :attr:`pairwise`."""
        del net
        return self.draw(key, shape, dtype)

    # -- rows -------------------------------------------------------------------------------------
    def apply(self, v, p: dict, who, k, z=None):
        """Transform rows ``v`` ``(R, D)`` sent by agents ``who`` ``(R,)`` at step ``k``.

        Args:
          v: the rows.
          p: this transform's Params values by field name (scalars or ``(N,)`` per sender).
          who: the sender of each row, to index per-agent values.
          k: the step (traced).
          z: its standard draw of ``v``'s shape when :attr:`random`.
        """
        return v

    def message_bits(self, d: int, float_bits: int, bits_in: int) -> int:
        """Bits of one message of ``d`` coordinates after this transform (``bits_in`` before;
        kept unless it changes the encoding)."""
        return bits_in

    def check_size(self, d: int) -> None:
        """Refuse a message size ``d`` this transform cannot handle (none unless overridden).

        Raises:
          ValueError: naming the transform and ``d``.
        """


def per_edge(value, net):
    """A scalar or per-agent ``(N,)`` value (the sender's) for each directed edge."""
    value = jnp.asarray(value, net.w_edge.dtype)
    return value if value.ndim == 0 else value[net.senders]


def per_row(value, who, like):
    """A scalar or per-agent ``(N,)`` value as a ``(R, 1)`` column for rows sent by ``who``."""
    value = jnp.asarray(value, like.dtype)
    return value if value.ndim == 0 else value[who][:, None]


def row_norm(v, norm: str):
    """``(R, 1)`` norms of the rows of ``v`` (ℓ2 written to be differentiable at 0)."""
    if norm == "l2":
        return jnp.sqrt(jnp.sum(v * v, axis=-1, keepdims=True))
    if norm == "linf":
        return jnp.max(jnp.abs(v), axis=-1, keepdims=True)
    return jnp.sum(jnp.abs(v), axis=-1, keepdims=True)


def positive(label: str, value) -> None:
    """Raise ValueError unless ``value > 0``."""
    if not float(value) > 0:
        raise ValueError(f"{label} must be > 0; got {value!r}")


def probability(label: str, value) -> None:
    """Raise ValueError unless ``value`` is in [0, 1]."""
    if not 0.0 <= float(value) <= 1.0:
        raise ValueError(f"{label} must be in [0, 1]; got {value!r}")


def size(label: str, value) -> None:
    """Raise ValueError unless ``value`` is an integer ≥ 1."""
    if not isinstance(value, int) or value < 1:
        raise ValueError(f"{label} must be an integer >= 1; got {value!r}")
