"""Time-varying networks: the ``at_step(key, k) -> Network`` protocol the engine calls each step.

A static ``Network`` returns itself. The classes here are pytrees too, so they pass through
``jit``/``vmap`` like a ``Network``; each has ``n_agents``, ``n_edges``, ``backend`` and ``base``
(a static ``Network`` for summaries). ``key`` is the network key of step ``k`` handed over by the
engine; it is used as given (not split), so equal keys give equal networks.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import jax
import jax.numpy as jnp
import numpy as np

from jaxdp._types import Array, PRNGKey
from jaxdp.network._network import Network, assemble


class NetworkSequence:
    """A periodic sequence of networks: step ``k`` uses network ``k % T``.

    The networks may have different edge sets. Each is re-expressed on the union of all edge sets,
    with zero weight on the edges it lacks, so all share the same ``senders``/``receivers`` and
    stack into one ``Network`` whose leaves have a leading ``T`` axis (attribute ``networks``).
    With the edge backend, products then cost ``O(|union of edges|)`` per step.

    Args:
      networks: ``T >= 1`` ``Network`` objects with the same N and backend.

    Raises:
      ValueError: if ``networks`` is empty, or N or backend differ.
      TypeError: if an element is not a static ``Network``.
    """

    def __init__(self, networks: Sequence[Network]):
        networks = list(networks)
        _check_same(networks)
        edges = _union_of_edges(networks)
        padded = [_on_edges(n, edges) for n in networks]
        self.networks = jax.tree.map(lambda *a: jnp.stack(a), *padded)

    @property
    def period(self) -> int:
        """T, the number of networks in the cycle (static)."""
        return self.networks.degrees.shape[0]

    @property
    def n_agents(self) -> int:
        return self.networks.n_agents

    @property
    def n_edges(self) -> int:
        """Number of undirected edges in the union of all edge sets."""
        return self.networks.n_edges

    @property
    def backend(self) -> str:
        return self.networks.backend

    @property
    def base(self) -> Network:
        """The first network of the cycle."""
        return self[0]

    def __len__(self) -> int:
        return self.period

    def __getitem__(self, t) -> Network:
        """Network ``t`` of the cycle (``t`` may be traced)."""
        return jax.tree.map(lambda a: a[t], self.networks)

    def __repr__(self) -> str:
        return (f"NetworkSequence(period={self.period}, n_agents={self.n_agents}, "
                f"n_edges={self.n_edges})")

    def at_step(self, key: PRNGKey, k) -> Network:
        """Network ``k % T`` (``k`` may be traced; ``key`` is unused)."""
        del key
        return self[k % self.period]

    def summary(self, *, spectra: bool = True) -> dict:
        """``base.summary()`` plus the kind and period of the sequence (host only)."""
        return {**self.base.summary(spectra=spectra), "time_varying": "sequence", "period": self.period}


def _flatten_sequence(seq: NetworkSequence):
    return ((jax.tree_util.GetAttrKey("networks"), seq.networks),), None


def _unflatten_sequence(_, children) -> NetworkSequence:
    seq = object.__new__(NetworkSequence)  # bypass __init__: leaves may be tracers or placeholders
    seq.networks = children[0]
    return seq


jax.tree_util.register_pytree_with_keys(
    NetworkSequence, _flatten_sequence, _unflatten_sequence,
    flatten_func=lambda s: ((s.networks,), None),
)


@dataclasses.dataclass(frozen=True, eq=False)
class _RandomNetwork:
    """A static ``Network`` plus a per-step random draw (the engine passes one key per step)."""

    network: Network

    @property
    def n_agents(self) -> int:
        return self.network.n_agents

    @property
    def n_edges(self) -> int:
        return self.network.n_edges

    @property
    def backend(self) -> str:
        return self.network.backend

    @property
    def base(self) -> Network:
        return self.network


@dataclasses.dataclass(frozen=True, eq=False)
class RandomLinkFailures(_RandomNetwork):
    """Each undirected edge fails independently with probability ``p_fail`` at every step.

    ``at_step`` draws ``keep = bernoulli(key, 1 - p_fail, (E,))`` and returns
    ``network.with_link_mask(keep)``: failed edges carry no weight and their weight moves to the
    diagonals, so W stays doubly stochastic at every step.

    Attributes:
      network: the static ``Network``.
      p_fail: failure probability in ``[0, 1]``, scalar; a pytree leaf (may be traced or batched).
    """

    p_fail: float

    def link_mask(self, key: PRNGKey) -> Array:
        """The ``(E,)`` bool mask of live edges drawn from ``key`` (the one ``at_step`` uses)."""
        return jax.random.bernoulli(key, 1.0 - jnp.asarray(self.p_fail), (self.n_edges,))

    def at_step(self, key: PRNGKey, k) -> Network:
        """The network of step ``k`` with the links that failed under ``key`` removed."""
        del k
        return self.network.with_link_mask(self.link_mask(key))

    def summary(self, *, spectra: bool = True) -> dict:
        """``base.summary()`` plus the failure probability (host only)."""
        return {**self.base.summary(spectra=spectra), "time_varying": "random_link_failures",
                "p_fail": float(self.p_fail)}


@dataclasses.dataclass(frozen=True, eq=False)
class RandomActivation(_RandomNetwork):
    """Each agent is active independently with probability ``p_active`` at every step.

    An edge is up only when both endpoints are active. ``active_mask(key)`` and ``at_step(key, k)``
    use ``key`` in the same way (one ``bernoulli(key, p_active, (N,))`` draw), so the engine gets
    agreeing agent and edge masks by passing both the same step key. The engine freezes inactive
    agents; this class only provides the network.

    Attributes:
      network: the static ``Network``.
      p_active: activation probability in ``[0, 1]``, scalar or ``(N,)``; a pytree leaf.
    """

    p_active: float

    def active_mask(self, key: PRNGKey) -> Array:
        """``(N,)`` bool mask of the agents active under ``key``."""
        p = jnp.broadcast_to(jnp.asarray(self.p_active), (self.n_agents,))
        return jax.random.bernoulli(key, p)

    def at_step(self, key: PRNGKey, k) -> Network:
        """The network of step ``k``: only edges between two active agents stay up."""
        del k
        active = self.active_mask(key)
        E = self.n_edges  # directed edge e < E is the undirected edge e (see _network.py)
        up = active[self.network.senders[:E]] & active[self.network.receivers[:E]]
        return self.network.with_link_mask(up)

    def summary(self, *, spectra: bool = True) -> dict:
        """``base.summary()`` plus the activation probability (host only)."""
        return {**self.base.summary(spectra=spectra), "time_varying": "random_activation",
                "p_active": np.asarray(self.p_active, dtype=np.float64).tolist()}


jax.tree_util.register_dataclass(
    RandomLinkFailures, data_fields=["network", "p_fail"], meta_fields=[])
jax.tree_util.register_dataclass(
    RandomActivation, data_fields=["network", "p_active"], meta_fields=[])


def _check_same(networks: list) -> None:
    if not networks:
        raise ValueError("NetworkSequence needs at least one network")
    for t, n in enumerate(networks):
        if not isinstance(n, Network) or np.ndim(n.degrees) != 1:
            raise TypeError(f"NetworkSequence element {t} must be a static Network; got {n!r}")
    first = networks[0]
    for t, n in enumerate(networks):
        if n.n_agents != first.n_agents:
            raise ValueError(
                f"network {t} has N={n.n_agents} agents but network 0 has {first.n_agents}")
        if n.backend != first.backend:
            raise ValueError(
                f"network {t} has backend {n.backend!r} but network 0 has {first.backend!r}")


def _union_of_edges(networks: list) -> np.ndarray:
    """``(E, 2)`` sorted undirected edges ``i < j`` of all the networks together."""
    pairs = [np.stack(_undirected(n), axis=1)[: n.n_edges] for n in networks]
    return np.unique(np.concatenate(pairs), axis=0)


def _undirected(network: Network) -> tuple[np.ndarray, np.ndarray]:
    """``(min, max)`` endpoints ``(2E,)`` of every directed edge (host)."""
    s, r = np.asarray(network.senders, np.int64), np.asarray(network.receivers, np.int64)
    return np.minimum(s, r), np.maximum(s, r)


def _on_edges(network: Network, edges: np.ndarray) -> Network:
    """``network`` re-expressed on the superset ``edges`` ``(E', 2)``, zero on edges it lacks."""
    n, E = network.n_agents, len(edges)
    lo, hi = _undirected(network)
    index = np.searchsorted(edges[:, 0] * n + edges[:, 1], lo * n + hi)
    index = index + np.where(np.asarray(network.senders) < np.asarray(network.receivers), 0, E)
    operators = {}
    for name in ("w", "p", "l"):
        edge = np.zeros(2 * E)
        edge[index] = np.asarray(getattr(network, f"{name}_edge"), np.float64)
        operators[name] = (np.asarray(getattr(network, f"{name}_diag"), np.float64), edge)
    return dataclasses.replace(assemble(n, edges, operators, network.backend),
                               reduction=network.reduction)
