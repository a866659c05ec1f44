"""Decentralized DP-SGD on the packaged digits (issue 25): test accuracy of DP-DSGD and DP-DSGT
at a named ε (record-level, their own sound lattice report, calibrated on σ), beside
non-private DGD, and the per-step cost of each against DGD's full-batch step.

    PYTHONPATH=. python benchmarks/bench_dpsgd.py --agents 16 --steps 1000 --seeds 2 \
        --epsilon 8 --splits iid dirichlet:0.3 --out benchmarks/results/dpsgd_digits_cpu.json

``digits_mlp`` (64–32–10, float32), ring of N agents, Poisson minibatches of expected size
b = min(--batch, smallest shard), C = 1, δ = 1e-5. σ is the noise std on the clipped mean
(noise multiplier σb/C); ``ideal_float_sigma`` is what the real-valued mechanism would need for the
same ε (RDP, no lattice rounding): the gap is the lattice's price at this d and dtype. Writes one
JSON (``--out``) and prints it.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import time

import jax
import jax.numpy as jnp
import numpy as np

import jaxdp
from jaxdp.algorithms import DGD, DPDSGD, DPDSGT
from jaxdp.algorithms.ltadmm.privacy import calibrate_noise
from jaxdp.privacy import calibrate_params
from jaxdp.problems import digits_mlp

DELTA = 1e-5


def _accuracy(alg, problem, net, params, steps: int, seeds: int) -> dict:
    start = time.perf_counter()
    trace = jaxdp.run(alg, problem, net, params, steps=steps, seeds=seeds, progress=False,
                      record_every=steps // 5)
    acc = np.asarray(trace.metrics["test_accuracy"])[:, -1]
    return {"test_accuracy_mean": float(np.mean(acc)), "test_accuracy_per_seed": acc.tolist(),
            "agent_test_accuracy_mean": float(np.mean(
                np.asarray(trace.metrics["agent_test_accuracy_mean"])[:, -1])),
            "wall_s": time.perf_counter() - start}


def _step_ms(alg, problem, net, params, repeats: int = 50) -> float:
    """Milliseconds per jitted step (noise draw included), compile excluded."""
    key = jax.random.key(0)
    state = alg.init(key, problem, net, params)

    @jax.jit
    def step(state, k):
        noise = alg.noise(jax.random.fold_in(key, k), state, params, k)
        return alg.step(state, noise, problem, net, params, k)[0]

    jax.block_until_ready(step(state, 0))
    start = time.perf_counter()
    for k in range(repeats):
        state = step(state, k)
    jax.block_until_ready(state)
    return (time.perf_counter() - start) * 1e3 / repeats


def one_split(args, split: str) -> dict:
    problem = digits_mlp(args.agents, split=split, seed=0, dtype=jnp.float32)
    net = jaxdp.network.build_network(jaxdp.network.ring(args.agents))
    batch = min(args.batch, int(np.min(np.sum(np.asarray(problem.mask) > 0, axis=1))))
    dgd_params = DGD.params_type(alpha=args.alpha)
    out = {"split": split, "batch_size": batch,
           "dgd": {**_accuracy(DGD(), problem, net, dgd_params, args.steps, args.seeds),
                   "step_ms": _step_ms(DGD(), problem, net, dgd_params)}}
    for alg in (DPDSGD(batch_size=batch), DPDSGT(batch_size=batch)):
        params = calibrate_params(alg, problem, net, alg.params_type(alpha=args.alpha, clip=1.0),
                                  args.steps, epsilon=args.epsilon, delta=DELTA)
        alg.validate(params, problem, net)
        eps = float(np.max(alg.privacy(problem, net, params, args.steps, delta=DELTA).epsilon))
        out[alg.name] = {**_accuracy(alg, problem, net, params, args.steps, args.seeds),
                         "step_ms": _step_ms(alg, problem, net, params),
                         "sigma": float(params.sigma), "noise_multiplier": float(params.sigma) * batch,
                         "epsilon": eps}
        ideal = calibrate_noise(dataclasses.replace(alg, sampler="float"), problem, params,
                                args.steps, args.epsilon, "rdp", delta=DELTA)
        out[alg.name]["ideal_float_sigma"] = float(ideal.sigma)  # the real-valued mechanism's
        print(alg.name, split, json.dumps(out[alg.name]), flush=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", type=int, default=16)
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--splits", nargs="*", default=["iid", "dirichlet:0.3"])
    parser.add_argument("--alpha", type=float, default=0.5)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--epsilon", type=float, default=8.0)
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    result = {"config": {**vars(args), "delta": DELTA, "clip": 1.0, "model": "digits_mlp 64-32-10",
                         "network": "ring", "sampling": "poisson", "dtype": "float32",
                         "device": jax.devices()[0].platform},
              "runs": [one_split(args, s) for s in args.splits]}
    text = json.dumps(result, indent=2)
    if args.out:
        with open(args.out, "w") as fh:
            fh.write(text)
    print(text)


if __name__ == "__main__":
    main()
