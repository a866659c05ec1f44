"""Host-side checks of graphs, mixing matrices and Laplacian-like matrices.

Everything here runs in float64 numpy on concrete values, before anything is traced
(docs/design.md, "Error messages").
Each check raises ``ValueError`` (``TypeError`` for a wrong type) naming the bad value, where it is,
and the tolerance it was held to.

``check_mixing_matrix`` and ``check_laplacian_like`` check explicit ``(N, N)`` matrices;
``check_mixing_edges`` and ``check_laplacian_like_edges`` check the same properties of an operator
held on an edge list (``Network.validate``) in ``O(N + E)``, with a spectrum only where the signs
of the entries do not settle the question.
"""
from __future__ import annotations

import networkx as nx
import numpy as np

from jaxdp.network import _spectral

DEFAULT_TOL = 1e-9


def check_graph(graph) -> nx.Graph:
    """Check that ``graph`` can carry a decentralized algorithm.

    Args:
      graph: a ``networkx.Graph`` or an ``(N, N)`` adjacency matrix (nonzero entries are edges).

    Returns:
      The graph as a ``networkx.Graph`` (an adjacency matrix is converted).

    Raises:
      TypeError: if ``graph`` is neither a ``networkx.Graph`` nor an array.
      ValueError: if the adjacency matrix is not square, not symmetric, negative or has a nonzero
        diagonal; if the graph is directed or a multigraph, has fewer than 2 nodes, nodes other than
        the integers ``0..N-1``, a self-loop, or more than one connected component.
    """
    graph = as_graph(graph)
    if graph.is_directed() or graph.is_multigraph():
        raise ValueError(
            f"graph must be a simple undirected networkx.Graph; got {type(graph).__name__}")
    n = graph.number_of_nodes()
    if n < 2:
        raise ValueError(f"a network needs at least 2 agents; got a graph with {n} node(s)")
    unexpected = sorted(set(graph.nodes) - set(range(n)), key=repr)
    if unexpected:
        raise ValueError(
            f"graph nodes must be the integers 0..{n - 1}; got unexpected nodes {unexpected[:5]} "
            "(relabel with networkx.convert_node_labels_to_integers)"
        )
    loops = sorted(nx.nodes_with_selfloops(graph))
    if loops:
        raise ValueError(f"graph has a self-loop at node {loops[0]}; self-loops are not allowed")
    if not nx.is_connected(graph):
        sizes = sorted((len(c) for c in nx.connected_components(graph)), reverse=True)
        raise ValueError(
            f"graph is disconnected: {len(sizes)} connected components (sizes {sizes[:10]}); "
            "decentralized optimization needs a connected graph"
        )
    return graph


def as_graph(graph) -> nx.Graph:
    """Return ``graph`` as a ``networkx.Graph``, converting (and checking) an adjacency matrix."""
    if isinstance(graph, nx.Graph):
        return graph
    if hasattr(graph, "shape") or isinstance(graph, (list, tuple)):
        return nx.from_numpy_array((check_adjacency(graph) != 0).astype(np.float64))
    raise TypeError(
        f"graph must be a networkx.Graph or an (N, N) adjacency matrix; got {type(graph)}")


def check_adjacency(A, tol: float = DEFAULT_TOL) -> np.ndarray:
    """Check an adjacency matrix: square, finite, nonnegative, symmetric, zero diagonal.

    Args:
      A: ``(N, N)`` array; nonzero entries are edges (their values are otherwise ignored).
      tol: absolute tolerance of the symmetry check.

    Returns:
      ``A`` as a float64 numpy array.

    Raises:
      ValueError: naming the first offending entry.
    """
    A = _square(A, "adjacency matrix")
    if (A < 0).any():
        i, j = np.argwhere(A < 0)[0]
        raise ValueError(f"adjacency matrix has a negative entry A[{i}, {j}] = {A[i, j]:.3g}")
    _symmetric(A, "adjacency matrix", tol)
    loops = np.flatnonzero(np.diag(A))
    if loops.size:
        i = loops[0]
        raise ValueError(
            f"adjacency matrix has a self-loop at node {i} (A[{i}, {i}] = {A[i, i]:.3g})")
    return A


def check_mixing_matrix(W, graph=None, tol: float = DEFAULT_TOL) -> np.ndarray:
    """Check a mixing matrix: square, symmetric, doubly stochastic, graph-sparse, spectral gap > 0.

    Args:
      W: ``(N, N)`` mixing matrix.
      graph: optional ``networkx.Graph`` or ``(N, N)`` adjacency; off-diagonal entries of ``W``
        outside its edges must vanish.
      tol: absolute tolerance of every check.

    Returns:
      ``W`` as a float64 numpy array.

    Raises:
      ValueError: if any property fails, naming the worst entry and the tolerance.
    """
    W = _square(W, "W")
    _symmetric(W, "W", tol)
    rows = np.abs(W.sum(axis=1) - 1.0)
    if rows.max() > tol:
        i = int(rows.argmax())
        raise ValueError(
            f"W is not doubly stochastic: max |row sum - 1| = {rows[i]:.1e} at row {i} "
            f"(tolerance {tol:.0e})"
        )
    if graph is not None:
        _respects_graph(W, graph, "W", tol)
    second = np.sort(np.abs(np.linalg.eigvalsh(W)))[-2]
    if 1.0 - second <= tol:
        raise ValueError(
            f"W has no spectral gap: max(|lambda_2|, |lambda_N|) = {second:.6g} "
            f"(tolerance {tol:.0e}); "
            "x <- W x does not converge to the average (disconnected graph, or eigenvalue -1?)"
        )
    return W


def check_laplacian_like(P, graph=None, tol: float = DEFAULT_TOL, name: str = "P") -> np.ndarray:
    """Check a Laplacian-like matrix: symmetric, PSD, ``P @ 1 = 0``, null space ``span(1)``.

    These are the conditions of Assumption 3 of paper 000 (DPP², Ou et al. 2025).

    Args:
      P: ``(N, N)`` matrix.
      graph: optional ``networkx.Graph`` or ``(N, N)`` adjacency; off-diagonal entries of ``P``
        outside its edges must vanish.
      tol: tolerance, relative to ``max(1, max |P_ij|)``.
      name: the matrix's name in error messages.

    Returns:
      ``P`` as a float64 numpy array.

    Raises:
      ValueError: if any property fails, naming the bad value and the tolerance.
    """
    P = _square(P, name)
    atol = tol * max(1.0, float(np.abs(P).max()))
    _symmetric(P, name, atol)
    rows = np.abs(P.sum(axis=1))
    if rows.max() > atol:
        i = int(rows.argmax())
        raise ValueError(
            f"{name} @ 1 != 0: max |row sum| = {rows[i]:.1e} at row {i} (tolerance {atol:.0e})"
        )
    if graph is not None:
        _respects_graph(P, graph, name, atol)
    eig = np.linalg.eigvalsh(P)
    if eig[0] < -atol:
        raise ValueError(
            f"{name} is not positive semidefinite: smallest eigenvalue {eig[0]:.3g} "
            f"(tolerance {atol:.0e})"
        )
    if eig[1] <= atol:
        zeros = int((eig <= atol).sum())
        raise ValueError(
            f"{name} has a null space of dimension {zeros}, not 1 (second smallest eigenvalue "
            f"{eig[1]:.3g} <= tolerance {atol:.0e}); it must be span(1) (is the graph connected?)"
        )
    return P


def check_mixing_edges(n: int, senders, receivers, reverse, diag, edge,
                       tol: float = DEFAULT_TOL) -> None:
    """``check_mixing_matrix`` for W held on an edge list, without an ``(N, N)`` matrix.

    Symmetry (``edge == edge[reverse]``) and unit row sums are checked entrywise. The spectral gap
    ``1 - max(|lambda_2|, |lambda_N|) > 0`` is then equivalent to: the edges of nonzero weight
    connect the graph (eigenvalue 1 is simple), and -1 is not an eigenvalue. For ``W >= 0`` the
    latter fails exactly when the graph is bipartite with a zero diagonal (Perron–Frobenius);
    when W has negative entries, ``lambda_N`` is computed (``_spectral.spectrum_ends``: exact up to
    ``EXACT_MAX_AGENTS`` agents, Lanczos above).

    Args:
      n: N.
      senders, receivers, reverse: ``(2E,)`` edge arrays of a ``Network``.
      diag, edge: ``(N,)`` diagonal and ``(2E,)`` off-diagonal entries of W.
      tol: absolute tolerance of every check.

    Raises:
      ValueError: naming the worst entry and the tolerance.
    """
    senders, receivers, diag, edge = _edge_arrays(senders, receivers, diag, edge, "W")
    _symmetric_edges(edge, np.asarray(reverse), senders, receivers, "W", tol)
    rows = np.abs(diag + np.bincount(receivers, weights=edge, minlength=n) - 1.0)
    if rows.max() > tol:
        i = int(rows.argmax())
        raise ValueError(
            f"W is not doubly stochastic: max |row sum - 1| = {rows[i]:.1e} at row {i} "
            f"(tolerance {tol:.0e})"
        )
    live = np.abs(edge) > tol
    gap_hint = ("x <- W x does not converge to the average (disconnected graph, or eigenvalue "
                "-1?)")
    _connected_edges(n, senders[live], receivers[live], f"W has no spectral gap: {gap_hint}")
    if (edge >= 0).all() and (diag >= 0).all():
        if diag.max() <= tol and nx.is_bipartite(_graph(n, senders, receivers)):
            raise ValueError(
                f"W has no spectral gap: eigenvalue -1 (bipartite graph, zero diagonal; "
                f"tolerance {tol:.0e}); {gap_hint}")
        return
    low = _spectral.spectrum_ends(n, senders, receivers, diag, edge, deflate_ones=True).low
    if 1.0 + low <= tol:
        raise ValueError(
            f"W has no spectral gap: lambda_N = {low:.6g} (tolerance {tol:.0e}); {gap_hint}")


def check_laplacian_like_edges(n: int, senders, receivers, reverse, diag, edge,
                               tol: float = DEFAULT_TOL, name: str = "P") -> None:
    """``check_laplacian_like`` for P held on an edge list, without an ``(N, N)`` matrix.

    Symmetry and zero row sums are checked entrywise. When every off-diagonal entry is ``<= 0``,
    P is a weighted Laplacian: PSD by diagonal dominance, with null space ``span(1)`` exactly when
    its negative entries connect the graph. Otherwise the two smallest eigenvalues are computed
    (exact up to ``EXACT_MAX_AGENTS`` agents, Lanczos above: an estimate).

    Args:
      n: N.
      senders, receivers, reverse: ``(2E,)`` edge arrays of a ``Network``.
      diag, edge: ``(N,)`` diagonal and ``(2E,)`` off-diagonal entries of P.
      tol: tolerance, relative to ``max(1, max |P_ij|)``.
      name: the matrix's name in error messages.

    Raises:
      ValueError: naming the bad value and the tolerance.
    """
    senders, receivers, diag, edge = _edge_arrays(senders, receivers, diag, edge, name)
    atol = tol * max(1.0, float(np.abs(diag).max()), float(np.abs(edge).max(initial=0.0)))
    _symmetric_edges(edge, np.asarray(reverse), senders, receivers, name, atol)
    rows = np.abs(diag + np.bincount(receivers, weights=edge, minlength=n))
    if rows.max() > atol:
        i = int(rows.argmax())
        raise ValueError(
            f"{name} @ 1 != 0: max |row sum| = {rows[i]:.1e} at row {i} (tolerance {atol:.0e})"
        )
    null_hint = f"it must be span(1) (is the graph connected?); tolerance {atol:.0e}"
    if (edge <= atol).all():
        live = edge < -atol
        _connected_edges(n, senders[live], receivers[live],
                         f"{name} has a null space of dimension > 1: {null_hint}")
        return
    ends = _spectral.spectrum_ends(n, senders, receivers, diag, edge, deflate_ones=True)
    if ends.low < -atol:
        raise ValueError(
            f"{name} is not positive semidefinite: smallest eigenvalue {ends.low:.3g} "
            f"(tolerance {atol:.0e})"
        )
    if ends.low <= atol:
        raise ValueError(
            f"{name} has a null space of dimension > 1 (second smallest eigenvalue "
            f"{ends.low:.3g}): {null_hint}")


def edge_array(graph: nx.Graph) -> np.ndarray:
    """The undirected edges of a graph on nodes ``0..N-1`` as an ``(E, 2)`` int64 array.

    Rows are ``(i, j)`` with ``i < j``, sorted lexicographically (the ``Network`` edge order).
    """
    edges = np.array(list(graph.edges()), dtype=np.int64).reshape(-1, 2)
    edges.sort(axis=1)
    return edges[np.lexsort((edges[:, 1], edges[:, 0]))]


def check_edges(n: int, edges) -> np.ndarray:
    """Check an undirected edge list on nodes ``0..n-1`` without networkx (``O(N + E log E)``).

    The edge-list counterpart of ``check_graph``, for graphs too large for a ``networkx.Graph``
    (connectivity by ``scipy.sparse.csgraph.connected_components``).

    Args:
      n: number of nodes N, ``>= 2``.
      edges: ``(E, 2)`` integer array of undirected edges, in either orientation.

    Returns:
      The edges as ``(E', 2)`` int64 rows ``(i, j)``, ``i < j``, duplicates merged, sorted
      lexicographically (the ``Network`` edge order, as ``edge_array``).

    Raises:
      ValueError: if ``n < 2``, ``edges`` is not ``(E, 2)`` integers, an edge names a node outside
        ``0..n-1`` or is a self-loop, or the graph has more than one connected component.
    """
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    if n < 2:
        raise ValueError(f"a network needs at least 2 agents; got n={n}")
    edges = np.asarray(edges)
    if edges.ndim != 2 or edges.shape[1] != 2 or not np.issubdtype(edges.dtype, np.integer):
        raise ValueError(f"edges must be an (E, 2) integer array; got shape {edges.shape}, "
                         f"dtype {edges.dtype}")
    edges = np.sort(edges.astype(np.int64), axis=1)
    bad = np.flatnonzero((edges[:, 0] < 0) | (edges[:, 1] >= n))
    if bad.size:
        raise ValueError(f"edge {tuple(edges[bad[0]])} names a node outside 0..{n - 1}")
    loops = np.flatnonzero(edges[:, 0] == edges[:, 1])
    if loops.size:
        raise ValueError(f"graph has a self-loop at node {edges[loops[0], 0]}; self-loops are "
                         "not allowed")
    codes = sorted_unique(edges[:, 0] * n + edges[:, 1])
    edges = np.stack([codes // n, codes % n], axis=1)
    adjacency = coo_matrix((np.ones(len(edges), np.int8), (edges[:, 0], edges[:, 1])), (n, n))
    count, labels = connected_components(adjacency, directed=False)
    if count > 1:
        sizes = np.sort(np.bincount(labels))[::-1]
        raise ValueError(
            f"graph is disconnected: {count} connected components (sizes {sizes[:10].tolist()}); "
            "decentralized optimization needs a connected graph")
    return edges


def sorted_unique(values) -> np.ndarray:
    """The distinct values of a 1-D integer array, sorted, by one sort: ``np.unique`` without
    its hash table, which numpy 2.3+ uses for integers and which took 5.1 s for 5·10⁶ int64
    edge codes where the sort takes 0.06 s."""
    values = np.sort(np.asarray(values).ravel())
    return values[np.concatenate(([True], values[1:] != values[:-1]))] if values.size else values


def adjacency_of(graph) -> np.ndarray:
    """Boolean ``(N, N)`` adjacency of a ``networkx.Graph`` on nodes ``0..N-1`` or of an array."""
    if isinstance(graph, nx.Graph):
        n = graph.number_of_nodes()
        return nx.to_numpy_array(graph, nodelist=range(n), weight=None) != 0
    return np.asarray(graph) != 0


def _square(M, name: str) -> np.ndarray:
    M = np.asarray(M, dtype=np.float64)
    if M.ndim != 2 or M.shape[0] != M.shape[1]:
        raise ValueError(f"{name} must be a square (N, N) matrix; got shape {M.shape}")
    if not np.isfinite(M).all():
        i, j = np.argwhere(~np.isfinite(M))[0]
        raise ValueError(f"{name} has a non-finite entry {M[i, j]} at ({i}, {j})")
    return M


def _symmetric(M: np.ndarray, name: str, tol: float) -> None:
    diff = np.abs(M - M.T)
    if diff.max() > tol:
        i, j = np.unravel_index(diff.argmax(), diff.shape)
        raise ValueError(
            f"{name} is not symmetric: max |M - M^T| = {diff[i, j]:.1e} at ({i}, {j}) "
            f"({name}[{i}, {j}] = {M[i, j]:.6g}, {name}[{j}, {i}] = {M[j, i]:.6g}; "
            f"tolerance {tol:.0e})"
        )


def _respects_graph(M: np.ndarray, graph, name: str, tol: float) -> None:
    A = adjacency_of(graph)
    if A.shape != M.shape:
        raise ValueError(f"{name} has shape {M.shape} but the graph has {A.shape[0]} nodes")
    outside = np.abs(np.where(A | np.eye(len(A), dtype=bool), 0.0, M))
    if outside.max() > tol:
        i, j = np.unravel_index(outside.argmax(), outside.shape)
        raise ValueError(
            f"{name} has a nonzero entry {M[i, j]:.3g} at ({i}, {j}), which is not an edge of the "
            f"graph (tolerance {tol:.0e})"
        )


def _edge_arrays(senders, receivers, diag, edge, name: str):
    diag, edge = np.asarray(diag, np.float64), np.asarray(edge, np.float64)
    for what, values in (("diagonal", diag), ("edge weights", edge)):
        if not np.isfinite(values).all():
            k = int(np.flatnonzero(~np.isfinite(values))[0])
            raise ValueError(f"{name} has a non-finite {what} entry {values[k]} at index {k}")
    return np.asarray(senders), np.asarray(receivers), diag, edge


def _symmetric_edges(edge, reverse, senders, receivers, name: str, tol: float) -> None:
    diff = np.abs(edge - edge[reverse])
    if diff.size and diff.max() > tol:
        e = int(diff.argmax())
        i, j = int(receivers[e]), int(senders[e])
        raise ValueError(
            f"{name} is not symmetric: max |M - M^T| = {diff[e]:.1e} at ({i}, {j}) "
            f"({name}[{i}, {j}] = {edge[e]:.6g}, {name}[{j}, {i}] = {edge[reverse[e]]:.6g}; "
            f"tolerance {tol:.0e})"
        )


def _graph(n: int, senders, receivers) -> nx.Graph:
    g = nx.empty_graph(n)
    g.add_edges_from(zip(senders.tolist(), receivers.tolist()))
    return g


def _connected_edges(n: int, senders, receivers, message: str) -> None:
    g = _graph(n, senders, receivers)
    if not nx.is_connected(g):
        sizes = sorted((len(c) for c in nx.connected_components(g)), reverse=True)
        raise ValueError(f"{message} ({len(sizes)} connected components, sizes {sizes[:10]})")


def averaging_gap(network) -> float:
    """``max |W_ij − 1/N|`` over every entry of ``network``'s mixing matrix (host, float64; a
    missing edge of K_N is a zero entry of W, off by 1/N)."""
    n = network.n_agents
    weights = np.concatenate([np.asarray(network.w_diag, np.float64),
                              np.asarray(network.w_edge, np.float64)])
    gap = float(np.max(np.abs(weights - 1.0 / n)))
    return gap if network.n_edges == n * (n - 1) // 2 else max(gap, 1.0 / n)


def check_averaging(network, who: str, tol: float = DEFAULT_TOL) -> float:
    """Check that ``network.mix`` is a server's average: W = 11ᵀ/N to ``tol``, the complete graph
    K_N with Metropolis (or max-degree) weights, ``make_network('complete', N)``; returns the gap.
    The tolerance is at least 4 ulps of W's dtype (1/N is not exact in float32).

    Algorithms with a data-less server or trainer (DP-ADMM, the federated family) compute its
    average of the N uploads as any row of ``network.mix`` and need this.

    Raises:
      ValueError: naming ``who`` and the gap ``max |W − 11ᵀ/N|``.
    """
    gap = averaging_gap(network)
    tol = max(tol, 4 * float(np.finfo(np.asarray(network.w_diag).dtype).eps))
    if not gap <= tol:
        raise ValueError(
            f"{who} needs the central server's average: network.W must be 11ᵀ/N, the complete "
            f"graph with Metropolis weights (make_network('complete', N); on the command line "
            f"--network complete); got max |W − 11ᵀ/N| = {gap:.3g}")
    return gap
