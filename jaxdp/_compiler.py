"""The compiler policy of the programs jaxdp compiles: XLA:CPU without its YNNPACK fusions.

jaxlib 0.10's XLA:CPU hands chains of element-wise operations and reductions to YNNPACK
(fusions of kind ``__ynn_fusion``), and such a fusion can compute a sum of a non-linear function
of another sum wrongly in float32. Measured on jaxlib 0.10.2 (two Sapphire Rapids cores)::

    z = normal((50, 200, 10)); x = 0.1 * normal((4, 50, 10))          # float32
    f = lambda x, z: (tanh((z[None] * x[:, :, None]).sum(-1))[..., None] * z[None]).sum(-2)
    jit(f)(x, z) - f(x, z)     # off by 80 where the values are at most 68

(a margin loss's gradient written with element-wise products instead of ``@``, over four seeds;
``exp``, ``sigmoid``, a square, ``abs`` or ``max(·, 0)`` in place of ``tanh`` are as wrong; with
no function in between, with one to three seeds, or with 5 agents or 20 rows instead of 50 and
200 it is off by rounding only; float64 programs are not fused so). Without those fusions
(``xla_cpu_experimental_ynn_fusion_type`` empty) XLA's own loop fusions compute it to rounding.
The speed moves both ways (``benchmarks/README.md``, "XLA:CPU's YNNPACK fusions"): DGD on the
ℓ2-logistic benchmark with per-message lattice noise at 30 seeds 1.2–1.5× faster, the same at
256, DP-DSGD on an MLP the same at 30 seeds and 6 % slower at 256, a single-seed noise-free
logistic run 1.6× slower (0.06 → 0.10 ms a step), compilation 0.1–0.3 s longer.

jaxdp's own algorithms do not write that pattern (every registered one gives the same trajectory
with and without the fusions, to float32 rounding), but an algorithm prototyped in a notebook
may. So every program the engine compiles (:func:`jaxdp.run`, :func:`jaxdp.sweep`) and the
library's other compiled entry points pass :func:`compiler_options`; a program of your own gets
the same with ``jax.jit(f, compiler_options=jaxdp.compiler_options())``. This is an option of
each compilation, not a global setting: importing jaxdp changes no JAX configuration. A jaxlib
that no longer knows the option (checked once per process) compiles with XLA's defaults.
"""
from __future__ import annotations

import functools

import jax
import numpy as np

CPU_OPTIONS = {"xla_cpu_experimental_ynn_fusion_type": ""}
"""XLA options of every CPU program jaxdp compiles: no YNNPACK fusions (module docstring)."""


@functools.cache
def _cpu_accepts() -> bool:
    """Whether this jaxlib's XLA:CPU knows :data:`CPU_OPTIONS` (one small compile)."""
    x = jax.device_put(np.zeros(1, np.float32), jax.devices("cpu")[0])
    try:
        jax.jit(lambda v: v + 1, compiler_options=CPU_OPTIONS).lower(x).compile()
    except (RuntimeError, ValueError):  # JaxRuntimeError: "No such compile option"
        return False
    return True


def compiler_options(platform: str | None = None) -> dict | None:
    """The XLA options jaxdp compiles with on ``platform`` (default: JAX's default backend).

    On CPU, ``{"xla_cpu_experimental_ynn_fusion_type": ""}``: no YNNPACK fusion, since jaxlib
    0.10's YNNPACK fusions compute a float32 sum of a non-linear function of another sum wrongly.
    Elsewhere, or where this jaxlib no longer has the option, ``None`` (XLA's defaults). Pass the
    result to your own outermost ``jax.jit`` as ``compiler_options=``."""
    platform = platform or jax.default_backend()
    return dict(CPU_OPTIONS) if platform == "cpu" and _cpu_accepts() else None


def jit(fn, **options):
    """``jax.jit(fn, **options)`` with :func:`compiler_options` for the default backend (decided
    when called: the backend is running by then)."""
    return jax.jit(fn, compiler_options=compiler_options(), **options)
