"""A ready-made neural-network problem: a small MLP on the packaged UCI digits.

``digits_mlp(n_agents=16, split="dirichlet:0.3")`` holds out a seeded 20 % test set, splits the
rest among the agents (``jaxdp.problems.split``) and builds a :class:`ModelProblem` for a
64–hidden–10 tanh MLP with softmax cross-entropy. The MLP is plain JAX (:func:`mlp_init`,
:func:`mlp_apply`), written for batches (b, ...) → logits (b, k).
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jaxdp._precision import einsum, matmul
from jaxdp.problems._datasets import load_digits, train_test_split
from jaxdp.problems._model import STRUCTURED_CLIPPING, ModelLoss, ModelProblem, from_model
from jaxdp.problems._partition import split as split_parts


def mlp_init(key, sizes, dtype=jnp.float32) -> list[dict]:
    """Layers ``[{"W": (a, b), "b": (b,)}, ...]`` for ``sizes`` (a₀, a₁, ..., k): weights
    N(0, 1/a) (LeCun normal), biases 0."""
    keys = jax.random.split(key, len(sizes) - 1)
    return [{"W": jax.random.normal(k, (a, b), dtype) / np.sqrt(a), "b": jnp.zeros((b,), dtype)}
            for k, a, b in zip(keys, sizes[:-1], sizes[1:], strict=True)]


def mlp_apply(params: list[dict], x):
    """Logits (b, k) of a batch x (b, ...) (flattened per sample); tanh hidden layers. The
    products run at jaxdp's precision policy (full float32 on GPUs, no TF32)."""
    return _mlp_layers(params, x)[0]


def _mlp_layers(params: list[dict], x, shifts=None):
    """(logits (b, k), each layer's input h_l (b, a_l)); ``shifts[l]`` (b, a_{l+1}), if given,
    is added to layer l's pre-activation (zeros: the cotangents there are ∂ℓ_s/∂z_l)."""
    h, inputs = x.reshape(x.shape[0], -1), []
    for l, layer in enumerate(params):
        inputs.append(h)
        z = matmul(h, layer["W"]) + layer["b"][None, :]
        z = z if shifts is None else z + shifts[l]
        h = z if l == len(params) - 1 else jnp.tanh(z)
    return h, inputs


def mlp_clipping(loss: ModelLoss, x, features, labels, reg):
    """Ghost clipping of :func:`mlp_apply`: (b,) exact ‖g_s‖² and ``combine(scale) = Σ_s scale_s
    g_s`` (d,), g_s = ∇ℓ_s + ∇R, without per-example gradients.

    Row s's gradient in layer l is h_s ⊗ δ_s (weights) and δ_s (bias), δ_s = ∂ℓ_s/∂z_l from one
    backward pass to the pre-activations, so ‖g_s‖² = Σ_l (‖h_s‖² + 1)‖δ_s‖² (Goodfellow,
    "Efficient per-example gradient computations", 2015); the penalty's gradient p adds
    2⟨g_s, p⟩ + ‖p‖², with ⟨g_s, p⟩ = Σ_l δ_s · (h_s P_W + P_b). ``combine`` is hᵀ(scale·δ) per
    layer (Bu et al., ICML 2023), plus (Σ scale)·p.
    """
    params = loss.params_of(x)
    shifts = [jnp.zeros((features.shape[0], layer["b"].shape[0]), x.dtype) for layer in params]

    def total(shifts):
        logits, inputs = _mlp_layers(params, features, shifts)
        return jnp.sum(loss.sample_fn(logits, labels)), inputs

    deltas, inputs = jax.grad(total, has_aux=True)(shifts)
    p = loss.penalty_grad(x, reg)
    pens = loss.layout.unflatten(p)
    sq = sum((jnp.sum(h * h, axis=1) + 1.0) * jnp.sum(g * g, axis=1)
             for h, g in zip(inputs, deltas, strict=True))
    cross = sum(jnp.sum(g * (matmul(h, q["W"]) + q["b"][None, :]), axis=1)
                for h, g, q in zip(inputs, deltas, pens, strict=True))

    def combine(scale):
        layers = [{"W": einsum("ba,bo->ao", h, scale[:, None] * g),
                   "b": einsum("b,bo->o", scale, g)} for h, g in zip(inputs, deltas, strict=True)]
        return loss.layout.flatten(layers) + jnp.sum(scale) * p

    return sq + 2.0 * cross + jnp.sum(p * p), combine


STRUCTURED_CLIPPING[mlp_apply] = mlp_clipping


def digits_mlp(n_agents: int = 16, *, seed: int = 0, split: str = "iid", hidden: int = 32,
               weight_decay: float = 0.0, test_fraction: float = 0.2, init_seed: int = 0,
               dtype=None, max_elements: int | None = None) -> ModelProblem:
    """A 64–hidden–10 MLP on the packaged UCI digits, split among N agents (a model problem).

    Args:
      n_agents: N.
      seed: seed of the test hold-out and the split.
      split: a split spec (``"iid"``, ``"dirichlet:0.3"``, ``"shards:2"``, ...).
      hidden: width of the hidden layer (0: a linear softmax model, 650 parameters).
      weight_decay: c of ½·c‖θ − θ₀‖².
      test_fraction: share of the 1,797 images held out for the test metrics.
      init_seed: seed of θ₀.
      dtype: float dtype (default JAX's default float).
      max_elements: bound on rows × d in per-example gradients (default: the library's).
    """
    if isinstance(hidden, bool) or not isinstance(hidden, (int, np.integer)) or hidden < 0:
        raise ValueError(f"digits_mlp: hidden must be an int >= 0; got {hidden!r}")
    dtype = jax.dtypes.canonicalize_dtype(jnp.float64 if dtype is None else dtype)
    images, labels = load_digits()
    x, y, test_x, test_y = train_test_split(images, labels, test_fraction, seed=seed)
    parts = split_parts(y, n_agents, split, seed=seed)
    sizes = [64, hidden, 10] if hidden else [64, 10]
    theta0 = mlp_init(jax.random.key(init_seed), sizes, dtype)
    extra = {} if max_elements is None else {"max_elements": int(max_elements)}
    return from_model(mlp_apply, theta0, x, y, parts=parts, test=(test_x, test_y),
                      weight_decay=weight_decay, dtype=dtype, name="digits_mlp", **extra)


MODEL_PROBLEMS = {"digits_mlp": digits_mlp}
"""Neural-network problems by name (``make_problem`` and ``jaxdp run --problem`` find them)."""

__all__ = ["MODEL_PROBLEMS", "digits_mlp", "mlp_apply", "mlp_clipping", "mlp_init"]
