"""Pieces of paper 004's family shared by its algorithms, baselines and reproductions.

The edge exchange of LT-ADMM (5b)/(12b) on the edge state (:func:`bridge_update`) and on the node
sums (:func:`bridge_sums_update`), the soft clip (7) (:func:`soft_clip`), the Fig. 1 metrics
(:func:`paper_metrics`) and the wall-clock cost model of Table I (:class:`CostModel`). The
algorithms are in :mod:`jaxdp.algorithms.ltadmm.algorithm`.
"""
from __future__ import annotations

import dataclasses

import jax.numpy as jnp
import numpy as np

from jaxdp._types import AgentArray
from jaxdp.algorithms.catalogue.classic import admm_messages, relaxed_bridge_update
from jaxdp.privacy import clip_factor_soft


# -- the cost model of Table I ------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class CostModel:
    """Modelled wall-clock time (paper §VI, Table I).

    ``t_g`` is charged per minibatch gradient evaluation (the paper says per ∇f_{i,h}, but Table I
    is consistent only with one t_g per minibatch step) and ``t_c`` per communication
    round (one exchange with every neighbour, whatever the number of messages).
    """

    t_g: float = 0.1  # time of one local (minibatch) gradient evaluation, §VI
    t_c: float = 1.0  # time of one communication round, §VI

    def time_per_step(self, algorithm) -> float:
        """Modelled time of one engine step (an LT-ADMM round, a baseline iteration)."""
        grads, comms = algorithm.costs()
        return grads * self.t_g + comms * self.t_c

    def time_per_iterations(self, algorithm, iterations: int) -> float:
        """Time of ``iterations`` gradient-step iterations, Table I's unit ("over τ iterations")."""
        return self.time_per_step(algorithm) * iterations / algorithm.local_iterations()

    def time_axis(self, algorithm, steps) -> np.ndarray:
        """Modelled time after each of ``steps`` (engine step counts, e.g. ``Trace.steps``)."""
        return np.asarray(steps, np.float64) * self.time_per_step(algorithm)


# -- the exchange, the clip and the metrics ---------------------------------------------
def bridge_update(state, x_new: AgentArray, network, params):
    """Edge exchange ``z_ij⁺ = ½ z_ij − ½ (z_ji − 2ρ x_j⁺)`` (5b), (12b).

    ``state`` is any state with ``x`` and ``z`` (2E, d); returns ``(state with x⁺, z⁺, {"m"})``.
    """
    msg = admm_messages(state.z, x_new, params.rho, network)  # m_{j→i} = z_ji − 2ρx_j⁺
    z_new = relaxed_bridge_update(state.z, msg, 0.5)  # (5b): the core's relaxed ADMM, a = ½
    return state.replace(x=x_new, z=z_new), {"m": msg}


def bridge_sums_update(state, x_new: AgentArray, network, params):
    """(12b) on the node sums: ``y⁺ = ½(y − ỹ) + ρÃX⁺``, ``ỹ⁺ = ½(ỹ − y) + ρDX⁺``.

    ``state`` is any state with ``x``, ``y`` and ``yt``; returns ``(state, {"m_sum"})`` with
    ``Σ_j m_{j→i} = ỹ_i − 2ρ (ÃX⁺)_i``.
    """
    rho_adj_x = params.rho * network.apply_A(x_new)  # ρ Ã X⁺
    y_new = 0.5 * (state.y - state.yt) + rho_adj_x
    yt_new = 0.5 * (state.yt - state.y) + params.rho * network.degrees[:, None] * x_new
    m_sum = state.yt - 2.0 * rho_adj_x  # Σ_j z_ji − 2ρ Σ_j x_j⁺
    return state.replace(x=x_new, y=y_new, yt=yt_new), {"m_sum": m_sum}


def soft_clip(g: AgentArray, zeta) -> AgentArray:
    """``ζ/(ζ + ‖g_i‖) g_i`` per row (7) via the core's ``clip_factor_soft``; ζ = ∞ keeps g."""
    z = jnp.broadcast_to(jnp.asarray(zeta, g.dtype), g.shape[:-1])  # scalar or (N,) -> (N,)
    infinite = jnp.isinf(z)
    return jnp.where(infinite[..., None], g, clip_factor_soft(g, jnp.where(infinite, 1.0, z)))


def paper_metrics(problem, models: AgentArray) -> dict:
    """The paper's Fig. 1 metrics at the average model x̄, each ``()``.

    ``grad_norm`` ‖∇F(x̄)‖ with F = (1/N) Σ_i f_i (the appendix's normalisation; the core's
    ``grad_norm_sq`` uses the sum); ``accuracy`` of sign(aᵀx̄) over every real training sample;
    ``loss`` F(x̄); ``consensus_error`` ‖X − 1x̄ᵀ‖_F; and ``test_accuracy`` when the problem has a
    test set.
    """
    n = problem.n_agents
    x_bar = jnp.mean(models, axis=0)
    grad = problem.global_grad(x_bar) / n
    correct = (jnp.sign(problem.features @ x_bar) == problem.labels).astype(x_bar.dtype)
    out = {
        "grad_norm": jnp.sqrt(jnp.sum(grad * grad)),
        "accuracy": jnp.sum(correct * problem.mask) / jnp.sum(problem.mask),
        "loss": problem.objective(x_bar) / n,
        "consensus_error": jnp.sqrt(jnp.sum((models - x_bar[None, :]) ** 2)),
    }
    if problem.test_labels.shape[0] > 0:
        test = jnp.sign(problem.test_features @ x_bar) == problem.test_labels
        out["test_accuracy"] = jnp.mean(test.astype(x_bar.dtype))
    return out


__all__ = ["CostModel", "bridge_sums_update", "bridge_update", "paper_metrics", "soft_clip"]
