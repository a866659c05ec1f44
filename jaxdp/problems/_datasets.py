"""Data sets without downloads: the packaged UCI digits, and readers for files a user has.

* :func:`load_digits` — 1,797 8×8 grey images of handwritten digits (10 classes), shipped in
  the package (``jaxdp/problems/data/digits.npz``, 45 kB). Provenance: the test set of the UCI
  "Optical Recognition of Handwritten Digits" data set (E. Alpaydin & C. Kaynak, 1998; UCI
  Machine Learning Repository, doi:10.24432/C50P49), licensed CC BY 4.0; pixel values 0..16 are
  counts of on-pixels in 4×4 blocks of 32×32 bitmaps. The array was exported once from
  scikit-learn 1.9.1's ``sklearn.datasets.load_digits`` (which ships this same UCI file) as
  ``images`` uint8 (1797, 8, 8) and ``labels`` uint8 (1797,); scikit-learn is not needed at run
  time.
* :func:`read_idx` / :func:`load_mnist` — MNIST and Fashion-MNIST IDX files (LeCun et al.
  1998; Xiao, Rasul & Vollgraf 2017), gzipped or not.
* :func:`load_cifar10` — CIFAR-10 "binary version" batches (Krizhevsky 2009): records of one
  label byte then 3,072 bytes (3×32×32, channel-major).
* :func:`load_arrays` — any ``.npz`` (or in-memory arrays) with features and labels.

Every loader returns ``(features, labels)`` as numpy arrays, features float32 scaled to [0, 1]
for images; :func:`train_test_split` holds out a seeded test set.
"""
from __future__ import annotations

import gzip
import importlib.resources
import io
from pathlib import Path

import numpy as np

_IDX_TYPES = {0x08: np.uint8, 0x09: np.int8, 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}


def load_digits() -> tuple[np.ndarray, np.ndarray]:
    """The packaged UCI digits: images (1797, 8, 8) float32 in [0, 1], labels (1797,) int32."""
    data = importlib.resources.files("jaxdp.problems").joinpath("data/digits.npz").read_bytes()
    with np.load(io.BytesIO(data)) as npz:
        return npz["images"].astype(np.float32) / 16.0, npz["labels"].astype(np.int32)


def _read_bytes(path) -> bytes:
    """A file's bytes, gunzipped when its name ends in ``.gz``."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no file {str(path)!r}")
    raw = path.read_bytes()
    return gzip.decompress(raw) if path.suffix == ".gz" else raw


def read_idx(path) -> np.ndarray:
    """The array in an IDX file (the MNIST format): magic 0 0 type ndim, big-endian dims, data.

    Raises:
      ValueError: a bad magic number, an unknown type code, or a size that disagrees with the
        header (naming the file).
    """
    raw = _read_bytes(path)
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0 or raw[2] not in _IDX_TYPES:
        raise ValueError(f"read_idx: {str(path)!r} is not an IDX file (magic bytes "
                         f"{raw[:4].hex()!r})")
    ndim = raw[3]
    dims = tuple(int(v) for v in np.frombuffer(raw, ">u4", ndim, offset=4))
    dtype = np.dtype(_IDX_TYPES[raw[2]])
    body = 4 + 4 * ndim
    if len(raw) - body != int(np.prod(dims)) * dtype.itemsize:
        raise ValueError(f"read_idx: {str(path)!r} holds {len(raw) - body} data bytes; its header "
                         f"{dims} of {dtype} needs {int(np.prod(dims)) * dtype.itemsize}")
    return np.frombuffer(raw, dtype, offset=body).reshape(dims).astype(dtype.newbyteorder("="))


def _find(folder: Path, stem: str) -> Path:
    for name in (stem, stem + ".gz", stem.replace("-idx", ".idx")):
        if (folder / name).is_file():
            return folder / name
    raise FileNotFoundError(f"no {stem}[.gz] in {str(folder)!r}")


def load_mnist(folder, kind: str = "train") -> tuple[np.ndarray, np.ndarray]:
    """MNIST or Fashion-MNIST from the standard IDX files in ``folder``.

    Args:
      folder: holds ``{train,t10k}-images-idx3-ubyte`` and ``-labels-idx1-ubyte`` (``.gz`` or not).
      kind: ``"train"`` or ``"test"`` (the t10k files).

    Returns:
      images (n, 28, 28) float32 in [0, 1], labels (n,) int32.
    """
    if kind not in ("train", "test"):
        raise ValueError(f"load_mnist: kind must be 'train' or 'test'; got {kind!r}")
    prefix = "train" if kind == "train" else "t10k"
    folder = Path(folder)
    images = read_idx(_find(folder, f"{prefix}-images-idx3-ubyte"))
    labels = read_idx(_find(folder, f"{prefix}-labels-idx1-ubyte"))
    if images.shape[0] != labels.shape[0]:
        raise ValueError(f"load_mnist: {images.shape[0]} images but {labels.shape[0]} labels in "
                         f"{str(folder)!r}")
    return images.astype(np.float32) / 255.0, labels.astype(np.int32)


def load_cifar10(folder, kind: str = "train") -> tuple[np.ndarray, np.ndarray]:
    """CIFAR-10 binary batches in ``folder``: ``data_batch_1..5.bin`` (train) or
    ``test_batch.bin`` (test). Returns images (n, 32, 32, 3) float32 in [0, 1], labels (n,) int32.

    Raises:
      FileNotFoundError: no batch file; ValueError: a file that is not whole 3,073-byte records.
    """
    if kind not in ("train", "test"):
        raise ValueError(f"load_cifar10: kind must be 'train' or 'test'; got {kind!r}")
    folder = Path(folder)
    names = [f"data_batch_{i}.bin" for i in range(1, 6)] if kind == "train" else ["test_batch.bin"]
    paths = [folder / n for n in names if (folder / n).is_file()]
    if not paths:
        raise FileNotFoundError(f"load_cifar10: none of {names} in {str(folder)!r}")
    records = []
    for path in paths:
        raw = np.frombuffer(_read_bytes(path), np.uint8)
        if raw.size % 3073:
            raise ValueError(f"load_cifar10: {str(path)!r} has {raw.size} bytes, not a whole "
                             "number of 3,073-byte records (1 label + 3×32×32 pixels)")
        records.append(raw.reshape(-1, 3073))
    rows = np.concatenate(records)
    images = rows[:, 1:].reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1)
    return images.astype(np.float32) / 255.0, rows[:, 0].astype(np.int32)


def load_arrays(source, features_key: str = "x", labels_key: str = "y"
                ) -> tuple[np.ndarray, np.ndarray]:
    """Features and labels from an ``.npz`` path or a mapping of arrays (keys as given).

    Raises:
      KeyError: a missing key (listing those present); ValueError: row counts differ.
    """
    if isinstance(source, (str, Path)):
        with np.load(source) as npz:
            source = {k: npz[k] for k in npz.files}
    for key in (features_key, labels_key):
        if key not in source:
            raise KeyError(f"load_arrays: no array {key!r}; found {sorted(source)}")
    x, y = np.asarray(source[features_key]), np.asarray(source[labels_key])
    if x.shape[:1] != y.shape[:1]:
        raise ValueError(f"load_arrays: {x.shape[0]} feature rows but {y.shape[0]} labels")
    return x, y


def train_test_split(features, labels, test_fraction: float = 0.2, *, seed: int = 0):
    """``(train_x, train_y, test_x, test_y)``: a seeded random ``test_fraction`` held out."""
    if not 0.0 < test_fraction < 1.0:
        raise ValueError("train_test_split: test_fraction must be in (0, 1); got "
                         f"{test_fraction!r}")
    n = len(labels)
    order = np.random.default_rng(seed).permutation(n)
    n_test = max(1, int(round(test_fraction * n)))
    test, train = np.sort(order[:n_test]), np.sort(order[n_test:])
    return features[train], labels[train], features[test], labels[test]


__all__ = ["load_arrays", "load_cifar10", "load_digits", "load_mnist", "read_idx",
           "train_test_split"]
