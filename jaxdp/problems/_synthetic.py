"""Problem builders: synthetic generators after the papers, ``from_arrays`` and ``partition``.

Every generator draws from its own ``numpy.random.default_rng(seed)``, separate from the noise
seeds of a run (docs/design.md, "Keys"): first the planted model, then the training rows agent
by agent, then the test rows, so the training data do not depend on the test-set size.

Shapes: N agents, m rows per agent, d features, n pooled rows, n_test test rows.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxdp._registry import Registry
from jaxdp.problems._losses import (
    LOSSES,
    LeastSquares,
    Logistic,
    Loss,
    NonconvexLogistic,
    sigmoid,
)
from jaxdp.problems._problem import Problem
from jaxdp.problems._reference import solve_reference

# (rng, planted margins z·x_true (n,)) -> labels (n,)
LabelFn = Callable[[np.random.Generator, np.ndarray], np.ndarray]


# --- generic constructors ------------------------------------------------------------------
def from_arrays(
    features,
    labels,
    *,
    loss: Loss | str,
    reg: Mapping[str, float],
    test: tuple[Any, Any] | None = None,
    mask=None,
    name: str = "custom",
    dtype=None,
    reference: bool = True,
) -> Problem:
    """Build a validated ``Problem`` from per-agent data.

    Args:
      features: stacked (N, m, d) array, or a sequence of N per-agent (m_i, d) arrays of any
        sizes (padded with zero rows to max m_i, with a mask).
      labels: (N, m) array, or a sequence of N (m_i,) arrays, matching ``features``.
      loss: a ``Loss`` instance or its registered name (``"least_squares"``, ``"logistic"``,
        ``"nonconvex_logistic"``).
      reg: regularizer weights with exactly the loss's ``reg_keys`` (e.g. ``{"lam": 1e-3}``).
      test: optional ``(test_features (n_test, d), test_labels (n_test,))``.
      mask: optional (N, m) 0/1 mask for stacked input (default all ones).
      name: problem name (static metadata).
      dtype: float dtype of the arrays; default JAX's default float (float64 with x64 only).
      reference: compute ``x_star``, ``f_star`` with ``solve_reference``; else they are NaN.

    Returns:
      The ``Problem``.

    Raises:
      ValueError: shapes do not match, data hold NaN/inf, an agent has no sample, classifier
        labels are not ±1, the reg keys or values are wrong, or the loss name is unknown.
      NotImplementedError: ``reference=True`` with a loss ``solve_reference`` cannot handle.
    """
    loss = _as_loss(loss)
    features, labels, mask = _stack(features, labels, mask)
    d = features.shape[2]
    test_features, test_labels = (np.zeros((0, d)), np.zeros((0,))) if test is None else test
    dtype = jax.dtypes.canonicalize_dtype(jnp.float64 if dtype is None else dtype)
    cast = _caster(dtype)
    problem = Problem(
        features=cast(features),
        labels=cast(labels),
        mask=cast(mask),
        reg={k: cast(v) for k, v in reg.items()},
        x_star=cast(np.full(d, np.nan)),
        f_star=cast(np.nan),
        test_features=cast(test_features),
        test_labels=cast(test_labels),
        loss=loss,
        name=name,
    ).validate()
    if not reference:
        return problem
    x_star, f_star = solve_reference(problem)
    return dataclasses.replace(problem, x_star=cast(x_star), f_star=cast(f_star))


def partition(
    features, labels, n_agents: int, *, seed: int, shuffle: bool = True
) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Split a pooled data set into ``n_agents`` near-equal shards (sizes differ by at most 1).

    Pass the result to ``from_arrays``, which pads the shorter shards and masks the padding:
    ``from_arrays(*partition(Z, y, 8, seed=0), loss="logistic", reg={"lam": 0.0})``.

    Args:
      features: (n, d) pooled rows.
      labels: (n,) pooled labels.
      n_agents: N, the number of shards.
      seed: seed of the shuffle.
      shuffle: permute the rows first (else shards are consecutive blocks).

    Returns:
      ``(features_list, labels_list)``: N arrays (m_i, d) and N arrays (m_i,), the first n mod N
      shards holding one row more.

    Raises:
      ValueError: shapes disagree, or n < n_agents (a shard would be empty).
    """
    features, labels = np.asarray(features), np.asarray(labels)
    if features.ndim != 2 or labels.shape != features.shape[:1]:
        raise ValueError(
            f"partition needs features (n, d) and labels (n,); got {features.shape} and "
            f"{labels.shape}"
        )
    if not 1 <= n_agents <= features.shape[0]:
        raise ValueError(
            f"partition: n_agents must be in [1, n = {features.shape[0]}] so no shard is empty; "
            f"got {n_agents}"
        )
    n = len(labels)
    order = np.random.default_rng(seed).permutation(n) if shuffle else np.arange(n)
    shards = np.array_split(order, n_agents)
    return [features[s] for s in shards], [labels[s] for s in shards]


# --- synthetic generators ------------------------------------------------------------------------
def least_squares(
    n_agents: int = 10,
    m: int = 50,
    d: int = 5,
    *,
    noise: float = 0.1,
    ridge: float = 0.0,
    seed: int = 0,
    test_fraction: float = 0.0,
    dtype=None,
    reference: bool = True,
) -> Problem:
    """Linear regression: a ~ N(0, I_d), b = aᵀx_true + noise·N(0, 1), x_true ~ N(0, I_d).

    Loss ½ mean (aᵀx − b)² + ½·ridge‖x‖² per agent (DP-RECAL §VII without the ℓ1 term).

    Args:
      n_agents: N.
      m: rows per agent.
      d: features.
      noise: standard deviation of the target noise.
      ridge: ridge weight (reg key ``"ridge"``).
      seed: data seed.
      test_fraction: held-out rows as a fraction of the N·m training rows, drawn from the same
        model in addition to them (no test accuracy: not a classifier).
      dtype: float dtype (default JAX's default float).
      reference: compute x*, f* (closed form: one Newton step).

    Returns:
      The ``Problem``, named ``"least_squares"``.

    Raises:
      ValueError: ``test_fraction`` < 0.
    """
    if test_fraction < 0:
        raise ValueError(f"least_squares: test_fraction must be >= 0; got {test_fraction}")

    def targets(rng, margins):
        return margins + noise * rng.standard_normal(margins.shape)

    n_test = round(test_fraction * n_agents * m)
    (features, labels), test = _planted_data(seed, (n_agents, m, d), n_test, targets)
    return from_arrays(
        features,
        labels,
        loss=LeastSquares(),
        reg={"ridge": ridge},
        test=test,
        name="least_squares",
        dtype=dtype,
        reference=reference,
    )


def logistic(
    n_agents: int = 10,
    m: int = 100,
    d: int = 5,
    *,
    lam: float = 1e-2,
    seed: int = 0,
    test_m: int = 0,
    dtype=None,
    reference: bool = True,
) -> Problem:
    """ℓ2-regularized logistic regression on a well-specified planted model.

    z ~ N(0, I_d), x_true ~ N(0, I_d), and y = +1 with probability σ(zᵀx_true), else −1. The
    papers' logistic experiments (papers 001 and 002) use UCI Adult with normalized rows; this
    is the synthetic stand-in (no data set is downloaded).

    Args:
      n_agents: N.
      m: rows per agent.
      d: features.
      lam: ℓ2 weight (reg key ``"lam"``): penalty ½·lam‖x‖² per agent.
      seed: data seed.
      test_m: held-out test rows in total (from the same model); enables ``test_accuracy``.
      dtype: float dtype (default JAX's default float).
      reference: compute x*, f* (Newton).

    Returns:
      The ``Problem``, named ``"logistic"``.
    """

    def classes(rng, margins):
        return np.where(rng.random(margins.shape) < sigmoid(margins, np), 1.0, -1.0)

    (features, labels), test = _planted_data(seed, (n_agents, m, d), test_m, classes)
    return from_arrays(
        features,
        labels,
        loss=Logistic(),
        reg={"lam": lam},
        test=test,
        name="logistic",
        dtype=dtype,
        reference=reference,
    )


def nonconvex_logistic(
    n_agents: int = 50,
    m: int = 200,
    d: int = 10,
    *,
    lam: float = 1e-3,
    omega: float = 1.0,
    smoothness: float | None = 5.03,
    seed: int = 0,
    test_m: int = 0,
    label_noise: float = 0.1,
    dtype=None,
    reference: bool = True,
) -> Problem:
    """Paper 000 (DPP²) §6.1: logistic loss + nonconvex penalty Σ_t λωx_t²/(1+ωx_t²).

    Defaults are the paper's sizes and weights (N = 50, d = 10, m = 200, λ = 0.001, ω = 1). The
    paper says only that features and labels are "randomly generated" (§VI,
    [UNSPECIFIED]); here z ~ N(0, I_d), x_true ~ N(0, I_d), and y = sign(zᵀx_true) flipped with
    probability ``label_noise`` (as paper 004 does). Then all features, test rows included,
    are scaled by one factor so that max_i [λ_max(Z_iᵀZ_i)/(4m) + 2λω] = ``smoothness``, the
    paper's M̄ = 5.03 (our reading of §VI; unscaled N(0, I) data give M̄ ≈ 0.39).

    Args:
      n_agents: N.
      m: rows per agent.
      d: features.
      lam: λ, penalty weight.
      omega: ω, penalty shape.
      smoothness: target max_i M_i; None keeps the unscaled features.
      seed: data seed.
      test_m: held-out test rows in total.
      label_noise: probability of flipping each label. 0.5 makes the labels independent of the
        features (the literal "randomly generated" reading); a sanity run of ours
        (Ŵ⁰ ≈ 0.25 at x = 0) looks like that setting (0.12 to 0.21 over seeds 0-2), while the
        default 0.1 gives a learnable planted problem with Ŵ⁰ ≈ 65.
      dtype: float dtype (default JAX's default float).
      reference: compute the stationary point x* reached by the solver from 0, and f*.

    Returns:
      The ``Problem``, named ``"nonconvex_logistic"``.

    Raises:
      ValueError: ``smoothness`` is not above the penalty's own 2λω, or ``label_noise`` ∉ [0, 1].
    """
    if not 0.0 <= label_noise <= 1.0:
        raise ValueError(f"nonconvex_logistic: label_noise must be in [0, 1]; got {label_noise}")

    def classes(rng, margins):
        flip = rng.random(margins.shape) < label_noise
        return np.where(margins >= 0, 1.0, -1.0) * np.where(flip, -1.0, 1.0)

    loss, reg = NonconvexLogistic(), {"lam": lam, "omega": omega}
    (features, labels), test = _planted_data(seed, (n_agents, m, d), test_m, classes)
    if smoothness is not None:
        scale = _smoothness_scale(loss, reg, features, smoothness)
        features, test = scale * features, (scale * test[0], test[1])
    return from_arrays(
        features,
        labels,
        loss=loss,
        reg=reg,
        test=test,
        name="nonconvex_logistic",
        dtype=dtype,
        reference=reference,
    )


PROBLEMS = Registry("problem", "jaxdp.problems", {
    "least_squares": least_squares,
    "logistic": logistic,
    "nonconvex_logistic": nonconvex_logistic,
}, how="jaxdp.problems.PROBLEMS.register(name, builder)")
"""Every problem builder by name (the command line's ``--problem``; entry-point group
``jaxdp.problems``), the model problems (``digits_mlp``, ``digits_cnn``) included. Each is called
as ``PROBLEMS[name](n_agents=N, seed=s, **kw)`` and returns a :class:`Problem`."""


def problem_builders() -> Registry:
    """Every problem builder by name: :data:`PROBLEMS` (kept for callers of the old merged dict)."""
    return PROBLEMS


def make_problem(name: str, **kwargs) -> Problem:
    """Build the registered problem ``name`` with the builder's keyword arguments.

    Raises:
      ValueError: ``name`` is not in :data:`PROBLEMS` (the message lists the known names and
        how to add one).
    """
    return PROBLEMS.get(name)(**kwargs)


# --- helpers -------------------------------------------------------------------------------------
def _planted_data(
    seed: int, sizes: tuple[int, int, int], n_test: int, label_fn: LabelFn
) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """Draw x_true ~ N(0, I_d), then N·m training and n_test test rows z ~ N(0, I_d) with labels.

    Returns:
      ``((features (N, m, d), labels (N, m)), (test_features (n_test, d), test_labels
      (n_test,)))``.
    """
    for what, value in zip(("n_agents", "m", "d"), sizes):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"the problem needs {what} to be an int >= 1; got {what}={value!r}")
    N, m, d = sizes
    rng = np.random.default_rng(seed)
    x_true = rng.standard_normal(d)

    def draw(n):
        z = rng.standard_normal((n, d))
        return z, label_fn(rng, z @ x_true)

    z, y = draw(N * m)
    return (z.reshape(N, m, d), y.reshape(N, m)), draw(n_test)


def _smoothness_scale(
    loss: Loss, reg: Mapping[str, float], features: np.ndarray, target: float
) -> float:
    """Factor s with max_i [s² · data_smoothness_i + penalty_smoothness] = target (DPP²'s M̄)."""
    penalty = loss.penalty_smoothness(reg)
    if not target > penalty:
        raise ValueError(
            f"smoothness must exceed the penalty's own smoothness 2*lam*omega = {penalty}; "
            f"got {target}"
        )
    data = loss.data_smoothness(features, np.ones(features.shape[:2]))
    return float(np.sqrt((target - penalty) / np.max(data)))


def _caster(dtype) -> Callable[[Any], jax.Array]:
    """A converter of host values to JAX arrays of ``dtype``."""
    return lambda a: jnp.asarray(np.asarray(a, dtype=np.float64), dtype=dtype)


def _as_loss(loss: Loss | str) -> Loss:
    """A ``Loss`` instance from an instance or a registered name."""
    if isinstance(loss, Loss):
        return loss
    if loss in LOSSES:
        return LOSSES[loss]()
    raise ValueError(f"unknown loss {loss!r}; known losses: {sorted(LOSSES)}")


def _stack(features, labels, mask) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Stacked float64 (N, m, d), (N, m), (N, m) from stacked arrays or per-agent sequences."""
    if isinstance(features, Sequence) or isinstance(labels, Sequence):
        if mask is not None:
            raise ValueError(
                "from_arrays: mask is only for stacked input; lists are masked by padding"
            )
        return _pad(features, labels)
    features, labels = np.asarray(features, np.float64), np.asarray(labels, np.float64)
    if features.ndim != 3 or labels.shape != features.shape[:2]:
        raise ValueError(
            f"from_arrays: features must be (N, m, d) and labels (N, m); got shapes "
            f"{features.shape} and {labels.shape}"
        )
    mask = np.ones(labels.shape) if mask is None else np.asarray(mask, np.float64)
    if mask.shape != labels.shape:
        raise ValueError(f"from_arrays: mask must have shape {labels.shape}; got {mask.shape}")
    return features, labels, mask


def _pad(features: Sequence, labels: Sequence) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Pad per-agent (m_i, d), (m_i,) arrays with zero rows to max m_i; mask 1 on real rows."""
    features = [np.asarray(a, np.float64) for a in features]
    labels = [np.asarray(b, np.float64) for b in labels]
    if len(features) != len(labels) or not features:
        raise ValueError(
            f"from_arrays: need one features array and one labels array per agent; got "
            f"{len(features)} and {len(labels)}"
        )
    d = features[0].shape[-1] if features[0].ndim == 2 else -1
    for i, (a, b) in enumerate(zip(features, labels, strict=True)):
        if a.ndim != 2 or a.shape[1] != d or b.shape != a.shape[:1]:
            raise ValueError(
                f"from_arrays: agent {i} needs features (m_i, d = {d}) and labels (m_i,); got "
                f"shapes {a.shape} and {b.shape}"
            )
    m = max(len(b) for b in labels)
    N = len(labels)
    out_f, out_y, out_mask = np.zeros((N, m, d)), np.zeros((N, m)), np.zeros((N, m))
    for i, (a, b) in enumerate(zip(features, labels, strict=True)):
        out_f[i, : len(b)], out_y[i, : len(b)], out_mask[i, : len(b)] = a, b, 1.0
    return out_f, out_y, out_mask
