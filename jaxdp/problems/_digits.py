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

from jaxdp._precision import matmul
from jaxdp.problems._datasets import load_digits, train_test_split
from jaxdp.problems._model import ModelProblem, from_model
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
    h = x.reshape(x.shape[0], -1)
    for layer in params[:-1]:
        h = jnp.tanh(matmul(h, layer["W"]) + layer["b"][None, :])
    return matmul(h, params[-1]["W"]) + params[-1]["b"][None, :]


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

__all__ = ["MODEL_PROBLEMS", "digits_mlp", "mlp_apply", "mlp_init"]
