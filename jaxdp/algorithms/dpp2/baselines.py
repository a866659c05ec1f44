"""The private baselines of paper 000 (DPP², arXiv 2511.02283, Sec. VI, Fig. 3): DiaDSP and PPDC.

The DPP² paper gives only their names, references and Fig. 3's parameters, not their update rules.
The forms below are reconstructions, flagged
[VERIFY against the cited papers]; they could not be checked against the cited papers here (no
access to their text). What is taken from where:

* **DiaDSP** — T. Ding, S. Zhu, J. He, C. Chen & X. Guan, "Differentially private distributed
  optimization via state and direction perturbation in multiagent systems", IEEE TAC 67(2), 2022
  (the paper's [25]). Gradient tracking with Laplace noise on both transmitted variables, state x
  and direction y, decaying as ``u r^k``:

  .. code-block:: text

      x̃^k = x^k + ξ^k,  ỹ^k = y^k + ζ^k,   ξ ~ Lap(u_x r^k), ζ ~ Lap(u_y r^k)   (sent)
      x^{k+1} = W x̃^k − α y^k
      y^{k+1} = W ỹ^k + ∇F(x^{k+1}) − ∇F(x^k),   y⁰ = ∇F(x⁰)

  W is the network's doubly stochastic mixing matrix (Metropolis–Hastings by default). The DPP²
  paper leaves open whether the self-terms use the noisy copies; here every term Σ_j w_ij x̃_j
  includes j = i with the agent's own transmitted (noisy) value. Without noise this is DIGing
  (Nedić, Olshevsky & Shi 2017, eq. (3)), and that is how it is built: ``DIGing`` with its
  messages ``x`` and ``y`` each through a channel ``+ u r^k · Lap(1)`` (one draw per agent,
  ``self_term="released"``). PGTC ([27]'s gradient tracking with
  compression) reduces to this form without compression (paper, Sec. VI) and is not implemented
  separately: its compressor is not specified.
* **PPDC** — A. Xie, X. Yi, X. Wang, M. Cao & X. Ren, "Differentially private and
  communication-efficient distributed nonconvex optimization algorithms", Automatica 177, 2025
  (the paper's [27]), simulated without compression, as in the paper. A DP version of the
  primal–dual algorithm of Yi et al. ([14]) with Laplace noise on the transmitted state:

  .. code-block:: text

      x̃^k = x^k + ξ^k,   ξ ~ Lap(u_x r^k)                                        (sent)
      x^{k+1} = x^k − η(γ P x̃^k + ω v^k + ∇F(x^k))
      v^{k+1} = v^k + ηω P x̃^k,   v⁰ = 0

  P is the network's Laplacian-like matrix (I − W_MH by default; ηγλ_max(P) must stay below 2,
  so the raw Laplacian diverges at Fig. 3's η = 0.01, γ = 65). The paper also lists ``u_v = 1``,
  whose role could not be recovered; it is not modelled. Without noise this is Yi et al.'s
  primal–dual algorithm (:class:`~jaxdp.algorithms.YiPrimalDual`), built the same way: its
  message ``x`` through ``+ u r^k · Lap(1)``.

Both are :class:`~jaxdp.channels.PrivateVariant` s: the non-private algorithm computes, sends and
mixes, the channels add the noise, and the class keeps the paper's Params (mapped onto the
channel fields by ``field_map``) and its own accountant. Their draws come from the channel's key
stream (``noise`` returns the channel key; the per-node references replay the channel's
standard draws).

Privacy: the papers' own ε theorems use other adjacency notions and are not reproduced. Both
classes report a sound guarantee per agent (relation ``"replace_agent"``, DPP²'s δ-adjacency
assumed): pure-DP and PLD composition of their Laplace releases, with accumulated per-step
sensitivities from the matched-observation argument of DPP²'s App. A-A
(:func:`~jaxdp.algorithms.dpp2.privacy.diadsp_sensitivities`,
:func:`~jaxdp.algorithms.dpp2.privacy.ppdc_sensitivities`) — [OURS].

Shapes: N agents, d model dimension.
"""
from __future__ import annotations

import dataclasses

import chex
import numpy as np

from jaxdp.core import Algorithm, param
from jaxdp.algorithms.catalogue.classic import DIGing
from jaxdp.algorithms.catalogue.primal_dual import YiPrimalDual
from jaxdp.algorithms.dpp2 import privacy as acc
from jaxdp.algorithms.dpp2.algorithm import adjacency_assumptions
from jaxdp.channels import PrivateVariant, chain, laplace
from jaxdp.privacy import PrivacyReport
from jaxdp.privacy.contract import concat


@chex.dataclass(frozen=True)
class DiaDSPParams:
    alpha: float = param(0.01, domain="positive",
                         doc="α, step along the tracked direction (Fig. 3)")
    u_x: float = param(2.0, domain="nonnegative",
                       doc="u_{x,i}, scale of the state noise ξ at k = 0 (Fig. 3)")
    u_y: float = param(5.0, domain="nonnegative",
                       doc="u_{y,i}, scale of the direction noise ζ at k = 0 (Fig. 3)")
    r: float = param(0.5, domain="probability",
                     doc="noise decay rate, as DPP²'s r̄ in Fig. 3's sweep")


@chex.dataclass(frozen=True)
class PPDCParams:
    gamma: float = param(65.0, domain="positive", per_agent=False,
                         doc="γ, consensus (augmented Lagrangian) weight (Fig. 3)")
    omega: float = param(5.0, domain="positive", per_agent=False, doc="ω, dual weight (Fig. 3)")
    eta: float = param(0.01, domain="positive", per_agent=False, doc="η, step size (Fig. 3)")
    u_x: float = param(1.0, domain="nonnegative",
                       doc="u_{x,i}, scale of the state noise ξ at k = 0 (Fig. 3)")
    r: float = param(0.5, domain="probability",
                     doc="noise decay rate, as DPP²'s r̄ in Fig. 3's sweep")


@dataclasses.dataclass(frozen=True)
class _DecayingLaplace(PrivateVariant):
    """A non-private algorithm whose named messages go out with Laplace noise of scale ``u r^k``
    (one broadcast draw per agent, mixed by every receiver and by the agent itself), and the
    privacy accounting DiaDSP and PPDC share.

    Attributes:
      adjacency: δ of DPP²'s Def. 1 used by :meth:`account` (pure ε is proportional to it).
    """

    adjacency: float = 1.0
    streams = ()  # (message, Params scale field, description) per transmitted variable

    def account(self, problem, network, params, steps, *, delta):
        """Laplace releases at their accumulated sensitivities ([OURS], DPP²'s δ-adjacency).

        Given the transcript, the hidden state that each release carries is a deterministic function
        of the transcript and f_i (matched observations), so its difference between neighbours is
        bounded by a recursion in k (:meth:`_sensitivities`), never taken with the history fixed.
        Sound curves ``"pure_dp"`` and ``"pld"``; ``u = 0`` or ``r = 0`` gives ε = inf.
        """
        n = network.n_agents
        vec = lambda v: np.broadcast_to(np.asarray(v, np.float64), (n,))  # noqa: E731
        contract = dict(relation="replace_agent", released=self.released,
                        assumptions=adjacency_assumptions(self.adjacency, problem))
        scales = [vec(params[scale]) for _, scale, _ in self.streams]
        if min(float(np.min(vec(params.r))), *(float(np.min(u)) for u in scales)) <= 0:
            return PrivacyReport.infinite(n, steps, delta, "u = 0 or r = 0: a release without "
                                          "Laplace noise", **contract)
        M = float(np.max(problem.smoothness()))
        sens = self._sensitivities(steps, problem.dim, M, params)
        events = concat([acc.laplace_decay_events(s, u, vec(params.r), steps, desc)
                         for s, u, (_, _, desc) in zip(sens, scales, self.streams, strict=True)])
        events = self.accounting.declare_releases(events, problem, clipped=False)
        return self.accounting.report(events, problem, network, params, steps, delta=delta,
                           methods=("closed_form", "pld"), **contract)


def laplace_routes(streams) -> tuple:
    """Each transmitted variable's channel: ``+ u r^k · Lap(1)``, one draw per agent, sent to
    every neighbour and mixed by the agent itself (``W x̃`` includes ``w_ii x̃_i``)."""
    return tuple((message, chain(laplace(name=message), broadcast=True, self_term="released"))
                 for message, _, _ in streams)


def laplace_fields(streams) -> tuple:
    """The channel fields of :func:`laplace_routes` read from the own Params ``(scale, r)``."""
    return tuple(pair for message, scale, _ in streams
                 for pair in ((f"{message}_b", scale), (f"{message}_decay", "r")))


_DIADSP_STREAMS = (("x", "u_x", "x̃ = x + ξ"), ("y", "u_y", "ỹ = y + ζ"))
_PPDC_STREAMS = (("x", "u_x", "x̃ = x + ξ"),)


@dataclasses.dataclass(frozen=True)
class DiaDSP(_DecayingLaplace):
    """DiaDSP (Ding et al. 2022): DIGing with Laplace noise on both messages, state x and
    direction y (:class:`~jaxdp.algorithms.DIGing` through two channels)."""

    inner: Algorithm = DIGing()
    routes: tuple = laplace_routes(_DIADSP_STREAMS)
    name = "diadsp"
    cites = (
        "Ding, Zhu, He, Chen & Guan, IEEE TAC 2022",
        "compared in Ou, Wang, Liu & Lu 2025 (paper 000), Fig. 3",
    )
    provenance = "baseline"
    params_type = DiaDSPParams
    streams = _DIADSP_STREAMS
    field_map = laplace_fields(_DIADSP_STREAMS)
    released = "agent i's x̃_i^k and ỹ_i^k to its neighbours, k = 0..K−1"
    models_note = ("x^K = W x̃^{K−1} − α y^{K−1}: the model reveals the hidden direction y^{K−1} "
                   "= ỹ^{K−1} − ζ^{K−1}, i.e. the noise ζ and through it ∇f_i (ε = inf)")

    def _sensitivities(self, steps, d, M, params):
        alpha = float(np.max(params.alpha))
        return acc.diadsp_sensitivities(steps, d=d, delta=self.adjacency, alpha=alpha, M=M)


@dataclasses.dataclass(frozen=True)
class PPDC(_DecayingLaplace):
    """PPDC without compression (Xie et al. 2025): Yi et al.'s primal–dual algorithm with Laplace
    noise on the state it sends (:class:`~jaxdp.algorithms.YiPrimalDual` through a channel)."""

    inner: Algorithm = YiPrimalDual()
    routes: tuple = laplace_routes(_PPDC_STREAMS)
    name = "ppdc"
    cites = (
        "Xie, Yi, Wang, Cao & Ren, Automatica 2025",
        "compared in Ou, Wang, Liu & Lu 2025 (paper 000), Fig. 3",
    )
    provenance = "baseline"
    params_type = PPDCParams
    streams = _PPDC_STREAMS
    field_map = laplace_fields(_PPDC_STREAMS)
    released = "agent i's x̃_i^k to its neighbours, k = 0..K−1"
    models_note = ("x^K = x^{K−1} − η(γPx̃ + ωv + ∇f_i(x^{K−1})) is built from the noiseless "
                   "x^{K−1}: with the transcript it reveals ξ^{K−1} and ∇f_i(x^{K−1}) (ε = inf)")

    def _sensitivities(self, steps, d, M, params):
        return (acc.ppdc_sensitivities(steps, d=d, delta=self.adjacency, eta=float(params.eta),
                                       M=M),)


__all__ = ["DiaDSP", "DiaDSPParams", "PPDC", "PPDCParams"]
