"""Cost of a channel per step: DGD with and without clip + Gaussian on every message (issue 16).

Workload (as ``bench_dgd.py``): paper 000's problem, N = 50 agents on a random geometric graph
(r = 0.3), d = 10, m = 200, nonconvex logistic loss, float32, 500 steps, 256 seeds.

Rows:
  * ``dgd``: plain DGD. Deterministic: every seed is the same computation, so this is a lower
    bound that XLA does not really batch (see ``bench_dgd.py``).
  * ``dp_dgd_grad_noise``: DGD with float Gaussian noise on each agent's gradient (DP-DGD, clip
    off, ``sampler="float"``): the step without a channel, with one (N, d) draw per step — the
    reference of the ratios; ``[lattice]``: the same with the default lattice sampler.
  * ``dgd+clip+gaussian``: DGD through ``chain(clip(ℓ2), gaussian)`` on the lattice (the default),
    one draw per directed message ((2E, d) per step, three words and two gathers per draw);
    ``[float]``: the float sampler, drawn by its receiver sums ((N, d) draws when the messages are
    not read).
  * ``dgd+clip+gaussian/agg[float]``: per-message float noise simulated by its exact sum at each
    receiver (``aggregate=True``: (N, d) draws, messages not recorded).
  * ``dgd+clip+gaussian/bcast``: one draw per sender ((N, d) per step; one release per step), on
    the lattice and ``[float]``.
  * ``dgd+clip+laplace``: ℓ1 clip + Laplace per directed message, lattice and ``[float]``.
  * ``dgd+top_k``, ``dgd+top_k+ef``: top-3 of 10 coordinates per message (no draws), without and
    with error feedback (a ``ChannelState`` with an (N, d) memory).
  * ``dgd+quantize``: QSGD levels, 4 bits, rounded to nearest (no draws).
  * ``dgd+drop``: each directed message lost with probability 0.1 ((2E,) uniforms per step;
    products on the edge list with the lost weight moved to the diagonal).
  * ``dgd+gilbert_elliott``: bursty losses, a two-state chain per directed edge (p_gb = 0.05,
    p_bg = 0.5; two (2E,) uniforms per step).

Each row: compile and run seconds from ``jaxdp.run`` (best of ``--repeats`` rounds, the rows run
round-robin so that a drifting machine load hits every row alike), agent-steps/s and
the ratios to ``dp_dgd_grad_noise`` (the noisy step without a channel) and to ``dgd`` (the same
algorithm without a channel: the reference of the compression and loss rows).

``--samplers`` times instead the draws of one per-message step alone (seeds × 2E × d normals): the
lattice samplers (discrete Gaussian and Laplace by alias table), the float sampler (inverse
transform on every bit of threefry; Laplace too), the Box–Muller on
``jax.random.uniform`` it replaced, ``jax.random.normal``, and ``jax.random.normal`` on an
``unsafe_rbg`` key; writes ``results/channel_samplers_cpu.json``.

Usage:
    python benchmarks/bench_channels.py            # writes benchmarks/results/channels_cpu.json
    python benchmarks/bench_channels.py --samplers
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

    def channel(broadcast=False, aggregate=False, sampler="lattice"):
        alg = channels.with_channel(algorithms.DGD(), channels.chain(
            channels.clip(CLIP), channels.gaussian(SIGMA, sampler=sampler), broadcast=broadcast,
            aggregate=aggregate))
        return alg, alg.params(algorithms.DGDParams(alpha=ALPHA))

    def through(*transforms):
        alg = channels.with_channel(algorithms.DGD(), channels.chain(*transforms))
        return alg, alg.params(algorithms.DGDParams(alpha=ALPHA))

    grad_noise = algorithms.DPDGDParams(alpha=ALPHA, clip=1e30, sigma=SIGMA / 1e30)
    return {
        "dgd": (algorithms.DGD(), algorithms.DGDParams(alpha=ALPHA)),
        "dp_dgd_grad_noise": (algorithms.DPDGD(sampler="float"), grad_noise),
        "dp_dgd_grad_noise[lattice]": (algorithms.DPDGD(), grad_noise),
        "dgd+clip+gaussian": channel(False),
        "dgd+clip+gaussian[float]": channel(False, sampler="float"),
        "dgd+clip+gaussian/agg[float]": channel(aggregate=True, sampler="float"),
        "dgd+clip+gaussian/bcast": channel(broadcast=True),
        "dgd+clip+gaussian/bcast[float]": channel(broadcast=True, sampler="float"),
        "dgd+clip+laplace": through(channels.clip(CLIP, norm="l1"), channels.laplace(SIGMA)),
        "dgd+clip+laplace[float]": through(channels.clip(CLIP, norm="l1"),
                                           channels.laplace(SIGMA, sampler="float")),
        "dgd+top_k": through(channels.top_k(3)),
        "dgd+top_k+ef": through(channels.top_k(3, error_feedback=True)),
        "dgd+quantize": through(channels.quantize(4)),
        "dgd+drop": through(channels.drop(0.1)),
        "dgd+gilbert_elliott": through(channels.gilbert_elliott(0.05, 0.5)),
    }


def samplers(seeds: int, rows: int, d: int, repeats: int = 5, calls: int = 50) -> dict:
    """Milliseconds per batch of ``(seeds, rows, d)`` float32 normals, best of ``repeats``."""
    import time

    import jax
    import jax.numpy as jnp

    from jaxdp.privacy.samplers import gaussian, laplace, lattice_draws

    def rbg_key(k):
        return jax.random.wrap_key_data(jax.random.bits(k, (4,), jnp.uint32), impl="unsafe_rbg")

    def box_muller(k):  # the library's sampler until it took every bit of threefry
        u = jax.random.uniform(k, (2, rows * d // 2), jnp.float32, minval=jnp.finfo("float32").tiny)
        radius, angle = jnp.sqrt(-2.0 * jnp.log(u[0])), 2.0 * jnp.pi * u[1]
        return jnp.concatenate([radius * jnp.cos(angle), radius * jnp.sin(angle)]).reshape(rows, d)

    fns = {"lattice_gaussian": lambda k: lattice_draws(k, (rows, d), jnp.float32),
           "lattice_laplace": lambda k: lattice_draws(k, (rows, d), jnp.float32, law="laplace"),
           "float_laplace": lambda k: laplace(k, (rows, d), jnp.float32),
           "library_inverse_transform": lambda k: gaussian(k, (rows, d), jnp.float32),
           "threefry_box_muller": box_muller,
           "jax_random_normal": lambda k: jax.random.normal(k, (rows, d), jnp.float32),
           "unsafe_rbg_normal": lambda k: jax.random.normal(rbg_key(k), (rows, d), jnp.float32)}
    keys = jax.random.split(jax.random.key(0), seeds)
    out = {}
    for name, fn in fns.items():
        f = jax.jit(jax.vmap(fn))
        f(keys).block_until_ready()
        best = float("inf")
        for _ in range(repeats):
            t = time.perf_counter()
            for _ in range(calls):
                z = f(keys)
            z.block_until_ready()
            best = min(best, (time.perf_counter() - t) / calls)
        out[name] = 1e3 * best
        print(f"{name}: {out[name]:.2f} ms", flush=True)
    return out


def time_rows(chosen: dict, prob, net, steps: int, seeds: int, repeats: int) -> list[dict]:
    """Best-of-``repeats`` compile and run seconds of every ``{row: (algorithm, params)}`` (rows
    round-robin, so that a drifting machine load hits every row alike), printed as they come."""
    import jaxdp

    best = {}
    for _ in range(repeats):
        for name, (alg, params) in chosen.items():
            meta = jaxdp.run(alg, prob, net, params, steps=steps, seeds=seeds,
                             record_every=steps, progress=False, chunks=1).meta
            if name not in best or meta["run_seconds"] < best[name]["run_seconds"]:
                best[name] = {"run_seconds": meta["run_seconds"],
                              "compile_seconds": meta["compile_seconds"]}
    rows = []
    for name, b in best.items():
        rows.append({"variant": name, **b, "agent_steps_per_second":
                     seeds * steps * net.n_agents / b["run_seconds"],
                     "us_per_step_per_seed": 1e6 * b["run_seconds"] / (seeds * steps)})
        print(json.dumps(rows[-1]), flush=True)
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=256)
    ap.add_argument("--steps", type=int, default=500)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", default=str(HERE / "results" / "channels_cpu.json"))
    ap.add_argument("--samplers", action="store_true", help="time the per-message draws only")
    ap.add_argument("--only", nargs="*", help="run these rows only (dgd and dp_dgd_grad_noise "
                    "always run: they are the references)")
    args = ap.parse_args()

    import jax

    import jaxdp
    from jaxdp import network, problems

    jaxdp.use_cpu_cores()
    net = network.make_network("random_geometric", N, radius=0.3, seed=1)
    if args.samplers:
        out = {"shape": [args.seeds, 2 * int(net.n_edges), D], "dtype": "float32",
               "ms_per_batch": samplers(args.seeds, 2 * int(net.n_edges), D),
               "machine": {"platform": platform.platform(), "jax": jax.__version__,
                           "device": jax.devices()[0].device_kind}}
        path = Path(args.out).with_name(f"channel_samplers_{jax.default_backend()}.json")
        path.write_text(json.dumps(out, indent=1))
        print(f"wrote {path}")
        return
    prob = problems.nonconvex_logistic(n_agents=N, m=M, d=D, seed=0)
    chosen = {name: v for name, v in variants().items()
              if not args.only or name in {"dgd", "dp_dgd_grad_noise", *args.only}}
    rows = time_rows(chosen, prob, net, args.steps, args.seeds, args.repeats)
    refs = {v: next(r["run_seconds"] for r in rows if r["variant"] == v)
            for v in ("dp_dgd_grad_noise", "dgd")}
    for r in rows:
        for v, ref in refs.items():
            r[f"ratio_to_{v}"] = r["run_seconds"] / ref
    out = {"workload": {"n_agents": N, "d": D, "m": M, "steps": args.steps, "seeds": args.seeds,
                        "dtype": "float32", "graph": "random_geometric r=0.3 seed=1",
                        "n_edges": int(net.n_edges), "clip": CLIP, "sigma": SIGMA,
                        "backend": net.backend},
           "machine": {"platform": platform.platform(), "processor": platform.processor(),
                       "jax": jax.__version__, "devices": len(jax.devices())},
           "rows": rows}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=1))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
