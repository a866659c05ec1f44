r"""The baselines of DP-ADMM (paper 002): Algorithm 1 (non-private) and Algorithm 2 (naive private).

Huang, Hu, Chan-Tin & Gong, arXiv:1808.10101, Sec. III-A and VI. Both share DP-ADMM's star skeleton
(:class:`jaxdp.algorithms.dpadmm.algorithm.StarADMM`: the trainer's average (3c) on the complete graph's
``W = 11ᵀ/N`` and the dual step (3d)); only the local release differs::

    W^{k+1}  rows = argmin_x f_i(x) − ⟨γ_i^k, x⟩ + ρ/2 ‖x − w^k‖²    Alg. 1 l.4 = Alg. 2 l.4
    W̃^{k+1} = W^{k+1}                                               Algorithm 1
    W̃^{k+1} = W^{k+1} + diag(σ) Ξ,  σ_i = Δ_i √(2 ln(1.25/δ))/ε     Alg. 2 l.5 (constant σ)

**Exact local solve.** Jitted and vmapped over providers, warm-started at the received w^k:
Newton's method for a smooth f_i; proximal gradient with step 1/L for an ℓ1 term, L = ρ + lam +
¼ max_s ‖a_s‖² (a bound on the smooth part's curvature for the logistic loss). It stops when the
residual r (the gradient, or the prox-gradient mapping L(x − prox(x − ∇/L))) satisfies
``‖r(x)‖ ≤ inner_tol · max(1, ‖r(w^k)‖)`` (default 1e-10: float64) or after ``inner_max_steps``
(use ``inner_tol ≈ 1e-5`` in float32). With ρ = 1 and ‖a‖ ≤ 1 each Newton step shrinks the error at
least 4-fold (the logistic curvature moves by at most ¼ against ρ + lam ≥ 1). ``lax.custom_root``
differentiates the solution implicitly (implicit function theorem), so ``jax.grad`` goes through.
The paper names no solver ("searching by gradients"), hence its Table III times are not ours.

**Erratum (Algorithm 2's sensitivity).** ``variant="paper"`` uses the printed
``Δ_i = 2 S1 N/(m_i λ)`` (Sec. III-A, VI), which rests on the (λ/N)-strong convexity of R alone and
needs lam > 0 (ℓ2 only, as the paper says). The subproblem is (ρ + λ/N)-strongly convex, so
``Δ_i = 2 S1/(m_i (ρ + λ/N))`` suffices (``variant="corrected"``, the default):
589× smaller at ρ = 1, λ/N = 0.0017. Both are valid bounds; the printed one is what makes
Algorithm 2 collapse in the paper's Figs. 4–6 (``docs/errata.md``). ``privacy()`` accounts either
variant's noise with the corrected Δ (replace one record; the local solve's other inputs γ_i^k, w^k
are functions of the released w̃), the tighter valid bound.
"""
from __future__ import annotations

import dataclasses

import chex
import jax
import jax.numpy as jnp
import numpy as np

from jaxdp.core import param
from jaxdp._types import AgentArray, per_agent
from jaxdp.algorithms.dpadmm.algorithm import StarADMM, host_value, provider_sizes, reg_weights
from jaxdp.algorithms.dpadmm.privacy import (
    check_noise_params,
    check_private,
    noise_multiplier,
    project_records,
    release_report,
)
from jaxdp.privacy import Assumption, add_noise


@chex.dataclass(frozen=True)
class ConsensusADMMParams:
    rho: float = param(1.0, domain="positive", doc="ρ, penalty of L_ρ (Sec. VI: 1)")


@chex.dataclass(frozen=True)
class NaivePrivateADMMParams:
    rho: float = param(1.0, domain="positive", doc="ρ, penalty of L_ρ")
    eps: float = param(0.05, domain="fraction",
                       doc="ε, per-iteration privacy, Alg. 2 l.5 (Sec. VI grid)")
    delta: float = param(1e-3, domain="fraction",
                         doc="δ of Thm 1, sets the noise only (report: privacy(delta=))")
    S1: float = param(1.0, domain="positive",
                      doc="S1 ≥ ‖ℓ'‖ per sample: each record is projected onto ‖a‖ ≤ S1 "
                          "(enforce_bound; the identity on Sec. VI's normalized rows)")


@dataclasses.dataclass(frozen=True)
class ConsensusADMM(StarADMM):
    """Algorithm 1: non-private consensus ADMM with the exact local solve."""

    name = "consensus_admm"
    requires = ("local_solve",)  # the exact local solve reads the loss's curvature and prox
    cites = ("Huang, Hu, Chan-Tin & Gong 2018 (DP-ADMM, paper 002), Algorithm 1",)
    provenance = "paper"
    params_type = ConsensusADMMParams
    inner_tol: float = 1e-10  # relative residual of the local solve
    inner_max_steps: int = 200  # Newton or proximal-gradient steps at most

    def _release(self, state, noise, problem, params, k):
        del noise, k
        return exact_local_solve(problem, state.gamma, state.w, params.rho,  # Alg. 1 l.4
                                 tol=self.inner_tol, max_steps=self.inner_max_steps)


@dataclasses.dataclass(frozen=True)
class NaivePrivateADMM(ConsensusADMM):
    """Algorithm 2: Algorithm 1 plus Gaussian noise of constant σ_i on the shared w_i^{k+1}.

    Static ``enforce_bound`` (default ``True``): the local solve uses every record projected
    onto ‖a‖₂ ≤ S1, |y| ≤ 1 (:func:`~jaxdp.algorithms.dpadmm.privacy.project_records`, the
    identity on the paper's normalised rows), so the sensitivity's S1 holds for any data.
    """

    # jaxdp.privacy.contract.NOISE_OWNERS: each agent's releases carry its own fresh noise only
    noise_owner = "sender"
    name = "naive_private_admm"
    cites = ("Huang, Hu, Chan-Tin & Gong 2018 (DP-ADMM, paper 002), Algorithm 2",)
    provenance = "paper"
    params_type = NaivePrivateADMMParams
    private = True
    variant: str = "corrected"  # "paper": Δ = 2 S1 N/(m_i λ); "corrected": 2 S1/(m_i (ρ + λ/N))
    sampler: str = "lattice"  # "lattice" (private as floats) or "float" (report: inf)
    enforce_bound: bool = True  # project the records onto ‖a‖ ≤ S1, |y| ≤ 1 (S1 enforced)

    def _release(self, state, noise, problem, params, k):
        if self.enforce_bound:
            problem = project_records(problem, params.S1)  # identity on normalised rows
        w_local = super()._release(state, noise, problem, params, k)  # Alg. 2 l.4
        sigma = self._sensitivity(problem, params, jnp) \
            * noise_multiplier(params.eps, params.delta, jnp)  # Sec. III-A
        return add_noise(w_local, per_agent(sigma, w_local), noise["xi"],
                         sampler=self.sampler)  # Alg. 2 l.5

    models_covered = True
    models_note = "the model is w~_i^K, the last accounted release"

    def account(self, problem, network, params, steps, *, delta):
        """K Gaussian releases per provider with the subproblem's sensitivity 2 S1/(m_i (ρ + λ/N)).

        Row i of Alg. 2 l.4 minimizes a (ρ + λ/N)-strongly convex function whose other inputs
        (γ_i^k, w^k) are functions of the released w~, and replacing one record moves its gradient
        by at most 2 S1/m_i: the minimizer moves by at most 2 S1/(m_i (ρ + λ/N)) whatever the
        variant (``"paper"`` draws more noise for its larger printed Δ; it is accounted as drawn).
        """
        check_noise_params(type(params).__name__, params.eps, params.delta)
        host = params.replace(**{f: host_value(params[f], 1) for f in params})
        n = network.n_agents
        sigma = self._sensitivity(problem, host, np) * noise_multiplier(host.eps, host.delta)
        sens = self._sensitivity(problem, host, np, "corrected")  # (ρ + λ/N)-strong convexity
        solve = Assumption(
            f"the local solve of Alg. 2 l.4 returns the exact minimizer (it stops at residual "
            f"{self.inner_tol:g}·max(1, ‖r(w^k)‖), so ‖x − x*‖ ≤ that/(ρ + λ/N), unaccounted)",
            enforced=False,
            how="Newton / proximal gradient to the stated tolerance", holds=None)
        return release_report(self, problem, network, params, np.broadcast_to(sens, (n, steps)),
                              np.broadcast_to(sigma, (n, steps)), delta=delta,
                              description="Algorithm 2: w~_i^{k+1} = w_i^{k+1} + N(0, σ_i² I)",
                              assumptions=(solve,))

    def validate(self, params, problem, network):
        if self.variant not in ("paper", "corrected"):
            raise ValueError(f"NaivePrivateADMM.variant must be 'paper' or 'corrected'; got "
                             f"{self.variant!r}")
        super().validate(params, problem, network)
        check_private(self, params, problem)
        if self.variant == "paper" and not reg_weights(problem, np)[0] > 0:
            raise ValueError("NaivePrivateADMM(variant='paper') needs an ℓ2 weight reg['lam'] > 0: "
                             "its sensitivity 2 S1 N/(m_i λ) is infinite otherwise (the paper "
                             "applies Algorithm 2 to ℓ2 only)")

    def _sensitivity(self, problem, params, xp, variant=None):
        """Δ_i = 2 S1/(m_i μ), μ = λ/N (paper) or ρ + λ/N (corrected): (N,), or (N, 1) on host.
        ``variant`` defaults to the algorithm's."""
        lam, _ = reg_weights(problem, xp)
        strength = lam if (variant or self.variant) == "paper" else params.rho + lam
        return 2.0 * params.S1 / (provider_sizes(problem, xp) * strength)  # Sec. III-A


def exact_local_solve(problem, gamma: AgentArray, w: AgentArray, rho, *, tol: float = 1e-10,
                      max_steps: int = 200) -> AgentArray:
    """Rows ``argmin_x f_i(x) − ⟨γ_i, x⟩ + ρ/2 ‖x − w_i‖²`` (Alg. 1 l.4), warm-started at w_i.

    Args:
      problem: the Problem (f_i its per-provider loss, with an optional ℓ1 term).
      gamma, w: (N, d) duals and the received global model.
      rho: ρ, scalar or (N,).
      tol, max_steps: the stopping rule of the module docstring (static).

    Returns:
      (N, d) the local minimizers.
    """
    loss, reg = problem.loss, problem.reg
    rho = jnp.broadcast_to(jnp.asarray(rho, gamma.dtype), gamma.shape[:1])

    def one(A, b, mask, g_i, w_i, rho_i):
        def smooth_grad(x):  # ∇ of the subproblem's smooth part
            return loss.grad(x, A, b, mask, reg) - g_i + rho_i * (x - w_i)

        if loss.l1_key is None:
            return _root(smooth_grad, w_i, _newton_update, tol, max_steps)
        lip = rho_i + jnp.max(loss.penalty_curvatures(w_i, reg)) \
            + loss.curvature_bound * jnp.max(mask * jnp.sum(A * A, axis=1))

        def mapping(x):  # prox-gradient mapping: zero exactly at the minimizer
            return lip * (x - loss.prox(x - smooth_grad(x) / lip, 1.0 / lip, reg))

        return _root(mapping, w_i, lambda f, x, fx: x - fx / lip, tol, max_steps)

    return jax.vmap(one)(problem.features, problem.labels, problem.mask, gamma, w, rho)


def _root(f, x0, update, tol, max_steps):
    """x with f(x) = 0 by ``x ← update(f, x, f(x))`` until the stopping rule; implicit gradient."""
    def solve(f, x0):
        f0 = f(x0)
        target = tol * jnp.maximum(1.0, jnp.linalg.norm(f0))

        def cond(carry):
            _, fx, i = carry
            return (jnp.linalg.norm(fx) > target) & (i < max_steps)

        def body(carry):
            x, fx, i = carry
            x = update(f, x, fx)
            return x, f(x), i + 1

        return jax.lax.while_loop(cond, body, (x0, f0, 0))[0]

    return jax.lax.custom_root(f, x0, solve, _tangent_solve)


def _newton_update(f, x, fx):
    return x - jnp.linalg.solve(jax.jacfwd(f)(x), fx)


def _tangent_solve(g, y):
    return jnp.linalg.solve(jax.jacobian(g)(y), y)


__all__ = ["ConsensusADMM", "ConsensusADMMParams", "NaivePrivateADMM", "NaivePrivateADMMParams",
           "exact_local_solve"]
