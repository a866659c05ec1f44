"""Minibatch and per-sample gradient helpers shared by the stochastic algorithms (LT-ADMM and its
baselines PORTER/PriSMA, the variance-reduced gradient-tracking catalogue).

A problem's shard of agent i has ``M`` rows of which the first m_i are real (``problem.mask``);
f_{i,h} is sample h's loss plus the penalty. ``SAMPLINGS``: ``"fixed"`` draws ``batch_size``
distinct rows (:func:`draw_batches`), ``"poisson"`` keeps every real row with probability
q_i = b/n_i (:func:`draw_poisson`), n_i the agent's *declared* record count ``records``.

**The Poisson rate is public.** Under add/remove-one the neighbour has m_i ± 1 real rows; a rate
b/m_i computed from the data would sample every other record at a different rate in the two
worlds, which the subsampling accountant does not model (issue 36: DP-DSGD at b = 8, m = 8 vs 9,
σ = 0.5, 10 steps, exact ε 3.89 against a headline of 2.04 at δ = 1e-2). So the rate is declared,
as Opacus' ``sample_rate`` and jax-privacy's ``num_samples``: :func:`poisson_rate` derives
q_i = b/n_i from the static ``records`` n_i, and the sampler and the accountant both call it. The
run checks the data against the declaration before it starts (:func:`check_records`: at most n_i
real rows per agent, the domain of the guarantee). Without a declaration n_i is the shard
capacity M (``problem.n_samples``, the number of rows every agent's shard is stored at): a public
size of the container, the same for a data set and its neighbour stored at it, never a count of
the real rows; the guarantee then covers data sets of at most M records per agent.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jaxdp._precision import einsum
from jaxdp._types import AgentArray, Array, per_agent
from jaxdp.privacy import clip_by_norm
from jaxdp.privacy.contract import mechanism_site

SAMPLINGS = ("fixed", "poisson")


def sample_counts(problem) -> Array:
    """``(N,)`` int32 m_i, each agent's number of real rows."""
    return jnp.sum(problem.mask > 0, axis=1).astype(jnp.int32)


@mechanism_site("fixed_size", {"key": "k", "n_rows": "p"}, releases=False)
def draw_batches(key, n_rows: Array, batch_size: int, lead: tuple[int, ...] = ()) -> Array:
    """Uniform ``batch_size``-subsets of ``{0..m_i−1}`` for every agent, without replacement.

    Floyd's algorithm (Bentley & Floyd, "Programming pearls: a sample of brilliance", CACM 1987):
    for s = 0..b−1 with j = m_i − b + s, draw t uniform in {0..j} and keep t, or j if t was already
    kept. Every b-subset is equally likely; O(b²) work instead of O(m) per draw, in a
    ``fori_loop`` so that the program's size does not grow with b.

    Args:
      key: a PRNG key.
      n_rows: ``(N,)`` int m_i ≥ ``batch_size``.
      batch_size: b (static).
      lead: leading batch shape (static), e.g. ``(τ,)`` for one subset per local step.

    Returns:
      ``lead + (N, b)`` int32 row indices, distinct along the last axis.
    """
    n_rows = jnp.asarray(n_rows, jnp.int32)
    shape = tuple(lead) + n_rows.shape

    def pick(s, chosen):
        top = jnp.broadcast_to(n_rows - batch_size + s, shape)  # j
        t = jax.random.randint(jax.random.fold_in(key, s), shape, 0, top + 1, dtype=jnp.int32)
        taken = jnp.any(chosen == t[..., None], axis=-1)  # unset slots hold −1
        return chosen.at[..., s].set(jnp.where(taken, top, t))

    return jax.lax.fori_loop(0, batch_size, pick, jnp.full(shape + (batch_size,), -1, jnp.int32))


def check_records(who: str, records, batch_size: int) -> None:
    """The declared record count ``records`` (an int, or one per agent): every n_i ≥ b, so that
    q_i = b/n_i ≤ 1 — a check on public values only.

    Raises:
      ValueError: naming the bad value.
    """
    counts = records if isinstance(records, tuple) else (records,)
    if not counts or not all(isinstance(n, int) and not isinstance(n, bool) and n >= batch_size
                             for n in counts):
        raise ValueError(f"{who}: records must be an int ≥ batch_size = {batch_size} (the public "
                         f"record count n of every agent, q = b/n), or a tuple of one per agent; "
                         f"got {records!r}")


def check_declaration(who: str, sampling: str, records, batch_size: int) -> None:
    """At construction: ``records`` is declared for Poisson batches only (fixed batches draw b of
    the m_i rows under replace-one, where m_i is the same in both worlds), and is valid.

    Raises:
      ValueError: naming the bad value.
    """
    if records is None:
        return
    if sampling != "poisson":
        raise ValueError(f"{who}: records={records!r} declares the Poisson rate b/n, but "
                         f"sampling={sampling!r}; use sampling='poisson' or leave records unset")
    check_records(who, records, batch_size)


RELATIONS_OF_SAMPLING = {"fixed": ("replace_record",),
                         "poisson": ("add_remove_record", "replace_record")}
"""The record-level relations each sampling is accounted under, its default first. Fixed-size
batches offer replace-one only: adding a record changes m_i, hence the rate b/m_i of every other
record, which no subsampling accountant here models. Poisson batches at the public rate b/n_i offer
both: add/remove-one (default), and replace-one (dp-accounting's REPLACE_ONE PLD of the
Poisson-subsampled Gaussian, :mod:`jaxdp.privacy._dp_accounting`)."""


def record_relation(who: str, sampling: str, relation: str | None) -> str:
    """The relation a record-level algorithm reports under: ``relation``, or the sampling's
    default when ``None``, after checking the sampling supports it (public, static values only).

    Raises:
      ValueError: a relation the sampling cannot be accounted under, naming it.
    """
    offered = RELATIONS_OF_SAMPLING[sampling]
    if relation is None:
        return offered[0]
    if relation not in offered:
        raise ValueError(f"{who}: relation={relation!r} is not accounted under sampling="
                         f"{sampling!r}; it offers {offered} (add/remove-one needs Poisson "
                         "batches at a public rate: fixed-size batches change every record's "
                         "rate b/m_i when m_i changes)")
    return relation


def poisson_rate(batch_size: int, records, capacity: int, n_agents: int, xp=np):
    """``(N,)`` q_i = b/n_i, the Poisson inclusion probability of every record of agent i.

    The one derivation of the rate: the sampler (:func:`draw_minibatches`, ``xp=jnp``) and the
    accountant (``privacy_events``) both call it. ``records`` is the declared public count n_i
    (an int, or a tuple of one per agent); ``None`` takes the shard capacity M = ``capacity``
    (static: the width of the problem's arrays, never a count of real rows).
    """
    declared = capacity if records is None else records
    return batch_size / xp.broadcast_to(xp.asarray(declared, float), (n_agents,))


def draw_poisson(key, rows: Array, rate: Array, lead: tuple[int, ...] = (),
                 dtype=jnp.float32) -> Array:
    """Poisson minibatches: every real row of agent i kept independently with probability
    ``rate[i]`` (q_i of :func:`poisson_rate`).

    Args:
      key: a PRNG key.
      rows: ``(N, M)`` bool, the real rows of each agent's shard.
      rate: ``(N,)`` q_i in (0, 1].
      lead: leading batch shape (static).

    Returns:
      ``lead + (N, M)`` inclusion weights in {0, 1} of ``dtype``.
    """
    shape = tuple(lead) + rows.shape
    q = jnp.broadcast_to(jnp.asarray(rate, dtype)[:, None], shape)
    return poisson_keep(key, q, rows, dtype=dtype)


@mechanism_site("poisson", {"key": "k", "rate": "p", "rows": "v"}, releases=False)
def poisson_keep(key, rate: Array, rows: Array, dtype=jnp.float32) -> Array:
    """Inclusion weights in {0, 1}: each real row (``rows``) kept with probability ``rate``
    (shaped like the weights): the marked sampling site of :func:`draw_poisson`, ``rate`` its
    parameter (:mod:`jaxdp.privacy._sites`)."""
    keep = (jax.random.uniform(key, rate.shape, dtype) < rate) & jnp.broadcast_to(rows, rate.shape)
    return keep.astype(dtype)


def draw_minibatches(key, state, batch_size: int, sampling: str, lead=(), records=None) -> Array:
    """``"fixed"``: :func:`draw_batches` row indices; ``"poisson"``: :func:`draw_poisson`
    weights over all rows at q_i = :func:`poisson_rate` of the declared ``records`` or the shard
    capacity (``state`` holds ``n_rows`` and ``rows``)."""
    if sampling == "fixed":
        return draw_batches(key, state.n_rows, batch_size, lead)
    rate = poisson_rate(batch_size, records, state.rows.shape[-1], state.rows.shape[0], jnp)
    return draw_poisson(key, state.rows, rate, lead, state.x.dtype)


def batch_rows(batch: Array, sampling: str) -> tuple[Array, Array | None]:
    """``(row indices (N, B), weights (N, B) or None)`` of a drawn minibatch."""
    if sampling == "fixed":
        return batch, None
    n, m = batch.shape
    return jnp.broadcast_to(jnp.arange(m, dtype=jnp.int32), (n, m)), batch


def per_sample_grads(problem, X: AgentArray, batch_idx: Array) -> Array:
    """``∇f_{i,h}(x_i)`` for the rows h of ``batch_idx`` (N, b): ``(N, b, d)``.

    Each f_{i,h} is the sample's loss plus the penalty (the paper puts the regulariser inside
    f_{i,h}, §VI), computed with ``problem.loss.grad`` on the single row (mask 1).
    """
    one = jnp.ones((1,), X.dtype)

    def row_grad(x, a, y):
        return problem.loss.grad(x, a[None, :], y[None], one, problem.reg)

    def agent(x, feats, labels, idx):
        return jax.vmap(row_grad, in_axes=(None, 0, 0))(x, feats[idx], labels[idx])

    return jax.vmap(agent)(X, problem.features, problem.labels, batch_idx)


def all_sample_grads(problem, X: AgentArray) -> Array:
    """``(N, M, d)``: ∇f_{i,h}(x_i) for every row h of agent i's shard, 0 on padding rows."""
    rows = jnp.broadcast_to(jnp.arange(problem.n_samples, dtype=jnp.int32), problem.mask.shape)
    return per_sample_grads(problem, X, rows) * problem.mask[..., None].astype(X.dtype)


def per_sample_clipped_mean(problem, X: AgentArray, batch: Array, clip,
                            grads: Array | None = None, *, sampling: str = "fixed",
                            batch_size: int | None = None) -> AgentArray:
    """``(1/b) Σ_{h∈B} clip(∇f_{i,h}(x_i), C_i)``: per-sample clipping (Abadi et al. 2016).

    ``batch`` is a drawn minibatch (:func:`draw_minibatches`): ``"fixed"`` row indices (N, b), or
    ``"poisson"`` weights (N, M) whose weighted sum is divided by the expected size
    ``batch_size``. ``clip`` is a scalar or ``(N,)`` (``inf``: no clipping); ``grads`` optionally
    gives the per-sample vectors (at the rows of :func:`batch_rows`) instead of the gradients at X.
    A problem with its own memory-bounded ``clipped_sample_mean`` (a model problem: micro-batched,
    never all (N, b, d) gradients at once) computes it when ``grads`` is not given.
    """
    idx, weights = batch_rows(batch, sampling)
    fused = getattr(problem, "clipped_sample_mean", None)
    if grads is None and fused is not None:
        return fused(X, idx, weights, clip, None if weights is None else batch_size)
    grads = per_sample_grads(problem, X, idx) if grads is None else grads
    c = jnp.broadcast_to(per_agent(clip, grads[..., 0]), grads.shape[:-1])  # (N, b)
    infinite = jnp.isinf(c)
    clipped = jnp.where(infinite[..., None], grads,
                        clip_by_norm(grads, jnp.where(infinite, 1.0, c)))
    if weights is None:
        return jnp.mean(clipped, axis=1)
    return einsum("nb,nbd->nd", weights.astype(clipped.dtype), clipped) / batch_size


def check_minibatch(who: str, problem, batch_size: int, records=None, *,
                    poisson: bool = False) -> None:
    """Host, before the run: the data fit the public sampling declaration, and every agent's
    real rows come first in its shard.

    Fixed batches need at least ``batch_size`` real rows per agent. Poisson rates declared by
    ``records`` n_i need at most n_i real rows: the guarantee is for data sets of at most n_i
    records per agent (add/remove-one within them), and q_i = b/n_i is then the rate in both
    worlds; undeclared, n_i is the shard capacity M, which must be at least b.

    Raises:
      ValueError: naming the first agent with too few or too many rows, or with padding before a
        real row.
    """
    mask = np.asarray(problem.mask) > 0
    counts = mask.sum(axis=1)
    if records is not None:
        check_records(who, records, batch_size)
        declared = np.broadcast_to(np.asarray(records), counts.shape) if not isinstance(
            records, tuple) or len(records) == counts.size else None
        if declared is None:
            raise ValueError(f"{who}: records declares {len(records)} counts for "
                             f"{counts.size} agents")
        over = counts > declared
        if over.any():
            i = int(np.argmax(over))
            raise ValueError(f"{who}: agent {i} has {int(counts[i])} records, more than its "
                             f"declared records = {int(declared[i])} (the public count the "
                             "Poisson rate b/n is computed from)")
    if records is None and poisson and batch_size > mask.shape[1]:
        raise ValueError(f"{who}: batch_size={batch_size} exceeds the shard capacity M = "
                         f"{mask.shape[1]} that the Poisson rate b/M is computed from (declare "
                         "records=n ≥ batch_size, or lower batch_size)")
    small = (counts < batch_size) if not poisson else np.zeros_like(counts, bool)
    if small.any():
        i = int(np.argmax(small))
        raise ValueError(f"{who}: batch_size={batch_size} exceeds the {int(counts[i])} samples of "
                         f"agent {i} (fixed batches are drawn without replacement; Poisson "
                         "batches keep each row with probability b/m_i ≤ 1)")
    prefix = np.arange(mask.shape[1])[None, :] < counts[:, None]
    bad = (mask != prefix).any(axis=1)
    if bad.any():
        raise ValueError(f"{who}: agent {int(np.argmax(bad))}'s real rows must come first in its "
                         "shard (padding last, as problems.from_arrays builds it)")


__all__ = ["RELATIONS_OF_SAMPLING", "SAMPLINGS", "record_relation", "all_sample_grads",
           "batch_rows", "check_minibatch", "check_declaration", "check_records", "draw_batches",
           "draw_minibatches", "draw_poisson", "per_sample_clipped_mean", "per_sample_grads",
           "poisson_rate", "sample_counts"]
