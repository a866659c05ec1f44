"""The ℓ2-logistic gradient of goal 4's workload on CPU: where a noise-free step goes, and whether
another layout of the margins or another XLA option makes it cheaper (issue 38, goal 4).

Workload: N = 50 agents, m = 200 rows of d = 10 features each, float32 (the shapes of
``bench_decentbench.py --loss logistic``, random data), ``S`` seeds of models ``(S, N, d)``.
Each variant is a function ``(S, N, d) -> (S, N, d)`` run 500 times in one ``lax.scan``
(``x ← x − 0.01 g(x)``), on one device, best of 5; the row is milliseconds per step:

* ``shipped``: ``vmap(problem.local_grads)``, what a run computes;
* ``margins``: the forward product ``t = Z x`` alone (reduced to the output's shape);
* ``margins+back``: both products, no slopes (``Zᵀ t``): the slopes ``−y σ(−y t)`` cost the
  difference to the whole gradient;
* ``(S,N,m)`` / ``(N,S,m)`` / ``(N,m,S)``: the whole gradient with the margins in that layout;
* ``per agent``: ``vmap`` over agents of ``(S, d) @ (d, m)`` then ``(S, m) @ (m, d)``;
* ``reduce back``: the backward product as a multiply and a sum over ``m`` (no dot).

Each program is compiled as jaxdp compiles its runs (``jaxdp.compiler_options()``: on CPU without
XLA's YNNPACK fusions), or with ``--xla-defaults`` as XLA would by default; that choice and
``XLA_FLAGS`` are recorded with every row (run the script again under another ``XLA_FLAGS`` to
compare XLA's CPU options, e.g. ``--xla_cpu_prefer_vector_width=512``).

Usage:
    python benchmarks/bench_logistic_grad.py --out benchmarks/results/logistic_grad_cpu.json
"""
from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

from bench_sampler_speed import append_rows, load  # this directory

N, M, D, STEPS = 50, 200, 10, 500


def variants(features, labels, loss):
    """``{name: g}``, each ``g`` mapping models ``(S, N, d)`` to ``(S, N, d)``."""
    import jax
    import jax.numpy as jnp

    from jaxdp._precision import einsum, matmul

    z, y = features, labels
    scale = 1.0 / M

    def slopes(t, yy):
        return loss.sample_slopes(t, yy)

    def forward(x):
        return einsum("nmd,snd->snm", z, x)

    def per_agent(xs, zz, yy):  # (S, d), (m, d), (m,)
        return matmul(slopes(matmul(xs, zz.T), yy), zz) * scale

    def to_models(v):  # (S, N, m) -> (S, N, d): a cheap reduction, so the output is used
        return jnp.broadcast_to(v.sum(-1, keepdims=True), v.shape[:2] + (D,))

    return {
        "margins": lambda x: to_models(forward(x)),
        "margins+back": lambda x: einsum("nmd,snm->snd", z, forward(x)) * scale,
        "(S,N,m)": lambda x: einsum("nmd,snm->snd", z, slopes(forward(x), y)) * scale,
        "(N,S,m)": lambda x: einsum(
            "nmd,nsm->snd", z, slopes(einsum("nmd,snd->nsm", z, x), y[:, None])) * scale,
        "(N,m,S)": lambda x: einsum(
            "nmd,nms->snd", z, slopes(einsum("nmd,snd->nms", z, x), y[..., None])) * scale,
        "per agent": lambda x: jax.vmap(per_agent, in_axes=(1, 0, 0), out_axes=1)(x, z, y),
        "reduce back": lambda x: (slopes(forward(x), y)[..., None] * z).sum(-2) * scale,
    }


def time_step(g, x0, options) -> float:
    """Milliseconds per step of ``x ← x − 0.01 g(x)`` over :data:`STEPS` steps, best of 5,
    compiled with the XLA ``options``."""
    import jax

    def body(x, _):
        return x - 0.01 * g(x), None

    run = jax.jit(lambda x: jax.lax.scan(body, x, None, length=STEPS)[0],
                  compiler_options=options)
    run(x0).block_until_ready()
    best = float("inf")
    for _ in range(5):
        t = time.perf_counter()
        run(x0).block_until_ready()
        best = min(best, time.perf_counter() - t)
    return best / STEPS * 1e3


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[30, 256])
    ap.add_argument("--xla-defaults", action="store_true",
                    help="compile with XLA's default options instead of jaxdp's")
    ap.add_argument("--out", required=True, help="a JSON file; rows are appended")
    args = ap.parse_args(argv)
    import jax
    import jax.numpy as jnp
    import numpy as np

    import jaxdp
    from jaxdp import problems

    options = None if args.xla_defaults else jaxdp.compiler_options()

    rng = np.random.default_rng(0)
    z = rng.normal(size=(N, M, D)).astype(np.float32)
    y = np.where(rng.normal(size=(N, M)) >= 0, 1.0, -1.0).astype(np.float32)
    problem = problems.from_arrays(z, y, loss="logistic", reg={"lam": 0.01})
    rows = []
    for seeds in args.seeds:
        x0 = jnp.asarray(rng.normal(size=(seeds, N, D)).astype(np.float32))
        cases = {"shipped": jax.vmap(problem.local_grads),
                 **variants(jnp.asarray(z), jnp.asarray(y), problem.loss)}
        for name, g in cases.items():
            row = {"seeds": seeds, "variant": name, "ms_per_step": time_step(g, x0, options),
                   "compiler_options": "xla_defaults" if args.xla_defaults else "jaxdp",
                   "xla_flags": os.environ.get("XLA_FLAGS", ""),
                   "load1": load()}
            print(json.dumps(row), flush=True)
            rows.append(row)
    append_rows(Path(args.out), rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
