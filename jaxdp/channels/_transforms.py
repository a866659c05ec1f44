"""Channel transforms: what a message goes through between the sender computing it and a neighbour
mixing it.

A transform is a static, hashable description (its kind, its Params field names and their
defaults, its static options such as ``k`` or ``bits``); the numbers live in the wrapped
algorithm's Params, so they can be vmapped over a grid and differentiated. Integer sizes (``k``,
``bits``, ``period``) are static options: they change shapes or the program.

**Row transforms** map the rows ``v`` ``(R, D)`` of one product call (one row per sender for a
broadcast, or before the first random transform; one per directed edge otherwise) to what is
released:

* :func:`clip`: ``v · min(1, C / ‖v‖)`` in the ℓ2, ℓ∞ or ℓ1 norm, per message.
* :func:`gaussian`: ``v + σ_k z``, ``z ~ N(0, I)``, ``σ_k = σ r^k`` (absolute scale, geometric
  schedule with decay ``r``; ``r = 1`` is constant).
* :func:`laplace`: ``v + b_k z``, ``z`` standard Laplace (density ``exp(−|z|)/2``), ``b_k = b r^k``.
* :func:`top_k`, :func:`random_k`, :func:`quantize`: compression (optionally with error feedback).

**Loss transforms** (:func:`drop`, :func:`gilbert_elliott`, :func:`link_failures`,
:func:`activation`) decide per directed edge whether the message arrives. A lost message is
replaced at the receiver by the receiver's own current row: ``M_ij X_i`` instead of
``M_ij T(X_j)``, which keeps W row-stochastic and the zero row sums of P and L (the semantics of
:meth:`jaxdp.network.Network.with_link_mask` for W, P and L; for the adjacency ``A`` the same
substitution is made, so ``deg_i X_i − (A X)_i`` stays the live-edge Laplacian). ``gather``
returns the receiver's own row on a lost edge. Where a loss transform sits in the stack does not
matter.

Every draw is written ``scale * standard_draw`` (the algorithm contract), so metrics are
differentiable in the scales. Per-call draws of transform ``i`` come from
``fold_in(fold_in(channel_key, call), i)``, per-step ones (link and Gilbert–Elliott states,
shared by all calls of a step) from ``fold_in(fold_in(channel_key, STEP_CALL), i)``.
"""
from __future__ import annotations

import dataclasses
import math
from typing import Any

import jax
import jax.numpy as jnp

from jaxdp.privacy import add_noise, check_sampler, noise_draws

NORMS = ("l2", "linf", "l1")
NOISES = ("gaussian", "laplace")
"""The additive noises; each draws with its ``sampler`` option (``"lattice"``, the default, or
``"float"``: :func:`jaxdp.privacy.noise_draws`)."""
COMPRESSORS = ("top_k", "random_k", "quantize")
LOSSES = ("drop", "gilbert_elliott", "link_failures", "activation")
STEP_LOSSES = ("gilbert_elliott", "link_failures", "activation")
"""Loss transforms whose state is drawn once per step (shared by every product call)."""
STEP_CALL = 0x7FFFFFFF
"""``fold_in`` index of the per-step draws (product calls are numbered from 0)."""


@dataclasses.dataclass(frozen=True)
class Transform:
    """One stage of a channel.

    Attributes:
      kind: ``"clip"``, ``"gaussian"``, ``"laplace"``, a compressor (``"top_k"``,
        ``"random_k"``, ``"quantize"``) or a loss (``"drop"``, ``"gilbert_elliott"``,
        ``"link_failures"``, ``"activation"``).
      name: prefix of its Params fields (unique within a channel).
      defaults: ``((field, default), ...)``: its Params fields, full names, with defaults.
      norm: the clip's or the quantizer's norm; ``""`` otherwise.
      options: ``((option, value), ...)``: static configuration (``k``, ``bits``, ``unbiased``,
        ``stochastic``, ``error_feedback``, ``process``, ``period``).
      domains: ``((field, domain), ...)`` with domain ``"positive"`` (> 0), ``"nonnegative"``
        or ``"probability"`` (in [0, 1]); fields not listed are ``"positive"``.
    """

    kind: str
    name: str
    defaults: tuple[tuple[str, float], ...]
    norm: str = ""
    options: tuple[tuple[str, Any], ...] = ()
    domains: tuple[tuple[str, str], ...] = ()

    def option(self, name: str, default=None):
        """A static option's value."""
        return dict(self.options).get(name, default)

    @property
    def fields(self) -> tuple[str, ...]:
        """Its Params field names."""
        return tuple(f for f, _ in self.defaults)

    def domain(self, field: str) -> str:
        """The admissible set of a Params field (``"positive"`` unless declared)."""
        return dict(self.domains).get(field, "positive")

    @property
    def additive(self) -> bool:
        """Whether it adds noise (Gaussian or Laplace)."""
        return self.kind in NOISES

    @property
    def lattice(self) -> bool:
        """Whether it is a noise drawn by the lattice sampler (private as floats)."""
        return self.additive and self.option("sampler", "lattice") == "lattice"

    @property
    def random(self) -> bool:
        """Whether it draws per released row (noise, random-k, stochastic rounding): rows from
        this transform on are per directed message unless the channel broadcasts."""
        return self.additive or self.kind == "random_k" or (
            self.kind == "quantize" and bool(self.option("stochastic")))

    @property
    def loss(self) -> bool:
        """Whether it loses messages (acts on the directed edges, not on the rows)."""
        return self.kind in LOSSES

    @property
    def error_feedback(self) -> bool:
        """Whether the sender keeps an error-feedback memory (compressors only)."""
        return bool(self.option("error_feedback"))

    @property
    def stateful(self) -> bool:
        """Whether it needs memory across steps (error feedback, Gilbert–Elliott, Markov links)."""
        return self.error_feedback or self.kind == "gilbert_elliott" or (
            self.kind == "link_failures" and self.option("process") == "markov")

    @property
    def norm_non_increasing(self) -> bool:
        """Whether ``‖T(v)‖ ≤ ‖v‖`` in every ℓp norm, whatever the draws and memory (a clip, top-k,
        unscaled random-k without error feedback; a loss releases nothing)."""
        if self.error_feedback:
            return False
        return self.kind in ("clip", "top_k") or self.loss or (
            self.kind == "random_k" and not self.option("unbiased"))

    @property
    def scale_field(self) -> str | None:
        """The field that scales its noise (``None`` unless additive)."""
        return self.fields[0] if self.additive else None

    def message_bits(self, d: int, float_bits: int, bits_in: int) -> int:
        """Bits of one message of ``d`` coordinates after this transform (``bits_in`` before).

        Fixed-length encodings: a noise makes the message dense (``d`` floats); top-k and random-k
        send ``k`` (value, index) pairs (``float_bits + ⌈log₂ d⌉`` each); the quantizer sends the
        norm as a float and, per coordinate, a sign bit and a ``bits``-bit level; clips and losses
        keep the format.
        """
        if self.additive:
            return d * float_bits
        if self.kind in ("top_k", "random_k"):
            return self.option("k") * (float_bits + max(1, math.ceil(math.log2(d))))
        if self.kind == "quantize":
            return float_bits + d * (1 + self.option("bits"))
        return bits_in

    def check_size(self, d: int) -> None:
        """Refuse a message size ``d`` this transform cannot handle (``k > d``).

        Raises:
          ValueError: naming the transform, ``k`` and ``d``.
        """
        k = self.option("k")
        if k is not None and k > d:
            raise ValueError(f"{self.kind}(k={k}) needs messages of at least k coordinates; "
                             f"this algorithm sends messages of size D = {d}")

    def draw(self, key, shape, dtype):
        """Its standard draw for rows of ``shape``: the noise, or uniforms on [0, 1)."""
        if self.additive:
            return noise_draws(key, shape, dtype, law=self.kind,
                               sampler=self.option("sampler", "lattice"))
        return jax.random.uniform(key, shape, dtype)

    def apply(self, v, p: dict, who, k, z=None):
        """Transform rows ``v`` ``(R, D)`` sent by agents ``who`` ``(R,)`` at step ``k``.

        Args:
          v: the rows.
          p: this transform's Params values by field name (scalars or ``(N,)`` per sender).
          who: the sender of each row, to index per-agent values.
          k: the step (traced).
          z: a standard draw of ``v``'s shape for a random transform.
        """
        if self.kind == "clip":
            c = per_row(p[self.fields[0]], who, v)
            return v * c / jnp.maximum(row_norm(v, self.norm), c)
        if self.additive:
            return add_noise(v, self.scale(p, who, v, k), z, law=self.kind,
                             sampler=self.option("sampler", "lattice"))
        if self.kind == "top_k":
            return v * _keep_largest(jnp.abs(v), self.option("k"))
        if self.kind == "random_k":
            k_, d = self.option("k"), v.shape[-1]
            scale = d / k_ if self.option("unbiased") else 1.0
            return v * _keep_largest(z, k_) * scale
        if self.kind == "quantize":
            return _quantize(v, self.option("bits"), self.norm, z)
        return v  # a loss acts on the edges

    def scale(self, p: dict, who, like, k):
        """A noise transform's scale at step ``k``, ``σ r^k`` (a scalar or ``(R, 1)``)."""
        return per_row(p[self.fields[0]], who, like) * per_row(p[self.fields[1]], who, like) ** k

    # -- losses -----------------------------------------------------------------------------------
    def link_state(self, p: dict, key, previous, net, k):
        """A per-step loss's state at step ``k`` from the previous one (``None`` at the start):
        Gilbert–Elliott ``(2E,)`` bool "bad"; links ``(E,)`` bool "down"; activation ``(E,)`` bool
        "down" (or ``(2E,)`` for agent activation)."""
        n_edges, dtype = net.n_edges, net.w_edge.dtype
        if self.kind == "gilbert_elliott":
            u = jax.random.uniform(key, (2 * n_edges,), dtype)
            return _markov(previous, u, *(per_edge(p[f], net) for f in self.fields[:2]))
        if self.kind == "link_failures":
            u = jax.random.uniform(key, (n_edges,), dtype)
            if self.option("process") == "iid":
                return u < p[self.fields[0]]
            return _markov(previous, u, p[self.fields[0]], p[self.fields[1]])
        process = self.option("process")
        if process == "cyclic":
            return (k + jnp.arange(n_edges)) % self.option("period") != 0
        if process == "poisson":
            u = jax.random.uniform(key, (n_edges,), dtype)
            return u >= -jnp.expm1(-jnp.asarray(p[self.fields[0]], dtype))
        u = jax.random.uniform(key, (net.n_agents,), dtype)  # "agents"
        awake = u < jnp.broadcast_to(jnp.asarray(p[self.fields[0]], dtype), (net.n_agents,))
        return ~(awake[net.senders] & awake[net.receivers])

    def initial_link_state(self, p: dict, key, net):
        """The state before step 0: a draw from the chain's stationary law (``None`` when the
        state is redrawn every step)."""
        if not self.stateful:
            return None
        size = 2 * net.n_edges if self.kind == "gilbert_elliott" else net.n_edges
        a, b = (per_edge(p[f], net) for f in self.fields[:2])
        return jax.random.uniform(key, (size,), net.w_edge.dtype) < a / (a + b)

    def lost(self, p: dict, key, state, net):
        """``(2E,)`` bool: the directed messages of one product call that are lost.

        Args:
          p: its Params values.
          key: this call's key (``drop`` and Gilbert–Elliott draw per call).
          state: this step's :meth:`link_state` (``None`` for ``drop``).
          net: the static network.
        """
        dtype, n = net.w_edge.dtype, 2 * net.n_edges
        if self.kind == "drop":
            return jax.random.uniform(key, (n,), dtype) < per_edge(p[self.fields[0]], net)
        if self.kind == "gilbert_elliott":
            rate = jnp.where(state, per_edge(p[self.fields[3]], net),
                             per_edge(p[self.fields[2]], net))
            return jax.random.uniform(key, (n,), dtype) < rate
        if state.shape[0] == n:
            return state
        return state[net.edge_id]


def _markov(previous, u, p_up_to_down, p_down_to_up):
    """One step of a two-state chain per entry: ``down' = down ? u ≥ q : u < p``."""
    return jnp.where(previous, u >= p_down_to_up, u < p_up_to_down)


def _keep_largest(score, k: int):
    """0/1 mask of the ``k`` largest entries of each row of ``score`` (ties: lowest index)."""
    idx = jax.lax.top_k(score, k)[1]
    rows = jnp.arange(score.shape[0])[:, None]
    return jnp.zeros(score.shape, score.dtype).at[rows, idx].set(1.0)


def _quantize(v, bits: int, norm: str, z):
    """QSGD (Alistarh et al. 2017, Eq. (1) with ``s = 2^bits − 1``): ``‖v‖ sign(v_j) ℓ_j / s`` with
    ``ℓ_j`` the level of ``s |v_j| / ‖v‖`` rounded to nearest (``z is None``) or stochastically
    (up with probability its fractional part, given the uniforms ``z``: unbiased)."""
    s = 2.0 ** bits - 1.0
    n = row_norm(v, norm)
    safe = jnp.where(n > 0, n, 1.0)
    a = s * jnp.abs(v) / safe
    if z is None:
        level = jnp.round(a)
    else:
        low = jnp.floor(a)
        level = low + (z < a - low).astype(v.dtype)
    level = jax.lax.stop_gradient(level)
    return jnp.where(n > 0, jnp.sign(v) * n * level / s, 0.0)


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


def clip(c: float = 1.0, *, norm: str = "l2", name: str = "clip") -> Transform:
    """Clip every message to norm at most ``c`` (Params field ``f"{name}_norm"``, > 0).

    Raises:
      ValueError: an unknown ``norm`` or ``c <= 0``.
    """
    if norm not in NORMS:
        raise ValueError(f"clip norm must be one of {NORMS}; got {norm!r}")
    _positive("clip c", c)
    return Transform("clip", name, ((f"{name}_norm", float(c)),), norm)


def gaussian(sigma: float = 1.0, *, decay: float = 1.0, name: str = "gauss",
             sampler: str = "lattice") -> Transform:
    """Add ``σ r^k z``, ``z ~ N(0, I)`` (fields ``f"{name}_sigma"`` > 0, ``f"{name}_decay"`` > 0).

    ``sampler="lattice"`` (default) releases ``γ(round(v/γ) + K)``, ``K`` discrete Gaussian,
    ``γ = σr^k/4096``: private as floats (:func:`jaxdp.privacy.lattice_release`);
    ``sampler="float"`` adds float draws (faster, aggregatable; the report's guarantee is ``inf``).

    Raises:
      ValueError: ``sigma <= 0``, ``decay <= 0`` or an unknown sampler.
    """
    _positive("gaussian sigma", sigma)
    _positive("gaussian decay", decay)
    return Transform("gaussian", name, ((f"{name}_sigma", float(sigma)),
                                        (f"{name}_decay", float(decay))),
                     options=(("sampler", check_sampler(sampler)),))


def laplace(b: float = 1.0, *, decay: float = 1.0, name: str = "laplace",
            sampler: str = "lattice") -> Transform:
    """Add ``b r^k z``, ``z`` standard Laplace (fields ``f"{name}_b"``, ``f"{name}_decay"``, > 0).

    ``sampler="lattice"`` (default): the discrete Laplace on ``γℤ``, ``γ = br^k/65536``, private
    as floats; ``sampler="float"``: float draws (the report's guarantee is ``inf``).

    Raises:
      ValueError: ``b <= 0``, ``decay <= 0`` or an unknown sampler.
    """
    _positive("laplace b", b)
    _positive("laplace decay", decay)
    return Transform("laplace", name, ((f"{name}_b", float(b)), (f"{name}_decay", float(decay))),
                     options=(("sampler", check_sampler(sampler)),))


_EF_DOC = """
    With ``error_feedback=True`` the sender keeps a memory ``e`` per product call and row (zero at
    the start), sends ``c = C(v + e)`` and sets ``e ← v + e − c`` (Seide et al. 2014, 1-bit SGD;
    Karimireddy et al. 2019, EF-SGD, Algorithm 2): the compression error is re-sent later
    instead of lost. The memory is channel state (:class:`~jaxdp.channels.ChannelState`)."""


def top_k(k: int, *, error_feedback: bool = False, name: str = "topk") -> Transform:
    """Keep the ``k`` largest-magnitude coordinates of each message, zero the rest (ties: the
    lowest index). No Params fields; ``k`` is static. Unlike decent-bench's ``TopK`` (which
    compresses once per sender), the compression applies to each row the channel sends.
    """
    _size("top_k k", k)
    return Transform("top_k", name, (), "", (("k", int(k)),
                                             ("error_feedback", bool(error_feedback))))


top_k.__doc__ += _EF_DOC + """

    Raises:
      ValueError: ``k < 1`` (``k > D`` is refused where the message size ``D`` is known).
    """


def random_k(k: int, *, unbiased: bool = True, error_feedback: bool = False,
             name: str = "randk") -> Transform:
    """Keep ``k`` coordinates chosen uniformly at random (without replacement) per message, zero
    the rest, and scale by ``D/k`` when ``unbiased`` (then ``E[C(v)] = v``; Stich et al. 2018).
    A random draw (``D`` uniforms per row, the ``k`` largest kept), so per directed message like
    the noise unless the channel broadcasts.
    """
    _size("random_k k", k)
    return Transform("random_k", name, (), "", (("k", int(k)), ("unbiased", bool(unbiased)),
                                                ("error_feedback", bool(error_feedback))))


random_k.__doc__ += _EF_DOC + """

    Raises:
      ValueError: ``k < 1`` (``k > D`` is refused where the message size ``D`` is known).
    """


def quantize(bits: int, *, stochastic: bool = False, norm: str = "l2",
             error_feedback: bool = False, name: str = "quant") -> Transform:
    """QSGD-style quantization (Alistarh et al. 2017): ``s = 2^bits − 1`` levels of
    ``|v_j| / ‖v‖`` (``‖·‖`` the ℓ2 norm by default, or ``"linf"``), rounded to the nearest level
    (deterministic, biased) or stochastically (up with probability the fractional part: unbiased,
    a per-row random draw); the sign and the norm are sent in full. decent-bench's
    ``StochasticQuantization(n_levels=s)`` is the stochastic ℓ2 case; its ``Quantization`` rounds
    to a fixed step instead.
    """
    if not isinstance(bits, int) or not 1 <= bits <= 24:
        raise ValueError(f"quantize bits must be an integer in [1, 24]; got {bits!r}")
    if norm not in ("l2", "linf"):
        raise ValueError(f"quantize norm must be 'l2' or 'linf'; got {norm!r}")
    return Transform("quantize", name, (), norm, (("bits", bits), ("stochastic", bool(stochastic)),
                                                  ("error_feedback", bool(error_feedback))))


quantize.__doc__ += _EF_DOC + """

    Raises:
      ValueError: ``bits`` not an integer in [1, 24], or an unknown norm.
    """


def drop(p: float = 0.1, *, name: str = "drop") -> Transform:
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
    _probability("drop p", p)
    field = f"{name}_p"
    return Transform("drop", name, ((field, float(p)),), domains=((field, "probability"),))


def gilbert_elliott(p_gb: float = 0.1, p_bg: float = 0.5, loss_good: float = 0.0,
                    loss_bad: float = 1.0, *, name: str = "ge") -> Transform:
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
    for label, v in (("p_gb", p_gb), ("p_bg", p_bg), ("loss_good", loss_good),
                     ("loss_bad", loss_bad)):
        _probability(f"gilbert_elliott {label}", v)
    if not p_gb + p_bg > 0:
        raise ValueError("gilbert_elliott needs p_gb + p_bg > 0 (else the chain has no "
                         f"stationary law); got p_gb={p_gb}, p_bg={p_bg}")
    fields = tuple((f"{name}_{f}", float(v)) for f, v in (
        ("p_gb", p_gb), ("p_bg", p_bg), ("loss_good", loss_good), ("loss_bad", loss_bad)))
    return Transform("gilbert_elliott", name, fields,
                     domains=tuple((f, "probability") for f, _ in fields))


def link_failures(p: float = 0.1, *, process: str = "iid", recover: float = 0.5,
                  name: str = "link") -> Transform:
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
    _probability("link_failures p", p)
    fields = ((f"{name}_p", float(p)),)
    if process == "markov":
        _probability("link_failures recover", recover)
        if not p + recover > 0:
            raise ValueError("link_failures('markov') needs p + recover > 0; got both 0")
        fields += ((f"{name}_recover", float(recover)),)
    return Transform("link_failures", name, fields, options=(("process", process),),
                     domains=tuple((f, "probability") for f, _ in fields))


def activation(process: str = "poisson", *, rate: float = 1.0, period: int = 2,
               p: float = 0.5, name: str = "act") -> Transform:
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
        return Transform("activation", name, (), options=(("process", "cyclic"),
                                                          ("period", period)))
    if process == "poisson":
        if not float(rate) >= 0:
            raise ValueError(f"activation rate must be >= 0; got {rate!r}")
        field = f"{name}_rate"
        return Transform("activation", name, ((field, float(rate)),),
                         options=(("process", "poisson"),), domains=((field, "nonnegative"),))
    if process == "agents":
        _probability("activation p", p)
        field = f"{name}_p"
        return Transform("activation", name, ((field, float(p)),),
                         options=(("process", "agents"),), domains=((field, "probability"),))
    raise ValueError(f"activation process must be 'cyclic', 'poisson' or 'agents'; got {process!r}")


def _positive(label: str, value) -> None:
    if not float(value) > 0:
        raise ValueError(f"{label} must be > 0; got {value!r}")


def _probability(label: str, value) -> None:
    if not 0.0 <= float(value) <= 1.0:
        raise ValueError(f"{label} must be in [0, 1]; got {value!r}")


def _size(label: str, value) -> None:
    if not isinstance(value, int) or value < 1:
        raise ValueError(f"{label} must be an integer >= 1; got {value!r}")


TRANSFORMS = {"clip": clip, "gaussian": gaussian, "laplace": laplace, "top_k": top_k,
              "random_k": random_k, "quantize": quantize, "drop": drop,
              "gilbert_elliott": gilbert_elliott, "link_failures": link_failures,
              "activation": activation}
"""Every transform constructor by kind (the command line's ``--channel`` vocabulary)."""


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
        default) draws every message's integer: a sum of discrete Gaussians is not one.
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
        return "+".join(t.kind + ("" if t.lattice or not t.additive else ":sampler=float")
                        for t in self.transforms) + mode

    @property
    def defaults(self) -> tuple[tuple[str, float], ...]:
        """Every Params field of the stack with its default."""
        return tuple(fd for t in self.transforms for fd in t.defaults)

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
    def additive_tail(self) -> bool:
        """The only random row transform is an additive noise, the last row transform (products
        can then add the noise to a clean product by linearity)."""
        ts = [self.transforms[i] for i in self.rows]
        return [t.random for t in ts].count(True) == 1 and ts[-1].additive

    @property
    def lattice_tail(self) -> bool:
        """The last row transform is a lattice-sampled noise: the released rows are lattice
        points, so products cannot add the noise to a clean product by linearity."""
        return bool(self.rows) and self.transforms[self.rows[-1]].lattice

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

    def standard_draws(self, key, call: int, shape, dtype) -> dict:
        """Transform i's standard draw for product call ``call``: ``{i: (R, D)}``.

        Stream ``fold_in(fold_in(key, call), i)``: adding a call or a transform changes no other
        draw (common random numbers).
        """
        key = jax.random.fold_in(key, call)
        return {i: t.draw(jax.random.fold_in(key, i), shape, dtype)
                for i, t in enumerate(self.transforms) if t.random}

    def check_sizes(self, sizes) -> None:
        """Refuse message sizes a transform cannot handle (see :meth:`Transform.check_size`)."""
        for d in sizes:
            for t in self.transforms:
                t.check_size(d)


def chain(*transforms: Transform, broadcast: bool = False, aggregate: bool = False,
          self_term: str = "clean") -> Channel:
    """A channel applying ``transforms`` in order (see :class:`Channel` for the options).

    Raises:
      ValueError: no transform, a non-Transform, two transforms with the same field names or
        names, ``aggregate`` with ``broadcast`` or without a single Gaussian last, or an unknown
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
    rows = [t for t in transforms if not t.loss]
    random = [t.kind for t in rows if t.random]
    if aggregate and (broadcast or random != ["gaussian"] or not rows[-1].additive
                      or rows[-1].lattice or any(t.error_feedback for t in rows)):
        raise ValueError("aggregate=True needs per-message noise (broadcast=False) and exactly one "
                         "random row transform, a float-sampled Gaussian (sampler='float': "
                         "lattice draws do not sum to a Gaussian), last (no error feedback); got "
                         f"{[t.kind for t in transforms]} with broadcast={broadcast}")
    if self_term not in ("clean", "released"):
        raise ValueError(f"chain self_term must be 'clean' or 'released'; got {self_term!r}")
    if self_term == "released" and (aggregate or (random and not broadcast)):
        raise ValueError("self_term='released' needs one released row per sender: broadcast=True "
                         f"(or no random transform); got {[t.kind for t in transforms]} with "
                         f"broadcast={broadcast}, aggregate={aggregate}")
    return Channel(tuple(transforms), bool(broadcast), bool(aggregate), self_term)
