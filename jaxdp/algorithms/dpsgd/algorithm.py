r"""Decentralized DP-SGD (DP-DSGD) and DP gradient tracking (DP-DSGT).

Both draw, per step and per agent i, a minibatch B_i of its m_i records — Poisson with rate
q_i = b/n_i (``sampling="poisson"``, the default: what DP-SGD's accountant assumes; n_i the
declared public record count ``records``, never the data's m_i, as Opacus' ``sample_rate``) or
b distinct rows (``"fixed"``) — and release one noisy gradient (Abadi et al. 2016, Alg. 1, per agent)::

    g̃_i = (1/b) Σ_{h∈B_i} clip_C(∇f_{i,h}(x_i)) + σ ξ_i,   ξ_i ~ N(0, I_d)         (G)

divided by the *expected* size b for Poisson batches; σ is the noise std (noise multiplier σb/C,
as PORTER's σ). ``sampler="lattice"`` (default) releases (G) on the lattice (σ/R)ℤ^d
(:func:`~jaxdp.privacy.add_noise`), private as floats; ``"float"`` adds the float draw (report: inf
with the ideal curves kept).

* **DP-DSGD** — D-PSGD of Lian, Zhang, Zhang, Hsieh, Zhang & Liu, "Can decentralized algorithms
  outperform centralized algorithms?", NeurIPS 2017, Alg. 1 (line 5: x_{k+1,i} = Σ_j W_ij x_{k,j}
  − γ ∇F_i(x_{k,i}; ξ_{k,i})) with (G) as the stochastic gradient::

      x_i⁺ = Σ_j W_ij x_j − α g̃_i(x_i)                                               (D)

  The message is x_i (one ``mix`` per step).
* **DP-DSGT** — gradient tracking in the DIGing form (Nedić, Olshevsky & Shi, SIAM J. Optim. 2017,
  eq. (3)) with stochastic gradients (the DSGT of Pu & Nedić, "Distributed stochastic gradient
  tracking methods", Math. Program. 2021, analyses this recursion with noisy gradients), fed (G)::

      x⁺ = W x − α y,   g̃⁺ = g̃(x⁺),   y⁺ = W y + g̃⁺ − g̃                          (T)

  with x⁰ = y⁰ = g̃⁰ = 0 (public; so the first step moves nothing and computes g̃¹ = y¹, keeping
  exactly one release per step, as PORTER's start). The messages are x and y.

**Privacy** (record-level, per agent; :func:`jaxdp.algorithms.ltadmm.privacy.privacy_events`, the
event builder PORTER uses): one release (G) per step per agent, with per-sample ℓ2 sensitivity
C/b under add/remove-one for Poisson batches (rate q_i = b/n_i of the declared ``records``, the
same in both worlds; Zhu & Wang 2019 on the lattice; undeclared: ε = inf) or
2C/b under replace-one for fixed batches (Wang, Balle & Kasiviswanathan 2019); Poisson batches
also offer replace-one, ``relation="replace_record"`` (dp-accounting's REPLACE_ONE PLD of the
Poisson-subsampled Gaussian, pair ±C/b; no RDP; docs/privacy.md). Everything agent i
sends is post-processing of its releases and of received messages: in (D) x_i⁺ depends on its
data only through g̃_i; in (T) x_i⁺ is built from received x, y and its own y_i, and
y_i⁺ = Σ_j W_ij y_j + g̃_i⁺ − g̃_i from received y's and its own released g̃'s — so the tracker
adds no release and adaptive composition over the K releases applies
(``tests/algorithms/test_dpsgd.py`` counts the ``add_noise`` calls of the traced program).

Shapes: N agents, d model dimension, M padded shard size, b expected batch size.
"""
from __future__ import annotations

import dataclasses
from typing import ClassVar

import chex

from jaxdp._types import AgentArray, Array, per_agent
from jaxdp.core import param, zeros_like_models
from jaxdp.algorithms._sampling import sample_counts
from jaxdp.algorithms.ltadmm.baselines import _Minibatched
from jaxdp.privacy import add_noise


@chex.dataclass(frozen=True)
class DPSGDParams:
    alpha: float = param(0.1, domain="positive", doc="α, step size, (D) / (T)")
    clip: float = param(1.0, domain="positive", doc="C, per-sample clipping threshold, (G)")
    sigma: float = param(0.5, domain="nonnegative",
                         doc="σ, std of the Gaussian noise on the clipped mean, (G)")


@chex.dataclass(frozen=True)
class DPDSGDState:
    x: AgentArray  # (N, d)
    n_rows: Array  # (N,) int32 m_i, constant
    rows: Array  # (N, M) bool, constant: the real rows


@chex.dataclass(frozen=True)
class DPDSGTState:
    x: AgentArray  # (N, d) x^k
    y: AgentArray  # (N, d) y^k, the tracker
    g: AgentArray  # (N, d) g̃^k, the last released gradient
    n_rows: Array  # (N,) int32 m_i, constant
    rows: Array  # (N, M) bool, constant: the real rows


@dataclasses.dataclass(frozen=True)
class _DPSGD(_Minibatched):
    """Shared: Poisson sampling by default, σ as the noise field, the release (G)."""

    # jaxdp.privacy.contract.NOISE_OWNERS: each agent's releases carry its own fresh noise only
    noise_owner = "sender"
    sampling: str = "poisson"
    noise_field: ClassVar[str] = "sigma"
    params_type: ClassVar[type] = DPSGDParams
    provenance = "standard"

    def _release(self, problem, x, noise, params) -> AgentArray:
        """(G): the per-sample clipped minibatch mean plus σξ, on the lattice by default."""
        mean = self._clipped_mean(problem, x, noise["batch"], params.clip)
        return add_noise(mean, per_agent(params.sigma, x), noise["xi"], sampler=self.sampler)

    def costs(self) -> tuple[int, int]:
        """``(gradient evaluations, communication rounds)`` per iteration."""
        return 1, self._rounds


@dataclasses.dataclass(frozen=True)
class DPDSGD(_DPSGD):
    """DP-DSGD: ``x_i⁺ = Σ_j W_ij x_j − α g̃_i`` (Lian et al. 2017, Alg. 1) with (G) of the module
    docstring (Abadi et al. 2016). Static: ``batch_size`` b, ``sampling``, ``records`` (the
    public record count n, q = b/n), ``sampler``."""

    name: ClassVar[str] = "dp_dsgd"
    cites = ("Lian et al., NeurIPS 2017, Alg. 1 (D-PSGD)",
             "Abadi et al., CCS 2016, Alg. 1 (per-example clipping, Gaussian noise)")
    _rounds: ClassVar[int] = 1

    def init(self, key, problem, network, params):
        del key, params
        return DPDSGDState(x=zeros_like_models(problem, network), n_rows=sample_counts(problem),
                           rows=problem.mask > 0)

    def step(self, state, noise, problem, network, params, k):
        del k
        x = state.x
        g = self._release(problem, x, noise, params)  # (G)
        x_new = network.mix(x, message="x") - per_agent(params.alpha, x) * g  # (D)
        return state.replace(x=x_new), {"x": x}


@dataclasses.dataclass(frozen=True)
class DPDSGT(_DPSGD):
    """DP-DSGT: ``x⁺ = W x − α y``, ``y⁺ = W y + g̃(x⁺) − g̃(x)`` (DIGing, Nedić, Olshevsky & Shi
    2017, eq. (3), with stochastic gradients as DSGT, Pu & Nedić 2021) on (G); x⁰ = y⁰ = g̃⁰ = 0.
    Static: ``batch_size`` b, ``sampling``, ``records`` (q = b/n), ``sampler``."""

    name: ClassVar[str] = "dp_dsgt"
    cites = ("Nedić, Olshevsky & Shi, SIAM J. Optim. 2017, eq. (3) (tracking)",
             "Pu & Nedić, Math. Program. 2021 (stochastic gradient tracking)",
             "Abadi et al., CCS 2016, Alg. 1 (per-example clipping, Gaussian noise)")
    _rounds: ClassVar[int] = 2

    def init(self, key, problem, network, params):
        del key, params
        zero = zeros_like_models(problem, network)
        return DPDSGTState(x=zero, y=zero, g=zero, n_rows=sample_counts(problem),
                           rows=problem.mask > 0)

    def step(self, state, noise, problem, network, params, k):
        del k
        x_new = network.mix(state.x, message="x") - per_agent(params.alpha, state.x) * state.y
        g_new = self._release(problem, x_new, noise, params)  # (G) at x⁺
        y_new = network.mix(state.y, message="y") + g_new - state.g  # (T)
        return state.replace(x=x_new, y=y_new, g=g_new), {"x": state.x, "y": state.y}


__all__ = ["DPDSGD", "DPDSGT", "DPDSGTState", "DPDSGDState", "DPSGDParams"]
