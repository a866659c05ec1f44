r"""Privacy of paper 004's family: Theorem 2 printed and corrected, tight accountants, calibration.

**Theorem 2** (LT-ADMM-DP, eq. (9)-(11)) in closed form, with its erratum (log₁₀ for ln):
:mod:`jaxdp.algorithms.ltadmm.theorem2`, re-exported here; the report shows it as paper curves
(:data:`~jaxdp.privacy.PAPER_PRINTED`, :data:`~jaxdp.privacy.PAPER_CORRECTED`), never as the
guarantee.

**The guarantee** (per agent, every noisy gradient of every local step accounted; the messages,
the hidden z, x and φ are post-processing of them and of the received messages, so adaptive
composition applies — no hidden state carries data that is not in an accounted release):

* ``sampling="fixed"`` (Alg. 1 l.6: b distinct rows, divided by b): relation ``replace_record``.
  An added record displaces a batch member, so per-sample clipping at C moves the mean by 2C/b.
  Accounted by dp-accounting's RDP of the Gaussian sampled without replacement (Wang, Balle &
  Kasiviswanathan 2019, Thm 27) and zCDP without amplification; dp-accounting has no PLD for it.
* ``sampling="poisson"`` (each row kept with probability q = b/n_i, sum divided by b): relation
  ``add_remove_record`` by default, per-sample Δ = C/b, Poisson-subsampled Gaussian by RDP and PLD;
  or, with ``relation="replace_record"``, replace-one: the same Δ = C/b bounds each of the two
  records' contributions (≤ 2C/b apart), accounted by dp-accounting's REPLACE_ONE PLD of the
  Poisson-subsampled Gaussian (pair ±C/b, noise multiplier σb/C) and zCDP at 2C/b without
  amplification; dp-accounting has no RDP for it (events ``"poisson_replace_one"``). The rate
  is public: n_i is the declared ``records``, or undeclared the shard capacity M (the width the
  problem's arrays are stored at, never a count of real rows) —
  :func:`~jaxdp.algorithms._sampling.poisson_rate`, the one derivation the sampler uses too.

The soft clip (7) acts on the minibatch *mean*, not on each record's term, and puts every release
in the open ζ-ball: Δ = 2ζ under every relation, and no smaller bound holds — under add/remove the
other records can hold the mean near −ζ·e while the record, large enough, pulls it to +ζ·e (the
sup 2ζ, approached). Under Poisson replace-one the same ball bounds the distance of the two worlds'
releases by 2ζ too (with x, with x', and without either: pairwise within 2ζ), so its events are
``"poisson_replace_bounded"``: the pairs of sampling without replacement under substitution at
Δ = 2ζ (dp-accounting's Poisson PLD at 2ζ), not the REPLACE_ONE pair ±2ζ, 4ζ apart, that a
per-record contribution of 2ζ would give. PORTER
releases one per-sample clipped gradient per iteration (C), as do DP-DSGD and DP-DSGT
(:mod:`jaxdp.algorithms.dpsgd`, whose events are built here too: :data:`PER_SAMPLE_C`); PriSMA releases v⁰ (C1) then one
momentum increment per iteration whose data term is η·clip_{C1} + (1−η)·clip_{C2} per sample.

One formula for the report and the differentiable calibration: :func:`zcdp_epsilon` /
:func:`zcdp_sigma` (numpy or jnp; the report's ``"zcdp"`` curve) with
:func:`release_sensitivity`; :func:`epsilon` / :func:`calibrate_noise` give the report's guarantee
(host, dp-accounting) for any method.
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np

from jaxdp.privacy import (
    PAPER_CORRECTED,
    PAPER_PRINTED,
    Assumption,
    PrivacyEvents,
    PrivacyReport,
    closed_form_curve,
    pld_epsilon,
    rdp_epsilon,
)
from jaxdp.privacy.contract import default_steps
from jaxdp.privacy.samplers import SAMPLER_SHARE, lattice_sensitivity, unit_roundoff
from jaxdp.algorithms._sampling import check_minibatch, poisson_rate, record_relation
from jaxdp.algorithms.ltadmm.theorem2 import (  # re-exported: their public path is also this module
    moments_accountant_sigma, theorem2_a, theorem2_epsilon, theorem2_order, theorem2_sigma,
)

METHODS = ("guarantee", "zcdp", "rdp", "pld", "paper_printed", "paper_corrected")
NOISE_FIELDS = {"lt_admm_dp": ("sigma_e",), "porter": ("sigma",), "prisma": ("sigma0", "sigma1"),
                "dp_dsgd": ("sigma",), "dp_dsgt": ("sigma",)}
CLIP_FIELDS = {"lt_admm_dp": ("zeta",), "porter": ("clip",), "prisma": ("clip1", "clip2"),
               "dp_dsgd": ("clip",), "dp_dsgt": ("clip",)}
PER_SAMPLE_C = ("porter", "dp_dsgd", "dp_dsgt")  # one release (G): (1/b) Σ clip_C + σξ per step

_THEOREM_NOTE = ("paper 004 Theorem 2, eq. (9): ε = A + 2√(A·L), A = 2Kτζ²q²/σ_e², q = b/m_i, "
                 "{which}; a small-q asymptotic RDP bound outside its regime at noise multiplier "
                 "σ_e/(2ζ) < 1, not a valid guarantee there")


# -- release declarations ------------------------------------------------------------------------
def relation(algorithm) -> str:
    """The neighbouring relation the algorithm is accounted under: its static ``relation``, or its
    sampling's default (fixed-size batches without replacement → ``"replace_record"``; Poisson
    batches → ``"add_remove_record"``), checked against the sampling
    (:func:`~jaxdp.algorithms._sampling.record_relation`)."""
    return record_relation(algorithm.name, algorithm.sampling, algorithm.relation)


def record_weight(algorithm) -> float:
    """How many per-sample clipping norms (over b) the declared Δ is: 2 for fixed batches (the
    new record's clipped term replaces another's, in opposite directions at worst: the distance
    of the two means), 1 for Poisson batches under either relation (the norm of one record's
    clipped term: the sum gains or loses it, or, replacing, holds one of two such terms; the
    accountants charge the replace-one pair from it, :data:`~jaxdp.privacy.SAMPLINGS`)."""
    return 2.0 if algorithm.sampling == "fixed" else 1.0


def soft(algorithm) -> bool:
    """Whether ``algorithm`` is LT-ADMM-DP with the soft clip (7), applied to the minibatch *mean*
    (every release in the ζ-ball, whatever the batch), not to each record's term."""
    return algorithm.name == "lt_admm_dp" and algorithm.clip == "soft"


def event_sampling(algorithm) -> str:
    """The events' sampling scheme: ``"without_replacement"`` (fixed batches), ``"poisson"`` or,
    under ``relation="replace_record"``, ``"poisson_replace_one"`` — or, for the soft clip,
    ``"poisson_replace_bounded"``: its releases with x, with x' and without either all lie in the
    ζ-ball, so Δ = 2ζ bounds the distance of the two worlds' releases too (not 4ζ,
    :mod:`jaxdp.privacy._dp_accounting`)."""
    if algorithm.sampling == "fixed":
        return "without_replacement"
    if relation(algorithm) != "replace_record":
        return "poisson"
    return "poisson_replace_bounded" if soft(algorithm) else "poisson_replace_one"


def release_sensitivity(algorithm, params, n_agents: int, xp=np):
    """``(N, K)``-broadcastable ℓ2 sensitivity of one release, per agent (``xp``: numpy or jnp).

    LT-ADMM-DP soft clip: 2ζ (the clipped mean lies in the open ζ-ball, whatever the batch);
    per-sample clip at C: ``record_weight·C/b``. PORTER, DP-DSGD, DP-DSGT: ``record_weight·C/b``. PriSMA: v⁰ from
    C1, then the increments from ``η C1 + (1−η) C2`` per sample (both over b). Returns ``(N, 1)``,
    or ``(N, 2)`` for PriSMA (first release, later releases).
    """
    v = {k: xp.broadcast_to(xp.asarray(val), (n_agents,))[:, None] for k, val in params.items()}
    per = record_weight(algorithm) / algorithm.batch_size
    if algorithm.name == "lt_admm_dp":
        return 2.0 * v["zeta"] if algorithm.clip == "soft" else per * v["zeta"]
    if algorithm.name in PER_SAMPLE_C:
        return per * v["clip"]
    data = v["eta"] * v["clip1"] + (1.0 - v["eta"]) * v["clip2"]
    return per * xp.concatenate([v["clip1"], data], axis=1)


def lattice(algorithm) -> bool:
    """Whether ``algorithm`` draws its noise on the lattice (its ``sampler``, the default)."""
    return algorithm.sampler_of() == "lattice"


def lattice_coefficients(algorithm, problem) -> tuple[float, float]:
    """``(grow, offset)``: under the lattice sampler the declared Δ of a release with noise σ is
    ``grow·Δ + offset·σ`` (``Δ`` of :func:`release_sensitivity`); ``(1, 0)`` for the float sampler.

    ``offset·σ = γ(1 + 2uL)√d`` (γ = σ/R) is the rounding to the lattice and ``grow`` the float
    error of a norm clip, ``1 + (d + 4)u`` (:func:`~jaxdp.privacy.samplers.lattice_sensitivity`,
    which is linear in (Δ, σ)), times, for a mean of per-sample clipped terms, the float error of
    that mean: n summed terms of norm ≤ C are within ``γ_{n}·nC/b`` of the exact mean each (any
    summation order), so two neighbours' computed means differ by at most ``Δ(1 + 2(n + 2)²u/w)``
    with ``w`` = :func:`record_weight` (``n = b`` for fixed batches, the padded shard size for
    Poisson weights; ``+2`` covers the division and PriSMA's weighted sum of two means). The soft
    clip is applied last, so its 2ζ needs no mean term.
    """
    if not lattice(algorithm):
        return 1.0, 0.0
    dtype, d = problem.features.dtype, problem.dim
    grow = float(lattice_sensitivity(1.0, d, 0.0, dtype, law="gaussian"))
    offset = float(lattice_sensitivity(0.0, d, 1.0, dtype, law="gaussian"))
    if not soft(algorithm):
        terms = algorithm.batch_size if algorithm.sampling == "fixed" else problem.n_samples
        grow *= 1.0 + 2.0 * (terms + 2) ** 2 * unit_roundoff(dtype) / record_weight(algorithm)
    return grow, offset


def lattice_draws(algorithm, problem, steps: int) -> int:
    """``D``: the lattice draws of ``steps`` engine steps (τ·N·d per LT-ADMM-DP round, N·d per
    PORTER/PriSMA iteration), for the sampler's distance to the ideal law."""
    return int(steps) * releases_per_step(algorithm) * problem.n_agents * problem.dim


def accounting_delta(algorithm, delta: float) -> float:
    """The δ the report's curves are computed at: ``δ(1 − 2⁻⁶)`` under the lattice sampler (the
    rest is kept for the sampler's distance), else ``δ``."""
    return delta * (1.0 - SAMPLER_SHARE) if lattice(algorithm) else delta


def releases_per_step(algorithm) -> int:
    """Gaussian releases per engine step: τ noisy gradients per LT-ADMM-DP round, else 1."""
    return algorithm.local_steps if algorithm.name == "lt_admm_dp" else 1


def privacy_events(algorithm, problem, params, steps: int) -> PrivacyEvents:
    """Every agent's Gaussian releases over ``steps`` engine steps, with their sampling scheme.

    PORTER and PriSMA release once per iteration. LT-ADMM-DP releases once per *local step*, τ per
    round: its events are indexed by local step (``steps·τ`` releases; release ``t`` belongs to
    round ``t // τ``). ``sampling="fixed"`` batches are declared ``"without_replacement"`` (b of
    m_i rows, replace-one sensitivities: m_i is the same in both worlds); ``sampling="poisson"``
    batches ``"poisson"`` with the sampler's rate q_i = b/n_i of the declared ``records``
    (:func:`~jaxdp.algorithms._sampling.poisson_rate`; add/remove-one sensitivities). See
    :func:`release_sensitivity`.

    Raises:
      ValueError: an unknown algorithm, a zero noise scale or an infinite clipping threshold (no
        finite ε: the algorithm is not private).
    """
    if algorithm.name not in NOISE_FIELDS:
        raise ValueError(f"no privacy declaration for algorithm {algorithm.name!r}; known: "
                         f"{sorted(NOISE_FIELDS)}")
    poisson = algorithm.sampling == "poisson"
    check_minibatch(algorithm.name, problem, algorithm.batch_size,
                    algorithm.records if poisson else None, poisson=poisson)  # before q is formed
    n = problem.n_agents
    _check_private(algorithm, params, n)
    rows = np.sum(np.asarray(problem.mask) > 0, axis=1)
    rate = poisson_rate(algorithm.batch_size, algorithm.records, problem.mask.shape[1], n)
    releases = steps * releases_per_step(algorithm)
    sens = release_sensitivity(algorithm, params, n)
    v = {k: np.broadcast_to(np.asarray(val, np.float64), (n,))[:, None]
         for k, val in params.items()}
    if algorithm.name == "prisma":
        first = np.arange(steps)[None, :] == 0  # (1, K): v⁰ at step 0, increments after
        sens = np.where(first, sens[:, :1], sens[:, 1:])
        scale = np.where(first, v["sigma0"], v["sigma1"])
    else:
        scale = v[NOISE_FIELDS[algorithm.name][0]]
    grow, offset = lattice_coefficients(algorithm, problem)
    sens = grow * sens + offset * scale  # the lattice bound (unchanged for the float sampler)
    return PrivacyEvents.from_schedule(
        "gaussian", sens, scale, n, releases, sampling_rate=rate[:, None],
        description=_DESCRIPTIONS[algorithm.name].format(tau=releases_per_step(algorithm),
                                                         clip=getattr(algorithm, "clip", "")),
        sampling=event_sampling(algorithm),
        dataset_size=None if poisson else rows, lattice=lattice(algorithm))


_DESCRIPTIONS = {
    "lt_admm_dp": "agent i's noisy gradient at every local step ({tau} per round): "
                  "{clip}-clipped minibatch mean + N(0, σ_e² I)",
    "porter": "agent i's PORTER-DP gradient Ĝ_i (P3): per-sample clipped minibatch mean "
              "+ N(0, σ²I)",
    "prisma": "agent i's momentum term (S1)/(S2): per-sample clipped minibatch terms + N(0, σ0²I) "
              "at t = 0, N(0, σ1²I) after",
    "dp_dsgd": "agent i's DP-SGD gradient g̃_i (G): per-sample clipped minibatch mean + N(0, σ²I)",
    "dp_dsgt": "agent i's DP-SGD gradient g̃_i (G) at x_i⁺, fed to the tracker: per-sample "
               "clipped minibatch mean + N(0, σ²I)",
}


def _check_private(algorithm, params, n: int) -> None:
    for field in NOISE_FIELDS[algorithm.name]:
        silent = ~(np.broadcast_to(np.asarray(params[field], np.float64), (n,)) > 0)
        if np.any(silent):
            raise ValueError(f"{algorithm.name}: {field} = 0 at agent {int(np.argmax(silent))}: "
                             "the releases are not private (no finite ε)")
    for field in CLIP_FIELDS[algorithm.name]:
        if np.any(~np.isfinite(np.asarray(params[field], np.float64))):
            raise ValueError(f"{algorithm.name}: {field} = inf: unbounded sensitivity "
                             "(no finite ε)")


# -- one formula for the report and for calibration ---------------------------------------------
def zcdp_epsilon(releases, sensitivity, sigma, delta, xp=np, *, lattice=(1.0, 0.0)):
    """ε of ``releases`` Gaussian releases of sensitivity Δ and noise σ by zCDP (no amplification):
    ``ρ = releases·Δ²/(2σ²)``, ``ε = ρ + 2√(ρ ln(1/δ))`` (Bun & Steinke 2016, Prop. 1.6, 1.3).

    ``lattice``: ``(grow, offset)`` of :func:`lattice_coefficients`, the declared Δ being
    ``grow·Δ + offset·σ`` (the lattice sampler; pass δ of :func:`accounting_delta` too). The
    report's ``"zcdp"`` curve for a constant schedule (tested equal; below the lattice sampler's
    cap, where the report says inf); ``xp`` is ``numpy`` or ``jax.numpy`` (differentiable in σ).
    """
    grow, offset = lattice
    rho = releases * (grow * sensitivity / sigma + offset) ** 2 / 2.0
    return rho + 2.0 * xp.sqrt(rho * math.log(1.0 / delta))


def zcdp_sigma(epsilon, releases, sensitivity, delta, xp=np, *, lattice=(1.0, 0.0)):
    """σ with :func:`zcdp_epsilon` = ``epsilon``: ``grow·Δ/(√(2ρ/releases) − offset)``,
    ``√ρ = √(ε+L) − √L`` (``Δ√(releases/(2ρ))`` for the float sampler). Under the lattice the
    ratio must exceed ``offset`` (the rounding alone spends ``releases·offset²/2``): a target
    below that gives ``inf`` or a negative σ."""
    grow, offset = lattice
    big_l = math.log(1.0 / delta)
    root_rho = xp.sqrt(epsilon + big_l) - math.sqrt(big_l)
    return grow * sensitivity / (root_rho * xp.sqrt(2.0 / releases) - offset)


def epsilon(algorithm, problem, params, steps: int, method: str = "guarantee", *,
            delta: float) -> np.ndarray:
    """Per-agent final ε of ``algorithm`` after ``steps`` engine steps by one method.

    Under the lattice sampler (the default) these are the lattice report's curves: every
    accountant of the continuous mechanism (a lattice release is its post-processing), with the
    lattice sensitivities and the sampler's distance in δ (``inf`` above its cap). Under ``sampler="float"`` they are the real-valued mechanism's (the
    report's ``"ideal …"`` curves, not a guarantee for the floats released).

    Args:
      algorithm, problem, params, steps: as :func:`privacy_events`.
      method: ``"guarantee"`` (the report's: the minimum of its sound curves), ``"zcdp"``,
        ``"rdp"``, ``"pld"``, or Theorem 2 (LT-ADMM-DP with
        the soft clip): ``"paper_printed"`` (log₁₀) or ``"paper_corrected"`` (ln).
      delta: δ in (0, 1).

    Returns:
      ``(N,)`` float64 ε.

    Raises:
      ValueError: an unknown method, a theorem method for an algorithm it does not cover, or a
        method that does not support the sampling.
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}; got {method!r}")
    if method.startswith("paper"):
        return _theorem2(algorithm, problem, params, steps, delta, method)
    events = privacy_events(algorithm, problem, params, steps)
    if events.lattice:  # the lattice report's own accountants
        methods = {"zcdp": ("closed_form",), "rdp": ("rdp",), "pld": ("pld",)}.get(
            method, ("closed_form", "rdp", "pld"))
        report = PrivacyReport.from_events(events, delta, methods=methods,
                                           at_steps=(events.steps,),
                                           lattice_draws=lattice_draws(algorithm, problem, steps))
        return report.epsilon
    if method == "rdp":
        return rdp_epsilon(events, delta)
    if method == "pld":
        return pld_epsilon(events, delta, 1e-3)
    if method == "zcdp":
        return closed_form_curve(events, delta)[1][:, -1]
    no_rdp = events.sampling in ("poisson_replace_one", "poisson_replace_bounded")
    tight = pld_epsilon if no_rdp else rdp_epsilon  # dp-accounting has no RDP for them
    return np.minimum(tight(events, delta), closed_form_curve(events, delta)[1][:, -1])


def _theorem2(algorithm, problem, params, steps, delta, method) -> np.ndarray:
    if algorithm.name != "lt_admm_dp" or algorithm.clip != "soft":
        raise ValueError(f"Theorem 2 covers LT-ADMM-DP with clip='soft' only; got "
                         f"{algorithm.name} (clip={getattr(algorithm, 'clip', None)!r})")
    _check_private(algorithm, params, problem.n_agents)
    rows = np.sum(np.asarray(problem.mask) > 0, axis=1)
    return np.broadcast_to(theorem2_epsilon(
        steps, algorithm.local_steps, params.zeta, algorithm.batch_size, rows, params.sigma_e,
        delta, log_base=10 if method == "paper_printed" else None), (problem.n_agents,))


def calibrate_noise(algorithm, problem, params, steps: int, target_epsilon: float,
                    method: str = "guarantee", *, delta: float, rtol: float = 1e-6):
    """``params`` with every noise field scaled by one factor so the worst agent's ε = target.

    Noise fields: LT-ADMM-DP σ_e; PORTER σ; PriSMA σ0 and σ1 (their ratio is kept). Brent's
    method on the log of the factor; the result meets the target (``ε ≤ target``). Theorem 2
    (LT-ADMM-DP only) uses the closed form :func:`theorem2_sigma` instead.

    Returns:
      A new Params (same type).

    Raises:
      ValueError: a target ``≤ 0``, or any error of :func:`epsilon`.
    """
    if not target_epsilon > 0:
        raise ValueError(f"target_epsilon must be > 0; got {target_epsilon!r}")
    fields = NOISE_FIELDS[algorithm.name] if algorithm.name in NOISE_FIELDS else ()
    if method.startswith("paper"):
        epsilon(algorithm, problem, params, steps, method, delta=delta)  # checks applicability
        rows = np.sum(np.asarray(problem.mask) > 0, axis=1).min()  # worst agent: smallest m_i
        sigma = theorem2_sigma(target_epsilon, steps, algorithm.local_steps,
                               np.max(np.asarray(params.zeta)), algorithm.batch_size, rows,
                               delta, log_base=10 if method == "paper_printed" else None)
        return params.replace(sigma_e=float(sigma))

    def worst(factor):
        scaled = params.replace(**{f: np.asarray(params[f], np.float64) * factor for f in fields})
        return float(np.max(epsilon(algorithm, problem, scaled, steps, method, delta=delta)))

    factor = _solve_decreasing(worst, target_epsilon, rtol)
    return params.replace(**{f: np.asarray(params[f], np.float64) * factor for f in fields})


def _solve_decreasing(f, target: float, rtol: float) -> float:
    """The smallest x (to ``rtol``) with decreasing ``f(x) ≤ target``: a bracket by doubling or
    halving from x = 1, then Brent's method on log f(e^u) − log target; returns a feasible x."""
    from scipy.optimize import brentq

    lo, hi = 1.0, 1.0
    while f(hi) > target:
        lo, hi = hi, 2.0 * hi
        if hi > 1e12:
            raise ValueError(f"target ε = {target!r} not reached even with noise scaled by {hi:g}")
    while lo == hi or f(lo) <= target:
        hi, lo = lo, 0.5 * lo
        if lo < 1e-12:
            raise ValueError(f"target ε = {target!r} met even with noise scaled by {lo:g}")
    u = brentq(lambda u: math.log(f(math.exp(u))) - math.log(target), math.log(lo), math.log(hi),
               xtol=rtol / 4)
    x = math.exp(u)
    while f(x) > target:  # step to the feasible side of the root
        x *= 1.0 + rtol / 4
    return x


# -- the algorithms' privacy reports --------------------------------------------------------------
def _declared(algorithm) -> str:
    """Where the public record count n_i of the Poisson rate comes from, in words."""
    if algorithm.records is None:
        return "the shard capacity M (the problem's row width: public, not a count of real rows)"
    return f"records = {algorithm.records!r} declared"


def _contract(algorithm) -> dict:
    """Relation, what is released, and the (enforced) clipping assumption of the family."""
    fixed = algorithm.sampling == "fixed"
    replace = not fixed and relation(algorithm) == "replace_record"
    how = ("fixed-size minibatches of b rows without replacement: a replaced record changes at "
           "most one batch member (sampled without replacement, replace-one; RDP of Wang, Balle & "
           "Kasiviswanathan 2019)" if fixed else
           f"Poisson minibatches (each row with probability q = b/n_i, n_i = {_declared(algorithm)}"
           ", the sum divided by b): " + (
               "a replaced record is in the batch with probability q in both worlds, the "
               "soft-clipped means with it, with its replacement and without either pairwise "
               "within 2ζ (Poisson subsampling, replace-one: the pairs of sampling without "
               "replacement under substitution, dp-accounting's Poisson PLD at 2ζ; no RDP)"
               if replace and soft(algorithm) else
               "a replaced record is in the batch with probability q in both worlds, its term "
               "one of two of norm ≤ C/b, and every other record keeps its rate (Poisson "
               "subsampling, replace-one: dp-accounting's REPLACE_ONE PLD; no RDP)" if replace else
               "an added or removed record changes one term and every other record keeps its "
               "rate (Poisson subsampling, add/remove-one among data sets of at most n_i records "
               "per agent, checked)"))
    if soft(algorithm):
        clip = Assumption("the soft-clipped minibatch mean ζ/(ζ+‖g‖)·g lies in the ζ-ball, so any "
                          "two batches give Δ ≤ 2ζ", enforced=True, how="soft clip (7) at ζ")
    else:
        field = {"lt_admm_dp": "ζ", "prisma": "C1, C2"}.get(algorithm.name, "C")
        moves = ("two neighbours' batch sums differ by ≤ 2×" if fixed else
                 "each record's term in the batch sum is ≤ ")
        clip = Assumption(f"every per-sample term is clipped to norm ≤ {field}, so {moves}"
                          f"{field} (÷ b)",
                          enforced=True, how=f"per-sample clip_by_norm at {field}")
    released = {
        "lt_admm_dp": "every edge message z_ij − 2ρx_i⁺ of every round, to i's neighbours; it is "
                      "a post-processing of agent i's noisy gradients (accounted, all τ per round) "
                      "and received messages",
        "porter": "agent i's C(X⁺ − H) and C(V⁺ − G_v) at every iteration, to its neighbours; "
                  "post-processing of its noisy gradients Ĝ_i (accounted) and received messages",
        "prisma": "agent i's x^t at every iteration, to its neighbours; post-processing of its "
                  "noisy momentum terms (accounted) and received models",
        "dp_dsgd": "agent i's x_i^k at every step, to its neighbours; x_i^{k+1} = Σ_j W_ij x_j^k − "
                   "α g̃_i^k is post-processing of its noisy gradient g̃_i^k (accounted) and "
                   "received models",
        "dp_dsgt": "agent i's x_i^k and y_i^k at every step, to its neighbours; both are built from "
                   "received x, y and its own noisy gradients g̃_i (y⁺ = Wy + g̃⁺ − g̃; each g̃ "
                   "accounted once)",
    }[algorithm.name]
    sampling = Assumption("minibatches are drawn as stated, independently of the data", True, how)
    return {"relation": relation(algorithm), "released": released,
            "assumptions": (clip, sampling)}


def ltadmm_report(algorithm, problem, network, params, steps: int, *,
                  delta: float) -> PrivacyReport:
    """LT-ADMM-DP's report at ≤ 20 rounds: the guarantee from every noisy gradient (τ per round;
    the messages are their post-processing, so adaptive composition applies), and for the soft
    clip Theorem 2 as printed (log₁₀) and corrected (ln) as paper curves."""
    del network
    events = privacy_events(algorithm, problem, params, steps)  # indexed by local step
    rounds = default_steps(steps, 20)
    report = PrivacyReport.from_events(events, delta, methods=("closed_form", "rdp", "pld"),
                                       at_steps=rounds * algorithm.local_steps,
                                       lattice_draws=_draws(events, algorithm, problem, steps),
                                       **_contract(algorithm))
    report = dataclasses.replace(report, steps=rounds)  # report per round
    if algorithm.clip != "soft":
        return report
    n = problem.n_agents
    rows = np.sum(np.asarray(problem.mask) > 0, axis=1)[:, None]
    per = {k: np.broadcast_to(np.asarray(params[k], np.float64), (n,))[:, None]
           for k in ("zeta", "sigma_e")}
    for name, base, which in ((PAPER_PRINTED, 10, "L = log₁₀(1/δ): the paper's printed ε "
                               "(erratum)"),
                              (PAPER_CORRECTED, None, "L = ln(1/δ), the correct conversion")):
        curve = theorem2_epsilon(report.steps[None, :], algorithm.local_steps, per["zeta"],
                                 algorithm.batch_size, rows, per["sigma_e"], delta,
                                 log_base=base)
        report = report.with_curve(name, curve, _THEOREM_NOTE.format(which=which))
    return report


def baseline_report(algorithm, problem, network, params, steps: int, *,
                    delta: float) -> PrivacyReport:
    """PORTER's or PriSMA's report: zCDP (no amplification), RDP (and PLD for Poisson batches) of
    the noisy gradients / momentum terms, under the relation of the sampling."""
    del network
    events = privacy_events(algorithm, problem, params, steps)
    return PrivacyReport.from_events(
        events, delta, methods=("closed_form", "rdp", "pld"),
        lattice_draws=_draws(events, algorithm, problem, steps), **_contract(algorithm))


def _draws(events, algorithm, problem, steps: int) -> int:
    return lattice_draws(algorithm, problem, steps) if events.lattice else 0


__all__ = [
    "CLIP_FIELDS", "METHODS", "NOISE_FIELDS", "accounting_delta", "baseline_report",
    "calibrate_noise", "epsilon", "event_sampling", "lattice", "lattice_coefficients",
    "lattice_draws", "ltadmm_report", "moments_accountant_sigma", "privacy_events",
    "record_weight", "relation",
    "release_sensitivity", "releases_per_step", "theorem2_a", "theorem2_epsilon",
    "theorem2_order", "theorem2_sigma", "zcdp_epsilon", "zcdp_sigma",
]
