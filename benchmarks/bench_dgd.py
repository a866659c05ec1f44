"""DGD throughput: a per-agent Python loop, a numpy loop vectorized over agents, and jaxdp.

Workload (issue 2): DGD on paper 000's problem — N=50 agents on a random geometric graph (r=0.3),
d=10, m=200 samples per agent, nonconvex logistic loss, 500 steps — for 1, 16 and 256 seeds.

Every implementation perturbs each local gradient with Gaussian noise (DP-DGD with clipping off, i.e.
a huge clip norm). Without per-seed randomness every seed is the same computation and XLA batches
nothing (vmap of a function that ignores its key is not batched at all), which makes jaxdp look
S times faster than it is (docs/design.md, "Performance"). The noise makes every seed real work for all three.

``jaxdp`` exposes every CPU core as a JAX device (``jaxdp.use_cpu_cores()``, which the ``jaxdp``
command also calls) and shards the seeds over them; ``jaxdp_1dev`` is the same on one device: XLA's
CPU backend then runs most of the step on a single thread.

Each (implementation, seeds) cell runs in its own subprocess so that peak memory (max RSS) is its own.
The per-agent loop is timed on fewer steps (``--loop-steps``) and reported as a rate: it does the same
work every step, so agent-steps/s does not depend on the number of steps.

Usage:
    python benchmarks/bench_dgd.py                 # all cells, writes benchmarks/results/dgd_cpu.json
    python benchmarks/bench_dgd.py --seeds 1 16    # a subset
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

N, D, M, STEPS, ALPHA, SIGMA = 50, 10, 200, 500, 0.05, 0.1
HERE = Path(__file__).resolve().parent


def setup():
    """The shared problem and network as numpy float32 arrays (built by jaxdp, seeds fixed)."""
    import numpy as np

    from jaxdp import network, problems

    prob = problems.nonconvex_logistic(n_agents=N, m=M, d=D, seed=0)
    net = network.make_network("random_geometric", N, radius=0.3, seed=1)
    A = np.asarray(prob.features, np.float32)
    y = np.asarray(prob.labels, np.float32)
    W = np.asarray(net.W, np.float32)
    reg = (float(prob.reg["lam"]), float(prob.reg["omega"]))
    return prob, net, A, y, W, reg


def grad_numpy(x, A, y, reg):
    """∇f_i for one agent (x (d,), A (m, d)) or all agents (x (N, d), A (N, m, d))."""
    import numpy as np

    lam, om = reg
    t = np.einsum("...md,...d->...m", A, x)
    s = -y / (1.0 + np.exp(y * t))  # -y σ(-y t)
    g = np.einsum("...m,...md->...d", s, A) / A.shape[-2]
    return g + 2 * lam * om * x / (1 + om * x * x) ** 2


class Agent:
    """One agent as research code writes it: its data, its model, its neighbours."""

    def __init__(self, i, A, y, W, reg, rng):
        self.i, self.A, self.y, self.reg, self.rng = i, A[i], y[i], reg, rng
        self.nbrs = [(j, W[i, j]) for j in range(W.shape[0]) if W[i, j] != 0]
        self.x = 0 * A[i, 0]

    def local_step(self):
        g = grad_numpy(self.x, self.A, self.y, self.reg)
        return g + SIGMA * self.rng.standard_normal(self.x.shape).astype(self.x.dtype)

    def mix(self, agents):
        return sum(w * agents[j].x for j, w in self.nbrs)


def run_loop(seeds, steps):
    import numpy as np

    _, _, A, y, W, reg = setup()
    t0 = time.perf_counter()
    for s in range(seeds):
        rng = np.random.default_rng(s)
        agents = [Agent(i, A, y, W, reg, rng) for i in range(N)]
        for _ in range(steps):
            grads = [a.local_step() for a in agents]
            mixed = [a.mix(agents) for a in agents]
            for a, m, g in zip(agents, mixed, grads):
                a.x = m - ALPHA * g
    return {"run_seconds": time.perf_counter() - t0, "compile_seconds": 0.0,
            "agent_steps": seeds * steps * N}


def run_numpy(seeds, steps):
    import numpy as np

    _, _, A, y, W, reg = setup()
    t0 = time.perf_counter()
    for s in range(seeds):
        rng = np.random.default_rng(s)
        X = np.zeros((N, D), np.float32)
        for _ in range(steps):
            G = grad_numpy(X, A, y, reg) + SIGMA * rng.standard_normal((N, D), np.float32)
            X = W @ X - ALPHA * G
    return {"run_seconds": time.perf_counter() - t0, "compile_seconds": 0.0,
            "agent_steps": seeds * steps * N}


def run_jaxdp(seeds, steps, cpu_devices=None):
    import jaxdp
    from jaxdp import algorithms
    from jaxdp.engine import run

    jaxdp.use_cpu_cores(cpu_devices)  # one JAX device per core: seeds are sharded over them

    prob, net, *_ = setup()
    params = algorithms.DPDGDParams(alpha=ALPHA, clip=1e30, sigma=SIGMA / 1e30)
    trace = run(algorithms.DPDGD(), prob, net, params, steps=steps, seeds=seeds,
                record_every=steps, progress=False, chunks=1)
    return {"run_seconds": trace.meta["run_seconds"],
            "compile_seconds": trace.meta["compile_seconds"],
            "agent_steps": seeds * steps * N, "devices": trace.meta["devices"]}


IMPLS = {"loop": run_loop, "numpy": run_numpy, "jaxdp": run_jaxdp,
         "jaxdp_1dev": lambda seeds, steps: run_jaxdp(seeds, steps, cpu_devices=1)}


def cell(impl, seeds, steps):
    """Run one cell in this process and print its JSON (used by the subprocess driver)."""
    result = IMPLS[impl](seeds, steps)
    result.update(impl=impl, seeds=seeds, steps=steps,
                  agent_steps_per_second=result["agent_steps"] / result["run_seconds"],
                  peak_rss_mib=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    print(json.dumps(result))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 16, 256])
    ap.add_argument("--impls", nargs="+", default=list(IMPLS), choices=list(IMPLS))
    ap.add_argument("--loop-steps", type=int, default=20, help="steps for the per-agent loop")
    ap.add_argument("--out", default=str(HERE / "results" / "dgd_cpu.json"))
    ap.add_argument("--cell", nargs=3, metavar=("IMPL", "SEEDS", "STEPS"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.cell:
        cell(args.cell[0], int(args.cell[1]), int(args.cell[2]))
        return
    rows = []
    for seeds in args.seeds:
        for impl in args.impls:
            steps = args.loop_steps if impl == "loop" else STEPS
            out = subprocess.run([sys.executable, __file__, "--cell", impl, str(seeds), str(steps)],
                                 check=True, capture_output=True, text=True).stdout
            rows.append(json.loads(out.strip().splitlines()[-1]))
            r = rows[-1]
            print(f"{impl:>6} seeds={seeds:>4} steps={steps:>4}: "
                  f"{r['agent_steps_per_second']:.3e} agent-steps/s, run {r['run_seconds']:.2f}s, "
                  f"compile {r['compile_seconds']:.2f}s, peak RSS {r['peak_rss_mib']:.0f} MiB",
                  flush=True)
    by = {(r["impl"], r["seeds"]): r["agent_steps_per_second"] for r in rows}
    for seeds in args.seeds:
        if ("jaxdp", seeds) in by:
            for base in ("loop", "numpy"):
                if (base, seeds) in by:
                    print(f"seeds={seeds}: jaxdp / {base} = "
                          f"{by[('jaxdp', seeds)] / by[(base, seeds)]:.1f}x")
    import jax

    machine = {"platform": platform.platform(), "cpu_count": os.cpu_count(),
               "python": platform.python_version(), "jax": jax.__version__,
               "backend": jax.default_backend()}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps({"machine": machine, "workload": {
        "N": N, "d": D, "m": M, "steps": STEPS, "alpha": ALPHA, "sigma": SIGMA}, "rows": rows},
        indent=2))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
