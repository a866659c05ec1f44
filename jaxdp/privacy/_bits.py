"""Random ``uint32`` words from a PRNG key: the bits both samplers (float and lattice) turn into
draws. The lowest privacy module: :mod:`jaxdp.privacy._lattice` and
:mod:`jaxdp.privacy._mechanisms` both import it, neither imports the other back."""
from __future__ import annotations

import jax
import jax.numpy as jnp
from jax.extend.random import threefry_2x32

from jaxdp._types import Array, PRNGKey


def random_words(key: PRNGKey, count: int) -> Array:
    """``count`` random ``uint32`` words from ``key``.

    For a threefry key, every 32-bit half of every hash is used (``threefry_2x32`` on the counters
    ``0 .. count-1``); ``jax.random.bits`` under JAX's default partitionable threefry spends a whole
    64-bit hash on each 32-bit word, which made the bits half the cost of a noisy step. Other key
    implementations go through ``jax.random.bits``.

    Randomness assumption: every privacy statement of the library treats these words as
    independent uniform bits (the ideal-randomness assumption of every DP implementation on a
    pseudo-random generator); they are a deterministic function of the key, so a seed reproduces
    its run bit for bit. The lattice sampler spends about one word per Gaussian draw
    (:func:`jaxdp.privacy._lattice.lattice_draws`), never the same counter twice in a call.
    """
    if str(jax.random.key_impl(key)) == "threefry2x32":
        return threefry_2x32(jax.random.key_data(key), jnp.arange(count, dtype=jnp.uint32))
    return jax.random.bits(key, (count,), jnp.uint32)
