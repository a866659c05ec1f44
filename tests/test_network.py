"""Tests of jaxdp.network: builders, weights, products, masks, time-varying graphs, errors."""
import json

import chex
import jax
import jax.numpy as jnp
import networkx as nx
import numpy as np
import pytest

from jaxdp import network as jn

WEIGHTS = ["metropolis", "max_degree", "laplacian"]
P_OPTIONS = ["I-W", "laplacian", "normalized_laplacian", "laplacian_dmax"]
SHAPES = [(), (4,), (4, 3)]  # trailing dims of X


def irregular_graph():
    """A small connected graph with unequal degrees (a star glued to a path, plus a chord)."""
    return jn.from_edges(7, [(0, 1), (0, 2), (0, 3), (3, 4), (4, 5), (5, 6), (2, 6)])


@pytest.fixture(scope="module")
def rgg():
    return jn.random_geometric(20, 0.4, seed=3)


@pytest.fixture(scope="module")
def net(rgg):
    return jn.build_network(rgg)


def numpy_reference_mask(net, keep):
    """Zero the failed edges of W, P, L and fix their diagonals, with explicit numpy loops."""
    out = {}
    E = net.n_edges
    s, r = np.asarray(net.senders[:E]), np.asarray(net.receivers[:E])
    for name in ("W", "P", "L"):
        M = np.array(getattr(net, name))
        for e in range(E):
            if not keep[e]:
                i, j = s[e], r[e]
                M[i, i] += M[i, j]
                M[j, j] += M[j, i]
                M[i, j] = M[j, i] = 0.0
        out[name] = M
    return out


# ---------------------------------------------------------------- builders


@pytest.mark.parametrize(
    "graph, n_nodes, n_edges",
    [
        (jn.ring(8), 8, 8),
        (jn.path(6), 6, 5),
        (jn.star(6), 6, 5),
        (jn.complete(6), 6, 15),
        (jn.grid(3, 4), 12, 17),
        (jn.grid(3, 4, periodic=True), 12, 24),
        (jn.hypercube(4), 16, 32),
        (jn.exponential(8), 8, 20),
        (jn.exponential(10), 10, 30),
        (jn.gnm(12, 20, seed=1), 12, 20),
    ],
    ids=["ring", "path", "star", "complete", "grid", "torus", "hypercube", "exp8", "exp10", "gnm"],
)
def test_builders_have_expected_node_and_edge_counts(graph, n_nodes, n_edges):
    """Each builder gives the textbook number of nodes and edges, on nodes 0..N-1."""
    assert sorted(graph.nodes) == list(range(n_nodes))
    assert graph.number_of_edges() == n_edges
    jn.check_graph(graph)


def test_star_hub_is_node_zero_and_hypercube_links_differ_in_one_bit():
    """The star's hub is node 0; hypercube neighbours differ in exactly one bit."""
    assert dict(jn.star(5).degree)[0] == 4
    assert all(bin(i ^ j).count("1") == 1 for i, j in jn.hypercube(3).edges)


def test_random_geometric_is_connected_and_seeded(rgg):
    """Paper 000's RGG (n=50, r=0.3) is connected and a function of its seed only."""
    g1, g2 = jn.random_geometric(50, 0.3, seed=1), jn.random_geometric(50, 0.3, seed=1)
    assert nx.is_connected(g1)
    assert sorted(g1.edges) == sorted(g2.edges)
    assert sorted(g1.edges) != sorted(jn.random_geometric(50, 0.3, seed=2).edges)
    assert jn.random_geometric(50, 0.3, seed=69).number_of_edges() == 255  # DPP²'s experimental graph (Ou et al. 2025, §VI)


def test_erdos_renyi_is_connected_by_rejection():
    """ER graphs are redrawn until connected; an impossible p gives a clear error."""
    g = jn.erdos_renyi(30, 0.15, seed=0)
    assert nx.is_connected(g) and g.number_of_nodes() == 30
    assert sorted(g.edges) == sorted(jn.erdos_renyi(30, 0.15, seed=0).edges)
    with pytest.raises(ValueError, match=r"no connected graph in 5 tries.*ln\(n\)/n"):
        jn.erdos_renyi(30, 0.01, seed=0, max_tries=5)


def test_make_network_builds_by_name_and_rejects_unknown_names():
    """make_network dispatches on GRAPHS; an unknown name lists the known ones."""
    net = jn.make_network("random_geometric", 50, radius=0.3, seed=69)
    assert (net.n_agents, net.n_edges) == (50, 255)
    assert jn.make_network("torus", 16).n_edges == 32
    assert jn.make_network("hypercube", 8, backend="edges").backend == "edges"
    with pytest.raises(ValueError, match=r"unknown graph 'foo'; known: .*ring"):
        jn.make_network("foo", 10)


# ---------------------------------------------------------------- weights and P


@pytest.mark.parametrize("lazy", [False, True])
@pytest.mark.parametrize("weights", WEIGHTS)
def test_mixing_matrix_is_symmetric_doubly_stochastic(weights, lazy):
    """Every weight kind gives a symmetric doubly stochastic W with a spectral gap."""
    net = jn.build_network(irregular_graph(), weights=weights, lazy=lazy)
    W = np.asarray(net.W)
    np.testing.assert_allclose(W, W.T, atol=1e-15)
    np.testing.assert_allclose(W.sum(axis=1), 1.0, atol=1e-14)
    net.validate()
    assert net.summary()["spectral_gap"] > 0


def test_metropolis_weights_match_the_formula():
    """W_ij = 1 / (1 + max(deg_i, deg_j)) on edges and W_ii = 1 - sum_j W_ij."""
    g = irregular_graph()
    W = np.asarray(jn.build_network(g).W)
    deg = dict(g.degree)
    for i, j in g.edges:
        assert W[i, j] == pytest.approx(1.0 / (1 + max(deg[i], deg[j])))
    assert W[1, 1] == pytest.approx(1 - 1 / 4)  # leaf of the hub (degree 3)


@pytest.mark.parametrize("P", P_OPTIONS)
def test_P_is_psd_with_null_space_span_of_ones(P):
    """Every P option is symmetric PSD with P @ 1 = 0 and a 1-dimensional null space."""
    net = jn.build_network(irregular_graph(), P=P)
    Pm = np.asarray(net.P)
    eig = np.linalg.eigvalsh(Pm)
    np.testing.assert_allclose(Pm @ np.ones(7), 0.0, atol=1e-14)
    assert eig[0] > -1e-12 and eig[1] > 1e-6
    jn.check_laplacian_like(Pm, irregular_graph())


def test_I_minus_W_has_eigenvalues_in_0_2(net):
    """Paper 000's default P = I - W_MH has eigenvalues in [0, 2) (Ou et al. 2025, §II)."""
    eig = np.linalg.eigvalsh(np.asarray(net.P))
    assert eig[0] > -1e-12 and eig[-1] < 2
    np.testing.assert_allclose(np.asarray(net.P), np.eye(20) - np.asarray(net.W), atol=1e-15)


def test_explicit_W_and_P_arrays_are_accepted(net, rgg):
    """An explicit valid W or P array is used as given."""
    W, P = np.asarray(net.W), 2.0 * np.asarray(net.L)
    other = jn.build_network(rgg, weights=W, P=P)
    np.testing.assert_allclose(np.asarray(other.W), W, atol=0)
    np.testing.assert_allclose(np.asarray(other.P), P, atol=0)


def test_L_is_the_combinatorial_laplacian(rgg, net):
    """L = D - A of the unweighted graph and degrees = diag(L)."""
    A = nx.to_numpy_array(rgg, nodelist=range(20))
    np.testing.assert_array_equal(np.asarray(net.L), np.diag(A.sum(1)) - A)
    np.testing.assert_array_equal(np.asarray(net.degrees), A.sum(1))


# ---------------------------------------------------------------- edge arrays and products


def test_edge_arrays_are_consistent(net):
    """Each undirected edge appears in both directions; reverse and edge_id are consistent."""
    s, r = np.asarray(net.senders), np.asarray(net.receivers)
    rev, eid = np.asarray(net.reverse), np.asarray(net.edge_id)
    assert s.dtype == np.int32 and s.shape == (2 * net.n_edges,)
    np.testing.assert_array_equal(s[rev], r)
    np.testing.assert_array_equal(r[rev], s)
    np.testing.assert_array_equal(eid[rev], eid)
    assert set(eid) == set(range(net.n_edges))
    np.testing.assert_array_equal(np.asarray(net.w_edge), np.asarray(net.W)[r, s])
    np.testing.assert_array_equal(np.asarray(net.p_diag), np.diag(np.asarray(net.P)))


@pytest.mark.parametrize("trailing", SHAPES, ids=str)
def test_dense_and_edge_products_match_numpy(net, trailing):
    """mix, apply_P, apply_L, apply_A match numpy on both backends, for any trailing dims."""
    X = np.random.default_rng(0).normal(size=(20, *trailing))
    edges = net.with_backend("edges")
    A = np.diag(np.asarray(net.degrees)) - np.asarray(net.L)
    for method, M in [("mix", net.W), ("apply_P", net.P), ("apply_L", net.L), ("apply_A", A)]:
        expected = np.tensordot(np.asarray(M), X, axes=1)
        dense = jax.jit(getattr(net, method))(X)
        edge = jax.jit(getattr(edges, method))(X)
        assert dense.shape == edge.shape == X.shape
        np.testing.assert_allclose(dense, expected, rtol=0, atol=1e-12)
        np.testing.assert_allclose(edge, expected, rtol=0, atol=1e-12)


def test_gather_then_scatter_sum_is_the_adjacency_product(net):
    """scatter_sum(gather(X)) sums each agent's neighbours' values: A @ X."""
    X = np.random.default_rng(1).normal(size=(20, 3))
    assert net.gather(X).shape == (2 * net.n_edges, 3)
    np.testing.assert_allclose(net.scatter_sum(net.gather(X)), net.apply_A(X), atol=1e-12)


def test_network_is_a_pytree_with_static_backend(net):
    """A Network passes through jit; the backend is static metadata, not a leaf."""
    leaves, treedef = jax.tree.flatten(net.with_backend("edges"))
    assert all(isinstance(leaf, jax.Array) for leaf in leaves)
    assert jax.tree.unflatten(treedef, leaves).backend == "edges"
    out = jax.jit(lambda n, x: n.at_step(None, 0).mix(x))(net, np.ones(20))
    np.testing.assert_allclose(out, np.ones(20), atol=1e-12)


def test_float32_without_x64(rgg):
    """Without x64 the float leaves are float32 and the integer ones int32."""
    with jax.enable_x64(False):
        net = jn.build_network(rgg)
        assert net.W.dtype == jnp.float32 and net.senders.dtype == jnp.int32
        assert net.with_backend("edges").mix(jnp.ones((20, 2), jnp.float32)).dtype == jnp.float32


# ---------------------------------------------------------------- link masks


@pytest.mark.parametrize("backend", jn.BACKENDS)
def test_with_link_mask_matches_numpy_reference_under_jit(net, backend):
    """Failed edges lose their weight to the diagonals, as in a numpy loop, with a traced mask."""
    keep = np.random.default_rng(2).random(net.n_edges) > 0.4
    masked = jax.jit(lambda m: net.with_backend(backend).with_link_mask(m))(keep)
    ref = numpy_reference_mask(net, keep)
    X = np.random.default_rng(3).normal(size=(20, 2))
    for name, method in [("W", "mix"), ("P", "apply_P"), ("L", "apply_L")]:
        np.testing.assert_allclose(masked.dense(name), ref[name], atol=1e-14)
        np.testing.assert_allclose(getattr(masked, method)(X), ref[name] @ X, atol=1e-12)
    np.testing.assert_allclose(masked.dense("W").sum(1), 1.0, atol=1e-14)
    np.testing.assert_allclose(masked.degrees, np.diag(ref["L"]), atol=0)
    if backend == "dense":
        np.testing.assert_allclose(masked.W, ref["W"], atol=1e-14)


@pytest.mark.parametrize("backend", jn.BACKENDS)
def test_all_ones_mask_returns_the_same_matrices(net, backend):
    """Keeping every edge (bool or float mask) changes nothing."""
    net = net.with_backend(backend)
    for mask in (np.ones(net.n_edges, bool), jnp.ones(net.n_edges)):
        masked = net.with_link_mask(mask)
        chex.assert_trees_all_close(masked, net, atol=0, rtol=0)


def test_link_mask_is_differentiable_and_checks_its_shape(net):
    """A float mask gives finite gradients; a wrong shape is an error."""
    X = np.random.default_rng(4).normal(size=(20,))
    grad = jax.grad(lambda m: jnp.sum(net.with_link_mask(m).mix(X) ** 2))(jnp.ones(net.n_edges))
    assert grad.shape == (net.n_edges,) and np.isfinite(grad).all()
    with pytest.raises(ValueError, match=r"link mask must have shape \(E,\)"):
        net.with_link_mask(np.ones(net.n_edges + 1))


# ---------------------------------------------------------------- time-varying networks


def test_random_link_failures_are_deterministic_and_drop_p_fail(net):
    """Equal keys give equal networks; over many keys about p_fail of the edges fail."""
    failures = jn.RandomLinkFailures(net, 0.3)
    key = jax.random.key(0)
    chex.assert_trees_all_close(failures.at_step(key, 0), failures.at_step(key, 5))
    keys = jax.random.split(key, 400)
    nets = jax.jit(jax.vmap(lambda k: failures.at_step(k, 0)))(keys)
    dropped = np.mean(np.asarray(nets.l_edge) == 0)
    assert abs(dropped - 0.3) < 0.02
    np.testing.assert_allclose(np.asarray(nets.W).sum(-1), 1.0, atol=1e-14)


def test_random_link_failures_take_a_traced_p_fail(net):
    """p_fail is a pytree leaf: it can be traced, and p_fail = 1 isolates every agent."""
    step = jax.jit(lambda p, k: jn.RandomLinkFailures(net, p).at_step(k, 0))
    isolated = step(1.0, jax.random.key(1))
    np.testing.assert_allclose(isolated.W, np.eye(20), atol=1e-15)
    chex.assert_trees_all_close(step(0.0, jax.random.key(1)), net)


def test_random_activation_keeps_edges_between_active_agents(net):
    """An edge is up iff both endpoints are active under the same key."""
    activation = jn.RandomActivation(net, 0.6)
    key = jax.random.key(7)
    active = np.asarray(activation.active_mask(key))
    masked = jax.jit(activation.at_step)(key, 3)
    A = np.asarray(net.L) < 0
    up = np.asarray(masked.L) < 0
    np.testing.assert_array_equal(up, A & active[:, None] & active[None, :])
    assert 0 < active.sum() < 20


@pytest.mark.parametrize("backend", jn.BACKENDS)
def test_network_sequence_cycles_over_different_edge_sets(backend):
    """at_step(k) is network k % T, also for traced k; edge sets are padded to their union."""
    nets = [jn.build_network(g, backend=backend) for g in (jn.ring(6), jn.path(6), jn.star(6))]
    seq = jn.NetworkSequence(nets)
    assert (len(seq), seq.n_agents, seq.n_edges, seq.backend) == (3, 6, 9, backend)
    X = np.random.default_rng(5).normal(size=(6, 2))
    step = jax.jit(lambda k: seq.at_step(None, k).mix(X))
    other = "edges" if backend == "dense" else "dense"
    step_other = jax.jit(lambda k: seq.at_step(None, k).with_backend(other).mix(X))
    for k in range(7):
        W = nets[k % 3].dense("W")
        np.testing.assert_allclose(seq.at_step(None, k).dense("W"), W, atol=0)
        np.testing.assert_allclose(step(k), W @ X, atol=1e-12)
        np.testing.assert_allclose(step_other(k), W @ X, atol=1e-12)
    np.testing.assert_allclose(seq.networks.dense("P")[1], nets[1].dense("P"), atol=0)
    assert seq.summary()["period"] == 3


def test_network_sequence_rejects_mismatched_networks():
    """Networks of different sizes or backends cannot be sequenced."""
    with pytest.raises(ValueError, match="N=5 agents but network 0 has 6"):
        jn.NetworkSequence([jn.build_network(jn.ring(6)), jn.build_network(jn.ring(5))])
    with pytest.raises(ValueError, match="backend 'edges'"):
        jn.NetworkSequence([jn.make_network("ring", 6),
                            jn.make_network("ring", 6, backend="edges")])


# ---------------------------------------------------------------- summary


def test_summary_of_ring_matches_closed_form():
    """Metropolis ring: W's eigenvalues are (1 + 2 cos(2 pi k/n)) / 3, L's 2 - 2 cos(2 pi k/n)."""
    n = 8
    s = jn.build_network(jn.ring(n)).summary()
    lam2 = (1 + 2 * np.cos(2 * np.pi / n)) / 3
    assert s["lambda_2"] == pytest.approx(lam2, abs=1e-12)
    assert s["spectral_gap"] == pytest.approx(1 - lam2, abs=1e-12)
    assert s["algebraic_connectivity"] == pytest.approx(2 - 2 * np.cos(2 * np.pi / n), abs=1e-12)
    assert s["lambda_max_P"] == pytest.approx(4 / 3, abs=1e-12)
    assert s["max_degree"] == 2
    json.dumps(s)


def test_summary_of_complete_graph_with_max_degree_weights():
    """On K_n, max-degree weights give W = J / n, so the spectral gap is 1."""
    net = jn.build_network(jn.complete(5), weights="max_degree", P="laplacian")
    np.testing.assert_allclose(net.W, np.full((5, 5), 0.2), atol=1e-15)
    s = net.summary()
    assert s["spectral_gap"] == pytest.approx(1.0, abs=1e-12)
    assert s["algebraic_connectivity"] == pytest.approx(5.0, abs=1e-12)
    assert s["lambda_min_nonzero_P"] == pytest.approx(5.0, abs=1e-12)


# ---------------------------------------------------------------- random walks


@pytest.mark.parametrize("backend", jn.BACKENDS)
@pytest.mark.parametrize("kind", ["uniform", "metropolis", "lazy"])
def test_transition_matrix_is_row_stochastic(net, kind, backend):
    """Every transition kind has rows summing to 1 and moves only along edges, on both backends."""
    T = jn.transition_matrix(net.with_backend(backend), kind)
    T = np.asarray(T) if backend == "dense" else T.dense()
    np.testing.assert_allclose(T.sum(1), 1.0, atol=1e-14)
    assert (T >= 0).all()
    assert (T[(net.dense("L") == 0)] == 0).all()
    np.testing.assert_allclose(T, np.asarray(jn.transition_matrix(net, kind)), atol=1e-15)


def test_uniform_walk_is_D_inverse_A_and_samples_only_neighbours(rgg, net):
    """The uniform walk is D^-1 A (paper 003) and sample_next_agent draws only neighbours."""
    T = jn.transition_matrix(net)
    A = nx.to_numpy_array(rgg, nodelist=range(20))
    np.testing.assert_allclose(T, A / A.sum(1, keepdims=True), atol=1e-15)
    keys = jax.random.split(jax.random.key(0), 300)
    i = int(np.argmax(A.sum(1)))
    nxt = np.asarray(jax.jit(jax.vmap(lambda k: jn.sample_next_agent(k, T, i)))(keys))
    assert nxt.dtype == np.int32
    assert set(nxt) == set(np.flatnonzero(A[i]))


# ---------------------------------------------------------------- errors


def test_disconnected_graph_is_rejected():
    with pytest.raises(ValueError, match="disconnected: 2 connected components"):
        jn.build_network(jn.from_edges(4, [(0, 1), (2, 3)]))


def test_self_loop_is_rejected():
    g = jn.ring(5)
    g.add_edge(2, 2)
    with pytest.raises(ValueError, match="self-loop at node 2"):
        jn.build_network(g)
    A = nx.to_numpy_array(jn.ring(3))
    A[1, 1] = 1.0
    with pytest.raises(ValueError, match=r"self-loop at node 1 \(A\[1, 1\] = 1\)"):
        jn.from_adjacency(A)
    with pytest.raises(ValueError, match="self-loop at node 3"):
        jn.from_edges(4, [(3, 3)])


def test_bad_adjacency_matrices_are_rejected():
    with pytest.raises(ValueError, match=r"square \(N, N\) matrix; got shape \(3, 4\)"):
        jn.build_network(np.zeros((3, 4)))
    A = nx.to_numpy_array(jn.ring(4))
    A[0, 2] = 1.0
    with pytest.raises(ValueError, match=r"adjacency matrix is not symmetric.*at \(0, 2\)"):
        jn.from_adjacency(A)
    np.testing.assert_array_equal(jn.build_network(nx.to_numpy_array(jn.ring(4))).L,
                                  jn.build_network(jn.ring(4)).L)


def test_bad_graph_nodes_are_rejected():
    with pytest.raises(ValueError, match="at least 2 agents"):
        jn.check_graph(nx.empty_graph(1))
    with pytest.raises(ValueError, match="integers 0..2"):
        jn.check_graph(nx.path_graph(["a", "b", "c"]))
    with pytest.raises(ValueError, match="outside 0..3"):
        jn.from_edges(4, [(0, 4)])


@pytest.mark.parametrize(
    "build, match",
    [
        (lambda: jn.ring(2), "ring needs n >= 3; got n=2"),
        (lambda: jn.grid(0, 3), "grid needs rows >= 1"),
        (lambda: jn.erdos_renyi(10, 1.5), "0 < p <= 1; got p=1.5"),
        (lambda: jn.gnm(10, 5), "n - 1 <= m"),
        (lambda: jn.random_geometric(10, 0.0), "radius > 0"),
        (lambda: jn.random_geometric(30, 0.05, max_tries=3), "no connected graph in 3 tries"),
        (lambda: jn.make_graph("grid", 12, rows=5), "cannot have rows=5"),
    ],
    ids=["ring", "grid", "er_p", "gnm_m", "rgg_radius", "rgg_tries", "grid_rows"],
)
def test_bad_builder_arguments_are_rejected(build, match):
    with pytest.raises(ValueError, match=match):
        build()


def test_bad_sequences_are_rejected(net):
    with pytest.raises(ValueError, match="at least one network"):
        jn.NetworkSequence([])
    with pytest.raises(TypeError, match="element 1 must be a static Network"):
        jn.NetworkSequence([net, jn.ring(4)])


def test_invalid_mixing_matrices_are_rejected(net, rgg):
    W = np.asarray(net.W).copy()
    bad = W.copy()
    bad[4, 4] += 2e-3
    msg = r"not doubly stochastic: max \|row sum - 1\| = 2.0e-03 at row 4 \(tolerance 1e-09\)"
    with pytest.raises(ValueError, match=msg):
        jn.check_mixing_matrix(bad)
    with pytest.raises(ValueError, match="not doubly stochastic"):
        jn.build_network(rgg, weights=bad)
    with pytest.raises(ValueError, match="W is not symmetric"):
        jn.check_mixing_matrix(W + np.triu(np.full_like(W, 1e-3), 1))
    with pytest.raises(ValueError, match="not an edge of the graph"):
        jn.check_mixing_matrix(np.full((4, 4), 0.25), jn.ring(4))
    with pytest.raises(ValueError, match="no spectral gap"):
        jn.check_mixing_matrix(np.eye(3))


def test_invalid_P_is_rejected(rgg):
    L = nx.laplacian_matrix(rgg, nodelist=range(20)).toarray().astype(float)
    with pytest.raises(ValueError, match="P is not positive semidefinite: smallest eigenvalue"):
        jn.build_network(rgg, P=-L)
    with pytest.raises(ValueError, match=r"P @ 1 != 0: max \|row sum\|"):
        jn.check_laplacian_like(L + np.eye(20))
    with pytest.raises(ValueError, match="null space of dimension 2"):
        jn.check_laplacian_like(nx.laplacian_matrix(jn.from_edges(4, [(0, 1), (2, 3)])).toarray())


def test_bad_options_are_rejected(rgg, net):
    with pytest.raises(ValueError, match="unknown weights 'foo'"):
        jn.build_network(rgg, weights="foo")
    with pytest.raises(ValueError, match="unknown P 'foo'"):
        jn.build_network(rgg, P="foo")
    with pytest.raises(ValueError, match="unknown backend 'sparse'"):
        jn.build_network(rgg, backend="sparse")
    with pytest.raises(ValueError, match="unknown backend 'sparse'"):
        net.with_backend("sparse")
    with pytest.raises(ValueError, match=r"eps must satisfy 0 < eps < 2 / lambda_max\(L\)"):
        jn.build_network(rgg, weights="laplacian", eps=1.0)
    with pytest.raises(ValueError, match="eps is only used with weights='laplacian'"):
        jn.build_network(rgg, eps=0.1)
    with pytest.raises(ValueError, match="unknown transition kind 'foo'"):
        jn.transition_matrix(net, "foo")
    with pytest.raises(ValueError, match="power-of-two"):
        jn.make_network("hypercube", 6)
