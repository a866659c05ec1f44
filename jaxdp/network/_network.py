"""The ``Network`` pytree: graph operators W, P, L on an edge list, dense on the dense backend.

Every operator M in {W, P, L} is held as a diagonal ``(N,)`` plus off-diagonal weights ``(2E,)`` on
the directed edges, ``m_edge[e] = M[receivers[e], senders[e]]``. The ``"dense"`` backend also holds
the ``(N, N)`` matrices (``network.W``, ``.P``, ``.L``) and multiplies by a GEMM, best for small
and medium N; the ``"edges"`` backend holds no ``(N, N)`` array at all (memory ``O(N + E)``) and
multiplies on the edge list, for large sparse graphs. Both give the same result to rounding;
``"auto"`` picks one with ``choose_backend`` (a rule measured by ``benchmarks/bench_mixing.py``).

Edge-list products run on a sliced layout of the incoming edges (:mod:`jaxdp.network._layout`):
a few row gathers per agent, the overflow edges of high-degree agents summed in a fixed order.

Reproducibility: every sum has a fixed order by default (``reduction="ordered"``), so a run is
bit-identical from run to run on one platform and software version, GPU included; runs on
different platforms (CPU, GPU) or versions may differ by rounding and agree in distribution.
``with_reduction("scatter")`` opts into ``jax.ops.segment_sum`` for the overflow edges (a float
scatter-add: atomics on a GPU, so not bit-reproducible there). The dense backend's GEMM and every
other product carry ``jaxdp._precision.PRECISION`` (full float32 on GPUs, no TF32).

Edge order: the undirected edges ``{i, j}``, ``i < j``, are sorted lexicographically and numbered
``0..E-1``; directed edge ``e < E`` is ``i -> j`` and ``e + E`` is ``j -> i``. Code should use
``reverse`` and ``edge_id`` rather than rely on this order.
"""
from __future__ import annotations

import dataclasses
import weakref

import jax
import jax.numpy as jnp
import numpy as np

from jaxdp._precision import tensordot
from jaxdp._types import Array, PRNGKey
from jaxdp.network import _matrices, _spectral
from jaxdp.network._layout import check_backend, ordered_segment_sum, resolve_backend, slot_layout
from jaxdp.network._validation import (
    check_edges,
    check_graph,
    check_laplacian_like_edges,
    check_mixing_edges,
    edge_array,
)


REDUCTIONS = ("ordered", "scatter")
"""How overflow edges are summed: ``"ordered"`` (default; a fixed-order segmented scan,
bit-reproducible on every platform) or ``"scatter"`` (opt-in ``jax.ops.segment_sum``: a float
scatter-add, non-deterministic on GPUs)."""


DENSE_MAX_AGENTS = 4096
"""``Network.dense`` refuses larger networks unless given a larger ``max_agents``."""

_NAMES = ("W", "P", "L", "A")
_SUMMARIES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # Network -> {limit: dict}


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class Network:
    """A static undirected graph with its mixing matrix W, Laplacian-like P and Laplacian L.

    Build one with ``build_network`` or ``make_network``. Shapes: N agents, E undirected edges.
    Float leaves have JAX's default float dtype (float32 unless x64 is enabled), integer ones int32.

    Attributes:
      senders, receivers: ``(2E,)`` int32; each undirected edge appears once in each direction.
      reverse: ``(2E,)`` int32 index of the opposite directed edge.
      edge_id: ``(2E,)`` int32 index in ``[0, E)`` of the undirected edge.
      w_edge, p_edge, l_edge: ``(2E,)`` off-diagonal entries ``M[receivers, senders]``.
      w_diag, p_diag, l_diag: ``(N,)`` diagonals.
      degrees: ``(N,)`` float degrees (after ``with_link_mask``: the degrees of the live edges).
      slot_edge: ``(N, K)`` int32 directed edge in slot ``k`` of agent ``i`` (its receiver), or
        ``2E`` for an empty slot.
      slot_sender: ``(N, K)`` int32 ``senders[slot_edge]`` (``i`` itself for an empty slot).
      overflow: ``(M,)`` int32 directed edges in no slot (received by high-degree agents), sorted
        by receiver.
      overflow_last: ``(N,)`` int32 position in ``overflow`` of agent ``i``'s last overflow edge, or
        ``M`` when it has none (where ``ordered_segment_sum`` reads its total).
      dense_matrices: ``{"W", "P", "L"}`` -> ``(N, N)`` on the dense backend; ``None`` on the
        edge backend. Read them as ``network.W``, ``network.P``, ``network.L``.
      backend: static, ``"dense"`` or ``"edges"``.
      reduction: static, ``"ordered"`` (default) or ``"scatter"`` (``REDUCTIONS``).
    """

    senders: Array
    receivers: Array
    reverse: Array
    edge_id: Array
    w_edge: Array
    p_edge: Array
    l_edge: Array
    w_diag: Array
    p_diag: Array
    l_diag: Array
    degrees: Array
    slot_edge: Array
    slot_sender: Array
    overflow: Array
    overflow_last: Array
    dense_matrices: dict | None = None
    backend: str = "dense"
    reduction: str = "ordered"

    @property
    def W(self) -> Array:
        """``(N, N)`` mixing matrix, symmetric and doubly stochastic (dense backend only)."""
        return self._matrix("W")

    @property
    def P(self) -> Array:
        """``(N, N)`` Laplacian-like matrix: symmetric PSD, ``P @ 1 = 0``, null space ``span(1)``
        (dense backend only)."""
        return self._matrix("P")

    @property
    def L(self) -> Array:
        """``(N, N)`` combinatorial Laplacian ``D - A`` of the unweighted graph (dense backend
        only)."""
        return self._matrix("L")

    @property
    def n_agents(self) -> int:
        """N, the number of agents (static)."""
        return self.degrees.shape[-1]

    @property
    def n_edges(self) -> int:
        """E, the number of undirected edges (static)."""
        return self.senders.shape[-1] // 2

    @property
    def base(self) -> Network:
        """The static network itself (time-varying networks return their underlying one)."""
        return self

    def __repr__(self) -> str:
        return (f"Network(n_agents={self.n_agents}, n_edges={self.n_edges}, "
                f"backend={self.backend!r})")

    def mix(self, X: Array, *, message: str | None = None) -> Array:
        """``W @ X`` for ``X`` of shape ``(N, ...)``; returns ``(N, ...)``.

        ``message`` names what is sent (every product takes it): a channel
        (:func:`jaxdp.channels.with_channel`) routes each named message through its own stack and
        records the release under that name; the network itself ignores it.
        """
        return self._product("W", X)

    def apply_P(self, X: Array, *, message: str | None = None) -> Array:
        """``P @ X`` for ``X`` of shape ``(N, ...)``; returns ``(N, ...)``."""
        return self._product("P", X)

    def apply_L(self, X: Array, *, message: str | None = None) -> Array:
        """``L @ X`` (graph Laplacian) for ``X`` of shape ``(N, ...)``; returns ``(N, ...)``."""
        return self._product("L", X)

    def apply_A(self, X: Array, *, message: str | None = None) -> Array:
        """``A @ X`` (adjacency ``A = D - L``): each agent's sum over its neighbours.

        ``X`` has shape ``(N, ...)``; returns ``(N, ...)``.
        """
        return self._product("A", X)

    def gather(self, X: Array, *, message: str | None = None) -> Array:
        """Each directed edge's sender value ``X[senders]``: ``(N, ...)`` -> ``(2E, ...)``."""
        del message
        return jnp.asarray(X)[self.senders]

    def scatter_sum(self, values: Array) -> Array:
        """Sum edge values into their receivers: ``(2E, ...)`` -> ``(N, ...)``."""
        values = jnp.asarray(values)
        flat = values.reshape(values.shape[0], -1)
        out = jnp.zeros((self.n_agents, flat.shape[1]), flat.dtype)
        for k in range(self.slot_edge.shape[-1]):
            out = out + flat.at[self.slot_edge[:, k]].get(mode="fill", fill_value=0)
        if self.overflow.shape[-1]:
            out = out + self._overflow_sum(flat[self.overflow])
        return out.reshape((self.n_agents,) + values.shape[1:])

    def with_reduction(self, reduction: str) -> Network:
        """A copy summing overflow edges by ``reduction`` (``REDUCTIONS``).

        ``"ordered"`` (the default) is a fixed-order segmented scan: bit-reproducible on every
        platform. ``"scatter"`` uses ``jax.ops.segment_sum``, a float scatter-add that a GPU
        executes with atomics (results vary in the last bits from run to run); it is faster only
        when many edges overflow (``benchmarks/README.md``).

        Raises:
          ValueError: for an unknown reduction.
        """
        if reduction not in REDUCTIONS:
            raise ValueError(f"unknown reduction {reduction!r}; known: {', '.join(REDUCTIONS)}")
        return dataclasses.replace(self, reduction=reduction)

    def with_slots(self, n_slots: int | None = None) -> Network:
        """A copy with ``n_slots`` slots per agent (host; default ``n_slots(degrees)``); the edges
        beyond them overflow. Products are unchanged up to rounding; with ``n_slots=0`` every
        graph with the same N and E has the same array shapes (so runs on them stack)."""
        self._check_single("with_slots")
        senders, receivers = self._host_edges()
        layout = slot_layout(self.n_agents, senders, receivers, n_slots)
        names = ("slot_edge", "slot_sender", "overflow", "overflow_last")
        return dataclasses.replace(
            self, **{k: jnp.asarray(v, jnp.int32) for k, v in zip(names, layout)})

    def with_backend(self, backend: str) -> Network:
        """A copy using ``backend`` (``"dense"``, ``"edges"`` or ``"auto"``) for products.

        Switching to ``"dense"`` builds the ``(N, N)`` matrices from the edge arrays (jittable);
        switching to ``"edges"`` drops them.

        Raises:
          ValueError: for an unknown backend.
        """
        backend = resolve_backend(backend, self.n_agents, self.n_edges)
        if backend == "edges":
            return dataclasses.replace(self, dense_matrices=None, backend=backend)
        matrices = self.dense_matrices
        if matrices is None:
            matrices = {name: self._dense(*self._parts(name)) for name in ("W", "P", "L")}
        return dataclasses.replace(self, dense_matrices=matrices, backend=backend)

    def with_link_mask(self, mask: Array) -> Network:
        """The network with the failed undirected edges removed (jittable; ``mask`` may be traced).

        A failed edge gets zero weight in W, P and L, and its weight moves to both endpoints'
        diagonals, so W stays symmetric and doubly stochastic and P, L keep zero row sums. A float
        mask in ``[0, 1]`` scales the edges instead, differentiably.

        Args:
          mask: ``(E,)`` bool or 0/1 float over undirected edges; 1 (True) keeps the edge.

        Returns:
          A ``Network`` with the same edge arrays and backend; ``degrees`` counts live edges.

        Raises:
          ValueError: if ``mask`` does not have shape ``(E,)``.
        """
        if jnp.shape(mask) != (self.n_edges,):
            raise ValueError(
                f"link mask must have shape (E,) = ({self.n_edges},); got {jnp.shape(mask)}")
        keep = jnp.asarray(mask, dtype=self.w_edge.dtype)[self.edge_id]
        w_edge, w_diag = self._drop(self.w_edge, self.w_diag, keep)
        p_edge, p_diag = self._drop(self.p_edge, self.p_diag, keep)
        l_edge, l_diag = self._drop(self.l_edge, self.l_diag, keep)
        matrices = None
        if self.backend == "dense":
            matrices = {"W": self._dense(w_diag, w_edge), "P": self._dense(p_diag, p_edge),
                        "L": self._dense(l_diag, l_edge)}
        return dataclasses.replace(
            self, w_edge=w_edge, p_edge=p_edge, l_edge=l_edge, w_diag=w_diag, p_diag=p_diag,
            l_diag=l_diag, degrees=l_diag, dense_matrices=matrices,
        )

    def at_step(self, key: PRNGKey, k) -> Network:
        """The network used at step ``k``: a static network returns itself (``key`` is unused)."""
        del key, k
        return self

    def dense(self, name: str = "W", *, max_agents: int = DENSE_MAX_AGENTS) -> np.ndarray:
        """A float64 host copy of the ``(N, N)`` matrix ``name``, built from the edge arrays.

        Works on both backends and on stacked networks (leading axes are kept).

        Args:
          name: ``"W"``, ``"P"``, ``"L"`` or ``"A"`` (the adjacency ``D - L``).
          max_agents: refuse larger networks (the result takes ``8 N^2`` bytes).

        Returns:
          ``(..., N, N)`` numpy float64 array.

        Raises:
          ValueError: for an unknown ``name`` or ``N > max_agents``.
        """
        if name not in _NAMES:
            raise ValueError(f"unknown matrix {name!r}; known: {', '.join(_NAMES)}")
        n = self.n_agents
        if n > max_agents:
            raise ValueError(
                f"dense({name!r}) would materialise an (N, N) matrix with N={n} "
                f"({8 * n * n / 2**30:.2g} GiB) > max_agents={max_agents}; pass a larger "
                "max_agents if you mean it")
        diag, edge = (np.asarray(a, np.float64) for a in self._parts(name))
        senders, receivers = self._host_edges()
        out = np.zeros(diag.shape + (n,))
        out[..., np.arange(n), np.arange(n)] = diag
        out[..., receivers, senders] = edge
        return out

    def validate(self, tol: float | None = None) -> None:
        """Host check of W (``check_mixing_edges``) and P (``check_laplacian_like_edges``).

        Runs in ``O(N + E)`` on the edge arrays (a spectrum only where the signs of the entries
        leave PSD or the spectral gap open), so it works on both backends at any size.

        Args:
          tol: tolerance of the checks; default ``1e-9`` for float64 leaves and ``100 eps``
            (about ``1e-5``) for float32 ones.

        Raises:
          ValueError: as the two checks, or for a stacked network.
        """
        if tol is None:
            eps = float(jnp.finfo(self.w_edge.dtype).eps)
            tol = max(1e-9, 100 * eps)
        self._check_single("validate")
        n, (senders, receivers), reverse = self.n_agents, self._host_edges(), self.reverse
        check_mixing_edges(n, senders, receivers, reverse, self.w_diag, self.w_edge, tol)
        check_laplacian_like_edges(n, senders, receivers, reverse, self.p_diag, self.p_edge, tol)

    def summary(self, exact_max_agents: int = _spectral.EXACT_MAX_AGENTS, *,
                spectra: bool = True) -> dict:
        """Spectral diagnostics as plain Python numbers (JSON-serialisable; host only).

        ``spectra=False`` gives the structure only (``n_agents``, ``n_edges``, ``backend``,
        ``max_degree``, ``spectra="not computed"``): what ``jaxdp.run`` records above
        ``EXACT_MAX_AGENTS`` agents, where the Lanczos estimates cost more host time than a
        100-step run (about 50 s at 10⁵ agents on two cores).

        Up to ``exact_max_agents`` agents the spectra are exact (dense ``eigvalsh``). Above, they
        are Lanczos estimates on the edge list (``spectra`` = ``"lanczos"``): each extreme
        eigenvalue of W, P and L on ``1^perp`` is the extreme Ritz value after at most 150
        iterations, within ``spectral_residual`` of an eigenvalue. Ritz values lie inside the
        spectrum, so ``lambda_2`` and ``lambda_max_P`` can only be under-, and ``spectral_gap``,
        ``lambda_min_nonzero_P`` and ``algebraic_connectivity`` only overestimated; the error is
        small when ``spectral_residual`` is, and large on poorly connected graphs (a long ring)
        whose spectrum near the gap is tightly clustered. The result is cached on the (immutable)
        network, since ``jaxdp.run`` records it in every trace.

        Returns:
          A dict with ``n_agents``, ``n_edges``, ``backend``, ``lambda_2`` (second-largest
          ``|eigenvalue|`` of W), ``spectral_gap`` (``1 - max(|lambda_2(W)|, |lambda_N(W)|)``),
          ``lambda_max_P``, ``lambda_min_nonzero_P`` (second smallest eigenvalue of P),
          ``algebraic_connectivity`` (second smallest eigenvalue of L), ``max_degree``,
          ``spectra`` (``"exact"`` or ``"lanczos"``) and ``spectral_residual`` (0 when exact).

        Raises:
          ValueError: for a stacked network.
        """
        self._check_single("summary")
        if not spectra:
            return {"n_agents": int(self.n_agents), "n_edges": int(self.n_edges),
                    "backend": self.backend,
                    "max_degree": int(round(float(np.max(self.degrees)))),
                    "spectra": "not computed"}
        cached = _SUMMARIES.setdefault(self, {})
        if exact_max_agents not in cached:
            cached[exact_max_agents] = self._spectral_summary(exact_max_agents)
        return dict(cached[exact_max_agents])

    def _spectral_summary(self, exact_max_agents: int) -> dict:
        n, (senders, receivers) = self.n_agents, self._host_edges()
        ends = {name: _spectral.spectrum_ends(
                    n, senders, receivers, *(np.asarray(a) for a in self._parts(name)),
                    deflate_ones=True, exact_max_agents=exact_max_agents)
                for name in ("W", "P", "L")}
        lambda_2 = max(abs(ends["W"].low), abs(ends["W"].high))
        return {
            "n_agents": int(n),
            "n_edges": int(self.n_edges),
            "backend": self.backend,
            "lambda_2": float(lambda_2),
            "spectral_gap": float(1.0 - lambda_2),
            "lambda_max_P": ends["P"].high,
            "lambda_min_nonzero_P": ends["P"].low,
            "algebraic_connectivity": ends["L"].low,
            "max_degree": int(round(float(np.max(self.degrees)))),
            "spectra": "exact" if ends["W"].exact else "lanczos",
            "spectral_residual": max(e.residual for e in ends.values()),
        }

    def _matrix(self, name: str) -> Array:
        if self.dense_matrices is None:
            raise AttributeError(
                f"Network.{name} is not stored on the {self.backend!r} backend (N={self.n_agents}"
                f"): use mix / apply_P / apply_L / apply_A for products, network.dense({name!r}) "
                "for a host copy, or network.with_backend('dense')")
        return self.dense_matrices[name]

    def _overflow_sum(self, values: Array) -> Array:
        """``(M, C)`` values on the overflow edges summed into their receivers: ``(N, C)``."""
        receivers = self.receivers[self.overflow]
        if self.reduction == "scatter":
            return jax.ops.segment_sum(values, receivers, num_segments=self.n_agents)
        return ordered_segment_sum(values, receivers, self.overflow_last)

    def _parts(self, name: str) -> tuple[Array, Array]:
        """``(diag, edge)`` of W, P, L or A."""
        if name == "A":
            return jnp.zeros_like(self.l_diag), -self.l_edge
        prefix = name.lower()
        return getattr(self, f"{prefix}_diag"), getattr(self, f"{prefix}_edge")

    def _product(self, name: str, X: Array) -> Array:
        X = jnp.asarray(X)
        if self.backend == "dense":
            M = jnp.diag(self.degrees) - self.L if name == "A" else self._matrix(name)
            return tensordot(M, X, axes=1)
        diag, edge = self._parts(name)
        flat = X.reshape(X.shape[0], -1)
        out = diag[:, None] * flat
        weights = edge.at[self.slot_edge].get(mode="fill", fill_value=0)  # (N, K)
        for k in range(self.slot_edge.shape[-1]):
            out = out + weights[:, k, None] * flat[self.slot_sender[:, k]]
        if self.overflow.shape[-1]:
            over = self.overflow
            out = out + self._overflow_sum(edge[over][:, None] * flat[self.senders[over]])
        return out.reshape(X.shape)

    def _drop(self, edge: Array, diag: Array, keep: Array) -> tuple[Array, Array]:
        kept = edge * keep
        return kept, diag + self.scatter_sum(edge - kept)

    def _dense(self, diag: Array, edge: Array) -> Array:
        # each off-diagonal entry is written once: a scatter without a sum, deterministic
        return jnp.diag(diag).at[self.receivers, self.senders].set(edge, unique_indices=True)

    def _host_edges(self) -> tuple[np.ndarray, np.ndarray]:
        """``(senders, receivers)`` as host arrays (the first network's, when stacked)."""
        first = (0,) * (np.ndim(self.senders) - 1)
        return np.asarray(self.senders)[first], np.asarray(self.receivers)[first]

    def _check_single(self, what: str) -> None:
        if np.ndim(self.degrees) != 1:
            raise ValueError(
                f"{what} needs a single network; got stacked networks with leading shape "
                f"{np.shape(self.degrees)[:-1]} (index one first)")


_META = ("backend", "reduction")
jax.tree_util.register_dataclass(
    Network,
    data_fields=[f.name for f in dataclasses.fields(Network) if f.name not in _META],
    meta_fields=list(_META),
)


def build_network(graph, *, weights="metropolis", P="I-W", eps: float | None = None,
                  lazy: bool = False, backend: str = "dense") -> Network:
    """Build a ``Network`` from a graph, on the host in float64.

    The graph is validated first (``check_graph``): connected, no self-loops, nodes ``0..N-1``,
    ``N >= 2``. Named weights and P cost ``O(N + E)`` on the edge list (``lambda_max(L)`` by
    Lanczos); only explicit ``(N, N)`` matrices are checked densely.

    Args:
      graph: a ``networkx.Graph`` or an ``(N, N)`` adjacency matrix (nonzero entries are edges).
      weights: mixing weights: ``"metropolis"`` (Metropolis–Hastings,
        ``W_ij = 1 / (1 + max(deg_i, deg_j))``), ``"max_degree"`` (``W = I - L / (d_max + 1)``),
        ``"laplacian"`` (``W = I - eps L``) or an explicit ``(N, N)`` matrix.
      P: Laplacian-like matrix: ``"I-W"`` (default; paper 000's P = I - W_MH, DPP² Assumption 3, with
        eigenvalues in ``[0, 2)``), ``"laplacian"``, ``"normalized_laplacian"``
        (``L / lambda_max(L)``), ``"laplacian_dmax"`` (``L / (d_max + 1)``) or an explicit
        ``(N, N)`` matrix, zero off the edges.
      eps: step of ``weights="laplacian"``, default ``1 / (d_max + 1)``; must lie in
        ``(0, 2 / lambda_max(L))``.
      lazy: use ``(I + W) / 2`` instead of W (and then P = I - W is halved too).
      backend: ``"dense"``, ``"edges"`` or ``"auto"`` (``choose_backend``).

    Returns:
      The ``Network``.

    Raises:
      ValueError: for an invalid graph, an unknown weights/P/backend name, a bad ``eps``, or an
        explicit W or P failing its check.
    """
    check_backend(backend)
    graph = check_graph(graph)
    n, edges = graph.number_of_nodes(), edge_array(graph)
    L = _matrices.laplacian(n, edges)
    W = _matrices.mixing_matrix(n, edges, weights, eps=eps, lazy=lazy, graph=graph)
    Pm = _matrices.laplacian_like(P, n, edges, W, L, graph=graph)
    return assemble(n, edges, {"w": W, "p": Pm, "l": L},
                    resolve_backend(backend, n, len(edges)))


def build_network_from_edges(n: int, edges, *, weights: str = "metropolis", P: str = "I-W",
                             eps: float | None = None, lazy: bool = False,
                             backend: str = "edges") -> Network:
    """Build a ``Network`` from an ``(E, 2)`` edge array, with no ``networkx.Graph`` on the way.

    The same operators as ``build_network`` on the same graph (named weights and P are computed
    on the edge list in ``O(N + E)``), for graphs too large for networkx (``10^6`` agents, e.g.
    from ``random_sparse_edges``). Edges are checked by ``check_edges`` (range, self-loops,
    connectivity; duplicates and orientation are merged).

    Args:
      n: number of agents N.
      edges: ``(E, 2)`` integer undirected edges.
      weights: a named mixing rule (``"metropolis"``, ``"max_degree"``, ``"laplacian"``).
      P: a named Laplacian-like choice, as ``build_network``.
      eps, lazy: as ``build_network``.
      backend: ``"edges"`` (default: no ``(N, N)`` array), ``"dense"`` or ``"auto"``.

    Raises:
      ValueError: as ``check_edges``, for an explicit (array) ``weights`` or ``P`` (use
        ``build_network``), or as ``build_network``.
    """
    for what, value in (("weights", weights), ("P", P)):
        if not isinstance(value, str):
            raise ValueError(f"build_network_from_edges takes a named {what}; got an explicit "
                             f"{type(value).__name__} (use build_network for (N, N) matrices)")
    check_backend(backend)
    edges = check_edges(n, edges)
    L = _matrices.laplacian(n, edges)
    W = _matrices.mixing_matrix(n, edges, weights, eps=eps, lazy=lazy)
    Pm = _matrices.laplacian_like(P, n, edges, W, L)
    return assemble(n, edges, {"w": W, "p": Pm, "l": L}, resolve_backend(backend, n, len(edges)))


def assemble(n: int, edges: np.ndarray, operators: dict, backend: str) -> Network:
    """Store host operators on the undirected ``edges`` ``(E, 2)`` (``i < j``, sorted) as a Network.

    Args:
      n: N.
      edges: ``(E, 2)`` undirected edges in the ``Network`` order.
      operators: ``{"w", "p", "l"}`` -> ``(diag (N,), edge (2E,))`` in edge form.
      backend: ``"dense"`` or ``"edges"``; the dense matrices are built from the edge form, so
        both backends hold exactly the same operator.
    """
    E = len(edges)
    senders, receivers = _matrices.directed(edges)
    first = np.arange(E)
    slot_edge, slot_sender, overflow, overflow_last = slot_layout(n, senders, receivers)
    floats = {}
    for name, (diag, edge) in operators.items():
        floats.update({f"{name}_diag": np.asarray(diag, np.float64),
                       f"{name}_edge": np.asarray(edge, np.float64)})
    ints = {"senders": senders, "receivers": receivers,
            "reverse": np.concatenate([first + E, first]),
            "edge_id": np.concatenate([first, first]),
            "slot_edge": slot_edge, "slot_sender": slot_sender, "overflow": overflow,
            "overflow_last": overflow_last}
    matrices = None
    if backend == "dense":
        matrices = {name.upper(): jnp.asarray(_spectral.dense_operator(n, senders, receivers,
                                                                      *operators[name]))
                    for name in ("w", "p", "l")}
    return Network(
        **{k: jnp.asarray(v) for k, v in floats.items()},
        **{k: jnp.asarray(v, dtype=jnp.int32) for k, v in ints.items()},
        degrees=jnp.asarray(floats["l_diag"]),
        dense_matrices=matrices,
        backend=backend,
    )


