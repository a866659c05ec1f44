"""DP-RECAL's privacy accounting: zCDP per activation, PLF composition, (ε, δ), σ₁ calibration.

Paper 003 (Wang, Guo, Yang & Shi, "Differentially Private Decentralized Optimization with Relay
Communication", 2024), §V.

* Lemma 5: sensitivity of the transmitted ``u`` is ``Δ = 4αβc`` with ``α = max_i α_i``
  (``kind="paper"``); the per-agent value ``Δ_i = 2α_iβc`` (``kind="tight"``) keeps the same
  history-fixed argument.
* Lemma 6: the τ-th activation of an agent is ``ρ_τ``-zCDP, ``ρ_τ = 8α²β²c²/σ_τ² = Δ²/(2σ_τ²)``,
  with ``σ_τ² = σ₁² R^{−(τ−1)}``.
* Theorem 1: an agent's activations compose additively, agents in parallel: the overall budget is
  the composition of the first ``Θ_K`` = PLF activations.
* Theorem 4: ``ρ = ρ₁ (R^ξ − 1)/(R − 1)`` with ξ = PLF, then ``ε = ρ + 2√(ρ ln(1/δ))``
  (Bun–Steinke Prop. 1.3).
* Inverse calibration: ``ρ_tot = (√(ε + ln 1/δ) − √(ln 1/δ))²``,
  ``ρ₁ = ρ_tot (R−1)/(R^ξ−1)``, ``σ₁ = Δ/√(2ρ₁)``.

**Soundness.** Lemma 5 fixes the sender's history: it charges one release for the current gradient
only. The released vectors of DP-RECAL and of the reconstructed baselines carry hidden state that
already depends on the agent's data, so the guarantees of the algorithms use instead the
sensitivity of each release *given the transcript so far* (:func:`nids_sensitivity`,
:func:`extra_sensitivity`, :func:`rwadmm_sensitivity`, :func:`mradmm_solve_sensitivity`): by
adaptive composition, Gaussian releases ``r_k = F_k(transcript_{<k}, D) + σ_k ξ_k`` compose as
Gaussians with ``Δ_k = sup ‖F_k(·, D) − F_k(·, D′)‖``. Theorem 4 with Lemma 5's Δ stays as the
paper's curve (:func:`theorem4_curve`).

Everything is computed in log space (σ₁ reaches 1e40 at ξ = 2000, R = 1.1) with pure
``jnp`` so that it is vmappable and differentiable in ``log σ₁`` and ``log R``. ``log R = 0``
(constant noise) is the limit ``(R^ξ − 1)/(R − 1) = ξ``.

The same geometric schedule, indexed by each agent's release count, is used by the DP baselines of
``recal/baselines.py`` (their noise placement is reconstructed), so the one accountant
serves the whole comparison at matched ε (Tables IV and V).
"""
from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np

from jaxdp._types import Array
from jaxdp.privacy import PAPER_PRINTED, Assumption, PrivacyEvents, PrivacyReport, clip_by_norm
from jaxdp.privacy.closed_forms import zcdp_for_epsilon, zcdp_to_dp

SENSITIVITIES = ("paper", "tight")


def log_expm1(a) -> Array:
    """``log(e^a − 1)`` for ``a > 0``, exact for large ``a`` (no overflow)."""
    a = jnp.asarray(a)
    big = a > 30.0
    safe = jnp.where(big, 1.0, a)
    return jnp.where(big, a + jnp.log1p(-jnp.exp(-jnp.where(big, a, 30.0))),
                     jnp.log(jnp.expm1(safe)))


def log_geometric_sum(count, log_R) -> Array:
    """``log Σ_{t=1}^{τ} R^{t−1} = log((R^τ − 1)/(R − 1))``; ``log τ`` when ``log R = 0``.

    Args:
      count: τ ≥ 1, any shape (the number of activations composed).
      log_R: ``log R ≥ 0``, broadcastable with ``count``.
    """
    count = jnp.asarray(count, jnp.result_type(float))
    log_R = jnp.asarray(log_R, count.dtype)
    flat = log_R <= 0.0
    safe = jnp.where(flat, 1.0, log_R)
    return jnp.where(flat, jnp.log(count), log_expm1(count * safe) - log_expm1(safe))


def sensitivity(alpha, beta, c, kind: str = "paper") -> Array:
    """ℓ2 sensitivity of one transmitted ``ũ`` (Lemma 5): scalar (``"paper"``), (N,) (``"tight"``).

    Args:
      alpha: α, scalar or (N,) per-agent steps.
      beta: β.
      c: the gradient bound of Assumption 3.
      kind: ``"paper"``: ``4 max_i α_i β c`` (Lemma 5); ``"tight"``: ``2 α_i β c`` (``λ_i⁺ − λ_i =
        β(x⁺ − y_i⁺)`` and x⁺ does not depend on the current gradient). Both fix the history.

    Raises:
      ValueError: an unknown ``kind``.
    """
    if kind == "paper":
        return 4.0 * jnp.max(jnp.asarray(alpha)) * beta * c  # Lemma 5
    if kind == "tight":
        return 2.0 * jnp.asarray(alpha) * beta * c  # per agent, history fixed
    raise ValueError(f"sensitivity kind must be one of {SENSITIVITIES}; got {kind!r}")


def log_sigma(log_sigma1, log_R, count) -> Array:
    """``log σ_τ = log σ₁ − (τ−1) log R / 2`` (Alg. 1: σ²_τ = R σ²_{τ+1})."""
    return jnp.asarray(log_sigma1) - 0.5 * (jnp.asarray(count) - 1) * jnp.asarray(log_R)


def log_rho1(sens, log_sigma1) -> Array:
    """``log ρ₁``, ``ρ₁ = Δ²/(2σ₁²) = 8α²β²c²/σ₁²`` (Lemma 6)."""
    return 2.0 * jnp.log(sens) - jnp.log(2.0) - 2.0 * jnp.asarray(log_sigma1)


def zcdp_after(plf, *, sens, log_sigma1, log_R) -> Array:
    """ρ after ``plf`` activations: ``ρ₁ (R^ξ − 1)/(R − 1)`` (Theorem 4's proof); 0 for ξ = 0."""
    plf = jnp.asarray(plf)
    log_rho = log_rho1(sens, log_sigma1) + log_geometric_sum(jnp.maximum(plf, 1), log_R)
    return jnp.where(plf > 0, jnp.exp(log_rho), 0.0)


def epsilon_after(plf, *, sens, log_sigma1, log_R, delta) -> Array:
    """Theorem 4: ``ε = ρ + 2√(ρ ln(1/δ))`` after ``plf`` activations (any shape, e.g. (N,) τ_i)."""
    return zcdp_to_dp(zcdp_after(plf, sens=sens, log_sigma1=log_sigma1, log_R=log_R), delta)


def calibrate_log_sigma1(epsilon, delta, plf, *, sens, log_R) -> Array:
    """The ``log σ₁`` at which ξ = ``plf`` activations spend exactly ``(ε, δ)`` (Theorem 4
    inverted).

    ``ρ_tot = (√(ε + ln 1/δ) − √(ln 1/δ))²``, ``ρ₁ = ρ_tot (R−1)/(R^ξ−1)``, ``σ₁ = Δ/√(2ρ₁)``,
    in log space: ``σ₁`` of 1e40 and beyond stay exact. Pure jnp (differentiable in every argument).
    """
    log_rho_1 = jnp.log(zcdp_for_epsilon(epsilon, delta)) - log_geometric_sum(plf, log_R)
    return jnp.log(sens) - 0.5 * (jnp.log(2.0) + log_rho_1)


def calibrate_log_sigma1_schedule(epsilon, delta, sens, *, log_R) -> Array:
    """``log σ₁`` at which releases with sensitivities ``sens`` (K,) spend exactly ``(ε, δ)``.

    For a sensitivity that changes with the release count t (decaying steps: Tables IV/V's
    PLF-2000 rows): ``Σ_t Δ_t²/(2σ_t²) = ρ_tot`` with ``σ_t² = σ₁² R^{−(t−1)}`` gives
    ``σ₁² = Σ_t Δ_t² R^{t−1} / (2ρ_tot)``, a log-sum-exp. Equals :func:`calibrate_log_sigma1`
    for a constant Δ.
    """
    sens = jnp.asarray(sens)
    t = jnp.arange(sens.shape[-1], dtype=sens.dtype)
    log_sum = jax.nn.logsumexp(2.0 * jnp.log(sens) + t * jnp.asarray(log_R), axis=-1)
    return 0.5 * (log_sum - jnp.log(2.0) - jnp.log(zcdp_for_epsilon(epsilon, delta)))


def release_events(n_agents: int, releases: int, *, sens, log_sigma1, log_R,
                   description: str) -> PrivacyEvents:
    """Gaussian events of ``releases`` activations per agent with the geometric schedule.

    Args:
      n_agents: N.
      releases: activations (releases) per agent, K ≥ 1.
      sens: ℓ2 sensitivity, scalar, (N,) or (N, K) (a per-release schedule).
      log_sigma1, log_R: the schedule (host floats).
      description: what is released.
    """
    tau = np.arange(1, releases + 1, dtype=np.float64)
    log_scale = float(log_sigma1) - 0.5 * (tau - 1.0) * float(log_R)
    return PrivacyEvents.from_schedule("gaussian", _per_release(sens, n_agents, releases), None,
                                       n_agents, releases, log_scale=log_scale[None, :],
                                       description=description)


def _per_release(sens, n_agents: int, releases: int) -> np.ndarray:
    """Sensitivities as (N, K) float64: scalar or (N,) constant over releases, or (N, K)."""
    sens = np.asarray(sens, np.float64)
    if sens.ndim == 1:
        sens = sens[:, None]
    return np.broadcast_to(sens, (n_agents, releases))


def theorem4_curve(n_agents: int, releases, *, sens, log_sigma1, log_R, delta):
    """Paper 003's Theorem 4 (Lemma 6 composed over an agent's releases), in log space.

    Args:
      n_agents: N.
      releases: (K',) release counts ξ at which to evaluate it (0 gives ε = 0).
      sens: Lemma 5's Δ: scalar, (N,), or an (N, K) per-release schedule (then Lemma 6 is summed
        release by release, Theorem 1, since Theorem 4's geometric sum needs a constant Δ).
      log_sigma1, log_R, delta: the schedule and δ.

    Returns:
      ``(eps, log10_eps)``, both (N, K'): ``ε = ρ + 2√(ρ ln 1/δ)``, ``ρ = Σ_t Δ_t²/(2σ_t²)``.
    """
    xi = np.asarray(releases, np.int64)
    if np.ndim(sens) == 2:
        sens = np.asarray(sens, np.float64)
        log_terms = (np.asarray(log_rho1(sens, log_sigma1))
                     + np.arange(sens.shape[1]) * float(log_R))  # log ρ_t = log ρ₁(t) + (t−1) log R
        cum = np.logaddexp.accumulate(log_terms, axis=1)
        log_rho = np.where(xi > 0, cum[:, np.maximum(xi, 1) - 1], -np.inf)
    else:
        sens_n = np.broadcast_to(np.asarray(sens, np.float64), (n_agents,))
        log_rho = (np.asarray(log_rho1(sens_n[:, None], log_sigma1))
                   + np.asarray(log_geometric_sum(np.maximum(xi, 1)[None, :].astype(float),
                                                  log_R)))
        log_rho = np.where(xi > 0, log_rho, -np.inf)
    log_l = math.log(1.0 / delta)
    # log ε = log ρ + log(1 + 2√(ln(1/δ)/ρ)), exact where ρ overflows
    safe = np.where(np.isfinite(log_rho), log_rho, 0.0)
    with np.errstate(over="ignore"):
        log_eps = np.where(np.isfinite(log_rho),
                           safe + np.log1p(2.0 * np.sqrt(log_l * np.exp(-safe))), -np.inf)
    return np.exp(log_eps), log_eps / math.log(10.0)


THEOREM4_NOTE = ("paper 003 Theorem 4: ρ = ρ₁(R^ξ−1)/(R−1), ρ₁ = Δ²/(2σ₁²) (Lemma 6), "
                 "ε = ρ + 2√(ρ ln 1/δ), ξ = the agent's releases (Theorem 1: the PLF), with Δ "
                 "from Lemma 5's history-fixed argument: not a bound on what is released")


def geometric_report(n_agents: int, releases: int, *, sens, log_sigma1, log_R, delta,
                     description: str, methods=("closed_form", "rdp", "pld"),
                     paper_sens=None, **contract) -> PrivacyReport:
    """Sound curves of Gaussian releases with the geometric schedule, plus Theorem 4.

    Args:
      n_agents: N.
      releases: K, releases per agent (the report's step axis).
      sens: the sensitivity of each release *given the transcript*: scalar, (N,) or (N, K).
      log_sigma1, log_R, delta: the schedule and δ.
      description: what is released.
      methods: the accountants (see :meth:`PrivacyReport.from_events`).
      paper_sens: the Δ for the :data:`PAPER_PRINTED` Theorem 4 curve (default ``sens``).
      **contract: ``relation``, ``released``, ``assumptions``.
    """
    events = release_events(n_agents, releases, sens=sens, log_sigma1=log_sigma1, log_R=log_R,
                            description=description)
    report = PrivacyReport.from_events(events, delta, methods=methods, **contract)
    eps, log10 = theorem4_curve(n_agents, report.steps, sens=sens if paper_sens is None
                                else paper_sens, log_sigma1=log_sigma1, log_R=log_R, delta=delta)
    return report.with_curve(PAPER_PRINTED, eps, THEOREM4_NOTE, log10=log10)


def step_events(sens, log_scale, description: str) -> PrivacyEvents:
    """Gaussian events over engine steps: ``sens`` (N, K) (0 where nothing private is released)
    and ``log_scale`` (K,) or (N, K), the log noise scale of each step's release."""
    sens = np.asarray(sens, np.float64)
    n, k = sens.shape
    log_scale = np.broadcast_to(np.asarray(log_scale, np.float64), (n, k))
    return PrivacyEvents.from_schedule("gaussian", sens, None, n, k, log_scale=log_scale,
                                       description=description)


def release_log_scale(count, log_sigma1, log_R) -> np.ndarray:
    """Host: ``log σ_t`` at release counts ``count`` (any shape; counts < 1 read as 1)."""
    count = np.maximum(np.asarray(count, np.float64), 1.0)
    return float(log_sigma1) - 0.5 * (count - 1.0) * float(log_R)


# -- sensitivities of what is released, given the transcript --------------------------------
ENFORCE_NOTE = ("the step uses clip_by_norm(∇f_i(x), c) wherever paper 003's ∇f_i(x) enters "
                "(Assumption 3: ‖∇f_i(x)‖ ≤ c for every x), so any two data sets of one agent "
                "give ‖δg‖ ≤ 2c for ANY data; where Assumption 3 holds the clip is the identity "
                "and the step is the paper's")
"""How the family enforces Assumption 3 (``enforce_bound=True``, the default)."""


def bounded_gradient(g: Array, c, enforce: bool) -> Array:
    """``clip_by_norm(g, c)`` row by row where ``enforce`` (static), else ``g`` unchanged.

    Paper 003's Assumption 3 (‖∇f_i(x)‖ ≤ c for every x) is what every sensitivity of this
    module rests on; clipping each gradient the step uses makes it hold for any data, and is
    the identity wherever the assumption already holds (``‖g‖ ≤ c``).
    """
    return clip_by_norm(g, c) if enforce else g


def gradient_assumption(problem, c: float, *, enforced: bool = True) -> Assumption:
    """Paper 003's Assumption 3, ``‖∇f_i(x)‖ ≤ c`` for every x: enforced by the step's clip
    (:func:`bounded_gradient`, ``enforced=True``), or, for the paper's unclipped step, proven
    only by a bound over all x of the loss on this data (``problem.gradient_bound()``: the
    logistic loss on records ‖a‖ ≤ c without ridge); a value at one point proves nothing, so
    a loss with no such bound (least squares, a ridge term) fails the check: ε = inf.
    """
    statement = (f"‖∇f_i(x)‖₂ ≤ c = {c:g} for every x and every admissible f_i (paper 003 "
                 "Assumption 3), so any two data sets of one agent give ‖∇f_i − ∇f_i′‖ ≤ 2c")
    if enforced:
        return Assumption(statement, enforced=True, holds=True, how=ENFORCE_NOTE)
    if problem is None:
        return Assumption(statement, enforced=False, how="no problem given", holds=None)
    sup = float(np.max(problem.gradient_bound()))
    return Assumption(statement, enforced=False, holds=sup <= c * (1.0 + 1e-9),
                      how=f"not clipped (enforce_bound=False); the loss's bound for every x on "
                          f"this problem's data: sup_x max_i ‖∇f_i(x)‖ ≤ {sup:.4g}",
                      remedy=GRADIENT_REMEDY)


GRADIENT_REMEDY = ("keep the step's clip (enforce_bound=True, the default), declare a larger "
                   "public gradient bound c in the Params (known before seeing the data, never "
                   "read from it), or run on a loss whose gradient is bounded by c for every x "
                   "(e.g. the logistic loss without ridge on records normalised to ‖a‖₂ ≤ c)")
"""What to change when :func:`gradient_assumption` fails (the reason of the ``inf`` report)."""


def prox_residual_bound(problem, step) -> float:
    """ℓ2 bound on ``δp = (z − prox(z)) − (z′ − prox(z′))`` for the ℓ1 prox of step ``step``.

    Soft thresholding at ``t = step·l1`` leaves ``z − prox(z) = clip(z, −t, t)``, so each
    coordinate of δp lies in ``[−2t, 2t]``: ``‖δp‖ ≤ 2t√d``; 0 without an ℓ1 term.
    """
    loss = problem.loss
    if loss.l1_key is None:
        return 0.0
    t = float(np.max(np.asarray(step, np.float64))) * float(np.asarray(problem.reg[loss.l1_key]))
    return 2.0 * t * math.sqrt(problem.dim)


class _Linear:
    """Differences as linear forms in free perturbations ``δg^0..δg^K`` (``‖·‖ ≤ 2c``) and
    ``δp^0..δp^K`` (``‖·‖ ≤ P``), with per-agent scalar coefficients: (N, 2(K+1)) arrays."""

    def __init__(self, n: int, k: int):
        self.n, self.k = n, k

    def zero(self) -> np.ndarray:
        return np.zeros((self.n, 2 * (self.k + 1)))

    def g(self, j: int) -> np.ndarray:
        out = self.zero()
        out[:, j] = 1.0
        return out

    def p(self, j: int) -> np.ndarray:
        out = self.zero()
        out[:, self.k + 1 + j] = 1.0
        return out

    def bound(self, form, c: float, prox: float) -> np.ndarray:
        """(N,) ``2c Σ|coef_g| + P Σ|coef_p|``: the triangle inequality."""
        a = np.abs(form)
        return 2.0 * c * a[:, :self.k + 1].sum(1) + prox * a[:, self.k + 1:].sum(1)


def nids_sensitivity(w_diag, alpha: float, c: float, steps: int, prox: float = 0.0) -> np.ndarray:
    """(N, K) ℓ2 sensitivity of DP-NIDS's ṽ_i^k at engine steps k = 0..K−1 (0 at k = 0).

    With ``a = (1 + W_ii)/2`` the agent's own weight in ``W̃`` (its exact v enters its own z),
    ``x^k = z^k − p^k`` (p the prox residual), ``z¹ = x⁰ − α g⁰`` and
    ``z^{k+1} = p^k + a v^k``, ``v^k = 2x^k − x^{k−1} − α(g^k − g^{k−1})``: every difference
    is linear in the gradient differences δg^j (‖·‖ ≤ 2c) and residual differences δp^j
    (‖·‖ ≤ ``prox``). The first release alone has Δ = 4αc, twice Lemma 5's history-fixed 2αc.
    """
    w = np.asarray(w_diag, np.float64)
    n = w.size
    a = ((1.0 + w) / 2.0)[:, None]
    lin = _Linear(n, steps)
    sens = np.zeros((n, steps))
    x_prev, z = lin.zero(), -alpha * lin.g(0)
    for k in range(1, steps):
        x = z - lin.p(k)
        v = 2 * x - x_prev - alpha * (lin.g(k) - lin.g(k - 1))
        sens[:, k] = lin.bound(v, c, prox)
        z, x_prev = lin.p(k) + a * v, x
    return sens


def extra_sensitivity(w_diag, alpha: float, c: float, steps: int, prox: float = 0.0) -> np.ndarray:
    """(N, K) ℓ2 sensitivity of DP-EXTRA's x̃_i^k at engine steps k = 0..K−1 (0 at k = 0).

    PG-EXTRA with own exact values: ``z¹ = (W x⁰)_i − α g⁰``,
    ``z^{k+1} = z^k + W_ii x^k − a x^{k−1} − α(g^k − g^{k−1})`` (a = (1 + W_ii)/2) and
    ``x^k = prox(z^k) = z^k − p^k``; the release's difference is at most
    ``min(‖δz^k‖, ‖δz^k − δp^k‖)`` bounds (the prox is non-expansive). Releases 2 and 3 exceed
    Lemma 5's 2αc (by 1 + W_ii at release 2).
    """
    w = np.asarray(w_diag, np.float64)[:, None]
    n = w.shape[0]
    a = (1.0 + w) / 2.0
    lin = _Linear(n, steps)
    sens = np.zeros((n, steps))
    x_prev, z = lin.zero(), -alpha * lin.g(0)
    for k in range(1, steps):
        x = z - lin.p(k)
        sens[:, k] = np.minimum(lin.bound(z, c, prox), lin.bound(x, c, prox))
        z, x_prev = z + w * x - a * x_prev - alpha * (lin.g(k) - lin.g(k - 1)), x
    return sens


def rwadmm_sensitivity(n_agents: int, beta: float, c: float, steps: int) -> np.ndarray:
    """(K,) ℓ2 sensitivity, for one agent's data, of the token z̃ released at iterations 1..K.

    Walkman's linearized dual gives ``λ_i⁺ = −∇f_i(y_i)``, so the hidden, clean running average
    ``t = (1/n)Σ_j (y_j + λ_j/β)`` holds agent i's term ``z̃_i − (2g_i^{(m)} − g_i^{(m−1)})/β``
    after its m-th activation (z̃_i is in the transcript, g^{(0)} = 0): every token released
    after agent i's first activation, by whichever holder, differs by at most ``4c/(nβ)`` (first
    activation) then ``6c/(nβ)``, through ``prox_{r/β}`` (non-expansive). The worst walk puts
    agent i first; a later first activation is dominated release by release.
    """
    sens = np.full(steps, 6.0 * c / (n_agents * beta))
    sens[0] = 4.0 * c / (n_agents * beta)
    return sens


def mradmm_solve_sensitivity(gamma, rho_deg, c: float, local_steps: int) -> np.ndarray:
    """ℓ2 sensitivity of ``local_steps`` gradient steps of size γ on
    ``f_i + ⟨p_i, ·⟩ + ρ_k Σ_j‖· − (x_i + x_j)/2‖²`` from the released x_i (DP-MRADMM's odd step).

    The iterates' difference obeys ``e⁺ = (1 − 2γρ_k d_i) e − γ δ∇f`` with ‖δ∇f‖ ≤ 2c whatever
    the iterates, so ``‖e_T‖ ≤ 2γc Σ_{s<T} q^s``, ``q = |1 − 2γρ_k d_i|`` (→ c/(ρ_k d_i), the
    exact argmin's, when q < 1 and T → ∞). Shapes broadcast.
    """
    gamma = np.asarray(gamma, np.float64)
    q = np.abs(1.0 - 2.0 * gamma * np.asarray(rho_deg, np.float64))
    total = np.where(np.isclose(q, 1.0), float(local_steps),
                     (1.0 - q ** local_steps) / np.where(np.isclose(q, 1.0), 0.5, 1.0 - q))
    return 2.0 * gamma * c * total


def plf_epsilon_table(plf_values, *, sens, log_sigma1, log_R, delta) -> np.ndarray:
    """Host: ε (Theorem 4) at each realised PLF, float64 (``inf`` where it overflows)."""
    with np.errstate(over="ignore"):
        return np.asarray(epsilon_after(np.asarray(plf_values, np.float64), sens=sens,
                                        log_sigma1=log_sigma1, log_R=log_R, delta=delta))


__all__ = [
    "ENFORCE_NOTE", "SENSITIVITIES", "THEOREM4_NOTE", "bounded_gradient", "calibrate_log_sigma1", "calibrate_log_sigma1_schedule",
    "epsilon_after", "extra_sensitivity", "geometric_report", "gradient_assumption",
    "mradmm_solve_sensitivity", "nids_sensitivity", "prox_residual_bound", "release_log_scale",
    "rwadmm_sensitivity", "step_events", "theorem4_curve",
    "log_expm1", "log_geometric_sum", "log_rho1", "log_sigma", "plf_epsilon_table",
    "release_events", "sensitivity", "zcdp_after",
]
