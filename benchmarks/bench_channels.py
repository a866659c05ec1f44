"""Cost of a channel per step: DGD with and without clip + Gaussian on every message (issue 16).

Workload (as ``bench_dgd.py``): paper 000's problem, N = 50 agents on a random geometric graph
(r = 0.3), d = 10, m = 200, nonconvex logistic loss, float32, 500 steps, 256 seeds.

Rows:
  * ``dgd``: plain DGD. Deterministic: every seed is the same computation, so this is a lower
    bound that XLA does not really batch (see ``bench_dgd.py``).
  * ``dp_dgd_grad_noise``: DGD with Gaussian noise on each agent's gradient (DP-DGD, clip off):
    the step without a channel, with one (N, d) draw per step — the reference of the issue's
    "≤ 1.5× the step without it".
  * ``dgd+clip+gaussian``: DGD through ``chain(clip(ℓ2), gaussian)``, one draw per directed
    message ((2E, d) per step).
  * ``dgd+clip+gaussian/agg``: per-message noise simulated by its exact sum at each receiver
    (``aggregate=True``: same distribution of the models, (N, d) draws, messages not recorded).
  * ``dgd+clip+gaussian/bcast``: one draw per sender ((N, d) per step; one release per step).

Each row: compile and run seconds from ``jaxdp.run`` (best of ``--repeats``), agent-steps/s and
the ratio to ``dp_dgd_grad_noise``.

Usage:
    python benchmarks/bench_channels.py            # writes benchmarks/results/channels_cpu.json
    python benchmarks/bench_channels.py --seeds 64 --steps 200
"""
from __future__ import annotations

import argparse
import json
import platform
from pathlib import Path

N, D, M, ALPHA, SIGMA, CLIP = 50, 10, 200, 0.05, 0.1, 1.0
HERE = Path(__file__).resolve().parent


def variants():
    """``{row: (algorithm, params)}``."""
    from jaxdp import algorithms, channels

    def channel(broadcast=False, aggregate=False):
        alg = channels.with_channel(algorithms.DGD(), channels.chain(
            channels.clip(CLIP), channels.gaussian(SIGMA), broadcast=broadcast,
            aggregate=aggregate))
        return alg, alg.params(algorithms.DGDParams(alpha=ALPHA))

    return {
        "dgd": (algorithms.DGD(), algorithms.DGDParams(alpha=ALPHA)),
        "dp_dgd_grad_noise": (algorithms.DPDGD(),
                              algorithms.DPDGDParams(alpha=ALPHA, clip=1e30, sigma=SIGMA / 1e30)),
        "dgd+clip+gaussian": channel(False),
        "dgd+clip+gaussian/agg": channel(aggregate=True),
        "dgd+clip+gaussian/bcast": channel(broadcast=True),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=256)
    ap.add_argument("--steps", type=int, default=500)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--out", default=str(HERE / "results" / "channels_cpu.json"))
    args = ap.parse_args()

    import jax

    import jaxdp
    from jaxdp import network, problems

    jaxdp.use_cpu_cores()
    prob = problems.nonconvex_logistic(n_agents=N, m=M, d=D, seed=0)
    net = network.make_network("random_geometric", N, radius=0.3, seed=1)
    rows = []
    for name, (alg, params) in variants().items():
        best = None
        for _ in range(args.repeats):
            trace = jaxdp.run(alg, prob, net, params, steps=args.steps, seeds=args.seeds,
                              record_every=args.steps, progress=False, chunks=1)
            meta = trace.meta
            if best is None or meta["run_seconds"] < best["run_seconds"]:
                best = {"run_seconds": meta["run_seconds"],
                        "compile_seconds": meta["compile_seconds"]}
        agent_steps = args.seeds * args.steps * N
        rows.append({"variant": name, **best, "agent_steps_per_second":
                     agent_steps / best["run_seconds"],
                     "us_per_step_per_seed": 1e6 * best["run_seconds"] / (args.seeds * args.steps)})
        print(json.dumps(rows[-1]), flush=True)
    ref = next(r["run_seconds"] for r in rows if r["variant"] == "dp_dgd_grad_noise")
    for r in rows:
        r["ratio_to_dp_dgd_grad_noise"] = r["run_seconds"] / ref
    out = {"workload": {"n_agents": N, "d": D, "m": M, "steps": args.steps, "seeds": args.seeds,
                        "dtype": "float32", "graph": "random_geometric r=0.3 seed=1",
                        "n_edges": int(net.n_edges), "clip": CLIP, "sigma": SIGMA},
           "machine": {"platform": platform.platform(), "processor": platform.processor(),
                       "jax": jax.__version__, "devices": len(jax.devices())},
           "rows": rows}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=1))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
