"""jaxdp vs decent-bench's own ``benchmark`` entry point on the algorithms both have (issue 16).

One command (from jaxdp's environment, in the repository root; decent-bench lives in the Python 3.13
venv ``.decentbench-venv`` that ``benchmarks/decentbench_parity.py`` creates)::

    python benchmarks/bench_decentbench.py          # 17–37 min: results/decentbench_cpu.json
    python benchmarks/bench_decentbench.py --quick    # 2 trials x 20 iterations: a smoke run
    python benchmarks/bench_decentbench.py --loss logistic --out results/decentbench_logistic_cpu.json

Workload: N = 50 agents on jaxdp's random geometric graph (r = 0.3, seed 1; Metropolis W in
float64), d = 10, m = 200 samples per agent, least squares f_i(x) = (1/2m)‖A_i x − b_i‖², x⁰ = 0,
500 iterations. jaxdp builds the data and W and exports them (``.npz``) to decent-bench, so both
sides solve the same problem on the same W from the same x⁰. ``--loss logistic`` runs the
ℓ2-logistic variant instead: labels ``±1`` (the signs of the same targets), ``f_i(x) = mean_s
log(1 + exp(−y_s a_sᵀx)) + (λ/2)‖x‖²`` with λ = ``LAM``; decent-bench's ``LogisticRegressionCost``
(labels in {0, 1}) plus ``λ · L2RegularizerCost``; its ADMM, which needs a proximal that sum has
not, is left out.

Rows:
  * DGD with Gaussian noise on every directed message (σ = 0.1), at 30 trials (the number
    decent-bench's ``benchmark`` docstring recommends) and 256: decent-bench's ``DGD`` on a
    ``P2PNetwork(message_noise=GaussianNoise(0, σ))`` against jaxdp's
    ``with_channel(DGD(), gaussian(σ))`` (one draw per directed message, the same law), and the
    ``aggregate=True`` (the exact sum of a receiver's message noises, one draw per agent) and
    ``broadcast=True`` (one draw per sender) channels, and DGD without a channel.
  * EXTRA, NIDS, AugDGM (ATC-DIGing) and ADMM without noise at 30 trials.

decent-bench's side runs ``decent_bench.benchmark.benchmark`` (``_decentbench_side.py``) with what
is not the algorithm turned off as far as its API allows: ``progress_step=None`` (one progress-bar
update per trial instead of every 100 iterations), no ``runtime_metrics`` (its default: no live
plots), no metrics computed afterwards (``compute_metrics``/``display_metrics`` are not called),
logging at WARNING, no checkpoint directory, and ``Agent(state_snapshot_period=iterations)``: the
agents' state history (one copy of x per agent per iteration by default) keeps only x⁰ and the last
iterate. The noisy DGD is also run with its default history (period 1; ``--no-db-history`` skips
it). Its per-call gradient counters and the deep copy of the problem per trial cannot be switched
off. Trials run in ``max_processes`` processes (1, its default, and 2: one per core, as jaxdp uses
one device per core; the noise-free rows use the smaller). The speed-up is taken against
decent-bench's fastest configuration. At 256 trials decent-bench runs ``--db-256-iterations``
(default 100) iterations and is reported as a rate: its cost per iteration is constant, and 500
would take ~20 min per configuration on 2 cores. decent-bench computes in numpy float64 (its
configuration); jaxdp runs in float32.

Deterministic rows (no noise): every trial is the same computation on both sides; decent-bench
recomputes each, while vmap of a step that ignores its key would not batch, so jaxdp is timed on one
trajectory and its rate is that trajectory's (wall = compile + 30 × one run).

Each cell runs in its own subprocess (peak RSS is its own); jaxdp cells are repeated ``--repeats``
times (median reported). ``uptime`` is recorded before and after: the machine is shared.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

N, D, M, STEPS, SIGMA = 50, 10, 200, 500, 0.1
HYPER = {"alpha": 0.05, "rho": 1.0, "relax": 0.5}
LOSSES = ("least_squares", "logistic")
LAM = 0.01  # the logistic workload's ℓ2 weight: f_i(x) = mean softplus(−y zᵀx) + (LAM/2)‖x‖²
HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DB_PYTHON = ROOT / ".decentbench-venv" / "bin" / "python"
SIDE = HERE / "_decentbench_side.py"
NOISY = ("dgd+gauss", "dgd+gauss[float]", "dgd+gauss/agg[float]", "dgd+gauss/bcast",
         "dgd+gauss/bcast[float]")  # lattice (the default) and the float sampler
DETERMINISTIC = ("dgd", "extra", "nids", "aug_dgm", "admm")


# -- the shared problem ---------------------------------------------------------------------------
def export_spec(path: Path, loss: str = "least_squares", **extra) -> None:
    """Problem data, W and edges (float64) for both sides; built with jaxdp, seeds fixed.
    ``loss``: ``"least_squares"`` (targets ``Aw + noise``) or ``"logistic"`` (ℓ2-regularized
    with weight ``LAM``, labels ``±1`` the signs of the same targets). ``extra``: hyperparameters
    stored beside ``HYPER`` (a caller's own workload)."""
    import numpy as np
    from decentbench_parity import metropolis  # this directory: the parity fixtures' W rule

    from jaxdp import network

    if loss not in LOSSES:
        raise ValueError(f"loss must be one of {LOSSES}, got {loss!r}")
    rng = np.random.default_rng(0)
    A = rng.normal(size=(N, M, D))
    b = A @ rng.normal(size=D) + 0.1 * rng.normal(size=(N, M))
    if loss == "logistic":
        b = np.where(b >= 0, 1.0, -1.0)
    graph = np.asarray(network.make_network("random_geometric", N, radius=0.3, seed=1).W)
    iu = np.triu_indices(N, 1)
    edges = np.stack([iu[0], iu[1]], 1)[graph[iu] != 0]
    W = metropolis(N, edges.tolist())  # float64, as the parity fixtures
    np.savez(path, A=A, b=b, W=W, edges=edges, loss=loss, lam=LAM, **{**HYPER, **extra})


def jaxdp_inputs(spec_path: str):
    """jaxdp's problem (float32) and network from the exported arrays."""
    import numpy as np

    from jaxdp import network, problems

    spec = np.load(spec_path)
    loss = str(spec["loss"]) if "loss" in spec else "least_squares"
    reg = {"lam": float(spec["lam"])} if loss == "logistic" else {"ridge": 0.0}
    prob = problems.from_arrays(spec["A"].astype(np.float32), spec["b"].astype(np.float32),
                                loss=loss, reg=reg, name=f"bench_{loss}")
    adjacency = (spec["W"] != 0) & ~np.eye(N, dtype=bool)
    net = network.build_network(adjacency.astype(int), weights=spec["W"])
    return prob, net


def jaxdp_variant(name: str):
    """``(algorithm, params)`` of a jaxdp row."""
    from jaxdp import algorithms, channels

    def noisy(sampler="lattice", **kw):
        alg = channels.with_channel(algorithms.DGD(), channels.chain(
            channels.gaussian(SIGMA, sampler=sampler), **kw))
        return alg, alg.params(algorithms.DGDParams(alpha=HYPER["alpha"]))

    rows = {"dgd+gauss": lambda: noisy(), "dgd+gauss[float]": lambda: noisy("float"),
            "dgd+gauss/agg[float]": lambda: noisy("float", aggregate=True),
            "dgd+gauss/bcast": lambda: noisy(broadcast=True),
            "dgd+gauss/bcast[float]": lambda: noisy("float", broadcast=True)}
    if name in rows:
        return rows[name]()
    alg = algorithms.get(name)
    fields = {k: v for k, v in HYPER.items() if hasattr(alg.default_params(), k)}
    return alg, alg.default_params().replace(**fields)


def jaxdp_cell(spec_path: str, name: str, trials: int, steps: int) -> dict:
    """One jaxdp run (in this process); deterministic rows run one trajectory."""
    import numpy as np

    import jaxdp

    jaxdp.use_cpu_cores()
    prob, net = jaxdp_inputs(spec_path)
    alg, params = jaxdp_variant(name)
    seeds = 1 if name in DETERMINISTIC else trials
    t0 = time.perf_counter()
    trace = jaxdp.run(alg, prob, net, params, steps=steps, seeds=seeds, record_every=steps,
                      progress=False, chunks=1)
    wall = time.perf_counter() - t0
    meta = trace.meta
    scale = trials // seeds  # deterministic: trials identical runs of the one timed
    final = np.asarray(trace.final_models, np.float64)  # (seeds, N, d)
    return {"impl": "jaxdp", "alg": name, "trials": trials, "iterations": steps,
            "seeds_run": seeds, "devices": meta.get("devices"), "dtype": meta.get("dtype"),
            "run_seconds": meta["run_seconds"] * scale,
            "compile_seconds": meta["compile_seconds"],
            "wall_seconds": wall + meta["run_seconds"] * (scale - 1),  # one compile
            "agent_iterations": trials * steps * N,
            "agent_iterations_per_second": seeds * steps * N / meta["run_seconds"],
            "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "final_mean": final.mean(axis=0).tolist(),
            "final_finite": bool(np.isfinite(final).all()),
            "final_spread": float(final.std(axis=0).max())}


def timed_jaxdp(alg, problem, net, params, steps: int, trials: int):
    """``(trace, row)``: ``jaxdp.run`` of ``trials`` vmapped seeds timed in this process (one
    chunk, metrics at the end only), and the row's timing and memory fields."""
    import jaxdp

    t0 = time.perf_counter()
    trace = jaxdp.run(alg, problem, net, params, steps=steps, seeds=trials, record_every=steps,
                      progress=False, chunks=1)
    wall, meta = time.perf_counter() - t0, trace.meta
    return trace, {"impl": "jaxdp", "trials": trials, "iterations": steps,
                   "devices": meta.get("devices"), "dtype": meta.get("dtype"),
                   "run_seconds": meta["run_seconds"], "compile_seconds": meta["compile_seconds"],
                   "wall_seconds": wall,
                   "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


# -- the driver -----------------------------------------------------------------------------------
def subprocess_json(cmd: list[str]) -> dict:
    out = subprocess.run(cmd, capture_output=True, text=True, check=False,
                         env={**os.environ, "PYTHONHASHSEED": "0"})
    if out.returncode:
        raise RuntimeError(f"{' '.join(cmd)} failed ({out.returncode}):\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def run_decentbench(spec, alg, trials, iterations, processes, history) -> dict:
    cmd = [str(DB_PYTHON), str(SIDE), str(spec), alg.split("+")[0], str(trials), str(iterations),
           "--processes", str(processes), "--sigma", str(SIGMA if "+gauss" in alg else 0.0)]
    if history:
        cmd += ["--snapshot-period", "1"]
    row = subprocess_json(cmd)
    row["alg"] = alg
    return row


def run_jaxdp(spec, alg, trials, steps, repeats, script: str = __file__,
              rate: str = "agent_iterations_per_second") -> dict:
    """The median of ``repeats`` runs of ``script --cell`` (each its own process), by run time;
    ``rate`` (the row's key) is the median of the repeats' rates."""
    runs = [subprocess_json([sys.executable, str(script), "--cell", str(spec), alg, str(trials),
                             str(steps)]) for _ in range(repeats)]
    runs.sort(key=lambda r: r["run_seconds"])
    row = dict(runs[len(runs) // 2])  # the median run
    row["repeats_run_seconds"] = [r["run_seconds"] for r in runs]
    row["repeats_rate"] = [r[rate] for r in runs]
    row[rate] = statistics.median(row["repeats_rate"])
    return row


def decentbench_peer(rows: list[dict], row: dict) -> dict | None:
    """decent-bench's row of ``row``'s algorithm at the same trial count, else at the largest
    one it ran (its rate per trial is constant), else ``None``."""
    peers = [q for q in rows if q["impl"] == "decent-bench" and q["alg"] == row["alg"]]
    same = [q for q in peers if q["trials"] == row["trials"]]
    return (same or sorted(peers, key=lambda q: q["trials"])[-1:] or [None])[0]


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True, check=False).stdout.strip()


def show(r: dict) -> None:
    print(f"{r['impl']:>12} {r['alg']:>16} trials={r['trials']:>3} it={r['iterations']:>3} "
          f"p={r.get('max_processes', '-')}: {r['agent_iterations_per_second']:.3e} agent-it/s, "
          f"wall {r['wall_seconds']:.2f}s, compile {r['compile_seconds']:.2f}s, "
          f"RSS {r['peak_rss_mib']:.0f} MiB", flush=True)


def plan(args) -> list[tuple]:
    """``(side, alg, trials, iterations, processes, history)`` cells."""
    cells = []
    for trials in args.trials:
        it = args.db_iterations.get(trials, args.steps)
        for p in args.processes:
            cells.append(("db", "dgd+gauss", trials, it, p, False))
        if args.db_history:
            cells.append(("db", "dgd+gauss", trials, it, 1, True))
        for alg in NOISY:
            cells.append(("jaxdp", alg, trials, args.steps, None, False))
    if args.others:
        t = args.trials[0]
        for alg in DETERMINISTIC:
            if alg == "admm" and args.loss == "logistic":
                continue  # decent-bench's ADMM needs a proximal; its logistic + ℓ2 sum has none
            cells.append(("db", alg, t, args.steps, min(args.processes), False))
            cells.append(("jaxdp", alg, t, args.steps, None, False))
    return cells


def compare(rows: list[dict]) -> None:
    """Speed-up and agreement of each jaxdp row with decent-bench's rows of the same algorithm.

    ``speedup``: jaxdp's rate over decent-bench's best rate (same algorithm and trials, any
    configuration: on a shared machine its default with history can time faster than without). ``final_max_abs_diff``: max |jaxdp − decent-bench| of the trial-mean final models (noise
    free: the same trajectory, up to float32; noisy: equal in law, so only the Monte-Carlo error).
    Raises if a decent-bench run did not move (its ``benchmark`` logs and swallows errors) or a
    noise-free algorithm other than ADMM (inexact local solve in jaxdp) disagrees beyond 1e-3.
    """
    import numpy as np

    for r in rows:
        if not r["final_finite"] or not np.any(r["final_mean"]):
            raise RuntimeError(f"{r['impl']} {r['alg']} did not run: final {r['final_mean']}")
        if r["impl"] != "jaxdp":
            continue
        base = "dgd+gauss" if r["alg"] in NOISY else r["alg"]
        peers = [q for q in rows if q["impl"] == "decent-bench" and q["alg"] == base
                 and q["trials"] == r["trials"]]
        if not peers:
            continue
        best = max(peers, key=lambda q: q["agent_iterations_per_second"])
        r["decentbench_rate"] = best["agent_iterations_per_second"]
        r["speedup"] = r["agent_iterations_per_second"] / r["decentbench_rate"]
        same_len = [q for q in peers if q["iterations"] == r["iterations"]]
        if same_len:
            diff = np.abs(np.subtract(r["final_mean"], same_len[0]["final_mean"])).max()
            r["final_max_abs_diff"] = float(diff)
            if r["alg"] in DETERMINISTIC and r["alg"] != "admm" and diff > 1e-3:
                raise RuntimeError(f"{r['alg']}: jaxdp and decent-bench end {diff:.2e} apart")


def parse(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, nargs="+", default=[30, 256])
    ap.add_argument("--steps", type=int, default=STEPS)
    ap.add_argument("--db-256-iterations", type=int, default=100,
                    help="decent-bench iterations at 256 trials (a rate: its cost per iteration "
                         "is constant; 500 would take ~15 min)")
    ap.add_argument("--processes", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--no-db-history", dest="db_history", action="store_false",
                    help="skip decent-bench with its default state history (period 1)")
    ap.add_argument("--no-others", dest="others", action="store_false",
                    help="skip EXTRA/NIDS/AugDGM/ADMM/DGD without noise")
    ap.add_argument("--loss", choices=LOSSES, default="least_squares",
                    help="the agents' loss (logistic: ℓ2-regularized, labels ±1)")
    ap.add_argument("--quick", action="store_true", help="2 trials x 20 iterations, 1 repeat")
    ap.add_argument("--out", default=str(HERE / "results" / "decentbench_cpu.json"))
    ap.add_argument("--table", action="store_true",
                    help="re-derive --out's speed-ups and print it as a markdown table")
    ap.add_argument("--cell", nargs=4, metavar=("SPEC", "ALG", "TRIALS", "STEPS"),
                    help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    for label in ("steps", "db_256_iterations", "repeats"):
        if getattr(args, label) < 1:
            ap.error(f"--{label.replace('_', '-')} must be >= 1, got {getattr(args, label)}")
    if min(args.trials + args.processes) < 1:
        ap.error(f"--trials and --processes must be >= 1, got {args.trials}, {args.processes}")
    if args.quick:
        args.trials, args.steps, args.repeats, args.processes = [2], 20, 1, [1]
        args.out = str(Path(tempfile.gettempdir()) / "decentbench_quick.json")
    args.db_iterations = {256: min(args.db_256_iterations, args.steps)}
    return args


def main(argv=None) -> int:
    args = parse(argv)
    if args.cell:
        spec, alg, trials, steps = args.cell
        print(json.dumps(jaxdp_cell(spec, alg, int(trials), int(steps))))
        return 0
    if args.table:
        results = json.loads(Path(args.out).read_text())
        compare(results["rows"])  # re-derived: the file's speed-ups follow this code
        Path(args.out).write_text(json.dumps(results, indent=1) + "\n")
        print(table(results["rows"]))
        return 0
    if not DB_PYTHON.exists():
        raise SystemExit(f"{DB_PYTHON} not found: run python benchmarks/decentbench_parity.py "
                         "first (it creates the decent-bench venv)")
    load = {"before": uptime()}
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        spec = Path(tmp) / "spec.npz"
        export_spec(spec, loss=args.loss)
        for side, alg, trials, it, p, history in plan(args):
            if side == "db":
                rows.append(run_decentbench(spec, alg, trials, it, p, history))
            else:
                rows.append(run_jaxdp(spec, alg, trials, it, args.repeats))
            rows[-1]["uptime"] = uptime()
            show(rows[-1])
    load["after"] = uptime()
    compare(rows)
    import numpy as np

    for r in rows:
        if "speedup" in r:
            print(f"{r['alg']:>16} trials={r['trials']:>3}: jaxdp / decent-bench = "
                  f"{r['speedup']:.0f}x, final |diff| {r.get('final_max_abs_diff', np.nan):.1e}")
    write(args, rows, load)
    return 0


def table(rows: list[dict]) -> str:
    """The README's table of a results file."""
    head = ("| trials | implementation | algorithm | iterations | agent-it/s | wall s | compile s "
            "| peak RSS MiB | speed-up |\n|---:|---|---|---:|---:|---:|---:|---:|---:|")
    lines = [head]
    for r in rows:
        impl = r["impl"]
        if impl == "decent-bench":
            impl += f" (p={r['max_processes']}" + (", history" if r["state_snapshot_period"] == 1
                                                    else "") + ")"
        rss = max(r["peak_rss_mib"], r.get("peak_rss_children_mib", 0.0))
        speed = f"{r['speedup']:.0f}×" if "speedup" in r else ""
        lines.append(f"| {r['trials']} | {impl} | {r['alg']} | {r['iterations']} | "
                     f"{r['agent_iterations_per_second']:.3g} | {r['wall_seconds']:.1f} | "
                     f"{r['compile_seconds']:.1f} | {rss:.0f} | {speed} |")
    return "\n".join(lines)


def machine_info(load: dict, db_packages: tuple[str, ...] = (), python: Path = DB_PYTHON) -> dict:
    """Both environments' versions (decent-bench's venv ``python`` probed, with ``db_packages``'
    versions) and ``load`` (``uptime`` before and after)."""
    import jax

    names = ("decent-bench", "numpy") + tuple(db_packages)
    probe = ("import importlib.metadata as m, sys; "
             f"print(*[m.version(p) for p in {names!r}], sys.version.split()[0])")
    db = subprocess.run([str(python), "-c", probe], capture_output=True, text=True,
                        check=True).stdout.split()
    return {"platform": platform.platform(), "processor": platform.processor(),
            "cpu_count": os.cpu_count(), "python": platform.python_version(),
            "jax": jax.__version__, "decent_bench": db[0], "decent_bench_numpy": db[1],
            **{f"decent_bench_{p}": v for p, v in zip(db_packages, db[2:-1], strict=True)},
            "decent_bench_python": db[-1], "uptime": load}


def write(args, rows, load) -> None:
    machine = machine_info(load)
    workload = {"n_agents": N, "d": D, "m": M, "iterations": args.steps, "sigma": SIGMA,
                "loss": args.loss, **({"lam": LAM} if args.loss == "logistic" else {}),
                "graph": "random_geometric r=0.3 seed=1, Metropolis W",
                "x0": "zeros", **HYPER, "repeats_jaxdp": args.repeats,
                "command": "python benchmarks/bench_decentbench.py"}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps({"machine": machine, "workload": workload,
                                          "rows": rows}, indent=1) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    sys.exit(main())
