"""Partitioners (issue 25): determinism given a seed, exact coverage, their statistical shape."""
import numpy as np
import pytest

from jaxdp.problems import (
    SPLITS, dirichlet_split, histogram_report, label_histogram, label_quantity_split, load_digits,
    shard_split, size_skew_split, split,
)

LABELS = np.random.default_rng(0).integers(0, 10, size=2000)
SPECS = ["iid", "dirichlet:0.3", "dirichlet:100", "shards:2", "label_quantity:2", "size_skew:0.5"]


def _covers_exactly(parts, n):
    every = np.concatenate(parts)
    return every.size == n and np.array_equal(np.sort(every), np.arange(n))


@pytest.mark.parametrize("spec", SPECS)
def test_split_is_a_seeded_exact_cover(spec):
    parts = split(LABELS, 20, spec, seed=3)
    assert len(parts) == 20 and min(p.size for p in parts) >= 1
    assert _covers_exactly(parts, LABELS.size)
    again = split(LABELS, 20, spec, seed=3)
    assert all(np.array_equal(a, b) for a, b in zip(parts, again, strict=True))
    other = split(LABELS, 20, spec, seed=4)
    assert any(not np.array_equal(a, b) for a, b in zip(parts, other, strict=True))


def _classes_per_agent(parts):
    return (label_histogram(LABELS, parts, 10) > 0).sum(axis=1)


def test_dirichlet_small_alpha_is_skewed_large_alpha_is_near_iid():
    skewed = label_histogram(LABELS, dirichlet_split(LABELS, 20, 0.1, seed=0), 10)
    flat = label_histogram(LABELS, dirichlet_split(LABELS, 20, 1000.0, seed=0), 10)
    share = lambda h: h.max(axis=1) / h.sum(axis=1)  # noqa: E731 — top class's share per agent
    assert np.median(share(skewed)) > 0.6
    assert share(flat).max() < 0.25
    assert np.median((skewed > 0).sum(axis=1)) <= 4 and (flat > 0).sum(axis=1).min() == 10


def test_shards_give_few_classes_each():
    """McMahan et al. 2017: 2 shards of sorted labels per agent → at most ~2–3 classes each."""
    parts = shard_split(LABELS, 20, 2, seed=0)
    assert _classes_per_agent(parts).max() <= 4
    assert len({p.size for p in parts}) <= 2  # equal shards up to one row


def test_label_quantity_gives_exactly_k_classes_and_every_class_a_holder():
    parts = label_quantity_split(LABELS, 7, 3, seed=1)
    assert (_classes_per_agent(parts) == 3).all()
    assert (label_histogram(LABELS, parts, 10).sum(axis=0) == np.bincount(LABELS)).all()


def test_size_skew_sizes_vary_with_alpha():
    sizes = lambda a: np.array([p.size for p in size_skew_split(2000, 20, a, seed=0)])  # noqa: E731
    assert sizes(0.2).std() > 3 * sizes(100.0).std()
    assert sizes(0.2).min() >= 1


def test_histogram_report_lists_agents_and_totals():
    labels = load_digits()[1]
    parts = split(labels, 4, "iid", seed=0)
    text = histogram_report(labels, parts)
    assert text.splitlines()[0].startswith("agent  size")
    assert text.splitlines()[-1].startswith("total  1797")
    assert len(text.splitlines()) == 6


@pytest.mark.parametrize("call, match", [
    (lambda: split(LABELS, 4, "zipf:2", seed=0), "unknown split 'zipf:2'"),
    (lambda: split(LABELS, 4, "dirichlet", seed=0), "needs its concentration"),
    (lambda: split(LABELS, 4, "dirichlet:abc", seed=0), "must be a number; got 'abc'"),
    (lambda: dirichlet_split(LABELS, 4, -1.0, seed=0), "alpha must be a finite number > 0"),
    (lambda: split(LABELS, 0, "iid", seed=0), "n_agents must be an int in \\[1, n = 2000\\]"),
    (lambda: shard_split(LABELS, 4, 0, seed=0), "shards_per_agent"),
    (lambda: label_quantity_split(LABELS, 3, 2, seed=0), "n_agents · k >= 10"),
    (lambda: dirichlet_split(LABELS[:30], 30, 0.01, seed=0, max_tries=3), "left an agent empty"),
])
def test_bad_input_is_named(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_every_split_is_listed():
    assert set(SPLITS) == {"iid", "dirichlet", "shards", "label_quantity", "size_skew"}
