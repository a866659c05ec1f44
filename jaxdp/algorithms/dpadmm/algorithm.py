r"""DP-ADMM: consensus ADMM with a central trainer, non-private, naive private and DP-ADMM.

This module holds the family's shared star skeleton and DP-ADMM (Algorithm 3); Algorithms 1 and 2
(the paper's baselines, with the exact local solve) are in :mod:`jaxdp.algorithms.dpadmm.baselines`.

Huang, Hu, Chan-Tin & Gong, "DP-ADMM: ADMM-based distributed learning with differential privacy",
2018, arXiv:1808.10101 (the later IEEE TIFS version may differ; we follow the arXiv text).
Errata: ``docs/errata.md`` (section "Paper 002").

Problem (1): ``min Σ_i f_i(w_i)`` s.t. ``w_i = w``, with ``f_i(w) = (1/m_i) Σ_j ℓ(a_ij, b_ij, w) +
(λ/N) R(w)``: a :class:`~jaxdp.problems.Problem` with loss ``Logistic`` and ``reg={"lam": λ/N}``
(ℓ2, R = ½‖·‖²) or ``L1Logistic`` and ``reg={"lam": 0, "l1": λ/N}`` (ℓ1, R = ‖·‖₁). Augmented
Lagrangian (minus sign on the dual): ``L_ρ = Σ_i f_i(w_i) − ⟨γ_i, w_i − w⟩ + ρ/2 ‖w_i − w‖²``.

Stacked updates; rows are the N providers, W̃ and Γ are ``(N, d)``, ``P = 11ᵀ/N``:

* **DP-ADMM** (Algorithm 3), with ``c_i = ρ + 1/η_i^{k+1}`` and ``f_i'`` the gradient of the smooth
  part plus ``(λ/N)·sgn`` for ℓ1 (``sgn(0) = 0``); (3a) is the closed form of (2)::

      W^{k+1}    = diag(c)⁻¹ (−F'(W̃^k) + Γ^k + ρ 1w^kᵀ + diag(1/η) W̃^k)    (3a)
      W̃^{k+1}   = W^{k+1} + diag(σ_{k+1}) Ξ^{k+1},  Ξ ~ N(0, I)            (3b)
      1w^{k+1}ᵀ  = P (W̃^{k+1} − Γ^k / ρ)                                    (3c)
      Γ^{k+1}    = Γ^k − ρ (W̃^{k+1} − 1w^{k+1}ᵀ)                            (3d)

  Step sizes: ℓ1 (Thm 3) ``1/η = (S1 + (λ/N)√d) √(2(k+1)) / D_w``; ℓ2 (Thm 4) ``1/η = S3 + (λ/N)S4
  + 2 S1 √(4(k+1) ln(1.25/δ)) / (m_i ε D_w)`` (S4 = 1: ``lam`` weighs ½‖·‖²). Noise (Thm 1):
  ``σ_{i,k+1} = Δ_{i,k+1} · √(2 ln(1.25/δ))/ε`` with the sensitivity ``Δ = 2 S1 / (m_i c_i)``
  (Lemma 1), so σ/Δ is the same at every step (tested).
* **Algorithm 1** (non-private): row i of W^{k+1} is ``argmin_x f_i(x) − ⟨γ_i^k, x⟩ + ρ/2 ‖x −
  w^k‖²`` (l.4), then (3c), (3d) with W̃ = W.
* **Records** (both private algorithms): the step uses each record projected onto the declared
  ball ``‖a‖₂ ≤ S1``, ``|y| ≤ 1`` (``enforce_bound=True``, the default): Lemma 1's S1 then holds
  for any data; the paper normalises its rows (Sec. VI), where the projection is the identity.
* **Algorithm 2** (naive private): Algorithm 1's solve, then ``W̃ = W + σ Ξ`` with a constant σ_i
  (l.5), and (3c), (3d) on the noisy W̃ (l.7, l.9).

The exact local solve of Algorithms 1 and 2 (Newton / proximal gradient, stated tolerance,
implicit differentiation) is documented in :mod:`jaxdp.algorithms.dpadmm.baselines`.

**Star topology through the engine.** The paper's trainer computes ``w^{k+1} = (1/N) Σ_i (w̃_i^{k+1}
− γ_i^k/ρ)`` and broadcasts it. On the complete graph K_N with Metropolis (or max-degree) weights
``W = 11ᵀ/N`` exactly, so row i of ``network.mix(W̃ − Γ/ρ)`` *is* the trainer's w: the state keeps
the broadcast as its N received copies (equal rows), and the trainer needs no data and no row in
the Problem (a ``make_network("star", N+1)`` hub would be an agent with data and a non-averaging W).
``validate`` refuses any network whose W is not 11ᵀ/N; the per-node test reference computes the
trainer's sum explicitly and matches the engine to 1e-10. Summing (3d) with (3c) gives
``Σ_i γ_i^{k+1} = 0`` (eq. (24)), so after step 0 the broadcast is the plain mean of the W̃ rows.

Variants and errata (``docs/errata.md``):

* Algorithm 3 line 6 (and the ℓ1 block of Sec. VI-A) print ``w̃^{k+1} ← w̃^{k+1} + ξ``, undefined
  as written; (3b) and the ℓ2 block have ``w̃^{k+1} = w^{k+1} + ξ``, implemented here (no variant:
  the printed line has no meaning to implement).
* Algorithm 2's sensitivity: ``variant="paper"`` uses the printed ``Δ = 2 S1 N/(m_i λ)``;
  ``"corrected"`` (default) the subproblem's (ρ + λ/N)-strong convexity, 589× smaller at ρ = 1,
  λ/N = 0.0017 (:mod:`~jaxdp.algorithms.dpadmm.baselines`).
* Initialization is not given; zero (inferred from the proofs, which start from w̃⁰ = 0).

Privacy (per provider, one record replaced): each iteration releases ``w̃_i^{k+1}`` through a
Gaussian mechanism with ``σ/Δ = √(2 ln(1.25/δ))/ε`` (Thm 1, ε ≤ 1; Params' δ only sets the noise).
Everything ``w_i^{k+1}`` depends on besides provider i's data (w̃_i^k, γ_i^k, w^k) is a function of
the released w̃, so the releases compose adaptively; the first release is taken at the public
``w̃⁰ = 0``, where the logistic record gradient has norm ≤ S1/2, so its sensitivity is Δ/2.
``privacy(..., delta)`` gives the guarantee (the least of zCDP, RDP, PLD at the caller's δ), with
the paper's moments accountant (Thm 2) as the ``"paper (as printed)"`` curve
(:mod:`jaxdp.algorithms.dpadmm.privacy`). Shapes: N providers, d features, m_i rows of provider i.
"""
from __future__ import annotations

import dataclasses
from typing import ClassVar

import chex
import jax.numpy as jnp
import numpy as np

from jaxdp._types import AgentArray, per_agent
from jaxdp.core import Algorithm, param, zeros_like_models
from jaxdp.network import check_averaging
from jaxdp.algorithms.dpadmm.privacy import (
    check_noise_params,
    check_private,
    noise_multiplier,
    project_records,
    release_ratios,
    release_report,
)
from jaxdp.privacy import add_noise, noise_draws
from jaxdp.problems import from_arrays, solve_reference


# -- Params and State ---------------------------------------------------------------------------
@chex.dataclass(frozen=True)
class DPADMMParams:
    rho: float = param(1.0, domain="positive", doc="ρ, penalty of (2) (Sec. VI: 1)")
    eps: float = param(0.05, domain="fraction", doc="ε, per-iteration privacy (Thm 1)")
    delta: float = param(1e-3, domain="fraction",
                         doc="δ of Thm 1, sets the noise only (report: privacy(delta=))")
    S1: float = param(1.0, domain="positive",
                      doc="S1 ≥ ‖ℓ'‖ per sample: each record is projected onto ‖a‖ ≤ S1 "
                          "(enforce_bound; the identity on Sec. VI's normalized rows)")
    S3: float = param(0.25, domain="nonnegative", doc="S3 ≥ ‖∇²ℓ‖ (Thm 4; Sec. VI-B: 1/4)")
    D_w: float = param(1.0, domain="positive",
                       doc="D_w ≈ ‖w*‖ from pre-training rows (Table II; estimate_dw)")


@chex.dataclass(frozen=True)
class StarADMMState:
    w_tilde: AgentArray  # (N, d) w̃_i^k, the released local primal (w_i^k for Algorithm 1)
    gamma: AgentArray  # (N, d) γ_i^k, local duals
    w: AgentArray  # (N, d) w^k, the trainer's broadcast as received by each provider (equal rows)


# -- Algorithms --------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class StarADMM(Algorithm):
    """The family's skeleton: each provider's release, the trainer's average (3c), the duals (3d).

    Subclasses implement ``_release`` (W̃^{k+1}, (N, d)) and set ``private`` when they draw
    Gaussian noise ``ξ`` (one standard normal per provider and coordinate, ``{"xi": (N, d)}``);
    a private subclass has a ``sampler`` field (``"lattice"``, the default: the release is
    ``γ(round(w/γ) + K)``, K discrete Gaussian, γ = σ/R, private as floats; ``"float"``:
    ``w + σξ`` in floating point, whose report's guarantee is inf with the ideal curves kept).
    """

    private: ClassVar[bool] = False
    server_average: ClassVar[bool] = True

    def init(self, key, problem, network, params):
        del key, params
        zeros = zeros_like_models(problem, network)  # Alg. 3 l.1: zero (not given in the paper)
        return StarADMMState(w_tilde=zeros, gamma=zeros, w=zeros)

    def noise(self, key, state, params, k):
        del params, k
        if not self.private:
            return {}
        return {"xi": noise_draws(key, state.w_tilde.shape, state.w_tilde.dtype,
                                  sampler=self.sampler)}  # (3b), Alg. 2 l.5

    def step(self, state, noise, problem, network, params, k):
        rho = per_agent(params.rho, state.gamma)
        w_tilde = self._release(state, noise, problem, params, k)  # (3a)-(3b); Alg. 1 l.4
        w = network.mix(w_tilde - state.gamma / rho)  # (3c): the trainer's average, W = 11ᵀ/N
        gamma = state.gamma - rho * (w_tilde - w)  # (3d)
        messages = {"w_tilde": w_tilde, "gamma": state.gamma, "w": w}  # providers → trainer → all
        return StarADMMState(w_tilde=w_tilde, gamma=gamma, w=w), messages

    def models(self, state):
        return state.w_tilde

    def validate(self, params, problem, network):
        super().validate(params, problem, network)
        check_averaging(network, self.name)


@dataclasses.dataclass(frozen=True)
class DPADMM(StarADMM):
    """Algorithm 3: linearized local step at the previous noisy iterate, time-varying σ and η.

    Static ``enforce_bound`` (default ``True``): the step uses every record projected onto the
    declared ball ‖a‖₂ ≤ S1, |y| ≤ 1 (:func:`~jaxdp.algorithms.dpadmm.privacy.project_records`),
    so Lemma 1's S1 holds for any data and the report is finite; on the paper's normalised rows
    (Sec. VI: ‖a‖ ≤ 1, y = ±1) the projection is the identity and the step is Algorithm 3's.
    ``False``: the printed step on the raw records, refused (``validate``) or ``inf`` (report)
    where a record exceeds S1.
    """

    # jaxdp.privacy.contract.NOISE_OWNERS: each agent's releases carry its own fresh noise only
    noise_owner = "sender"
    name = "dp_admm"
    cites = ("Huang, Hu, Chan-Tin & Gong 2018 (DP-ADMM, paper 002), Algorithm 3",)
    provenance = "paper"
    params_type = DPADMMParams
    private = True
    sampler: str = "lattice"  # "lattice" (private as floats) or "float" (report: inf)
    enforce_bound: bool = True  # project the records onto ‖a‖ ≤ S1, |y| ≤ 1 (Lemma 1 enforced)

    def _release(self, state, noise, problem, params, k):
        if self.enforce_bound:
            problem = project_records(problem, params.S1)  # identity on normalised rows
        x = state.w_tilde
        inv_eta = inverse_step_size(problem, params, jnp.asarray(k + 1, x.dtype), jnp)  # Thm 3/4
        c = per_agent(params.rho + inv_eta, x)  # ρ + 1/η_i^{k+1}
        g = subgradient(problem, x)  # f_i'(w̃_i^k)
        w_local = (-g + state.gamma + per_agent(params.rho, x) * state.w
                   + per_agent(inv_eta, x) * x) / c  # (3a)
        sigma = sensitivity(problem, params, inv_eta, jnp) \
            * noise_multiplier(params.eps, params.delta, jnp)  # Thm 1
        return add_noise(w_local, per_agent(sigma, x), noise["xi"], sampler=self.sampler)  # (3b)

    models_covered = True
    models_note = "the model is w~_i^K, the last accounted release"

    def account(self, problem, network, params, steps, *, delta):
        """K Gaussian releases per provider, Δ_{i,k} of Lemma 1 (halved at k = 0), σ as drawn.

        w_i^{k+1} (3a) depends on provider i's data only through f_i'(w~_i^k) at the released
        w~_i^k; γ_i^k and w^k are functions of the released w~ (3c)-(3d), so the releases compose
        adaptively. At k = 0 the point w~⁰ = 0 is public and the record gradients there differ by at
        most S1 (:data:`~jaxdp.algorithms.dpadmm.privacy.FIRST_STEP_FACTOR`).
        """
        check_noise_params(type(params).__name__, params.eps, params.delta)
        host = params.replace(**{f: host_value(params[f], 1) for f in params})
        k1 = np.arange(1, steps + 1, dtype=np.float64)[None, :]
        inv_eta = inverse_step_size(problem, host, k1, np)  # (N, K)
        full = np.broadcast_to(sensitivity(problem, host, inv_eta, np), (network.n_agents, steps))
        z = np.asarray(noise_multiplier(host.eps, host.delta), np.float64)  # Thm 1
        ratios = np.broadcast_to(release_ratios(host.eps, host.delta, steps, np).reshape(
            -1, steps), full.shape)
        return release_report(self, problem, network, params, full * ratios * z, full * z,
                              delta=delta,
                              description="DP-ADMM: w~_i^{k+1} = w_i^{k+1} + N(0, σ_{i,k+1}² I)")

    def validate(self, params, problem, network):
        super().validate(params, problem, network)
        check_private(self, params, problem)
        lam, _ = reg_weights(problem, np)
        if problem.loss.l1_key is not None and float(lam) != 0.0:
            raise ValueError(f"DPADMM with an ℓ1 loss uses Theorem 3, which needs a bounded "
                             f"regularizer subgradient: reg['lam'] must be 0; got {float(lam):g}")


# -- the math, one function per equation -------------------------------------------------------
def inverse_step_size(problem, params, k1, xp=jnp):
    """1/η_i^{k+1} at iteration ``k1 = k + 1``: Theorem 3 for an ℓ1 loss, Theorem 4 otherwise.

    Args:
      problem: the Problem (its mask gives m_i, its reg λ/N).
      params: DPADMMParams (leaves scalar or (N,) in ``step``; scalar or (N, 1) on the host).
      k1: k + 1 (a scalar in ``step``, a (1, K) row on the host).
      xp: ``jax.numpy`` in ``step``, ``numpy`` on the host.

    Returns:
      (N,) in ``step``, (N, K) on the host.
    """
    m = provider_sizes(problem, xp)
    lam, l1 = reg_weights(problem, xp)
    if problem.loss.l1_key is not None:
        S2 = np.sqrt(problem.dim)  # ‖sgn‖ ≤ √d, Sec. VI-A
        return (params.S1 + l1 * S2) * xp.sqrt(2.0 * k1) / params.D_w + 0.0 * m  # Thm 3
    return (params.S3 + lam  # S3 + (λ/N) S4 with S4 = 1, Thm 4
            + 2.0 * params.S1 * xp.sqrt(4.0 * k1 * xp.log(1.25 / params.delta))
            / (m * params.eps * params.D_w))  # Thm 4


def sensitivity(problem, params, inv_eta, xp=jnp):
    """Δ_{i,k+1} = 2 S1/(m_i (ρ + 1/η_i^{k+1})), the ℓ2 sensitivity of w_i^{k+1} (Lemma 1).

    Shapes as :func:`inverse_step_size` (``inv_eta`` is its output).
    """
    return 2.0 * params.S1 / (provider_sizes(problem, xp) * (params.rho + inv_eta))  # Lemma 1


def subgradient(problem, X: AgentArray) -> AgentArray:
    """f_i'(x_i): the smooth part's gradient plus (λ/N)·sgn(x_i) for an ℓ1 loss, (N, d)."""
    g = problem.local_grads(X)
    if problem.loss.l1_key is None:
        return g
    return g + problem.reg[problem.loss.l1_key] * jnp.sign(X)  # R'(w) = sgn(w), Sec. VI-A


def estimate_dw(features, labels, *, loss, reg, tol: float = 1e-9) -> float:
    """D_w ≈ ‖w*‖: the norm of the minimizer of ``mean ℓ + R`` on pre-training rows (Table II).

    Args:
      features: (n, d) held-out rows (the paper uses 162), normalized like the training data.
      labels: (n,) ±1.
      loss, reg: the training problem's loss and per-provider reg (λ/N), so that ``w*`` minimizes
        the same objective up to the sample.
      tol: relative tolerance of the float64 host solver (``solve_reference``).

    Returns:
      ‖w*‖ as a float.
    """
    pre = from_arrays(np.asarray(features)[None], np.asarray(labels)[None], loss=loss, reg=reg,
                      reference=False)
    return float(np.linalg.norm(solve_reference(pre, tol=tol)[0]))


# -- helpers shared with dpadmm_baselines --------------------------------------------------------
def provider_sizes(problem, xp=jnp):
    """m_i, the real rows of each provider: (N,) in ``step``, (N, 1) float64 on the host."""
    if xp is jnp:
        return jnp.sum(problem.mask, axis=1)
    return np.asarray(problem.mask, np.float64).sum(axis=1)[:, None]


def reg_weights(problem, xp=jnp):
    """(weight of ½‖·‖², weight of ‖·‖₁) of the problem's loss, i.e. λ/N; 0 where absent."""
    reg, loss = problem.reg, problem.loss
    cast = (lambda v: v) if xp is jnp else (lambda v: float(np.asarray(v)))
    lam = cast(reg[loss.ridge_key]) if hasattr(loss, "ridge_key") else 0.0
    l1 = cast(reg[loss.l1_key]) if loss.l1_key is not None else 0.0
    return lam, l1


def host_value(value, ndim_agent: int = 1):
    """A Params leaf on the host as float64: a scalar stays a float, an (N,) array becomes
    (N, 1) (``ndim_agent = 1``, against (N, K) schedules) or stays (N,) (``ndim_agent = 0``)."""
    value = np.asarray(value, np.float64)
    return value.reshape((-1,) + (1,) * ndim_agent) if value.ndim == 1 else float(value)


__all__ = [
    "DPADMM",
    "DPADMMParams",
    "StarADMM",
    "StarADMMState",
    "estimate_dw",
    "host_value",
    "inverse_step_size",
    "provider_sizes",
    "reg_weights",
    "sensitivity",
    "subgradient",
]
