"""The ``Problem`` pytree: stacked per-agent data, a loss, metrics and a reference solution.

The agents minimize f(x) = Σ_i f_i(x), with f_i the masked mean of a per-sample loss over agent
i's shard plus a penalty (``_losses.py``). Data are stacked with a leading agent axis and padded
to a common shard size m; ``mask`` marks the real rows (docs/design.md, "Problems and
data").

Shapes: N agents, m rows per shard (padded), d model dimension, b minibatch rows, n_test test
rows.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, ClassVar

import jax
import jax.numpy as jnp
import numpy as np

from jaxdp._precision import matmul
from jaxdp._types import AgentArray, Array
from jaxdp.problems._losses import Loss


@functools.partial(
    jax.tree_util.register_dataclass,
    data_fields=[
        "features",
        "labels",
        "mask",
        "reg",
        "x_star",
        "f_star",
        "test_features",
        "test_labels",
    ],
    meta_fields=["loss", "name"],
)
@dataclasses.dataclass(frozen=True, eq=False)
class Problem:
    """A decentralized empirical-risk problem; a pytree with ``loss`` and ``name`` static.

    Build one with a builder (``least_squares``, ``logistic``, ``nonconvex_logistic``) or
    ``from_arrays``, which validate the data and compute the reference solution.

    Attributes:
      features: (N, m, d) per-agent feature rows, zero on padding.
      labels: (N, m) targets (least squares) or ±1 classes, zero on padding.
      mask: (N, m) 1 for a real sample, 0 for padding.
      reg: dict of () float leaves, the regularizer weights (keys ``loss.reg_keys``).
      x_star: (d,) reference solution of the centralized float64 solver (for a nonconvex loss,
        the stationary point it reaches from x = 0); NaN when built with ``reference=False``.
      f_star: () objective at ``x_star``; NaN when built with ``reference=False``.
      test_features: (n_test, d) held-out rows; (0, d) when there is no test set.
      test_labels: (n_test,) held-out labels; (0,) when there is no test set.
      loss: static, hashable per-agent loss (``_losses.Loss``).
      name: static problem name.
    """

    features: Array
    labels: Array
    mask: Array
    reg: dict[str, Array]
    x_star: Array
    f_star: Array
    test_features: Array
    test_labels: Array
    loss: Loss
    name: str

    capabilities: ClassVar[frozenset[str]] = frozenset(
        {"gradients", "sample_gradients", "smoothness", "hessian", "local_solve", "x_star"})
    """What the problem gives the algorithms (``jaxdp.core.PROBLEM_NEEDS``): everything, for a
    margin loss; a model problem gives only gradients."""

    # --- sizes ----------------------------------------------------------------------------------
    @property
    def n_agents(self) -> int:
        """N, the number of agents."""
        return self.features.shape[0]

    @property
    def n_samples(self) -> int:
        """m, the padded number of rows per agent."""
        return self.features.shape[1]

    @property
    def dim(self) -> int:
        """d, the model dimension."""
        return self.features.shape[2]

    # --- per-agent losses and gradients (jittable) ---------------------------------------------
    def local_losses(self, X: AgentArray, batch_idx: Array | None = None) -> Array:
        """f_i(x_i) for every agent.

        Args:
          X: (N, d) one model per agent.
          batch_idx: optional (N, b) int rows of each shard; then the masked mean runs over
            those rows only (a minibatch: the caller draws the indices, among real rows).

        Returns:
          (N,) local losses.
        """
        return self._map_agents(self.loss, X, 0, batch_idx)

    def local_grads(self, X: AgentArray, batch_idx: Array | None = None) -> AgentArray:
        """∇f_i(x_i) for every agent, closed form (equal to ``vmap(grad(loss))``).

        Args:
          X: (N, d) one model per agent.
          batch_idx: optional (N, b) int rows, as in ``local_losses``; without it, each
            agent's whole shard (``loss.shard_grad``: least squares from its normal equations).

        Returns:
          (N, d) local gradients.
        """
        grad = self.loss.grad if batch_idx is not None else self.loss.shard_grad
        return self._map_agents(grad, X, 0, batch_idx)

    def take_agents(self, idx: Array):
        """The same problem restricted to the agents ``idx`` (jittable).

        Their shards ``features``, ``labels`` and ``mask`` are gathered to a leading axis of
        ``len(idx)``; the loss, the regularizer and the reference solution are kept. Row ``j`` of
        ``take_agents(idx).local_grads(X[idx])`` is agent ``idx[j]``'s ∇f_i, the per-agent
        computation of ``local_grads(X)`` on that agent's shard, so an algorithm that works on a
        subset of agents (a federated round on its selected clients) computes theirs only. The
        global metrics (``objective``, ``metrics``) of the result cover those agents only.

        Args:
          idx: (K,) int agent indices.

        Returns:
          A problem of the same class with K agents.
        """
        return dataclasses.replace(self, features=self.features[idx], labels=self.labels[idx],
                                   mask=self.mask[idx])

    def prox(self, X: AgentArray, step) -> AgentArray:
        """Each agent's prox of ``step · (ℓ1 term)`` at its row of X (identity without ℓ1).

        Args:
          X: (N, d).
          step: scalar or (N,) step sizes.

        Returns:
          (N, d).
        """
        steps = jnp.broadcast_to(jnp.asarray(step, X.dtype), X.shape[:1])
        return jax.vmap(self.loss.prox, in_axes=(0, 0, None))(X, steps, self.reg)

    def objective(self, x: Array) -> Array:
        """f(x) = Σ_i f_i(x) at one model x (d,); returns ()."""
        return jnp.sum(self._map_agents(self.loss, x, None, None))

    def global_grad(self, x: Array) -> Array:
        """∇f(x) = Σ_i ∇f_i(x) at one model x (d,); returns (d,)."""
        return jnp.sum(self._map_agents(self.loss.shard_grad, x, None, None), axis=0)

    def metrics(self, X: AgentArray) -> dict[str, Array]:
        """Global metrics of the agents' models X (N, d), each a () array.

        With x̄ the agent average: ``objective`` f(x̄); ``grad_norm_sq`` ‖∇f(x̄)‖²;
        ``consensus_error`` ‖X − 1x̄ᵀ‖²_F; ``stationarity`` (1/N)‖Σ_i ∇f_i(x_i)‖² at the local
        models (paper 000 §7.4); ``dist_to_opt`` ‖x̄ − x*‖²; ``suboptimality`` f(x̄) − f*; and,
        only for a classifier with a test set (decided from static shapes), ``test_accuracy``
        mean(sign(test_features x̄) = test_labels).
        """
        x_bar = jnp.mean(X, axis=0)
        f_bar = self.objective(x_bar)
        out = {
            "objective": f_bar,
            "grad_norm_sq": _sq_norm(self.global_grad(x_bar)),
            "consensus_error": _sq_norm(X - x_bar[None, :]),
            "stationarity": _sq_norm(jnp.sum(self.local_grads(X), axis=0)) / self.n_agents,
            "dist_to_opt": _sq_norm(x_bar - self.x_star),
            "suboptimality": f_bar - self.f_star,
        }
        if self.loss.classifier and self.test_labels.shape[0] > 0:
            correct = jnp.sign(matmul(self.test_features, x_bar)) == self.test_labels
            out["test_accuracy"] = jnp.mean(correct.astype(x_bar.dtype))
        return out

    # --- host-side constants -------------------------------------------------------------------
    def smoothness(self) -> np.ndarray:
        """Host: (N,) float64 upper bounds M_i on the Lipschitz constant of ∇f_i.

        Least squares: λ_max(A_iᵀA_i)/m_i + ridge; logistic: λ_max(Z_iᵀZ_i)/(4 m_i) + lam; the
        nonconvex penalty adds 2λω instead of lam (paper 000 §6.1). Padding rows do not count.
        """
        return self.loss.smoothness(self.features, self.mask, self.reg)

    def gradient_bound(self, *, data_only: bool = False) -> np.ndarray:
        """Host: (N,) float64 bound on sup_x ‖∇f_i(x)‖, ``inf`` where none exists.

        Logistic losses with ‖z‖ ≤ R_i on agent i's real rows: R_i for the data term, plus the
        penalty's bound: 0 for lam = 0, inf for lam > 0 (½lam‖x‖² has unbounded gradient), and
        (9/(8√3))·λ√ω·√d for the nonconvex penalty. Least squares: inf.

        Args:
          data_only: bound only the data term, R_i · sup|ℓ'|. This also bounds each per-sample
            gradient, what a sensitivity analysis needs (the penalty does not depend on data).
        """
        return self.loss.gradient_bound(self.features, self.mask, self.reg, data_only=data_only)

    def summary(self) -> dict[str, Any]:
        """Host: JSON-serialisable description (name, loss, sizes, reg values, dtype)."""
        return {
            "name": self.name,
            "loss": self.loss.name,
            "n_agents": self.n_agents,
            "n_samples": self.n_samples,
            "dim": self.dim,
            "n_real_samples": int(np.sum(np.asarray(self.mask) > 0)),
            "n_test": int(self.test_labels.shape[0]),
            "reg": {k: np.asarray(v).tolist() for k, v in sorted(self.reg.items())},
            "dtype": str(self.features.dtype),
        }

    def validate(self) -> Problem:
        """Host: check shapes, finiteness, masks, labels and reg; return ``self``.

        Raises:
          ValueError: a field has the wrong shape; a field holds NaN or inf (naming the field and
            the first bad agent); a mask value is not 0 or 1; an agent has no real sample; a
            classifier's real labels are not ±1; the reg keys differ from ``loss.reg_keys`` or a
            reg value is not a finite scalar >= 0.
        """
        _check_shapes(self)
        _check_reg(self)
        for field in ("features", "labels", "mask"):
            _check_finite_rows(field, np.asarray(getattr(self, field)), "agent")
        for field in ("test_features", "test_labels"):
            _check_finite_rows(field, np.asarray(getattr(self, field)), "test row")
        _check_mask(np.asarray(self.mask))
        if self.loss.classifier:
            _check_classes("labels", np.asarray(self.labels), np.asarray(self.mask) > 0)
            _check_classes("test_labels", np.asarray(self.test_labels), None)
        return self

    # --- helpers --------------------------------------------------------------------------------
    def _rows(self, batch_idx: Array | None) -> tuple[Array, Array, Array]:
        """(features, labels, mask) of every shard, or of the rows ``batch_idx`` (N, b) picks."""
        if batch_idx is None:
            return self.features, self.labels, self.mask
        take = jax.vmap(lambda a, idx: a[idx])
        return (
            take(self.features, batch_idx),
            take(self.labels, batch_idx),
            take(self.mask, batch_idx),
        )

    def _map_agents(self, fn, x: Array, x_axis: int | None, batch_idx: Array | None) -> Array:
        """vmap ``fn(x_i, features_i, labels_i, mask_i, reg)`` over agents; x (N, d) or (d,)."""
        features, labels, mask = self._rows(batch_idx)
        return jax.vmap(fn, in_axes=(x_axis, 0, 0, 0, None))(x, features, labels, mask, self.reg)


def _sq_norm(a: Array) -> Array:
    """Squared Euclidean (Frobenius) norm, ()."""
    return jnp.sum(a * a)


def _check_shapes(p: Problem) -> None:
    """Raise ValueError unless every field's shape agrees with features (N, m, d)."""
    if np.ndim(p.features) != 3:
        raise ValueError(f"Problem.features must be (N, m, d); got shape {np.shape(p.features)}")
    N, m, d = np.shape(p.features)
    if min(N, m, d) < 1:
        raise ValueError(f"Problem is empty: features (N, m, d) = {(N, m, d)}; it needs at "
                         "least one agent (n_agents >= 1), one sample per agent and one "
                         "dimension (d >= 1)")
    n_test = np.shape(p.test_features)[0] if np.ndim(p.test_features) else -1
    expected = {
        "labels": (N, m),
        "mask": (N, m),
        "x_star": (d,),
        "f_star": (),
        "test_features": (n_test, d),
        "test_labels": (n_test,),
    }
    for field, shape in expected.items():
        if np.shape(getattr(p, field)) != shape:
            raise ValueError(
                f"Problem.{field} must have shape {shape} to match features (N, m, d) = "
                f"{(N, m, d)}; got {np.shape(getattr(p, field))}"
            )


def _check_reg(p: Problem) -> None:
    """Raise ValueError unless reg has exactly the loss's keys, each a finite scalar >= 0."""
    keys, expected = set(p.reg), set(p.loss.reg_keys)
    if keys != expected:
        raise ValueError(
            f"reg for loss {p.loss.name!r} must have keys {sorted(expected)}; got {sorted(keys)}"
        )
    for key, value in p.reg.items():
        if np.ndim(value) != 0 or not np.isfinite(np.asarray(value)) or np.asarray(value) < 0:
            raise ValueError(f"Problem.reg[{key!r}] must be a finite scalar >= 0; got {value!r}")


def _check_finite_rows(field: str, a: np.ndarray, unit: str) -> None:
    """Raise ValueError naming ``field`` and the first row (agent, test row) with NaN or inf."""
    if a.size == 0:
        return
    bad = ~np.isfinite(a.reshape(a.shape[0], -1)).all(axis=1)
    if bad.any():
        raise ValueError(
            f"Problem.{field} has a non-finite value (NaN or inf) at {unit} {int(np.argmax(bad))}"
        )


def _check_mask(mask: np.ndarray) -> None:
    """Raise ValueError if a mask value is not 0/1 or an agent has no real sample."""
    if not np.isin(mask, (0.0, 1.0)).all():
        raise ValueError("Problem.mask must hold only 0 (padding) and 1 (real sample)")
    empty = mask.sum(axis=1) == 0
    if empty.any():
        raise ValueError(
            f"Problem.mask has no real sample for agent {int(np.argmax(empty))}: every agent "
            "needs at least one row with mask 1 (empty shard)"
        )


def _check_classes(field: str, labels: np.ndarray, real: np.ndarray | None) -> None:
    """Raise ValueError naming the first agent (or test row) whose real labels are not ±1."""
    bad = ~np.isin(labels, (-1.0, 1.0))
    if real is not None:
        bad = (bad & real).any(axis=1)
    if bad.any():
        unit = "agent" if real is not None else "test row"
        raise ValueError(
            f"Problem.{field} must be ±1 for a classifier loss; got another value at {unit} "
            f"{int(np.argmax(bad))}"
        )
