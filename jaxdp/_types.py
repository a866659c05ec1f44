"""Role aliases and the one broadcasting helper shared by every module.

Shape letters (docs/design.md, "Shape letters"): N agents, d model dimension, m samples per
agent, E undirected edges, K steps, S seeds, G grid points, R records.
"""
from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

Array = jax.Array
PRNGKey = jax.Array
AgentArray = jax.Array  # (N, d): one row per agent
EdgeArray = jax.Array  # (2E, d): one row per directed edge, aligned with Network.senders
Scalar = Any  # float or () array
PerAgent = Any  # float, () array or (N,) array


def per_agent(a: PerAgent, like: Array) -> Array:
    """Reshape a scalar or ``(N,)`` value to broadcast against ``like`` of shape ``(N, ...)``.

    A bare ``alpha * x`` with ``alpha`` of shape ``(N,)`` and ``x`` of shape ``(N, d)`` would align
    ``alpha`` with ``d``; this helper aligns it with the agent axis instead.
    """
    a = jnp.asarray(a)
    if a.ndim == 0:
        return a
    if a.ndim == 1:
        return a.reshape(a.shape + (1,) * (like.ndim - 1))
    raise ValueError(f"a per-agent value must be a scalar or (N,); got shape {a.shape}")
