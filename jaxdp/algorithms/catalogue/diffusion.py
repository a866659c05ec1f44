"""Diffusion-type methods: one model per agent, one message per step.

* **ATC** — adapt-then-combine diffusion, Sayed, "Adaptation, learning, and optimization over
  networks", Found. Trends Mach. Learn. 2014: ``ψ = x − α∇F(x)``, ``x⁺ = W ψ``.
* **ED** — exact diffusion, Yuan, Ying, Zhao & Sayed, "Exact diffusion for distributed
  optimization and learning — Part I", IEEE TSP 2019, Algorithm 1 (adapt, correct, combine)
  with W̄ = (I + W)/2.
* **SimpleGT** — the one-message gradient-tracking form ``x⁺ = W x + ψ⁺ − ψ``, ψ⁺ = x − α∇F(x)
  (the "simple gradient tracking" of decent-bench); for k ≥ 1 it is the EXTRA recursion (Shi et
  al. 2015, eq. (3.2)) with W̃ = I, written with one message.
"""
from __future__ import annotations

import dataclasses

import chex

from jaxdp._types import AgentArray
from jaxdp.core import Algorithm, zeros_like_models
from jaxdp.algorithms.catalogue.classic import StepParams
from jaxdp.algorithms.catalogue._common import half_mix, step


@chex.dataclass(frozen=True)
class DiffusionState:
    x: AgentArray  # (N, d) models x^k
    psi: AgentArray  # (N, d) ψ^k, the previous adapt step (ψ⁰ = x⁰)


@dataclasses.dataclass(frozen=True)
class _Diffusion(Algorithm):
    params_type = StepParams

    def init(self, key, problem, network, params):
        del key, params
        x0 = zeros_like_models(problem, network)
        return DiffusionState(x=x0, psi=x0)


@dataclasses.dataclass(frozen=True)
class ATC(_Diffusion):
    """Adapt-then-combine DGD (Sayed 2014): ``ψ = x − α∇F(x)``; ``x⁺ = W ψ``.

    Compare DGD (combine-then-adapt): ``x⁺ = W x − α∇F(x)``.
    """

    name = "atc"
    cites = ("Sayed, Found. Trends Mach. Learn. 2014",)
    provenance = "standard"

    def step(self, state, noise, problem, network, params, k):
        del noise, k
        psi = state.x - step(params.alpha, state.x) * problem.local_grads(state.x)  # adapt
        x_new = network.mix(psi, message="psi")  # combine
        return DiffusionState(x=x_new, psi=psi), {"psi": psi}


@dataclasses.dataclass(frozen=True)
class ED(_Diffusion):
    """Exact diffusion (Yuan et al. 2019, Algorithm 1), ψ⁰ = x⁰:

    ``ψ^{k+1} = x^k − α∇F(x^k)`` (adapt); ``φ^{k+1} = x^k + ψ^{k+1} − ψ^k`` (correct);
    ``x^{k+1} = W̄ φ^{k+1}`` (combine). From k = 1 on this is NIDS (Li, Shi & Yan 2019, eq. (9));
    the two differ in the first step only: ED mixes, ``x¹ = W̄(x⁰ − α∇F(x⁰))``, NIDS does not.
    """

    name = "ed"
    cites = ("Yuan, Ying, Zhao & Sayed, IEEE TSP 2019, Algorithm 1",)
    provenance = "standard"

    def step(self, state, noise, problem, network, params, k):
        del noise, k
        psi = state.x - step(params.alpha, state.x) * problem.local_grads(state.x)  # adapt
        phi = state.x + psi - state.psi  # correct
        return DiffusionState(x=half_mix(network, phi), psi=psi), {"phi": phi}  # combine


@dataclasses.dataclass(frozen=True)
class SimpleGT(_Diffusion):
    """Simple gradient tracking: ``ψ^{k+1} = x^k − α∇F(x^k)``, ``x^{k+1} = W x^k + ψ^{k+1} − ψ^k``
    with ψ⁰ = x⁰ (x¹ = W x⁰ − α∇F(x⁰), DGD's first step; later steps are the EXTRA recursion
    with W̃ = I).
    """

    name = "simple_gt"
    cites = (
        "decent-bench's simple gradient tracking; EXTRA (Shi et al. 2015, eq. (3.2)) with W̃ = I",
    )
    provenance = "standard"

    def step(self, state, noise, problem, network, params, k):
        del noise, k
        psi = state.x - step(params.alpha, state.x) * problem.local_grads(state.x)
        x_new = network.mix(state.x, message="x") + psi - state.psi
        return DiffusionState(x=x_new, psi=psi), {"x": state.x}


__all__ = ["ATC", "ED", "SimpleGT", "DiffusionState"]
