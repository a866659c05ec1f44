"""DP-RECAL's privacy accounting: zCDP per activation, PLF composition, (ε, δ), σ₁ calibration.

Paper 003 (Wang, Guo, Yang & Shi, "Differentially Private Decentralized Optimization with Relay
Communication", 2024), notes ``papers/notes/003_dprecal.md`` §4.

* Lemma 5: sensitivity of the transmitted ``u`` is ``Δ = 4αβc`` with ``α = max_i α_i``
  (``kind="paper"``); the notes' tight value is ``Δ_i = 2α_iβc`` (``kind="tight"``, §4.4).
* Lemma 6: the τ-th activation of an agent is ``ρ_τ``-zCDP, ``ρ_τ = 8α²β²c²/σ_τ² = Δ²/(2σ_τ²)``,
  with ``σ_τ² = σ₁² R^{−(τ−1)}``.
* Theorem 1: an agent's activations compose additively, agents in parallel: the overall budget is
  the composition of the first ``Θ_K`` = PLF activations.
* Theorem 4: ``ρ = ρ₁ (R^ξ − 1)/(R − 1)`` with ξ = PLF, then ``ε = ρ + 2√(ρ ln(1/δ))``
  (Bun–Steinke Prop. 1.3).
* Inverse calibration (notes §4.2): ``ρ_tot = (√(ε + ln 1/δ) − √(ln 1/δ))²``,
  ``ρ₁ = ρ_tot (R−1)/(R^ξ−1)``, ``σ₁ = Δ/√(2ρ₁)``.

Everything is computed in log space (σ₁ reaches 1e40 at ξ = 2000, R = 1.1: notes §4.2) with pure
``jnp`` so that it is vmappable and differentiable in ``log σ₁`` and ``log R``. ``log R = 0``
(constant noise) is the limit ``(R^ξ − 1)/(R − 1) = ξ``.

The same geometric schedule, indexed by each agent's release count, is used by the DP baselines of
``recal_baselines.py`` (their noise placement is reconstructed, notes §3.6), so the one accountant
serves the whole comparison at matched ε (Tables IV and V).
"""
from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np

from jaxdp._types import Array
from jaxdp.privacy import PrivacyEvents, PrivacyReport, zcdp_for_epsilon, zcdp_to_dp

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
      kind: ``"paper"``: ``4 max_i α_i β c`` (Lemma 5); ``"tight"``: ``2 α_i β c`` (notes §4.4:
        ``λ_i⁺ − λ_i = β(x⁺ − y_i⁺)`` and x⁺ does not depend on the current gradient).

    Raises:
      ValueError: an unknown ``kind``.
    """
    if kind == "paper":
        return 4.0 * jnp.max(jnp.asarray(alpha)) * beta * c  # Lemma 5
    if kind == "tight":
        return 2.0 * jnp.asarray(alpha) * beta * c  # notes §4.4
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
    """The ``log σ₁`` at which ξ = ``plf`` activations spend exactly ``(ε, δ)`` (notes §4.2).

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


def geometric_report(n_agents: int, releases: int, *, sens, log_sigma1, log_R, delta,
                     description: str, methods=("closed_form", "rdp")) -> PrivacyReport:
    """``PrivacyReport`` over release counts 1..K: the generic accountants of the events plus the
    paper's Theorem 4 closed form (``"theorem"``), computed in log space.

    The report's ``steps`` axis counts an agent's releases (activations), not iterations: by
    Theorem 1 a run's overall ε is the value at the PLF it reached. With an (N, K) ``sens``
    schedule the ``"theorem"`` curve is Lemma 6 summed release by release (Theorem 1), a
    cumulative log-sum-exp, since Theorem 4's geometric sum needs a constant Δ.
    """
    events = release_events(n_agents, releases, sens=sens, log_sigma1=log_sigma1, log_R=log_R,
                            description=description)
    report = PrivacyReport.from_events(events, delta, methods=methods)
    steps = report.steps.astype(np.float64)
    if np.ndim(sens) == 2:
        log_terms = (np.asarray(log_rho1(_per_release(sens, n_agents, releases), log_sigma1))
                     + np.arange(releases) * float(log_R))  # log ρ_t = log ρ₁(t) + (t−1) log R
        log_rho = np.logaddexp.accumulate(log_terms, axis=1)[:, steps.astype(int) - 1]
    else:
        sens_n = np.broadcast_to(np.asarray(sens, np.float64), (n_agents,))
        log_rho = (np.asarray(log_rho1(sens_n[:, None], log_sigma1))
                   + np.asarray(log_geometric_sum(steps[None, :], log_R)))
    rho = np.exp(log_rho)
    eps = rho + 2.0 * np.sqrt(rho * math.log(1.0 / delta))
    log10 = np.log10(eps)
    return report.with_curve(
        "theorem", eps, log10=log10,
        note="paper 003 Theorem 4: ρ = ρ₁(R^ξ−1)/(R−1), ρ₁ = Δ²/(2σ₁²) (Lemma 6), "
             "ε = ρ + 2√(ρ ln 1/δ); ξ = releases of the agent (Theorem 1: the PLF)")


def plf_epsilon_table(plf_values, *, sens, log_sigma1, log_R, delta) -> np.ndarray:
    """Host: ε (Theorem 4) at each realised PLF, float64 (``inf`` where it overflows)."""
    with np.errstate(over="ignore"):
        return np.asarray(epsilon_after(np.asarray(plf_values, np.float64), sens=sens,
                                        log_sigma1=log_sigma1, log_R=log_R, delta=delta))


__all__ = [
    "SENSITIVITIES", "calibrate_log_sigma1", "calibrate_log_sigma1_schedule", "epsilon_after",
    "geometric_report",
    "log_expm1", "log_geometric_sum", "log_rho1", "log_sigma", "plf_epsilon_table",
    "release_events", "sensitivity", "zcdp_after",
]
