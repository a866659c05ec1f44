r"""Paper 004's baselines, PORTER-DP and PriSMA, reconstructed (the paper gives no update rule).

Paper 004 (LT-ADMM-DP, arXiv 2604.02558, §VI) compares against PORTER [13] and PriSMA [10] on a
10-agent ring, giving only their hyperparameters and Table I's cost per iteration. The updates below
are marked **[NOT IN PAPER]**; every choice the paper leaves open is a static option or a
documented default, flagged here.

**PORTER-DP** — B. Li & Y. Chi, "Convergence and privacy of decentralized nonconvex optimization
with gradient clipping and communication compression", IEEE J-STSP 19(1) 2025, arXiv 2305.09896.
BEER (Zhao, Li, Richtárik & Chi 2022; skeleton as in the authors' code ``liboyue/beer``:
``experiments/BEER.py``, ``beer/optim/BEER.py``) on per-sample clipped, perturbed gradients::

    X⁺   = X + γ (W − I) H − η V                      (P1)  model step on the surrogate H
    H⁺   = H + C(X⁺ − H)                               (P2)  1st communication: C(X⁺ − H)
    Ĝ⁺   = (1/b) Σ_h clip_C(∇f_{i,h}(x_i⁺)) + σ ξ      (P3)  PORTER-DP gradient, ξ ~ N(0, I)
    V⁺   = V + γ (W − I) G_v + Ĝ⁺ − Ĝ                  (P4)  gradient tracking
    G_v⁺ = G_v + C(V⁺ − G_v)                           (P5)  2nd communication: C(V⁺ − G_v)

Two communications and one minibatch gradient per iteration (Table I: t_g + 2t_c). Flagged
choices: the compressor C is the identity by default (``compress_k=0``; paper 004 mentions no
compression) or top-k (``compress_k=k``); γ (mixing step) = 1, exact gradient tracking for the
identity compressor; W is the network's mixing matrix (Metropolis: 1/3 on the ring); b = 8 as
LT-ADMM-DP; H⁰ = G_v⁰ = V⁰ = Ĝ⁰ = 0 (BEER's code starts from V⁰ = Ĝ⁰ = ∇F(X⁰); starting from zero
spends the first iteration computing Ĝ¹ = V¹ and keeps exactly one private release per step).

**PriSMA** — Y. Huang, J. Zhang & Q. Ling, "Differential privacy in distributed learning: beyond
uniformly bounded stochastic gradients", AISTATS 2025, PMLR 258:3223-3231. Differentially private
stochastic recursive momentum (STORM) with two clippings; the original is a client-server method,
decentralised here by mixing the models over the ring::

    v_i⁰ = (1/b) Σ_h clip_{C1}(∇f_{i,h}(x_i⁰)) + σ0 ξ                                   (S1)
    v_i^t = (1−η) v_i^{t−1} + (1/b) Σ_h [η clip_{C1}(∇f_{i,h}(x_i^t))
            + (1−η) clip_{C2}(∇f_{i,h}(x_i^t) − ∇f_{i,h}(x_i^{t−1}))] + σ1 ξ            (S2)
    x_i^{t+1} = Σ_j W_ij x_j^t − γ v_i^t                                                (S3)

Two gradients per iteration on the same minibatch (at x^t and x^{t−1}) and one communication
(Table I: 2t_g + t_c). Flagged choices: per-sample clipping of both terms (what makes the added
noise a Gaussian mechanism with sensitivity (ηC1 + (1−η)C2)/b); combine-then-adapt mixing (S3); W
the network's mixing matrix; b = 8.

Noise (both, static ``sampler``): ``"lattice"`` (default) releases the noised term on the lattice
(σ/R)ℤ^d (:func:`~jaxdp.privacy.add_noise`), private as floats — PriSMA's released term is the
increment ``η·clip_{C1} + (1−η)·clip_{C2} + σ1 ξ`` of (S2), to which ``(1−η)v`` (public) is added
after; ``"float"`` adds the floating-point draw (report inf, the ideal curves kept).

Privacy (both): one Gaussian release per iteration per agent, accounted by
:func:`jaxdp.algorithms.ltadmm.privacy.baseline_report`: with ``sampling="fixed"`` (b distinct rows,
divided by b) under replace-one with Δ = 2C/b (an added record displaces a batch member) and
sampling without replacement; with ``sampling="poisson"`` (each row kept with probability b/n_i,
n_i the declared ``records``, the sum divided by b) under add/remove-one (or, with
``relation="replace_record"``, replace-one by dp-accounting's REPLACE_ONE PLD) with Δ = C/b and
Poisson amplification (undeclared: ε = inf).
How paper 004 matched σ = 0.103 (PORTER)
and σ0 = 0.1794, σ1 = 0.0155 (PriSMA) to ε = 19.6 is not stated.

Shapes: N agents, d model dimension, b minibatch rows.
"""
from __future__ import annotations

import dataclasses
from typing import ClassVar

import chex
import jax
import jax.numpy as jnp

from jaxdp._types import AgentArray, Array, per_agent
from jaxdp.core import Algorithm, param, zeros_like_models
from jaxdp.algorithms._sampling import (
    SAMPLINGS, batch_rows, check_declaration, check_minibatch, draw_minibatches,
    per_sample_clipped_mean, record_relation,
    per_sample_grads, sample_counts,
)
from jaxdp.algorithms._checks import check_choice, check_count
from jaxdp.privacy import add_noise, noise_draws


# -- Params and states --------------------------------------------------------------------------
@chex.dataclass(frozen=True)
class PORTERParams:
    eta: float = param(0.1, domain="positive", doc="η_g, step size, (P1) (paper 004 §VI)")
    gamma: float = param(1.0, domain="positive", per_agent=False,
                         doc="γ, mixing step, (P1), (P4) [NOT IN PAPER]")
    clip: float = param(1.0, domain="positive", doc="C, per-sample clipping threshold, (P3)")
    sigma: float = param(0.103, domain="nonnegative", doc="σ, std of the Gaussian noise, (P3)")


@chex.dataclass(frozen=True)
class PriSMAParams:
    gamma: float = param(0.025, domain="positive", doc="γ, step size, (S3)")
    eta: float = param(0.025, domain="probability", doc="η, momentum parameter, (S2)")
    clip1: float = param(1.0, domain="positive", doc="C1, clipping of the gradient, (S1)-(S2)")
    clip2: float = param(1.0, domain="positive",
                         doc="C2, clipping of the gradient difference, (S2)")
    sigma0: float = param(0.1794, domain="nonnegative", doc="σ0, noise std of v⁰, (S1)")
    sigma1: float = param(0.0155, domain="nonnegative", doc="σ1, noise std of v^t, t ≥ 1, (S2)")


@chex.dataclass(frozen=True)
class PORTERState:
    x: AgentArray  # (N, d) X^t
    h: AgentArray  # (N, d) H^t, the models' compressed surrogate
    v: AgentArray  # (N, d) V^t, the gradient tracker
    g_v: AgentArray  # (N, d) G_v^t, the tracker's compressed surrogate
    g_prev: AgentArray  # (N, d) Ĝ^t, the last private gradient
    n_rows: Array  # (N,) int32 m_i, constant
    rows: Array  # (N, M) bool, constant: the real rows


@chex.dataclass(frozen=True)
class PriSMAState:
    x: AgentArray  # (N, d) x^t
    x_prev: AgentArray  # (N, d) x^{t−1} (x⁰ at t = 0)
    v: AgentArray  # (N, d) v^{t−1}, the momentum estimator
    n_rows: Array  # (N,) int32 m_i, constant
    rows: Array  # (N, M) bool, constant: the real rows


# -- algorithms ---------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class _Minibatched(Algorithm):
    """Shared plumbing: a minibatch of ``batch_size`` rows (``sampling`` "fixed" | "poisson") and
    a standard normal draw per step. ``records``: the public record count n (an int, or one per
    agent) that Poisson batches are drawn at, q = b/n (``_sampling.poisson_rate``). ``relation``:
    the record-level relation, ``None`` for the sampling's default (``_sampling.record_relation``:
    Poisson batches also offer ``"replace_record"``)."""

    batch_size: int = 8
    sampling: str = "fixed"
    sampler: str = "lattice"  # "lattice" (private as floats) or "float" (report: inf)
    records: int | tuple[int, ...] | None = None  # Poisson: the declared n_i, q_i = b/n_i
    relation: str | None = None  # record-level; None: the sampling's default (RELATIONS_OF_SAMPLING)

    models_covered: ClassVar[bool] = True
    models_note: ClassVar[str] = ("the models are built from the released noisy gradients (or "
                                  "momentum increments) and the neighbours' messages only: a "
                                  "post-processing of the accounted releases")

    def __post_init__(self):
        check_count(self.name, "batch_size", self.batch_size)
        check_choice(self.name, "sampling", self.sampling, SAMPLINGS)
        check_declaration(self.name, self.sampling, self.records, self.batch_size)
        record_relation(self.name, self.sampling, self.relation)

    def noise(self, key, state, params, k):
        del params, k
        return {"batch": draw_minibatches(jax.random.fold_in(key, 0), state, self.batch_size,
                                          self.sampling, records=self.records),
                # (N, b) rows or (N, M) weights
                "xi": noise_draws(jax.random.fold_in(key, 1), state.x.shape, state.x.dtype,
                                  sampler=self.sampler)}

    def validate(self, params, problem, network) -> None:
        """Base checks, then the minibatch size against every m_i (see ``check_minibatch``)."""
        super().validate(params, problem, network)
        check_minibatch(self.name, problem, self.batch_size, self.records,
                        poisson=self.sampling == "poisson")

    def local_iterations(self) -> int:
        """Gradient-step iterations per engine step: one."""
        return 1

    def account(self, problem, network, params, steps, *, delta):
        """Per-agent ε of the reconstruction; see ``ltadmm_privacy.baseline_report``."""
        from jaxdp.algorithms.ltadmm.privacy import baseline_report

        return baseline_report(self, problem, network, params, steps, delta=delta)

    def _clipped_mean(self, problem, x, batch, clip, grads=None):
        return per_sample_clipped_mean(problem, x, batch, clip, grads, sampling=self.sampling,
                                       batch_size=self.batch_size)


@dataclasses.dataclass(frozen=True)
class PORTER(_Minibatched):
    """PORTER-DP (Li & Chi 2025): BEER gradient tracking on per-sample clipped noisy gradients.

    Static: ``batch_size`` b, ``sampling`` ("fixed" | "poisson"), ``compress_k`` (0: identity
    compressor; k: keep each row's k largest entries).
    See the module docstring for (P1)-(P5) and the flagged choices.
    """

    # jaxdp.privacy.contract.NOISE_OWNERS: each agent's releases carry its own fresh noise only
    noise_owner = "sender"
    name: ClassVar[str] = "porter"
    cites = ("Li & Chi 2025 (PORTER-DP)", "compared in Ren et al. 2026 (paper 004), reconstructed")
    provenance = "baseline"
    noise_field: ClassVar[str] = "sigma"
    params_type: ClassVar[type] = PORTERParams
    compress_k: int = 0

    def __post_init__(self):
        super().__post_init__()
        if not isinstance(self.compress_k, int) or self.compress_k < 0:
            raise ValueError(f"porter: compress_k must be an integer >= 0 (0 = no compression); "
                             f"got {self.compress_k!r}")

    def init(self, key, problem, network, params):
        del key, params
        zero = zeros_like_models(problem, network)
        return PORTERState(x=zero, h=zero, v=zero, g_v=zero, g_prev=zero,
                           n_rows=sample_counts(problem), rows=problem.mask > 0)

    def step(self, state, noise, problem, network, params, k):
        del k
        gamma = params.gamma
        x_new = state.x + gamma * (network.mix(state.h) - state.h) \
            - per_agent(params.eta, state.x) * state.v  # (P1)
        q_h = self._compress(x_new - state.h)  # (P2), sent
        g_new = add_noise(self._clipped_mean(problem, x_new, noise["batch"], params.clip),
                          per_agent(params.sigma, x_new), noise["xi"],
                          sampler=self.sampler)  # (P3)
        v_new = state.v + gamma * (network.mix(state.g_v) - state.g_v) \
            + g_new - state.g_prev  # (P4)
        q_v = self._compress(v_new - state.g_v)  # (P5), sent
        new = PORTERState(x=x_new, h=state.h + q_h, v=v_new, g_v=state.g_v + q_v, g_prev=g_new,
                          n_rows=state.n_rows, rows=state.rows)
        return new, {"q_h": q_h, "q_v": q_v}

    def costs(self) -> tuple[int, int]:
        """``(gradient evaluations, communication rounds)`` per iteration: Table I, t_g + 2t_c."""
        return 1, 2

    def _compress(self, v: AgentArray) -> AgentArray:
        """C(v): identity, or top-k of each row (a contractive compressor, BEER §2)."""
        if self.compress_k == 0 or self.compress_k >= v.shape[-1]:
            return v
        kth = jax.lax.top_k(jnp.abs(v), self.compress_k)[0][..., -1:]  # (N, 1)
        return jnp.where(jnp.abs(v) >= kth, v, 0.0)


@dataclasses.dataclass(frozen=True)
class PriSMA(_Minibatched):
    """PriSMA (Huang, Zhang & Ling 2025), decentralised: private STORM momentum plus mixing.

    Static: ``batch_size`` b, ``sampling`` ("fixed" | "poisson"). See the module docstring for (S1)-(S3)
    and the choices.
    """

    # jaxdp.privacy.contract.NOISE_OWNERS: each agent's releases carry its own fresh noise only
    noise_owner = "sender"
    name: ClassVar[str] = "prisma"
    cites = (
        "Huang, Zhang & Ling 2025 (PriSMA)",
        "compared in Ren et al. 2026 (paper 004), reconstructed",
    )
    provenance = "baseline"
    params_type: ClassVar[type] = PriSMAParams

    def init(self, key, problem, network, params):
        del key, params
        x0 = zeros_like_models(problem, network)
        return PriSMAState(x=x0, x_prev=x0, v=jnp.zeros_like(x0), n_rows=sample_counts(problem),
                           rows=problem.mask > 0)

    def step(self, state, noise, problem, network, params, k):
        x, batch, xi = state.x, noise["batch"], noise["xi"]
        idx, _ = batch_rows(batch, self.sampling)
        g_now = per_sample_grads(problem, x, idx)  # (N, b, d) ∇f_{i,h}(x^t)
        g_old = per_sample_grads(problem, state.x_prev, idx)  # same samples at x^{t−1}
        fresh = self._clipped_mean(problem, x, batch, params.clip1, grads=g_now)
        diff = self._clipped_mean(problem, x, batch, params.clip2, grads=g_now - g_old)
        eta = per_agent(params.eta, x)
        v_first = add_noise(fresh, per_agent(params.sigma0, x), xi, sampler=self.sampler)  # (S1)
        increment = add_noise(eta * fresh + (1 - eta) * diff, per_agent(params.sigma1, x), xi,
                              sampler=self.sampler)  # the released data term of (S2)
        v_later = (1 - eta) * state.v + increment  # (S2): post-processing of the release
        v_new = jnp.where(k == 0, v_first, v_later)
        x_new = network.mix(x, message="x") - per_agent(params.gamma, x) * v_new  # (S3)
        return PriSMAState(x=x_new, x_prev=x, v=v_new, n_rows=state.n_rows, rows=state.rows), \
            {"x": x}

    def costs(self) -> tuple[int, int]:
        """``(gradient evaluations, communication rounds)`` per iteration: Table I, 2t_g + t_c."""
        return 2, 1


__all__ = ["PORTER", "PORTERParams", "PORTERState", "PriSMA", "PriSMAParams", "PriSMAState"]
