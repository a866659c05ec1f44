"""Roofline of a jaxdp step: FLOPs and bytes per agent-step (XLA's cost analysis) vs achieved rate.

For each workload of ``bench_suite.py`` and seed count S:

* the per-step cost comes from XLA's cost analysis of one compiled step of all S seeds (the same
  vmapped ``step_once`` the engine scans; XLA counts a loop body once, so the step is compiled
  alone): FLOPs, bytes accessed (operands and results of every fused kernel: the memory traffic if
  nothing stays in cache), transcendentals;
* the achieved time per step comes from ``jaxdp.run`` over K = 500 steps (one scan, compile apart);
* the peaks: on GPUs from the data sheet (FP32 non-tensor FLOP/s and HBM bandwidth by device
  kind); on CPUs measured here — a large float32 GEMM for FLOP/s, a numpy copy of 512 MiB for
  bandwidth (STREAM-copy style, 2 bytes moved per byte copied).

The roofline bound of a step is ``max(FLOPs / peak FLOP/s, bytes / peak bandwidth)``; "fraction"
is that bound over the achieved time (1 = at the roof). The bottleneck named is the roof that binds
(memory when the arithmetic intensity is below the ridge point), or "launch/latency" when a step
takes under 5x the time of an empty jitted call.

Usage:
    python benchmarks/bench_roofline.py                          # writes results/roofline_<backend>.json
    python benchmarks/bench_roofline.py --workloads dpp2 --seeds 4096 65536
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from bench_suite import STEPS, WORKLOADS, machine  # noqa: E402

GPU_PEAKS = {  # FP32 (non-tensor-core) FLOP/s and HBM bytes/s, data sheets (SXM parts)
    "H100": (67e12, 3.35e12),
    "H200": (67e12, 4.8e12),
    "A100": (19.5e12, 2.0e12),
}


def cpu_peaks() -> tuple[float, float]:
    """Measured: float32 GEMM FLOP/s (all local devices' cores via XLA) and copy bandwidth."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    a = jnp.ones((2048, 2048), jnp.float32)
    mm = jax.jit(lambda x: x @ x)
    mm(a).block_until_ready()
    t0 = time.perf_counter()
    for _ in range(5):
        mm(a).block_until_ready()
    flops = 5 * 2 * 2048**3 / (time.perf_counter() - t0)
    src = np.ones(2**27, np.float32)  # 512 MiB
    dst = np.empty_like(src)
    best = min(_timed(lambda: np.copyto(dst, src)) for _ in range(3))
    return flops, 2 * src.nbytes / best


def _timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def peaks() -> tuple[float, float, str]:
    import jax

    kind = jax.devices()[0].device_kind
    for name, (flops, bw) in GPU_PEAKS.items():
        if name in kind:
            return flops, bw, f"{kind} data sheet"
    flops, bw = cpu_peaks()
    return flops, bw, f"{kind} measured (GEMM, copy)"


def empty_call_seconds() -> float:
    import jax
    import jax.numpy as jnp

    f = jax.jit(lambda x: x + 1)
    x = jnp.zeros(())
    f(x).block_until_ready()
    return min(_timed(lambda: f(x).block_until_ready()) for _ in range(50))


def step_cost(alg, prob, net, params, seeds: int) -> dict:
    """XLA's cost analysis of one step of ``seeds`` replicates."""
    import jax
    import jax.numpy as jnp

    from jaxdp.engine._simulate import init_carry, step_once

    keys = jax.vmap(jax.random.key)(jnp.arange(seeds, dtype=jnp.uint32))
    carry = jax.vmap(lambda k: init_carry(alg, prob, net, params, k))(keys)
    step = jax.jit(jax.vmap(lambda k, c, prob, net: step_once(alg, prob, net, params, k, c)[0],
                            in_axes=(0, 0, None, None)))
    cost = step.lower(keys, carry, prob, net).compile().cost_analysis()
    cost = cost[0] if isinstance(cost, list) else cost
    return {"flops": float(cost.get("flops", 0.0)), "bytes": float(cost.get("bytes accessed", 0.0)),
            "transcendentals": float(cost.get("transcendentals", 0.0))}


def measure(workload: str, seeds: int, peak_flops: float, peak_bw: float, empty: float) -> dict:
    from jaxdp.engine import run

    alg, prob, net, params, _, per_step = WORKLOADS[workload]()
    cost = step_cost(alg, prob, net, params, seeds)
    trace = run(alg, prob, net, params, steps=STEPS, seeds=seeds, record_every=STEPS,
                progress=False, chunks=1)
    step_s = trace.meta["run_seconds"] / STEPS
    bound = max(cost["flops"] / peak_flops, cost["bytes"] / peak_bw)
    intensity = cost["flops"] / max(cost["bytes"], 1.0)
    if step_s < 5 * empty:
        bottleneck = "launch/latency"
    else:
        bottleneck = "memory" if intensity < peak_flops / peak_bw else "compute"
    updates = seeds * per_step
    return {"workload": workload, "seeds": seeds, "step_seconds": step_s,
            "compile_seconds": trace.meta["compile_seconds"],
            "flops_per_update": cost["flops"] / updates, "bytes_per_update": cost["bytes"] / updates,
            "transcendentals_per_update": cost["transcendentals"] / updates,
            "intensity_flops_per_byte": intensity,
            "achieved_flops": cost["flops"] / step_s, "achieved_bytes_per_s": cost["bytes"] / step_s,
            "roofline_fraction": bound / step_s, "bottleneck": bottleneck,
            "updates_per_second": updates / step_s,
            "wall_seconds_incl_compile": trace.meta["run_seconds"] + trace.meta["compile_seconds"]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--workloads", nargs="+", default=list(WORKLOADS), choices=list(WORKLOADS))
    ap.add_argument("--seeds", type=int, nargs="+", default=[16, 256, 4096])
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    import jax

    import jaxdp

    jaxdp.use_cpu_cores()
    peak_flops, peak_bw, source = peaks()
    empty = empty_call_seconds()
    print(f"peaks: {peak_flops:.3g} FLOP/s, {peak_bw:.3g} B/s ({source}); "
          f"empty jitted call {empty * 1e6:.1f} µs", flush=True)
    rows = []
    for w in args.workloads:
        for s in args.seeds:
            rows.append(measure(w, s, peak_flops, peak_bw, empty))
            r = rows[-1]
            print(f"{w:>7} S={s:>6}: step {r['step_seconds'] * 1e3:.3f} ms, "
                  f"{r['flops_per_update']:.0f} FLOP and {r['bytes_per_update']:.0f} B per update "
                  f"(AI {r['intensity_flops_per_byte']:.2f}), {r['roofline_fraction']:.1%} of roof, "
                  f"{r['bottleneck']}; total {r['wall_seconds_incl_compile']:.1f} s", flush=True)
    out = Path(args.out or HERE / "results" / f"roofline_{jax.default_backend()}.json")
    out.write_text(json.dumps({"machine": machine(), "peaks": {
        "flops": peak_flops, "bytes_per_s": peak_bw, "source": source,
        "empty_call_seconds": empty}, "steps": STEPS, "rows": rows}, indent=2))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
