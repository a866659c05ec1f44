"""Random walks on a network, for token / relay algorithms (paper 003, RECAL).

On the dense backend a walk is an ``(N, N)`` transition matrix; on the edge backend it is an
``EdgeTransitions`` (the same probabilities on the edge list, no ``(N, N)`` array), and
``sample_next_agent`` takes either.
"""
from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np

from jaxdp._types import Array, PRNGKey
from jaxdp.network._network import Network

TRANSITIONS = ("uniform", "metropolis", "lazy")


@dataclasses.dataclass(frozen=True)
class EdgeTransitions:
    """A random walk's transition probabilities on the edge list (a pytree).

    Attributes:
      stay: ``(N,)`` probability ``T[i, i]`` of staying at agent ``i``.
      move: ``(2E,)`` probability ``T[senders[e], receivers[e]]`` of moving along edge ``e``.
      senders, receivers: ``(2E,)`` int32, the network's edge arrays.
    """

    stay: Array
    move: Array
    senders: Array
    receivers: Array

    def row(self, i) -> Array:
        """Row ``i`` of T, ``(N,)`` (jittable; ``i`` may be traced; costs ``O(N + E)``)."""
        n = self.stay.shape[-1]
        out_of_row = jnp.where(self.senders == i, self.receivers, n)  # n: dropped
        row = jnp.zeros((n,), self.move.dtype).at[out_of_row].set(self.move, mode="drop")
        return row.at[i].set(self.stay[i])

    def astype(self, dtype) -> EdgeTransitions:
        """A copy with the probabilities cast to ``dtype`` (as ``Array.astype``)."""
        return dataclasses.replace(self, stay=self.stay.astype(dtype),
                                   move=self.move.astype(dtype))

    def dense(self) -> np.ndarray:
        """The ``(N, N)`` float64 transition matrix on the host (small N, tests)."""
        T = np.diag(np.asarray(self.stay, np.float64))
        T[np.asarray(self.senders), np.asarray(self.receivers)] = np.asarray(self.move)
        return T


jax.tree_util.register_dataclass(
    EdgeTransitions, data_fields=["stay", "move", "senders", "receivers"], meta_fields=[])


def transition_matrix(network: Network, kind: str = "uniform") -> Array | EdgeTransitions:
    """Row-stochastic transition matrix T of a random walk: ``T[i, j] = Pr(i -> j)``.

    Args:
      network: the ``Network`` (jittable; a masked network gives the walk on live edges, and an
        agent left without edges stays put).
      kind: ``"uniform"``: ``T = I - D^-1 L = D^-1 A``, the next agent uniform among the neighbours
        (paper 003, DP-RECAL, Assumption 2); ``"metropolis"``: ``T = W`` (the network's mixing
        matrix, Metropolis–Hastings when built with the default weights, uniform stationary law);
        ``"lazy"``: ``T = (I + I - D^-1 L) / 2``.

    Returns:
      On the dense backend an ``(N, N)`` array whose rows sum to 1; on the edge backend an
      ``EdgeTransitions`` with the same entries.

    Raises:
      ValueError: for an unknown ``kind``.
    """
    if kind not in TRANSITIONS:
        raise ValueError(f"unknown transition kind {kind!r}; known: {', '.join(TRANSITIONS)}")
    if network.backend == "edges":
        return _edge_transitions(network, kind)
    if kind == "metropolis":
        return network.W
    eye = jnp.eye(network.n_agents, dtype=network.L.dtype)
    T = eye - _inverse_degrees(network)[:, None] * network.L
    return 0.5 * (eye + T) if kind == "lazy" else T


def sample_next_agent(key: PRNGKey, T: Array | EdgeTransitions, i) -> Array:
    """Draw the walk's next agent from row ``i`` of ``T`` (jittable; ``i`` may be traced).

    Args:
      key: PRNG key of this draw.
      T: ``(N, N)`` row-stochastic transition matrix, or an ``EdgeTransitions`` (a draw then
        costs ``O(N + E)``; the same key draws the same agent as with the dense matrix).
      i: the current agent, ``()`` int.

    Returns:
      ``()`` int32: an agent ``j`` with ``T[i, j] > 0``.
    """
    row = T.row(i) if isinstance(T, EdgeTransitions) else T[i]
    return jax.random.categorical(key, _log(row)).astype(jnp.int32)


def _edge_transitions(network: Network, kind: str) -> EdgeTransitions:
    if kind == "metropolis":  # T[s, r] = W[s, r], stored on the reverse edge r -> s
        stay, move = network.w_diag, network.w_edge[network.reverse]
    else:  # T = I - D^-1 L: T[s, r] = -L[s, r] / deg_s
        inv_deg = _inverse_degrees(network)
        stay = 1.0 - inv_deg * network.l_diag
        move = -network.l_edge[network.reverse] * inv_deg[network.senders]
        if kind == "lazy":
            stay, move = 0.5 * (1.0 + stay), 0.5 * move
    return EdgeTransitions(stay=stay, move=move, senders=network.senders,
                           receivers=network.receivers)


def _inverse_degrees(network: Network) -> Array:
    deg = network.degrees
    return jnp.where(deg > 0, 1.0 / jnp.where(deg > 0, deg, 1.0), 0.0)


def _log(p: Array) -> Array:
    return jnp.where(p > 0, jnp.log(jnp.where(p > 0, p, 1.0)), -jnp.inf)
