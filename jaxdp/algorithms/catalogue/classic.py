"""Standard decentralized methods: the reference lines on every DP plot.

* **DGD** — Nedić & Ozdaglar, "Distributed subgradient methods for multi-agent optimization",
  IEEE TAC 2009: ``x_i ← Σ_j W_ij x_j − α_k ∇f_i(x_i)``.
* **DP-DGD** — DGD with per-agent gradient perturbation (clip to C, add N(0, σ²C²)), the textbook
  private baseline (Abadi et al. 2016 clipping applied to a local objective). Used by ``jaxdp demo``.
* **EXTRA** — Shi, Ling, Wu & Yin, "EXTRA: an exact first-order algorithm for decentralized consensus
  optimization", SIAM J. Optim. 2015, eq. (3.1)–(3.2), in its proximal form PG-EXTRA (Shi, Ling,
  Wu & Yin, "A proximal gradient algorithm for decentralized composite optimization", IEEE TSP
  2015, eq. (4)); without a regularizer ``problem.prox`` is the identity and it is EXTRA.
* **NIDS** — Li, Shi & Yan, "A decentralized proximal-gradient method with network independent
  step-sizes and separated convergence rates", IEEE TSP 2019, Alg. 1 (eq. (9) with W̃ = (I + W)/2
  without a regularizer).
* **DIGing** — Nedić, Olshevsky & Shi, "Achieving geometric convergence for distributed optimization
  over time-varying graphs", SIAM J. Optim. 2017, eq. (3) (gradient tracking).
* **ADMM** — edge-based relaxed decentralized ADMM (Peaceman–Rachford splitting with relaxation a) of
  Bastianello, Carli, Schenato & Todescato, "Asynchronous distributed optimization over lossy
  networks via relaxed ADMM", IEEE TCNS 2021, eq. (12); the local problem is solved inexactly by
  ``local_steps`` gradient steps warm-started at the previous model (exact as ``local_steps`` grows).
  It is the parent of LT-ADMM (paper 004).

Stacked notation: X is ``(N, d)`` (row i = agent i), ∇F(X) stacks ∇f_i(x_i), W the mixing matrix.
Edge variables are ``(2E, d)`` aligned with ``network.senders/receivers``: ``z[e]`` is held by agent
``receivers[e]`` about its neighbour ``senders[e]``; ``z[reverse[e]]`` is the neighbour's twin.
"""
from __future__ import annotations

import dataclasses

import chex
import jax
import jax.numpy as jnp
import numpy as np

from jaxdp._types import AgentArray, Array, EdgeArray, per_agent
from jaxdp.core import Algorithm, param, zeros_like_models
from jaxdp.privacy import (Assumption, PrivacyEvents, add_noise, clip_by_norm, noise_draws)


# -- Params -------------------------------------------------------------------------------------
@chex.dataclass(frozen=True)
class DGDParams:
    alpha: float = param(0.05, domain="positive", doc="α, step size; α_k = α / (k+1)^gamma")
    gamma: float = param(0.0, domain="nonnegative", per_agent=False,
                         doc="decay exponent of the step size (0 = constant)")


@chex.dataclass(frozen=True)
class DPDGDParams:
    """DP-DGD's step, clip and noise. The defaults are a private run, not a placeholder: on the
    default setting of ``jaxdp run dp_dgd`` (``nonconvex_logistic``, 50 agents on a random
    geometric graph, K = 500 steps, δ = 1e-5) they give ε ≈ 7.0 per agent (PLD accountant), and
    the objective goes from f(0) = 34.7 to about 25 (f* = 21.4). ε depends on σ and K only
    (Δ = 2C, noise std σC): σ = 30 at K = 500 is ρ = 2K/σ² ≈ 1.1 zCDP; fewer steps give less ε.
    The clip C = 0.1 lies below the local gradients' norms (about 1.2 at x = 0), so the noise σC
    stays small beside the step α; ``--epsilon`` (:func:`jaxdp.privacy.calibrate_params`) sets σ
    for another target."""

    alpha: float = param(0.02, domain="positive", doc="α, step size")
    gamma: float = param(0.0, domain="nonnegative", per_agent=False, doc="step-size decay exponent")
    clip: float = param(0.1, domain="positive", doc="C, gradient clipping norm")
    sigma: float = param(30.0, domain="positive", doc="σ, noise multiplier: the noise std is σ·C")


@chex.dataclass(frozen=True)
class StepParams:
    alpha: float = param(0.05, domain="positive", doc="α, step size")


@chex.dataclass(frozen=True)
class TwoStepParams:
    alpha: float = param(0.05, domain="positive", per_agent=False,
                         doc="α, step size (EXTRA (3.1)–(3.2), NIDS (9): one α)")
    x0: float = param(0.0, per_agent=False, doc="x⁰ = x0·1 for every agent")


@chex.dataclass(frozen=True)
class ADMMParams:
    rho: float = param(1.0, domain="positive", per_agent=False, doc="ρ, penalty, eq. (12)")
    relax: float = param(0.5, domain="positive", per_agent=False,
                         doc="a, relaxation in (0, 1], eq. (12)")
    gamma: float = param(0.05, domain="positive", doc="γ, step of the inexact local solve")


# -- States ------------------------------------------------------------------------------------
@chex.dataclass(frozen=True)
class DGDState:
    x: AgentArray  # (N, d)


@chex.dataclass(frozen=True)
class TwoStepState:
    x: AgentArray  # (N, d) x^{k} = prox_{αr}(z^k)
    z: AgentArray  # (N, d) z^k before the prox (x^{k−½} of PG-EXTRA); = x^k without a regularizer
    x_prev: AgentArray  # (N, d) x^{k-1}
    g_prev: AgentArray  # (N, d) ∇F(x^{k-1})


@chex.dataclass(frozen=True)
class ExtraState(TwoStepState):
    wx_prev: AgentArray  # (N, d) W x^{k-1}, mixed from last round's messages (not sent again)


@chex.dataclass(frozen=True)
class TrackingState:
    x: AgentArray  # (N, d)
    y: AgentArray  # (N, d) gradient tracker
    g: AgentArray  # (N, d) ∇F(x)


@chex.dataclass(frozen=True)
class ADMMState:
    x: AgentArray  # (N, d)
    z: EdgeArray  # (2E, d)


# -- Algorithms --------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class DGD(Algorithm):
    """Decentralized gradient descent: ``X⁺ = W X − α_k ∇F(X)`` (Nedić & Ozdaglar 2009, eq. (2))."""

    name = "dgd"
    cites = ("Nedić & Ozdaglar, IEEE TAC 2009, eq. (2)",)
    provenance = "standard"
    params_type = DGDParams

    def init(self, key, problem, network, params):
        del key, params
        return DGDState(x=zeros_like_models(problem, network))

    def step(self, state, noise, problem, network, params, k):
        x = state.x
        x_new = network.mix(x) - _step_size(params, k, x) * self._gradients(x, noise, problem, params)
        return DGDState(x=x_new), {"x": x}

    def _gradients(self, x, noise, problem, params):
        del noise, params
        return problem.local_grads(x)


@dataclasses.dataclass(frozen=True)
class DPDGD(DGD):
    """DGD on clipped, Gaussian-perturbed local gradients.

    ``g̃_i = clip(∇f_i(x_i), C) + σ C ξ_i``, ``ξ_i ~ N(0, I_d)``;  ``X⁺ = W X − α_k G̃``.

    Privacy: adjacency changes one agent's whole local objective (as papers 000 and 001), so the
    clipped gradient has ℓ2 sensitivity 2C and each step is a Gaussian mechanism with noise multiplier
    σ/2 on it; the shared models are post-processing. zCDP per step ρ = 2/σ².
    """

    # jaxdp.privacy.contract.NOISE_OWNERS: each agent's releases carry its own fresh noise only
    noise_owner = "sender"
    name = "dp_dgd"
    cites = (
        "Nedić & Ozdaglar, IEEE TAC 2009 (DGD)",
        "Abadi et al. 2016 (gradient clipping with Gaussian noise)",
    )
    provenance = "standard"
    params_type = DPDGDParams
    sampler: str = "lattice"  # "lattice" (private as floats) or "float" (report: inf)

    def noise(self, key, state, params, k):
        del params, k
        return {"xi": noise_draws(key, state.x.shape, state.x.dtype, sampler=self.sampler)}

    def _gradients(self, x, noise, problem, params):
        g = clip_by_norm(problem.local_grads(x), params.clip)  # clip: scalar or (N,)
        return add_noise(g, per_agent(params.sigma * params.clip, x), noise["xi"],
                         sampler=self.sampler)

    noise_field = "sigma"
    models_covered = True
    models_note = ("x^K = W x^{K-1} − α g̃^{K-1}: a post-processing of the released x^{K-1} and "
                   "the K-th noisy gradient, which is accounted")
    released_note = "agent i's x_i^k to its neighbours, k = 0..K (x_i^{k+1} carries g̃_i^k)"

    rounds_per_step = 1  # the messages of a step: x^k (DGD), y^{k,0..R−1} (Muffliato)

    def linear_form(self, network, params):
        """``p^k = W^R p^{k−1} − α_k (clip(∇f(x^k), C) + σCξ^k)``: ``p^k = x^{k+1}`` here (DGD's
        ``x^{k+1} = W x^k − α_k g̃^k``, ``x⁰ = 0``), one contribution of sensitivity ``2C`` per
        agent and step (:class:`~jaxdp.privacy.pairwise.GossipForm`)."""
        from jaxdp.privacy.pairwise import GossipForm

        n = network.n_agents
        alpha, clip, sigma = (np.broadcast_to(np.asarray(v, np.float64), (n,))
                              for v in (params.alpha, params.clip, params.sigma))
        return GossipForm(W=np.asarray(network.dense("W"), np.float64),
                          rounds=self.rounds_per_step, scale=-alpha, noise=sigma * clip,
                          sensitivity=2 * clip, decay=float(params.gamma))

    def account(self, problem, network, params, steps, *, delta):
        """K Gaussian releases of the clipped gradient, Δ = 2C (agent-level, enforced by the clip).

        The message x_i^{k+1} = Σ_j w_ij x_j^k − α g̃_i^k depends on agent i's data only through
        g̃_i^k (x^k is itself released), so adaptive composition over k applies.
        """
        n = network.n_agents
        clip = np.broadcast_to(np.asarray(params.clip, np.float64), (n,))
        sigma = np.broadcast_to(np.asarray(params.sigma, np.float64), (n,))
        events = self.accounting.declare_releases(PrivacyEvents.from_schedule(
            "gaussian", sensitivity=(2 * clip)[:, None], scale=(sigma * clip)[:, None],
            n_agents=n, steps=steps, description="g̃_i^k = clip(∇f_i(x_i^k), C) + σCξ, k < K"),
            problem)
        return self.accounting.report(
            events, problem, network, params, steps, delta=delta,
            methods=("closed_form", "rdp", "pld"),
            relation="replace_agent",
            released=self.released_note,
            assumptions=(Assumption("‖clip(∇f_i(x), C)‖₂ ≤ C, so any two f_i, f_i′ give Δ ≤ 2C",
                                    enforced=True, how="clip_by_norm(·, C)"),))


@dataclasses.dataclass(frozen=True)
class _TwoStep(Algorithm):
    """EXTRA and NIDS: state (x^k, z^k, x^{k−1}, ∇F(x^{k−1})), x⁰ = x0·1, a special first step and
    ``x^{k+1} = prox_{αr}(z^{k+1})`` (the identity without a regularizer, where z = x)."""

    params_type = TwoStepParams

    def init(self, key, problem, network, params):
        del key
        x0 = zeros_like_models(problem, network)
        x0 = x0 + jnp.asarray(params.x0, x0.dtype)
        return TwoStepState(x=x0, z=x0, x_prev=x0, g_prev=jnp.zeros_like(x0))


@dataclasses.dataclass(frozen=True)
class EXTRA(_TwoStep):
    """PG-EXTRA (Shi, Ling, Wu & Yin, IEEE TSP 2015, eq. (4)): ``z¹ = W x⁰ − α∇F(x⁰)``;
    ``z^{k+1} = z^k + W x^k − W̃ x^{k−1} − α(∇F(x^k) − ∇F(x^{k−1}))``, W̃ = (I+W)/2;
    ``x^{k+1} = prox_{αr}(z^{k+1})``. Without a regularizer z = x and this is EXTRA (SIAM J.
    Optim. 2015): ``x¹ = W x⁰ − α∇F(x⁰)`` (3.1), ``x^{k+1} = (I+W) x^k − W̃ x^{k−1} − α(∇F(x^k)
    − ∇F(x^{k−1}))`` (3.2). The message is ``x`` (``network.mix(x, message="x")``).
    """

    name = "extra"
    cites = (
        "Shi, Ling, Wu & Yin, SIAM J. Optim. 2015, eq. (3.1)–(3.2)",
        "PG-EXTRA: Shi, Ling, Wu & Yin, IEEE TSP 2015, eq. (4)",
    )
    provenance = "standard"

    def init(self, key, problem, network, params):
        start = super().init(key, problem, network, params)
        return ExtraState(**start, wx_prev=jnp.zeros_like(start.x))

    def step(self, state, noise, problem, network, params, k):
        """One communication round: ``W x^k`` is kept for the next step's ``W̃ x^k``."""
        del noise
        x, a = state.x, params.alpha
        g = problem.local_grads(x)
        wx = network.mix(x, message="x")
        later = state.z + wx - 0.5 * (state.x_prev + state.wx_prev) - a * (g - state.g_prev)  # (4)
        z = jnp.where(k == 0, wx - a * g, later)  # z¹ = W x⁰ − α∇F(x⁰) at k = 0
        return ExtraState(x=_prox(problem, z, a), z=z, x_prev=x, g_prev=g, wx_prev=wx), {"x": x}


@dataclasses.dataclass(frozen=True)
class NIDS(_TwoStep):
    """NIDS (Li, Shi & Yan, IEEE TSP 2019, Alg. 1): ``z¹ = x⁰ − α∇F(x⁰)``;
    ``z^{k+1} = z^k − x^k + W̃ v^k``, ``v^k = 2x^k − x^{k−1} − α(∇F(x^k) − ∇F(x^{k−1}))``,
    W̃ = (I + W)/2; ``x^{k+1} = prox_{αr}(z^{k+1})``. Without a regularizer z = x and this is
    eq. (9), ``x^{k+1} = W̃ v^k``. The message is ``v`` (``network.mix(v, message="v")``); the
    first step communicates nothing, and the product traced there mixes the public x⁰ (its
    result is discarded), so that a channel's release at k = 0 carries no data.
    """

    name = "nids"
    cites = ("Li, Shi & Yan, IEEE TSP 2019, eq. (9)",)
    provenance = "standard"

    def step(self, state, noise, problem, network, params, k):
        del noise
        x, a, first = state.x, params.alpha, k == 0
        g = problem.local_grads(x)
        v = jnp.where(first, x, 2 * x - state.x_prev - a * (g - state.g_prev))
        mixed = 0.5 * (v + network.mix(v, message="v"))  # W̃ v^k
        z = jnp.where(first, x - a * g, state.z - x + mixed)  # Alg. 1
        return TwoStepState(x=_prox(problem, z, a), z=z, x_prev=x, g_prev=g), {"v": v}


def tracking_start(problem, network) -> TrackingState:
    """Gradient tracking's start: ``x⁰ = 0``, ``y⁰ = g⁰ = ∇F(x⁰)``."""
    x0 = zeros_like_models(problem, network)
    g0 = problem.local_grads(x0)
    return TrackingState(x=x0, y=g0, g=g0)


@dataclasses.dataclass(frozen=True)
class DIGing(Algorithm):
    """DIGing (Nedić, Olshevsky & Shi 2017, eq. (3)): ``x⁺ = W x − α y``;
    ``y⁺ = W y + ∇F(x⁺) − ∇F(x)`` with ``y⁰ = ∇F(x⁰)``. The messages are ``x`` and ``y``, one
    ``mix`` each; α may differ per agent (uncoordinated step sizes: Nedić, Olshevsky, Shi &
    Uribe, ACC 2017, ``x⁺ = W x − diag(α) y``).
    """

    name = "diging"
    cites = ("Nedić, Olshevsky & Shi, SIAM J. Optim. 2017",)
    provenance = "standard"
    params_type = StepParams

    def init(self, key, problem, network, params):
        del key, params
        return tracking_start(problem, network)

    def step(self, state, noise, problem, network, params, k):
        del noise, k
        x_new = network.mix(state.x, message="x") - per_agent(params.alpha, state.y) * state.y
        g_new = problem.local_grads(x_new)
        y_new = network.mix(state.y, message="y") + g_new - state.g
        return TrackingState(x=x_new, y=y_new, g=g_new), {"x": state.x, "y": state.y}


@dataclasses.dataclass(frozen=True)
class ADMM(Algorithm):
    """Edge-based relaxed decentralized ADMM (Bastianello et al. 2021, eq. (12)).

    Local step (inexact, ``local_steps`` gradient steps from φ⁰ = x_i):
    ``φ ← φ − γ(∇f_i(φ) + ρ d_i φ − Σ_{j∈N_i} z_ij)``, ``x_i⁺ = φ``, approximating
    ``argmin_x f_i(x) + (ρ d_i/2)‖x‖² − ⟨x, Σ_j z_ij⟩``.
    Exchange: agent j sends ``m_{j→i} = z_ji − 2ρ x_j⁺`` to each neighbour i (one message per edge);
    ``z_ij⁺ = (1 − a) z_ij − a m_{j→i}``.
    Fixed points are exact: z_ij + z_ji = 2ρ x_j forces consensus and then Σ_i ∇f_i = 0.
    """

    name = "admm"
    cites = ("Bastianello, Carli, Schenato & Todescato, IEEE TCNS 2021, eq. (12)",)
    provenance = "standard"
    params_type = ADMMParams
    local_steps: int = 10

    def init(self, key, problem, network, params):
        del key, params
        x0 = zeros_like_models(problem, network)
        return ADMMState(x=x0, z=network.gather(x0))

    def step(self, state, noise, problem, network, params, k):
        del noise, k
        z_sum = network.scatter_sum(state.z)  # Σ_j z_ij, (N, d)
        rho_deg = params.rho * network.degrees[:, None]
        gamma = per_agent(params.gamma, state.x)

        def local(phi, _):
            return phi - gamma * (problem.local_grads(phi) + rho_deg * phi - z_sum), None

        x_new, _ = jax.lax.scan(local, state.x, None, length=self.local_steps)
        msg = admm_messages(state.z, x_new, params.rho, network)  # m_{j→i} on edge (j→i)
        z_new = relaxed_bridge_update(state.z, msg, params.relax)
        return ADMMState(x=x_new, z=z_new), {"m": msg}


# -- helpers -----------------------------------------------------------------------------------
def _prox(problem, z: AgentArray, step) -> AgentArray:
    """``prox_{step·r}(z)`` per agent; ``z`` itself (no prox call) when the loss has no ℓ1 term,
    where the prox is the identity."""
    return z if problem.loss.l1_key is None else problem.prox(z, step)


def _step_size(params, k, like: Array) -> Array:
    """α_k = α / (k+1)^γ, broadcast per agent."""
    decay = jnp.power(jnp.asarray(k + 1, like.dtype), -jnp.asarray(params.gamma, like.dtype))
    return per_agent(params.alpha, like) * decay


def admm_messages(z: EdgeArray, x: AgentArray, rho, network) -> EdgeArray:
    """``m_{j→i} = z_ji − 2ρ x_j`` for every directed edge e = (j → i), eq. (12)."""
    return z[network.reverse] - 2 * rho * network.gather(x)


def relaxed_bridge_update(z: EdgeArray, msg: EdgeArray, relax) -> EdgeArray:
    """``z_ij ← (1 − a) z_ij − a m_{j→i}``, eq. (12) (LT-ADMM: a = ½, paper 004 (5b))."""
    return (1 - relax) * z - relax * msg


__all__ = [
    "DGD", "DPDGD", "EXTRA", "NIDS", "DIGing", "ADMM",
    "DGDParams", "DPDGDParams", "StepParams", "TwoStepParams", "ADMMParams", "admm_messages",
    "relaxed_bridge_update",
]
