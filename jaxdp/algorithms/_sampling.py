"""Minibatch and per-sample gradient helpers shared by the stochastic algorithms (LT-ADMM and its
baselines PORTER/PriSMA, the variance-reduced gradient-tracking catalogue).

A problem's shard of agent i has ``M`` rows of which the first m_i are real (``problem.mask``);
f_{i,h} is sample h's loss plus the penalty. ``SAMPLINGS``: ``"fixed"`` draws ``batch_size``
distinct rows (:func:`draw_batches`), ``"poisson"`` keeps every real row with probability b/m_i
(:func:`draw_poisson`).
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jaxdp._precision import einsum
from jaxdp._types import AgentArray, Array, per_agent
from jaxdp.privacy import clip_by_norm
from jaxdp.privacy._sites import mechanism_site

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


def draw_poisson(key, rows: Array, n_rows: Array, batch_size: int,
                 lead: tuple[int, ...] = (), dtype=jnp.float32) -> Array:
    """Poisson minibatches: every real row kept independently with probability q_i = b/m_i.

    Args:
      key: a PRNG key.
      rows: ``(N, M)`` bool, the real rows of each agent's shard.
      n_rows: ``(N,)`` int m_i ≥ ``batch_size``.
      batch_size: b, the expected batch size (static).
      lead: leading batch shape (static).

    Returns:
      ``lead + (N, M)`` inclusion weights in {0, 1} of ``dtype``.
    """
    shape = tuple(lead) + rows.shape
    q = jnp.broadcast_to((batch_size / jnp.asarray(n_rows, dtype))[:, None], shape)
    return poisson_keep(key, q, rows, dtype=dtype)


@mechanism_site("poisson", {"key": "k", "rate": "p", "rows": "v"}, releases=False)
def poisson_keep(key, rate: Array, rows: Array, dtype=jnp.float32) -> Array:
    """Inclusion weights in {0, 1}: each real row (``rows``) kept with probability ``rate``
    (shaped like the weights): the marked sampling site of :func:`draw_poisson`, ``rate`` its
    parameter (:mod:`jaxdp.privacy._sites`)."""
    keep = (jax.random.uniform(key, rate.shape, dtype) < rate) & jnp.broadcast_to(rows, rate.shape)
    return keep.astype(dtype)


def draw_minibatches(key, state, batch_size: int, sampling: str, lead=()) -> Array:
    """``"fixed"``: :func:`draw_batches` row indices; ``"poisson"``: :func:`draw_poisson`
    weights over all rows (``state`` holds ``n_rows`` and ``rows``)."""
    if sampling == "fixed":
        return draw_batches(key, state.n_rows, batch_size, lead)
    return draw_poisson(key, state.rows, state.n_rows, batch_size, lead, state.x.dtype)


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


def check_minibatch(who: str, problem, batch_size: int) -> None:
    """Host: every agent has at least ``batch_size`` real rows, and they come first in its shard.

    Raises:
      ValueError: naming the first agent with too few rows or with padding before a real row.
    """
    mask = np.asarray(problem.mask) > 0
    counts = mask.sum(axis=1)
    small = counts < batch_size
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


__all__ = ["SAMPLINGS", "all_sample_grads", "batch_rows", "check_minibatch", "draw_batches",
           "draw_minibatches", "draw_poisson", "per_sample_clipped_mean", "per_sample_grads",
           "sample_counts"]
