r"""Per-agent losses: a margin data term averaged over an agent's samples, plus a penalty.

Every loss here has the form

.. math::

   f_i(x) = \frac{1}{m_i} \sum_{s:\,\mathrm{mask}_{is}=1} \ell(z_{is}^\top x, y_{is})
            + R(x; \mathrm{reg}),

with a per-sample term :math:`\ell(t, y)` of the prediction :math:`t = z^\top x` and a
separable penalty :math:`R` whose weights are the leaves of the ``reg`` dict (so they can be
vmapped and differentiated).

Methods doing elementwise math take ``xp``: ``jax.numpy`` by default, ``numpy`` for the float64
host solver of ``_reference.py``, so one formula serves both.

Adding a loss (e.g. the ℓ1-regularized logistic regression of papers 002/003): write a frozen
dataclass subclassing :class:`Loss` with a ``name``, ``reg_keys``, and the data-term and penalty
methods it changes; ``__call__(x, features_i, labels_i, mask_i, reg) -> ()`` and the closed-form
``grad`` come for free. A nonsmooth penalty returns ``inf`` from ``penalty_smoothness`` (then
``solve_reference`` refuses it: build with ``reference=False``). A loss that is not of this
margin form (a small MLP) overrides ``__call__``, ``grad``, ``data_smoothness`` and
``gradient_bound``, keeping the same call signature. Register it in ``LOSSES`` under its ``name``.

Shapes: N agents, m rows of one agent's shard (or minibatch), d model dimension.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, ClassVar

import jax
import jax.numpy as jnp
import numpy as np

from jaxdp._precision import matmul
from jaxdp._types import Array

Reg = dict[str, Any]  # regularizer weights: str -> float or () array


def masked_mean(values: Array, mask: Array) -> Array:
    """Mean of ``values`` (m,) over the rows where ``mask`` (m,) is 1; returns ()."""
    return jnp.sum(mask * values) / jnp.sum(mask)


def sigmoid(t, xp=jnp):
    """σ(t) = 1 / (1 + e^{-t}), stable for large |t|.

    In JAX this is XLA's logistic op (one transcendental: 3.5x faster than ``exp(-logaddexp)`` in
    the DGD benchmark); in numpy the ``logaddexp`` form.
    """
    if xp is jnp:
        return jax.nn.sigmoid(t)
    return xp.exp(-xp.logaddexp(0.0, -t))


@dataclasses.dataclass(frozen=True)
class Loss:
    """Base class: margin term ℓ(zᵀx, y) averaged over real samples, plus a penalty R(x; reg).

    Subclasses are frozen dataclasses without fields (or with static, hashable ones only), so
    they hash by value and can sit in a pytree's static metadata.

    Attributes:
      name: registry key, e.g. ``"logistic"``.
      reg_keys: the keys the ``reg`` dict must have.
      classifier: whether labels are ±1 classes (enables the test-accuracy metric).
      curvature_bound: sup over (t, y) of ∂²ℓ/∂t² (data-term smoothness per unit ‖z‖²).
      slope_bound: sup over (t, y) of |∂ℓ/∂t| (``inf`` when unbounded).
    """

    name: ClassVar[str] = "loss"
    reg_keys: ClassVar[tuple[str, ...]] = ()
    classifier: ClassVar[bool] = False
    curvature_bound: ClassVar[float] = math.inf
    slope_bound: ClassVar[float] = math.inf
    l1_key: ClassVar[str | None] = None  # reg key of a c‖x‖₁ term, handled by ``prox``

    # --- data term per sample, t = zᵀx: (m,) -> (m,) -------------------------------------------
    def sample_losses(self, t, y, xp=jnp):
        """ℓ(t, y) per sample."""
        raise NotImplementedError

    def sample_slopes(self, t, y, xp=jnp):
        """∂ℓ/∂t per sample."""
        raise NotImplementedError

    def sample_curvatures(self, t, y, xp=jnp):
        """∂²ℓ/∂t² per sample."""
        raise NotImplementedError

    # --- separable penalty, x (d,) ---------------------------------------------------------------
    def penalty(self, x, reg: Reg, xp=jnp):
        """R(x; reg), ()."""
        return 0.0 * xp.sum(x)

    def penalty_grad(self, x, reg: Reg, xp=jnp):
        """∇R(x), (d,)."""
        return 0.0 * x

    def penalty_curvatures(self, x, reg: Reg, xp=jnp):
        """Diagonal of ∇²R(x), (d,)."""
        return 0.0 * x

    def penalty_smoothness(self, reg: Reg) -> float:
        """Host: sup over x of max |eigenvalue of ∇²R(x)|."""
        return 0.0

    def penalty_gradient_bound(self, reg: Reg, d: int) -> float:
        """Host: sup over x of ‖∇R(x)‖ in dimension d (``inf`` when unbounded)."""
        return 0.0

    # --- nonsmooth ℓ1 term, handled by its proximal operator -------------------------------------
    def nonsmooth(self, x, reg: Reg, xp=jnp):
        """c‖x‖₁ with c = reg[l1_key] (0 when the loss has no ℓ1 term), ()."""
        if self.l1_key is None:
            return 0.0 * xp.sum(x)
        return reg[self.l1_key] * xp.sum(xp.abs(x))

    def prox(self, x, step, reg: Reg, xp=jnp):
        """prox of ``step · c‖·‖₁`` at x: soft thresholding at ``step · c`` (identity without ℓ1)."""
        if self.l1_key is None:
            return x
        t = step * reg[self.l1_key]
        return xp.sign(x) * xp.maximum(xp.abs(x) - t, 0.0)

    # --- the agent's loss and gradient (jittable) ------------------------------------------------
    def __call__(self, x: Array, features: Array, labels: Array, mask: Array, reg: Reg) -> Array:
        """f_i(x): masked mean of ℓ over the rows, plus R(x).

        Args:
          x: (d,) model.
          features: (m, d) the agent's rows (or a minibatch of them).
          labels: (m,) targets or ±1 classes.
          mask: (m,) 1 for a real sample, 0 for padding.
          reg: regularizer weights, keys ``reg_keys``.

        Returns:
          () the loss.
        """
        margins = matmul(features, x)
        data = masked_mean(self.sample_losses(margins, labels), mask)
        return data + self.penalty(x, reg) + self.nonsmooth(x, reg)

    def grad(self, x: Array, features: Array, labels: Array, mask: Array, reg: Reg) -> Array:
        """∇f_i(x) in closed form, (d,): Zᵀ(mask ⊙ ℓ'(Zx, y)) / Σmask + ∇R(x).

        Equals ``jax.grad(self)`` (tested) for smooth losses; with an ℓ1 term (``l1_key``) it is
        the gradient of the smooth part only, and algorithms apply :meth:`prox` for the rest.
        Arguments as in ``__call__``.
        """
        weights = mask / jnp.sum(mask)
        slopes = self.sample_slopes(matmul(features, x), labels)
        return matmul(features.T, weights * slopes) + self.penalty_grad(x, reg)

    def shard_grad(self, x: Array, features: Array, labels: Array, mask: Array, reg: Reg) -> Array:
        """∇f_i(x) over the agent's whole shard (every row; a minibatch goes through
        :meth:`grad`): :meth:`grad` itself here. A loss whose data term is quadratic overrides it
        with the shard's normal equations (:class:`LeastSquares`). Arguments as in ``__call__``."""
        return self.grad(x, features, labels, mask, reg)

    # --- host-side constants (numpy, float64) ----------------------------------------------------
    def data_smoothness(self, features, mask) -> np.ndarray:
        """Host: per-agent data-term smoothness, curvature_bound · λ_max(Z_iᵀ D_i Z_i) / m_i.

        Args:
          features: (N, m, d).
          mask: (N, m); D_i = diag(mask_i) and m_i = Σ mask_i.

        Returns:
          (N,) float64.
        """
        features, mask = np.asarray(features, np.float64), np.asarray(mask, np.float64)
        gram = np.einsum("nmd,nm,nme->nde", features, mask, features)
        top = np.linalg.eigvalsh(gram)[:, -1] / mask.sum(axis=1)
        return self.curvature_bound * np.maximum(top, 0.0)

    def smoothness(self, features, mask, reg: Reg) -> np.ndarray:
        """Host: (N,) upper bounds M_i on the Lipschitz constant of ∇f_i (arguments as above)."""
        return self.data_smoothness(features, mask) + self.penalty_smoothness(reg)

    def gradient_bound(self, features, mask, reg: Reg, *, data_only: bool = False) -> np.ndarray:
        """Host: (N,) bounds on sup_x ‖∇f_i(x)‖ (``inf`` where unbounded).

        The data term obeys ‖∇ mean_s ℓ_s‖ ≤ max_s sup‖∇ℓ_s‖ = slope_bound · max_s ‖z_s‖ over
        real samples; that is also the per-sample bound a sensitivity analysis needs, where the
        penalty cancels (``data_only=True`` leaves it out).
        """
        features, mask = np.asarray(features, np.float64), np.asarray(mask, np.float64)
        radius = np.max(np.linalg.norm(features, axis=2) * (mask > 0), axis=1)
        if math.isinf(self.slope_bound):
            data = np.full(radius.shape, np.inf)
        else:
            data = self.slope_bound * radius
        if data_only:
            return data
        return data + self.penalty_gradient_bound(reg, features.shape[2])


def _weight(reg: Reg, key: str) -> float:
    """Host: a reg leaf as a Python float."""
    return float(np.asarray(reg[key]))


@dataclasses.dataclass(frozen=True)
class _Ridge(Loss):
    """Penalty ½·c‖x‖² with c = reg[ridge_key]."""

    ridge_key: ClassVar[str] = "ridge"

    def penalty(self, x, reg, xp=jnp):
        return 0.5 * reg[self.ridge_key] * xp.sum(x * x)

    def penalty_grad(self, x, reg, xp=jnp):
        return reg[self.ridge_key] * x

    def penalty_curvatures(self, x, reg, xp=jnp):
        return reg[self.ridge_key] + 0.0 * x

    def penalty_smoothness(self, reg):
        return _weight(reg, self.ridge_key)

    def penalty_gradient_bound(self, reg, d):
        return 0.0 if _weight(reg, self.ridge_key) == 0.0 else math.inf


@dataclasses.dataclass(frozen=True)
class LeastSquares(_Ridge):
    """f_i(x) = ½ mean_s (a_sᵀx − b_s)² + ½·ridge‖x‖² (reg key ``"ridge"``).

    The linear regression of paper 003's experiments (DP-RECAL §VII) without its ℓ1 term.
    Smoothness:
    λ_max(A_iᵀA_i)/m_i + ridge (exact: the Hessian is constant); the gradient is unbounded.
    """

    name: ClassVar[str] = "least_squares"
    reg_keys: ClassVar[tuple[str, ...]] = ("ridge",)
    curvature_bound: ClassVar[float] = 1.0
    slope_bound: ClassVar[float] = math.inf

    def sample_losses(self, t, y, xp=jnp):
        return 0.5 * (t - y) ** 2

    def sample_slopes(self, t, y, xp=jnp):
        return t - y

    def sample_curvatures(self, t, y, xp=jnp):
        return 1.0 + 0.0 * t

    def shard_grad(self, x, features, labels, mask, reg):
        """∇f_i(x) from the shard's normal equations, ``(ZᵀDZ)x − ZᵀDy + ridge·x`` with
        ``D = diag(mask)/Σmask``, when the shard has at least as many rows as coordinates
        (``m ≥ d``; else :meth:`grad`, ``Zᵀ D(Zx − y)``). The same gradient in exact arithmetic;
        ``ZᵀDZ`` and ``ZᵀDy`` depend on the data only, so inside a run — a loop over steps whose
        data do not change — XLA computes them once (loop-invariant code motion) and a step
        costs ``d²`` per agent instead of ``2md``: 5x faster DGD on a 200 × 10 shard. Outside a
        loop each call pays ``md²`` for them.

        The rows are first scaled by a power of two ``s`` that brings the largest below 1 (exact:
        every product is the unscaled one times a power of two), so ``ZᵀDZ`` overflows no sooner
        than the gradient itself: a finite record of 1e20 in float32 gives the rows form's
        gradient, not ``inf · 0``."""
        rows, dim = features.shape
        if dim > rows:
            return self.grad(x, features, labels, mask, reg)
        info = jnp.finfo(features.dtype)
        _, exponent = jnp.frexp(jnp.max(jnp.abs(features)))
        scale = jnp.ldexp(jnp.ones((), features.dtype),
                          -jnp.clip(exponent, 0, -info.minexp - info.nmant))  # a normal float
        scaled = features * scale
        weighted = scaled * (mask / jnp.sum(mask))[:, None]
        return (matmul(matmul(weighted.T, scaled), x) / scale / scale
                - matmul(weighted.T, labels) / scale + self.penalty_grad(x, reg))


@dataclasses.dataclass(frozen=True)
class Logistic(_Ridge):
    """f_i(x) = mean_s log(1 + exp(−y_s z_sᵀx)) + ½·lam‖x‖² (reg key ``"lam"``), labels ±1.

    Paper 001's experiments (lam = 1 on unit-norm Adult rows) and paper 002's ℓ2 variant
    (lam = λ/N). The
    data term is ``logaddexp(0, −y t)``, a stable softplus. Smoothness λ_max(Z_iᵀZ_i)/(4 m_i) +
    lam; gradient bound max_s ‖z_s‖ for the data term, inf once lam > 0.
    """

    name: ClassVar[str] = "logistic"
    reg_keys: ClassVar[tuple[str, ...]] = ("lam",)
    classifier: ClassVar[bool] = True
    curvature_bound: ClassVar[float] = 0.25
    slope_bound: ClassVar[float] = 1.0
    ridge_key: ClassVar[str] = "lam"

    def sample_losses(self, t, y, xp=jnp):
        return xp.logaddexp(0.0, -y * t)

    def sample_slopes(self, t, y, xp=jnp):
        return -y * sigmoid(-y * t, xp)

    def sample_curvatures(self, t, y, xp=jnp):
        return sigmoid(y * t, xp) * sigmoid(-y * t, xp)  # y² = 1


@dataclasses.dataclass(frozen=True)
class NonconvexLogistic(Logistic):
    """Logistic loss plus the nonconvex penalty Σ_t λωx_t²/(1 + ωx_t²) (keys "lam", "omega").

    Paper 000 (DPP²) §6.1, after Antoniadis et al.; also paper 004 §6.1 (λ = ε, ω = 1). The
    penalty's second derivative lies in [−λω/2, 2λω], so M_i ≤ λ_max(Z_iᵀZ_i)/(4 m_i) + 2λω;
    its gradient 2λωx_t/(1 + ωx_t²)² is at most (9/(8√3))·λ√ω per coordinate (at ωx_t² = 1/3).
    """

    name: ClassVar[str] = "nonconvex_logistic"
    reg_keys: ClassVar[tuple[str, ...]] = ("lam", "omega")

    def penalty(self, x, reg, xp=jnp):
        wx2 = reg["omega"] * x * x
        return reg["lam"] * xp.sum(wx2 / (1.0 + wx2))

    def penalty_grad(self, x, reg, xp=jnp):
        lam, omega = reg["lam"], reg["omega"]
        return 2.0 * lam * omega * x / (1.0 + omega * x * x) ** 2

    def penalty_curvatures(self, x, reg, xp=jnp):
        lam, omega = reg["lam"], reg["omega"]
        wx2 = omega * x * x
        return 2.0 * lam * omega * (1.0 - 3.0 * wx2) / (1.0 + wx2) ** 3

    def penalty_smoothness(self, reg):
        return 2.0 * _weight(reg, "lam") * _weight(reg, "omega")

    def penalty_gradient_bound(self, reg, d):
        lam, omega = _weight(reg, "lam"), _weight(reg, "omega")
        return math.sqrt(d) * 9.0 / (8.0 * math.sqrt(3.0)) * lam * math.sqrt(omega)


@dataclasses.dataclass(frozen=True)
class L1LeastSquares(LeastSquares):
    """Least squares + ½·ridge‖x‖² + l1‖x‖₁ (keys "ridge", "l1"): paper 003's linear regression
    (ridge = 1, l1 = ½, DP-RECAL §VII). ``grad`` is the smooth part; ``prox`` soft-thresholds."""

    name: ClassVar[str] = "l1_least_squares"
    reg_keys: ClassVar[tuple[str, ...]] = ("ridge", "l1")
    l1_key: ClassVar[str | None] = "l1"


@dataclasses.dataclass(frozen=True)
class L1Logistic(Logistic):
    """Logistic + ½·lam‖x‖² + l1‖x‖₁ (keys "lam", "l1"): paper 002's ℓ1 model (lam = 0) and
    paper 003's logistic regression (lam = 1, l1 = ½). ``grad`` is the smooth part."""

    name: ClassVar[str] = "l1_logistic"
    reg_keys: ClassVar[tuple[str, ...]] = ("lam", "l1")
    l1_key: ClassVar[str | None] = "l1"


LOSSES: dict[str, type[Loss]] = {
    cls.name: cls
    for cls in (LeastSquares, Logistic, NonconvexLogistic, L1LeastSquares, L1Logistic)
}
