"""The pure core of a run: one nested ``lax.scan`` over iterations (docs/design.md: "The shape of a
run", "Keys and reproducibility", "The engine").

Keys (docs/design.md, "Keys and reproducibility"). A replicate's randomness comes from one key
``seed_key``:

* ``init_key  = fold_in(seed_key, INIT_STREAM)`` — the algorithm's ``init``;
* ``step_key  = fold_in(fold_in(seed_key, STEP_STREAM), k)`` for step ``k``, split into the
  algorithm's noise (``fold_in(step_key, 0)``) and the network's per-step draws (``fold_in(step_key, 1)``).

Therefore a trajectory does not depend on how the run is chunked, on ``record_every``, on the number
of devices, or on whether 2000 steps run at once or as 1000 + 1000.
"""
from __future__ import annotations

from typing import Callable, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxdp._types import Array, PRNGKey

INIT_STREAM = 0
STEP_STREAM = 1

MetricFn = Callable  # (problem, models (N, d)[, state]) -> dict[str, () array]


class Carry(NamedTuple):
    """What a run carries between steps and between chunks."""

    state: object
    k: Array  # shape=(), dtype=int32: the index of the next step


def default_metrics(problem, models):
    """The problem's global metrics at the agents' models (objective, gradient norm, ...)."""
    return problem.metrics(models)


def evaluate_metrics(metric_fn: MetricFn | None, algorithm, problem, state) -> dict:
    """Call a metric function with ``(problem, models)``, or ``(problem, models, state)`` when it
    takes three arguments (metrics of algorithm state, e.g. ergodic averages or dual variables),
    then add the algorithm's :meth:`~jaxdp.algorithms.Algorithm.counters` (random cumulative
    counts kept in its state, e.g. ``messages_dropped``) after the metric function's keys.

    Raises:
      ValueError: a metric that is not a scalar, or a counter named like one of the metrics.
    """
    out = call_metric_fn(metric_fn, algorithm, problem, state)
    counters = check_metrics(algorithm.counters(state), algorithm.counters)
    clash = sorted(set(out) & set(counters))
    if clash:
        name = getattr(metric_fn or default_metrics, "__qualname__", "the metric function")
        raise ValueError(f"{algorithm.name}: counters {clash} have the names of metrics of "
                         f"{name}; rename one")
    return {**out, **counters}


def metric_names(algorithm, problem, network, params, metric_fn: MetricFn | None = None
                 ) -> tuple[str, ...]:
    """The keys a run's trace will hold (metrics, then counters), read from shapes only
    (``jax.eval_shape`` of ``init`` and the metric function: nothing is computed), so a caller
    can refuse an unknown metric name before a long run starts."""
    state = jax.eval_shape(lambda key: algorithm.init(key, problem, network, params),
                           jax.random.key(0))
    return tuple(jax.eval_shape(
        lambda s: evaluate_metrics(metric_fn, algorithm, problem, s), state))


PREFERRED_METRICS = ("test_accuracy", "test_loss", "grad_norm_sq")
"""The metric a figure shows when none is named: the first of these the problem records. A model
problem (``problems.from_model``, ``digits_mlp``, ``digits_cnn``) records held-out accuracy,
which is what its training is for; its ‖∇f‖² can rise while accuracy climbs. Elsewhere the
stationarity measure ‖∇f(x̄)‖², which every problem records."""


def default_metric(problem) -> str:
    """The first of :data:`PREFERRED_METRICS` that ``problem.metrics`` returns (read from shapes
    only); ``"grad_norm_sq"`` when it returns none of them."""
    names = jax.eval_shape(problem.metrics, jax.ShapeDtypeStruct((problem.n_agents, problem.dim),
                                                                 jnp.float32))
    return next((m for m in PREFERRED_METRICS if m in names), "grad_norm_sq")


def call_metric_fn(metric_fn: MetricFn | None, algorithm, problem, state) -> dict:
    """The metric function's own (checked) output, without the counters."""
    fn = metric_fn or default_metrics
    models = algorithm.models(state)
    out = fn(problem, models, state) if _n_positional(fn) >= 3 else fn(problem, models)
    return check_metrics(out, fn)


def check_metrics(out, fn=None) -> dict:
    """A metric function's output must be a dict of scalars (one number per replicate).

    Raises:
      ValueError: not a dict, or a value that is not a scalar (naming the key and its shape).
    """
    name = getattr(fn, "__qualname__", "the metric function")
    if not isinstance(out, dict):
        raise ValueError(f"{name} must return a dict of scalars; got {type(out).__name__}")
    for key, value in out.items():
        if jnp.shape(value) != ():
            raise ValueError(f"{name} returned {key!r} of shape {jnp.shape(value)}; every metric "
                             "must be a scalar per replicate: reduce it (e.g. jnp.mean) or "
                             "return one key per entry")
    return out


def _n_positional(fn) -> int:
    import inspect

    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return 2
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    if any(p.kind == inspect.Parameter.VAR_POSITIONAL for p in params):
        return 3
    return sum(p.kind in kinds for p in params)


def init_carry(algorithm, problem, network, params, seed_key: PRNGKey) -> Carry:
    """The state before step 0."""
    state = algorithm.init(jax.random.fold_in(seed_key, INIT_STREAM), problem, network, params)
    return Carry(state, jnp.zeros((), jnp.int32))


def check_key(seed_key) -> None:
    """Raise a clear error when a seed (an int) is passed where a JAX key is expected."""
    if isinstance(seed_key, (int, np.integer)) or (
            hasattr(seed_key, "dtype") and not jnp.issubdtype(seed_key.dtype, jax.dtypes.prng_key)
            and jnp.shape(seed_key) != (2,)):
        raise TypeError(f"seed_key must be a JAX key, e.g. jax.random.key({seed_key!r}) for a "
                        f"seed; got {type(seed_key).__name__} {seed_key!r}")
    batch = jnp.shape(seed_key)[:-1] if jnp.shape(seed_key)[-1:] == (2,) and not (
        jnp.issubdtype(seed_key.dtype, jax.dtypes.prng_key)) else jnp.shape(seed_key)
    if batch:
        raise ValueError(f"seed_key must be one key (one replicate); got a batch of shape "
                         f"{tuple(batch)}: jax.vmap over the keys (as jaxdp.run does over seeds), "
                         "or pass keys[0]")


def step_keys(seed_key: PRNGKey, k) -> tuple[PRNGKey, PRNGKey]:
    """The keys of step ``k`` of a replicate: ``(noise_key, network_key)``.

    ``noise_key`` is what ``algorithm.noise`` receives; ``network_key`` what the network process's
    ``at_step`` (and ``active_mask``) receive. Attacks and tests use it to regenerate a run's draws.
    """
    step_key = jax.random.fold_in(jax.random.fold_in(seed_key, STEP_STREAM), k)
    return jax.random.fold_in(step_key, 0), jax.random.fold_in(step_key, 1)


def step_once(algorithm, problem, network, params, seed_key, carry: Carry):
    """Step ``carry.k`` of a replicate: draw, advance the network process, update."""
    k = carry.k
    noise_key, network_key = step_keys(seed_key, k)
    net_k = network.at_step(network_key, k)
    noise = algorithm.noise(noise_key, carry.state, params, k)
    state, messages = algorithm.step(carry.state, noise, problem, net_k, params, k)
    active = getattr(network, "active_mask", None)
    if active is not None:  # agents that sleep this step keep their rows (random activation)
        state = freeze_inactive(carry.state, state, active(network_key))
    return Carry(state, k + 1), messages


def freeze_inactive(old, new, active: Array):
    """Keep the rows of inactive agents: every leaf with a leading axis of size N is masked."""
    n = active.shape[0]

    def keep(o, nw):
        if nw.ndim == 0 or nw.shape[0] != n:
            return nw
        mask = active.reshape((n,) + (1,) * (nw.ndim - 1))
        return jnp.where(mask, nw, o)

    return jax.tree.map(keep, old, new)


def simulate(
    algorithm,
    problem,
    network,
    params,
    seed_key: PRNGKey,
    *,
    steps: int,
    record_every: int = 1,
    metrics: MetricFn | None = None,
    observe: bool = False,
    carry: Carry | None = None,
    checkpoint: bool = False,
):
    """Run ``steps`` iterations of one replicate; pure, jittable and differentiable.

    Args:
      algorithm: an :class:`~jaxdp.algorithms.Algorithm` (static).
      problem, network, params: pytrees (``params`` may be traced, e.g. under ``jax.grad``).
      seed_key: the replicate's key (``jax.random.key(seed)``).
      steps: number of iterations (static); a multiple of ``record_every``.
      record_every: metrics are evaluated after every ``record_every`` steps (static).
      metrics: ``fn(problem, models) -> dict`` of scalars, or ``fn(problem, models, state)`` to
        read algorithm state too; default ``problem.metrics``.
      observe: also return every step's messages and models, shape ``(steps, ...)`` (static).
      carry: continue from a previous call's carry instead of ``init`` (chunked runs).
      checkpoint: rematerialize each record block under ``jax.grad`` (``jax.checkpoint``): reverse
        mode then stores one carry per record instead of one per step, so memory for a gradient
        through K steps is O(K / record_every + record_every) states, at the price of one extra
        forward pass. Use with ``record_every ≈ √K`` for long horizons.

    Returns:
      ``(carry, records, observed)``: the final carry, a dict of metric arrays of shape
      ``(steps // record_every,)`` taken after steps ``record_every, 2*record_every, ...`` (counted
      from the carry's step), and ``{"messages": ..., "models": ...}`` with a leading ``steps`` axis
      when ``observe`` (else ``{}``).

    Raises:
      ValueError: ``steps`` is not a positive multiple of ``record_every``.
    """
    check_key(seed_key)
    if record_every < 1 or steps < 1 or steps % record_every:
        raise ValueError(
            f"steps must be a positive multiple of record_every; got steps={steps}, "
            f"record_every={record_every}"
        )
    if carry is None:
        carry = init_carry(algorithm, problem, network, params, seed_key)

    def inner(c, _):
        c, messages = step_once(algorithm, problem, network, params, seed_key, c)
        seen = {"messages": messages, "models": algorithm.models(c.state)} if observe else {}
        return c, seen

    def outer(c, _):
        c, seen = jax.lax.scan(inner, c, None, length=record_every)
        return c, (evaluate_metrics(metrics, algorithm, problem, c.state), seen)

    if checkpoint:
        outer = jax.checkpoint(outer)
    carry, (records, observed) = jax.lax.scan(outer, carry, None, length=steps // record_every)
    if observe:  # (R, record_every, ...) -> (steps, ...)
        observed = jax.tree.map(lambda a: a.reshape((steps,) + a.shape[2:]), observed)
    return carry, records, observed


def final_metrics(algorithm, problem, network, params, seed_key, *, steps, metrics=None,
                  checkpoint_every: int | None = None):
    """Metrics after ``steps`` iterations of one replicate: the usual target of ``jax.grad``.

    Args:
      checkpoint_every: if given (it must divide ``steps``), memory under ``jax.grad`` is bounded
        by rematerializing blocks of this many steps (see ``simulate(checkpoint=True)``); the
        metrics are still those after the last step.

    Example:
      >>> loss = lambda p: final_metrics(alg, prob, net, p, key, steps=100)["objective"]
      >>> g = jax.grad(loss)(params)  # d objective / d Params, a Params of gradients
    """
    block = checkpoint_every or steps
    final = lambda problem, models, state: (  # noqa: E731
        call_metric_fn(metrics, algorithm, problem, state))
    _, records, _ = simulate(
        algorithm, problem, network, params, seed_key, steps=steps, record_every=block,
        metrics=final, checkpoint=checkpoint_every is not None,
    )
    return jax.tree.map(lambda a: a[-1], records)
