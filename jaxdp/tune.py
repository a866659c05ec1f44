"""Differentiable hyperparameter tuning: ``jax.grad`` through whole private simulations.

The utility (a final metric averaged over seeds) is differentiated with respect to chosen Params
fields — step sizes, penalties, clipping norms, noise schedules — and optimized with optax. Fields
are optimized in log space, so they stay positive (``unit_fields`` in logit space: they stay in
(0, 1)). A ``calibrate(params) -> params`` function, written with JAX closed-form accountants (e.g.
:func:`jaxdp.privacy.closed_forms.gaussian_sigma_for_zcdp`), can reset the noise scale from the
other fields inside the loop, so every iterate spends exactly the same (ε, δ) while utility
improves. ``log_utility`` minimizes ln of the mean instead, for metrics that span decades.

Example (DP-DGD at a fixed (ε, δ): only α and C are free, σ follows the budget)::

    result = tune(algorithms.DPDGD(), problem, net, params, fields=("alpha", "clip"),
                  steps=300, seeds=16, calibrate=budget, iterations=40)
    result.params, result.held_out   # tuned Params; utility before/after on unseen seeds
"""
from __future__ import annotations

import dataclasses
from typing import Callable, Sequence

import jax
import jax.numpy as jnp
import numpy as np
import optax

from jaxdp._compiler import jit
from jaxdp.engine import final_metrics


@dataclasses.dataclass
class TuneResult:
    """Outcome of :func:`tune`.

    Attributes:
      params: the tuned Params (after ``calibrate``).
      history: one dict per iteration: ``utility`` (training seeds) and the free fields' values.
      held_out: utility mean and 95% CI half-width over the held-out seeds whose runs stayed
        finite, before and after: ``{"initial": (mean, half), "tuned": (mean, half)}``, and
        ``"diverged": {"initial": n, "tuned": n}``, the held-out seeds left out of those means.
      stopped: why the loop ended early (``None`` when it ran every iteration): a non-finite
        utility or gradient at the next iterate; ``params`` is then the last finite iterate.
    """

    params: object
    history: list
    held_out: dict
    stopped: str | None = None


def seed_keys(seeds: Sequence[int]) -> jax.Array:
    """Keys for integer seeds, shape ``(S,)``."""
    return jax.vmap(jax.random.key)(jnp.asarray(list(seeds), jnp.uint32))


def mean_utility(algorithm, problem, network, params, keys, *, steps: int, utility: str,
                 metrics=None, checkpoint_every: int | None = None):
    """Mean over ``keys`` of the final ``utility`` metric: the differentiable objective."""
    def one(key):
        out = final_metrics(algorithm, problem, network, params, key, steps=steps,
                            metrics=metrics, checkpoint_every=checkpoint_every)
        return out[utility]
    return jnp.mean(jax.vmap(one)(keys))


def tune(algorithm, problem, network, params, *, fields: Sequence[str], steps: int,
         utility: str = "objective", seeds: int = 16, held_out_seeds: int = 64,
         calibrate: Callable | None = None, optimizer=None, iterations: int = 50,
         metrics=None, checkpoint_every: int | None = None,
         unit_fields: Sequence[str] = (), log_utility: bool = False) -> TuneResult:
    """Minimize the mean final ``utility`` over ``seeds`` with respect to ``fields`` (log space).

    Args:
      algorithm, problem, network, params: as for :func:`jaxdp.run`; ``params`` is the start.
      fields: names of positive scalar Params fields to tune.
      steps: iterations of each simulated run.
      utility: the metric to minimize (a key of the metric dict).
      seeds: training seeds ``0..seeds-1`` (common random numbers across iterations).
      held_out_seeds: evaluation seeds, disjoint from the training ones.
      calibrate: ``fn(params) -> params`` applied before every evaluation (fixes the budget).
      optimizer: an optax optimizer on the log-fields (default ``optax.adam(0.05)``).
      iterations: optimizer steps.
      checkpoint_every: bound gradient memory for long runs (see ``final_metrics``).
      unit_fields: those of ``fields`` that must stay in (0, 1) (e.g. a decay rate): tuned in
        logit space instead of log space.
      log_utility: minimize ln of the mean utility instead (the same minimizer; gradients free
        of the utility's scale, for metrics far below Adam's ε or spanning decades).

    Raises:
      ValueError: an unknown field, a non-positive start value, or a unit field not in (0, 1).
    """
    for f in fields:
        if f not in params.keys():
            raise ValueError(f"tune: {f!r} is not a field of {type(params).__name__}")
        if np.any(np.asarray(params[f]) <= 0):
            raise ValueError(f"tune: {type(params).__name__}.{f} must be > 0 to tune it in log "
                             f"space; got {params[f]}")
    for f in unit_fields:
        if f not in fields or np.any(np.asarray(params[f]) >= 1):
            raise ValueError(f"tune: unit field {f!r} must be one of the tuned fields {fields} "
                             f"and lie in (0, 1); got {params[f] if f in params.keys() else None}")
    calibrate = calibrate or (lambda p: p)
    to_value = {f: jax.nn.sigmoid if f in unit_fields else jnp.exp for f in fields}
    to_params = lambda theta: calibrate(params.replace(  # noqa: E731
        **{f: to_value[f](v) for f, v in theta.items()}))
    objective = lambda p, keys: mean_utility(  # noqa: E731
        algorithm, problem, network, p, keys, steps=steps, utility=utility, metrics=metrics,
        checkpoint_every=checkpoint_every)
    train = seed_keys(range(seeds))
    scale = jnp.log if log_utility else (lambda v: v)
    loss = jit(jax.value_and_grad(lambda theta: scale(objective(to_params(theta), train))))
    optimizer = optimizer or optax.adam(0.05)
    start = {f: jnp.asarray(params[f], jnp.result_type(float)) for f in fields}
    theta = {f: jnp.log(v) - (jnp.log1p(-v) if f in unit_fields else 0.0)
             for f, v in start.items()}
    state = optimizer.init(theta)
    history, stopped, last_finite = [], None, theta
    for it in range(iterations):
        value, grad = loss(theta)
        values = {f: np.asarray(to_value[f](v)).tolist() for f, v in theta.items()}
        if not all(np.all(np.isfinite(np.asarray(a))) for a in jax.tree.leaves((value, grad))):
            stopped = (f"iteration {it}: the training utility or its gradient is not finite at "
                       f"{values} (some training seed diverged); kept the previous iterate")
            theta = last_finite
            break
        history.append({"utility": float(jnp.exp(value) if log_utility else value), **values})
        last_finite = theta
        updates, state = optimizer.update(grad, state, theta)
        theta = optax.apply_updates(theta, updates)
    tuned = to_params(theta)
    held = seed_keys(range(seeds, seeds + held_out_seeds))
    initial = _held_out(algorithm, problem, network, calibrate(params), held, steps, utility,
                        metrics)
    final = _held_out(algorithm, problem, network, tuned, held, steps, utility, metrics)
    return TuneResult(params=tuned, history=history, stopped=stopped, held_out={
        "initial": initial[:2], "tuned": final[:2],
        "diverged": {"initial": initial[2], "tuned": final[2]}})


def _held_out(algorithm, problem, network, params, keys, steps, utility, metrics):
    """``(mean, 95% half-width, n_diverged)`` of the final utility over ``keys``: seeds whose
    utility is not finite are counted, not averaged."""
    def one(key):
        return final_metrics(algorithm, problem, network, params, key, steps=steps,
                             metrics=metrics)[utility]
    values = np.asarray(jit(jax.vmap(one))(keys))
    finite = values[np.isfinite(values)]
    if finite.size == 0:
        return float("nan"), float("nan"), int(values.size)
    half = 1.96 * finite.std(ddof=1) / np.sqrt(finite.size) if finite.size > 1 else float("nan")
    return float(finite.mean()), float(half), int(values.size - finite.size)
