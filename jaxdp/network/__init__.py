"""Graphs and the ``Network`` pytree: mixing matrices, Laplacians, products, time-varying graphs.

Build a network on the host, then pass it to the engine::

    net = make_network("random_geometric", 50, radius=0.3, seed=1)   # paper 000's graph
    net = build_network(ring(8), weights="metropolis", P="I-W", backend="edges")
    edges = random_sparse_edges(10**6, degree=10)                   # no networkx
    net = build_network_from_edges(10**6, edges)
    y = net.mix(x)                                              # W @ x, x of shape (N, ...)

Backends: ``"dense"`` holds the ``(N, N)`` matrices ``net.W``, ``net.P``, ``net.L`` and multiplies
by a GEMM; ``"edges"`` holds only edge arrays (memory ``O(N + E)``, for large sparse graphs;
``net.dense("W")`` gives a host copy for small N); ``"auto"`` picks one (``choose_backend``).

The engine calls ``network.at_step(key, k)`` every step; a static ``Network`` returns itself, and
``NetworkSequence``, ``RandomLinkFailures`` and ``RandomActivation`` return the step's network.
"""
from jaxdp.network._builders import (
    GRAPHS,
    complete,
    erdos_renyi,
    exponential,
    from_adjacency,
    from_edges,
    gnm,
    grid,
    hypercube,
    make_graph,
    make_network,
    path,
    random_geometric,
    random_sparse,
    random_sparse_edges,
    ring,
    star,
)
from jaxdp.network._layout import BACKENDS, choose_backend, ordered_segment_sum
from jaxdp.network._network import (
    REDUCTIONS, Network, build_network, build_network_from_edges,
)
from jaxdp.network._random_walk import (
    TRANSITIONS, EdgeTransitions, sample_next_agent, transition_matrix,
)
from jaxdp.network._time_varying import NetworkSequence, RandomActivation, RandomLinkFailures
from jaxdp.network._validation import (
    averaging_gap,
    check_adjacency,
    check_graph,
    check_laplacian_like,
    check_averaging,
    check_edges,
    check_laplacian_like_edges,
    check_mixing_edges,
    check_mixing_matrix,
)

__all__ = [
    "TRANSITIONS",
    "BACKENDS",
    "averaging_gap",
    "check_averaging",
    "REDUCTIONS",
    "EdgeTransitions",
    "GRAPHS",
    "Network",
    "NetworkSequence",
    "RandomActivation",
    "RandomLinkFailures",
    "build_network",
    "build_network_from_edges",
    "check_edges",
    "check_adjacency",
    "check_graph",
    "check_laplacian_like",
    "check_laplacian_like_edges",
    "check_mixing_edges",
    "check_mixing_matrix",
    "choose_backend",
    "complete",
    "erdos_renyi",
    "exponential",
    "from_adjacency",
    "from_edges",
    "gnm",
    "grid",
    "hypercube",
    "make_graph",
    "make_network",
    "ordered_segment_sum",
    "path",
    "random_geometric",
    "random_sparse",
    "random_sparse_edges",
    "ring",
    "sample_next_agent",
    "star",
    "transition_matrix",
]
