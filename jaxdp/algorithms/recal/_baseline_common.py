"""What paper 003's reconstructed DP baselines share: the noise schedule's Params, the starting
point and counters, and the privacy report of per-step Gaussian releases with Theorem 4 as the
paper's curve. The baselines are in :mod:`jaxdp.algorithms.recal.baselines` (DP-NIDS, DP-EXTRA) and
:mod:`jaxdp.algorithms.recal.admm_baselines` (DP-ADMM, DP-RWADMM, DP-MRADMM).
"""
from __future__ import annotations

import dataclasses
import math

import chex
import jax.numpy as jnp
import numpy as np

from jaxdp._types import AgentArray
from jaxdp.algorithms.recal import privacy as acct
from jaxdp.core import param
from jaxdp.privacy import PAPER_PRINTED, PrivacyReport


@chex.dataclass(frozen=True)
class NoiseScheduleParams:
    """The Gaussian schedule σ_t = σ₁ R^{−(t−1)/2} every reconstructed DP baseline of paper 003
    shares (their Params subclass this and list their own fields after these)."""

    log_sigma1: float = param(0.0, doc="log σ₁ (natural log) of the first transmission's noise")
    log_R: float = param(math.log(1.05), domain="nonnegative",
                         doc="log R ≥ 0: σ_t = σ₁ R^{−(t−1)/2}, t the release count")
    c: float = param(1.0, domain="positive",
                     doc="c, paper 003's gradient bound (Assumption 3): every gradient the step "
                         "uses is clipped to it (enforce_bound, the default), and the "
                         "sensitivities scale with it")
    delta: float = param(1e-3, domain="probability",
                         doc="δ the experiments calibrate to; reports take privacy(delta=)")


def start(problem, network, params) -> tuple[AgentArray, dict]:
    """``x⁰ = x0·1`` for every agent ``(N, d)`` and zeroed release / message counters."""
    x0 = jnp.full((network.n_agents, problem.dim), params.x0, problem.features.dtype)
    return x0, {"releases": jnp.zeros((network.n_agents,), jnp.int32),
                "messages": jnp.zeros((), jnp.int32)}


@dataclasses.dataclass(frozen=True)
class BoundedGradient:
    """Static configuration every paper-003 baseline shares: ``enforce_bound`` (default
    ``True``) clips each gradient the step uses to the declared ``c``
    (:func:`~jaxdp.algorithms.recal.privacy.bounded_gradient`), so Assumption 3 holds for any
    data and the report is finite; ``False`` runs the paper's printed, unclipped step, whose
    report is finite only where the loss bounds ‖∇f_i(x)‖ ≤ c for every x
    (:func:`~jaxdp.algorithms.recal.privacy.gradient_assumption`)."""

    enforce_bound: bool = True

    def gradients(self, problem, X, params):
        """(N, d) ``∇f_i(x_i)``, clipped to ``params.c`` where the bound is enforced."""
        return acct.bounded_gradient(problem.local_grads(X), params.c, self.enforce_bound)

    def bounded_problem(self, problem, params):
        """``problem`` whose ``local_grads`` are clipped to ``params.c`` where the bound is
        enforced (for a core algorithm that calls ``problem.local_grads`` itself)."""
        return GradientClipped(problem, params.c) if self.enforce_bound else problem


class GradientClipped:
    """A view of ``problem`` whose ``local_grads`` rows are clipped to ``c``; every other
    attribute is the problem's."""

    def __init__(self, problem, c):
        self._problem, self._c = problem, c

    def __getattr__(self, name):
        return getattr(self._problem, name)

    def local_grads(self, X, batch_idx=None):
        return acct.bounded_gradient(self._problem.local_grads(X, batch_idx), self._c, True)


def step_report(problem, network, params, sens, log_scale, paper_releases, paper_sens, *,
                 delta, released, description, alg=None):
    """The report of Gaussian releases over K engine steps, plus Theorem 4 as the paper's curve.

    Args:
      sens: (N, K) the sensitivity of each step's release given the transcript (0 where the
        step releases nothing private).
      log_scale: (K,) log σ of each step's release (a lower bound where it depends on the walk:
        the lattice bound ``Δ + (σ/R)(1 + 2uL)√d`` over σ decreases in σ, so it stays sound).
      paper_releases: fn(k) → the releases Theorem 4 counts after k steps.
      paper_sens: Lemma 5-style history-fixed Δ: scalar, (N,) or (N, T) per release.
      alg: the algorithm whose ``sampler`` decides the events: under the lattice sampler each
        release's Δ is the lattice bound (:meth:`~jaxdp.core.Accounting.release_sensitivity`,
        ``clipped`` where the gradient clip is enforced, covering its float error) and the
        events are lattice streams; ``None`` (or no sampler) declares ``sens`` as it is. Its
        ``enforce_bound`` (absent: ``False``) says whether Assumption 3 is enforced by the
        step's clip or must be proven for every x (:func:`acct.gradient_assumption`).
    """
    enforced = bool(getattr(alg, "enforce_bound", False))
    sens = np.asarray(sens, np.float64)
    scale = np.exp(np.broadcast_to(np.asarray(log_scale, np.float64), sens.shape))
    lattice = alg is not None and alg.sampler_of() == "lattice"
    if lattice:  # nothing private released (Δ = 0) stays 0: the draw is not released
        declared = alg.accounting.release_sensitivity(sens, problem.dim, scale, problem,
                                                      law="gaussian", clipped=enforced)
        sens = np.where(sens > 0, declared, 0.0)
    events = dataclasses.replace(acct.step_events(sens, log_scale, description), lattice=lattice)
    contract = dict(methods=("closed_form", "rdp", "pld"), relation="replace_agent",
                    released=released, assumptions=(acct.gradient_assumption(
                        problem, float(params.c), enforced=enforced),))
    report = (PrivacyReport.from_events(events, delta, **contract) if alg is None else
              alg.accounting.report(events, problem, network, params, sens.shape[1],
                         delta=delta, **contract))
    xi = np.asarray([paper_releases(int(k)) for k in report.steps])
    eps, log10 = acct.theorem4_curve(network.n_agents, xi, sens=paper_sens,
                                     log_sigma1=float(params.log_sigma1),
                                     log_R=float(params.log_R), delta=delta)
    return report.with_curve(PAPER_PRINTED, eps, "reconstructed baseline accounted as paper 003 "
                             "accounts DP-RECAL (history fixed): " + acct.THEOREM4_NOTE,
                             log10=log10)
