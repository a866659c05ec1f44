"""Correlated noise across the messages of a step (role ``"noise"``, :attr:`Transform.pairwise`).

Each directed message ``e = (j → i)`` of a product call is released as

.. math:: m_e = \\underbrace{T(v_j;\\ σ ξ_e)}_{\\text{add\\_noise}} + γ\\, c_e,

the Gaussian release of :func:`~jaxdp.channels.gaussian` with an independent draw ``ξ_e`` (on the
default lattice ``γ(a(v_j) + K_e)``, ``γ = σ/4096``), plus a **coupled term** ``γ c_e``, an
integer ``c_e`` (on the lattice) that depends on the draws of other directed messages:

* :func:`pairwise_cancelling` (DECOR, Allouah et al., ICML 2024, §3, Eq. (3) ``x_i ← Σ_j W_ij
  (x_j + v_ij)`` with ``v_ij = v̄_i + v_ij^cor``, ``v_ij^cor = −v_ji^cor``): ``c_e`` is drawn once
  per undirected edge and call, ``c_{j→i} = −c_{i→j}``, so with symmetric weights the coupled
  terms cancel exactly in the network sum ``Σ_i Σ_j W_ij m_{j→i}``. The coupled term is
  independent of every data set and of the independent draws: the messages are a function of the
  Gaussian releases and of data-independent randomness, i.e. **post-processing** of the
  releases. Under the eavesdropper the report is the plain per-message Gaussian's with ``σ``
  (``σ_ind``) alone; the tighter SecLDP analysis of the paper (an outsider without the shared
  seeds, Thm. 1 there) is not implemented: under ``"secret_pairs"`` the same bound is returned,
  marked as the fallback.
* :func:`zero_sum` (Zip-DL, Biswas et al., PoPETs 2025: each node's noise over the messages it
  sends in a round sums to zero): ``c_e = −K_{next(e)}``, ``next(e)`` the sender's next outgoing
  edge (cyclically), so each message carries ``K_e − K_{next(e)}`` and a sender's noise sums to
  exactly 0. The sum of a sender's messages is then ``deg_j · γ a(v_j)``: its value to the
  lattice's rounding, in the clear. The report is ``inf`` with that reason (:attr:`Transform.leak`),
  under every threat model (an observer of all of ``j``'s messages sees the sum; a neighbour sees
  messages that are functions of ``j``'s other messages through the other agents' later states).

Coupled terms are integers on the sender's lattice (``σ`` is a scalar: one ``γ`` for every
sender, so ``c_{j→i} = −c_{i→j}`` holds exactly in floats): ``c_e = round(ρ K'_e)`` with ``K'_e``
a standard lattice draw of the coupled stream and ``ρ = σ_cor/σ`` (``ρ = 1`` for Zip-DL, where
the rounding is exact). Gradients: the tangent of ``γ c_e`` is that of ``σ_cor ξ'_e``
(straight-through for the rounding, as the lattice release). The float sampler adds ``σ_cor ξ'_e``.
"""
from __future__ import annotations

import dataclasses
from typing import ClassVar

import jax
import jax.numpy as jnp

from jaxdp.channels._base import per_row, positive
from jaxdp.channels._noise import Gaussian
from jaxdp.privacy import GAUSSIAN_RESOLUTION, add_noise, check_sampler


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

    def apply(self, v, p: dict, who, k, z=None):
        scale = self.scale(p, who, v, k)
        released = add_noise(v, scale, z[0], law=self.law, sampler=self.sampler)
        return released + self._on_lattice(self.coupled_scale(p, who, v, k) * z[1], scale)

    def _on_lattice(self, value, scale):
        """``value`` rounded to the release's lattice ``γℤ``, ``γ = scale/R`` (its tangent is
        ``value``'s); unchanged for the float sampler."""
        if not self.lattice:
            return value
        gamma = jax.lax.stop_gradient(scale) / GAUSSIAN_RESOLUTION
        return value + jax.lax.stop_gradient(gamma * jnp.round(value / gamma) - value)


@dataclasses.dataclass(frozen=True)
class PairwiseCancelling(CoupledGaussian):
    """DECOR's noise (:func:`pairwise_cancelling`): ``c_{j→i} = −c_{i→j}`` per undirected edge."""

    kind: ClassVar[str] = "pairwise_cancelling"

    def coupled(self, key, own, net):
        """One draw per undirected edge (``(E, D)``), ``+`` from the lower-numbered agent, ``−``
        from the other."""
        per_edge = self.draw(key, (net.n_edges,) + own.shape[1:], own.dtype)
        sign = jnp.where(net.senders < net.receivers, 1.0, -1.0).astype(own.dtype)
        return sign[:, None] * per_edge[net.edge_id]

    def coupled_scale(self, p: dict, who, like, k):
        return per_row(p[self.fields[2]], who, like) * per_row(p[self.fields[1]], who, like) ** k

    def events(self, sens, n, steps, log_scale, releases, what):
        return super().events(sens, n, steps, log_scale, releases,
                              f"{what}; its pairwise-cancelling part is data-independent "
                              "(post-processing), so σ_ind alone is accounted (the tighter SecLDP "
                              "analysis of Allouah et al. 2024 is not implemented)")


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


def next_out_edge(net):
    """``(2E,)``: for each directed edge, the next edge (cyclically, in edge order) with the same
    sender (itself for a sender of degree 1)."""
    senders = net.senders
    n_edges = senders.shape[0]
    order = jnp.argsort(senders, stable=True)
    first = jnp.searchsorted(senders[order], jnp.arange(net.n_agents))
    degree = jnp.bincount(senders, length=net.n_agents)
    s = senders[order]
    position = jnp.arange(n_edges) - first[s]
    following = order[first[s] + (position + 1) % jnp.maximum(degree[s], 1)]
    return jnp.zeros(n_edges, order.dtype).at[order].set(following)


def pairwise_cancelling(sigma_ind: float = 1.0, sigma_cor: float = 1.0, *, decay: float = 1.0,
                        name: str = "decor", sampler: str = "lattice") -> PairwiseCancelling:
    """DECOR's correlated noise (Allouah et al., ICML 2024, Eq. (3)): every directed message
    ``j → i`` gets independent ``N(0, σ_ind²)`` noise plus ``c_ij``, drawn once per undirected
    edge and product call with ``c_ji = −c_ij`` (scale ``σ_cor``), both decaying as ``r^k``.
    With symmetric weights the pairwise parts cancel in the network average.

    Fields ``f"{name}_sigma"`` (σ_ind, > 0), ``f"{name}_decay"`` (> 0), ``f"{name}_sigma_cor"``
    (≥ 0), all scalars. Privacy: the pairwise part is independent of the data and of the
    independent noise, so the messages are post-processing of per-message Gaussian releases of
    scale σ_ind, which is all the report counts (under every threat model; the paper's SecLDP
    analysis is not implemented). On the lattice both parts are integer multiples of
    ``γ = σ_ind r^k/4096`` (the module docstring of :mod:`jaxdp.channels._correlated`).

    Raises:
      ValueError: ``sigma_ind <= 0``, ``sigma_cor < 0``, ``decay <= 0`` or an unknown sampler.
    """
    positive("pairwise_cancelling sigma_ind", sigma_ind)
    positive("pairwise_cancelling decay", decay)
    if not float(sigma_cor) >= 0:
        raise ValueError(f"pairwise_cancelling sigma_cor must be >= 0; got {sigma_cor!r}")
    return PairwiseCancelling(
        name, ((f"{name}_sigma", float(sigma_ind)), (f"{name}_decay", float(decay)),
               (f"{name}_sigma_cor", float(sigma_cor))),
        options=(("sampler", check_sampler(sampler)),),
        domains=((f"{name}_sigma_cor", "nonnegative"),))


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
    return ZeroSum(name, ((f"{name}_sigma", float(sigma)), (f"{name}_decay", float(decay))),
                   options=(("sampler", check_sampler(sampler)),))
