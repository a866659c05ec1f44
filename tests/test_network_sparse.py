"""Tests of the edge backend at scale: no dense matrices, sliced products, sparse validation and
spectra, the automatic backend choice, and edge-list random walks."""
import dataclasses
import time

import jax
import jax.numpy as jnp
import networkx as nx
import numpy as np
import pytest

from jaxdp import network as jn
from jaxdp.network import _layout, _spectral

SHAPES = [(), (3,), (2, 3)]  # trailing dims of X


def star_with_chords():
    """Star on 20 agents (a hub of degree 19: edges overflow the slots) plus a few chords."""
    return jn.from_edges(20, [(0, i) for i in range(1, 20)] + [(1, 2), (5, 9), (9, 14)])


def numpy_product(net, name, X):
    """``M @ X`` with ``M`` built in numpy from the edge arrays (explicit loop over edges)."""
    diag, edge = (np.asarray(a) for a in net._parts(name))
    out = diag.reshape((-1,) + (1,) * (X.ndim - 1)) * X
    for s, r, w in zip(np.asarray(net.senders), np.asarray(net.receivers), edge):
        out[r] += w * X[s]
    return out


@pytest.fixture(scope="module")
def star():
    return jn.build_network(star_with_chords(), backend="edges")


def test_high_degree_agents_use_overflow_edges(star):
    """The hub's edges beyond its slots go to overflow; every directed edge is placed once."""
    K, degrees = star.slot_edge.shape[1], np.asarray(star.degrees)
    assert K < 19 and star.overflow.shape[0] == np.maximum(degrees - K, 0).sum() >= 19 - K
    slots = np.asarray(star.slot_edge)
    placed = np.concatenate([slots[slots < 2 * star.n_edges], np.asarray(star.overflow)])
    np.testing.assert_array_equal(np.sort(placed), np.arange(2 * star.n_edges))
    senders = np.asarray(star.senders)[np.minimum(slots, 2 * star.n_edges - 1)]
    own = np.arange(20)[:, None]
    np.testing.assert_array_equal(np.where(slots < 2 * star.n_edges, senders, own),
                                  star.slot_sender)


@pytest.mark.parametrize("trailing", SHAPES, ids=str)
@pytest.mark.parametrize("graph", ["star", "rgg"])
def test_edge_products_match_dense_and_numpy_with_overflow(star, graph, trailing):
    """mix, apply_P, apply_L, apply_A and scatter_sum agree with numpy and the dense backend."""
    net = star if graph == "star" else jn.build_network(jn.random_geometric(60, 0.25, seed=1),
                                                        backend="edges")
    dense = net.with_backend("dense")
    X = np.random.default_rng(0).normal(size=(net.n_agents, *trailing))
    for method, name in [("mix", "W"), ("apply_P", "P"), ("apply_L", "L"), ("apply_A", "A")]:
        expected = numpy_product(net, name, X)
        np.testing.assert_allclose(jax.jit(getattr(net, method))(X), expected, atol=1e-12)
        np.testing.assert_allclose(getattr(dense, method)(X), expected, atol=1e-12)
    values = np.random.default_rng(1).normal(size=(2 * net.n_edges, *trailing))
    expected = np.zeros((net.n_agents, *trailing))
    np.add.at(expected, np.asarray(net.receivers), values)
    np.testing.assert_allclose(jax.jit(net.scatter_sum)(values), expected, atol=1e-12)


def test_vmapped_and_masked_edge_products_match_dense(star):
    """Over a seed batch and per-seed link masks the two backends give the same products."""
    X = np.random.default_rng(2).normal(size=(5, 20, 3))
    masks = np.random.default_rng(3).random((5, star.n_edges)) > 0.3
    for backend_net in (star, star.with_backend("dense")):
        out = jax.jit(jax.vmap(lambda m, x: backend_net.with_link_mask(m).mix(x)))(masks, X)
        expected = np.stack([star.with_link_mask(m).dense("W") @ x for m, x in zip(masks, X)])
        np.testing.assert_allclose(out, expected, atol=1e-12)


def test_edge_network_holds_no_dense_matrix(star):
    """On the edge backend W, P, L are not stored; dense() and with_backend rebuild them."""
    assert star.dense_matrices is None
    with pytest.raises(AttributeError, match=r"Network.W is not stored on the 'edges' backend"):
        star.W
    dense = jax.jit(lambda n: n.with_backend("dense"))(star)
    for name in ("W", "P", "L"):
        np.testing.assert_array_equal(getattr(dense, name), star.dense(name))
        np.testing.assert_array_equal(dense.dense(name), star.dense(name))
    np.testing.assert_array_equal(star.dense("A"), nx.to_numpy_array(star_with_chords(),
                                                                      nodelist=range(20)))
    assert dense.with_backend("edges").dense_matrices is None


def test_dense_rejects_unknown_names_and_large_networks(star):
    with pytest.raises(ValueError, match="unknown matrix 'X'; known: W, P, L, A"):
        star.dense("X")
    with pytest.raises(ValueError, match=r"N=20 .* > max_agents=10"):
        star.dense("W", max_agents=10)


def test_large_edge_network_builds_fast_and_holds_only_edge_sized_arrays():
    """A 20000-agent ring lattice of degree 10 builds in seconds with O(N + E) leaves, and mixes."""
    n = 20_000
    graph = nx.circulant_graph(n, range(1, 6))
    start = time.perf_counter()
    net = jn.build_network(graph, backend="edges")
    assert time.perf_counter() - start < 10.0
    leaves = jax.tree.leaves(net)
    assert max(leaf.size for leaf in leaves) <= 2 * net.n_edges == 200_000
    assert sum(leaf.nbytes for leaf in leaves) < 20 * 2**20
    assert not any(leaf.size >= n * n for leaf in leaves)
    net.validate()
    X = np.random.default_rng(4).normal(size=(n, 2))
    expected = (X + sum(np.roll(X, s, axis=0) for s in range(-5, 6) if s)) / 11  # W_ij = 1/11
    np.testing.assert_allclose(jax.jit(net.mix)(X), expected, atol=1e-12)


def test_auto_backend_follows_the_rule():
    """backend='auto' in build_network, make_network and with_backend is choose_backend's pick."""
    assert jn.choose_backend(8, 8) == "dense"  # density 2/7
    assert jn.choose_backend(100, 100) == "edges"  # density 0.02
    assert jn.choose_backend(21, 21) == "dense"  # density exactly 0.1
    assert jn.choose_backend(21, 20) == "edges"
    assert jn.choose_backend(20_000, 20_000 * 19_999 // 4) == "edges"  # dense too large
    for graph in (jn.ring(8), jn.ring(100), jn.complete(30), jn.random_geometric(300, 0.5, seed=0)):
        n, E = graph.number_of_nodes(), graph.number_of_edges()
        expected = "dense" if 2 * E / (n * (n - 1)) >= _layout.AUTO_DENSE_MIN_DENSITY else "edges"
        net = jn.build_network(graph, backend="auto")
        assert net.backend == jn.choose_backend(n, E) == expected
        assert (net.dense_matrices is None) == (expected == "edges")
        other = net.with_backend("edges" if expected == "dense" else "dense")
        assert other.with_backend("auto").backend == expected
    assert jn.make_network("ring", 100, backend="auto").backend == "edges"


def test_summary_estimates_are_close_to_exact_spectra():
    """Above the exact threshold, Lanczos estimates of the spectra match eigvalsh on 600 agents."""
    net = jn.build_network(jn.random_geometric(600, 0.12, seed=2), backend="edges")
    exact = net.summary()
    estimate = net.summary(exact_max_agents=100)
    assert (exact["spectra"], estimate["spectra"]) == ("exact", "lanczos")
    assert exact["spectral_residual"] == 0 and estimate["spectral_residual"] < 1e-3
    for key in ("lambda_2", "spectral_gap", "lambda_max_P", "lambda_min_nonzero_P",
                "algebraic_connectivity"):
        assert estimate[key] == pytest.approx(exact[key], rel=1e-3, abs=1e-6), key
    assert estimate["spectral_gap"] >= exact["spectral_gap"] - 1e-12  # Ritz values lie inside


def test_lanczos_matches_eigvalsh_on_a_random_operator():
    """Lanczos' extreme values of a random symmetric edge operator equal the dense ones."""
    g = jn.erdos_renyi(300, 0.05, seed=0)
    edges = np.array(sorted(tuple(sorted(e)) for e in g.edges))
    senders = np.concatenate([edges[:, 0], edges[:, 1]])
    receivers = np.concatenate([edges[:, 1], edges[:, 0]])
    rng = np.random.default_rng(5)
    weights = rng.normal(size=len(edges))
    diag, edge = rng.normal(size=300), np.concatenate([weights, weights])
    exact = np.linalg.eigvalsh(_spectral.dense_operator(300, senders, receivers, diag, edge))
    ends = _spectral.spectrum_ends(300, senders, receivers, diag, edge, exact_max_agents=0)
    assert not ends.exact
    assert ends.low == pytest.approx(exact[0], abs=1e-8)
    assert ends.high == pytest.approx(exact[-1], abs=1e-8)


def test_normalized_laplacian_has_unit_top_eigenvalue():
    """P = L / lambda_max(L) with lambda_max by Lanczos: P's top eigenvalue is 1."""
    for graph in (jn.ring(9), jn.random_geometric(120, 0.2, seed=4)):
        net = jn.build_network(graph, P="normalized_laplacian", backend="edges")
        assert np.linalg.eigvalsh(net.dense("P"))[-1] == pytest.approx(1.0, abs=1e-10)


def test_edge_network_float32_mixes_and_validates():
    """Without x64 the edge backend stays float32 and validates with a float32 tolerance."""
    with jax.enable_x64(False):
        net = jn.make_network("random_geometric", 200, radius=0.15, seed=1, backend="edges")
        assert net.w_edge.dtype == jnp.float32 and net.slot_edge.dtype == jnp.int32
        assert jax.jit(net.mix)(jnp.ones((200, 2), jnp.float32)).dtype == jnp.float32
        net.validate()


# ---------------------------------------------------------------- sparse validation


def _broken(net, **fields):
    return dataclasses.replace(net, **{k: jnp.asarray(v) for k, v in fields.items()})


def test_validate_accepts_every_named_weight_and_P():
    """Every weights/P combination passes the sparse validation on both backends."""
    graph = star_with_chords()
    for weights in ("metropolis", "max_degree", "laplacian"):
        for P in ("I-W", "laplacian", "normalized_laplacian", "laplacian_dmax"):
            for backend in jn.BACKENDS:
                jn.build_network(graph, weights=weights, P=P, backend=backend).validate()


def test_validate_rejects_asymmetric_and_non_stochastic_W(star):
    w = np.array(star.w_edge)
    w[0] += 1e-3
    with pytest.raises(ValueError, match=r"W is not symmetric: max \|M - M\^T\| = 1.0e-03"):
        _broken(star, w_edge=w).validate()
    d = np.array(star.w_diag)
    d[4] += 2e-3
    with pytest.raises(ValueError, match=r"not doubly stochastic: .* = 2.0e-03 at row 4"):
        _broken(star, w_diag=d).validate()


def test_validate_rejects_W_without_spectral_gap():
    """A disconnected support or a bipartite zero-diagonal W (eigenvalue -1) has no gap."""
    ring = jn.build_network(jn.ring(6), backend="edges")
    cut = ring.with_link_mask(np.array([0, 1, 1, 0, 1, 1], bool))
    with pytest.raises(ValueError, match=r"W has no spectral gap.*2 connected components"):
        cut.validate()
    flip = _broken(ring, w_edge=np.full(12, 0.5), w_diag=np.zeros(6))
    with pytest.raises(ValueError, match="eigenvalue -1"):
        flip.validate()
    with pytest.raises(ValueError, match="no spectral gap"):
        jn.check_mixing_matrix(flip.dense("W"))  # the dense check agrees
    signed = jn.build_network(jn.complete(5), weights="laplacian", eps=0.35, backend="edges")
    assert (np.asarray(signed.w_diag) < 0).all()  # W = I - eps L, eigenvalues 1 and 1 - 5 eps
    signed.validate()
    bad = _broken(signed, w_edge=np.full(20, 0.4), w_diag=np.full(5, -0.6))  # eps = 2 / 5
    with pytest.raises(ValueError, match=r"W has no spectral gap: lambda_N = -1 "):
        bad.validate()


def test_validate_rejects_bad_P(star):
    p = np.array(star.p_edge)
    p[:] = np.abs(p)
    d = -np.bincount(np.asarray(star.receivers), weights=p, minlength=20)
    with pytest.raises(ValueError, match="P is not positive semidefinite"):
        _broken(star, p_edge=p, p_diag=d).validate()
    d = np.array(star.p_diag)
    d[3] += 1e-3
    with pytest.raises(ValueError, match=r"P @ 1 != 0: max \|row sum\| = 1.0e-03 at row 3"):
        _broken(star, p_diag=d).validate()
    masked = star.with_link_mask(~np.isin(np.arange(star.n_edges), [0, 19]))  # isolate agent 1
    with pytest.raises(ValueError, match="W has no spectral gap"):
        masked.validate()
    lonely = _broken(star, p_edge=np.asarray(masked.p_edge), p_diag=np.asarray(masked.p_diag))
    with pytest.raises(ValueError, match="P has a null space of dimension > 1"):
        lonely.validate()


def test_summary_and_validate_need_a_single_network(star):
    stacked = jax.tree.map(lambda a: jnp.stack([a, a]), star)
    with pytest.raises(ValueError, match=r"summary needs a single network.*\(2,\)"):
        stacked.summary()
    with pytest.raises(ValueError, match="validate needs a single network"):
        stacked.validate()


# ---------------------------------------------------------------- random walks on edges


@pytest.mark.parametrize("kind", ["uniform", "metropolis", "lazy"])
def test_edge_transitions_equal_dense_ones_on_masked_networks(star, kind):
    """EdgeTransitions hold the dense walk's entries, also with failed links."""
    mask = np.random.default_rng(6).random(star.n_edges) > 0.3
    for net in (star, star.with_link_mask(mask)):
        T = jax.jit(lambda n: jn.transition_matrix(n, kind))(net)
        assert isinstance(T, jn.EdgeTransitions)
        dense = jn.transition_matrix(net.with_backend("dense"), kind)
        np.testing.assert_allclose(T.dense(), dense, atol=1e-15)


def test_edge_walk_draws_the_dense_walks_agents(star):
    """With the same keys the edge-list walk draws exactly the dense walk's next agents."""
    mask = np.random.default_rng(7).random(star.n_edges) > 0.3
    keys = jax.random.split(jax.random.key(0), 500)
    for kind in ("uniform", "lazy"):
        for net in (star, star.with_link_mask(mask)):
            draws = [jax.jit(jax.vmap(lambda k, i, n=n: jn.sample_next_agent(
                         k, jn.transition_matrix(n, kind), i)))(keys, np.arange(500) % 20)
                     for n in (net, net.with_backend("dense"))]
            assert draws[0].dtype == np.int32
            np.testing.assert_array_equal(*draws)


def test_edge_walk_samples_neighbours_uniformly(star):
    """From the hub the uniform walk reaches each of its 19 neighbours about equally often."""
    T = jn.transition_matrix(star)
    keys = jax.random.split(jax.random.key(0), 3800)
    nxt = np.asarray(jax.jit(jax.vmap(lambda k: jn.sample_next_agent(k, T, 0)))(keys))
    counts = np.bincount(nxt, minlength=20)
    assert counts[0] == 0 and (counts[1:] > 100).all() and (counts[1:] < 300).all()
    np.testing.assert_array_equal(T.astype(jnp.float32).row(0), np.r_[0.0, np.full(19, 1 / 19)]
                                  .astype(np.float32))


# --- deterministic sums (issue 26) ----------------------------------------------------------------
@pytest.mark.parametrize("slots", [None, 0, 1])
def test_ordered_and_scatter_reductions_match_numpy(star, slots):
    """The fixed-order overflow sum (default) and the opt-in segment_sum give numpy's products,
    with the default layout, with every edge overflowing (0 slots) and with 1 slot; the overflow
    stays sorted by receiver and ``overflow_last`` points at each agent's last overflow edge."""
    net = star if slots is None else star.with_slots(slots)
    over, last = np.asarray(net.overflow), np.asarray(net.overflow_last)
    recv = np.asarray(net.receivers)[over]
    assert np.all(np.diff(recv) >= 0)
    for i in range(net.n_agents):
        mine = np.flatnonzero(recv == i)
        assert last[i] == (mine[-1] if len(mine) else len(over))
    X = np.random.default_rng(4).normal(size=(20, 3))
    values = np.random.default_rng(5).normal(size=(2 * net.n_edges, 2))
    expected = np.zeros((20, 2))
    np.add.at(expected, np.asarray(net.receivers), values)
    for reduction in jn.REDUCTIONS:
        alt = net.with_reduction(reduction)
        assert alt.reduction == reduction
        for method, name in [("mix", "W"), ("apply_P", "P"), ("apply_A", "A")]:
            np.testing.assert_allclose(jax.jit(getattr(alt, method))(X),
                                       numpy_product(net, name, X), atol=1e-12)
        np.testing.assert_allclose(jax.jit(alt.scatter_sum)(values), expected, atol=1e-12)
    with pytest.raises(ValueError, match="unknown reduction"):
        star.with_reduction("atomic")


def test_ordered_reduction_is_differentiable_and_reproducible(star):
    """Gradients flow through the ordered sum (equal to segment_sum's), and two calls agree
    bit for bit."""
    X = jnp.asarray(np.random.default_rng(6).normal(size=(20, 3)))
    loss = lambda net: jax.jit(jax.grad(lambda x: jnp.sum(jnp.sin(net.mix(x)))))  # noqa: E731
    ordered, scatter = loss(star), loss(star.with_reduction("scatter"))
    np.testing.assert_allclose(ordered(X), scatter(X), atol=1e-12)
    assert np.array_equal(np.asarray(ordered(X)), np.asarray(ordered(X)))


def test_ordered_sum_lowers_without_a_scatter_add(star):
    """Lowered for CUDA, the default products and scatter_sum hold no scatter (no float atomics);
    the opt-in segment_sum does."""
    from jax import export

    X = jnp.ones((20, 3), jnp.float32)

    def text(net):
        f = jax.jit(lambda x: net.mix(x) + net.scatter_sum(x[net.senders]))
        return export.export(f, platforms=("cuda",))(X).mlir_module()

    assert "stablehlo.scatter" not in text(star)
    assert "stablehlo.scatter" in text(star.with_reduction("scatter"))


def test_time_varying_networks_keep_the_reduction(star):
    seq = jn.NetworkSequence([star.with_reduction("scatter"), star.with_reduction("scatter")])
    assert seq.networks.reduction == "scatter"
