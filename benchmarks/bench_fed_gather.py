"""The federated round gathered (only the K selected clients compute) against masked (all N
compute, the unselected masked out): rounds/s and CPU seconds per round.

One command (the repository root, jaxdp's environment)::

    python benchmarks/bench_fed_gather.py            # results/fed_gather_cpu.json
    python benchmarks/bench_fed_gather.py --quick    # 1 repeat, 10 rounds: a smoke run

Workload: the decent-bench federated benchmark's round (``bench_decentbench_fed.py``): least
squares with d = 10 and m = 200 samples per client (``problems.least_squares``, seed 0),
K = 10 clients drawn uniformly without replacement each round, E = 5 full-batch local steps of
α = 0.01, uniform server weights, float32, on K_N; N = 50 and N = 200 clients; FedAvg and
SCAFFOLD; ``--seeds`` replicates vmapped (default 1 and 30). ``--problem digits_mlp``: the
packaged digits split iid among the N clients, a 64–32–10 tanh MLP (2,410 parameters,
cross-entropy) instead of the least squares, the rest the same. Each variant's ``simulate`` of
``--rounds`` rounds (metrics once, at the end) is compiled ahead of time, then the variants run
interleaved (A B A B ..., ``--repeats`` times); per cell the medians of wall seconds and of the
process's CPU seconds (every thread) per run, divided by the rounds. The two variants compute
the same rounds (``tests/algorithms/test_federated_gather.py``).
"""
from __future__ import annotations

import argparse
import json
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
D, M, K, E, ALPHA = 10, 200, 10, 5, 0.01


def make_problem(kind: str, n: int):
    """The clients' data: :data:`D`-dimensional least squares, or the digits MLP."""
    from jaxdp import problems

    if kind == "digits_mlp":
        return problems.digits_mlp(n, dtype="float32")
    return problems.least_squares(n_agents=n, m=M, d=D, ridge=0.0, seed=0, dtype="float32",
                                  reference=False)


def compiled(kind: str, name: str, n: int, seeds: int, rounds: int, gather: bool):
    """A call of the compiled ``simulate`` of ``rounds`` rounds over ``seeds`` keys."""
    import jax

    import jaxdp
    from jaxdp import algorithms, network

    prob = make_problem(kind, n)
    net = network.make_network("complete", n)
    alg = algorithms.get(name, local_steps=E, clients=K, selection="uniform",
                         weighting="uniform", gather=gather)
    params = alg.default_params().replace(alpha=ALPHA)
    assert alg.gathers(n) is gather

    def one(key):
        return jaxdp.simulate(alg, prob, net, params, key, steps=rounds,
                              record_every=rounds)[0].state.x

    def run(keys):
        return jax.vmap(one)(keys)

    keys = jax.random.split(jax.random.key(0), seeds)
    exe = jax.jit(run).lower(keys).compile()
    return lambda: jax.block_until_ready(exe(keys))


def timed(fn) -> tuple[float, float]:
    """``(wall, cpu)`` seconds of one call."""
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - wall, time.process_time() - cpu


def cell(kind: str, name: str, n: int, seeds: int, rounds: int, repeats: int) -> list[dict]:
    """Both variants of one setting, interleaved; one row per variant (medians)."""
    fns = {g: compiled(kind, name, n, seeds, rounds, g) for g in (False, True)}
    for fn in fns.values():
        fn()  # warm
    samples = {g: [] for g in fns}
    for _ in range(repeats):
        for g, fn in fns.items():
            samples[g].append(timed(fn))
    rows = []
    for g, runs in samples.items():
        wall = statistics.median(w for w, _ in runs)
        cpu = statistics.median(c for _, c in runs)
        rows.append({"problem": kind, "alg": name, "n_clients": n, "clients": K, "seeds": seeds,
                     "rounds": rounds, "variant": "gathered" if g else "masked",
                     "wall_s": wall, "cpu_s": cpu, "rounds_per_s": rounds / wall,
                     "cpu_s_per_round": cpu / rounds, "wall_samples": [w for w, _ in runs],
                     "cpu_samples": [c for _, c in runs]})
    masked, gathered = rows
    gathered["speedup_wall"] = masked["wall_s"] / gathered["wall_s"]
    gathered["speedup_cpu"] = masked["cpu_s"] / gathered["cpu_s"]
    return rows


def table(rows: list[dict]) -> str:
    lines = [("| problem | algorithm | N | K | seeds | variant | rounds/s | CPU s/round | "
              "speed-up (wall, CPU) |"), "|---|---|---:|---:|---:|---|---:|---:|---:|"]
    for r in rows:
        speed = (f"{r['speedup_wall']:.2f}×, {r['speedup_cpu']:.2f}×" if "speedup_wall" in r
                 else "")
        lines.append(f"| {r.get('problem', 'least_squares')} | {r['alg']} | {r['n_clients']} | {r['clients']} | {r['seeds']} | "
                     f"{r['variant']} | {r['rounds_per_s']:.3g} | {r['cpu_s_per_round']:.3g} | "
                     f"{speed} |")
    return "\n".join(lines)


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True, check=False).stdout.strip()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--problem", choices=["least_squares", "digits_mlp"],
                    default="least_squares")
    ap.add_argument("--n", type=int, nargs="+", default=[50, 200])
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 30])
    ap.add_argument("--algs", nargs="+", default=["fedavg", "scaffold"])
    ap.add_argument("--rounds", type=int, default=100)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--out", default=str(HERE / "results" / "fed_gather_cpu.json"))
    ap.add_argument("--table", action="store_true", help="print --out as a markdown table")
    args = ap.parse_args(argv)
    if args.table:
        print(table(json.loads(Path(args.out).read_text())["rows"]))
        return 0
    if args.quick:
        args.rounds, args.repeats, args.seeds, args.n = 10, 1, [1], [50]
        args.out = "/tmp/fed_gather_quick.json"
    import jax

    jax.config.update("jax_enable_x64", False)
    load, rows = {"before": uptime()}, []
    for name in args.algs:
        for n in args.n:
            for seeds in args.seeds:
                rows += cell(args.problem, name, n, seeds, args.rounds, args.repeats)
                print(table(rows[-2:]).splitlines()[-1], flush=True)
    load["after"] = uptime()
    print(table(rows))
    machine = {"platform": platform.platform(), "processor": platform.processor(),
               "python": platform.python_version(), "jax": jax.__version__,
               "devices": [str(d) for d in jax.devices()], "load": load}
    sizes = {"d": D, "m": M} if args.problem == "least_squares" else {"hidden": 32}
    workload = {"problem": args.problem, **sizes, "clients": K, "local_steps": E, "alpha": ALPHA,
                "loss": "least_squares", "dtype": "float32", "network": "complete",
                "timing": "AOT-compiled simulate, variants interleaved, medians",
                "command": "python benchmarks/bench_fed_gather.py " + " ".join(argv or sys.argv[1:])}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps({"machine": machine, "workload": workload, "rows": rows},
                                         indent=1) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
