"""DPP²: "Distributed Nonconvex Optimization with Double Privacy Protection and Exact Convergence",
Zichong Ou, Dandan Wang, Zixuan Liu & Jie Lu, 2025, arXiv 2511.02283.
Equation numbers below are the paper's.

A decentralized proximal primal–dual method with two tiers of privacy. Stacked form, X ``(N, d)``
(row i = agent i), P the ``(N, N)`` Laplacian-like matrix (L = P ⊗ I_d), G = αI − βL (15):

.. code-block:: text

    w^k = u_w r^k Lap(1),  e^k = u_e r^k Lap(1)       per agent and coordinate   Alg. 1 l.5
    y^k = x^k + (1 − η^k) d^k + w^k                    sent in round 1                 (16)
    z^k = ∇F(x^k) + η^k q^k + ρ P y^k + e^k            sent in round 2                 (17)
    x^{k+1} = x^k + w^k − α(z^k − e^k) + β P z^k       w kept, e removed from α-term   (18)
    d^{k+1} = η^k d^k + y^k,  q^{k+1} = η^k q^k + ρ P y^k                              (19)

with d⁰ = q⁰ = 0, x⁰ = 0 ([UNSPECIFIED] in the paper), and one scalar η^k ∈ (0, 1) per step shared
by all agents: random U(0, 1) ([UNSPECIFIED] distribution) or a constant. Tier 1 is the merging
with (d, q) weighted by η^k; tier 2 is the Laplace noise. The x-trajectory and the z-messages do
not depend on the η sequence (reduced form (20)–(21)), which the tests check.

Choices and variants:

* ``network.P`` is the paper's P (L = P ⊗ I). The default network P is ``I − W_MH``: the paper's
  (α, β) = (0.1, 0.05) need λ_max(P) < α/β = 2, and the raw Laplacian of the paper's graph has
  λ_max ≈ 19 (G indefinite, the iteration diverges). ``make_network(..., P="laplacian")`` etc.
  select the others; :meth:`DPP2.validate` rejects G ⊁ 0.
* ``eta_mode="random"`` (the paper's experiments) or ``"constant"`` (``DPP2Params.eta``);
  ``eta_stream`` selects an η sequence without changing the Laplace draws (common random numbers).
* ``u = 0`` gives the noise-free primal–dual method (Fig. 2's ū = 0); ``r = 0`` injects noise at
  k = 0 only, because 0⁰ = 1 (Fig. 1's r̄ = 0; [UNSPECIFIED] whether the authors meant this).

Errata (docs/errata.md, :mod:`jaxdp.algorithms.dpp2.privacy`): the update rules (16)–(19) are
implemented as printed. Theorem 3 omits the k = 0 release (ε = 0 after one step) and Corollary 1
is wrong; the privacy report's guarantee is the sound accounting of the releases at their
accumulated sensitivities (``"pure_dp"`` in log space, and dp-accounting's ``"pld"``), per agent
(relation ``"replace_agent"``, δ-adjacency assumed); the printed theorem
(``PAPER_PRINTED``) and the corrected one (``PAPER_CORRECTED``) are extra curves. The final models
are not covered: (18) removes the e-noise, so a released model reveals a noise-free gradient.
The convergence theory (24)–(27) is checked by :func:`theory_check`: the paper's experiment
violates it (α is ~100× too large, ρλ_min(P) < 1), and with ∇f ≡ 0 the noise-free dynamics
has determinant 1 on every disagreement mode, so Lemma 1 cannot hold as stated.

Shapes: N agents, d model dimension.
"""
from __future__ import annotations

import dataclasses
import math

import chex
import jax
import jax.numpy as jnp
import numpy as np

from jaxdp._types import AgentArray, per_agent
from jaxdp.algorithms.dpp2 import privacy as acc
from jaxdp.core import Algorithm, param, standard_draws, zeros_like_models
from jaxdp.privacy import (PAPER_CORRECTED, PAPER_PRINTED, Assumption, PrivacyReport, add_noise,
                           noise_draws)


# -- Params, State ------------------------------------------------------------------------------
@chex.dataclass(frozen=True)
class DPP2Params:
    alpha: float = param(0.1, domain="positive", per_agent=False, doc="α, G = αI − βL (15), (18)")
    beta: float = param(0.05, domain="positive", per_agent=False, doc="β, (15), (18)")
    rho: float = param(10.0, domain="positive", per_agent=False,
                       doc="ρ, penalty of the augmented Lagrangian, (17), (19)")
    u_w: float = param(1.0, domain="nonnegative",
                       doc="u_{w,i}, scale of w at k = 0, θ_w^k = u_w r^k, Alg. 1 l.5")
    u_e: float = param(1.0, domain="nonnegative",
                       doc="u_{e,i}, scale of e at k = 0, θ_e^k = u_e r^k, Alg. 1 l.5")
    r: float = param(0.95, domain="probability",
                     doc="r_i, noise decay rate shared by w and e, Alg. 1 l.5")
    eta: float = param(0.5, domain="probability", per_agent=False,
                       doc='η^k when eta_mode="constant", (16)–(19)')


@chex.dataclass(frozen=True)
class DPP2State:
    x: AgentArray  # (N, d) primal
    d: AgentArray  # (N, d) dual d (merged into y), (19)
    q: AgentArray  # (N, d) dual q = ρ P d (merged into z), (19)


# -- Algorithm ----------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class DPP2(Algorithm):
    """DPP², Algorithm 1 (two communication rounds per step: y, then z).

    Attributes:
      eta_mode: ``"random"`` (η^k ~ U(0, 1), i.i.d. per step) or ``"constant"`` (``params.eta``).
      eta_stream: which η sequence; the Laplace draws do not depend on it.
      adjacency: δ of Def. 1 (δ-adjacency) used by :meth:`privacy`; ε is proportional to it.
      sampler: ``"lattice"`` (default): y and z are released on the lattice γℤ^d, γ = θ^k/R,
        ``γ(round(v/γ) + K)`` with K discrete Laplace, private as floats (a zero θ^k, u = 0 or an
        underflowed u r^k, releases v itself, as the float sampler does; the report is then
        ``inf`` or astronomically large). ``"float"``: ``v + θ^k·Lap(1)`` in floating point (the
        report's guarantee is inf, the ideal curves kept). The lattice clamps ``|v|`` at
        ``L γ`` (2²⁴θ^k in float64, 64θ^k in float32): once θ^k = u r^k is that far below the
        iterates, releases saturate and the run no longer tracks the float one.
    """

    # jaxdp.privacy.contract.NOISE_OWNERS: each agent's releases carry its own fresh noise only
    noise_owner = "sender"
    name = "dpp2"
    cites = ("Ou, Wang, Liu & Lu 2025, arXiv 2511.02283 (DPP², paper 000), Algorithm 1",)
    provenance = "paper"
    params_type = DPP2Params
    eta_mode: str = "random"
    eta_stream: int = 0
    adjacency: float = 1.0
    sampler: str = "lattice"  # "lattice" (private as floats) or "float" (report: inf)

    def init(self, key, problem, network, params):
        del key, params
        x0 = zeros_like_models(problem, network)  # Alg. 1 l.2: d⁰ = q⁰ = 0, x⁰ arbitrary (0)
        return DPP2State(x=x0, d=jnp.zeros_like(x0), q=jnp.zeros_like(x0))

    def noise(self, key, state, params, k):
        """Standard Laplace ``w``, ``e`` ``(N, d)`` and the step's η^k ``()`` (own stream)."""
        del k
        draws = standard_draws(key, ("w", "e"), state.x.shape,
                               lambda kk, s: noise_draws(kk, s, state.x.dtype, law="laplace",
                                                         sampler=self.sampler))
        eta_key = jax.random.fold_in(jax.random.fold_in(key, 2), self.eta_stream)
        if self.eta_mode == "random":
            tiny = jnp.finfo(state.x.dtype).tiny
            eta = jax.random.uniform(eta_key, (), state.x.dtype, minval=tiny, maxval=1.0)
        else:
            eta = jnp.asarray(params.eta, state.x.dtype)
        return {**draws, "eta": eta}

    def noise_agent_axes(self, noise):
        """``w``, ``e``: agent i's rows; η^k is nobody's noise: a public input common to all nodes
        (the paper's proof gives the adversary {η^k}), so no agent's privacy rests on it."""
        return {"w": 0, "e": 0, "eta": None}

    def step(self, state, noise, problem, network, params, k):
        x, d, q, eta = state.x, state.d, state.q, noise["eta"]
        theta_w = _decayed(params.u_w, params.r, k, x)  # w_i^k ~ Lap(u_w r^k), Alg. 1 l.5
        theta_e = _decayed(params.u_e, params.r, k, x)  # e_i^k ~ Lap(u_e r^k), Alg. 1 l.5
        y_free = x + (1 - eta) * d
        y = self._laplace_release(y_free, theta_w, noise["w"])  # (16), Alg. 1 l.6
        w = y - y_free  # the w^k released (lattice: the rounding included)
        Py = network.apply_P(y, message="y")  # Σ_j p_ij y_j, communication round 1
        z_free = problem.local_grads(x) + eta * q + params.rho * Py  # z^k − e^k
        z = self._laplace_release(z_free, theta_e, noise["e"])  # (17), Alg. 1 l.7
        Pz = network.apply_P(z, message="z")  # Σ_j p_ij z_j, communication round 2
        x_new = x + w - params.alpha * z_free + params.beta * Pz  # (18), Alg. 1 l.8
        d_new = eta * d + y  # (19), Alg. 1 l.9
        q_new = eta * q + params.rho * Py  # (19), Alg. 1 l.10
        return DPP2State(x=x_new, d=d_new, q=q_new), {"y": y, "z": z}

    def _laplace_release(self, v, scale, z):
        """``v`` plus Laplace noise of ``scale`` (``(N, 1)``) from the standard draws ``z``: the
        float ``v + scale·z`` or the lattice release; where ``scale`` is 0, ``v`` itself."""
        if self.sampler == "float":
            return add_noise(v, scale, z, law="laplace", sampler="float")  # v + scale·z
        positive = scale > 0
        safe = jnp.where(positive, scale, jnp.ones_like(scale))
        return jnp.where(positive, add_noise(v, safe, z, law="laplace"), v)

    models_covered = False
    models_note = ("x^{k+1} = x^k + w^k − α(z^k − e^k) + βPz^k (18) removes the e-noise: given "
                   "the transcript, x^K = T(transcript) − α∇f_i(x^{K−1}), so one released model "
                   "reveals a noise-free gradient of agent i (ε = inf)")

    def account(self, problem, network, params, steps, *, delta):
        """The Laplace releases y^k, z^k, k < K, at their exact accumulated sensitivities.

        Sound curves: ``"pure_dp"`` (:func:`~jaxdp.algorithms.dpp2.privacy.dpp2_log_epsilon`, log
        space) and ``"pld"`` (dp-accounting, the same releases). The paper's Theorem 3 as printed
        (omits the k = 0 release; ε = 0 after one step) and corrected are extra curves. With
        ``u = 0`` or ``r = 0`` a release is noise-free: ε = inf.
        """
        setting = self.accounting_inputs(problem, network, params)
        contract = dict(relation="replace_agent", released=_RELEASED,
                        assumptions=self.assumptions(problem))
        noisy = min(np.min(setting["u_e"]), np.min(setting["u_w"]), np.min(setting["r"])) > 0
        if noisy and self.sampler == "lattice":  # y, z on γℤ^d: the rounding slack per release
            events = self.accounting.declare_releases(acc.dpp2_events(steps, **setting), problem,
                                           clipped=False, description=_LATTICE_DESCRIPTION)
            report = self.accounting.report(events, problem, network, params, steps,
                                 delta=delta, methods=("closed_form", "pld"),
                                 **contract)
        elif noisy:
            events = acc.dpp2_events(steps, **setting)
            report = PrivacyReport.from_events(events, delta=delta, methods=("pld",), **contract)
            log_eps = acc.dpp2_log_epsilon(steps, **setting)[:, report.steps - 1]
            with np.errstate(over="ignore"):
                report = report.with_curve(
                    "pure_dp", np.exp(log_eps), _PURE_NOTE, log10=log_eps / acc.LN10, sound=True)
        else:
            report = PrivacyReport.infinite(
                network.n_agents, steps, delta, "u = 0 or r = 0: a release without Laplace noise "
                "(z⁰ = ∇f_i(x⁰) + ρPy⁰ is sent in the clear at u_e = 0)", **contract)
        cols = report.steps - 1
        for name, variant, note in _THEOREM_CURVES:
            log_eps = acc.theorem3_log_epsilon_curve(steps, variant=variant, **setting)[:, cols]
            log_eps = np.broadcast_to(log_eps, (network.n_agents, cols.size))
            with np.errstate(over="ignore"):
                report = report.with_curve(name, np.exp(log_eps), note, log10=log_eps / acc.LN10)
        return report

    def assumptions(self, problem) -> tuple:
        """Def. 1's δ-adjacency (assumed of the neighbour) and M̄-smoothness (checked for f_i)."""
        return adjacency_assumptions(self.adjacency, problem)

    def validate(self, params, problem, network):
        """Base checks, scalar α, β, ρ, G = αI − βP ≻ 0 (15), and a known ``eta_mode``.

        Raises:
          ValueError: naming the bad value.
        """
        super().validate(params, problem, network)
        if self.eta_mode not in ("random", "constant"):
            raise ValueError(f"DPP2.eta_mode must be 'random' or 'constant'; got {self.eta_mode!r}")
        require_scalars(params, ("alpha", "beta", "rho", "eta"))
        lam_max = float(np.linalg.eigvalsh(network.base.dense("P"))[-1])  # either backend
        g_min = float(params.alpha) - float(params.beta) * lam_max
        if g_min <= 0:
            raise ValueError(
                f"DPP2Params: G = αI − βP must be positive definite (15): α − β·λ_max(P) = "
                f"{float(params.alpha):g} − {float(params.beta):g}·{lam_max:.4g} = {g_min:.4g} "
                "≤ 0; use a normalized P (make_network(..., P='I-W')) or a smaller β")

    def accounting_inputs(self, problem, network, params) -> dict:
        """Keyword arguments of :mod:`~jaxdp.algorithms.dpp2.privacy`'s Theorem-3 functions:
        d, δ (``adjacency``), α, M̄ = max_i M_i of the problem, and per-agent u_e, u_w, r (host).
        """
        n = network.n_agents
        vec = lambda v: np.broadcast_to(np.asarray(v, np.float64), (n,))  # noqa: E731
        return dict(d=problem.dim, delta=self.adjacency, alpha=float(params.alpha),
                    M=float(np.max(problem.smoothness())), u_e=vec(params.u_e),
                    u_w=vec(params.u_w), r=vec(params.r))


_THEOREM_CURVES = (
    (PAPER_PRINTED, "paper", "Theorem 3 as printed: ε = c̃ Σ_{k=1}^{K} r^{-k}, K = steps − 1 "
     "[ERRATUM: omits the k = 0 release of z, so ε = 0 after one step; needs αM̄ < 1]; "
     "δ-adjacency with δ = DPP2.adjacency"),
    (PAPER_CORRECTED, "corrected",
     "Theorem 3 with the k = 0 release: ε = c̃ Σ_{k=0}^{K} r^{-k} (c̃ bounds every S_k by "
     "1/(1 − αM̄); needs αM̄ < 1)"),
)
_RELEASED = ("agent i's y_i^k (16) and z_i^k (17) to its neighbours, k = 0..K−1, with η^k public; "
             "the final models are not covered")
_LATTICE_DESCRIPTION = ("y = x + (1-η)d + w  (16) and z = ∇f + ηq + ρPy + e  (17), each on the "
                        "lattice γℤ^d, γ = θ^k/R (discrete Laplace)")
_PURE_NOTE = ("pure ε-DP: Σ_k (Δ_y^k/θ_w^k + Δ_z^k/θ_e^k), basic composition, with the "
              "accumulated ℓ1 sensitivities Δ_y^k = √d α δ S_k, Δ_z^k = √d δ S_{k+1} of the "
              "matched-observation argument (App. A-A), S_k = (1 − (αM̄)^k)/(1 − αM̄); any αM̄")


def adjacency_assumptions(adjacency: float, problem) -> tuple:
    """The δ-adjacency of Def. 1 (assumed) and M̄-smoothness (checked on ``problem``'s f_i)."""
    M = float(np.max(problem.smoothness()))
    return (Assumption(f"Def. 1 δ-adjacency: sup_x ‖∇f_i(x) − ∇f_i′(x)‖₂ ≤ δ = {adjacency:g} for "
                       "the replaced agent", enforced=False,
                       how="a bound on the neighbour's data set: not checkable", holds=None),
            Assumption(f"f_i and its replacement f_i′ are M̄-smooth, M̄ = {M:.6g}", enforced=False,
                       how="M̄ = max_i M_i computed from this problem's data (holds for f_i); the "
                           "replacement's smoothness is assumed", holds=True))


def require_scalars(params, fields) -> None:
    """Raise ValueError naming the first of ``fields`` that is not a scalar (host check)."""
    for field in fields:
        if np.ndim(params[field]) != 0:
            raise ValueError(f"{type(params).__name__}.{field} must be a scalar (common to all "
                             f"agents); got shape {np.shape(params[field])}")


def _decayed(u, r, k, like):
    """θ^k = u_i r_i^k per agent, broadcast against ``like`` (N, d); 0⁰ = 1."""
    k = jnp.asarray(k, like.dtype)
    return per_agent(jnp.asarray(u, like.dtype) * jnp.power(jnp.asarray(r, like.dtype), k), like)


# -- convergence theory (§IV, (23)–(27)) -----------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class TheoryCheck:
    """Whether (α, β, ρ) on P with smoothness M̄ satisfy the conditions (24)–(27), and by how much.

    Attributes:
      lam_min, lam_max: smallest nonzero and largest eigenvalue of P (λ_L, λ̄_L); kappa_L.
      lam_G, lam_G_min: λ̄_G = α − βλ_L and λ_G = α − βλ̄_L; kappa_G; c_alpha = α/λ̄_G.
      alpha_max: ξ6/ξ7 = 1/(4(M̄ + 10.5 M̄²)), the largest α (27) allows.
      rho_min: the smallest ρ (25) allows over the free constants c̄_θ, γ (inf if none).
      lam_G_max: the largest λ̄_G (26) allows at the best c̄_θ, γ for this ρ (0 if none).
      conditions: name → bool for (15) G ≻ 0, (24), (25) ρ > max(ξ8, ξ9), (26), (27) α < ξ6/ξ7.
      satisfied: every condition holds for some c̄_θ, γ.
    """

    lam_min: float
    lam_max: float
    kappa_L: float
    lam_G: float
    lam_G_min: float
    kappa_G: float
    c_alpha: float
    alpha_max: float
    rho_min: float
    lam_G_max: float
    conditions: dict
    satisfied: bool

    def summary(self) -> str:
        """One line per condition with the margin."""
        c = self.conditions
        return "\n".join([
            f"(15) G ≻ 0: α − βλ̄_L = {self.lam_G_min:.4g} > 0 → {c['G_pd']}",
            f"(24) 1 < c̄_α = {self.c_alpha:.6g} < κ_L/(κ_L − 1) = "
            f"{self.kappa_L / (self.kappa_L - 1):.6g} → {c['c_alpha']}",
            f"(25) ρ > {self.rho_min:.4g} → {c['rho']}",
            f"(26) λ̄_G = {self.lam_G:.4g} < {self.lam_G_max:.4g} → {c['lam_G']}",
            f"(27) α < ξ6/ξ7 = {self.alpha_max:.4g} (α/bound = "
            f"{self.lam_G * self.c_alpha / self.alpha_max:.3g}) → {c['alpha']}",
        ])


def _xi(rho, c_theta, gamma, c_alpha, kappa_G, lam_min, lam_max, M):
    """ξ1..ξ9 of (23) (arrays broadcast over c̄_θ, γ)."""
    M2 = M * M
    xi1 = rho * lam_max / 2 * (1 / kappa_G - c_theta) - (1 + 3 * M2 / 4 + M2 * c_alpha / 2)
    xi2 = (0.5 * (1 + 1 / gamma) * rho**2 * lam_max + c_theta / 4 + 0.5 * c_theta * rho * lam_max
           + 11 / 4 + M2 * (2 / gamma + c_theta * rho * lam_max / 4 + c_theta**2 / 2))
    xi3 = c_theta / 2 - 5 * gamma / 2 - 1 / (rho**2 * lam_min**2)
    xi4, xi5 = c_theta**2 / 4, 7 * c_theta**2 / 4
    xi6, xi7 = 0.25, np.float64(M + 10.5 * M2)  # ξ6/ξ7 = inf for M̄ = 0
    xi8 = (4 + 3 * M2 + 2 * M2 * c_alpha) / (2 * lam_max * (1 / kappa_G - c_theta))
    with np.errstate(invalid="ignore", divide="ignore"):
        xi9 = 1 / np.sqrt(lam_min**2 * (c_theta / 2 - 5 * gamma / 2))
    return xi1, xi2, xi3, xi4, xi5, xi6, xi7, xi8, xi9


def _spectrum(P) -> tuple[float, float]:
    eig = np.linalg.eigvalsh(np.asarray(P, np.float64))
    return float(eig[1]), float(eig[-1])


def _free_constants(kappa_G: float, n: int = 60):
    """A grid of the proof's free constants: 0 < c̄_θ < 1/κ_G (24), 0 < γ < c̄_θ/5 (24)."""
    frac = (np.arange(1, n) / n)
    c_theta = frac[:, None] / kappa_G
    return c_theta, frac[None, :] * c_theta / 5


def theory_check(alpha: float, beta: float, rho: float, P, M: float) -> TheoryCheck:
    """Check the paper's parameter conditions (24)–(27) for given (α, β, ρ), P and M̄.

    The conditions involve free proof constants c̄_θ ∈ (0, 1/κ_G) and γ ∈ (0, c̄_θ/5); they are
    searched on a grid and the most favourable values are reported.

    Example:
      >>> chk = theory_check(0.1, 0.05, 10.0, net.P, 5.03)   # the paper's Figs. 1–2
      >>> chk.satisfied, chk.alpha_max                        # (False, 9.24e-4)
    """
    lam_min, lam_max = _spectrum(P)
    kappa_L = lam_max / lam_min
    lam_G, lam_G_min = alpha - beta * lam_min, alpha - beta * lam_max  # (22)
    alpha_max = 0.25 / (M + 10.5 * M * M) if M > 0 else math.inf  # ξ6/ξ7, (27)
    conditions = {"G_pd": lam_G_min > 0, "alpha": alpha < alpha_max}
    c_alpha = alpha / lam_G if lam_G > 0 else math.inf
    conditions["c_alpha"] = bool(1 < c_alpha < kappa_L / (kappa_L - 1))  # (24)
    rho_min, lam_G_max = math.inf, 0.0
    if conditions["G_pd"] and conditions["c_alpha"]:
        kappa_G = lam_G / lam_G_min
        c_theta, gamma = _free_constants(kappa_G)
        xi1, xi2, xi3, xi4, xi5, xi6, xi7, xi8, xi9 = _xi(
            rho, c_theta, gamma, c_alpha, kappa_G, lam_min, lam_max, M)
        rho_min = float(np.min(np.maximum(xi8, xi9)))  # (25) at the best c̄_θ, γ
        with np.errstate(invalid="ignore", divide="ignore"):
            root = (-xi4 + np.sqrt(xi4**2 + 4 * xi3 * xi5)) / (2 * xi5)
            bound = np.minimum(np.minimum(xi1 / xi2, root), xi6 / (c_alpha * xi7))  # (26)
        ok = rho > np.maximum(xi8, xi9)
        lam_G_max = float(np.max(np.where(ok, np.nan_to_num(bound, nan=0.0), 0.0)))
    else:
        kappa_G = math.inf
    conditions["rho"] = rho > rho_min
    conditions["lam_G"] = 0 < lam_G < lam_G_max
    conditions = {k: bool(v) for k, v in conditions.items()}
    return TheoryCheck(lam_min, lam_max, kappa_L, lam_G, lam_G_min, kappa_G, c_alpha, alpha_max,
                       rho_min, lam_G_max, conditions, all(conditions.values()))


def theory_params(P, M: float, *, c_alpha_frac: float = 0.5, c_theta_frac: float = 0.5,
                  gamma_frac: float = 0.5, rho_factor: float = 1.5, margin: float = 0.9,
                  **noise) -> DPP2Params:
    """(α, β, ρ) inside the proven regime, by the paper's selection procedure (24)–(27).

    1. κ_L from P; c̄_α a fraction of the way from 1 to κ_L/(κ_L−1), then κ_G (24).
    2. c̄_θ = c_theta_frac/κ_G and γ = gamma_frac·c̄_θ/5 (24); ρ = rho_factor·max(ξ8, ξ9) (25).
    3. λ̄_G = margin × the bound (26); α = c̄_α λ̄_G, β = (α − λ̄_G)/λ_L (27).

    Args:
      P: ``(N, N)`` Laplacian-like matrix.
      M: smoothness M̄ (0 allowed).
      noise: further DPP2Params fields (u_w, u_e, r, eta).

    Returns:
      ``DPP2Params`` whose (α, β, ρ) pass :func:`theory_check`.
    """
    lam_min, lam_max = _spectrum(P)
    kappa_L = lam_max / lam_min
    c_alpha = 1 + c_alpha_frac * (kappa_L / (kappa_L - 1) - 1)  # (24)
    kappa_G = 1 / (kappa_L - (kappa_L - 1) * c_alpha)  # from λ_G = (κ_L − (κ_L−1)c̄_α) λ̄_G
    c_theta = c_theta_frac / kappa_G
    gamma = gamma_frac * c_theta / 5
    *_, xi8, xi9 = _xi(1.0, c_theta, gamma, c_alpha, kappa_G, lam_min, lam_max, M)
    rho = rho_factor * max(xi8, xi9)  # (25)
    xi1, xi2, xi3, xi4, xi5, xi6, xi7, _, _ = _xi(rho, c_theta, gamma, c_alpha, kappa_G,
                                                  lam_min, lam_max, M)
    root = (-xi4 + math.sqrt(xi4**2 + 4 * xi3 * xi5)) / (2 * xi5)
    with np.errstate(divide="ignore"):
        lam_G = margin * min(xi1 / xi2, root, xi6 / (c_alpha * xi7))  # (26)
    alpha = c_alpha * lam_G  # (23)
    beta = (alpha - lam_G) / lam_min  # (27)
    return DPP2Params(alpha=alpha, beta=beta, rho=rho, **noise)


__all__ = ["DPP2", "DPP2Params", "DPP2State", "TheoryCheck", "require_scalars", "theory_check",
           "theory_params"]
