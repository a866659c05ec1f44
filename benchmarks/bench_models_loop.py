"""DP-DSGD on the digits MLP: ``jaxdp.run`` (agents stacked, seeds vmapped) against a per-agent
loop written with JAX (issue 25: "... and against jaxdp's own loop over agents").

One command (repository root)::

    PYTHONPATH=. python benchmarks/bench_models_loop.py    # ~2 min on 2 cores

Workload (``bench_decentbench_models.py``'s): ``digits_mlp(16, split="iid")`` (64–32–10 MLP,
float32), a ring with Metropolis W, b = 32 distinct rows per agent and step, C = 1, σ = 0.02,
α = 0.5, 100 steps. The loop is what a researcher writes by hand with JAX: for each step and each
agent, one jitted call returning that agent's DP-SGD gradient (the library's exact
:func:`~jaxdp.problems.clipped_grad_mean` on b rows drawn without replacement, plus float
Gaussian noise), then the mixing x ← W x − α g̃ in numpy. Both run the same per-example
clipping code; the loop draws float noise (cheaper than the lattice draws ``jaxdp.run`` makes),
so the ratio is if anything in the loop's favour. Compile time is excluded on both sides (the
loop's first step is a warm-up). Writes ``results/models_loop_cpu.json``.
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import bench_decentbench as headline  # this directory: the timed jaxdp.run
import bench_decentbench_models as models
import jax
import jax.numpy as jnp
import numpy as np

OUT = headline.HERE / "results" / "models_loop_cpu.json"


def loop_rate(steps: int) -> dict:
    """Agent-steps/s of the per-agent loop (one seed), after a warm-up step."""
    from jaxdp.problems import clipped_grad_mean

    prob, net = models.problem_and_network()
    W = np.asarray(net.W, np.float32)
    n, b = W.shape[0], models.WORK["batch"]
    clip, sigma, alpha = (models.WORK[k] for k in ("clip", "sigma", "alpha"))
    features, labels = np.asarray(prob.features), np.asarray(prob.labels)
    rows = [np.flatnonzero(np.asarray(prob.mask)[i]) for i in range(n)]

    @jax.jit
    def agent_grad(x, feats, labs, idx, key):
        pick, noise = jax.random.split(key)
        chosen = jax.random.choice(pick, idx, (b,), replace=False)
        g = clipped_grad_mean(prob.loss, x, feats[chosen], labs[chosen], jnp.ones(b, x.dtype),
                              clip, prob.reg)
        return g + sigma * clip / b * jax.random.normal(noise, x.shape, x.dtype)

    X = np.zeros((n, prob.dim), np.float32)
    key = jax.random.key(0)

    def one_step(X, k):
        keys = jax.random.split(jax.random.fold_in(key, k), n)
        G = np.stack([np.asarray(agent_grad(X[i], features[i], labels[i], rows[i], keys[i]))
                      for i in range(n)])
        return W @ X - alpha * G

    X = one_step(X, 0)  # warm-up: compiles agent_grad (one shape for every agent)
    t0 = time.perf_counter()
    for k in range(1, steps + 1):
        X = one_step(X, k)
    seconds = time.perf_counter() - t0
    acc = float(prob.test_loss_and_accuracy(jnp.asarray(X.mean(0)))[1])
    return {"impl": "per-agent loop (JAX, jitted per agent)", "trials": 1, "iterations": steps,
            "run_seconds": seconds, "agent_iterations_per_second": n * steps / seconds,
            "test_accuracy": acc}


def stacked_rate(steps: int, trials: int) -> dict:
    """Agent-steps/s of ``jaxdp.run`` with ``trials`` vmapped seeds (compile excluded), in a
    process of its own (``bench_decentbench_models.py --cell``: every core a device)."""
    row = headline.run_jaxdp("-", "dp_dsgd", trials, steps, 1, script=models.__file__)
    return {**row, "impl": "jaxdp.run"}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--trials", type=int, nargs="+", default=[1, 30])
    ap.add_argument("--out", default=str(OUT))
    args = ap.parse_args(argv)
    load = {"before": headline.uptime()}
    rows = [loop_rate(args.steps)] + [stacked_rate(args.steps, t) for t in args.trials]
    load["after"] = headline.uptime()
    base = rows[0]["agent_iterations_per_second"]
    for r in rows:
        r["speedup_vs_loop"] = r["agent_iterations_per_second"] / base
        print(f"{r['impl']:>40} trials={r['trials']:>3}: "
              f"{r['agent_iterations_per_second']:.3e} agent-steps/s "
              f"({r['speedup_vs_loop']:.1f}x the loop)", flush=True)
    Path(args.out).write_text(json.dumps({"machine": {"jax": jax.__version__, "uptime": load},
                                          "workload": {**models.WORK, "steps": args.steps},
                                          "rows": rows}, indent=1, default=float) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
