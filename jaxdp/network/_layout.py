"""The edge layout of a ``Network`` and the choice of backend.

Edge-list products ``(M X)_i = M_ii X_i + sum_{e: receivers[e] = i} m_edge[e] X_{senders[e]}`` use
a sliced layout: agent ``i``'s first ``K`` incoming edges sit in ``K`` slots (``slot_edge``,
``slot_sender``, ``(N, K)``), so the sum is ``K`` row gathers of ``X`` that XLA fuses into one pass
with no ``(2E, d)`` intermediate; the edges beyond the slots of high-degree agents (``overflow``,
sorted by receiver) are summed by :func:`ordered_segment_sum`, a segmented scan in a fixed order (no
scatter-add, so no float atomics on a GPU). ``K`` is the smallest slot count that leaves at most
``N / SLOT_COST`` agents with overflow (capped at ``MAX_SLOTS``). ``"auto"`` picks the dense or the
edge backend with :func:`choose_backend`.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jaxdp._types import Array


BACKENDS = ("dense", "edges")
"""The concrete backends a ``Network`` can have; builders also accept ``"auto"``."""


AUTO_DENSE_MIN_DENSITY = 0.1
"""``"auto"`` picks the dense backend at or above this edge density ``2E / (N (N - 1))``..."""


AUTO_DENSE_MAX_AGENTS = 16384
"""...and at most this many agents (memory guard: the three dense matrices then take at most
3 GiB in float32)."""


SLOT_COST = 8
"""Cost of one overflow edge in units of one slot pass (``benchmarks/README.md``)."""


MAX_SLOTS = 32
"""At most this many slots per agent (the slot loop is unrolled in the compiled program)."""


def choose_backend(n_agents: int, n_edges: int) -> str:
    """The backend ``"auto"`` picks for a graph with ``n_agents`` agents and ``n_edges`` edges.

    The rule: dense when the edge density ``2E / (N (N - 1))`` is at least
    ``AUTO_DENSE_MIN_DENSITY`` (0.1) and ``N <= AUTO_DENSE_MAX_AGENTS``; edges otherwise. Measured
    on one ``mix`` of ``(N, d)`` and ``(S, N, d)`` float32 batches over N in {16, ..., 10^4} and
    mean degrees {4, 10, N/2} on CPU (``benchmarks/bench_mixing.py``, table in
    ``benchmarks/README.md``): a GEMM costs ``O(N^2)`` and the edge list ``O(E)`` with a larger
    constant, so the crossover is a density; with the sliced edge layout it lies between 0.05 and
    0.2 at every N, and the chosen backend is never more than 1.5x slower than the faster one on
    that grid. Graphs of up to ~20 agents are always dense (a ring on N agents has density
    ``2 / (N - 1)``).

    Returns:
      ``"dense"`` or ``"edges"``.
    """
    density = 2.0 * n_edges / max(n_agents * (n_agents - 1), 1)
    dense = density >= AUTO_DENSE_MIN_DENSITY and n_agents <= AUTO_DENSE_MAX_AGENTS
    return "dense" if dense else "edges"


def ordered_segment_sum(values: Array, segments: Array, last: Array) -> Array:
    """Segment sums in a fixed order, without a scatter: bit-reproducible on every platform.

    Args:
      values: ``(M, C)`` rows, grouped by segment (``segments`` sorted).
      segments: ``(M,)`` int segment of each row, non-decreasing.
      last: ``(N,)`` int position of segment ``i``'s last row, or ``M`` for an empty segment.

    Returns:
      ``(N, C)``: row ``i`` is the sum of segment ``i``'s rows (0 for an empty one), from a
      segmented inclusive scan (``jax.lax.associative_scan``: a fixed tree of adds, ``O(M C log M)``
      work), read at each segment's last row by a gather.
    """
    M = values.shape[0]
    if M == 0:
        return jnp.zeros((last.shape[0],) + values.shape[1:], values.dtype)
    starts = jnp.concatenate([jnp.ones((1,), bool), segments[1:] != segments[:-1]])
    starts = starts.reshape((M,) + (1,) * (values.ndim - 1))

    def combine(a, b):
        (va, sa), (vb, sb) = a, b
        return jnp.where(sb, vb, va + vb), sa | sb

    sums, _ = jax.lax.associative_scan(combine, (values, starts))
    return sums.at[last].get(mode="fill", fill_value=0)


def slot_layout(n: int, senders: np.ndarray, receivers: np.ndarray, K: int | None = None
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The sliced layout of the directed edges (host): ``slot_edge``, ``slot_sender``,
    ``overflow``, ``overflow_last``.

    Agent ``i``'s incoming edges, ordered by sender, fill its ``K`` slots (default ``n_slots``);
    the rest go to ``overflow``, sorted by (receiver, sender); ``overflow_last[i]`` is the position
    of agent ``i``'s last one there (``len(overflow)`` if none). Empty slots hold edge ``2E``
    (weight 0) and sender ``i``.
    """
    degrees = np.bincount(receivers, minlength=n)
    K = n_slots(degrees) if K is None else int(K)
    order = np.lexsort((senders, receivers))
    r = receivers[order]
    rank = np.arange(len(order)) - (np.cumsum(degrees) - degrees)[r]
    keep = rank < K
    slot_edge = np.full((n, K), len(senders), dtype=np.int64)
    slot_edge[r[keep], rank[keep]] = order[keep]
    slot_sender = np.repeat(np.arange(n)[:, None], K, axis=1)
    slot_sender[r[keep], rank[keep]] = senders[order[keep]]
    overflow = order[~keep]  # lexsorted: by receiver, then sender
    count = np.bincount(receivers[overflow], minlength=n)
    overflow_last = np.where(count > 0, np.cumsum(count) - 1, len(overflow))
    return slot_edge, slot_sender, overflow, overflow_last


def n_slots(degrees: np.ndarray) -> int:
    """Slots per agent: the smallest ``K`` leaving at most ``N / SLOT_COST`` agents with more than
    ``K`` edges (a slot pass over all N agents costs less than the overflow it removes), capped at
    ``MAX_SLOTS``."""
    n, top = len(degrees), int(min(degrees.max(initial=0), MAX_SLOTS))
    for K in range(top):
        if SLOT_COST * np.count_nonzero(degrees > K) <= n:
            return K
    return top


def resolve_backend(backend: str, n_agents: int, n_edges: int) -> str:
    """``backend`` itself, or ``choose_backend(n_agents, n_edges)`` for ``"auto"``.

    Raises:
      ValueError: for an unknown backend.
    """
    check_backend(backend)
    return choose_backend(n_agents, n_edges) if backend == "auto" else backend


def check_backend(backend: str) -> None:
    if backend not in BACKENDS + ("auto",):
        raise ValueError(f"unknown backend {backend!r}; known: {', '.join(BACKENDS)}, auto")

