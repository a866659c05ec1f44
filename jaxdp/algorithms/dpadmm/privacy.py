r"""Privacy accounting of DP-ADMM: the paper's moments accountant and the same releases five ways.

Huang, Hu, Chan-Tin & Gong, "DP-ADMM: ADMM-based distributed learning with differential privacy",
2018, arXiv:1808.10101.

Every release of DP-ADMM (Algorithm 3) and of Algorithm 2 is a Gaussian mechanism whose noise
multiplier is constant over the iterations (Thm 1 with Lemma 1's sensitivity):

.. math::

   z = \sigma_{i,k}/\Delta_{i,k} = \sqrt{2\ln(1.25/\delta)}/\epsilon
   \quad\text{(Thm 1: the classical Gaussian mechanism, } (\epsilon,\delta)\text{-DP per step, } \epsilon \le 1).

So the total privacy of T iterations depends only on (ε, δ, T). Theorem 2 (proved in App. A with the
moments accountant) gives it as

.. math::

   \bar\epsilon(T,\epsilon,\delta) = \min_{\tau\in\{1,2,\dots\}}
      \frac{T\tau(\tau+1)\epsilon^2/(4\ln(1.25/\delta)) + \ln(1/\delta)}{\tau},

i.e. Rényi DP at the integer orders α = τ + 1 with the standard RDP → DP conversion (Mironov 2017,
Prop. 3). The same δ calibrates σ and is the final δ (the only reading that reproduces the paper's
0.5009 and 1.0193). Theorem 2's text states "ε̄ = c₁√T ε" and its appendix derives a
*lower* bound on the minimum above (``docs/errata.md``); the computable formula is the min over τ,
which is a valid upper bound and is what we use.

:func:`composition_table` puts ε̄ beside the same Gaussian releases accounted by dp-accounting (RDP at
its default orders with the improved conversion; PLD) at the same total δ, and beside plain
composition (T ε, total δ = T δ) and advanced composition of the per-step (ε, δ) guarantee:
Dwork–Rothblum–Vadhan (Dwork & Roth 2014, Thm 3.20) with δ' = δ and the optimal composition of
Kairouz, Oh & Viswanath (2015, Thm 3.3; dp-accounting's ``advanced_composition``), both at total
δ = (T + 1) δ, since T (ε, δ) steps already spend T δ.

**The guarantee** (:func:`release_report`, what ``privacy()`` returns): one record of one provider
replaced (Lemma 1), S1 a per-record gradient bound (‖a‖ ≤ S1, |y| ≤ 1 for the logistic loss),
enforced by projecting every record onto that ball before the step uses it (:func:`project_records`,
``enforce_bound=True``, the default; the identity on the paper's normalised rows), or, with
``enforce_bound=False``, checked on the data. No hidden state leaks: w_i^{k+1} depends on provider i's data only through f_i at
points (w̃_i^k, or the local solve's γ_i^k, w^k) that are functions of the released w̃, so the
releases compose adaptively with Lemma 1's Δ. DP-ADMM's first gradient is at the public w̃⁰ = 0,
where ‖∇ℓ‖ ≤ S1/2: its Δ is halved (:data:`FIRST_STEP_FACTOR`). The releases are accounted at the
caller's δ by zCDP, RDP and PLD (the smallest is the guarantee); Params' δ only sets the noise.
Thm 2 is the ``"paper (as printed)"`` curve. :func:`zcdp_guarantee` (jnp) is the report's zCDP curve
and :func:`eps_for_zcdp_guarantee` its closed-form inverse, used to calibrate in tuning loops.
"""
from __future__ import annotations

import dataclasses
import math

import jax.numpy as jnp
import numpy as np

from jaxdp.privacy import (
    PAPER_PRINTED,
    Assumption,
    PrivacyEvents,
    PrivacyReport,
    clip_by_norm,
    pld_epsilon,
    rdp_epsilon,
)
from jaxdp.privacy.closed_forms import gaussian_zcdp, zcdp_for_epsilon, zcdp_to_dp
from jaxdp.privacy.samplers import SAMPLER_SHARE, lattice_sensitivity
from jaxdp.problems import L1Logistic, Logistic

#: The paper's privacy grid (Sec. VI-A): per-iteration ε and δ, and T.
PAPER_EPS = (0.01, 0.02, 0.05, 0.07, 0.1, 0.2)
PAPER_DELTAS = (1e-3, 1e-4, 1e-5, 1e-6)
PAPER_STEPS = 100


def noise_multiplier(eps, delta, xp=np):
    """z = σ/Δ = √(2 ln(1.25/δ))/ε, the classical Gaussian mechanism's ratio (Thm 1)."""
    return xp.sqrt(2.0 * xp.log(1.25 / delta)) / eps  # Thm 1


#: Δ_0/Δ (Lemma 1) of DP-ADMM's first release: its gradient is taken at the public w~⁰ = 0, where
#: the logistic record gradient −y a σ(0) has norm ≤ S1/2 (so two records differ by ≤ S1, not 2 S1).
FIRST_STEP_FACTOR = 0.5


def release_ratios(eps, delta, steps: int, xp=np):
    """(…, K) Δ_k/σ_k of DP-ADMM's K releases: ``1/(2z)`` at k = 0, ``1/z`` after (Thm 1, Lemma 1).

    ``eps`` and ``delta`` are Thm 1's calibration (scalars, or ``eps`` of shape (N,) / (N, 1)
    broadcasting against ``(…, 1)``); ``xp`` is ``numpy`` or ``jax.numpy``.
    """
    z = xp.asarray(noise_multiplier(eps, delta, xp))
    factor = xp.where(xp.arange(steps) == 0, FIRST_STEP_FACTOR, 1.0)
    return factor / z[..., None]


def lattice_ratio_slack(dim: int | None, dtype=np.float64) -> float:
    """``s``: what the lattice sampler adds to every Δ_k/σ_k of a ``dim``-coordinate release
    (``(1 + 2uL)√d/R``, :func:`~jaxdp.privacy.samplers.lattice_sensitivity` with ``clipped=False``,
    the declared Δ being Lemma 1's analytical bound); 0 for ``dim=None`` (the float sampler)."""
    if dim is None:
        return 0.0
    return float(lattice_sensitivity(0.0, int(dim), 1.0, dtype, law="gaussian", clipped=False))


def _lattice_delta(total_delta, dim):
    """The δ the lattice report computes its curves at (the sampler's share set aside)."""
    return total_delta if dim is None else total_delta * (1.0 - SAMPLER_SHARE)


def zcdp_guarantee(eps, delta, steps: int, total_delta, *, lattice_dim: int | None = None,
                   dtype=np.float64):
    """The report's ``"zcdp"`` ε of DP-ADMM's K releases (jnp, differentiable in ``eps``):
    ``zcdp_to_dp(Σ_k (Δ_k/σ_k)²/2, total_delta)`` on :func:`release_ratios`.

    ``lattice_dim=d`` gives the lattice sampler's curve (the default sampler): every ratio grows
    by :func:`lattice_ratio_slack` and the curve is at ``total_delta(1 − 2⁻⁶)``; the report is
    ``inf`` where the sampler's distance does not fit in δ (ε above ≈ 19, not modelled here).
    """
    ratios = release_ratios(eps, delta, steps, jnp) + lattice_ratio_slack(lattice_dim, dtype)
    rho = gaussian_zcdp(ratios, 1.0)[..., -1]
    return zcdp_to_dp(rho, _lattice_delta(total_delta, lattice_dim))


def eps_for_zcdp_guarantee(total, delta, steps: int, total_delta, *,
                           lattice_dim: int | None = None, dtype=np.float64):
    """Thm 1's per-iteration ε whose :func:`zcdp_guarantee` after ``steps`` releases is ``total``
    (jnp, closed form). Float sampler: ρ = zcdp_for_epsilon(total, δ) = (K − 1 + ¼)
    ε²/(4 ln(1.25/δ_Thm1)). Lattice (``lattice_dim``): with t = ε/√(2 ln(1.25/δ_Thm1)) = 1/z and
    s the slack, 2ρ = (t/2 + s)² + (K − 1)(t + s)², a quadratic in t (its positive root)."""
    rho = zcdp_for_epsilon(total, _lattice_delta(total_delta, lattice_dim))
    s = lattice_ratio_slack(lattice_dim, dtype)
    a = steps - 1 + FIRST_STEP_FACTOR**2
    b = 2.0 * s * (steps - 1 + FIRST_STEP_FACTOR)
    c = steps * s * s - 2.0 * rho
    t = (-b + jnp.sqrt(b * b - 4.0 * a * c)) / (2.0 * a)
    return t * jnp.sqrt(2.0 * jnp.log(1.25 / jnp.asarray(delta)))


def moments_accountant(steps, eps, delta, total_delta=None) -> tuple[np.ndarray, np.ndarray]:
    """The paper's total ε̄ after ``steps`` iterations and the minimizing order τ* (Thm 2, App. A).

    The objective ``a(τ + 1) + ln(1/δ)/τ`` with ``a = T ε²/(4 ln(1.25/δ))`` is convex in τ > 0, so
    the integer minimum is at the floor or the ceiling of ``√(ln(1/δ)/a)`` (exact; no search).

    Args:
      steps: T ≥ 1 (int or array).
      eps: per-iteration ε (float or array broadcastable with ``steps``).
      delta: δ in (0, 1) (float or array), the δ of Thm 1 that calibrates the noise.
      total_delta: the δ of the total guarantee (default ``delta``: the paper's reading).

    Returns:
      ``(eps_bar, tau)`` float64 and int arrays of the broadcast shape.

    Raises:
      ValueError: T < 1, ε ≤ 0, or δ outside (0, 1).

    Example:
      >>> round(float(moments_accountant(100, 0.05, 1e-3)[0]), 4)
      0.5009
    """
    total_delta = delta if total_delta is None else total_delta
    steps, eps, delta, total_delta = (np.asarray(v, np.float64)
                                      for v in (steps, eps, delta, total_delta))
    if (np.any(steps < 1) or np.any(eps <= 0) or np.any((delta <= 0) | (delta >= 1))
            or np.any((total_delta <= 0) | (total_delta >= 1))):
        raise ValueError(f"moments_accountant needs T >= 1, eps > 0 and 0 < delta < 1; got "
                         f"T={steps.tolist()}, eps={eps.tolist()}, delta={delta.tolist()}, "
                         f"total_delta={total_delta.tolist()}")
    a = steps * eps**2 / (4.0 * np.log(1.25 / delta))  # α(τ)/(τ(τ+1)), App. A
    b = np.log(1.0 / total_delta)
    tau_c = np.sqrt(b / a)
    candidates = np.stack([np.maximum(np.floor(tau_c), 1.0), np.maximum(np.ceil(tau_c), 1.0)])
    values = a * (candidates + 1.0) + b / candidates  # [α(τ) + ln(1/δ)]/τ, Thm 2
    best = np.argmin(values, axis=0)
    def pick(v):
        return np.take_along_axis(v, best[None], axis=0)[0]

    return pick(values), pick(candidates).astype(np.int64)


def moments_accountant_bruteforce(steps: int, eps: float, delta: float, max_order: int = 100_000):
    """The same minimum by search over τ = 1..max_order (a check of :func:`moments_accountant`)."""
    tau = np.arange(1, max_order + 1, dtype=np.float64)
    alpha = steps * tau * (tau + 1) * eps**2 / (4 * math.log(1.25 / delta))  # App. A
    values = (alpha + math.log(1 / delta)) / tau  # Thm 2
    return float(values.min()), int(tau[values.argmin()])


def gaussian_releases(steps: int, eps: float, delta: float) -> PrivacyEvents:
    """T Gaussian releases of one provider with the paper's constant z (Δ = 1, σ = z)."""
    return PrivacyEvents.from_schedule("gaussian", 1.0, float(noise_multiplier(eps, delta)),
                                       n_agents=1, steps=steps,
                                       description="DP-ADMM's noisy local primal w~_i^{k+1}")


def plain_composition(steps, eps, delta) -> tuple[float, float]:
    """Basic composition of T (ε, δ) steps: ``(T ε, T δ)`` (Dwork & Roth 2014, Thm 3.16)."""
    return steps * eps, steps * delta


def advanced_composition_drv(steps, eps, delta, delta_prime) -> tuple[float, float]:
    """Dwork–Rothblum–Vadhan: ``(√(2T ln(1/δ'))ε + Tε(e^ε − 1), Tδ + δ')`` (Dwork & Roth, Thm 3.20)."""
    total = math.sqrt(2 * steps * math.log(1 / delta_prime)) * eps + steps * eps * math.expm1(eps)
    return total, steps * delta + delta_prime


def advanced_composition_optimal(steps, eps, delta, total_delta) -> float:
    """Kairouz–Oh–Viswanath optimal composition (dp-accounting); ``inf`` if ``total_delta`` is
    below ``1 − (1 − δ)^T``."""
    from dp_accounting.pld import accountant, common

    value = accountant.advanced_composition(
        common.DifferentialPrivacyParameters(eps, delta), steps, total_delta)
    return math.inf if value is None else float(value)


def composition_table(eps_grid=PAPER_EPS, delta_grid=PAPER_DELTAS, steps: int = PAPER_STEPS, *,
                      pld_interval: float = 1e-4) -> list[dict]:
    """ε of T DP-ADMM releases for every (ε, δ) of the grid, by every accountant (module docstring).

    Returns:
      One dict per grid point: ``eps``, ``delta``, ``moments_accountant`` (the paper's ε̄), ``tau``,
      ``rdp`` and ``pld`` (dp-accounting, total δ), ``plain`` (at ``plain_delta`` = Tδ),
      ``advanced_drv`` and ``advanced_optimal`` (at ``advanced_delta`` = (T + 1)δ).
    """
    rows = []
    for delta in delta_grid:
        for eps in eps_grid:
            events = gaussian_releases(steps, eps, delta)
            ma, tau = moments_accountant(steps, eps, delta)
            plain, plain_delta = plain_composition(steps, eps, delta)
            drv, adv_delta = advanced_composition_drv(steps, eps, delta, delta)
            rows.append({
                "eps": eps, "delta": delta, "steps": steps,
                "moments_accountant": float(ma), "tau": int(tau),
                "rdp": float(rdp_epsilon(events, delta)[0]),
                "pld": float(pld_epsilon(events, delta, pld_interval)[0]),
                "plain": plain, "plain_delta": plain_delta,
                "advanced_drv": drv,
                "advanced_optimal": advanced_composition_optimal(steps, eps, delta, adv_delta),
                "advanced_delta": adv_delta,
            })
    return rows


RELATION = "replace_record"
RELEASED = ("provider i's w~_i^{k+1} to the trainer at every step k < K; the trainer's broadcast "
            "w^{k+1} (3c) and the duals γ^{k+1} (3d) are functions of the released w~")


def check_noise_params(name: str, eps, delta) -> None:
    """The calibration parameters of Thm 1 must give a finite, positive noise multiplier.

    Raises:
      ValueError: ε outside (0, 1] (Thm 1 needs ε ≤ 1; ε = 0 divides by zero) or δ outside (0, 1)
        (δ = 0 divides by zero in ln(1.25/δ); δ ≥ 1 is no privacy parameter), naming the value.
    """
    eps, delta = np.asarray(eps, np.float64), np.asarray(delta, np.float64)
    if np.any(~((eps > 0) & (eps <= 1))):
        raise ValueError(f"{name}.eps (the per-iteration ε of Thm 1 that sets the noise) must be "
                         f"in (0, 1]; got {eps.tolist()}")
    if np.ndim(delta) != 0 or not 0.0 < float(delta) < 1.0:
        raise ValueError(f"{name}.delta (the δ of Thm 1 that sets the noise, ln(1.25/δ)) must be "
                         f"one value in (0, 1); got {delta.tolist()}")


def project_records(problem, S1):
    """``problem`` with every record projected onto the declared public ball: ``a ↦
    a·min(1, S1_i/‖a‖₂)`` (provider i's S1) and ``y ↦ clip(y, −1, 1)``, row by row.

    A per-record map, so two data sets differing in one record still differ in one record; after
    it every logistic record gradient ``−y a σ(−y aᵀw)`` has norm ≤ S1 for every w and ≤ S1/2 at
    w = 0, what Lemma 1 (and :data:`FIRST_STEP_FACTOR`) assume. The paper normalises its rows to
    ‖a‖ ≤ 1 with labels ±1 (Sec. VI), where the projection is the identity.
    """
    s1 = jnp.asarray(S1, problem.features.dtype)
    radius = jnp.broadcast_to(s1[:, None] if s1.ndim == 1 else s1, problem.mask.shape)
    return dataclasses.replace(problem, features=clip_by_norm(problem.features, radius),
                               labels=jnp.clip(problem.labels, -1.0, 1.0))


PROJECTION = ("every record is projected onto ‖a‖₂ ≤ S1, y ∈ [−1, 1] before the step uses it "
              "(project_records, enforce_bound=True: the identity on the paper's normalised rows)")
"""How the family enforces Lemma 1's S1 (``enforce_bound=True``, the default)."""


def record_assumption(problem, S1, *, enforced: bool = True) -> Assumption:
    """S1 bounds every record's loss gradient: ``|y| ≤ 1`` and ‖a‖ ≤ S1 for the logistic loss.
    Enforced by :func:`project_records` (``enforced=True``), or else checked on the problem's
    real rows (the replacing record cannot be checked)."""
    s1 = float(np.min(S1))
    statement = (f"every record (a, y) of provider i, and the one replacing it, has |y| ≤ 1 and "
                 f"‖a‖₂ ≤ S1 = {s1:g}, so the logistic ∇ℓ(a, y; w) = −y a σ(−y aᵀw) has norm ≤ "
                 f"S1 for every w and ≤ S1/2 at w = 0 (Lemma 1's S1)")
    logistic = type(problem.loss) in (Logistic, L1Logistic)
    if enforced:
        return Assumption(statement, enforced=True, how=PROJECTION + f"; loss "
                          f"{problem.loss.name!r}", holds=logistic, remedy=RECORD_REMEDY)
    mask = np.asarray(problem.mask) > 0
    radius = float(np.max(np.linalg.norm(np.asarray(problem.features, np.float64), axis=-1)[mask]))
    signs = bool(np.all(np.abs(np.abs(np.asarray(problem.labels, np.float64)[mask]) - 1) < 1e-12))
    return Assumption(
        statement, enforced=False,
        how=f"this problem: loss {problem.loss.name!r}, max ‖a‖ = {radius:.6g}, labels ±1: "
            f"{signs}; not projected (enforce_bound=False)",
        holds=logistic and signs and radius <= s1 + 1e-12, remedy=RECORD_REMEDY)


RECORD_REMEDY = ("keep the projection of the records (enforce_bound=True, the default) on the "
                 "logistic loss, or use the logistic loss with labels ±1 and records normalised to "
                 "‖a‖₂ ≤ S1 before the run (as the paper's Adult rows are: problems.adult_synthetic, or divide each "
                 "row by a public bound), or declare a larger public S1 in the Params (a bound "
                 "known before seeing the data, never the data's own max ‖a‖)")
"""What to change when :func:`record_assumption` fails (the reason of the ``inf`` report)."""


def release_report(alg, problem, network, params, sensitivity: np.ndarray, sigma: np.ndarray, *,
                   delta: float, description: str, assumptions=()) -> PrivacyReport:
    """The Gaussian releases w~_i^{k+1} of a DP-ADMM-family algorithm, accounted soundly.

    Replace-one-record adjacency at one provider (paper 002, Def. 1 and Lemma 1). Every quantity
    that w_i^{k+1} depends on besides provider i's data — w~_i^k, γ_i^k, w^k — is a function of
    the released w~ (γ⁰ = 0, (3c), (3d)), so the releases compose adaptively with the per-step
    ℓ2 sensitivities ``sensitivity``; the guarantee is the smallest of zCDP, RDP and PLD. Under
    the lattice sampler (``alg.sampler == "lattice"``) the release is the discrete Gaussian on
    ``γℤ^d``, ``γ = σ/R``: the sensitivity declared is Lemma 1's analytical bound plus the
    rounding slack (:meth:`~jaxdp.core.Accounting.release_sensitivity`, ``clipped`` where
    the records are projected, covering the projection's float error), PLD is dropped and the
    sampler's distance is added to δ. ``alg.enforce_bound`` (absent: ``False``) says whether S1
    is enforced by :func:`project_records` or checked on the data (:func:`record_assumption`).

    Args:
      alg: the algorithm (names, sampler, draw count).
      problem: the run's problem (for the data check of S1).
      network: the run's network (for the draw count).
      params: the run's Params (``eps``, ``delta`` of Thm 1, ``S1``).
      sensitivity: (N, K) ℓ2 sensitivities Δ_{i,k} of the releases (real-valued mechanism).
      sigma: (N, K) the noise standard deviations actually drawn.
      delta: the caller's δ of every (ε, δ) curve.
      description: what is released.
      assumptions: further assumptions (e.g. an exact local solve).

    Returns:
      A PrivacyReport (guarantee: zCDP/RDP/PLD, or zCDP/RDP on the lattice) with the paper's
      Thm 2 as :data:`PAPER_PRINTED`.
    """
    n, steps = sensitivity.shape
    enforced = bool(getattr(alg, "enforce_bound", False))
    declared = alg.accounting.release_sensitivity(sensitivity, problem.dim, sigma, problem,
                                                  law="gaussian", clipped=enforced)
    events = PrivacyEvents.from_schedule("gaussian", declared, sigma, n_agents=n,
                                         steps=steps, description=description,
                                         lattice=alg.sampler == "lattice")
    report = alg.accounting.report(
        events, problem, network, params, steps, delta=delta,
        methods=("closed_form", "rdp", "pld"), relation=RELATION,
        released=RELEASED, assumptions=(record_assumption(problem, params.S1, enforced=enforced),
                                        *assumptions))
    eps = np.broadcast_to(np.asarray(params.eps, np.float64).reshape(-1, 1), (n, 1))
    eps_bar, _ = moments_accountant(report.steps[None, :], eps, float(params.delta),
                                    total_delta=delta)
    return report.with_curve(
        PAPER_PRINTED, eps_bar,
        "Thm 2 via App. A's moments accountant: ε̄ = min over integer τ of "
        "[T τ(τ+1) ε²/(4 ln(1.25/δ_Thm1)) + ln(1/δ)]/τ (RDP at orders τ+1, standard conversion) "
        "with δ_Thm1 = Params.delta (the noise calibration) and δ the report's; the paper uses "
        "one δ for both")


def check_private(alg, params, problem) -> None:
    """Host checks of a private run: the losses the sensitivities are derived for, S1 bounding
    every per-sample gradient (enforced by :func:`project_records` where ``alg.enforce_bound``,
    else the data must be normalized), and Thm 1's ε and δ.

    Raises:
      ValueError: naming the loss, S1 and the data's bound, ε or δ.
    """
    if type(problem.loss) not in (Logistic, L1Logistic):
        raise ValueError(f"{alg.name}'s sensitivity and step sizes are derived for logistic "
                         f"regression with an ℓ1 or ℓ2 regularizer (Sec. VI); got loss "
                         f"{problem.loss.name!r}")
    check_noise_params(type(params).__name__, params.eps, params.delta)
    if getattr(alg, "enforce_bound", False):
        return  # the step projects every record onto ‖a‖ ≤ S1
    bound = float(np.max(problem.gradient_bound(data_only=True)))
    s1 = float(np.min(params.S1))
    if not s1 >= bound - 1e-12:
        raise ValueError(f"{type(params).__name__}.S1 = {s1:g} is below the data's per-sample "
                         f"gradient bound {bound:g} (max ‖a‖): keep enforce_bound=True (the "
                         "records are projected), normalize the rows to ‖a‖ ≤ 1 "
                         "(normalize_adult) or raise S1")


def table_markdown(rows: list[dict]) -> str:
    """The rows of :func:`composition_table` as a markdown table."""
    head = ("| ε | δ | paper ε̄ (MA) | τ* | RDP (dp-acc.) | PLD (dp-acc.) | plain Tε (Tδ) "
            "| adv. DRV ((T+1)δ) | adv. optimal ((T+1)δ) |")
    lines = [head, "|" + "---|" * 9]
    for r in rows:
        lines.append(
            f"| {r['eps']:g} | {r['delta']:g} | {r['moments_accountant']:.4f} | {r['tau']} | "
            f"{r['rdp']:.4f} | {r['pld']:.4f} | {r['plain']:.3g} ({r['plain_delta']:.3g}) | "
            f"{r['advanced_drv']:.4f} | {r['advanced_optimal']:.4f} |")
    return "\n".join(lines)


__all__ = [
    "PAPER_DELTAS", "PAPER_EPS", "PAPER_STEPS", "advanced_composition_drv",
    "FIRST_STEP_FACTOR", "RELATION", "RELEASED", "eps_for_zcdp_guarantee", "release_ratios",
    "lattice_ratio_slack",
    "zcdp_guarantee", "advanced_composition_optimal", "check_noise_params", "check_private",
    "composition_table", "gaussian_releases", "project_records", "record_assumption",
    "PROJECTION",
    "moments_accountant", "moments_accountant_bruteforce", "noise_multiplier",
    "plain_composition", "release_report", "table_markdown",
]
