"""Parity fixtures against decent-bench: same problem, W and x⁰, no noise, float64.

One command (from jaxdp's environment, in the repository root)::

    python benchmarks/decentbench_parity.py

creates ``.decentbench-venv`` with Python 3.13 (``--python``; pyenv's 3.13.0 by default) and
``pip install decent-bench`` there, writes the small problems and W to
``tests/fixtures/decentbench/``, runs every algorithm both packages have in that environment
(this same file, ``--runner``), stores each trajectory as ``<fixture>.npz``, and finally holds
jaxdp to every fixture, printing the max deviation. ``fixtures.json`` describes the problems, W, x⁰
(zero: both packages start there), the hyperparameters on both sides, how a decent-bench
iteration maps to jaxdp steps and, where the two differ by design, the documented relation.
``tests/algorithms/test_catalogue.py`` reads only the fixtures (no decent-bench in CI).

The ``--runner`` half imports numpy, networkx and decent-bench only (no jaxdp, no JAX).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "decentbench"
VENV = ROOT / ".decentbench-venv"
PYTHON313 = Path.home() / ".pyenv" / "versions" / "3.13.0" / "bin" / "python"
STEPS = 200
N_AGENTS, M_ROWS, DIM = 6, 8, 3
EDGES = [(0, 1), (1, 2), (2, 3), (3, 4), (4, 5), (5, 0), (0, 3), (1, 4)]
SAME = "identical recursion and initialization"

# name: (problem, decent-bench class, its kwargs, jaxdp name, jaxdp config, jaxdp params,
#        jaxdp steps per decent-bench iteration, decent-bench iterations before jaxdp's step 0,
#        the relation between the two)
ALGORITHMS = {
    "dgd": ("least_squares", "DGD", {"step_size": 0.1}, "dgd", {}, {"alpha": 0.1}, 1, 0, SAME),
    "dgd_logistic": ("logistic", "DGD", {"step_size": 0.5}, "dgd", {}, {"alpha": 0.5}, 1, 0, SAME),
    "extra": ("least_squares", "EXTRA", {"step_size": 0.1}, "extra", {}, {"alpha": 0.1}, 1, 0,
              SAME),
    "nids": ("least_squares", "NIDS", {"step_size": 0.1}, "nids", {}, {"alpha": 0.1}, 1, 0, SAME),
    "ed": ("logistic", "ED", {"step_size": 0.5}, "ed", {}, {"alpha": 0.5}, 1, 0,
           "decent-bench's ED is jaxdp's ED (Yuan et al.: x¹ = W̄(x⁰ − α∇F(x⁰))); NIDS differs in "
           "the first step only (x¹ = x⁰ − α∇F(x⁰), no mixing) and both then follow "
           "x^{k+1} = W̄(2x^k − x^{k−1} − α(∇F(x^k) − ∇F(x^{k−1}))); the test checks that "
           "relation"),
    "atc": ("least_squares", "ATC", {"step_size": 0.1}, "atc", {}, {"alpha": 0.1}, 1, 0,
            "identical (adapt-then-combine x⁺ = W(x − α∇F(x))); DGD is combine-then-adapt "
            "x⁺ = Wx − α∇F(x), a different trajectory: the test checks both facts"),
    "atc_tracking": ("logistic", "ATC_Tracking", {"step_size": 0.5}, "atc_tracking", {},
                     {"alpha": 0.5}, 1, 0, SAME + " (NEXT/SONATA form: y⁺ = W y + ∇F(x⁺) − ∇F(x))"),
    "aug_dgm": ("least_squares", "AugDGM", {"step_size": 0.1}, "aug_dgm", {}, {"alpha": 0.1}, 1,
                0, SAME + " (ATC-DIGing: y⁺ = W(y + ∇F(x⁺) − ∇F(x))). decent-bench has no "
                "combine-then-adapt DIGing (jaxdp's diging: x⁺ = Wx − αy, "
                "y⁺ = Wy + ∇F(x⁺) − ∇F(x))"),
    "simple_gt": ("least_squares", "SimpleGT", {"step_size": 0.1}, "simple_gt", {},
                  {"alpha": 0.1}, 1, 0, SAME),
    "wang_elia": ("least_squares", "WangElia", {"step_size": 0.1}, "wang_elia", {},
                  {"alpha": 0.1}, 1, 0, SAME + " (K = (I − W)/2)"),
    "k_gt": ("least_squares", "KGT", {"num_local_steps": 3, "step_size": 0.05,
                                      "aux_step_size": 0.8},
             "k_gt", {"local_steps": 3}, {"alpha": 0.05, "beta": 0.8}, 1, 0, SAME + " (c⁰ = 0)"),
    "led": ("logistic", "LED", {"num_local_steps": 3, "step_size": 0.2, "aux_step_size": 0.3},
            "led", {"local_steps": 3}, {"alpha": 0.2, "beta": 0.3}, 1, 0, SAME + " (y⁰ = 0)"),
    "dlm": ("least_squares", "DLM", {"step_size": 0.05, "penalty": 0.5}, "dlm", {},
            {"alpha": 0.05, "rho": 0.5}, 1, 1,
            "decent-bench's iteration 0 only exchanges x⁰ (x stays x⁰); its iteration k ≥ 1 is "
            "jaxdp's step k − 1. decent-bench 0.3.0's DLM._sum_messages adds in place into the "
            "first received message, an array the network shares among all receivers of that "
            "broadcast (without noise one object is delivered), so agents later in the loop mix "
            "corrupted x_j; unpatched, this run diverges (max |x| ≈ 1e19 after 200 iterations). "
            "The fixture is generated with that sum started from a copy (PATCHES below)"),
    "atg": ("least_squares", "ATG", {"penalty": 1.0, "relaxation": 0.5, "gamma": 0.5,
                                     "delta": 0.2},
            "atg", {}, {"rho": 1.0, "relax": 0.5, "gamma": 0.5, "delta": 0.2}, 1, 0,
            SAME + " (z⁰ = 0)"),
    "prox_skip": ("least_squares", "ProxSkip", {"step_size": 0.1, "aux_step_size": 0.5,
                                                "comm_probability": 1.0, "chi": 1.5},
                  "prox_skip", {}, {"alpha": 0.1, "beta": 0.5, "p": 1.0, "chi": 1.5}, 1, 0,
                  SAME + " with p = 1 (every step communicates: no coin, deterministic)"),
    "gt_saga": ("least_squares", "GT_SAGA", {"step_size": 0.1}, "gt_saga",
                {"batch_size": M_ROWS}, {"alpha": 0.1}, 1, 0,
                "full batch (b = m): the SAGA estimate is then the full local gradient on both "
                "sides, so the deterministic recursions coincide (y⁰ = g^{−1} = 0)"),
    "gt_sarah": ("logistic", "GT_SARAH", {"num_local_steps": 3, "step_size": 0.5}, "gt_sarah",
                 {"batch_size": M_ROWS, "inner_steps": 3}, {"alpha": 0.5}, 4, 0,
                 "full batch; one decent-bench iteration is an outer loop (a full gradient and "
                 "q = 3 SARAH steps) = q + 1 = 4 jaxdp steps"),
    "gt_vr": ("least_squares", "GT_VR", {"step_size": 0.1, "snapshot_prob": 1.0}, "gt_vr",
              {"batch_size": M_ROWS}, {"alpha": 0.1, "p": 1.0}, 1, 0,
              "full batch and snapshot probability 1 (deterministic)"),
}


def _dlm_patch(iop) -> dict:
    """DLM's neighbour sum without writing into a received (shared) message."""
    def _sum_messages(self, i):
        msgs = list(i.messages().values())
        if not msgs:
            return None
        total = iop.copy(msgs[0])
        for m in msgs[1:]:
            total = total + m
        return total
    return {"_sum_messages": _sum_messages}


PATCHES = {"DLM": _dlm_patch}  # decent-bench class -> fixed methods (documented in the JSON)


# -- problems (pure numpy: both sides build from these arrays) -------------------------------------
def make_problems(seed: int = 2024) -> dict:
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(N_AGENTS, M_ROWS, DIM))
    x_true = rng.normal(size=DIM)
    b_ls = A @ x_true + 0.1 * rng.normal(size=(N_AGENTS, M_ROWS))
    p = 1 / (1 + np.exp(-(A @ x_true)))
    b_log = np.where(rng.uniform(size=p.shape) < p, 1.0, -1.0)
    b_log[:, 0], b_log[:, 1] = 1.0, -1.0  # both classes on every agent
    return {"least_squares": (A, b_ls), "logistic": (A, b_log)}


def metropolis(n: int, edges) -> np.ndarray:
    deg = np.zeros(n, int)
    for i, j in edges:
        deg[i] += 1
        deg[j] += 1
    W = np.zeros((n, n))
    for i, j in edges:
        W[i, j] = W[j, i] = 1 / (1 + max(deg[i], deg[j]))
    W[np.diag_indices(n)] = 1 - W.sum(axis=1)
    return W


# -- the decent-bench side (runs inside .decentbench-venv) -----------------------------------------
def run_decentbench(spec_path: str) -> None:
    import networkx as nx
    from decent_array import interoperability as iop
    from decent_bench.agents import Agent
    from decent_bench.algorithms import p2p
    from decent_bench.costs import LinearRegressionCost, LogisticRegressionCost
    from decent_bench.networks import P2PNetwork

    iop.set_backend("numpy")  # float64 numpy arrays, as in decent-bench's own configuration
    spec = json.loads(Path(spec_path).read_text())
    W = np.asarray(spec["W"])
    for name, entry in spec["fixtures"].items():
        data = np.load(FIXTURES / f"problem_{entry['problem']}.npz")
        A, b = data["features"], data["labels"]
        if entry["problem"] == "logistic":
            cost_cls, b = LogisticRegressionCost, (b + 1) / 2  # ±1 -> {0, 1}: the same loss
        else:
            cost_cls = LinearRegressionCost
        arr = iop.from_numpy
        agents = [Agent(cost_cls([(arr(A[i, h].copy()), arr(np.array([b[i, h]])))
                                  for h in range(M_ROWS)])) for i in range(N_AGENTS)]
        graph = nx.Graph()
        graph.add_nodes_from(range(N_AGENTS))
        graph.add_edges_from(spec["edges"])
        net = P2PNetwork(graph, agents)
        assert [a.index for a in agents] == list(range(N_AGENTS))
        net.weights = iop.from_numpy(W.copy())
        kwargs = dict(entry["decentbench_kwargs"])
        if entry["decentbench_class"] == "ATG":
            kwargs["z0"] = iop.from_numpy(np.zeros(DIM))
        cls = getattr(p2p, entry["decentbench_class"])
        if entry["decentbench_class"] in PATCHES:
            cls = type(cls.__name__, (cls,), PATCHES[entry["decentbench_class"]](iop))
        alg = cls(**kwargs)
        traj = [np.zeros((N_AGENTS, DIM))]

        def record(_k, agents=agents, traj=traj):
            traj.append(np.stack([np.asarray(iop.to_numpy(a.x), np.float64) for a in agents]))

        alg.run(net, spec["iterations"][name], progress_callback=record)
        np.savez_compressed(FIXTURES / f"{name}.npz", x=np.stack(traj))
        print(f"decent-bench {entry['decentbench_class']:>12}: {name}.npz", flush=True)


# -- the jaxdp side --------------------------------------------------------------------------------
def jaxdp_trajectory(entry: dict, problem, network, steps: int) -> np.ndarray:
    """``(steps + 1, N, d)`` models x⁰..x^steps of the fixture's jaxdp algorithm."""
    import jax

    from jaxdp import algorithms, simulate

    alg = algorithms.get(entry["jaxdp_name"], **entry["jaxdp_config"])
    params = alg.default_params().replace(**entry["jaxdp_params"])
    state = alg.init(jax.random.key(0), problem, network, params)
    _, _, seen = simulate(alg, problem, network, params, jax.random.key(0), steps=steps,
                          observe=True)
    return np.concatenate([np.asarray(alg.models(state))[None],
                           np.asarray(seen["models"], np.float64)])


def load_fixture_inputs(index: dict):
    """The jaxdp problems and network of ``fixtures.json`` (float64 must be enabled)."""
    from jaxdp import network, problems

    out = {}
    for kind in ("least_squares", "logistic"):
        data = np.load(FIXTURES / f"problem_{kind}.npz")
        reg = {"ridge": 0.0} if kind == "least_squares" else {"lam": 0.0}
        out[kind] = problems.from_arrays(data["features"], data["labels"], loss=kind, reg=reg,
                                         name=f"decentbench_{kind}")
    net = network.build_network(np.asarray(index["adjacency"]), weights=np.asarray(index["W"]))
    return out, net


def compare(index: dict, name: str, probs, net) -> float:
    """Max |jaxdp − decent-bench| over the fixture's trajectory, aligned by its step map."""
    entry = index["fixtures"][name]
    ref = np.load(FIXTURES / f"{name}.npz")["x"]
    per, shift = entry["jaxdp_steps_per_iteration"], entry["decentbench_iteration_offset"]
    steps = per * (ref.shape[0] - 1 - shift)
    ours = jaxdp_trajectory(entry, probs[entry["problem"]], net, steps)
    return float(np.max(np.abs(ours[::per] - ref[shift:])))


def write_inputs() -> dict:
    FIXTURES.mkdir(parents=True, exist_ok=True)
    for kind, (A, b) in make_problems().items():
        np.savez_compressed(FIXTURES / f"problem_{kind}.npz", features=A, labels=b)
    W = metropolis(N_AGENTS, EDGES)
    adjacency = np.zeros((N_AGENTS, N_AGENTS), int)
    for i, j in EDGES:
        adjacency[i, j] = adjacency[j, i] = 1
    fixtures, iterations = {}, {}
    for name, (prob, cls, kw, jname, jconf, jparams, per, shift, note) in ALGORITHMS.items():
        iterations[name] = STEPS // per + shift
        fixtures[name] = {
            "problem": prob, "decentbench_class": cls, "decentbench_kwargs": kw,
            "jaxdp_name": jname, "jaxdp_config": jconf, "jaxdp_params": jparams,
            "jaxdp_steps_per_iteration": per, "decentbench_iteration_offset": shift,
            "relation": note}
    index = {
        "description": ("decent-bench parity fixtures: x⁰ = 0 on both sides, float64, no noise; "
                        "<name>.npz holds x (iterations + 1, N, d), decent-bench's x after each "
                        "iteration; problem_<kind>.npz holds features (N, m, d) and labels "
                        "(N, m) (logistic labels ±1 here, {0, 1} in decent-bench: the same loss); "
                        "least squares f_i = (1/2m)Σ(a·x − b)², no ridge; logistic without "
                        "penalty"),
        "generator": "python benchmarks/decentbench_parity.py",
        "n_agents": N_AGENTS, "m": M_ROWS, "d": DIM, "x0": "zeros", "edges": EDGES,
        "adjacency": adjacency.tolist(), "W": W.tolist(), "W_rule": "metropolis",
        "iterations": iterations, "fixtures": fixtures}
    (FIXTURES / "fixtures.json").write_text(json.dumps(index, indent=1, ensure_ascii=False) + "\n")
    return index


def ensure_venv(python: Path, venv: Path = VENV) -> Path:
    """``venv`` (created with ``python``) with decent-bench installed; its interpreter."""
    exe = venv / "bin" / "python"
    if not exe.exists():
        subprocess.run([str(python), "-m", "venv", str(venv)], check=True)
    probe = subprocess.run([str(exe), "-c", "import decent_bench"], capture_output=True)
    if probe.returncode:
        subprocess.run([str(exe), "-m", "pip", "install", "-q", "decent-bench"], check=True)
    return exe


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runner", metavar="SPEC", help=argparse.SUPPRESS)
    ap.add_argument("--python", default=str(PYTHON313), help="a Python >= 3.13 for the venv")
    ap.add_argument("--skip-run", action="store_true", help="only compare existing fixtures")
    args = ap.parse_args(argv)
    if args.runner:
        run_decentbench(args.runner)
        return 0
    index = json.loads((FIXTURES / "fixtures.json").read_text()) if args.skip_run else None
    if not args.skip_run:
        index = write_inputs()
        exe = ensure_venv(Path(args.python))
        env = {**os.environ, "PYTHONHASHSEED": "0"}
        subprocess.run([str(exe), __file__, "--runner", str(FIXTURES / "fixtures.json")],
                       check=True, env=env)
    import jax

    jax.config.update("jax_enable_x64", True)  # a script, not a library module
    probs, net = load_fixture_inputs(index)
    return report_deviations(index, compare, probs, net)


def report_deviations(index: dict, compare, probs, net, width: int = 14) -> int:
    """Print each fixture's max |jaxdp − decent-bench| (``compare(index, name, probs, net)``) and
    the worst; exit status 0 when every one is at most 1e-10."""
    worst = 0.0
    for name in index["fixtures"]:
        dev = compare(index, name, probs, net)
        worst = max(worst, dev)
        print(f"{name:>{width}}: max |jaxdp − decent-bench| = {dev:.2e}")
    print(f"worst: {worst:.2e}")
    return 0 if worst <= 1e-10 else 1


if __name__ == "__main__":
    sys.exit(main())
