"""Parity fixtures of the federated family against decent-bench's federated algorithms.

One command (from jaxdp's environment, in the repository root)::

    python benchmarks/decentbench_fed_parity.py

uses the problems and the ``.decentbench-venv`` of :mod:`decentbench_parity` (the peer-to-peer
fixtures' generator), builds decent-bench's ``FedNetwork`` (a star whose hub is a data-less
server) over the same N = 6 clients, runs every federated algorithm both packages have with every
client selected each round (no random selection: both sides deterministic), stores the server
model after each round as ``tests/fixtures/decentbench_fed/<name>.npz`` and holds jaxdp to every
fixture. ``tests/algorithms/test_federated.py`` reads only the fixtures.

FedAdam / FedYogi / FedAdagrad: both packages take Reddi et al.'s printed Algorithm 2 server step
(no bias correction, τ outside the root); decent-bench starts from v_{-1} = 0, jaxdp from τ² unless
``v0`` says otherwise, so the fixtures run jaxdp with ``v0=0``.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

import decentbench_parity as p2p

FIXTURES = p2p.ROOT / "tests" / "fixtures" / "decentbench_fed"
ROUNDS = 30
SAME = "identical recursion (x⁰ = 0, every client selected, full-batch local GD)"

# name: (problem, decent-bench class, its kwargs, jaxdp name, jaxdp config, jaxdp params, relation)
ALGORITHMS = {
    "fedavg": ("least_squares", "FedAvg", {"step_size": 0.1, "num_local_steps": 3},
               "fedavg", {"local_steps": 3, "weighting": "uniform"}, {"alpha": 0.1},
               SAME + "; decent-bench averages the client models uniformly (weighting='uniform')"),
    "fedavg_logistic": ("logistic", "FedAvg", {"step_size": 0.5, "num_local_steps": 2},
                        "fedavg", {"local_steps": 2, "weighting": "uniform"}, {"alpha": 0.5},
                        SAME),
    "fedprox": ("logistic", "FedProx", {"step_size": 0.5, "num_local_steps": 3, "penalty": 0.3},
                "fedprox", {"local_steps": 3, "weighting": "uniform"},
                {"alpha": 0.5, "mu": 0.3}, SAME + " (μ = penalty)"),
    "scaffold": ("least_squares", "Scaffold", {"step_size": 0.05, "num_local_steps": 4,
                                               "server_step_size": 0.8},
                 "scaffold", {"local_steps": 4}, {"alpha": 0.05, "server_lr": 0.8},
                 SAME + " (option II control variates, c⁰ = c_i⁰ = 0)"),
    "feddyn": ("logistic", "FedDyn", {"step_size": 0.3, "num_local_steps": 3, "penalty": 0.2},
               "feddyn", {"local_steps": 3}, {"alpha": 0.3, "penalty": 0.2},
               SAME + " (g_i⁰ = h⁰ = 0)"),
    "fedpd": ("least_squares", "FedPD", {"step_size": 0.1, "num_local_steps": 3, "penalty": 0.5},
              "fedpd", {"local_steps": 3}, {"alpha": 0.1, "eta": 0.5},
              SAME + " (skip probability p = 0: every round averages the centres)"),
    "fedlt": ("logistic", "FedLT", {"step_size": 0.2, "num_local_steps": 3, "penalty": 0.5},
              "fedlt", {"local_steps": 3}, {"alpha": 0.2, "rho": 0.5},
              SAME + " (local solver 'gd', h = 0, z⁰ = x⁰ = 0; the server model is y)"),
    "fednova": ("least_squares", "FedNova", {"step_size": 0.05, "num_local_steps": [1, 2, 3, 4,
                                                                                     5, 6]},
                "fednova", {"local_steps": (1, 2, 3, 4, 5, 6)}, {"alpha": 0.05},
                SAME + " with τ_i = i + 1 local steps (vanilla local GD, no momentum, p_i = "
                "n_i/n)"),
    **{f"fed{opt.lower()}": (problem, f"Fed{opt}",
                             {"step_size": 0.1, "num_local_steps": 3, "server_step_size": 0.05,
                              "beta_1": 0.9, "epsilon": 1e-3, **extra},
                             f"fed{opt.lower()}", {"local_steps": 3, "v0": 0.0},
                             {"alpha": 0.1, "server_lr": 0.05, "b1": 0.9, "tau": 1e-3,
                              **({"b2": extra["beta_2"]} if extra else {})},
                             SAME + " (Reddi et al.'s Algorithm 2 server step as printed, no bias "
                             "correction; m_{-1} = v_{-1} = 0: jaxdp's v0=0, τ = epsilon)")
       for opt, problem, extra in (("Adam", "least_squares", {"beta_2": 0.99}),
                                   ("Yogi", "logistic", {"beta_2": 0.9}),
                                   ("Adagrad", "logistic", {}))},
}


def run_decentbench(spec_path: str) -> None:
    """The decent-bench side (inside .decentbench-venv: numpy and decent-bench only)."""
    from decent_array import interoperability as iop
    from decent_bench.agents import Agent
    from decent_bench.algorithms import federated
    from decent_bench.costs import LinearRegressionCost, LogisticRegressionCost
    from decent_bench.networks import FedNetwork

    iop.set_backend("numpy")
    spec = json.loads(Path(spec_path).read_text())
    for name, entry in spec["fixtures"].items():
        data = np.load(FIXTURES / f"problem_{entry['problem']}.npz")
        A, b = data["features"], data["labels"]
        cost_cls = LinearRegressionCost
        if entry["problem"] == "logistic":
            cost_cls, b = LogisticRegressionCost, (b + 1) / 2  # ±1 -> {0, 1}: the same loss
        arr = iop.from_numpy
        clients = [Agent(cost_cls([(arr(A[i, h].copy()), arr(np.array([b[i, h]])))
                                   for h in range(p2p.M_ROWS)])) for i in range(p2p.N_AGENTS)]
        net = FedNetwork(clients)
        kwargs = dict(entry["decentbench_kwargs"])
        if isinstance(kwargs.get("num_local_steps"), list):
            kwargs["num_local_steps"] = dict(zip(clients, kwargs["num_local_steps"], strict=True))
        if entry["decentbench_class"] != "FedPD":  # FedPD has no selection (every client)
            kwargs["selection_scheme"] = None
        alg = getattr(federated, entry["decentbench_class"])(**kwargs)
        traj = [np.zeros(p2p.DIM)]

        def record(_k, net=net, traj=traj):
            traj.append(np.asarray(iop.to_numpy(net.server().x), np.float64))

        alg.run(net, ROUNDS, progress_callback=record)
        np.savez_compressed(FIXTURES / f"{name}.npz", x=np.stack(traj))
        print(f"decent-bench {entry['decentbench_class']:>10}: {name}.npz", flush=True)


def jaxdp_trajectory(entry: dict, problem, network) -> np.ndarray:
    """``(ROUNDS + 1, d)`` server models x⁰..x^ROUNDS of the fixture's jaxdp algorithm."""
    import jax

    from jaxdp import algorithms, simulate

    config = {k: tuple(v) if isinstance(v, list) else v for k, v in entry["jaxdp_config"].items()}
    alg = algorithms.get(entry["jaxdp_name"], **config)
    params = alg.default_params().replace(**entry["jaxdp_params"])
    _, _, seen = simulate(alg, problem, network, params, jax.random.key(0), steps=ROUNDS,
                          observe=True)
    models = np.asarray(seen["models"], np.float64)[:, 0]  # row 0: the server's broadcast
    return np.concatenate([np.zeros((1, models.shape[1])), models])


def load_inputs():
    """The jaxdp problems (float64 must be enabled) and K_N, the server's average."""
    from jaxdp import network, problems

    probs = {}
    for kind in ("least_squares", "logistic"):
        data = np.load(FIXTURES / f"problem_{kind}.npz")
        reg = {"ridge": 0.0} if kind == "least_squares" else {"lam": 0.0}
        probs[kind] = problems.from_arrays(data["features"], data["labels"], loss=kind, reg=reg,
                                           name=f"decentbench_{kind}")
    return probs, network.make_network("complete", p2p.N_AGENTS)


def compare(index: dict, name: str, probs, net) -> float:
    """Max |jaxdp − decent-bench| over the server models of every round."""
    entry = index["fixtures"][name]
    ref = np.load(FIXTURES / f"{name}.npz")["x"]
    return float(np.max(np.abs(jaxdp_trajectory(entry, probs[entry["problem"]], net) - ref)))


def write_inputs() -> dict:
    FIXTURES.mkdir(parents=True, exist_ok=True)
    for kind, (A, b) in p2p.make_problems().items():
        np.savez_compressed(FIXTURES / f"problem_{kind}.npz", features=A, labels=b)
    fixtures = {name: {"problem": prob, "decentbench_class": cls, "decentbench_kwargs": kw,
                       "jaxdp_name": jname, "jaxdp_config": jconf, "jaxdp_params": jparams,
                       "relation": note}
                for name, (prob, cls, kw, jname, jconf, jparams, note) in ALGORITHMS.items()}
    index = {
        "description": ("decent-bench federated parity fixtures: x⁰ = 0, float64, every client "
                        "selected each round; <name>.npz holds x (rounds + 1, d), decent-bench's "
                        "server model after each round; problems as tests/fixtures/decentbench"),
        "generator": "python benchmarks/decentbench_fed_parity.py",
        "n_clients": p2p.N_AGENTS, "m": p2p.M_ROWS, "d": p2p.DIM, "rounds": ROUNDS,
        "fixtures": fixtures}
    (FIXTURES / "fixtures.json").write_text(json.dumps(index, indent=1, ensure_ascii=False) + "\n")
    return index


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runner", metavar="SPEC", help=argparse.SUPPRESS)
    ap.add_argument("--python", default=str(p2p.PYTHON313), help="a Python >= 3.13 for the venv")
    ap.add_argument("--skip-run", action="store_true", help="only compare existing fixtures")
    args = ap.parse_args(argv)
    if args.runner:
        run_decentbench(args.runner)
        return 0
    if args.skip_run:
        index = json.loads((FIXTURES / "fixtures.json").read_text())
    else:
        index = write_inputs()
        exe = p2p.ensure_venv(Path(args.python))
        env = {**os.environ, "PYTHONHASHSEED": "0"}
        subprocess.run([str(exe), __file__, "--runner", str(FIXTURES / "fixtures.json")],
                       check=True, env=env)
    import jax

    jax.config.update("jax_enable_x64", True)  # a script, not a library module
    probs, net = load_inputs()
    return p2p.report_deviations(index, compare, probs, net, width=16)


if __name__ == "__main__":
    sys.exit(main())
