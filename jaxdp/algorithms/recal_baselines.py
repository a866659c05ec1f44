"""The DP baselines of paper 003's comparison (Tables IV and V, Figs. 3 and 6), reconstructed.

Paper 003 (Wang, Guo, Yang & Shi 2024; notes ``papers/notes/003_dprecal.md`` §3.6) gives **no update
equations, noise placement or hyperparameters** for its baselines: it says only that NIDS and EXTRA
"are injected with DP noise" and that every method is run at ε = 12 with PLF 300 (fixed steps).
Everything below is therefore a reconstruction from the cited papers, flagged as such:

* Noise placement (notes §3.6, "the natural choice"): Gaussian noise on every transmitted vector,
  with the same geometric schedule as DP-RECAL indexed by the agent's own release count t,
  ``σ_t = σ₁ R^{−(t−1)/2}``, so that one accountant (``recal_privacy``) serves the whole comparison.
  Sensitivities follow the paper's own per-step heuristic (Lemma 5: the released vector's history is
  fixed and only the current gradient changes, ``‖∇f_{i,D} − ∇f_{i,D̂}‖ ≤ 2c``). An agent uses its
  own exact value where a mixing product needs it (only neighbours' values arrive noisy).
* Mixing with own exact values:
  ``(W x)_i = W_ii x_i + Σ_j W_ij x̃_j = (W x̃)_i + W_ii(x_i − x̃_i)``, from the network's
  ``mix`` and ``w_diag`` only, so the dense and edge backends agree (tested).
* Local regularizer: every agent's loss carries its ``l1‖x‖₁`` (jaxdp's ℓ1 problems), handled by
  ``problem.prox`` with each method's step; their sum is RECAL's ``n r``.

The methods (stacked notation X ``(N, d)``, W the Metropolis–Hastings mixing matrix, W̃ = (I+W)/2,
A the adjacency, ``d_i`` degrees, ``ξ`` standard Gaussian draws, ``prox`` per agent):

* **DP-NIDS** — NIDS of Li, Shi & Yan (IEEE TSP 2019, Alg. 1 with prox), equal to the core's
  :class:`~jaxdp.algorithms.NIDS` when prox is the identity and σ = 0 (tested):
  ``z¹ = x⁰ − α∇F(x⁰)``, ``x¹ = prox_{αr}(z¹)``;
  ``v = 2x^k − x^{k−1} − α(∇F(x^k) − ∇F(x^{k−1}))``, transmitted ``ṽ = v + σ_t ξ`` (Δ = 2αc),
  ``z^{k+1} = z^k − x^k + W̃ṽ``, ``x^{k+1} = prox_{αr}(z^{k+1})``.
* **DP-EXTRA** — PG-EXTRA of Shi, Ling, Wu & Yin (IEEE TSP 2015, eq. (4)), equal to the core's
  :class:`~jaxdp.algorithms.EXTRA` without prox and noise (tested):
  ``x^{½} = W x⁰ − α∇F(x⁰)``, ``x¹ = prox(x^{½})``;
  ``x^{k+½} = x^{k−½} + W x̃^k − W̃ x̃^{k−1} − α(∇F(x^k) − ∇F(x^{k−1}))``,
  ``x^{k+1} = prox(x^{k+½})``
  with the transmitted ``x̃^k = x^k + σ_t ξ`` (Δ = 2αc), received once and reused at k+1.
* **DP-ADMM** (``DPICADMM``, ``"dp_icadmm"``; Zhang & Zhu, IEEE TIFS 2017, "dynamic DP" ADMM),
  rooted in IC-ADMM (Chang, Hong & Wang, IEEE TSP 2015, eq. (20)) as paper 003 says; primal
  variable perturbation (PVP):
  ``x_i⁺ = prox_{r/(β+2ρd_i)}((β x_i − ∇f_i(x_i) − p_i + ρ(d_i x_i + Σ_{j∈N_i} x_j))/(β + 2ρd_i))``,
  ``x̃_i = x_i⁺ + σ_t ξ_i`` broadcast and adopted (Δ_i = 2c/(β + 2ρd_i)),
  ``p_i⁺ = p_i + ρ Σ_{j∈N_i}(x̃_i − x̃_j)``. [12]'s noise is Laplace-like and iteration-indexed;
  here it is Gaussian on the geometric schedule (notes §3.6).
* **DP-ADMM [13], decaying step** (Tables IV/V, PLF 2000; ``decay`` γ < 1) — the same class with
  paper 003's decaying step ``α_k = α₀γ^k`` (§VII): the proximal weight becomes
  ``β_k = (β_i + 2ρd_i)γ^{−k} − 2ρd_i``, so ``x_i⁺ = prox_{α_k r}(x_i − α_k(∇f_i(x_i) + p_i +
  ρ(Lx)_i))`` and ``Δ_{i,t} = 2cα_{t−1}``. A reconstruction: [13] (Huang et al.; jaxdp's
  paper-002 ``DPADMM``) is server–worker (it needs W = 11ᵀ/N), logistic only, and its ℓ1 form
  admits no ridge term, so it cannot run paper 003's ring problems. What it shares with this
  stand-in is what paper 003 says of it: a linearized (first-order) local step, Gaussian noise on
  the released primal, and a decaying step.
* **DP-RWADMM** — Shah & Avrachenkov (arXiv:1810.05067) run one Markov-sampled node per iteration;
  their update is not reproduced in the notes, so this is the closest token-passing ADMM the notes
  point to, Walkman (Mao, Yu, Gao & Yin, IEEE TSP 2020, linearized form), with the token carrying
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
  Gaussian output perturbation instead of [17]'s objective perturbation); even iterations replace f_i by its linearization with
  the gradient recycled from the odd step's optimality condition on released values,
  ``g̃_i = −p_i^{odd} − 2ρ d_i x̃_i + ρ(d_i x_i^{odd} + Σ_j x_j^{odd})``, so
  ``x_i⁺ = (ρ(d_i x_i + Σ_j x_j) − g̃_i − p_i)/(2ρ d_i)`` leaks nothing;
  ``p_i⁺ = p_i + ρ_k Σ_j(x_i⁺ − x_j⁺)`` every iteration; ρ_k = ρ θ^{⌊k/2⌋} ([16]'s increasing
  penalty; θ = 1 fixed, θ = 1/γ > 1 the decaying-step row of Tables IV/V, since the primal step
  scales as 1/ρ_k). Smooth problems only (paper 003 runs it with r = 0).

Messages per iteration (undirected edges E, here counted as vectors sent on directed edges): NIDS,
EXTRA, ADMM and MRADMM broadcast one vector per agent (2E); token methods send one token. The
paper's Comm column implies 4E for EXTRA/ADMM/RWADMM per PLF unit and 8E for MRADMM (notes
§3.6); the reproduction reports both.
"""
from __future__ import annotations

import dataclasses
import math

import chex
import jax
import jax.numpy as jnp
import numpy as np

from jaxdp._types import AgentArray, Array, per_agent
from jaxdp.algorithms import recal_privacy as acct
from jaxdp.algorithms._base import Algorithm
from jaxdp.algorithms.recal import TokenAlgorithm, local_grad
from jaxdp.privacy import PrivacyReport, gaussian


# -- Params -------------------------------------------------------------------------------------
@chex.dataclass(frozen=True)
class DPStepParams:
    alpha: float = 0.05  # α, step size of NIDS / PG-EXTRA; scalar
    x0: float = 0.0  # x⁰ = x0·1 for every agent
    log_sigma1: float = 0.0  # log σ₁ of the noise on each transmission
    log_R: float = math.log(1.05)  # log R ≥ 0: σ_t = σ₁ R^{−(t−1)/2}, t the release count
    c: float = 1.0  # gradient bound (accountant only)
    delta: float = 1e-3  # δ of the report


@chex.dataclass(frozen=True)
class DPICADMMParams:
    rho: float = 1.0  # ρ, ADMM penalty (c of IC-ADMM [43]); scalar
    beta: float = 1.0  # β_i, IC-ADMM proximal weight of the linearized f_i; scalar or (N,)
    decay: float = 1.0  # γ ∈ (0, 1]: step α_k = α₀γ^k, α₀ = 1/(β_i + 2ρd_i); 1 = fixed step
    x0: float = 0.0  # x⁰ = x0·1
    log_sigma1: float = 0.0  # log σ₁
    log_R: float = math.log(1.05)  # log R ≥ 0
    c: float = 1.0  # gradient bound (accountant only)
    delta: float = 1e-3  # δ of the report


@chex.dataclass(frozen=True)
class DPRWADMMParams:
    beta: float = 10.0  # β, Walkman penalty; must dominate the local smoothness
    xi: float = 300.0  # ξ, target PLF (as RECAL)
    x0: float = 0.0  # z⁰ = y_i⁰ = x0·1
    log_sigma1: float = 0.0  # log σ₁
    log_R: float = math.log(1.05)  # log R ≥ 0
    c: float = 1.0  # gradient bound (accountant only)
    delta: float = 1e-3  # δ of the report


@chex.dataclass(frozen=True)
class DPMRADMMParams:
    rho: float = 1.0  # ρ, initial penalty; scalar
    theta: float = 1.0  # θ ≥ 1, penalty growth per odd/even pair ([16]); 1 = fixed
    gamma: float = 0.05  # γ, step of the inexact odd-iteration solve; scalar or (N,)
    x0: float = 0.0  # x⁰ = x0·1
    log_sigma1: float = 0.0  # log σ₁
    log_R: float = math.log(1.05)  # log R ≥ 0
    c: float = 1.0  # gradient bound (accountant only)
    delta: float = 1e-3  # δ of the report


# -- States -------------------------------------------------------------------------------------
@chex.dataclass(frozen=True)
class DPNIDSState:
    x: AgentArray  # (N, d) x^k
    z: AgentArray  # (N, d) z^k (pre-prox)
    x_prev: AgentArray  # (N, d) x^{k−1}
    g_prev: AgentArray  # (N, d) ∇F(x^{k−1})
    releases: Array  # (N,) int32 noisy releases per agent
    messages: Array  # () int32 vectors sent so far


@chex.dataclass(frozen=True)
class DPEXTRAState:
    x: AgentArray  # (N, d) x^k
    z: AgentArray  # (N, d) x^{k−½} (pre-prox)
    x_prev: AgentArray  # (N, d) x^{k−1} (own exact value)
    xt_prev: AgentArray  # (N, d) x̃^{k−1} as transmitted (reused by the neighbours)
    g_prev: AgentArray  # (N, d) ∇F(x^{k−1})
    releases: Array  # (N,) int32
    messages: Array  # () int32


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


def mix_own_exact(network, clean: AgentArray, sent: AgentArray) -> AgentArray:
    """``(W x)_i = W_ii x_i + Σ_{j≠i} W_ij x̃_j``: own exact value, neighbours' transmitted ones.

    Built from the network's product and diagonal only (``mix``, ``w_diag``), so it runs on
    either backend: ``W x̃ + diag(W)(x − x̃)``.
    """
    return network.mix(sent) + per_agent(network.w_diag, clean) * (clean - sent)


def half_mix_own_exact(network, clean: AgentArray, sent: AgentArray) -> AgentArray:
    """The same with ``W̃ = (I + W)/2``: ``(W̃ x)_i = ½(x_i + (W x)_i)``."""
    return 0.5 * (clean + mix_own_exact(network, clean, sent))


def _start(problem, network, params) -> tuple[AgentArray, dict]:
    """``x⁰ = x0·1`` for every agent ``(N, d)`` and zeroed release / message counters."""
    x0 = jnp.full((network.n_agents, problem.dim), params.x0, problem.features.dtype)
    return x0, {"releases": jnp.zeros((network.n_agents,), jnp.int32),
                "messages": jnp.zeros((), jnp.int32)}


def _geometric_events_report(n_agents, releases, sens, params, description) -> PrivacyReport:
    return acct.geometric_report(n_agents, releases, sens=np.asarray(sens, np.float64),
                                 log_sigma1=float(params.log_sigma1), log_R=float(params.log_R),
                                 delta=float(params.delta), description=description)


@dataclasses.dataclass(frozen=True)
class _Synchronous(Algorithm):
    """Every agent transmits every iteration: PLF = number of releasing iterations."""

    def noise(self, key, state, params, k):
        del params, k
        return {"xi": gaussian(key, state.x.shape, state.x.dtype)}

    def plf_and_messages(self, state) -> dict:
        """PLF reached (max releases) and vectors sent, per seed."""
        return {"plf": jnp.max(state.releases, axis=-1), "messages": state.messages}

    def _counted(self, releases, messages, released, sent):
        """Counters after one iteration: ``released`` (bool) and ``sent`` vectors."""
        return releases + released.astype(jnp.int32), messages + sent


@dataclasses.dataclass(frozen=True)
class _NoisyStep(_Synchronous):
    """DP-NIDS and DP-EXTRA: one step size α, a noisy vector per agent per iteration, Δ = 2αc."""

    params_type = DPStepParams
    positive = ("alpha", "c")
    nonnegative = ("log_R",)
    unit_interval = ("delta",)
    released = ""  # "NAME: what is transmitted", for the privacy report
    state_type = DPNIDSState

    def init(self, key, problem, network, params):
        del key
        x0, counters = _start(problem, network, params)
        return self.state_type(x=x0, z=x0, x_prev=x0, g_prev=jnp.zeros_like(x0),
                               **self._extra_state(x0), **counters)

    def _extra_state(self, x0) -> dict:
        """State fields beyond ``x, z, x_prev, g_prev`` and the counters, at x⁰."""
        del x0
        return {}

    def privacy(self, problem, network, params, steps):
        """ε per agent after 1..steps releases (the public first iteration excluded): Δ = 2αc."""
        del problem
        return _geometric_events_report(network.n_agents, steps, 2 * params.alpha * params.c,
                                        params, f"{self.released} (reconstructed)")


# -- DP-NIDS ------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class DPNIDS(_NoisyStep):
    """NIDS with prox (Li, Shi & Yan 2019), Gaussian noise on the transmitted ṽ (reconstructed)."""

    name = "dp_nids"
    released = "DP-NIDS: ṽ = v + N(0, σ_t² I)"
    state_type = DPNIDSState

    def step(self, state, noise, problem, network, params, k):
        x, a = state.x, params.alpha
        g = problem.local_grads(x)
        v = 2 * x - state.x_prev - a * (g - state.g_prev)  # NIDS (9), the mixed vector
        first = k == 0
        releases, messages = self._counted(state.releases, state.messages, ~first,
                                           jnp.where(first, 0, 2 * network.n_edges))
        v_sent = v + sigma_t(params, releases, v) * noise["xi"]  # transmitted ṽ
        z_new = jnp.where(first, x - a * g,  # z¹ = x⁰ − α∇F(x⁰)
                          state.z - x + half_mix_own_exact(network, v, v_sent))  # NIDS Alg. 1
        x_new = problem.prox(z_new, a)  # x^{k+1} = prox_{αr}(z^{k+1})
        new = DPNIDSState(x=x_new, z=z_new, x_prev=x, g_prev=g, releases=releases,
                          messages=messages)
        return new, {"v": jnp.where(first, jnp.zeros_like(v), v_sent)}


# -- DP-EXTRA -----------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class DPEXTRA(_NoisyStep):
    """PG-EXTRA (Shi, Ling, Wu & Yin 2015), Gaussian noise on the transmitted x̃ (reconstructed)."""

    name = "dp_extra"
    released = "DP-EXTRA: x̃ = x + N(0, σ_t² I)"
    state_type = DPEXTRAState

    def _extra_state(self, x0):
        return {"xt_prev": x0}  # x̃⁰ = x⁰ (public)

    def step(self, state, noise, problem, network, params, k):
        x, a = state.x, params.alpha
        g = problem.local_grads(x)
        first = k == 0  # x⁰ is public: sent without noise, nothing released
        releases, messages = self._counted(state.releases, state.messages, ~first,
                                           2 * network.n_edges)
        x_sent = x + jnp.where(first, 0.0, 1.0) * sigma_t(params, releases, x) * noise["xi"]
        Wx = mix_own_exact(network, x, x_sent)  # W x^k
        W_half_prev = half_mix_own_exact(network, state.x_prev, state.xt_prev)  # W̃ x^{k−1}
        z_new = jnp.where(first, Wx - a * g,  # x^{½} = W x⁰ − α∇F(x⁰)
                          state.z + Wx - W_half_prev - a * (g - state.g_prev))  # PG-EXTRA (4)
        x_new = problem.prox(z_new, a)  # x^{k+1} = prox_{αr}(x^{k+½})
        new = DPEXTRAState(x=x_new, z=z_new, x_prev=x, xt_prev=x_sent, g_prev=g,
                           releases=releases, messages=messages)
        return new, {"x": x_sent}


# -- DP-ADMM of Zhang & Zhu (IC-ADMM + PVP) -----------------------------------------------------
@dataclasses.dataclass(frozen=True)
class DPICADMM(_Synchronous):
    """IC-ADMM (Chang, Hong & Wang 2015) + primal perturbation (Zhang & Zhu 2017), reconstructed."""

    name = "dp_icadmm"
    params_type = DPICADMMParams
    positive = ("rho", "beta", "c")
    nonnegative = ("log_R",)
    unit_interval = ("delta",)

    def init(self, key, problem, network, params):
        del key
        x0, counters = _start(problem, network, params)
        return DPICADMMState(x=x0, p=jnp.zeros_like(x0), **counters)

    def step(self, state, noise, problem, network, params, k):
        x, rho = state.x, params.rho
        deg = per_agent(network.degrees, x)
        denom = (per_agent(params.beta, x) + 2 * rho * deg) * params.decay ** (-jnp.asarray(
            k, x.dtype))  # 1/α_k = (β_i + 2ρd_i)/γ^k (paper 003 §VII: α_k = α₀γ^k)
        beta_k = denom - 2 * rho * deg  # the proximal weight giving that step
        g = problem.local_grads(x)
        v = beta_k * x - g - state.p + rho * (deg * x + network.apply_A(x))
        x_new = problem.prox(v / denom, 1.0 / denom[:, 0])  # IC-ADMM (20)
        releases, messages = self._counted(state.releases, state.messages, jnp.array(True),
                                           2 * network.n_edges)
        x_sent = x_new + sigma_t(params, releases, x_new) * noise["xi"]  # PVP, adopted
        p_new = state.p + rho * network.apply_L(x_sent)  # p_i + ρ Σ_j (x̃_i − x̃_j)
        return (DPICADMMState(x=x_sent, p=p_new, releases=releases, messages=messages),
                {"x": x_sent})

    def privacy(self, problem, network, params, steps):
        """ε per agent after 1..steps releases: Δ_{i,t} = 2c α_{t−1} = 2cγ^{t−1}/(β_i + 2ρd_i)."""
        del problem
        return _geometric_events_report(network.n_agents, steps,
                                        icadmm_sensitivity(network, params, steps), params,
                                        "DP-ADMM (IC-ADMM + PVP): x̃ = x + N(0, σ_t² I)")

    def validate(self, params, problem, network) -> None:
        super().validate(params, problem, network)
        decay = float(params.decay)
        if not 0.0 < decay <= 1.0:
            raise ValueError(f"DPICADMMParams.decay must be in (0, 1]; got {decay:g}")


# -- DP-RWADMM ----------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class DPRWADMM(TokenAlgorithm):
    """Random-walk (token) ADMM, Walkman's linearized form, noise on the token (reconstructed)."""

    name = "dp_rwadmm"
    params_type = DPRWADMMParams
    positive = ("beta", "xi", "c")
    nonnegative = ("log_R",)
    unit_interval = ("delta",)
    private = True

    def init(self, key, problem, network, params):
        n, d = network.n_agents, problem.dim
        dtype = problem.features.dtype
        z = jnp.full((d,), params.x0, dtype)
        return DPRWADMMState(x=z, z=z, t=z, y=jnp.broadcast_to(z, (n, d)),
                             lam=jnp.zeros((n, d), dtype), **self._walk_state(key, network, dtype))

    def _activate(self, state, noise, problem, n, params):
        i, beta = state.holder, params.beta
        yi, li = state.y[i], state.lam[i]
        y_new = state.x - (local_grad(problem, i, yi) + li) / beta  # (W1) at the received z̃
        l_new = li + beta * (y_new - state.x)  # (W2)
        t_new = state.t + ((y_new + l_new / beta) - (yi + li / beta)) / n  # (W3)
        z_new = problem.loss.prox(t_new, 1.0 / beta, problem.reg)  # (W4): prox_{r/β}
        tau_i = state.tau[i] + 1
        sigma = jnp.exp(acct.log_sigma(params.log_sigma1, params.log_R, tau_i))
        new = state.replace(x=z_new + sigma * noise["z"], z=z_new, t=t_new,
                            y=state.y.at[i].set(y_new), lam=state.lam.at[i].set(l_new),
                            tau=state.tau.at[i].set(tau_i),
                            holder=jnp.asarray(noise["next"], jnp.int32),
                            iterations=state.iterations + 1)
        return new, self._sent(new)

    def _sent(self, state):
        return {"x": state.x}

    def privacy(self, problem, network, params, steps):
        """ε per agent after 1..min(steps, ξ) activations: Δ = 4c/(nβ)."""
        del problem
        n = network.n_agents
        sens = 4 * float(params.c) / (n * float(params.beta))
        return _geometric_events_report(n, int(min(steps, float(params.xi))), sens, params,
                                        "DP-RWADMM (Walkman token): z̃ = z + N(0, σ_τ² I)")


# -- DP-MRADMM ----------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class DPMRADMM(_Synchronous):
    """Recycled ADMM (Zhang, Khalili & Liu 2019): private odd steps, recycled even steps.

    Static configuration: ``local_steps``, the gradient steps of the inexact odd-step solve.
    """

    name = "dp_mradmm"
    params_type = DPMRADMMParams
    positive = ("rho", "theta", "gamma", "c")
    nonnegative = ("log_R",)
    unit_interval = ("delta",)
    local_steps: int = 20

    def init(self, key, problem, network, params):
        del key
        x0, counters = _start(problem, network, params)
        return DPMRADMMState(x=x0, p=jnp.zeros_like(x0), x_odd=x0, p_odd=jnp.zeros_like(x0),
                             **counters)

    def step(self, state, noise, problem, network, params, k):
        x, p = state.x, state.p
        rho = penalty(params, k)
        deg = per_agent(network.degrees, x)
        anchor = rho * (deg * x + network.apply_A(x))  # ρ Σ_j (x_i + x_j)
        odd = k % 2 == 0  # the paper's odd iterations 1, 3, ... are engine steps 0, 2, ...
        x_exact = self._argmin(x, p, anchor, rho * deg, problem, params)
        releases, messages = self._counted(state.releases, state.messages, odd,
                                           2 * network.n_edges)
        x_private = x_exact + sigma_t(params, releases, x) * noise["xi"]  # released x̃
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

    def privacy(self, problem, network, params, steps):
        """ε per agent after 1..steps private (odd) releases: Δ_i = c/(ρ_t d_i), ρ_t = ρθ^{t−1}."""
        del problem
        return _geometric_events_report(
            network.n_agents, steps, mradmm_sensitivity(network, params, steps), params,
            "DP-MRADMM: odd-step x̃ = x + N(0, σ_t² I) (output perturbation)")

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
    """Host (N, K): ``Δ_{i,t} = c/(ρθ^{t−1} d_i)``, the t-th odd-step argmin's sensitivity."""
    deg = np.asarray(network.degrees, np.float64)[:, None]
    t = np.arange(releases, dtype=np.float64)[None, :]
    return float(params.c) / (float(params.rho) * float(params.theta) ** t * deg)


def penalty(params, k) -> Array:
    """ρ_k = ρ θ^{⌊k/2⌋}: constant over an odd/even pair ([16]'s increasing penalty)."""
    return params.rho * jnp.power(params.theta, (jnp.asarray(k) // 2).astype(jnp.result_type(
        float)))


__all__ = [
    "DPICADMM", "DPICADMMParams", "DPEXTRA", "DPMRADMM", "DPMRADMMParams", "DPNIDS", "DPRWADMM",
    "DPRWADMMParams", "DPStepParams", "half_mix_own_exact", "icadmm_sensitivity", "mix_own_exact",
    "mradmm_sensitivity", "penalty", "sigma_t",
]
