"""Random ``uint32`` words from a PRNG key: the bits both samplers (float and lattice) turn into
draws. The lowest privacy module: :mod:`jaxdp.privacy._lattice` and
:mod:`jaxdp.privacy._mechanisms` both import it, neither imports the other back."""
from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxdp._types import Array, PRNGKey

_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
"""Threefry-2x32's rotation constants (Salmon et al., SC 2011, Table 4; Random123, JAX)."""
_PARITY = 0x1BD11BDA
"""Threefish's key-schedule parity constant."""


def threefry2x32(key: tuple[Array, Array], x: tuple[Array, Array]) -> tuple[Array, Array]:
    """Threefry-2x32 with 20 rounds (Salmon et al., "Parallel random numbers: as easy as 1, 2,
    3", SC 2011): the hash JAX's ``threefry_2x32`` computes, word for word, written out as
    elementwise operations so that XLA fuses all 20 rounds into one loop over the counters.
    (JAX lowers its primitive on CPU as a rolled loop of five 4-round steps, each reading and
    writing both words: 2.8x the CPU time for the same bits.)"""
    ks = (key[0], key[1], key[0] ^ key[1] ^ jnp.uint32(_PARITY))
    x0, x1 = x[0] + ks[0], x[1] + ks[1]
    for i in range(5):  # five groups of four rounds, a key injection after each
        for r in _ROTATIONS[i % 2]:
            x0 = x0 + x1
            x1 = x0 ^ ((x1 << jnp.uint32(r)) | (x1 >> jnp.uint32(32 - r)))
        x0 = x0 + ks[(i + 1) % 3]
        x1 = x1 + ks[(i + 2) % 3] + jnp.uint32(i + 1)
    return x0, x1


def random_words(key: PRNGKey, count: int) -> Array:
    """``count`` random ``uint32`` words from ``key``.

    For a threefry key, every 32-bit half of every hash is used: the words of
    ``jax.extend.random.threefry_2x32(key, arange(count))`` (the counters' first half hashed
    with the second, the outputs concatenated; a test checks the identity), computed by
    :func:`threefry2x32`; ``jax.random.bits`` under JAX's default partitionable threefry spends a
    whole 64-bit hash on each 32-bit word, which made the bits half the cost of a noisy step.
    Other key implementations go through ``jax.random.bits``.

    Randomness assumption: every privacy statement of the library treats these words as
    independent uniform bits (the ideal-randomness assumption of every DP implementation on a
    pseudo-random generator); they are a deterministic function of the key, so a seed reproduces
    its run bit for bit. The lattice sampler spends about one word per Gaussian draw
    (:func:`jaxdp.privacy._lattice.lattice_draws`), never the same counter twice in a call.
    """
    if str(jax.random.key_impl(key)) != "threefry2x32":
        return jax.random.bits(key, (count,), jnp.uint32)
    data = jax.random.key_data(key)
    half = -(-count // 2)
    low = jnp.arange(half, dtype=jnp.uint32)
    high = low + jnp.uint32(half)
    if count % 2:  # JAX pads an odd count with one zero counter
        high = jnp.where(low == half - 1, jnp.uint32(0), high)
    y0, y1 = threefry2x32((data[0], data[1]), (low, high))
    # computed once and stored: without the barrier XLA may fuse the 20 rounds into each
    # consumer of the words and compute them several times
    return jax.lax.optimization_barrier(jnp.concatenate([y0, y1])[:count])
