"""The decent-bench half of ``bench_decentbench.py``, run in ``.decentbench-venv`` (Python 3.13).

One cell per process (so that its peak RSS is its own)::

    .decentbench-venv/bin/python benchmarks/_decentbench_side.py SPEC.npz ALG TRIALS ITERATIONS \
        [--processes P] [--sigma S] [--snapshot-period K]

builds decent-bench's problem from the arrays jaxdp exported to ``SPEC.npz`` (features ``A``
``(N, m, d)``, targets ``b`` ``(N, m)``, the edges and jaxdp's W), times decent-bench's own entry
point ``decent_bench.benchmark.benchmark`` with ``n_trials = TRIALS`` and prints one JSON line.
The federated ALGs (``bench_decentbench_fed.py``) run on a ``FedNetwork`` of the same clients.

Imports numpy, networkx and decent-bench only (no jaxdp, no JAX).
"""
from __future__ import annotations

import argparse
import json
import logging
import resource
import sys
import time

import numpy as np

# ALG -> (decent-bench class, {its argument: key of SPEC's hyperparameters})
ALGORITHMS = {
    "dgd": ("DGD", {"step_size": "alpha"}),
    "extra": ("EXTRA", {"step_size": "alpha"}),
    "nids": ("NIDS", {"step_size": "alpha"}),
    "aug_dgm": ("AugDGM", {"step_size": "alpha"}),
    "admm": ("ADMM", {"penalty": "rho", "relaxation": "relax"}),
}
# federated ALG -> (decent-bench class, {its argument: SPEC key}); clients K = SPEC["clients"]
FEDERATED = {
    "fedavg": ("FedAvg", {"step_size": "alpha", "num_local_steps": "local_steps"}),
    "fedprox": ("FedProx", {"step_size": "alpha", "num_local_steps": "local_steps",
                            "penalty": "mu"}),
    "scaffold": ("Scaffold", {"step_size": "alpha", "num_local_steps": "local_steps",
                              "server_step_size": "server_lr"}),
}


def build_problem(spec, sigma: float, snapshot_period: int, federated: bool = False):
    """decent-bench's ``BenchmarkProblem``: one agent per row block, on a ``P2PNetwork`` with
    SPEC's edges and W or (``federated``) as the clients of a ``FedNetwork``. Its cost is
    ``LinearRegressionCost``, or with SPEC's ``loss == "logistic"`` ``LogisticRegressionCost`` on
    the labels mapped ±1 → {0, 1} (the same loss) plus ``lam · L2RegularizerCost`` (½‖x‖²)."""
    from decent_array import interoperability as iop
    from decent_bench.agents import Agent
    from decent_bench.benchmark import BenchmarkProblem
    from decent_bench.costs import L2RegularizerCost, LinearRegressionCost, LogisticRegressionCost
    from decent_bench.networks import FedNetwork
    from decent_bench.schemes import GaussianNoise

    A, b = spec["A"], spec["b"]
    n, m, d = A.shape
    logistic = str(spec.get("loss", "least_squares")) == "logistic"

    def cost(i):
        targets = (b[i] + 1) / 2 if logistic else b[i]
        rows = [(iop.from_numpy(A[i, h].copy()), iop.from_numpy(np.array([targets[h]])))
                for h in range(m)]
        if not logistic:
            return LinearRegressionCost(rows)
        return LogisticRegressionCost(rows) + L2RegularizerCost((d,)) * float(spec["lam"])

    agents = [Agent(cost(i), state_snapshot_period=snapshot_period) for i in range(n)]
    if federated:  # a star whose hub is a data-less server; every client full batch
        return BenchmarkProblem(network=FedNetwork(agents))
    noise = GaussianNoise(0.0, sigma) if sigma > 0 else None
    return BenchmarkProblem(network=p2p_network(agents, spec, message_noise=noise))


def p2p_network(agents, spec, **kwargs):
    """decent-bench's ``P2PNetwork`` of ``agents`` on SPEC's ``edges`` with SPEC's ``W`` (in its
    dtype); ``kwargs`` go to ``P2PNetwork``."""
    import networkx as nx
    from decent_array import interoperability as iop
    from decent_bench.networks import P2PNetwork

    graph = nx.Graph()
    graph.add_nodes_from(range(len(agents)))
    graph.add_edges_from(spec["edges"].tolist())
    net = P2PNetwork(graph, agents, **kwargs)
    if [a.index for a in agents] != list(range(len(agents))):
        raise RuntimeError("decent-bench renumbered the agents: W would not match")
    net.weights = iop.from_numpy(spec["W"].copy())
    return net


def algorithm(name: str, spec):
    """decent-bench's algorithm ``name`` with SPEC's hyperparameters (federated: selecting
    ``UniformSelection(num_selected_clients=SPEC["clients"])`` each round)."""
    from decent_bench.algorithms import federated, p2p
    from decent_bench.schemes import UniformSelection

    if name in FEDERATED:
        cls, kwargs = FEDERATED[name]
        chosen = UniformSelection(num_selected_clients=int(spec["clients"]))
        return getattr(federated, cls)(**{k: spec[v].item() for k, v in kwargs.items()},
                                       selection_scheme=chosen)
    cls, kwargs = ALGORITHMS[name]
    return getattr(p2p, cls)(**{k: float(spec[v]) for k, v in kwargs.items()})


def final_models(net) -> np.ndarray:
    """``(n, d)`` what a trial ends with: every agent's x, or (federated) the server's."""
    from decent_array import interoperability as iop

    agents = [net.server()] if hasattr(net, "server") else net.agents()
    return np.stack([np.asarray(iop.to_numpy(a.x)) for a in agents])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("spec")
    ap.add_argument("alg", choices=list(ALGORITHMS) + list(FEDERATED))
    ap.add_argument("trials", type=int)
    ap.add_argument("iterations", type=int)
    ap.add_argument("--processes", type=int, default=1, help="benchmark(max_processes=...)")
    ap.add_argument("--sigma", type=float, default=0.0, help="GaussianNoise std per message")
    ap.add_argument("--snapshot-period", type=int, default=0,
                    help="Agent state_snapshot_period; 0: = iterations (history off)")
    args = ap.parse_args(argv)

    from decent_array.types import Devices, Frameworks
    from decent_bench.benchmark import configure

    configure(Frameworks.NUMPY, Devices.CPU, seed=0, log_level=logging.WARNING)
    spec = dict(np.load(args.spec))
    period = args.snapshot_period or args.iterations
    t0 = time.perf_counter()
    problem = build_problem(spec, args.sigma, period, federated=args.alg in FEDERATED)
    alg = algorithm(args.alg, spec)
    setup = time.perf_counter() - t0
    nets, row = timed_benchmark(alg, problem, args.iterations, args.trials, args.processes)
    final = np.stack([final_models(net) for net in nets])  # (trials, N or 1, d)
    print(json.dumps({
        "impl": "decent-bench", "alg": args.alg, **row, "sigma": args.sigma,
        "state_snapshot_period": period, "setup_seconds": setup, "dtype": str(final.dtype),
        "final_mean": final.mean(axis=0).tolist(), "final_finite": bool(np.isfinite(final).all()),
        "final_spread": float(final.std(axis=0).max())}))
    return 0


def timed_benchmark(alg, problem, iterations: int, trials: int, processes: int = 1):
    """``(networks, row)``: decent-bench's ``benchmark`` of ``alg`` timed, each trial's final
    network and the row's timing and memory fields (agent-iterations over the wall time)."""
    from decent_bench.benchmark import benchmark

    t0 = time.perf_counter()
    result = benchmark([alg], problem, iterations, n_trials=trials, max_processes=processes,
                       progress_step=None)
    wall = time.perf_counter() - t0
    nets = next(iter(result.states.values()))
    n = len(problem.network.agents())
    return nets, {
        "trials": trials, "iterations": iterations, "max_processes": processes,
        "completed_trials": len(nets), "wall_seconds": wall, "compile_seconds": 0.0,
        "agent_iterations": trials * iterations * n,
        "agent_iterations_per_second": trials * iterations * n / wall,
        "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "peak_rss_children_mib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024}


if __name__ == "__main__":
    sys.exit(main())
