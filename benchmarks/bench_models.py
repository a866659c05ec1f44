"""Neural networks on the packaged digits (issue 25): test accuracy and wall time of DGD, DP-DGD
and PORTER (per-sample clipping, Poisson minibatches) on ``digits_mlp`` (64–32–10), and the cost
of per-example clipping against a plain minibatch gradient.

    PYTHONPATH=. python benchmarks/bench_models.py --agents 16 --steps 1000 --split dirichlet:0.3

Prints one line per run (ε is each algorithm's own sound report at δ = 1e-5: agent-level for
DP-DGD, record-level for PORTER) and writes nothing.
"""
from __future__ import annotations

import argparse
import time

import jax
import jax.numpy as jnp
import numpy as np

import jaxdp
from jaxdp.algorithms import DGD, DPDGD, PORTER, _sampling
from jaxdp.privacy import calibrate_params
from jaxdp.problems import digits_mlp


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


def clipping_cost(args) -> None:
    problem = digits_mlp(args.agents, split="iid", dtype=jnp.float32)
    X = 0.01 * jax.random.normal(jax.random.key(0), (args.agents, problem.dim), jnp.float32)
    idx = jnp.tile(jnp.arange(args.batch), (args.agents, 1))
    calls = {
        "minibatch gradient, no clipping": lambda X: problem.local_grads(X, idx),
        "per-example clipping": lambda X: _sampling.per_sample_clipped_mean(problem, X, idx, 1.0),
    }
    for name, fn in calls.items():
        fn = jax.jit(fn)
        fn(X).block_until_ready()
        start = time.perf_counter()
        for _ in range(100):
            out = fn(X)
        out.block_until_ready()
        print(f"{name}: {(time.perf_counter() - start) * 10:.3f} ms per call "
              f"(N={args.agents}, b={args.batch}, d={problem.dim}, {jax.devices()[0].platform})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", type=int, default=16)
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--split", default="iid")
    parser.add_argument("--alpha", type=float, default=0.5)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--epsilons", type=float, nargs="*", default=[8.0])
    args = parser.parse_args()
    clipping_cost(args)
    accuracy_runs(args)


if __name__ == "__main__":
    main()
