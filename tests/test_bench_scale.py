"""The scale benchmark (benchmarks/bench_scale.py) and the networkx-free sparse random graph."""
import importlib.util
import json
from pathlib import Path

import jax
import numpy as np
import pytest

from jaxdp import network

BENCH = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_scale.py"


def _bench():
    spec = importlib.util.spec_from_file_location("bench_scale", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("n, degree", [(200, 10), (2000, 10), (5000, 4)])
def test_random_sparse_edges_degree_symmetric_no_loops(n, degree):
    edges = network.random_sparse_edges(n, degree, seed=1)
    assert edges.shape[1] == 2 and np.all(edges[:, 0] < edges[:, 1])  # no self loop, i < j
    assert len(np.unique(edges[:, 0] * n + edges[:, 1])) == len(edges)  # no duplicate
    assert abs(2 * len(edges) / n - degree) <= 0.1 * degree
    net = network.build_network_from_edges(n, edges)
    senders, receivers = np.asarray(net.senders), np.asarray(net.receivers)
    reverse = np.asarray(net.reverse)
    assert np.array_equal(senders[reverse], receivers)  # every directed edge has its reverse
    np.testing.assert_allclose(np.asarray(net.w_edge)[reverse], np.asarray(net.w_edge))
    net.validate()  # W doubly stochastic, P Laplacian-like (and connected)


def test_sorted_unique_is_numpys_unique():
    from jaxdp.network._validation import sorted_unique

    rng = np.random.default_rng(0)
    for values in (rng.integers(0, 50, 1000), rng.integers(-10**12, 10**12, 777),
                   np.array([5]), np.array([], np.int64), np.full(9, 3)):
        out = sorted_unique(values)
        np.testing.assert_array_equal(out, np.unique(values))
        assert out.dtype == values.dtype


def test_random_sparse_edges_deterministic_for_a_seed():
    a, b = (network.random_sparse_edges(500, 10, seed=3) for _ in range(2))
    assert np.array_equal(a, b)
    assert not np.array_equal(a, network.random_sparse_edges(500, 10, seed=4))


def test_build_network_from_edges_matches_build_network():
    n, edges = 300, network.random_sparse_edges(300, 8, seed=2)
    fast = network.build_network_from_edges(n, edges[::-1, ::-1])  # any order and orientation
    slow = network.build_network(network.make_graph("random_sparse", n, seed=2, degree=8),
                                 backend="edges")
    for field in ("senders", "receivers", "w_edge", "w_diag", "p_edge", "p_diag", "slot_edge"):
        np.testing.assert_array_equal(np.asarray(getattr(fast, field)),
                                      np.asarray(getattr(slow, field)), err_msg=field)


@pytest.mark.parametrize("edges, match", [
    ([[0, 1], [1, 2], [3, 3]], "self-loop at node 3"),
    ([[0, 1], [1, 4]], "outside 0..3"),
    ([[0, 1], [2, 3]], "disconnected: 2 connected components"),
])
def test_check_edges_names_the_bad_edge(edges, match):
    with pytest.raises(ValueError, match=match):
        network.check_edges(4, np.array(edges))


def test_random_sparse_edges_rejects_bad_degree():
    with pytest.raises(ValueError, match="degree=1"):
        network.random_sparse_edges(100, 1)


@pytest.mark.parametrize("name, n", [("dgd", 1000), ("dp_dgd", 200), ("dgd+channel", 200)])
def test_benchmark_cell_has_every_field_at_tiny_n(name, n):
    bench = _bench()
    with jax.enable_x64(False):  # the benchmark's precision (float32), as in its subprocesses
        row = bench.cell(name, n, steps=3)
    assert set(bench.FIELDS) <= set(row)
    assert (row["algorithm"], row["n_agents"], row["n_edges"]) == (name, n, n * bench.DEGREE // 2)
    assert row["peak_rss_mib"] > 0 and row["agent_steps_per_second"] > 0
    assert np.isfinite(row["objective_end"])
    assert "| " + name + " |" in bench.table([row])


def test_benchmark_cell_split_over_agents_runs_the_same_numbers():
    bench = _bench()
    with jax.enable_x64(False):
        whole, split = (bench.cell("dgd+channel", 200, steps=3, shard=s) for s in ("seeds",
                                                                                  "agents"))
    assert (whole["devices"], split["devices"], split["shard"]) == (1, 8, "agents")
    np.testing.assert_allclose(split["objective_end"], whole["objective_end"], rtol=1e-6)
    assert "(agents / 8)" in bench.table([split])


def test_benchmark_main_writes_rows_from_subprocesses(tmp_path):
    bench = _bench()
    out = tmp_path / "scale.json"
    bench.main(["--sizes", "200", "--channel-sizes", "--steps", "2", "--out", str(out)])
    rows = json.loads(out.read_text())["rows"]
    assert [(r["algorithm"], r["n_agents"]) for r in rows] == [("dgd", 200), ("dp_dgd", 200)]
    for row in rows:
        assert "error" not in row, row
        assert set(bench.FIELDS) <= set(row)


def test_a_large_run_records_the_structure_not_the_lanczos_spectra():
    """Above EXACT_MAX_AGENTS agents the trace's network summary skips the spectra (Lanczos cost
    ~50 s of host time at 10⁵ agents, 8× a 100-step DGD run); below, they are recorded exactly."""
    from jaxdp import algorithms, problems, run
    from jaxdp.network._spectral import EXACT_MAX_AGENTS

    for n, spectra in ((EXACT_MAX_AGENTS + 1, "not computed"), (20, "exact")):
        net = network.build_network_from_edges(n, network.random_sparse_edges(n, 4, seed=0))
        prob = problems.make_problem("least_squares", n_agents=n, m=2, d=2, seed=0)
        meta = run(algorithms.get("dgd"), prob, net, steps=1, seeds=1,
                   progress=False).meta["network"]
        assert meta["spectra"] == spectra and meta["n_agents"] == n
        assert ("spectral_gap" in meta) == (spectra == "exact")
