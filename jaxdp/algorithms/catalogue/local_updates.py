"""Methods with several local gradient steps, or skipped communications, per round.

* **K-GT** — Liu, Lin, Koloskova & Stich, "Decentralized gradient tracking with local steps",
  Optim. Methods Softw. 2024 (arXiv 2023), Algorithm 1, with c⁰ = 0.
* **LED** — Alghunaim, "Local exact-diffusion for decentralized optimization and learning",
  IEEE TAC 2024 (arXiv 2023), Algorithm 1, with y⁰ = 0.
* **ProxSkip** (decentralized) — Mishchenko, Malinovsky, Stich & Richtárik, "ProxSkip: yes! local
  gradient steps provably lead to communication acceleration! finally!", ICML 2022, the
  decentralized algorithm (Scaffnew over a gossip matrix W_a = I − (I − W)/(2χ)) with control
  variate y = −γh; its paper choice of dual step is β = p.
"""
from __future__ import annotations

import dataclasses

import chex
import jax
import jax.numpy as jnp

from jaxdp._types import AgentArray
from jaxdp.core import Algorithm, param, zeros_like_models
from jaxdp.algorithms._checks import check_count
from jaxdp.algorithms.catalogue._common import LocalStepParams, check_scalars, step


@chex.dataclass(frozen=True)
class CorrectedState:
    x: AgentArray  # (N, d) models x^t
    c: AgentArray  # (N, d) correction (K-GT's tracker c, LED's dual y, ProxSkip's control y)


@chex.dataclass(frozen=True)
class ProxSkipParams:
    alpha: float = param(0.05, domain="positive", doc="α (γ), gradient step")
    beta: float = param(0.5, domain="positive",
                        doc="β, control-variate step (the paper takes β = p)")
    p: float = param(0.5, domain="fraction", per_agent=False,
                     doc="p, probability of communicating at a step")
    chi: float = param(1.0, domain="positive", per_agent=False,
                       doc="χ ≥ 1, gossip damping of W_a = I − (I − W)/(2χ)")


@dataclasses.dataclass(frozen=True)
class _Local(Algorithm):
    params_type = LocalStepParams
    local_steps: int = 5  # τ / K, local gradient steps per communication round (static)

    def __post_init__(self):
        check_count(self.name, "local_steps", self.local_steps)

    def init(self, key, problem, network, params):
        del key, params
        x0 = zeros_like_models(problem, network)
        return CorrectedState(x=x0, c=jnp.zeros_like(x0))

    def _local(self, x, drift, problem, alpha):
        """τ steps ``φ ← φ − α∇F(φ) − drift`` from φ = x."""
        def body(phi, _):
            return phi - alpha * problem.local_grads(phi) - drift, None
        return jax.lax.scan(body, x, None, length=self.local_steps)[0]


@dataclasses.dataclass(frozen=True)
class KGT(_Local):
    """K-GT (Liu et al. 2023, Algorithm 1), η_c = α, η_s = β, K = ``local_steps``:

    K local steps ``x ← x − η_c(∇F(x) + c)`` from x^t reach x^{t,K};
    ``z = (x^t − x^{t,K}) / (K η_c)``; ``c⁺ = c − z + W z`` (line 9);
    ``x^{t+1} = W(x^t − K η_s η_c z)`` (line 10).
    """

    name = "k_gt"
    cites = ("Liu, Lin, Koloskova & Stich, Optim. Methods Softw. 2024, Algorithm 1",)
    provenance = "standard"

    def step(self, state, noise, problem, network, params, k):
        del noise, k
        x, alpha = state.x, step(params.alpha, state.x)
        x_k = self._local(x, alpha * state.c, problem, alpha)
        z = (x - x_k) / (self.local_steps * alpha)
        msg = x - self.local_steps * step(params.beta, x) * alpha * z
        c_new = state.c - z + network.mix(z, message="z")
        return CorrectedState(x=network.mix(msg, message="x"), c=c_new), {"x": msg, "z": z}


@dataclasses.dataclass(frozen=True)
class LED(_Local):
    """Local exact diffusion (Alghunaim 2023, Algorithm 1, eq. (2)), τ = ``local_steps``:

    ``φ ← φ − α∇F(φ) − β y`` τ times from φ = x^r (2a); ``x^{r+1} = W φ`` (diffusion);
    ``y^{r+1} = y^r + φ − x^{r+1}`` (2c), y⁰ = 0.
    """

    name = "led"
    cites = ("Alghunaim, IEEE TAC 2024, Algorithm 1",)
    provenance = "standard"

    def step(self, state, noise, problem, network, params, k):
        del noise, k
        drift = step(params.beta, state.x) * state.c
        phi = self._local(state.x, drift, problem, step(params.alpha, state.x))  # (2a)
        x_new = network.mix(phi, message="phi")  # diffusion
        return CorrectedState(x=x_new, c=state.c + phi - x_new), {"phi": phi}  # (2c)


@dataclasses.dataclass(frozen=True)
class ProxSkip(Algorithm):
    """Decentralized ProxSkip (Mishchenko et al. 2022), y⁰ = 0, one shared coin θ_k ~ Bern(p):

    ``z = x − α∇F(x) − y``; if θ_k: ``x⁺ = W_a z`` with W_a = I − (I − W)/(2χ) and
    ``y⁺ = y + β(z − x⁺)``; else ``x⁺ = z``, ``y⁺ = y`` (no message).
    """

    name = "prox_skip"
    cites = ("Mishchenko, Malinovsky, Stich & Richtárik, ICML 2022 (decentralized ProxSkip)",)
    provenance = "standard"
    params_type = ProxSkipParams

    def validate(self, params, problem, network) -> None:
        super().validate(params, problem, network)
        check_scalars(params, ("p", "chi"))
        if float(params.chi) < 1:
            raise ValueError(f"ProxSkipParams.chi must be >= 1; got {float(params.chi):g}")

    def init(self, key, problem, network, params):
        del key, params
        x0 = zeros_like_models(problem, network)
        return CorrectedState(x=x0, c=jnp.zeros_like(x0))

    def noise(self, key, state, params, k):
        del params, k
        return {"u": jax.random.uniform(key, (), state.x.dtype)}  # θ_k = [u < p]

    def step(self, state, noise, problem, network, params, k):
        del k
        x, y = state.x, state.c
        z = x - step(params.alpha, x) * problem.local_grads(x) - y
        theta = noise["u"] < params.p
        mixed = z - (z - network.mix(z)) / (2 * params.chi)  # W_a z
        x_new = jnp.where(theta, mixed, z)
        y_new = jnp.where(theta, y + step(params.beta, x) * (z - mixed), y)
        sent = jnp.where(theta, z, jnp.zeros_like(z))
        return CorrectedState(x=x_new, c=y_new), {"z": sent, "communicated": theta}


__all__ = ["KGT", "LED", "ProxSkip", "ProxSkipParams", "CorrectedState"]
