"""Should the seed axis be folded into the feature axis for mixing? (issue 8, "measure first")

One ``network.mix`` of S seeds' ``(N, d)`` iterates, d = 10, float32, one CPU device, three ways:

* ``vmap``: what the engine does — ``jax.vmap(net.mix)`` over an ``(S, N, d)`` batch (seeds first);
* ``fold``: transpose to ``(N, S·d)``, one product for all seeds, transpose back (what a custom
  batching rule for ``mix`` would do inside the seeds-first engine);
* ``agents_first``: the state already laid out ``(N, S, d)`` — one product, no transposes (what a
  seeds-last engine would get; ``vmap(mix, in_axes=1)`` does not give it: JAX's gather batching
  rule moves the batch axis to the front, ``vmap_axis1`` below).

Each time is the minimum over 30 calls, in ms.

Usage:
    python benchmarks/bench_layout.py      # ~1 min; writes benchmarks/results/layout_cpu.json
"""
from __future__ import annotations

import json
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

from jaxdp import network as jn

HERE = Path(__file__).resolve().parent
D = 10
CASES = [("dense", 50, 0.3), ("edges", 1000, 0.06), ("edges", 10000, 0.018)]


def best_ms(fn, *args, reps=30):
    jax.block_until_ready(fn(*args))
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        jax.block_until_ready(fn(*args))
        times.append(time.perf_counter() - t0)
    return 1e3 * min(times)


def fold(net, X):
    S, N = X.shape[:2]
    Y = jnp.transpose(X, (1, 0, 2)).reshape(N, S * D)
    return jnp.transpose(net.mix(Y).reshape(N, S, D), (1, 0, 2))


def main():
    rows = []
    layouts = {
        "vmap": (jax.jit(lambda net, X: jax.vmap(net.mix)(X)), False),
        "fold": (jax.jit(fold), False),
        "agents_first": (jax.jit(lambda net, X: net.mix(X)), True),
        "vmap_axis1": (jax.jit(lambda net, X: jax.vmap(net.mix, in_axes=1, out_axes=1)(X)), True),
    }
    for backend, n, radius in CASES:
        net = jn.make_network("random_geometric", n, radius=radius, seed=1, backend=backend)
        for seeds in (16, 256):
            X = jnp.asarray(np.random.default_rng(0).standard_normal((seeds, n, D)), jnp.float32)
            row = {"backend": backend, "N": n, "E": net.n_edges, "seeds": seeds}
            for name, (fn, agents_first) in layouts.items():
                row[name] = best_ms(fn, net, jnp.transpose(X, (1, 0, 2)) if agents_first else X)
            rows.append(row)
            print(json.dumps(row), flush=True)
    out = HERE / "results" / "layout_cpu.json"
    out.write_text(json.dumps({"jax": jax.__version__, "backend": jax.default_backend(),
                               "rows": rows}, indent=2))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
