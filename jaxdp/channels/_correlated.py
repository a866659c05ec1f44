"""Correlated noise across the messages of a step (role ``"noise"``, :attr:`Transform.pairwise`).

Each directed message ``e = (j → i)`` of a product call is released as

.. math:: m_e = γ\\,(a(v_j) + K_e + c_e)\\quad\\text{(lattice)},\\qquad
          m_e = v_j + σ ξ_e + σ_{cor} ξ'_e\\quad\\text{(float sampler)},

``γ = σ/R``, ``a(v_j)`` the lattice integer of :func:`~jaxdp.privacy.samplers.lattice_release`,
``K_e`` an independent rounded Gaussian ``round(R·Z)`` (``R`` = :data:`~jaxdp.privacy.samplers.GAUSSIAN_RESOLUTION`) and ``c_e`` a **coupled**
integer that depends on draws of other directed messages. The message is computed from the lattice
release ``fl(γ(a + K_e))`` of :func:`~jaxdp.privacy.add_noise` (the eavesdropper's release),
whose integer is recovered exactly (:func:`lattice_integer`), plus ``c_e``: the integer
``n_e = a + K_e + c_e`` is summed exactly (every partial sum is an integer of magnitude at most
``L + 13R + |c_e|``, below ``2^{24}`` in float32 and ``2^{53}`` in float64 for
``ρ ≤`` :func:`max_exact_ratio`) and multiplied by ``γ`` once, so the message is a function of
``n_e`` alone.

* :func:`pairwise_cancelling` (DECOR, Allouah et al., ICML 2024, §3): ``c_e = round(ρ K'_e)``,
  ``ρ = σ_cor/σ`` (the undecayed fields; snapped to an integer within a relative
  :data:`SNAP`), ``K'`` drawn once per undirected edge and call, with
  ``c_{j→i} = −c_{i→j}``: with symmetric weights the coupled terms cancel exactly in the
  network sum ``Σ_i Σ_j W_ij m_{j→i}``. **Deviation from the paper**: DECOR's Eq. (3) writes
  ``v_ij = v̄_i + v_ij^cor`` with one independent draw ``v̄_i`` per *agent* (shared by all its
  messages, which is what the paper's accountant, ``Σ = σ²I + σ_cor² L``, analyses); this channel
  draws the independent part per *directed message* (as :func:`~jaxdp.channels.gaussian`).
* :func:`zero_sum` (Zip-DL, Biswas et al., PoPETs 2025): ``c_e = −K_{next(e)}``, ``next(e)`` the
  sender's next outgoing edge (cyclically): a sender's noise sums to exactly 0, so the sum of its
  messages is ``deg_j · γ a(v_j)`` in the clear; the report is ``inf`` with that reason
  (:attr:`Transform.leak`) under every threat model.

**Eavesdropper.** ``c`` is independent of every data set and of ``K``: the messages are
post-processing of the per-message lattice Gaussian releases ``γ(a + K_e)`` and of
data-independent randomness, so the report is the plain per-message Gaussian's with ``σ``
alone.

**SecLDP (``threat="secret_pairs"``) for DECOR, integer ρ.** The outsider sees every message,
not the pairwise draws ``K'``. Every message (and what a transform after the noise makes of it)
is a function of its integer ``n_e``, so the view is post-processing of the integers of every
call. Fix a step and a product call; given the integers of the past calls the other agents'
values do not depend on the protected agent ``u``'s data (their states are functions of their own
data, their own randomness and those integers), and the draws are fresh per call, so the
integers of the call are ``n = a + K + ρBK'`` (``B``: directed edge → undirected
edge, ``±1``) and a neighbouring data set of ``u`` changes ``a`` by an integer shift ``s``
supported on ``u``'s outgoing messages, ``‖s_e‖₂ ≤ Δ_L/γ`` per message (``Δ_L``:
:func:`~jaxdp.privacy.samplers.lattice_sensitivity`). *Coupling.* When ``ρ`` is an integer and
``c = ρK'`` exactly, for all integer vectors ``(w, t)`` with ``w + ρBt = s`` the map
``F(k, k') = a + k + ρBk'`` gives ``F(K + w, K' + t) = n + s``; hence the view under ``s`` is the
image under the fixed ``F`` of ``(K + w, K' + t)``, under ``0`` of ``(K, K')``, and by data
processing its Rényi divergence of every order ``α`` is at most that of the pair of rounded
Gaussians shifted by integers, itself at most the continuous Gaussian pair's
``α(‖w‖² + ‖t‖²)/(2R²)`` (``round(RZ) + w = round(RZ + w)`` for integer ``w``: data processing
again). *Optimum.* The cost separates over undirected edges and
coordinates: for ``u``'s message ``e = u → i`` (shift ``s``), its reverse ``i → u`` (shift 0) and
their common ``t`` (``τ = ±t``), ``w_e = s − ρτ``, ``w_{rev} = ρτ`` and the cost is
``g(τ) = (s − ρτ)² + (1 + ρ²)τ² = f s² + (1 + 2ρ²)(τ − τ*)²`` with ``τ* = ρs/(1 + 2ρ²)`` and
``f = (1 + ρ²)/(1 + 2ρ²)`` (this is ``sᵀ(I + ρ²BBᵀ)⁻¹s``, the continuous Gaussian's exact
value). The integer ``τ = round(τ*)`` costs at most ``f s² + (1 + 2ρ²)/4`` per coordinate and
``τ = 0`` costs ``s²``, so a message of ``d`` coordinates costs at most
``min(Δ_L², fΔ_L² + γ²d(1 + 2ρ²)/4)/γ²`` (:func:`secret_pairs_factor`). *Curious agents.* An
agent ``v`` that observes knows its own seeds and noise: for the edge (one message per call and
round) ``{u, v}`` the coupling has no free variable but ``K_{u→v}``, cost ``Δ_L²/γ²``; the report
takes the worse of the outsider and any single curious agent. *Result.* The call is dominated
by the Gaussian pair of the eavesdropper's events with each message's sensitivity
``Δ_L`` replaced by ``Δ_L√φ_u``, ``φ_u`` the factor above averaged over ``u``'s messages with the
curious agent's edges at 1; the accountants valid for those events (zCDP and RDP, adaptive
composition over calls and steps) are valid here. The ideal mechanism differs from the sampled
one only through the table laws of ``K`` and ``K'`` (the release is exact on their support), so
the report's sampler term counts both draws (at most twice the independent ones).
Non-integer ``ρ`` (``c = round(ρK')`` has a sparse support: a shift of ``K'`` by one does not
shift ``c`` by a constant) and ``ρ`` beyond :func:`max_exact_ratio` fall back on the
eavesdropper bound with that reason; with ``ρ → ∞`` the gain tends to a factor 2 in the zCDP
parameter (the independent per-message draw bounds it).

**DECOR as printed** (``independent="per_sender"``). Eq. (3)'s ``v̄_i`` is one lattice draw
``K_j`` per sender and call, shared by its messages: ``n_e = a_j + K_j + s_e ρK'_{edge(e)}``
(``s_e = ±1`` as above). *Eavesdropper*: the messages are post-processing of the one release
``γ(a_j + K_j)`` per sender and call and of data-independent ``K'``: the broadcast Gaussian's
report (one release per sender and call). *SecLDP, the outsider.* The coupling needs integer
``(w, t)`` (``w`` on the senders, ``t`` on the undirected edges) with ``w_j + s_eρt_{edge(e)} =
s[j = u]`` for every directed ``e = j → i``: the two directions of an edge ``{j, i}`` give
``w_j + w_i = s[u ∈ {i, j}]`` and ``ρt = b_{lo→hi} − w_{lo}``. ``w = s·1_u, t = 0`` solves it;
the homogeneous equations ``w_j + w_i = 0`` on every edge of ``u``'s connected component have
the solutions ``x h`` (``h = ±1`` by side) when the component is bipartite and only ``0`` when
it has an odd cycle: then the outsider recovers ``a_u + K_u`` exactly (around an odd cycle
through ``u`` the alternating sum of the edges' sums ``n_{j→i} + n_{i→j}`` is ``2(a_u + K_u)``
plus known terms) and the bound is the eavesdropper's, exactly. On a bipartite component of
``N_c`` agents and ``E_c`` edges every ``|t| = |x|/ρ`` and per coordinate the cost is
``(s + x)² + (N_c − 1)x² + E_c x²/ρ² = s²(1 − 1/M) + M(x + s/M)²``, ``M = N_c + E_c/ρ²``;
integrality needs ``x ∈ ρℤ``, so the best one is within ``ρ/2`` of ``−s/M`` and a message of
``d`` coordinates costs at most ``min(Δ_L², (1 − 1/M)Δ_L² + γ²d(N_cρ² + E_c)/4)/γ²``
(:func:`printed_outsider_factor`): a gain of at most ``1/N_c``. *Curious agents.* A neighbour
``v`` of ``u`` knows ``K'_{uv}``, so ``t_{uv} = 0``, hence ``x = 0``: it sees ``a_u + K_u``,
the full release. SecLDP's observer includes one curious agent, so the report falls back on the
eavesdropper bound with that reason (exactly tight, not a loss of the analysis);
:func:`printed_outsider_factor` is the outsider-only value, a separately named number that no
report claims.

Coupled terms are integers on the sender's lattice (``σ`` is a scalar: one ``γ`` for every
sender). Gradients: the tangent of a message is ``dv + ξ dσ_k + ξ' dσ_{cor,k}`` (straight-through
for the rounding, as the lattice release).
"""
from __future__ import annotations

import dataclasses
from typing import ClassVar

import jax
import jax.numpy as jnp
import numpy as np

from jaxdp.channels._base import declare, per_row, positive
from jaxdp.channels._noise import Gaussian
from jaxdp.privacy import add_noise
from jaxdp.privacy.contract import marking
from jaxdp.privacy.pairwise import out_edge_ring
from jaxdp.privacy.samplers import (
    GAUSSIAN_DRAW_BOUND,
    GAUSSIAN_RESOLUTION,
    check_sampler,
    clamp_bound,
)


@dataclasses.dataclass(frozen=True)
class CoupledGaussian(Gaussian):
    """A Gaussian release per directed message plus a coupled term (see the module docstring);
    a subclass says how the coupled draws are built (:meth:`coupled`) and scaled
    (:meth:`coupled_scale`).

    Its standard draw of per-edge rows ``(2E, D)`` is ``(2, 2E, D)``: the independent draws, then
    the coupled ones (each a standard lattice or float Gaussian draw up to sign).
    """

    pairwise: ClassVar[bool] = True
    undirected: ClassVar[bool] = True  # one σ (one lattice) for every sender

    @property
    def law(self) -> str:
        return "gaussian"

    @property
    def sums_exactly(self) -> bool:
        return False

    def edge_draw(self, key, shape, dtype, net):
        own = self.draw(jax.random.fold_in(key, 0), shape, dtype)
        return jnp.stack([own, self.coupled(jax.random.fold_in(key, 1), own, net)])

    def coupled(self, key, own, net):
        """The coupled standard draws ``(2E, D)`` given the independent ones ``own``."""
        raise NotImplementedError

    def coupled_scale(self, p: dict, who, like, k):
        """The scale of the coupled term at step ``k``."""
        return self.scale(p, who, like, k)

    def coupled_ratio(self, p: dict, who, like):
        """``ρ``: the coupled integer is ``round(ρ K')`` (``K'`` the coupled lattice draw)."""
        return jnp.ones((), like.dtype)

    def apply(self, v, p: dict, who, k, z=None):
        scale, cor_scale = self.scale(p, who, v, k), self.coupled_scale(p, who, v, k)
        with marking(True):  # the channel's release (see jaxdp.channels.Noise.apply)
            released = add_noise(v, scale, z[0], law=self.law, sampler=self.sampler)
        if not self.lattice:
            return released + cor_scale * z[1]
        return add_coupled(released, scale, cor_scale, z[1], self.coupled_ratio(p, who, v))


def lattice_integer(released, scale):
    """The integer ``n`` with ``fl(γn) = released``, ``γ = scale/R`` (as the lattice release
    computes it): ``n₀ = round(released/γ)`` is within one of it (the two roundings move
    ``released/γ`` by less than ``2u|n| ≤ 0.51``, ``|n| < 2^{23}`` in float32), and ``n ↦ fl(γn)``
    is injective there, so the candidate in ``n₀ + {−1, 0, 1}`` that reproduces ``released`` is
    ``n``, exactly."""
    gamma = jnp.asarray(scale, released.dtype) * (1.0 / GAUSSIAN_RESOLUTION)
    n0 = jnp.round(released / gamma)
    return jnp.where((n0 - 1) * gamma == released, n0 - 1,
                     jnp.where((n0 + 1) * gamma == released, n0 + 1, n0))


@jax.custom_jvp
def add_coupled(released, scale, cor_scale, z_cor, rho):
    """The message ``γ(n + round(ρK'))`` from the lattice release ``released = fl(γn)``
    (``n = a + K``) and the coupled draw ``K' = z_cor R``: one exact integer sum times ``γ``
    (module docstring), so the message is a function of that integer alone and of the release.
    Its tangent is ``d released + z_cor dcor_scale`` (straight-through for the roundings)."""
    gamma = jnp.asarray(scale, released.dtype) * (1.0 / GAUSSIAN_RESOLUTION)
    coupled = jnp.round(rho * (z_cor * GAUSSIAN_RESOLUTION))
    return (lattice_integer(released, scale) + coupled) * gamma


@add_coupled.defjvp
def _add_coupled_jvp(primals, tangents):
    _, _, _, z_cor, _ = primals
    dreleased, _, dcor, _, _ = tangents
    return add_coupled(*primals), dreleased + dcor * z_cor


@dataclasses.dataclass(frozen=True)
class PairwiseCancelling(CoupledGaussian):
    """DECOR's noise (:func:`pairwise_cancelling`): ``c_{j→i} = −c_{i→j}`` per undirected edge.

    Attributes:
      independent: ``"per_message"`` or ``"per_sender"`` (:attr:`per_sender`).
    """

    independent: str = "per_message"
    kind: ClassVar[str] = "pairwise_cancelling"
    declared: ClassVar = (
        declare("sigma", doc="σ_ind, the independent Gaussian noise's standard deviation "
                             "(DECOR, Eq. (3))"),
        declare("decay", doc="r, the decay per step of both noises (σ r^k)"),
        declare("sigma_cor", domain="nonnegative",
                doc="σ_cor, the pairwise-cancelling noise's standard deviation (DECOR, Eq. (3))"))

    @property
    def per_sender(self) -> bool:
        """Whether the independent draw is one per sender and call (DECOR's Eq. (3) as printed,
        ``independent="per_sender"``) rather than one per directed message."""
        return self.independent == "per_sender"

    @property
    def spec_name(self) -> str:
        extra = (("sampler=float",) * (not self.lattice)
                 + ("independent=per_sender",) * self.per_sender)
        return self.kind + (":" + ",".join(extra) if extra else "")

    def edge_draw(self, key, shape, dtype, net):
        """``(2, 2E, D)``; with :attr:`per_sender` the independent rows are one draw per sender
        ``(N, D)`` repeated on each of its outgoing edges."""
        if not self.per_sender:
            return super().edge_draw(key, shape, dtype, net)
        own = self.draw(jax.random.fold_in(key, 0), (net.n_agents,) + tuple(shape[1:]), dtype)
        own = own[net.senders]
        return jnp.stack([own, self.coupled(jax.random.fold_in(key, 1), own, net)])

    def coupled(self, key, own, net):
        """One draw per undirected edge (``(E, D)``), ``+`` from the lower-numbered agent, ``−``
        from the other."""
        per_edge = self.draw(key, (net.n_edges,) + own.shape[1:], own.dtype)
        sign = jnp.where(net.senders < net.receivers, 1.0, -1.0).astype(own.dtype)
        return sign[:, None] * per_edge[net.edge_id]

    def coupled_scale(self, p: dict, who, like, k):
        return per_row(p[self.fields[2]], who, like) * per_row(p[self.fields[1]], who, like) ** k

    def coupled_ratio(self, p: dict, who, like):
        """``ρ = σ_cor/σ`` from the undecayed fields, in the message dtype, snapped to the
        nearest integer within a relative :data:`SNAP` (``3 × 0.3 / 0.3`` is not 3 in floats)."""
        rho = per_row(p[self.fields[2]], who, like) / per_row(p[self.fields[0]], who, like)
        near = jnp.round(rho)
        return jnp.where(jnp.abs(rho - near) <= SNAP * jnp.maximum(near, 1.0), near, rho)

    def events(self, sens, n, steps, log_scale, releases, what):
        return super().events(sens, n, steps, log_scale, releases,
                              f"{what}; its pairwise-cancelling part is data-independent "
                              "(post-processing), so σ_ind alone is accounted")

    def secret_pairs_ratio(self, values: dict, dtype) -> tuple[int, str]:
        """As :meth:`_ratio`, and ``(0, why not)`` with :attr:`per_sender` (module docstring,
        *DECOR as printed*: one curious neighbour removes every free direction)."""
        if self.per_sender:
            return 0, PRINTED_CURIOUS
        return self._ratio(values, dtype)

    def _ratio(self, values: dict, dtype) -> tuple[int, str]:
        """``(ρ, "")`` when the run's ``ρ`` (the fields in ``dtype``, one IEEE division, as
        :meth:`coupled_ratio` computes it) is an integer in ``[1, max_exact_ratio(dtype)]``, so
        ``c = ρK'`` exactly and the SecLDP coupling holds; else ``(0, why not)``."""
        sigma, cor = (np.asarray(values[f], dtype) for f in (self.fields[0], self.fields[2]))
        if sigma.size != 1 or cor.size != 1:
            return 0, ("σ and σ_cor must be scalars (the channel refuses per-agent ones: "
                       "WithChannel.validate)")
        rho, top = float((cor / sigma).item()), max_exact_ratio(dtype)
        near = round(rho)
        if near == 0:
            return 0, f"its correlated part is (nearly) zero (σ_cor/σ = {rho:.3g})"
        if abs(rho - near) > SNAP / 2 * near:  # the run snaps within SNAP: a margin of ulps
            return 0, (f"σ_cor/σ = {rho:.6g} is not an integer: the SecLDP coupling needs the "
                       "pairwise integer c = ρK' with an integer ρ (σ_cor an integer multiple "
                       "of σ); round(ρK') has a sparse support")
        if near > top:
            return 0, (f"σ_cor/σ = {rho:.6g} exceeds {top} ({np.dtype(dtype).name}): the integer "
                       "a + K + c would not be exact in floats")
        return near, ""


@dataclasses.dataclass(frozen=True)
class ZeroSum(CoupledGaussian):
    """Zip-DL's noise (:func:`zero_sum`): a sender's noise over its messages sums to zero."""

    kind: ClassVar[str] = "zero_sum"

    @property
    def leak(self) -> str:
        return ("each sender's noise sums to zero over its outgoing messages (Zip-DL), so the sum "
                "of the messages it sends in a call is deg_j times its value (to the lattice's "
                "rounding) in the clear; an observer of all of them (the eavesdropper) learns it, "
                "and every other threat model falls back on the eavesdropper: a neighbour's later "
                "messages are functions of the sender's other messages (adaptivity)")

    def coupled(self, key, own, net):
        del key
        return -own[next_out_edge(net)]


PRINTED_CURIOUS = (
    "DECOR as printed (independent='per_sender'): a curious neighbour v of u knows the pair seed "
    "K'_{uv} and subtracts it from u's message to v, which leaves u's one release a_u + K_u of "
    "the call in full: the SecLDP observer (an outsider or one curious agent) gets exactly the "
    "eavesdropper's bound (the outsider alone: printed_outsider_factor, at most a 1/N_c gain "
    "and none on a non-bipartite graph)")
"""Why DECOR as printed has no SecLDP gain over the eavesdropper (module docstring)."""


def printed_outsider_factor(senders, receivers, n_agents: int, rho: int, sens, gamma, d: int):
    """``(N,)``: the factor ``φ_u`` on the squared sensitivity of agent ``u``'s release of DECOR as
    printed against the outsider alone (no curious agent), for the directed edges
    ``senders → receivers`` (both directions of each undirected edge): ``1`` when ``u``'s
    component has an odd cycle, else ``min(1, 1 − 1/M + γ²d(N_cρ² + E_c)/(4Δ_L²))``,
    ``M = N_c + E_c/ρ²`` (module docstring, *DECOR as printed*). ``sens`` is ``Δ_L`` (a scalar)."""
    senders, receivers = np.asarray(senders), np.asarray(receivers)
    side, comp = _two_colouring(senders, receivers, n_agents)
    out = np.ones(n_agents)
    for c in np.unique(comp):
        members = comp == c
        inside = members[senders]
        bipartite = np.all(side[senders[inside]] != side[receivers[inside]])
        n_c, e_c = int(members.sum()), int(inside.sum()) // 2
        if not bipartite or e_c == 0 or rho < 1 or not sens > 0:
            continue
        m = n_c + e_c / rho ** 2
        rounding = gamma ** 2 * d * (n_c * rho ** 2 + e_c) / (4.0 * sens ** 2)
        out[members] = min(1.0, 1.0 - 1.0 / m + rounding)
    return out


def _two_colouring(senders, receivers, n_agents: int):
    """``(side, component)`` ``(N,)`` int: a breadth-first 0/1 colouring of each connected
    component (a proper colouring exactly when the component is bipartite) and its index."""
    side, comp = np.full(n_agents, -1), np.full(n_agents, -1)
    for root in range(n_agents):
        if comp[root] >= 0:
            continue
        comp[root], side[root], frontier = root, 0, [root]
        while frontier:
            j = frontier.pop()
            for i in receivers[senders == j]:
                if comp[i] < 0:
                    comp[i], side[i] = root, 1 - side[j]
                    frontier.append(i)
    return side, comp


SNAP = 1e-5
"""The relative distance within which ``σ_cor/σ`` is snapped to an integer ``ρ`` (the run's ``ρ``
is computed in the message dtype; the report claims SecLDP only within ``SNAP/2``)."""


def max_exact_ratio(dtype) -> int:
    """The largest integer ``ρ`` with ``L + 13R + 13Rρ ≤ 2^p`` (``p = 24`` in float32, ``53``
    in float64): every partial sum of ``a + K + ρK'`` is then an exact integer in ``dtype``."""
    mantissa = 24 if np.dtype(dtype) == np.float32 else 53
    return int((2 ** mantissa - clamp_bound(dtype) - GAUSSIAN_DRAW_BOUND) // GAUSSIAN_DRAW_BOUND)


def secret_pairs_factor(rho: int, sens, gamma, d: int):
    """``φ = min(1, f + γ²d(1 + 2ρ²)/(4Δ_L²))``, ``f = (1 + ρ²)/(1 + 2ρ²)``: the factor on the
    squared sensitivity ``Δ_L²`` of one message of ``d`` coordinates under the outsider of
    SecLDP (module docstring: the coupling with the rounded optimum, or with ``t = 0``)."""
    f = (1.0 + rho ** 2) / (1.0 + 2.0 * rho ** 2)
    with np.errstate(divide="ignore", invalid="ignore"):
        rounding = np.asarray(gamma) ** 2 * d * (1.0 + 2.0 * rho ** 2) / (4.0 * np.square(sens))
    return np.minimum(1.0, np.where(np.asarray(sens) > 0, f + rounding, 1.0))


def next_out_edge(net):
    """``(2E,)``: for each directed edge, the next edge (cyclically, in edge order) with the same
    sender (itself for a sender of degree 1): :func:`jaxdp.privacy.pairwise.out_edge_ring`, the ring
    the MF accountant's zero-sum noise uses too."""
    return out_edge_ring(net.senders, net.n_agents)


def pairwise_cancelling(sigma_ind: float = 1.0, sigma_cor: float = 1.0, *, decay: float = 1.0,
                        name: str = "decor", sampler: str = "lattice",
                        independent: str = "per_message") -> PairwiseCancelling:
    """DECOR's correlated noise (Allouah et al., ICML 2024, Eq. (3)): every directed message
    ``j → i`` gets independent ``N(0, σ_ind²)`` noise plus ``c_ij``, drawn once per undirected
    edge and product call with ``c_ji = −c_ij`` (scale ``σ_cor``), both decaying as ``r^k``.
    With symmetric weights the pairwise parts cancel in the network average.

    Fields ``f"{name}_sigma"`` (σ_ind, > 0), ``f"{name}_decay"`` (> 0), ``f"{name}_sigma_cor"``
    (≥ 0), all scalars. Privacy: the pairwise part is independent of the data and of the
    independent noise, so the messages are post-processing of per-message Gaussian releases of
    scale σ_ind, which is all the report counts (under every threat model; the paper's SecLDP
    analysis is not implemented). On the lattice both parts are integer multiples of
    ``γ = σ_ind r^k/R`` (the module docstring of :mod:`jaxdp.channels._correlated`).

    ``independent="per_sender"`` is Eq. (3) as printed: the independent part ``v̄_j`` is one draw
    per sender and call, shared by its messages; the eavesdropper report is then the broadcast
    Gaussian's (one release per sender and call) and ``threat="secret_pairs"`` falls back on it
    (a curious neighbour recovers the release; module docstring, *DECOR as printed*). The
    default stays ``"per_message"`` (an independent draw per directed message): it is what
    existing runs and reports draw and promise, and the one with a SecLDP gain.

    Raises:
      ValueError: ``sigma_ind <= 0``, ``sigma_cor < 0``, ``decay <= 0``, an unknown sampler or
        ``independent`` not ``"per_message"`` or ``"per_sender"``.
    """
    if independent not in ("per_message", "per_sender"):
        raise ValueError("pairwise_cancelling independent must be 'per_message' or 'per_sender'; "
                         f"got {independent!r}")
    positive("pairwise_cancelling sigma_ind", sigma_ind)
    positive("pairwise_cancelling decay", decay)
    if not float(sigma_cor) >= 0:
        raise ValueError(f"pairwise_cancelling sigma_cor must be >= 0; got {sigma_cor!r}")
    return PairwiseCancelling.build(
        name, {"sigma": sigma_ind, "decay": decay, "sigma_cor": sigma_cor},
        sampler=check_sampler(sampler), independent=independent)


def zero_sum(sigma: float = 1.0, *, decay: float = 1.0, name: str = "zerosum",
             sampler: str = "lattice") -> ZeroSum:
    """Zip-DL's zero-sum noise (Biswas et al., PoPETs 2025): each sender's noise over the
    messages it sends in a product call sums to exactly zero. Built from independent draws
    ``K_e`` (scale ``σ r^k``) as ``K_e − K_{next(e)}`` around a ring of the sender's outgoing
    edges (each message's noise has variance ``2σ²``; a sender of degree 1 sends its value).

    Fields ``f"{name}_sigma"``, ``f"{name}_decay"`` (> 0, scalars). Privacy: none — the sum of a
    sender's messages is its value times its degree; the report is ``inf`` with that reason.

    Raises:
      ValueError: ``sigma <= 0``, ``decay <= 0`` or an unknown sampler.
    """
    positive("zero_sum sigma", sigma)
    positive("zero_sum decay", decay)
    return ZeroSum.build(name, {"sigma": sigma, "decay": decay}, sampler=check_sampler(sampler))
