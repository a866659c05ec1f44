r"""Per-example gradients and clipping for model problems (DP-SGD's per-example clipping).

Per-example gradients (:func:`per_example_grads`) are ``vmap(grad)`` over the rows, micro-batched
with ``lax.map`` so that at most ``max_elements`` gradient entries are live at a time, and
:func:`clipped_grad_mean` clips each one to ℓ2 norm C before averaging (Abadi et al., "Deep
Learning with Differential Privacy", CCS 2016) in two exact passes: the rows' norms
(:func:`per_example_sq_norms`; ghost norms for a known ``apply``, :data:`STRUCTURED_CLIPPING`),
then one gradient of the rows' losses weighted by their clipping factors
(:func:`weighted_row_grad`). The program size does not depend on the number of rows.

Shapes: b rows, d parameters.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import jax
import jax.numpy as jnp

from jaxdp._types import Array

if TYPE_CHECKING:  # the loss type only; _model imports this module
    from jaxdp.problems._model import ModelLoss

NORM_PASS_ELEMENTS = 2**14
"""Bound on rows × d of one micro-batch of :func:`per_example_sq_norms`'s generic pass: its
gradients (times the agents and seeds vmapped over it) stay in cache. On the digits MLP (d = 2,410,
16–64 agents, 2 seeds) 4–8 rows per micro-batch ran 7–20× faster than the whole batch of 32–64."""


# --- per-example gradients and clipping (Abadi et al. 2016) --------------------------------------
def micro_batch_rows(n_rows: int, dim: int, max_elements: int) -> int:
    """Rows per micro-batch so that rows × d ≤ ``max_elements`` (at least 1, at most n_rows)."""
    return int(max(1, min(n_rows, max_elements // max(dim, 1))))


def per_example_grads(loss: ModelLoss, x: Array, features: Array, labels: Array,
                      reg) -> Array:
    """(b, d): ∇ of each row's loss (plus the penalty) at x, ``vmap(grad)`` in micro-batches.

    ``lax.map`` with ``batch_size`` runs ``vmap`` over micro-batches of
    :func:`micro_batch_rows` rows in sequence, so XLA's temporaries (activations and
    gradients) stay within ``loss.max_elements`` entries per micro-batch.
    """
    one = jnp.ones((1,), x.dtype)

    def row_grad(row):
        a, y = row
        return loss.grad(x, a[None], y[None], one, reg)

    rows = micro_batch_rows(features.shape[0], x.shape[0], loss.max_elements)
    return jax.lax.map(row_grad, (features, labels), batch_size=rows)


STRUCTURED_CLIPPING: dict[Callable, Callable] = {}
"""Per-example clipping for known ``apply`` functions without per-example gradients, keyed by
``apply``: ``fn(loss, x, features, labels, reg) -> (sq_norms (b,), combine)`` with the rows' exact
‖g_s‖² (penalty included) and ``combine(scale (b,)) -> Σ_s scale_s g_s`` (d,), both from one
forward and backward pass (the library's MLP registers its ghost clipping). Used only with a
named loss, a function of each row alone."""


def _structured(loss: ModelLoss) -> Callable | None:
    """``loss.apply``'s entry of :data:`STRUCTURED_CLIPPING` for a named loss, else ``None``."""
    return STRUCTURED_CLIPPING.get(loss.apply) if isinstance(loss.sample_loss, str) else None


def per_example_sq_norms(loss: ModelLoss, x: Array, features: Array, labels: Array,
                         reg) -> Array:
    """(b,): ‖∇ℓ_s(x)‖² of each row's gradient (penalty included), exact.

    The first pass of :func:`clipped_grad_mean`. A known ``apply`` with a named loss uses its
    entry of :data:`STRUCTURED_CLIPPING`; any other is ``vmap(grad)`` over micro-batches of
    :func:`micro_batch_rows` rows (``lax.map``; at most :data:`NORM_PASS_ELEMENTS` entries), each
    gradient reduced to its squared norm at once, so only (b,) leaves the loop.
    """
    structured = _structured(loss)
    if structured is not None:
        return structured(loss, x, features, labels, reg)[0]
    one = jnp.ones((1,), x.dtype)

    def row_sq_norm(row):
        a, y = row
        g = loss.grad(x, a[None], y[None], one, reg)
        return jnp.sum(g * g)

    bound = min(loss.max_elements, NORM_PASS_ELEMENTS)
    rows = micro_batch_rows(features.shape[0], x.shape[0], bound)
    return jax.lax.map(row_sq_norm, (features, labels), batch_size=rows)


def kept_rows(scale: Array, *rows: Array) -> tuple[Array, ...]:
    """Each (b, ...) array of ``rows`` with the rows where ``scale`` (b,) is 0 set to 0.

    A row weighted 0 (an overflowed gradient, padding, a row Poisson sampling left out) must add
    exactly 0 to a weighted sum, but ``0 · inf`` and ``0 · NaN`` are NaN: replacing its values
    by the fixed public 0 first keeps a sum over the others finite whatever that row holds.
    """
    keep = scale != 0
    return tuple(jnp.where(keep.reshape(keep.shape + (1,) * (r.ndim - 1)), r, 0) for r in rows)


def clip_factor(sq_norms: Array, clip) -> Array:
    """(b,): ``C / max(‖g_s‖, C)`` from the rows' ``‖g_s‖²``, 0 where ``‖g_s‖²`` is not a finite
    float (an extreme row whose gradient or norm overflowed: it adds the fixed public 0, a
    clipped value of norm ≤ C), 1 for ``C = inf`` (no clipping)."""
    c = jnp.asarray(clip, sq_norms.dtype)
    ok = sq_norms < jnp.inf  # False for inf and NaN
    n = jnp.sqrt(jnp.where(ok, jnp.maximum(sq_norms, 0.0), 0.0))
    return jnp.where(jnp.isinf(c), 1.0, jnp.where(ok, c / jnp.maximum(n, c), 0.0))


def weighted_row_grad(loss: ModelLoss, x: Array, features: Array, labels: Array,
                      scale: Array, reg) -> Array:
    """(d,): Σ_s scale_s ∇ℓ_s(x) as one gradient of Σ_s scale_s ℓ_s(x) (penalty in each ℓ_s).

    Each ℓ_s is the loss of row s alone (``vmap`` over the rows, as in
    :func:`per_example_grads`), so the sum is exact for any ``apply``, and reverse mode
    accumulates the weighted rows into one (d,) gradient without forming the (b, d) rows. A row
    of scale 0 is replaced by the all-zero row (:func:`kept_rows`; its gradient there is assumed
    finite, as for any ordinary model), so it adds exactly 0 even when its own loss overflows.
    """
    features, labels = kept_rows(scale, features, labels)
    one = jnp.ones((1,), x.dtype)

    def total(x):
        row_loss = lambda a, y: loss(x, a[None], y[None], one, reg)
        return jnp.sum(scale * jax.vmap(row_loss)(features, labels))

    return jax.grad(total)(x)


def clipped_grad_mean(loss: ModelLoss, x: Array, features: Array, labels: Array, weights: Array,
                      clip, reg, denominator=None) -> Array:
    """(d,): Σ_s w_s · clip(∇ℓ_s(x), C) / denominator — DP-SGD's gradient (Abadi et al. 2016).

    Exact for any ``apply``, in two passes: :func:`per_example_sq_norms` gives each row's norm
    ‖g_s‖ (micro-batched: one micro-batch's per-example gradients live at a time), then
    clip(g_s, C) = g_s · C / max(‖g_s‖, C) (``jaxdp.privacy.clip_by_norm``'s factor) makes the
    sum one reweighted gradient, :func:`weighted_row_grad` — the "norms first, then a weighted
    loss" form of per-example clipping (Goodfellow 2015; Lee & Kifer, PoPETs 2021). Only the (b,)
    norms leave the first pass and the second is one reverse pass, so the (b, d) per-example
    gradients are never clipped, weighted and summed in memory (what dominated the one-pass form:
    ``benchmarks/README.md``). A known ``apply`` (:data:`STRUCTURED_CLIPPING`) takes both from one
    forward and backward pass (ghost clipping; Bu et al., "Differentially private optimization
    on large model at small cost", ICML 2023). A row whose ‖g_s‖² is not a finite float (an
    extreme record: the norm, or the gradient itself, overflowed) gets the factor 0 and adds
    exactly 0 (:func:`clip_factor`, :func:`kept_rows`): the sum stays finite and each row's
    contribution of norm ≤ C whatever the data.

    Args:
      loss: the model loss.
      x: (d,) one agent's model.
      features: (b, ...) rows; labels: (b, ...).
      weights: (b,) per-row weights (1 for a kept row, 0 for padding or a row Poisson sampling
        left out).
      clip: C > 0, or ``inf`` for no clipping (then the generic norm pass is skipped at run time).
      reg: the penalty weights; the penalty's gradient is part of each row's gradient (as in
        ``jaxdp.algorithms._sampling``).
      denominator: what the weighted sum is divided by; default Σ w (use the expected batch size
        under Poisson sampling).
    """
    c = jnp.asarray(clip, x.dtype)
    w = weights.astype(x.dtype)
    factor = lambda sq: clip_factor(sq, c)
    structured = _structured(loss)
    if structured is not None:
        sq_norms, combine = structured(loss, x, features, labels, reg)
        total = combine(w * factor(sq_norms))
    else:
        scale = jax.lax.cond(jnp.isinf(c), lambda _: w, lambda _: w * factor(
            per_example_sq_norms(loss, x, features, labels, reg)), None)
        total = weighted_row_grad(loss, x, features, labels, scale, reg)
    return total / (jnp.sum(weights) if denominator is None else denominator)


__all__ = [
    "NORM_PASS_ELEMENTS",
    "STRUCTURED_CLIPPING",
    "clip_factor",
    "clipped_grad_mean",
    "kept_rows",
    "micro_batch_rows",
    "per_example_grads",
    "per_example_sq_norms",
    "weighted_row_grad",
]
