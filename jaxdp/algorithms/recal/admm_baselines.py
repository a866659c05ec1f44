"""The ADMM baselines of paper 003's comparison (DP-ADMM, DP-RWADMM, DP-MRADMM), reconstructed.

What the reconstruction rests on (noise placement, sampler, local regularizer, messages) is in
:mod:`jaxdp.algorithms.recal.baselines`, which also holds DP-NIDS and DP-EXTRA and re-exports
this module's names. Notation as there (``d_i`` degrees, ``ξ`` standard Gaussian draws,
``σ_t = σ₁ R^{−(t−1)/2}`` at an agent's t-th release, ``prox`` per agent):

* **DP-ADMM** (``DPICADMM``, ``"dp_icadmm"``; Zhang & Zhu, IEEE TIFS 2017, "dynamic DP" ADMM),
  rooted in IC-ADMM (Chang, Hong & Wang, IEEE TSP 2015, eq. (20)) as paper 003 says; primal
  variable perturbation (PVP):
  ``x_i⁺ = prox_{r/(β+2ρd_i)}((β x_i − ∇f_i(x_i) − p_i + ρ(d_i x_i + Σ_{j∈N_i} x_j))/(β + 2ρd_i))``,
  ``x̃_i = x_i⁺ + σ_t ξ_i`` broadcast and adopted (Δ_i = 2c/(β + 2ρd_i)),
  ``p_i⁺ = p_i + ρ Σ_{j∈N_i}(x̃_i − x̃_j)``. [12]'s noise is Laplace-like and iteration-indexed;
  here it is Gaussian on the geometric schedule.
* **DP-ADMM [13], decaying step** (Tables IV/V, PLF 2000; ``decay`` γ < 1) — the same class with
  paper 003's decaying step ``α_k = α₀γ^k`` (§VII): the proximal weight becomes
  ``β_k = (β_i + 2ρd_i)γ^{−k} − 2ρd_i``, so ``x_i⁺ = prox_{α_k r}(x_i − α_k(∇f_i(x_i) + p_i +
  ρ(Lx)_i))`` and ``Δ_{i,t} = 2cα_{t−1}``. A reconstruction: [13] (Huang et al.; jaxdp's
  paper-002 ``DPADMM``) is server–worker (it needs W = 11ᵀ/N), logistic only, and its ℓ1 form
  admits no ridge term, so it cannot run paper 003's ring problems. What it shares with this
  stand-in is what paper 003 says of it: a linearized (first-order) local step, Gaussian noise on
  the released primal, and a decaying step.
* **DP-RWADMM** — Shah & Avrachenkov (arXiv:1810.05067) run one Markov-sampled node per iteration;
  their update is not reproduced here, so this is the closest token-passing ADMM, Walkman
  (Mao, Yu, Gao & Yin, IEEE TSP 2020, linearized form), with the token carrying
  ``(z̃, t)``: the holder i sets ``y_i⁺ = z̃ − (∇f_i(y_i) + λ_i)/β`` (W1),
  ``λ_i⁺ = λ_i + β(y_i⁺ − z̃)`` (W2), ``t⁺ = t + ((y_i⁺ + λ_i⁺/β) − (y_i + λ_i/β))/n`` (W3),
  ``z⁺ = prox_{r/β}(t⁺)`` (W4) and sends
  ``z̃⁺ = z⁺ + σ_τ ξ`` (Δ = 4c/(nβ): the gradient enters ``y + λ/β`` with weight 2/β). As DP-RECAL's
  ``"paper"`` variant, t is carried clean. Same walk, counters and PLF stop as RECAL.
* **DP-MRADMM** — Recycled ADMM (Zhang, Khalili & Liu, Allerton 2019) on the ADMM of [16] (ICML
  2018): odd iterations (engine steps 0, 2, …) solve
  ``x_i⁺ = argmin f_i(x) + ⟨p_i, x⟩ + ρ_k Σ_{j∈N_i}‖x − (x_i + x_j)/2‖²`` (inexactly:
  ``local_steps`` gradient steps of size γ from x_i), release ``x̃_i = x_i⁺ + σ_t ξ_i``
  (Δ_i = c/(ρ_k d_i), the argmin's sensitivity under the 2ρ_k d_i-strongly convex penalty;
  Gaussian output perturbation instead of [17]'s objective perturbation); even iterations
  replace f_i by its linearization with the gradient recycled from the odd step's optimality
  condition on released values,
  ``g̃_i = −p_i^{odd} − 2ρ d_i x̃_i + ρ(d_i x_i^{odd} + Σ_j x_j^{odd})``, so
  ``x_i⁺ = (ρ(d_i x_i + Σ_j x_j) − g̃_i − p_i)/(2ρ d_i)`` leaks nothing;
  ``p_i⁺ = p_i + ρ_k Σ_j(x_i⁺ − x_j⁺)`` every iteration; ρ_k = ρ θ^{⌊k/2⌋} ([16]'s increasing
  penalty; θ = 1 fixed, θ = 1/γ > 1 the decaying-step row of Tables IV/V, since the primal step
  scales as 1/ρ_k). Smooth problems only (paper 003 runs it with r = 0).
"""
from __future__ import annotations

import dataclasses

import chex
import jax
import jax.numpy as jnp
import numpy as np

from jaxdp._types import AgentArray, Array, per_agent
from jaxdp.algorithms.recal import privacy as acct
from jaxdp.algorithms.recal._baseline_common import (BoundedGradient, NoiseScheduleParams, start,
                                                     step_report)
from jaxdp.algorithms.recal.algorithm import TokenAlgorithm, local_grad
from jaxdp.algorithms.recal.privacy import mradmm_solve_sensitivity
from jaxdp.core import Algorithm, param
from jaxdp.privacy import add_noise, noise_draws


# -- Params and states --------------------------------------------------------------------------
@chex.dataclass(frozen=True)
class DPICADMMParams(NoiseScheduleParams):
    rho: float = param(1.0, domain="positive", per_agent=False,
                       doc="ρ, ADMM penalty (c of IC-ADMM [43])")
    beta: float = param(1.0, domain="positive",
                        doc="β_i, IC-ADMM proximal weight of the linearized f_i")
    decay: float = param(1.0, per_agent=False,
                         doc="γ ∈ (0, 1]: step α_k = α₀γ^k, α₀ = 1/(β_i + 2ρd_i); 1 = fixed step")
    x0: float = param(0.0, doc="x⁰ = x0·1")


@chex.dataclass(frozen=True)
class DPRWADMMParams(NoiseScheduleParams):
    beta: float = param(10.0, domain="positive",
                        doc="β, Walkman penalty; must dominate the local smoothness")
    xi: float = param(300.0, domain="positive", doc="ξ, target PLF (as RECAL)")
    x0: float = param(0.0, doc="z⁰ = y_i⁰ = x0·1")


@chex.dataclass(frozen=True)
class DPMRADMMParams(NoiseScheduleParams):
    rho: float = param(1.0, domain="positive", per_agent=False, doc="ρ, initial penalty")
    theta: float = param(1.0, domain="positive", per_agent=False,
                         doc="θ ≥ 1, penalty growth per odd/even pair ([16]); 1 = fixed")
    gamma: float = param(0.05, domain="positive", doc="γ, step of the inexact odd-iteration solve")
    x0: float = param(0.0, doc="x⁰ = x0·1")


@chex.dataclass(frozen=True)
class DPICADMMState:
    x: AgentArray  # (N, d) x^k (the broadcast, perturbed values)
    p: AgentArray  # (N, d) dual sums p_i
    releases: Array  # (N,) int32
    messages: Array  # () int32


@chex.dataclass(frozen=True)
class DPRWADMMState:
    x: Array  # (d,) token model z̃ as transmitted
    z: Array  # (d,) clean z
    t: Array  # (d,) running average (1/n) Σ_i (y_i + λ_i/β)
    y: AgentArray  # (N, d)
    lam: AgentArray  # (N, d)
    tau: Array  # (N,) int32 activations
    holder: Array  # () int32
    T: Array  # (N, N)
    iterations: Array  # () int32


@chex.dataclass(frozen=True)
class DPMRADMMState:
    x: AgentArray  # (N, d) x^k as broadcast
    p: AgentArray  # (N, d) dual sums
    x_odd: AgentArray  # (N, d) the x^k the last odd (private) update started from
    p_odd: AgentArray  # (N, d) the p it used
    releases: Array  # (N,) int32
    messages: Array  # () int32


# -- helpers ------------------------------------------------------------------------------------
def sigma_t(params, releases: Array, like: Array) -> Array:
    """``σ_t = σ₁ R^{−(t−1)/2}`` per agent at its ``t``-th release, shaped ``(N, 1)``."""
    return per_agent(jnp.exp(acct.log_sigma(params.log_sigma1, params.log_R, releases)), like)


@dataclasses.dataclass(frozen=True)
class _Synchronous(BoundedGradient, Algorithm):
    """Every agent transmits every iteration: PLF = number of releasing iterations. Every
    ∇f_i(x) the step uses is clipped to c (:meth:`gradients`; ``enforce_bound``, default)."""

    # jaxdp.privacy.contract.NOISE_OWNERS: each agent's releases carry its own fresh noise only
    noise_owner = "sender"
    sampler: str = "lattice"  # "lattice" (private as floats) or "float" (report: inf)

    def noise(self, key, state, params, k):
        del params, k
        return {"xi": noise_draws(key, state.x.shape, state.x.dtype, sampler=self.sampler)}

    def plf_and_messages(self, state) -> dict:
        """PLF reached (max releases) and vectors sent, per seed."""
        return {"plf": jnp.max(state.releases, axis=-1), "messages": state.messages}

    def _counted(self, releases, messages, released, sent):
        """Counters after one iteration: ``released`` (bool) and ``sent`` vectors."""
        return releases + released.astype(jnp.int32), messages + sent


# -- DP-ADMM of Zhang & Zhu (IC-ADMM + PVP) -----------------------------------------------------
@dataclasses.dataclass(frozen=True)
class DPICADMM(_Synchronous):
    """IC-ADMM (Chang, Hong & Wang 2015) + primal perturbation (Zhang & Zhu 2017), reconstructed."""

    name = "dp_icadmm"
    cites = (
        "Chang, Hong & Wang 2015 (IC-ADMM) with Zhang & Zhu 2017's primal perturbation",
        "compared in Wang, Guo, Yang & Shi 2024 (paper 003), reconstructed",
    )
    provenance = "reconstruction"
    noise_field = "log_sigma1"
    params_type = DPICADMMParams

    def init(self, key, problem, network, params):
        del key
        x0, counters = start(problem, network, params)
        return DPICADMMState(x=x0, p=jnp.zeros_like(x0), **counters)

    def step(self, state, noise, problem, network, params, k):
        x, rho = state.x, params.rho
        deg = per_agent(network.degrees, x)
        denom = (per_agent(params.beta, x) + 2 * rho * deg) * params.decay ** (-jnp.asarray(
            k, x.dtype))  # 1/α_k = (β_i + 2ρd_i)/γ^k (paper 003 §VII: α_k = α₀γ^k)
        beta_k = denom - 2 * rho * deg  # the proximal weight giving that step
        g = self.gradients(problem, x, params)  # clip(∇f_i(x_i), c): Assumption 3 enforced
        v = beta_k * x - g - state.p + rho * (deg * x + network.apply_A(x))
        x_new = problem.prox(v / denom, 1.0 / denom[:, 0])  # IC-ADMM (20)
        releases, messages = self._counted(state.releases, state.messages, jnp.array(True),
                                           2 * network.n_edges)
        x_sent = add_noise(x_new, sigma_t(params, releases, x_new), noise["xi"],
                           sampler=self.sampler)  # PVP, adopted
        p_new = state.p + rho * network.apply_L(x_sent)  # p_i + ρ Σ_j (x̃_i − x̃_j)
        return (DPICADMMState(x=x_sent, p=p_new, releases=releases, messages=messages),
                {"x": x_sent})

    models_covered = True
    models_note = "x_i^K is the last broadcast x̃_i (adopted)"

    def account(self, problem, network, params, steps, *, delta):
        """ε per agent after steps 1..K: Δ_{i,t} = 2c α_{t−1} = 2cγ^{t−1}/(β_i + 2ρd_i).

        The broadcast x̃_i is adopted and p_i is built from broadcast values, so the release at
        step k depends on the agent's data only through ∇f_i at its released x̃_i (the prox is
        non-expansive): Lemma 5's argument holds here and the paper's curve equals the zCDP one.
        """
        sens = icadmm_sensitivity(network, params, steps)
        counts = np.arange(1, steps + 1)
        return step_report(problem, network, params, sens,
                            acct.release_log_scale(counts, params.log_sigma1, params.log_R),
                            lambda k: k, sens, delta=delta, alg=self,
                            released="agent i's x̃_i^{k+1} = x_i^{k+1} + σ_k ξ to its neighbours "
                                     "at every step k < K",
                            description="DP-ADMM (IC-ADMM + PVP): x̃ = x + N(0, σ_t² I)")

    def validate(self, params, problem, network) -> None:
        super().validate(params, problem, network)
        decay = float(params.decay)
        if not 0.0 < decay <= 1.0:
            raise ValueError(f"DPICADMMParams.decay must be in (0, 1]; got {decay:g}")


# -- DP-RWADMM ----------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class DPRWADMM(BoundedGradient, TokenAlgorithm):
    """Random-walk (token) ADMM, Walkman's linearized form, noise on the token (reconstructed).
    The holder's ∇f_i(y_i) is clipped to c (``enforce_bound``, default: Assumption 3 enforced)."""

    name = "dp_rwadmm"
    cites = (
        "Mao, Yu, Gao & Yin, IEEE TSP 2020 (Walkman) for Shah & Avrachenkov, arXiv:1810.05067",
        "compared in Wang, Guo, Yang & Shi 2024 (paper 003), reconstructed",
    )
    provenance = "reconstruction"
    noise_field = "log_sigma1"
    params_type = DPRWADMMParams
    private = True
    sampler: str = "lattice"  # "lattice" (private as floats) or "float" (report: inf)

    def init(self, key, problem, network, params):
        n, d = network.n_agents, problem.dim
        dtype = problem.features.dtype
        z = jnp.full((d,), params.x0, dtype)
        return DPRWADMMState(x=z, z=z, t=z, y=jnp.broadcast_to(z, (n, d)),
                             lam=jnp.zeros((n, d), dtype), **self._walk_state(key, network, dtype))

    def _activate(self, state, noise, problem, n, params):
        i, beta = state.holder, params.beta
        yi, li = state.y[i], state.lam[i]
        g = acct.bounded_gradient(local_grad(problem, i, yi), params.c, self.enforce_bound)
        y_new = state.x - (g + li) / beta  # (W1) at the received z̃
        l_new = li + beta * (y_new - state.x)  # (W2)
        t_new = state.t + ((y_new + l_new / beta) - (yi + li / beta)) / n  # (W3)
        z_new = problem.loss.prox(t_new, 1.0 / beta, problem.reg)  # (W4): prox_{r/β}
        tau_i = state.tau[i] + 1
        sigma = jnp.exp(acct.log_sigma(params.log_sigma1, params.log_R, tau_i))
        z_sent = add_noise(z_new, sigma.astype(z_new.dtype), noise["z"], sampler=self.sampler)
        new = state.replace(x=z_sent, z=z_new, t=t_new,
                            y=state.y.at[i].set(y_new), lam=state.lam.at[i].set(l_new),
                            tau=state.tau.at[i].set(tau_i),
                            holder=jnp.asarray(noise["next"], jnp.int32),
                            iterations=state.iterations + 1)
        return new, self._sent(new)

    def _sent(self, state):
        return {"x": state.x}

    models_covered = True
    models_note = "every agent's model is the last token z̃, a release"

    def account(self, problem, network, params, steps, *, delta):
        """ε per agent after iterations 1..K: every token carries the agent's data.

        The token's clean running average t holds each agent's term, so every z̃ released after
        an agent's first activation, by any holder, depends on its data
        (:func:`~jaxdp.algorithms.recal.privacy.rwadmm_sensitivity`); the worst walk activates
        it first. Iteration k's noise is σ_τ of its holder, τ ≤ min(k, ξ) (a lower bound on σ).
        Theorem 4 over the agent's own activations (Δ = 4c/(nβ), history fixed) is the
        paper's curve.
        """
        n, xi = network.n_agents, int(float(params.xi))
        sens = np.broadcast_to(acct.rwadmm_sensitivity(n, float(params.beta), float(params.c),
                                                       steps), (n, steps))
        counts = np.minimum(np.arange(1, steps + 1), xi)
        return step_report(problem, network, params, sens,
                            acct.release_log_scale(counts, params.log_sigma1, params.log_R),
                            lambda k: min(k, xi), 4 * float(params.c) / (n * float(params.beta)),
                            delta=delta, alg=self,
                            released="the token z̃ = prox(t) + σ_τ ξ sent at every iteration "
                                     "k < K by its holder (charged to every agent whose term t "
                                     "holds)",
                            description="DP-RWADMM (Walkman token): z̃ = z + N(0, σ_τ² I)")


# -- DP-MRADMM ----------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class DPMRADMM(_Synchronous):
    """Recycled ADMM (Zhang, Khalili & Liu 2019): private odd steps, recycled even steps.

    Static configuration: ``local_steps``, the gradient steps of the inexact odd-step solve.
    """

    name = "dp_mradmm"
    cites = (
        "Zhang, Khalili & Liu, Allerton 2019 (recycled ADMM)",
        "compared in Wang, Guo, Yang & Shi 2024 (paper 003), reconstructed",
    )
    provenance = "baseline"
    noise_field = "log_sigma1"
    params_type = DPMRADMMParams
    local_steps: int = 20

    def init(self, key, problem, network, params):
        del key
        x0, counters = start(problem, network, params)
        return DPMRADMMState(x=x0, p=jnp.zeros_like(x0), x_odd=x0, p_odd=jnp.zeros_like(x0),
                             **counters)

    def step(self, state, noise, problem, network, params, k):
        x, p = state.x, state.p
        rho = penalty(params, k, x.dtype)
        deg = per_agent(network.degrees, x)
        anchor = rho * (deg * x + network.apply_A(x))  # ρ Σ_j (x_i + x_j)
        odd = k % 2 == 0  # the paper's odd iterations 1, 3, ... are engine steps 0, 2, ...
        x_exact = self._argmin(x, p, anchor, rho * deg, self.bounded_problem(problem, params),
                               params)  # every ∇f_i of the solve clipped to c
        releases, messages = self._counted(state.releases, state.messages, odd,
                                           2 * network.n_edges)
        x_private = add_noise(x_exact, sigma_t(params, releases, x), noise["xi"],
                              sampler=self.sampler)  # released x̃
        g_recycled = (-state.p_odd - 2 * rho * deg * x
                      + rho * (deg * state.x_odd + network.apply_A(state.x_odd)))
        x_linear = (anchor - g_recycled - p) / (2 * rho * deg)  # even step, closed form
        x_new = jnp.where(odd, x_private, x_linear)
        p_new = p + rho * network.apply_L(x_new)  # p_i + ρ_k Σ_j (x_i − x_j)
        new = DPMRADMMState(x=x_new, p=p_new, x_odd=jnp.where(odd, x, state.x_odd),
                            p_odd=jnp.where(odd, p, state.p_odd), releases=releases,
                            messages=messages)
        return new, {"x": x_new}

    def _argmin(self, x, p, anchor, rho_deg, problem, params):
        """``local_steps`` gradient steps on f_i + ⟨p_i, ·⟩ + ρΣ_j‖· − (x_i + x_j)/2‖², from x_i."""
        gamma = per_agent(params.gamma, x)

        def descend(phi, _):
            return phi - gamma * (problem.local_grads(phi) + p + 2 * rho_deg * phi - anchor), None

        return jax.lax.scan(descend, x, None, length=self.local_steps)[0]

    models_covered = True
    models_note = "x_i^K is the agent's last broadcast"

    def account(self, problem, network, params, steps, *, delta):
        """ε per agent after steps 1..K: odd steps (engine steps 0, 2, …) release x̃_i.

        The odd step starts from released values, so its release depends on the agent's data only
        through the ``local_steps`` gradient steps
        (:func:`~jaxdp.algorithms.recal.privacy.mradmm_solve_sensitivity`); even steps are
        functions of broadcast values. The exact argmin's c/(ρ_t d_i) is the paper's curve.
        """
        n = network.n_agents
        k = np.arange(steps)
        t = k // 2 + 1  # release count of the odd step k (and of the even step after it)
        rho_deg = (float(params.rho) * float(params.theta) ** (t - 1))[None, :] \
            * np.asarray(network.degrees, np.float64)[:, None]
        gamma = np.broadcast_to(np.asarray(params.gamma, np.float64), (n,))[:, None]
        sens = mradmm_solve_sensitivity(gamma, rho_deg, float(params.c), self.local_steps)
        sens = np.where(k % 2 == 0, sens, 0.0)
        releases = (steps + 1) // 2
        return step_report(problem, network, params, sens,
                            acct.release_log_scale(t, params.log_sigma1, params.log_R),
                            lambda s: (s + 1) // 2, mradmm_sensitivity(network, params, releases),
                            delta=delta, alg=self,
                            released="agent i's x̃_i = x_i + σ_t ξ at odd iterations and its "
                                     "recycled x_i at even ones, to its neighbours, k < K",
                            description="DP-MRADMM: odd-step x̃ = x + N(0, σ_t² I) "
                                        "(output perturbation)")

    def validate(self, params, problem, network) -> None:
        super().validate(params, problem, network)
        if float(params.theta) < 1.0:
            raise ValueError(f"DPMRADMMParams.theta must be >= 1; got {float(params.theta):g}")
        if problem.loss.l1_key is not None and float(problem.reg[problem.loss.l1_key]) > 0:
            raise ValueError("dp_mradmm handles smooth problems only (paper 003 runs it with "
                             f"r = 0); got {problem.loss.l1_key} = "
                             f"{float(problem.reg[problem.loss.l1_key]):g}")


def icadmm_sensitivity(network, params, releases: int) -> np.ndarray:
    """Host (N, K): ``Δ_{i,t} = 2c γ^{t−1}/(β_i + 2ρd_i)``, the t-th release's sensitivity
    (the gradient enters ``x_i⁺`` with weight α_{t−1} and changes by at most 2c)."""
    deg = np.asarray(network.degrees, np.float64)[:, None]
    t = np.arange(releases, dtype=np.float64)[None, :]
    beta = np.broadcast_to(np.asarray(params.beta, np.float64), deg.shape[:1])[:, None]
    return 2 * float(params.c) * float(params.decay) ** t / (beta + 2 * float(params.rho) * deg)


def mradmm_sensitivity(network, params, releases: int) -> np.ndarray:
    """Host (N, K): ``Δ_{i,t} = c/(ρθ^{t−1} d_i)``, the t-th odd-step exact argmin's
    sensitivity (the paper's curve; the run's inexact solve has
    :func:`~jaxdp.algorithms.recal.privacy.mradmm_solve_sensitivity`)."""
    deg = np.asarray(network.degrees, np.float64)[:, None]
    t = np.arange(releases, dtype=np.float64)[None, :]
    return float(params.c) / (float(params.rho) * float(params.theta) ** t * deg)


def penalty(params, k, dtype) -> Array:
    """ρ_k = ρ θ^{⌊k/2⌋} in ``dtype`` (the state's): constant over an odd/even pair ([16]'s
    increasing penalty)."""
    return params.rho * jnp.power(params.theta, (jnp.asarray(k) // 2).astype(dtype))


__all__ = [
    "DPICADMM", "DPICADMMParams", "DPICADMMState", "DPMRADMM", "DPMRADMMParams", "DPMRADMMState",
    "DPRWADMM", "DPRWADMMParams", "DPRWADMMState", "icadmm_sensitivity", "mradmm_sensitivity",
    "penalty", "sigma_t",
]
