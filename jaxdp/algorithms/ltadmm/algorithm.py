r"""LT-ADMM-DP: local-training ADMM on clipped, perturbed stochastic gradients (paper 004).

X. Ren, Y. Ma, N. Bastianello, K. H. Johansson, T. Parisini & A. A. Malikopoulos,
"Communication-Efficient Distributed Learning with Differential Privacy", 2026, arXiv 2604.02558.
This module: LT-ADMM-DP, non-private LT-ADMM and LT-ADMM-VR. Privacy (Theorem 2, tight
accountants, calibration): :mod:`jaxdp.algorithms.ltadmm.privacy`. Baselines PORTER and PriSMA:
:mod:`jaxdp.algorithms.ltadmm.baselines`. The edge exchange, the soft clip, the Fig. 1 metrics and
Table I's cost model: :mod:`jaxdp.algorithms.ltadmm.common` (re-exported here).

Round k of Algorithm 1, every agent i (the consensus term is frozen at the round's start)::

    c_i   = β (ρ d_i x_i − Σ_{j∈N_i} z_ij)                                (5a), (12a)
    φ⁰    = x_i;   for t = 0..τ−1:                                         Alg. 1 l.4-10
      B   ⊂ {1..m_i}, |B| = b, uniform without replacement                 Alg. 1 l.6
      g   = (1/b) Σ_{h∈B} ∇f_{i,h}(φ^t)                                    (6)
      (sampling="poisson": B holds each row independently with prob. b/n_i, n_i = records
       declared; still divided by b)
      g̃   = ζ/(ζ + ‖g‖) · g + e,   e ~ N(0, σ_e² I)                        (7)
      φ^{t+1} = φ^t − γ g̃ − c_i                                            (5a)
    x_i⁺  = φ^τ                                                             Alg. 1 l.11
    m_{j→i} = z_ji − 2ρ x_j⁺   (sent by j to i, one per edge)      Alg. 1 l.13, corrected
    z_ij⁺ = ½ z_ij − ½ m_{j→i}                                              (5b)

Stacked (appendix, with A the edge→node incidence, P the edge reversal, D = AᵀA, Ã = AᵀPA):
``X⁺ = X − Σ_t (γ G(Φ^t) + β(ρ D X − AᵀZ))`` (12a) and ``Z⁺ = ½Z − ½PZ + ρ P A X⁺`` (12b).

Two exact implementations (``form``), tested equal:

* ``"edge"`` (default, faithful): ``z`` is ``(2E, d)`` with the core's convention (baselines.ADMM):
  ``z[e]`` is held by ``receivers[e]`` about its neighbour ``senders[e]``. LT-ADMM is the core's
  relaxed ADMM with relaxation a = ½ and a local-training inner solve; the messages are the core's
  ``admm_messages``. ``step`` returns the per-edge messages ``{"m": (2E, d)}``.
* ``"node"`` (derived from (12b)): only the node sums ``y = AᵀZ`` (Σ_j z_ij) and
  ``ỹ = AᵀPZ`` (Σ_j z_ji) matter: ``y⁺ = ½(y − ỹ) + ρ Ã X⁺``, ``ỹ⁺ = ½(ỹ − y) + ρ D X⁺`` — one
  adjacency product per round, no edge state. ``step`` returns ``{"m_sum": (N, d)}``, the sum of
  the messages each agent receives, ``Σ_j m_{j→i} = ỹ_i − 2ρ (Ã X⁺)_i``.

Options: ``clip="soft"`` is the paper's ζ/(ζ+‖g‖) on the minibatch mean (7); ``clip="per_sample"``
is the standard DP-SGD clip min(1, ζ/‖∇f_{i,h}‖) of every sample before averaging (sensitivity
2ζ/b for one replaced record instead of 2ζ). ``sampling="fixed"`` (the paper's Alg. 1 l.6) draws
b distinct rows; ``sampling="poisson"`` keeps each row independently with probability q = b/n_i,
n_i the declared public record count ``records`` (never the data's m_i: issue 36), and divides
the sum by b (what Poisson subsampling amplification under add/remove-one needs;
per-sample sensitivity ζ/b). ``relation``: ``None`` (the sampling's default), or
``"replace_record"`` with Poisson batches (replace-one, dp-accounting's REPLACE_ONE PLD; for the
soft clip, whose releases all lie in the ζ-ball, the Poisson PLD at 2ζ;
:data:`~jaxdp.algorithms._sampling.RELATIONS_OF_SAMPLING`). Non-private LT-ADMM ([22], [24]) is
σ_e = 0 and ζ = ∞ (class :class:`LTADMM`).

Errata and choices (docs/errata.md):

* Alg. 1 l.13 prints "transmit z_ji − 2ρ x_j" — what agent i *receives*; the sent message is
  z_ij − 2ρ x_i (from (5b), (12b) and the co-authors' decent-bench). Only the corrected direction
  can be implemented (agent i does not know x_j⁺), so there is no ``"paper"`` form of it.
* Alg. 1 l.1 initialises z_ij,0 = x_i,0 (``variant="paper"``). It breaks the invariant
  1ᵀZ_k = ρ 1ᵀ D X_k at k = 0 unless x_0 = 0 or ρ = 1, so x̄ drifts in round 0 by a consensus term
  instead of following (13). ``variant="fixed"`` (default) uses z_ij,0 = ρ x_i,0, which keeps the
  invariant from k = 0. With the default x_0 = 0 (``x0="zero"``, as decent-bench; the paper does
  not give x_0) both give z_0 = 0; ``x0="random"`` (x_i,0 ~ N(0, I) from the init key) shows the
  difference.
* Minibatches are drawn in ``noise`` (Floyd's algorithm in a ``fori_loop``: a uniformly random
  b-subset of each agent's real rows, fresh at every local step, independent over agents, steps
  and rounds; or Poisson inclusion weights); the rows of agent i must be a prefix of its shard
  (what ``problems.from_arrays`` builds).

Shapes: N agents, d model dimension, E undirected edges, τ local steps, b minibatch rows.
"""
from __future__ import annotations

import dataclasses
import math
from typing import ClassVar

import chex
import jax
import jax.numpy as jnp
import numpy as np

from jaxdp._types import AgentArray, Array, EdgeArray, per_agent
from jaxdp.core import Algorithm, param, zeros_like_models
from jaxdp.algorithms._sampling import (
    SAMPLINGS, all_sample_grads, check_declaration, check_minibatch, draw_batches, record_relation,
    draw_minibatches, per_sample_clipped_mean, per_sample_grads, sample_counts,
)
from jaxdp.algorithms._checks import check_choice, check_count
from jaxdp.algorithms.ltadmm.common import (  # re-exported: their public path is also this module
    CostModel, bridge_sums_update, bridge_update, paper_metrics, soft_clip,
)
from jaxdp.privacy import add_noise, noise_draws
from jaxdp.privacy.samplers import gaussian

CLIPS = ("soft", "per_sample")
FORMS = ("edge", "node")
VARIANTS = ("fixed", "paper")
INITS = ("zero", "random")


# -- Params and states --------------------------------------------------------------------------
@chex.dataclass(frozen=True)
class LTADMMDPParams:
    gamma: float = param(0.1, domain="positive", doc="γ, gradient step, (5a)")
    beta: float = param(0.1, domain="positive", doc="β, step on the consensus term, (5a)")
    rho: float = param(0.1, domain="positive", per_agent=False, doc="ρ, ADMM penalty, (5a)-(5b)")
    zeta: float = param(1.0, domain="positive", doc="ζ, clipping threshold, (7); inf = no clipping")
    sigma_e: float = param(0.5, domain="nonnegative", doc="σ_e, std of the Gaussian noise e, (7)")


@chex.dataclass(frozen=True)
class LTADMMEdgeState:
    x: AgentArray  # (N, d) x_k
    z: EdgeArray  # (2E, d) z_ij,k: z[e] held by receivers[e] about senders[e]
    n_rows: Array  # (N,) int32 m_i, constant: `noise` draws the minibatches among these rows
    rows: Array  # (N, M) bool, constant: the real rows (Poisson sampling draws over them)


@chex.dataclass(frozen=True)
class LTADMMNodeState:
    x: AgentArray  # (N, d) x_k
    y: AgentArray  # (N, d) y_k = AᵀZ_k: Σ_j z_ij,k
    yt: AgentArray  # (N, d) ỹ_k = AᵀPZ_k: Σ_j z_ji,k
    n_rows: Array  # (N,) int32 m_i, constant
    rows: Array  # (N, M) bool, constant


# -- algorithms ---------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class LTADMMDP(Algorithm):
    """LT-ADMM-DP (Algorithm 1): τ clipped, noisy SGD steps per round, then one edge exchange.

    Static configuration: ``local_steps`` τ, ``batch_size`` b, ``clip`` ("soft" | "per_sample"),
    ``sampling`` ("fixed" | "poisson"), ``records`` (Poisson: the public record count n, or one
    per agent, q = b/n), ``relation`` (None: the sampling's default; Poisson batches also offer
    "replace_record"), ``form`` ("edge" | "node"), ``variant`` of z_0 ("fixed" | "paper"), ``x0``
    ("zero" | "random"), ``sampler`` of the noise e ("lattice", the default: the noisy gradient is
    released on the lattice (σ_e/R)ℤ^d, private as floats; the report amplifies Poisson batches by
    Zhu & Wang's general bound, not fixed ones; "float": e = σ_e·N(0, I) in floating point, report
    inf with the ideal curves). The x_i,0 draw of ``x0="random"`` is not privacy noise and stays
    float. See the module docstring; the privacy report's δ is the caller's (§VI uses δ_i = 1e-4).
    """

    # jaxdp.privacy.contract.NOISE_OWNERS: each agent's releases carry its own fresh noise only
    noise_owner = "sender"
    name: ClassVar[str] = "lt_admm_dp"
    cites = (
        "Ren, Ma, Bastianello, Johansson, Parisini & Malikopoulos 2026 (LT-ADMM-DP, paper 004)",
    )
    provenance = "paper"
    noise_field: ClassVar[str] = "sigma_e"
    params_type: ClassVar[type] = LTADMMDPParams
    local_steps: int = 4
    batch_size: int = 8
    clip: str = "soft"
    form: str = "edge"
    variant: str = "fixed"
    x0: str = "zero"
    sampling: str = "fixed"
    sampler: str = "lattice"  # "lattice" (private as floats) or "float" (report: inf)
    records: int | tuple[int, ...] | None = None  # Poisson: the declared n_i, q_i = b/n_i
    relation: str | None = None  # record-level; None: the sampling's default
                                 # (RELATIONS_OF_SAMPLING)

    models_covered: ClassVar[bool] = True
    models_note: ClassVar[str] = (
        "x_i^K is φ^τ of the last round: x_i^0 (public) minus γ·(noisy gradients) and consensus "
        "terms built from z and x, themselves functions of earlier noisy gradients and received "
        "messages — a post-processing of every noisy gradient, all of which are accounted")

    def __post_init__(self):  # a plain (non-pytree) dataclass: checked once, at construction
        check_choice(self.name, "clip", self.clip, CLIPS)
        check_choice(self.name, "sampling", self.sampling, SAMPLINGS)
        check_choice(self.name, "form", self.form, FORMS)
        check_choice(self.name, "variant", self.variant, VARIANTS)
        check_choice(self.name, "x0", self.x0, INITS)
        check_count(self.name, "local_steps", self.local_steps)
        check_count(self.name, "batch_size", self.batch_size)
        check_declaration(self.name, self.sampling, self.records, self.batch_size)
        record_relation(self.name, self.sampling, self.relation)

    def init(self, key, problem, network, params):
        x0 = zeros_like_models(problem, network)
        if self.x0 == "random":
            x0 = gaussian(key, x0.shape, x0.dtype)
        # z_ij,0 = s·x_i,0: s = 1 is Alg. 1 l.1; s = ρ keeps 1ᵀZ_0 = ρ 1ᵀD X_0
        s = 1.0 if self.variant == "paper" else params.rho
        rows = {"n_rows": sample_counts(problem), "rows": problem.mask > 0}
        if self.form == "edge":  # z[e] = z_ij with i = receivers[e], copying the holder's x_i,0
            return LTADMMEdgeState(x=x0, z=s * x0[network.receivers], **rows)
        return LTADMMNodeState(x=x0, y=s * network.degrees[:, None] * x0,  # AᵀZ_0 = s D X_0
                               yt=s * network.apply_A(x0), **rows)  # AᵀPZ_0 = s Ã X_0

    def noise(self, key, state, params, k):
        del params, k
        n, d = state.x.shape
        return {"batch": draw_minibatches(jax.random.fold_in(key, 0), state, self.batch_size,
                                          self.sampling, (self.local_steps,), self.records),  # Alg. 1 l.6
                "e": noise_draws(jax.random.fold_in(key, 1), (self.local_steps, n, d),
                                 state.x.dtype, sampler=self.sampler)}  # (τ, N, d); e = σ_e·this

    def noise_agent_axes(self, noise):
        """Both draws of :meth:`noise` are ``(τ, N, ·)``, agent i's minibatches and ``e_i`` of its
        τ local steps: the agents are axis 1."""
        return jax.tree.map(lambda _: 1, noise)

    def step(self, state, noise, problem, network, params, k):
        del k
        z_sum = network.scatter_sum(state.z) if self.form == "edge" else state.y  # Σ_j z_ij
        x_new = self._local_training(state.x, z_sum, noise, problem, network, params)
        if self.form == "edge":
            return self._bridge_update(state, x_new, network, params)
        return self._bridge_sums_update(state, x_new, network, params)

    def account(self, problem, network, params, steps, *, delta):
        """Every noisy gradient of every local step, per-agent; Theorem 2 as paper curves.

        See :func:`jaxdp.algorithms.ltadmm.privacy.ltadmm_report`.
        """
        from jaxdp.algorithms.ltadmm.privacy import ltadmm_report

        return ltadmm_report(self, problem, network, params, steps, delta=delta)

    # -- host-side helpers -------------------------------------------------------------------
    def validate(self, params, problem, network) -> None:
        """Base checks (ζ = +inf allowed: no clipping), then the minibatch size against m_i.

        Raises:
          TypeError: ``params`` is not ``LTADMMDPParams``.
          ValueError: a bad Params value (named), ``batch_size`` above some m_i, or a shard whose
            real rows are not a prefix.
        """
        if not isinstance(params, self.params_type):
            super().validate(params, problem, network)  # raises the TypeError
        zeta = np.asarray(params.zeta, np.float64)
        super().validate(params.replace(zeta=np.where(np.isposinf(zeta), 1.0, zeta)), problem,
                         network)
        check_minibatch(self.name, problem, self.batch_size, self.records,
                        poisson=self.sampling == "poisson")

    def costs(self) -> tuple[int, int]:
        """``(gradient evaluations, communication rounds)`` per step: τ minibatch gradients, 1."""
        return self.local_steps, 1

    def local_iterations(self) -> int:
        """Gradient-step iterations per engine step (τ: one round holds τ local steps)."""
        return self.local_steps

    # -- the math ----------------------------------------------------------------------------
    def _local_training(self, x, z_sum, noise, problem, network, params) -> AgentArray:
        """τ local steps from φ⁰ = x with the consensus term frozen at x_k (5a), (12a)."""
        c = per_agent(params.beta, x) * (params.rho * network.degrees[:, None] * x - z_sum)  # (5a)
        gamma = per_agent(params.gamma, x)

        def local(phi, draws):
            batch, e = draws
            g = self._perturbed_gradient(phi, batch, e, problem, params)  # (6)-(7)
            return phi - gamma * g - c, None  # (5a)

        x_new, _ = jax.lax.scan(local, x, (noise["batch"], noise["e"]))
        return x_new  # Alg. 1 l.11

    def _bridge_update(self, state, x_new, network, params):
        """Edge exchange: ``z_ij⁺ = ½ z_ij − ½ (z_ji − 2ρ x_j⁺)`` (5b), (12b)."""
        return bridge_update(state, x_new, network, params)

    def _bridge_sums_update(self, state, x_new, network, params):
        """(12b) summed over each agent's edges: the node sums y = AᵀZ, ỹ = AᵀPZ."""
        return bridge_sums_update(state, x_new, network, params)

    def _perturbed_gradient(self, phi, batch, e, problem, params) -> AgentArray:
        """``g_i(φ) = μ g + σ_e e`` (7), with g the minibatch mean (6) or per-sample clipped."""
        if self.clip == "soft" and self.sampling == "fixed":
            clipped = soft_clip(problem.local_grads(phi, batch), params.zeta)  # μ g, (6)-(7)
        elif self.clip == "soft":
            clipped = soft_clip(per_sample_clipped_mean(problem, phi, batch, math.inf,
                                                        sampling=self.sampling,
                                                        batch_size=self.batch_size), params.zeta)
        else:
            clipped = per_sample_clipped_mean(problem, phi, batch, params.zeta,
                                              sampling=self.sampling, batch_size=self.batch_size)
        return add_noise(clipped, per_agent(params.sigma_e, phi), e,
                         sampler=self.sampler)  # (7), on the lattice by default


@dataclasses.dataclass(frozen=True)
class LTADMM(LTADMMDP):
    """Non-private LT-ADMM ([22] CDC 2024, [24] TAC 2026): LT-ADMM-DP with σ_e = 0 and ζ = ∞.

    Its default Params switch clipping and noise off; any other Params run LT-ADMM-DP's update.
    """

    name: ClassVar[str] = "lt_admm"
    cites = (
        "Ren, Ma, Bastianello, Johansson, Parisini & Malikopoulos 2026 (paper 004), without noise",
    )
    provenance = "paper"
    sampler: str = "float"  # not private (σ_e = 0 by default, no report): no lattice

    def default_params(self):
        return LTADMMDPParams(zeta=math.inf, sigma_e=0.0)

    account = Algorithm.account  # not private: no report (and ``is_private()`` is False)


@chex.dataclass(frozen=True)
class LTADMMVRParams:
    gamma: float = param(0.1, domain="positive", doc="γ, gradient step, (5a)")
    beta: float = param(0.1, domain="positive", doc="β, step on the consensus term, (5a)")
    rho: float = param(0.1, domain="positive", per_agent=False,
                       doc="ρ, ADMM penalty, (5a)-(5b); it multiplies D X along the model axis")


@chex.dataclass(frozen=True)
class LTADMMVREdgeState:
    x: AgentArray  # (N, d) x_k
    z: EdgeArray  # (2E, d) z_ij,k, as in LTADMMEdgeState
    table: Array  # (N, M, d) ∇f_{i,h}(r_{i,h}): each row's gradient at its last point, 0 on padding
    n_rows: Array  # (N,) int32 m_i, constant
    rows: Array  # (N, M) bool, constant


@chex.dataclass(frozen=True)
class LTADMMVRNodeState:
    x: AgentArray  # (N, d) x_k
    y: AgentArray  # (N, d) Σ_j z_ij,k
    yt: AgentArray  # (N, d) Σ_j z_ji,k
    table: Array  # (N, M, d) as in LTADMMVREdgeState
    n_rows: Array  # (N,) int32 m_i, constant
    rows: Array  # (N, M) bool, constant


TABLES = ("persistent", "round")
REFRESHES = ("current", "next")


@dataclasses.dataclass(frozen=True)
class LTADMMVR(Algorithm):
    r"""LT-ADMM-VR: LT-ADMM whose τ local steps use a SAGA estimator. **[RECONSTRUCTED]**

    X. Ren, N. Bastianello, K. H. Johansson & T. Parisini, "Communication-efficient stochastic
    distributed learning", IEEE TAC 2026 (arXiv 2501.13516; [24] of paper 004), the
    variance-reduced variant of its LT-ADMM. Round k, every agent i (the LT-ADMM round of
    :class:`~jaxdp.algorithms.ltadmm.algorithm.LTADMMDP` with ζ = ∞, σ_e = 0 and the minibatch
    mean replaced)::

        c_i   = β (ρ d_i x_i − Σ_{j∈N_i} z_ij)                          (5a) of paper 004
        φ⁰    = x_i;   for t = 0..τ−1:
          B   ⊂ {1..m_i}, |B| = b, uniform without replacement
          g   = (1/b) Σ_{h∈B} (∇f_{i,h}(φ^t) − T_{i,h}) + (1/m_i) Σ_{h=1}^{m_i} T_{i,h}   SAGA
          φ^{t+1} = φ^t − γ g − c_i                                      (5a)
          T_{i,h} ← ∇f_{i,h}(φ^t) for h ∈ B   (refresh="next": ∇f_{i,h}(φ^{t+1}))
        x_i⁺  = φ^τ;   z_ij⁺ = ½ z_ij − ½ (z_ji − 2ρ x_j⁺)                  (5b)

    T_{i,h} = ∇f_{i,h}(r_{i,h}) is the gradient of sample h at the point r_{i,h} where it was last
    evaluated; the estimator is unbiased given the past, E_B g = ∇f_i(φ^t), and its variance
    vanishes as φ and every r_{i,h} reach the solution, so the round converges exactly (LT-ADMM
    with a minibatch mean stalls at a noise floor). T starts at ∇f_{i,h}(x_i,0).

    Reconstructed: [24]'s text was not available; the estimator above is the SAGA form (Defazio,
    Bach & Lacoste-Julien 2014) that [24]'s LT-ADMM-VR is described with. Our choices (errata
    page, paper 004, "LT-ADMM-VR"): T holds gradients, not the points r; by default it persists
    across rounds and a row is refreshed with the gradient just evaluated at φ^t (SAGA, no extra
    evaluation). ``table="round"`` instead resets T to ∇f_{i,h}(x_i,k) at every round start (m_i
    extra sample gradients per round) and ``refresh="next"`` re-evaluates the batch at φ^{t+1}
    (b extra per step); ``table="round"`` with ``refresh="next"`` is decent-bench's LT-ADMM-VR with
    ``v2=False``, ``table="persistent"`` with ``refresh="next"`` its default.

    Memory: the table is ``(N, M, d)`` per run (M the padded shard size), e.g. 50 × 200 × 10 in
    float64 is 0.8 MB, times the seeds of a vmapped run. Non-private: ``privacy()`` returns
    ``None``.

    Static configuration: ``local_steps`` τ, ``batch_size`` b (minibatches from
    :func:`~jaxdp.algorithms._sampling.draw_batches`), ``table`` ("persistent" | "round"),
    ``refresh`` ("current" | "next"), and LT-ADMM's ``form`` ("edge" | "node"), ``variant`` of
    z_0 and ``x0``.
    """

    name: ClassVar[str] = "lt_admm_vr"
    cites = (
        "Ren, Bastianello, Johansson & Parisini 2026 (LT-ADMM-VR), reconstructed",
        "compared in paper 004",
    )
    provenance = "reconstruction"
    params_type: ClassVar[type] = LTADMMVRParams
    local_steps: int = 4
    batch_size: int = 8
    table: str = "persistent"
    refresh: str = "current"
    form: str = "edge"
    variant: str = "fixed"
    x0: str = "zero"

    def __post_init__(self):
        check_choice(self.name, "table", self.table, TABLES)
        check_choice(self.name, "refresh", self.refresh, REFRESHES)
        self._admm()  # checks local_steps, batch_size, form, variant and x0

    def _admm(self) -> LTADMM:
        """The LT-ADMM this runs the rounds of (its initialisation and exchange)."""
        return LTADMM(local_steps=self.local_steps, batch_size=self.batch_size, form=self.form,
                      variant=self.variant, x0=self.x0)

    def init(self, key, problem, network, params):
        base = self._admm().init(key, problem, network, params)
        state_type = LTADMMVREdgeState if self.form == "edge" else LTADMMVRNodeState
        return state_type(**dict(base.items()), table=all_sample_grads(problem, base.x))

    def noise(self, key, state, params, k):
        del params, k
        return {"batch": draw_batches(key, state.n_rows, self.batch_size, (self.local_steps,))}

    def step(self, state, noise, problem, network, params, k):
        del k
        z_sum = network.scatter_sum(state.z) if self.form == "edge" else state.y  # Σ_j z_ij
        table = state.table if self.table == "persistent" else all_sample_grads(problem, state.x)
        x_new, table = self._local_training(state, z_sum, table, noise["batch"], problem,
                                            network, params)
        exchange = bridge_update if self.form == "edge" else bridge_sums_update  # (5b)
        return exchange(state.replace(table=table), x_new, network, params)

    def validate(self, params, problem, network) -> None:
        """Base checks, then the minibatch size against every m_i (:func:`check_minibatch`)."""
        super().validate(params, problem, network)
        check_minibatch(self.name, problem, self.batch_size)

    def _local_training(self, state, z_sum, table, batches, problem, network, params):
        """τ SAGA steps from φ⁰ = x with the consensus term frozen at x_k (5a)."""
        x = state.x
        c = per_agent(params.beta, x) * (params.rho * network.degrees[:, None] * x - z_sum)
        gamma = per_agent(params.gamma, x)
        m_i = state.n_rows[:, None].astype(x.dtype)

        def local(carry, batch):
            phi, table = carry
            fresh = per_sample_grads(problem, phi, batch)  # (N, b, d) ∇f_{i,h}(φ^t)
            stale = jax.vmap(lambda t, idx: t[idx])(table, batch)  # T_{i,h}, h ∈ B
            g = jnp.mean(fresh - stale, axis=1) + jnp.sum(table, axis=1) / m_i  # SAGA
            phi_new = phi - gamma * g - c  # (5a)
            if self.refresh == "next":
                fresh = per_sample_grads(problem, phi_new, batch)
            table = jax.vmap(lambda t, idx, v: t.at[idx].set(v))(table, batch, fresh)
            return (phi_new, table), None

        (x_new, table), _ = jax.lax.scan(local, (x, table), batches)
        return x_new, table


__all__ = [
    "CostModel", "LTADMM", "LTADMMDP", "LTADMMDPParams", "LTADMMEdgeState", "LTADMMNodeState",
    "LTADMMVR", "LTADMMVRParams", "LTADMMVREdgeState", "LTADMMVRNodeState",
    "bridge_sums_update", "bridge_update", "paper_metrics", "soft_clip",
]
