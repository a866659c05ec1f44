"""The DP baselines of paper 003's comparison (Tables IV and V, Figs. 3 and 6), reconstructed.

Paper 003 (Wang, Guo, Yang & Shi 2024) gives **no update
equations, noise placement or hyperparameters** for its baselines: it says only that NIDS and EXTRA
"are injected with DP noise" and that every method is run at ε = 12 with PLF 300 (fixed steps).
Everything below is therefore a reconstruction from the cited papers, flagged as such:

* Noise placement ("the natural choice"): Gaussian noise on every transmitted vector,
  with the same geometric schedule as DP-RECAL indexed by the agent's own release count t,
  ``σ_t = σ₁ R^{−(t−1)/2}``, so that one accountant (``recal.privacy``) serves the whole comparison.
  The paper's own per-step heuristic (Lemma 5: the released vector's history is fixed and only
  the current gradient changes, ``‖∇f_{i,D} − ∇f_{i,D̂}‖ ≤ 2c``) gives each report's
  :data:`~jaxdp.privacy.PAPER_PRINTED` curve. The guarantee (``account``) uses each release's
  sensitivity *given the transcript*, through the hidden state it carries (DP-NIDS' first
  release: 4αc, twice Lemma 5's 2αc; DP-EXTRA's second: 2αc(1 + W_ii); DP-RWADMM: every token
  after an agent's first activation carries its data). An agent uses its
  own exact value where a mixing product needs it (only neighbours' values arrive noisy):
  ``(W x)_i = W_ii x_i + Σ_{j≠i} W_ij x̃_j``.
* Noise sampler (``sampler``, DP-ADMM, DP-RWADMM, DP-MRADMM): ``"lattice"`` (default) releases
  the noised vector as :func:`~jaxdp.privacy.add_noise` does, ``γ(round(v/γ) + K)`` with ``K``
  discrete Gaussian and ``γ = σ_t/R``, so the floats sent are covered by the report (lattice
  sensitivities ``Δ + γ(1 + 2uL)√d``, the Δ being analytical; zCDP and RDP, no PLD; the sampler's
  distance added to δ); ``"float"`` adds ``σ_t ξ`` in floating point (report: ``inf``, the
  real-valued curves kept as ``ideal …``).
* Gradient bound (``enforce_bound``, default ``True``): every ∇f_i(x) a step uses is
  ``clip_by_norm(∇f_i(x), c)`` (:class:`~jaxdp.algorithms.recal._baseline_common.BoundedGradient`),
  so paper 003's Assumption 3 (‖∇f_i(x)‖ ≤ c for every x), on which every sensitivity below rests,
  holds for any data; where it already holds the clip is the identity and the step is the
  method's own. ``False`` runs the unclipped step, whose report is finite only where the loss
  bounds the gradient for every x (:func:`~jaxdp.algorithms.recal.privacy.gradient_assumption`).
* Local regularizer: every agent's loss carries its ``l1‖x‖₁`` (jaxdp's ℓ1 problems), handled by
  ``problem.prox`` with each method's step; their sum is RECAL's ``n r``.

The methods (stacked notation X ``(N, d)``, W the Metropolis–Hastings mixing matrix, W̃ = (I+W)/2,
A the adjacency, ``d_i`` degrees, ``ξ`` standard Gaussian draws, ``prox`` per agent):

* **DP-NIDS** and **DP-EXTRA** are the core :class:`~jaxdp.algorithms.NIDS` (Li, Shi & Yan, IEEE
  TSP 2019, Alg. 1 with prox) and :class:`~jaxdp.algorithms.EXTRA` (its prox form PG-EXTRA, Shi,
  Ling, Wu & Yin, IEEE TSP 2015, eq. (4)) with their one message through a channel
  ``chain(gaussian(name="gauss"), broadcast=True)`` (:class:`~jaxdp.channels.PrivateVariant`):
  one draw per sender, heard by every neighbour; the self term is the agent's exact value
  (``self_term="clean"``). The channel adds ``σ r^k ξ`` at step k; :meth:`channel_values` maps
  the paper's schedule onto it, ``gauss_sigma = σ₁ R^{1/2}``, ``gauss_decay = R^{−1/2}``, so
  that step k ≥ 1 sends the agent's release t = k with ``σ_k = σ₁ R^{−(k−1)/2}``.

  - DP-NIDS: ``z¹ = x⁰ − α∇F(x⁰)``, ``x¹ = prox_{αr}(z¹)``;
    ``v = 2x^k − x^{k−1} − α(∇F(x^k) − ∇F(x^{k−1}))``, transmitted ``ṽ = v + σ_k ξ``,
    ``z^{k+1} = z^k − x^k + W̃ṽ``, ``x^{k+1} = prox_{αr}(z^{k+1})``. NIDS sends nothing at k = 0,
    but its traced product mixes the public x⁰ there (result discarded): the channel records
    a release ``x⁰ + σ₀ξ`` (σ₀ = σ₁√R) that carries no data and is not accounted.
  - DP-EXTRA: ``x^{½} = W x̃⁰ − α∇F(x⁰)``, ``x¹ = prox(x^{½})``;
    ``x^{k+½} = x^{k−½} + W x̃^k − W̃ x̃^{k−1} − α(∇F(x^k) − ∇F(x^{k−1}))``,
    ``x^{k+1} = prox(x^{k+½})`` with the transmitted ``x̃^k = x^k + σ_k ξ``, received once and
    reused at k+1 (the core keeps ``W x^{k−1}``). At k = 0 the public x⁰ goes out with noise
    σ₀ = σ₁√R (formerly noise-free): it costs no privacy, and the accountant counts the
    private releases of steps 1..K−1 only, as before.

  The models' and states' counters (PLF, messages) live in a :class:`CountedState` around the
  core state (the channel keeps no counts without a stateful transform).
* **DP-ADMM**, its decaying-step row, **DP-RWADMM** and **DP-MRADMM**:
  :mod:`jaxdp.algorithms.recal.admm_baselines` (their updates and sensitivities), re-exported
  here; their shared Params base, counters and report are in ``_baseline_common``.

Messages per iteration (undirected edges E, here counted as vectors sent on directed edges): NIDS,
EXTRA, ADMM and MRADMM broadcast one vector per agent (2E); token methods send one token. The
paper's Comm column implies 4E for EXTRA/ADMM/RWADMM per PLF unit and 8E for MRADMM; the
reproduction reports both.
"""
from __future__ import annotations

import dataclasses

import chex
import jax.numpy as jnp
import numpy as np

from jaxdp._types import Array
from jaxdp.algorithms.catalogue.classic import EXTRA, NIDS
from jaxdp.algorithms.recal import privacy as acct
from jaxdp.algorithms.recal._baseline_common import (BoundedGradient, NoiseScheduleParams,
                                                     step_report)
from jaxdp.algorithms.recal.admm_baselines import (  # re-exported: their public path is also here
    DPICADMM, DPMRADMM, DPRWADMM, DPICADMMParams, DPICADMMState, DPMRADMMParams, DPMRADMMState,
    DPRWADMMParams, DPRWADMMState, icadmm_sensitivity, mradmm_sensitivity, penalty, sigma_t,
)
from jaxdp.channels import PrivateVariant, chain
from jaxdp.channels import gaussian as gaussian_channel
from jaxdp.core import Algorithm, param


# -- Params and states --------------------------------------------------------------------------
@chex.dataclass(frozen=True)
class DPStepParams(NoiseScheduleParams):
    alpha: float = param(0.05, domain="positive", per_agent=False,
                         doc="α, step size of NIDS / PG-EXTRA")
    x0: float = param(0.0, per_agent=False, doc="x⁰ = x0·1 for every agent")


@chex.dataclass(frozen=True)
class CountedState:
    inner: object  # the core NIDS / EXTRA state
    releases: Array  # () int32 private releases per agent so far (the PLF)
    messages: Array  # () int32 vectors sent so far (2E per communicating step)


# -- DP-NIDS and DP-EXTRA ------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class _NoisyStep(BoundedGradient, PrivateVariant):
    """DP-NIDS and DP-EXTRA: a core algorithm whose message goes out with Gaussian noise
    ``σ_t = σ₁ R^{−(t−1)/2}`` (one draw per agent, broadcast), Δ derived given the transcript.
    The core step sees the problem through :meth:`bounded_problem`: every ∇f_i(x) it uses is
    clipped to c (``enforce_bound``, default), the identity where paper 003's Assumption 3
    holds."""

    routes: tuple = (("*", chain(gaussian_channel(name="gauss"), broadcast=True)),)
    params_type = DPStepParams
    noise_field = "log_sigma1"
    released = ""  # "NAME: what is transmitted", for the privacy report
    sent_at_first = 1  # whether step 0 sends (EXTRA) or not (NIDS)
    models_note = ("the final x_i^K is the agent's noise-free iterate, never released: it "
                   "carries its gradients")

    def channel_values(self, params):
        """Step k's noise ``σ₁ R^{1/2} (R^{−1/2})^k``: release t = k has σ_t = σ₁ R^{−(t−1)/2}."""
        half = params.log_R / 2
        return {"gauss_sigma": jnp.exp(params.log_sigma1 + half), "gauss_decay": jnp.exp(-half)}

    def init(self, key, problem, network, params):
        zero = jnp.zeros((), jnp.int32)
        return CountedState(inner=super().init(key, problem, network, params), releases=zero,
                            messages=zero)

    def noise(self, key, state, params, k):
        return super().noise(key, state.inner, params, k)

    def step_on_proxy(self, state, noise, problem, network, params, k):
        (inner, released), proxy, sent = super().step_on_proxy(
            state.inner, noise, self.bounded_problem(problem, params), network, params, k)
        first = k == 0
        messages = jnp.where(first, self.sent_at_first, 1) * 2 * network.n_edges
        new = CountedState(inner=inner, releases=state.releases + jnp.where(first, 0, 1),
                           messages=state.messages + messages)
        return (new, released), proxy, sent

    def models(self, state):
        return self.inner.models(state.inner)

    def plf_and_messages(self, state) -> dict:
        """PLF reached (releases per agent) and vectors sent, per seed."""
        return {"plf": state.releases, "messages": state.messages}

    def account(self, problem, network, params, steps, *, delta):
        """ε per agent after steps 1..K; step k ≥ 1 releases the agent's k-th noisy vector.

        The vector carries hidden state built from the agent's past gradients (it mixes its own
        exact value), so each release's Δ is derived given the transcript (:meth:`_sensitivity`),
        not Lemma 5's history-fixed 2αc, which stays as the paper's curve. Step 0 releases the
        public x⁰ (with noise), which carries no data.
        """
        alpha, c = float(params.alpha), float(params.c)
        sens = self._sensitivity(np.asarray(network.w_diag, np.float64), alpha, c, steps,
                                 acct.prox_residual_bound(problem, alpha))
        counts = np.arange(steps)  # step k sends release t = k (nothing private at k = 0)
        return step_report(problem, network, params, sens,
                            acct.release_log_scale(counts, params.log_sigma1, params.log_R),
                            lambda k: max(k - 1, 0), 2 * alpha * c, delta=delta,
                            released=f"{self.released_text}, to its neighbours at steps 1..K−1",
                            description=f"{self.released} (reconstructed)", alg=self)

    def _sensitivity(self, w_diag, alpha, c, steps, prox) -> np.ndarray:
        """(N, K) Δ of each step's release given the transcript."""
        raise NotImplementedError


@dataclasses.dataclass(frozen=True)
class DPNIDS(_NoisyStep):
    """NIDS with prox (Li, Shi & Yan 2019), Gaussian noise on the transmitted ṽ (reconstructed):
    :class:`~jaxdp.algorithms.NIDS` through the channel."""

    inner: Algorithm = NIDS()
    name = "dp_nids"
    cites = (
        "Li, Shi & Yan, IEEE TSP 2019 (NIDS)",
        "compared in Wang, Guo, Yang & Shi 2024 (paper 003), reconstructed",
    )
    provenance = "reconstruction"
    released = "DP-NIDS: ṽ = v + N(0, σ_t² I)"
    released_text = "agent i's ṽ_i^k = v_i^k + σ_k ξ"
    sent_at_first = 0

    def _sensitivity(self, w_diag, alpha, c, steps, prox):
        return acct.nids_sensitivity(w_diag, alpha, c, steps, prox)


@dataclasses.dataclass(frozen=True)
class DPEXTRA(_NoisyStep):
    """PG-EXTRA (Shi, Ling, Wu & Yin 2015), Gaussian noise on the transmitted x̃ (reconstructed):
    :class:`~jaxdp.algorithms.EXTRA` through the channel."""

    inner: Algorithm = EXTRA()
    name = "dp_extra"
    cites = (
        "Shi, Ling, Wu & Yin, IEEE TSP 2015 (PG-EXTRA)",
        "compared in Wang, Guo, Yang & Shi 2024 (paper 003), reconstructed",
    )
    provenance = "reconstruction"
    released = "DP-EXTRA: x̃ = x + N(0, σ_t² I)"
    released_text = "agent i's x̃_i^k = x_i^k + σ_k ξ"

    def _sensitivity(self, w_diag, alpha, c, steps, prox):
        return acct.extra_sensitivity(w_diag, alpha, c, steps, prox)


__all__ = [
    "CountedState", "DPICADMM", "DPICADMMParams", "DPICADMMState", "DPEXTRA", "DPMRADMM",
    "DPMRADMMParams", "DPMRADMMState", "DPNIDS", "DPRWADMM", "DPRWADMMParams", "DPRWADMMState",
    "DPStepParams", "NoiseScheduleParams", "icadmm_sensitivity", "mradmm_sensitivity", "penalty",
    "sigma_t",
]
