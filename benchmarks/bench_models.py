"""Neural networks on the packaged digits (issue 25): test accuracy and wall time of DGD, DP-DGD
and PORTER (per-sample clipping, Poisson minibatches) on ``digits_mlp`` (64–32–10), and the cost
of per-example clipping against a plain minibatch gradient for the MLP (ghost clipping), the MLP
on the generic path and the small CNN (``digits_cnn``, ghost clipping and generic path).

    PYTHONPATH=. python benchmarks/bench_models.py --agents 16 --steps 1000 --split dirichlet:0.3
    PYTHONPATH=. python benchmarks/bench_models.py --clip-only --models mlp cnn \
        --out benchmarks/results/clipping_cpu.json

Prints one line per run (ε is each algorithm's own sound report at δ = 1e-5: agent-level for
DP-DGD, record-level for PORTER); ``--out`` writes the clipping rows to a JSON file.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np

import jaxdp
from jaxdp.algorithms import DGD, DPDGD, PORTER, _sampling
from jaxdp.privacy import calibrate_params
from jaxdp.problems import cnn_apply, digits_cnn, digits_mlp, mlp_apply


def _network(n: int):
    return jaxdp.network.build_network(jaxdp.network.ring(n))


def _run(alg, problem, net, params, steps: int, seeds: int) -> dict:
    start = time.perf_counter()
    trace = jaxdp.run(alg, problem, net, params, steps=steps, seeds=seeds, progress=False,
                      record_every=steps // 5)
    last = {k: float(np.mean(np.asarray(v)[:, -1])) for k, v in trace.metrics.items()}
    return {**last, "wall_s": time.perf_counter() - start}


def _line(label: str, result: dict, epsilon=None) -> str:
    eps = "" if epsilon is None else f" ε={epsilon:.3g}"
    return (f"{label}{eps}: test_accuracy {result['test_accuracy']:.3f}, agent mean "
            f"{result['agent_test_accuracy_mean']:.3f}, test_loss {result['test_loss']:.3f}, "
            f"wall {result['wall_s']:.1f} s (compile included)")


def accuracy_runs(args) -> None:
    problem = digits_mlp(args.agents, split=args.split, seed=0, dtype=jnp.float32)
    net = _network(args.agents)
    print(_line(f"dgd α={args.alpha}", _run(DGD(), problem, net,
                                            DGD.params_type(alpha=args.alpha), args.steps,
                                            args.seeds)))
    smallest = int(np.min(np.sum(np.asarray(problem.mask), axis=1)))
    batch = min(args.batch, smallest)  # Poisson rate b/m_i <= 1 on every agent
    for epsilon in args.epsilons:
        for alg, params in ((DPDGD(), DPDGD.params_type(alpha=args.alpha, clip=1.0)),
                            (PORTER(batch_size=batch, sampling="poisson"),
                             PORTER.params_type(eta=args.alpha, clip=1.0))):
            params = calibrate_params(alg, problem, net, params, args.steps, epsilon=epsilon,
                                      delta=1e-5)
            alg.validate(params, problem, net)
            label = alg.name + (f" b={batch}" if alg.name == "porter" else "")
            print(_line(label, _run(alg, problem, net, params, args.steps, args.seeds), epsilon))


def _generic_mlp_apply(params, x):
    """``mlp_apply`` under another name: not in STRUCTURED_CLIPPING, so the generic path."""
    return mlp_apply(params, x)


def _generic_cnn_apply(params, x):
    """``cnn_apply`` under another name: not in STRUCTURED_CLIPPING, so the generic path."""
    return cnn_apply(params, x)


def _on_generic_path(problem, apply):
    """``problem`` with ``apply`` in place of its model function (same parameters, same data)."""
    return dataclasses.replace(problem, loss=dataclasses.replace(problem.loss, apply=apply))


MODELS = {"mlp": lambda n: digits_mlp(n, split="iid", dtype=jnp.float32),
          "mlp_generic": lambda n: _on_generic_path(
              digits_mlp(n, split="iid", dtype=jnp.float32), _generic_mlp_apply),
          "cnn": lambda n: digits_cnn(n, split="iid", dtype=jnp.float32),
          "cnn_generic": lambda n: _on_generic_path(
              digits_cnn(n, split="iid", dtype=jnp.float32), _generic_cnn_apply)}
"""The clipping benchmark's models: the MLP and the CNN with ghost clipping, and each on the
generic path (exact norms by micro-batched vmap(grad))."""


def _one_pass(problem, X, idx):
    """The previous form: every per-example gradient (N, b, d), clipped, summed (Abadi et al.)."""
    grads = _sampling.per_sample_grads(problem, X, idx)
    return _sampling.per_sample_clipped_mean(problem, X, idx, 1.0, grads)


def _step_fns(problem, idx):
    """The unclipped step and the clipped forms (each jitted, vmapped over seeds)."""
    over_seeds = lambda f: jax.jit(jax.vmap(f))
    unclipped = over_seeds(lambda X: problem.local_grads(X, idx))
    return unclipped, {
        "two_pass": over_seeds(lambda X: _sampling.per_sample_clipped_mean(problem, X, idx, 1.0)),
        "one_pass": over_seeds(lambda X: _one_pass(problem, X, idx))}


def _median_ms(fns: dict, X, reps: int, calls: int) -> dict:
    """Median ms per call of each jitted fn, the variants interleaved (A B C A B C ...)."""
    for fn in fns.values():
        fn(X).block_until_ready()
    times = {name: [] for name in fns}
    for _ in range(reps):
        for name, fn in fns.items():
            start = time.perf_counter()
            for _ in range(calls):
                out = fn(X)
            out.block_until_ready()
            times[name].append((time.perf_counter() - start) / calls * 1e3)
    return {name: float(np.median(t)) for name, t in times.items()}


def clipping_cost(args) -> list[dict]:
    """Clipped / unclipped step time, seeds vmapped as in ``jaxdp.run`` (C = 1, fixed batches).

    Each clipped form is timed interleaved with its own unclipped baseline (the one-pass form's
    large temporaries would otherwise slow the calls timed after them)."""
    rows = []
    for model in args.models:
        for n in args.clip_agents:
            problem = MODELS[model](n)
            X = 0.01 * jax.random.normal(jax.random.key(0), (args.seeds, n, problem.dim))
            for b in args.batches:
                idx = jnp.tile(jnp.arange(b), (n, 1))
                unclipped, variants = _step_fns(problem, idx)
                ms, row = {}, {"model": model, "agents": n, "batch": b, "seeds": args.seeds,
                               "d": problem.dim}
                for name, fn in variants.items():  # each against its own interleaved baseline
                    pair = _median_ms({"unclipped": unclipped, name: fn}, X, args.reps, args.calls)
                    ms[name], ms[f"unclipped_vs_{name}"] = pair[name], pair["unclipped"]
                    row[f"ratio_{name}"] = pair[name] / pair["unclipped"]
                ms["unclipped"] = ms["unclipped_vs_two_pass"]
                row["ms"] = ms
                print(f"{model} N={n} b={b} d={problem.dim}: unclipped {ms['unclipped']:.3f} ms,"
                      f" one-pass {ms['one_pass']:.3f} ms ({row['ratio_one_pass']:.1f}×), "
                      f"two-pass {ms['two_pass']:.3f} ms ({row['ratio_two_pass']:.1f}×)",
                      flush=True)
                rows.append(row)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", type=int, default=16)
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--split", default="iid")
    parser.add_argument("--alpha", type=float, default=0.5)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--epsilons", type=float, nargs="*", default=[8.0])
    parser.add_argument("--models", nargs="*", default=["mlp", "cnn"], choices=sorted(MODELS))
    parser.add_argument("--clip-agents", type=int, nargs="*", default=[16, 64])
    parser.add_argument("--batches", type=int, nargs="*", default=[8, 32, 64])
    parser.add_argument("--reps", type=int, default=7)
    parser.add_argument("--calls", type=int, default=10)
    parser.add_argument("--clip-only", action="store_true", help="only the clipping cost")
    parser.add_argument("--out", help="write the clipping rows to this JSON file")
    args = parser.parse_args()
    rows = clipping_cost(args)
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"device": jax.devices()[0].platform, "jax": jax.__version__,
                       "command": " ".join(sys.argv), "rows": rows}, f, indent=1)
    if not args.clip_only:
        accuracy_runs(args)


if __name__ == "__main__":
    main()
