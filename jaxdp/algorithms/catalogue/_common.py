"""Shared pieces of the non-private catalogue: Params, states and one-line stacked operators.

Stacked notation as in :mod:`jaxdp.algorithms.catalogue.classic`: X is ``(N, d)`` (row i = agent i),
∇F(X) stacks ∇f_i(x_i), W is the mixing matrix, W̄ = (I + W)/2.
"""
from __future__ import annotations

import chex
import numpy as np

from jaxdp.core import param
from jaxdp._types import AgentArray, Array, per_agent


@chex.dataclass(frozen=True)
class LocalStepParams:
    alpha: float = param(0.05, domain="positive", doc="α (η_c), local gradient step")
    beta: float = param(0.05, domain="positive", doc="β (η_s / dual step), second step size")


def half_mix(network, X: AgentArray) -> AgentArray:
    """``W̄ X = (X + W X) / 2``."""
    return 0.5 * (X + network.mix(X))


def step(alpha, X: Array) -> Array:
    """A per-agent step size broadcast against ``X`` (scalar or ``(N,)``)."""
    return per_agent(alpha, X)


def check_scalars(params, fields: tuple[str, ...]) -> None:
    """Host: the named Params fields are network-wide scalars (not one value per agent)."""
    for field in fields:
        if np.ndim(params[field]):
            raise ValueError(f"{type(params).__name__}.{field} must be a scalar (one value for "
                             f"the network); got shape {np.shape(params[field])}")

