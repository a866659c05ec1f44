"""A channel: a stack of transforms applied in order (like ``optax.chain``).

Every draw is written ``scale * standard_draw`` (the algorithm contract), so metrics are
differentiable in the scales. Per-call draws of transform ``i`` come from
``fold_in(fold_in(channel_key, call), i)``, per-step ones (link and Gilbert–Elliott states,
shared by all calls of a step) from ``fold_in(fold_in(channel_key, STEP_CALL), i)``.
"""
from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp

from jaxdp._registry import Registry
from jaxdp.channels._base import Transform
from jaxdp.channels._correlated import pairwise_cancelling, zero_sum
from jaxdp.channels._losses import activation, drop, gilbert_elliott, link_failures
from jaxdp.channels._noise import gaussian, laplace
from jaxdp.channels._transforms import clip, quantize, random_k, top_k

STEP_CALL = 0x7FFFFFFF
"""``fold_in`` index of the per-step draws (product calls are numbered from 0)."""

TRANSFORMS = Registry(
    "channel transform", "jaxdp.transforms",
    {"clip": clip, "gaussian": gaussian, "laplace": laplace, "top_k": top_k,
     "random_k": random_k, "quantize": quantize, "drop": drop,
     "gilbert_elliott": gilbert_elliott, "link_failures": link_failures,
     "activation": activation, "pairwise_cancelling": pairwise_cancelling,
     "zero_sum": zero_sum},
    how="jaxdp.channels.TRANSFORMS.register(kind, constructor)")
"""Every transform constructor by kind (the command line's ``--channel`` vocabulary): a
:class:`~jaxdp._registry.Registry` whose entry-point group is ``jaxdp.transforms``. A user's
constructor (a function of the spec's values, typed by its annotations, returning a
:class:`Transform` whose ``kind`` is its key) registered here or by entry point is read from spec
strings like the built-ins."""


@dataclasses.dataclass(frozen=True)
class Channel:
    """A stack of transforms applied in order (like ``optax.chain``); build it with :func:`chain`.

    Attributes:
      transforms: the stages, first applied first.
      broadcast: one draw per sender and product call (every neighbour receives the same noisy
        message: one release) instead of one per directed message (``deg_j`` releases).
        Per-message float-sampled Gaussian noise added last (clip, then
        ``gaussian(σ, sampler="float")``) is drawn by its sum at each receiver: in a product
        ``Σ_j M_ij (v_j + s_j ξ_ij)`` the noise term is exactly ``N(0, Σ_j M_ij² s_j² I)``, one
        ``(N, d)`` draw; the messages are then drawn from their law given those sums and
        recorded. Messages and models have the joint law of independent per-message draws, and a
        run that never reads the messages pays for the ``(N, d)`` draw only. Lattice noise (the
        default) draws every message's integer: a sum of rounded Gaussians is not one.
      aggregate: do not draw or record the messages of such a channel (the models are the
        default's, draw for draw); products record nothing, so ``observe``, attacks and audits
        need the default. Needs a single random row transform, a Gaussian, last among the row
        transforms.
      self_term: what the sender mixes for itself in ``(M X)_i = M_ii X_i + ...``: its own
        ``"clean"`` row (what a real agent holds), or the row it ``"released"`` (as the
        algorithms whose papers mix ``W x̃`` with the agent's own noisy ``x̃_i``; needs
        ``broadcast=True`` or no random transform: one released row per sender).
    """

    transforms: tuple[Transform, ...]
    broadcast: bool = False
    aggregate: bool = False
    self_term: str = "clean"

    @property
    def name(self) -> str:
        """``"clip+gaussian"``-style name (``"/bcast"`` or ``"/agg"``, then ``"/self"`` for a
        released self term, appended)."""
        mode = "/bcast" if self.broadcast else "/agg" if self.aggregate else ""
        mode += "/self" if self.self_term == "released" else ""
        return "+".join(t.spec_name for t in self.transforms) + mode

    @property
    def defaults(self) -> tuple[tuple[str, float], ...]:
        """Every Params field of the stack with its default."""
        return tuple(fd for t in self.transforms for fd in t.defaults)

    @property
    def specs(self) -> tuple:
        """``((field, default, ParamSpec), ...)``: every Params field of the stack as its
        transform declares it (:attr:`Transform.specs`)."""
        return tuple(fs for t in self.transforms for fs in t.specs)

    @property
    def per_sender_copies(self) -> bool:
        """Whether a call draws one independent noisy copy per sender (broadcast, or a noise
        whose independent draw is per sender, :attr:`PairwiseCancelling.per_sender
        <jaxdp.channels._correlated.PairwiseCancelling.per_sender>`)."""
        return self.broadcast or any(getattr(t, "per_sender", False) for t in self.transforms)

    @property
    def rows(self) -> tuple[int, ...]:
        """Indices of the row transforms (every transform but the losses)."""
        return tuple(i for i, t in enumerate(self.transforms) if not t.loss)

    @property
    def losses(self) -> tuple[int, ...]:
        """Indices of the loss transforms."""
        return tuple(i for i, t in enumerate(self.transforms) if t.loss)

    @property
    def stateful(self) -> bool:
        """Whether the wrapped algorithm's state must carry channel memory and counts (a stateful
        transform or a loss)."""
        return any(t.stateful or t.loss for t in self.transforms)

    @property
    def tail(self) -> Transform | None:
        """The last row transform (``None`` without one)."""
        return self.transforms[self.rows[-1]] if self.rows else None

    @property
    def additive_tail(self) -> bool:
        """The only random row transform is an additive noise, the last row transform (products
        can then add the noise to a clean product by linearity)."""
        ts = [self.transforms[i] for i in self.rows]
        return ([t.random for t in ts].count(True) == 1 and ts[-1].additive
                and not ts[-1].pairwise)

    @property
    def lattice_tail(self) -> bool:
        """The last row transform is a lattice-sampled noise: the released rows are lattice
        points, so products cannot add the noise to a clean product by linearity."""
        return bool(self.rows) and self.tail.lattice

    @property
    def first_random(self) -> int:
        """Index of the first random transform (``len(transforms)`` when none)."""
        return next((i for i, t in enumerate(self.transforms) if t.random), len(self.transforms))

    def message_bits(self, d: int, float_bits: int) -> int:
        """Bits of one released message of ``d`` coordinates (``d`` floats before the channel)."""
        bits = d * float_bits
        for t in self.transforms:
            bits = t.message_bits(d, float_bits, bits)
        return bits

    def apply(self, v, params, who, k, draws, start: int = 0, stop: int | None = None,
              memory: dict | None = None, tag: str = ""):
        """Transforms ``start..stop`` on rows ``v``; ``draws[i]`` is transform i's standard draw.

        With ``memory`` (a dict, updated in place), a transform with error feedback reads its
        memory at ``f"{tag}/t{i}"`` (zeros when absent) and writes the new one.
        """
        for i, t in enumerate(self.transforms[start:stop], start):
            p = {f: params[f] for f in t.fields}
            if t.error_feedback:
                key = f"{tag}/t{i}"
                u = v + (memory.get(key, jnp.zeros_like(v)) if memory is not None else 0.0)
                v = t.apply(u, p, who, k, draws.get(i))
                if memory is not None:
                    memory[key] = u - v
            else:
                v = t.apply(v, p, who, k, draws.get(i))
        return v

    def standard_draws(self, key, call: int, shape, dtype, net=None) -> dict:
        """Transform i's standard draw for product call ``call``: ``{i: (R, D)}`` (with ``net``,
        rows one per directed edge of it: :meth:`Transform.edge_draw`).

        Stream ``fold_in(fold_in(key, call), i)``: adding a call or a transform changes no other
        draw (common random numbers).
        """
        key = jax.random.fold_in(key, call)
        return {i: (t.draw(jax.random.fold_in(key, i), shape, dtype) if net is None else
                    t.edge_draw(jax.random.fold_in(key, i), shape, dtype, net))
                for i, t in enumerate(self.transforms) if t.random}

    def check_sizes(self, sizes) -> None:
        """Refuse message sizes a transform cannot handle (see :meth:`Transform.check_size`)."""
        for d in sizes:
            for t in self.transforms:
                t.check_size(d)

    def with_sampler(self, sampler: str) -> Channel:
        """A copy whose every noise draws with ``sampler`` (``"lattice"`` or ``"float"``)."""
        return dataclasses.replace(self, transforms=tuple(t.with_sampler(sampler)
                                                          for t in self.transforms))


def chain(*transforms: Transform, broadcast: bool = False, aggregate: bool = False,
          self_term: str = "clean") -> Channel:
    """A channel applying ``transforms`` in order (see :class:`Channel` for the options).

    Raises:
      ValueError: no transform, a non-Transform, two transforms with the same field names or
        names, a pairwise transform with ``broadcast``, ``aggregate`` with ``broadcast`` or without a single Gaussian last, or an unknown
        ``self_term`` (``"released"`` with per-message draws).
    """
    if not transforms:
        raise ValueError("chain needs at least one transform")
    for t in transforms:
        if not isinstance(t, Transform):
            raise ValueError(f"chain takes Transforms ({', '.join(TRANSFORMS)}); got {t!r}")
    fields = [f for t in transforms for f in t.fields]
    dup = sorted({f for f in fields if fields.count(f) > 1})
    if dup:
        raise ValueError(f"chain: Params fields {dup} appear twice; give the transforms "
                         "distinct name= prefixes")
    _check_aggregate(transforms, broadcast, aggregate)
    if self_term not in ("clean", "released"):
        raise ValueError(f"chain self_term must be 'clean' or 'released'; got {self_term!r}")
    random = [t for t in transforms if not t.loss and t.random]
    paired = [t.kind for t in random if t.pairwise]
    if paired and broadcast:
        raise ValueError(f"{paired[0]} couples the messages of different directed edges, so it "
                         "cannot broadcast one row per sender; use broadcast=False")
    if self_term == "released" and (aggregate or (random and not broadcast)):
        raise ValueError("self_term='released' needs one released row per sender: broadcast=True "
                         f"(or no random transform); got {[t.kind for t in transforms]} with "
                         f"broadcast={broadcast}, aggregate={aggregate}")
    return Channel(tuple(transforms), bool(broadcast), bool(aggregate), self_term)


def _check_aggregate(transforms, broadcast: bool, aggregate: bool) -> None:
    """Refuse ``aggregate`` unless the only random row transform, last, sums exactly."""
    rows = [t for t in transforms if not t.loss]
    random = [t for t in rows if t.random]
    if aggregate and (broadcast or len(random) != 1 or not rows[-1].additive
                      or not rows[-1].sums_exactly or any(t.error_feedback for t in rows)):
        raise ValueError("aggregate=True needs per-message noise (broadcast=False) and exactly one "
                         "random row transform, a float-sampled Gaussian (sampler='float': "
                         "lattice draws do not sum to a Gaussian), last (no error feedback); got "
                         f"{[t.kind for t in transforms]} with broadcast={broadcast}")
