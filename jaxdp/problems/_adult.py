"""UCI Adult ("Census Income") for the logistic-regression experiments of papers 001 and 002.

No data set is downloaded: :func:`load_adult` reads the file the user has (``adult.data`` or
``adult.test``, with or without a header row), and :func:`adult_synthetic` makes a stand-in of the
same shape when no file is given.

Preprocessing (the experiments of papers 001 and 002 use Adult and leave the encoding
unspecified; chosen here):

1. drop every row with a missing value (``?``): ``adult.data`` keeps 30,162 of 32,561 rows;
2. label +1 for income ``>50K`` (``>50K.`` in ``adult.test``), −1 otherwise;
3. the 14 attributes become 14 numbers: the 6 continuous ones as they are, the 8 categorical
   ones as integer codes (categories in sorted order, so codes do not depend on row order) — not
   one-hot, which would give far more than the papers' d = 14;
4. :func:`normalize_adult`: each column min–max scaled to [0, 1], then each row divided by its ℓ2
   norm, so ‖a‖ ≤ 1 (the sensitivity bounds of both papers assume it) and every entry is in
   [0, 1].
"""
from __future__ import annotations

import csv
from pathlib import Path

import numpy as np

COLUMNS = ("age", "workclass", "fnlwgt", "education", "education-num", "marital-status",
           "occupation", "relationship", "race", "sex", "capital-gain", "capital-loss",
           "hours-per-week", "native-country")
CATEGORICAL = ("workclass", "education", "marital-status", "occupation", "relationship", "race",
               "sex", "native-country")
# Number of categories of each categorical column in adult.data after dropping '?' rows.
CARDINALITY = {"workclass": 7, "education": 16, "marital-status": 7, "occupation": 14,
               "relationship": 6, "race": 5, "sex": 2, "native-country": 41}
N_COMPLETE = 30162  # rows of adult.data without a missing value


def load_adult(path) -> tuple[np.ndarray, np.ndarray]:
    """Read a UCI Adult file: features ``(n, 14)`` float64 (integer-coded categoricals), labels ±1.

    Args:
      path: ``adult.data`` or ``adult.test`` (comma-separated, optional header row, optional
        ``|``-comment lines as in ``adult.test``).

    Returns:
      ``(features, labels)`` with ``n`` the rows without a missing value.

    Raises:
      FileNotFoundError: no such file.
      ValueError: a row with the wrong number of fields, an unknown label, or no usable row.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no Adult file at {path}: give the path of adult.data")
    rows = []
    with path.open(newline="") as f:
        for line_no, fields in enumerate(csv.reader(f), start=1):
            fields = [x.strip() for x in fields]
            if not fields or not fields[0] or fields[0].startswith("|"):
                continue
            if line_no == 1 and not fields[0].lstrip("-").isdigit():
                continue  # header row
            if len(fields) != 15:
                raise ValueError(f"{path}:{line_no}: expected 15 comma-separated fields, "
                                 f"got {len(fields)}")
            if "?" in fields:
                continue
            rows.append(fields)
    if not rows:
        raise ValueError(f"{path}: no complete row (every row has a '?' or the file is empty)")
    return _encode(rows, path)


def _encode(rows: list[list[str]], path) -> tuple[np.ndarray, np.ndarray]:
    table = np.array(rows, dtype=object)
    features = np.empty((len(rows), len(COLUMNS)), np.float64)
    for j, name in enumerate(COLUMNS):
        column = table[:, j]
        if name in CATEGORICAL:
            _, codes = np.unique(column.astype(str), return_inverse=True)
            features[:, j] = codes
        else:
            features[:, j] = column.astype(np.float64)
    raw = [s.rstrip(".") for s in table[:, 14].astype(str)]
    bad = sorted(set(raw) - {">50K", "<=50K"})
    if bad:
        raise ValueError(f"{path}: unknown income label(s) {bad[:3]}; expected '>50K' or '<=50K'")
    labels = np.where(np.array(raw) == ">50K", 1.0, -1.0)
    return features, labels


def normalize_adult(features: np.ndarray) -> np.ndarray:
    """Min–max scale each column to [0, 1], then each row to unit ℓ2 norm (‖a‖ ≤ 1).

    A constant column becomes 0; an all-zero row stays 0.
    """
    features = np.asarray(features, np.float64)
    low, high = features.min(axis=0), features.max(axis=0)
    span = np.where(high > low, high - low, 1.0)
    scaled = (features - low) / span
    norms = np.linalg.norm(scaled, axis=1, keepdims=True)
    return scaled / np.where(norms > 0, norms, 1.0)


def adult_synthetic(n: int = N_COMPLETE, *, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """A synthetic stand-in with Adult's shape: ``(n, 14)`` features and ±1 labels.

    Not Adult: 6 continuous columns (age-, fnlwgt-, hours-like ranges and two heavy-tailed
    capital columns) and 8 integer-coded categorical columns with Adult's cardinalities; labels
    from a planted logistic model on the normalized features, with about 25% positives like Adult.
    Use it where a test or a default run needs Adult-shaped data and no file is given.
    """
    rng = np.random.default_rng(seed)
    columns = {
        "age": rng.integers(17, 91, n),
        "fnlwgt": rng.lognormal(12.0, 0.5, n).round(),
        "education-num": rng.integers(1, 17, n),
        "capital-gain": np.where(rng.random(n) < 0.08, rng.lognormal(8.5, 1.0, n), 0.0).round(),
        "capital-loss": np.where(rng.random(n) < 0.05, rng.lognormal(7.5, 0.3, n), 0.0).round(),
        "hours-per-week": np.clip(rng.normal(40, 12, n), 1, 99).round(),
    }
    for name, k in CARDINALITY.items():
        columns[name] = rng.integers(0, k, n)
    features = np.stack([np.asarray(columns[c], np.float64) for c in COLUMNS], axis=1)
    unit = normalize_adult(features)
    w = rng.normal(0.0, 4.0, features.shape[1])
    margins = unit @ w
    margins = margins - np.quantile(margins, 0.75)  # about a quarter of the rows above 0
    labels = np.where(rng.random(n) < 1.0 / (1.0 + np.exp(-4.0 * margins)), 1.0, -1.0)
    return features, labels
