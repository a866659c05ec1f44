"""Ready-made neural-network problems on the packaged UCI digits: a small MLP and a small CNN.

``digits_mlp(n_agents=16, split="dirichlet:0.3")`` holds out a seeded 20 % test set, splits the
rest among the agents (``jaxdp.problems.split``) and builds a :class:`ModelProblem` for a
64–hidden–10 tanh MLP with softmax cross-entropy; ``digits_cnn`` does the same (one shared data
path) for a 3×3-conv CNN. Both models are plain JAX (:func:`mlp_init`/:func:`mlp_apply`,
:func:`cnn_init`/:func:`cnn_apply`), written for batches (b, ...) → logits (b, k), each with a
ghost-clipping entry in :data:`STRUCTURED_CLIPPING`.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jaxdp._precision import einsum, matmul
from jaxdp.problems._datasets import load_digits, train_test_split
from jaxdp.problems._clipping import STRUCTURED_CLIPPING, kept_rows
from jaxdp.problems._model import ModelLoss, ModelProblem, default_float, from_model
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
        kept = kept_rows(scale, *inputs, *deltas)  # an overflowed row (scale 0) adds 0, not NaN
        pairs = zip(kept[:len(inputs)], kept[len(inputs):], strict=True)
        layers = [{"W": einsum("ba,bo->ao", h, scale[:, None] * g),
                   "b": einsum("b,bo->o", scale, g)} for h, g in pairs]
        return loss.layout.flatten(layers) + jnp.sum(scale) * p

    return sq + 2.0 * cross + jnp.sum(p * p), combine


STRUCTURED_CLIPPING[mlp_apply] = mlp_clipping


def cnn_init(key, channels: int = 8, dtype=jnp.float32) -> dict:
    """Parameters of :func:`cnn_apply`: ``{"conv": {"w": (c, 9), "b": (c,)}, "dense": {"w":
    (16c, 10), "b": (10,)}}``; weights N(0, 1/fan-in) (LeCun normal), biases 0."""
    k_conv, k_dense = jax.random.split(key)
    return {"conv": {"w": jax.random.normal(k_conv, (channels, 9), dtype) / 3.0,
                     "b": jnp.zeros((channels,), dtype)},
            "dense": {"w": jax.random.normal(k_dense, (16 * channels, 10), dtype)
                      / np.sqrt(16 * channels),
                      "b": jnp.zeros((10,), dtype)}}


def cnn_apply(params: dict, x):
    """Logits (b, 10) of 8×8 images x (b, 8, 8): 3×3 convolution (SAME, zero padding) as
    patches × kernel, ReLU, 2×2 mean pool, dense. Products at jaxdp's precision policy."""
    return _cnn_layers(params, x)[0]


def _patches(x):
    """(b, 9, 64): each image's 3×3 neighbourhoods (zero-padded), positions row-major. The
    patch extraction is a convolution with a 0/1 kernel, at HIGHEST precision (exact copies)."""
    b = x.shape[0]
    p = jax.lax.conv_general_dilated_patches(x.reshape(b, 1, 8, 8), (3, 3), (1, 1), "SAME",
                                             precision=jax.lax.Precision.HIGHEST)
    return p.reshape(b, 9, 64)


def _cnn_layers(params: dict, x, shifts=None):
    """(logits (b, k), patches (b, 9, 64), pooled features (b, 16c)); ``shifts`` (conv
    pre-activations (b, c, 64), logits (b, k)), if given, are added there (zeros: the
    cotangents there are ∂ℓ_s/∂z)."""
    b, (conv, dense) = x.shape[0], (params["conv"], params["dense"])
    patches = _patches(x)
    z = einsum("bpq,cp->bcq", patches, conv["w"]) + conv["b"][None, :, None]
    z = z if shifts is None else z + shifts[0]
    h = jax.nn.relu(z).reshape(b, -1, 4, 2, 4, 2).mean(axis=(3, 5)).reshape(b, -1)
    logits = matmul(h, dense["w"]) + dense["b"][None, :]
    return (logits if shifts is None else logits + shifts[1]), patches, h


def cnn_clipping(loss: ModelLoss, x, features, labels, reg):
    """Ghost clipping of :func:`cnn_apply`: (b,) exact ‖g_s‖² and ``combine(scale) = Σ_s
    scale_s g_s`` (d,), from one forward and one backward pass.

    With δ_s = ∂ℓ_s/∂z at the conv pre-activations (c, 64) and ε_s at the logits (10,), row s's
    gradient is, for the kernel, G_s = Σ_q δ_s[:, q] ⊗ P_s[:, q] (c, 9) over the 64 positions q
    of its patches P_s (9, 64), for the conv bias Σ_q δ_s[:, q], for the dense layer h_s ⊗ ε_s and
    ε_s (h_s the pooled features) — the convolution's per-example gradient of Rochette, Manoel &
    Tramel ("Efficient per-example gradient computations in convolutional neural networks",
    2019), formed per example since it has only 9c numbers, and the dense layer's ghost norm
    (‖h_s‖² + 1)‖ε_s‖² (Goodfellow 2015). The penalty's gradient p enters as in
    :func:`mlp_clipping`; ``combine`` sums the per-layer pieces weighted by ``scale`` (Bu et al.,
    ICML 2023).
    """
    params = loss.params_of(x)
    b, c, k = features.shape[0], params["conv"]["b"].shape[0], params["dense"]["b"].shape[0]
    shifts = (jnp.zeros((b, c, 64), x.dtype), jnp.zeros((b, k), x.dtype))

    def total(shifts):
        logits, patches, h = _cnn_layers(params, features, shifts)
        return jnp.sum(loss.sample_fn(logits, labels)), (patches, h)

    (delta, eps), (patches, h) = jax.grad(total, has_aux=True)(shifts)
    kernel, bias = einsum("bcq,bpq->bcp", delta, patches), jnp.sum(delta, axis=2)
    p = loss.penalty_grad(x, reg)
    pens = loss.layout.unflatten(p)
    sq = (jnp.sum(kernel * kernel, axis=(1, 2)) + jnp.sum(bias * bias, axis=1)
          + (jnp.sum(h * h, axis=1) + 1.0) * jnp.sum(eps * eps, axis=1))
    cross = (einsum("bcp,cp->b", kernel, pens["conv"]["w"])
             + einsum("bc,c->b", bias, pens["conv"]["b"])
             + jnp.sum(eps * (matmul(h, pens["dense"]["w"]) + pens["dense"]["b"][None, :]),
                       axis=1))

    def combine(scale):
        kernel_, bias_, eps_, h_ = kept_rows(scale, kernel, bias, eps, h)  # scale 0 adds 0
        layers = {"conv": {"b": einsum("b,bc->c", scale, bias_),
                           "w": einsum("b,bcp->cp", scale, kernel_)},
                  "dense": {"b": einsum("b,bo->o", scale, eps_),
                            "w": einsum("ba,bo->ao", h_, scale[:, None] * eps_)}}
        return loss.layout.flatten(layers) + jnp.sum(scale) * p

    return sq + 2.0 * cross + jnp.sum(p * p), combine


STRUCTURED_CLIPPING[cnn_apply] = cnn_clipping


def _digits_problem(name: str, apply, theta0, n_agents: int, *, seed: int, split: str,
                    weight_decay: float, test_fraction: float, dtype,
                    max_elements: int | None) -> ModelProblem:
    """``apply`` from θ₀ on the packaged digits: a seeded test hold-out, the rest split among
    the agents (``jaxdp.problems.split``) — the data path every digits builder shares."""
    images, labels = load_digits()
    x, y, test_x, test_y = train_test_split(images, labels, test_fraction, seed=seed)
    parts = split_parts(y, n_agents, split, seed=seed)
    extra = {} if max_elements is None else {"max_elements": int(max_elements)}
    return from_model(apply, theta0, x, y, parts=parts, test=(test_x, test_y),
                      weight_decay=weight_decay, dtype=dtype, name=name, **extra)


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
    dtype = default_float(dtype)
    sizes = [64, hidden, 10] if hidden else [64, 10]
    theta0 = mlp_init(jax.random.key(init_seed), sizes, dtype)
    return _digits_problem("digits_mlp", mlp_apply, theta0, n_agents, seed=seed, split=split,
                           weight_decay=weight_decay, test_fraction=test_fraction, dtype=dtype,
                           max_elements=max_elements)


def digits_cnn(n_agents: int = 16, *, seed: int = 0, split: str = "iid", channels: int = 8,
               weight_decay: float = 0.0, test_fraction: float = 0.2, init_seed: int = 0,
               dtype=None, max_elements: int | None = None) -> ModelProblem:
    """A small CNN (:func:`cnn_apply`) on the packaged UCI digits, split among N agents.

    3×3 convolution (1 → ``channels``, SAME), ReLU, 2×2 mean pool, dense to 10 classes: 1,370
    parameters for 8 channels. Its per-example clipping is ghost clipping
    (:func:`cnn_clipping`).

    Args:
      n_agents: N.
      seed: seed of the test hold-out and the split.
      split: a split spec (``"iid"``, ``"dirichlet:0.3"``, ``"shards:2"``, ...).
      channels: number of convolution channels (an int >= 1).
      weight_decay: c of ½·c‖θ − θ₀‖².
      test_fraction: share of the 1,797 images held out for the test metrics.
      init_seed: seed of θ₀.
      dtype: float dtype (default JAX's default float).
      max_elements: bound on rows × d in per-example gradients (default: the library's).
    """
    if isinstance(channels, bool) or not isinstance(channels, (int, np.integer)) or channels < 1:
        raise ValueError(f"digits_cnn: channels must be an int >= 1; got {channels!r}")
    dtype = default_float(dtype)
    theta0 = cnn_init(jax.random.key(init_seed), int(channels), dtype)
    return _digits_problem("digits_cnn", cnn_apply, theta0, n_agents, seed=seed, split=split,
                           weight_decay=weight_decay, test_fraction=test_fraction, dtype=dtype,
                           max_elements=max_elements)


MODEL_PROBLEMS = {"digits_mlp": digits_mlp, "digits_cnn": digits_cnn}
"""Neural-network problems by name (registered in :data:`jaxdp.problems.PROBLEMS`, where
``make_problem`` and ``jaxdp run --problem`` find them)."""

__all__ = ["MODEL_PROBLEMS", "cnn_apply", "cnn_clipping", "cnn_init", "digits_cnn",
           "digits_mlp", "mlp_apply", "mlp_clipping", "mlp_init"]
