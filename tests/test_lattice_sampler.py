"""The one-word alias lookup of jaxdp/privacy/_lattice.py (issue 38, goal 4): a draw spends one
32-bit word per table lookup and fresh words only on a tie of the alias uniform's top bits. Its law
must be exactly the table's (the report's η is the table's TV plus the tie-overflow bound)."""
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxdp.privacy import _lattice


def _threshold(table: _lattice.AliasTable) -> list[int]:
    return [(int(h) << 32) | int(lo) for h, lo in zip(table.hi, table.lo, strict=True)]


def _tables():
    zero, high, low = _lattice.laplace_tables()
    return [(_lattice.gaussian_table(), 1), (high, 1), (low, 0), (zero, 0)]


@pytest.mark.parametrize("index", range(4))
def test_the_split_threshold_gives_the_table_law_exactly(index):
    """P(keep | b) = top/2^k + 2^{-k}·(rest/2^64) = threshold/2^64, in exact integers: the top
    ``k`` bits of the uniform decide unless they tie, and a tie compares a fresh 64-bit uniform
    with ``rest``; so the one-word draw has exactly the table's law (no overflow)."""
    table, flags = _tables()[index]
    k = 32 - table.bits - flags
    packed, halves = _lattice._split(table, k)
    top = packed.astype(np.int64) >> table.bits
    alias = packed & ((1 << table.bits) - 1)
    assert np.array_equal(alias, table.alias)
    rest = [(int(h) << 32) | int(lo) for h, lo in halves]
    for t, tp, r in zip(_threshold(table), top.tolist(), rest, strict=True):
        assert r % 2 ** k == 0
        assert tp * 2 ** (64 - k) + r // 2 ** k == t


def _crafted_table(rng, bits=3) -> _lattice.AliasTable:
    m = 2 ** bits
    t = rng.integers(0, 2 ** 63, size=m, dtype=np.uint64) * np.uint64(2) + np.uint64(1)
    return _lattice.AliasTable(bits=bits, hi=(t >> np.uint64(32)).astype(np.uint32),
                               lo=t.astype(np.uint32), alias=rng.permutation(m).astype(np.int32),
                               tv=0.0)


def _reference(table, words, slots, flags):
    """The exact 64-bit alias comparison for each word: ``U = u·2^{64−k} + ⌊V/2^k⌋`` with ``V``
    the group's next unused slot on a tie (none left: the alias)."""
    k, thresholds = 32 - table.bits - flags, _threshold(table)
    out = np.empty(words.shape, np.int64)
    for g in range(words.shape[0]):
        rank = 0
        for e, w in enumerate(words[g].tolist()):
            b, u = w & ((1 << table.bits) - 1), w >> (32 - k)
            t = thresholds[b]
            if u != t >> (64 - k):
                keep = u < t >> (64 - k)
            else:
                keep = False
                if rank < slots.shape[1]:
                    v = (int(slots[g, rank, 0]) << 32) | int(slots[g, rank, 1])
                    keep = u * 2 ** (64 - k) + (v >> k) < t
                rank += 1
            out[g, e] = b if keep else table.alias[b]
    return out


@pytest.mark.parametrize("flags, bits", [(0, 3), (1, 3), (1, 18)])
def test_forced_ties_take_their_own_slot_and_overflow_goes_to_the_alias(flags, bits):
    """A crafted table (8 buckets, or 2^18 as a finer Gaussian table would have) and words: some
    draws tie (u equal to the threshold's top k bits), some groups with more ties than slots; slot
    words at or just below each tie's ``rest``. The lookup must agree with the exact 64-bit
    comparison draw by draw."""
    rng = np.random.default_rng(flags)
    table = _crafted_table(rng, bits)
    k = 32 - table.bits - flags
    packed, halves = _lattice._split(table, k)
    groups, group, slots_n = 6, 64, 3
    bucket = rng.integers(0, 2 ** table.bits, size=(groups, group)).astype(np.uint32)
    u = rng.integers(0, 2 ** k, size=(groups, group)).astype(np.uint32)
    top = packed[bucket] >> np.uint32(table.bits)
    ties = np.zeros((groups, group), bool)
    for g, count in enumerate([0, 1, 2, 3, 5, 20]):  # groups 4 and 5 overflow their 3 slots
        ties[g, rng.choice(group, size=count, replace=False)] = True
    u = np.where(ties, top, u)
    flag = rng.integers(0, 2 ** flags, size=(groups, group)).astype(np.uint32)
    words = bucket | (flag << np.uint32(table.bits)) | (u << np.uint32(32 - k))
    slots = rng.integers(0, 2 ** 32, size=(groups, slots_n, 2), dtype=np.uint64).astype(np.uint32)
    for g in range(groups):  # slot r right at (or one below) the rest of the r-th tie's bucket
        for r, e in enumerate(np.nonzero(ties[g])[0][:slots_n]):
            rest = halves[bucket[g, e]].astype(np.uint64)
            value = ((rest[0] << np.uint64(32)) | rest[1]) - np.uint64(r % 2)
            slots[g, r] = [value >> np.uint64(32), value & np.uint64(0xFFFFFFFF)]
    lookup = jax.jit(lambda w, s: _lattice._lookup(table, w, flags, s))
    got = np.asarray(lookup(jnp.asarray(words), jnp.asarray(slots)))
    want = _reference(table, words, slots, flags)
    assert (ties.sum(1) > 0).any() and (got == want).all(), np.argwhere(got != want)[:5]


def test_tie_slots_meet_the_overflow_bound_and_are_minimal():
    for group, k in [(32, 15), (1024, 15), (1024, 13), (1024, 24), (64, 31)]:
        s = _lattice.tie_slots(group, k)
        # P(more than s ties) <= C(group, s+1) 2^{-k(s+1)} <= TIE_OVERFLOW, and s is the least
        assert math.comb(group, s + 1) * 2.0 ** (-k * (s + 1)) <= _lattice.TIE_OVERFLOW
        assert math.comb(group, s) * 2.0 ** (-k * s) > _lattice.TIE_OVERFLOW
    assert _lattice.sampler_tv("gaussian") == _lattice.gaussian_table().tv + _lattice.TIE_OVERFLOW


@pytest.mark.parametrize("law", ["gaussian", "laplace"])
def test_seeds_reproduce_and_a_batch_draws_what_each_key_draws(law):
    keys = jax.random.split(jax.random.key(3), 3)
    draw = jax.jit(lambda k: _lattice.lattice_draws(k, (7, 10), jnp.float32, law=law))
    one = np.stack([np.asarray(draw(k)) for k in keys])
    again = np.stack([np.asarray(draw(k)) for k in keys])
    batch = np.asarray(jax.vmap(draw)(keys))
    np.testing.assert_array_equal(one, again)
    np.testing.assert_array_equal(one, batch)
    assert not np.array_equal(one[0], one[1])
    assert np.all(one * _lattice.resolution(law) == np.round(one * _lattice.resolution(law)))


def test_the_split_constants_are_computed_once_per_table():
    """``_split``'s host constants (numpy over the table's 2^19 buckets) are computed once per
    ``(table, k)``, not at every trace: the second call returns the same read-only arrays, and
    another table (equal contents, another object) gets its own."""
    rng = np.random.default_rng(3)
    table = _crafted_table(rng)
    packed, halves = _lattice._split(table, 4)
    again = _lattice._split(table, 4)
    assert again[0] is packed and again[1] is halves
    assert not packed.flags.writeable and not halves.flags.writeable
    twin = _lattice.AliasTable(bits=table.bits, hi=table.hi, lo=table.lo, alias=table.alias,
                               tv=table.tv)
    assert _lattice._split(twin, 4)[0] is not packed
    assert np.array_equal(_lattice._split(twin, 4)[0], packed)


@pytest.mark.parametrize("count", [1, 2, 7, 1024, 5311])
def test_random_words_are_jax_threefry_word_for_word(count):
    """The fused Threefry-2x32 gives exactly the words of JAX's ``threefry_2x32`` on the counters
    ``0 .. count-1`` (odd counts padded as JAX pads them), for several keys and under vmap: the
    speed-up changes no seed's stream."""
    from jax.extend.random import threefry_2x32

    from jaxdp.privacy._bits import random_words
    keys = jax.random.split(jax.random.key(11), 3)
    counters = jnp.arange(count, dtype=jnp.uint32)
    want = jax.vmap(lambda k: threefry_2x32(jax.random.key_data(k), counters))(keys)
    got = jax.jit(jax.vmap(lambda k: random_words(k, count)))(keys)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def test_random_words_compile_to_one_loop_free_fusion():
    """The bits are computed without XLA's rolled round loop (JAX lowers its threefry primitive
    on CPU as a ``while`` of five 4-round steps, each writing both words to memory: 2.8x the CPU
    time of the fused rounds): the compiled program of a batch of words has no while loop."""
    from jaxdp.privacy._bits import random_words
    keys = jax.random.split(jax.random.key(0), 4)
    text = jax.jit(jax.vmap(lambda k: random_words(k, 4096))).lower(keys).compile().as_text()
    assert " while(" not in text


def test_tie_masks_round_trip_and_positions_come_in_index_order():
    """The tie masks (bit ``j`` of word ``w`` = element ``jC + w``) hold exactly the ties, and the
    positions scan returns each group's ties in index order (the order the slots are assigned
    in), ``lane = 32`` past the last."""
    rng = np.random.default_rng(7)
    groups, group, count = 5, 256, 12
    tie = rng.random((groups, group)) < np.array([0, 0.004, 0.02, 0.05, 0.2])[:, None]
    masks = _lattice._tie_masks(jnp.asarray(tie))
    bits = (np.asarray(masks)[:, None, :] >> np.arange(32, dtype=np.uint32)[None, :, None]) & 1
    np.testing.assert_array_equal(bits.reshape(groups, group), tie.astype(np.uint32))
    word, lane = (np.asarray(x) for x in _lattice._tie_positions(masks, count))
    for g in range(groups):
        want = np.nonzero(tie[g])[0][:count]
        found = lane[g] < 32
        assert found.sum() == want.size
        np.testing.assert_array_equal(lane[g][found] * (group // 32) + word[g][found], want)
