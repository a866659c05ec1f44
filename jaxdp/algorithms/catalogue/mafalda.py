"""MAFALDA-SGD: decentralized SGD with noise correlated over time by a matrix factorization
(Bellet, Cyffers, Frey, Gaudel, Lerévérend & Taïani, "Unified Privacy Guarantees for Decentralized
Learning via Matrix Factorization", ICLR 2026, arXiv:2510.17480; "MFDL" below).

MFDL's update (as the authors' implementation runs it): every agent adds the noise ``(C^{-1} z_i)_k`` to its
clipped gradient at step ``k`` and gossips after the local step, ``x^{k+1} = W (x^k − α ĝ^k)``, with
one lower-triangular encoder ``C`` shared by the agents, optimised for the post-averaging workload
(:func:`jaxdp.privacy.pairwise.mafalda_encoder`). Here the same noisy gradients are produced in the
*encoder* form, which makes the lattice release explicit: agent ``i`` releases
``R_i^k = lattice(Σ_{s≤k} C_{ks} c_i^s) + Z_i^k`` (``c_i^s = clip(∇f_i(x_i^s), C_clip)``, ``Z``
the library's discrete Gaussian of scale ``σ C_clip``) and decodes ``ĝ_i^k`` from
``Σ_{s≤k} C_{ks} ĝ_i^s = R_i^k`` (forward substitution: ``ĝ = C^{-1} R = c + C^{-1} Z`` on the
reals), a post-processing of its releases.
"""
from __future__ import annotations

import dataclasses

import chex
import jax.numpy as jnp
import numpy as np

from jaxdp._precision import tensordot
from jaxdp._types import AgentArray, per_agent
from jaxdp.algorithms.catalogue.classic import DPDGD, _step_size
from jaxdp.core import zeros_like_models
from jaxdp.privacy import Assumption, PrivacyEvents, add_noise, clip_by_norm
from jaxdp.privacy.pairwise import encoder_sensitivity2, gaussian_epsilon
from jaxdp.privacy.samplers import unit_roundoff

IDEAL = "ideal mf (non-adaptive Gaussian)"
"""The report's extra curve: the MF accountant's ε for the ideal mechanism (not a guarantee)."""


@chex.dataclass(frozen=True)
class MafaldaState:
    x: AgentArray  # (N, d)
    c_hist: jnp.ndarray  # (T, N, d): the clipped gradients c^s, s < T
    g_hist: jnp.ndarray  # (T, N, d): the decoded noisy gradients ĝ^s, s < T


def _as_encoder(encoder) -> tuple[tuple[float, ...], ...]:
    """Check ``encoder`` (square, lower triangular, finite, non-zero diagonal) as nested tuples."""
    C = np.eye(1) if encoder is None else np.asarray(encoder, np.float64)
    if C.ndim != 2 or C.shape[0] != C.shape[1] or not np.all(np.isfinite(C)):
        raise ValueError(f"mafalda_sgd encoder must be a finite square matrix; got shape "
                         f"{C.shape}")
    if np.any(np.triu(C, 1) != 0) or np.any(np.diag(C) == 0):
        raise ValueError("mafalda_sgd encoder must be lower triangular with a non-zero diagonal "
                         f"(causal and invertible); got diagonal {np.diag(C).tolist()}")
    return tuple(tuple(float(v) for v in row) for row in C)


@dataclasses.dataclass(frozen=True)
class Mafalda(DPDGD):
    """MAFALDA-SGD (MFDL) on clipped gradients, lattice releases in the encoder form (module
    docstring); ``x^{k+1} = W(x^k − α_k ĝ^k)``, the message being ``y^k = x^k − α_k ĝ^k``. Steps
    ``k ≥ T`` use independent noise (the encoder extended by the identity).

    Privacy (eavesdropper; proof). Fix agent ``u``, two data sets differing in ``f_u`` and the
    view up to step ``k`` (every release ``R^s``, ``s < k``, of every agent). The models
    ``x^s, s ≤ k`` are functions of that view and of the other agents' data, so
    ``c_u^s`` and ``c_u'^s`` are clipped gradients at the same points: ``‖c_u^s − c_u'^s‖ ≤ 2C``.
    The released combination then moves by at most ``Δ_k = 2C Σ_{s≤k} |C_{ks}|``, plus the float
    error of the computed sum, ``≤ γ_{T+1} Σ_s |C_{ks}| ‖c^s‖`` per data set (the inner-product
    bound ``|fl(xᵀy) − xᵀy| ≤ γ_n |x|ᵀ|y|``, any summation order: Higham, *Accuracy and Stability
    of Numerical Algorithms*, 2nd ed. 2002, §3.1; ``n = T + 1`` also covers the rounding of ``C``
    to the run's dtype, ``γ_n = nu/(1 − nu)``); the declared sensitivity is
    ``Δ_k (1 + γ_{T+1})``, made a lattice bound by
    :func:`~jaxdp.privacy.samplers.lattice_sensitivity` (the clip's float error and the rounding).
    Each step is thus a (discrete) Gaussian mechanism given the past, and adaptive composition over
    steps (Bun & Steinke, TCC 2016, Lemma 2.3 for zCDP; the library's RDP/PLD accountants) bounds
    the whole transcript; ``ĝ``, ``y`` and the models are post-processing. With ``C = I`` this is
    DP-DGD's report. This bound ignores the correlation's benefit: MFDL's accounting (the MF
    mechanism's ``sens(C)``, :func:`~jaxdp.privacy.pairwise.factorization_epsilon`) is for
    continuous Gaussian noise and is reported as the separate curve :data:`IDEAL`, not as the
    guarantee.

    Attributes:
      encoder: ``C``, ``T × T`` lower triangular with a non-zero diagonal (``None``: the
        identity, DP-DGD's noise); :meth:`optimal` builds MFDL's optimum for a network.
    """

    name = "mafalda_sgd"
    cites = (("Bellet, Cyffers, Frey, Gaudel, Lerévérend & Taïani, ICLR 2026 (arXiv:2510.17480), "
             "MAFALDA-SGD, x^{t+1} = W(x^t − η(g^t + (C^+ z)^t))"),
             "Abadi et al. 2016 (gradient clipping with Gaussian noise)")
    provenance = "paper"
    encoder: tuple | None = None
    released_note = ("agent i's half-step y_i^k = x_i^k − α ĝ_i^k to its neighbours, k < K "
                     "(a function of its releases R_i^s = lattice(Σ_{s'≤s} C_{ss'} c_i^{s'}) "
                     "+ Z_i^s, s ≤ k, and of received models: post-processing)")
    models_note = ("x^K = W y^{K-1}: a post-processing of the released half-steps")

    def __post_init__(self):
        object.__setattr__(self, "encoder", _as_encoder(self.encoder))

    @classmethod
    def optimal(cls, network, steps: int, participation=None, **config) -> Mafalda:
        """MAFALDA-SGD with MFDL's optimal encoder for ``network``'s ``W`` and ``steps``
        (:func:`jaxdp.privacy.pairwise.mafalda_encoder`; host, L-BFGS)."""
        from jaxdp.privacy.pairwise import mafalda_encoder
        C, _ = mafalda_encoder(np.asarray(network.dense("W")), steps, participation)
        return cls(encoder=np.asarray(C), **config)

    @property
    def horizon(self) -> int:
        """``T``: the encoder's size."""
        return len(self.encoder)

    def extended_encoder(self, steps: int) -> np.ndarray:
        """``(K, K)``: ``C`` extended by the identity beyond ``T`` (or its leading block)."""
        C, T = np.asarray(self.encoder), self.horizon
        out = np.eye(steps)
        m = min(steps, T)
        out[:m, :m] = C[:m, :m]
        return out

    def init(self, key, problem, network, params):
        del key, params
        x = zeros_like_models(problem, network)
        hist = jnp.zeros((self.horizon,) + x.shape, x.dtype)
        return MafaldaState(x=x, c_hist=hist, g_hist=hist)

    def step(self, state, noise, problem, network, params, k):
        x, T = state.x, self.horizon
        C = jnp.asarray(self.encoder, x.dtype)
        inside, row_k = k < T, jnp.minimum(k, T - 1)
        c = clip_by_norm(problem.local_grads(x), params.clip)
        c_hist = state.c_hist.at[row_k].set(jnp.where(inside, c, state.c_hist[row_k]))
        row = C[row_k]
        encoded = jnp.where(inside, tensordot(row, c_hist, axes=1), c)  # Σ_{s≤k} C_ks c^s
        released = add_noise(encoded, per_agent(params.sigma * params.clip, x), noise["xi"],
                             sampler=self.sampler)
        earlier = tensordot(jnp.where(jnp.arange(T) < row_k, row, 0.0), state.g_hist, axes=1)
        g_hat = jnp.where(inside, (released - earlier) / row[row_k], released)
        g_hist = state.g_hist.at[row_k].set(jnp.where(inside, g_hat, state.g_hist[row_k]))
        y = x - _step_size(params, k, x) * g_hat
        return MafaldaState(x=network.mix(y, message="y"), c_hist=c_hist, g_hist=g_hist), {"y": y}

    def step_sensitivity(self, steps: int, dtype) -> np.ndarray:
        """``(K,)``: ``Σ_s |C_ks| (1 + γ_{T+1})`` per unit of ``2C`` (class docstring)."""
        n = self.horizon + 1
        u = unit_roundoff(dtype)
        return np.abs(self.extended_encoder(steps)).sum(axis=1) * (1 + n * u / (1 - n * u))

    def linear_form(self, network, params):
        """``None``: the releases are the encoder form of the class docstring, not DGD's (the
        report carries their own ideal curve, :data:`IDEAL`)."""
        del network, params
        return None

    def account(self, problem, network, params, steps, *, delta):
        """The adaptive, lattice-sound bound of the class docstring, plus the :data:`IDEAL`
        curve."""
        n = network.n_agents
        clip = np.broadcast_to(np.asarray(params.clip, np.float64), (n,))
        sigma = np.broadcast_to(np.asarray(params.sigma, np.float64), (n,))
        per_step = self.step_sensitivity(steps, problem.features.dtype)
        events = self.accounting.declare_releases(PrivacyEvents.from_schedule(
            "gaussian", sensitivity=2 * clip[:, None] * per_step[None, :],
            scale=(sigma * clip)[:, None], n_agents=n, steps=steps,
            description="R_i^k = lattice(Σ_{s≤k} C_ks clip(∇f_i(x_i^s), C)) + Z_i^k, k < K"),
            problem)
        report = self.accounting.report(
            events, problem, network, params, steps, delta=delta,
            methods=("closed_form", "rdp", "pld"), relation="replace_agent",
            released=self.released_note,
            assumptions=(Assumption("‖clip(∇f_i(x), C)‖₂ ≤ C, so any two f_i, f_i′ give Δ ≤ 2C",
                                    enforced=True, how="clip_by_norm(·, C)"),))
        return self._with_ideal(report, sigma, delta)

    def _with_ideal(self, report, sigma, delta):
        """Add :data:`IDEAL`: ``μ = (2/σ) sens(C_k)`` (every step, user level) at each reported
        step count ``k``; continuous Gaussian, fixed contributions: not a bound for this run."""
        sens = [float(np.sqrt(encoder_sensitivity2(
            jnp.asarray(self.extended_encoder(int(k))), np.ones((1, int(k))))))
            for k in report.steps]
        mu = (2.0 / sigma)[:, None] * np.asarray(sens)[None, :]
        note = ("MFDL's MF accounting (Thm.-style sens(C), every step of agent i): the ε of the "
                "continuous Gaussian mechanism with contributions fixed in advance. It does not "
                "cover the floating-point (lattice) transcript nor adaptively chosen gradients: "
                "never the guarantee.")
        return dataclasses.replace(report, curves={**report.curves,
                                                   IDEAL: gaussian_epsilon(mu, delta)},
                                   notes={**report.notes, IDEAL: note})
