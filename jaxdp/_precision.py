"""The precision policy of every matrix product jaxdp traces: ``PRECISION`` (HIGHEST).

XLA:GPU computes a float32 ``dot_general`` that carries no precision with the backend's default,
which on Ampere and Hopper GPUs may be TF32 (10 mantissa bits). Measured on an H200 against the
CPU: with this policy runs and gradients agree to float32 rounding; with XLA's default a DGD run
through a clip + Gaussian channel drifts by 8.6e-4 (relative) and ``jax.grad`` of DPP²'s final
objective in its parameters is off by 125 %.
The simulations are memory-bound, so full float32 precision costs nothing measurable. Every
product in the network operators (``jaxdp.network``) and in the losses and problem metrics
(``jaxdp.problems``) therefore goes through the helpers below, which pass ``PRECISION`` to XLA;
``tests/test_cuda_lowering.py`` lowers every registered algorithm for CUDA and fails on any float
``dot_general`` without it. On CPU the setting changes nothing (CPU products are always full
precision). Host-side numpy code is unaffected.

The policy is a module constant, not a global JAX flag: importing jaxdp changes no JAX
configuration.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp

PRECISION = jax.lax.Precision.HIGHEST
"""The precision of every traced matrix product in jaxdp (full float32 on every platform)."""


def matmul(a, b):
    """``a @ b`` at ``PRECISION``."""
    return jnp.matmul(a, b, precision=PRECISION)


def tensordot(a, b, axes=1):
    """``jnp.tensordot(a, b, axes)`` at ``PRECISION``."""
    return jnp.tensordot(a, b, axes=axes, precision=PRECISION)


def einsum(subscripts: str, *operands):
    """``jnp.einsum(subscripts, *operands)`` at ``PRECISION``."""
    return jnp.einsum(subscripts, *operands, precision=PRECISION)
