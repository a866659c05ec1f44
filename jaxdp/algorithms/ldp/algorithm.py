r"""Local differential privacy by random local aggregators: Algorithms 1, 2 and 2* of paper 001.

H. Xiao, Y. Ye & S. Devadas, "Local Differential Privacy in Decentralized Optimization", preprint
2019, arXiv 1902.06101. Errata: ``docs/errata.md`` (paper 001).

Every agent releases its new iterate plus Laplace noise Δ of **rate** β_{k+1} per coordinate
(density (β/2)e^{−β|y|}; ``laplace(key)/β``), β_k = β_0 r^k (the experiments: 1.02^k, so the noise
shrinks). The mixing weights are fresh private U(0,1) draws per (agent, step, coordinate), so each
released coordinate is Laplace noise around a mean that is *uniform on an interval* of length ω —
the source of the amplification γ < 1 of Thm 2.3 (``ldp/privacy.py``). Stacked form (X, Λ ``(N, d)``;
P the neighbour average, L the graph Laplacian, ∇F(X) the rows ∇f_i(x_i);):

**Algorithm 1** (``LDPADMM``, modified private ADMM with first-order approximation), θ ~ U(0,1):

.. math::

   X^{k+1} = \Theta \odot X^k + (1-\Theta) \odot P X^k + D^{-1}(\Lambda^k - \nabla F(X^k))
             + E^{k+1}                                                          \quad (6)

   \Lambda^{k+1} = \Lambda^k - \zeta L X^{k+1}          \quad \text{(Alg. 1 l.5, corrected)}

θ = Γ_i/D_i, so Γ_i = θD_i and |N_i|ρ̄_i = (1 − θ)D_i; on K_N, P X is Σ_{j≠i}x_j/(N−1) as printed,
on another graph |N_i| replaces N − 1 (an inference: the paper states K_N only).
``primal="exact"`` replaces the first-order step by the exact argmin (12) (randomized exact ADMM,
Thm 3.1, Fig. D): ∇f_i(x) + D_i x = λ_i + D_i·(Term A), solved by ``newton_steps`` Newton steps.

**Algorithm 2** (``LDPDGD``, modified private DGD; K_N as printed), w ~ U(0,1), (a, b) the most
distant pair in ℓ1, x̄ the average:

.. math::

   x_i^{k+1} = \bar x^k + \tfrac{2w-1}{N} \odot (x_a^k - x_b^k) - \eta_{k+1} \nabla f_i(\bar x^k)
               + \Delta_i^{k+1}                                                 \quad (7)

(eq. (7) with its typo fixed: the second term is x_{î_k}, not x_{i_k}). ``scope="complete"``
(default) is the printed algorithm and refuses any other graph. ``scope="local"`` is our variant
for other graphs (the paper runs Alg. 2 on sparse graphs in Fig. D without saying how):
x̄ becomes agent i's mixed point (W X)_i, the pair is the most distant one in i's closed
neighbourhood, and the pair's weight c = W_ia + W_ib is split at random,
x_i^{k+1} = (WX)_i + (2w − 1)(c/2)(x_a − x_b) − η∇f_i((WX)_i) + Δ_i. With Metropolis weights on
K_N (W = 11ᵀ/N) it is exactly (7) (tested); with w = ½ it is DGD with the gradient at the mixed
point.

**Algorithm 2*** (``LDPDGDStar``, App. E (28)), w ~ U(0,1) per coordinate, over Ñ_i = N_i ∪ {i}
(``closed=True``, the tilde's reading) or N_i:

.. math::

   x_i^{k+1}[l] = w \min_{j\in\tilde N_i} x_j^k[l] + (1-w) \max_{j\in\tilde N_i} x_j^k[l]
                  - \eta_{k+1} \nabla f_i(x_i^k)[l] + \Delta_i^{k+1}[l]         \quad (28)

**Privacy bookkeeping**. Each state carries, per agent, the realized loss
Σ_l Θ(x^{k+1}[l] − a[l]; ω[l], β_{k+1}, T) (Thm 2.2, (10)) and the expected loss Σ_l γ·β_{k+1}T
(Thm 2.3 with the realized ω), summed over steps and coordinates: Alg. 1 a = min(x_i, (PX)_i) +
D_i^{-1}(λ_i − ∇f_i), ω = |x_i − (PX)_i|, T = B_∞/D_i; Alg. 2 ω = c|x_a − x_b| around the centre,
T = η_{k+1}B_∞; Alg. 2* a = min − η∇f_i, ω = max − min, T = η_{k+1}B_∞. ``privacy()`` gives the
guarantee for the released d-vector (relation ``"replace_agent"``, B_∞ assumed): d Laplace
coordinates of shift ≤ α_{k+1}B_∞ and scale 1/β_{k+1} per release (α = 1/D_i or η_{k+1}), by PLD
and pure-DP composition; every release's mean is a function of the released iterates except the
fresh gradient term, so no hidden state carries data. The paper's per-coordinate line Σ α β B_∞
(Fig. 2(b)) is the ``PAPER_PRINTED`` curve — not a bound for the vector. The models are the
released iterates (covered).

**Erratum (Alg. 1 dual sign).** The paper prints λ_i ← λ_i − ζΣ_{j≠i}(x_j − x_i),
i.e. Λ ← Λ + ζLX; with +D^{-1}λ in (6) this is positive feedback and diverges (for N = 2, f = 0,
θ = ½ the disagreement grows by 1 + 2ζ/D per step). ``variant="paper"`` implements it;
the default ``variant="corrected"`` uses Λ ← Λ − ζLX, the node form of (13) with edge-incidence
A_i, which converges linearly (Thm 3.2). Both are tested.

Unspecified in the paper and chosen here (flagged): θ, w ~ U(0,1) (implied by Thm 2.3 and App. E's
"expectation of the penalty terms"); x_i^0 ~ N(0, ``x0_scale``² I) ("randomly"); B_∞ = 0.01 as the
paper's 1/b_i (with ±1 labels and features in [0, 1] the rigorous bound is 2/b_i).
Shapes: N agents, d model dimension.
"""
from __future__ import annotations

import dataclasses

import chex
import jax
import jax.numpy as jnp
import numpy as np

from jaxdp._precision import matmul
from jaxdp._types import AgentArray, Array, per_agent
from jaxdp.core import Algorithm, param
from jaxdp.algorithms.ldp.privacy import (
    expected_loss,
    geometric_schedule,
    host_schedule,
    theta_loss,
    worst_case_report,
)
from jaxdp.privacy import PrivacyReport, add_noise, noise_draws
from jaxdp.privacy.samplers import gaussian

VARIANTS = ("corrected", "paper")
PRIMALS = ("linearized", "exact")
SCOPES = ("complete", "local")


# -- Params -------------------------------------------------------------------------------------
@chex.dataclass(frozen=True)
class LDPADMMParams:
    D: float = param(10.0, domain="positive",
                     doc="D_i = |N_i|ρ̄_i + Γ_i, the private penalty sum, Alg. 1")
    zeta: float = param(0.5, domain="positive", per_agent=False, doc="ζ, dual step, Alg. 1 l.5")
    beta: float = param(1.0, domain="positive", per_agent=False,
                        doc="β_0: Laplace rate β_k = β_0·r^k of Δ^k, (6)")
    beta_growth: float = param(1.02, domain="positive", per_agent=False, doc="r, App. E")
    sens: float = param(0.01, domain="nonnegative",
                        doc="B_∞, local ∞-norm gradient sensitivity (Lemma 2.1; 1/b_i, App. E)")
    x0_scale: float = param(1.0, domain="nonnegative", per_agent=False,
                            doc='x_i^0 ~ N(0, x0_scale² I) ("randomly", unspecified)')


@chex.dataclass(frozen=True)
class LDPDGDParams:
    eta: float = param(1.0, domain="positive", per_agent=False,
                       doc="η_0: step η_k = η_0·q^k, (7)/(28)")
    eta_decay: float = param(0.93, domain="positive", per_agent=False,
                             doc="q (App. E: 0.93 Alg. 2*, 0.95 Alg. 2, 0.9 [45])")
    beta: float = param(1.0, domain="positive", per_agent=False,
                        doc="β_0: Laplace rate β_k = β_0·r^k")
    beta_growth: float = param(1.02, domain="positive", per_agent=False, doc="r")
    sens: float = param(0.01, domain="nonnegative", per_agent=False, doc="B_∞ (Lemma 2.1)")
    x0_scale: float = param(1.0, domain="nonnegative", per_agent=False,
                            doc="x_i^0 ~ N(0, x0_scale² I)")


# -- States -------------------------------------------------------------------------------------
@chex.dataclass(frozen=True)
class LDPADMMState:
    x: AgentArray  # (N, d) released iterates x_i^k
    lam: AgentArray  # (N, d) duals λ_i^k
    eps_real: Array  # (N,) realized loss Σ_k Σ_l Θ, Thm 2.2
    eps_expected: Array  # (N,) expected loss Σ_k Σ_l γ β T, Thm 2.3


@chex.dataclass(frozen=True)
class LDPDGDState:
    x: AgentArray  # (N, d) released iterates x_i^k
    eps_real: Array  # (N,)
    eps_expected: Array  # (N,)


# -- shared bases -------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class _LDPFamily(Algorithm):
    """What every algorithm of the family shares: the per-step draws and B_∞, x0_scale ≥ 0.

    ``draws_weights`` says whether a step draws the private U(0,1) aggregator weights ``w``;
    subclasses have a ``private`` field (draw the standard Laplace ``lap``).
    """

    # jaxdp.privacy.contract.NOISE_OWNERS: each agent's releases carry its own fresh noise only
    noise_owner = "sender"
    draws_weights = True
    models_covered = True
    models_note = "the models are the iterates x_i^K, the last released messages"

    def noise(self, key, state, params, k):
        del params, k
        return _draws(key, state.x, weights=self.draws_weights, laplace_noise=self.private,
                      sampler=self.sampler)


@dataclasses.dataclass(frozen=True)
class _ADMMFamily(_LDPFamily):
    """Alg. 1 and the ADMM baselines: (x, λ) state, x^0 random, λ^0 = 0."""

    def init(self, key, problem, network, params):
        x0 = _random_start(key, problem, network, params)
        zeros = jnp.zeros(x0.shape[:1], x0.dtype)
        return LDPADMMState(x=x0, lam=jnp.zeros_like(x0), eps_real=zeros, eps_expected=zeros)


@dataclasses.dataclass(frozen=True)
class _DGDFamily(_LDPFamily):
    """Alg. 2, Alg. 2* and [45]: x state, x^0 random, geometric η_k and β_k."""

    params_type = LDPDGDParams

    def init(self, key, problem, network, params):
        x0 = _random_start(key, problem, network, params)
        zeros = jnp.zeros(x0.shape[:1], x0.dtype)
        return LDPDGDState(x=x0, eps_real=zeros, eps_expected=zeros)


# -- Algorithm 1 --------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class LDPADMM(_ADMMFamily):
    """Algorithm 1: linearized ADMM with a random per-coordinate aggregator and Laplace noise.

    Static configuration:
      variant: ``"corrected"`` (default, Λ ← Λ − ζLX) or ``"paper"`` (as printed, diverges).
      primal: ``"linearized"`` (Alg. 1, (6)) or ``"exact"`` (the argmin (12), Thm 3.1; non-private
        only: the paper analyses noise for the first-order form).
      randomize: draw θ ~ U(0,1) (Alg. 1); ``False`` fixes θ = ½ (Γ = D/2, ρ = D/(2|N_i|), the
        conventional fixed-parameter ADMM of Fig. D).
      private: add the Laplace noise (``False``: the non-private runs of Fig. D, Thm 3.1/3.2).
      newton_steps: Newton steps of the exact primal.
    """

    name = "ldp_admm"
    cites = ("Xiao, Ye & Devadas 2019 (LDP, paper 001), Algorithm 1",)
    provenance = "paper"
    params_type = LDPADMMParams
    variant: str = "corrected"
    primal: str = "linearized"
    randomize: bool = True
    private: bool = True
    newton_steps: int = 8
    sampler: str = "lattice"  # "lattice" (private as floats) or "float" (report: inf)

    @property
    def draws_weights(self):
        return self.randomize

    def step(self, state, noise, problem, network, params, k):
        x, lam = state.x, state.lam
        D = per_agent(params.D, x)
        px = neighbour_average(network, x)  # Σ_{j∈N_i} x_j / |N_i|
        theta = noise["w"] if self.randomize else 0.5  # Γ_i^{k+1}/D_i
        agg = theta * x + (1 - theta) * px  # Term (A) of (6)
        if self.primal == "linearized":
            mean = agg + (lam - problem.local_grads(x)) / D  # (6) without Δ
        else:
            mean = exact_primal(problem, lam + D * agg, D, x, self.newton_steps)  # (12)
        beta = geometric_schedule(params.beta, params.beta_growth, k + 1, x)  # β_{k+1}
        x_new = _noisy(self, mean, beta, noise) if self.private else mean  # (6)
        sign = 1.0 if self.variant == "paper" else -1.0
        lam_new = lam + sign * params.zeta * network.apply_L(x_new)  # Alg. 1 l.5 (corrected: −)
        eps_real, eps_exp = state.eps_real, state.eps_expected
        if self.private:  # Thm 2.2: τ = [min, max](x_i, (Px)_i) + D^{-1}(λ − ∇f), or {mean}
            low, omega = ((jnp.minimum(x, px) + (mean - agg), jnp.abs(x - px)) if self.randomize
                          else (mean, jnp.zeros_like(x)))
            eps_real, eps_exp = _account(state, x_new, low, omega, beta, params.sens / D)
        return (LDPADMMState(x=x_new, lam=lam_new, eps_real=eps_real, eps_expected=eps_exp),
                {"x": x_new})

    def account(self, problem, network, params, steps, *, delta):
        """x_i^{k+1} (6): mean = aggregate of released iterates + D_i^{-1}(λ_i − ∇f_i(x_i^k)),
        λ a function of released iterates: per coordinate shift ≤ B_∞/D_i, fresh each step."""
        if not self.private:
            return None
        alpha = np.broadcast_to(1.0 / np.asarray(params.D, np.float64), (network.n_agents,))
        return worst_case_report(np.repeat(alpha[:, None], steps, axis=1), params, problem.dim,
                                 "agent i's x_i^{k+1} (6) to its neighbours, k = 0..K−1 "
                                 "(Laplace rate β_{k+1}, shift ≤ B_∞/D_i per coordinate)",
                                 delta=delta, alg=self, problem=problem, network=network)

    def requirements(self) -> frozenset[str]:
        """The exact primal (12) takes Newton steps on the loss's Hessian."""
        return super().requirements() | ({"hessian"} if self.primal == "exact" else set())

    def validate(self, params, problem, network):
        _check_choice("variant", self.variant, VARIANTS)
        _check_choice("primal", self.primal, PRIMALS)
        if self.primal == "exact" and self.private:
            raise ValueError("LDPADMM(primal='exact') is non-private only (the paper analyses "
                             "noise for the first-order form); pass private=False")
        super().validate(params, problem, network)


# -- Algorithm 2 --------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class LDPDGD(_DGDFamily):
    """Algorithm 2: DGD at the average with a random split of the most distant pair's weight.

    Static configuration:
      scope: ``"complete"`` (default, as printed: K_N only) or ``"local"`` (closed neighbourhoods
        with the network's W; equal to ``"complete"`` on K_N with Metropolis weights).
      randomize: draw w ~ U(0,1); ``False`` fixes w = ½ (the conventional method of Fig. D).
      private: add the Laplace noise.
    """

    name = "ldp_dgd"
    cites = ("Xiao, Ye & Devadas 2019 (LDP, paper 001), Algorithm 2",)
    provenance = "paper"
    scope: str = "complete"
    randomize: bool = True
    private: bool = True
    sampler: str = "lattice"  # "lattice" (private as floats) or "float" (report: inf)

    @property
    def draws_weights(self):
        return self.randomize

    def default_params(self):
        return LDPDGDParams(eta_decay=0.95)  # App. E, Fig. D

    def step(self, state, noise, problem, network, params, k):
        x = state.x
        centre, c, diff = (_global_pair(x) if self.scope == "complete"
                           else _local_pair(x, network))  # x̄, weight of (a, b), x_a − x_b
        w = noise["w"] if self.randomize else 0.5
        eta = geometric_schedule(params.eta, params.eta_decay, k + 1, x)  # η_{k+1}
        drift = eta * problem.local_grads(centre)  # η ∇f_i(x̄^k)
        mean = centre + (2 * w - 1) * (0.5 * c) * diff - drift  # (7)
        omega = c * jnp.abs(diff) if self.randomize else jnp.zeros_like(x)  # interval of the mean
        return _release(self, state, noise, params, k, mean, centre - 0.5 * omega - drift,
                        omega, eta)

    def account(self, problem, network, params, steps, *, delta):
        return _dgd_privacy(self, params, problem, network, steps, "Alg. 2", delta)

    def costs_per_step(self, problem, network, params) -> dict[str, float]:
        """With ``scope="complete"`` every agent reads every x_j^k (x̄ and the farthest pair of
        (7)) without a network product: one round of 2E messages added to the counted costs."""
        costs = super().costs_per_step(problem, network, params)
        if self.scope != "complete":
            return costs
        sent = 2 * network.n_edges
        bits = sent * problem.dim * jnp.dtype(problem.features.dtype).itemsize * 8
        return {**costs, "rounds": costs["rounds"] + 1, "messages": costs["messages"] + sent,
                "bits": costs["bits"] + bits}

    def validate(self, params, problem, network):
        _check_choice("scope", self.scope, SCOPES)
        n, e = network.n_agents, network.n_edges
        if self.scope == "complete" and e != n * (n - 1) // 2:
            raise ValueError(
                f"LDPDGD(scope='complete') is Algorithm 2 as printed, for the complete graph K_N; "
                f"got a graph with {e} of the {n * (n - 1) // 2} edges of K_{n}. Use "
                "scope='local' for the closed-neighbourhood variant")
        super().validate(params, problem, network)


# -- Algorithm 2* -------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class LDPDGDStar(_DGDFamily):
    """Algorithm 2* (App. E, (28)): each coordinate uniform between the neighbourhood min and max.

    Static configuration:
      closed: Ñ_i = N_i ∪ {i} (default) or N_i.
      private: add the Laplace noise.
    """

    name = "ldp_dgd_star"
    cites = ("Xiao, Ye & Devadas 2019 (LDP, paper 001), Algorithm 2*",)
    provenance = "paper"
    closed: bool = True
    private: bool = True
    sampler: str = "lattice"  # "lattice" (private as floats) or "float" (report: inf)

    def step(self, state, noise, problem, network, params, k):
        x = state.x
        low, high = neighbourhood_range(network, x, self.closed)  # α_min, α_max of (28)
        eta = geometric_schedule(params.eta, params.eta_decay, k + 1, x)  # η_{k+1}
        drift = eta * problem.local_grads(x)  # η ∇f_i(x_i^k), own iterate
        mean = noise["w"] * low + (1 - noise["w"]) * high - drift  # (28)
        return _release(self, state, noise, params, k, mean, low - drift, high - low, eta)

    def account(self, problem, network, params, steps, *, delta):
        return _dgd_privacy(self, params, problem, network, steps, "Alg. 2*", delta)


# -- shared pieces (also used by ldp_baselines) -------------------------------------------------
def neighbour_average(network, x: AgentArray) -> AgentArray:
    """(P X)_i = Σ_{j∈N_i} x_j / |N_i| (the "Σ_{j≠i} x_j/(N−1)" of (6) on K_N); ``(N, d)``."""
    return network.apply_A(x) / network.degrees[:, None]


def neighbourhood_range(network, x: AgentArray, closed: bool) -> tuple[Array, Array]:
    """Per-coordinate min and max of x_j over j ∈ N_i (∪ {i} if ``closed``); two ``(N, d)``."""
    sent = network.gather(x)
    n = network.n_agents
    low = jax.ops.segment_min(sent, network.receivers, num_segments=n)
    high = jax.ops.segment_max(sent, network.receivers, num_segments=n)
    if closed:
        low, high = jnp.minimum(low, x), jnp.maximum(high, x)
    return low, high


def local_hessians(problem, x: AgentArray) -> Array:
    """∇²f_i(x_i) for every agent, ``(N, d, d)``: Zᵀ diag(mask·ℓ''/m_i) Z + diag(∇²R)."""
    loss = problem.loss

    def one(xi, Z, y, mask):
        w = mask / jnp.sum(mask) * loss.sample_curvatures(matmul(Z, xi), y)
        return matmul(Z.T * w[None, :], Z) + jnp.diag(loss.penalty_curvatures(xi, problem.reg))

    return jax.vmap(one)(x, problem.features, problem.labels, problem.mask)


def exact_primal(problem, rhs: AgentArray, D, x0: AgentArray, steps: int) -> AgentArray:
    """Solve ∇f_i(x) + D_i x = rhs_i for every agent by ``steps`` Newton steps from ``x0``.

    The first-order condition of argmin f_i(x) − λ_iᵀx + ½‖x − x_i‖²_Γ + ½Σ_j‖x − x_j‖²_ρ̄ with
    |N_i|ρ̄ + Γ = D_i I, rhs = λ_i + Γx_i + ρ̄Σ_j x_j (the exact step (12)). ``D`` is ``(N, 1)`` or
    a scalar.
    """
    n, d = x0.shape
    D_diag = jnp.broadcast_to(D, (n, 1))[:, :, None] * jnp.eye(d, dtype=x0.dtype)[None]

    def newton(x, _):
        residual = problem.local_grads(x) + D * x - rhs
        hess = local_hessians(problem, x) + D_diag  # ∇²f_i + D_i I
        return x - jnp.linalg.solve(hess, residual[..., None])[..., 0], None

    x, _ = jax.lax.scan(newton, x0, None, length=steps)
    return x


def _draws(key, x, *, weights: bool, laplace_noise: bool, sampler: str = "lattice") -> dict:
    """U(0,1) aggregator weights ``w`` and standard Laplace ``lap`` (of ``sampler``: lattice
    draws K/R or floats), each ``(N, d)``."""
    out = {}
    if weights:
        out["w"] = jax.random.uniform(jax.random.fold_in(key, 0), x.shape, x.dtype)
    if laplace_noise:
        out["lap"] = noise_draws(jax.random.fold_in(key, 1), x.shape, x.dtype, law="laplace",
                                 sampler=sampler)
    return out


def _noisy(alg, mean, beta, noise):
    """The released ``mean + Δ``, Δ of rate β (scale 1/β): ``mean + lap/β`` (float sampler) or
    the lattice release ``γ(round(mean/γ) + K)``, ``γ = 1/(βR)`` (:func:`~jaxdp.privacy.add_noise`)."""
    return add_noise(mean, 1.0 / beta, noise["lap"], law="laplace", sampler=alg.sampler)


def _random_start(key, problem, network, params) -> AgentArray:
    """x_i^0 ~ N(0, x0_scale² I): "initialize randomly" (the law is unspecified)."""
    dtype = problem.features.dtype
    return params.x0_scale * gaussian(key, (network.n_agents, problem.dim), dtype)


def _account(state, released, low, omega, beta, T) -> tuple[Array, Array]:
    """Add this step's realized Σ_l Θ (10) and expected Σ_l γβT (11) to the running totals."""
    real = jnp.sum(theta_loss(released - low, omega, beta, T), axis=1)
    expected = jnp.sum(expected_loss(omega, beta, T + 0.0 * omega), axis=1)
    return state.eps_real + real, state.eps_expected + expected


def _release(alg, state, noise, params, k, mean, low, omega, eta):
    """x^{k+1} = mean + Δ (rate β_{k+1}) and the privacy of the DGD family (T = η_{k+1}B_∞)."""
    x = state.x
    beta = geometric_schedule(params.beta, params.beta_growth, k + 1, x)  # β_{k+1}
    if not alg.private:
        return state.replace(x=mean), {"x": mean}
    x_new = _noisy(alg, mean, beta, noise)  # + Δ_i^{k+1}
    eps_real, eps_exp = _account(state, x_new, low, omega, beta, eta * params.sens)
    return LDPDGDState(x=x_new, eps_real=eps_real, eps_expected=eps_exp), {"x": x_new}


def _global_pair(x: AgentArray) -> tuple[AgentArray, Array, AgentArray]:
    """K_N, (7): x̄ for every agent, the pair weight 2/N, and x_a − x_b of the most distant pair."""
    n = x.shape[0]
    dist = jnp.sum(jnp.abs(x[:, None, :] - x[None, :, :]), axis=2)  # ‖x_j1 − x_j2‖_1
    a, b = jnp.divmod(jnp.argmax(dist), n)  # (i_k, î_k) = argmax, first in row-major order
    centre = jnp.broadcast_to(jnp.mean(x, axis=0), x.shape)
    return centre, jnp.full((n, 1), 2.0 / n, x.dtype), jnp.broadcast_to(x[a] - x[b], x.shape)


def _local_pair(x: AgentArray, network) -> tuple[AgentArray, Array, AgentArray]:
    """Local variant: (WX)_i, c_i = W_ia + W_ib and x_a − x_b for the most distant pair in Ñ_i."""
    n = x.shape[0]
    dist = jnp.sum(jnp.abs(x[:, None, :] - x[None, :, :]), axis=2)
    edge = (network.receivers, network.senders)  # both backends: no stored (N, N) matrix needed
    closed = jnp.eye(n, dtype=bool).at[edge].set(True)  # j ∈ N_i ∪ {i}; O(N³) pair scores
    score = jnp.where(closed[:, :, None] & closed[:, None, :], dist[None], -1.0)
    a, b = jnp.divmod(jnp.argmax(score.reshape(n, n * n), axis=1), n)
    W = jnp.diag(network.w_diag).at[edge].add(network.w_edge)
    rows = jnp.arange(n)
    c = (W[rows, a] + W[rows, b])[:, None]
    return network.mix(x), c, x[a] - x[b]


def _dgd_privacy(alg, params, problem, network, steps, what, delta) -> PrivacyReport | None:
    """The DGD family: the mean of x_i^{k+1} is built from released iterates and −η_{k+1}∇f_i at
    a released (or public mixed) point, so each coordinate shifts by ≤ η_{k+1}B_∞, fresh."""
    if not alg.private:
        return None
    eta = host_schedule(params.eta, params.eta_decay, steps)  # η_{k+1}
    alpha = np.repeat(eta[None, :], network.n_agents, axis=0)
    return worst_case_report(alpha, params, problem.dim,
                             f"{what}: agent i's x_i^{{k+1}} to its neighbours, k = 0..K−1 "
                             "(Laplace rate β_{k+1}, shift ≤ η_{k+1}B_∞ per coordinate)",
                             delta=delta, alg=alg, problem=problem, network=network)


def _check_choice(field: str, value: str, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise ValueError(f"{field} must be one of {allowed}; got {value!r}")


__all__ = [
    "LDPADMM", "LDPDGD", "LDPDGDStar", "LDPADMMParams", "LDPDGDParams", "LDPADMMState",
    "LDPDGDState", "exact_primal", "local_hessians", "neighbour_average",
    "neighbourhood_range",
]
