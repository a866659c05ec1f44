"""Gradient tracking in adapt-then-combine form, and the Wang–Elia control-based method.

* **ATC tracking** (NEXT / SONATA) — Di Lorenzo & Scutari, "NEXT: in-network nonconvex
  optimization", IEEE TSIPN 2016, Algorithm 1 with the linearized surrogate (α absorbs NEXT's
  step γ and proximal weight τ);
  Sun, Daneshmand & Scutari, "Distributed optimization based on gradient tracking revisited",
  2019 (SONATA): ``x⁺ = W(x − α y)``, ``y⁺ = W y + ∇F(x⁺) − ∇F(x)``.
* **AugDGM** (ATC-DIGing) — Xu, Zhu, Soh & Xie, "Augmented distributed gradient methods for
  multi-agent optimization under uncoordinated constant stepsizes", IEEE CDC 2015;
  Nedić, Olshevsky, Shi & Uribe 2017 (ATC-DIGing): ``x⁺ = W(x − α y)``,
  ``y⁺ = W(y + ∇F(x⁺) − ∇F(x))``; α may differ per agent.
* **Wang–Elia** — Wang & Elia, "Control approach to distributed optimization", Allerton 2010,
  discretized with K = (I − W)/2: ``x⁺ = x − K(x + z) − α∇F(x)``, ``z⁺ = z + K x``.
"""
from __future__ import annotations

import dataclasses

import chex

from jaxdp._types import AgentArray
from jaxdp.core import Algorithm, zeros_like_models
from jaxdp.algorithms.catalogue.classic import StepParams, TrackingState, tracking_start
from jaxdp.algorithms.catalogue._common import step


@chex.dataclass(frozen=True)
class WangEliaState:
    x: AgentArray  # (N, d)
    z: AgentArray  # (N, d) integral (dual) state, z⁰ = 0


@dataclasses.dataclass(frozen=True)
class _ATCTracking(Algorithm):
    """Shared init (y⁰ = ∇F(x⁰)) and the adapt-then-combine state update ``x⁺ = W(x − α y)``."""

    params_type = StepParams

    def init(self, key, problem, network, params):
        del key, params
        return tracking_start(problem, network)

    def step(self, state, noise, problem, network, params, k):
        del noise, k
        s = state.x - step(params.alpha, state.x) * state.y  # local descent along the tracker
        x_new = network.mix(s, message="s")
        g_new = problem.local_grads(x_new)
        y_new, q = self._track(state, g_new, network)
        return TrackingState(x=x_new, y=y_new, g=g_new), {"s": s, "y": q}


@dataclasses.dataclass(frozen=True)
class ATCTracking(_ATCTracking):
    """NEXT / SONATA (Di Lorenzo & Scutari 2016, Alg. 1; Sun et al. 2019):
    ``x⁺ = W(x − α y)``, ``y⁺ = W y + ∇F(x⁺) − ∇F(x)``, y⁰ = ∇F(x⁰).
    """

    name = "atc_tracking"
    cites = ("Di Lorenzo & Scutari, IEEE TSIPN 2016 (NEXT), Algorithm 1",)
    provenance = "standard"

    def _track(self, state, g_new, network):
        return network.mix(state.y, message="y") + g_new - state.g, state.y


@dataclasses.dataclass(frozen=True)
class AugDGM(_ATCTracking):
    """AugDGM / ATC-DIGing (Xu et al. 2015): ``x⁺ = W(x − α y)``,
    ``y⁺ = W(y + ∇F(x⁺) − ∇F(x))``, y⁰ = ∇F(x⁰); α scalar or one per agent (uncoordinated).
    """

    name = "aug_dgm"
    cites = ("Xu, Zhu, Soh & Xie, IEEE CDC 2015 (AugDGM)",)
    provenance = "standard"

    def _track(self, state, g_new, network):
        q = state.y + g_new - state.g
        return network.mix(q, message="y"), q


@dataclasses.dataclass(frozen=True)
class WangElia(Algorithm):
    """Wang & Elia (2010), Euler step of ``ẋ = −K(x + z) − ∇F(x)``, ``ż = K x`` with K = (I − W)/2:

    ``x^{k+1} = x^k − K(x^k + z^k) − α∇F(x^k)``, ``z^{k+1} = z^k + K x^k``, z⁰ = 0.
    Fixed points: K x = 0 (consensus) and 1ᵀ∇F(x) = −1ᵀK z = 0 (optimality).
    """

    name = "wang_elia"
    cites = ("Wang & Elia, Allerton 2010",)
    provenance = "standard"
    params_type = StepParams

    def init(self, key, problem, network, params):
        del key, params
        x0 = zeros_like_models(problem, network)
        return WangEliaState(x=x0, z=x0)

    def step(self, state, noise, problem, network, params, k):
        del noise, k
        x, m = state.x, state.x + state.z
        x_new = x - _apply_K(network, m) - step(params.alpha, x) * problem.local_grads(x)
        return WangEliaState(x=x_new, z=state.z + _apply_K(network, x)), {"m": m, "x": x}


def _apply_K(network, X: AgentArray) -> AgentArray:
    """``K X = (X − W X) / 2``."""
    return 0.5 * (X - network.mix(X))


__all__ = ["ATCTracking", "AugDGM", "WangElia", "WangEliaState"]
