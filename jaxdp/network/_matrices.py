"""Host-side (float64 numpy) construction of the graph operators W, P and L on the edge list.

Every operator is returned in edge form, ``(diag, edge)``: its diagonal ``(N,)`` and its entries on
the directed edges ``(2E,)``, ``edge[e] = M[receivers[e], senders[e]]``, with the undirected edges
``{i, j}`` (``i < j``, ``(E, 2)`` array ``edges``) numbered ``0..E-1``, directed edge ``e < E``
being ``i -> j`` and ``e + E`` being ``j -> i``. Named weights cost ``O(N + E)``; only explicit
``(N, N)`` matrices (which the caller already holds densely) are checked densely.
"""
from __future__ import annotations

import numpy as np

from jaxdp.network import _spectral
from jaxdp.network._validation import check_laplacian_like, check_mixing_matrix

WEIGHTS = ("metropolis", "max_degree", "laplacian")
P_CHOICES = ("I-W", "laplacian", "normalized_laplacian", "laplacian_dmax")

Operator = tuple[np.ndarray, np.ndarray]  # (diag (N,), edge (2E,)), float64


def directed(edges: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(senders, receivers)`` ``(2E,)`` of the undirected ``edges`` ``(E, 2)`` (both ways)."""
    return (np.concatenate([edges[:, 0], edges[:, 1]]),
            np.concatenate([edges[:, 1], edges[:, 0]]))


def laplacian(n: int, edges: np.ndarray) -> Operator:
    """Combinatorial Laplacian ``L = D - A`` of the unweighted graph: ``(degrees, -1)`` (a node's
    degree is how often it appears in ``edges``: no directed copy of the edge list is made)."""
    return (np.bincount(np.asarray(edges).ravel(), minlength=n).astype(np.float64),
            np.full(2 * len(edges), -1.0))


def mixing_matrix(n: int, edges: np.ndarray, weights, eps: float | None = None,
                  lazy: bool = False, graph=None) -> Operator:
    """Symmetric doubly stochastic mixing matrix W on the graph, in edge form.

    Args:
      n: N.
      edges: ``(E, 2)`` undirected edges, ``i < j``.
      weights: ``"metropolis"`` (``W_ij = 1 / (1 + max(deg_i, deg_j))`` on edges,
        ``W_ii = 1 - sum``), ``"max_degree"`` (``W = I - L / (d_max + 1)``), ``"laplacian"``
        (``W = I - eps L``), or an explicit ``(N, N)`` matrix (checked with
        ``check_mixing_matrix`` against ``graph``).
      eps: step of ``"laplacian"`` weights, default ``1 / (d_max + 1)``; must lie in
        ``(0, 2 / lambda_max(L))``. Only valid with ``weights="laplacian"``.
      lazy: return ``(I + W) / 2``.
      graph: the graph, for checking an explicit matrix.

    Raises:
      ValueError: for an unknown ``weights``, a bad ``eps``, or an invalid explicit matrix.
    """
    if eps is not None and not (isinstance(weights, str) and weights == "laplacian"):
        raise ValueError(
            f"eps is only used with weights='laplacian'; got weights={weights!r}, eps={eps}")
    senders, receivers = directed(edges)
    deg, l_edge = laplacian(n, edges)
    if not isinstance(weights, str):
        W = check_mixing_matrix(weights, graph)
        diag, edge = W.diagonal().copy(), W[receivers, senders]
    elif weights == "metropolis":
        edge = 1.0 / (1.0 + np.maximum(deg[senders], deg[receivers]))
        diag = 1.0 - np.bincount(receivers, weights=edge, minlength=n)
    elif weights == "max_degree":
        diag, edge = 1.0 - deg / (deg.max() + 1.0), -l_edge / (deg.max() + 1.0)
    elif weights == "laplacian":
        step = _laplacian_step(n, senders, receivers, deg, l_edge, eps)
        diag, edge = 1.0 - step * deg, -step * l_edge
    else:
        raise ValueError(
            f"unknown weights {weights!r}; known: {', '.join(WEIGHTS)} or an (N, N) array")
    return (0.5 * (1.0 + diag), 0.5 * edge) if lazy else (diag, edge)


def laplacian_like(P, n: int, edges: np.ndarray, W: Operator, L: Operator,
                   graph=None) -> Operator:
    """Laplacian-like matrix P (symmetric PSD, ``P @ 1 = 0``, null space ``span(1)``), edge form.

    Args:
      P: ``"I-W"`` (default of paper 000 (DPP², Assumption 3): with Metropolis W its eigenvalues lie
        in ``[0, 2)``), ``"laplacian"`` (``L``), ``"normalized_laplacian"`` (``L / lambda_max(L)``,
        eigenvalues in ``[0, 1]``, ``lambda_max`` by Lanczos on the edge list; not
        ``D^-1/2 L D^-1/2``, whose null space is not ``span(1)``), ``"laplacian_dmax"``
        (``L / (d_max + 1)``), or an explicit ``(N, N)`` matrix.
      n: N.
      edges: ``(E, 2)`` undirected edges.
      W, L: the network's mixing matrix and Laplacian in edge form.
      graph: the graph (explicit P must be zero off its edges).

    Raises:
      ValueError: for an unknown name or an explicit P failing ``check_laplacian_like``.
    """
    if not isinstance(P, str):
        senders, receivers = directed(edges)
        P = check_laplacian_like(P, graph)
        return P.diagonal().copy(), P[receivers, senders]
    if P == "I-W":
        return 1.0 - W[0], -W[1]
    if P == "laplacian":
        return L[0].copy(), L[1].copy()
    if P == "normalized_laplacian":
        lam = _spectral.lambda_max(n, *directed(edges), *L)
        return L[0] / lam, L[1] / lam
    if P == "laplacian_dmax":
        return L[0] / (L[0].max() + 1.0), L[1] / (L[0].max() + 1.0)
    raise ValueError(f"unknown P {P!r}; known: {', '.join(P_CHOICES)} or an (N, N) array")


def _laplacian_step(n, senders, receivers, deg, l_edge, eps: float | None) -> float:
    if eps is None:
        return 1.0 / (deg.max() + 1.0)
    bound = 2.0 / _spectral.lambda_max(n, senders, receivers, deg, l_edge)
    if not 0 < eps < bound:
        raise ValueError(
            f"eps must satisfy 0 < eps < 2 / lambda_max(L) = {bound:.6g} for W = I - eps L to "
            f"converge; got eps={eps}"
        )
    return float(eps)
