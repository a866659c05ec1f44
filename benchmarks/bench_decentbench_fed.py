"""jaxdp vs decent-bench's ``benchmark`` on the federated family: FedAvg, FedProx, SCAFFOLD
(issue 27).

One command (from jaxdp's environment, in the repository root; decent-bench lives in the Python 3.13
venv ``.decentbench-venv`` that ``benchmarks/decentbench_parity.py`` creates)::

    python benchmarks/bench_decentbench_fed.py            # ~5 min on 2 cores: results/...fed_cpu.json
    python benchmarks/bench_decentbench_fed.py --quick    # 2 trials x 10 rounds: a smoke run

Workload: the headline's problem (``bench_decentbench.export_spec``: N = 50 clients, d = 10,
m = 200 samples each, least squares f_i(x) = (1/2m)‖A_i x − b_i‖², x⁰ = 0), K = 10 clients drawn
uniformly without replacement each round, E = 5 full-batch local gradient steps of α = 0.01, the
server averaging the selected uploads uniformly, 100 rounds. FedProx adds μ = 0.1, SCAFFOLD
(option II) has server step η_g = 1. Both sides solve the same problem from the same x⁰ with the
same selection law; the federated parity fixtures (``decentbench_fed_parity.py``) hold the two
recursions equal round by round under full participation.

decent-bench runs its own entry point ``decent_bench.benchmark.benchmark`` on a ``FedNetwork``
(a star whose hub is a data-less server) with ``UniformSelection(num_selected_clients=K)``, as
configured in ``_decentbench_side.py`` (no progress steps, no metrics, no history: see
``bench_decentbench.py``), numpy float64, ``max_processes=1``. jaxdp runs ``jaxdp.run`` with the
seeds vmapped, float32, ``selection="uniform", clients=K, weighting="uniform"``, on K_N (its
server is the average of the complete graph). With a fixed K < N jaxdp's round gathers the K
selected clients and computes only theirs (``gather=True``, the default); the table in
``benchmarks/README.md`` was measured before that, with the masked round (all N clients computed,
5× the selected clients' work here; ``gather=False`` today). The rate counts selected
client-rounds on both sides (trials × rounds × K per second).

Agreement: the mean over trials of the final server model and the objective f(x) = Σ_i f_i(x)
there, on both sides: equal in law, so they agree to the Monte-Carlo error of the selection
(``final_max_abs_diff``, ``objective_gap`` in the JSON).
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import bench_decentbench as headline  # this directory: the peer-to-peer headline's code paths

FED = {"local_steps": 5, "clients": 10, "alpha": 0.01, "mu": 0.1, "server_lr": 1.0}
ROUNDS = 100
ALGS = ("fedavg", "fedprox", "scaffold")
RATE = "client_rounds_per_second"


def jaxdp_algorithm(name: str, problem, net):
    """``(algorithm, problem, net, params)``: jaxdp's ``name`` on :data:`FED`."""
    from jaxdp import algorithms

    config = {"local_steps": FED["local_steps"], "selection": "uniform",
              "clients": FED["clients"], "weighting": "uniform"}
    alg = algorithms.get(name, **config)
    fields = {k: v for k, v in FED.items() if hasattr(alg.default_params(), k)}
    return alg, problem, net, alg.default_params().replace(**fields)


def objective(problem, x) -> float:
    """f(x) = Σ_i f_i(x) at the model ``x`` (d,) (jaxdp's ``problem.objective``)."""
    import numpy as np

    return float(problem.objective(np.asarray(x, np.float32)))


def jaxdp_cell(spec_path: str, name: str, trials: int, rounds: int) -> dict:
    """One jaxdp run of ``trials`` vmapped seeds (in this process)."""
    import numpy as np

    import jaxdp

    jaxdp.use_cpu_cores()
    prob, _ = headline.jaxdp_inputs(spec_path)
    net = jaxdp.network.make_network("complete", headline.N)
    trace, row = headline.timed_jaxdp(*jaxdp_algorithm(name, prob, net), rounds, trials)
    server = np.asarray(trace.final_models, np.float64)[:, 0]  # (trials, d): the broadcast rows
    work = trials * rounds * FED["clients"]
    return {**row, "alg": name, "client_rounds": work, RATE: work / row["run_seconds"],
            "final_mean": server.mean(axis=0).tolist(),
            "final_spread": float(server.std(axis=0).max())}


def run_decentbench(spec, name: str, trials: int, rounds: int) -> dict:
    """decent-bench's ``benchmark`` in its venv; the rate in selected client-rounds."""
    row = headline.run_decentbench(spec, name, trials, rounds, 1, False)
    row["client_rounds"] = trials * rounds * FED["clients"]
    row[RATE] = row["client_rounds"] / row["wall_seconds"]
    return row


def summarize(rows: list[dict], problem) -> None:
    """Per row: the objective at the trials' mean final server model; per jaxdp row: the
    speed-up over decent-bench's row of the same algorithm (``headline.decentbench_peer``) and
    the agreement of the two."""
    import numpy as np

    for r in rows:
        r["final_mean"] = np.ravel(r["final_mean"]).tolist()  # decent-bench's: (1, d)
        r["objective"] = objective(problem, r["final_mean"])
        if not np.isfinite(r["objective"]) or not np.any(r["final_mean"]):
            raise RuntimeError(f"{r['impl']} {r['alg']} did not run: {r['final_mean']}")
    for r in rows:
        db = headline.decentbench_peer(rows, r) if r["impl"] == "jaxdp" else None
        if db is None:
            continue
        r["speedup"], r["speedup_vs_trials"] = r[RATE] / db[RATE], db["trials"]
        r["final_max_abs_diff"] = float(np.max(np.abs(np.subtract(r["final_mean"],
                                                                  db["final_mean"]))))
        r["objective_gap"] = r["objective"] - db["objective"]


def plan(args) -> list[tuple[str, str, int]]:
    """``(side, alg, trials)`` cells, interleaved: decent-bench then jaxdp per algorithm."""
    cells = []
    for trials in args.trials:
        for alg in args.algs:
            if trials in args.db_trials:
                cells.append(("db", alg, trials))
            cells.append(("jaxdp", alg, trials))
    return cells


def table(rows: list[dict]) -> str:
    """The README's table of a results file."""
    lines = [("| trials | implementation | algorithm | rounds | client-rounds/s | wall s | "
              "compile s | peak RSS MiB | objective | speed-up |"),
             "|---:|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        rss = max(r["peak_rss_mib"], r.get("peak_rss_children_mib", 0.0))
        speed = f"{r['speedup']:.3g}×" if "speedup" in r else ""
        lines.append(f"| {r['trials']} | {r['impl']} | {r['alg']} | {r['iterations']} | "
                     f"{r[RATE]:.3g} | {r['wall_seconds']:.1f} | {r['compile_seconds']:.1f} | "
                     f"{rss:.0f} | {r['objective']:.5f} | {speed} |")
    return "\n".join(lines)


def parse(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, nargs="+", default=[30, 256])
    ap.add_argument("--db-trials", type=int, nargs="*", default=[30],
                    help="the trial counts decent-bench also runs")
    ap.add_argument("--rounds", type=int, default=ROUNDS)
    ap.add_argument("--algs", nargs="+", choices=ALGS, default=list(ALGS))
    ap.add_argument("--repeats", type=int, default=3, help="jaxdp runs per cell (median)")
    ap.add_argument("--quick", action="store_true", help="2 trials x 10 rounds, 1 repeat")
    ap.add_argument("--out", default=str(headline.HERE / "results" / "decentbench_fed_cpu.json"))
    ap.add_argument("--table", action="store_true", help="print --out as a markdown table")
    ap.add_argument("--cell", nargs=4, metavar=("SPEC", "ALG", "TRIALS", "ROUNDS"),
                    help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if min(args.trials + [args.rounds, args.repeats]) < 1:
        ap.error("--trials, --rounds and --repeats must be >= 1")
    if args.quick:
        args.trials, args.db_trials, args.rounds, args.repeats = [2], [2], 10, 1
        args.out = str(Path(tempfile.gettempdir()) / "decentbench_fed_quick.json")
    return args


def main(argv=None) -> int:
    args = parse(argv)
    if args.cell:
        spec, alg, trials, rounds = args.cell
        print(json.dumps(jaxdp_cell(spec, alg, int(trials), int(rounds))))
        return 0
    if args.table:
        print(table(json.loads(Path(args.out).read_text())["rows"]))
        return 0
    if not headline.DB_PYTHON.exists():
        raise SystemExit(f"{headline.DB_PYTHON} not found: run python "
                         "benchmarks/decentbench_parity.py first (it creates the venv)")
    load, rows = {"before": headline.uptime()}, []
    with tempfile.TemporaryDirectory() as tmp:
        spec_path = Path(tmp) / "spec.npz"
        headline.export_spec(spec_path, **FED)
        problem, _ = headline.jaxdp_inputs(spec_path)
        for side, alg, trials in plan(args):
            if side == "db":
                rows.append(run_decentbench(spec_path, alg, trials, args.rounds))
            else:
                rows.append(headline.run_jaxdp(spec_path, alg, trials, args.rounds,
                                               args.repeats, script=__file__, rate=RATE))
            rows[-1]["uptime"] = headline.uptime()
            r = rows[-1]
            print(f"{r['impl']:>12} {alg:>9} trials={trials:>3}: {r[RATE]:.3e} client-rounds/s, "
                  f"wall {r['wall_seconds']:.2f}s, RSS {r['peak_rss_mib']:.0f} MiB", flush=True)
    load["after"] = headline.uptime()
    summarize(rows, problem)
    print(table(rows))
    workload = {"n_clients": headline.N, "d": headline.D, "m": headline.M, "rounds": args.rounds,
                "loss": "least_squares", "x0": "zeros", "selection": "uniform, K clients",
                **FED, "repeats_jaxdp": args.repeats,
                "command": "python benchmarks/bench_decentbench_fed.py"}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps({"machine": headline.machine_info(load),
                                          "workload": workload, "rows": rows}, indent=1) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
