r"""Problems for any differentiable model: a plain ``apply(params, x)`` and a per-sample loss.

``from_model(apply, init_params, features, labels, parts=..., loss="cross_entropy")`` builds a
:class:`ModelProblem`: agent i minimizes f_i(θ) = mean over its real samples of
ℓ(apply(θ, x_s), y_s) (+ an optional weight decay), the sum over agents being the objective, as
for every ``Problem``. Parameters θ may be any pytree; the algorithms keep seeing one flat
vector per agent, stacked (N, d), because the pytree is flattened once
(``jax.flatten_util.ravel_pytree`` order) and unflattened by a static :class:`ParamLayout`.

**The vector the algorithms see is the displacement from ``init_params``**: x = θ − θ₀. Every
algorithm starts its agents at x = 0 (``zeros_like_models``), which for a neural network would
be a saddle point (all hidden units equal, zero gradient); with x = θ − θ₀ a run starts at the
user's random initialization θ₀ and nothing in the algorithms changes. Gradients in x equal
gradients in θ. :meth:`ModelProblem.params_of` turns a model row back into the θ pytree.
``weight_decay`` adds ½·c‖x‖² = ½·c‖θ − θ₀‖² (decay towards the initialization, the "L2-SP"
penalty of Li, Grandvalet & Davoine, ICML 2018), keeping the penalty a function of x alone.

**Design: a new ``Loss`` kind plus a ``Problem`` subclass.** :class:`ModelLoss` implements the
``Loss`` call signature ``(x, features_i, labels_i, mask_i, reg)`` for ``__call__`` and
``grad`` (the latter by ``jax.grad``), so everything that reaches a loss through
``problem.loss`` — ``Problem.local_grads``, the minibatch and per-sample gradient helpers of
``jaxdp.algorithms._sampling``, the cost counter — works on a model unchanged.
:class:`ModelProblem` subclasses ``Problem`` only to replace what assumes a linear margin
model: the model dimension (the parameter count, not a feature axis), validation of images and
integer class labels, metrics (test loss and accuracy through ``apply``; no x*), and the
host-side constants a general model cannot give (``smoothness`` raises; ``gradient_bound`` is
``inf``, which makes accountants that rely on it report ε = ∞ instead of a wrong number).
:attr:`ModelProblem.capabilities` tells the engine what the problem lacks; an algorithm that
declares a need it lacks (``Algorithm.requires``: a Hessian, an exact local solve, smoothness,
x*) is refused before the run.

**Flax and Equinox** work through their apply functions, with no dependency here::

    # Flax linen
    module = MLP(); theta0 = module.init(key, x[:1])
    problem = from_model(module.apply, theta0, x, y, parts=parts)
    # Equinox
    params, static = eqx.partition(model, eqx.is_array)
    apply = lambda p, xb: jax.vmap(eqx.combine(p, static))(xb)
    problem = from_model(apply, params, x, y, parts=parts)

Per-example gradients and clipping (DP-SGD's ``clip(∇ℓ_s, C)``) are in
``jaxdp/problems/_clipping.py`` (exported from ``jaxdp.problems``).

Shapes: N agents, m rows per shard (padded), ``...`` a sample's feature shape (e.g. (8, 8) or
(64,)), k model outputs, d parameter count, b minibatch rows.
"""
from __future__ import annotations

import dataclasses
import functools
import hashlib
import math
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

import jax
import jax.numpy as jnp
import numpy as np
from jax.flatten_util import ravel_pytree

from jaxdp._types import AgentArray, Array
from jaxdp.problems._clipping import clipped_grad_mean
from jaxdp.problems._losses import _Ridge, masked_mean
from jaxdp.problems._problem import Problem, _check_finite_rows, _check_mask, _sq_norm

MODEL_CAPABILITIES = frozenset({"gradients", "sample_gradients"})
"""What a model problem gives: local and per-sample gradients (no Hessian, no exact local solve,
no smoothness bound, no x*)."""

DEFAULT_MAX_ELEMENTS = 2**24
"""Default bound on the live per-example gradient entries (rows × d) of one micro-batch."""



# --- parameters: pytree <-> flat vector -----------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class ParamLayout:
    """Static description of a parameter pytree: unflattens a (d,) vector (hashable).

    Attributes:
      treedef: the pytree structure.
      shapes: each leaf's shape, in ``jax.tree.leaves`` order.
    """

    treedef: Any
    shapes: tuple[tuple[int, ...], ...]

    @classmethod
    def of(cls, params) -> ParamLayout:
        """The layout of the pytree ``params``."""
        leaves, treedef = jax.tree.flatten(params)
        return cls(treedef, tuple(tuple(np.shape(leaf)) for leaf in leaves))

    @property
    def size(self) -> int:
        """d, the number of parameters."""
        return int(sum(math.prod(s) for s in self.shapes))

    def flatten(self, tree) -> Array:
        """(d,): the leaves of a pytree of this layout, raveled and concatenated (``unflatten``'s
        inverse)."""
        return jnp.concatenate([jnp.ravel(leaf) for leaf in jax.tree.leaves(tree)])

    def unflatten(self, flat: Array):
        """The pytree whose leaves are consecutive pieces of ``flat`` (d,), reshaped."""
        ends = np.cumsum([math.prod(s) for s in self.shapes])[:-1]
        pieces = jnp.split(flat, ends) if len(self.shapes) > 1 else [flat]
        leaves = [p.reshape(s) for p, s in zip(pieces, self.shapes, strict=True)]
        return jax.tree.unflatten(self.treedef, leaves)


@dataclasses.dataclass(frozen=True, eq=False)
class _Constant:
    """A host array as static metadata, hashed and compared by content (θ₀ inside the loss)."""

    value: np.ndarray

    @functools.cached_property
    def _digest(self) -> str:
        a = np.ascontiguousarray(self.value)
        return hashlib.sha256(a.tobytes() + str(a.dtype).encode()).hexdigest()

    def __hash__(self) -> int:
        return hash(self._digest)

    def __eq__(self, other) -> bool:
        return isinstance(other, _Constant) and self._digest == other._digest


# --- per-sample losses: (outputs (b, k...), labels (b, ...)) -> (b,) -----------------------------
def cross_entropy(outputs: Array, labels: Array) -> Array:
    """Softmax cross-entropy of logits (b, k) against integer classes (b,).

    The label's logit is picked by a one-hot mask (a select and a sum, exact), not by indexing:
    the backward pass of ``take_along_axis`` is a float scatter-add, which a GPU runs with
    atomics (not bit-reproducible)."""
    hit = labels.astype(jnp.int32)[:, None] == jnp.arange(outputs.shape[1])[None, :]
    picked = jnp.sum(jnp.where(hit, outputs, 0.0), axis=1)
    return jax.nn.logsumexp(outputs, axis=1) - picked


def mse(outputs: Array, labels: Array) -> Array:
    """½‖output − target‖² per sample; outputs (b,) or (b, k...), targets of the same shape."""
    diff = outputs.reshape(labels.shape) - labels
    return 0.5 * jnp.sum(diff.reshape(diff.shape[0], -1) ** 2, axis=1)


def logistic(outputs: Array, labels: Array) -> Array:
    """log(1 + exp(−y t)) of scores t (b,) or (b, 1) against ±1 labels (b,)."""
    return jnp.logaddexp(0.0, -labels * outputs.reshape(labels.shape))


SAMPLE_LOSSES: dict[str, Callable] = {
    "cross_entropy": cross_entropy, "mse": mse, "logistic": logistic}
"""Per-sample losses by name; ``from_model`` also takes a callable of the same signature."""


def _predicted_correct(kind: str, outputs: Array, labels: Array) -> Array | None:
    """(b,) 1.0 where the prediction is right, for a classifier loss; ``None`` otherwise."""
    if kind == "cross_entropy":
        return (jnp.argmax(outputs, axis=1) == labels).astype(outputs.dtype)
    if kind == "logistic":
        return (jnp.sign(outputs.reshape(labels.shape)) == labels).astype(outputs.dtype)
    return None


def _tied(features: Array, x: Array) -> Array:
    """``features`` + 0, the zero taken from x: the rows are batched wherever the model is.

    Works around JAX's batching rule of ``lax.conv_general_dilated`` (JAX 0.10): under ``vmap``
    over the sharded seed axis of ``jaxdp.run``, the kernel's gradient is a grouped convolution
    (the inner ``vmap`` over agents or rows makes it one) whose data operand is not batched over
    the seeds, and that case raises ``NotImplementedError`` when the operands carry a sharding.
    With the rows batched like the model, both operands are, and the rule handles it. The value is
    unchanged for finite x (a NaN or infinite parameter makes the outputs non-finite anyway), and
    ``stop_gradient`` keeps the zero out of the gradient.
    """
    return features + jax.lax.stop_gradient(0 * x[0]).astype(features.dtype)


def _has_convolution(jaxpr) -> bool:
    """Whether a jaxpr or one of its sub-jaxprs (calls, loops, branches) has a convolution."""
    for eqn in jaxpr.eqns:
        if eqn.primitive.name == "conv_general_dilated":
            return True
        subs = [getattr(v, "jaxpr", v) for p in eqn.params.values()
                for v in (p if isinstance(p, (tuple, list)) else (p,))]
        if any(hasattr(v, "eqns") and _has_convolution(v) for v in subs):
            return True
    return False


# --- the loss ------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class ModelLoss(_Ridge):
    """f_i(x) = masked mean of ℓ(apply(θ₀ + x), y) + ½·weight_decay‖x‖², x = θ − θ₀ flat.

    Static and hashable: equal models, layouts, initializations and losses share one compiled
    program. ``grad`` is ``jax.grad`` of ``__call__`` (one backward pass over the rows).

    Attributes:
      apply: ``apply(params, x) -> outputs`` on a batch x (b, ...) → (b, k) or (b,).
      layout: the parameter pytree's :class:`ParamLayout`.
      init: θ₀ flat (d,), as a content-hashed constant.
      sample_loss: a key of :data:`SAMPLE_LOSSES` or a callable ``(outputs, labels) -> (b,)``.
      max_elements: bound on rows × d live in :func:`per_example_grads`.
      tie_rows: batch the rows like the model (:func:`_tied`); ``from_model`` sets it when
        ``apply`` has a convolution.
    """

    apply: Callable
    layout: ParamLayout
    init: _Constant
    sample_loss: str | Callable = "cross_entropy"
    max_elements: int = DEFAULT_MAX_ELEMENTS
    tie_rows: bool = False

    name: ClassVar[str] = "model"
    reg_keys: ClassVar[tuple[str, ...]] = ("weight_decay",)
    ridge_key: ClassVar[str] = "weight_decay"

    @property
    def kind(self) -> str:
        """The sample loss's name (``"custom"`` for a callable)."""
        return self.sample_loss if isinstance(self.sample_loss, str) else "custom"

    def params_of(self, x: Array):
        """θ = θ₀ + x as the parameter pytree."""
        return self.layout.unflatten(jnp.asarray(self.init.value, x.dtype) + x)

    def outputs(self, x: Array, features: Array) -> Array:
        """The model's outputs on a batch of rows (b, ...) (a convolution's rows tied to x:
        :func:`_tied`)."""
        return self.apply(self.params_of(x), _tied(features, x) if self.tie_rows else features)

    @property
    def sample_fn(self) -> Callable:
        """The per-sample loss ``(outputs (b, ...), labels (b, ...)) -> (b,)``."""
        return SAMPLE_LOSSES[self.sample_loss] if isinstance(self.sample_loss, str) \
            else self.sample_loss

    def sample_losses_at(self, x: Array, features: Array, labels: Array) -> Array:
        """(b,) per-sample losses ℓ(apply(θ₀ + x, x_s), y_s)."""
        return self.sample_fn(self.outputs(x, features), labels)

    def __call__(self, x, features, labels, mask, reg):
        data = masked_mean(self.sample_losses_at(x, features, labels), mask)
        return data + self.penalty(x, reg)

    def grad(self, x, features, labels, mask, reg):
        return jax.grad(self.__call__)(x, features, labels, mask, reg)

    def data_smoothness(self, features, mask) -> np.ndarray:
        raise ValueError("a model problem has no smoothness bound (the Lipschitz constant of a "
                         "network's gradient is unknown): give the algorithm explicit step sizes")

    def gradient_bound(self, features, mask, reg, *, data_only: bool = False) -> np.ndarray:
        """(N,) ``inf``: a network's gradient is not bounded unless clipped."""
        return np.full(np.shape(mask)[:1], np.inf)


# --- the problem ---------------------------------------------------------------------------------
@functools.partial(
    jax.tree_util.register_dataclass,
    data_fields=["features", "labels", "mask", "reg", "x_star", "f_star", "test_features",
                 "test_labels"],
    meta_fields=["loss", "name"],
)
@dataclasses.dataclass(frozen=True, eq=False)
class ModelProblem(Problem):
    """A ``Problem`` whose loss is a :class:`ModelLoss` (see the module docstring).

    Fields as in ``Problem``, except: ``features`` (N, m, ...) and ``test_features`` (n_test, ...)
    keep each sample's shape; ``labels`` are int classes (cross-entropy) or targets of any
    per-sample shape; ``x_star`` and ``f_star`` are NaN and never reported (a model problem has
    no reference solution).
    """

    capabilities: ClassVar[frozenset[str]] = MODEL_CAPABILITIES

    @property
    def dim(self) -> int:
        """d, the number of model parameters."""
        return self.loss.layout.size

    def params_of(self, x: Array):
        """The parameter pytree θ₀ + x of one model row x (d,)."""
        return self.loss.params_of(x)

    def clipped_sample_mean(self, X: AgentArray, batch_idx: Array, weights: Array | None, clip,
                            denominator=None) -> AgentArray:
        """(N, d): each agent's :func:`clipped_grad_mean` over the rows ``batch_idx`` (N, b).

        Args:
          X: (N, d) models.
          batch_idx: (N, b) rows of each shard.
          weights: (N, b) row weights, or ``None`` for all ones.
          clip: C, scalar or (N,) (``inf``: no clipping).
          denominator: what each agent's weighted sum is divided by; default Σ weights (b).
        """
        features, labels, _ = self._rows(batch_idx)
        weights = jnp.ones(batch_idx.shape, X.dtype) if weights is None else weights
        clips = jnp.broadcast_to(jnp.asarray(clip, X.dtype), X.shape[:1])

        def agent(x, a, y, w, c):
            return clipped_grad_mean(self.loss, x, a, y, w, c, self.reg, denominator)

        return jax.vmap(agent)(X, features, labels, weights, clips)

    def smoothness(self) -> np.ndarray:
        """Raises ValueError: a general model has no known smoothness bound."""
        return self.loss.data_smoothness(self.features, self.mask)

    def test_loss_and_accuracy(self, x: Array) -> tuple[Array, Array | None]:
        """() mean test loss and () test accuracy (``None`` without classes) of one model x."""
        outputs = self.loss.outputs(x, self.test_features)
        ones = jnp.ones(self.test_labels.shape[:1], x.dtype)
        loss = masked_mean(self.loss.sample_losses_at(x, self.test_features, self.test_labels),
                           ones)
        correct = _predicted_correct(self.loss.kind, outputs, self.test_labels)
        return loss, None if correct is None else jnp.mean(correct)

    def metrics(self, X: AgentArray) -> dict[str, Array]:
        """Metrics of the agents' models X (N, d), each a () array (no x*: no ``dist_to_opt``).

        ``objective`` f(x̄) with x̄ the agent average; ``grad_norm_sq`` ‖∇f(x̄)‖²;
        ``consensus_error`` ‖X − 1x̄ᵀ‖²_F; and with a test set ``test_loss`` of x̄, and for a
        classifier ``test_accuracy`` of x̄ with the mean and minimum over agents of each agent's
        own model's test accuracy (``agent_test_accuracy_mean``/``_min``).
        """
        x_bar = jnp.mean(X, axis=0)
        value, grad = jax.value_and_grad(self.objective)(x_bar)
        out = {"objective": value, "grad_norm_sq": _sq_norm(grad),
               "consensus_error": _sq_norm(X - x_bar[None, :])}
        if self.test_labels.shape[0] == 0:
            return out
        out["test_loss"], accuracy = self.test_loss_and_accuracy(x_bar)
        if accuracy is not None:
            per_agent = jax.vmap(lambda x: self.test_loss_and_accuracy(x)[1])(X)
            out.update(test_accuracy=accuracy, agent_test_accuracy_mean=jnp.mean(per_agent),
                       agent_test_accuracy_min=jnp.min(per_agent))
        return out

    def summary(self) -> dict[str, Any]:
        """Host: JSON-serialisable description, with the sample loss and feature shape."""
        return {**super().summary(), "sample_loss": self.loss.kind,
                "feature_shape": list(np.shape(self.features)[2:])}

    def validate(self) -> ModelProblem:
        """Host: check shapes, finiteness, the mask and class labels; return ``self``.

        Raises:
          ValueError: naming the field and the first bad agent or row.
        """
        _check_model_shapes(self)
        for field in ("features", "mask"):
            _check_finite_rows(field, np.asarray(getattr(self, field)), "agent")
        _check_finite_rows("test_features", np.asarray(self.test_features), "test row")
        _check_mask(np.asarray(self.mask))
        wd = np.asarray(self.reg.get("weight_decay", 0.0))
        if set(self.reg) != {"weight_decay"} or not np.isfinite(wd) or wd < 0:
            raise ValueError(f"ModelProblem.reg must be {{'weight_decay': c}} with c >= 0 finite; "
                             f"got {self.reg!r}")
        return self


def _check_model_shapes(p: ModelProblem) -> None:
    """Raise ValueError unless features (N, m, ...), labels (N, m, ...), mask (N, m) agree."""
    if np.ndim(p.features) < 3:
        raise ValueError("ModelProblem.features must be (N, m, ...) with a feature axis; got "
                         f"shape {np.shape(p.features)}")
    lead = np.shape(p.features)[:2]
    for field in ("labels", "mask"):
        if np.shape(getattr(p, field))[:2] != lead:
            raise ValueError(f"ModelProblem.{field} must start with (N, m) = {lead} like features;"
                             f" got {np.shape(getattr(p, field))}")
    n_test = np.shape(p.test_features)[0]
    if np.shape(p.test_labels)[:1] != (n_test,):
        raise ValueError(f"ModelProblem.test_labels must have {n_test} rows like test_features; "
                         f"got shape {np.shape(p.test_labels)}")


# --- the builder ---------------------------------------------------------------------------------
def pack_parts(features, labels, parts: Sequence) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Stack pooled rows into per-agent shards: (N, m, ...), (N, m, ...), mask (N, m).

    ``parts[i]`` lists the pooled row indices of agent i; shards are padded to the largest with
    zero rows (mask 0), real rows first.

    Raises:
      ValueError: no part, an empty part, or an index outside [0, n).
    """
    n = np.shape(features)[0]
    parts = [np.asarray(p, np.int64).reshape(-1) for p in parts]
    if not parts:
        raise ValueError("from_model: parts is empty; give one index array per agent")
    sizes = np.array([len(p) for p in parts])
    if (sizes == 0).any():
        raise ValueError(f"from_model: agent {int(np.argmin(sizes))} has no sample (empty part)")
    flat = np.concatenate(parts)
    if flat.min() < 0 or flat.max() >= n:
        raise ValueError(f"from_model: parts index rows outside [0, {n}): min {flat.min()}, "
                         f"max {flat.max()}")
    m = int(sizes.max())
    mask = np.arange(m)[None, :] < sizes[:, None]
    index = np.zeros((len(parts), m), np.int64)
    index[mask] = flat
    take = lambda a: np.asarray(a)[index] * mask.reshape(mask.shape + (1,) * (np.ndim(a) - 1))
    return take(features), take(labels), mask.astype(np.float64)


def from_model(apply: Callable, init_params, features, labels, *, parts: Sequence,
               loss: str | Callable = "cross_entropy", test: tuple[Any, Any] | None = None,
               weight_decay: float = 0.0, dtype=None, max_elements: int =
               DEFAULT_MAX_ELEMENTS, name: str = "model") -> ModelProblem:
    """A validated :class:`ModelProblem` for ``apply`` on pooled data split by ``parts``.

    Args:
      apply: ``apply(params, x) -> outputs`` on a batch x (b, ...): logits (b, k) for
        cross-entropy, scores (b,) or (b, 1) for logistic, (b, ...) for mse.
      init_params: θ₀, any pytree of float arrays (the runs start there; see the module doc).
      features: (n, ...) pooled samples.
      labels: (n,) int classes in [0, k) (cross-entropy), ±1 (logistic), or (n, ...) targets.
      parts: one index array per agent (a partitioner's output, ``jaxdp.problems.split``).
      loss: ``"cross_entropy"``, ``"mse"``, ``"logistic"`` or a callable ``(outputs, labels) ->
        (b,)`` per-sample losses.
      test: optional ``(test_features (n_test, ...), test_labels (n_test, ...))``.
      weight_decay: c >= 0 of ½·c‖θ − θ₀‖².
      dtype: the float dtype of features and models (default JAX's default float: float64
        when x64 is on, else float32).
      max_elements: bound on rows × d live in per-example gradients (micro-batching).
      name: the problem's name.

    Raises:
      ValueError: an unknown loss name, a non-float parameter leaf, bad parts, shapes that do not
        match, or class labels outside [0, k) (checked with one forward pass).
    """
    if isinstance(loss, str) and loss not in SAMPLE_LOSSES:
        raise ValueError(f"from_model: unknown loss {loss!r}; use one of {sorted(SAMPLE_LOSSES)} "
                         "or a callable (outputs, labels) -> (b,) per-sample losses")
    if isinstance(max_elements, bool) or not isinstance(max_elements, int) or max_elements < 1:
        raise ValueError(f"from_model: max_elements must be an int >= 1; got {max_elements!r}")
    dtype = default_float(dtype)
    theta0 = _flat_init(init_params, dtype)
    row = jnp.asarray(np.asarray(features)[:1], dtype)
    _check_apply(apply, init_params, jnp.asarray(np.asarray(features)[:2], dtype))
    convolves = _has_convolution(jax.make_jaxpr(apply)(init_params, row).jaxpr)
    model_loss = ModelLoss(apply=apply, layout=ParamLayout.of(init_params),
                           init=_Constant(theta0), sample_loss=loss, max_elements=max_elements,
                           tie_rows=convolves)
    stacked_x, stacked_y, mask = pack_parts(features, labels, parts)
    test_x, test_y = test if test is not None else (
        np.zeros((0,) + np.shape(features)[1:]), np.zeros((0,) + np.shape(labels)[1:]))
    label_dtype = jnp.int32 if loss == "cross_entropy" else dtype
    problem = ModelProblem(
        features=jnp.asarray(stacked_x, dtype), labels=jnp.asarray(stacked_y, label_dtype),
        mask=jnp.asarray(mask, dtype), reg={"weight_decay": jnp.asarray(weight_decay, dtype)},
        x_star=jnp.full((theta0.size,), jnp.nan, dtype), f_star=jnp.asarray(jnp.nan, dtype),
        test_features=jnp.asarray(test_x, dtype), test_labels=jnp.asarray(test_y, label_dtype),
        loss=model_loss, name=name).validate()
    _check_outputs(problem, np.asarray(labels), np.asarray(test_y))
    return problem


def default_float(dtype=None):
    """``dtype`` canonicalized, or JAX's default float for ``None`` (float64 when x64 is on)."""
    return jax.dtypes.canonicalize_dtype(jnp.float64 if dtype is None else dtype)


PARTITION_HINT = ("an Equinox module? pass its arrays and close over the rest: `params, static "
                  "= eqx.partition(model, eqx.is_inexact_array)` and `apply = lambda p, xb: "
                  "jax.vmap(eqx.combine(p, static))(xb)`")

BATCH_STATS_HINT = (
    "the model keeps mutable collections (batch statistics, e.g. Flax nn.BatchNorm with "
    "use_running_average=False): batch statistics mix the examples of a batch, so one record "
    "reaches every other example's gradient and per-example clipping bounds nothing; use a "
    "per-example normalization (nn.LayerNorm, nn.GroupNorm) or fixed statistics "
    "(use_running_average=True)")


def _check_apply(apply: Callable, init_params, rows) -> None:
    """``apply(init_params, rows)`` on one and on two rows, abstractly (nothing compiles):
    outputs must have the batch as their leading axis. Each failure is a ``ValueError`` that
    names the input shape the model got and the likely fix."""
    for batch in (rows[:1], rows[:2]):
        try:
            out = jax.eval_shape(apply, init_params, batch)
        except Exception as err:  # noqa: BLE001 -- the user's model: say what it got
            text = str(err)
            hint = (BATCH_STATS_HINT if "mutable" in text or "batch_stats" in text else
                    "apply takes a batch (b, *feature_shape) and returns one output row per "
                    "example; reshape the features to what the model's first layer expects (e.g. "
                    "images (n, 8, 8) to (n, 64) for an MLP of input size 64), or vmap a "
                    "one-example model")
            raise ValueError(f"from_model: apply(init_params, x) failed on a batch x of shape "
                             f"{tuple(batch.shape)}: {type(err).__name__}: {text.splitlines()[0]}"
                             f" -- {hint}") from err
        leading = [leaf.shape[:1] for leaf in jax.tree.leaves(out)]
        if any(shape != (batch.shape[0],) for shape in leading):
            raise ValueError(f"from_model: apply on a batch of {batch.shape[0]} row(s) of shape "
                             f"{tuple(batch.shape[1:])} returned shapes "
                             f"{[leaf.shape for leaf in jax.tree.leaves(out)]}: the outputs need "
                             "the batch as their leading axis (vmap a one-example model)")


def _flat_init(init_params, dtype) -> np.ndarray:
    """θ₀ flat (``ravel_pytree`` order) on the host; refuses non-array and non-float leaves."""
    for path, leaf in jax.tree_util.tree_leaves_with_path(init_params):
        if not (hasattr(leaf, "dtype") or isinstance(leaf, (int, float, np.number))):
            raise ValueError(f"from_model: parameter {jax.tree_util.keystr(path)} is a "
                             f"{type(leaf).__name__}, not an array: every leaf of init_params "
                             f"must be a float array ({PARTITION_HINT})")
        if not jnp.issubdtype(jnp.asarray(leaf).dtype, jnp.floating):
            raise ValueError(f"from_model: parameter {jax.tree_util.keystr(path)} has dtype "
                             f"{jnp.asarray(leaf).dtype}; every parameter leaf must be a float "
                             "array (keep integer state out of params)")
    flat, _ = ravel_pytree(init_params)
    return np.asarray(flat, dtype)


def _check_outputs(problem: ModelProblem, labels: np.ndarray, test_labels: np.ndarray) -> None:
    """One forward pass on a row: cross-entropy labels must lie in [0, k) for k outputs."""
    x0 = jnp.zeros((problem.dim,), problem.features.dtype)
    out = jax.eval_shape(problem.loss.outputs, x0, problem.features[0, :1])
    if problem.loss.kind != "cross_entropy":
        return
    if len(out.shape) != 2:
        raise ValueError(f"from_model: cross-entropy needs logits (b, k) from apply; got shape "
                         f"{out.shape} for b = 1")
    k = out.shape[1]
    every = np.concatenate([labels.reshape(-1), test_labels.reshape(-1)])
    bad = (every < 0) | (every >= k) | (every != np.round(every))
    if bad.any():
        label = every[np.argmax(bad)].item()
        label = int(label) if float(label).is_integer() else label
        raise ValueError(f"from_model: class label {label!r} is not an integer in "
                         f"[0, {k}) for the {k} logits apply returns")


__all__ = [
    "DEFAULT_MAX_ELEMENTS",
    "MODEL_CAPABILITIES",
    "SAMPLE_LOSSES",
    "ModelLoss",
    "ModelProblem",
    "ParamLayout",
    "cross_entropy",
    "default_float",
    "from_model",
    "logistic",
    "mse",
    "pack_parts",
]
