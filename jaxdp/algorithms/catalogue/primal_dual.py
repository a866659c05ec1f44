"""Primal–dual catalogue methods: linearized ADMM, ADMM-based gradient tracking and Yi et al.'s
first-order primal–dual algorithm.

* **DLM** — Ling, Shi, Wu & Ribeiro, "DLM: decentralized linearized alternating direction method
  of multipliers", IEEE TSP 2015 (a linearized primal step, then dual ascent), with a per-agent
  step μ_i (the paper's choice is μ_i = 1/(2c d_i + ρ)); L is the unweighted graph Laplacian.
* **ATG** (ADMM-tracking gradient) — Carnevale, Bastianello, Notarstefano & Carli,
  "ADMM-tracking gradient for distributed optimization over asynchronous and unreliable
  networks", IEEE TAC 2025 (arXiv 2023), Algorithm 1: relaxed edge ADMM (Bastianello et al. 2021,
  eq. (12)) tracks the averages of both x and ∇F(x), and x moves towards ``y − δ s``.
* **Yi–PD** (``yi_pd``) — Yi, Zhang, Yang, Chai & Johansson, "Linear convergence of first- and
  zeroth-order primal–dual algorithms for distributed nonconvex optimization", IEEE TAC 67(8),
  2022, Algorithm 1 (first-order form): ``x⁺ = x − η(γ P x + ω v + ∇F(x))``, ``v⁺ = v + ηω P x``,
  x⁰ = v⁰ = 0, P the network's Laplacian-like matrix. It is PPDC (Xie et al. 2025) without noise.

Edge variables are ``(2E, d)`` aligned with ``network.senders/receivers``, as in
:mod:`jaxdp.algorithms.catalogue.classic`.
"""
from __future__ import annotations

import dataclasses

import chex
import jax.numpy as jnp

from jaxdp._types import AgentArray, EdgeArray
from jaxdp.core import Algorithm, param, zeros_like_models
from jaxdp.algorithms.catalogue.classic import admm_messages, relaxed_bridge_update
from jaxdp.algorithms.catalogue._common import check_scalars, step


@chex.dataclass(frozen=True)
class DLMParams:
    alpha: float = param(0.05, domain="positive", doc="μ, linearized primal step")
    rho: float = param(0.5, domain="positive", per_agent=False,
                       doc="c, penalty of the augmented Lagrangian")


@chex.dataclass(frozen=True)
class DLMState:
    x: AgentArray  # (N, d)
    z: AgentArray  # (N, d) multipliers α_i, z⁰ = 0
    s: AgentArray  # (N, d) L x, Σ_{j∈N_i}(x_i − x_j) from the last exchange


@chex.dataclass(frozen=True)
class ATGParams:
    rho: float = param(1.0, domain="positive", per_agent=False, doc="ρ, ADMM penalty")
    relax: float = param(0.5, domain="fraction", per_agent=False, doc="a, relaxation in (0, 1)")
    gamma: float = param(0.5, domain="positive", doc="γ, mixing of the state update")
    delta: float = param(0.05, domain="positive", doc="δ, gradient step along the tracked gradient")


@chex.dataclass(frozen=True)
class ATGState:
    x: AgentArray  # (N, d)
    z_y: EdgeArray  # (2E, d) bridge variables of the x-consensus, z⁰ = 0
    z_s: EdgeArray  # (2E, d) bridge variables of the gradient consensus, z⁰ = 0


@chex.dataclass(frozen=True)
class YiPDParams:
    gamma: float = param(65.0, domain="positive", per_agent=False,
                         doc="γ, consensus (augmented Lagrangian) weight")
    omega: float = param(5.0, domain="positive", per_agent=False, doc="ω, dual weight")
    eta: float = param(0.01, domain="positive", per_agent=False,
                       doc="η, step size (η γ λ_max(P) < 2)")


@chex.dataclass(frozen=True)
class YiPDState:
    x: AgentArray  # (N, d) primal, x⁰ = 0
    v: AgentArray  # (N, d) dual, v⁰ = 0


@dataclasses.dataclass(frozen=True)
class DLM(Algorithm):
    """DLM (Ling et al. 2015): ``x⁺ = x − μ(∇F(x) + c L x + z)``; ``z⁺ = z + c L x⁺``.

    One exchange per step (x⁺, from which each agent forms (L x⁺)_i); z⁰ = 0.
    """

    name = "dlm"
    cites = ("Ling, Shi, Wu & Ribeiro, IEEE TSP 2015",)
    provenance = "standard"
    params_type = DLMParams

    def validate(self, params, problem, network) -> None:
        super().validate(params, problem, network)
        check_scalars(params, ("rho",))

    def init(self, key, problem, network, params):
        del key, params
        x0 = zeros_like_models(problem, network)
        return DLMState(x=x0, z=jnp.zeros_like(x0), s=network.apply_L(x0))

    def step(self, state, noise, problem, network, params, k):
        del noise, k
        x, rho = state.x, params.rho
        x_new = x - step(params.alpha, x) * (problem.local_grads(x) + rho * state.s + state.z)
        s_new = network.apply_L(x_new)
        return DLMState(x=x_new, z=state.z + rho * s_new, s=s_new), {"x": x_new}


@dataclasses.dataclass(frozen=True)
class ATG(Algorithm):
    """ADMM-tracking gradient (Carnevale et al. 2023, Algorithm 1), d_i the degree:

    ``[y; s] = ([x; ∇F(x)] + Σ_j z_ij) / (1 + ρ d_i)``;  ``x⁺ = (1 − γ) x + γ (y − δ s)``;
    agent j sends ``m_{j→i} = z_ji − 2ρ [y_j; s_j]`` and ``z_ij⁺ = (1 − a) z_ij − a m_{j→i}``.
    """

    name = "atg"
    cites = ("Carnevale, Bastianello, Notarstefano & Carli, IEEE TAC 2025, Algorithm 1",)
    provenance = "standard"
    params_type = ATGParams

    def validate(self, params, problem, network) -> None:
        super().validate(params, problem, network)
        check_scalars(params, ("rho", "relax"))

    def init(self, key, problem, network, params):
        del key, params
        x0 = zeros_like_models(problem, network)
        z0 = jnp.zeros_like(network.gather(x0))
        return ATGState(x=x0, z_y=z0, z_s=z0)

    def step(self, state, noise, problem, network, params, k):
        del noise, k
        x = state.x
        scale = 1.0 / (1.0 + params.rho * network.degrees[:, None])
        y = scale * (x + network.scatter_sum(state.z_y))
        s = scale * (problem.local_grads(x) + network.scatter_sum(state.z_s))
        x_new = (1 - step(params.gamma, x)) * x + step(params.gamma, x) * (
            y - step(params.delta, x) * s)
        m_y = admm_messages(state.z_y, y, params.rho, network)
        m_s = admm_messages(state.z_s, s, params.rho, network)
        return ATGState(x=x_new, z_y=relaxed_bridge_update(state.z_y, m_y, params.relax),
                        z_s=relaxed_bridge_update(state.z_s, m_s, params.relax)), \
            {"m_y": m_y, "m_s": m_s}


@dataclasses.dataclass(frozen=True)
class YiPrimalDual(Algorithm):
    """First-order primal–dual algorithm of Yi, Zhang, Yang, Chai & Johansson (IEEE TAC 2022,
    Algorithm 1), in stacked form with P the network's Laplacian-like matrix:

    ``x⁺ = x − η(γ P x + ω v + ∇F(x))``;  ``v⁺ = v + ηω P x``;  x⁰ = v⁰ = 0.

    One exchange per step (x, from which each agent forms (P x)_i = Σ_j p_ij x_j). By default
    P = I − W with W the Metropolis–Hastings weights, so λ_max(P) <= 2 and η γ λ_max(P) must stay
    below 2 (the defaults γ = 65, ω = 5, η = 0.01 are PPDC's). It is the non-private core of PPDC
    (Xie et al. 2025): PPDC with its state noise ξ set to zero.
    """

    name = "yi_pd"
    cites = ("Yi, Zhang, Yang, Chai & Johansson, IEEE TAC 2022",)
    provenance = "standard"
    params_type = YiPDParams

    def init(self, key, problem, network, params):
        del key, params
        x0 = zeros_like_models(problem, network)
        return YiPDState(x=x0, v=jnp.zeros_like(x0))

    def step(self, state, noise, problem, network, params, k):
        del noise, k
        x, v = state.x, state.v
        Px = network.apply_P(x, message="x")  # Σ_j p_ij x_j
        x_new = x - params.eta * (params.gamma * Px + params.omega * v + problem.local_grads(x))
        v_new = v + params.eta * params.omega * Px
        return YiPDState(x=x_new, v=v_new), {"x": x}


__all__ = ["DLM", "DLMParams", "ATG", "ATGParams", "YiPrimalDual", "YiPDParams", "YiPDState"]
