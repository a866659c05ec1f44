"""Seeded partitioners: pooled samples → one index array per agent (iid and non-IID splits).

Every partitioner takes the pooled labels (n,) (or n) and returns ``parts``, a list of N int64
arrays that together hold every index in [0, n) exactly once, none empty; pass them to
``from_model(..., parts=parts)``. The work is vectorized numpy (a loop over classes at most, never
over samples); the same seed gives the same split.

* :func:`iid_split` — a random permutation cut into near-equal shards.
* :func:`dirichlet_split` — for each class, agent shares drawn from Dir(α·1_N) (Hsu, Qi & Brown,
  "Measuring the effects of non-identical data distribution for federated visual
  classification", 2019): small α gives agents few classes, large α approaches iid.
* :func:`shard_split` — sort by label, cut into N·s equal shards, give each agent s random shards
  (McMahan et al., "Communication-efficient learning of deep networks from decentralized data",
  AISTATS 2017, the pathological non-IID MNIST split with s = 2).
* :func:`label_quantity_split` — each agent holds exactly k classes ("#C = k" of Li, Diao, Chen
  & He, "Federated learning on non-IID data silos: an experimental study", ICDE 2022); a class's
  samples are split evenly among its holders.
* :func:`size_skew_split` — iid labels, shard sizes from Dir(α) (quantity skew, Li et al. 2022).

:func:`split` parses a spec such as ``"dirichlet:0.3"``; :func:`label_histogram` and
:func:`histogram_report` give the per-agent label counts.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

Parts = list[np.ndarray]


def _check_agents(n: int, n_agents: int, who: str) -> None:
    if isinstance(n_agents, bool) or not isinstance(n_agents, (int, np.integer)) \
            or not 1 <= n_agents <= n:
        raise ValueError(f"{who}: n_agents must be an int in [1, n = {n}] so that no agent is "
                         f"empty; got {n_agents!r}")


def _as_labels(labels, who: str) -> np.ndarray:
    labels = np.asarray(labels)
    if labels.ndim != 1 or labels.size == 0:
        raise ValueError(f"{who}: labels must be a non-empty (n,) array; got shape {labels.shape}")
    return labels


def _positive(value, name: str, who: str) -> float:
    if not np.isfinite(value) or value <= 0:
        raise ValueError(f"{who}: {name} must be a finite number > 0; got {value!r}")
    return float(value)


def _cut(order: np.ndarray, counts: np.ndarray) -> Parts:
    """Consecutive pieces of ``order`` with the given sizes."""
    return np.split(order, np.cumsum(counts)[:-1])


def _merge(pieces: list[Parts], n_agents: int) -> Parts:
    """Concatenate, per agent, its pieces from every class (sorted indices)."""
    return [np.sort(np.concatenate([p[i] for p in pieces])).astype(np.int64)
            for i in range(n_agents)]


def iid_split(n: int, n_agents: int, *, seed: int) -> Parts:
    """A random permutation of range(n) cut into N shards whose sizes differ by at most 1."""
    _check_agents(n, n_agents, "iid_split")
    order = np.random.default_rng(seed).permutation(n)
    return [np.sort(p).astype(np.int64) for p in np.array_split(order, n_agents)]


def dirichlet_split(labels, n_agents: int, alpha: float, *, seed: int,
                    max_tries: int = 100) -> Parts:
    """Per class c, shares p_c ~ Dir(α·1_N) of its (shuffled) samples (Hsu et al. 2019).

    Draws again (up to ``max_tries`` times, the usual practice) until no agent is empty.

    Raises:
      ValueError: α ≤ 0, a bad ``n_agents``, or an empty agent after ``max_tries`` draws (use a
        larger α or fewer agents).
    """
    labels = _as_labels(labels, "dirichlet_split")
    _check_agents(labels.size, n_agents, "dirichlet_split")
    alpha = _positive(alpha, "alpha", "dirichlet_split")
    rng = np.random.default_rng(seed)
    classes = np.unique(labels)
    for _ in range(max_tries):
        pieces = []
        for c in classes:
            members = rng.permutation(np.flatnonzero(labels == c))
            shares = rng.dirichlet(np.full(n_agents, alpha))
            pieces.append(_cut(members, _rounded_counts(shares, members.size)))
        parts = _merge(pieces, n_agents)
        if min(p.size for p in parts) > 0:
            return parts
    raise ValueError(f"dirichlet_split: alpha={alpha} left an agent empty in {max_tries} draws "
                     f"with {n_agents} agents and {labels.size} samples; raise alpha or use fewer "
                     "agents")


def _rounded_counts(shares: np.ndarray, total: int) -> np.ndarray:
    """Integer counts ∝ ``shares`` summing to ``total`` (largest remainders)."""
    raw = shares * total
    counts = np.floor(raw).astype(np.int64)
    extra = total - counts.sum()
    counts[np.argsort(counts - raw, kind="stable")[:extra]] += 1
    return counts


def shard_split(labels, n_agents: int, shards_per_agent: int = 2, *, seed: int) -> Parts:
    """McMahan et al. 2017: sort by label, cut into N·s near-equal shards, s random ones each.

    Raises:
      ValueError: s < 1 or N·s > n (a shard would be empty).
    """
    labels = _as_labels(labels, "shard_split")
    _check_agents(labels.size, n_agents, "shard_split")
    s = shards_per_agent
    if isinstance(s, bool) or not isinstance(s, (int, np.integer)) or s < 1 \
            or n_agents * s > labels.size:
        raise ValueError(f"shard_split: shards_per_agent must be an int >= 1 with n_agents · s <= "
                         f"n = {labels.size}; got {s!r}")
    rng = np.random.default_rng(seed)
    order = np.argsort(labels, kind="stable")
    shards = np.array_split(order, n_agents * s)
    owner = rng.permutation(n_agents * s).reshape(n_agents, s)
    return [np.sort(np.concatenate([shards[j] for j in row])).astype(np.int64) for row in owner]


def label_quantity_split(labels, n_agents: int, classes_per_agent: int = 2, *,
                         seed: int) -> Parts:
    """Each agent holds exactly k classes (Li et al. 2022, "#C = k"); every class is held.

    Classes are dealt from a seeded permutation, cyclically, k consecutive to each agent (so an
    agent's k classes are distinct and every class has a holder when N·k ≥ K); a class's
    samples are split evenly at random among its holders.

    Raises:
      ValueError: k outside [1, K], N·k < K (a class would have no holder), or a class with fewer
        samples than holders.
    """
    labels = _as_labels(labels, "label_quantity_split")
    _check_agents(labels.size, n_agents, "label_quantity_split")
    classes = np.unique(labels)
    k, K = classes_per_agent, classes.size
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 1 <= k <= K \
            or n_agents * k < K:
        raise ValueError(f"label_quantity_split: classes_per_agent must be an int in [1, {K}] "
                         f"with n_agents · k >= {K} classes; got {k!r} for {n_agents} agents")
    rng = np.random.default_rng(seed)
    dealt = classes[rng.permutation(K)][np.arange(n_agents * k) % K].reshape(n_agents, k)
    pieces = []
    for c in classes:
        holders = np.flatnonzero((dealt == c).any(axis=1))
        members = rng.permutation(np.flatnonzero(labels == c))
        if members.size < holders.size:
            raise ValueError(f"label_quantity_split: class {c!r} has {members.size} samples for "
                             f"{holders.size} holders")
        piece = [np.zeros(0, np.int64)] * n_agents
        for h, chunk in zip(holders, np.array_split(members, holders.size), strict=True):
            piece[h] = chunk
        pieces.append(piece)
    return _merge(pieces, n_agents)


def size_skew_split(n: int, n_agents: int, alpha: float = 1.0, *, seed: int) -> Parts:
    """iid samples, shard sizes 1 + Multinomial(n − N, Dir(α·1_N)) (quantity skew)."""
    _check_agents(n, n_agents, "size_skew_split")
    alpha = _positive(alpha, "alpha", "size_skew_split")
    rng = np.random.default_rng(seed)
    sizes = 1 + rng.multinomial(n - n_agents, rng.dirichlet(np.full(n_agents, alpha)))
    return [np.sort(p).astype(np.int64) for p in _cut(rng.permutation(n), sizes)]


SPLITS: dict[str, Callable[..., Parts]] = {
    "iid": lambda labels, n_agents, *, seed: iid_split(len(labels), n_agents, seed=seed),
    "dirichlet": lambda labels, n_agents, alpha, *, seed: dirichlet_split(
        labels, n_agents, float(alpha), seed=seed),
    "shards": lambda labels, n_agents, s=2, *, seed: shard_split(
        labels, n_agents, int(s), seed=seed),
    "label_quantity": lambda labels, n_agents, k=2, *, seed: label_quantity_split(
        labels, n_agents, int(k), seed=seed),
    "size_skew": lambda labels, n_agents, alpha=1.0, *, seed: size_skew_split(
        len(labels), n_agents, float(alpha), seed=seed),
}
"""Splits by name: ``split(labels, N, "name:arg", seed=...)``."""


def split(labels, n_agents: int, spec: str = "iid", *, seed: int = 0) -> Parts:
    """The split named by ``spec``: ``"iid"``, ``"dirichlet:α"``, ``"shards:s"``,
    ``"label_quantity:k"`` or ``"size_skew:α"`` (the argument is optional where it has a default).

    Raises:
      ValueError: an unknown name or an argument that is not a number (naming it).
    """
    name, _, arg = str(spec).partition(":")
    if name not in SPLITS:
        raise ValueError(f"split: unknown split {spec!r}; use one of {sorted(SPLITS)} "
                         "(e.g. 'dirichlet:0.3')")
    args = ()
    if arg:
        try:
            args = (float(arg),)
        except ValueError:
            raise ValueError(f"split: the argument of {spec!r} must be a number; got {arg!r}") \
                from None
    elif name == "dirichlet":
        raise ValueError("split: 'dirichlet' needs its concentration, e.g. 'dirichlet:0.3'")
    return SPLITS[name](np.asarray(labels), n_agents, *args, seed=seed)


def label_histogram(labels, parts: Parts, n_classes: int | None = None) -> np.ndarray:
    """(N, K) int counts of each class (labels 0..K−1) in each agent's part."""
    labels = np.asarray(labels).astype(np.int64)
    K = int(labels.max()) + 1 if n_classes is None else n_classes
    return np.stack([np.bincount(labels[p], minlength=K) for p in parts])


def histogram_report(labels, parts: Parts, n_classes: int | None = None) -> str:
    """A text table: one row per agent with its size and label counts (and a total row)."""
    hist = label_histogram(labels, parts, n_classes)
    head = "agent  size | " + " ".join(f"{c:>4d}" for c in range(hist.shape[1]))
    rows = [f"{i:>5d} {row.sum():>5d} | " + " ".join(f"{v:>4d}" for v in row)
            for i, row in enumerate(hist)]
    total = hist.sum(axis=0)
    return "\n".join([head, *rows, f"total {total.sum():>5d} | "
                      + " ".join(f"{v:>4d}" for v in total)])


__all__ = ["SPLITS", "dirichlet_split", "histogram_report", "iid_split", "label_histogram",
           "label_quantity_split", "shard_split", "size_skew_split", "split"]
