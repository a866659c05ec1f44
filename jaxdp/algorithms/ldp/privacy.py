r"""Local-DP accounting of paper 001 (Xiao, Ye & Devadas, arXiv 1902.06101): Thm 2.2, Thm 2.3, fn. 1.

Every released coordinate of Algorithms 1, 2 and 2* is
Laplace noise of **rate** β (density (β/2)e^{−β|y|}) around a mean that is uniform on an interval
τ = [a, a + ω]; changing agent i's function shifts τ by at most T = α B_∞ (α = 1/D_i for Alg. 1,
η_k for Alg. 2/2*). With u = x − a the output's position in the interval,

.. math::

   h(u) = \int_0^\omega \beta e^{-\beta|u-y|}\,dy, \qquad
   \Theta(u) = \max_{|t| \le T} |\log h(u) - \log h(u-t)|   \quad (10)

is the realized privacy loss of that coordinate (Thm 2.2; never above αβB_∞, strictly below when
u ∈ τ). ``log h`` is concave in the shift, so the max is at t = ±T or at the interior maximizer
t* = clip(u − ω/2, −T, T). Θ, γ depend only on (βu, βω, βT).

Functions (float64: run under ``jax.enable_x64`` — the ratios are 1 ± 1e-3):

* :func:`theta_loss` — exact realized loss Θ (10), log space, degenerate branch ω → 0 gives βT.
* :func:`gamma_bound` — the closed form of Theorem 2.3's (11) (eq. (27)'s e^{ωαB}
  typo read as e^{αβB}). **Erratum (App. D):** (11) is not an upper bound: the App. D bullet takes
  the ratio at t = −T on [0, (ω−T)/2] where the max is at t = +T, so (11) *under*-estimates the
  exact expected ratio, by ≤ 0.35 % on Fig. 1's grid (tested against :func:`gamma_exact`).
* :func:`gamma_exact` — E[Θ]/(βT) by quadrature (host numpy): the true amplification factor.
* :func:`gamma_monte_carlo` — the same by Monte Carlo (jittable; one key per seed).
* :func:`gamma0` — the T → 0 limit 2(1 − e^{−βω/2})/(βω).
* :func:`expected_loss` — γ·βT per coordinate (γ from (11) where ω > T, else 1).
* :func:`worst_case_curve` — Σ_k α_k β_k B_∞ (Thm 2.2 with fixed parameters).
* :func:`worst_case_report` — the guarantee of Alg. 1, 2, 2* and [45] for the released
  d-vector (pure sum and PLD, relation ``"replace_agent"``, B_∞ assumed); the paper's
  per-coordinate line is :data:`~jaxdp.privacy.PAPER_PRINTED` (not a bound for the vector).
* :func:`objective_perturbation_curve` / :func:`objective_perturbation_report` — the guarantee of
  the dual-perturbed ADMM baselines [42], [43] (Laplace density term plus an agent-level Jacobian
  term d log(1 + M̄/D_eff)); their own record-level bound (reconstructed, log(1 + J)) as paper
  curves. :func:`output_perturbation_report` — [48]'s output-perturbed step.
* :func:`advanced_composition` — footnote 1 (Kairouz et al. [49]), summed over k = 0..K−1 (the
  paper prints k = 0..K and "√(−2Σε² log δ)").

Functions taking ``xp`` run in ``jax.numpy`` (default, jittable, vmappable) or ``numpy``.
"""
from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np

from jaxdp._types import Array, PRNGKey
from jaxdp.privacy import PAPER_CORRECTED, PAPER_PRINTED, Assumption, PrivacyEvents, PrivacyReport
from jaxdp.privacy.contract import concat, default_steps
from jaxdp.privacy.samplers import laplace

# -- the realized loss (10) ------------------------------------------------------------------
def log_h(s, w, xp=jnp):
    """log h at scaled position s = βu for a scaled interval length w = βω > 0.

    h = e^{s}(1 − e^{−w}) for s ≤ 0; 2 − e^{−s} − e^{−(w−s)} inside; e^{−(s−w)}(1 − e^{−w}) for
    s ≥ w (h is computed with β = 1; the factor β cancels in every ratio).
    """
    log_mass = xp.log(-xp.expm1(-w))
    inside = xp.log(-xp.expm1(-xp.clip(s, 0.0, w)) - xp.expm1(-xp.clip(w - s, 0.0, w)))
    return xp.where(s <= 0, s + log_mass, xp.where(s >= w, w - s + log_mass, inside))


def theta_loss(u, omega, beta, T, xp=jnp):
    """Realized per-coordinate privacy loss Θ of (10), Theorem 2.2.

    Args:
      u: output minus the lower end of the mean interval, any shape.
      omega: interval length ω ≥ 0 (broadcasts with ``u``).
      beta: Laplace rate β > 0 (broadcasts).
      T: largest shift α B_∞ ≥ 0 (broadcasts).
      xp: ``jax.numpy`` (default) or ``numpy``.

    Returns:
      Θ ∈ [0, βT], the shape of the broadcast inputs; exactly βT outside the interval and for
      ω = 0 (a point mass mean: the plain Laplace mechanism).
    """
    s, w, tau = beta * u, beta * omega, beta * T
    ok = w > 0
    w = xp.where(ok, w, 1.0)
    base = log_h(s, w, xp)
    at_plus = xp.abs(base - log_h(s - tau, w, xp))  # t = +T
    at_minus = xp.abs(base - log_h(s + tau, w, xp))  # t = −T
    t_star = xp.clip(s - 0.5 * w, -tau, tau)  # interior maximizer of log h(u − t)
    at_star = log_h(s - t_star, w, xp) - base
    theta = xp.maximum(xp.maximum(at_plus, at_minus), at_star)
    return xp.where(ok, xp.minimum(theta, tau), tau * xp.ones_like(theta))


# -- the amplification factor γ (Theorem 2.3) -------------------------------------------------
def gamma_bound(beta_omega, beta_T, xp=jnp):
    """Theorem 2.3, eq. (11), in closed form, for βω > βT > 0.

    With W = βω, τ = βT, h = (W − τ)/2 (scaled units):
    I1 = [2h − (1 − e^{−h}) − (e^{−(W−h)} − e^{−W})]/(2W),
    I2 = [2h − (e^{−τ} − e^{−(h+τ)}) − (e^{−(W−τ−h)} − e^{−(W−τ)})]/(2W),
    γ = log(e^{τ}(1 − 2 I1) + 2 I2)/τ, evaluated as log1p(expm1(τ)(1 − 2I1) + 2(I2 − I1))/τ.

    Returns ``nan`` where βω ≤ βT (outside the theorem's range; :func:`expected_loss` uses 1).
    See the module docstring for the App. D erratum: this slightly under-estimates
    :func:`gamma_exact`.
    """
    W, tau = beta_omega, beta_T
    h = 0.5 * (W - tau)
    I1 = (2 * h + xp.expm1(-h) - (xp.exp(-(W - h)) - xp.exp(-W))) / (2 * W)
    I2 = (2 * h - (xp.exp(-tau) - xp.exp(-(h + tau)))
          - (xp.exp(-(W - tau - h)) - xp.exp(-(W - tau)))) / (2 * W)
    gamma = xp.log1p(xp.expm1(tau) * (1 - 2 * I1) + 2 * (I2 - I1)) / tau
    return xp.where(W > tau, gamma, xp.nan)


def gamma0(beta_omega, xp=jnp):
    """The T → 0 limit of γ: 2(1 − e^{−βω/2})/(βω) (a cheap surrogate)."""
    return -2.0 * xp.expm1(-0.5 * beta_omega) / beta_omega


def gamma_exact(beta_omega, beta_T, nodes: int = 64) -> np.ndarray:
    """The exact amplification factor E[Θ]/(βT) by quadrature (host, numpy float64).

    The output's scaled position s = βu has density h(s)/(2W) (a uniform mean on [0, W] plus
    standard Laplace noise). Outside [0, W] the loss is τ exactly, with mass (1 − e^{−W})/W; inside
    it is integrated by Gauss–Legendre on panels split at the kinks of Θ (s = τ, W/2 ± τ, W − τ).

    Args:
      beta_omega: W = βω ≥ 0, scalar or array.
      beta_T: τ = βT > 0, broadcasting with ``beta_omega``.
      nodes: Gauss–Legendre nodes per panel.

    Returns:
      γ with the broadcast shape (1 where W = 0).
    """
    W, tau = np.broadcast_arrays(np.asarray(beta_omega, np.float64),
                                 np.asarray(beta_T, np.float64))
    out = np.ones(W.shape)
    x, wts = np.polynomial.legendre.leggauss(nodes)
    for idx in np.ndindex(W.shape):
        if not W[idx] > 0:
            continue
        w, t = float(W[idx]), float(tau[idx])
        cuts = np.unique(np.clip([0.0, t, w / 2 - t, w / 2, w / 2 + t, w - t, w], 0.0, w))
        inside = 0.0
        for lo, hi in zip(cuts[:-1], cuts[1:]):
            s = 0.5 * (hi - lo) * x + 0.5 * (hi + lo)
            dens = np.exp(log_h(s, w, np)) / (2 * w)
            inside += 0.5 * (hi - lo) * np.sum(wts * dens * theta_loss(s, w, 1.0, t, np))
        out[idx] = (t * (-np.expm1(-w)) / w + inside) / t
    return out


def gamma_monte_carlo(key: PRNGKey, beta_omega, beta_T, samples: int) -> tuple[Array, Array]:
    """γ by Monte Carlo: the mean of Θ/(βT) over ``samples`` outputs, and its standard error.

    Draws the mean uniformly on [0, βω] and adds standard Laplace noise (β = 1 in scaled units),
    exactly the output law of a released coordinate. Jittable for a static ``samples``.

    Returns:
      ``(estimate, standard_error)``, scalars.
    """
    k_mean, k_noise = jax.random.split(key)
    mean = beta_omega * jax.random.uniform(k_mean, (samples,), dtype=jnp.float64)
    s = mean + laplace(k_noise, (samples,), jnp.float64)
    ratio = theta_loss(s, beta_omega, 1.0, beta_T) / beta_T
    return jnp.mean(ratio), jnp.std(ratio) / math.sqrt(samples)


def expected_loss(omega, beta, T, xp=jnp):
    """Expected per-coordinate loss γ(βω, βT)·βT, with γ from (11) where ω > T and 1 elsewhere.

    This is the "expected" curve (Thm 2.3 with the realized ω).
    """
    W, tau = beta * omega, beta * T
    ok = W > tau
    gamma = gamma_bound(xp.where(ok, W, 2.0 * tau + 1.0), tau, xp)
    return xp.where(ok, gamma, 1.0) * tau


# -- composition ------------------------------------------------------------------------------
def worst_case_curve(alpha, beta, sensitivity) -> np.ndarray:
    """Cumulative worst-case loss per coordinate Σ_{k≤K} α_k β_k B_∞ (Thm 2.2), host float64.

    Args:
      alpha: ``(K,)`` (or scalar) α_{k+1} of each step (1/D_i or η_{k+1}).
      beta: ``(K,)`` Laplace rates β_{k+1}.
      sensitivity: B_∞.

    Returns:
      ``(K,)`` the loss after each step (× d for all coordinates).
    """
    alpha, beta = np.broadcast_arrays(np.asarray(alpha, np.float64), np.asarray(beta, np.float64))
    return np.cumsum(alpha * beta * float(sensitivity), axis=-1)


def advanced_composition(eps, delta: float, axis=None):
    """Heterogeneous advanced composition of footnote 1 (Kairouz, Oh & Viswanath [49]).

    ε_total = Σ ε_j (e^{ε_j} − 1)/(e^{ε_j} + 1) + √(2 log(1/δ) Σ ε_j²), summed over every release
    j = (k, l), k = 0..K−1 (the paper prints k = 0..K). (e^ε − 1)/(e^ε + 1) = tanh(ε/2).

    Args:
      eps: per-release pure-DP losses ε_j ≥ 0 (numpy float64).
      delta: δ in (0, 1).
      axis: axes to sum over (``None``: all).

    Returns:
      ε_total for (ε_total, δ)-LDP.

    Raises:
      ValueError: δ outside (0, 1) or a negative ε.
    """
    if not 0.0 < delta < 1.0:
        raise ValueError(f"advanced_composition: delta must be in (0, 1); got {delta!r}")
    eps = np.asarray(eps, np.float64)
    if np.any(eps < 0):
        raise ValueError(f"advanced_composition: every epsilon must be >= 0; got {eps.min()!r}")
    return (np.sum(eps * np.tanh(0.5 * eps), axis=axis)
            + np.sqrt(2.0 * math.log(1.0 / delta) * np.sum(eps * eps, axis=axis)))


def sensitivity_assumption(sens: float) -> Assumption:
    """Lemma 2.1's B_∞ (assumed of the replaced agent's data: not checkable)."""
    return Assumption(f"‖∇f_i(x) − ∇f_i′(x)‖_∞ ≤ B_∞ = {float(sens):g} for every x (Lemma 2.1) "
                      "for the replaced agent", enforced=False,
                      how="a bound on the neighbour's data set: not checkable", holds=None)


def _on_lattice(alg) -> bool:
    """Whether ``alg`` (``None``: an accountant called alone, the real-valued mechanism) releases
    through the lattice sampler."""
    return alg is not None and alg.sampler_of() == "lattice"


def _declared(alg, problem, sensitivity, dim: int, scale):
    """The ℓ1 sensitivity to declare for a Laplace release of ``dim`` coordinates: the analytical
    bound, plus the lattice's rounding slack under the lattice sampler (``clipped=False``: B_∞ is
    assumed, not enforced by a clip)."""
    if not _on_lattice(alg):
        return sensitivity
    return alg.accounting.release_sensitivity(sensitivity, dim, scale, problem, law="laplace",
                                   clipped=False)


def _events_report(events, delta, methods, alg, problem, network, params, **contract):
    """``PrivacyReport.from_events``, through ``alg.accounting.report_from_events`` (the run's
    lattice draws) when the events are lattice streams."""
    if not events.lattice_streams:
        return PrivacyReport.from_events(events, delta=delta, methods=methods, **contract)
    return alg.accounting.report(events, problem, network, params, events.steps, delta=delta,
                      methods=methods, **contract)


def worst_case_report(alpha: np.ndarray, params, d: int, description: str, *,
                      delta: float, alg=None, problem=None, network=None) -> PrivacyReport:
    """The guarantee of d Laplace coordinates per release with shifts ≤ α_{k+1}B_∞ (Thm 2.2).

    Each released vector x_i^{k+1} is its mean plus d independent Laplace coordinates of rate
    β_{k+1}; given the transcript the mean is public except ``−α∇f_i(·)`` at a released point,
    so neighbours shift each coordinate by at most α_{k+1}B_∞ (fresh: no hidden state carries
    data). The private aggregator weights are independent of the data, so conditioning on them
    is a valid upper bound (the amplification γ of Thm 2.3 is not claimed). Sound curves:
    ``pure_dp`` (d·Σ α β B_∞) and ``pld`` (dp-accounting, d streams per step, one per
    coordinate: exact for shifts of ±α B_∞ in every coordinate). Under the lattice sampler
    (``alg`` given, ``alg.sampler == "lattice"``) each coordinate is a discrete Laplace release on
    ``γℤ``, ``γ = 1/(β_{k+1}R)``, declared with α B_∞ plus the rounding slack of one coordinate;
    the guarantee is then pure DP alone (PLD dropped) with the sampler's distance in δ.

    Args:
      alpha: ``(N, K)`` α of each agent and step (1/D_i, η_{k+1}, 1/D_eff for baselines).
      params: Params with ``beta``, ``beta_growth``, ``sens``.
      d: dimension.
      description: what is released.
      delta: δ of the (ε, δ) curves.
      alg, problem, network: the run (its sampler and lattice draws); ``None``: the real-valued
        mechanism.

    Returns:
      The report, with :data:`PAPER_PRINTED` (the paper's per-coordinate line Σ α β B_∞,
      Fig. 2(b): not a bound for the released vector), :data:`PAPER_CORRECTED` (d × that, the
      whole vector) and ``advanced_composition`` (footnote 1 over the d·K releases) as extra curves.
    """
    n, steps = alpha.shape
    beta = host_schedule(params.beta, params.beta_growth, steps)
    per_coord = alpha * beta[None, :] * float(params.sens)  # α_{k+1} β_{k+1} B_∞, (N, K)
    scale = np.broadcast_to(1.0 / beta, (n, steps))
    coordinate = PrivacyEvents.from_schedule(  # one Laplace release per coordinate (ℓ∞ model)
        "laplace", sensitivity=_declared(alg, problem, alpha * float(params.sens), 1, scale),
        scale=scale, n_agents=n, steps=steps, lattice=_on_lattice(alg))
    events = concat([coordinate] * d, description=f"{description}; d = {d} coordinates")
    report = _events_report(
        events, delta, ("closed_form", "pld"), alg, problem, network, params,
        relation="replace_agent", released=description,
        assumptions=(sensitivity_assumption(params.sens),))
    at = report.steps - 1
    cumulative = np.cumsum(per_coord, axis=1)[:, at]
    advanced = np.stack([[advanced_composition(np.repeat(per_coord[i, :s], d), delta)
                          for s in report.steps] for i in range(n)])
    return report.with_curve(
        PAPER_PRINTED, cumulative, "Thm 2.2 worst case Σ_k α_{k+1}β_{k+1}B_∞ — PER COORDINATE "
        "(the paper's 'worst case' line of Fig. 2(b)); the released vector has d coordinates, so "
        "this is not a bound for it").with_curve(
        PAPER_CORRECTED, d * cumulative, "Thm 2.2 for the released d-vector: d·Σ_k α_{k+1}"
        "β_{k+1}B_∞ (equals pure_dp)").with_curve(
        "advanced_composition", advanced, "footnote 1 (Kairouz et al.) over the d·K releases of "
        "ε = αβB_∞ each, summed over k = 0..K−1 (the paper prints k = 0..K)")


def objective_perturbation_curve(alpha, samples, beta, sensitivity, d: int,
                                 jacobian: float) -> np.ndarray:
    """[42]/[43]'s own bound for an objective-perturbed ADMM step, per coordinate [RECONSTRUCTED].

    The noise λ̃ = λ + D_eff Δ enters the step's first-order condition ∇f_i(x) + D_eff x = λ̃ +
    D_eff a, so the output x fixes Δ = (∇f_i(x) + D_eff x − λ − D_eff a)/D_eff: changing f_i moves
    the Δ that explains x by (∇f_i − ∇f̂_i)/D_eff (≤ α B_∞ per coordinate, α = 1/D_eff: the
    paper's "Σ α β B_∞ matches prior results [42], [43]", Thm 2.2) and the change of variables
    Δ ↦ x adds log det(∇²f_i + D_eff I)/det(∇²f̂_i + D_eff I), a rank-≤ 2 change bounded by
    log(1 + J) with the "Jacobian constant" J = c/(D_eff B_i) the paper quotes from [43]
    (c = 2.8, B_i read as b_i, agent i's sample count). Per step and agent:

    ε_{k+1} = d α_{k+1} β_{k+1} B_∞ + log(1 + J_{k+1}),   J_{k+1} = c α_{k+1} / b_i.

    Args:
      alpha: ``(N, K)`` 1/D_eff of each agent and step (D_eff = |N_i|ρ_i + Γ_i).
      samples: ``(N,)`` b_i, the rows of each agent.
      beta: ``(K,)`` Laplace rates β_{k+1}.
      sensitivity: B_∞.
      d: dimension.
      jacobian: c in J = c/(D_eff b_i).

    Returns:
      ``(N, K)`` host float64 Σ_{k' ≤ k} ε_{k'}/d, the cumulative bound per coordinate (Fig. 2(b)'s
      scale, comparable with :func:`worst_case_curve`).
    """
    alpha = np.asarray(alpha, np.float64)
    J = jacobian * alpha / np.asarray(samples, np.float64)[:, None]  # c/(D_eff b_i)
    return worst_case_curve(alpha, beta, sensitivity) + np.cumsum(np.log1p(J), axis=1) / d


def jacobian_log_ratio(alpha, M: float, d: int) -> np.ndarray:
    """Per release, the largest log det(∇²f_i + D I)/det(∇²f_i′ + D I) for convex M-smooth f_i,
    f_i′ (eigenvalues in [0, M]): ``d log(1 + M α)`` with α = 1/D_eff, ``(N, K)`` host float64."""
    return d * np.log1p(float(M) * np.asarray(alpha, np.float64))


OBJECTIVE_PERTURBATION_REASON = (
    "objective perturbation ([42], [43]): the released x solves ∇f_i(x) + D_eff x = λ + D_eff(a + "
    "Δ), and its bound is a density argument (the noise density at Δ(x) times a data-dependent "
    "Jacobian) that needs continuous noise. Computed in floats, with either sampler, x = g_f(Δ) "
    "ranges over a countable set of floats that depends on f_i, so a released x can be impossible "
    "under the neighbouring data: no finite ε covers what is released. The real-valued "
    "mechanism's bound is kept as 'ideal pure_dp' (not a guarantee)")


def objective_perturbation_report(alpha: np.ndarray, samples: np.ndarray, params, d: int,
                                  description: str, jacobian: float, *, M: float,
                                  delta: float) -> PrivacyReport:
    """The guarantee of a dual-perturbed (objective-perturbed) exact ADMM step ([42], [43]).

    The released x solves ∇f_i(x) + D_eff x = λ + D_eff(a + Δ) (λ, a public given the
    transcript): the noise that explains x is Δ(x) = (∇f_i(x) + D_eff x − λ − D_eff a)/D_eff, so
    the density of x is the Laplace density of Δ(x) times det(∇²f_i(x) + D_eff I)/D_eff^d. Between
    neighbours Δ(x) moves by ≤ α B_∞ per coordinate and, for convex M̄-smooth f_i, f_i′, the
    determinants differ by a factor ≤ (1 + M̄α)^d, pointwise: pure ε-DP per step
    ``d α β B_∞ + d log(1 + M̄α)``, composed over k (the guarantee, ``"pure_dp"``).

    Args:
      alpha: ``(N, K)`` 1/D_eff of each agent and step; samples: ``(N,)`` b_i; params: Params
      with beta, beta_growth, sens; d: dimension; description: what is released; jacobian: the
      constant c of [43]'s record-level J = c/(D_eff b_i) (paper curves only); M: M̄; delta: δ.

    The guarantee is ``inf`` (:data:`OBJECTIVE_PERTURBATION_REASON`): that density argument holds
    for real-valued noise only, and no floating-point release (float or lattice draws, both a
    countable set pushed through the data-dependent solve) is covered; the real-valued bound is
    the curve ``"ideal pure_dp"``.

    Returns:
      The report; :data:`PAPER_PRINTED` is [43]'s own bound per coordinate
      (:func:`objective_perturbation_curve`, record-level J), :data:`PAPER_CORRECTED` the same
      over the d coordinates.
    """
    beta = host_schedule(params.beta, params.beta_growth, alpha.shape[1])
    laplace_term = d * alpha * beta[None, :] * float(params.sens)
    total = np.cumsum(laplace_term + jacobian_log_ratio(alpha, M, d), axis=1)
    n, steps = alpha.shape
    ks = default_steps(steps)
    assumptions = (sensitivity_assumption(params.sens),
                   Assumption(f"f_i and f_i′ convex and M̄-smooth, M̄ = {M:.6g} (max_i M_i of this "
                              "problem)", enforced=False,
                              how="M̄ from this problem's data; the replacement's is assumed",
                              holds=True),
                   Assumption("the primal step is solved exactly (Newton; exact for least "
                              "squares)", enforced=False, how="not checked", holds=None))
    report = PrivacyReport(
        steps=ks, curves={"pure_dp": total[:, ks - 1]}, delta=delta, sound=("pure_dp",),
        notes={"pure_dp": "pure ε-DP per step d α β B_∞ (Laplace density of the noise that "
                          "explains x) + d log(1 + M̄α) (Jacobian ratio), basic composition"},
        relation="replace_agent", released=description,
        assumptions=assumptions).idealized(OBJECTIVE_PERTURBATION_REASON)
    per_coord = objective_perturbation_curve(alpha, samples, beta, params.sens, d,
                                             jacobian)[:, ks - 1]
    note = (f"[RECONSTRUCTED] [43]'s objective-perturbation bound per coordinate: Σ_k α_{{k+1}}"
            f"β_{{k+1}}B_∞ + log(1 + J_{{k+1}})/d, J = {jacobian:g}/(D_eff b_i) (record-level "
            "Jacobian constant as quoted by paper 001, B_i read as b_i)")
    return report.with_curve(PAPER_PRINTED, per_coord, note).with_curve(
        PAPER_CORRECTED, d * per_coord,
        note.replace("per coordinate", "over the d coordinates") + "; record-level J: not a "
        "bound when the whole data set of the agent is replaced")


def output_perturbation_report(alpha: np.ndarray, params, d: int, description: str, *,
                               M: float, delta: float, alg=None, problem=None,
                               network=None) -> PrivacyReport:
    """The guarantee of an output-perturbed exact ADMM step ([48]): x* + Δ released.

    x* solves ∇f_i(x) + D_eff x = λ + D_eff a (λ, a public given the transcript); for convex f_i,
    f_i′ it moves by ‖x* − x*′‖₂ ≤ ‖∇f_i − ∇f_i′‖₂ α ≤ √d B_∞ α, so its ℓ1 sensitivity is
    ≤ d α B_∞. Sound curves ``pure_dp`` and ``pld`` of that Laplace vector release; under the
    lattice sampler (``alg``) the discrete Laplace on ``γℤ^d`` with the rounding slack added to
    d α B_∞ (``pure_dp`` only, sampler distance in δ).
    """
    n, steps = alpha.shape
    beta = host_schedule(params.beta, params.beta_growth, steps)
    scale = np.broadcast_to(1.0 / beta, (n, steps))
    events = PrivacyEvents.from_schedule(
        "laplace", sensitivity=_declared(alg, problem, d * alpha * float(params.sens), d, scale),
        scale=scale, n_agents=n, steps=steps, description=description, lattice=_on_lattice(alg))
    assumptions = (sensitivity_assumption(params.sens),
                   Assumption(f"f_i and f_i′ convex (M̄ = {M:.6g})", enforced=False,
                              how="the replacement's convexity is assumed", holds=None),
                   Assumption("the primal step is solved exactly (Newton; exact for least "
                              "squares)", enforced=False, how="not checked", holds=None))
    return _events_report(events, delta, ("closed_form", "pld"), alg, problem, network, params,
                          relation="replace_agent", released=description,
                          assumptions=assumptions)


def host_schedule(base, rate, steps: int) -> np.ndarray:
    """``base · rate^k`` for k = 1..K, host float64 ``(K,)``: β_{k+1}, η_{k+1} of steps 0..K−1."""
    return float(base) * float(rate) ** np.arange(1, steps + 1)


def geometric_schedule(base, rate, k, like=None):
    """``base · rate^k`` (β_k = 1.02^k, η_k = 0.93^k), in the dtype of ``like``."""
    dtype = None if like is None else like.dtype
    k = jnp.asarray(k, dtype)
    return jnp.asarray(base, dtype) * jnp.power(jnp.asarray(rate, dtype), k)


__all__ = [
    "OBJECTIVE_PERTURBATION_REASON", "advanced_composition", "expected_loss", "gamma0", "gamma_bound", "gamma_exact",
    "gamma_monte_carlo", "geometric_schedule", "host_schedule", "jacobian_log_ratio", "log_h",
    "objective_perturbation_curve", "objective_perturbation_report", "output_perturbation_report",
    "sensitivity_assumption", "theta_loss",
    "worst_case_curve", "worst_case_report",
]
