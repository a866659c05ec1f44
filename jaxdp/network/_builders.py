"""Graph builders (host, networkx) and ``make_network``, the by-name entry point for a CLI.

Every builder returns a ``networkx.Graph`` on the nodes ``0..N-1``. Random builders take their own
integer ``seed``, separate from the noise seeds of a run (docs/design.md, "Keys"), and draw
until the graph is connected (rejection sampling): attempt ``t`` uses ``seed + t``, so a result
is reproducible from ``seed`` alone, and a ``ValueError`` is raised after ``max_tries``
disconnected draws.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Iterable

import networkx as nx
import numpy as np

from jaxdp._registry import Registry
from jaxdp.network._network import Network, build_network
from jaxdp.network._validation import as_graph, check_adjacency, sorted_unique


def ring(n: int) -> nx.Graph:
    """Cycle ``0 - 1 - ... - (n-1) - 0``: ``n`` edges, every degree 2.

    Raises:
      ValueError: if ``n < 3``.
    """
    _at_least(n, 3, "ring", "n")
    return nx.cycle_graph(n)


def path(n: int) -> nx.Graph:
    """Path ``0 - 1 - ... - (n-1)``: ``n - 1`` edges.

    Raises:
      ValueError: if ``n < 2``.
    """
    _at_least(n, 2, "path", "n")
    return nx.path_graph(n)


def star(n: int) -> nx.Graph:
    """Star with hub ``0`` and leaves ``1..n-1``: ``n - 1`` edges (``n`` nodes in all).

    Raises:
      ValueError: if ``n < 2``.
    """
    _at_least(n, 2, "star", "n")
    return nx.star_graph(n - 1)


def complete(n: int) -> nx.Graph:
    """Complete graph K_n: ``n (n - 1) / 2`` edges.

    Raises:
      ValueError: if ``n < 2``.
    """
    _at_least(n, 2, "complete", "n")
    return nx.complete_graph(n)


def grid(rows: int, cols: int, periodic: bool = False) -> nx.Graph:
    """``rows x cols`` grid, node ``r * cols + c`` at row ``r``, column ``c``.

    Args:
      rows: number of rows, ``>= 1``.
      cols: number of columns, ``>= 1``.
      periodic: wrap both axes (a 2-D torus; ``2 rows cols`` edges when ``rows, cols >= 3``).

    Raises:
      ValueError: if ``rows < 1``, ``cols < 1`` or ``rows * cols < 2``.
    """
    _at_least(rows, 1, "grid", "rows")
    _at_least(cols, 1, "grid", "cols")
    _at_least(rows * cols, 2, "grid", "rows * cols")
    g = nx.grid_2d_graph(rows, cols, periodic=periodic)
    return nx.relabel_nodes(g, {(r, c): r * cols + c for r, c in g.nodes})


def hypercube(dim: int) -> nx.Graph:
    """Hypercube on ``n = 2**dim`` nodes (binary labels): ``n dim / 2`` edges, every degree ``dim``.

    Raises:
      ValueError: if ``dim < 1``.
    """
    _at_least(dim, 1, "hypercube", "dim")
    g = nx.hypercube_graph(dim)
    return nx.relabel_nodes(g, {v: int("".join(map(str, v)), 2) for v in g.nodes})


def exponential(n: int) -> nx.Graph:
    """Exponential graph: node ``i`` linked to ``(i + 2**k) mod n`` for ``k = 0..floor(log2(n-1))``.

    Raises:
      ValueError: if ``n < 2``.
    """
    _at_least(n, 2, "exponential", "n")
    g = nx.empty_graph(n)
    for k in range(int(math.log2(n - 1)) + 1):
        g.add_edges_from((i, (i + 2**k) % n) for i in range(n))
    return g


def erdos_renyi(n: int, p: float, seed: int = 0, max_tries: int = 1000) -> nx.Graph:
    """Connected Erdős–Rényi graph G(n, p), by rejection.

    Draws ``networkx.gnp_random_graph(n, p, seed=seed + t)`` for ``t = 0, 1, ...`` and returns the
    first connected draw. Connectivity is likely once ``p`` exceeds ``ln(n) / n``.

    Args:
      n: number of nodes, ``>= 2``.
      p: edge probability in ``(0, 1]``.
      seed: graph seed (not a noise seed).
      max_tries: number of draws before giving up.

    Raises:
      ValueError: if ``p`` is outside ``(0, 1]`` or no draw is connected.
    """
    _at_least(n, 2, "erdos_renyi", "n")
    if not 0 < p <= 1:
        raise ValueError(f"erdos_renyi needs 0 < p <= 1; got p={p}")
    hint = f"connectivity needs p above about ln(n)/n = {math.log(n) / n:.3g}"
    return _first_connected(lambda s: nx.gnp_random_graph(n, p, seed=s), seed, max_tries,
                            f"erdos_renyi(n={n}, p={p})", hint)


def gnm(n: int, m: int, seed: int = 0, max_tries: int = 1000) -> nx.Graph:
    """Connected random graph with exactly ``m`` edges, G(n, m), by rejection (as ``erdos_renyi``).

    Paper 001 (Xiao, Ye & Devadas 2019) draws its graphs "with N and |E|" (its experiments).

    Raises:
      ValueError: if ``m`` is outside ``[n - 1, n (n - 1) / 2]`` or no draw is connected.
    """
    _at_least(n, 2, "gnm", "n")
    if not n - 1 <= m <= n * (n - 1) // 2:
        raise ValueError(f"gnm needs n - 1 <= m <= n (n - 1) / 2 = {n * (n - 1) // 2}; got m={m}")
    return _first_connected(lambda s: nx.gnm_random_graph(n, m, seed=s), seed, max_tries,
                            f"gnm(n={n}, m={m})", "use more edges")


def random_geometric(n: int, radius: float, seed: int = 0, max_tries: int = 1000) -> nx.Graph:
    """Connected random geometric graph, by rejection (as ``erdos_renyi``).

    ``n`` points uniform in the unit square, an edge when their distance is ``<= radius``
    (``networkx.random_geometric_graph``; positions in the node attribute ``"pos"``). Paper 000 uses
    ``n=50, radius=0.3`` (its §VI; ``seed=69`` gives 255 edges, like the paper's instance).

    Raises:
      ValueError: if ``radius <= 0`` or no draw is connected.
    """
    _at_least(n, 2, "random_geometric", "n")
    if radius <= 0:
        raise ValueError(f"random_geometric needs radius > 0; got radius={radius}")
    return _first_connected(lambda s: nx.random_geometric_graph(n, radius, seed=s), seed, max_tries,
                            f"random_geometric(n={n}, radius={radius})", "use a larger radius")


def random_sparse_edges(n: int, degree: float = 10.0, seed: int = 0) -> np.ndarray:
    """Edges of a connected sparse random graph with mean degree ``degree``, vectorized numpy.

    A random Hamiltonian cycle (a uniform permutation of the nodes, closed; it makes the graph
    connected by construction, so no rejection and no largest-component step) plus uniform random
    pairs ``{i, j}``, ``i != j``, redrawn until there are ``E = round(n degree / 2)`` distinct
    edges: a G(n, m) graph on top of a cycle, mean degree ``2E / n``. Costs ``O(E log E)`` time and
    ``O(E)`` memory (no ``networkx.Graph``, no ``(N, N)`` array), for 10^6-agent networks; build
    the ``Network`` with ``build_network_from_edges``.

    Args:
      n: number of nodes, ``>= 3``.
      degree: mean degree, in ``[2, n - 1]``.
      seed: graph seed (not a noise seed); the result is a function of ``(n, degree, seed)``.

    Returns:
      ``(E, 2)`` int64 rows ``(i, j)``, ``i < j``, sorted lexicographically.

    Raises:
      ValueError: if ``n < 3`` or ``degree`` is outside ``[2, n - 1]``.
    """
    _at_least(n, 3, "random_sparse", "n")
    if not 2 <= degree <= n - 1:
        raise ValueError(f"random_sparse needs 2 <= degree <= n - 1 = {n - 1}; got "
                         f"degree={degree}")
    rng = np.random.default_rng(seed)
    target = round(n * degree / 2)
    cycle = rng.permutation(n)
    codes = _edge_codes(n, cycle, np.roll(cycle, -1))
    while len(codes) < target:
        i, j = rng.integers(0, n, size=(2, target - len(codes)))
        codes = sorted_unique(np.concatenate([codes, _edge_codes(n, i[i != j], j[i != j])]))
    return np.stack([codes // n, codes % n], axis=1)


def random_sparse(n: int, degree: float = 10.0, seed: int = 0) -> nx.Graph:
    """``random_sparse_edges`` as a ``networkx.Graph`` (for the ``GRAPHS`` registry and small N;
    at 10^6 agents use the edge array and ``build_network_from_edges``)."""
    g = nx.empty_graph(n)
    g.add_edges_from(random_sparse_edges(n, degree, seed).tolist())
    return g


def _edge_codes(n: int, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    """Sorted distinct codes ``min(i, j) n + max(i, j)`` of undirected pairs (int64)."""
    i, j = np.asarray(i, np.int64), np.asarray(j, np.int64)
    return sorted_unique(np.minimum(i, j) * n + np.maximum(i, j))


def from_edges(n: int, edges: Iterable[tuple[int, int]]) -> nx.Graph:
    """Graph on nodes ``0..n-1`` with the given undirected edges (duplicates are merged).

    Raises:
      ValueError: if an edge names a node outside ``0..n-1`` or is a self-loop.
    """
    g = nx.empty_graph(n)
    for i, j in edges:
        if not (0 <= i < n and 0 <= j < n):
            raise ValueError(f"edge ({i}, {j}) names a node outside 0..{n - 1}")
        if i == j:
            raise ValueError(f"edge ({i}, {j}) is a self-loop at node {i}; self-loops are not "
                             "allowed")
        g.add_edge(int(i), int(j))
    return g


def from_adjacency(A) -> nx.Graph:
    """Graph whose edges are the nonzero off-diagonal entries of ``A`` (values are ignored).

    Args:
      A: ``(N, N)`` adjacency matrix.

    Raises:
      ValueError: if ``A`` is not square, not symmetric, negative or has a nonzero diagonal
        (a self-loop).
    """
    return as_graph(check_adjacency(A))


def _grid_of_size(n: int, rows: int | None = None, cols: int | None = None,
                  periodic: bool = False) -> nx.Graph:
    """Grid with ``n`` nodes: the most square factorization unless ``rows``/``cols`` are given."""
    if rows is None and cols is None:
        rows = max(r for r in range(1, math.isqrt(n) + 1) if n % r == 0)
        if rows == 1:  # a 1 × n grid is a path: say so rather than build one silently
            raise ValueError(f"grid of {n} nodes: {n} has no factorization rows × cols with both "
                             ">= 2, so it would be a path; use network 'path', or pass rows=1 "
                             "explicitly")
    rows = rows if rows is not None else n // cols
    cols = cols if cols is not None else n // rows
    if rows * cols != n:
        raise ValueError(f"grid of {n} nodes cannot have rows={rows}, cols={cols}")
    return grid(rows, cols, periodic=periodic)


def _hypercube_of_size(n: int) -> nx.Graph:
    """Hypercube Q_k with n = 2**k nodes: i ~ j when their binary labels differ in one bit."""
    dim = n.bit_length() - 1
    if n < 2 or 2**dim != n:
        raise ValueError(f"a hypercube has a power-of-two number of nodes; got n={n}")
    return hypercube(dim)


def _torus_of_size(n: int, **kw) -> nx.Graph:
    """Torus: the grid of n nodes with both axes wrapped, every degree 4 (rows, cols >= 3)."""
    return _grid_of_size(n, periodic=True, **kw)


def _deterministic(builder: Callable[..., nx.Graph]) -> Callable[..., nx.Graph]:
    """Adapt a builder to the ``GRAPHS`` signature ``(n, *, seed, **kw)``; it ignores ``seed``."""

    def build(n: int, *, seed: int = 0, **kw) -> nx.Graph:
        del seed
        return builder(n, **kw)

    build.__name__ = builder.__name__
    build.__doc__ = builder.__doc__
    return build


GRAPHS = Registry("graph", "jaxdp.networks", {
    "ring": _deterministic(ring),
    "path": _deterministic(path),
    "star": _deterministic(star),
    "complete": _deterministic(complete),
    "grid": _deterministic(_grid_of_size),
    "torus": _deterministic(_torus_of_size),
    "hypercube": _deterministic(_hypercube_of_size),
    "exponential": _deterministic(exponential),
    "erdos_renyi": erdos_renyi,
    "gnm": gnm,
    "random_geometric": random_geometric,
    "random_sparse": random_sparse,
}, how="jaxdp.network.GRAPHS.register(name, builder)")
"""Graph families by name (the command line's ``--network``; entry-point group
``jaxdp.networks``); each entry is called as ``GRAPHS[name](n, seed=seed, **kw)`` and returns a
``networkx.Graph`` on nodes ``0..n-1``."""


def make_graph(name: str, n: int, *, seed: int = 0, **kw) -> nx.Graph:
    """Build the graph family ``name`` with ``n`` nodes, e.g. ``make_graph("gnm", 100, m=200)``.

    Raises:
      ValueError: if ``name`` is not a key of ``GRAPHS`` (the message lists them and how to add
        one).
    """
    builder = GRAPHS.get(name)
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"a network needs n >= 1 agents (an int); got n={n!r}")
    return builder(n, seed=seed, **kw)


def make_network(name: str, n: int, *, seed: int = 0, weights="metropolis", P="I-W", eps=None,
                 lazy: bool = False, backend: str = "dense", **graph_kw) -> Network:
    """Build a graph by name and turn it into a ``Network``.

    Example: ``make_network("random_geometric", 50, radius=0.3, seed=1)`` is paper 000's network.

    Args:
      name: a key of ``GRAPHS``.
      n: number of agents N.
      seed: graph seed (used by random families only).
      weights, P, eps, lazy, backend: as in ``build_network`` (``backend="auto"`` picks one with
        ``choose_backend``).
      **graph_kw: the family's own arguments (``p``, ``m``, ``radius``, ``rows``, ``cols``).

    Raises:
      ValueError: if ``name`` is unknown, or as ``build_network`` and the builder.
    """
    graph = make_graph(name, n, seed=seed, **graph_kw)
    return build_network(graph, weights=weights, P=P, eps=eps, lazy=lazy, backend=backend)


def _first_connected(draw: Callable[[int], nx.Graph], seed: int, max_tries: int, what: str,
                     hint: str) -> nx.Graph:
    for t in range(max_tries):
        g = draw(seed + t)
        if nx.is_connected(g):
            return g
    raise ValueError(
        f"{what} drew no connected graph in {max_tries} tries "
        f"(seeds {seed}..{seed + max_tries - 1}); {hint}"
    )


def _at_least(value: int, low: int, builder: str, name: str) -> None:
    if value < low:
        raise ValueError(f"{builder} needs {name} >= {low}; got {name}={value}")

