"""Data loaders (issue 25): the packaged digits, IDX and CIFAR-10 files the tests write, npz."""
import gzip

import numpy as np
import pytest

from jaxdp.problems import (
    load_arrays, load_cifar10, load_digits, load_mnist, read_idx, train_test_split,
)


def _idx_bytes(array: np.ndarray) -> bytes:
    code = {np.uint8: 0x08, np.int32: 0x0C}[array.dtype.type]
    header = bytes([0, 0, code, array.ndim]) + np.asarray(array.shape, ">u4").tobytes()
    return header + array.astype(array.dtype.newbyteorder(">")).tobytes()


def test_packaged_digits():
    images, labels = load_digits()
    assert images.shape == (1797, 8, 8) and images.dtype == np.float32
    assert labels.shape == (1797,) and set(np.unique(labels)) == set(range(10))
    assert images.min() == 0.0 and images.max() == 1.0
    assert np.bincount(labels).min() >= 170  # 174..183 per class


@pytest.mark.parametrize("gz", [False, True])
def test_mnist_idx_round_trip(tmp_path, gz):
    rng = np.random.default_rng(0)
    images = rng.integers(0, 256, size=(5, 28, 28)).astype(np.uint8)
    labels = rng.integers(0, 10, size=5).astype(np.uint8)
    for stem, array in (("t10k-images-idx3-ubyte", images), ("t10k-labels-idx1-ubyte", labels)):
        data = _idx_bytes(array)
        path = tmp_path / (stem + (".gz" if gz else ""))
        path.write_bytes(gzip.compress(data) if gz else data)
    x, y = load_mnist(tmp_path, "test")
    np.testing.assert_array_equal(x, images / np.float32(255))
    np.testing.assert_array_equal(y, labels)
    assert x.dtype == np.float32 and y.dtype == np.int32


def test_idx_big_endian_int32(tmp_path):
    a = np.arange(-3, 9, dtype=np.int32).reshape(3, 4)
    (tmp_path / "a.idx").write_bytes(_idx_bytes(a))
    np.testing.assert_array_equal(read_idx(tmp_path / "a.idx"), a)


def test_idx_bad_files_are_named(tmp_path):
    (tmp_path / "junk").write_bytes(b"\x01\x02\x03\x04rest")
    with pytest.raises(ValueError, match="is not an IDX file"):
        read_idx(tmp_path / "junk")
    (tmp_path / "short").write_bytes(_idx_bytes(np.zeros((4, 2), np.uint8))[:-1])
    with pytest.raises(ValueError, match="needs 8"):
        read_idx(tmp_path / "short")
    with pytest.raises(FileNotFoundError, match="train-images-idx3-ubyte"):
        load_mnist(tmp_path)


def test_cifar10_binary_batches(tmp_path):
    rng = np.random.default_rng(1)
    pixels = rng.integers(0, 256, size=(3, 3, 32, 32)).astype(np.uint8)  # channel-major
    labels = np.array([4, 0, 9], np.uint8)
    records = np.concatenate([labels[:, None], pixels.reshape(3, -1)], axis=1)
    (tmp_path / "data_batch_1.bin").write_bytes(records[:2].tobytes())
    (tmp_path / "data_batch_2.bin").write_bytes(records[2:].tobytes())
    x, y = load_cifar10(tmp_path)
    assert x.shape == (3, 32, 32, 3)
    np.testing.assert_array_equal(y, labels)
    np.testing.assert_array_equal(x[1, 5, 7], pixels[1, :, 5, 7] / np.float32(255))
    (tmp_path / "test_batch.bin").write_bytes(records[0].tobytes()[:-1])
    with pytest.raises(ValueError, match="3,073-byte records"):
        load_cifar10(tmp_path, "test")


def test_load_arrays_npz_and_mapping(tmp_path):
    np.savez(tmp_path / "d.npz", inputs=np.ones((4, 3)), targets=np.arange(4))
    x, y = load_arrays(tmp_path / "d.npz", "inputs", "targets")
    assert x.shape == (4, 3) and y.tolist() == [0, 1, 2, 3]
    with pytest.raises(KeyError, match="no array 'x'; found \\['inputs', 'targets'\\]"):
        load_arrays(tmp_path / "d.npz")
    with pytest.raises(ValueError, match="4 feature rows but 3 labels"):
        load_arrays({"x": np.ones((4, 2)), "y": np.ones(3)})


def test_train_test_split_is_seeded_and_disjoint():
    x, y = np.arange(100)[:, None], np.arange(100)
    a = train_test_split(x, y, 0.25, seed=0)
    b = train_test_split(x, y, 0.25, seed=0)
    assert all(np.array_equal(u, v) for u, v in zip(a, b, strict=True))
    assert a[3].size == 25 and not set(a[1]) & set(a[3])
