"""Gradient inversion (DLG) against revealed local gradients, and the image sets it runs on.

Paper 003 §VII-B feeds the gradients its adversary infers (Appendix A) to DLG (Zhu, Liu & Han,
"Deep Leakage from Gradients", NeurIPS 2019), Inverting Gradients (Geiping et al. 2020) and
GradInversion (Yin et al. 2021); the attacked batch size and settings are [UNSPECIFIED] by
the paper.
Here: DLG — optimize dummy samples ``(z', b')`` so that the model's gradient on them matches the
observed one — with optax Adam through ``jax.grad``, vmapped over random restarts. Dummy images are
parametrized as ``sigmoid(w)`` (pixels in (0, 1), as the data) and dummy ±1 labels as ``tanh(v)``.
``distance="cosine"`` gives Inverting Gradients' cosine objective.

The gradient model is the problem's own ``loss.grad`` (data term averaged over the local batch plus
the ridge term), so the attack matches exactly what an agent reveals.

Data (nothing is downloaded): :func:`digits` (scikit-learn's bundled 8×8 digits, if installed),
:func:`load_idx` / :func:`load_mnist` (MNIST IDX files the user has, optionally gzipped).
"""
from __future__ import annotations

import functools
import gzip
import struct
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import optax

from jaxdp._types import Array, PRNGKey

_IDX_TYPES = {0x08: np.uint8, 0x09: np.int8, 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}


@functools.partial(jax.jit, static_argnames=("loss", "batch", "steps", "restarts", "distance"))
def dlg_invert(loss, reg, y: Array, target: Array, key: PRNGKey, *, batch: int = 1,
               steps: int = 500, lr: float = 0.1, restarts: int = 4, distance: str = "l2"):
    """Reconstruct a local batch from one revealed gradient (DLG).

    Args:
      loss: the problem's ``Loss`` (``problem.loss``).
      reg: its regularizer weights (``problem.reg``).
      y: (d,) the model at which the gradient was taken (the adversary infers it too).
      target: (d,) the revealed gradient.
      key: PRNG key of the dummy initializations.
      batch: B, the number of samples behind the gradient.
      steps: Adam steps.
      lr: Adam learning rate.
      restarts: independent dummy initializations (vmapped); the best match is returned.
      distance: ``"l2"`` (DLG) or ``"cosine"`` (Inverting Gradients).

    Returns:
      ``(features (B, d), labels (B,), objective ())`` of the best restart. Jitted (``loss``,
      ``batch``, ``steps``, ``restarts`` and ``distance`` static): attacks on many gradients of
      one shape share one compilation.

    Raises:
      ValueError: an unknown ``distance``.
    """
    if distance not in ("l2", "cosine"):
        raise ValueError(f"distance must be 'l2' or 'cosine'; got {distance!r}")
    d = y.shape[0]
    ones = jnp.ones((batch,), y.dtype)

    def unpack(w):
        return jax.nn.sigmoid(w["z"]), jnp.tanh(w["b"])

    def objective(w):
        z, b = unpack(w)
        g = loss.grad(y, z, b, ones, reg)
        if distance == "l2":
            return jnp.sum((g - target) ** 2)
        return 1.0 - jnp.dot(g, target) / (jnp.linalg.norm(g) * jnp.linalg.norm(target) + 1e-30)

    opt = optax.adam(lr)

    def attack(k):
        kz, kb = jax.random.split(k)
        w = {"z": jax.random.normal(kz, (batch, d), y.dtype),
             "b": jax.random.normal(kb, (batch,), y.dtype)}

        def update(carry, _):
            w, s = carry
            g = jax.grad(objective)(w)
            upd, s = opt.update(g, s, w)
            return (optax.apply_updates(w, upd), s), None

        (w, _), _ = jax.lax.scan(update, (w, opt.init(w)), None, length=steps)
        return w, objective(w)

    ws, values = jax.vmap(attack)(jax.random.split(key, restarts))
    best = jnp.argmin(values)
    z, b = unpack(jax.tree.map(lambda a: a[best], ws))
    return z, b, values[best]


def reconstruction_mse(reconstructed: Array, truth: Array) -> Array:
    """Mean over true samples of the smallest per-pixel MSE to any reconstructed one, ()."""
    err = jnp.mean((truth[:, None, :] - reconstructed[None, :, :]) ** 2, axis=-1)  # (B, B')
    return jnp.mean(jnp.min(err, axis=1))


# -- image sets ---------------------------------------------------------------------------------
def digits(classes=(0, 1)):
    """scikit-learn's bundled 8×8 digits of two classes: features in [0, 1], labels ±1.

    Returns:
      ``(features (n, 64), labels (n,))``, labels +1 for ``classes[0]``, −1 for ``classes[1]``.

    Raises:
      ImportError: scikit-learn is not installed (``pip install scikit-learn``).
    """
    try:
        from sklearn.datasets import load_digits
    except ImportError as err:  # pragma: no cover - depends on the environment
        raise ImportError("digits() needs scikit-learn (pip install scikit-learn): it ships the "
                          "8x8 digits inside the package") from err
    data = load_digits()
    return _binary(data.data / 16.0, data.target, classes)


def load_idx(path) -> np.ndarray:
    """Read one IDX file (the MNIST format), plain or ``.gz``.

    Raises:
      ValueError: the file is not IDX (bad magic number or size).
    """
    path = Path(path)
    raw = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0 or raw[2] not in _IDX_TYPES:
        raise ValueError(f"{path} is not an IDX file (magic {raw[:4].hex()})")
    ndim = raw[3]
    dims = struct.unpack(f">{ndim}I", raw[4:4 + 4 * ndim])
    dtype = np.dtype(_IDX_TYPES[raw[2]])
    body = raw[4 + 4 * ndim:]
    if len(body) != int(np.prod(dims)) * dtype.itemsize:
        raise ValueError(f"{path}: IDX header says {dims} of {dtype}, body has {len(body)} bytes")
    return np.frombuffer(body, dtype=dtype).reshape(dims)


def load_mnist(directory, classes=(0, 1), split: str = "train"):
    """MNIST (or Fashion-MNIST) IDX files from ``directory``: two classes, pixels in [0, 1], ±1.

    Looks for ``{split}-images-idx3-ubyte[.gz]`` and ``{split}-labels-idx1-ubyte[.gz]`` (``t10k``
    for the test split).

    Raises:
      FileNotFoundError: the files are not there.
    """
    directory = Path(directory)
    prefix = "train" if split == "train" else "t10k"

    def find(kind):
        for name in (f"{prefix}-{kind}", f"{prefix}-{kind}.gz"):
            if (directory / name).exists():
                return directory / name
        raise FileNotFoundError(f"no {prefix}-{kind}[.gz] in {directory}")

    images = load_idx(find("images-idx3-ubyte")).astype(np.float64) / 255.0
    labels = load_idx(find("labels-idx1-ubyte"))
    return _binary(images.reshape(images.shape[0], -1), labels, classes)


def write_idx(path, array: np.ndarray) -> None:
    """Write ``array`` (uint8) as an IDX file: for tests and for users who build their own."""
    array = np.ascontiguousarray(array, dtype=np.uint8)
    header = bytes([0, 0, 0x08, array.ndim]) + struct.pack(f">{array.ndim}I", *array.shape)
    Path(path).write_bytes(header + array.tobytes())


def _binary(features, targets, classes):
    keep = np.isin(targets, classes)
    labels = np.where(targets[keep] == classes[0], 1.0, -1.0)
    return np.asarray(features[keep], np.float64), labels


__all__ = ["digits", "dlg_invert", "load_idx", "load_mnist", "reconstruction_mse", "write_idx"]
