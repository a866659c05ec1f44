"""Host-side checks of ``run``/``sweep`` input, before anything compiles: each names the value and
why it is wrong."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jaxdp.core import check_problem_supports


def _validate(algorithm, problem, network, params_points) -> None:
    _check_not_traced(params_points)
    validate_problem = getattr(problem, "validate", None)
    if validate_problem is not None:
        validate_problem()
    if network.n_agents != problem.n_agents:
        raise ValueError(
            f"the network has {network.n_agents} agents but the problem has data for "
            f"{problem.n_agents}"
        )
    check_problem_supports(algorithm, problem)
    for p in params_points:
        _check_numeric(algorithm, p)
        try:
            algorithm.validate(p, problem, network)
        except TypeError as e:
            _raise_if_per_agent(algorithm, p, None, e)
            raise


def _check_not_traced(params_points) -> None:
    """``run``/``sweep`` are host drivers: under ``jax.grad``/``jit``/``vmap`` say what to use."""
    if any(isinstance(leaf, jax.core.Tracer) for leaf in jax.tree.leaves(params_points)):
        raise TypeError(
            "run() and sweep() are host-side drivers (they validate, compile and copy results to "
            "numpy) and cannot be traced by jax.grad, jit or vmap: differentiate "
            "jaxdp.engine.final_metrics(algorithm, problem, network, params, key, steps=...) "
            "instead (one replicate, pure; vmap it over keys)")


def _raise_if_dtype_mismatch(problem, network, error) -> None:
    """Raise a ``ValueError`` naming the precision mismatch when the problem's or network's
    floating arrays are not the dtype JAX runs in: the likely cause of ``error`` (float64
    enabled after the problem was built makes ``scan`` fail on mixed carries)."""
    want = np.dtype(jnp.zeros(()).dtype)  # float64 under jax_enable_x64, else float32
    for what, tree in (("problem", problem), ("network", network)):
        dtypes = {np.dtype(getattr(leaf, "dtype", type(leaf))) for leaf in jax.tree.leaves(tree)}
        found = {d for d in dtypes if np.issubdtype(d, np.floating)} - {want}
        if found:
            raise ValueError(
                f"the {what}'s arrays are {sorted(map(str, found))} but JAX runs in {want} "
                f"(jax_enable_x64 is {bool(jax.config.jax_enable_x64)}), and the program failed "
                f"on it ({type(error).__name__}: {str(error).splitlines()[0]}): build the {what} "
                "after setting the precision (enable float64 before building anything)"
            ) from error


def _check_numeric(algorithm, params) -> None:
    """Every Params leaf must be a number or an array of numbers (not a string, not None)."""
    for field, value in getattr(params, "items", lambda: ())():
        kind = np.asarray(value).dtype.kind if value is not None else "none"
        if kind not in "biuf":
            raise TypeError(f"{algorithm.name}: {type(params).__name__}.{field} must be a number "
                            f"or an array of numbers; got {type(value).__name__} {value!r}")


def _check_int(name: str, value, low: int = 1, allow_none: bool = False) -> None:
    """``value`` must be an int >= ``low`` (``None`` where allowed)."""
    if value is None and allow_none:
        return
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        raise ValueError(f"{name} must be an int >= {low}; got {name}={value!r}")


def _seed_list(seeds) -> list[int]:
    if isinstance(seeds, bool):
        raise ValueError(f"seeds must be a count >= 1 or a list of seeds; got {seeds!r}")
    if isinstance(seeds, (int, np.integer)):
        if seeds < 1:
            raise ValueError(f"seeds must be >= 1; got {seeds}")
        return list(range(int(seeds)))
    if isinstance(seeds, (str, bytes)) or not np.iterable(seeds):
        raise ValueError(f"seeds must be a count (an int >= 1) or a list of integer seeds; got "
                         f"{type(seeds).__name__} {seeds!r}")
    if any(isinstance(s, bool) or int(s) != s for s in seeds):
        raise ValueError(f"seeds must be integers; got {list(seeds)[:10]}")
    seeds = [int(s) for s in seeds]
    if not seeds or min(seeds) < 0 or len(set(seeds)) != len(seeds):
        raise ValueError(f"seeds must be distinct non-negative integers; got {seeds[:10]}")
    return seeds


def _raise_if_per_agent(algorithm, params, grid_size, error) -> None:
    """Raise a ``ValueError`` naming the per-agent Params fields when there are any: the likely
    cause of ``error``, a shape error inside the algorithm (a scalar field given per agent)."""
    per_agent = _per_agent_fields(params, grid_size)
    if per_agent:
        raise ValueError(
            f"{algorithm.name}: {type(params).__name__}.{', '.join(per_agent)} hold(s) one value "
            f"per agent, which {algorithm.name} cannot use ({type(error).__name__}: "
            f"{str(error).splitlines()[0]}); give one scalar for every agent") from error


def _per_agent_fields(params, grid_size) -> list[str]:
    """The Params fields given one value per agent (an axis beyond the grid's)."""
    extra = 0 if grid_size is None else 1
    return [f for f, v in params.items() if np.ndim(v) > extra]

