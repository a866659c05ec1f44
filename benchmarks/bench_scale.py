"""Scale on one CPU: DGD and DP-DGD from 10^3 to 10^6 agents (issue 38, goal 3, CPU part).

Workload: a connected sparse random graph of N agents with mean degree 10
(``jaxdp.network.random_sparse_edges``: a random Hamiltonian cycle plus uniform random edges, no
networkx) turned into a Metropolis ``Network`` on the edge backend by ``build_network_from_edges``;
``least_squares`` with m = 10 rows of d = 10 features per agent (float32: 4 N m d bytes of
features, 400 MB at N = 10^6); 100 steps, one seed. Algorithms: ``dgd``, ``dp_dgd`` (C = 1,
sigma = 0.1) and DGD behind a per-message ``clip:1.0+gaussian:0.5`` channel (``dgd+channel``,
every directed edge's message clipped and noised: ``(2E, d)`` work per step).

Metrics: the problem's default metrics, recorded only before step 0 and after the last step
(``record_every=steps``): each record costs about one gradient evaluation, ``O(N m d)``, and none
is ``O(N^2)``.

Each (algorithm, N) cell runs in a fresh subprocess (so peak RSS, ``ru_maxrss``, does not mix
across cells) and records: graph build seconds (edge sampling), network build seconds (weights and
edge layout), problem build seconds, the network's summary seconds (``Network.summary`` as
``jaxdp.run`` records it: the spectra up to 2000 agents, the structure above; computed before the
run, so the run reuses the cached value), compile and run seconds, the whole
``jaxdp.run`` call's seconds (with its other host set-up), agent-steps/s, peak RSS (the
process: every CPU device's share) and ``device_mib``, what one device holds for the run (the
compiled chunk's arguments, outputs and temporaries: ``jaxdp.run``'s memory plan).

With ``--shard agents --devices K`` each cell exposes K CPU devices (``jaxdp.use_cpu_cores``)
and runs ``jaxdp.run(..., shard="agents")``: the agent axis of the data and of the state split
over them, so one seed uses K cores (``--shard seeds``, the default, runs one seed on one device).

Usage:
    python benchmarks/bench_scale.py       # writes benchmarks/results/scale_cpu.json
    python benchmarks/bench_scale.py --shard agents --devices 2 --out results/scale_agents_cpu.json
    python benchmarks/bench_scale.py --sizes 1000 10000 --channel-sizes 1000 --out /tmp/s.json
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path

DEGREE, M, D, STEPS, GRAPH_SEED = 10, 10, 10, 100, 0
ALPHA, CLIP, SIGMA = 0.05, 1.0, 0.1
CHANNEL = "clip:1.0+gaussian:0.5"
SIZES, CHANNEL_SIZES = (10**3, 10**4, 10**5, 10**6), (10**3, 10**4, 10**5)
ALGORITHMS = ("dgd", "dp_dgd", "dgd+channel")
FIELDS = ("algorithm", "n_agents", "n_edges", "steps", "graph_seconds", "network_seconds",
          "problem_seconds", "summary_seconds", "compile_seconds", "run_seconds", "run_call_seconds", "agent_steps_per_second",
          "peak_rss_mib", "device_mib", "shard", "devices", "objective_start", "objective_end")
HERE = Path(__file__).resolve().parent


def algorithm(name: str):
    """``(Algorithm, Params)`` of a benchmark row name (``ALGORITHMS``)."""
    from jaxdp import algorithms, channels

    if name == "dgd":
        return algorithms.DGD(), algorithms.DGDParams(alpha=ALPHA)
    if name == "dp_dgd":
        return algorithms.DPDGD(), algorithms.DPDGDParams(alpha=ALPHA, clip=CLIP, sigma=SIGMA)
    if name == "dgd+channel":
        alg = channels.with_channel(algorithms.DGD(), channels.parse_channels(CHANNEL))
        return alg, alg.params(algorithms.DGDParams(alpha=ALPHA))
    raise ValueError(f"unknown benchmark algorithm {name!r}; known: {', '.join(ALGORITHMS)}")


def cell(name: str, n: int, steps: int, shard: str = "seeds", devices: int = 0) -> dict:
    """Build, compile and run one (algorithm, N) cell in this process; its JSON record.
    ``devices``: CPU devices to expose first (0: JAX's default, one)."""
    import jax.numpy as jnp

    import jaxdp
    from jaxdp import network, problems
    from jaxdp.network._spectral import EXACT_MAX_AGENTS

    if devices:
        jaxdp.use_cpu_cores(devices)

    alg, params = algorithm(name)
    t0 = time.perf_counter()
    edges = network.random_sparse_edges(n, DEGREE, seed=GRAPH_SEED)
    t1 = time.perf_counter()
    net = network.build_network_from_edges(n, edges, backend="edges")
    del edges
    t2 = time.perf_counter()
    prob = problems.least_squares(n_agents=n, m=M, d=D, seed=0, dtype=jnp.float32,
                                  reference=False)
    t3 = time.perf_counter()
    # the summary jaxdp.run records (cached on the network), timed apart: the spectra only where
    # they are exact (N <= 2000), as run does; above, the structure
    net.summary(spectra=n <= EXACT_MAX_AGENTS)
    t4 = time.perf_counter()
    trace = jaxdp.run(alg, prob, net, params, steps=steps, seeds=1, record_every=steps,
                      progress=False, chunks=1, shard=shard)
    t5 = time.perf_counter()
    objective = trace.metrics["objective"][0]
    return {
        "algorithm": name, "n_agents": n, "n_edges": net.n_edges, "steps": steps,
        "shard": shard, "devices": len(trace.meta["devices"]),
        "graph_seconds": t1 - t0, "network_seconds": t2 - t1, "problem_seconds": t3 - t2,
        "summary_seconds": t4 - t3,
        "compile_seconds": trace.meta["compile_seconds"],
        "run_seconds": trace.meta["run_seconds"], "run_call_seconds": t5 - t4,
        "agent_steps_per_second": trace.meta["agent_steps_per_second"],
        "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "device_mib": trace.meta["memory_per_device_mib"],
        "objective_start": float(objective[0]), "objective_end": float(objective[-1]),
    }


def run_cell(name: str, n: int, steps: int, timeout: float | None = None,
             shard: str = "seeds", devices: int = 0) -> dict:
    """``cell`` in a fresh subprocess; a failure (memory, timeout) is a row with ``error``."""
    cmd = [sys.executable, os.path.abspath(__file__), "--cell", name, str(n), str(steps),
           "--shard", shard, "--devices", str(devices)]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"algorithm": name, "n_agents": n, "steps": steps,
                "error": f"timed out after {timeout} s"}
    if done.returncode != 0:
        return {"algorithm": name, "n_agents": n, "steps": steps,
                "error": f"exit {done.returncode}: {done.stderr.strip()[-500:]}"}
    return json.loads(done.stdout.strip().splitlines()[-1])


def table(rows: list) -> str:
    """Markdown tables of the rows: the seconds of each phase, then the rate and memory per agent
    to read the growth (two tables of at most nine columns: one of thirteen was wider than the
    site's content column)."""
    times = ["| algorithm | N | \\|E\\| | graph s | network s | problem s | summary s | compile s "
             "| run s |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    rates = [("| algorithm | N | agent-steps/s | run µs/agent | peak RSS MiB | RSS KiB/agent "
              "| device MiB |"), "|---|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        if "error" in r:
            times.append(f"| {r['algorithm']} | {r['n_agents']} | failed: {r['error'][:80]} |")
            continue
        split = (f" (agents / {r['devices']})" if r.get("shard") == "agents" else "")
        head = f"| {r['algorithm']}{split} | {r['n_agents']:.0e} | "
        times.append(
            f"{head}{r['n_edges']} | {r['graph_seconds']:.2f} | {r['network_seconds']:.2f} | "
            f"{r['problem_seconds']:.2f} | {r['summary_seconds']:.2f} | "
            f"{r['compile_seconds']:.2f} | {r['run_seconds']:.2f} |")
        rates.append(
            f"{head}{r['agent_steps_per_second']:.3g} | "
            f"{1e6 * r['run_seconds'] / r['n_agents']:.1f} | "
            f"{r['peak_rss_mib']:.0f} | {1024 * r['peak_rss_mib'] / r['n_agents']:.2f} | "
            f"{r.get('device_mib', float('nan')):.0f} |")
    return "\n".join(times) + "\n\n" + "\n".join(rates)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    parser.add_argument("--channel-sizes", type=int, nargs="*", default=list(CHANNEL_SIZES))
    parser.add_argument("--steps", type=int, default=STEPS)
    parser.add_argument("--timeout", type=float, default=None, help="seconds per cell")
    parser.add_argument("--out", default=str(HERE / "results" / "scale_cpu.json"))
    parser.add_argument("--shard", choices=("seeds", "agents"), default="seeds",
                        help="what jaxdp.run splits over the devices")
    parser.add_argument("--devices", type=int, default=0,
                        help="CPU devices to expose in each cell (0: JAX's default, one)")
    parser.add_argument("--cell", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.devices < 0:
        parser.error(f"--devices must be >= 0, got {args.devices}")
    if args.cell:
        print(json.dumps(cell(args.cell[0], int(args.cell[1]), int(args.cell[2]), args.shard,
                              args.devices)))
        return
    cells = ([(name, n) for n in args.sizes for name in ("dgd", "dp_dgd")]
             + [("dgd+channel", n) for n in args.channel_sizes])
    rows = []
    for name, n in cells:
        rows.append(run_cell(name, n, args.steps, args.timeout, args.shard, args.devices))
        print(json.dumps(rows[-1]), flush=True)
    import jax

    machine = {"platform": platform.platform(), "cpu_count": os.cpu_count(),
               "python": platform.python_version(), "jax": jax.__version__, "backend": "cpu"}
    workload = {"graph": "random_sparse_edges", "degree": DEGREE, "graph_seed": GRAPH_SEED,
                "weights": "metropolis", "backend": "edges", "problem": "least_squares",
                "m": M, "d": D, "alpha": ALPHA, "clip": CLIP, "sigma": SIGMA,
                "channel": CHANNEL, "seeds": 1, "dtype": "float32", "shard": args.shard,
                "devices": args.devices or 1,
                "metrics": "problem.metrics, record_every=steps (2 records)"}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(
        {"command": "python benchmarks/bench_scale.py " + " ".join(sys.argv[1:]),
         "machine": machine, "workload": workload, "rows": rows}, indent=2))
    print(table(rows))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
